/* SPDX-License-Identifier: BSD-3-Clause */
/* PCI config space of a type-0 function: BAR sizing, command register,
 * capability list (see pci.h). */
#include <string.h>

#include "le_bytes.h"
#include "pci.h"

void
vmm_pci_dev_init(struct vmm_pci_dev *d, uint16_t vendor, uint16_t device, uint32_t class_code,
		 uint8_t revision, uint16_t subsys_vendor, uint16_t subsys)
{
	memset(d, 0, sizeof(*d));
	le_put16(d->cfg + 0x00, vendor);
	le_put16(d->cfg + 0x02, device);
	d->cfg[0x08] = revision;
	d->cfg[0x09] = (uint8_t)class_code;
	d->cfg[0x0a] = (uint8_t)(class_code >> 8);
	d->cfg[0x0b] = (uint8_t)(class_code >> 16);
	le_put16(d->cfg + 0x2c, subsys_vendor);
	le_put16(d->cfg + 0x2e, subsys);
	d->cfg[0x3d] = 1; /* INTA#, though MSI-X is what we deliver */
	d->cap_end = PCI_CAP_START;
}

int
vmm_pci_add_cap(struct vmm_pci_dev *d, uint8_t id, const void *body, uint8_t body_len)
{
	unsigned int off = d->cap_end;

	if (off + 2u + body_len > PCI_CFG_SIZE)
		return -1;
	d->cfg[off] = id;
	d->cfg[off + 1] = 0;
	memcpy(d->cfg + off + 2, body, body_len);
	if (d->cap_last == 0)
		d->cfg[0x34] = (uint8_t)off;
	else
		d->cfg[d->cap_last + 1] = (uint8_t)off;
	d->cap_last = (uint8_t)off;
	d->cap_end = (uint8_t)((off + 2u + body_len + 3u) & ~3u);
	d->cfg[0x06] |= 0x10; /* status: capability list */
	return (int)off;
}

void
vmm_pci_set_bar(struct vmm_pci_dev *d, unsigned int bar, uint32_t addr, uint32_t size)
{
	d->bar_size[bar] = size;
	le_put32(d->cfg + 0x10 + 4 * bar, addr & ~(size - 1));
}

uint64_t
vmm_pci_bar_addr(const struct vmm_pci_dev *d, unsigned int bar)
{
	return le_get32(d->cfg + 0x10 + 4 * bar) & ~0xfu;
}

uint32_t
vmm_pci_cfg_read(const struct vmm_pci_dev *d, uint32_t off, uint32_t len)
{
	uint32_t v = 0, i;

	if (off >= PCI_CFG_SIZE || len > PCI_CFG_SIZE - off)
		return 0xffffffff;
	for (i = 0; i < len; i++)
		v |= (uint32_t)d->cfg[off + i] << (8 * i);
	return v;
}

/* A BAR register after a write of val: the size's low bits stay zero, which
 * is how the guest's all-ones write reads back the size. */
static void
bar_write(struct vmm_pci_dev *d, unsigned int bar, uint32_t val)
{
	uint64_t old = vmm_pci_bar_addr(d, bar);
	uint32_t size = d->bar_size[bar];

	if (size == 0) {
		le_put32(d->cfg + 0x10 + 4 * bar, 0);
		return;
	}
	le_put32(d->cfg + 0x10 + 4 * bar, val & ~(size - 1));
	if (val != 0xffffffff && vmm_pci_bar_addr(d, bar) != old && d->ops && d->ops->bar_moved)
		d->ops->bar_moved(d->opaque, bar, old, vmm_pci_bar_addr(d, bar));
}

void
vmm_pci_cfg_write(struct vmm_pci_dev *d, uint32_t off, uint32_t val, uint32_t len)
{
	uint32_t i;

	if (off >= PCI_CFG_SIZE || len > PCI_CFG_SIZE - off)
		return;
	if (off >= 0x10 && off < 0x28) {
		unsigned int bar = (off - 0x10) / 4;
		uint32_t shift = 8 * ((off - 0x10) % 4);
		uint32_t mask = len == 4 ? 0xffffffff : ((1u << (8 * len)) - 1) << shift;
		uint32_t cur = le_get32(d->cfg + 0x10 + 4 * bar);

		bar_write(d, bar, (cur & ~mask) | ((val << shift) & mask));
		return;
	}
	for (i = 0; i < len; i++) {
		uint32_t o = off + i;
		uint8_t b = (uint8_t)(val >> (8 * i));

		/* writable: command (memory, master, INTx disable), cache line,
		 * latency, interrupt line, and capability bodies (not ids or links) */
		if (o == 0x04)
			d->cfg[o] = b & 0x06;
		else if (o == 0x05)
			d->cfg[o] = b & 0x04;
		else if (o == 0x0c || o == 0x0d || o == 0x3c)
			d->cfg[o] = b;
		else if (o >= PCI_CAP_START && o < d->cap_end)
			d->cfg[o] = b;
	}
	if (off >= PCI_CAP_START && off < d->cap_end && d->ops && d->ops->cap_write)
		d->ops->cap_write(d->opaque, off, len);
}

