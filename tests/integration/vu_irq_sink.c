/* SPDX-License-Identifier: BSD-3-Clause */
/* A virtio-user guest in rx-interrupt mode on its own thread (vu_irq_sink.h). */
#include <check.h>
#include <sched.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <rte_atomic.h>
#include <rte_bus_vdev.h>
#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "vu_irq_sink.h"

#define SLEEP_MS 200 /* the thread's epoll timeout: far beyond any window used */

static void
got_frames(struct vu_sink *b, struct rte_mbuf **pkts, uint16_t n)
{
	uint64_t now = rte_rdtsc();

	if (b->on_rx != NULL)
		b->on_rx(now, n);
	rte_pktmbuf_free_bulk(pkts, n);
	__atomic_store_n(&b->last_rx_tsc, now, __ATOMIC_RELAXED);
	__atomic_fetch_add(&b->frames, n, __ATOMIC_RELEASE);
}

/*
 * Arm: the flag store before the used index load needs a full fence
 * (virtio 1.2, 2.7.10), which DPDK's virtio PMD leaves to us.
 */
static void
arm(struct vu_sink *b)
{
	rte_eth_dev_rx_intr_enable(b->eth, 0);
	rte_atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/* Frame mode: one frame with interrupts off, re-armed after it. */
static uint16_t
take_one(struct vu_sink *b, struct rte_mbuf **pkts)
{
	uint16_t n;

	rte_eth_dev_rx_intr_disable(b->eth, 0);
	n = rte_eth_rx_burst(b->eth, 0, pkts, 1);
	if (n > 0)
		got_frames(b, pkts, n);
	arm(b);
	return n;
}

/*
 * Until there is nothing left and the sink is armed, having looked at the
 * ring once more after arming (no lost wake-up on our side). Returns false
 * when the sink may sleep.
 */
static bool
take(struct vu_sink *b, struct rte_mbuf **pkts)
{
	uint16_t n;

	if (b->mode == VU_SINK_FRAME) {
		if (take_one(b, pkts) > 0)
			return true;
		n = rte_eth_rx_burst(b->eth, 0, pkts, 1);
		if (n > 0)
			got_frames(b, pkts, n);
		return n > 0;
	}
	/* NAPI: interrupts off while it polls */
	n = rte_eth_rx_burst(b->eth, 0, pkts, 32);
	if (n > 0) {
		got_frames(b, pkts, n);
		return true;
	}
	arm(b);
	n = rte_eth_rx_burst(b->eth, 0, pkts, 32);
	if (n > 0) {
		rte_eth_dev_rx_intr_disable(b->eth, 0);
		got_frames(b, pkts, n);
		return true;
	}
	return false;
}

static void *
sink_main(void *arg)
{
	struct vu_sink *b = arg;
	struct rte_mbuf *pkts[32];
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = b->fd};
	struct epoll_event sev = {.events = EPOLLIN, .data.fd = b->stop_fd};
	int ep = epoll_create1(EPOLL_CLOEXEC);

	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, b->fd, &ev) != 0 ||
	    epoll_ctl(ep, EPOLL_CTL_ADD, b->stop_fd, &sev) != 0)
		return NULL;
	if (b->mode == VU_SINK_FRAME)
		arm(b);
	while (!__atomic_load_n(&b->stop, __ATOMIC_ACQUIRE)) {
		uint64_t cnt;
		uint16_t n;
		int rc;

		if (take(b, pkts))
			continue;
		rc = epoll_wait(ep, &ev, 1, SLEEP_MS);
		if (b->mode == VU_SINK_NAPI)
			rte_eth_dev_rx_intr_disable(b->eth, 0);
		if (rc == 1 && ev.data.fd == b->stop_fd)
			break;
		if (rc == 1 && read(b->fd, &cnt, sizeof(cnt)) == sizeof(cnt)) {
			__atomic_store_n(&b->last_wake_tsc, rte_rdtsc(), __ATOMIC_RELAXED);
			__atomic_fetch_add(&b->irqs, cnt, __ATOMIC_RELEASE);
			__atomic_fetch_add(&b->wakeups, 1, __ATOMIC_RELAXED);
		} else if (rc == 0) {
			n = rte_eth_rx_burst(b->eth, 0, pkts, 32);
			if (n > 0) {
				__atomic_fetch_add(&b->lost, 1, __ATOMIC_RELAXED);
				got_frames(b, pkts, n);
			}
		}
	}
	close(ep);
	return NULL;
}

/* Start the thread, at SCHED_FIFO if asked and allowed. */
static void
start_thread(struct vu_sink *b)
{
	pthread_attr_t attr;
	struct sched_param sp = {.sched_priority = 10};

	b->is_fifo = false;
	if (b->fifo) {
		ck_assert_int_eq(pthread_attr_init(&attr), 0);
		pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
		pthread_attr_setschedpolicy(&attr, SCHED_FIFO);
		pthread_attr_setschedparam(&attr, &sp);
		b->is_fifo = pthread_create(&b->thread, &attr, sink_main, b) == 0;
		pthread_attr_destroy(&attr);
		if (b->is_fifo)
			return;
		printf("vu_irq_sink: SCHED_FIFO refused, the sink runs at normal priority\n");
	}
	ck_assert_int_eq(pthread_create(&b->thread, NULL, sink_main, b), 0);
}

void
vu_sink_open(struct vu_sink *b, const char *sock)
{
	struct rte_eth_conf conf = {.intr_conf = {.rxq = 1}};
	static unsigned int seq;
	char devargs[256], pool[32];

	b->stop_fd = -1;
	snprintf(b->vdev, sizeof(b->vdev), "net_virtio_user%u", 90 + seq);
	snprintf(pool, sizeof(pool), "rxmod_b%u", seq++);
	/* HV_TEST_VU_ARGS: more virtio-user devargs (e.g. packed_vq=1), as switch_guest.c */
	snprintf(devargs, sizeof(devargs),
		 "path=%s,queues=1,queue_size=256,mac=02:00:00:00:00:0b%s%s", sock,
		 getenv("HV_TEST_VU_ARGS") ? "," : "",
		 getenv("HV_TEST_VU_ARGS") ? getenv("HV_TEST_VU_ARGS") : "");
	b->mp = rte_pktmbuf_pool_create(pool, 2047, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
					rte_socket_id());
	ck_assert_ptr_nonnull(b->mp);
	ck_assert_int_eq(rte_vdev_init(b->vdev, devargs), 0);
	b->open = true;
	ck_assert_int_eq(rte_eth_dev_get_port_by_name(b->vdev, &b->eth), 0);
	ck_assert_int_eq(rte_eth_dev_configure(b->eth, 1, 1, &conf), 0);
	ck_assert_int_eq(rte_eth_rx_queue_setup(b->eth, 0, 256, rte_socket_id(), NULL, b->mp), 0);
	ck_assert_int_eq(rte_eth_tx_queue_setup(b->eth, 0, 256, rte_socket_id(), NULL), 0);
	ck_assert_int_eq(rte_eth_dev_start(b->eth), 0);
	b->fd = rte_eth_dev_rx_intr_ctl_q_get_fd(b->eth, 0);
	ck_assert_msg(b->fd >= 0, "virtio-user gives no rx interrupt fd");
	rte_eth_dev_rx_intr_disable(b->eth, 0);
	b->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ck_assert_int_ge(b->stop_fd, 0);
	/*
	 * The thread sleeps, so it shares the test's CPU (the main lcore's): the
	 * daemon's PMD spins on the other one and would delay its wake-ups by a
	 * time slice.
	 */
	start_thread(b);
	b->running = true;
}

void
vu_sink_stop_thread(struct vu_sink *b)
{
	if (!b->running)
		return;
	uint64_t one = 1;

	__atomic_store_n(&b->stop, true, __ATOMIC_RELEASE);
	ck_assert_int_eq(write(b->stop_fd, &one, sizeof(one)), sizeof(one));
	pthread_join(b->thread, NULL);
	close(b->stop_fd);
	b->running = false;
}

void
vu_sink_close_at(struct vu_sink *b, bool at_once)
{
	vu_sink_stop_thread(b);
	if (b->open) {
		/*
		 * virtio-user in rx-interrupt mode also has DPDK's interrupt thread
		 * run its link-state handler on the vhost-user socket: let it go
		 * quiet between the steps of the close (seen crashing in DPDK
		 * 22.11's virtio PMD, in that thread, when closed at once).
		 */
		if (!at_once)
			usleep(20000);
		rte_eth_dev_stop(b->eth);
		rte_eth_dev_close(b->eth);
		usleep(20000);
		rte_vdev_uninit(b->vdev);
		b->open = false;
	}
	rte_mempool_free(b->mp);
	b->mp = NULL;
}

void
vu_sink_close(struct vu_sink *b)
{
	vu_sink_close_at(b, false);
}
