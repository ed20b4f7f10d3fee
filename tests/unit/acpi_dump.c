/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Write the VMM's ACPI tables (acpi_build(), 2 CPUs) as DIR/dsdt.dat,
 * DIR/facp.dat, DIR/mcfg.dat and DIR/apic.dat, for test_acpi_iasl.sh to
 * disassemble with iasl.
 */
#include <stdio.h>
#include <string.h>

#include "acpi.h"

static int
dump(const char *dir, const char *name, const uint8_t *t)
{
	char path[512];
	uint32_t len = t[4] | (uint32_t)t[5] << 8 | (uint32_t)t[6] << 16 | (uint32_t)t[7] << 24;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s.dat", dir, name);
	f = fopen(path, "wb");
	if (f == NULL || fwrite(t, 1, len, f) != len || fclose(f) != 0) {
		perror(path);
		return 1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	static uint8_t buf[ACPI_TABLES_MAX];
	const struct acpi_platform p = {
		.ncpus = 2,
		.ecam_base = 0xb0000000,
		.ecam_end_bus = 0,
		.mmio_base = 0xc0000000,
		.mmio_end = 0xfeafffff,
	};
	size_t n, off;
	int rc = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: acpi_dump DIR\n");
		return 2;
	}
	n = acpi_build(buf, sizeof(buf), ACPI_TABLES_ADDR, &p);
	if (n == 0) {
		fprintf(stderr, "acpi_build failed\n");
		return 1;
	}
	/* every table starts 16-byte aligned after the RSDP */
	for (off = 0x40; off + 36 <= n; off += 16) {
		if (memcmp(buf + off, "DSDT", 4) == 0)
			rc |= dump(argv[1], "dsdt", buf + off);
		else if (memcmp(buf + off, "FACP", 4) == 0)
			rc |= dump(argv[1], "facp", buf + off);
		else if (memcmp(buf + off, "MCFG", 4) == 0)
			rc |= dump(argv[1], "mcfg", buf + off);
		else if (memcmp(buf + off, "APIC", 4) == 0)
			rc |= dump(argv[1], "apic", buf + off);
	}
	return rc;
}
