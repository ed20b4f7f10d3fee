/* SPDX-License-Identifier: BSD-3-Clause */
/* Walking a descriptor chain of a packed ring: pure (see vhost_packed.h). */
#include <string.h>

#include <rte_atomic.h>

#include "vhost_packed.h"

/* Read a ring descriptor once: flags first (acquire), then the rest into @d. */
static inline void
ring_desc_read(const struct vring_packed_desc *ring, uint16_t idx, struct vring_packed_desc *d)
{
	d->flags = __atomic_load_n(&ring[idx].flags, __ATOMIC_ACQUIRE);
	d->addr = __atomic_load_n(&ring[idx].addr, __ATOMIC_RELAXED);
	d->len = __atomic_load_n(&ring[idx].len, __ATOMIC_RELAXED);
	d->id = __atomic_load_n(&ring[idx].id, __ATOMIC_RELAXED);
}

/*
 * An indirect table: entries one after another, of which only WRITE counts
 * (virtio 1.2, 2.8.19); NEXT and the id are ignored, INDIRECT is refused.
 */
static int
walk_indirect(const struct hv_mem *mem, uint32_t *hint, const struct vring_packed_desc *rd,
	      bool writable, struct hv_chain *c)
{
	const struct vring_packed_desc *table;
	uint64_t len = rd->len;
	uint32_t n;
	int rc;

	if (rd->len == 0 || rd->len % sizeof(struct vring_packed_desc) != 0 ||
	    rd->len / sizeof(struct vring_packed_desc) > HV_VRING_MAX_INDIRECT)
		return HV_VHOST_DROP_BAD_INDIRECT;
	/* the whole table in one region: read through one mapping */
	table = hv_mem_gpa(mem, hint, rd->addr, &len);
	if (table == NULL || len != rd->len)
		return HV_VHOST_DROP_BAD_INDIRECT;
	n = rd->len / sizeof(struct vring_packed_desc);
	for (uint32_t i = 0; i < n; i++) {
		struct vring_packed_desc d;

		/* one copy: the guest may rewrite its table while we look */
		memcpy(&d, &table[i], sizeof(d));
		rte_compiler_barrier();
		if (d.flags & VRING_DESC_F_INDIRECT)
			return HV_VHOST_DROP_BAD_INDIRECT;
		/*
		 * Only a read-only piece in a chain we write to is refused. DPDK's
		 * virtio PMD (22.11) marks every entry of its packed indirect
		 * tables writable, the TX header's too; reading a piece the guest
		 * called writable harms nobody.
		 */
		if (writable && !(d.flags & VRING_DESC_F_WRITE))
			return HV_VHOST_DROP_BAD_DIRECTION;
		rc = hv_chain_add(mem, hint, d.addr, d.len, c);
		if (rc != 0)
			return rc;
	}
	return 0;
}

int
hv_packed_walk(const struct vring_packed_desc *ring, uint16_t size, const struct hv_mem *mem,
	       uint32_t *hint, struct hv_packed_pos at, bool writable, bool indirect_ok,
	       struct hv_chain *c, struct hv_packed_buf *b)
{
	struct hv_packed_pos p = at;
	struct vring_packed_desc d;
	int rc;

	c->head = at.idx;
	c->n_iov = 0;
	c->len = 0;
	b->id = 0;
	b->ndesc = 0;
	b->next = at;
	if (at.idx >= size)
		return HV_VHOST_DROP_BAD_DESC_INDEX;
	for (;;) {
		ring_desc_read(ring, p.idx, &d);
		if (!hv_packed_avail(d.flags, p.wrap))
			/*
			 * The head: nothing there yet. Further on: the driver
			 * writes a chain's descriptors before its head's flags,
			 * so a chain whose next is not available is corrupt.
			 */
			return b->ndesc == 0 ? HV_PACKED_EMPTY : HV_VHOST_DROP_BAD_CHAIN;
		b->ndesc++;
		p = hv_packed_advance(p, 1, size);
		if (d.flags & VRING_DESC_F_INDIRECT) {
			/* alone: neither chained on nor reached by a chain (2.8.19) */
			if (!indirect_ok || b->ndesc != 1 || (d.flags & VRING_DESC_F_NEXT))
				return HV_VHOST_DROP_BAD_INDIRECT;
			rc = walk_indirect(mem, hint, &d, writable, c);
		} else if (!!(d.flags & VRING_DESC_F_WRITE) != writable) {
			rc = HV_VHOST_DROP_BAD_DIRECTION;
		} else {
			rc = hv_chain_add(mem, hint, d.addr, d.len, c);
		}
		if (rc != 0)
			return rc;
		if (!(d.flags & VRING_DESC_F_NEXT))
			break;
		/* a chain of more descriptors than the ring has slots laps itself */
		if (b->ndesc == size)
			return HV_VHOST_DROP_BAD_CHAIN;
	}
	if (d.id >= size)
		return HV_VHOST_DROP_BAD_ID;
	b->id = d.id;
	b->next = p;
	return 0;
}
