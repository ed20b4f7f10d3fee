/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ACPI tables: RSDP, XSDT, a hardware-reduced FADT (with a reset register
 * and sleep control/status registers), the MADT, the MCFG (the ECAM window)
 * and a DSDT that describes the platform's devices: the PCI root bus
 * (PNP0A08) and its windows, COM1, the i8042, the power button behind a
 * Generic Event Device, and \_S5 (power off). Pure data: unit-tested without
 * KVM.
 */
#ifndef VMM_ACPI_H
#define VMM_ACPI_H

#include <stddef.h>
#include <stdint.h>

#define ACPI_TABLES_ADDR 0xf1000u /* in the reserved BIOS area, which Linux scans */
#define ACPI_TABLES_MAX 0x1000u

/* The platform's ACPI registers (port I/O, acpi_pm.c). */
#define ACPI_SLEEP_CTL_PORT 0x600 /* FADT SLEEP_CONTROL_REG, 1 byte */
#define ACPI_SLEEP_STS_PORT 0x601 /* FADT SLEEP_STATUS_REG, 1 byte */
#define ACPI_RESET_PORT 0x602     /* FADT RESET_REG, 1 byte */
#define ACPI_RESET_VALUE 0x01
#define ACPI_GED_GSI 9 /* the GED's interrupt (edge, active high) */
#define ACPI_S5_TYPE 5 /* SLP_TYP of \_S5 */
/* sleep control register bits (ACPI 6.4, 4.8.3.7) */
#define ACPI_SLEEP_EN 0x20
#define ACPI_SLEEP_TYP_SHIFT 2
#define ACPI_SLEEP_TYP_MASK 0x1c

/* What the DSDT and MCFG describe. */
struct acpi_platform {
	unsigned int ncpus; /* APIC ids 0..ncpus-1, IOAPIC id ncpus */
	uint64_t ecam_base; /* bus 0..ecam_end_bus */
	uint8_t ecam_end_bus;
	uint32_t mmio_base; /* the PCI root bus's 32-bit memory window */
	uint32_t mmio_end;  /* inclusive */
};

/* Build the tables at guest address base, the RSDP first. Returns the bytes
 * used, or 0 when len is too small or ncpus is 0 or above 254. */
size_t acpi_build(uint8_t *buf, size_t len, uint32_t base, const struct acpi_platform *p);

#endif
