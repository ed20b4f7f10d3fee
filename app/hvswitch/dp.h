/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The switch's data path, a library of its own (libhv_sw_dp): PMD loops,
 * L2 switching and delivery, over ports reached through their type's ops
 * table. Everything it uses comes in a context (struct sw_dp); it knows no
 * port type, no global, and nothing of the control plane's JSON.
 *
 * Threads: PMD lcores run sw_dp_pmd_main() and read only what is published
 * through atomic pointers (the view, each PMD's queue list) and retired after
 * an RCU grace period (sw_dp.rcu). sw_dp_view_publish() and
 * sw_dp_reassign() run on one control thread at a time (the caller's lock).
 */
#ifndef HV_SW_DP_H
#define HV_SW_DP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_rcu_qsbr.h>
#include <rte_spinlock.h>

#include "hv_fdb.h"
#include "hv_offload.h"

#define SW_MAX_PORTS 256
#define SW_MAX_QUEUES 8
#define SW_MAX_PMDS 32
#define SW_BURST 32
#define SW_NAME_MAX 32
#define SW_VLAN_MAX 4094
/* Port types with per-PMD hooks (sw_dp_register_type()). */
#define SW_DP_MAX_TYPES 4

/* Why the switch dropped a frame (beyond what a port driver counts). */
#define SW_DROP_REASONS(X)                                                                         \
	X(RUNT, "runt")           /* shorter than an Ethernet header */                            \
	X(BAD_SRC, "bad_src")     /* multicast source address */                                   \
	X(VLAN, "vlan")           /* tagged (802.1Q/ad) on an access port */                       \
	X(SAME_PORT, "same_port") /* destination is where it came from */                          \
	X(NO_MBUF, "no_mbuf")     /* no mbuf for a flood copy or a tag */                          \
	X(TX_FULL, "tx_full")     /* the destination did not take it */

enum sw_drop {
#define SW_X(id, name) SW_DROP_##id,
	SW_DROP_REASONS(SW_X)
#undef SW_X
	SW_DROP__MAX
};

const char *sw_drop_name(enum sw_drop d);

/* Counters of one port written by one PMD (no sharing between PMDs). */
struct sw_counters {
	uint64_t rx_packets;
	uint64_t rx_bytes;
	uint64_t tx_packets;
	uint64_t tx_bytes;
	uint64_t drops[SW_DROP__MAX];
	/* as a source: learn requests refused (frames still switched) */
	struct hv_fdb_refused learn_refused;
	/* as a destination: segments, finished checksums, pass-throughs; as a
	 * source: offload requests refused (drops by reason) */
	struct hv_offload_stats off;
} __rte_cache_aligned;

/* Room for a port type's own configuration in struct sw_port_conf (bytes). */
#define SW_PORT_CONF_PRIV 384

struct sw_port_ops;

/*
 * What an operator configures; saved in the config file. The data path reads
 * queues, vlan and trunk; @priv is the type's own configuration, which only
 * its file reads (its control ops parse, save and change it).
 */
struct sw_port_conf {
	char name[SW_NAME_MAX];
	const struct sw_port_ops *type; /* a registered type (sw.h) */
	uint16_t queues;
	uint16_t vlan; /* access VLAN, 0 = the untagged domain */
	bool trunk;    /* carries every VLAN tagged (uplinks) */
	int pmd;       /* pinned PMD index, -1 = round-robin */
	/* the type's own, each type asserting that its struct fits */
	uint8_t priv[SW_PORT_CONF_PRIV] __rte_aligned(16);
};

struct sw_port;
struct sw_pmd;
struct sw_view;
struct sw_port_ctl_ops; /* the control plane's half of a type (sw.h) */

/*
 * A port type: what the switch calls on a port, and the type's own
 * behaviour behind it (as grout's iface_type). Data path members are called
 * per burst or per queue poll, never per frame on the known-unicast path.
 */
struct sw_port_ops {
	const char *type;
	/* ---- control thread ---- */
	int (*open)(struct sw_port *p, char *err, size_t errlen);
	void (*close)(struct sw_port *p);
	bool (*link_up)(const struct sw_port *p);
	/* a peer is attached though the link is not up yet (a vhost-user frontend
	 * whose guest driver has not started the rings); NULL: never */
	bool (*attached)(const struct sw_port *p);
	/* driver-level drops and interrupts, summed over queues */
	void (*driver_counters)(const struct sw_port *p, uint64_t *drops, uint64_t *irqs);
	const struct sw_port_ctl_ops *ctl;

	/* ---- PMD: one poller per queue, tx under txq_lock when shared ---- */
	uint16_t (*rx)(struct sw_port *p, uint16_t q, struct rte_mbuf **pkts, uint16_t n);
	/* after the frames of an rx burst are switched (they may borrow memory till then); NULL: none */
	void (*rx_done)(struct sw_port *p, uint16_t q);
	/* takes every mbuf; returns how many were delivered */
	uint16_t (*tx)(struct sw_port *p, uint16_t q, struct rte_mbuf **pkts, uint16_t n);
	/* the device reads frames after tx returns (a NIC's DMA): nothing borrowed may go */
	bool tx_keeps;
	/* no queue of its own to poll (a tunnel: its frames arrive on its uplink) */
	bool no_rx;
	/* control thread: the port's MAC address and MTU (an underlay for tunnels); NULL: none */
	int (*link_info)(const struct sw_port *p, struct rte_ether_addr *mac, uint16_t *mtu);
	/*
	 * Whether frame @m, received on a port of this type, needs a private
	 * copy before going to a port that keeps it (tx_keeps): its data lies
	 * in memory lent only until rx_done. Asked only for chained frames;
	 * NULL: never.
	 */
	bool (*needs_copy)(const struct rte_mbuf *m);
	/* what the port takes whole (HV_OFFLOAD_CAP_*); asked per offload frame */
	uint32_t (*offload_caps)(const struct sw_port *p);
	/* after every rx poll of queue @q, burst or none (interrupt moderation); NULL: none */
	void (*queue_poll)(struct sw_port *p, uint16_t q);
	/* per-PMD work of the type, for types registered with sw_dp_register_type() */
	void (*pmd_enter)(struct sw_pmd *pmd);
	/* every loop iteration; true while work stays owed (keeps the PMD awake) */
	bool (*pmd_poll)(struct sw_pmd *pmd, const struct sw_view *view);

	/*
	 * Idle sleep on queue @q's wake-ups (NULL sleep_arm: the type cannot
	 * wake a PMD, which keeps spinning).
	 * sleep_ok: nothing owed that must go on time while the PMD sleeps.
	 * sleep_arm: turn the queue's wake-ups on; an fd to wait on (the caller
	 * closes it), or -1 when there is none (nothing to wait for).
	 * sleep_ready: work arrived that no wake-up will announce (came in
	 * before they were turned on).
	 * sleep_disarm: the sleep ended: drain @fd (never waiting); when @p is
	 * not NULL (the queue is still this PMD's) turn wake-ups off and count
	 * what was drained. NULL: the port may be gone, touch only the fd.
	 * sleep_adopt: a PMD took the queue over (the former one may have
	 * slept with wake-ups on).
	 */
	bool (*sleep_ok)(const struct sw_port *p, uint16_t q);
	int (*sleep_arm)(struct sw_port *p, uint16_t q);
	bool (*sleep_ready)(struct sw_port *p, uint16_t q);
	void (*sleep_disarm)(struct sw_port *p, uint16_t q, int fd);
	void (*sleep_adopt)(struct sw_port *p, uint16_t q);
};

struct sw_capture;
struct sw_pmd;
struct sw_view;

/*
 * Frames of a port that are not the switch's to switch (a tunnel's, on its
 * uplink), taken out of each received burst before it is switched: @input
 * consumes those of @pkts[0..n) it wants and returns the others, compacted
 * at the front. Published in sw_port.demux by the control thread, freed
 * after a grace period. On the PMD's thread, once per burst.
 */
struct sw_demux {
	uint16_t (*input)(const struct sw_demux *d, struct sw_pmd *pmd, const struct sw_view *view,
			  struct sw_port *in, struct rte_mbuf **pkts, uint16_t n, uint64_t now_ms);
};

struct sw_port {
	uint16_t idx;
	struct sw_port_conf conf;
	const struct sw_port_ops *ops;
	/* published (atomic pointer) while a capture runs (sw_dp_capture()); NULL: none */
	struct sw_capture *cap;
	/* published (atomic pointer) while tunnels use the port as their uplink; NULL: none */
	struct sw_demux *demux;
	void *priv;      /* the type's own state (its open() sets it) */
	char error[128]; /* why it is not running (configured, but open failed) */
	bool running;
	bool ephemeral;  /* given on the command line: not saved */
	bool txq_shared; /* fewer TX queues than PMDs: TX takes txq_lock */
	/* the counters at the last "stats.clear", subtracted when the control
	 * socket reads them (the PMDs' own counters are never written) */
	struct sw_counters base;
	uint64_t base_drv_drops, base_irqs;
	rte_spinlock_t txq_lock[SW_MAX_QUEUES];
	struct sw_counters cnt[SW_MAX_PMDS];
};

/* The switch as the PMDs see it; replaced whole, freed after a grace period. */
struct sw_view {
	uint16_t n_ports; /* entries of @active */
	uint16_t active[SW_MAX_PORTS];
	struct sw_port *ports[SW_MAX_PORTS]; /* by port index; NULL if none */
};

/* A queue a PMD polls. */
struct sw_rxq {
	struct sw_port *port;
	uint16_t q;
	uint16_t quiet; /* empty polls in a row (its PMD only; pmd.c) */
};

struct sw_rxq_list {
	uint16_t n;
	struct sw_rxq q[];
};

struct sw_l2_ctx;
struct sw_sleeper;
struct sw_dp;

struct sw_pmd {
	unsigned int lcore;
	unsigned int id; /* 0..n_pmds-1, also its RCU thread id */
	struct sw_dp *dp;
	struct sw_rxq_list *rxqs; /* published (atomic pointer) */
	struct sw_l2_ctx *l2;     /* its switching state (this PMD only) */
	uint32_t sleep_us;        /* idle time before it sleeps; 0 = never */
	/* counters (this PMD only) */
	uint64_t total_cycles;
	uint64_t busy_cycles;
	uint64_t packets;
	uint64_t batches;
	uint32_t quiet_rxqs; /* queues of its list polled on every few iterations only */
	/* idle sleep (pmd_sleep.c) */
	struct sw_sleeper *sleeper;
	int wake_fd; /* written when its queue list changes */
	uint64_t sleeps;
	uint64_t wakeups_kick; /* woken by a queue's wake-up */
	uint64_t wakeups_timeout;
	/* idle, but could not sleep (work found, a queue that cannot wake it) */
	uint64_t sleep_aborts;
	uint64_t slept_cycles;
	uint64_t last_wake_ns; /* CLOCK_MONOTONIC when the last sleep ended (wake-up latency) */
} __rte_cache_aligned;

/* The data path's context: what a PMD and the switching step use. */
struct sw_dp {
	struct rte_mempool *mp;   /* flood copies, tags, segments, private copies */
	struct hv_fdb *fdb;       /* learning and lookups (applied by the control thread) */
	struct rte_rcu_qsbr *rcu; /* sw_dp_init() makes it; PMD ids are its thread ids */
	struct sw_view *view;     /* published (atomic pointer) */
	struct sw_pmd *pmds;      /* n_pmds of them, lcore/id/sleep_us set by the caller */
	unsigned int n_pmds;
	uint64_t tsc_per_ms;
	volatile bool stop;
	unsigned int n_types;
	const struct sw_port_ops *types[SW_DP_MAX_TYPES]; /* with pmd_enter/pmd_poll */
};

/*
 * Set up @dp's PMDs (dp->pmds, dp->n_pmds, each with lcore, id and
 * sleep_us) and the RCU state; mp, fdb and tsc_per_ms may follow before the
 * PMDs start. Control thread. 0, or -1 (no memory, no epoll).
 */
int sw_dp_init(struct sw_dp *dp);
/* Free what sw_dp_init() and the publications made; the PMDs have stopped. */
void sw_dp_fini(struct sw_dp *dp);
/* Per-PMD hooks of a port type run by every PMD (before launch). 0, or -1: full. */
int sw_dp_register_type(struct sw_dp *dp, const struct sw_port_ops *ops);
/* A PMD's loop (rte_eal_remote_launch() argument: a struct sw_pmd of @dp). */
int sw_dp_pmd_main(void *pmd);
/* Publish a new view of @ports (SW_MAX_PORTS, by index; running ones only). */
void sw_dp_view_publish(struct sw_dp *dp, struct sw_port *const *ports);
/* Recompute which PMD polls which queue of @ports and publish it. */
void sw_dp_reassign(struct sw_dp *dp, struct sw_port *const *ports);
/* Milliseconds of the TSC, the data path's clock (learning, ageing). */
uint64_t sw_dp_now_ms(const struct sw_dp *dp);

/* ---- switching (l2.c) ---- */
/*
 * Switch a burst received on @in: validate, learn, look up, and deliver
 * through the destinations' tx ops (flushed before return). Consumes every
 * mbuf of @pkts. On @pmd's thread, with @view the one it loaded.
 */
void sw_l2_input(struct sw_pmd *pmd, const struct sw_view *view, struct sw_port *in,
		 struct rte_mbuf **pkts, uint16_t n, uint64_t now_ms);

/*
 * sw_l2_input() for frames that came out of a tunnel: each source is learned
 * with its frame's tag (tags[i], the remote VTEP; hv_fdb_learn_bulk_tag()).
 */
void sw_l2_input_tagged(struct sw_pmd *pmd, const struct sw_view *view, struct sw_port *in,
			struct rte_mbuf **pkts, uint16_t n, uint64_t now_ms, const uint16_t *tags);

/* A PMD's switching state (struct sw_pmd.l2), on NUMA @socket; rte_free() it. */
struct sw_l2_ctx *sw_l2_ctx_alloc(unsigned int socket);

/* ---- packet capture (dp_capture.c; the writer is the control plane's) ---- */
/* sw_capture.dirs, and a copy's direction */
#define SW_CAP_RX 1 /* frames the switch receives from the port */
#define SW_CAP_TX 2 /* frames it delivers to the port */

/* What one PMD counted for a capture (written by that PMD only). */
struct sw_capture_pmd {
	uint64_t captured; /* copies queued for the writer */
	uint64_t dropped;  /* frames not copied: no mbuf, or the writer's ring full */
} __rte_cache_aligned;

/*
 * A running capture of one port, published in sw_port.cap. The PMDs copy
 * the frames of each burst in @dirs (at most @snaplen bytes each, from @mp)
 * into @ring; the writer takes them out. Freed after a grace period.
 */
struct sw_capture {
	struct rte_ring *ring;  /* multi-producer (PMDs), single-consumer (the writer) */
	struct rte_mempool *mp; /* the copies' */
	uint32_t snaplen;
	uint8_t dirs; /* SW_CAP_RX | SW_CAP_TX */
	struct sw_capture_pmd cnt[SW_MAX_PMDS];
};

/* What a copy carries besides the frame (an mbuf dynfield). */
struct sw_capture_meta {
	uint64_t tsc;      /* when the PMD handled its burst */
	uint32_t orig_len; /* the frame's length before snaplen */
	uint16_t queue;    /* the port's queue pair */
	uint8_t dir;       /* SW_CAP_RX or SW_CAP_TX */
};

/* Offset of struct sw_capture_meta in a copy (sw_capture_meta_register()). */
extern int sw_capture_meta_offset;
/* Register the copies' dynfield (idempotent). Control thread. 0, or -1. */
int sw_capture_meta_register(void);

static inline struct sw_capture_meta *
sw_capture_meta(struct rte_mbuf *m)
{
	return RTE_MBUF_DYNFIELD(m, sw_capture_meta_offset, struct sw_capture_meta *);
}

/*
 * Copy the @n frames of a burst of queue @q in direction @dir (SW_CAP_*)
 * into @cap's ring, if @cap wants that direction. Never waits: frames that
 * find no mbuf or no room are counted (cnt[pmd].dropped). On PMD @pmd's
 * thread, once per burst, only while a capture runs.
 */
void sw_dp_capture(struct sw_capture *cap, unsigned int pmd, uint16_t q, struct rte_mbuf **pkts,
		   uint16_t n, uint8_t dir);

/* The capture of @p, or NULL (one load and a predictable branch per burst). */
static inline struct sw_capture *
sw_port_capture(const struct sw_port *p)
{
	return __atomic_load_n(&p->cap, __ATOMIC_ACQUIRE);
}

/* ---- idle PMD sleep (pmd_sleep.c) ---- */
int sw_pmd_sleep_init(struct sw_pmd *pmd);
void sw_pmd_sleep_fini(struct sw_pmd *pmd);
/* Sleep on the wake-ups of @l's queues; false if it could not (go on spinning). */
bool sw_pmd_sleep(struct sw_pmd *pmd, const struct sw_rxq_list *l);
/* Any thread: end @pmd's sleep (its queue list changed). */
void sw_pmd_wake(struct sw_pmd *pmd);
/* A PMD got a new queue list: wake-ups off on its queues (a former owner may have left them on). */
void sw_pmd_sleep_adopt(const struct sw_rxq_list *l);

#endif
