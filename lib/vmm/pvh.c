/* SPDX-License-Identifier: BSD-3-Clause */
/* PVH boot (see pvh.h); layouts: xen/include/public/arch-x86/hvm/start_info.h. */
#include <elf.h>
#include <string.h>

#include "le_bytes.h"
#include "pvh.h"

#define XEN_ELFNOTE_PHYS32_ENTRY 18

static uint64_t
get64(const uint8_t *p)
{
	return le_get32(p) | (uint64_t)le_get32(p + 4) << 32;
}

uint32_t
pvh_find_entry(const uint8_t *elf, size_t len)
{
	const Elf64_Ehdr *eh = (const void *)elf;
	unsigned int i;

	if (len < sizeof(*eh) || memcmp(elf, ELFMAG, SELFMAG) != 0 ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_phentsize != sizeof(Elf64_Phdr) ||
	    eh->e_phoff > len || (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) > len - eh->e_phoff)
		return 0;
	for (i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = (const void *)(elf + eh->e_phoff + i * sizeof(*ph));
		uint64_t off, end;

		if (ph->p_type != PT_NOTE || ph->p_offset > len ||
		    ph->p_filesz > len - ph->p_offset)
			continue;
		off = ph->p_offset;
		end = off + ph->p_filesz;
		/* notes: namesz, descsz, type, name and desc each padded to 4 bytes */
		while (end - off >= 12) {
			uint32_t namesz = le_get32(elf + off), descsz = le_get32(elf + off + 4);
			uint32_t type = le_get32(elf + off + 8);
			uint64_t name = off + 12, desc = name + ((namesz + 3ull) & ~3ull);
			uint64_t next = desc + ((descsz + 3ull) & ~3ull);

			if (next > end)
				break;
			if (type == XEN_ELFNOTE_PHYS32_ENTRY && namesz == 4 &&
			    memcmp(elf + name, "Xen", 4) == 0 && (descsz == 4 || descsz == 8))
				return descsz == 4 ? le_get32(elf + desc)
						   : (uint32_t)get64(elf + desc);
			off = next;
		}
	}
	return 0;
}

size_t
pvh_build_start_info(uint8_t *buf, size_t len, uint64_t gpa, uint64_t cmdline, uint64_t rsdp,
		     uint64_t initrd, uint64_t initrd_size, const struct e820_table *e820)
{
	size_t mod_off = PVH_START_INFO_SIZE, map_off = mod_off + PVH_MODLIST_ENTRY_SIZE;
	size_t total = map_off + (size_t)e820->n * PVH_MEMMAP_ENTRY_SIZE;
	unsigned int i;

	if (len < total)
		return 0;
	memset(buf, 0, total);
	le_put32(buf + 0, PVH_START_MAGIC);
	le_put32(buf + 4, 1); /* version: has the memory map */
	le_put32(buf + 8, 0); /* flags */
	if (initrd_size) {
		le_put32(buf + 12, 1); /* nr_modules */
		le_put64(buf + 16, gpa + mod_off);
		le_put64(buf + mod_off, initrd);
		le_put64(buf + mod_off + 8, initrd_size);
	}
	le_put64(buf + 24, cmdline);
	le_put64(buf + 32, rsdp);
	le_put64(buf + 40, gpa + map_off);
	le_put32(buf + 48, e820->n);
	for (i = 0; i < e820->n; i++) {
		uint8_t *m = buf + map_off + i * PVH_MEMMAP_ENTRY_SIZE;

		le_put64(m, e820->e[i].addr);
		le_put64(m + 8, e820->e[i].size);
		le_put32(m + 16, e820->e[i].type);
	}
	return total;
}
