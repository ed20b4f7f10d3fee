/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Booting Linux: a bzImage (protected-mode kernel loaded at 16 MiB, entered
 * at its 64-bit entry, +0x200) or an uncompressed ELF vmlinux (PT_LOAD
 * segments at their physical addresses). An ELF with a PVH note is entered
 * there (pvh.h: 32-bit, EBX at hvm_start_info); otherwise the x86-64 boot
 * protocol: the zero page, vCPU 0 in long mode with identity page tables and
 * RSI pointing at the zero page. The command line and the initrd are in
 * guest memory either way.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "acpi.h"
#include "boot_params.h"
#include "pvh.h"
#include "vmm_internal.h"

#define ZERO_PAGE 0x7000ull
#define PVH_INFO 0x6000ull /* hvm_start_info, its module list, memory map */
#define CMDLINE_ADDR 0x20000ull
#define CMDLINE_MAX 2048
#define BZ_LOAD_ADDR 0x1000000ull
#define KERNEL_VIRT_BASE 0xffffffff80000000ull

struct file_map {
	uint8_t *p;
	size_t len;
};

static int
map_file(const char *what, const char *path, struct file_map *m)
{
	struct stat st;
	int fd;

	m->p = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return vmm_err_errno("%s %s", what, path);
	if (fstat(fd, &st) != 0 || st.st_size == 0) {
		close(fd);
		return vmm_err("%s %s: empty or unreadable", what, path);
	}
	m->len = (size_t)st.st_size;
	m->p = mmap(NULL, m->len, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m->p == MAP_FAILED) {
		m->p = NULL;
		return vmm_err_errno("%s %s", what, path);
	}
	return 0;
}

static void
unmap_file(struct file_map *m)
{
	if (m->p)
		munmap(m->p, m->len);
}

/* Load an ELF64 vmlinux; *entry gets the physical entry point, *end the top. */
static int
load_elf(struct hv_vm *vm, const struct file_map *k, uint64_t *entry, uint64_t *end)
{
	const Elf64_Ehdr *eh = (const void *)k->p;
	unsigned int i;

	if (k->len < sizeof(*eh) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_machine != EM_X86_64 || eh->e_phentsize != sizeof(Elf64_Phdr) ||
	    eh->e_phoff > k->len ||
	    (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) > k->len - eh->e_phoff)
		return vmm_err("kernel %s: not an x86-64 ELF vmlinux", vm->kernel);
	*end = 0;
	for (i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = (const void *)(k->p + eh->e_phoff + i * sizeof(*ph));
		void *dst;

		if (ph->p_type != PT_LOAD)
			continue;
		if (ph->p_filesz > ph->p_memsz || ph->p_offset > k->len ||
		    ph->p_filesz > k->len - ph->p_offset)
			return vmm_err("kernel %s: corrupt program header %u", vm->kernel, i);
		dst = vmm_gpa_to_hva(vm, ph->p_paddr, ph->p_memsz);
		if (dst == NULL)
			return vmm_err("kernel %s: segment at 0x%" PRIx64
				       " does not fit in %" PRIu64 " MiB",
				       vm->kernel, (uint64_t)ph->p_paddr, vm->low_size >> 20);
		memcpy(dst, k->p + ph->p_offset, ph->p_filesz);
		memset((uint8_t *)dst + ph->p_filesz, 0, ph->p_memsz - ph->p_filesz);
		if (ph->p_paddr + ph->p_memsz > *end)
			*end = ph->p_paddr + ph->p_memsz;
	}
	if (*end == 0)
		return vmm_err("kernel %s: no loadable segment", vm->kernel);
	*entry = eh->e_entry >= KERNEL_VIRT_BASE ? eh->e_entry - KERNEL_VIRT_BASE : eh->e_entry;
	return 0;
}

int
vmm_boot_linux(struct hv_vm *vm)
{
	struct file_map k = {0}, rd = {0};
	struct bzimage_info bz;
	uint64_t entry = 0, end = 0, initrd_addr = 0, initrd_size = 0;
	const char *why = NULL;
	size_t cmdlen = strlen(vm->cmdline);
	uint32_t pvh_entry = 0;
	bool is_elf;
	int rc = -1;

	if (map_file("kernel", vm->kernel, &k) != 0)
		return -1;
	is_elf = k.len >= 4 && memcmp(k.p, ELFMAG, SELFMAG) == 0;
	if (is_elf) {
		if (load_elf(vm, &k, &entry, &end) != 0)
			goto out;
		pvh_entry = pvh_find_entry(k.p, k.len);
	} else {
		if (bzimage_parse(k.p, k.len, &bz, &why) != 0) {
			vmm_err("kernel %s: not a bzImage (%s) nor an ELF vmlinux", vm->kernel,
				why);
			goto out;
		}
		end = BZ_LOAD_ADDR + (bz.init_size > k.len ? bz.init_size : k.len);
		if (vmm_gpa_to_hva(vm, BZ_LOAD_ADDR, end - BZ_LOAD_ADDR) == NULL) {
			vmm_err("kernel %s needs %" PRIu64 " MiB, the VM has %" PRIu64 " MiB",
				vm->kernel, (end >> 20) + 1, vm->low_size >> 20);
			goto out;
		}
		memcpy(vmm_gpa_to_hva(vm, BZ_LOAD_ADDR, k.len - bz.setup_size), k.p + bz.setup_size,
		       k.len - bz.setup_size);
		entry = BZ_LOAD_ADDR + 0x200; /* startup_64 */
		if (bz.cmdline_size && cmdlen > bz.cmdline_size) {
			vmm_err("command line longer than the kernel's %u bytes", bz.cmdline_size);
			goto out;
		}
	}
	if (cmdlen >= CMDLINE_MAX) {
		vmm_err("command line longer than %d bytes", CMDLINE_MAX - 1);
		goto out;
	}
	memcpy(vmm_gpa_to_hva(vm, CMDLINE_ADDR, cmdlen + 1), vm->cmdline, cmdlen + 1);
	if (vm->initrd) {
		uint64_t max = vm->low_size;

		if (map_file("initrd", vm->initrd, &rd) != 0)
			goto out;
		if (!is_elf && bz.initrd_addr_max && bz.initrd_addr_max + 1ull < max)
			max = bz.initrd_addr_max + 1ull;
		initrd_size = rd.len;
		initrd_addr = (max - initrd_size) & ~0xfffffull;
		if (initrd_size > max || initrd_addr < ((end + 0xfffff) & ~0xfffffull)) {
			vmm_err("initrd %s (%zu MiB) does not fit above the kernel", vm->initrd,
				rd.len >> 20);
			goto out;
		}
		memcpy(vmm_gpa_to_hva(vm, initrd_addr, initrd_size), rd.p, initrd_size);
	}
	if (pvh_entry != 0) {
		if (pvh_build_start_info(vmm_gpa_to_hva(vm, PVH_INFO, ZERO_PAGE - PVH_INFO),
					 ZERO_PAGE - PVH_INFO, PVH_INFO, CMDLINE_ADDR,
					 ACPI_TABLES_ADDR, initrd_addr, initrd_size,
					 &vm->e820) == 0) {
			vmm_err("PVH start info does not fit");
			goto out;
		}
		rc = vmm_vcpu_set_protected_mode(&vm->vcpus[0], pvh_entry, PVH_INFO);
		goto out;
	}
	boot_params_build(vmm_gpa_to_hva(vm, ZERO_PAGE, BP_SIZE), is_elf ? NULL : k.p, k.len,
			  (uint32_t)CMDLINE_ADDR, initrd_addr, initrd_size, &vm->e820);
	rc = vmm_vcpu_set_long_mode(&vm->vcpus[0], entry, 0x8ff0, ZERO_PAGE, false);
out:
	unmap_file(&k);
	unmap_file(&rd);
	return rc;
}
