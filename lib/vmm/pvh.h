/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The PVH boot protocol (Xen's, which Linux supports with CONFIG_PVH): an
 * ELF note XEN_ELFNOTE_PHYS32_ENTRY names a 32-bit entry, entered in flat
 * protected mode without paging, EBX pointing at a struct hvm_start_info
 * (command line, modules such as the initrd, the RSDP, the memory map).
 * Pure data: unit-tested without KVM.
 */
#ifndef VMM_PVH_H
#define VMM_PVH_H

#include <stddef.h>
#include <stdint.h>

#include "e820.h"

#define PVH_START_MAGIC 0x336ec578u
#define PVH_START_INFO_SIZE 56
#define PVH_MODLIST_ENTRY_SIZE 32
#define PVH_MEMMAP_ENTRY_SIZE 24

/* The PVH entry of an ELF64 image (its notes), or 0 when it has none. */
uint32_t pvh_find_entry(const uint8_t *elf, size_t len);

/*
 * Write hvm_start_info (version 1) at buf (guest address gpa), then its
 * module list (one module, the initrd, when initrd_size != 0) and the memory
 * map from e820. Returns the bytes written, or 0 when len is too small.
 */
size_t pvh_build_start_info(uint8_t *buf, size_t len, uint64_t gpa, uint64_t cmdline, uint64_t rsdp,
			    uint64_t initrd, uint64_t initrd_size, const struct e820_table *e820);

#endif
