/* SPDX-License-Identifier: BSD-3-Clause */
/* The fixture of the ring tests: see ring_fixture.h. */
#include <check.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_ethdev.h>

#include "ring_fixture.h"

struct peer good;
struct hv_vhost_port *bad;
char bad_path[108];
struct raw_fe fe;

/* The bystander on port "good", the hostile frontend connected to port "hostile". */
void
setup(void)
{
	struct hv_vhost_port_conf conf = {
		.name = "hostile",
		.mode = HV_VHOST_SERVER,
		.queue_pairs = 1,
		.features = HV_VHOST_F_VERSION_1 | HV_VHOST_F_MRG_RXBUF | HV_VHOST_F_INDIRECT_DESC |
			    HV_VHOST_F_EVENT_IDX | HV_VHOST_F_IN_ORDER | HV_VHOST_F_CSUM,
		.mp = peer_switch_pool(),
		.borrow = true, /* poll_tx() ends each burst with hv_vhost_rx_done() */
	};

	ck_assert_int_eq(peer_open(&good, "good", HV_VHOST_SERVER, 0, ""), 0);
	ck_assert(peer_wait_ready(&good, TIMEOUT_MS));
	snprintf(bad_path, sizeof(bad_path), "/tmp/hvtest-%d-hostile.sock", getpid());
	conf.path = bad_path;
	bad = hv_vhost_port_create(&conf);
	ck_assert_ptr_nonnull(bad);
	ck_assert_int_eq(raw_fe_connect(&fe, bad_path), 0);
}

/* Undo setup(), also after a failed test. */
void
teardown(void)
{
	/* a test that failed while a burst borrowed: let the port be destroyed */
	hv_vhost_rx_done(bad, 0);
	raw_fe_close(&fe);
	hv_vhost_port_destroy(bad);
	peer_close(&good);
}

/* The bystander still gets frames through its own port. */
void
assert_bystander_ok(void)
{
	struct rte_mbuf *tx[4], *rx[32], *pkts[32];
	uint64_t end = peer_now_ms() + TIMEOUT_MS;
	unsigned int back = 0, sent = 0;

	for (unsigned int i = 0; i < 4; i++)
		tx[i] = peer_frame(peer_guest_pool(), 200, 40 + i, 1);
	while (back < 4 && peer_now_ms() < end) {
		uint16_t n;

		if (sent < 4)
			sent += rte_eth_tx_burst(good.eth, 0, tx + sent, 4 - sent);
		n = hv_vhost_rx_burst(good.port, 0, pkts, 32);
		hv_vhost_tx_burst(good.port, 0, pkts, n);
		n = rte_eth_rx_burst(good.eth, 0, rx, 32);
		for (uint16_t i = 0; i < n; i++)
			if (peer_frame_check(rx[i], 200, 40 + back++) == false)
				ck_abort_msg("bystander frame %u corrupted", back - 1);
		rte_pktmbuf_free_bulk(rx, n);
	}
	ck_assert_uint_eq(back, 4);
}

/* Counters of the hostile port's ring of queue pair 0 in direction @dir. */
struct hv_vhost_vring_stats
stats(enum hv_vhost_dir dir)
{
	struct hv_vhost_vring_stats s;

	ck_assert_int_eq(hv_vhost_vring_stats(bad, 0, dir, &s), 0);
	return s;
}

/* Poll the hostile guest's TX ring a few times; returns frames received. */
unsigned int
poll_tx(void)
{
	struct rte_mbuf *pkts[32];
	unsigned int got = 0;

	for (int i = 0; i < 4; i++) {
		uint16_t n = hv_vhost_rx_burst(bad, 0, pkts, 32);

		got += n;
		rte_pktmbuf_free_bulk(pkts, n);
		hv_vhost_rx_done(bad, 0);
	}
	return got;
}

/* Negotiate VERSION_1, mergeable buffers and indirect descriptors; both rings ready. */
void
setup_rings(void)
{
	ck_assert_int_eq(raw_fe_setup(&fe, HV_VHOST_F_VERSION_1 | HV_VHOST_F_MRG_RXBUF |
						   HV_VHOST_F_INDIRECT_DESC),
			 0);
	ck_assert(hv_vhost_queue_ready(bad, 0));
}
