/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Every store the packed ring makes into guest memory goes through one of
 * these: frame bytes and net headers (pk_guest_copy(), pk_guest_copy_batched(),
 * pk_guest_hdr_store()), used descriptors (pk_used_store(), pk_used_flags_store())
 * and the device event area (pk_event_store()). Whatever must follow each
 * store into guest memory (dirty page logging) belongs here.
 */
#ifndef HV_VHOST_PACKED_GUEST_H
#define HV_VHOST_PACKED_GUEST_H

#include <string.h>

#include "vhost_internal.h"
#include "vhost_packed.h"
#include "vhost_prefetch.h"

/* Frame bytes into a guest buffer, now. */
static inline void
pk_guest_copy(uint8_t *dst, const uint8_t *src, uint32_t len)
{
	copy_to_guest(dst, src, len);
}

/* Frame bytes into a guest buffer, now or at copy_batch_run() (@src must live until then). */
static inline void
pk_guest_copy_batched(struct copy_batch *b, uint8_t *dst, const uint8_t *src, uint32_t len)
{
	copy_to_guest_batched(b, dst, src, len);
}

/*
 * @len bytes of a net header, unless they are there already: a guest that
 * recycles its buffers finds the same header frame after frame, and a store
 * would take the line back from its core (as hdr_store() of the split ring).
 */
static inline void
pk_guest_hdr_store(uint8_t *dst, const void *h, uint32_t len)
{
	if (memcmp(dst, h, len) != 0)
		memcpy(dst, h, len);
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
 * into its buffers are done and num_buffers is right.
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

/* The device event area: which kicks we want (flags, VRING_PACKED_EVENT_FLAG_*). */
static inline void
pk_event_store(struct hv_vring *vr, uint16_t flags)
{
	__atomic_store_n(&vr->device_event->flags, flags, __ATOMIC_RELAXED);
}

#endif
