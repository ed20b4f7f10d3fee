/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Interrupt moderation policy (see hv_rxmod.h and doc/rxmod.rst). Times are
 * cycles of the caller's clock; comparisons go through signed differences so
 * that a wrapping clock stays correct.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hv_rxmod.h"

static inline bool
before(uint64_t a, uint64_t b)
{
	return (int64_t)(a - b) < 0;
}

void
hv_rxmod_init(struct hv_rxmod_queue *q, uint64_t cycles_per_us, uint32_t window_us)
{
	memset(q, 0, sizeof(*q));
	q->cycles_per_us = cycles_per_us > 0 ? cycles_per_us : 1;
	hv_rxmod_configure(q, window_us);
}

void
hv_rxmod_configure(struct hv_rxmod_queue *q, uint32_t window_us)
{
	__atomic_store_n(&q->conf_us, window_us, __ATOMIC_RELAXED);
}

uint32_t
hv_rxmod_configured(const struct hv_rxmod_queue *q)
{
	return __atomic_load_n(&q->conf_us, __ATOMIC_RELAXED);
}

uint32_t
hv_rxmod_adaptive_us(uint64_t pps)
{
	if (pps <= HV_RXMOD_ADAPTIVE_LOW_PPS)
		return 0;
	if (pps >= HV_RXMOD_ADAPTIVE_HIGH_PPS)
		return HV_RXMOD_ADAPTIVE_CAP_US;
	return (uint32_t)((uint64_t)HV_RXMOD_ADAPTIVE_CAP_US * (pps - HV_RXMOD_ADAPTIVE_LOW_PPS) /
			  (HV_RXMOD_ADAPTIVE_HIGH_PPS - HV_RXMOD_ADAPTIVE_LOW_PPS));
}

/*
 * Adaptive window: the frame rate over an epoch (at least
 * HV_RXMOD_ADAPTIVE_EPOCH_US, longer when the queue was idle, so an idle spell
 * reads as a low rate) picks a target; the window drops to a lower target at
 * once (latency first) and climbs halfway towards a higher one per epoch (a
 * short burst does not swing it to the cap).
 */
static uint64_t
adaptive_window(struct hv_rxmod_queue *q, uint64_t now, uint32_t entries)
{
	uint64_t elapsed, elapsed_us, pps, target;

	if (!q->epoch_valid) {
		q->epoch_valid = true;
		q->epoch_start = now;
		q->epoch_frames = 0;
	}
	q->epoch_frames += entries;
	elapsed = now - q->epoch_start;
	if (elapsed < (uint64_t)HV_RXMOD_ADAPTIVE_EPOCH_US * q->cycles_per_us)
		return q->window;
	elapsed_us = elapsed / q->cycles_per_us;
	pps = q->epoch_frames * UINT64_C(1000000) / (elapsed_us > 0 ? elapsed_us : 1);
	target = (uint64_t)hv_rxmod_adaptive_us(pps) * q->cycles_per_us;
	q->epoch_start = now;
	q->epoch_frames = 0;
	if (target <= q->window || target - q->window < 2 * q->cycles_per_us)
		return target;
	return q->window + (target - q->window) / 2;
}

static uint64_t
pick_window(struct hv_rxmod_queue *q, uint64_t now, uint32_t entries)
{
	uint32_t conf = hv_rxmod_configured(q);

	if (conf == HV_RXMOD_ADAPTIVE)
		return adaptive_window(q, now, entries);
	q->epoch_valid = false;
	return (uint64_t)conf * q->cycles_per_us;
}

bool
hv_rxmod_on_used(struct hv_rxmod_queue *q, uint64_t now, uint32_t entries, uint32_t ring_size,
		 uint32_t generation, bool wanted)
{
	uint64_t opens; /* when the open window (if any) closes */

	if (q->owed && q->generation != generation) {
		/* owed by a ring that has been stopped or reset since */
		q->stats.dropped++;
		q->owed = false;
		q->owed_frames = 0;
	}
	q->stats.frames += entries;
	q->window = pick_window(q, now, entries);
	if (!wanted && !q->owed) {
		/*
		 * The guest was polling with interrupts off: it sees these when it
		 * re-arms (it must look at the ring after re-arming). Owing one
		 * here would interrupt it later for frames it already took.
		 */
		q->stats.unwanted++;
		return false;
	}
	q->owed_frames += entries;
	opens = q->irq_valid ? q->last_irq + q->window : now;
	if (!before(now, opens))
		opens = now;
	if (!q->owed) {
		q->owed = true;
		q->generation = generation;
		q->due = opens;
		q->held = opens != now;
		if (q->held)
			q->stats.held++;
	} else if (before(opens, q->due)) {
		/* the window shrank (reconfigured, or the adaptive pick fell) */
		q->due = opens;
	}
	if (q->held && before(now, q->due) && (uint64_t)q->owed_frames * 2 >= ring_size) {
		/* half the ring waits for the guest: let it know now */
		q->due = now;
		q->held = false;
		q->stats.early++;
	}
	return true;
}

static unsigned int
fpi_bucket(uint32_t frames)
{
	unsigned int b = 0;

	while (frames > 1 && b + 1 < HV_RXMOD_FPI_BUCKETS) {
		frames >>= 1;
		b++;
	}
	return b;
}

void
hv_rxmod_done(struct hv_rxmod_queue *q, uint64_t now, enum hv_rxmod_outcome outcome)
{
	switch (outcome) {
	case HV_RXMOD_SENT:
		q->stats.sent++;
		q->stats.fpi[fpi_bucket(q->owed_frames)]++;
		q->last_irq = now;
		q->irq_valid = true;
		break;
	case HV_RXMOD_SUPPRESSED:
		/* nothing reached the guest: no window opens */
		q->stats.suppressed++;
		break;
	case HV_RXMOD_GONE:
		q->stats.dropped++;
		break;
	}
	q->owed = false;
	q->held = false;
	q->owed_frames = 0;
}

void
hv_rxmod_teardown(struct hv_rxmod_queue *q)
{
	if (q->owed)
		q->stats.dropped++;
	q->owed = false;
	q->held = false;
	q->owed_frames = 0;
	q->irq_valid = false;
	q->epoch_valid = false;
}

uint64_t
hv_rxmod_window(const struct hv_rxmod_queue *q)
{
	uint32_t conf = hv_rxmod_configured(q);

	if (conf == HV_RXMOD_ADAPTIVE)
		return __atomic_load_n(&q->window, __ATOMIC_RELAXED);
	return (uint64_t)conf * q->cycles_per_us;
}

int
hv_rxmod_parse(const char *s, uint32_t *window_us)
{
	char *end;
	unsigned long v;

	if (strcmp(s, "adaptive") == 0) {
		*window_us = HV_RXMOD_ADAPTIVE;
		return 0;
	}
	if (strcmp(s, "off") == 0) {
		*window_us = 0;
		return 0;
	}
	if (*s < '0' || *s > '9')
		return -1;
	v = strtoul(s, &end, 10);
	if (*end != '\0' || v > HV_RXMOD_MAX_US)
		return -1;
	*window_us = (uint32_t)v;
	return 0;
}

void
hv_rxmod_format(uint32_t window_us, char *buf, unsigned int len)
{
	if (window_us == HV_RXMOD_ADAPTIVE)
		snprintf(buf, len, "adaptive");
	else
		snprintf(buf, len, "%u", window_us);
}
