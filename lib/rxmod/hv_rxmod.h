/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Interrupt moderation policy: when a queue's guest interrupt may go.
 *
 * Pure logic over a caller-supplied clock (TSC cycles in the switch, a fake
 * clock in tests): no I/O, no DPDK. The caller tells the policy when it
 * returned buffers to a ring (hv_rxmod_on_used()), asks on every loop
 * iteration whether an owed interrupt is due (hv_rxmod_due()), delivers it
 * through its driver, which reads the guest's flags after a full fence, and
 * reports what happened (hv_rxmod_done()).
 *
 * Rules (doc/rxmod.rst):
 *  - at most one interrupt per window: the window opens when an interrupt is
 *    sent; buffers returned while it is open make one interrupt owed, due when
 *    it closes, and that one covers everything returned meanwhile;
 *    buffers returned with no window open are due at once;
 *  - an owed interrupt is due at once when the entries returned since the last
 *    one reach half the ring (the guest must not starve);
 *  - buffers make an interrupt owed only if the guest asked for one when
 *    they were published (it was not polling); an owed one is asked again
 *    when delivered (the guest may have polled them meanwhile, or re-armed
 *    from another vCPU);
 *  - an owed interrupt of a ring that was stopped or reset meanwhile (another
 *    ring generation) is dropped, not delivered;
 *  - adaptive mode picks the window from the frame rate: 0 at low rates,
 *    growing linearly to a cap at high rates.
 *
 * One thread owns a queue's state at a time; only the configured window
 * (hv_rxmod_configure()) may be written by another thread, and the counters
 * may be read by any.
 */
#ifndef HV_RXMOD_H
#define HV_RXMOD_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Window setting that selects adaptive mode. */
#define HV_RXMOD_ADAPTIVE UINT32_MAX
/** Default window, µs. */
#define HV_RXMOD_DEFAULT_US 100
/** Largest fixed window accepted, µs. */
#define HV_RXMOD_MAX_US 10000

/** Adaptive mode: the window never exceeds this, µs. */
#define HV_RXMOD_ADAPTIVE_CAP_US 200
/** Adaptive mode: at or below this frame rate (frames/s) the window is 0. */
#define HV_RXMOD_ADAPTIVE_LOW_PPS 20000
/** Adaptive mode: at or above this frame rate the window is the cap. */
#define HV_RXMOD_ADAPTIVE_HIGH_PPS 200000
/** Adaptive mode: the rate is measured over epochs of at least this, µs. */
#define HV_RXMOD_ADAPTIVE_EPOCH_US 1000

/** Buckets of the frames-per-interrupt histogram: 1, 2-3, 4-7, ..., 128+. */
#define HV_RXMOD_FPI_BUCKETS 8

/** What became of an owed interrupt. */
enum hv_rxmod_outcome {
	HV_RXMOD_SENT,       /**< the guest was interrupted */
	HV_RXMOD_SUPPRESSED, /**< the guest's flags asked for none */
	HV_RXMOD_GONE,       /**< its ring was stopped or reset */
};

/** Counters of one queue (monotonic; read them with relaxed atomic loads). */
struct hv_rxmod_stats {
	uint64_t sent;       /**< interrupts sent */
	uint64_t suppressed; /**< owed interrupts the guest's flags declined */
	uint64_t held;       /**< interrupts that waited for a window to close */
	uint64_t early;      /**< released before the window closed: ring half full */
	uint64_t dropped;    /**< owed interrupts of a stopped or reset ring */
	uint64_t unwanted;   /**< returns the guest asked no interrupt for: none owed */
	uint64_t frames;     /**< ring entries returned */
	/** sent interrupts by frames covered: bucket i holds 2^i .. 2^(i+1)-1 */
	uint64_t fpi[HV_RXMOD_FPI_BUCKETS];
};

/** Policy state of one queue (one ring). Zero it, then hv_rxmod_init(). */
struct hv_rxmod_queue {
	/* ---- configuration (written by any thread, atomically) ---- */
	uint32_t conf_us; /* window, µs, or HV_RXMOD_ADAPTIVE */

	/* ---- state (the owning thread) ---- */
	uint64_t cycles_per_us;
	uint64_t window;      /* current window, cycles (adaptive: the last pick) */
	uint64_t last_irq;    /* when the last interrupt was sent */
	uint64_t due;         /* when the owed interrupt goes */
	uint32_t owed_frames; /* entries returned since the last interrupt decision */
	uint32_t generation;  /* ring generation of the owed interrupt */
	bool irq_valid;       /* last_irq holds a time */
	bool owed;
	bool held;            /* the owed interrupt waits for the window */
	uint64_t epoch_start; /* adaptive: rate measurement */
	uint64_t epoch_frames;
	bool epoch_valid;

	struct hv_rxmod_stats stats;
};

/**
 * Start a queue: nothing owed, no window open.
 * @param cycles_per_us clock rate of the times given later (> 0)
 * @param window_us window in µs (0 = off), or HV_RXMOD_ADAPTIVE
 */
void hv_rxmod_init(struct hv_rxmod_queue *q, uint64_t cycles_per_us, uint32_t window_us);

/** Change the window (any thread; takes effect at the next hv_rxmod_on_used()). */
void hv_rxmod_configure(struct hv_rxmod_queue *q, uint32_t window_us);

/** The configured window: µs, or HV_RXMOD_ADAPTIVE. */
uint32_t hv_rxmod_configured(const struct hv_rxmod_queue *q);

/**
 * Buffers were returned to the ring.
 * @param now current time, cycles
 * @param entries used entries just published
 * @param ring_size entries of the ring (for the half-full release)
 * @param generation the ring's generation now (changes when it is stopped or reset)
 * @param wanted whether the guest asked for an interrupt when these entries
 *        were published (flags or EVENT_IDX read after the used index store
 *        and a full fence). When it did not, it was polling and sees them
 *        itself: they owe nothing, though an interrupt already owed covers them.
 * @return true when an interrupt is owed (due now or later): the caller must
 *         keep polling hv_rxmod_due() until hv_rxmod_done().
 */
bool hv_rxmod_on_used(struct hv_rxmod_queue *q, uint64_t now, uint32_t entries, uint32_t ring_size,
		      uint32_t generation, bool wanted);

/** Whether an interrupt is owed and its time has come. */
static inline bool
hv_rxmod_due(const struct hv_rxmod_queue *q, uint64_t now)
{
	return q->owed && (int64_t)(now - q->due) >= 0;
}

/** Whether an interrupt is owed (due or not). */
static inline bool
hv_rxmod_owed(const struct hv_rxmod_queue *q)
{
	return q->owed;
}

/** The generation the owed interrupt belongs to (pass it to the driver). */
static inline uint32_t
hv_rxmod_generation(const struct hv_rxmod_queue *q)
{
	return q->generation;
}

/**
 * The owed interrupt was delivered, declined by the guest, or found its ring
 * gone. A sent interrupt opens the next window; a declined one does not (the
 * guest was polling: nothing reached it).
 */
void hv_rxmod_done(struct hv_rxmod_queue *q, uint64_t now, enum hv_rxmod_outcome outcome);

/** The queue was stopped or reset: forget what is owed (counted as dropped). */
void hv_rxmod_teardown(struct hv_rxmod_queue *q);

/** The window in force now, cycles (adaptive: the current pick). */
uint64_t hv_rxmod_window(const struct hv_rxmod_queue *q);

/** Adaptive mode's window for a frame rate (frames/s), µs. */
uint32_t hv_rxmod_adaptive_us(uint64_t pps);

/** Lowest frame count of histogram bucket @p b (1, 2, 4, ...). */
static inline uint32_t
hv_rxmod_fpi_bucket_low(unsigned int b)
{
	return UINT32_C(1) << b;
}

/** Parse "US" or "adaptive" (also "off" = 0); -1 if neither or too large. */
int hv_rxmod_parse(const char *s, uint32_t *window_us);

/** Format a window setting as hv_rxmod_parse() reads it. */
void hv_rxmod_format(uint32_t window_us, char *buf, unsigned int len);

#ifdef __cplusplus
}
#endif

#endif
