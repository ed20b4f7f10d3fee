/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The data path of a packed ring: frames out of the guest's TX ring into
 * mbufs, and mbufs into its RX ring. Runs on the polling thread inside
 * hv_vhost_rx_burst() / hv_vhost_tx_burst() (ring entered); no locks, no
 * allocation but mbufs. Guest memory is written only through
 * vhost_packed_guest.h.
 *
 * Used descriptors go where the chains they return began. Out of the guest
 * they are written as the chains are taken; into it they are held until the
 * burst's copies are done (pk_used_hold(), pk_used_flush()). Either way the
 * first of a burst keeps its flags until the burst ends
 * (vhost_packed_publish(), from vring_used_done()), so that the guest, which
 * reads them in ring order, sees the burst whole.
 */
#include <string.h>

#include <rte_mbuf.h>

#include "vhost_frame.h"
#include "vhost_internal.h"
#include "vhost_packed.h"
#include "vhost_packed_fast.h"
#include "vhost_packed_guest.h"
#include "vhost_prefetch.h"

/* Frames one receive burst takes at most (a caller asks for 32). */
#define PK_RX_MAX 64
/* Guest buffers one frame into the guest may take (64 KiB in 256-byte buffers). */
#define PK_FRAME_MAX_BUFS 256

/* ---- buffer ids in flight: taken from the ring, not yet returned ---- */

/*
 * The buffer ids a burst has taken: no id may be taken twice before it is
 * returned, and a burst returns all of its ids as it ends. A driver that
 * uses its ring in order (DPDK's virtio PMD) gives each buffer the slot it
 * lies in as its id. While every chain of the burst is one descriptor whose
 * id is its slot, the ids taken are the slots the burst has passed, a range
 * known from its first slot and the slots since: no load or store per id.
 * The first chain that does not fit moves the range into the bitmap
 * vr->pk_inflight, which keeps the ids of the rest of the burst.
 */
struct pk_ids {
	uint16_t first; /* the burst's first slot */
	bool bitmap;    /* the ids are in vr->pk_inflight */
};

static inline void
ids_begin(struct pk_ids *t, uint16_t first)
{
	t->first = first;
	t->bitmap = false;
}

/* The range of ids, the @passed slots from the burst's first, into the bitmap. */
static __rte_noinline void
ids_to_bitmap(struct hv_vring *vr, struct pk_ids *t, uint32_t passed)
{
	uint16_t id = t->first;

	for (uint32_t i = 0; i < passed; i++) {
		vr->pk_inflight[id >> 6] |= UINT64_C(1) << (id & 63);
		if (++id == vr->size)
			id = 0;
	}
	t->bitmap = true;
}

/*
 * Take buffer id @id (below the ring size: the walker checked) of the chain
 * at slot @slot, @passed slots after the burst's first, @ndesc slots long;
 * false if it is in flight. @passed counts the slots of every chain whose id
 * the burst holds, and no other.
 */
static __rte_always_inline bool
ids_take(struct hv_vring *vr, struct pk_ids *t, uint16_t slot, uint32_t passed, uint16_t ndesc,
	 uint16_t id)
{
	uint64_t bit;

	if (likely(!t->bitmap)) {
		/* within a lap: no slot passed twice */
		if (likely(id == slot && ndesc == 1 && passed < vr->size))
			return true;
		ids_to_bitmap(vr, t, passed);
	}
	bit = UINT64_C(1) << (id & 63);
	if (unlikely(vr->pk_inflight[id >> 6] & bit))
		return false;
	vr->pk_inflight[id >> 6] |= bit;
	return true;
}

/*
 * Give back id @id, of a chain that did not go (the slots after the held
 * ones: in the range they are not passed).
 */
static inline void
ids_put(struct hv_vring *vr, const struct pk_ids *t, uint16_t id)
{
	if (t->bitmap)
		vr->pk_inflight[id >> 6] &= ~(UINT64_C(1) << (id & 63));
}

/*
 * The burst's ids all return. No id stays in flight from one burst to the
 * next (a held burst releases its ids as it returns): the bitmap, if the
 * burst used it, is cleared whole, a few stores (128 bytes for 1024 slots),
 * not a load and store per id.
 */
static inline void
ids_end(struct hv_vring *vr, struct pk_ids *t)
{
	if (unlikely(t->bitmap))
		memset(vr->pk_inflight, 0, RTE_ALIGN_CEIL((uint32_t)vr->size, 64) / 8);
	t->bitmap = false;
}

/* Stop the ring for a guest that broke it; the burst's ids go back. */
static void
pk_break(struct hv_vhost_port *port, struct hv_vring *vr, struct pk_ids *ids, int why)
{
	ids_end(vr, ids);
	vring_break(port, vr, why);
}

/* ---- out of the guest's TX ring ---- */

uint16_t
vhost_packed_rx(struct hv_vhost_port *port, struct hv_vring *vr, struct rte_mbuf **pkts, uint16_t n)
{
	/*
	 * The used position is the avail one between chains: each chain's used
	 * descriptor goes to the slot it began at (the device then skips as many
	 * slots as the chain took), and every chain taken gets one.
	 */
	const struct hv_packed_pos start = {vr->last_avail_idx, vr->avail_wrap};
	struct hv_packed_pos at = start;
	struct hv_chain chain;
	struct hv_packed_one o;
	/* b in registers; wb, whose address the walker takes, only for other chains */
	struct hv_packed_buf b, wb;
	struct pk_seen seen;
	struct pk_ids ids;
	uint16_t count = 0, last_id = 0;
	uint32_t slots = 0;
	bool held = false, raw;

	/* an idle ring costs one load and no mbufs; a busy one as many as it has */
	n = pk_scan(port, vr, at, RTE_MIN(n, (uint16_t)PK_RX_MAX), false, NULL, &seen);
	if (n == 0)
		goto out;
	if (unlikely(pk_rx_mbufs(port->mp, pkts, n, &raw) != 0)) {
		vr->stats.drops[HV_VHOST_DROP_NO_MBUF]++;
		goto out;
	}
	pk_rx_prefetch_mbufs(pkts, n, raw);
	ids_begin(&ids, at.idx);
	/* the usual frames in a tight loop; from the first other on, one by one */
	count = raw ? pk_rx_simple(port, vr, pkts, &seen, n) : 0;
	if (raw)
		for (uint16_t i = count; i < n; i++)
			rte_pktmbuf_reset(pkts[i]);
	if (count > 0) {
		if (!port->in_order)
			for (uint16_t i = 0; i < count; i++)
				pk_used_store(vr, hv_packed_advance(at, i, vr->size), seen.id[i],
					      0);
		last_id = seen.id[count - 1];
		slots = count;
		at = hv_packed_advance(at, count, vr->size);
	}
	for (uint16_t i = count; i < n; i++) {
		struct rte_mbuf *m = pkts[count];
		bool borrowed = false;
		int rc;

		if (count + PREFETCH_AHEAD < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[count + PREFETCH_AHEAD], void *));

		/* read ahead by pk_scan(); past those the common descriptor in
		 * scalars, anything else through the walker */
		if (likely(i < seen.n)) {
			o.base = seen.base[i];
			o.len = seen.len[i];
			o.id = seen.id[i];
			o.next = hv_packed_next(at, vr->size);
			rc = 0;
		} else {
			rc = hv_packed_one(vr->pdesc, vr->size, &port->mem, vr->mem_hint, at, false,
					   &o);
		}
		if (likely(rc == 0)) {
			chain.n_iov = 1;
			chain.len = o.len;
			chain.iov[0].base = o.base;
			chain.iov[0].len = o.len;
			b.id = o.id;
			b.ndesc = 1;
			b.next = o.next;
		} else if (rc == HV_PACKED_EMPTY) {
			break;
		} else {
			rc = hv_packed_walk(vr->pdesc, vr->size, &port->mem, &vr->mem_hint, at,
					    false, port->indirect, &chain, &wb);
			if (rc == HV_PACKED_EMPTY)
				break;
			/* the walker stops only at a corrupt ring: a chain it cannot skip */
			if (unlikely(rc != 0)) {
				pk_break(port, vr, &ids, rc);
				break;
			}
			b = wb;
		}
		if (unlikely(!ids_take(vr, &ids, at.idx, slots, b.ndesc, b.id))) {
			pk_break(port, vr, &ids, HV_VHOST_DROP_BAD_ID);
			break;
		}
		rc = dequeue_one(port, vr, &chain, m, &borrowed);
		if (unlikely(rc == HV_VHOST_DROP_NO_MBUF)) {
			/* leave the chain to the guest; retry on the next burst */
			ids_put(vr, &ids, b.id);
			vr->stats.drops[rc]++;
			break;
		}
		/* in order, one used descriptor returns the batch (virtio 1.2, 2.8.9) */
		if (!port->in_order)
			pk_used_store(vr, at, b.id, 0);
		last_id = b.id;
		slots += b.ndesc;
		at = b.next;
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
	ids_end(vr, &ids);
	if (count < n)
		rte_pktmbuf_free_bulk(&pkts[count], n - count);
	vr->stats.packets += count;
	if (slots == 0)
		goto out;
	if (port->in_order)
		pk_used_store(vr, start, last_id, 0);
	vr->last_avail_idx = vr->last_used_idx = at.idx;
	vr->avail_wrap = vr->used_wrap = at.wrap;
	/* more than a lap from a guest that posts again behind us: counted, clamped */
	slots = RTE_MIN(slots, (uint32_t)UINT16_MAX);
	/* entries written but not published: the guest must not reuse what we borrow */
	if (held) {
		vr->held = true;
		vr->held_entries = (uint16_t)slots;
		return count;
	}
	vring_used_done(port, vr, (uint16_t)slots);
out:
	vring_leave(vr);
	return count;
}

/* ---- into the guest's RX ring ---- */

struct pk_writer {
	struct hv_vhost_port *port; /* and ring: for the dirty log */
	struct hv_vring *vr;
	struct copy_batch *batch;
	const struct hv_chain *c;
	uint16_t i;   /* current iov */
	uint32_t off; /* bytes written in it */
	uint32_t written;
};

/*
 * Copy @len bytes into the chain from the writer's place; @batched: @src
 * outlives the burst; @log: logging on (a constant of the burst's variant).
 */
static __rte_always_inline uint32_t
pk_put(struct pk_writer *w, const uint8_t *src, uint32_t len, bool batched, const bool log)
{
	uint32_t done = 0;

	while (done < len && w->i < w->c->n_iov) {
		const struct hv_iov *v = &w->c->iov[w->i];
		uint32_t k = RTE_MIN(v->len - w->off, len - done);

		if (batched)
			pk_guest_copy_batched(w->port, w->vr, log, w->batch, v->base + w->off,
					      src + done, k);
		else
			pk_guest_copy(w->port, w->vr, log, v->base + w->off, src + done, k);
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
static __rte_always_inline void
pk_mbuf_to_chain(struct mbuf_cursor *mc, struct pk_writer *w, const bool log)
{
	while (mc->seg != NULL) {
		uint32_t left = mc->seg->data_len - mc->off;
		uint32_t k;

		if (left == 0) {
			mc->seg = mc->seg->next;
			mc->off = 0;
			continue;
		}
		k = pk_put(w, rte_pktmbuf_mtod_offset(mc->seg, const uint8_t *, mc->off), left,
			   true, log);
		mc->off += k;
		if (k < left)
			return;
	}
}

/*
 * Where a burst into the guest stands. Each chain's used descriptor goes to
 * the slot the chain began at (as out of the guest's TX ring).
 */
struct pk_tx {
	struct hv_packed_pos at;  /* next avail slot, and used slot */
	uint32_t slots;           /* used slots written */
	struct copy_batch batch;  /* short copies, done before the burst publishes */
	struct pk_used_held used; /* used descriptors, written after the copies */
	struct pk_ids ids;        /* buffer ids taken */
	struct pk_seen seen;      /* descriptors read ahead, from the burst's first slot */
};

/* One buffer a frame took. */
struct pk_frame_buf {
	struct hv_packed_pos pos; /* its first slot: where its used descriptor goes */
	uint16_t id;
	uint16_t ndesc;
	uint32_t len;
};

/* Address of byte @off of a chain (it lies within the chain). */
static inline uint8_t *
pk_chain_byte(const struct hv_chain *c, uint32_t off)
{
	for (uint16_t i = 0; i < c->n_iov; i++) {
		if (off < c->iov[i].len)
			return c->iov[i].base + off;
		off -= c->iov[i].len;
	}
	return NULL;
}

/*
 * The net header into the first buffer (at least hdr_size long); @nb gets
 * where the two bytes of num_buffers lie, which a frame of several buffers
 * rewrites.
 */
static __rte_always_inline void
pk_hdr_write(struct hv_vhost_port *port, struct pk_writer *w, const struct virtio_net_hdr_v1 *h,
	     uint8_t *nb[2], const bool log)
{
	const struct hv_chain *c = w->c;
	const uint32_t nb_off = offsetof(struct virtio_net_hdr_v1, num_buffers);

	if (likely(c->iov[0].len >= port->hdr_size)) {
		/* constant sizes: the compare and copy inline */
		if (port->hdr_size == sizeof(*h))
			pk_guest_hdr_store(port, w->vr, log, c->iov[0].base, h, sizeof(*h));
		else
			pk_guest_hdr_store(port, w->vr, log, c->iov[0].base, h,
					   sizeof(struct virtio_net_hdr));
		nb[0] = c->iov[0].base + nb_off;
		nb[1] = nb[0] + 1;
		w->off = port->hdr_size;
		w->written = port->hdr_size;
		if (w->off == c->iov[0].len) {
			w->i = 1;
			w->off = 0;
		}
		return;
	}
	/* a header in pieces: an odd guest's, not a wrong one */
	pk_put(w, (const uint8_t *)h, port->hdr_size, false, log);
	nb[0] = pk_chain_byte(c, nb_off);
	nb[1] = pk_chain_byte(c, nb_off + 1);
}

/*
 * Copy one frame into the guest's buffers. On success @st moves past them;
 * on failure it stays (the buffers remain the guest's, what was copied into
 * them is theirs to overwrite). @return 0 or a drop reason.
 */
static __rte_always_inline int
pk_enqueue_one(struct hv_vhost_port *port, struct hv_vring *vr, struct rte_mbuf *m,
	       struct pk_tx *st, struct hv_chain *chain, const bool log)
{
	struct pk_frame_buf bufs[PK_FRAME_MAX_BUFS];
	struct virtio_net_hdr_v1 h;
	struct mbuf_cursor mc = {.seg = m, .off = 0};
	struct hv_packed_pos at = st->at;
	uint32_t need = port->hdr_size + m->pkt_len;
	uint8_t *nb[2] = {NULL, NULL};
	uint32_t passed = st->slots;
	uint16_t nbufs = 0;
	struct hv_packed_buf b;
	int rc = 0;

	if (!rx_hdr_fill(port, m, &h))
		return HV_VHOST_DROP_BAD_HEADER;
	if (m->pkt_len > HV_VHOST_MAX_PKT_LEN)
		return HV_VHOST_DROP_TOO_LONG;
	h.num_buffers = rte_cpu_to_le_16(1);
	do {
		struct pk_writer w = {.port = port, .vr = vr, .batch = &st->batch, .c = chain};

		if (nbufs == PK_FRAME_MAX_BUFS) {
			rc = HV_VHOST_DROP_TOO_LONG;
			goto fail;
		}
		rc = hv_packed_walk_fast(vr->pdesc, vr->size, &port->mem, &vr->mem_hint, at, true,
					 port->indirect, chain, &b);
		if (rc == HV_PACKED_EMPTY) {
			rc = HV_VHOST_DROP_NO_BUFFER;
			goto fail;
		}
		if (rc != 0)
			goto fail;
		if (!ids_take(vr, &st->ids, at.idx, passed, b.ndesc, b.id)) {
			rc = HV_VHOST_DROP_BAD_ID;
			goto fail;
		}
		bufs[nbufs].pos = at;
		bufs[nbufs].id = b.id;
		bufs[nbufs].ndesc = b.ndesc;
		nbufs++;
		passed += b.ndesc;
		if (nbufs == 1) {
			/* a buffer that cannot hold the header is a broken ring, as in split */
			if (chain->len < port->hdr_size) {
				rc = HV_VHOST_DROP_BAD_CHAIN;
				goto fail;
			}
			/* without mergeable buffers the frame must fit one chain */
			if (!port->mrg_rxbuf && chain->len < need) {
				rc = HV_VHOST_DROP_TOO_LONG;
				goto fail;
			}
			pk_hdr_write(port, &w, &h, nb, log);
		}
		pk_mbuf_to_chain(&mc, &w, log);
		bufs[nbufs - 1].len = w.written;
		need -= w.written;
		at = b.next;
	} while (need > 0);
	/* num_buffers (little endian, maybe split between pieces): 1 was written */
	if (nbufs > 1 && port->hdr_size == sizeof(h)) {
		const uint8_t v[2] = {(uint8_t)nbufs, (uint8_t)(nbufs >> 8)};

		pk_guest_copy(port, vr, log, nb[0], &v[0], 1);
		pk_guest_copy(port, vr, log, nb[1], &v[1], 1);
	}
	for (uint16_t i = 0; i < nbufs; i++) {
		pk_used_hold(vr, &st->used, bufs[i].pos, bufs[i].id, bufs[i].len);
		st->slots += bufs[i].ndesc;
	}
	st->at = at;
	return 0;
fail:
	for (uint16_t i = 0; i < nbufs; i++)
		ids_put(vr, &st->ids, bufs[i].id);
	return rc;
}

/* pk_enqueue_one() once per variant: the uncommon frame, out of the burst's loop. */
static int
pk_enqueue_one_plain(struct hv_vhost_port *port, struct hv_vring *vr, struct rte_mbuf *m,
		     struct pk_tx *st, struct hv_chain *chain)
{
	return pk_enqueue_one(port, vr, m, st, chain, false);
}

static int
pk_enqueue_one_logged(struct hv_vhost_port *port, struct hv_vring *vr, struct rte_mbuf *m,
		      struct pk_tx *st, struct hv_chain *chain)
{
	return pk_enqueue_one(port, vr, m, st, chain, true);
}

/* pk_enqueue_simple() did not take the frame: pk_enqueue_one() will. */
#define PK_NOT_SIMPLE (-2)

/*
 * pk_enqueue_one() for the usual frame: one segment, no offload metadata,
 * into the next buffer, one descriptor that holds header and frame
 * (hv_packed_one()). Nothing is written unless it takes the frame; when it
 * declines (PK_NOT_SIMPLE), pk_enqueue_one() walks the chain and decides.
 */
static __rte_always_inline int
pk_enqueue_simple(struct hv_vhost_port *port, struct hv_vring *vr, struct rte_mbuf *m,
		  struct pk_tx *st, const bool log)
{
	const uint32_t len = m->data_len, hdr_size = port->hdr_size;
	const struct virtio_net_hdr_v1 h = {.num_buffers = rte_cpu_to_le_16(1)};
	/* in scalars: no chain stored and read back */
	struct hv_packed_one o;
	uint8_t *base;

	if (m->next != NULL || (m->ol_flags & hv_vhost_vnet_hdr_flag))
		return PK_NOT_SIMPLE;
	/* read ahead by pk_scan() (slot by slot from the burst's first), or now */
	if (likely(st->slots < st->seen.n)) {
		o.base = st->seen.base[st->slots];
		o.len = st->seen.len[st->slots];
		o.id = st->seen.id[st->slots];
		o.next = hv_packed_next(st->at, vr->size);
	} else if (hv_packed_one(vr->pdesc, vr->size, &port->mem, vr->mem_hint, st->at, true, &o) !=
		   0) {
		return PK_NOT_SIMPLE;
	}
	if (o.len < hdr_size + len || !ids_take(vr, &st->ids, st->at.idx, st->slots, 1, o.id))
		return PK_NOT_SIMPLE;
	base = o.base;
	if (hdr_size == sizeof(h))
		pk_guest_hdr_store(port, vr, log, base, &h, sizeof(h));
	else
		pk_guest_hdr_store(port, vr, log, base, &h, sizeof(struct virtio_net_hdr));
	pk_guest_copy_batched(port, vr, log, &st->batch, base + hdr_size,
			      rte_pktmbuf_mtod(m, const uint8_t *), len);
	pk_used_hold(vr, &st->used, st->at, o.id, hdr_size + len);
	st->slots++;
	st->at = o.next;
	return 0;
}

static inline bool
pk_tx_error_breaks_ring(int rc)
{
	return hv_packed_error_is_fatal(rc) || rc == HV_VHOST_DROP_BAD_CHAIN ||
	       rc == HV_VHOST_DROP_TOO_MANY_SEGS || rc == HV_VHOST_DROP_BAD_ADDR;
}

/* vhost_packed_tx(), with logging on (@log) or off: a constant, two copies of it. */
static __rte_always_inline uint16_t
pk_tx_burst(struct hv_vhost_port *port, struct hv_vring *vr, struct rte_mbuf **pkts, uint16_t n,
	    const bool log)
{
	struct hv_chain chain;
	struct pk_tx st;
	uint16_t sent = 0;

	st.at = (struct hv_packed_pos){vr->last_avail_idx, vr->avail_wrap};
	st.slots = 0;
	st.batch.n = 0;
	st.used.n = 0;
	pk_scan(port, vr, st.at, n, true, pkts, &st.seen);
	ids_begin(&st.ids, st.at.idx);
	for (uint16_t i = 0; i < RTE_MIN(n, (uint16_t)PREFETCH_AHEAD); i++)
		rte_prefetch0(rte_pktmbuf_mtod(pkts[i], void *));
	/* the usual frames in a tight loop; from the first other on, one by one */
	/* the header's size a constant: its compare and copy inline */
	if (!log && port->hdr_size == sizeof(struct virtio_net_hdr_v1))
		sent = pk_tx_simple(vr, pkts, n, &st.seen, st.at, sizeof(struct virtio_net_hdr_v1));
	else if (!log && port->hdr_size == sizeof(struct virtio_net_hdr))
		sent = pk_tx_simple(vr, pkts, n, &st.seen, st.at, sizeof(struct virtio_net_hdr));
	if (sent > 0) {
		st.at = hv_packed_advance(st.at, sent, vr->size);
		st.slots = sent;
	}
	for (uint16_t i = sent; i < n; i++) {
		uint32_t len = pkts[i]->pkt_len;
		int rc;

		if (i + PREFETCH_AHEAD < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + PREFETCH_AHEAD], void *));
		rc = pk_enqueue_simple(port, vr, pkts[i], &st, log);
		if (rc == PK_NOT_SIMPLE)
			rc = log ? pk_enqueue_one_logged(port, vr, pkts[i], &st, &chain)
				 : pk_enqueue_one_plain(port, vr, pkts[i], &st, &chain);
		if (likely(rc == 0)) {
			sent++;
			vr->stats.bytes += len;
			continue;
		}
		if (pk_tx_error_breaks_ring(rc)) {
			copy_batch_run(&st.batch);
			pk_break(port, vr, &st.ids, rc);
			vr->stats.drops[HV_VHOST_DROP_NOT_READY] += n - i - 1;
			break;
		}
		if (rc == HV_VHOST_DROP_NO_BUFFER) {
			vr->stats.drops[rc] += n - i;
			break;
		}
		vr->stats.drops[rc]++;
	}
	copy_batch_run(&st.batch);
	pk_used_flush(vr, &st.used);
	ids_end(vr, &st.ids);
	vr->stats.packets += sent;
	vr->last_avail_idx = vr->last_used_idx = st.at.idx;
	vr->avail_wrap = vr->used_wrap = st.at.wrap;
	/* no more slots than the ring has: nothing is visible to the guest before the end */
	if (st.slots > 0)
		vring_used_done(port, vr, (uint16_t)st.slots);
	return sent;
}

uint16_t
vhost_packed_tx(struct hv_vhost_port *port, struct hv_vring *vr, struct rte_mbuf **pkts, uint16_t n)
{
	/* the one test of logging per burst (vhost_packed_guest.h) */
	if (unlikely(port->log.bits != NULL))
		return pk_tx_burst(port, vr, pkts, n, true);
	return pk_tx_burst(port, vr, pkts, n, false);
}
