/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The BIOS e820 memory map the VMM gives its guest (Linux reads it from
 * boot_params). Pure data: unit-tested without KVM.
 */
#ifndef VMM_E820_H
#define VMM_E820_H

#include <stdint.h>

#define E820_MAX_ENTRIES 16
#define E820_TYPE_RAM 1
#define E820_TYPE_RESERVED 2

/* The layout of an entry in boot_params (20 bytes, packed). */
struct e820_entry {
	uint64_t addr;
	uint64_t size;
	uint32_t type;
} __attribute__((packed));

struct e820_table {
	unsigned int n;
	struct e820_entry e[E820_MAX_ENTRIES];
};

/*
 * Add a range, kept sorted by address; an adjacent range of the same type is
 * merged. Overlaps, empty or wrapping ranges and a full table are refused.
 * Returns 0 or -1.
 */
int e820_add(struct e820_table *t, uint64_t addr, uint64_t size, uint32_t type);

/*
 * The VM's map: low RAM with the EBDA hole below 1 MiB and the BIOS area
 * reserved, the PCI ECAM window reserved, RAM above 4 GiB when high_size != 0.
 */
int e820_build(struct e820_table *t, uint64_t low_size, uint64_t high_size, uint64_t ecam_base,
	       uint64_t ecam_size);

#endif
