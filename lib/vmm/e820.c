/* SPDX-License-Identifier: BSD-3-Clause */
/* The guest's e820 map (see e820.h). */
#include <string.h>

#include "e820.h"

int
e820_add(struct e820_table *t, uint64_t addr, uint64_t size, uint32_t type)
{
	unsigned int i, pos;

	if (size == 0 || addr + size < addr || t->n > E820_MAX_ENTRIES)
		return -1;
	for (pos = 0; pos < t->n && t->e[pos].addr < addr; pos++)
		;
	/* neighbours must not overlap */
	if (pos > 0 && t->e[pos - 1].addr + t->e[pos - 1].size > addr)
		return -1;
	if (pos < t->n && addr + size > t->e[pos].addr)
		return -1;
	if (pos > 0 && t->e[pos - 1].type == type &&
	    t->e[pos - 1].addr + t->e[pos - 1].size == addr) {
		t->e[pos - 1].size += size;
		/* it may now touch the next one too */
		if (pos < t->n && t->e[pos].type == type &&
		    t->e[pos - 1].addr + t->e[pos - 1].size == t->e[pos].addr) {
			t->e[pos - 1].size += t->e[pos].size;
			memmove(&t->e[pos], &t->e[pos + 1], (t->n - pos - 1) * sizeof(t->e[0]));
			t->n--;
		}
		return 0;
	}
	if (pos < t->n && t->e[pos].type == type && addr + size == t->e[pos].addr) {
		t->e[pos].addr = addr;
		t->e[pos].size += size;
		return 0;
	}
	if (t->n == E820_MAX_ENTRIES)
		return -1;
	for (i = t->n; i > pos; i--)
		t->e[i] = t->e[i - 1];
	t->e[pos].addr = addr;
	t->e[pos].size = size;
	t->e[pos].type = type;
	t->n++;
	return 0;
}

int
e820_build(struct e820_table *t, uint64_t low_size, uint64_t high_size, uint64_t ecam_base,
	   uint64_t ecam_size)
{
	/* Conventional memory stops at the EBDA; 0xA0000-0xFFFFF is VGA and BIOS. */
	const uint64_t ebda = 0x9fc00, bios = 0xf0000, one_mib = 0x100000;

	memset(t, 0, sizeof(*t));
	if (low_size <= one_mib)
		return -1;
	if (e820_add(t, 0, ebda, E820_TYPE_RAM) != 0 ||
	    e820_add(t, ebda, 0xa0000 - ebda, E820_TYPE_RESERVED) != 0 ||
	    e820_add(t, bios, one_mib - bios, E820_TYPE_RESERVED) != 0 ||
	    e820_add(t, one_mib, low_size - one_mib, E820_TYPE_RAM) != 0)
		return -1;
	if (ecam_size != 0 && e820_add(t, ecam_base, ecam_size, E820_TYPE_RESERVED) != 0)
		return -1;
	if (high_size != 0 && e820_add(t, 1ull << 32, high_size, E820_TYPE_RAM) != 0)
		return -1;
	return 0;
}
