/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the interrupt moderation policy (lib/rxmod) on a fake clock:
 * the window, the half-ring release, teardown, a guest that re-arms from
 * another vCPU while an interrupt is owed, frames the guest polled (they owe
 * nothing), adaptive mode, live changes.
 *
 * The fake clock runs at CPU cycles per µs; a "loop" advances it one µs per
 * iteration and delivers what is due, the way the PMD does, through a fake
 * guest whose interrupt flag is read at delivery time.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "hv_rxmod.h"

#define CPU 1000 /* cycles per µs of the fake clock */
#define US(x) ((uint64_t)(x)*CPU)
#define RING 256

static struct hv_rxmod_queue q;
static uint64_t now;
static bool guest_armed; /* the guest wants interrupts (VRING_AVAIL_F_NO_INTERRUPT clear) */
static uint32_t generation;
static unsigned int irqs;
static uint64_t irq_at[4096];

/* What the PMD does once per iteration: deliver the owed interrupt if due. */
static void
loop_once(void)
{
	if (!hv_rxmod_due(&q, now))
		return;
	if (hv_rxmod_generation(&q) != generation) {
		hv_rxmod_done(&q, now, HV_RXMOD_GONE);
	} else if (guest_armed) {
		if (irqs < 4096)
			irq_at[irqs] = now;
		irqs++;
		hv_rxmod_done(&q, now, HV_RXMOD_SENT);
	} else {
		hv_rxmod_done(&q, now, HV_RXMOD_SUPPRESSED);
	}
}

/* Run the loop until @t (µs), one iteration per µs. */
static void
run_until(uint64_t t_us)
{
	while (now < US(t_us)) {
		now += US(1);
		loop_once();
	}
}

/* Entries returned; the guest's flag is read then too (after the fence, in the driver). */
static void
publish(uint32_t entries)
{
	bool owed = hv_rxmod_on_used(&q, now, entries, RING, generation, guest_armed);

	ck_assert(owed == hv_rxmod_owed(&q));
	ck_assert(owed || !guest_armed);
}

static void
setup_window(uint32_t us)
{
	hv_rxmod_init(&q, CPU, us);
	now = US(1000000); /* not 0: time values are arbitrary */
	guest_armed = true;
	generation = 7;
	irqs = 0;
}

static void
setup(void)
{
	setup_window(100);
}

START_TEST(rxmod_off_is_immediate)
{
	setup_window(0);
	for (int i = 0; i < 10; i++) {
		publish(1);
		ck_assert(hv_rxmod_due(&q, now));
		loop_once();
		ck_assert_uint_eq(irqs, (unsigned int)i + 1);
		now += US(1);
	}
	ck_assert_uint_eq(q.stats.held, 0);
	ck_assert_uint_eq(q.stats.sent, 10);
	ck_assert_uint_eq(q.stats.fpi[0], 10);
}
END_TEST

START_TEST(rxmod_window_holds_and_covers)
{
	uint64_t t0 = now;

	/* nothing sent lately: no window is open, the first frame goes at once */
	publish(1);
	ck_assert(hv_rxmod_due(&q, now));
	loop_once();
	ck_assert_uint_eq(irqs, 1);
	/* the window is open now: frames in it wait for its end, one interrupt for all */
	now += US(10);
	publish(1);
	ck_assert(hv_rxmod_owed(&q));
	ck_assert(!hv_rxmod_due(&q, now));
	for (int i = 0; i < 5; i++) {
		now += US(10);
		publish(2);
	}
	now = t0 + US(99);
	ck_assert(!hv_rxmod_due(&q, now));
	loop_once();
	ck_assert_uint_eq(irqs, 1);
	now = t0 + US(100);
	ck_assert(hv_rxmod_due(&q, now));
	loop_once();
	ck_assert_uint_eq(irqs, 2);
	ck_assert_uint_eq(q.stats.held, 1);
	ck_assert_uint_eq(q.stats.fpi[3], 1); /* 11 frames: bucket 8..15 */
	ck_assert_uint_eq(q.stats.frames, 12);
	ck_assert(!hv_rxmod_owed(&q));
	ck_assert_uint_eq(hv_rxmod_window(&q), US(100));
}
END_TEST

/* A constant stream: at most one interrupt per window, none later than a window. */
START_TEST(rxmod_stream_one_per_window)
{
	uint64_t start = now, first_unsignalled = 0;
	bool pending = false;
	unsigned int frames = 0;

	while (now < start + US(20000)) {
		now += US(1);
		if ((now / CPU) % 3 == 0) {
			publish(1);
			frames++;
			if (!pending) {
				first_unsignalled = now;
				pending = true;
			}
		}
		unsigned int before = irqs;

		loop_once();
		if (irqs != before) {
			/* no frame waited longer than the window */
			ck_assert_uint_le(now - first_unsignalled, US(100));
			pending = false;
		}
	}
	/* 20 ms / 100 µs = 200 windows: at most one interrupt each (+1 at the start) */
	ck_assert_uint_le(irqs, 201);
	ck_assert_uint_ge(irqs, 190);
	for (unsigned int i = 1; i < irqs && i < 4096; i++)
		ck_assert_uint_ge(irq_at[i] - irq_at[i - 1], US(100));
	ck_assert_uint_eq(q.stats.frames, frames);
	ck_assert_uint_eq(q.stats.sent, irqs);
}
END_TEST

START_TEST(rxmod_half_ring_releases_early)
{
	publish(1);
	loop_once(); /* opens a window */
	now += US(5);
	publish(RING / 2 - 1);
	ck_assert(!hv_rxmod_due(&q, now));
	now += US(5);
	publish(1); /* half the ring returned since the last interrupt */
	ck_assert(hv_rxmod_due(&q, now));
	loop_once();
	ck_assert_uint_eq(irqs, 2);
	ck_assert_uint_eq(q.stats.early, 1);
	ck_assert_uint_eq(q.stats.held, 1);
	ck_assert_uint_eq(q.stats.fpi[7], 1); /* 128 frames */
	/* the early interrupt opened a new window */
	now += US(1);
	publish(1);
	ck_assert(!hv_rxmod_due(&q, now));
}
END_TEST

START_TEST(rxmod_teardown_drops_owed)
{
	publish(1);
	loop_once();
	now += US(1);
	publish(3);
	ck_assert(hv_rxmod_owed(&q));
	hv_rxmod_teardown(&q);
	ck_assert(!hv_rxmod_owed(&q));
	ck_assert_uint_eq(q.stats.dropped, 1);
	run_until(now / CPU + 1000);
	ck_assert_uint_eq(irqs, 1); /* nothing owed forever, nothing sent */
	/* a fresh ring after the reset: no window inherited, its first frame goes at once */
	publish(1);
	ck_assert(hv_rxmod_due(&q, now));
}
END_TEST

START_TEST(rxmod_generation_change_drops_owed)
{
	publish(1);
	loop_once();
	now += US(1);
	publish(1);
	/* the ring is reset behind the policy's back: the owed one is not delivered */
	generation++;
	run_until(now / CPU + 200);
	ck_assert_uint_eq(irqs, 1);
	ck_assert_uint_eq(q.stats.dropped, 1);
	ck_assert(!hv_rxmod_owed(&q));
	/* owed for the old ring, then buffers on the new one: the old one is dropped */
	publish(1);
	loop_once();
	now += US(1);
	publish(1);
	generation++;
	publish(1);
	ck_assert_uint_eq(q.stats.dropped, 2);
	ck_assert_uint_eq(hv_rxmod_generation(&q), generation);
}
END_TEST

/*
 * The guest polls (interrupts off) on vCPU 0 when a frame arrives; the
 * interrupt is owed for the end of the window. The guest then re-arms from
 * vCPU 1 mid-window without the policy hearing of it (no call, no kick: only
 * the flag in guest memory changes). It must be interrupted when the window
 * closes, not later: the decision is made at delivery from the flag as it is
 * then, never from the flag as it was when the frame came.
 */
START_TEST(rxmod_rearm_from_other_vcpu)
{
	uint64_t t0;

	publish(1);
	loop_once(); /* interrupt: the window opens at t0 */
	t0 = now;
	run_until(t0 / CPU + 30);
	publish(1); /* owed, held for the window */
	ck_assert(!hv_rxmod_due(&q, now));
	guest_armed = false; /* vCPU 0: NAPI polls */
	run_until(t0 / CPU + 50);
	guest_armed = true; /* vCPU 1 re-arms, behind the loop's back */
	run_until(t0 / CPU + 99);
	ck_assert_uint_eq(irqs, 1);
	run_until(t0 / CPU + 100);
	ck_assert_uint_eq(irqs, 2);
	ck_assert_uint_eq(irq_at[1], t0 + US(100));

	/*
	 * The other order: owed while the guest is armed, but it polls when the
	 * window closes (the interrupt is declined), then re-arms. A declined
	 * interrupt opens no window, so a frame after the re-arm is not held.
	 */
	run_until(t0 / CPU + 150);
	publish(1);
	guest_armed = false;
	run_until(t0 / CPU + 199);
	ck_assert_uint_eq(irqs, 2);
	ck_assert_uint_eq(q.stats.suppressed, 0);
	run_until(t0 / CPU + 250); /* declined when the window closed at t0 + 200 */
	ck_assert_uint_eq(q.stats.suppressed, 1);
	guest_armed = true;
	run_until(t0 / CPU + 260);
	publish(1);
	ck_assert(hv_rxmod_due(&q, now));
	loop_once();
	ck_assert_uint_eq(irqs, 3);
	ck_assert_uint_eq(irq_at[2], t0 + US(260));
}
END_TEST

/*
 * A NAPI guest: an interrupt, then it polls with interrupts off and takes
 * the frames that keep coming, and re-arms (and looks at the ring once
 * more) when it has emptied it, all within the window. The frames it polled
 * owe nothing: holding an interrupt for them and sending it when the window
 * closes, to a guest that re-armed meanwhile, interrupts it for frames it
 * already took, which the unmoderated path never does. Then the same with
 * the window off: moderation costs no interrupt more.
 */
START_TEST(rxmod_polled_frames_owe_nothing)
{
	for (unsigned int w = 0; w < 2; w++) {
		unsigned int irq0;
		uint64_t t0;

		setup_window(w == 0 ? 100 : 0);
		for (unsigned int burst = 0; burst < 10; burst++) {
			irq0 = irqs;
			run_until(now / CPU + 300); /* quiet: no window open */
			publish(1);
			loop_once(); /* at once */
			ck_assert_uint_eq(irqs, irq0 + 1);
			t0 = now;
			guest_armed = false; /* its handler: poll, interrupts off */
			for (unsigned int i = 1; i <= 8; i++) {
				run_until(t0 / CPU + 5 * i);
				publish(1);
			}
			run_until(t0 / CPU + 60);
			guest_armed = true; /* ring empty: re-armed, looked again, halts */
			run_until(t0 / CPU + 250);
			ck_assert_msg(irqs == irq0 + 1, "window %u: %u interrupts for one burst",
				      w == 0 ? 100 : 0, irqs - irq0);
		}
		ck_assert_uint_eq(q.stats.unwanted, 80);
		ck_assert_uint_eq(q.stats.held, 0);
		ck_assert_uint_eq(irqs, 10);
	}
}
END_TEST

START_TEST(rxmod_live_reconfigure)
{
	hv_rxmod_configure(&q, 5000);
	publish(1);
	loop_once();
	now += US(10);
	publish(1);
	ck_assert(!hv_rxmod_due(&q, now + US(4000)));
	/* shortened while owed: the next return applies it */
	hv_rxmod_configure(&q, 20);
	ck_assert_uint_eq(hv_rxmod_configured(&q), 20);
	now += US(1);
	publish(1);
	ck_assert(!hv_rxmod_due(&q, now + US(8)));
	ck_assert(hv_rxmod_due(&q, now + US(9)));
	/* switched off: due at once */
	hv_rxmod_configure(&q, 0);
	publish(1);
	ck_assert(hv_rxmod_due(&q, now));
}
END_TEST

START_TEST(rxmod_adaptive_follows_rate)
{
	setup_window(HV_RXMOD_ADAPTIVE);
	/* 1 frame per ms (1 kpps): window stays 0, no frame waits */
	for (int i = 0; i < 20; i++) {
		now += US(1000);
		publish(1);
		ck_assert(hv_rxmod_due(&q, now));
		loop_once();
	}
	ck_assert_uint_eq(hv_rxmod_window(&q), 0);
	ck_assert_uint_eq(q.stats.held, 0);
	/* 500 kpps (a frame every 2 µs) for 10 ms: the window climbs to the cap */
	unsigned int before = irqs;

	for (int i = 0; i < 5000; i++) {
		now += US(1);
		publish(1);
		loop_once();
		now += US(1);
		loop_once();
	}
	ck_assert_uint_eq(hv_rxmod_window(&q), US(HV_RXMOD_ADAPTIVE_CAP_US));
	/* with the window at the cap, interrupts cover many frames: 10 ms / 200 µs */
	before = irqs;
	for (int i = 0; i < 5000; i++) {
		now += US(1);
		publish(1);
		loop_once();
		now += US(1);
		loop_once();
	}
	ck_assert_uint_le(irqs - before, 51);
	ck_assert_uint_gt(q.stats.fpi[6] + q.stats.fpi[7], 0);
	/* 50 ms idle, then a lone frame: no window open, it goes at once ... */
	run_until(now / CPU + 50000);
	publish(1);
	ck_assert(hv_rxmod_due(&q, now));
	loop_once();
	/* ... and the idle epoch brought the window down to 0 */
	ck_assert_uint_eq(hv_rxmod_window(&q), 0);
	/* a medium rate (100 kpps) gives a window between */
	for (int i = 0; i < 3000; i++) {
		now += US(10);
		publish(1);
		loop_once();
	}
	ck_assert_uint_gt(hv_rxmod_window(&q), 0);
	ck_assert_uint_lt(hv_rxmod_window(&q), US(HV_RXMOD_ADAPTIVE_CAP_US));
}
END_TEST

START_TEST(rxmod_adaptive_curve)
{
	ck_assert_uint_eq(hv_rxmod_adaptive_us(0), 0);
	ck_assert_uint_eq(hv_rxmod_adaptive_us(HV_RXMOD_ADAPTIVE_LOW_PPS), 0);
	ck_assert_uint_eq(hv_rxmod_adaptive_us(110000), HV_RXMOD_ADAPTIVE_CAP_US / 2);
	ck_assert_uint_eq(hv_rxmod_adaptive_us(HV_RXMOD_ADAPTIVE_HIGH_PPS),
			  HV_RXMOD_ADAPTIVE_CAP_US);
	ck_assert_uint_eq(hv_rxmod_adaptive_us(100000000), HV_RXMOD_ADAPTIVE_CAP_US);
}
END_TEST

START_TEST(rxmod_parse_format)
{
	uint32_t v;
	char buf[16];

	ck_assert_int_eq(hv_rxmod_parse("100", &v), 0);
	ck_assert_uint_eq(v, 100);
	ck_assert_int_eq(hv_rxmod_parse("0", &v), 0);
	ck_assert_uint_eq(v, 0);
	ck_assert_int_eq(hv_rxmod_parse("off", &v), 0);
	ck_assert_uint_eq(v, 0);
	ck_assert_int_eq(hv_rxmod_parse("adaptive", &v), 0);
	ck_assert_uint_eq(v, HV_RXMOD_ADAPTIVE);
	ck_assert_int_eq(hv_rxmod_parse("10001", &v), -1);
	ck_assert_int_eq(hv_rxmod_parse("-1", &v), -1);
	ck_assert_int_eq(hv_rxmod_parse("10us", &v), -1);
	ck_assert_int_eq(hv_rxmod_parse("", &v), -1);
	hv_rxmod_format(HV_RXMOD_ADAPTIVE, buf, sizeof(buf));
	ck_assert_str_eq(buf, "adaptive");
	hv_rxmod_format(250, buf, sizeof(buf));
	ck_assert_str_eq(buf, "250");
}
END_TEST

/* The clock may wrap: comparisons are on differences. */
START_TEST(rxmod_clock_wraps)
{
	now = UINT64_MAX - US(50);
	publish(1);
	loop_once();
	now += US(10);
	publish(1);
	ck_assert(!hv_rxmod_due(&q, now));
	run_until(0); /* no-op: now is huge */
	for (int i = 0; i < 89; i++) {
		now += US(1);
		loop_once();
	}
	ck_assert_uint_eq(irqs, 1);
	now += US(1);
	loop_once();
	ck_assert_uint_eq(irqs, 2);
}
END_TEST

static Suite *
rxmod_suite(void)
{
	Suite *s = suite_create("rxmod");
	TCase *tc = tcase_create("policy");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, rxmod_off_is_immediate);
	tcase_add_test(tc, rxmod_window_holds_and_covers);
	tcase_add_test(tc, rxmod_stream_one_per_window);
	tcase_add_test(tc, rxmod_half_ring_releases_early);
	tcase_add_test(tc, rxmod_teardown_drops_owed);
	tcase_add_test(tc, rxmod_generation_change_drops_owed);
	tcase_add_test(tc, rxmod_rearm_from_other_vcpu);
	tcase_add_test(tc, rxmod_polled_frames_owe_nothing);
	tcase_add_test(tc, rxmod_live_reconfigure);
	tcase_add_test(tc, rxmod_adaptive_follows_rate);
	tcase_add_test(tc, rxmod_adaptive_curve);
	tcase_add_test(tc, rxmod_parse_format);
	tcase_add_test(tc, rxmod_clock_wraps);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(rxmod_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
