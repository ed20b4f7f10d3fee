/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Loading the built-in test guest (lib/vmm/guest): a flat image at
 * HV_GUEST_LOAD_ADDR entered in 64-bit mode at CPL0, and the boot-info block
 * it reads (hv_guest_abi.h). The guest's interrupt stub acknowledges the LAPIC
 * through an alias of the xAPIC page below 2 GiB (HV_GUEST_LAPIC_ALIAS), so
 * that the EOI is one store with an absolute 32-bit address: each CPL0
 * instruction is emulated on hosts without hardware virtualization.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hv_guest_abi.h"
#include "vmm_internal.h"

#define BUILTIN_MAX_IMAGE (4u << 20)
#define BUILTIN_PD_BASE (VMM_BOOT_PML4 + 0x2000)

int
vmm_boot_builtin(struct hv_vm *vm)
{
	const char *path = vm->builtin_image;
	struct hv_guest_info *info;
	uint64_t *pd;
	struct stat st;
	ssize_t n;
	int fd, khz;

	if (path == NULL)
		return vmm_err("built-in guest: no image path");
	if (vm->low_size > HV_GUEST_LAPIC_ALIAS)
		return vmm_err("built-in guest: at most %llu MiB of memory",
			       HV_GUEST_LAPIC_ALIAS >> 20);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return vmm_err_errno("built-in guest image %s", path);
	if (fstat(fd, &st) != 0 || st.st_size <= 0 || st.st_size > BUILTIN_MAX_IMAGE ||
	    HV_GUEST_LOAD_ADDR + (uint64_t)st.st_size + (8u << 20) > vm->low_size) {
		close(fd);
		return vmm_err("built-in guest image %s: bad size or too little memory", path);
	}
	n = pread(fd, vm->mem + HV_GUEST_LOAD_ADDR, (size_t)st.st_size, 0);
	close(fd);
	if (n != st.st_size)
		return vmm_err_errno("reading %s", path);

	/* the xAPIC alias: one 2 MiB page, uncached, supervisor only */
	pd = vmm_gpa_to_hva(vm, BUILTIN_PD_BASE, 4 * 0x1000);
	pd[HV_GUEST_LAPIC_ALIAS >> 21] = HV_GUEST_LAPIC_BASE & ~((2ull << 20) - 1);
	pd[HV_GUEST_LAPIC_ALIAS >> 21] |= 0x1 | 0x2 | 0x10 | 0x80; /* P RW PCD PS */

	info = vmm_gpa_to_hva(vm, HV_GUEST_INFO_ADDR, sizeof(*info));
	memset(info, 0, sizeof(*info));
	info->magic = HV_GUEST_INFO_MAGIC;
	info->ncpus = vm->cfg.ncpus;
	info->mem_size = vm->low_size;
	khz = ioctl(vm->vcpus[0].fd, KVM_GET_TSC_KHZ, 0);
	info->tsc_khz = khz > 0 ? (uint64_t)khz : 1000000;
	vm->tsc_khz = info->tsc_khz;
	info->ecam_base = VMM_ECAM_BASE;
	vmm_pci_virtio_location(vm, &info->virtio_bar, &info->virtio_bdf);
	memcpy(info->mac, vm->cfg.mac, 6);
	snprintf(info->cmdline, sizeof(info->cmdline), "%s", vm->cmdline);
	return vmm_vcpu_set_long_mode(&vm->vcpus[0], HV_GUEST_LOAD_ADDR, 0x80000, 0, true);
}
