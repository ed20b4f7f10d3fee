/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The packed virtqueue (VIRTIO_F_RING_PACKED, virtio 1.2 section 2.8): its
 * descriptor walker, pure (it reads the descriptor ring and translates
 * through the memory table, nothing else: unit-tested on synthetic rings and
 * fuzzed by tests/fuzz/fuzz_packed.c), and the entry points of its data path
 * and ring state (vhost_packed_rxtx.c, vhost_packed_ring.c).
 */
#ifndef HV_VHOST_PACKED_H
#define HV_VHOST_PACKED_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_atomic.h>
#include <rte_branch_prediction.h>

#include "vhost_vring.h"

/* Descriptor flags of the packed ring (the kernel's UAPI gives bit numbers). */
#define HV_PACKED_F_AVAIL ((uint16_t)(1u << VRING_PACKED_DESC_F_AVAIL))
#define HV_PACKED_F_USED ((uint16_t)(1u << VRING_PACKED_DESC_F_USED))
/* Bit 15 of an event offset and of a vring base: the wrap counter. */
#define HV_PACKED_WRAP_BIT ((uint16_t)(1u << VRING_PACKED_EVENT_F_WRAP_CTR))

/* hv_packed_walk(): the descriptor at the position is not available (the ring is empty). */
#define HV_PACKED_EMPTY (-1)

/* A position in the packed ring: slot and the wrap counter it is read with. */
struct hv_packed_pos {
	uint16_t idx;
	bool wrap;
};

/* What a walk found besides the buffers (struct hv_chain). */
struct hv_packed_buf {
	uint16_t id;               /* buffer id: the last ring descriptor's (virtio 1.2, 2.8.6) */
	uint16_t ndesc;            /* ring slots the chain takes (an indirect table takes one) */
	struct hv_packed_pos next; /* the position after the chain */
};

/*
 * Whether descriptor flags @flags say "available" to a reader at wrap
 * counter @wrap: AVAIL equal to it, USED not (one mask and compare).
 */
static inline bool
hv_packed_avail(uint16_t flags, bool wrap)
{
	return (flags & (HV_PACKED_F_AVAIL | HV_PACKED_F_USED)) ==
	       (wrap ? HV_PACKED_F_AVAIL : HV_PACKED_F_USED);
}

/* The position after @p in a ring of @size slots. */
static inline struct hv_packed_pos
hv_packed_next(struct hv_packed_pos p, uint16_t size)
{
	if (unlikely(++p.idx == size)) {
		p.idx = 0;
		p.wrap = !p.wrap;
	}
	return p;
}

/* The position @n slots after @p in a ring of @size slots (@n <= @size). */
static inline struct hv_packed_pos
hv_packed_advance(struct hv_packed_pos p, uint16_t n, uint16_t size)
{
	uint32_t idx = (uint32_t)p.idx + n;

	if (idx >= size) {
		idx -= size;
		p.wrap = !p.wrap;
	}
	p.idx = (uint16_t)idx;
	return p;
}

/*
 * Map the chain whose first descriptor is at @at of a packed descriptor ring
 * of @size slots. Each descriptor is read once: its flags first (acquire:
 * the driver writes them last), then the other fields into a local copy.
 * Checked: every ring descriptor of the chain available under its wrap
 * counter, at most @size of them; the buffer id below @size; every piece
 * writable (@writable) or read-only (in an indirect table a writable piece
 * may be read: see walk_indirect()); an indirect descriptor only when
 * @indirect_ok, alone (no NEXT, not in a chain), its table a whole number of
 * descriptors, at most HV_VRING_MAX_INDIRECT, lying whole in one region of
 * guest memory, no INDIRECT inside it; the pieces in guest memory
 * (hv_mem_gpa()), at most HV_CHAIN_MAX_IOV and HV_CHAIN_MAX_LEN bytes.
 * Writes only @c, @b and the region cache *@hint.
 * @return 0; HV_PACKED_EMPTY when the descriptor at @at is not available;
 *         or the drop reason (enum hv_vhost_drop) that stops the chain.
 */
int hv_packed_walk(const struct vring_packed_desc *ring, uint16_t size, const struct hv_mem *mem,
		   uint32_t *hint, struct hv_packed_pos at, bool writable, bool indirect_ok,
		   struct hv_chain *c, struct hv_packed_buf *b);

/* The common case of a walk: one direct descriptor (hv_packed_one()). */
struct hv_packed_one {
	uint8_t *base; /* its buffer, translated */
	uint32_t len;
	uint16_t id;
	struct hv_packed_pos next; /* the position after it */
};

/* hv_packed_one(): not the common case; hv_packed_walk() decides what it is. */
#define HV_PACKED_NOT_ONE 1

/* A region of guest memory in scalars: what hv_packed_one_in() translates through. */
struct hv_packed_region {
	uint64_t gpa;
	uint64_t size;
	uint8_t *hva;
};

/*
 * The flags a descriptor of hv_packed_one() has, under the mask below:
 * available at wrap counter @wrap, alone, @writable or not. The next lap's
 * are these with HV_PACKED_F_AVAIL and HV_PACKED_F_USED flipped.
 */
static inline uint16_t
hv_packed_one_want(bool wrap, bool writable)
{
	return (uint16_t)((wrap ? HV_PACKED_F_AVAIL : HV_PACKED_F_USED) |
			  (writable ? VRING_DESC_F_WRITE : 0));
}

/* The flags hv_packed_one() looks at. */
#define HV_PACKED_ONE_MASK                                                                         \
	(HV_PACKED_F_AVAIL | HV_PACKED_F_USED | VRING_DESC_F_NEXT | VRING_DESC_F_INDIRECT |        \
	 VRING_DESC_F_WRITE)

/*
 * hv_packed_one() with what a burst keeps in registers: descriptor @d of a
 * ring of @size slots, region @r, the flags wanted @want
 * (hv_packed_one_want()). Sets @o but its next position.
 */
static __rte_always_inline int
hv_packed_one_in(const struct vring_packed_desc *d, uint16_t size, const struct hv_packed_region *r,
		 uint16_t want, struct hv_packed_one *o)
{
	uint16_t flags = __atomic_load_n(&d->flags, __ATOMIC_ACQUIRE);
	uint64_t addr, off;
	uint32_t len;
	uint16_t id;

	if (unlikely((flags & HV_PACKED_ONE_MASK) != want))
		return (flags & (HV_PACKED_F_AVAIL | HV_PACKED_F_USED)) ==
				       (want & (HV_PACKED_F_AVAIL | HV_PACKED_F_USED))
			       ? HV_PACKED_NOT_ONE
			       : HV_PACKED_EMPTY;
	addr = __atomic_load_n(&d->addr, __ATOMIC_RELAXED);
	len = __atomic_load_n(&d->len, __ATOMIC_RELAXED);
	id = __atomic_load_n(&d->id, __ATOMIC_RELAXED);
	off = addr - r->gpa;
	/* len - 1 below the limit: 1 to HV_CHAIN_MAX_LEN bytes */
	if (unlikely(id >= size || len - 1 >= HV_CHAIN_MAX_LEN || off >= r->size ||
		     len > r->size - off))
		return HV_PACKED_NOT_ONE;
	o->base = r->hva + off;
	o->len = len;
	o->id = id;
	return 0;
}

/* The longest buffer hv_packed_run_one() takes in a region of @rsize bytes. */
static inline uint32_t
hv_packed_len_max(uint64_t rsize)
{
	return (uint32_t)RTE_MIN(rsize, (uint64_t)HV_CHAIN_MAX_LEN);
}

/*
 * hv_packed_one_in() for a burst's read-ahead, which keeps the region in
 * scalars and tests the ids of the whole run at once: descriptor @d
 * available and alone as @want says (hv_packed_one_want()), 1 to @len_max
 * bytes (hv_packed_len_max() of @rsize: rsize - len cannot wrap), lying in
 * the region of @rsize bytes at @gpa. The id is read, not tested: below the
 * ring's size is the caller's to check. Each field read once, flags first
 * (acquire). Writes only @off (from @gpa), @len and @id.
 * @return true when the descriptor passes.
 */
static __rte_always_inline bool
hv_packed_run_one(const struct vring_packed_desc *d, uint16_t want, uint64_t gpa, uint64_t rsize,
		  uint32_t len_max, uint64_t *off, uint32_t *len, uint16_t *id)
{
	const uint16_t flags = __atomic_load_n(&d->flags, __ATOMIC_ACQUIRE);

	if (unlikely((flags & HV_PACKED_ONE_MASK) != want))
		return false;
	*off = __atomic_load_n(&d->addr, __ATOMIC_RELAXED) - gpa;
	*len = __atomic_load_n(&d->len, __ATOMIC_RELAXED);
	*id = __atomic_load_n(&d->id, __ATOMIC_RELAXED);
	return likely(*len - 1 < len_max && *off <= rsize - *len);
}

/*
 * The common case of hv_packed_walk(), inline and in scalars: the
 * descriptor at @at available, alone (no NEXT, no INDIRECT), writable as
 * @writable says, its id below @size, 1 to HV_CHAIN_MAX_LEN bytes lying in
 * the region last hit (*@hint). Each field read once, flags first (acquire:
 * the driver stores them last). Writes only @o.
 * @return 0 with @o set; HV_PACKED_EMPTY when the descriptor is not
 *         available; HV_PACKED_NOT_ONE for anything else (the full walker's).
 */
static __rte_always_inline int
hv_packed_one(const struct vring_packed_desc *ring, uint16_t size, const struct hv_mem *mem,
	      uint32_t hint, struct hv_packed_pos at, bool writable, struct hv_packed_one *o)
{
	const struct hv_mem_region *mr;
	struct hv_packed_region r;
	int rc;

	if (unlikely(at.idx >= size || hint >= mem->n))
		return HV_PACKED_NOT_ONE;
	mr = &mem->r[hint];
	r = (struct hv_packed_region){.gpa = mr->gpa, .size = mr->size, .hva = mr->hva};
	rc = hv_packed_one_in(&ring[at.idx], size, &r, hv_packed_one_want(at.wrap, writable), o);
	if (rc == 0)
		o->next = hv_packed_next(at, size);
	return rc;
}

/*
 * hv_packed_walk() with the common case inline (hv_packed_one()); anything
 * else goes through the full walker, which reads the descriptors again.
 */
static inline int
hv_packed_walk_fast(const struct vring_packed_desc *ring, uint16_t size, const struct hv_mem *mem,
		    uint32_t *hint, struct hv_packed_pos at, bool writable, bool indirect_ok,
		    struct hv_chain *c, struct hv_packed_buf *b)
{
	struct hv_packed_one o;
	int rc = hv_packed_one(ring, size, mem, *hint, at, writable, &o);

	if (likely(rc == 0)) {
		c->head = at.idx;
		c->n_iov = 1;
		c->len = o.len;
		c->iov[0].base = o.base;
		c->iov[0].len = o.len;
		b->id = o.id;
		b->ndesc = 1;
		b->next = o.next;
		return 0;
	}
	if (rc == HV_PACKED_EMPTY)
		return rc;
	return hv_packed_walk(ring, size, mem, hint, at, writable, indirect_ok, c, b);
}

/* Whether a packed walk error means the ring is corrupt (stop it), not one frame. */
static inline bool
hv_packed_error_is_fatal(int reason)
{
	return reason == HV_VHOST_DROP_BAD_ID || hv_vring_error_is_fatal(reason);
}

#endif
