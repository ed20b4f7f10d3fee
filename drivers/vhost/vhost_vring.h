/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Walking a descriptor chain of a split ring. Pure: reads the descriptor table
 * and translates through the memory table, nothing else, so it is unit-tested
 * on synthetic rings and fuzzed.
 */
#ifndef HV_VHOST_VRING_H
#define HV_VHOST_VRING_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_atomic.h>

#include "hv_vhost.h"
#include "vhost_mem.h"
#include "hv_vhost_user.h"

/* Pieces of host memory one chain may map to; Linux uses at most ~20 per frame. */
#define HV_CHAIN_MAX_IOV 128
/* Bytes one chain may describe. */
#define HV_CHAIN_MAX_LEN (UINT32_C(1) << 24)
/* Entries an indirect table may hold (the largest ring size). */
#define HV_VRING_MAX_INDIRECT 32768

struct hv_iov {
	uint8_t *base;
	uint32_t len;
};

struct hv_chain {
	uint16_t head;
	uint16_t n_iov;
	uint32_t len;
	struct hv_iov iov[HV_CHAIN_MAX_IOV];
};

/*
 * Append @len bytes of guest memory at guest-physical @addr to @c, split at
 * region boundaries. @return 0, HV_VHOST_DROP_TOO_LONG (over HV_CHAIN_MAX_LEN
 * in all), HV_VHOST_DROP_BAD_ADDR or HV_VHOST_DROP_TOO_MANY_SEGS.
 */
int hv_chain_add(const struct hv_mem *mem, uint32_t *hint, uint64_t addr, uint32_t len,
		 struct hv_chain *c);

/*
 * Map the chain starting at @head of a descriptor table of @size entries.
 * Every descriptor must be writable (@writable) or read-only (!@writable).
 * @return 0, or the drop reason (enum hv_vhost_drop) that stops it.
 */
int
hv_vring_walk(const struct vring_desc *desc, uint16_t size, const struct hv_mem *mem,
	      uint32_t *hint, uint16_t head, bool writable, bool indirect_ok, struct hv_chain *c);

/*
 * hv_vring_walk() with the common case inline: one direct descriptor lying in
 * the region last hit. Anything else goes through the full walker.
 */
static inline int
hv_vring_walk_fast(const struct vring_desc *desc, uint16_t size, const struct hv_mem *mem,
		   uint32_t *hint, uint16_t head, bool writable, bool indirect_ok,
		   struct hv_chain *c)
{
	const struct hv_mem_region *r;

	if (likely(head < size && *hint < mem->n)) {
		/* each field read once: the guest may rewrite them under us */
		uint64_t addr = __atomic_load_n(&desc[head].addr, __ATOMIC_RELAXED);
		uint32_t len = __atomic_load_n(&desc[head].len, __ATOMIC_RELAXED);
		uint16_t flags = __atomic_load_n(&desc[head].flags, __ATOMIC_RELAXED);
		uint64_t off;

		r = &mem->r[*hint];
		off = addr - r->gpa;
		if (likely(!(flags & (VRING_DESC_F_NEXT | VRING_DESC_F_INDIRECT)) &&
			   !!(flags & VRING_DESC_F_WRITE) == writable && len > 0 && off < r->size &&
			   len <= r->size - off)) {
			c->head = head;
			c->n_iov = 1;
			c->len = len;
			c->iov[0].base = r->hva + off;
			c->iov[0].len = len;
			return len <= HV_CHAIN_MAX_LEN ? 0 : HV_VHOST_DROP_TOO_LONG;
		}
	}
	return hv_vring_walk(desc, size, mem, hint, head, writable, indirect_ok, c);
}

/* Whether a walk error means the ring itself is corrupt (stop it), not one frame. */
static inline bool
hv_vring_error_is_fatal(int reason)
{
	/* No honest driver chains more than ~20 pieces: more is a loop or an attack. */
	return reason == HV_VHOST_DROP_BAD_DESC_INDEX || reason == HV_VHOST_DROP_BAD_CHAIN ||
	       reason == HV_VHOST_DROP_TOO_MANY_SEGS || reason == HV_VHOST_DROP_BAD_INDIRECT ||
	       reason == HV_VHOST_DROP_BAD_ADDR || reason == HV_VHOST_DROP_BAD_DIRECTION;
}

#endif
