/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A hostile guest on a packed ring: a hand-written frontend (raw_frontend.h)
 * lays out packed descriptors in its memory (the split layout's pages: the
 * descriptor ring where the split table was, the driver event area where
 * the avail ring was, the device event area where the used ring was) and
 * writes what a broken or malicious driver could. Whatever it writes costs
 * that ring, counted, never the switch or the bystander port.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <linux/virtio_net.h>
#include <rte_ethdev.h>

#include "peer.h"
#include "raw_frontend.h"

#define TIMEOUT_MS 3000
#define HDR 12
#define GUEST_RX 0 /* vring 0: what the switch fills */
#define GUEST_TX 1 /* vring 1: what the guest sends */
#define F_AVAIL (1u << 7)
#define F_USED (1u << 15)
#define WRAP_BIT 0x8000u /* of an event offset and a vring base */

static struct peer good;
static struct hv_vhost_port *bad;
static char bad_path[108];
static struct raw_fe fe;
/* the driver's side of each ring: next slot to post, its wrap counter */
static uint16_t post_idx[2];
static bool post_wrap[2];

static struct vring_packed_desc *
pring(int v)
{
	return (struct vring_packed_desc *)fe.desc[v];
}

static struct vring_packed_desc_event *
driver_event(int v)
{
	return (struct vring_packed_desc_event *)fe.avail[v];
}

static void
pk_setup_features(uint64_t extra)
{
	struct hv_vhost_port_conf conf = {
		.name = "hostile-packed",
		.mode = HV_VHOST_SERVER,
		.queue_pairs = 1,
		.features = HV_VHOST_F_VERSION_1 | HV_VHOST_F_MRG_RXBUF | HV_VHOST_F_INDIRECT_DESC |
			    HV_VHOST_F_EVENT_IDX | HV_VHOST_F_IN_ORDER | HV_VHOST_F_RING_PACKED,
		.mp = peer_switch_pool(),
	};

	ck_assert_int_eq(peer_open(&good, "good", HV_VHOST_SERVER, 0, ""), 0);
	ck_assert(peer_wait_ready(&good, TIMEOUT_MS));
	snprintf(bad_path, sizeof(bad_path), "/tmp/hvtest-%d-hpacked.sock", getpid());
	conf.path = bad_path;
	bad = hv_vhost_port_create(&conf);
	ck_assert_ptr_nonnull(bad);
	ck_assert_int_eq(raw_fe_connect(&fe, bad_path), 0);
	ck_assert_int_eq(raw_fe_setup(&fe, HV_VHOST_F_VERSION_1 | HV_VHOST_F_MRG_RXBUF |
						   HV_VHOST_F_INDIRECT_DESC | HV_VHOST_F_EVENT_IDX |
						   HV_VHOST_F_RING_PACKED | extra),
			 0);
	ck_assert(hv_vhost_queue_ready(bad, 0));
	ck_assert(hv_vhost_port_features(bad) & HV_VHOST_F_RING_PACKED);
	/* raw_fe_setup() sent base 0 (wrap counter 0): both sides start there */
	for (int v = 0; v < 2; v++) {
		post_idx[v] = 0;
		post_wrap[v] = false;
	}
}

static void
setup(void)
{
	pk_setup_features(0);
}

static void
setup_in_order(void)
{
	pk_setup_features(HV_VHOST_F_IN_ORDER);
}

static void
teardown(void)
{
	raw_fe_close(&fe);
	hv_vhost_port_destroy(bad);
	peer_close(&good);
}

static uint16_t
avail_flags(bool wrap)
{
	return (uint16_t)(wrap ? F_AVAIL : F_USED);
}

/*
 * Post a one-descriptor buffer of @len bytes at guest offset @off with
 * buffer id @id (flags stored last, with release, as a driver does).
 */
static void
post(int v, uint32_t off, uint32_t len, uint16_t id, uint16_t flags)
{
	struct vring_packed_desc *d = &pring(v)[post_idx[v]];

	d->addr = raw_gpa(off);
	d->len = len;
	d->id = id;
	__atomic_store_n(&d->flags, (uint16_t)(flags | avail_flags(post_wrap[v])),
			 __ATOMIC_RELEASE);
	if (++post_idx[v] == RAW_RING_SIZE) {
		post_idx[v] = 0;
		post_wrap[v] = !post_wrap[v];
	}
}

/* Post a TX frame of @len bytes (net header included) at @off. */
static void
post_frame(uint32_t off, uint32_t len, uint16_t id)
{
	raw_fe_frame(&fe, off, HDR, len);
	post(GUEST_TX, off, HDR + len, id, 0);
}

static struct hv_vhost_vring_stats
stats(enum hv_vhost_dir dir)
{
	struct hv_vhost_vring_stats s;

	ck_assert_int_eq(hv_vhost_vring_stats(bad, 0, dir, &s), 0);
	return s;
}

/* Take what the guest sent; frames received, each checked against raw_fe_frame(@len). */
static unsigned int
poll_tx(uint32_t len)
{
	struct rte_mbuf *pkts[32];
	unsigned int got = 0;

	for (int i = 0; i < 4; i++) {
		uint16_t n = hv_vhost_rx_burst(bad, 0, pkts, 32);

		for (uint16_t k = 0; k < n; k++) {
			const uint8_t *p = rte_pktmbuf_mtod(pkts[k], const uint8_t *);

			ck_assert_uint_eq(pkts[k]->pkt_len, len);
			for (uint32_t j = 6; j < len; j++)
				ck_assert_uint_eq(p[j], (uint8_t)(j * 13 + 1));
		}
		got += n;
		rte_pktmbuf_free_bulk(pkts, n);
		hv_vhost_rx_done(bad, 0);
	}
	return got;
}

static void
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
			ck_assert(peer_frame_check(rx[i], 200, 40 + back++));
		rte_pktmbuf_free_bulk(rx, n);
	}
	ck_assert_uint_eq(back, 4);
}

/* The ring of @dir was stopped once, for @why, and the rest of the switch is fine. */
static void
assert_ring_stopped(enum hv_vhost_dir dir, enum hv_vhost_drop why)
{
	struct hv_vhost_vring_stats s = stats(dir);

	ck_assert_uint_eq(s.stops, 1);
	ck_assert_uint_eq(s.drops[why], 1);
	ck_assert(!hv_vhost_queue_ready(bad, 0));
	assert_bystander_ok();
}

/* ---- the well-behaved case first ---- */

/* Frames out, used descriptors back where their chains began, with their ids. */
START_TEST(tx_used_descriptors)
{
	static const uint16_t ids[3] = {5, 9, 2};

	for (unsigned int i = 0; i < 3; i++)
		post_frame(RAW_DATA_OFF + i * 0x1000u, 100, ids[i]);
	ck_assert_uint_eq(poll_tx(100), 3);
	for (unsigned int i = 0; i < 3; i++) {
		const struct vring_packed_desc *d = &pring(GUEST_TX)[i];

		ck_assert_uint_eq(d->id, ids[i]);
		/* wrap counter 0: both bits clear, a used descriptor at this lap */
		ck_assert_uint_eq(d->flags & (F_AVAIL | F_USED), 0);
	}
	ck_assert_uint_eq(stats(HV_VHOST_RX).stops, 0);
}
END_TEST

/* In order: one used descriptor, at the batch's first slot, returns the whole batch. */
START_TEST(tx_in_order_one_used)
{
	for (unsigned int i = 0; i < 3; i++)
		post_frame(RAW_DATA_OFF + i * 0x1000u, 80, (uint16_t)(10 + i));
	ck_assert_uint_eq(poll_tx(80), 3);
	ck_assert_uint_eq(pring(GUEST_TX)[0].id, 12);
	ck_assert_uint_eq(pring(GUEST_TX)[0].flags & (F_AVAIL | F_USED), 0);
	/* the other slots still hold what the driver posted */
	ck_assert_uint_eq(pring(GUEST_TX)[1].flags & (F_AVAIL | F_USED), F_USED);
	ck_assert_uint_eq(pring(GUEST_TX)[2].flags & (F_AVAIL | F_USED), F_USED);
}
END_TEST

/* ---- what the guest must not do ---- */

/* Frames under buffer ids @ids, the last a repeat: all but it go at most, and the ring stops. */
static void
tx_ids_refused(const uint16_t *ids, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		post_frame(RAW_DATA_OFF + i * 0x1000u, 100, ids[i]);
	ck_assert_uint_le(poll_tx(100), n - 1);
	assert_ring_stopped(HV_VHOST_RX, HV_VHOST_DROP_BAD_ID);
}

START_TEST(tx_id_reused_in_flight)
{
	static const uint16_t ids[2] = {4, 4};

	tx_ids_refused(ids, 2);
}
END_TEST

/*
 * Ids equal to their slots, as DPDK's in-order driver gives them (the switch
 * keeps those as a range, not bit by bit), then one of them again: refused.
 */
START_TEST(tx_slot_id_reused_in_flight)
{
	static const uint16_t ids[4] = {0, 1, 2, 1};

	tx_ids_refused(ids, 4);
}
END_TEST

/* Slot ids, then others, then slot ids again, in one burst: all distinct, all taken. */
START_TEST(tx_slot_ids_then_others)
{
	static const uint16_t ids[8] = {0, 1, 2, 3, 9, 5, 200, 4};

	for (unsigned int i = 0; i < 8; i++)
		post_frame(RAW_DATA_OFF + i * 0x1000u, 100, ids[i]);
	ck_assert_uint_eq(poll_tx(100), 8);
	for (unsigned int i = 0; i < 8; i++)
		ck_assert_uint_eq(pring(GUEST_TX)[i].id, ids[i]);
	ck_assert_uint_eq(stats(HV_VHOST_RX).stops, 0);
}
END_TEST

/* Slot ids lap after lap: every frame taken, each returned under its id. */
START_TEST(tx_slot_ids_laps)
{
	for (unsigned int k = 0; k < 3 * RAW_RING_SIZE / 64; k++) {
		uint16_t first = post_idx[GUEST_TX];

		for (unsigned int i = 0; i < 64; i++)
			post_frame(RAW_DATA_OFF + i * 0x1000u, 100, post_idx[GUEST_TX]);
		ck_assert_uint_eq(poll_tx(100), 64);
		for (unsigned int i = 0; i < 64; i++)
			ck_assert_uint_eq(pring(GUEST_TX)[first + i].id, first + i);
	}
	ck_assert_uint_eq(stats(HV_VHOST_RX).packets, 3 * RAW_RING_SIZE);
	ck_assert_uint_eq(stats(HV_VHOST_RX).stops, 0);
}
END_TEST

START_TEST(tx_id_out_of_range)
{
	post_frame(RAW_DATA_OFF, 100, RAW_RING_SIZE);
	ck_assert_uint_eq(poll_tx(100), 0);
	assert_ring_stopped(HV_VHOST_RX, HV_VHOST_DROP_BAD_ID);
}
END_TEST

/* A chain whose next descriptor is not available (avail/used bits of another lap). */
START_TEST(tx_chain_tail_not_available)
{
	raw_fe_frame(&fe, RAW_DATA_OFF, HDR, 100);
	/* the tail first, written for the wrong lap; then the head */
	pring(GUEST_TX)[1] = (struct vring_packed_desc){
		.addr = raw_gpa(RAW_DATA_OFF + 50), .len = 62, .id = 0, .flags = F_AVAIL};
	post(GUEST_TX, RAW_DATA_OFF, 50, 0, VRING_DESC_F_NEXT);
	ck_assert_uint_eq(poll_tx(100), 0);
	assert_ring_stopped(HV_VHOST_RX, HV_VHOST_DROP_BAD_CHAIN);
}
END_TEST

/* Receive buffers under ids @ids, the last a repeat: a frame for each, all but one go at most. */
static void
rx_ids_refused(const uint16_t *ids, unsigned int n)
{
	struct rte_mbuf *m[4];

	for (unsigned int i = 0; i < n; i++) {
		post(GUEST_RX, RAW_DATA_OFF + i * 0x1000u, 2048, ids[i], VRING_DESC_F_WRITE);
		m[i] = peer_frame(peer_switch_pool(), 100, i, 1);
	}
	ck_assert_uint_le(hv_vhost_tx_burst(bad, 0, m, (uint16_t)n), n - 1);
	assert_ring_stopped(HV_VHOST_TX, HV_VHOST_DROP_BAD_ID);
}

/* Receive buffers posted twice under one id: the second take is refused. */
START_TEST(rx_id_reused_in_flight)
{
	static const uint16_t ids[2] = {7, 7};

	rx_ids_refused(ids, 2);
}
END_TEST

/* Receive buffers under their slots as ids, then one of those again: refused. */
START_TEST(rx_slot_id_reused_in_flight)
{
	static const uint16_t ids[3] = {0, 1, 0};

	rx_ids_refused(ids, 3);
}
END_TEST

/* A read-only buffer in the receive ring stops it; nothing is written into it. */
START_TEST(rx_read_only_buffer)
{
	struct rte_mbuf *m = peer_frame(peer_switch_pool(), 100, 1, 1);

	memset(fe.mem + RAW_DATA_OFF, 0xee, 256);
	post(GUEST_RX, RAW_DATA_OFF, 2048, 1, 0);
	ck_assert_uint_eq(hv_vhost_tx_burst(bad, 0, &m, 1), 0);
	for (unsigned int i = 0; i < 256; i++)
		ck_assert_uint_eq(fe.mem[RAW_DATA_OFF + i], 0xee);
	assert_ring_stopped(HV_VHOST_TX, HV_VHOST_DROP_BAD_DIRECTION);
}
END_TEST

/* ---- event suppression: the driver event area decides the interrupts ---- */

static uint64_t
calls_read(void)
{
	uint64_t n = 0;

	if (read(fe.call[GUEST_RX], &n, sizeof(n)) != sizeof(n))
		return 0;
	return n;
}

/* Deliver one 100-byte frame into a fresh receive buffer; whether the guest was interrupted. */
static bool
deliver_one(uint32_t seed)
{
	struct rte_mbuf *m = peer_frame(peer_switch_pool(), 100, seed, 1);

	post(GUEST_RX, RAW_DATA_OFF + (seed % 8) * 0x1000u, 2048, (uint16_t)(seed % 128),
	     VRING_DESC_F_WRITE);
	ck_assert_uint_eq(hv_vhost_tx_burst(bad, 0, &m, 1), 1);
	return calls_read() > 0;
}

START_TEST(rx_event_suppression)
{
	struct vring_packed_desc_event *ev = driver_event(GUEST_RX);
	struct hv_vhost_vring_stats s0, s1;

	calls_read();
	/* the first decision after start always interrupts */
	ev->flags = VRING_PACKED_EVENT_FLAG_ENABLE;
	ck_assert(deliver_one(0));
	ck_assert(deliver_one(1));
	ev->flags = VRING_PACKED_EVENT_FLAG_DISABLE;
	s0 = stats(HV_VHOST_TX);
	ck_assert(!deliver_one(2));
	s1 = stats(HV_VHOST_TX);
	ck_assert_uint_eq(s1.irqs_suppressed, s0.irqs_suppressed + 1);
	/* EVENT_IDX: interrupt when slot 5 (wrap 0) is used; slots 3 and 4 go quietly */
	ev->off_wrap = 5;
	ev->flags = VRING_PACKED_EVENT_FLAG_DESC;
	ck_assert(!deliver_one(3));
	ck_assert(!deliver_one(4));
	ck_assert(deliver_one(5));
	ck_assert(!deliver_one(6));
	/* the same slot at the other lap is not this one */
	ev->off_wrap = (uint16_t)(8 | WRAP_BIT);
	ck_assert(!deliver_one(7));
	ck_assert(!deliver_one(8));
	/* a slot beyond the ring: the safe side, an interrupt */
	ev->off_wrap = RAW_RING_SIZE + 1;
	ck_assert(deliver_one(9));
	/* a flags value no driver may use: an interrupt too */
	ev->flags = 3;
	ck_assert(deliver_one(10));
}
END_TEST

/* ---- GET/SET_VRING_BASE: the slot and its wrap counter in bit 15 ---- */

static uint32_t
get_base(int v)
{
	struct vhost_vring_state s = {.index = (uint32_t)v};
	struct vhost_user_msg reply;

	ck_assert_int_eq(raw_fe_send(&fe, VHOST_USER_GET_VRING_BASE, VHOST_USER_VERSION, &s,
				     sizeof(s), NULL, 0),
			 0);
	ck_assert_int_eq(raw_fe_recv(&fe, &reply, 2000), 0);
	ck_assert_uint_eq(reply.payload.state.index, (uint32_t)v);
	return reply.payload.state.num;
}

/* SET_VRING_BASE @num, a new kick fd (restarts the ring), then an acked no-op. */
static void
set_base(int v, uint32_t num)
{
	struct vhost_vring_state s = {.index = (uint32_t)v, .num = num};
	struct vhost_vring_state en = {.index = (uint32_t)v, .num = 1};
	struct vhost_user_msg reply;
	uint64_t idx = (uint64_t)v;
	int kick = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

	ck_assert_int_eq(raw_fe_send(&fe, VHOST_USER_SET_VRING_BASE, VHOST_USER_VERSION, &s,
				     sizeof(s), NULL, 0),
			 0);
	ck_assert_int_eq(raw_fe_send(&fe, VHOST_USER_SET_VRING_KICK, VHOST_USER_VERSION, &idx,
				     sizeof(idx), &kick, 1),
			 0);
	close(fe.kick[v]);
	fe.kick[v] = kick;
	ck_assert_int_eq(raw_fe_send(&fe, VHOST_USER_SET_VRING_ENABLE,
				     VHOST_USER_VERSION | VHOST_USER_NEED_REPLY, &en, sizeof(en),
				     NULL, 0),
			 0);
	ck_assert_int_eq(raw_fe_recv(&fe, &reply, 2000), 0);
}

START_TEST(vring_base_round_trip)
{
	for (unsigned int i = 0; i < 3; i++)
		post_frame(RAW_DATA_OFF + i * 0x1000u, 64, (uint16_t)i);
	ck_assert_uint_eq(poll_tx(64), 3);
	/* slot 3 at wrap counter 0, avail half and used half alike: nothing in flight */
	ck_assert_uint_eq(get_base(GUEST_TX), 3u | 3u << 16);
	ck_assert(!hv_vhost_queue_ready(bad, 0));
	/* resume at slot 250 of wrap counter 1, as a frontend that moved on would */
	set_base(GUEST_TX, 250u | WRAP_BIT);
	ck_assert(hv_vhost_queue_ready(bad, 0));
	post_idx[GUEST_TX] = 250;
	post_wrap[GUEST_TX] = true;
	/* across the end of the ring: the wrap counter flips to 0 at slot 0 */
	for (unsigned int i = 0; i < 10; i++)
		post_frame(RAW_DATA_OFF + i * 0x1000u, 64, (uint16_t)i);
	ck_assert_uint_eq(poll_tx(64), 10);
	ck_assert_uint_eq(get_base(GUEST_TX), 4u | 4u << 16);
	/* a slot beyond the ring: the ring stays stopped */
	set_base(GUEST_TX, RAW_RING_SIZE + 3u);
	ck_assert(!hv_vhost_queue_ready(bad, 0));
	set_base(GUEST_TX, 4u);
	ck_assert(hv_vhost_queue_ready(bad, 0));
	post_idx[GUEST_TX] = 4;
	post_wrap[GUEST_TX] = false;
	post_frame(RAW_DATA_OFF, 64, 0);
	ck_assert_uint_eq(poll_tx(64), 1);
	ck_assert_uint_eq(stats(HV_VHOST_RX).stops, 0);
}
END_TEST

/* ---- the in-order fast path (vhost_packed_fast.h): where it hands over ---- */

/*
 * Frames out of the guest under their slots as ids (the fast path's), one
 * asking for an offload that was not negotiated and, after the general loop
 * has taken over, one too short among them: those two dropped and counted,
 * the others delivered whole, every slot returned under its id.
 */
START_TEST(tx_fast_path_hands_over)
{
	struct hv_vhost_vring_stats s;

	for (unsigned int i = 0; i < 8; i++) {
		uint32_t off = RAW_DATA_OFF + i * 0x1000u;

		if (i == 5) {
			raw_fe_frame(&fe, off, HDR, 10);
			post(GUEST_TX, off, HDR + 10, (uint16_t)i, 0);
			continue;
		}
		raw_fe_frame(&fe, off, HDR, 100);
		if (i == 2)
			fe.mem[off] = VIRTIO_NET_HDR_F_NEEDS_CSUM;
		post(GUEST_TX, off, HDR + 100, (uint16_t)i, 0);
	}
	ck_assert_uint_eq(poll_tx(100), 6);
	s = stats(HV_VHOST_RX);
	ck_assert_uint_eq(s.packets, 6);
	ck_assert_uint_eq(s.drops[HV_VHOST_DROP_TOO_SHORT], 1);
	ck_assert_uint_eq(s.drops[HV_VHOST_DROP_BAD_HEADER], 1);
	ck_assert_uint_eq(s.stops, 0);
	for (unsigned int i = 0; i < 8; i++) {
		ck_assert_uint_eq(pring(GUEST_TX)[i].id, i);
		ck_assert_uint_eq(pring(GUEST_TX)[i].flags & (F_AVAIL | F_USED), 0);
	}
}
END_TEST

/* Every mbuf the pool holds, with the fields a reset sets left wrong. */
static void
pool_dirty(struct rte_mempool *mp)
{
	unsigned int n = rte_mempool_avail_count(mp), got = 0;
	struct rte_mbuf **all = calloc(n, sizeof(*all));

	ck_assert_ptr_nonnull(all);
	while (got < n && (all[got] = rte_pktmbuf_alloc(mp)) != NULL) {
		struct rte_mbuf *m = all[got++];

		m->data_off = 7;
		m->port = 3;
		m->ol_flags = RTE_MBUF_F_RX_VLAN | RTE_MBUF_F_TX_TCP_SEG;
		m->packet_type = 0x211;
		m->vlan_tci = 0x123;
		m->vlan_tci_outer = 0x456;
		m->tx_offload = UINT64_MAX;
		m->data_len = 77;
		m->pkt_len = 9999;
	}
	for (unsigned int i = 0; i < got; i++)
		rte_pktmbuf_free(all[i]);
	free(all);
}

/*
 * Frames out of the guest into mbufs the fast path takes raw from the pool,
 * after every mbuf there was left dirty: each comes out as a fresh one
 * would (rte_pktmbuf_reset()), on the fast path and past it (a frame too
 * short makes the general loop take over).
 */
START_TEST(tx_fast_path_mbufs_fresh)
{
	struct rte_mbuf *pkts[32];
	uint16_t n;

	pool_dirty(peer_switch_pool());
	for (unsigned int i = 0; i < 8; i++) {
		uint32_t off = RAW_DATA_OFF + i * 0x1000u;
		uint32_t len = i == 5 ? 10 : 100;

		raw_fe_frame(&fe, off, HDR, len);
		post(GUEST_TX, off, HDR + len, (uint16_t)i, 0);
	}
	n = hv_vhost_rx_burst(bad, 0, pkts, 32);
	ck_assert_uint_eq(n, 7);
	for (uint16_t k = 0; k < n; k++) {
		const struct rte_mbuf *m = pkts[k];
		const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);

		ck_assert_uint_eq(m->data_off, RTE_PKTMBUF_HEADROOM);
		ck_assert_uint_eq(m->port, RTE_MBUF_PORT_INVALID);
		ck_assert_uint_eq(m->ol_flags, 0);
		ck_assert_uint_eq(m->packet_type, 0);
		ck_assert_uint_eq(m->vlan_tci, 0);
		ck_assert_uint_eq(m->vlan_tci_outer, 0);
		ck_assert_uint_eq(m->tx_offload, 0);
		ck_assert_uint_eq(m->nb_segs, 1);
		ck_assert_ptr_null(m->next);
		ck_assert_uint_eq(m->pkt_len, 100);
		ck_assert_uint_eq(m->data_len, 100);
		for (uint32_t j = 6; j < 100; j++)
			ck_assert_uint_eq(p[j], (uint8_t)(j * 13 + 1));
	}
	rte_pktmbuf_free_bulk(pkts, n);
	hv_vhost_rx_done(bad, 0);
	ck_assert_uint_eq(stats(HV_VHOST_RX).drops[HV_VHOST_DROP_TOO_SHORT], 1);
}
END_TEST

/*
 * @n frames of 100 bytes into @m (seeds @seed on), frame @two_segs in two
 * segments; their bytes into @frame.
 */
static void
rx_frames(struct rte_mbuf **m, uint8_t (*frame)[100], unsigned int n, uint32_t seed,
	  unsigned int two_segs)
{
	for (unsigned int i = 0; i < n; i++) {
		const void *p;

		m[i] = peer_frame(peer_switch_pool(), 100, seed + i, i == two_segs ? 2 : 1);
		ck_assert_ptr_nonnull(m[i]);
		/* a pointer into the mbuf where its bytes are whole, else a copy into frame[i] */
		p = rte_pktmbuf_read(m[i], 0, 100, frame[i]);
		ck_assert_ptr_nonnull(p);
		if (p != frame[i])
			memcpy(frame[i], p, 100);
	}
	ck_assert_uint_eq(m[two_segs]->nb_segs, 2);
}

/*
 * Frames into the guest's buffers, posted under their slots as ids (the
 * fast path's), with a buffer too small for its frame and, after the
 * general loop has taken over, a frame of two segments among them: the
 * small buffer and the next one make a mergeable frame, and every byte and
 * used descriptor is where it belongs.
 */
START_TEST(rx_fast_path_hands_over)
{
	static const uint32_t buf_len[7] = {2048, 2048, 40, 2048, 2048, 2048, 2048};
	/* frame by frame: its first buffer, and what each buffer was given */
	static const unsigned int first_buf[6] = {0, 1, 2, 4, 5, 6};
	static const uint32_t given[7] = {HDR + 100, HDR + 100, 40,       72,
					  HDR + 100, HDR + 100, HDR + 100};
	uint8_t frame[6][100];
	struct rte_mbuf *m[6];

	for (unsigned int i = 0; i < 7; i++)
		post(GUEST_RX, RAW_DATA_OFF + i * 0x1000u, buf_len[i], (uint16_t)i,
		     VRING_DESC_F_WRITE);
	rx_frames(m, frame, 6, 60, 4);
	ck_assert_uint_eq(hv_vhost_tx_burst(bad, 0, m, 6), 6);
	for (unsigned int i = 0; i < 7; i++) {
		const struct vring_packed_desc *d = &pring(GUEST_RX)[i];

		ck_assert_uint_eq(d->id, i);
		ck_assert_uint_eq(d->len, given[i]);
		ck_assert_uint_eq(d->flags & (F_AVAIL | F_USED), 0);
	}
	for (unsigned int f = 0; f < 6; f++) {
		const uint8_t *b = fe.mem + RAW_DATA_OFF + first_buf[f] * 0x1000u;
		uint16_t num_buffers;

		memcpy(&num_buffers, b + offsetof(struct virtio_net_hdr_v1, num_buffers), 2);
		ck_assert_uint_eq(num_buffers, f == 2 ? 2 : 1);
		if (f != 2) {
			ck_assert_int_eq(memcmp(b + HDR, frame[f], 100), 0);
			continue;
		}
		/* 28 bytes after the header in the small buffer, the rest in the next */
		ck_assert_int_eq(memcmp(b + HDR, frame[f], 28), 0);
		ck_assert_int_eq(memcmp(b + 0x1000u, frame[f] + 28, 72), 0);
	}
	ck_assert_uint_eq(stats(HV_VHOST_TX).packets, 6);
	ck_assert_uint_eq(stats(HV_VHOST_TX).stops, 0);
}
END_TEST

/* A frame of two segments among one-segment ones, on the fast path: each whole in its buffer. */
START_TEST(rx_fast_path_segments)
{
	uint8_t frame[3][100];
	struct rte_mbuf *m[3];

	for (unsigned int i = 0; i < 3; i++)
		post(GUEST_RX, RAW_DATA_OFF + i * 0x1000u, 2048, (uint16_t)i, VRING_DESC_F_WRITE);
	rx_frames(m, frame, 3, 70, 1);
	ck_assert_uint_eq(hv_vhost_tx_burst(bad, 0, m, 3), 3);
	for (unsigned int i = 0; i < 3; i++) {
		ck_assert_uint_eq(pring(GUEST_RX)[i].len, HDR + 100);
		ck_assert_int_eq(memcmp(fe.mem + RAW_DATA_OFF + i * 0x1000u + HDR, frame[i], 100),
				 0);
	}
}
END_TEST

static void *
suite(void)
{
	Suite *s = suite_create("hostile-packed");
	TCase *t = tcase_create("packed");
	TCase *io = tcase_create("in-order");

	tcase_set_timeout(t, 60);
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, tx_used_descriptors);
	tcase_add_test(t, tx_id_reused_in_flight);
	tcase_add_test(t, tx_slot_id_reused_in_flight);
	tcase_add_test(t, tx_slot_ids_then_others);
	tcase_add_test(t, tx_slot_ids_laps);
	tcase_add_test(t, tx_id_out_of_range);
	tcase_add_test(t, tx_chain_tail_not_available);
	tcase_add_test(t, rx_id_reused_in_flight);
	tcase_add_test(t, rx_slot_id_reused_in_flight);
	tcase_add_test(t, rx_read_only_buffer);
	tcase_add_test(t, rx_event_suppression);
	tcase_add_test(t, vring_base_round_trip);
	tcase_add_test(t, tx_fast_path_hands_over);
	tcase_add_test(t, tx_fast_path_mbufs_fresh);
	tcase_add_test(t, rx_fast_path_hands_over);
	tcase_add_test(t, rx_fast_path_segments);
	suite_add_tcase(s, t);
	tcase_set_timeout(io, 60);
	tcase_add_checked_fixture(io, setup_in_order, teardown);
	tcase_add_test(io, tx_in_order_one_used);
	suite_add_tcase(s, io);
	return s;
}

int
main(int argc, char **argv)
{
	return peer_run_suite(suite, argc, argv);
}
