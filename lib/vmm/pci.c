/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The PCI host bridge: configuration mechanism #1 on ports 0xCF8/0xCFC and an
 * ECAM window for bus 0 (MMIO, which CPL3 code can reach too).
 */
#include <stdlib.h>
#include <string.h>

#include "pci.h"
#include "vmm_internal.h"

#define PCI_SLOTS 32

struct vmm_pci {
	struct hv_vm *vm;
	uint32_t cf8;
	uint32_t next_bar;
	struct vmm_pci_dev bridge;
	struct vmm_pci_dev *slots[PCI_SLOTS];
};

/* ---- host bridge ---- */

static struct vmm_pci_dev *
pci_dev_at(struct vmm_pci *pci, uint32_t bus, uint32_t slot, uint32_t fn)
{
	if (bus != 0 || fn != 0 || slot >= PCI_SLOTS)
		return NULL;
	return pci->slots[slot];
}

static uint32_t
pci_read(struct vmm_pci *pci, uint32_t bus, uint32_t slot, uint32_t fn, uint32_t reg, uint32_t len)
{
	struct vmm_pci_dev *d = pci_dev_at(pci, bus, slot, fn);

	return d ? vmm_pci_guest_read(d, reg, len) : 0xffffffff;
}

static void
pci_write(struct vmm_pci *pci, uint32_t bus, uint32_t slot, uint32_t fn, uint32_t reg, uint32_t val,
	  uint32_t len)
{
	struct vmm_pci_dev *d = pci_dev_at(pci, bus, slot, fn);

	if (d)
		vmm_pci_cfg_write(d, reg, val, len);
}

static void
cf8_read(void *opaque, uint64_t off, void *data, uint32_t len)
{
	struct vmm_pci *pci = opaque;
	uint32_t a = pci->cf8, v;

	if (off < 4) { /* the address register */
		if (off == 0 && len == 4)
			memcpy(data, &pci->cf8, 4);
		return;
	}
	if (!(a & 0x80000000u)) {
		memset(data, 0xff, len);
		return;
	}
	v = pci_read(pci, (a >> 16) & 0xff, (a >> 11) & 0x1f, (a >> 8) & 7,
		     (a & 0xfc) + (uint32_t)(off - 4), len);
	memcpy(data, &v, len);
}

static void
cf8_write(void *opaque, uint64_t off, const void *data, uint32_t len)
{
	struct vmm_pci *pci = opaque;
	uint32_t a = pci->cf8, v = 0;

	memcpy(&v, data, len);
	if (off < 4) {
		if (off == 0 && len == 4)
			pci->cf8 = v;
		return;
	}
	if (a & 0x80000000u)
		pci_write(pci, (a >> 16) & 0xff, (a >> 11) & 0x1f, (a >> 8) & 7,
			  (a & 0xfc) + (uint32_t)(off - 4), v, len);
}

static const struct vmm_io_ops cf8_ops = {.read = cf8_read, .write = cf8_write};

static void
ecam_read(void *opaque, uint64_t off, void *data, uint32_t len)
{
	uint32_t v;

	if (len > 4)
		return;
	v = pci_read(opaque, (uint32_t)(off >> 20), (off >> 15) & 0x1f, (off >> 12) & 7,
		     off & 0xfff, len);
	memcpy(data, &v, len);
}

static void
ecam_write(void *opaque, uint64_t off, const void *data, uint32_t len)
{
	uint32_t v = 0;

	if (len > 4)
		return;
	memcpy(&v, data, len);
	pci_write(opaque, (uint32_t)(off >> 20), (off >> 15) & 0x1f, (off >> 12) & 7, off & 0xfff,
		  v, len);
}

static const struct vmm_io_ops ecam_ops = {.read = ecam_read, .write = ecam_write};

int
vmm_pci_init(struct hv_vm *vm)
{
	struct vmm_pci *pci = calloc(1, sizeof(*pci));

	if (pci == NULL)
		return vmm_err("out of memory");
	pci->vm = vm;
	pci->next_bar = (uint32_t)VMM_PCI_MMIO_BASE;
	vm->pci = pci;
	/* a host bridge (Red Hat's PCIe host bridge ids, as QEMU's gpex) */
	vmm_pci_dev_init(&pci->bridge, 0x1b36, 0x0008, 0x060000, 0, 0x1af4, 0x1100);
	pci->slots[0] = &pci->bridge;
	if (vmm_bus_add(&vm->pio, 0xcf8, 8, &cf8_ops, pci) == NULL ||
	    vmm_bus_add(&vm->mmio, VMM_ECAM_BASE, VMM_ECAM_SIZE, &ecam_ops, pci) == NULL)
		return vmm_err("I/O bus full");
	return 0;
}

void
vmm_pci_free(struct hv_vm *vm)
{
	free(vm->pci);
	vm->pci = NULL;
}

int
vmm_pci_attach(struct hv_vm *vm, unsigned int slot, struct vmm_pci_dev *d)
{
	if (slot >= PCI_SLOTS || vm->pci->slots[slot] != NULL)
		return vmm_err("PCI slot %u taken", slot);
	vm->pci->slots[slot] = d;
	return 0;
}

uint32_t
vmm_pci_alloc_bar(struct hv_vm *vm, uint32_t size)
{
	uint32_t a = (vm->pci->next_bar + size - 1) & ~(size - 1);

	vm->pci->next_bar = a + size;
	return a;
}
