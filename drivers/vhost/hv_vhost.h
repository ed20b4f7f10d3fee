/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * hvswitch vhost-user backend: the port driver that serves a guest's virtio-net
 * rings, split or packed (VIRTIO_F_RING_PACKED: the frontend chooses).
 *
 * Control (sockets, vhost-user messages, memory mapping) runs on one control
 * thread started by hv_vhost_init(). The data path (hv_vhost_rx_burst(),
 * hv_vhost_tx_burst()) runs on the caller's thread, typically a PMD lcore; each
 * queue pair must be polled by at most one thread at a time. Everything read
 * from the frontend or from guest memory is untrusted and validated.
 */
#ifndef HV_VHOST_H
#define HV_VHOST_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/virtio_config.h>
#include <linux/virtio_net.h>
#include <linux/virtio_ring.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "hv_offload.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Most queue pairs a port may have. */
#define HV_VHOST_MAX_QUEUE_PAIRS 8
/** Vrings of a port: two per queue pair. */
#define HV_VHOST_MAX_VRINGS (2 * HV_VHOST_MAX_QUEUE_PAIRS)

/**
 * One ring of a queue pair, named by the burst that serves it: the API names
 * a ring by (queue pair, direction), never by a vring index.
 */
enum hv_vhost_dir {
	HV_VHOST_RX, /**< what hv_vhost_rx_burst() reads: the guest's TX ring */
	HV_VHOST_TX, /**< what hv_vhost_tx_burst() fills: the guest's RX ring */
};
/** Longest frame accepted from a guest (a 64 KiB TSO send plus L2 headers). */
#define HV_VHOST_MAX_PKT_LEN (65535 + 18)

/** Virtio feature bits a port can offer (bit numbers: the kernel's UAPI). */
#define HV_VHOST_F_CSUM (UINT64_C(1) << VIRTIO_NET_F_CSUM)
#define HV_VHOST_F_GUEST_CSUM (UINT64_C(1) << VIRTIO_NET_F_GUEST_CSUM)
#define HV_VHOST_F_GUEST_TSO4 (UINT64_C(1) << VIRTIO_NET_F_GUEST_TSO4)
#define HV_VHOST_F_GUEST_TSO6 (UINT64_C(1) << VIRTIO_NET_F_GUEST_TSO6)
#define HV_VHOST_F_HOST_TSO4 (UINT64_C(1) << VIRTIO_NET_F_HOST_TSO4)
#define HV_VHOST_F_HOST_TSO6 (UINT64_C(1) << VIRTIO_NET_F_HOST_TSO6)
#define HV_VHOST_F_MRG_RXBUF (UINT64_C(1) << VIRTIO_NET_F_MRG_RXBUF)
#define HV_VHOST_F_MQ (UINT64_C(1) << VIRTIO_NET_F_MQ)
#define HV_VHOST_F_INDIRECT_DESC (UINT64_C(1) << VIRTIO_RING_F_INDIRECT_DESC)
#define HV_VHOST_F_EVENT_IDX (UINT64_C(1) << VIRTIO_RING_F_EVENT_IDX)
#define HV_VHOST_F_VERSION_1 (UINT64_C(1) << VIRTIO_F_VERSION_1)
#define HV_VHOST_F_IN_ORDER (UINT64_C(1) << VIRTIO_F_IN_ORDER)
/**
 * The guest announces itself (gratuitous ARP, unsolicited NA) when its
 * frontend asks, after a live migration: the switch's FDB then learns its
 * new port from its own frames. Nothing for the backend to do but offer it.
 */
#define HV_VHOST_F_GUEST_ANNOUNCE (UINT64_C(1) << VIRTIO_NET_F_GUEST_ANNOUNCE)
#define HV_VHOST_F_RING_PACKED (UINT64_C(1) << VIRTIO_F_RING_PACKED)

/** Every feature bit the driver can negotiate. */
#define HV_VHOST_FEATURES_SUPPORTED                                                                \
	(HV_VHOST_F_CSUM | HV_VHOST_F_GUEST_CSUM | HV_VHOST_F_GUEST_TSO4 | HV_VHOST_F_GUEST_TSO6 | \
	 HV_VHOST_F_HOST_TSO4 | HV_VHOST_F_HOST_TSO6 | HV_VHOST_F_MRG_RXBUF | HV_VHOST_F_MQ |      \
	 HV_VHOST_F_INDIRECT_DESC | HV_VHOST_F_EVENT_IDX | HV_VHOST_F_VERSION_1 |                  \
	 HV_VHOST_F_IN_ORDER | HV_VHOST_F_GUEST_ANNOUNCE | HV_VHOST_F_RING_PACKED)

/**
 * Offered when a port's configuration leaves features at 0: everything the
 * driver supports, offloads included. Their semantics (validation,
 * segmentation, checksum finishing for receivers that did not agree to them)
 * belong to the switch, which honours them through lib/offload; a user of the
 * driver alone delivers offload metadata only to guests that agreed to it.
 */
#define HV_VHOST_FEATURES_DEFAULT HV_VHOST_FEATURES_SUPPORTED

/** Why a frame or a queue was dropped; the X-macro gives each a counter name. */
#define HV_VHOST_DROP_REASONS(X)                                                                   \
	X(NO_MBUF, "no_mbuf")               /* mbuf pool empty */                                  \
	X(NO_BUFFER, "no_buffer")           /* guest RX ring had no room */                        \
	X(NOT_READY, "not_ready")           /* sent while the ring was not running */              \
	X(TOO_LONG, "too_long")             /* frame over the limit or the buffers */              \
	X(TOO_SHORT, "too_short")           /* chain shorter than the net header */                \
	X(BAD_HEADER, "bad_header")         /* net header asks what was not agreed */              \
	X(TOO_MANY_SEGS, "too_many_segs")   /* chain of more pieces than we walk */                \
	X(BAD_AVAIL_IDX, "bad_avail_idx")   /* avail index moved more than the ring */             \
	X(BAD_DESC_INDEX, "bad_desc_index") /* head or next out of range */                        \
	X(BAD_CHAIN, "bad_chain")           /* chain longer than the ring: a loop */               \
	X(BAD_INDIRECT, "bad_indirect")     /* indirect not agreed, nested, odd size */            \
	X(BAD_ADDR, "bad_addr")             /* buffer outside guest memory */                      \
	X(BAD_DIRECTION, "bad_direction")   /* writable on TX, read-only on RX */                  \
	X(CALL_BLOCKED, "call_blocked")     /* callfd write would block: ring stopped */           \
	X(BAD_ID, "bad_id")                 /* packed: buffer id out of range or in flight */

/** Drop reasons, indices into hv_vhost_vring_stats.drops (0 is no reason: success). */
enum hv_vhost_drop {
	HV_VHOST_DROP__NONE = 0,
#define HV_X(id, name) HV_VHOST_DROP_##id,
	HV_VHOST_DROP_REASONS(HV_X)
#undef HV_X
	HV_VHOST_DROP__MAX
};

/** First valid drop reason, for loops over the counters. */
#define HV_VHOST_DROP__FIRST (HV_VHOST_DROP__NONE + 1)

/** Counter name of a drop reason ("no_mbuf", ...). */
const char *hv_vhost_drop_name(enum hv_vhost_drop reason);

/** Counters of one ring. Written by the polling thread, readable anywhere. */
struct hv_vhost_vring_stats {
	uint64_t packets;         /**< frames moved */
	uint64_t bytes;           /**< their bytes, net header excluded */
	uint64_t kicks;           /**< guest notifications seen on the kick eventfd */
	uint64_t irqs_sent;       /**< callfd writes */
	uint64_t irqs_suppressed; /**< interrupts the guest asked not to get */
	uint64_t stops;           /**< times the ring was stopped for guest misbehaviour */
	uint64_t borrowed; /**< frames whose tail was lent, not copied (TX ring, @c borrow) */
	/**
	 * live migration: guest pages this ring's bursts marked dirty in the
	 * frontend's log (bits they turned from 0 to 1)
	 */
	uint64_t log_pages;
	uint64_t log_syncs;                 /**< bursts that logged their writes (logging on) */
	uint64_t drops[HV_VHOST_DROP__MAX]; /**< frames (or rings) dropped, by reason */
};

/**
 * Guest memory one port may map, by default: a large guest's. A frontend
 * chooses the files behind its regions, which may be sparse, and every page
 * of them the switch touches is allocated then, and counted to the switch
 * (its RSS and its memory cgroup): the limit bounds what one port can cost.
 * Set it to the memory of the largest guest a port serves (plus 1 GiB per
 * region beyond the first when guests use 1 GiB huge pages: regions are
 * mapped in whole pages).
 */
#define HV_VHOST_MEM_LIMIT_DEFAULT (UINT64_C(64) << 30)
/** The highest a port's guest memory limit may be set: 1 TiB. */
#define HV_VHOST_MEM_LIMIT_MAX (UINT64_C(1) << 40)

/** Socket role of a port. */
enum hv_vhost_mode {
	HV_VHOST_SERVER, /**< we listen; the frontend connects */
	HV_VHOST_CLIENT, /**< we connect, and reconnect with back-off */
};

/** Configuration of a port. */
struct hv_vhost_port_conf {
	const char *name;        /**< for logs */
	const char *path;        /**< unix socket path */
	enum hv_vhost_mode mode; /**< server or client */
	uint16_t queue_pairs;    /**< 1..HV_VHOST_MAX_QUEUE_PAIRS */
	uint64_t features;       /**< offered; 0 means HV_VHOST_FEATURES_DEFAULT */
	struct rte_mempool *mp;  /**< mbufs for frames from the guest */
	/**
	 * Frames longer than one mbuf of @p mp keep their tail in guest memory
	 * (see hv_vhost_rx_burst()): one copy fewer for a 64 KiB TSO send. The
	 * caller must then call hv_vhost_rx_done() after every receive burst.
	 */
	bool borrow;
	/**
	 * Most guest memory mapped for the port, in bytes, summed over its
	 * regions (whole file blocks); 0 means HV_VHOST_MEM_LIMIT_DEFAULT, at
	 * most HV_VHOST_MEM_LIMIT_MAX. A region or table over it is refused
	 * and the frontend dropped (hv_vhost_mem_stats.over_limit).
	 */
	uint64_t mem_limit;
	/**
	 * Server mode: who may connect. The socket file is given these before
	 * it listens, so nobody connects under the umask's mode in between.
	 * sock_perm: permission bits (at most 0777), 0: as the umask leaves
	 * them. sock_chown: chown(2) it to sock_uid and sock_gid, where
	 * (uid_t)-1 and (gid_t)-1 keep the process's. Ignored in client mode.
	 */
	mode_t sock_perm;
	bool sock_chown;
	uid_t sock_uid;
	gid_t sock_gid;
};

struct hv_vhost_port;

/** Guest memory of a port and what its frontend had refused. Readable anywhere. */
struct hv_vhost_mem_stats {
	uint64_t limit_bytes;  /**< the port's limit (hv_vhost_port_conf.mem_limit) */
	uint64_t mapped_bytes; /**< guest memory mapped now, in whole file blocks */
	uint64_t regions;      /**< regions mapped now */
	uint64_t over_limit;   /**< regions or tables refused: over the limit */
	uint64_t not_memfs;    /**< regions refused: file not on a memory file system */
	/**
	 * fds of a kind no message takes (neither an eventfd nor a file on a
	 * memory file system): each cost the frontend its connection, and
	 * was closed by a thread that may wait for it
	 */
	uint64_t fds_refused;
	/** of those, not closed yet: the port takes no frontend until they are */
	uint64_t fds_closing;
	/** bytes of the dirty log of live migration mapped now (0: none) */
	uint64_t log_bytes;
};

/**
 * Guest memory counters of @p port.
 * @return 0, or -EINVAL when @p port is NULL.
 */
int hv_vhost_mem_stats(const struct hv_vhost_port *port, struct hv_vhost_mem_stats *out);

/**
 * fds of unknown kind the driver could not hand to its closing thread and
 * kept open (0 unless the thread could not be started): process-wide.
 */
uint64_t hv_vhost_fds_leaked(void);

/**
 * @name Signals (flags of hv_vhost_init())
 *
 * The driver installs no signal handler unless the application asks for it.
 * Two signals matter to it:
 *
 * - SIGBUS: a frontend may shrink the file behind guest memory after the
 *   driver mapped it (a memfd without F_SEAL_SHRINK, a hugetlbfs file); the
 *   next access by the data path or the control thread raises SIGBUS. With
 *   HV_VHOST_INIT_SIGBUS_GUARD the driver's handler puts zeroed memory in
 *   place of the lost region (the access completes, the ring stops) and drops
 *   that frontend; any other SIGBUS goes to the handler installed before
 *   hv_vhost_init(), or the default action. Without it, such a frontend
 *   kills the process.
 * - HV_VHOST_CALL_SIGNAL (SIGURG): a frontend can make the data path's write
 *   to a call eventfd block (a counter kept near its maximum). The control
 *   thread then sends this signal to the blocked thread so that the write
 *   fails with EINTR and the ring is stopped. HV_VHOST_INIT_CALL_SIGNAL
 *   installs a handler that does nothing, without SA_RESTART. Without a
 *   handler, SIGURG is ignored, the signal does not interrupt the write, and
 *   a hostile frontend can hang the polling thread and every port on it.
 *
 * An application that owns its signals passes neither flag and chains:
 * its SIGBUS handler (SA_SIGINFO) calls hv_vhost_sigbus_recover() first and
 * returns when that returns true; its HV_VHOST_CALL_SIGNAL handler must be
 * installed without SA_RESTART and must not be SIG_IGN or SIG_DFL (it may do
 * anything else, including nothing).
 * @{
 */
/** Install the driver's SIGBUS handler (see above). */
#define HV_VHOST_INIT_SIGBUS_GUARD (1u << 0)
/** Install the driver's handler of HV_VHOST_CALL_SIGNAL (see above). */
#define HV_VHOST_INIT_CALL_SIGNAL (1u << 1)
/** Both: what an application that leaves these signals to the driver passes. */
#define HV_VHOST_INIT_SIGNALS (HV_VHOST_INIT_SIGBUS_GUARD | HV_VHOST_INIT_CALL_SIGNAL)
/** The signal that cuts short a blocked callfd write. */
#define HV_VHOST_CALL_SIGNAL SIGURG
/** @} */

/**
 * For an application's own SIGBUS handler (async-signal-safe): when @p si is
 * a fault in guest memory mapped by this driver, replace the lost region
 * with zeroed memory, flag its port for disconnection and return true (the
 * faulting access can be retried: return from the handler). False: not ours.
 */
bool hv_vhost_sigbus_recover(const siginfo_t *si);

/**
 * Start the control thread. Call once, from one thread, after rte_eal_init().
 * @param flags 0, or HV_VHOST_INIT_* signal flags: which process-wide signal
 *        handlers the driver installs (see "Signals" above).
 * @return 0, or a negative errno (-EINVAL: unknown flag; -EALREADY).
 */
int hv_vhost_init(unsigned int flags);

/** Stop the control thread. Every port must have been destroyed. */
void hv_vhost_fini(void);

/**
 * Create a port and start listening (server) or connecting (client).
 * @return the port, or NULL with rte_errno set (EINVAL: bad configuration;
 *         EADDRINUSE: socket path in use; ENOMEM).
 */
struct hv_vhost_port *hv_vhost_port_create(const struct hv_vhost_port_conf *conf);

/**
 * Disconnect the frontend, close and unlink the socket, free the port. No
 * thread may be inside a burst call on this port (stop polling first).
 */
void hv_vhost_port_destroy(struct hv_vhost_port *port);

/**
 * Receive frames the guest transmitted on queue pair @p qp (its TX ring).
 * Offload fields of the guest's net header are kept in the mbuf (see
 * hv_vhost_mbuf_vnet_hdr()).
 *
 * On a port created with @c borrow, a frame longer than the first mbuf's room
 * is copied only that far (every header the switch reads or writes, offload
 * fields included, lies there, else the frame is copied whole); the rest is
 * chained as external buffers pointing into guest memory
 * (hv_vhost_mbuf_borrows()). The guest gets the burst's buffers back, and the
 * ring may be stopped, only in hv_vhost_rx_done(): until then the borrowed
 * segments are read-only (the first mbuf is the caller's), and a frame must be
 * copied (rte_pktmbuf_copy()) before anything keeps it. Frames are borrowed
 * only in up to twice as many pieces as a copy would take mbufs.
 * @return frames stored in @p pkts (0 when the ring is not running).
 */
uint16_t
hv_vhost_rx_burst(struct hv_vhost_port *port, uint16_t qp, struct rte_mbuf **pkts, uint16_t n);

/**
 * End a receive burst of queue pair @p qp: return the buffers its frames
 * borrowed to the guest. Every mbuf of the burst that borrows must have been
 * freed. A no-op when the burst borrowed nothing (always, without @c borrow).
 */
void hv_vhost_rx_done(struct hv_vhost_port *port, uint16_t qp);

/**
 * Whether some segment of @p m points into a guest's memory (a borrowed tail
 * from hv_vhost_rx_burst(), or a clone of one): such a frame may not outlive
 * the burst's hv_vhost_rx_done(), nor go to a device that reads it later.
 */
bool hv_vhost_mbuf_borrows(const struct rte_mbuf *m);

/**
 * Copy frames into the guest's RX ring of queue pair @p qp. Takes every mbuf
 * (they are freed): a frame that cannot be delivered (ring full, not running,
 * an offload the guest did not agree to) is dropped and counted by reason.
 * @return frames delivered.
 */
uint16_t
hv_vhost_tx_burst(struct hv_vhost_port *port, uint16_t qp, struct rte_mbuf **pkts, uint16_t n);

/** What a burst did to a vring, told to the interrupt hook. */
struct hv_vhost_irq_event {
	uint16_t entries;   /**< used entries this burst published */
	uint16_t ring_size; /**< entries of the ring */
	/**
	 * The ring's generation: it changes whenever the ring is stopped,
	 * reset or gets another callfd, so an interrupt owed under one
	 * generation is not delivered under the next (hv_vhost_irq_signal()).
	 */
	uint32_t generation;
	/**
	 * Whether the guest asked for an interrupt for these entries when they
	 * were published (NO_INTERRUPT clear, or EVENT_IDX used_event among
	 * them), read after the used index store and a full fence. When it did
	 * not, it was polling and sees them when it re-arms: none is owed.
	 */
	bool wanted;
};

/**
 * Interrupt hook: called by a burst after it returned buffers to ring
 * (@p qp, @p dir), instead of signalling at once. The hook decides when to
 * call hv_vhost_irq_signal() (interrupt moderation builds on this). It runs
 * inside the burst, on the burst's thread: it must not call back into the port.
 */
typedef void hv_vhost_irq_hook_t(void *ctx, struct hv_vhost_port *port, uint16_t qp,
				 enum hv_vhost_dir dir, const struct hv_vhost_irq_event *ev);

/** Install (or with NULL remove) the interrupt hook of a port. */
void hv_vhost_set_irq_hook(struct hv_vhost_port *port, hv_vhost_irq_hook_t *hook, void *ctx);

/** Outcome of hv_vhost_irq_signal(). */
enum hv_vhost_irq_result {
	HV_VHOST_IRQ_SENT,       /**< the callfd was written */
	HV_VHOST_IRQ_SUPPRESSED, /**< the guest asked for none (counted) */
	HV_VHOST_IRQ_GONE,       /**< ring stopped, reset, of another generation, or no callfd */
};

/**
 * Interrupt the guest for ring (@p qp, @p dir) if it wants one (EVENT_IDX used_event, or
 * NO_INTERRUPT, read after a full fence) and the ring is still of
 * @p generation (from struct hv_vhost_irq_event). Call from a thread that
 * may burst on the ring (not concurrently with a burst on it).
 */
enum hv_vhost_irq_result hv_vhost_irq_signal(struct hv_vhost_port *port, uint16_t qp,
					     enum hv_vhost_dir dir, uint32_t generation);

/* ---- idle polling threads: sleeping on the guest's kicks ---- */

/**
 * Ask the guest to kick when it makes buffers available on ring (@p qp,
 * @p dir) (@p on:
 * clear VRING_USED_F_NO_NOTIFY, or with EVENT_IDX set avail_event to the
 * next index; a packed ring: its device event area's flags), or to stop kicking. While on, the control thread leaves the
 * kick eventfd's count to the caller (read it from hv_vhost_kick_fd(), add it
 * with hv_vhost_vring_count_kicks()). From the polling thread, outside bursts.
 * @return 0, -EAGAIN when the ring is not running, -EINVAL when out of range.
 */
int hv_vhost_vring_notify(struct hv_vhost_port *port, uint16_t qp, enum hv_vhost_dir dir, bool on);

/**
 * Whether the guest made buffers available on ring (@p qp, @p dir) that no burst took
 * yet, read after a full fence: after hv_vhost_vring_notify(on) this closes
 * the race with a guest that looked at the flag before we changed it.
 */
bool hv_vhost_vring_has_avail(struct hv_vhost_port *port, uint16_t qp, enum hv_vhost_dir dir);

/**
 * A duplicate of the kick eventfd of ring (@p qp, @p dir) (the caller closes
 * it; it stays valid whatever the frontend does), or -1 if the ring has none.
 */
int hv_vhost_kick_fd(struct hv_vhost_port *port, uint16_t qp, enum hv_vhost_dir dir);

/**
 * Read a kick eventfd's count without ever blocking, whatever mode the
 * frontend (who shares its file description) left it in.
 * @return the count read, 0 when there was none.
 */
uint64_t hv_vhost_kick_read(int fd);

/** Add @p n kicks read from a hv_vhost_kick_fd() to the counter of ring (@p qp, @p dir). */
void hv_vhost_vring_count_kicks(struct hv_vhost_port *port, uint16_t qp, enum hv_vhost_dir dir,
				uint64_t n);

/** Whether a frontend is connected. */
bool hv_vhost_port_connected(const struct hv_vhost_port *port);

/** Whether queue pair @p qp has both rings running. */
bool hv_vhost_queue_ready(const struct hv_vhost_port *port, uint16_t qp);

/** Negotiated virtio features (0 before SET_FEATURES). */
uint64_t hv_vhost_port_features(const struct hv_vhost_port *port);

/** Times a frontend connected to this port. */
uint64_t hv_vhost_port_connections(const struct hv_vhost_port *port);

/**
 * Snapshot of the counters of ring (@p qp, @p dir) (they survive
 * reconnections). Any thread.
 * @return 0, or -EINVAL for a queue pair or direction out of range.
 */
int hv_vhost_vring_stats(const struct hv_vhost_port *port, uint16_t qp, enum hv_vhost_dir dir,
			 struct hv_vhost_vring_stats *out);

/**
 * The net header a frame came with (valid when hv_offload_mbuf_has_hdr(): the
 * guest asked for an offload), or the header hv_vhost_tx_burst() writes for it
 * when the guest agreed to offloads. The metadata is lib/offload's: the
 * switch checks it (hv_offload_check()) before anything relies on it.
 */
struct hv_offload_hdr *hv_vhost_mbuf_vnet_hdr(struct rte_mbuf *m);

#ifdef __cplusplus
}
#endif

#endif
