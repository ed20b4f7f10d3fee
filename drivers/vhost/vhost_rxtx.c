/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The data path: frames out of a guest's TX ring into mbufs, and mbufs into its
 * RX ring. Runs on the polling thread; no locks, no allocation but mbufs, no
 * syscall but the callfd write.
 */
#include <errno.h>
#include <string.h>

#include <rte_ether.h>
#include <rte_mbuf_dyn.h>
#include <rte_memcpy.h>
#include <rte_prefetch.h>

#include "vhost_frame.h"
#include "vhost_internal.h"
#include "vhost_packed.h"
#include "vhost_prefetch.h"
#include "vhost_vring.h"

int hv_vhost_vnet_hdr_offset = -1;
uint64_t hv_vhost_vnet_hdr_flag;

struct hv_offload_hdr *
hv_vhost_mbuf_vnet_hdr(struct rte_mbuf *m)
{
	return hv_vhost_vnet_hdr_offset < 0 ? NULL : vnet_hdr(m);
}

void
vring_break(struct hv_vhost_port *port, struct hv_vring *vr, enum hv_vhost_drop why)
{
	__atomic_store_n(&vr->broken, true, __ATOMIC_RELEASE);
	__atomic_store_n(&vr->ready, 0, __ATOMIC_RELAXED);
	vr->stats.stops++;
	vr->stats.drops[why]++;
	HV_LOG_RL(&vr->log_rl, ERR, "vhost %s: vring %ld stopped: guest broke it (%s)", port->name,
		  (long)(vr - port->vr), hv_vhost_drop_name(why));
}

/* Frames the guest made available since we last looked; UINT32_MAX if it lied. */
static inline uint32_t
avail_count(struct hv_vhost_port *port, struct hv_vring *vr)
{
	uint16_t avail_idx = __atomic_load_n(&vr->avail->idx, __ATOMIC_ACQUIRE);
	uint16_t n = avail_idx - vr->last_avail_idx;

	if (unlikely(n > vr->size)) {
		vring_break(port, vr, HV_VHOST_DROP_BAD_AVAIL_IDX);
		return UINT32_MAX;
	}
	return n;
}

static inline void
used_put(struct hv_vring *vr, uint16_t used_idx, uint16_t head, uint32_t len)
{
	struct vring_used_elem *e = &vr->used->ring[used_idx & vr->mask];

	e->id = head;
	e->len = len;
}

/*
 * used_put(), but no store where the entry already holds these bytes: a
 * guest that posts its buffers in ring order and receives frames of one
 * size finds the same entries lap after lap, and it read those lines last
 * (see hdr_store()). @return whether it stored.
 */
static inline bool
used_put_unless_equal(struct hv_vring *vr, uint16_t used_idx, uint16_t head, uint32_t len)
{
	struct vring_used_elem *e = &vr->used->ring[used_idx & vr->mask];
	const struct vring_used_elem want = {.id = head, .len = len};

	/* one 8-byte load and compare */
	if (memcmp(e, &want, sizeof(want)) == 0)
		return false;
	*e = want;
	return true;
}

uint16_t
hv_vhost_rx_burst(struct hv_vhost_port *port, uint16_t qp, struct rte_mbuf **pkts, uint16_t n)
{
	struct hv_vring *vr;
	struct hv_chain chain;
	uint16_t count = 0, used_before, last_head = 0, avail_idx, used_idx;
	uint32_t avail;
	bool held = false;

	if (unlikely(qp >= port->queue_pairs))
		return 0;
	vr = &port->vr[2 * qp + 1];
	/* a caller that forgot hv_vhost_rx_done(): do not let the ring stall */
	if (unlikely(vr->held))
		hv_vhost_rx_done(port, qp);
	if (!vring_enter(vr))
		return 0;
	if (port->packed)
		return vhost_packed_rx(port, vr, pkts, n);
	used_before = vr->last_used_idx;
	avail = avail_count(port, vr);
	if (avail == 0 || avail == UINT32_MAX)
		goto out;
	n = RTE_MIN(n, avail);
	if (unlikely(rte_pktmbuf_alloc_bulk(port->mp, pkts, n) != 0)) {
		vr->stats.drops[HV_VHOST_DROP_NO_MBUF]++;
		goto out;
	}
	prefetch_chains(port, vr, vr->last_avail_idx, n, NULL);
	if (port->in_order)
		prefetch_used(vr, (uint16_t)(vr->last_used_idx + n - 1), 1, true);
	else
		prefetch_used(vr, vr->last_used_idx, n, true);
	for (uint16_t i = 0; i < RTE_MIN(n, (uint16_t)PREFETCH_AHEAD); i++)
		rte_prefetch0(rte_pktmbuf_mtod(pkts[i], void *));
	/* the ring's indexes in registers for the burst, stored back after it */
	avail_idx = vr->last_avail_idx;
	used_idx = vr->last_used_idx;
	for (uint16_t i = 0; i < n; i++) {
		uint16_t head = avail_entry(vr, avail_idx);
		struct rte_mbuf *m = pkts[count];
		bool borrowed = false;
		int rc;

		if (i + PREFETCH_AHEAD < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[count + PREFETCH_AHEAD], void *));

		rc = hv_vring_walk_fast(vr->desc, vr->size, &port->mem, &vr->mem_hint, head, false,
					port->indirect, &chain);
		if (unlikely(rc != 0 && hv_vring_error_is_fatal(rc))) {
			vring_break(port, vr, rc);
			break;
		}
		if (likely(rc == 0))
			rc = dequeue_one(port, vr, &chain, m, &borrowed);
		if (unlikely(rc == HV_VHOST_DROP_NO_MBUF)) {
			/* leave the chain to the guest; retry on the next burst */
			vr->stats.drops[rc]++;
			break;
		}
		/*
		 * In order, the burst is one batch: the guest learns of all of it
		 * from the last entry (virtio 1.2, split virtqueues, "In-order use
		 * of descriptors"): three cache lines fewer to take from its core
		 * per 32 frames.
		 */
		if (!port->in_order)
			used_put(vr, used_idx, head, 0);
		last_head = head;
		used_idx++;
		avail_idx++;
		if (unlikely(rc != 0)) {
			vr->stats.drops[rc]++;
			if (m->next != NULL)
				rte_pktmbuf_free(m->next);
			rte_pktmbuf_reset(m);
			continue;
		}
		held |= borrowed;
		vr->stats.borrowed += borrowed;
		count++;
	}
	vr->last_avail_idx = avail_idx;
	vr->last_used_idx = used_idx;
	/* mbufs allocated but not filled */
	if (count < n)
		rte_pktmbuf_free_bulk(&pkts[count], n - count);
	vr->stats.packets += count;
	if (vr->last_used_idx != used_before) {
		uint16_t entries = (uint16_t)(vr->last_used_idx - used_before);

		if (port->in_order)
			used_put(vr, (uint16_t)(vr->last_used_idx - 1), last_head, 0);
		/* entries written but not published: the guest must not reuse what we borrow */
		if (held) {
			vr->held = true;
			vr->held_entries = entries;
			return count;
		}
		vring_used_done(port, vr, entries);
	}
out:
	vring_leave(vr);
	return count;
}

void
hv_vhost_rx_done(struct hv_vhost_port *port, uint16_t qp)
{
	struct hv_vring *vr;

	if (unlikely(qp >= port->queue_pairs))
		return;
	vr = &port->vr[2 * qp + 1];
	if (likely(!vr->held))
		return;
	if (unlikely(vhost_borrow_leaked(vr)))
		HV_LOG_RL(&vr->log_rl, ERR,
			  "vhost %s: a frame still points into the guest after its burst ended",
			  port->name);
	vr->held = false;
	vring_used_done(port, vr, vr->held_entries);
	vring_leave(vr);
}

/* ---- into the guest's RX ring ---- */

struct chain_writer {
	struct copy_batch *batch; /* short copies wait here for the end of the burst */
	const struct hv_chain *c;
	uint16_t i;   /* current iov */
	uint32_t off; /* bytes written in it */
	uint32_t written;
};

static inline uint32_t
writer_put(struct chain_writer *w, const uint8_t *src, uint32_t len)
{
	uint32_t done = 0;

	while (done < len && w->i < w->c->n_iov) {
		const struct hv_iov *v = &w->c->iov[w->i];
		uint32_t k = RTE_MIN(v->len - w->off, len - done);

		copy_to_guest(v->base + w->off, src + done, k);
		done += k;
		w->off += k;
		if (w->off == v->len) {
			w->i++;
			w->off = 0;
		}
	}
	w->written += done;
	return done;
}

struct mbuf_cursor {
	const struct rte_mbuf *seg;
	uint32_t off;
};

/* Copy from the mbuf until it is exhausted or the chain is full. */
static inline void
mbuf_to_chain(struct mbuf_cursor *mc, struct chain_writer *w)
{
	/* the usual case: a one-segment frame that fits the current piece */
	if (likely(mc->seg->next == NULL && mc->off == 0 && w->i < w->c->n_iov)) {
		const struct hv_iov *v = &w->c->iov[w->i];
		uint32_t len = mc->seg->data_len;

		if (likely(len <= v->len - w->off)) {
			copy_to_guest_batched(w->batch, v->base + w->off,
					      rte_pktmbuf_mtod(mc->seg, const uint8_t *), len);
			w->off += len;
			w->written += len;
			if (w->off == v->len) {
				w->i++;
				w->off = 0;
			}
			mc->seg = NULL;
			return;
		}
	}
	while (mc->seg != NULL) {
		uint32_t left = mc->seg->data_len - mc->off;
		uint32_t k;

		if (left == 0) {
			mc->seg = mc->seg->next;
			mc->off = 0;
			continue;
		}
		k = writer_put(w, rte_pktmbuf_mtod_offset(mc->seg, const uint8_t *, mc->off), left);
		mc->off += k;
		if (k < left)
			return;
	}
}

/* Address of byte @off of a chain (it lies within the chain). */
static inline uint8_t *
chain_byte(const struct hv_chain *c, uint32_t off)
{
	for (uint16_t i = 0; i < c->n_iov; i++) {
		if (off < c->iov[i].len)
			return c->iov[i].base + off;
		off -= c->iov[i].len;
	}
	return NULL;
}

/*
 * Write the net header's fields before num_buffers into the guest's buffer
 * unless those bytes are already there (num_buffers: num_buffers_store()). A
 * guest that recycles its receive buffers (a DPDK guest's mbufs) finds the
 * same header in them frame after frame; it read that line last, and a
 * store would have to take the line back from its core, then make it miss
 * again in its read. DPDK's vhost and virtio drivers skip equal header
 * fields for the same reason. The guest may change the bytes under us: it
 * then reads a header it wrote itself, its own loss only.
 */
static inline void
hdr_store(uint8_t *dst, const struct virtio_net_hdr_v1 *h)
{
	/* a constant size: inline loads and stores, not libc calls */
	if (memcmp(dst, h, offsetof(struct virtio_net_hdr_v1, num_buffers)) != 0)
		memcpy(dst, h, offsetof(struct virtio_net_hdr_v1, num_buffers));
}

/* hdr_store() with num_buffers, for a frame known to take one buffer. */
static inline void
hdr_store_whole(uint8_t *dst, const struct virtio_net_hdr_v1 *h)
{
	if (memcmp(dst, h, sizeof(*h)) != 0)
		memcpy(dst, h, sizeof(*h));
}

/* num_buffers (little endian, possibly split between buffers), unless already there. */
static inline void
num_buffers_store(uint8_t *lo, uint8_t *hi, uint16_t nbufs)
{
	if (*lo != (uint8_t)nbufs || *hi != (uint8_t)(nbufs >> 8)) {
		*lo = (uint8_t)nbufs;
		*hi = (uint8_t)(nbufs >> 8);
	}
}

struct rx_pos {
	uint16_t avail;     /* next avail entry */
	uint16_t used;      /* next used entry */
	uint16_t end;       /* avail index the guest published */
	uint16_t rewritten; /* used entries that had to be stored */
	/*
	 * Done before the used entries are published. A frame's held copy is
	 * its last step (the whole frame fits the piece): none fails after it.
	 */
	struct copy_batch batch;
};

/*
 * Copy one frame into the guest's buffers. On success @pos moves past the
 * buffers used; on failure it stays (the buffers remain the guest's).
 * @return 0 or a drop reason.
 */
static int
enqueue_one(struct hv_vhost_port *port, struct hv_vring *vr, struct rte_mbuf *m, struct rx_pos *pos,
	    struct hv_chain *chain)
{
	struct virtio_net_hdr_v1 h;
	struct mbuf_cursor mc = {.seg = m, .off = 0};
	uint32_t need = port->hdr_size + m->pkt_len;
	uint16_t a = pos->avail, u = pos->used;
	uint8_t *nb_lo = NULL, *nb_hi = NULL;
	uint16_t nbufs = 0;
	int rc;

	if (!rx_hdr_fill(port, m, &h))
		return HV_VHOST_DROP_BAD_HEADER;
	if (m->pkt_len > HV_VHOST_MAX_PKT_LEN)
		return HV_VHOST_DROP_TOO_LONG;
	do {
		struct chain_writer w = {.batch = &pos->batch, .c = chain};
		uint16_t head;

		if (a == pos->end)
			return HV_VHOST_DROP_NO_BUFFER;
		head = avail_entry(vr, a);
		rc = hv_vring_walk_fast(vr->desc, vr->size, &port->mem, &vr->mem_hint, head, true,
					port->indirect, chain);
		if (rc != 0)
			return hv_vring_error_is_fatal(rc) ? rc : HV_VHOST_DROP_BAD_CHAIN;
		if (nbufs == 0) {
			if (chain->len < port->hdr_size)
				return HV_VHOST_DROP_BAD_CHAIN;
			/* without mergeable buffers the frame must fit one chain */
			if (!port->mrg_rxbuf && chain->len < need)
				return HV_VHOST_DROP_TOO_LONG;
			if (port->hdr_size == sizeof(h))
				h.num_buffers = rte_cpu_to_le_16(1);
			if (likely(chain->iov[0].len >= port->hdr_size)) {
				/* the usual case: the header in one piece */
				uint8_t *hdr = chain->iov[0].base;

				if (port->hdr_size != sizeof(h)) {
					hdr_store(hdr, &h);
				} else if (need <= chain->len) {
					/* one buffer: num_buffers is 1, known now */
					hdr_store_whole(hdr, &h);
				} else {
					hdr_store(hdr, &h);
					nb_lo = hdr +
						offsetof(struct virtio_net_hdr_v1, num_buffers);
					nb_hi = nb_lo + 1;
				}
				w.off = port->hdr_size;
				w.written = port->hdr_size;
				if (w.off == chain->iov[0].len) {
					w.i = 1;
					w.off = 0;
				}
			} else {
				writer_put(&w, (const uint8_t *)&h, port->hdr_size);
				if (port->hdr_size == sizeof(h)) {
					nb_lo = chain_byte(chain, offsetof(struct virtio_net_hdr_v1,
									   num_buffers));
					nb_hi = chain_byte(chain, offsetof(struct virtio_net_hdr_v1,
									   num_buffers) +
									  1);
				}
			}
		}
		mbuf_to_chain(&mc, &w);
		pos->rewritten += used_put_unless_equal(vr, u++, head, w.written);
		a++;
		nbufs++;
		need -= w.written;
	} while (need > 0);
	if (nb_lo != NULL)
		num_buffers_store(nb_lo, nb_hi, nbufs);
	pos->avail = a;
	pos->used = u;
	return 0;
}

/*
 * Free a burst the guest has been given. Frames that are one direct,
 * unshared segment of one pool, as the switch makes them, go straight back
 * to the pool: rte_pktmbuf_free_bulk() would find that out mbuf by mbuf.
 */
static inline void
free_sent(struct rte_mbuf **pkts, uint16_t n)
{
	struct rte_mempool *mp;

	if (n == 0 || pkts[0] == NULL) {
		rte_pktmbuf_free_bulk(pkts, n);
		return;
	}
	mp = pkts[0]->pool;
	for (uint16_t i = 0; i < n; i++) {
		const struct rte_mbuf *m = pkts[i];

		if (unlikely(m == NULL || m->pool != mp || m->next != NULL || m->nb_segs != 1 ||
			     !RTE_MBUF_DIRECT(m) || rte_mbuf_refcnt_read(m) != 1)) {
			rte_pktmbuf_free_bulk(pkts, n);
			return;
		}
	}
	rte_mempool_put_bulk(mp, (void **)pkts, n);
}

/* enqueue_simple() did not take the frame: enqueue_one() will. */
#define ENQUEUE_NOT_SIMPLE (-1)

/*
 * enqueue_one() for the usual frame: one segment, no offload metadata, into
 * the next buffer, whose first piece holds the header and the whole frame.
 * Nothing is written unless it takes the frame; when it declines
 * (ENQUEUE_NOT_SIMPLE), enqueue_one() walks the same chain again.
 */
static inline int
enqueue_simple(struct hv_vhost_port *port, struct hv_vring *vr, struct rte_mbuf *m,
	       struct rx_pos *pos, struct hv_chain *chain)
{
	const uint32_t len = m->data_len, hdr_size = port->hdr_size;
	struct virtio_net_hdr_v1 h = {.num_buffers = rte_cpu_to_le_16(1)};
	uint8_t *base;
	uint16_t head;

	if (m->next != NULL || (m->ol_flags & hv_vhost_vnet_hdr_flag) || pos->avail == pos->end)
		return ENQUEUE_NOT_SIMPLE;
	head = avail_entry(vr, pos->avail);
	if (hv_vring_walk_fast(vr->desc, vr->size, &port->mem, &vr->mem_hint, head, true,
			       port->indirect, chain) != 0 ||
	    chain->iov[0].len < hdr_size + len)
		return ENQUEUE_NOT_SIMPLE;
	base = chain->iov[0].base;
	if (hdr_size == sizeof(h))
		hdr_store_whole(base, &h);
	else
		hdr_store(base, &h);
	copy_to_guest_batched(&pos->batch, base + hdr_size, rte_pktmbuf_mtod(m, const uint8_t *),
			      len);
	pos->rewritten += used_put_unless_equal(vr, pos->used, head, hdr_size + len);
	pos->avail++;
	pos->used++;
	return 0;
}

static inline bool
rx_error_breaks_ring(int rc)
{
	return hv_vring_error_is_fatal(rc) || rc == HV_VHOST_DROP_BAD_CHAIN;
}

uint16_t
hv_vhost_tx_burst(struct hv_vhost_port *port, uint16_t qp, struct rte_mbuf **pkts, uint16_t n)
{
	struct hv_vring *vr;
	struct hv_chain chain;
	struct rx_pos pos;
	uint16_t sent = 0, i = 0;
	uint32_t avail;

	if (unlikely(qp >= port->queue_pairs))
		goto free;
	vr = &port->vr[2 * qp];
	if (!vring_enter(vr)) {
		vr->stats.drops[HV_VHOST_DROP_NOT_READY] += n;
		goto free;
	}
	if (port->packed) {
		sent = vhost_packed_tx(port, vr, pkts, n);
		goto leave;
	}
	avail = avail_count(port, vr);
	if (unlikely(avail == UINT32_MAX)) {
		vr->stats.drops[HV_VHOST_DROP_NOT_READY] += n;
		goto leave;
	}
	pos.avail = vr->last_avail_idx;
	pos.used = vr->last_used_idx;
	pos.end = vr->last_avail_idx + avail;
	pos.rewritten = 0;
	pos.batch.n = 0;
	/* a 64 KiB frame may take many buffers; the common case takes one each */
	prefetch_chains(port, vr, pos.avail, (uint16_t)RTE_MIN((uint32_t)n, avail), pkts);
	/* entries that repeat are only read: the last burst's are the guess */
	prefetch_used(vr, pos.used, (uint16_t)RTE_MIN((uint32_t)n, avail), !vr->used_repeats);
	for (i = 0; i < RTE_MIN(n, (uint16_t)PREFETCH_AHEAD); i++)
		rte_prefetch0(rte_pktmbuf_mtod(pkts[i], void *));
	for (i = 0; i < n; i++) {
		uint32_t len = pkts[i]->pkt_len;
		int rc;

		if (i + PREFETCH_AHEAD < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + PREFETCH_AHEAD], void *));
		rc = enqueue_simple(port, vr, pkts[i], &pos, &chain);
		if (rc == ENQUEUE_NOT_SIMPLE)
			rc = enqueue_one(port, vr, pkts[i], &pos, &chain);

		if (likely(rc == 0)) {
			sent++;
			vr->stats.bytes += len;
			continue;
		}
		if (rx_error_breaks_ring(rc)) {
			vring_break(port, vr, rc);
			vr->stats.drops[HV_VHOST_DROP_NOT_READY] += n - i - 1;
			break;
		}
		if (rc == HV_VHOST_DROP_NO_BUFFER) {
			vr->stats.drops[rc] += n - i;
			break;
		}
		vr->stats.drops[rc]++;
	}
	copy_batch_run(&pos.batch);
	vr->stats.packets += sent;
	vr->last_avail_idx = pos.avail;
	if (pos.used != vr->last_used_idx) {
		uint16_t entries = (uint16_t)(pos.used - vr->last_used_idx);

		vr->last_used_idx = pos.used;
		vr->used_repeats = pos.rewritten == 0;
		vring_used_done(port, vr, entries);
	}
leave:
	vring_leave(vr);
free:
	free_sent(pkts, n);
	return sent;
}
