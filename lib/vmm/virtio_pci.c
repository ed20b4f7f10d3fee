/* SPDX-License-Identifier: BSD-3-Clause */
/* virtio-pci modern transport (see virtio_pci.h): the guest-facing registers,
 * pure (no KVM; the host's part goes through vmm_virtio_host_ops). */
#include <string.h>

#include <linux/virtio_config.h>

#include "virtio_pci.h"

/* common configuration layout (virtio 1.2, 4.1.4.3) */
enum {
	CC_DFSELECT = 0x00,
	CC_DF = 0x04,
	CC_GFSELECT = 0x08,
	CC_GF = 0x0c,
	CC_MSIX_CONFIG = 0x10,
	CC_NUM_QUEUES = 0x12,
	CC_STATUS = 0x14,
	CC_GENERATION = 0x15,
	CC_Q_SELECT = 0x16,
	CC_Q_SIZE = 0x18,
	CC_Q_MSIX = 0x1a,
	CC_Q_ENABLE = 0x1c,
	CC_Q_NOFF = 0x1e,
	CC_Q_DESC_LO = 0x20,
	CC_Q_DESC_HI = 0x24,
	CC_Q_AVAIL_LO = 0x28,
	CC_Q_AVAIL_HI = 0x2c,
	CC_Q_USED_LO = 0x30,
	CC_Q_USED_HI = 0x34,
	CC_SIZE = 0x38,
};

static struct vmm_virtio_queue *
cur_queue(struct vmm_virtio_pci *v)
{
	return v->qsel < v->nqueues ? &v->q[v->qsel] : NULL;
}

static void
virtio_reset(struct vmm_virtio_pci *v)
{
	unsigned int i;

	if (v->ops->reset)
		v->ops->reset(v->opaque);
	v->status = 0;
	v->driver_features = 0;
	v->dfselect = v->gfselect = 0;
	v->qsel = 0;
	v->config_vector = MSIX_NO_VECTOR;
	for (i = 0; i < v->nqueues; i++)
		v->q[i] = (struct vmm_virtio_queue){.size = v->qsize_max, .vector = MSIX_NO_VECTOR};
	if (v->ops->vectors_changed)
		v->ops->vectors_changed(v->opaque);
}

static uint32_t
common_read(struct vmm_virtio_pci *v, uint64_t off)
{
	struct vmm_virtio_queue *q = cur_queue(v);

	switch (off) {
	case CC_DFSELECT:
		return v->dfselect;
	case CC_DF:
		return v->dfselect < 2 ? (uint32_t)(v->device_features >> (32 * v->dfselect)) : 0;
	case CC_GFSELECT:
		return v->gfselect;
	case CC_GF:
		return v->gfselect < 2 ? (uint32_t)(v->driver_features >> (32 * v->gfselect)) : 0;
	case CC_MSIX_CONFIG:
		return v->config_vector;
	case CC_NUM_QUEUES:
		return v->nqueues;
	case CC_STATUS:
		return v->status;
	case CC_GENERATION:
		return v->generation;
	case CC_Q_SELECT:
		return v->qsel;
	case CC_Q_SIZE:
		return q ? q->size : 0;
	case CC_Q_MSIX:
		return q ? q->vector : MSIX_NO_VECTOR;
	case CC_Q_ENABLE:
		return q ? q->enabled : 0;
	case CC_Q_NOFF:
		return v->qsel;
	case CC_Q_DESC_LO:
		return q ? (uint32_t)q->desc : 0;
	case CC_Q_DESC_HI:
		return q ? (uint32_t)(q->desc >> 32) : 0;
	case CC_Q_AVAIL_LO:
		return q ? (uint32_t)q->avail : 0;
	case CC_Q_AVAIL_HI:
		return q ? (uint32_t)(q->avail >> 32) : 0;
	case CC_Q_USED_LO:
		return q ? (uint32_t)q->used : 0;
	case CC_Q_USED_HI:
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
		{CC_DFSELECT, 4}, {CC_DF, 4}, {CC_GFSELECT, 4}, {CC_GF, 4},
		{CC_MSIX_CONFIG, 2}, {CC_NUM_QUEUES, 2}, {CC_STATUS, 1}, {CC_GENERATION, 1},
		{CC_Q_SELECT, 2}, {CC_Q_SIZE, 2}, {CC_Q_MSIX, 2}, {CC_Q_ENABLE, 2},
		{CC_Q_NOFF, 2}, {CC_Q_DESC_LO, 4}, {CC_Q_DESC_HI, 4}, {CC_Q_AVAIL_LO, 4},
		{CC_Q_AVAIL_HI, 4}, {CC_Q_USED_LO, 4}, {CC_Q_USED_HI, 4},
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
	if ((s & VIRTIO_STATUS_FEATURES_OK) && !(old & VIRTIO_STATUS_FEATURES_OK)) {
		/* only what we offered, and the modern interface */
		if ((v->driver_features & ~v->device_features) ||
		    !(v->driver_features & (1ull << VIRTIO_F_VERSION_1)))
			s &= (uint8_t)~VIRTIO_STATUS_FEATURES_OK;
	}
	v->status = s;
	if ((s & VIRTIO_STATUS_DRIVER_OK) && !(old & VIRTIO_STATUS_DRIVER_OK) &&
	    !v->ops->driver_ok(v->opaque))
		v->status |= VIRTIO_STATUS_NEEDS_RESET;
}

static void
common_write(struct vmm_virtio_pci *v, uint64_t off, uint32_t val)
{
	struct vmm_virtio_queue *q = cur_queue(v);
	bool live = v->status & VIRTIO_STATUS_DRIVER_OK;

	switch (off) {
	case CC_DFSELECT:
		v->dfselect = val;
		break;
	case CC_GFSELECT:
		v->gfselect = val;
		break;
	case CC_GF:
		if (v->gfselect < 2 && !(v->status & VIRTIO_STATUS_FEATURES_OK)) {
			if (v->gfselect == 0)
				set_lo(&v->driver_features, val);
			else
				set_hi(&v->driver_features, val);
		}
		break;
	case CC_MSIX_CONFIG:
		v->config_vector = (uint16_t)(val < v->msix.nvec ? val : MSIX_NO_VECTOR);
		break;
	case CC_STATUS:
		status_write(v, (uint8_t)val);
		break;
	case CC_Q_SELECT:
		v->qsel = (uint16_t)val;
		break;
	case CC_Q_SIZE:
		/* a power of two no larger than ours, while the queue is off */
		if (q && !q->enabled && val && val <= v->qsize_max && !(val & (val - 1)))
			q->size = (uint16_t)val;
		break;
	case CC_Q_MSIX:
		if (q) {
			q->vector = (uint16_t)(val < v->msix.nvec ? val : MSIX_NO_VECTOR);
			if (v->ops->vectors_changed)
				v->ops->vectors_changed(v->opaque);
		}
		break;
	case CC_Q_ENABLE:
		if (q && val == 1 && !live)
			q->enabled = true;
		break;
	case CC_Q_DESC_LO:
	case CC_Q_DESC_HI:
	case CC_Q_AVAIL_LO:
	case CC_Q_AVAIL_HI:
	case CC_Q_USED_LO:
	case CC_Q_USED_HI:
		if (q == NULL || q->enabled)
			break;
		if (off == CC_Q_DESC_LO)
			set_lo(&q->desc, val);
		else if (off == CC_Q_DESC_HI)
			set_hi(&q->desc, val);
		else if (off == CC_Q_AVAIL_LO)
			set_lo(&q->avail, val);
		else if (off == CC_Q_AVAIL_HI)
			set_hi(&q->avail, val);
		else if (off == CC_Q_USED_LO)
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
		/* no INTx: with MSI-X the ISR is unused */
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
		/* only before the ioeventfds exist; the backend polls after a (re)start */
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

	(void)vec;
	if (v->ops->vectors_changed)
		v->ops->vectors_changed(v->opaque);
}

static bool
msix_pending(void *opaque, unsigned int vec)
{
	struct vmm_virtio_pci *v = opaque;

	return v->ops->vector_pending ? v->ops->vector_pending(v->opaque, vec) : false;
}

static void
cap_write(void *opaque, uint32_t off, uint32_t len)
{
	struct vmm_virtio_pci *v = opaque;
	uint32_t ctrl_off = (uint32_t)v->msix_cap + 2;

	if (off <= ctrl_off + 1 && off + len > ctrl_off)
		vmm_msix_control(&v->msix, (uint16_t)vmm_pci_cfg_read(&v->pci, ctrl_off, 2));
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

static const struct vmm_pci_dev_ops pci_ops = {.cap_write = cap_write, .bar_moved = bar_moved};

/* A virtio PCI capability body (after id and next). */
static int
add_virtio_cap(struct vmm_virtio_pci *v, uint8_t type, uint32_t offset, uint32_t length,
	       uint32_t extra)
{
	uint8_t b[18] = {0};
	uint8_t len = type == 2 ? 18 : 14;

	b[0] = len + 2; /* cap_len, counted from the id byte */
	b[1] = type;
	b[2] = 0; /* bar */
	memcpy(b + 6, &offset, 4);
	memcpy(b + 10, &length, 4);
	if (type == 2)
		memcpy(b + 14, &extra, 4); /* notify_off_multiplier */
	return vmm_pci_add_cap(&v->pci, PCI_CAP_ID_VNDR, b, len);
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
	v->nqueues = nqueues > VIRTIO_PCI_MAX_QUEUES ? VIRTIO_PCI_MAX_QUEUES : nqueues;
	v->qsize_max = qsize_max;
	v->ops = ops;
	v->opaque = opaque;
	v->host = host;
	v->host_ctx = host_ctx;
	for (q = 0; q < VIRTIO_PCI_MAX_QUEUES; q++)
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
	if (v->msix_cap < 0 || add_virtio_cap(v, 1, VIRTIO_BAR_COMMON, CC_SIZE, 0) < 0 ||
	    add_virtio_cap(v, 2, VIRTIO_BAR_NOTIFY, 0x1000, VIRTIO_NOTIFY_MULT) < 0 ||
	    add_virtio_cap(v, 3, VIRTIO_BAR_ISR, 1, 0) < 0 ||
	    add_virtio_cap(v, 4, VIRTIO_BAR_DEVICE, 0x100, 0) < 0)
		return -1;
	/* of message control only MSI-X enable and function mask are the guest's */
	vmm_pci_set_wmask(&v->pci, (uint32_t)v->msix_cap + 3,
			  (MSIX_CTRL_ENABLE | MSIX_CTRL_FMASK) >> 8);
	vmm_pci_set_bar(&v->pci, 0, bar_addr, VIRTIO_BAR_SIZE);
	/* preconfigured like firmware would: memory decoding and bus mastering on */
	v->pci.cfg[0x04] = PCI_CMD_MEM | PCI_CMD_MASTER;
	virtio_reset(v);
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
