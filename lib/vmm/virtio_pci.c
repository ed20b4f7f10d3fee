/* SPDX-License-Identifier: BSD-3-Clause */
/* virtio-pci modern transport (see virtio_pci.h): the guest-facing registers,
 * pure (no KVM; the host's part goes through vmm_virtio_host_ops). */
#include <stddef.h>
#include <string.h>

#include <linux/virtio_config.h>
#include <linux/virtio_pci.h>

#include "virtio_pci.h"

/* the common configuration (virtio 1.2, 4.1.4.3), without the queue_notify_data
 * and queue_reset fields of features we do not offer */
#define CC_SIZE ((uint32_t)sizeof(struct virtio_pci_common_cfg))

static struct vmm_virtio_queue *
cur_queue(struct vmm_virtio_pci *v)
{
	return v->qsel < v->nqueues ? &v->q[v->qsel] : NULL;
}

/* The transport's part of a reset: registers as after power-on. */
static void
transport_reset(struct vmm_virtio_pci *v)
{
	unsigned int i;

	v->resetting = false;
	v->status = 0;
	v->isr = 0;
	v->config_pending = false;
	v->driver_features = 0;
	v->dfselect = v->gfselect = 0;
	v->qsel = 0;
	v->config_vector = MSIX_NO_VECTOR;
	for (i = 0; i < v->nqueues; i++)
		v->q[i] = (struct vmm_virtio_queue){.size = v->qsize_max, .vector = MSIX_NO_VECTOR};
	if (v->ops->vectors_changed)
		v->ops->vectors_changed(v->opaque);
}

static void
virtio_reset(struct vmm_virtio_pci *v)
{
	if (v->ops->reset && !v->ops->reset(v->opaque))
		v->resetting = true; /* finished by vmm_virtio_pci_reset_done */
	else
		transport_reset(v);
}

void
vmm_virtio_pci_reset_done(struct vmm_virtio_pci *v)
{
	if (v->resetting)
		transport_reset(v);
}

/* Send the config interrupt, or hold it while its vector is masked. */
static void
config_irq(struct vmm_virtio_pci *v)
{
	uint16_t vec = v->config_vector;

	if (vec == MSIX_NO_VECTOR)
		return;
	if (vmm_msix_masked(&v->msix, vec)) {
		v->config_pending = true;
		return;
	}
	v->config_pending = false;
	if (v->host->signal_msi)
		v->host->signal_msi(v->host_ctx, vmm_msix_addr(&v->msix, vec),
				    vmm_msix_data(&v->msix, vec));
}

void
vmm_virtio_pci_config_changed(struct vmm_virtio_pci *v)
{
	v->generation++;
	v->isr |= VIRTIO_PCI_ISR_CONFIG;
	config_irq(v);
}

void
vmm_virtio_pci_needs_reset(struct vmm_virtio_pci *v)
{
	if (v->status & VIRTIO_CONFIG_S_NEEDS_RESET)
		return;
	v->status |= VIRTIO_CONFIG_S_NEEDS_RESET;
	if (v->status & VIRTIO_CONFIG_S_DRIVER_OK)
		vmm_virtio_pci_config_changed(v);
}

static uint32_t
common_read(struct vmm_virtio_pci *v, uint64_t off)
{
	struct vmm_virtio_queue *q = cur_queue(v);

	switch (off) {
	case VIRTIO_PCI_COMMON_DFSELECT:
		return v->dfselect;
	case VIRTIO_PCI_COMMON_DF:
		return v->dfselect < 2 ? (uint32_t)(v->device_features >> (32 * v->dfselect)) : 0;
	case VIRTIO_PCI_COMMON_GFSELECT:
		return v->gfselect;
	case VIRTIO_PCI_COMMON_GF:
		return v->gfselect < 2 ? (uint32_t)(v->driver_features >> (32 * v->gfselect)) : 0;
	case VIRTIO_PCI_COMMON_MSIX:
		return v->config_vector;
	case VIRTIO_PCI_COMMON_NUMQ:
		return v->nqueues;
	case VIRTIO_PCI_COMMON_STATUS:
		return v->status;
	case VIRTIO_PCI_COMMON_CFGGENERATION:
		return v->generation;
	case VIRTIO_PCI_COMMON_Q_SELECT:
		return v->qsel;
	case VIRTIO_PCI_COMMON_Q_SIZE:
		return q ? q->size : 0;
	case VIRTIO_PCI_COMMON_Q_MSIX:
		return q ? q->vector : MSIX_NO_VECTOR;
	case VIRTIO_PCI_COMMON_Q_ENABLE:
		return q ? q->enabled : 0;
	case VIRTIO_PCI_COMMON_Q_NOFF:
		return v->qsel;
	case VIRTIO_PCI_COMMON_Q_DESCLO:
		return q ? (uint32_t)q->desc : 0;
	case VIRTIO_PCI_COMMON_Q_DESCHI:
		return q ? (uint32_t)(q->desc >> 32) : 0;
	case VIRTIO_PCI_COMMON_Q_AVAILLO:
		return q ? (uint32_t)q->avail : 0;
	case VIRTIO_PCI_COMMON_Q_AVAILHI:
		return q ? (uint32_t)(q->avail >> 32) : 0;
	case VIRTIO_PCI_COMMON_Q_USEDLO:
		return q ? (uint32_t)q->used : 0;
	case VIRTIO_PCI_COMMON_Q_USEDHI:
		return q ? (uint32_t)(q->used >> 32) : 0;
	default:
		return 0;
	}
}

/* The common configuration as bytes, so that any aligned sub-field read works. */
static void
common_image(struct vmm_virtio_pci *v, uint8_t *buf)
{
	static const uint8_t fields[][2] = {
		{VIRTIO_PCI_COMMON_DFSELECT, 4},  {VIRTIO_PCI_COMMON_DF, 4},
		{VIRTIO_PCI_COMMON_GFSELECT, 4},  {VIRTIO_PCI_COMMON_GF, 4},
		{VIRTIO_PCI_COMMON_MSIX, 2},      {VIRTIO_PCI_COMMON_NUMQ, 2},
		{VIRTIO_PCI_COMMON_STATUS, 1},    {VIRTIO_PCI_COMMON_CFGGENERATION, 1},
		{VIRTIO_PCI_COMMON_Q_SELECT, 2},  {VIRTIO_PCI_COMMON_Q_SIZE, 2},
		{VIRTIO_PCI_COMMON_Q_MSIX, 2},    {VIRTIO_PCI_COMMON_Q_ENABLE, 2},
		{VIRTIO_PCI_COMMON_Q_NOFF, 2},    {VIRTIO_PCI_COMMON_Q_DESCLO, 4},
		{VIRTIO_PCI_COMMON_Q_DESCHI, 4},  {VIRTIO_PCI_COMMON_Q_AVAILLO, 4},
		{VIRTIO_PCI_COMMON_Q_AVAILHI, 4}, {VIRTIO_PCI_COMMON_Q_USEDLO, 4},
		{VIRTIO_PCI_COMMON_Q_USEDHI, 4},
	};
	unsigned int i;

	memset(buf, 0, CC_SIZE);
	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		uint32_t val = common_read(v, fields[i][0]);

		memcpy(buf + fields[i][0], &val, fields[i][1]);
	}
}

static void
set_lo(uint64_t *r, uint32_t v)
{
	*r = (*r & ~0xffffffffull) | v;
}

static void
set_hi(uint64_t *r, uint32_t v)
{
	*r = (*r & 0xffffffffull) | ((uint64_t)v << 32);
}

static void
status_write(struct vmm_virtio_pci *v, uint8_t s)
{
	uint8_t old = v->status;

	if (s == 0) {
		virtio_reset(v);
		return;
	}
	if ((s & VIRTIO_CONFIG_S_FEATURES_OK) && !(old & VIRTIO_CONFIG_S_FEATURES_OK)) {
		/* only what we offered, and the modern interface */
		if ((v->driver_features & ~v->device_features) ||
		    !(v->driver_features & (1ull << VIRTIO_F_VERSION_1)))
			s &= (uint8_t)~VIRTIO_CONFIG_S_FEATURES_OK;
	}
	/* NEEDS_RESET is the device's to set, and stays until reset */
	v->status =
		(uint8_t)((s & ~VIRTIO_CONFIG_S_NEEDS_RESET) | (old & VIRTIO_CONFIG_S_NEEDS_RESET));
	if ((s & VIRTIO_CONFIG_S_DRIVER_OK) && !(old & VIRTIO_CONFIG_S_DRIVER_OK) &&
	    !v->ops->driver_ok(v->opaque))
		vmm_virtio_pci_needs_reset(v);
}

static void
common_write(struct vmm_virtio_pci *v, uint64_t off, uint32_t val)
{
	struct vmm_virtio_queue *q = cur_queue(v);
	bool live = v->status & VIRTIO_CONFIG_S_DRIVER_OK;

	if (v->resetting)
		return; /* the driver waits for status 0 first (4.1.4.3.2) */
	switch (off) {
	case VIRTIO_PCI_COMMON_DFSELECT:
		v->dfselect = val;
		break;
	case VIRTIO_PCI_COMMON_GFSELECT:
		v->gfselect = val;
		break;
	case VIRTIO_PCI_COMMON_GF:
		if (v->gfselect < 2 && !(v->status & VIRTIO_CONFIG_S_FEATURES_OK)) {
			if (v->gfselect == 0)
				set_lo(&v->driver_features, val);
			else
				set_hi(&v->driver_features, val);
		}
		break;
	case VIRTIO_PCI_COMMON_MSIX:
		v->config_vector = (uint16_t)(val < v->msix.nvec ? val : MSIX_NO_VECTOR);
		v->config_pending = false; /* held for the vector it had */
		break;
	case VIRTIO_PCI_COMMON_STATUS:
		status_write(v, (uint8_t)val);
		break;
	case VIRTIO_PCI_COMMON_Q_SELECT:
		v->qsel = (uint16_t)val;
		break;
	case VIRTIO_PCI_COMMON_Q_SIZE:
		/* a power of two no larger than ours, while the queue is off */
		if (q && !q->enabled && val && val <= v->qsize_max && !(val & (val - 1)))
			q->size = (uint16_t)val;
		break;
	case VIRTIO_PCI_COMMON_Q_MSIX:
		if (q) {
			q->vector = (uint16_t)(val < v->msix.nvec ? val : MSIX_NO_VECTOR);
			if (v->ops->vectors_changed)
				v->ops->vectors_changed(v->opaque);
		}
		break;
	case VIRTIO_PCI_COMMON_Q_ENABLE:
		if (q && val == 1 && !live)
			q->enabled = true;
		break;
	case VIRTIO_PCI_COMMON_Q_DESCLO:
	case VIRTIO_PCI_COMMON_Q_DESCHI:
	case VIRTIO_PCI_COMMON_Q_AVAILLO:
	case VIRTIO_PCI_COMMON_Q_AVAILHI:
	case VIRTIO_PCI_COMMON_Q_USEDLO:
	case VIRTIO_PCI_COMMON_Q_USEDHI:
		if (q == NULL || q->enabled)
			break;
		if (off == VIRTIO_PCI_COMMON_Q_DESCLO)
			set_lo(&q->desc, val);
		else if (off == VIRTIO_PCI_COMMON_Q_DESCHI)
			set_hi(&q->desc, val);
		else if (off == VIRTIO_PCI_COMMON_Q_AVAILLO)
			set_lo(&q->avail, val);
		else if (off == VIRTIO_PCI_COMMON_Q_AVAILHI)
			set_hi(&q->avail, val);
		else if (off == VIRTIO_PCI_COMMON_Q_USEDLO)
			set_lo(&q->used, val);
		else
			set_hi(&q->used, val);
		break;
	default:
		break;
	}
}

void
vmm_virtio_config_copy(const void *img, uint32_t img_len, uint64_t off, void *data, uint32_t len)
{
	if (off < img_len && len <= img_len - off)
		memcpy(data, (const uint8_t *)img + off, len);
}

void
vmm_virtio_pci_bar_read(void *opaque, uint64_t off, void *data, uint32_t len)
{
	struct vmm_virtio_pci *v = opaque;

	if (off >= VIRTIO_BAR_MSIX_PBA) {
		vmm_msix_pba_read(&v->msix, off - VIRTIO_BAR_MSIX_PBA, data, len);
	} else if (off >= VIRTIO_BAR_MSIX_TABLE) {
		vmm_msix_table_read(&v->msix, off - VIRTIO_BAR_MSIX_TABLE, data, len);
	} else if (off >= VIRTIO_BAR_NOTIFY) {
		/* reads of the notify area return zero */
	} else if (off >= VIRTIO_BAR_DEVICE) {
		v->ops->config_read(v->opaque, off - VIRTIO_BAR_DEVICE, data, len);
	} else if (off >= VIRTIO_BAR_ISR) {
		/* read-to-clear (4.1.4.5); the driver reads it only without MSI-X */
		if (off == VIRTIO_BAR_ISR) {
			*(uint8_t *)data = v->isr;
			v->isr = 0;
		}
	} else if (off < CC_SIZE && len <= 4 && off + len <= CC_SIZE) {
		uint8_t buf[CC_SIZE];

		common_image(v, buf);
		memcpy(data, buf + off, len);
	}
}

void
vmm_virtio_pci_bar_write(void *opaque, uint64_t off, const void *data, uint32_t len)
{
	struct vmm_virtio_pci *v = opaque;
	uint32_t val = 0;

	if (off >= VIRTIO_BAR_MSIX_PBA)
		return;
	if (off >= VIRTIO_BAR_MSIX_TABLE) {
		vmm_msix_table_write(&v->msix, off - VIRTIO_BAR_MSIX_TABLE, data, len);
		return;
	}
	if (off >= VIRTIO_BAR_NOTIFY) {
		/* KVM's ioeventfds take the notify writes of the guest's CPUs; what
		 * comes here came through the PCI_CFG window */
		uint64_t q = (off - VIRTIO_BAR_NOTIFY) / VIRTIO_NOTIFY_MULT;

		if (q < v->nqueues && v->kickfd[q] >= 0 && v->host->kick)
			v->host->kick(v->host_ctx, v->kickfd[q]);
		return;
	}
	if (off < CC_SIZE && len <= 4) {
		memcpy(&val, data, len);
		common_write(v, off, val);
	}
}

static void
msix_update(void *opaque, unsigned int vec)
{
	struct vmm_virtio_pci *v = opaque;

	if (v->config_pending && vec == v->config_vector && !vmm_msix_masked(&v->msix, vec))
		config_irq(v);
	if (v->ops->vectors_changed)
		v->ops->vectors_changed(v->opaque);
}

static bool
msix_pending(void *opaque, unsigned int vec)
{
	struct vmm_virtio_pci *v = opaque;

	if (v->config_pending && vec == v->config_vector)
		return true;
	return v->ops->vector_pending ? v->ops->vector_pending(v->opaque, vec) : false;
}

/* The PCI_CFG window (4.1.4.9): a BAR access of cap.length bytes at
 * cap.offset through pci_cfg_data. Anything but BAR0, 1, 2 or 4 bytes
 * naturally aligned inside it is ignored (reads see zero). */
static bool
pcicfg_target(const struct vmm_virtio_pci *v, uint32_t *off, uint32_t *len)
{
	uint32_t c = (uint32_t)v->pcicfg_cap;

	*off = vmm_pci_cfg_read(&v->pci, c + offsetof(struct virtio_pci_cap, offset), 4);
	*len = vmm_pci_cfg_read(&v->pci, c + offsetof(struct virtio_pci_cap, length), 4);
	return vmm_pci_cfg_read(&v->pci, c + offsetof(struct virtio_pci_cap, bar), 1) == 0 &&
	       (*len == 1 || *len == 2 || *len == 4) && !(*off & (*len - 1)) &&
	       *off < VIRTIO_BAR_SIZE;
}

static bool
overlaps_data(const struct vmm_virtio_pci *v, uint32_t off, uint32_t len)
{
	uint32_t d = (uint32_t)v->pcicfg_cap + offsetof(struct virtio_pci_cfg_cap, pci_cfg_data);

	return v->pcicfg_cap > 0 && off < d + 4 && off + len > d;
}

static void
cap_read(void *opaque, uint32_t off, uint32_t len)
{
	struct vmm_virtio_pci *v = opaque;
	uint32_t d = (uint32_t)v->pcicfg_cap + offsetof(struct virtio_pci_cfg_cap, pci_cfg_data);
	uint32_t boff, blen;
	uint8_t buf[4] = {0};

	if (!overlaps_data(v, off, len))
		return;
	if (pcicfg_target(v, &boff, &blen))
		vmm_virtio_pci_bar_read(v, boff, buf, blen);
	memcpy(v->pci.cfg + d, buf, 4);
}

static void
cap_write(void *opaque, uint32_t off, uint32_t len)
{
	struct vmm_virtio_pci *v = opaque;
	uint32_t ctrl_off = (uint32_t)v->msix_cap + 2;
	uint32_t d = (uint32_t)v->pcicfg_cap + offsetof(struct virtio_pci_cfg_cap, pci_cfg_data);
	uint32_t boff, blen;

	if (off <= ctrl_off + 1 && off + len > ctrl_off)
		vmm_msix_control(&v->msix, (uint16_t)vmm_pci_cfg_read(&v->pci, ctrl_off, 2));
	if (overlaps_data(v, off, len) && pcicfg_target(v, &boff, &blen))
		vmm_virtio_pci_bar_write(v, boff, v->pci.cfg + d, blen);
}

/* BAR0 moved: the kick ioeventfds follow it, each removed exactly where it
 * was registered. */
static void
bar_moved(void *opaque, unsigned int bar, uint64_t old_addr, uint64_t new_addr)
{
	struct vmm_virtio_pci *v = opaque;
	unsigned int q;

	(void)old_addr;
	if (bar != 0)
		return;
	if (v->host->bar_moved)
		v->host->bar_moved(v->host_ctx, new_addr);
	for (q = 0; q < v->nqueues; q++) {
		if (v->kickfd[q] < 0)
			continue;
		if (v->kick_addr[q] != 0)
			v->host->ioeventfd(v->host_ctx, v->kickfd[q], v->kick_addr[q], false);
		v->kick_addr[q] = 0;
		if (v->host->ioeventfd(v->host_ctx, v->kickfd[q], vmm_virtio_notify_addr(v, q),
				       true) == 0)
			v->kick_addr[q] = vmm_virtio_notify_addr(v, q);
	}
}

static const struct vmm_pci_dev_ops pci_ops = {
	.cap_write = cap_write,
	.cap_read = cap_read,
	.bar_moved = bar_moved,
};

/* A virtio PCI capability (struct virtio_pci_cap and what follows it). */
static int
add_virtio_cap(struct vmm_virtio_pci *v, uint8_t type, uint32_t offset, uint32_t length,
	       uint32_t extra)
{
	union {
		struct virtio_pci_cap cap;
		struct virtio_pci_notify_cap notify;
		struct virtio_pci_cfg_cap cfg;
	} c;
	uint8_t len = type == VIRTIO_PCI_CAP_NOTIFY_CFG ? sizeof(c.notify)
		      : type == VIRTIO_PCI_CAP_PCI_CFG  ? sizeof(c.cfg)
							: sizeof(c.cap);

	memset(&c, 0, sizeof(c));
	c.cap.cap_len = len;
	c.cap.cfg_type = type;
	c.cap.bar = 0;
	c.cap.offset = offset;
	c.cap.length = length;
	if (type == VIRTIO_PCI_CAP_NOTIFY_CFG)
		c.notify.notify_off_multiplier = extra;
	/* the body: what follows cap_vndr and cap_next */
	return vmm_pci_add_cap(&v->pci, PCI_CAP_ID_VNDR, (const uint8_t *)&c + 2,
			       (uint8_t)(len - 2));
}

int
vmm_virtio_pci_setup(struct vmm_virtio_pci *v, uint16_t device_id, uint16_t nqueues,
		     uint16_t qsize_max, uint32_t bar_addr, const struct vmm_virtio_ops *ops,
		     void *opaque, const struct vmm_virtio_host_ops *host, void *host_ctx)
{
	unsigned int q, nvec;
	uint8_t msix[10];
	uint16_t ctrl;
	uint32_t table = VIRTIO_BAR_MSIX_TABLE, pba = VIRTIO_BAR_MSIX_PBA;

	memset(v, 0, sizeof(*v));
	v->nqueues = nqueues > VMM_VIRTIO_MAX_QUEUES ? VMM_VIRTIO_MAX_QUEUES : nqueues;
	v->qsize_max = qsize_max;
	v->ops = ops;
	v->opaque = opaque;
	v->host = host;
	v->host_ctx = host_ctx;
	for (q = 0; q < VMM_VIRTIO_MAX_QUEUES; q++)
		v->kickfd[q] = -1;
	vmm_pci_dev_init(&v->pci, 0x1af4, (uint16_t)(0x1040 + device_id), 0x020000, 1, 0x1af4,
			 0x1100);
	v->pci.ops = &pci_ops;
	v->pci.opaque = v;
	nvec = v->nqueues + 1u;
	ctrl = (uint16_t)(nvec - 1); /* table size, read-only */
	vmm_msix_init(&v->msix, nvec, msix_update, msix_pending, v);
	memcpy(msix, &ctrl, 2);
	memcpy(msix + 2, &table, 4); /* BIR 0 */
	memcpy(msix + 6, &pba, 4);
	v->msix_cap = vmm_pci_add_cap(&v->pci, PCI_CAP_ID_MSIX, msix, 10);
	if (v->msix_cap < 0 ||
	    add_virtio_cap(v, VIRTIO_PCI_CAP_COMMON_CFG, VIRTIO_BAR_COMMON, CC_SIZE, 0) < 0 ||
	    add_virtio_cap(v, VIRTIO_PCI_CAP_NOTIFY_CFG, VIRTIO_BAR_NOTIFY, 0x1000,
			   VIRTIO_NOTIFY_MULT) < 0 ||
	    add_virtio_cap(v, VIRTIO_PCI_CAP_ISR_CFG, VIRTIO_BAR_ISR, 1, 0) < 0 ||
	    add_virtio_cap(v, VIRTIO_PCI_CAP_DEVICE_CFG, VIRTIO_BAR_DEVICE, 0x100, 0) < 0)
		return -1;
	v->pcicfg_cap = add_virtio_cap(v, VIRTIO_PCI_CAP_PCI_CFG, 0, 0, 0);
	if (v->pcicfg_cap < 0)
		return -1;
	/* the window's bar, offset, length and data are the driver's */
	vmm_pci_set_wmask(&v->pci, (uint32_t)v->pcicfg_cap + offsetof(struct virtio_pci_cap, bar),
			  0xff);
	for (q = offsetof(struct virtio_pci_cap, offset); q < sizeof(struct virtio_pci_cfg_cap);
	     q++)
		vmm_pci_set_wmask(&v->pci, (uint32_t)v->pcicfg_cap + q, 0xff);
	/* of message control only MSI-X enable and function mask are the guest's */
	vmm_pci_set_wmask(&v->pci, (uint32_t)v->msix_cap + 3,
			  (MSIX_CTRL_ENABLE | MSIX_CTRL_FMASK) >> 8);
	vmm_pci_set_bar(&v->pci, 0, bar_addr, VIRTIO_BAR_SIZE);
	/* preconfigured like firmware would: memory decoding and bus mastering on */
	v->pci.cfg[0x04] = PCI_CMD_MEM | PCI_CMD_MASTER;
	transport_reset(v);
	return 0;
}

int
vmm_virtio_pci_set_kickfd(struct vmm_virtio_pci *v, unsigned int q, int fd)
{
	uint64_t addr;

	if (q >= v->nqueues || v->kickfd[q] >= 0)
		return -1;
	addr = vmm_virtio_notify_addr(v, q);
	if (v->host->ioeventfd(v->host_ctx, fd, addr, true) != 0)
		return -1;
	v->kickfd[q] = fd;
	v->kick_addr[q] = addr;
	return 0;
}

uint64_t
vmm_virtio_notify_addr(const struct vmm_virtio_pci *v, unsigned int q)
{
	return vmm_pci_bar_addr(&v->pci, 0) + VIRTIO_BAR_NOTIFY + q * VIRTIO_NOTIFY_MULT;
}
