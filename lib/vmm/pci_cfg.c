/* SPDX-License-Identifier: BSD-3-Clause */
/* PCI config space of a type-0 function: BAR sizing, command register,
 * capability list (see pci.h).
 *
 * A guest writes any value at any offset: every byte has a write mask, and
 * only the command bits we implement, cache line size, latency timer,
 * interrupt line, the BARs' address bits and what a device opens of its
 * capabilities (MSI-X: enable and function mask) can change. Capability ids
 * and links, MSI-X table size and table/PBA locations, virtio capability
 * bodies are read-only: the transport's emulation relies on them. */
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
	d->wmask[0x04] = PCI_CMD_MEM | PCI_CMD_MASTER;
	d->wmask[0x05] = 0x04; /* INTx disable */
	d->wmask[0x0c] = 0xff; /* cache line size */
	d->wmask[0x0d] = 0xff; /* latency timer */
	d->wmask[0x3c] = 0xff; /* interrupt line */
}

void
vmm_pci_set_wmask(struct vmm_pci_dev *d, uint32_t off, uint8_t mask)
{
	if (off < PCI_CFG_SIZE)
		d->wmask[off] = mask;
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
	d->bar_base[bar] = addr & ~(size - 1);
	le_put32(d->cfg + 0x10 + 4 * bar, d->bar_base[bar]);
}

uint64_t
vmm_pci_bar_addr(const struct vmm_pci_dev *d, unsigned int bar)
{
	return bar < PCI_NUM_BARS ? d->bar_base[bar] : 0;
}

uint32_t
vmm_pci_cfg_read(const struct vmm_pci_dev *d, uint32_t off, uint32_t len)
{
	uint32_t v = 0, i;

	if (len == 0 || len > 4 || off >= PCI_CFG_SIZE || len > PCI_CFG_SIZE - off)
		return 0xffffffff;
	for (i = 0; i < len; i++)
		v |= (uint32_t)d->cfg[off + i] << (8 * i);
	return v;
}

uint32_t
vmm_pci_guest_read(struct vmm_pci_dev *d, uint32_t off, uint32_t len)
{
	if (off >= PCI_CAP_START && off < d->cap_end && d->ops && d->ops->cap_read)
		d->ops->cap_read(d->opaque, off, len);
	return vmm_pci_cfg_read(d, off, len);
}

/* A BAR register after a write of val: the size's low bits stay zero, which
 * is how the guest's all-ones write reads back the size. The register then
 * holds the sizing pattern (all address bits set: a window ending at 4 GiB,
 * which QEMU does not map either); the BAR keeps decoding where it was until
 * the guest writes an address, so the device moves from there, not from the
 * pattern. */
static void
bar_write(struct vmm_pci_dev *d, unsigned int bar, uint32_t val)
{
	uint32_t size = d->bar_size[bar], old = d->bar_base[bar], reg;

	if (size == 0) {
		le_put32(d->cfg + 0x10 + 4 * bar, 0);
		return;
	}
	reg = val & ~(size - 1);
	le_put32(d->cfg + 0x10 + 4 * bar, reg);
	if (reg == ~(size - 1) || reg == old)
		return;
	d->bar_base[bar] = reg;
	if (d->ops && d->ops->bar_moved)
		d->ops->bar_moved(d->opaque, bar, old, reg);
}

void
vmm_pci_cfg_write(struct vmm_pci_dev *d, uint32_t off, uint32_t val, uint32_t len)
{
	uint32_t i;

	/* within one dword, as configuration mechanism #1 and ECAM accesses are */
	if (len == 0 || len > 4 || off >= PCI_CFG_SIZE || (off & 3) + len > 4)
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

		d->cfg[o] = (uint8_t)((d->cfg[o] & ~d->wmask[o]) | (b & d->wmask[o]));
	}
	if (off >= PCI_CAP_START && off < d->cap_end && d->ops && d->ops->cap_write)
		d->ops->cap_write(d->opaque, off, len);
}
