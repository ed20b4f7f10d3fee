/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * State of a packed ring around its bursts: starting it, its base for
 * GET/SET_VRING_BASE, publishing used descriptors, and the event suppression
 * areas (virtio 1.2, 2.8.14): whether the guest wants an interrupt, whether
 * it should kick.
 */
#include <errno.h>

#include <rte_atomic.h>

#include "vhost_internal.h"
#include "vhost_packed.h"
#include "vhost_packed_guest.h"

/* bits 0-14 of a base: the slot; bit 15: the wrap counter */
#define BASE_IDX_MASK 0x7fffu

void
vhost_packed_start(struct hv_vhost_port *port, struct hv_vring *vr)
{
	long v = (long)(vr - port->vr);

	vr->pdesc = hv_mem_uva(&port->mem, vr->desc_ua,
			       sizeof(struct vring_packed_desc) * (uint64_t)vr->size);
	vr->driver_event =
		hv_mem_uva(&port->mem, vr->avail_ua, sizeof(struct vring_packed_desc_event));
	vr->device_event =
		hv_mem_uva(&port->mem, vr->used_ua, sizeof(struct vring_packed_desc_event));
	if (vr->pdesc == NULL || vr->driver_event == NULL || vr->device_event == NULL) {
		HV_LOG_RL(&port->ctl_rl, WARNING,
			  "vhost %s: vring %ld lies outside guest memory, not started", port->name,
			  v);
		return;
	}
	/* the event areas are 4-byte aligned (virtio 1.2, 2.8.10.1) */
	if ((vr->avail_ua & 3) || (vr->used_ua & 3)) {
		HV_LOG_RL(&port->ctl_rl, WARNING,
			  "vhost %s: vring %ld event areas misaligned, not started", port->name, v);
		return;
	}
	if (vr->last_avail_idx >= vr->size || vr->last_used_idx >= vr->size) {
		HV_LOG_RL(&port->ctl_rl, WARNING,
			  "vhost %s: vring %ld base %u beyond its %u slots, not started",
			  port->name, v, vr->last_avail_idx, vr->size);
		return;
	}
	vr->fresh = false;
	vr->signalled_used_valid = false;
	vr->pk_pending = false;
	vr->pk_unsignalled = 0;
	memset(vr->pk_inflight, 0, sizeof(vr->pk_inflight));
	/* We poll: the guest need not kick. */
	pk_event_store(port, vr, VRING_PACKED_EVENT_FLAG_DISABLE);
	__atomic_store_n(&vr->kick_watch, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&vr->ready, 1, __ATOMIC_RELEASE);
}

int
vhost_packed_set_base(struct hv_vhost_port *port, struct hv_vring *vr, uint32_t base)
{
	uint16_t avail = (uint16_t)base, used = (uint16_t)(base >> 16);

	/*
	 * Bits 16-31, the used slot, are 0 from frontends that send only the
	 * avail half, and equal it at rest. Resume where the avail half says,
	 * as DPDK's vhost library does.
	 */
	if (used != 0 && used != avail)
		VHOST_LOG(WARNING, port, "vring base 0x%x: used half differs, resuming at 0x%x",
			  base, avail);
	vring_pause(vr);
	vr->last_avail_idx = vr->last_used_idx = avail & BASE_IDX_MASK;
	vr->avail_wrap = vr->used_wrap = !!(avail & HV_PACKED_WRAP_BIT);
	vr->fresh = true;
	__atomic_store_n(&vr->broken, false, __ATOMIC_RELAXED);
	vring_try_start(port, vr);
	return 0;
}

uint32_t
vhost_packed_get_base(const struct hv_vring *vr)
{
	uint32_t avail = vr->last_avail_idx | (vr->avail_wrap ? HV_PACKED_WRAP_BIT : 0);
	uint32_t used = vr->last_used_idx | (vr->used_wrap ? HV_PACKED_WRAP_BIT : 0);

	return avail | used << 16;
}

void
vhost_packed_publish(struct hv_vring *vr, uint16_t entries)
{
	if (vr->pk_pending) {
		pk_used_flags_store(vr, vr->pk_pending_idx, vr->pk_pending_flags);
		vr->pk_pending = false;
	}
	vr->pk_unsignalled += entries;
}

void
vhost_packed_publish_logged(struct hv_vhost_port *port, struct hv_vring *vr, uint16_t entries)
{
	/* a burst takes no more slots than the ring has */
	uint16_t n = RTE_MIN(entries, vr->size);
	uint16_t from = (uint16_t)((vr->last_used_idx + vr->size - n) % vr->size);
	uint16_t first = RTE_MIN(n, (uint16_t)(vr->size - from));
	const struct hv_log *log = &port->log;
	uint32_t set;

	vhost_packed_publish(vr, entries);
	/*
	 * The burst's used slots, after the last store into them (the first
	 * one's flags, just now): set before, a bit could be taken by the
	 * frontend with the page copied before the flags changed it.
	 */
	rte_atomic_thread_fence(__ATOMIC_RELEASE);
	set = hv_log_write(log, &port->mem, &vr->log_hint, &vr->pdesc[from],
			   sizeof(*vr->pdesc) * (uint64_t)first);
	set += hv_log_write(log, &port->mem, &vr->log_hint, vr->pdesc,
			    sizeof(*vr->pdesc) * (uint64_t)(n - first));
	vr->stats.log_pages += set;
	vr->stats.log_syncs++;
}

/* A position as one number, 0 .. 2 * size - 1: slot plus a lap for wrap counter 1. */
static inline uint32_t
lin(uint16_t idx, bool wrap, uint16_t size)
{
	return idx + (wrap ? (uint32_t)size : 0);
}

bool
vhost_packed_wants_irq(const struct hv_vhost_port *port, struct hv_vring *vr, uint32_t entries,
		       bool move_mark)
{
	uint32_t size2 = 2u * vr->size, new, evt, off;
	uint16_t flags, off_wrap;
	bool valid = vr->signalled_used_valid;

	/*
	 * Our used flags must be visible before we read the guest's event
	 * area, or it may re-arm after our read and wait for an interrupt
	 * that never comes (store-load ordering needs a full fence).
	 */
	rte_atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (move_mark) {
		entries = vr->pk_unsignalled;
		vr->pk_unsignalled = 0;
		vr->signalled_used_valid = true;
	}
	flags = __atomic_load_n(&vr->driver_event->flags, __ATOMIC_RELAXED);
	if (flags == VRING_PACKED_EVENT_FLAG_DISABLE)
		return false;
	/* ENABLE, or a value the guest may not use: an interrupt, the safe side */
	if (flags != VRING_PACKED_EVENT_FLAG_DESC || !port->event_idx || !valid)
		return true;
	off_wrap = __atomic_load_n(&vr->driver_event->off_wrap, __ATOMIC_RELAXED);
	off = off_wrap & BASE_IDX_MASK;
	if (off >= vr->size || entries >= size2)
		return true;
	/* the event slot among the last @entries published (vring_need_event()) */
	new = lin(vr->last_used_idx, vr->used_wrap, vr->size);
	evt = lin((uint16_t)off, !!(off_wrap & HV_PACKED_WRAP_BIT), vr->size);
	return (new + size2 - evt - 1) % size2 < entries;
}

void
vhost_packed_notify(struct hv_vhost_port *port, struct hv_vring *vr, bool on)
{
	pk_event_store(port, vr,
		       on ? VRING_PACKED_EVENT_FLAG_ENABLE : VRING_PACKED_EVENT_FLAG_DISABLE);
}

bool
vhost_packed_has_avail(const struct hv_vring *vr)
{
	return hv_packed_avail(
		__atomic_load_n(&vr->pdesc[vr->last_avail_idx].flags, __ATOMIC_ACQUIRE),
		vr->avail_wrap);
}
