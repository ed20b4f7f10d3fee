/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The end of a burst: the used index published, then the guest interrupted
 * if it wants to be (or the interrupt handed to the port's moderation hook).
 * Runs on the polling thread; the callfd write is its one syscall.
 */
#include <errno.h>
#include <unistd.h>

#include <rte_atomic.h>
#include <rte_cycles.h>

#include "vhost_internal.h"

static inline void
used_publish(struct hv_vring *vr)
{
	__atomic_store_n(&vr->used->idx, vr->last_used_idx, __ATOMIC_RELEASE);
}

static inline bool
guest_wants_irq(const struct hv_vhost_port *port, struct hv_vring *vr)
{
	uint16_t old, new;
	bool valid;

	/*
	 * The used index store must be visible before we read the guest's flags,
	 * or the guest may re-arm after our read and wait for an interrupt that
	 * never comes (store-load ordering needs a full fence).
	 */
	if (port->packed)
		return vhost_packed_wants_irq(port, vr, 0, true);
	rte_atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (!port->event_idx)
		return !(__atomic_load_n(&vr->avail->flags, __ATOMIC_RELAXED) &
			 VRING_AVAIL_F_NO_INTERRUPT);
	old = vr->signalled_used;
	valid = vr->signalled_used_valid;
	new = vr->last_used_idx;
	vr->signalled_used = new;
	vr->signalled_used_valid = true;
	if (!valid)
		return true;
	/* used_event sits after the avail ring (virtio 1.2, 2.7.10) */
	uint16_t used_event = __atomic_load_n(&vr->avail->ring[vr->size], __ATOMIC_RELAXED);
	return (uint16_t)(new - used_event - 1) < (uint16_t)(new - old);
}

/*
 * Whether the guest wants an interrupt for the @p entries just published,
 * without moving the EVENT_IDX mark (the moderation hook decides when, and
 * vring_signal() checks again then): the same fence and reads as above.
 */
static inline bool
guest_wants_irq_for(const struct hv_vhost_port *port, struct hv_vring *vr, uint16_t entries)
{
	uint16_t new = vr->last_used_idx, used_event;

	if (port->packed)
		return vhost_packed_wants_irq(port, vr, entries, false);
	rte_atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (!port->event_idx)
		return !(__atomic_load_n(&vr->avail->flags, __ATOMIC_RELAXED) &
			 VRING_AVAIL_F_NO_INTERRUPT);
	if (!vr->signalled_used_valid)
		return true;
	used_event = __atomic_load_n(&vr->avail->ring[vr->size], __ATOMIC_RELAXED);
	return (uint16_t)(new - used_event - 1) < entries;
}

/*
 * Write the callfd. It blocks only if its count is full, which only the
 * frontend can make it (and then put it back in blocking mode): the control
 * side interrupts such a write (vhost_call_rescue()), and it fails with
 * EINTR, or with EAGAIN in non-blocking mode. Either way the ring stops.
 */
static inline ssize_t
call_write(struct hv_vring *vr)
{
	static const uint64_t one = 1;
	struct vhost_call_watch *w = vr->call_watch;
	ssize_t n;

	__atomic_store_n(&w->thread, pthread_self(), __ATOMIC_RELAXED);
	__atomic_store_n(&w->since, rte_rdtsc() | 1, __ATOMIC_RELEASE);
	n = write(vr->callfd, &one, sizeof(one));
	__atomic_store_n(&w->since, 0, __ATOMIC_RELEASE);
	return n;
}

static inline enum hv_vhost_irq_result
vring_signal(struct hv_vhost_port *port, struct hv_vring *vr)
{
	ssize_t n;

	if (vr->callfd < 0)
		return HV_VHOST_IRQ_GONE;
	if (!guest_wants_irq(port, vr)) {
		vr->stats.irqs_suppressed++;
		return HV_VHOST_IRQ_SUPPRESSED;
	}
	n = call_write(vr);
	if (unlikely(n != sizeof(uint64_t))) {
		if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
			vring_break(port, vr, HV_VHOST_DROP_CALL_BLOCKED);
			__atomic_store_n(&vhost_call_blocked[port->slot], true, __ATOMIC_RELEASE);
		}
		return HV_VHOST_IRQ_GONE;
	}
	vr->stats.irqs_sent++;
	return HV_VHOST_IRQ_SENT;
}

void
vring_used_done(struct hv_vhost_port *port, struct hv_vring *vr, uint16_t entries)
{
	/* the one test of logging per burst: off, it costs this branch */
	if (unlikely(port->log.bits != NULL)) {
		if (port->packed)
			vhost_packed_publish_logged(port, vr, entries);
		else
			vhost_log_used_done(port, vr, entries);
	} else if (port->packed) {
		vhost_packed_publish(vr, entries);
	} else {
		used_publish(vr);
	}
	if (port->irq_hook != NULL) {
		struct hv_vhost_irq_event ev = {
			.entries = entries,
			.ring_size = vr->size,
			.generation = __atomic_load_n(&vr->generation, __ATOMIC_RELAXED),
			.wanted = guest_wants_irq_for(port, vr, entries),
		};

		uint16_t v = (uint16_t)(vr - port->vr);

		port->irq_hook(port->irq_ctx, port, v / 2, (v & 1) ? HV_VHOST_RX : HV_VHOST_TX,
			       &ev);
	} else {
		vring_signal(port, vr);
	}
}

enum hv_vhost_irq_result
hv_vhost_irq_signal(struct hv_vhost_port *port, uint16_t qp, enum hv_vhost_dir dir,
		    uint32_t generation)
{
	enum hv_vhost_irq_result res = HV_VHOST_IRQ_GONE;
	struct hv_vring *vr = vring_qp(port, qp, dir);

	if (vr == NULL || !vring_enter(vr))
		return HV_VHOST_IRQ_GONE;
	/* a pause in between bumped it: the ring the interrupt was owed to is gone */
	if (__atomic_load_n(&vr->generation, __ATOMIC_ACQUIRE) == generation)
		res = vring_signal(port, vr);
	vring_leave(vr);
	return res;
}
