/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The packed ring of drivers/vhost against DPDK's virtio-user PMD with
 * packed_vq=1, in one process: frames out of the frontend, through our
 * backend and back (echoed, or forwarded to a split-ring port and back), must
 * arrive byte-exact, through reconnections too.
 */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
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

/* Offloads virtio-user asks for only when the ethdev enables them, and what it lacks. */
#define NOT_ASKED                                                                                  \
	(HV_VHOST_F_EVENT_IDX | HV_VHOST_F_MQ | HV_VHOST_F_GUEST_ANNOUNCE | HV_VHOST_F_CSUM |      \
	 HV_VHOST_F_GUEST_CSUM | HV_VHOST_F_GUEST_TSO4 | HV_VHOST_F_GUEST_TSO6 |                   \
	 HV_VHOST_F_HOST_TSO4 | HV_VHOST_F_HOST_TSO6 | (UINT64_C(1) << 30))

/* Forward what @from's guest sent to @to's guest; frames forwarded. */
static unsigned int
forward(struct hv_vhost_port *from, struct hv_vhost_port *to)
{
	struct rte_mbuf *pkts[BURST];
	uint16_t n = hv_vhost_rx_burst(from, 0, pkts, BURST);

	if (n > 0)
		hv_vhost_tx_burst(to, 0, pkts, n);
	return n;
}

/*
 * Send @n frames of @len bytes in @segs segments from @src's guest, forward
 * them from @src's port to @dst's port (the same for an echo), and wait for
 * them at @dst's guest in order; returns how many came back intact.
 */
static unsigned int
pass(struct peer *src, struct peer *dst, uint32_t len, unsigned int segs, unsigned int n,
     uint32_t seed)
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
			sent += rte_eth_tx_burst(src->eth, 0, tx + sent, n - sent);
		forward(src->port, dst->port);
		uint16_t k = rte_eth_rx_burst(dst->eth, 0, rx, BURST);

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
check_sizes(uint64_t features, const char *vu_args)
{
	char args[128];
	struct peer p;
	unsigned int in_use;

	snprintf(args, sizeof(args), "packed_vq=1%s%s", vu_args[0] ? "," : "", vu_args);
	ck_assert_int_eq(peer_open(&p, "psizes", HV_VHOST_SERVER, features, args), 0);
	ck_assert(peer_wait_ready(&p, TIMEOUT_MS));
	in_use = rte_mempool_in_use_count(peer_switch_pool());
	/* the packed ring was negotiated, with everything else offered and asked for */
	ck_assert(hv_vhost_port_features(p.port) & HV_VHOST_F_RING_PACKED);
	ck_assert_uint_eq(hv_vhost_port_features(p.port) & ~(UINT64_C(1) << 30),
			  features & ~NOT_ASKED);
	for (size_t i = 0; i < RTE_DIM(sizes); i++) {
		for (unsigned int segs = 1; segs <= 3; segs += 2) {
			uint32_t len = sizes[i];
			unsigned int good = pass(&p, &p, len, segs, 8, (uint32_t)(i * 16 + segs));

			if (good != 8) {
				struct hv_vhost_vring_stats r, t;

				hv_vhost_vring_stats(p.port, 0, HV_VHOST_TX, &r);
				hv_vhost_vring_stats(p.port, 0, HV_VHOST_RX, &t);
				ck_abort_msg("%u-byte frames in %u segments: %u of 8 came back "
					     "(to guest %" PRIu64 " no_buffer %" PRIu64
					     " too_long %" PRIu64 " stops %" PRIu64
					     ", from guest %" PRIu64 " stops %" PRIu64 ")",
					     len, segs, good, r.packets,
					     r.drops[HV_VHOST_DROP_NO_BUFFER],
					     r.drops[HV_VHOST_DROP_TOO_LONG], r.stops, t.packets,
					     t.stops);
			}
		}
	}
	/*
	 * One burst of 9000-byte frames into the guest, each in several of its
	 * buffers when they merge: more used descriptors than a burst holds
	 * back until its end (PK_USED_HELD_MAX), so some are written before.
	 */
	ck_assert_uint_eq(pass(&p, &p, 9000, 1, 20, 5000), 20);
	/* many laps of the 256-slot rings: the wrap counters flipped many times */
	for (uint32_t round = 0; round < 40; round++)
		ck_assert_uint_eq(pass(&p, &p, 60 + round, 1, BURST, 1000 + round * BURST), BURST);
	ck_assert_uint_eq(rte_mempool_in_use_count(peer_switch_pool()), in_use);
	peer_close(&p);
}

START_TEST(packed_mrg_indirect)
{
	check_sizes(HV_VHOST_F_VERSION_1 | HV_VHOST_F_MRG_RXBUF | HV_VHOST_F_INDIRECT_DESC |
			    HV_VHOST_F_RING_PACKED,
		    "");
}
END_TEST

START_TEST(packed_mrg_direct)
{
	check_sizes(HV_VHOST_F_VERSION_1 | HV_VHOST_F_MRG_RXBUF | HV_VHOST_F_RING_PACKED, "");
}
END_TEST

START_TEST(packed_nomrg)
{
	/* without mergeable buffers each frame needs one big guest buffer */
	check_sizes(HV_VHOST_F_VERSION_1 | HV_VHOST_F_INDIRECT_DESC | HV_VHOST_F_RING_PACKED,
		    "mrg_rxbuf=0");
}
END_TEST

START_TEST(packed_default_features)
{
	/* IN_ORDER among them: the TX ring's batches return with one used descriptor */
	check_sizes(HV_VHOST_FEATURES_DEFAULT, "");
}
END_TEST

START_TEST(packed_in_order_nomrg)
{
	check_sizes(HV_VHOST_F_VERSION_1 | HV_VHOST_F_IN_ORDER | HV_VHOST_F_RING_PACKED,
		    "mrg_rxbuf=0");
}
END_TEST

START_TEST(packed_not_in_order)
{
	/* the guest asks for it, we do not offer it */
	check_sizes(HV_VHOST_F_VERSION_1 | HV_VHOST_F_MRG_RXBUF | HV_VHOST_F_RING_PACKED,
		    "in_order=1");
}
END_TEST

/* A packed guest and a split guest on two ports: frames both ways, byte-exact. */
START_TEST(mixed_packed_split)
{
	struct peer a, b;

	ck_assert_int_eq(peer_open(&a, "mixa", HV_VHOST_SERVER, 0, "packed_vq=1"), 0);
	ck_assert_int_eq(peer_open(&b, "mixb", HV_VHOST_SERVER, 0, ""), 0);
	ck_assert(peer_wait_ready(&a, TIMEOUT_MS));
	ck_assert(peer_wait_ready(&b, TIMEOUT_MS));
	ck_assert(hv_vhost_port_features(a.port) & HV_VHOST_F_RING_PACKED);
	ck_assert(!(hv_vhost_port_features(b.port) & HV_VHOST_F_RING_PACKED));
	for (size_t i = 0; i < RTE_DIM(sizes); i++) {
		ck_assert_uint_eq(pass(&a, &b, sizes[i], 1, 8, (uint32_t)i * 8), 8);
		ck_assert_uint_eq(pass(&b, &a, sizes[i], 2, 8, (uint32_t)i * 8 + 500), 8);
	}
	for (uint32_t round = 0; round < 20; round++) {
		ck_assert_uint_eq(pass(&a, &b, 64, 1, BURST, round * 64), BURST);
		ck_assert_uint_eq(pass(&b, &a, 64, 1, BURST, round * 64 + 32), BURST);
	}
	peer_close(&a);
	peer_close(&b);
}
END_TEST

/* Two queue pairs of packed rings: each carries its own frames, nothing crosses over. */
START_TEST(multiqueue)
{
	struct rte_mbuf *tx[8], *rx[BURST], *pkts[BURST];
	unsigned int back[2] = {0, 0};
	uint64_t end;
	struct peer p;

	ck_assert_int_eq(peer_open_mq(&p, "pmq", HV_VHOST_SERVER, 0, "packed_vq=1", 2), 0);
	ck_assert(peer_wait_ready(&p, TIMEOUT_MS));
	ck_assert(hv_vhost_port_features(p.port) & HV_VHOST_F_RING_PACKED);
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
		w->frames += forward(w->port, w->port);
	return 0;
}

/* Push traffic for @ms (and until one frame came back); frames that came back intact. */
static unsigned int
traffic(struct peer *p, unsigned int ms, uint32_t *seed)
{
	uint64_t start = peer_now_ms(), now = start;
	unsigned int back = 0;

	while (now < start + ms || (back == 0 && now < start + TIMEOUT_MS)) {
		struct rte_mbuf *tx[8], *rx[BURST];
		uint16_t k;

		for (unsigned int i = 0; i < 8; i++)
			tx[i] = peer_frame(peer_guest_pool(), 64 + (*seed + i) % 1400, *seed + i,
					   1);
		k = rte_eth_tx_burst(p->eth, 0, tx, 8);
		for (unsigned int i = k; i < 8; i++)
			rte_pktmbuf_free(tx[i]);
		*seed += 8;
		k = rte_eth_rx_burst(p->eth, 0, rx, BURST);
		for (uint16_t i = 0; i < k; i++)
			back += rte_pktmbuf_pkt_len(rx[i]) >= 64;
		rte_pktmbuf_free_bulk(rx, k);
		now = peer_now_ms();
	}
	return back;
}

/* Echo and receive until nothing came for 100 ms. */
static void
drain(struct peer *p)
{
	uint64_t quiet_until = peer_now_ms() + 100;

	while (peer_now_ms() < quiet_until) {
		struct rte_mbuf *rx[BURST];
		uint16_t k;

		forward(p->port, p->port);
		k = rte_eth_rx_burst(p->eth, 0, rx, BURST);
		if (k > 0)
			quiet_until = peer_now_ms() + 100;
		rte_pktmbuf_free_bulk(rx, k);
	}
}

static void
check_reconnect(enum hv_vhost_mode mode)
{
	struct echo_worker w = {0};
	unsigned int worker = rte_get_next_lcore(-1, 1, 0);
	unsigned int in_use0;
	uint32_t seed = 0;
	struct peer p;
	int fds0;

	ck_assert_msg(worker < RTE_MAX_LCORE, "needs a second lcore (-l 0,1)");
	in_use0 = rte_mempool_in_use_count(peer_switch_pool());
	fds0 = peer_count_fds();
	ck_assert_int_eq(peer_open(&p, mode == HV_VHOST_SERVER ? "psrv" : "pcli", mode,
				   HV_VHOST_FEATURES_DEFAULT, "packed_vq=1"),
			 0);
	ck_assert(peer_wait_ready(&p, TIMEOUT_MS));
	ck_assert(hv_vhost_port_features(p.port) & HV_VHOST_F_RING_PACKED);
	w.port = p.port;
	ck_assert_int_eq(rte_eal_remote_launch(echo_worker_main, &w, worker), 0);
	for (int round = 0; round < 5; round++) {
		uint64_t before = hv_vhost_port_connections(p.port);

		ck_assert_uint_gt(traffic(&p, 200, &seed), 0);
		/* the frontend goes away with frames in flight (GET_VRING_BASE), the PMD polling */
		peer_frontend_close(&p);
		ck_assert_int_eq(peer_frontend_open(&p), 0);
		ck_assert(peer_wait_ready(&p, TIMEOUT_MS));
		ck_assert_uint_eq(hv_vhost_port_connections(p.port), before + 1);
	}
	ck_assert_uint_gt(traffic(&p, 200, &seed), 0);
	w.stop = true;
	rte_eal_wait_lcore(worker);
	ck_assert_uint_gt(w.frames, 0);
	/* and byte-exact after all that, once what traffic() left in flight is out */
	drain(&p);
	ck_assert_uint_eq(pass(&p, &p, 1000, 2, 8, 77), 8);
	for (unsigned int d = 0; d < 2; d++) {
		struct hv_vhost_vring_stats st;

		hv_vhost_vring_stats(p.port, 0, d ? HV_VHOST_TX : HV_VHOST_RX, &st);
		ck_assert_uint_eq(st.stops, 0);
	}
	peer_close(&p);
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

/* ---- interrupt hook, generations and kicks (what lib/rxmod relies on) ---- */

static struct {
	unsigned int calls;
	struct hv_vhost_irq_event ev;
} hooked;

static void
record_hook(void *ctx, struct hv_vhost_port *port, uint16_t qp, enum hv_vhost_dir dir,
	    const struct hv_vhost_irq_event *ev)
{
	RTE_SET_USED(ctx);
	RTE_SET_USED(port);
	RTE_SET_USED(qp);
	if (dir == HV_VHOST_TX) {
		hooked.calls++;
		hooked.ev = *ev;
	}
}

START_TEST(irq_hook_and_kicks)
{
	struct rte_mbuf *tx[BURST], *rx[BURST];
	struct hv_vhost_vring_stats st0, st1;
	enum hv_vhost_irq_result res;
	struct peer p;
	uint64_t end;
	uint16_t got = 0;

	ck_assert_int_eq(peer_open(&p, "pirq", HV_VHOST_SERVER, 0, "packed_vq=1"), 0);
	ck_assert(peer_wait_ready(&p, TIMEOUT_MS));
	hv_vhost_set_irq_hook(p.port, record_hook, NULL);
	for (unsigned int i = 0; i < 3; i++)
		tx[i] = peer_frame(peer_switch_pool(), 100, i, 1);
	hooked.calls = 0;
	ck_assert_uint_eq(hv_vhost_tx_burst(p.port, 0, tx, 3), 3);
	ck_assert_uint_eq(hooked.calls, 1);
	/* one slot per frame: virtio-user posts one-descriptor receive buffers */
	ck_assert_uint_eq(hooked.ev.entries, 3);
	ck_assert_uint_eq(hooked.ev.ring_size, 256);
	hv_vhost_vring_stats(p.port, 0, HV_VHOST_TX, &st0);
	res = hv_vhost_irq_signal(p.port, 0, HV_VHOST_TX, hooked.ev.generation);
	ck_assert_int_ne(res, HV_VHOST_IRQ_GONE);
	hv_vhost_vring_stats(p.port, 0, HV_VHOST_TX, &st1);
	ck_assert_uint_eq(st1.irqs_sent + st1.irqs_suppressed,
			  st0.irqs_sent + st0.irqs_suppressed + 1);
	ck_assert_int_eq(hv_vhost_irq_signal(p.port, 0, HV_VHOST_TX, hooked.ev.generation + 1),
			 HV_VHOST_IRQ_GONE);
	end = peer_now_ms() + TIMEOUT_MS;
	while (got < 3 && peer_now_ms() < end) {
		uint16_t k = rte_eth_rx_burst(p.eth, 0, rx, BURST);

		for (uint16_t i = 0; i < k; i++)
			ck_assert(peer_frame_check(rx[i], 100, got + i));
		got += k;
		rte_pktmbuf_free_bulk(rx, k);
	}
	ck_assert_uint_eq(got, 3);

	/* kicks on: the guest's frames are seen by has_avail before any burst takes them */
	ck_assert_int_eq(hv_vhost_vring_notify(p.port, 0, HV_VHOST_RX, true), 0);
	ck_assert(!hv_vhost_vring_has_avail(p.port, 0, HV_VHOST_RX));
	tx[0] = peer_frame(peer_guest_pool(), 80, 9, 1);
	ck_assert_uint_eq(rte_eth_tx_burst(p.eth, 0, tx, 1), 1);
	ck_assert(hv_vhost_vring_has_avail(p.port, 0, HV_VHOST_RX));
	ck_assert_int_eq(hv_vhost_vring_notify(p.port, 0, HV_VHOST_RX, false), 0);
	ck_assert_uint_eq(hv_vhost_rx_burst(p.port, 0, rx, BURST), 1);
	ck_assert(peer_frame_check(rx[0], 80, 9));
	rte_pktmbuf_free(rx[0]);
	ck_assert(!hv_vhost_vring_has_avail(p.port, 0, HV_VHOST_RX));
	hv_vhost_set_irq_hook(p.port, NULL, NULL);
	peer_close(&p);
}
END_TEST

static void *
suite(void)
{
	Suite *s = suite_create("virtio-user-packed");
	TCase *t = tcase_create("packed");

	tcase_set_timeout(t, 120);
	tcase_add_test(t, packed_mrg_indirect);
	tcase_add_test(t, packed_mrg_direct);
	tcase_add_test(t, packed_nomrg);
	tcase_add_test(t, packed_default_features);
	tcase_add_test(t, packed_in_order_nomrg);
	tcase_add_test(t, packed_not_in_order);
	tcase_add_test(t, mixed_packed_split);
	tcase_add_test(t, multiqueue);
	tcase_add_test(t, reconnect_server_mode);
	tcase_add_test(t, reconnect_client_mode);
	tcase_add_test(t, irq_hook_and_kicks);
	suite_add_tcase(s, t);
	return s;
}

int
main(int argc, char **argv)
{
	return peer_run_suite(suite, argc, argv);
}
