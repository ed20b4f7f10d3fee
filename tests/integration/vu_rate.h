/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Interrupt moderation at a frame rate, with virtio-user guests: the hvswitch
 * daemon (switch_harness.h) with vhost-user ports "a" and "b", a poll-mode
 * guest A that sends a paced stream on a, and an interrupt-mode sink B
 * (vu_irq_sink.h) on b. One run sends for a while at one rate and reads
 * what B took and what the switch counted on b's guest RX ring. Used by
 * test_rxmod_rates.c (CI size) and tests/perf/bench_rxmod_vu.c (the sweep).
 *
 * Everything runs on the test's thread (the main lcore: CPU 0 under
 * run_eal_test.sh), B's thread beside it; the daemon's PMD is on CPU 1.
 */
#ifndef HV_VU_RATE_H
#define HV_VU_RATE_H

#include <stdint.h>

#include "switch_harness.h"
#include "vu_irq_sink.h"

/** Counters of a vhost-user port's guest RX ring (port.show qps/0/tx). */
struct vu_ring_counters {
	double packets;    /**< frames delivered */
	double irqs;       /**< interrupts sent (callfd writes) */
	double suppressed; /**< owed interrupts the guest declined at delivery */
	double unwanted;   /**< returns the guest asked no interrupt for (polling) */
	double held;       /**< interrupts that waited for a window */
	double early;      /**< of those, released early by the half-full ring */
	double window_us;  /**< the window in force */
};

/** One run: its parameters, then what it measured. */
struct vu_rate_run {
	unsigned int rate; /**< frames/s; 0: as fast as A's TX ring takes them */
	unsigned int ms;   /**< how long A sends */
	uint16_t size;     /**< frame size, bytes (60..1514) */
	uint64_t sent;     /**< frames A sent */
	uint64_t received; /**< frames B took */
	double secs;       /**< first send to B's last frame */
	uint64_t irqs;     /**< B's eventfd counts: interrupts it took */
	uint64_t wakeups;  /**< B's wake-ups by an interrupt */
	uint64_t lost;     /**< B's wake-ups by its timeout with a frame waiting (must be 0) */
	struct vu_ring_counters
		sw; /**< the switch's counters over the run (window_us: at its end) */
};

/**
 * Start the daemon (@opts: extra options, NULL-ended, or NULL) with ports a
 * and b (b at @rxmod), attach @a to a and @b to b (its mode and fifo set by
 * the caller), and wait until both are up. Aborts the test on failure.
 */
void vu_pair_start(struct hvsw *d, struct guest *a, struct vu_sink *b, const char *rxmod,
		   const char *const *opts);

/** port.set b rxmod=@setting ("0", "100", "adaptive", ...), live. */
void vu_set_rxmod(struct hvsw *d, const char *setting);

/** The counters of b's guest RX ring now. */
void vu_ring_read(struct hvsw *d, struct vu_ring_counters *c);

/**
 * One run at @r->rate for @r->ms: A sends broadcast frames of @r->size bytes
 * (paced on the TSC; behind schedule it catches up at once), then the run
 * waits until B took every frame the switch delivered and B's interrupt
 * count equals the switch's (aborts the test if not within a few seconds),
 * and fills @r's results.
 */
void vu_rate_run(struct hvsw *d, struct guest *a, struct vu_sink *b, struct vu_rate_run *r);

#endif
