/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * drivers/vhost against DPDK's virtio-user PMD, an independent vhost-user
 * frontend, in one process: frames go out of the frontend, through our
 * backend (echoed back into the same guest) and must come back byte-exact.
 */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>

#include "peer.h"

#define BURST 32
#define TIMEOUT_MS 3000

static const uint32_t sizes[] = {64,   65,   127,  128,  511,  1500, 1514,
				 1518, 2048, 2049, 4096, 8000, 9000};

/* Our side: take what the guest sent and give it back to the same guest. */
static unsigned int
echo_once(struct hv_vhost_port *port)
{
	struct rte_mbuf *pkts[BURST];
	uint16_t n = hv_vhost_rx_burst(port, 0, pkts, BURST);

	if (n > 0)
		hv_vhost_tx_burst(port, 0, pkts, n);
	return n;
}

/*
 * Send @n frames of @len bytes in @segs segments from the guest and wait for
 * all of them to come back in order; returns how many came back intact.
 */
static unsigned int
roundtrip(struct peer *p, uint32_t len, unsigned int segs, unsigned int n, uint32_t seed)
{
	struct rte_mbuf *tx[BURST], *rx[BURST];
	unsigned int sent = 0, got = 0, good = 0;
	uint64_t end = peer_now_ms() + TIMEOUT_MS;

	ck_assert_uint_le(n, BURST);
	for (unsigned int i = 0; i < n; i++) {
		tx[i] = peer_frame(peer_guest_pool(), len, seed + i, segs);
		ck_assert_ptr_nonnull(tx[i]);
	}
	while (got < n && peer_now_ms() < end) {
		if (sent < n)
			sent += rte_eth_tx_burst(p->eth, 0, tx + sent, n - sent);
		echo_once(p->port);
		uint16_t k = rte_eth_rx_burst(p->eth, 0, rx, BURST);

		for (uint16_t i = 0; i < k; i++) {
			if (peer_frame_check(rx[i], len, seed + got))
				good++;
			got++;
			rte_pktmbuf_free(rx[i]);
		}
	}
	for (unsigned int i = sent; i < n; i++)
		rte_pktmbuf_free(tx[i]);
	return good;
}

static void
check_sizes(uint64_t features, const char *vu_args, bool big_without_mrg_ok)
{
	struct peer p;
	unsigned int in_use;

	ck_assert_int_eq(peer_open(&p, "sizes", HV_VHOST_SERVER, features, vu_args), 0);
	ck_assert(peer_wait_ready(&p, TIMEOUT_MS));
	in_use = rte_mempool_in_use_count(peer_switch_pool());
	/*
	 * what was negotiated is what we offered, less what virtio-user lacks
	 * (EVENT_IDX, MQ here, GUEST_ANNOUNCE), the packed ring (packed_vq=1:
	 * test_virtio_user_packed.c) and the offloads (it asks for them only
	 * when the ethdev enables them)
	 */
	ck_assert_uint_eq(hv_vhost_port_features(p.port) & ~(UINT64_C(1) << 30),
			  features & ~HV_VHOST_F_EVENT_IDX & ~HV_VHOST_F_MQ &
				  ~HV_VHOST_F_GUEST_ANNOUNCE & ~HV_VHOST_F_RING_PACKED &
				  ~(HV_VHOST_F_CSUM | HV_VHOST_F_GUEST_CSUM |
				    HV_VHOST_F_GUEST_TSO4 | HV_VHOST_F_GUEST_TSO6 |
				    HV_VHOST_F_HOST_TSO4 | HV_VHOST_F_HOST_TSO6));
	for (size_t i = 0; i < RTE_DIM(sizes); i++) {
		for (unsigned int segs = 1; segs <= 3; segs += 2) {
			uint32_t len = sizes[i];
			unsigned int good = roundtrip(&p, len, segs, 8, (uint32_t)(i * 16 + segs));

			if (good != 8 && !(!big_without_mrg_ok && len > 1518)) {
				struct hv_vhost_vring_stats r, t;
				struct rte_eth_stats es;

				hv_vhost_vring_stats(p.port, 0, HV_VHOST_TX, &r);
				hv_vhost_vring_stats(p.port, 0, HV_VHOST_RX, &t);
				rte_eth_stats_get(p.eth, &es);
				ck_abort_msg("%u-byte frames in %u segments: %u of 8 came back "
					     "(to guest %" PRIu64 " no_buffer %" PRIu64
					     " too_long %" PRIu64 ", from guest %" PRIu64
					     ", guest rx %" PRIu64 " errors %" PRIu64 ")",
					     len, segs, good, r.packets,
					     r.drops[HV_VHOST_DROP_NO_BUFFER],
					     r.drops[HV_VHOST_DROP_TOO_LONG], t.packets,
					     es.ipackets, es.ierrors);
			}
		}
	}
	/* every mbuf our side took for the echo went back to its pool, chains whole */
	ck_assert_uint_eq(rte_mempool_in_use_count(peer_switch_pool()), in_use);
	peer_close(&p);
}

START_TEST(sizes_mrg_indirect)
{
	check_sizes(HV_VHOST_F_VERSION_1 | HV_VHOST_F_MRG_RXBUF | HV_VHOST_F_INDIRECT_DESC, "",
		    true);
}
END_TEST

START_TEST(sizes_mrg_direct)
{
	check_sizes(HV_VHOST_F_VERSION_1 | HV_VHOST_F_MRG_RXBUF, "", true);
}
END_TEST

START_TEST(sizes_nomrg_indirect)
{
	/* without mergeable buffers each frame needs one big guest buffer (10 KiB here) */
	check_sizes(HV_VHOST_F_VERSION_1 | HV_VHOST_F_INDIRECT_DESC, "mrg_rxbuf=0", true);
}
END_TEST

START_TEST(sizes_nomrg_direct_event_idx_offered)
{
	check_sizes(HV_VHOST_F_VERSION_1 | HV_VHOST_F_EVENT_IDX, "mrg_rxbuf=0", true);
}
END_TEST

START_TEST(sizes_default_features)
{
	/* IN_ORDER among them: virtio-user asks for it, so its in-order paths run here */
	check_sizes(HV_VHOST_FEATURES_DEFAULT, "", true);
}
END_TEST

START_TEST(sizes_in_order_nomrg)
{
	check_sizes(HV_VHOST_F_VERSION_1 | HV_VHOST_F_IN_ORDER, "mrg_rxbuf=0", true);
}
END_TEST

START_TEST(sizes_not_in_order)
{
	/* the guest asks for it, we do not offer it: the plain paths */
	check_sizes(HV_VHOST_F_VERSION_1 | HV_VHOST_F_MRG_RXBUF, "in_order=1", true);
}
END_TEST

/* Frames too big for the guest's buffers are dropped and counted, the rest flows. */
START_TEST(too_long_counted)
{
	struct hv_vhost_vring_stats st;
	struct rte_mbuf *m;
	struct peer p;
	uint64_t end;

	ck_assert_int_eq(
		peer_open(&p, "toolong", HV_VHOST_SERVER, HV_VHOST_F_VERSION_1, "mrg_rxbuf=0"), 0);
	ck_assert(peer_wait_ready(&p, TIMEOUT_MS));
	/* a jumbo from the switch side into a guest without mergeable buffers */
	m = peer_frame(peer_switch_pool(), 12000, 7, 6);
	ck_assert_ptr_nonnull(m);
	ck_assert_uint_eq(hv_vhost_tx_burst(p.port, 0, &m, 1), 0);
	ck_assert_int_eq(hv_vhost_vring_stats(p.port, 0, HV_VHOST_TX, &st), 0);
	ck_assert_uint_eq(st.drops[HV_VHOST_DROP_TOO_LONG], 1);
	/* and the ring still works */
	end = peer_now_ms() + TIMEOUT_MS;
	ck_assert_uint_eq(roundtrip(&p, 64, 1, 4, 99), 4);
	ck_assert(peer_now_ms() < end);
	peer_close(&p);
}
END_TEST

/* Two queue pairs: each carries its own frames, and nothing crosses over. */
START_TEST(multiqueue)
{
	struct rte_mbuf *tx[8], *rx[BURST], *pkts[BURST];
	unsigned int back[2] = {0, 0};
	uint64_t end;
	struct peer p;

	ck_assert_int_eq(peer_open_mq(&p, "mq", HV_VHOST_SERVER, 0, "", 2), 0);
	ck_assert(peer_wait_ready(&p, TIMEOUT_MS));
	ck_assert(hv_vhost_port_features(p.port) & HV_VHOST_F_MQ);
	end = peer_now_ms() + TIMEOUT_MS;
	while (!hv_vhost_queue_ready(p.port, 1) && peer_now_ms() < end)
		usleep(1000);
	ck_assert(hv_vhost_queue_ready(p.port, 1));
	for (uint16_t q = 0; q < 2; q++) {
		uint16_t sent = 0;

		for (unsigned int i = 0; i < 8; i++)
			tx[i] = peer_frame(peer_guest_pool(), 100 + q * 100, q * 8 + i, 1);
		end = peer_now_ms() + TIMEOUT_MS;
		while (back[q] < 8 && peer_now_ms() < end) {
			uint16_t n;

			if (sent < 8)
				sent += rte_eth_tx_burst(p.eth, q, tx + sent, 8 - sent);
			/* only queue pair q is echoed: frames must not show up elsewhere */
			n = hv_vhost_rx_burst(p.port, q, pkts, BURST);
			hv_vhost_tx_burst(p.port, q, pkts, n);
			ck_assert_uint_eq(hv_vhost_rx_burst(p.port, q ^ 1, pkts, BURST), 0);
			n = rte_eth_rx_burst(p.eth, q, rx, BURST);
			for (uint16_t i = 0; i < n; i++)
				ck_assert(
					peer_frame_check(rx[i], 100 + q * 100, q * 8 + back[q]++));
			rte_pktmbuf_free_bulk(rx, n);
		}
		ck_assert_uint_eq(back[q], 8);
	}
	peer_close(&p);
}
END_TEST

/* ---- disconnect / reconnect while traffic runs ---- */

struct echo_worker {
	struct hv_vhost_port *port;
	volatile bool stop;
	uint64_t frames;
};

static int
echo_worker_main(void *arg)
{
	struct echo_worker *w = arg;

	while (!w->stop)
		w->frames += echo_once(w->port);
	return 0;
}

/*
 * Push traffic for @ms while the worker echoes, and on until a frame comes
 * back or TIMEOUT_MS pass (a loaded machine may not run the worker at once);
 * returns frames that came back.
 */
static unsigned int
traffic(struct peer *p, unsigned int ms)
{
	uint64_t start = peer_now_ms(), now = start;
	unsigned int back = 0;
	uint32_t seed = 0;

	while (now < start + ms || (back == 0 && now < start + TIMEOUT_MS)) {
		struct rte_mbuf *tx[8], *rx[BURST];
		uint16_t k;

		for (unsigned int i = 0; i < 8; i++)
			tx[i] = peer_frame(peer_guest_pool(), 64 + (seed + i) % 1400, seed + i, 1);
		k = rte_eth_tx_burst(p->eth, 0, tx, 8);
		for (unsigned int i = k; i < 8; i++)
			rte_pktmbuf_free(tx[i]);
		seed += 8;
		k = rte_eth_rx_burst(p->eth, 0, rx, BURST);
		back += k;
		rte_pktmbuf_free_bulk(rx, k);
		now = peer_now_ms();
	}
	return back;
}

static void
check_reconnect(enum hv_vhost_mode mode)
{
	struct echo_worker w = {0};
	unsigned int worker = rte_get_next_lcore(-1, 1, 0);
	unsigned int in_use0;
	struct peer p;
	int fds0;

	ck_assert_msg(worker < RTE_MAX_LCORE, "needs a second lcore (-l 0,1)");
	in_use0 = rte_mempool_in_use_count(peer_switch_pool());
	fds0 = peer_count_fds();
	ck_assert_int_eq(peer_open(&p, mode == HV_VHOST_SERVER ? "srv" : "cli", mode,
				   HV_VHOST_FEATURES_DEFAULT, ""),
			 0);
	ck_assert(peer_wait_ready(&p, TIMEOUT_MS));
	w.port = p.port;
	ck_assert_int_eq(rte_eal_remote_launch(echo_worker_main, &w, worker), 0);
	for (int round = 0; round < 5; round++) {
		uint64_t before = hv_vhost_port_connections(p.port);

		ck_assert_uint_gt(traffic(&p, 200), 0);
		/* the frontend goes away with frames in flight, the PMD still polling */
		peer_frontend_close(&p);
		ck_assert_int_eq(peer_frontend_open(&p), 0);
		ck_assert(peer_wait_ready(&p, TIMEOUT_MS));
		ck_assert_uint_eq(hv_vhost_port_connections(p.port), before + 1);
	}
	ck_assert_uint_gt(traffic(&p, 200), 0);
	w.stop = true;
	rte_eal_wait_lcore(worker);
	ck_assert_uint_gt(w.frames, 0);
	peer_close(&p);
	/* every mbuf and fd the connections took is back */
	ck_assert_uint_eq(rte_mempool_in_use_count(peer_switch_pool()), in_use0);
	ck_assert_int_eq(peer_count_fds(), fds0);
}

START_TEST(reconnect_server_mode)
{
	check_reconnect(HV_VHOST_SERVER);
}
END_TEST

START_TEST(reconnect_client_mode)
{
	check_reconnect(HV_VHOST_CLIENT);
}
END_TEST

/* A second frontend on a busy server port is refused; the first keeps working. */
START_TEST(second_frontend_refused)
{
	struct peer p;
	struct peer q;

	ck_assert_int_eq(peer_open(&p, "busy", HV_VHOST_SERVER, 0, ""), 0);
	ck_assert(peer_wait_ready(&p, TIMEOUT_MS));
	q = p;
	snprintf(q.vdev, sizeof(q.vdev), "net_virtio_user_busy");
	/* virtio-user fails to set up once we close its connection */
	if (peer_frontend_open(&q) == 0)
		peer_frontend_close(&q);
	ck_assert_uint_eq(hv_vhost_port_connections(p.port), 1);
	ck_assert_uint_eq(roundtrip(&p, 100, 1, 8, 5), 8);
	peer_close(&p);
}
END_TEST

/* ---- interrupt hook and ring generations (what interrupt moderation relies on) ---- */

static struct {
	unsigned int calls;
	uint16_t qp;
	enum hv_vhost_dir dir;
	struct hv_vhost_irq_event ev;
} hooked;

static void
record_hook(void *ctx, struct hv_vhost_port *port, uint16_t qp, enum hv_vhost_dir dir,
	    const struct hv_vhost_irq_event *ev)
{
	RTE_SET_USED(ctx);
	RTE_SET_USED(port);
	hooked.calls++;
	hooked.qp = qp;
	hooked.dir = dir;
	hooked.ev = *ev;
}

/* Put @n frames into the guest's RX ring (queue pair 0, HV_VHOST_TX) and return the hook's event. */
static struct hv_vhost_irq_event
deliver_frames(struct peer *p, unsigned int n)
{
	struct rte_mbuf *tx[BURST];

	for (unsigned int i = 0; i < n; i++)
		tx[i] = peer_frame(peer_switch_pool(), 100, i, 1);
	hooked.calls = 0;
	ck_assert_uint_eq(hv_vhost_tx_burst(p->port, 0, tx, (uint16_t)n), n);
	ck_assert_uint_eq(hooked.calls, 1);
	ck_assert_uint_eq(hooked.qp, 0);
	ck_assert_int_eq(hooked.dir, HV_VHOST_TX);
	return hooked.ev;
}

static uint64_t
irq_decisions(struct peer *p)
{
	struct hv_vhost_vring_stats st;

	hv_vhost_vring_stats(p->port, 0, HV_VHOST_TX, &st);
	return st.irqs_sent + st.irqs_suppressed;
}

/*
 * The hook replaces the signal: it is told how many used entries a burst
 * published, the ring size and the ring's generation. An interrupt owed under
 * one generation is not delivered after the ring was stopped, nor after it
 * was started again (a new generation).
 */
static bool
is_default(int sig)
{
	struct sigaction cur;

	ck_assert_int_eq(sigaction(sig, NULL, &cur), 0);
	return !(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_DFL;
}

static void
set_default(int sig)
{
	struct sigaction dfl = {.sa_handler = SIG_DFL};

	sigemptyset(&dfl.sa_mask);
	ck_assert_int_eq(sigaction(sig, &dfl, NULL), 0);
}

/*
 * The driver touches SIGBUS and SIGURG only when hv_vhost_init() is asked to,
 * and then installs handlers that do their job: SIGURG without SA_RESTART
 * (the blocked write must fail), SIGBUS with siginfo (the fault address).
 * No port exists here: the control thread can be restarted.
 */
START_TEST(signals_only_on_request)
{
	struct sigaction cur;

	hv_vhost_fini();
	set_default(SIGBUS);
	set_default(HV_VHOST_CALL_SIGNAL);
	ck_assert_int_eq(hv_vhost_init(1u << 7), -EINVAL);
	ck_assert_int_eq(hv_vhost_init(0), 0);
	ck_assert(is_default(SIGBUS));
	ck_assert(is_default(HV_VHOST_CALL_SIGNAL));
	hv_vhost_fini();

	ck_assert_int_eq(hv_vhost_init(HV_VHOST_INIT_CALL_SIGNAL), 0);
	ck_assert(is_default(SIGBUS));
	ck_assert_int_eq(sigaction(HV_VHOST_CALL_SIGNAL, NULL, &cur), 0);
	ck_assert(cur.sa_handler != SIG_DFL && cur.sa_handler != SIG_IGN);
	ck_assert(!(cur.sa_flags & SA_RESTART));
	hv_vhost_fini();

	/* as the switch and peer_env_init() ask: both, and the state the suite expects */
	ck_assert_int_eq(hv_vhost_init(HV_VHOST_INIT_SIGNALS), 0);
	ck_assert_int_eq(sigaction(SIGBUS, NULL, &cur), 0);
	ck_assert(cur.sa_flags & SA_SIGINFO);
	ck_assert(cur.sa_sigaction != NULL);
	ck_assert(!is_default(HV_VHOST_CALL_SIGNAL));
}
END_TEST

START_TEST(irq_hook_and_generation)
{
	struct hv_vhost_irq_event ev, ev2;
	struct rte_mbuf *rx[BURST];
	struct peer p;
	uint64_t end;

	ck_assert_int_eq(peer_open(&p, "irqhook", HV_VHOST_SERVER, 0, ""), 0);
	ck_assert(peer_wait_ready(&p, TIMEOUT_MS));
	hv_vhost_set_irq_hook(p.port, record_hook, NULL);
	ck_assert(peer_wait_ready(&p, TIMEOUT_MS));
	ev = deliver_frames(&p, 3);
	ck_assert_uint_eq(ev.entries, 3);
	ck_assert_uint_eq(ev.ring_size, 256);
	ck_assert_uint_eq(irq_decisions(&p), 0); /* the hook holds it */
	/* delivered under its generation: sent, or declined by the guest's flags */
	ck_assert_int_ne(hv_vhost_irq_signal(p.port, 0, HV_VHOST_TX, ev.generation),
			 HV_VHOST_IRQ_GONE);
	ck_assert_uint_eq(irq_decisions(&p), 1);
	/* another generation: not delivered, not counted */
	ck_assert_int_eq(hv_vhost_irq_signal(p.port, 0, HV_VHOST_TX, ev.generation + 1),
			 HV_VHOST_IRQ_GONE);
	ck_assert_uint_eq(irq_decisions(&p), 1);
	ev2 = deliver_frames(&p, 1);
	ck_assert_uint_eq(ev2.generation, ev.generation);
	/* the frontend goes away: the ring is reset, the owed interrupt is gone */
	peer_frontend_close(&p);
	end = peer_now_ms() + TIMEOUT_MS;
	while (hv_vhost_queue_ready(p.port, 0) && peer_now_ms() < end)
		usleep(1000);
	ck_assert(!hv_vhost_queue_ready(p.port, 0));
	ck_assert_int_eq(hv_vhost_irq_signal(p.port, 0, HV_VHOST_TX, ev2.generation),
			 HV_VHOST_IRQ_GONE);
	/* a frontend again: still gone (a new generation); new bursts carry the new one */
	ck_assert_int_eq(peer_frontend_open(&p), 0);
	ck_assert(peer_wait_ready(&p, TIMEOUT_MS));
	ck_assert_int_eq(hv_vhost_irq_signal(p.port, 0, HV_VHOST_TX, ev2.generation),
			 HV_VHOST_IRQ_GONE);
	ck_assert_uint_eq(irq_decisions(&p), 1);
	while (rte_eth_rx_burst(p.eth, 0, rx, BURST) > 0)
		;
	ev = deliver_frames(&p, 2);
	ck_assert_uint_ne(ev.generation, ev2.generation);
	ck_assert_int_ne(hv_vhost_irq_signal(p.port, 0, HV_VHOST_TX, ev.generation),
			 HV_VHOST_IRQ_GONE);
	ck_assert_uint_eq(irq_decisions(&p), 2);
	hv_vhost_set_irq_hook(p.port, NULL, NULL);
	peer_close(&p);
}
END_TEST

static void *
suite(void)
{
	Suite *s = suite_create("virtio-user");
	TCase *t = tcase_create("interop");

	tcase_set_timeout(t, 120);
	tcase_add_test(t, sizes_mrg_indirect);
	tcase_add_test(t, sizes_mrg_direct);
	tcase_add_test(t, sizes_nomrg_indirect);
	tcase_add_test(t, sizes_nomrg_direct_event_idx_offered);
	tcase_add_test(t, sizes_default_features);
	tcase_add_test(t, sizes_in_order_nomrg);
	tcase_add_test(t, sizes_not_in_order);
	tcase_add_test(t, too_long_counted);
	tcase_add_test(t, multiqueue);
	tcase_add_test(t, reconnect_server_mode);
	tcase_add_test(t, reconnect_client_mode);
	tcase_add_test(t, second_frontend_refused);
	tcase_add_test(t, irq_hook_and_generation);
	tcase_add_test(t, signals_only_on_request);
	suite_add_tcase(s, t);
	return s;
}

int
main(int argc, char **argv)
{
	return peer_run_suite(suite, argc, argv);
}
