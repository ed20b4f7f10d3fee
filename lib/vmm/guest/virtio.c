/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The built-in guest's virtio-net driver (virtio 1.x over PCI, modern), all at
 * CPL3: the device is found through the ECAM window, configured through its
 * BAR (each access an exit: set-up only), and then driven through guest
 * memory alone plus notify writes, which KVM turns into eventfd signals
 * without leaving the kernel. RX completions raise MSI-X vector 0 (stub in
 * entry.S) when the RX ring's VRING_AVAIL_F_NO_INTERRUPT is clear
 * (vnet_rx_irq()); TX completions are polled.
 */
#include <linux/virtio_config.h>
#include <linux/virtio_net.h>
#include <linux/virtio_pci.h>
#include <linux/virtio_ring.h>

#include "guest.h"

#define QSZ 512
#define BUF_SIZE 2048
#define HDR_LEN sizeof(struct virtio_net_hdr_v1)
#define RING_ALIGN 4096
#define RING_BYTES (5 * 4096) /* at least vring_size(QSZ, RING_ALIGN) */

#define F(n) (1ull << (n))

struct vq {
	uint8_t ring[RING_BYTES] __attribute__((aligned(4096)));
	struct vring vr; /* the rings in ring[], as vring_init lays them out */
	uint8_t buf[QSZ][BUF_SIZE] __attribute__((aligned(4096)));
	volatile uint16_t *notify;
	uint16_t avail_idx; /* next avail slot we fill */
	uint16_t used_seen; /* used entries we consumed */
	uint16_t index;
	uint16_t pending; /* posted but not kicked */
	uint16_t kicked;  /* avail index at the last notify decision (EVENT_IDX) */
};

static struct vq rxq, txq;
uint64_t vnet_kicks;
int vnet_kick_always;
int vnet_want_event_idx, vnet_event_idx;
static int rx_irq_on = 1;

static volatile uint8_t *common;
static volatile uint32_t *msix_entry0, *msix_pba;

static uint32_t
ecam32(uint32_t off)
{
	return *(volatile uint32_t *)(info->ecam_base + ((uint64_t)info->virtio_bdf << 12) + off);
}

static void
ecam_write16(uint32_t off, uint16_t v)
{
	*(volatile uint16_t *)(info->ecam_base + ((uint64_t)info->virtio_bdf << 12) + off) = v;
}

#define CC8(o) (*(volatile uint8_t *)(common + (o)))
#define CC16(o) (*(volatile uint16_t *)(common + (o)))
#define CC32(o) (*(volatile uint32_t *)(common + (o)))

/* vring_avail_event()'s slot, without its cast that -O2 warns about */
static volatile __virtio16 *
avail_event(struct vq *q)
{
	return (volatile __virtio16 *)(void *)&q->vr.used->ring[QSZ];
}

static void
kick(struct vq *q)
{
	uint16_t old = q->kicked, new = q->avail_idx;
	int want;

	mb(); /* avail->idx is visible before we read the backend's wish */
	q->kicked = new;
	if (vnet_event_idx) /* a notify when avail_event is among the new entries */
		want = vring_need_event(*avail_event(q), new, old);
	else
		want = !(*(volatile uint16_t *)&q->vr.used->flags & VRING_USED_F_NO_NOTIFY);
	if (vnet_kick_always || want) {
		*q->notify = q->index;
		vnet_kicks++;
	}
	q->pending = 0;
}

static int
setup_queue(struct vq *q, uint16_t index, uint16_t vector, uint64_t notify_base,
	    uint32_t notify_mult)
{
	uint64_t a;

	q->index = index;
	CC16(VIRTIO_PCI_COMMON_Q_SELECT) = index;
	CC16(VIRTIO_PCI_COMMON_Q_SIZE) = QSZ;
	if (CC16(VIRTIO_PCI_COMMON_Q_SIZE) != QSZ)
		return -1;
	CC16(VIRTIO_PCI_COMMON_Q_MSIX) = vector;
	if (CC16(VIRTIO_PCI_COMMON_Q_MSIX) != vector)
		return -2;
	vring_init(&q->vr, QSZ, q->ring, RING_ALIGN);
	a = (uint64_t)q->vr.desc;
	CC32(VIRTIO_PCI_COMMON_Q_DESCLO) = (uint32_t)a;
	CC32(VIRTIO_PCI_COMMON_Q_DESCHI) = (uint32_t)(a >> 32);
	a = (uint64_t)q->vr.avail;
	CC32(VIRTIO_PCI_COMMON_Q_AVAILLO) = (uint32_t)a;
	CC32(VIRTIO_PCI_COMMON_Q_AVAILHI) = (uint32_t)(a >> 32);
	a = (uint64_t)q->vr.used;
	CC32(VIRTIO_PCI_COMMON_Q_USEDLO) = (uint32_t)a;
	CC32(VIRTIO_PCI_COMMON_Q_USEDHI) = (uint32_t)(a >> 32);
	q->notify = (volatile uint16_t *)(notify_base +
					  (uint64_t)CC16(VIRTIO_PCI_COMMON_Q_NOFF) * notify_mult);
	CC16(VIRTIO_PCI_COMMON_Q_ENABLE) = 1;
	return 0;
}

int
vnet_init(void)
{
	uint64_t bar, common_off = 0, notify_off = 0, msix_table = 0, feat;
	uint32_t notify_mult = 0, id;
	uint16_t msix_cap = 0;
	uint8_t ptr;
	unsigned int i;
	int rc;

	if (info->virtio_bar == 0 || vring_size(QSZ, RING_ALIGN) > RING_BYTES)
		return -1;
	id = ecam32(0);
	if (id != (0x1041u << 16 | 0x1af4u)) {
		print("virtio: no virtio-net at %x (id %x)", info->virtio_bdf, id);
		return -1;
	}
	bar = ecam32(0x10) & ~0xfu;
	/* walk the capabilities for the virtio structures and MSI-X */
	for (ptr = (uint8_t)ecam32(0x34); ptr; ptr = (uint8_t)(ecam32(ptr) >> 8)) {
		uint32_t w0 = ecam32(ptr), w1 = ecam32(ptr + 4u), off = ecam32(ptr + 8u);
		uint8_t cap = (uint8_t)w0, type = (uint8_t)(w0 >> 24);

		if (cap == 0x11) {
			msix_cap = ptr;
			msix_table = bar + (w1 & ~7u);
			msix_pba = (volatile uint32_t *)(bar + (off & ~7u));
		} else if (cap == 0x09 && type == VIRTIO_PCI_CAP_COMMON_CFG) {
			common_off = off;
		} else if (cap == 0x09 && type == VIRTIO_PCI_CAP_NOTIFY_CFG) {
			notify_off = off;
			notify_mult = ecam32(ptr + 16u);
		}
	}
	if (!msix_cap || !notify_mult) {
		print("virtio: capabilities missing");
		return -1;
	}
	common = (volatile uint8_t *)(bar + common_off);
	msix_entry0 = (volatile uint32_t *)msix_table;

	/* MSI-X: vector 0 -> VEC_RX on the boot CPU, unmasked; then enable */
	*(volatile uint32_t *)(msix_table + 0) = (uint32_t)HV_GUEST_LAPIC_BASE;
	*(volatile uint32_t *)(msix_table + 4) = 0;
	*(volatile uint32_t *)(msix_table + 8) = VEC_RX;
	*(volatile uint32_t *)(msix_table + 12) = 0;
	ecam_write16(msix_cap + 2u, 0x8000);

	CC8(VIRTIO_PCI_COMMON_STATUS) = 0;
	CC8(VIRTIO_PCI_COMMON_STATUS) = VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER;
	CC32(VIRTIO_PCI_COMMON_DFSELECT) = 0;
	feat = CC32(VIRTIO_PCI_COMMON_DF);
	CC32(VIRTIO_PCI_COMMON_DFSELECT) = 1;
	feat |= (uint64_t)CC32(VIRTIO_PCI_COMMON_DF) << 32;
	if (!(feat & F(VIRTIO_F_VERSION_1))) {
		print("virtio: device is not modern (features %lx)", feat);
		return -1;
	}
	feat &= F(VIRTIO_F_VERSION_1) | F(VIRTIO_NET_F_MAC) |
		(vnet_want_event_idx ? F(VIRTIO_RING_F_EVENT_IDX) : 0);
	vnet_event_idx = (feat & F(VIRTIO_RING_F_EVENT_IDX)) != 0;
	CC32(VIRTIO_PCI_COMMON_GFSELECT) = 0;
	CC32(VIRTIO_PCI_COMMON_GF) = (uint32_t)feat;
	CC32(VIRTIO_PCI_COMMON_GFSELECT) = 1;
	CC32(VIRTIO_PCI_COMMON_GF) = (uint32_t)(feat >> 32);
	CC8(VIRTIO_PCI_COMMON_STATUS) =
		VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER | VIRTIO_CONFIG_S_FEATURES_OK;
	if (!(CC8(VIRTIO_PCI_COMMON_STATUS) & VIRTIO_CONFIG_S_FEATURES_OK)) {
		print("virtio: features refused");
		return -1;
	}
	rc = setup_queue(&rxq, 0, 0, bar + notify_off, notify_mult);
	if (rc == 0)
		rc = setup_queue(&txq, 1, 0xffff, bar + notify_off, notify_mult);
	if (rc != 0) {
		print("virtio: queue set-up failed (%d)", rc);
		return -1;
	}
	txq.vr.avail->flags = VRING_AVAIL_F_NO_INTERRUPT; /* no TX interrupts: we poll */
	for (i = 0; i < QSZ; i++) {
		rxq.vr.desc[i] =
			(struct vring_desc){(uint64_t)rxq.buf[i], BUF_SIZE, VRING_DESC_F_WRITE, 0};
		rxq.vr.avail->ring[i] = (uint16_t)i;
		txq.vr.desc[i] = (struct vring_desc){(uint64_t)txq.buf[i], 0, 0, 0};
	}
	rxq.avail_idx = QSZ;
	barrier();
	rxq.vr.avail->idx = QSZ;
	CC8(VIRTIO_PCI_COMMON_STATUS) = VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER |
					VIRTIO_CONFIG_S_FEATURES_OK | VIRTIO_CONFIG_S_DRIVER_OK;
	if (CC8(VIRTIO_PCI_COMMON_STATUS) & VIRTIO_CONFIG_S_NEEDS_RESET) {
		print("virtio: device needs reset (backend refused the rings)");
		return -1;
	}
	kick(&rxq);
	return 0;
}

uint8_t *
vnet_rx(uint32_t *len)
{
	struct vring_used_elem e;

	if (rxq.used_seen == *(volatile uint16_t *)&rxq.vr.used->idx)
		return NULL;
	barrier();
	e = rxq.vr.used->ring[rxq.used_seen % QSZ];
	rxq.used_seen++;
	/* EVENT_IDX and armed: re-arm for the next frame (the caller keeps looking) */
	if (vnet_event_idx && rx_irq_on)
		*(volatile uint16_t *)&vring_used_event(&rxq.vr) = rxq.used_seen;
	/* this frame's buffer goes back on the next publish: the caller is done
	 * with a frame when it asks for the next one */
	/* publish what earlier calls handed back (their frames are done with) in
	 * batches, even while frames keep coming: a long burst must not drain
	 * the ring the backend fills */
	if (rxq.pending >= 32)
		vnet_rx_done();
	rxq.vr.avail->ring[rxq.avail_idx % QSZ] = (uint16_t)e.id;
	rxq.avail_idx++;
	rxq.pending++;
	if (e.id >= QSZ || e.len < HDR_LEN || e.len > BUF_SIZE) {
		*len = 0;
		return rxq.buf[0] + HDR_LEN;
	}
	*len = e.len - HDR_LEN;
	return rxq.buf[e.id] + HDR_LEN;
}

void
vnet_rx_done(void)
{
	if (rxq.pending == 0)
		return;
	barrier();
	*(volatile uint16_t *)&rxq.vr.avail->idx = rxq.avail_idx;
	kick(&rxq);
}

uint32_t
vnet_tx_inflight(void)
{
	return (uint16_t)(txq.avail_idx - *(volatile uint16_t *)&txq.vr.used->idx);
}

uint8_t *
vnet_tx_buf(void)
{
	uint8_t *b;

	if (vnet_tx_inflight() >= QSZ)
		return NULL;
	b = txq.buf[txq.avail_idx % QSZ];
	memset(b, 0, HDR_LEN);
	return b + HDR_LEN;
}

void
vnet_tx_commit(uint32_t len)
{
	uint16_t slot = txq.avail_idx % QSZ;

	txq.vr.desc[slot].len = (uint32_t)(len + HDR_LEN);
	txq.vr.avail->ring[slot] = slot;
	txq.avail_idx++;
	txq.pending++;
	barrier();
	*(volatile uint16_t *)&txq.vr.avail->idx = txq.avail_idx;
	if (txq.pending >= 32)
		kick(&txq);
}

void
vnet_tx_flush(void)
{
	if (txq.pending)
		kick(&txq);
}

void
vnet_rx_irq(int on)
{
	rx_irq_on = on;
	/*
	 * EVENT_IDX: an interrupt when the entry after the last one seen is
	 * used; off: one already passed (never, until the index wraps).
	 * Otherwise VRING_AVAIL_F_NO_INTERRUPT. The backend reads either after
	 * publishing.
	 */
	if (vnet_event_idx)
		*(volatile uint16_t *)&vring_used_event(&rxq.vr) =
			(uint16_t)(on ? rxq.used_seen : rxq.used_seen - 1);
	else
		*(volatile uint16_t *)&rxq.vr.avail->flags = on ? 0 : VRING_AVAIL_F_NO_INTERRUPT;
	if (on)
		mb(); /* visible before the caller looks at the ring again */
}

int
vnet_rx_ready(void)
{
	return rxq.used_seen != *(volatile uint16_t *)&rxq.vr.used->idx;
}

void
vnet_rx_vector_mask(int masked)
{
	msix_entry0[3] = masked ? 1 : 0;
}

void
vnet_rx_vector_retarget(uint32_t vector)
{
	msix_entry0[2] = vector;
}

int
vnet_rx_vector_pending(void)
{
	return (int)(msix_pba[0] & 1);
}
