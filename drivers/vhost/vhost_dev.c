/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Ring and device state on the control side: starting, pausing and resetting
 * rings, and the handshake with the data path (see doc/architecture.rst).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/membarrier.h>
#include <poll.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <rte_cycles.h>

#include "vhost_internal.h"

void
vhost_close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

void
vhost_dev_mem_changed(struct hv_vhost_port *port)
{
	__atomic_store_n(&port->mem_stats.mapped_bytes, hv_mem_mapped(&port->mem),
			 __ATOMIC_RELAXED);
	__atomic_store_n(&port->mem_stats.regions, port->mem.n, __ATOMIC_RELAXED);
}

int
hv_vhost_mem_stats(const struct hv_vhost_port *port, struct hv_vhost_mem_stats *out)
{
	const uint64_t *src;
	uint64_t *dst;

	if (port == NULL)
		return -EINVAL;
	/* word by word: each counter has one writer, and 64-bit loads do not tear */
	src = (const uint64_t *)&port->mem_stats;
	dst = (uint64_t *)out;
	for (size_t i = 0; i < sizeof(*out) / sizeof(uint64_t); i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
	out->limit_bytes = port->mem_limit;
	out->fds_closing = vhost_fd_reaping((uint32_t)port->slot);
	return 0;
}

/* ---- ring state transitions (control side) ---- */

bool hv_vhost_asym_fence;

void
vring_heavy_fence(void)
{
	/*
	 * Every running thread of the process passes a full barrier before this
	 * returns: a polling thread either stored busy before it, so we see it,
	 * or loads ready after it, so it sees 0.
	 */
	if (hv_vhost_asym_fence &&
	    syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0)
		return;
	/* unreachable once registered (the command cannot fail then); kept safe */
	rte_atomic_thread_fence(__ATOMIC_SEQ_CST);
}

int
vhost_asym_fence_setup(void)
{
	long cmds = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);

	if (cmds < 0 || !(cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) ||
	    syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) != 0)
		return -1; /* the data path keeps its own fence */
	__atomic_store_n(&hv_vhost_asym_fence, true, __ATOMIC_RELEASE);
	return 0;
}

/* Does nothing: its delivery is what makes a blocked callfd write return. */
static void
call_signal_handler(int sig)
{
	RTE_SET_USED(sig);
}

int
vhost_call_signal_setup(void)
{
	/* no SA_RESTART: the interrupted write must fail, not start again */
	struct sigaction sa = {.sa_handler = call_signal_handler};

	sigemptyset(&sa.sa_mask);
	return sigaction(HV_VHOST_CALL_SIGNAL, &sa, NULL) == 0 ? 0 : -errno;
}

struct vhost_call_watch vhost_call_watch[HV_VHOST_MAX_PORTS][HV_VHOST_MAX_VRINGS];
uint32_t vhost_call_slots;
bool vhost_call_blocked[HV_VHOST_MAX_PORTS];

void
vhost_call_rescue(struct vhost_call_watch *w)
{
	uint64_t since = __atomic_load_n(&w->since, __ATOMIC_ACQUIRE);

	/*
	 * A write that does not block never sees the signal (it is handled
	 * after the write returns), so a late one costs nothing.
	 */
	if (since != 0 && rte_rdtsc() - since > rte_get_tsc_hz() / 1000 * HV_VHOST_CALL_STUCK_MS)
		pthread_kill(__atomic_load_n(&w->thread, __ATOMIC_RELAXED), HV_VHOST_CALL_SIGNAL);
}

void
vhost_call_rescue_all(void)
{
	uint32_t slots = __atomic_load_n(&vhost_call_slots, __ATOMIC_ACQUIRE);

	for (uint32_t s = 0; s < slots && s < HV_VHOST_MAX_PORTS; s++)
		for (unsigned int v = 0; v < HV_VHOST_MAX_VRINGS; v++)
			vhost_call_rescue(&vhost_call_watch[s][v]);
}

void
vhost_dev_watch_calls(struct hv_vhost_port *port)
{
	for (unsigned int i = 0; i < HV_VHOST_MAX_VRINGS; i++)
		port->vr[i].call_watch = &vhost_call_watch[port->slot][i];
}

void
vhost_fd_nonblock(int fd)
{
	int flags = fcntl(fd, F_GETFL);

	if (flags >= 0 && !(flags & O_NONBLOCK))
		(void)fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

uint64_t
hv_vhost_kick_read(int fd)
{
	uint64_t count = 0;
	struct iovec iov = {.iov_base = &count, .iov_len = sizeof(count)};
	struct pollfd pfd = {.fd = fd, .events = POLLIN};

	/*
	 * The frontend shares the fd's file description: it can read the count
	 * between our poll() and read(), and clear O_NONBLOCK. RWF_NOWAIT does
	 * not depend on the description (eventfd has it since Linux 5.12).
	 */
	if (preadv2(fd, &iov, 1, -1, RWF_NOWAIT) == sizeof(count))
		return count;
	if (errno == EAGAIN)
		return 0;
	/*
	 * Kernels before 5.12, or a sandbox that refuses preadv2(): the frontend
	 * can win the race above, if it tries.
	 */
	if (poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLIN) &&
	    read(fd, &count, sizeof(count)) == sizeof(count))
		return count;
	return 0;
}

static void
vring_wait_idle(struct hv_vring *vr)
{
	uint64_t ms = rte_get_tsc_hz() / 1000, next_look = rte_rdtsc() + ms;

	/*
	 * A burst that lasts is stuck in a callfd write a frontend blocked: on
	 * this ring, or on another port's (a burst can keep this one entered
	 * while it sends elsewhere). The control thread, which we may be, cannot
	 * look for it meanwhile: look here, every millisecond.
	 */
	while (__atomic_load_n(&vr->busy, __ATOMIC_ACQUIRE)) {
		uint64_t now = rte_rdtsc();

		if (now >= next_look) {
			if (vr->call_watch != NULL) /* a ring of no port: tests */
				vhost_call_rescue(vr->call_watch);
			vhost_call_rescue_all();
			next_look = now + ms;
		}
		rte_pause();
	}
	/* interrupts owed to the ring as it was are not to be delivered */
	__atomic_fetch_add(&vr->generation, 1, __ATOMIC_RELEASE);
}

void
vring_pause(struct hv_vring *vr)
{
	__atomic_store_n(&vr->ready, 0, __ATOMIC_RELAXED);
	/* Pairs with the fence in vring_enter(): either it sees ready == 0 or we see busy. */
	vring_heavy_fence();
	vring_wait_idle(vr);
}

void
vhost_dev_pause_all(struct hv_vhost_port *port)
{
	/* one fence for all rings: membarrier interrupts every core the process runs on */
	for (unsigned int i = 0; i < HV_VHOST_MAX_VRINGS; i++)
		__atomic_store_n(&port->vr[i].ready, 0, __ATOMIC_RELAXED);
	vring_heavy_fence();
	for (unsigned int i = 0; i < HV_VHOST_MAX_VRINGS; i++)
		vring_wait_idle(&port->vr[i]);
}

void
vhost_dev_start_all(struct hv_vhost_port *port)
{
	for (unsigned int i = 0; i < 2u * port->queue_pairs; i++)
		vring_try_start(port, &port->vr[i]);
}

static size_t
avail_bytes(uint16_t size)
{
	return sizeof(struct vring_avail) + sizeof(uint16_t) * (size + 1u);
}

static size_t
used_bytes(uint16_t size)
{
	return sizeof(struct vring_used) + sizeof(struct vring_used_elem) * size + sizeof(uint16_t);
}

void
vring_try_start(struct hv_vhost_port *port, struct hv_vring *vr)
{
	uint16_t used_idx;

	if (__atomic_load_n(&vr->ready, __ATOMIC_RELAXED))
		return;
	if (port->mem.n == 0 || !vr->num_set || !vr->addr_set || !vr->started || !vr->enabled ||
	    __atomic_load_n(&vr->broken, __ATOMIC_ACQUIRE))
		return;
	if (port->packed) {
		vhost_packed_start(port, vr);
		return;
	}
	/* a size taken while the packed layout was negotiated may not fit a split ring */
	if ((vr->size & (vr->size - 1)) != 0) {
		HV_LOG_RL(&port->ctl_rl, WARNING,
			  "vhost %s: vring %ld of %u slots is no split ring, not started",
			  port->name, (long)(vr - port->vr), vr->size);
		return;
	}
	vr->desc = hv_mem_uva(&port->mem, vr->desc_ua, sizeof(struct vring_desc) * vr->size);
	vr->avail = hv_mem_uva(&port->mem, vr->avail_ua, avail_bytes(vr->size));
	vr->used = hv_mem_uva(&port->mem, vr->used_ua, used_bytes(vr->size));
	if (vr->desc == NULL || vr->avail == NULL || vr->used == NULL) {
		HV_LOG_RL(&port->ctl_rl, WARNING,
			  "vhost %s: vring %ld lies outside guest memory, not started", port->name,
			  (long)(vr - port->vr));
		return;
	}
	if (vr->fresh) {
		/*
		 * A frontend that kept its rings across our restart knows best
		 * what it has consumed: follow the used index.
		 */
		used_idx = __atomic_load_n(&vr->used->idx, __ATOMIC_ACQUIRE);
		if (used_idx != vr->last_used_idx) {
			VHOST_LOG(INFO, port, "vring %ld: base %u, used index %u: resuming at %u",
				  (long)(vr - port->vr), vr->last_used_idx, used_idx, used_idx);
			vr->last_used_idx = used_idx;
			vr->last_avail_idx = used_idx;
		}
		vr->fresh = false;
	}
	vr->mask = vr->size - 1;
	vr->signalled_used_valid = false;
	/* We poll: the guest need not kick (EVENT_IDX drivers ignore this flag). */
	__atomic_store_n(&vr->used->flags, VRING_USED_F_NO_NOTIFY, __ATOMIC_RELAXED);
	if (port->log.bits != NULL)
		vhost_log_used_flags(port, vr);
	__atomic_store_n(&vr->kick_watch, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&vr->ready, 1, __ATOMIC_RELEASE);
}

static void
vring_reset(struct hv_vring *vr)
{
	vring_pause(vr);
	vhost_close_fd(&vr->kickfd);
	vhost_close_fd(&vr->callfd);
	vhost_close_fd(&vr->errfd);
	vr->desc = NULL;
	vr->avail = NULL;
	vr->used = NULL;
	vr->pdesc = NULL;
	vr->driver_event = vr->device_event = NULL;
	vr->size = 0;
	vr->mask = 0;
	vr->last_avail_idx = 0;
	vr->last_used_idx = 0;
	vr->avail_wrap = vr->used_wrap = true; /* a packed ring starts at wrap counter 1 */
	vr->signalled_used_valid = false;
	vr->used_repeats = false;
	__atomic_store_n(&vr->broken, false, __ATOMIC_RELAXED);
	vr->mem_hint = 0;
	vr->log_hint = 0;
	vr->desc_ua = vr->avail_ua = vr->used_ua = 0;
	vr->num_set = vr->addr_set = vr->started = vr->enabled = false;
	vr->fresh = false;
	__atomic_store_n(&vr->kick_watch, 0, __ATOMIC_RELEASE);
}

void
vhost_dev_set_features(struct hv_vhost_port *port, uint64_t features)
{
	port->features = features;
	port->hdr_size = (features & (HV_VHOST_F_VERSION_1 | HV_VHOST_F_MRG_RXBUF))
				 ? sizeof(struct virtio_net_hdr_v1)
				 : sizeof(struct virtio_net_hdr);
	port->mrg_rxbuf = !!(features & HV_VHOST_F_MRG_RXBUF);
	port->event_idx = !!(features & HV_VHOST_F_EVENT_IDX);
	port->indirect = !!(features & HV_VHOST_F_INDIRECT_DESC);
	port->in_order = !!(features & HV_VHOST_F_IN_ORDER);
	vhost_log_features(port, features);
	port->packed = !!(features & HV_VHOST_F_RING_PACKED);
}

void
vhost_dev_init(struct hv_vhost_port *port)
{
	port->mem.n = 0;
	memset(&port->log, 0, sizeof(port->log));
	for (unsigned int i = 0; i < HV_VHOST_MAX_VRINGS; i++) {
		struct hv_vring *vr = &port->vr[i];

		memset(vr, 0, sizeof(*vr));
		vr->kickfd = vr->callfd = vr->errfd = -1;
		vr->avail_wrap = vr->used_wrap = true;
		vhost_borrow_init(vr);
	}
	vhost_dev_watch_calls(port);
	vhost_dev_set_features(port, 0);
	port->protocol_features = 0;
	port->features_set = false;
}

void
vhost_dev_reset(struct hv_vhost_port *port)
{
	for (unsigned int i = 0; i < HV_VHOST_MAX_VRINGS; i++)
		vring_reset(&port->vr[i]);
	hv_mem_clear(&port->mem);
	vhost_dev_mem_changed(port);
	vhost_log_clear(port);
	vhost_dev_set_features(port, 0);
	port->protocol_features = 0;
	port->features_set = false;
}

void
vhost_dev_drain_kicks(struct hv_vhost_port *port)
{
	for (unsigned int i = 0; i < HV_VHOST_MAX_VRINGS; i++) {
		struct hv_vring *vr = &port->vr[i];
		uint64_t count;

		/* a sleeping polling thread waits on it: its count is that thread's */
		if (vr->kickfd < 0 || __atomic_load_n(&vr->kick_watch, __ATOMIC_ACQUIRE))
			continue;
		/* eventfd: a read returns the kicks counted since the last one */
		count = hv_vhost_kick_read(vr->kickfd);
		if (count > 0)
			__atomic_fetch_add(&vr->kicks, count, __ATOMIC_RELAXED);
	}
}
