/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Frames between guest buffers (struct hv_chain) and mbufs, shared by the
 * split ring (vhost_rxtx.c) and the packed ring (vhost_packed_rxtx.c): the
 * net header checked and copied once, the frame copied out of a chain. None
 * writes guest memory.
 */
#ifndef HV_VHOST_FRAME_H
#define HV_VHOST_FRAME_H

#include <string.h>

#include <rte_ether.h>
#include <rte_mbuf_dyn.h>
#include <rte_memcpy.h>

#include "vhost_internal.h"
#include "vhost_vring.h"

extern int hv_vhost_vnet_hdr_offset;
extern uint64_t hv_vhost_vnet_hdr_flag;

static inline struct hv_offload_hdr *
vnet_hdr(struct rte_mbuf *m)
{
	return RTE_MBUF_DYNFIELD(m, hv_vhost_vnet_hdr_offset, struct hv_offload_hdr *);
}

/* ---- copies between chains and mbufs ---- */

/* Copy @len bytes from the chain, starting at byte @off, into @dst. */
static inline uint32_t
chain_read(const struct hv_chain *c, uint32_t off, void *dst, uint32_t len)
{
	uint8_t *d = dst;
	uint32_t done = 0;

	for (uint16_t i = 0; i < c->n_iov && done < len; i++) {
		const struct hv_iov *v = &c->iov[i];
		uint32_t k;

		if (off >= v->len) {
			off -= v->len;
			continue;
		}
		k = RTE_MIN(v->len - off, len - done);
		memcpy(d + done, v->base + off, k);
		done += k;
		off = 0;
	}
	return done;
}

/* Validate the guest's offload request against what was negotiated. */
static inline bool
tx_hdr_ok(const struct hv_vhost_port *port, const struct virtio_net_hdr_v1 *h, uint32_t pkt_len)
{
	uint8_t gso = h->gso_type & ~VIRTIO_NET_HDR_GSO_ECN;

	if (h->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) {
		if (!(port->features & HV_VHOST_F_CSUM))
			return false;
		/* the checksum field must lie inside the frame */
		if ((uint32_t)h->csum_start + h->csum_offset + 2 > pkt_len)
			return false;
	}
	switch (gso) {
	case VIRTIO_NET_HDR_GSO_NONE:
		return h->gso_type == VIRTIO_NET_HDR_GSO_NONE;
	case VIRTIO_NET_HDR_GSO_TCPV4:
		return (port->features & HV_VHOST_F_HOST_TSO4) &&
		       (h->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) && h->gso_size != 0;
	case VIRTIO_NET_HDR_GSO_TCPV6:
		return (port->features & HV_VHOST_F_HOST_TSO6) &&
		       (h->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) && h->gso_size != 0;
	default:
		return false;
	}
}

/*
 * Copy the frame after the net header into @m, chaining mbufs as needed; with
 * @borrow, only until the first mbuf is full, the rest is borrowed.
 */
static inline int
chain_to_mbuf(struct hv_vhost_port *port, struct hv_vring *vr, const struct hv_chain *c,
	      struct rte_mbuf *m, bool borrow)
{
	uint32_t skip = port->hdr_size;
	struct rte_mbuf *cur = m;
	uint8_t *dst = rte_pktmbuf_mtod(cur, uint8_t *);
	uint32_t room = rte_pktmbuf_tailroom(cur);

	/* the usual case: header and frame in one buffer, the frame fits the mbuf */
	if (likely(c->n_iov == 1 && c->iov[0].len - skip <= room)) {
		uint32_t len = c->iov[0].len - skip;

		rte_memcpy(dst, c->iov[0].base + skip, len);
		m->data_len = (uint16_t)len;
		m->pkt_len = len;
		return 0;
	}
	for (uint16_t i = 0; i < c->n_iov; i++) {
		const uint8_t *src = c->iov[i].base;
		uint32_t len = c->iov[i].len;

		if (skip > 0) {
			uint32_t s = RTE_MIN(skip, len);

			src += s;
			len -= s;
			skip -= s;
		}
		while (len > 0) {
			uint32_t k;

			if (room == 0) {
				struct rte_mbuf *next;

				if (borrow)
					return vhost_borrow_tail(port, vr, c, i,
								 (uint32_t)(src - c->iov[i].base),
								 m, cur);
				next = rte_pktmbuf_alloc(port->mp);

				if (unlikely(next == NULL))
					return HV_VHOST_DROP_NO_MBUF;
				cur->next = next;
				cur = next;
				m->nb_segs++;
				dst = rte_pktmbuf_mtod(cur, uint8_t *);
				room = rte_pktmbuf_tailroom(cur);
			}
			k = RTE_MIN(len, room);
			rte_memcpy(dst, src, k);
			dst += k;
			src += k;
			len -= k;
			room -= k;
			cur->data_len += k;
			m->pkt_len += k;
		}
	}
	return 0;
}

/*
 * How far into a frame the switch may read or write: the Ethernet header and
 * tags, and with an offload request the headers up to the end of the TCP
 * header (lib/offload parses them) and the checksum field.
 */
static inline uint32_t
hdr_span(const struct virtio_net_hdr_v1 *h)
{
	uint32_t span = 256;

	if (h->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM || h->gso_type != VIRTIO_NET_HDR_GSO_NONE)
		span = RTE_MAX(span, RTE_MAX((uint32_t)h->csum_start + 60,
					     (uint32_t)h->csum_start + h->csum_offset + 2));
	return span;
}

/*
 * One chain of the guest's TX ring into @m; 0 or a drop reason. *@borrowed
 * is set when part of it stays in guest memory.
 */
static inline int
dequeue_one(struct hv_vhost_port *port, struct hv_vring *vr, const struct hv_chain *c,
	    struct rte_mbuf *m, bool *borrowed)
{
	uint32_t room = rte_pktmbuf_tailroom(m);
	bool borrow;
	struct virtio_net_hdr_v1 h;
	uint32_t pkt_len;
	int rc;

	if (c->len < (uint32_t)port->hdr_size + RTE_ETHER_HDR_LEN)
		return HV_VHOST_DROP_TOO_SHORT;
	pkt_len = c->len - port->hdr_size;
	if (pkt_len > HV_VHOST_MAX_PKT_LEN)
		return HV_VHOST_DROP_TOO_LONG;
	/* One copy of the header, checked, then used: the guest may change its own. */
	if (likely(c->iov[0].len >= port->hdr_size))
		memcpy(&h, c->iov[0].base, sizeof(h) - sizeof(h.num_buffers));
	else
		chain_read(c, 0, &h, port->hdr_size);
	if (!tx_hdr_ok(port, &h, pkt_len))
		return HV_VHOST_DROP_BAD_HEADER;
	/*
	 * Borrow only a tail that no header reaches into, and in no more pieces
	 * than twice the mbufs copying would take: a guest of tiny buffers must
	 * not drain the pool every port shares.
	 */
	borrow = port->borrow && pkt_len > room && hdr_span(&h) <= room &&
		 c->n_iov <= 2 * ((pkt_len + room - 1) / room) + 1;
	rc = chain_to_mbuf(port, vr, c, m, borrow);
	if (rc != 0)
		return rc;
	*borrowed = borrow;
	/* offload metadata only when the guest asked for an offload (the flag says so) */
	if ((h.flags & VIRTIO_NET_HDR_F_NEEDS_CSUM || h.gso_type) &&
	    hv_vhost_vnet_hdr_offset >= 0) {
		struct hv_offload_hdr *mh = vnet_hdr(m);

		mh->flags = h.flags & VIRTIO_NET_HDR_F_NEEDS_CSUM;
		mh->gso_type = h.gso_type;
		mh->hdr_len = h.hdr_len;
		mh->gso_size = h.gso_size;
		mh->csum_start = h.csum_start;
		mh->csum_offset = h.csum_offset;
		m->ol_flags |= hv_vhost_vnet_hdr_flag;
	}
	vr->stats.bytes += pkt_len;
	return 0;
}

#define GUEST_OFFLOADS (HV_VHOST_F_GUEST_CSUM | HV_VHOST_F_GUEST_TSO4 | HV_VHOST_F_GUEST_TSO6)

/* The net header for @m; false when it carries an offload the guest did not agree to. */
static inline bool
rx_hdr_fill(const struct hv_vhost_port *port, struct rte_mbuf *m, struct virtio_net_hdr_v1 *h)
{
	const struct hv_offload_hdr *mh;
	uint8_t gso;

	memset(h, 0, sizeof(*h));
	if (likely(!(m->ol_flags & hv_vhost_vnet_hdr_flag) || hv_vhost_vnet_hdr_offset < 0))
		return true;
	mh = vnet_hdr(m);
	gso = mh->gso_type & ~VIRTIO_NET_HDR_GSO_ECN;
	if ((mh->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) && !(port->features & HV_VHOST_F_GUEST_CSUM))
		return false;
	if ((gso == VIRTIO_NET_HDR_GSO_TCPV4 && !(port->features & HV_VHOST_F_GUEST_TSO4)) ||
	    (gso == VIRTIO_NET_HDR_GSO_TCPV6 && !(port->features & HV_VHOST_F_GUEST_TSO6)) ||
	    (gso != VIRTIO_NET_HDR_GSO_NONE && gso != VIRTIO_NET_HDR_GSO_TCPV4 &&
	     gso != VIRTIO_NET_HDR_GSO_TCPV6))
		return false;
	if (!(port->features & GUEST_OFFLOADS))
		return false;
	h->flags = mh->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM;
	h->gso_type = mh->gso_type;
	h->hdr_len = mh->hdr_len;
	h->gso_size = mh->gso_size;
	h->csum_start = mh->csum_start;
	h->csum_offset = mh->csum_offset;
	return true;
}

#endif
