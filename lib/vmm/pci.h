/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * PCI: config space of a type-0 function (pure: unit-tested without KVM)
 * and the host bridge that reaches it through 0xCF8/0xCFC and ECAM.
 */
#ifndef VMM_PCI_H
#define VMM_PCI_H

#include <stdbool.h>
#include <stdint.h>

#define PCI_CFG_SIZE 256
#define PCI_NUM_BARS 6
#define PCI_CAP_START 0x40
#define PCI_CAP_ID_MSIX 0x11
#define PCI_CAP_ID_VNDR 0x09
#define PCI_CMD_MEM 0x2
#define PCI_CMD_MASTER 0x4

struct vmm_pci_dev_ops {
	/* a write landed in the capability area (offset >= 0x40), after it was stored */
	void (*cap_write)(void *opaque, uint32_t off, uint32_t len);
	/* a guest read of the capability area is about to happen (a window
	 * whose bytes the device fills on demand) */
	void (*cap_read)(void *opaque, uint32_t off, uint32_t len);
	/* a memory BAR moved: old_addr is where it decoded until now (not the
	 * sizing pattern a guest wrote in between) */
	void (*bar_moved)(void *opaque, unsigned int bar, uint64_t old_addr, uint64_t new_addr);
};

struct vmm_pci_dev {
	uint8_t cfg[PCI_CFG_SIZE];
	/* the bits a guest may change; all else (ids, capability ids and links,
	 * capability bodies unless a device opens bits of them) is read-only */
	uint8_t wmask[PCI_CFG_SIZE];
	uint32_t bar_size[PCI_NUM_BARS]; /* 0: no BAR; 32-bit memory BARs only */
	/* where each BAR decodes: the last address written, never the sizing
	 * pattern the register holds while a guest sizes it */
	uint32_t bar_base[PCI_NUM_BARS];
	uint8_t cap_end;  /* next free capability offset */
	uint8_t cap_last; /* offset of the last capability, 0: none */
	const struct vmm_pci_dev_ops *ops;
	void *opaque;
};

void vmm_pci_dev_init(struct vmm_pci_dev *d, uint16_t vendor, uint16_t device, uint32_t class_code,
		      uint8_t revision, uint16_t subsys_vendor, uint16_t subsys);
/* Append a capability: body is what follows the id and next bytes, read-only
 * to the guest (see vmm_pci_set_wmask). Returns its offset, or -1 when config
 * space is full. */
int vmm_pci_add_cap(struct vmm_pci_dev *d, uint8_t id, const void *body, uint8_t body_len);
/* Let the guest write the bits of mask in config byte off (a capability's
 * control bits). */
void vmm_pci_set_wmask(struct vmm_pci_dev *d, uint32_t off, uint8_t mask);
/* A 32-bit memory BAR of a power-of-two size (>= 16) at addr. */
void vmm_pci_set_bar(struct vmm_pci_dev *d, unsigned int bar, uint32_t addr, uint32_t size);
/* Where the BAR decodes (while the guest sizes it: where it was before). */
uint64_t vmm_pci_bar_addr(const struct vmm_pci_dev *d, unsigned int bar);
/* Config space access of len 1 to 4 bytes; off any. Reads outside the 256
 * bytes (or of another length) return all ones; writes outside them, of
 * another length or across a dword boundary are ignored. */
uint32_t vmm_pci_cfg_read(const struct vmm_pci_dev *d, uint32_t off, uint32_t len);
/* A config read by the guest: vmm_pci_cfg_read after the device's cap_read. */
uint32_t vmm_pci_guest_read(struct vmm_pci_dev *d, uint32_t off, uint32_t len);
void vmm_pci_cfg_write(struct vmm_pci_dev *d, uint32_t off, uint32_t val, uint32_t len);

struct hv_vm;
/* Put a function on bus 0 at slot (function 0). Returns 0 or -1. */
int vmm_pci_attach(struct hv_vm *vm, unsigned int slot, struct vmm_pci_dev *d);
/* A fresh BAR address from the PCI MMIO window. */
uint32_t vmm_pci_alloc_bar(struct hv_vm *vm, uint32_t size);

#endif
