/* SPDX-License-Identifier: BSD-3-Clause */
/* State shared by the files of drivers/vhost; not part of the public API. */
#ifndef HV_VHOST_INTERNAL_H
#define HV_VHOST_INTERNAL_H

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/un.h>

#include <rte_atomic.h>
#include <rte_bitops.h>
#include <rte_common.h>
#include <rte_pause.h>

#include "hv_log.h"
#include "hv_vhost.h"
#include "vhost_log.h"
#include "vhost_mem.h"
#include "hv_vhost_user.h"

/*
 * HV_VHOST_CALL_SIGNAL (hv_vhost.h) interrupts a callfd write the frontend
 * made block: its handler does nothing, so the write fails with EINTR.
 * SIGURG, because nothing else in a switch uses it (it is sent only for a
 * socket's urgent data to an owner set with F_SETOWN).
 */

/*
 * How long a callfd write may take before the control side interrupts it.
 * One that is not blocked returns in microseconds.
 */
#define HV_VHOST_CALL_STUCK_MS 5

/* How long a port takes no frontend after one blocked a callfd write. */
#define HV_VHOST_CALL_BLOCKED_HOLDOFF_MS 1000

/* Ports at once: slots of the control thread's table. */
#define HV_VHOST_MAX_PORTS 1024

/*
 * A callfd write in progress: one entry per ring of each port slot, in memory
 * that outlives the ports, so that the control side can look at them without
 * the control lock (every 10 ms, and from inside a pause that holds it). A
 * line each: the polling threads of different rings write them.
 */
struct vhost_call_watch {
	alignas(RTE_CACHE_LINE_SIZE) uint64_t since; /* TSC the write began, 0: none (atomic) */
	pthread_t thread;                            /* the thread in it (atomic) */
};
extern struct vhost_call_watch vhost_call_watch[HV_VHOST_MAX_PORTS][HV_VHOST_MAX_VRINGS];
/* Slots ever used, plus one (atomic): how far vhost_call_rescue_all() looks. */
extern uint32_t vhost_call_slots;
/*
 * Per port slot: its frontend made a callfd write block (atomic). The data
 * path sets it; the control thread drops the frontend and takes no other
 * until refuse_until_ms, so that it cannot hold the polling thread again and
 * again.
 */
extern bool vhost_call_blocked[HV_VHOST_MAX_PORTS];
/*
 * Per port slot: an access to its guest memory faulted because the frontend
 * shrank the file behind it (atomic; vhost_guard.c). The control thread drops
 * the frontend.
 */
extern bool vhost_mem_lost[HV_VHOST_MAX_PORTS];

/* Largest ring we accept (the virtio spec's maximum for split and packed rings). */
#define HV_VRING_MAX_SIZE 32768

struct hv_vring {
	/* ---- data path (the polling thread) ---- */
	uint32_t ready;      /* 1: the polling thread may use the ring (atomic) */
	uint32_t busy;       /* 1: the polling thread is inside a burst (atomic) */
	uint32_t generation; /* bumped by every pause (atomic): see hv_vhost_irq_event */
	struct vring_desc *desc;
	struct vring_avail *avail;
	struct vring_used *used;
	uint16_t size;
	uint16_t mask;
	uint16_t last_avail_idx;
	uint16_t last_used_idx;
	uint16_t signalled_used;
	bool signalled_used_valid;
	bool broken; /* stopped for guest misbehaviour until the frontend resets it */
	int callfd;
	struct vhost_call_watch *call_watch; /* this ring's entry of vhost_call_watch */
	uint32_t mem_hint;
	uint32_t log_hint;     /* region of the last page logged (vhost_log.h) */
	bool held;             /* a burst borrowed: entered until hv_vhost_rx_done() */
	uint16_t held_entries; /* used entries that burst wrote, published at done */
	bool used_repeats;     /* the last burst into the guest had no used entry to store */
	/*
	 * Shared by every borrowed segment of a burst (and clones of them):
	 * refcnt 1 + one per reference, so back to 1 when nothing borrows. Here,
	 * not in an mbuf, so that it outlives any mbuf pointing at it.
	 */
	struct rte_mbuf_ext_shared_info borrow_shinfo;
	struct hv_vhost_vring_stats stats;
	struct hv_ratelimit log_rl;
	/*
	 * The packed ring (port->packed; desc, avail, used unused): positions
	 * are last_avail_idx and last_used_idx with their wrap counters.
	 */
	struct vring_packed_desc *pdesc;
	struct vring_packed_desc_event *driver_event; /* the guest's: which interrupts it wants */
	struct vring_packed_desc_event *device_event; /* ours: which kicks we want */
	bool avail_wrap;
	bool used_wrap;
	bool pk_pending; /* a used slot's flags wait for the end of the burst */
	uint16_t pk_pending_idx;
	uint16_t pk_pending_flags;
	uint32_t pk_unsignalled; /* used slots published since the last interrupt decision */
	uint64_t pk_inflight[HV_VRING_MAX_SIZE / 64]; /* bit per buffer id taken, not returned */

	/* ---- control thread ---- */
	int kickfd;
	int errfd;
	uint64_t desc_ua;
	uint64_t avail_ua;
	uint64_t used_ua;
	uint16_t base;
	bool num_set;
	bool addr_set;
	bool started; /* kick received */
	bool enabled;
	bool fresh;          /* base just set: check it against the used index at start */
	uint64_t kicks;      /* drained from kickfd by the control thread */
	uint32_t kick_watch; /* 1: a polling thread reads kickfd (atomic) */
} __rte_cache_aligned;

/* A message being assembled from a non-blocking stream socket. */
struct vhost_rxbuf {
	struct vhost_user_msg msg;
	size_t got;
	int fds[VHOST_MEMORY_BASELINE_NREGIONS];
	unsigned int nfds;
};

struct hv_vhost_port {
	/* ---- configuration ---- */
	char name[64];
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	enum hv_vhost_mode mode;
	uint16_t queue_pairs;
	uint64_t offered_features;
	struct rte_mempool *mp;
	bool borrow;        /* long frames keep their tail in guest memory until rx_done */
	uint64_t mem_limit; /* most bytes of guest memory mapped (conf.mem_limit) */

	/* ---- negotiated, read by the data path while rings run ---- */
	uint64_t features;
	uint64_t protocol_features;
	uint16_t hdr_size; /* virtio-net header bytes: 10 or 12 */
	bool mrg_rxbuf;
	bool event_idx;
	bool indirect;
	bool in_order; /* VIRTIO_F_IN_ORDER: one used entry per TX burst */
	bool packed;   /* VIRTIO_F_RING_PACKED: vhost_packed_*.c serve the rings */
	hv_vhost_irq_hook_t *irq_hook;
	void *irq_ctx;
	struct hv_mem mem;
	struct hv_log log; /* dirty log of live migration (vhost_log.c) */

	struct hv_vring vr[HV_VHOST_MAX_VRINGS];

	/* ---- connection (control thread) ---- */
	int slot; /* index in the control thread's port table */
	int listen_fd;
	int conn_fd;
	bool connected;
	bool features_set;
	uint64_t connections;
	uint64_t retry_at_ms; /* client mode: next connect attempt */
	uint32_t retry_delay_ms;
	uint64_t refuse_until_ms; /* takes no frontend before: see vhost_call_blocked */
	bool fd_refused;          /* the frontend sent an fd of no kind we take: drop it */
	/* counters (atomic; mapped_bytes and regions follow mem: vhost_dev_mem_changed()) */
	struct hv_vhost_mem_stats mem_stats;
	struct vhost_rxbuf rx;
	struct hv_ratelimit ctl_rl;
};

/* ---- data path entry and exit: the handshake with the control thread ---- */

/*
 * Set once by hv_vhost_init() when the kernel offers process-wide expedited
 * membarrier: the control side then pays for the store-load fence of the
 * enter/pause handshake with one membarrier() per pause, and the data path
 * needs none. A full fence on every burst would also wait for the previous
 * burst's stores into guest memory to leave the core, one cross-core round
 * trip per call.
 */
extern bool hv_vhost_asym_fence;

/* Data path side of the handshake's store-load fence. */
static inline void
vring_light_fence(void)
{
	if (likely(hv_vhost_asym_fence))
		rte_compiler_barrier();
	else
		rte_atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/* Control side: a full fence on every thread of the process, or on this one. */
void vring_heavy_fence(void);

/*
 * Enter a ring from the polling thread; false when it must not be touched.
 * Inside a burst that borrowed (until hv_vhost_rx_done()) the thread is in
 * already, and entering and leaving again (an interrupt, a kick toggle)
 * must not clear busy: the control thread could unmap what is borrowed.
 */
/*
 * The vring of queue pair @qp in direction @dir (vring 2*qp is the guest's RX
 * ring, 2*qp+1 its TX ring), or NULL when either is out of range: the one
 * place the public (queue pair, direction) becomes a vring index.
 */
static inline struct hv_vring *
vring_qp(struct hv_vhost_port *port, uint16_t qp, enum hv_vhost_dir dir)
{
	if (qp >= port->queue_pairs || (dir != HV_VHOST_RX && dir != HV_VHOST_TX))
		return NULL;
	return &port->vr[2 * qp + (dir == HV_VHOST_RX)];
}

static inline bool
vring_enter(struct hv_vring *vr)
{
	if (unlikely(vr->held))
		return true;
	if (!__atomic_load_n(&vr->ready, __ATOMIC_RELAXED))
		return false;
	__atomic_store_n(&vr->busy, 1, __ATOMIC_RELAXED);
	/* Store busy before loading ready: pairs with vring_heavy_fence() in vring_pause(). */
	vring_light_fence();
	if (likely(__atomic_load_n(&vr->ready, __ATOMIC_ACQUIRE)))
		return true;
	__atomic_store_n(&vr->busy, 0, __ATOMIC_RELEASE);
	return false;
}

static inline void
vring_leave(struct hv_vring *vr)
{
	if (unlikely(vr->held))
		return;
	__atomic_store_n(&vr->busy, 0, __ATOMIC_RELEASE);
}

/* Control thread: stop the data path from using a ring and wait until it has left. */
void vring_pause(struct hv_vring *vr);

/* Control thread: start the ring if everything it needs is there. */
void vring_try_start(struct hv_vhost_port *port, struct hv_vring *vr);

/* Data path: stop a ring the guest corrupted; count and log it. */
void vring_break(struct hv_vhost_port *port, struct hv_vring *vr, enum hv_vhost_drop why);

/*
 * Data path (vhost_irq.c): publish the used index, then interrupt the guest
 * if it wants it, or hand the @entries new ones to the port's irq hook.
 */
void vring_used_done(struct hv_vhost_port *port, struct hv_vring *vr, uint16_t entries);

/* ---- the packed ring (vhost_packed_ring.c, vhost_packed_rxtx.c) ---- */

/* Control thread: map a packed ring's areas, check its base, and start it. */
void vhost_packed_start(struct hv_vhost_port *port, struct hv_vring *vr);
/*
 * Control thread, ring paused: SET_VRING_BASE of a packed ring (bits 0-14 the
 * next avail slot, bit 15 its wrap counter; bits 16-31, the used slot and
 * its wrap counter, equal them at rest). @return 0 or -EINVAL.
 */
int vhost_packed_set_base(struct hv_vhost_port *port, struct hv_vring *vr, uint32_t base);
/* Control thread, ring paused: the state GET_VRING_BASE returns (same layout). */
uint32_t vhost_packed_get_base(const struct hv_vring *vr);
/*
 * Data path: whether the guest wants an interrupt for the used slots
 * published since the last decision (@move_mark: this is the decision), or
 * for the last @entries ones (!@move_mark); a full fence first.
 */
bool vhost_packed_wants_irq(const struct hv_vhost_port *port, struct hv_vring *vr, uint32_t entries,
			    bool move_mark);
/* Data path: make the used descriptors of a burst visible (the withheld flags). */
void vhost_packed_publish(struct hv_vring *vr, uint16_t entries);
/*
 * Data path, logging on: vhost_packed_publish(), then log the last @entries
 * used slots of the ring (ending at last_used_idx), where the burst wrote.
 */
void vhost_packed_publish_logged(struct hv_vhost_port *port, struct hv_vring *vr, uint16_t entries);
/* Polling thread, ring entered: ask for kicks (@on) or not (device event area, logged). */
void vhost_packed_notify(struct hv_vhost_port *port, struct hv_vring *vr, bool on);
/* Polling thread, ring entered: whether the next descriptor is available. */
bool vhost_packed_has_avail(const struct hv_vring *vr);
/* Bursts of a packed ring, ring entered: as hv_vhost_rx_burst()/hv_vhost_tx_burst(). */
uint16_t vhost_packed_rx(struct hv_vhost_port *port, struct hv_vring *vr, struct rte_mbuf **pkts,
			 uint16_t n);
uint16_t vhost_packed_tx(struct hv_vhost_port *port, struct hv_vring *vr, struct rte_mbuf **pkts,
			 uint16_t n);

/* ---- borrowed tails (vhost_borrow.c) ---- */

struct hv_chain;
/*
 * Chain the chain's bytes from iov @i, offset @off, to its end after @last,
 * the last segment of @m, as mbufs pointing into guest memory.
 * @return 0 or HV_VHOST_DROP_NO_MBUF (what was chained stays on @m).
 */
int vhost_borrow_tail(struct hv_vhost_port *port, struct hv_vring *vr, const struct hv_chain *c,
		      uint16_t i, uint32_t off, struct rte_mbuf *m, struct rte_mbuf *last);
/* Set up a vring's shared info for borrowed segments (nothing borrows). */
void vhost_borrow_init(struct hv_vring *vr);
/* At the end of a burst that borrowed: whether something still borrows (a caller's bug). */
bool vhost_borrow_leaked(struct hv_vring *vr);

/* ---- fds of unknown kind (vhost_fd.c) ---- */

/* Whether @fd is an eventfd (its /proc link; nothing is asked of the file). */
bool vhost_fd_is_eventfd(int fd);
/*
 * Close a frontend's fd that no one keeps: at once when it is an eventfd or
 * on a memory file system, otherwise through the reaper thread, counted to
 * port slot @slot until it is closed. Any thread; never blocks.
 * @return true when the fd was of unknown kind (handed to the reaper).
 */
bool vhost_fd_drop(int fd, uint32_t slot);
/* vhost_fd_drop() for @port's frontend: one of unknown kind costs the connection. */
void vhost_port_fd_drop(struct hv_vhost_port *port, int *fd);
/* fds of port slot @slot the reaper has not closed yet. */
uint32_t vhost_fd_reaping(uint32_t slot);

/* ---- device state (vhost_dev.c) ---- */

/* Publish the port's mapped guest memory to its counters (after mem changed). */
void vhost_dev_mem_changed(struct hv_vhost_port *port);

/* Close an fd we hold and mark it gone. */
void vhost_close_fd(int *fd);
/* Pause every ring of a port (control thread). */
void vhost_dev_pause_all(struct hv_vhost_port *port);

/*
 * Install the handler of HV_VHOST_CALL_SIGNAL, with which the control side
 * cuts short a callfd write that blocks (vhost_call_rescue()).
 */
int vhost_call_signal_setup(void);
/* Control side: interrupt a callfd write that has not returned for a while. */
void vhost_call_rescue(struct vhost_call_watch *w);
/* vhost_call_rescue() on every ring of every port slot in use; no lock needed. */
void vhost_call_rescue_all(void);
/* Point a port's rings at their vhost_call_watch entries (its slot is set). */
void vhost_dev_watch_calls(struct hv_vhost_port *port);
/* Put an eventfd the frontend gave us in non-blocking mode (it may undo it). */
void vhost_fd_nonblock(int fd);

/* Register for membarrier() and set hv_vhost_asym_fence; -1 where unavailable. */
int vhost_asym_fence_setup(void);
/* Start every ring of a port that has what it needs. */
void vhost_dev_start_all(struct hv_vhost_port *port);
/* Apply negotiated features (rings paused). */
void vhost_dev_set_features(struct hv_vhost_port *port, uint64_t features);

/* Prepare a port's protocol state; no sockets. */
void vhost_dev_init(struct hv_vhost_port *port);
/* Forget everything the frontend set up: rings stopped, fds closed, memory unmapped. */
void vhost_dev_reset(struct hv_vhost_port *port);
/* Add what each kick eventfd counted to its ring's kicks. */
void vhost_dev_drain_kicks(struct hv_vhost_port *port);

/*
 * Handle one complete message; its fds become the handler's (closed or kept).
 * @reply is filled when one must go back (*reply_len > 0).
 * @return 0, or -1 when the frontend must be disconnected.
 */
int vhost_msg_dispatch(struct hv_vhost_port *port, struct vhost_user_msg *msg, int *fds,
		       unsigned int nfds, struct vhost_user_msg *reply, size_t *reply_len);

/* ---- dirty log of live migration (vhost_log.c) ---- */

/*
 * Data path, with logging on: log the pages of the @entries used entries
 * just written (with the buffers they describe on the guest's receive ring),
 * publish the used index, then log its page. Replaces the plain publish.
 */
void vhost_log_used_done(struct hv_vhost_port *port, struct hv_vring *vr, uint16_t entries);
/* Log the used ring's flags and avail_event (after storing them). @return pages newly set. */
uint32_t vhost_log_used_flags(struct hv_vhost_port *port, struct hv_vring *vr);
/* Control side, rings paused: VHOST_F_LOG_ALL of negotiated @features. */
void vhost_log_features(struct hv_vhost_port *port, uint64_t features);
/*
 * SET_LOG_BASE: map the log from @fd (which stays the caller's), checked as
 * guest memory is, and swap it in with the rings paused.
 * @return 0 or a negative errno (logged).
 */
int vhost_log_set_base(struct hv_vhost_port *port, const struct vhost_user_log *l, int fd);
/* Unmap the log (rings paused). */
void vhost_log_clear(struct hv_vhost_port *port);

/* Name of a request, for logs. */
const char *vhost_msg_name(uint32_t request);

/* ---- logging ---- */
#define VHOST_LOG(level, port, fmt, ...)                                                           \
	HV_LOG(level, "vhost %s: " fmt, (port)->name, ##__VA_ARGS__)

#endif
