/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Minimal ACPI tables for SMP guests whose kernel reads CPUs from the MADT
 * only (Debian's cloud kernel has no MP table parser): RSDP, XSDT, a
 * hardware-reduced FADT, an empty DSDT and the MADT. Pure data: unit-tested
 * without KVM.
 */
#ifndef VMM_ACPI_H
#define VMM_ACPI_H

#include <stddef.h>
#include <stdint.h>

#define ACPI_TABLES_ADDR 0xf1000u /* in the reserved BIOS area, which Linux scans */
#define ACPI_TABLES_MAX 0x1000u

/* Build the tables for ncpus CPUs (APIC ids 0..ncpus-1, IOAPIC id ncpus) at
 * guest address base, the RSDP first. Returns the bytes used, or 0 when len
 * is too small or ncpus is 0. */
size_t acpi_build(uint8_t *buf, size_t len, uint32_t base, unsigned int ncpus);

#endif
