/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A virtio-user guest that takes RX interrupts: a DPDK net_virtio_user ethdev
 * in rx-interrupt mode, received on a thread of its own that sleeps in epoll
 * on the queue's interrupt eventfd (the switch's callfd) and counts what the
 * eventfd accumulated (each callfd write adds one), the way a guest driver
 * takes interrupts. Used by tests/integration/test_rxmod.c,
 * test_rxmod_rates.c and tests/perf/bench_rxmod_vu.c.
 *
 * It behaves as a virtio driver must: after re-arming (clearing
 * VRING_AVAIL_F_NO_INTERRUPT, from its own thread: "another vCPU" for the
 * switch) it looks at the ring once more before it sleeps. An interrupt the
 * switch lost or held past its window shows as a wake-up by the epoll
 * timeout with a frame waiting (counted in lost).
 *
 * Everything but the thread runs on the test's thread; the thread inherits
 * its CPU affinity (the main lcore's).
 */
#ifndef HV_VU_IRQ_SINK_H
#define HV_VU_IRQ_SINK_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <rte_mempool.h>

/** How the sink takes interrupts. */
enum vu_sink_mode {
	/** Linux NAPI: interrupts off while it polls, re-armed when the ring is empty. */
	VU_SINK_NAPI,
	/**
	 * Re-armed after every frame (NAPI on a fast host that empties its ring
	 * each time): interrupts off, one frame taken, re-armed, the ring looked
	 * at again. Without EVENT_IDX (virtio-user has none) this is what the
	 * built-in guest's rxirq=frame asks for: an interrupt for the next frame.
	 */
	VU_SINK_FRAME,
};

struct vu_sink {
	char vdev[32];
	uint16_t eth;
	bool open;
	int fd; /* its rx queue's interrupt eventfd: the switch's callfd */
	struct rte_mempool *mp;
	pthread_t thread;
	int stop_fd; /* wakes the thread's epoll for the stop */
	bool running;
	enum vu_sink_mode mode; /* set before vu_sink_open() */
	/* before vu_sink_open(): run the thread at SCHED_FIFO (see vu_sink_open()) */
	bool fifo;
	bool is_fifo; /* the thread got SCHED_FIFO */
	/*
	 * Called by the thread for every batch received, before the frames are
	 * freed and counted (NULL: none). @now is rte_rdtsc() at arrival.
	 */
	void (*on_rx)(uint64_t now, uint16_t n);
	/* written by the thread, read by the test with atomics (vu_ld()) */
	bool stop;
	uint64_t frames;
	uint64_t irqs;          /* eventfd counts read: callfd writes */
	uint64_t wakeups;       /* epoll returns with the eventfd readable */
	uint64_t lost;          /* epoll timed out and a frame was waiting */
	uint64_t last_wake_tsc; /* when the last interrupt woke it */
	uint64_t last_rx_tsc;   /* when the last frame arrived */
};

/** An acquire load of a counter the sink's thread writes. */
static inline uint64_t
vu_ld(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

/**
 * Attach @b to the vhost-user socket @sock (the switch is the server) and
 * start its thread. Zero @b first, then set mode, fifo and on_rx. With
 * @b->fifo the thread asks for SCHED_FIFO priority 10 (as on a CPU of its
 * own: each interrupt wakes it at once, even beside a thread that spins);
 * @b->is_fifo says whether it got it. Aborts the (Check) test on failure.
 * Test thread only.
 */
void vu_sink_open(struct vu_sink *b, const char *sock);

/** Stop the thread (the ethdev stays open; the test may play the guest itself). */
void vu_sink_stop_thread(struct vu_sink *b);

/**
 * Stop the thread and close the ethdev. @at_once: without the pauses that
 * let DPDK's interrupt thread go quiet between the steps (a frontend that
 * goes away abruptly).
 */
void vu_sink_close_at(struct vu_sink *b, bool at_once);

/** vu_sink_close_at(@b, false). Safe on a zeroed or closed sink. */
void vu_sink_close(struct vu_sink *b);

#endif
