/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Every store the packed ring makes into guest memory goes through one of
 * these: frame bytes and net headers (pk_guest_copy(), pk_guest_copy_batched(),
 * pk_guest_hdr_store()), used descriptors (pk_used_store(), pk_used_hold() and
 * pk_used_flush(), pk_used_flags_store())
 * and the device event area (pk_event_store()).
 *
 * Dirty logging (vhost_log.h), with logging on: frame bytes and headers are
 * logged right after each store, so before the used descriptor that hands
 * them to the guest is published; the functions that store them take
 * @log, a constant of the burst's variant (vhost_packed_tx() tests logging
 * once per burst and runs one of two copies of it, the one without logging
 * free of it). Used descriptors are logged at the end of the burst, after
 * the last flags store into them (vhost_packed_publish_logged()); the event
 * area after its store.
 */
#ifndef HV_VHOST_PACKED_GUEST_H
#define HV_VHOST_PACKED_GUEST_H

#include <string.h>

#include "vhost_internal.h"
#include "vhost_packed.h"
#include "vhost_prefetch.h"

/* Logging on: the pages of [@p, @p + @len), just stored, into the dirty log. */
static inline void
pk_log(struct hv_vhost_port *port, struct hv_vring *vr, const void *p, uint64_t len)
{
	/* the stores before the bits that stand for them */
	rte_atomic_thread_fence(__ATOMIC_RELEASE);
	vr->stats.log_pages += hv_log_write(&port->log, &port->mem, &vr->log_hint, p, len);
}

/* Frame bytes into a guest buffer, now. */
static __rte_always_inline void
pk_guest_copy(struct hv_vhost_port *port, struct hv_vring *vr, const bool log, uint8_t *dst,
	      const uint8_t *src, uint32_t len)
{
	copy_to_guest(dst, src, len);
	if (log)
		pk_log(port, vr, dst, len);
}

/*
 * Frame bytes into a guest buffer, now or at copy_batch_run() (@src must
 * live until then). Logging, now: a page is logged after its bytes are there.
 */
static __rte_always_inline void
pk_guest_copy_batched(struct hv_vhost_port *port, struct hv_vring *vr, const bool log,
		      struct copy_batch *b, uint8_t *dst, const uint8_t *src, uint32_t len)
{
	if (log)
		pk_guest_copy(port, vr, true, dst, src, len);
	else
		copy_to_guest_batched(b, dst, src, len);
}

/*
 * @len bytes of a net header, unless they are there already: a guest that
 * recycles its buffers finds the same header frame after frame, and a store
 * would take the line back from its core (as hdr_store() of the split ring).
 */
static __rte_always_inline void
pk_guest_hdr_store(struct hv_vhost_port *port, struct hv_vring *vr, const bool log, uint8_t *dst,
		   const void *h, uint32_t len)
{
	if (memcmp(dst, h, len) != 0) {
		memcpy(dst, h, len);
		if (log)
			pk_log(port, vr, dst, len);
	}
}

/* The used descriptor's flags word: both bits equal to the used wrap counter. */
static inline uint16_t
pk_used_flags(bool wrap)
{
	return wrap ? (uint16_t)(HV_PACKED_F_AVAIL | HV_PACKED_F_USED) : 0;
}

/* Make slot @idx's used descriptor visible: its flags, after every store before (release). */
static inline void
pk_used_flags_store(struct hv_vring *vr, uint16_t idx, uint16_t flags)
{
	__atomic_store_n(&vr->pdesc[idx].flags, flags, __ATOMIC_RELEASE);
}

/*
 * Write a used descriptor (id, written length) at @at. The first one of a
 * burst keeps its flags until vhost_packed_publish(): the driver reads used
 * descriptors in ring order, so none of the burst is seen before the copies
 * into its buffers are done and num_buffers is right. Logged with the
 * burst's other used slots (vhost_packed_publish_logged()).
 */
static inline void
pk_used_store(struct hv_vring *vr, struct hv_packed_pos at, uint16_t id, uint32_t len)
{
	struct vring_packed_desc *d = &vr->pdesc[at.idx];

	__atomic_store_n(&d->id, id, __ATOMIC_RELAXED);
	__atomic_store_n(&d->len, len, __ATOMIC_RELAXED);
	if (!vr->pk_pending) {
		vr->pk_pending = true;
		vr->pk_pending_idx = at.idx;
		vr->pk_pending_flags = pk_used_flags(at.wrap);
		return;
	}
	pk_used_flags_store(vr, at.idx, pk_used_flags(at.wrap));
}

/* Used descriptors a burst into the guest holds back at most (pk_used_hold()). */
#define PK_USED_HELD_MAX 64

/* Used descriptors of a burst into the guest, in ring order, not written yet. */
struct pk_used_held {
	uint16_t n;
	struct {
		struct hv_packed_pos at;
		uint16_t id;
		uint32_t len;
	} e[PK_USED_HELD_MAX];
};

/* A used descriptor whole, flags last (release): not the first of a burst. */
static __rte_always_inline void
pk_used_put(struct hv_vring *vr, struct hv_packed_pos at, uint16_t id, uint32_t len)
{
	struct vring_packed_desc *d = &vr->pdesc[at.idx];

	__atomic_store_n(&d->id, id, __ATOMIC_RELAXED);
	__atomic_store_n(&d->len, len, __ATOMIC_RELAXED);
	pk_used_flags_store(vr, at.idx, pk_used_flags(at.wrap));
}

/* The cache line that slot @idx of the descriptor ring lies in. */
static inline uintptr_t
pk_desc_line(const struct hv_vring *vr, uint16_t idx)
{
	return (uintptr_t)&vr->pdesc[idx] / RTE_CACHE_LINE_SIZE;
}

/*
 * Write the used descriptors held, the line of the first one last, and that
 * first one last of all (pk_used_store(): the burst's first keeps its flags
 * until vhost_packed_publish()). The driver, waiting for the burst, polls
 * the first one's line: written while it polls, the line would change hands
 * once per descriptor stored into it; the other lines, which it does not
 * read yet, change hands once each. Measured with bench_switch.sh's packed
 * ring (doc/performance.rst): more frames/s than writing each descriptor as
 * its frame was copied.
 */
static __rte_always_inline void
pk_used_flush(struct hv_vring *vr, struct pk_used_held *h)
{
	uint16_t j = 1;

	if (h->n == 0)
		return;
	while (j < h->n && pk_desc_line(vr, h->e[j].at.idx) == pk_desc_line(vr, h->e[0].at.idx))
		j++;
	for (uint16_t i = j; i < h->n; i++)
		pk_used_put(vr, h->e[i].at, h->e[i].id, h->e[i].len);
	for (uint16_t i = 1; i < j; i++)
		pk_used_put(vr, h->e[i].at, h->e[i].id, h->e[i].len);
	pk_used_store(vr, h->e[0].at, h->e[0].id, h->e[0].len);
	h->n = 0;
}

/*
 * Hold a used descriptor (id, written length at @at) of a burst into the
 * guest back until its copies are done (pk_used_flush(), at the end of the
 * burst; earlier for the ones held when PK_USED_HELD_MAX are). The guest
 * sees none of them before the burst ends: the first one's flags go last.
 */
static __rte_always_inline void
pk_used_hold(struct hv_vring *vr, struct pk_used_held *h, struct hv_packed_pos at, uint16_t id,
	     uint32_t len)
{
	if (unlikely(h->n == PK_USED_HELD_MAX))
		pk_used_flush(vr, h);
	h->e[h->n].at = at;
	h->e[h->n].id = id;
	h->e[h->n].len = len;
	h->n++;
}

/*
 * The device event area: which kicks we want (flags, VRING_PACKED_EVENT_FLAG_*).
 * Not per frame: logging is tested here.
 */
static inline void
pk_event_store(struct hv_vhost_port *port, struct hv_vring *vr, uint16_t flags)
{
	__atomic_store_n(&vr->device_event->flags, flags, __ATOMIC_RELAXED);
	if (unlikely(port->log.bits != NULL))
		pk_log(port, vr, &vr->device_event->flags, sizeof(vr->device_event->flags));
}

#endif
