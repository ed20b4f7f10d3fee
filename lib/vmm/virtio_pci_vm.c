/* SPDX-License-Identifier: BSD-3-Clause */
/* The virtio-pci transport on a VM (see virtio_pci.h): BAR0 from the PCI
 * window on the MMIO bus, the function on bus 0, the kicks as KVM
 * ioeventfds. The registers themselves are virtio_pci.c's. */
#include <unistd.h>

#include "virtio_pci.h"
#include "vmm_internal.h"

static int
vm_ioeventfd(void *ctx, int fd, uint64_t addr, bool assign)
{
	struct vmm_virtio_pci *v = ctx;

	return vmm_ioeventfd(v->vm, fd, addr, assign);
}

static void
vm_bar_moved(void *ctx, uint64_t base)
{
	struct vmm_virtio_pci *v = ctx;

	v->bar_region->base = base;
}

static void
vm_signal_msi(void *ctx, uint64_t addr, uint32_t data)
{
	struct vmm_virtio_pci *v = ctx;

	vmm_signal_msi(v->vm, addr, data);
}

static void
vm_kick(void *ctx, int fd)
{
	uint64_t one = 1;

	(void)ctx;
	if (write(fd, &one, sizeof(one)) < 0) {
		/* the backend drains the counter: it cannot overflow */
	}
}

static const struct vmm_virtio_host_ops vm_host_ops = {
	.ioeventfd = vm_ioeventfd,
	.bar_moved = vm_bar_moved,
	.signal_msi = vm_signal_msi,
	.kick = vm_kick,
};

static const struct vmm_io_ops bar_ops = {
	.read = vmm_virtio_pci_bar_read,
	.write = vmm_virtio_pci_bar_write,
};

int
vmm_virtio_pci_init(struct vmm_virtio_pci *v, struct hv_vm *vm, unsigned int slot,
		    uint16_t device_id, uint16_t nqueues, uint16_t qsize_max,
		    const struct vmm_virtio_ops *ops, void *opaque)
{
	uint32_t bar = vmm_pci_alloc_bar(vm, VIRTIO_BAR_SIZE);

	if (vmm_virtio_pci_setup(v, device_id, nqueues, qsize_max, bar, ops, opaque, &vm_host_ops,
				 v) != 0)
		return vmm_err("virtio: config space full");
	v->vm = vm;
	v->bar_region = vmm_bus_add(&vm->mmio, bar, VIRTIO_BAR_SIZE, &bar_ops, v);
	if (v->bar_region == NULL)
		return vmm_err("MMIO bus full");
	return vmm_pci_attach(vm, slot, &v->pci);
}
