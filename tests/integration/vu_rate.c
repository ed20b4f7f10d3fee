/* SPDX-License-Identifier: BSD-3-Clause */
/* Interrupt moderation at a frame rate, with virtio-user guests (vu_rate.h). */
#include <check.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_pause.h>

#include "vu_rate.h"

#define T SWH_TIMEOUT_MS
#define ETH_TYPE_STREAM 0x88b5
#define BURST 32
/* the sender sleeps when the next frame is due later than this, up to the margin before */
#define SLEEP_ABOVE_US 200
#define SLEEP_MARGIN_US 50

void
vu_pair_start(struct hvsw *d, struct guest *a, struct vu_sink *b, const char *rxmod,
	      const char *const *opts)
{
	char sa[160], sb[160], extra[64];

	ck_assert_msg(hvsw_start(d, opts) == 0, "hvswitch did not start");
	snprintf(extra, sizeof(extra), ",\"rxmod\":\"%s\"", rxmod);
	hvsw_add_port(d, "a", NULL);
	hvsw_add_port(d, "b", extra);
	snprintf(sa, sizeof(sa), "%s/a.sock", d->dir);
	snprintf(sb, sizeof(sb), "%s/b.sock", d->dir);
	ck_assert_int_eq(guest_open(a, "A", 1, sa, false), 0);
	vu_sink_open(b, sb);
	ck_assert(hvsw_wait_up(d, "a", T));
	ck_assert(hvsw_wait_up(d, "b", T));
}

void
vu_set_rxmod(struct hvsw *d, const char *setting)
{
	cJSON_Delete(hvsw_ok(d, "port.set", "{\"name\":\"b\",\"rxmod\":\"%s\"}", setting));
}

static double
num(const cJSON *o, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

	return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

void
vu_ring_read(struct hvsw *d, struct vu_ring_counters *c)
{
	cJSON *r = hvsw_ok(d, "port.show", "{\"name\":\"b\"}");
	const cJSON *qp = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(r, "qps"), 0);
	/* vring 0, the guest's RX ring, is the switch's "tx" of queue pair 0 */
	const cJSON *tx = cJSON_GetObjectItemCaseSensitive(qp, "tx");

	ck_assert_msg(cJSON_IsObject(tx), "port.show b has no qps/0/tx");
	*c = (struct vu_ring_counters){
		.packets = num(tx, "packets"),
		.irqs = num(tx, "irqs"),
		.suppressed = num(tx, "irqs_suppressed"),
		.unwanted = num(tx, "irqs_unwanted"),
		.held = num(tx, "irqs_held"),
		.early = num(tx, "irqs_early"),
		.window_us = num(tx, "window_us"),
	};
	cJSON_Delete(r);
}

/* @n frames of @size bytes into @m, broadcast from @a (nothing learns a destination). */
static void
frames(struct guest *a, uint16_t size, struct rte_mbuf **m, unsigned int n)
{
	ck_assert_int_eq(rte_pktmbuf_alloc_bulk(swh_guest_pool(), m, n), 0);
	for (unsigned int i = 0; i < n; i++) {
		uint8_t *p = (uint8_t *)rte_pktmbuf_append(m[i], size);

		ck_assert_ptr_nonnull(p);
		memset(p, 0xff, 6);
		memcpy(p + 6, &a->mac, 6);
		p[12] = ETH_TYPE_STREAM >> 8;
		p[13] = ETH_TYPE_STREAM & 0xff;
		memset(p + 14, (int)i, size - 14u);
	}
}

/*
 * Until frame @n is due (at @rate from @t0). Far off (a slow rate), sleep
 * most of the way: a sender that spins all along gets less of a loaded
 * CPU and then sends in bursts.
 */
static void
wait_next(uint64_t t0, uint64_t n, unsigned int rate, uint64_t now)
{
	uint64_t hz = rte_get_tsc_hz(), at = t0 + (n * hz + rate - 1) / rate;

	if (at > now + hz / 1000000 * SLEEP_ABOVE_US)
		rte_delay_us_sleep((unsigned int)((at - now) * 1000000 / hz) - SLEEP_MARGIN_US);
	else
		rte_pause();
}

/* Send for @r->ms at @r->rate; returns the frames sent. */
static uint64_t
send_stream(struct guest *a, const struct vu_rate_run *r, uint64_t t0)
{
	uint64_t hz = rte_get_tsc_hz(), end = t0 + hz * r->ms / 1000, n = 0;
	struct rte_mbuf *m[BURST];

	for (uint64_t now = t0; now < end; now = rte_rdtsc()) {
		unsigned int want;
		uint16_t took;

		if (r->rate == 0) {
			want = BURST;
		} else {
			/* frames due by now: a sender behind schedule catches up at once */
			uint64_t due = (now - t0) * r->rate / hz + 1;

			if (due <= n) {
				wait_next(t0, n, r->rate, now);
				continue;
			}
			want = (unsigned int)RTE_MIN(due - n, (uint64_t)BURST);
		}
		frames(a, r->size, m, want);
		took = rte_eth_tx_burst(a->eth, 0, m, (uint16_t)want);
		if (took < want)
			rte_pktmbuf_free_bulk(m + took, want - took);
		n += took;
	}
	return n;
}

/* Frames the switch took from A's TX ring so far (port a, qps/0/rx). */
static double
a_taken(struct hvsw *d)
{
	cJSON *r = hvsw_ok(d, "port.show", "{\"name\":\"a\"}");
	const cJSON *qp = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(r, "qps"), 0);
	double v = num(cJSON_GetObjectItemCaseSensitive(qp, "rx"), "packets");

	cJSON_Delete(r);
	return v;
}

/*
 * Until the switch took everything A sent, B took everything the switch
 * delivered to it, and B's interrupt count equals the switch's (one may be
 * in flight). Totals since B attached, not deltas: a frame late from one
 * run must not unbalance the next. The PMD shares its CPU on a loaded
 * machine: it may stand still for milliseconds.
 */
static void
settle(struct hvsw *d, struct guest *a, struct vu_sink *b, struct vu_ring_counters *c)
{
	uint64_t end = swh_now_ms() + T;
	struct rte_eth_stats st;

	ck_assert_int_eq(rte_eth_stats_get(a->eth, &st), 0);
	for (;;) {
		double taken = a_taken(d);

		vu_ring_read(d, c);
		if (taken == (double)st.opackets && c->packets == (double)vu_ld(&b->frames) &&
		    c->irqs == (double)vu_ld(&b->irqs))
			break;
		ck_assert_msg(swh_now_ms() < end,
			      "A sent %" PRIu64 ", the switch took %.0f; it delivered %.0f, B took "
			      "%" PRIu64 "; it sent %.0f interrupts, B took %" PRIu64,
			      st.opackets, taken, c->packets, vu_ld(&b->frames), c->irqs,
			      vu_ld(&b->irqs));
		usleep(1000);
	}
}

void
vu_rate_run(struct hvsw *d, struct guest *a, struct vu_sink *b, struct vu_rate_run *r)
{
	struct vu_ring_counters c0, c1;
	uint64_t f0, i0, w0, l0, t0, last;

	ck_assert(r->size >= 60 && r->size <= 1514);
	settle(d, a, b, &c0);
	f0 = vu_ld(&b->frames);
	i0 = vu_ld(&b->irqs);
	w0 = __atomic_load_n(&b->wakeups, __ATOMIC_RELAXED);
	l0 = __atomic_load_n(&b->lost, __ATOMIC_RELAXED);
	t0 = rte_rdtsc();
	r->sent = send_stream(a, r, t0);
	settle(d, a, b, &c1);
	last = __atomic_load_n(&b->last_rx_tsc, __ATOMIC_RELAXED);
	r->received = vu_ld(&b->frames) - f0;
	r->secs = (double)((last > t0 ? last : rte_rdtsc()) - t0) / (double)rte_get_tsc_hz();
	r->irqs = vu_ld(&b->irqs) - i0;
	r->wakeups = __atomic_load_n(&b->wakeups, __ATOMIC_RELAXED) - w0;
	r->lost = __atomic_load_n(&b->lost, __ATOMIC_RELAXED) - l0;
	r->sw = (struct vu_ring_counters){
		.packets = c1.packets - c0.packets,
		.irqs = c1.irqs - c0.irqs,
		.suppressed = c1.suppressed - c0.suppressed,
		.unwanted = c1.unwanted - c0.unwanted,
		.held = c1.held - c0.held,
		.early = c1.early - c0.early,
		.window_us = c1.window_us,
	};
}
