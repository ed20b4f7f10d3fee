/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Kicks, for polling threads that sleep: turning the guest's notifications
 * on and off, the last look at a ring before sleeping, and the kick count.
 * Not on the data path of a polling thread that does not sleep.
 */
#include <errno.h>

#include "vhost_internal.h"

static inline uint16_t *
avail_event(struct hv_vring *vr)
{
	/* after the used ring's entries (virtio 1.2, 2.7.10) */
	return (uint16_t *)&vr->used->ring[vr->size];
}

int
hv_vhost_vring_notify(struct hv_vhost_port *port, uint16_t qp, enum hv_vhost_dir dir, bool on)
{
	struct hv_vring *vr = vring_qp(port, qp, dir);

	if (vr == NULL)
		return -EINVAL;
	if (!vring_enter(vr))
		return -EAGAIN;
	if (on)
		__atomic_store_n(&vr->kick_watch, 1, __ATOMIC_RELEASE);
	if (port->packed)
		vhost_packed_notify(port, vr, on);
	else if (port->event_idx)
		/* kick on the next buffer; off: not before the index wraps around */
		__atomic_store_n(avail_event(vr),
				 on ? vr->last_avail_idx : (uint16_t)(vr->last_avail_idx - 1),
				 __ATOMIC_RELAXED);
	if (!port->packed) {
		__atomic_store_n(&vr->used->flags, on ? 0 : VRING_USED_F_NO_NOTIFY,
				 __ATOMIC_RELAXED);
		if (unlikely(port->log.bits != NULL))
			vr->stats.log_pages += vhost_log_used_flags(port, vr);
	}
	if (!on)
		__atomic_store_n(&vr->kick_watch, 0, __ATOMIC_RELEASE);
	vring_leave(vr);
	return 0;
}

bool
hv_vhost_vring_has_avail(struct hv_vhost_port *port, uint16_t qp, enum hv_vhost_dir dir)
{
	struct hv_vring *vr = vring_qp(port, qp, dir);
	bool has;

	if (vr == NULL || !vring_enter(vr))
		return false;
	/* our flag store before the guest's index load: store-load needs a full fence */
	rte_atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (port->packed)
		has = vhost_packed_has_avail(vr);
	else
		has = __atomic_load_n(&vr->avail->idx, __ATOMIC_ACQUIRE) != vr->last_avail_idx;
	vring_leave(vr);
	return has;
}

void
hv_vhost_vring_count_kicks(struct hv_vhost_port *port, uint16_t qp, enum hv_vhost_dir dir,
			   uint64_t n)
{
	struct hv_vring *vr = vring_qp(port, qp, dir);

	if (vr != NULL)
		__atomic_fetch_add(&vr->kicks, n, __ATOMIC_RELAXED);
}
