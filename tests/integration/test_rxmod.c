/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Interrupt moderation end to end: the hvswitch daemon (a child process)
 * between a virtio-user guest A that sends (poll mode) and a virtio-user
 * guest B in interrupt mode (vu_irq_sink.h, NAPI). B's rx interrupts are its
 * callfd: B's thread sleeps in epoll on it and counts what the eventfd
 * accumulated (each switch callfd write adds one), the way a guest driver
 * takes interrupts.
 *
 * B behaves as a virtio driver must: after re-arming (clearing
 * VRING_AVAIL_F_NO_INTERRUPT, from its own thread: "another vCPU" for the
 * switch) it looks at the ring once more before it sleeps. An interrupt the
 * switch lost or held past its window shows as a wake-up by B's epoll
 * timeout with a frame waiting, which is what the 10 ms outliers were.
 * polled_frames_owe_no_interrupt plays B step by step from the test thread
 * (a NAPI guest: frames that arrive while it polls owe no interrupt).
 * The settings (no frontend needed) are in test_rxmod_settings.c; the rates
 * (NAPI and re-arm-per-frame sinks, 0 against 100) in test_rxmod_rates.c.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

#include <linux/virtio_config.h>

#include <rte_bus_vdev.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "switch_harness.h"
#include "vu_irq_sink.h"

#define T SWH_TIMEOUT_MS
#define MAX_LAT 4096

static struct hvsw D;
static struct guest A;

/* Guest B: a virtio-user ethdev in interrupt mode (NAPI), received on its own thread. */
static struct vu_sink B;

static uint64_t sent_tsc; /* latency test: when the frame in flight was sent */
static uint64_t lat[MAX_LAT];
static unsigned int n_lat;

/* B's thread, for every batch: the delivery time of the frame in flight. */
static void
b_on_rx(uint64_t now, uint16_t n)
{
	uint64_t s = vu_ld(&sent_tsc);

	RTE_SET_USED(n);
	if (s != 0 && n_lat < MAX_LAT)
		lat[n_lat++] = now - s;
	__atomic_store_n(&sent_tsc, 0, __ATOMIC_RELAXED);
}

static void
b_open(const char *sock)
{
	B.mode = VU_SINK_NAPI;
	B.on_rx = b_on_rx;
	vu_sink_open(&B, sock);
}

static void
b_stop_thread(void)
{
	vu_sink_stop_thread(&B);
}

static void
b_close_at(bool at_once)
{
	vu_sink_close_at(&B, at_once);
}

static void
b_close(void)
{
	b_close_at(false);
}

static void
setup(void)
{
	memset(&A, 0, sizeof(A));
	memset(&B, 0, sizeof(B));
	B.stop_fd = -1;
	sent_tsc = 0;
	n_lat = 0;
	swh_reset();
	hvsw_init(&D);
}

static void
teardown(void)
{
	b_close();
	guest_close(&A);
	hvsw_cleanup(&D);
}

static void
sock_of(const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s.sock", D.dir, name);
}

/* Daemon with ports a and b (b with @rxmod), A and B attached, both up. */
static void
start_pair_opts(const char *rxmod, const char *const *opts)
{
	char sa[160], sb[160], extra[64];

	ck_assert_msg(hvsw_start(&D, opts) == 0, "hvswitch did not start");
	snprintf(extra, sizeof(extra), ",\"rxmod\":\"%s\"", rxmod);
	hvsw_add_port(&D, "a", NULL);
	hvsw_add_port(&D, "b", extra);
	sock_of("a", sa, sizeof(sa));
	sock_of("b", sb, sizeof(sb));
	ck_assert_int_eq(guest_open(&A, "A", 1, sa, false), 0);
	b_open(sb);
	ck_assert(hvsw_wait_up(&D, "a", T));
	ck_assert(hvsw_wait_up(&D, "b", T));
	/* test rxmod-packed: both guests on packed rings, the switch's moderation unchanged */
	if (getenv("HV_TEST_VU_ARGS") && strstr(getenv("HV_TEST_VU_ARGS"), "packed_vq=1")) {
		for (const char *p = "a"; p != NULL; p = (*p == 'a' ? "b" : NULL)) {
			char q[32];
			cJSON *r;
			const cJSON *f;

			snprintf(q, sizeof(q), "{\"name\":\"%s\"}", p);
			r = hvsw_ok(&D, "port.show", q);
			f = cJSON_GetObjectItemCaseSensitive(r, "negotiated_features");
			ck_assert_msg(cJSON_IsNumber(f) && ((uint64_t)f->valuedouble &
							    (UINT64_C(1) << VIRTIO_F_RING_PACKED)),
				      "port %s: no packed ring negotiated", p);
			cJSON_Delete(r);
		}
	}
}

static void
start_pair(const char *rxmod)
{
	start_pair_opts(rxmod, NULL);
}

/* A counter of port b's guest RX ring (vring 0: "tx" of queue pair 0). */
static double
b_ring(const char *counter)
{
	cJSON *r = hvsw_ok(&D, "port.show", "{\"name\":\"b\"}");
	const cJSON *qp = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(r, "qps"), 0);
	const cJSON *tx = cJSON_GetObjectItemCaseSensitive(qp, "tx");
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(tx, counter);
	double d = cJSON_IsNumber(v) ? v->valuedouble : -1;

	cJSON_Delete(r);
	return d;
}

static bool
wait_frames(uint64_t want, unsigned int timeout_ms)
{
	uint64_t end = swh_now_ms() + timeout_ms;

	/* sleep while waiting: B runs on this CPU */
	while (vu_ld(&B.frames) < want) {
		if (swh_now_ms() > end)
			return false;
		usleep(20);
	}
	return true;
}

/* Until B's eventfd total equals the switch's count (an interrupt may be in flight). */
static bool
wait_irqs_match(unsigned int timeout_ms)
{
	uint64_t end = swh_now_ms() + timeout_ms;

	do {
		if ((double)vu_ld(&B.irqs) == b_ring("irqs"))
			return true;
		usleep(1000);
	} while (swh_now_ms() < end);
	return false;
}

static void
spin_us(uint64_t us)
{
	uint64_t end = rte_rdtsc() + us * rte_get_tsc_hz() / 1000000;

	while (rte_rdtsc() < end)
		rte_pause();
}

static double
us_of(uint64_t cycles)
{
	return (double)cycles * 1e6 / (double)rte_get_tsc_hz();
}

/* CLOCK_MONOTONIC in ns: the daemon's /hvswitch/pmd last_wake_ns is on it. */
static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Stream frames every @gap_us for @ms; returns the interrupts B took meanwhile. */
static uint64_t
stream(unsigned int ms, unsigned int gap_us, uint64_t *frames_out, double *elapsed_ms)
{
	uint64_t hz = rte_get_tsc_hz(), t0 = rte_rdtsc(), end = t0 + hz / 1000 * ms;
	uint64_t irq0 = vu_ld(&B.irqs), f0 = vu_ld(&B.frames), n = 0;

	swh_reset(); /* frame ids start over */
	while (rte_rdtsc() < end) {
		guest_send(&A, &swh_bcast, NULL, 0);
		n++;
		spin_us(gap_us);
	}
	/* B may fall behind and its ring overflow: wait for what the switch delivered */
	{
		uint64_t end2 = swh_now_ms() + T;
		double delivered;

		do {
			delivered = b_ring("packets");
			if ((double)vu_ld(&B.frames) == delivered && delivered >= (double)f0 + 1)
				break;
			usleep(1000);
		} while (swh_now_ms() < end2);
		ck_assert_msg((double)vu_ld(&B.frames) == delivered,
			      "B got %" PRIu64 " frames, the switch delivered %.0f",
			      vu_ld(&B.frames), delivered);
	}
	ck_assert(wait_irqs_match(T));
	*elapsed_ms = us_of(rte_rdtsc() - t0) / 1000;
	*frames_out = n;
	return vu_ld(&B.irqs) - irq0;
}

/*
 * A constant stream: at most one interrupt per window (1 ms here, so the
 * bound is not blurred by this machine's scheduling), counted both by the
 * switch and by B's eventfd; then the same stream with moderation off.
 */
START_TEST(stream_one_interrupt_per_window)
{
	uint64_t frames, irqs, irqs_off;
	double ms, ms_off;

	start_pair("1000");
	irqs = stream(300, 20, &frames, &ms);
	printf("rxmod 1000: %" PRIu64 " frames, %" PRIu64 " interrupts in %.1f ms, "
	       "held %.0f, early %.0f, window %.0f us\n",
	       frames, irqs, ms, b_ring("irqs_held"), b_ring("irqs_early"), b_ring("window_us"));
	ck_assert_uint_ge(irqs, 5);
	/* at most one per window of the elapsed time, plus the one that opens the first */
	ck_assert_msg((double)irqs <= ms / 1.0 + 1, "%" PRIu64 " interrupts in %.1f ms", irqs, ms);
	ck_assert(b_ring("irqs_held") > 0);
	ck_assert_uint_eq(vu_ld(&B.lost), 0);

	/* live change: off */
	cJSON_Delete(hvsw_ok(&D, "port.set", "{\"name\":\"b\",\"rxmod\":0}"));
	ck_assert(b_ring("window_us") == 0);
	irqs_off = stream(300, 20, &frames, &ms_off);
	printf("rxmod 0: %" PRIu64 " frames, %" PRIu64 " interrupts in %.1f ms\n", frames, irqs_off,
	       ms_off);
	ck_assert_uint_gt(irqs_off, irqs);
	ck_assert_uint_eq(vu_ld(&B.lost), 0);
}
END_TEST

/* B's interrupts so far, without sleeping (B's thread stopped: the test is B). */
static uint64_t
b_take_irqs(void)
{
	struct pollfd pfd = {.fd = B.fd, .events = POLLIN};
	uint64_t cnt;

	if (poll(&pfd, 1, 0) == 1 && read(B.fd, &cnt, sizeof(cnt)) == sizeof(cnt))
		B.irqs += cnt;
	return B.irqs;
}

static unsigned int
b_drain(void)
{
	struct rte_mbuf *pkts[32];
	unsigned int n = 0;
	uint16_t k;

	while ((k = rte_eth_rx_burst(B.eth, 0, pkts, 32)) > 0) {
		rte_pktmbuf_free_bulk(pkts, k);
		n += k;
	}
	return n;
}

/* B asks for interrupts, then (as a driver must) looks at its ring again. */
static void
b_arm(void)
{
	rte_eth_dev_rx_intr_enable(B.eth, 0);
	rte_atomic_thread_fence(__ATOMIC_SEQ_CST);
	ck_assert_uint_eq(b_drain(), 0);
}

/*
 * The window costs no interrupt: a NAPI guest, played step by step by the
 * test. A frame interrupts B; B's handler turns interrupts off and polls,
 * and takes the frames that keep coming meanwhile; its ring empty, B re-arms
 * and looks again (nothing). Those frames came while B asked for no
 * interrupt: they owe none, with the window (10 ms, far beyond this
 * machine's noise) as without it. Before, they made one owed, which the
 * window held and then sent to the re-armed B for frames it had taken: two
 * interrupts per burst with the window, one without.
 */
START_TEST(polled_frames_owe_no_interrupt)
{
	static const unsigned int windows[] = {10000, 0};

	start_pair("0");
	b_stop_thread();
	for (unsigned int w = 0; w < RTE_DIM(windows); w++) {
		uint64_t irq0;

		cJSON_Delete(hvsw_ok(&D, "port.set", "{\"name\":\"b\",\"rxmod\":%u}", windows[w]));
		irq0 = b_take_irqs();
		for (unsigned int c = 0; c < 8; c++) {
			double pk = b_ring("packets");
			uint64_t end;

			usleep(windows[w] + 2000); /* no window open */
			b_arm();
			guest_send(&A, &swh_bcast, NULL, 0);
			end = swh_now_ms() + T;
			while (b_take_irqs() < irq0 + c + 1 && swh_now_ms() < end)
				usleep(50);
			ck_assert_uint_eq(b_take_irqs(), irq0 + c + 1);
			rte_eth_dev_rx_intr_disable(B.eth, 0); /* the handler: poll */
			for (int i = 0; i < 4; i++)
				guest_send(&A, &swh_bcast, NULL, 0);
			end = swh_now_ms() + T;
			while (b_ring("packets") < pk + 5 && swh_now_ms() < end)
				usleep(50);
			ck_assert_uint_eq(b_drain(), 5);
			b_arm();
			usleep(windows[w] + 5000); /* the window closes: what it held goes */
			ck_assert_msg(b_take_irqs() == irq0 + c + 1,
				      "rxmod %u, burst %u: %" PRIu64 " interrupts for one burst",
				      windows[w], c, b_take_irqs() - irq0 - c);
			ck_assert((double)b_take_irqs() == b_ring("irqs"));
			rte_eth_dev_rx_intr_disable(B.eth, 0);
		}
		printf("rxmod %u: 8 bursts of 5 frames, %" PRIu64 " interrupts, polled publishes "
		       "%.0f\n",
		       windows[w], b_take_irqs() - irq0, b_ring("irqs_unwanted"));
	}
	ck_assert(b_ring("irqs_unwanted") >= 16);
}
END_TEST

/*
 * A frame after a quiet spell interrupts at once; the next one, inside the
 * window that interrupt opened, waits for the window to close (5 ms here)
 * and no longer: its interrupt comes from the switch, not B's timeout.
 */
START_TEST(lone_frame_within_window)
{
	uint64_t hz, t1, t2, irq0;
	double since_first, wait2;

	start_pair("5000");
	hz = rte_get_tsc_hz();
	usleep(20000); /* no window open */
	irq0 = vu_ld(&B.irqs);
	t1 = rte_rdtsc();
	__atomic_store_n(&sent_tsc, t1, __ATOMIC_RELEASE);
	guest_send(&A, &swh_bcast, NULL, 0);
	ck_assert(wait_frames(1, T));
	ck_assert_uint_eq(vu_ld(&B.irqs), irq0 + 1);
	printf("first frame: interrupt after %.1f us\n", us_of(lat[0]));
	t2 = rte_rdtsc();
	__atomic_store_n(&sent_tsc, t2, __ATOMIC_RELEASE);
	guest_send(&A, &swh_bcast, NULL, 0);
	ck_assert(wait_frames(2, T));
	ck_assert_uint_eq(vu_ld(&B.irqs), irq0 + 2);
	ck_assert_uint_eq(vu_ld(&B.lost), 0);
	since_first = us_of(vu_ld(&B.last_wake_tsc) - t1);
	wait2 = us_of(lat[1]);
	printf("second frame: sent %.1f us after the first, delivered after %.1f us; "
	       "interrupt %.1f us after the first was sent\n",
	       us_of(t2 - t1), wait2, since_first);
	/* held: the interrupt that opened the window went after t1 */
	ck_assert_msg(since_first >= 5000, "second interrupt %.1f us after the first frame",
		      since_first);
	/*
	 * and it came: B was woken by the switch's interrupt, not by its own
	 * timeout (how long B took to run after that is this machine's business)
	 */
	ck_assert(b_ring("irqs_held") == 1);
	RTE_SET_USED(hz);
}
END_TEST

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* One frame at a time, 0..300 µs after B got the previous one; p99 of delivery, µs. */
static double
race(unsigned int n, const char *label)
{
	uint64_t lost0 = vu_ld(&B.lost), irq0 = vu_ld(&B.irqs);
	double p50, p99, max;

	n_lat = 0;
	for (unsigned int i = 0; i < n; i++) {
		uint64_t f = vu_ld(&B.frames);

		__atomic_store_n(&sent_tsc, rte_rdtsc(), __ATOMIC_RELEASE);
		guest_send(&A, &swh_bcast, NULL, 0);
		ck_assert_msg(wait_frames(f + 1, T), "frame %u never arrived", i);
		spin_us((uint64_t)(rand() % 300));
	}
	ck_assert_uint_eq(n_lat, n);
	qsort(lat, n_lat, sizeof(lat[0]), cmp_u64);
	p50 = us_of(lat[n / 2]);
	p99 = us_of(lat[n * 99 / 100]);
	max = us_of(lat[n - 1]);
	printf("rxmod %s, %u frames: delivery p50 %.1f us, p99 %.1f us, max %.1f us; "
	       "%" PRIu64 " interrupts, lost %" PRIu64 "\n",
	       label, n, p50, p99, max, vu_ld(&B.irqs) - irq0, vu_ld(&B.lost) - lost0);
	/* a lost interrupt, or one held past its window, leaves B to its timeout */
	ck_assert_uint_eq(vu_ld(&B.lost), lost0);
	return p99;
}

/*
 * Frames arrive while B polls, while it re-arms and while it sleeps; B
 * re-arms from its own thread, behind the switch's loop, mostly while the
 * window the previous interrupt opened is still open (1 ms: the next frame
 * comes within it). No frame may wait for B's timeout, and p99 may be at most
 * the window plus 2 ms above p99 without one, in the same run (plus that p99
 * again on a noisy machine: it measures the noise).
 */
START_TEST(rearm_race_no_outliers)
{
	double p99_off, p99_on;

	start_pair("0");
	srand(42);
	/*
	 * Noise only ever adds latency, so one attempt within the bound shows
	 * the policy holds; the bug this looks for (an interrupt waiting for a
	 * later frame) fails every attempt. A loaded CI host gets three.
	 */
	for (int attempt = 0;; attempt++) {
		cJSON_Delete(hvsw_ok(&D, "port.set", "{\"name\":\"b\",\"rxmod\":0}"));
		p99_off = race(1000, "0");
		cJSON_Delete(hvsw_ok(&D, "port.set", "{\"name\":\"b\",\"rxmod\":1000}"));
		p99_on = race(1000, "1000");
		/* the machine's own noise is what p99 without a window shows: allow it once more */
		if (p99_on <= 2 * p99_off + 1000 + 2000)
			break;
		ck_assert_msg(attempt < 2, "p99 %.1f us with the window, %.1f without", p99_on,
			      p99_off);
	}
	ck_assert(b_ring("irqs_held") > 0);
	ck_assert(wait_irqs_match(T));
}
END_TEST

/*
 * An owed interrupt of a ring that is reset before its window closes is
 * dropped, not delivered to what comes after. The second frame lands inside
 * the 10 ms window the first interrupt opened (B is armed, so it would be
 * wanted); then B's frontend goes away. On a machine too slow to do that
 * within the window the interrupt is sent instead: tried a few times.
 */
START_TEST(owed_dropped_on_reset)
{
	char sb[160];
	bool checked = false;

	start_pair("10000");
	sock_of("b", sb, sizeof(sb));
	for (int attempt = 0; attempt < 4 && !checked; attempt++) {
		double irqs0 = b_ring("irqs"), drop0 = b_ring("irqs_dropped");
		double held0 = b_ring("irqs_held"), pk0 = b_ring("packets"), irqs, dropped, supp;
		double supp0 = b_ring("irqs_suppressed");
		uint64_t end, f0 = vu_ld(&B.frames);
		bool in_ring;

		usleep(20000); /* no window open */
		guest_send(&A, &swh_bcast, NULL, 0);
		ck_assert(wait_frames(f0 + 1, T));
		/* B stops taking frames but stays armed: the owed interrupt is wanted */
		b_stop_thread();
		rte_eth_dev_rx_intr_enable(B.eth, 0);
		guest_send(&A, &swh_bcast, NULL, 0);
		end = swh_now_ms() + T;
		while (!(in_ring = b_ring("packets") == pk0 + 2) && swh_now_ms() < end)
			usleep(200);
		b_close_at(true); /* the frontend goes away: its rings are reset */
		/* the owed interrupt is settled when its window closes: sent or dropped */
		end = swh_now_ms() + T;
		while (in_ring &&
		       b_ring("irqs") + b_ring("irqs_dropped") + b_ring("irqs_suppressed") <
			       irqs0 + drop0 + supp0 + 2 &&
		       swh_now_ms() < end)
			usleep(1000);
		irqs = b_ring("irqs") - irqs0;
		dropped = b_ring("irqs_dropped") - drop0;
		supp = b_ring("irqs_suppressed") - supp0;
		printf("attempt %d: in ring %d, held +%.0f, irqs +%.0f, suppressed +%.0f, "
		       "dropped +%.0f\n",
		       attempt, in_ring, b_ring("irqs_held") - held0, irqs, supp, dropped);
		if (in_ring && b_ring("irqs_held") == held0 + 1) {
			/* the window closed before the reset (sent or declined), or it is dropped */
			ck_assert(irqs + dropped + supp == 2);
			if (irqs == 1 && supp == 0) {
				usleep(20000);
				ck_assert(b_ring("irqs") == irqs0 + 1); /* and nothing later */
				checked = true;
			}
		}
		memset(&B, 0, sizeof(B));
		B.stop_fd = -1;
		b_open(sb);
		ck_assert(hvsw_wait_up(&D, "b", T));
	}
	ck_assert_msg(checked, "the window always closed before the reset");
}
END_TEST

/* Frames after idle spells of 5 ms each; prints and returns p50 of delivery, µs. */
static double
after_idle(unsigned int n, const char *label)
{
	double p50, max;

	n_lat = 0;
	for (unsigned int i = 0; i < n; i++) {
		uint64_t f = vu_ld(&B.frames);

		usleep(5000); /* ten times the idle time: the PMD is asleep */
		__atomic_store_n(&sent_tsc, rte_rdtsc(), __ATOMIC_RELEASE);
		guest_send(&A, &swh_bcast, NULL, 0);
		ck_assert_msg(wait_frames(f + 1, T), "frame %u did not arrive", i);
	}
	ck_assert_uint_eq(n_lat, n);
	qsort(lat, n_lat, sizeof(lat[0]), cmp_u64);
	p50 = us_of(lat[n / 2]);
	max = us_of(lat[n - 1]);
	printf("%s: %u frames after 5 ms idle: delivery p50 %.1f us, p90 %.1f us, max %.1f us\n",
	       label, n, p50, us_of(lat[n * 9 / 10]), max);
	return p50;
}

/* The same frames with a PMD that spins: the baseline of the wake-up cost. */
START_TEST(idle_pmd_spinning_baseline)
{
	start_pair("0");
	after_idle(50, "spinning PMD");
	ck_assert_uint_eq(vu_ld(&B.lost), 0);
}
END_TEST

/*
 * An idle PMD (--pmd-sleep) sleeps on the guests' kicks and wakes on the
 * first one: frames sent after idle spells all arrive, through wake-ups by
 * kick (not by the sleep's timeout); the delivery times, against the
 * spinning baseline, show what a wake-up costs.
 */
START_TEST(idle_pmd_sleeps_and_wakes)
{
	static const char *const opts[] = {"--pmd-sleep", "500", NULL};
	const unsigned int n = 50;
	double sleeps, kicks;
	cJSON *v;
	int fd;

	start_pair_opts("0", opts);
	after_idle(n, "PMD sleeping after 500 us idle");
	fd = swh_tel_open(D.prefix, D.pid);
	ck_assert_int_ge(fd, 0);
	/*
	 * The wake-up alone: from the send (the guest's kick follows at once)
	 * to the PMD's return from epoll, both on CLOCK_MONOTONIC.
	 */
	{
		uint64_t wake[20];
		unsigned int k = 0;

		for (unsigned int i = 0; i < RTE_DIM(wake); i++) {
			uint64_t f = vu_ld(&B.frames), t;
			double w;

			usleep(5000);
			t = mono_ns();
			guest_send(&A, &swh_bcast, NULL, 0);
			ck_assert(wait_frames(f + 1, T));
			v = swh_tel(fd, "/hvswitch/pmd");
			w = swh_tel_num(v, "0", "last_wake_ns");
			cJSON_Delete(v);
			if (w > (double)t)
				wake[k++] = (uint64_t)w - t;
		}
		ck_assert_uint_gt(k, RTE_DIM(wake) / 2);
		qsort(wake, k, sizeof(wake[0]), cmp_u64);
		printf("send to PMD awake: p50 %.1f us, min %.1f us, max %.1f us (%u wake-ups)\n",
		       wake[k / 2] / 1e3, wake[0] / 1e3, wake[k - 1] / 1e3, k);
	}
	v = swh_tel(fd, "/hvswitch/pmd");
	sleeps = swh_tel_num(v, "0", "sleeps");
	kicks = swh_tel_num(v, "0", "wakeups_kick");
	printf("PMD sleeps %.0f, woken by kicks %.0f, by timeout %.0f, slept %.0f us\n", sleeps,
	       kicks, swh_tel_num(v, "0", "wakeups_timeout"), swh_tel_num(v, "0", "slept_us"));
	ck_assert(sleeps >= n / 2);
	ck_assert(kicks >= n / 2);
	cJSON_Delete(v);
	close(fd);
	ck_assert_uint_eq(vu_ld(&B.lost), 0);
}
END_TEST

static Suite *
make_suite(void)
{
	Suite *s = suite_create("rxmod");
	TCase *t = tcase_create("rxmod");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 120);
	tcase_add_test(t, stream_one_interrupt_per_window);
	tcase_add_test(t, lone_frame_within_window);
	tcase_add_test(t, rearm_race_no_outliers);
	tcase_add_test(t, owed_dropped_on_reset);
	tcase_add_test(t, idle_pmd_spinning_baseline);
	tcase_add_test(t, idle_pmd_sleeps_and_wakes);
	suite_add_tcase(s, t);
	/* its own case: CK_RUN_CASE=polled runs it alone */
	t = tcase_create("polled");
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 120);
	tcase_add_test(t, polled_frames_owe_no_interrupt);
	suite_add_tcase(s, t);
	return s;
}

int
main(int argc, char **argv)
{
	return swh_run_suite(make_suite, argc, argv);
}
