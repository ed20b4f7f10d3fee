/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Hostile frontends against drivers/vhost's interrupts and kicks (the rest is
 * test_hostile.c): the guest's interrupt flags, and eventfds the frontend
 * shares with us and turns against us. Each case checks that the offender
 * lost its ring or its connection and that a well-behaved guest on another
 * port (DPDK's virtio-user) still exchanges frames.
 */
#include <check.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <rte_ethdev.h>

#include "ring_fixture.h"
#include "vhost_internal.h"

/* Interrupts the backend sent on a call eventfd since the last look. */
static uint64_t
calls(int vring)
{
	uint64_t n = 0;

	if (read(fe.call[vring], &n, sizeof(n)) != sizeof(n))
		return 0;
	return n;
}

/* Hand the guest one frame on its RX ring (vring 0), buffer @i. */
static void
deliver_one(uint16_t i)
{
	uint64_t addr = raw_gpa(RAW_DATA_OFF + i * 0x800u);
	uint32_t len = 0x800;
	uint16_t flags = VRING_DESC_F_WRITE;
	struct rte_mbuf *m;

	raw_fe_post(&fe, 0, i, 1, &addr, &len, &flags);
	m = peer_frame(peer_switch_pool(), 60, i, 1);
	ck_assert_uint_eq(hv_vhost_tx_burst(bad, 0, &m, 1), 1);
}

START_TEST(irq_no_interrupt_flag)
{
	setup_rings();
	deliver_one(0);
	ck_assert_uint_eq(calls(0), 1);
	fe.avail[0]->flags = VRING_AVAIL_F_NO_INTERRUPT;
	deliver_one(1);
	deliver_one(2);
	ck_assert_uint_eq(calls(0), 0);
	ck_assert_uint_eq(stats(HV_VHOST_TX).irqs_sent, 1);
	ck_assert_uint_eq(stats(HV_VHOST_TX).irqs_suppressed, 2);
	fe.avail[0]->flags = 0;
	deliver_one(3);
	ck_assert_uint_eq(calls(0), 1);
}
END_TEST

START_TEST(irq_event_idx)
{
	uint16_t *used_event = &fe.avail[0]->ring[RAW_RING_SIZE];

	ck_assert_int_eq(raw_fe_setup(&fe, HV_VHOST_F_VERSION_1 | HV_VHOST_F_MRG_RXBUF |
						   HV_VHOST_F_EVENT_IDX),
			 0);
	/* NO_INTERRUPT means nothing with EVENT_IDX: used_event rules */
	fe.avail[0]->flags = VRING_AVAIL_F_NO_INTERRUPT;
	*used_event = 0;
	deliver_one(0); /* used 0 -> 1 crosses used_event 0 */
	ck_assert_uint_eq(calls(0), 1);
	*used_event = 3; /* the guest wants to hear when entry 3 is used */
	deliver_one(1);  /* 1 -> 2 */
	deliver_one(2);  /* 2 -> 3 */
	ck_assert_uint_eq(calls(0), 0);
	deliver_one(3); /* 3 -> 4 crosses 3 */
	ck_assert_uint_eq(calls(0), 1);
	deliver_one(4);
	ck_assert_uint_eq(calls(0), 0);
	ck_assert_uint_eq(stats(HV_VHOST_TX).irqs_sent, 2);
	ck_assert_uint_eq(stats(HV_VHOST_TX).irqs_suppressed, 3);
	/* re-armed for the very next entry */
	*used_event = 5;
	deliver_one(5);
	ck_assert_uint_eq(calls(0), 1);
}
END_TEST

START_TEST(kicks_counted)
{
	uint64_t one = 1, end;

	setup_rings();
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(write(fe.kick[1], &one, sizeof(one)), (int)sizeof(one));
	/* the control thread drains kick eventfds about every 100 ms */
	end = peer_now_ms() + TIMEOUT_MS;
	while (stats(HV_VHOST_RX).kicks < 3 && peer_now_ms() < end)
		usleep(10 * 1000);
	ck_assert_uint_eq(stats(HV_VHOST_RX).kicks, 3);
	ck_assert_uint_eq(stats(HV_VHOST_TX).kicks, 0);
}
END_TEST

/*
 * The suite runs without fork (one EAL): a test that would block for good
 * fails the run after GUARD_S seconds instead of holding it to meson's timeout.
 */
#define GUARD_S 10

struct guard {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool done;
	const char *what;
};

static void *
guard_main(void *arg)
{
	struct guard *g = arg;
	struct timespec until;
	bool done;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += GUARD_S;
	pthread_mutex_lock(&g->lock);
	while (!g->done && pthread_cond_timedwait(&g->cond, &g->lock, &until) == 0)
		;
	done = g->done;
	pthread_mutex_unlock(&g->lock);
	if (!done) {
		fprintf(stderr, "FAIL %s: still blocked after %d s\n", g->what, GUARD_S);
		_exit(1);
	}
	return NULL;
}

static void
guard_start(struct guard *g, const char *what)
{
	*g = (struct guard){.what = what};
	pthread_mutex_init(&g->lock, NULL);
	pthread_cond_init(&g->cond, NULL);
	ck_assert_int_eq(pthread_create(&g->thread, NULL, guard_main, g), 0);
}

static void
guard_stop(struct guard *g)
{
	pthread_mutex_lock(&g->lock);
	g->done = true;
	pthread_cond_signal(&g->cond);
	pthread_mutex_unlock(&g->lock);
	pthread_join(g->thread, NULL);
	pthread_cond_destroy(&g->cond);
	pthread_mutex_destroy(&g->lock);
}

/*
 * After a blocked callfd write: the frontend is dropped, a new one is refused
 * for a while (each try would cost the polling thread again), then taken.
 */
/* Connect the raw frontend: whether the port took it (or closed it at once). */
static bool
connect_taken(void)
{
	uint64_t before = hv_vhost_port_connections(bad), end = peer_now_ms() + TIMEOUT_MS;

	ck_assert_int_eq(raw_fe_connect(&fe, bad_path), 0);
	for (;;) {
		if (hv_vhost_port_connections(bad) > before)
			return true;
		if (raw_fe_closed(&fe, 10))
			return false;
		ck_assert_uint_lt(peer_now_ms(), end);
	}
}

static void
assert_blocker_dropped(void)
{
	uint64_t closed_at, end;
	bool taken;

	ck_assert(raw_fe_closed(&fe, TIMEOUT_MS));
	closed_at = peer_now_ms();
	raw_fe_close(&fe);
	assert_bystander_ok();
	taken = connect_taken();
	/* refused, unless this machine took the whole hold-off to get here */
	ck_assert(!taken || peer_now_ms() - closed_at >= 1000);
	raw_fe_close(&fe);
	end = peer_now_ms() + 1000 + TIMEOUT_MS;
	while (!connect_taken()) {
		raw_fe_close(&fe);
		ck_assert_uint_lt(peer_now_ms(), end);
		usleep(20 * 1000); /* the next try; the hold-off is 1 s */
	}
	setup_rings();
	deliver_one(0);
	ck_assert_uint_eq(calls(0), 1);
}

/*
 * A frontend that fills its call eventfd and puts it back in blocking mode
 * would hold the polling thread in its write forever, and with it every
 * port that thread serves: the control thread cuts the write short, the ring
 * stops, and the burst returns.
 */
START_TEST(irq_call_blocked_write_cut_short)
{
	uint64_t full = UINT64_C(0xfffffffffffffffe), t0;
	struct guard g;
	int flags;

	setup_rings();
	/* we made it non-blocking when we took it ... */
	flags = fcntl(fe.call[0], F_GETFL);
	ck_assert(flags >= 0 && (flags & O_NONBLOCK));
	/* ... and the frontend, who shares it, undoes that */
	ck_assert_int_eq(write(fe.call[0], &full, sizeof(full)), (int)sizeof(full));
	ck_assert_int_eq(fcntl(fe.call[0], F_SETFL, flags & ~O_NONBLOCK), 0);
	t0 = peer_now_ms();
	guard_start(&g, "callfd write");
	deliver_one(0); /* blocks in the callfd write until the control thread's tick */
	guard_stop(&g);
	ck_assert_uint_lt(peer_now_ms() - t0, TIMEOUT_MS);
	ck_assert_uint_eq(stats(HV_VHOST_TX).drops[HV_VHOST_DROP_CALL_BLOCKED], 1);
	ck_assert_uint_eq(stats(HV_VHOST_TX).stops, 1);
	ck_assert_uint_eq(stats(HV_VHOST_TX).irqs_sent, 0);
	ck_assert(!hv_vhost_queue_ready(bad, 0));
	assert_bystander_ok();
	assert_blocker_dropped();
}
END_TEST

/*
 * A burst can keep one ring entered while it sends into another: a pause of
 * the first, which waits holding the control lock, must cut short the write
 * stuck on the second (the control thread cannot look for it meanwhile).
 */
static void *
burst_on_tx_into_rx(void *arg)
{
	struct hv_vring *tx = &bad->vr[1];

	RTE_SET_USED(arg);
	if (vring_enter(tx)) {
		deliver_one(0); /* blocks in vring 0's callfd write */
		vring_leave(tx);
	}
	return NULL;
}

START_TEST(irq_call_blocked_while_other_ring_paused)
{
	uint64_t full = UINT64_C(0xfffffffffffffffe), end;
	struct vhost_vring_state st = {.index = 1};
	struct vhost_user_msg reply;
	struct guard g;
	pthread_t t;
	int flags;

	setup_rings();
	flags = fcntl(fe.call[0], F_GETFL);
	ck_assert_int_eq(write(fe.call[0], &full, sizeof(full)), (int)sizeof(full));
	ck_assert_int_eq(fcntl(fe.call[0], F_SETFL, flags & ~O_NONBLOCK), 0);
	guard_start(&g, "pause of the other ring");
	ck_assert_int_eq(pthread_create(&t, NULL, burst_on_tx_into_rx, NULL), 0);
	end = peer_now_ms() + TIMEOUT_MS;
	while (__atomic_load_n(&bad->vr[0].call_watch->since, __ATOMIC_ACQUIRE) == 0)
		ck_assert_uint_lt(peer_now_ms(), end);
	/* stops vring 1, which the stuck burst holds */
	ck_assert_int_eq(raw_fe_send(&fe, VHOST_USER_GET_VRING_BASE, VHOST_USER_VERSION, &st,
				     sizeof(st), NULL, 0),
			 0);
	ck_assert_int_eq(raw_fe_recv(&fe, &reply, TIMEOUT_MS), 0);
	ck_assert_uint_eq(reply.hdr.request, VHOST_USER_GET_VRING_BASE);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	guard_stop(&g);
	ck_assert_uint_eq(stats(HV_VHOST_TX).drops[HV_VHOST_DROP_CALL_BLOCKED], 1);
	assert_blocker_dropped();
}
END_TEST

/* The same full eventfd left non-blocking: the write fails at once. */
START_TEST(irq_call_full)
{
	uint64_t full = UINT64_C(0xfffffffffffffffe);
	struct guard g;

	setup_rings();
	ck_assert_int_eq(write(fe.call[0], &full, sizeof(full)), (int)sizeof(full));
	guard_start(&g, "callfd write");
	deliver_one(0);
	guard_stop(&g);
	ck_assert_uint_eq(stats(HV_VHOST_TX).drops[HV_VHOST_DROP_CALL_BLOCKED], 1);
	ck_assert_uint_eq(stats(HV_VHOST_TX).irqs_sent, 0);
	ck_assert(!hv_vhost_queue_ready(bad, 0));
	assert_bystander_ok();
	assert_blocker_dropped();
}
END_TEST

/* Reading a kick eventfd the frontend emptied first, in blocking mode, returns. */
START_TEST(kick_read_never_waits)
{
	uint64_t three = 3;
	int fd = eventfd(0, EFD_CLOEXEC);
	struct guard g;

	ck_assert_int_ge(fd, 0);
	guard_start(&g, "kick read");
	ck_assert_uint_eq(hv_vhost_kick_read(fd), 0);
	guard_stop(&g);
	ck_assert_int_eq(write(fd, &three, sizeof(three)), (int)sizeof(three));
	ck_assert_uint_eq(hv_vhost_kick_read(fd), 3);
	ck_assert_uint_eq(hv_vhost_kick_read(fd), 0);
	close(fd);
}
END_TEST

static void *
suite(void)
{
	Suite *s = suite_create("hostile-irq");
	TCase *irq = tcase_create("interrupts");

	tcase_add_checked_fixture(irq, setup, teardown);
	tcase_set_timeout(irq, 60);
	tcase_add_test(irq, irq_no_interrupt_flag);
	tcase_add_test(irq, irq_event_idx);
	tcase_add_test(irq, kicks_counted);
	tcase_add_test(irq, irq_call_blocked_write_cut_short);
	tcase_add_test(irq, irq_call_full);
	tcase_add_test(irq, irq_call_blocked_while_other_ring_paused);
	tcase_add_test(irq, kick_read_never_waits);
	suite_add_tcase(s, irq);
	return s;
}

int
main(int argc, char **argv)
{
	return peer_run_suite(suite, argc, argv);
}
