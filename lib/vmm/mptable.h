/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Intel MultiProcessor Specification 1.4 table: how a guest without ACPI
 * (Linux with acpi=off, or no RSDP as here) learns its CPUs and IOAPIC.
 * Pure data: unit-tested without KVM.
 */
#ifndef VMM_MPTABLE_H
#define VMM_MPTABLE_H

#include <stddef.h>
#include <stdint.h>

#define MPTABLE_ADDR 0xf0000u /* in the reserved BIOS area, which Linux scans */
#define MPTABLE_IOAPIC_ADDR 0xfec00000u
#define MPTABLE_LAPIC_ADDR 0xfee00000u

/* The bytes of the floating pointer and the config table for ncpus CPUs
 * (APIC ids 0..ncpus-1, the IOAPIC gets id ncpus, ISA IRQ n on pin n) placed
 * at guest address base. Returns the length, or 0 when len is too small. */
size_t mptable_build(uint8_t *buf, size_t len, uint32_t base, unsigned int ncpus);

#endif
