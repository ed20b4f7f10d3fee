/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The packed ring's common case in tight loops, for vhost_packed_rxtx.c: a
 * burst's read-ahead of its one-descriptor chains (pk_scan()), then the
 * frames that need nothing else, out of the guest (pk_rx_simple()) and into
 * it (pk_tx_simple()). A driver that keeps its ring in order (DPDK's virtio
 * PMD; Linux's with IN_ORDER) gives each buffer its slot as id: one test for
 * the burst's ids, no bitmap of ids in flight, used descriptors written in
 * a run. The first frame they do not take, and all the others after it, go
 * through the general loop, which checks everything again.
 */
#ifndef HV_VHOST_PACKED_FAST_H
#define HV_VHOST_PACKED_FAST_H

#include <string.h>

#include <rte_mbuf.h>

#include "vhost_internal.h"
#include "vhost_packed.h"
#include "vhost_packed_guest.h"
#include "vhost_prefetch.h"

/* Descriptors of the ring in a cache line. */
#define PK_DESC_PER_LINE (RTE_CACHE_LINE_SIZE / sizeof(struct vring_packed_desc))

/* ---- the burst's read-ahead ---- */

/*
 * Start loading the descriptor lines of the next @n slots from @at, once the
 * first is available: the driver wrote them on its core, and issued back to
 * back their misses overlap, where reading them in turn would wait for each.
 * Only a hint: nothing read here is trusted.
 */
static inline void
pk_prefetch_lines(const struct hv_vring *vr, struct hv_packed_pos at, uint16_t n)
{
	const struct vring_packed_desc *d = vr->pdesc;
	uint16_t last;

	n = RTE_MIN(n, vr->size);
	if (n < 2 || !hv_packed_avail(__atomic_load_n(&d[at.idx].flags, __ATOMIC_ACQUIRE), at.wrap))
		return;
	/* four descriptors to a line: every fourth slot, and the last */
	for (uint16_t j = PK_DESC_PER_LINE; j < n; j += PK_DESC_PER_LINE)
		rte_prefetch0(&d[hv_packed_advance(at, j, vr->size).idx]);
	last = hv_packed_advance(at, n - 1, vr->size).idx;
	rte_prefetch0(&d[last]);
}

/* One-descriptor chains a burst has read ahead (pk_scan()), from its first slot on. */
struct pk_seen {
	uint16_t n;
	uint16_t in_order; /* of them, from the first, whose ids are their slots: all or none */
	uint16_t id[PREFETCH_MAX];
	uint32_t len[PREFETCH_MAX];
	uint8_t *base[PREFETCH_MAX];
};

/*
 * pk_scan() over @n slots from @d, slot @slot, none past the ring's end,
 * into @s from entry @first: each slot one descriptor (hv_packed_run_one()),
 * its buffer loaded ahead. *@disorder sums the ids against their slots: a
 * driver that keeps its ring in order (DPDK's virtio PMD, Linux's with
 * IN_ORDER) leaves it 0, and its ids need no other test; pk_scan() checks
 * the others. @return how many it read: it stops at the first other.
 */
static __rte_always_inline uint16_t
pk_scan_run(const struct vring_packed_desc *d, uint16_t slot, uint16_t n,
	    const struct hv_mem_region *mr, uint16_t want, uint32_t hdr_size, const bool into,
	    struct rte_mbuf *const *pkts, struct pk_seen *s, uint16_t first, uint16_t *disorder)
{
	const uint64_t gpa = mr->gpa, rsize = mr->size;
	const uint32_t len_max = hv_packed_len_max(rsize);
	uint8_t *const hva = mr->hva;
	uint16_t k, odd = 0;

	for (k = 0; k < n; k++) {
		const uint16_t e = first + k;
		uint64_t off;
		uint32_t len, span;
		uint16_t id;
		uint8_t *base;

		if (!hv_packed_run_one(&d[k], want, gpa, rsize, len_max, &off, &len, &id))
			break;
		odd |= id ^ (uint16_t)(slot + k);
		base = hva + off;
		s->id[e] = id;
		s->len[e] = len;
		s->base[e] = base;
		/* into the guest, what the frame will fill (past the buffer, a prefetch is harmless) */
		span = into ? hdr_size + pkts[e]->data_len : len;
		prefetch_span(base, span, into, into && hdr_line_alone(hdr_size, base));
	}
	*disorder |= odd;
	return k;
}

/*
 * A burst whose ids are not all their slots (pk_scan_run()): none of it is
 * in order, and it ends before the first id out of range, which the general
 * loop's walker then reads and refuses.
 */
static __rte_noinline void
pk_scan_ids(struct pk_seen *s, uint16_t size)
{
	s->in_order = 0;
	for (uint16_t i = 0; i < s->n; i++)
		if (s->id[i] >= size) {
			s->n = i;
			return;
		}
}

/*
 * Read the chains of a burst ahead, from @at, up to @n (PREFETCH_MAX at
 * most), as long as each is one descriptor (hv_packed_run_one(), the ids
 * after: each field read once; writable into the guest, @into) into @s: the
 * burst takes them from there and does not read them again. Start loading
 * the buffer of each (PREFETCH_SPAN bytes at most; into the guest, for
 * writing, what its frame will fill), so that the misses of a burst overlap
 * (see prefetch_chains() of the split ring). Past them, count the slots
 * still available, a load of flags each: no chain of the burst is longer.
 * @return chains read plus slots counted, at most @n.
 */
static __rte_always_inline uint16_t
pk_scan(const struct hv_vhost_port *port, const struct hv_vring *vr, struct hv_packed_pos at,
	uint16_t n, const bool into, struct rte_mbuf *const *pkts, struct pk_seen *s)
{
	const struct vring_packed_desc *ring = vr->pdesc;
	const uint16_t size = vr->size;
	uint16_t want = hv_packed_one_want(at.wrap, into);
	uint16_t i = 0, disorder = 0;

	n = RTE_MIN(n, (uint16_t)PREFETCH_MAX);
	s->n = 0;
	s->in_order = 0;
	if (unlikely(at.idx >= size))
		return 0;
	pk_prefetch_lines(vr, at, n);
	if (likely(vr->mem_hint < port->mem.n)) {
		/* in runs that do not pass the ring's end: no test of it per slot */
		while (i < n) {
			const uint16_t run = RTE_MIN((uint16_t)(n - i), (uint16_t)(size - at.idx));
			const uint16_t got =
				pk_scan_run(&ring[at.idx], at.idx, run, &port->mem.r[vr->mem_hint],
					    want, port->hdr_size, into, pkts, s, i, &disorder);

			i += got;
			at.idx += got;
			if (at.idx == size) {
				at.idx = 0;
				at.wrap = !at.wrap;
				want ^= HV_PACKED_F_AVAIL | HV_PACKED_F_USED;
			}
			if (got < run)
				break;
		}
	}
	s->n = i;
	/*
	 * Ids that are their slots are distinct for a lap at most: past it a
	 * guest that posted the next lap early repeats them, which the general
	 * loop's ids_take() refuses.
	 */
	s->in_order = RTE_MIN(i, size);
	if (unlikely(disorder != 0))
		pk_scan_ids(s, size);
	/* the slot it stopped at, read again: empty, or the first of a longer chain */
	for (; i < n; i++) {
		if (!hv_packed_avail(__atomic_load_n(&ring[at.idx].flags, __ATOMIC_ACQUIRE),
				     at.wrap))
			break;
		at = hv_packed_next(at, size);
	}
	return i;
}

/* ---- out of the guest's TX ring ---- */

/*
 * The copies the tight loops (pk_rx_simple(), pk_tx_simple()) leave to
 * rte_memcpy(), out of line: inlined, its registers would crowd the loops'.
 */
static __rte_noinline void
pk_copy_from_guest(uint8_t *dst, const uint8_t *src, uint32_t len)
{
	rte_memcpy(dst, src, len);
}

static __rte_noinline void
pk_copy_to_guest(uint8_t *dst, const uint8_t *src, uint32_t len)
{
	copy_to_guest(dst, src, len);
}

/* Where a fresh mbuf of @mp's puts its data (rte_pktmbuf_reset_headroom()). */
static inline uint16_t
pk_headroom(struct rte_mempool *mp)
{
	return (uint16_t)RTE_MIN((uint32_t)RTE_PKTMBUF_HEADROOM, rte_pktmbuf_data_room_size(mp));
}

/*
 * The 8 bytes from data_off, as rte_pktmbuf_reset() leaves them in a fresh
 * mbuf with @headroom: data_off, refcnt 1, nb_segs 1, port invalid (a PMD's
 * "rearm data").
 */
static inline uint64_t
pk_mbuf_rearm(uint16_t headroom)
{
	const uint16_t f[4] = {headroom, 1, 1, RTE_MBUF_PORT_INVALID};
	uint64_t v;

	RTE_BUILD_BUG_ON(offsetof(struct rte_mbuf, refcnt) !=
			 offsetof(struct rte_mbuf, data_off) + 2);
	RTE_BUILD_BUG_ON(offsetof(struct rte_mbuf, nb_segs) !=
			 offsetof(struct rte_mbuf, data_off) + 4);
	RTE_BUILD_BUG_ON(offsetof(struct rte_mbuf, port) !=
			 offsetof(struct rte_mbuf, data_off) + 6);
	memcpy(&v, f, sizeof(v));
	return v;
}

/*
 * What rte_pktmbuf_reset() would set in @m, taken raw from its pool (which
 * keeps its mbufs at one reference, one segment, no next), with @len bytes:
 * one pass over the fields, the frame's with them. @rearm: pk_mbuf_rearm().
 */
static __rte_always_inline void
pk_mbuf_init(struct rte_mbuf *m, uint64_t rearm, uint32_t len)
{
	/* data_len and vlan_tci (0) in one store */
	const uint32_t data_len_vlan = (uint16_t)len;

	RTE_BUILD_BUG_ON(offsetof(struct rte_mbuf, vlan_tci) !=
			 offsetof(struct rte_mbuf, data_len) + 2);
	memcpy((uint8_t *)m + offsetof(struct rte_mbuf, data_off), &rearm, sizeof(rearm));
	m->ol_flags = 0;
	m->packet_type = 0;
	m->pkt_len = len;
	memcpy((uint8_t *)m + offsetof(struct rte_mbuf, data_len), &data_len_vlan,
	       sizeof(data_len_vlan));
	m->vlan_tci_outer = 0;
	m->tx_offload = 0;
}

/*
 * The usual frames of a burst out of the guest, from its first: read ahead
 * with ids their slots (pk_scan(): @s->in_order), no offload asked (the
 * header's flags and gso_type zero: its other fields then mean nothing),
 * each whole in one of @pkts, taken raw from the pool (pk_mbuf_init()).
 * What dequeue_one() does for such a frame, without the chain. @return how
 * many it took, from pkts[0] on; the first it did not take is the general
 * loop's.
 */
static __rte_always_inline uint16_t
pk_rx_simple(const struct hv_vhost_port *port, struct hv_vring *vr, struct rte_mbuf **pkts,
	     const struct pk_seen *s, uint16_t n)
{
	const uint32_t hdr_size = port->hdr_size;
	const uint16_t headroom = pk_headroom(port->mp);
	/* a fresh mbuf's tailroom */
	const uint32_t room = rte_pktmbuf_data_room_size(port->mp) - headroom;
	const uint64_t rearm = pk_mbuf_rearm(headroom);
	uint64_t bytes = 0;
	uint16_t i;

	/* room - RTE_ETHER_HDR_LEN below must not wrap: no frame fits such a pool */
	if (unlikely(room < RTE_ETHER_HDR_LEN))
		return 0;
	n = RTE_MIN(n, s->in_order);
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		const uint8_t *base = s->base[i];
		const uint32_t len = s->len[i] - hdr_size;
		uint16_t asked;

		/* an Ethernet header to room bytes: one test, shorter wraps to above */
		if (unlikely(len - RTE_ETHER_HDR_LEN > room - RTE_ETHER_HDR_LEN))
			break;
		/* flags and gso_type, read once */
		memcpy(&asked, base, sizeof(asked));
		if (unlikely(asked != 0))
			break;
		if (likely(len - 32 <= 32))
			copy_32_to_64((uint8_t *)m->buf_addr + headroom, base + hdr_size, len);
		else
			pk_copy_from_guest((uint8_t *)m->buf_addr + headroom, base + hdr_size, len);
		pk_mbuf_init(m, rearm, len);
		bytes += len;
	}
	vr->stats.bytes += bytes;
	return i;
}

/*
 * @n mbufs for a burst out of the guest. Raw where pk_rx_simple() may fill
 * them (@raw set: the caller resets those it does not), reset where the
 * pool pins external buffers (rte_pktmbuf_reset() keeps their flag).
 */
static inline int
pk_rx_mbufs(struct rte_mempool *mp, struct rte_mbuf **pkts, uint16_t n, bool *raw)
{
	*raw = !(rte_pktmbuf_priv_flags(mp) & RTE_PKTMBUF_POOL_F_PINNED_EXT_BUF);
	if (*raw)
		return rte_mempool_get_bulk(mp, (void **)pkts, n);
	return rte_pktmbuf_alloc_bulk(mp, pkts, n);
}

/*
 * Start claiming the two lines of each of the @n raw mbufs of a burst out
 * of the guest that pk_mbuf_init() stores into (tx_offload is in the
 * second), back to back, so that their misses overlap instead of each
 * frame's stores waiting for their own: what rte_pktmbuf_alloc_bulk()'s
 * resets did up front (without the second line's, 9 % fewer frames/s in
 * turns). Their data lines are not claimed: the pool's cache hands back the
 * mbufs freed last, whose frames this core copied out moments ago.
 */
static inline void
pk_rx_prefetch_mbufs(struct rte_mbuf *const *pkts, uint16_t n, bool raw)
{
	if (!raw)
		return;
	for (uint16_t i = 0; i < n; i++) {
		prefetch_for_write(pkts[i]);
		prefetch_for_write((const uint8_t *)pkts[i] + RTE_CACHE_LINE_SIZE);
	}
}

/* ---- into the guest's RX ring ---- */

/*
 * The used descriptors of entries @from to @to - 1 of a run of buffers
 * that begins at @start, each's id its slot, @len what was written into
 * each: pointer stores, the flags of the lap kept.
 */
static __rte_always_inline void
pk_used_span(struct hv_vring *vr, struct hv_packed_pos start, const uint32_t *len, uint16_t from,
	     uint16_t to)
{
	/* in registers: the stores into the guest could alias the ring's fields */
	struct vring_packed_desc *const ring = vr->pdesc;
	const uint16_t size = vr->size;
	struct hv_packed_pos at = hv_packed_advance(start, from, size);
	uint16_t flags = pk_used_flags(at.wrap);
	struct vring_packed_desc *d = &ring[at.idx];

	for (uint16_t i = from; i < to; i++) {
		__atomic_store_n(&d->id, at.idx, __ATOMIC_RELAXED);
		__atomic_store_n(&d->len, len[i], __ATOMIC_RELAXED);
		__atomic_store_n(&d->flags, flags, __ATOMIC_RELEASE);
		d++;
		if (unlikely(++at.idx == size)) {
			at.idx = 0;
			d = ring;
			flags ^= HV_PACKED_F_AVAIL | HV_PACKED_F_USED;
		}
	}
}

/*
 * The used descriptors of the @k buffers from @start, each's id its slot,
 * @len what was written into each: the slots of the first one's line last,
 * the first one last of all (pk_used_flush(), which says why).
 */
static __rte_always_inline void
pk_used_run(struct hv_vring *vr, struct hv_packed_pos start, const uint32_t *len, uint16_t k)
{
	const uintptr_t line = pk_desc_line(vr, start.idx);
	uint16_t j = 1;

	while (j < k && pk_desc_line(vr, hv_packed_advance(start, j, vr->size).idx) == line)
		j++;
	pk_used_span(vr, start, len, j, k);
	pk_used_span(vr, start, len, 1, j);
	pk_used_store(vr, start, start.idx, len[0]);
}

/* The net header of a frame without offloads, num_buffers 1 (where it has the field). */
static const struct virtio_net_hdr_v1 pk_plain_hdr = {.num_buffers = RTE_LE16(1)};

/* pk_plain_hdr_store()'s store, out of line: the header stays out of the loop's registers. */
static __rte_noinline void
pk_plain_hdr_write(uint8_t *dst, uint32_t hdr_size)
{
	memcpy(dst, &pk_plain_hdr, hdr_size);
}

/*
 * pk_plain_hdr into @dst, a header of @hdr_size bytes (a constant), unless it
 * is there already (as pk_guest_hdr_store(), which it is for this header:
 * compared as words, the header's constants immediates).
 */
static __rte_always_inline void
pk_plain_hdr_store(uint8_t *dst, const uint32_t hdr_size)
{
	uint64_t head;
	bool same;

	memcpy(&head, dst, sizeof(head));
	if (hdr_size == sizeof(pk_plain_hdr)) {
		uint32_t tail, want;

		memcpy(&tail, dst + sizeof(head), sizeof(tail));
		memcpy(&want, (const uint8_t *)&pk_plain_hdr + sizeof(head), sizeof(want));
		same = head == 0 && tail == want;
	} else {
		uint16_t tail;

		memcpy(&tail, dst + sizeof(head), sizeof(tail));
		same = head == 0 && tail == 0;
	}
	if (unlikely(!same))
		pk_plain_hdr_write(dst, hdr_size);
}

/*
 * The usual frames of a burst into the guest, logging off, from its first
 * slot @start: one segment, no offload metadata, each into the next buffer
 * read ahead with its id its slot (pk_scan(): @s->in_order), one
 * descriptor that holds header and frame. What pk_enqueue_simple() does for
 * them, in tight loops: the headers, the copies, then the used descriptors
 * (pk_used_run()); @s->len becomes what each buffer was given. @return how
 * many it took, from pkts[0] on; the first it did not take is the general
 * loop's (pk_enqueue_simple(), pk_enqueue_one()).
 */
static __rte_always_inline uint16_t
pk_tx_simple(struct hv_vring *vr, struct rte_mbuf **pkts, uint16_t n, struct pk_seen *s,
	     struct hv_packed_pos start, const uint32_t hdr_size)
{
	const uint16_t lim = RTE_MIN(n, s->in_order);
	/* a global: a load per frame otherwise, the stores into the guest could change it */
	const uint64_t offload_flag = hv_vhost_vnet_hdr_flag;
	uint64_t bytes = 0;
	uint16_t i;

	for (i = 0; i < lim; i++) {
		const struct rte_mbuf *m = pkts[i];
		uint8_t *base = s->base[i];
		const uint32_t len = m->data_len;

		if (unlikely(m->next != NULL || (m->ol_flags & offload_flag) ||
			     s->len[i] < hdr_size + len))
			break;
		pk_plain_hdr_store(base, hdr_size);
		/* from here on, what the buffer was given: its used descriptor's length */
		s->len[i] = hdr_size + len;
		bytes += len;
	}
	if (i == 0)
		return 0;
	/*
	 * The copies after all the headers, as copy_batch_run() does them: by
	 * then the lines pk_scan() began to claim for writing are this core's,
	 * where stores into lines still on their way would fill the store buffer.
	 */
	for (uint16_t k = 0; k < i; k++) {
		const struct rte_mbuf *m = pkts[k];
		const uint32_t len = m->data_len;
		uint8_t *dst = s->base[k] + hdr_size;

		if (likely(len - 32 <= 32))
			copy_32_to_64(dst, rte_pktmbuf_mtod(m, const uint8_t *), len);
		else
			pk_copy_to_guest(dst, rte_pktmbuf_mtod(m, const uint8_t *), len);
	}
	pk_used_run(vr, start, s->len, i);
	vr->stats.bytes += bytes;
	return i;
}

#endif
