/* SPDX-License-Identifier: BSD-3-Clause */
/* ACPI tables (see acpi.h). Offsets follow the ACPI 6.4 specification. */
#include <string.h>

#include "acpi.h"
#include "aml.h"
#include "le_bytes.h"

#define HDR_LEN 36
#define RSDP_LEN 36
#define FADT_LEN 276
#define MCFG_LEN (HDR_LEN + 8 + 16)
#define XSDT_ENTRIES 3
#define FADT_F_RESET_REG_SUP (1u << 10)
#define FADT_F_HW_REDUCED_ACPI (1u << 20)
#define FADT_BOOT_8042 (1u << 1)
#define FADT_BOOT_NO_VGA (1u << 2)
#define FADT_BOOT_NO_CMOS_RTC (1u << 5)
#define IOAPIC_ADDR 0xfec00000u
#define LAPIC_ADDR 0xfee00000u
#define GAS_SYSTEM_IO 1
#define GAS_ACCESS_BYTE 1

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

/* A Generic Address Structure for a one-byte I/O port register. */
static void
gas_port(uint8_t *g, uint16_t port)
{
	g[0] = GAS_SYSTEM_IO;
	g[1] = 8; /* bit width */
	g[2] = 0;
	g[3] = GAS_ACCESS_BYTE;
	le_put64(g + 4, port);
}

static size_t
align16(size_t off)
{
	return (off + 15) & ~(size_t)15;
}

static void
build_fadt(uint8_t *fadt, uint32_t dsdt)
{
	header(fadt, "FACP", FADT_LEN, 6);
	le_put32(fadt + 40, dsdt); /* DSDT */
	le_put16(fadt + 109, FADT_BOOT_8042 | FADT_BOOT_NO_VGA | FADT_BOOT_NO_CMOS_RTC);
	le_put32(fadt + 112, FADT_F_HW_REDUCED_ACPI | FADT_F_RESET_REG_SUP); /* Flags */
	gas_port(fadt + 116, ACPI_RESET_PORT);                               /* RESET_REG */
	fadt[128] = ACPI_RESET_VALUE;
	fadt[131] = 4;                             /* minor version: 6.4 */
	le_put64(fadt + 140, dsdt);                /* X_DSDT */
	gas_port(fadt + 244, ACPI_SLEEP_CTL_PORT); /* SLEEP_CONTROL_REG */
	gas_port(fadt + 256, ACPI_SLEEP_STS_PORT); /* SLEEP_STATUS_REG */
	memcpy(fadt + 268, "HVSWITCH", 8);         /* hypervisor vendor identity */
	finish(fadt, FADT_LEN);
}

static void
build_mcfg(uint8_t *mcfg, const struct acpi_platform *p)
{
	header(mcfg, "MCFG", MCFG_LEN, 1);
	le_put64(mcfg + HDR_LEN + 8, p->ecam_base);
	le_put16(mcfg + HDR_LEN + 16, 0); /* segment */
	mcfg[HDR_LEN + 18] = 0;           /* first bus */
	mcfg[HDR_LEN + 19] = p->ecam_end_bus;
	finish(mcfg, MCFG_LEN);
}

static size_t
build_madt(uint8_t *madt, size_t room, unsigned int ncpus)
{
	uint32_t len = HDR_LEN + 8 + ncpus * 8 + 12 + 6;
	uint8_t *q;
	unsigned int i;

	if (len > room)
		return 0;
	header(madt, "APIC", len, 5);
	le_put32(madt + HDR_LEN, LAPIC_ADDR);
	le_put32(madt + HDR_LEN + 4, 1); /* PCAT_COMPAT: there are 8259s too */
	q = madt + HDR_LEN + 8;
	for (i = 0; i < ncpus; i++, q += 8) {
		q[0] = 0; /* processor local APIC */
		q[1] = 8;
		q[2] = (uint8_t)i;  /* processor UID */
		q[3] = (uint8_t)i;  /* APIC id */
		le_put32(q + 4, 1); /* enabled */
	}
	/* the IOAPIC: GSI 0..23 are its pins (KVM's routing, vm.c) */
	q[0] = 1;
	q[1] = 12;
	q[2] = (uint8_t)ncpus;
	le_put32(q + 4, IOAPIC_ADDR);
	le_put32(q + 8, 0);
	q += 12;
	q[0] = 4; /* local APIC NMI: every processor, LINT1 */
	q[1] = 6;
	q[2] = 0xff;
	q[5] = 1;
	finish(madt, len);
	return len;
}

/* The DSDT's AML: what Linux enumerates from ACPI. */
static size_t
build_dsdt(uint8_t *dsdt, size_t room, const struct acpi_platform *p)
{
	struct aml a;

	if (room < HDR_LEN)
		return 0;
	aml_init(&a, dsdt + HDR_LEN, room - HDR_LEN);
	aml_scope(&a, "\\_SB_");

	/* the PCI root bus: ECAM (MCFG) config space, legacy 0xcf8 too */
	aml_device(&a, "PCI0");
	aml_name(&a, "_HID");
	aml_eisaid(&a, "PNP0A08");
	aml_name(&a, "_CID");
	aml_eisaid(&a, "PNP0A03");
	aml_name(&a, "_SEG");
	aml_int(&a, 0);
	aml_name(&a, "_BBN");
	aml_int(&a, 0);
	aml_name(&a, "_UID");
	aml_int(&a, 0);
	aml_name(&a, "_CRS");
	aml_buffer(&a);
	aml_res_bus(&a, 0, p->ecam_end_bus);
	aml_res_io(&a, 0xcf8, 8);
	aml_res_wordio(&a, 0x0000, 0x0cf7);
	aml_res_wordio(&a, 0x0d00, 0xffff);
	aml_res_dwordmem(&a, p->mmio_base, p->mmio_end);
	aml_res_end(&a);
	aml_close(&a);
	aml_close(&a);

	/* the ECAM window, reserved as a motherboard resource */
	aml_device(&a, "MRES");
	aml_name(&a, "_HID");
	aml_eisaid(&a, "PNP0C02");
	aml_name(&a, "_CRS");
	aml_buffer(&a);
	aml_res_dwordmem(&a, (uint32_t)p->ecam_base,
			 (uint32_t)(p->ecam_base + ((uint64_t)p->ecam_end_bus + 1) * 0x100000 - 1));
	aml_res_io(&a, ACPI_SLEEP_CTL_PORT, 4);
	aml_res_end(&a);
	aml_close(&a);
	aml_close(&a);

	/* COM1: the console UART (serial.c) */
	aml_device(&a, "COM1");
	aml_name(&a, "_HID");
	aml_eisaid(&a, "PNP0501");
	aml_name(&a, "_UID");
	aml_int(&a, 1);
	aml_name(&a, "_CRS");
	aml_buffer(&a);
	aml_res_io(&a, 0x3f8, 8);
	aml_res_irq(&a, 4);
	aml_res_end(&a);
	aml_close(&a);
	aml_close(&a);

	/* the i8042 keyboard controller (legacy.c): its reset command */
	aml_device(&a, "PS2K");
	aml_name(&a, "_HID");
	aml_eisaid(&a, "PNP0303");
	aml_name(&a, "_CRS");
	aml_buffer(&a);
	aml_res_io(&a, 0x60, 1);
	aml_res_io(&a, 0x64, 1);
	aml_res_irq(&a, 1);
	aml_res_end(&a);
	aml_close(&a);
	aml_close(&a);

	/* the power button, pressed by "hvctl guest stop" through the GED */
	aml_device(&a, "PWRB");
	aml_name(&a, "_HID");
	aml_eisaid(&a, "PNP0C0C");
	aml_name(&a, "_UID");
	aml_int(&a, 0);
	aml_close(&a);

	aml_device(&a, "GED0");
	aml_name(&a, "_HID");
	aml_string(&a, "ACPI0013");
	aml_name(&a, "_UID");
	aml_int(&a, 0);
	aml_name(&a, "_CRS");
	aml_buffer(&a);
	aml_res_interrupt(&a, ACPI_GED_GSI);
	aml_res_end(&a);
	aml_close(&a);
	/* Method (_EVT, 1) { Notify (\_SB.PWRB, 0x80) }: the only event */
	aml_method(&a, "_EVT", 1);
	{
		static const uint8_t notify[] = {0x86, '\\', 0x2e, '_', 'S',  'B', '_',
						 'P',  'W',  'R',  'B', 0x0a, 0x80};

		aml_bytes(&a, notify, sizeof(notify));
	}
	aml_close(&a);
	aml_close(&a);

	aml_close(&a); /* \_SB */

	/* \_S5: SLP_TYP for the sleep control register */
	aml_byte(&a, 0x08);
	aml_byte(&a, '\\');
	aml_nameseg(&a, "_S5_");
	aml_package(&a, 2);
	aml_int(&a, ACPI_S5_TYPE);
	aml_int(&a, ACPI_S5_TYPE);
	aml_close(&a);

	if (a.overflow || a.depth != 0)
		return 0;
	header(dsdt, "DSDT", (uint32_t)(HDR_LEN + a.len), 2);
	finish(dsdt, (uint32_t)(HDR_LEN + a.len));
	return HDR_LEN + a.len;
}

size_t
acpi_build(uint8_t *buf, size_t len, uint32_t base, const struct acpi_platform *p)
{
	size_t xsdt_off = 0x40, fadt_off, mcfg_off, madt_off, dsdt_off, n, end;
	uint8_t *rsdp = buf, *xsdt;

	if (p->ncpus == 0 || p->ncpus > 254 || len < 0x400)
		return 0;
	memset(buf, 0, len);
	fadt_off = align16(xsdt_off + HDR_LEN + 8 * XSDT_ENTRIES);
	mcfg_off = align16(fadt_off + FADT_LEN);
	madt_off = align16(mcfg_off + MCFG_LEN);
	n = build_madt(buf + madt_off, len - madt_off, p->ncpus);
	if (n == 0)
		return 0;
	dsdt_off = align16(madt_off + n);
	if (dsdt_off >= len)
		return 0;
	n = build_dsdt(buf + dsdt_off, len - dsdt_off, p);
	if (n == 0)
		return 0;
	end = dsdt_off + n;
	build_fadt(buf + fadt_off, base + (uint32_t)dsdt_off);
	build_mcfg(buf + mcfg_off, p);

	/* RSDP (ACPI 2.0+): points at the XSDT */
	memcpy(rsdp, "RSD PTR ", 8);
	memcpy(rsdp + 9, "HVSWCH", 6);
	rsdp[15] = 2;
	le_put32(rsdp + 20, RSDP_LEN);
	le_put64(rsdp + 24, base + xsdt_off);
	rsdp[8] = table_checksum(rsdp, 20);
	rsdp[32] = table_checksum(rsdp, RSDP_LEN);

	/* XSDT: the FADT, the MADT and the MCFG */
	xsdt = buf + xsdt_off;
	header(xsdt, "XSDT", HDR_LEN + 8 * XSDT_ENTRIES, 1);
	le_put64(xsdt + HDR_LEN, base + fadt_off);
	le_put64(xsdt + HDR_LEN + 8, base + madt_off);
	le_put64(xsdt + HDR_LEN + 16, base + mcfg_off);
	finish(xsdt, HDR_LEN + 8 * XSDT_ENTRIES);
	return end;
}
