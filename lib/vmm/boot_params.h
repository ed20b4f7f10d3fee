/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Linux x86 boot protocol's zero page (Documentation/arch/x86/boot.rst):
 * offsets of the fields we fill, and a builder that is pure data (unit-tested
 * without KVM).
 */
#ifndef VMM_BOOT_PARAMS_H
#define VMM_BOOT_PARAMS_H

#include <stddef.h>
#include <stdint.h>

#include "e820.h"

#define BP_SIZE 4096
#define BP_EXT_RAMDISK_IMAGE 0x0c0
#define BP_EXT_RAMDISK_SIZE 0x0c4
#define BP_EXT_CMD_LINE_PTR 0x0c8
#define BP_E820_ENTRIES 0x1e8
#define BP_HDR 0x1f1 /* setup header: from here to 0x202 + the byte at 0x201 */
#define BP_SETUP_SECTS 0x1f1
#define BP_BOOT_FLAG 0x1fe
#define BP_JUMP 0x200
#define BP_HEADER 0x202
#define BP_VERSION 0x206
#define BP_TYPE_OF_LOADER 0x210
#define BP_LOADFLAGS 0x211
#define BP_CODE32_START 0x214
#define BP_RAMDISK_IMAGE 0x218
#define BP_RAMDISK_SIZE 0x21c
#define BP_HEAP_END_PTR 0x224
#define BP_CMD_LINE_PTR 0x228
#define BP_INITRD_ADDR_MAX 0x22c
#define BP_KERNEL_ALIGNMENT 0x230
#define BP_RELOCATABLE 0x234
#define BP_XLOADFLAGS 0x236
#define BP_CMDLINE_SIZE 0x238
#define BP_PREF_ADDRESS 0x258
#define BP_INIT_SIZE 0x260
#define BP_E820_TABLE 0x2d0
#define BP_E820_MAX 128

#define BP_HDRS_MAGIC 0x53726448u /* "HdrS" */
#define BP_LOADED_HIGH 0x01
#define BP_CAN_USE_HEAP 0x80
#define BP_XLF_KERNEL_64 0x01

/* Setup header facts of a bzImage (from its first sectors). */
struct bzimage_info {
	uint32_t setup_size; /* bytes of real-mode setup, incl. the boot sector */
	uint16_t version;
	uint16_t xloadflags;
	uint32_t cmdline_size; /* longest command line, without the NUL */
	uint32_t initrd_addr_max;
	uint32_t kernel_alignment;
	uint64_t pref_address;
	uint32_t init_size;
};

/* Parse a bzImage's setup header; 0, or -1 with *why (not a bzImage, too old,
 * no 64-bit entry). */
int bzimage_parse(const uint8_t *img, size_t len, struct bzimage_info *out, const char **why);

/*
 * Fill a zero page: the image's setup header copied (NULL for an ELF vmlinux:
 * a minimal header is made up), then the loader's fields: command line,
 * initrd, e820 map, loader type, heap.
 */
void boot_params_build(uint8_t *bp, const uint8_t *img, size_t img_len, uint32_t cmdline_addr,
		       uint64_t initrd_addr, uint64_t initrd_size, const struct e820_table *e820);

#endif
