/* SPDX-License-Identifier: BSD-3-Clause */
/* Linux boot protocol zero page (see boot_params.h). */
#include <string.h>

#include "boot_params.h"

static uint16_t
rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t
rd32(const uint8_t *p)
{
	return rd16(p) | (uint32_t)rd16(p + 2) << 16;
}

static void
wr16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void
wr32(uint8_t *p, uint32_t v)
{
	wr16(p, (uint16_t)v);
	wr16(p + 2, (uint16_t)(v >> 16));
}

int
bzimage_parse(const uint8_t *img, size_t len, struct bzimage_info *out, const char **why)
{
	uint32_t sects;

	memset(out, 0, sizeof(*out));
	if (len < 0x268 || rd16(img + BP_BOOT_FLAG) != 0xaa55 ||
	    rd32(img + BP_HEADER) != BP_HDRS_MAGIC) {
		*why = "no boot sector / HdrS signature";
		return -1;
	}
	out->version = rd16(img + BP_VERSION);
	if (out->version < 0x20c) {
		*why = "boot protocol older than 2.12";
		return -1;
	}
	out->xloadflags = rd16(img + BP_XLOADFLAGS);
	if (!(out->xloadflags & BP_XLF_KERNEL_64)) {
		*why = "no 64-bit entry point";
		return -1;
	}
	sects = img[BP_SETUP_SECTS] ? img[BP_SETUP_SECTS] : 4;
	out->setup_size = (sects + 1) * 512;
	if (out->setup_size >= len) {
		*why = "truncated";
		return -1;
	}
	out->cmdline_size = rd32(img + BP_CMDLINE_SIZE);
	out->initrd_addr_max = rd32(img + BP_INITRD_ADDR_MAX);
	out->kernel_alignment = rd32(img + BP_KERNEL_ALIGNMENT);
	out->pref_address = rd32(img + BP_PREF_ADDRESS) | (uint64_t)rd32(img + BP_PREF_ADDRESS + 4)
								  << 32;
	out->init_size = rd32(img + BP_INIT_SIZE);
	return 0;
}

void
boot_params_build(uint8_t *bp, const uint8_t *img, size_t img_len, uint32_t cmdline_addr,
		  uint64_t initrd_addr, uint64_t initrd_size, const struct e820_table *e820)
{
	unsigned int i, n;

	memset(bp, 0, BP_SIZE);
	if (img != NULL && img_len > 0x202) {
		size_t end = 0x202 + img[0x201]; /* the jump's target ends the header */

		if (end > img_len)
			end = img_len;
		if (end > BP_E820_TABLE)
			end = BP_E820_TABLE;
		memcpy(bp + BP_HDR, img + BP_HDR, end - BP_HDR);
	} else {
		/* ELF vmlinux: the fields head_64.S and the kernel look at */
		wr16(bp + BP_BOOT_FLAG, 0xaa55);
		wr32(bp + BP_HEADER, BP_HDRS_MAGIC);
		wr16(bp + BP_VERSION, 0x20f);
		wr32(bp + BP_KERNEL_ALIGNMENT, 0x200000);
	}
	bp[BP_TYPE_OF_LOADER] = 0xff; /* undefined loader */
	bp[BP_LOADFLAGS] |= BP_LOADED_HIGH | BP_CAN_USE_HEAP;
	wr16(bp + BP_HEAP_END_PTR, 0xfe00);
	wr32(bp + BP_CMD_LINE_PTR, cmdline_addr);
	wr32(bp + BP_EXT_CMD_LINE_PTR, 0);
	wr32(bp + BP_RAMDISK_IMAGE, (uint32_t)initrd_addr);
	wr32(bp + BP_EXT_RAMDISK_IMAGE, (uint32_t)(initrd_addr >> 32));
	wr32(bp + BP_RAMDISK_SIZE, (uint32_t)initrd_size);
	wr32(bp + BP_EXT_RAMDISK_SIZE, (uint32_t)(initrd_size >> 32));
	n = e820->n < BP_E820_MAX ? e820->n : BP_E820_MAX;
	bp[BP_E820_ENTRIES] = (uint8_t)n;
	for (i = 0; i < n; i++)
		memcpy(bp + BP_E820_TABLE + 20 * i, &e820->e[i], 20);
}
