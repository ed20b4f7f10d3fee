/* SPDX-License-Identifier: BSD-3-Clause */
/* ACPI tables (see acpi.h). Offsets follow the ACPI 6.x specification. */
#include <string.h>

#include "acpi.h"
#include "le_bytes.h"

#define HDR_LEN 36
#define RSDP_LEN 36
#define XSDT_OFF 0x40
#define FADT_OFF 0x100
#define FADT_LEN 276
#define DSDT_OFF 0x300
#define MADT_OFF 0x400
#define FADT_F_HW_REDUCED_ACPI (1u << 20)
#define IOAPIC_ADDR 0xfec00000u
#define LAPIC_ADDR 0xfee00000u

/* A system description table header; the checksum is set by finish(). */
static void
header(uint8_t *t, const char *sig, uint32_t len, uint8_t rev)
{
	memcpy(t, sig, 4);
	le_put32(t + 4, len);
	t[8] = rev;
	memcpy(t + 10, "HVSWCH", 6);
	memcpy(t + 16, "HVVMM   ", 8);
	le_put32(t + 24, 1);
	memcpy(t + 28, "HVSW", 4);
	le_put32(t + 32, 1);
}

static void
finish(uint8_t *t, uint32_t len)
{
	t[9] = 0;
	t[9] = table_checksum(t, len);
}

size_t
acpi_build(uint8_t *buf, size_t len, uint32_t base, unsigned int ncpus)
{
	uint32_t madt_len = HDR_LEN + 8 + ncpus * 8 + 12 + 6;
	uint8_t *rsdp = buf, *xsdt = buf + XSDT_OFF, *fadt = buf + FADT_OFF;
	uint8_t *dsdt = buf + DSDT_OFF, *madt = buf + MADT_OFF, *p;
	unsigned int i;

	if (ncpus == 0 || ncpus > 254 || len < MADT_OFF + madt_len)
		return 0;
	memset(buf, 0, MADT_OFF + madt_len);

	/* RSDP (ACPI 2.0+): points at the XSDT */
	memcpy(rsdp, "RSD PTR ", 8);
	memcpy(rsdp + 9, "HVSWCH", 6);
	rsdp[15] = 2;
	le_put32(rsdp + 20, RSDP_LEN);
	le_put64(rsdp + 24, base + XSDT_OFF);
	rsdp[8] = table_checksum(rsdp, 20);
	rsdp[32] = table_checksum(rsdp, RSDP_LEN);

	/* XSDT: the FADT and the MADT */
	header(xsdt, "XSDT", HDR_LEN + 16, 1);
	le_put64(xsdt + HDR_LEN, base + FADT_OFF);
	le_put64(xsdt + HDR_LEN + 8, base + MADT_OFF);
	finish(xsdt, HDR_LEN + 16);

	/* FADT: hardware-reduced (no PM timer, no SCI, no legacy PM blocks) */
	header(fadt, "FACP", FADT_LEN, 6);
	le_put32(fadt + 40, base + DSDT_OFF);       /* DSDT */
	le_put32(fadt + 112, FADT_F_HW_REDUCED_ACPI); /* Flags */
	fadt[131] = 5;                           /* minor version: 6.5 */
	le_put64(fadt + 140, base + DSDT_OFF);      /* X_DSDT */
	memcpy(fadt + 268, "HVSWITCH", 8);       /* hypervisor vendor identity */
	finish(fadt, FADT_LEN);

	/* DSDT: no devices described in AML */
	header(dsdt, "DSDT", HDR_LEN, 2);
	finish(dsdt, HDR_LEN);

	/* MADT: the LAPICs, the IOAPIC (GSI 0..23 = its pins: KVM's routing), NMI on LINT1 */
	header(madt, "APIC", madt_len, 5);
	le_put32(madt + HDR_LEN, LAPIC_ADDR);
	le_put32(madt + HDR_LEN + 4, 1); /* PCAT_COMPAT: there are 8259s too */
	p = madt + HDR_LEN + 8;
	for (i = 0; i < ncpus; i++, p += 8) {
		p[0] = 0; /* processor local APIC */
		p[1] = 8;
		p[2] = (uint8_t)i; /* processor UID */
		p[3] = (uint8_t)i; /* APIC id */
		le_put32(p + 4, 1);   /* enabled */
	}
	p[0] = 1; /* I/O APIC */
	p[1] = 12;
	p[2] = (uint8_t)ncpus;
	le_put32(p + 4, IOAPIC_ADDR);
	le_put32(p + 8, 0);
	p += 12;
	p[0] = 4; /* local APIC NMI: every processor, LINT1 */
	p[1] = 6;
	p[2] = 0xff;
	p[5] = 1;
	finish(madt, madt_len);
	return MADT_OFF + madt_len;
}
