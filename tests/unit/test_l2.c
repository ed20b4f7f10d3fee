/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The switching step (libhv_sw_dp's sw_l2_input()) driven directly, with a
 * fake port type whose tx keeps what it got: learning, moves, ageing, the
 * MAC limit, VLAN rules, flooding, drops, and the hand-off of offload and
 * borrowed frames to ports by what they take. The test plays both the PMD
 * (bursts in) and the control thread (hv_fdb_apply(), hv_fdb_age()).
 * Needs the EAL for mbufs: run through run_eal_test.sh.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_ether.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "dp.h"

#define N_PORTS 6
#define GOT_MAX 64
#define AGE_MS 1000

/* ---- the fake port type ---- */

struct fake {
	struct rte_mbuf *got[GOT_MAX]; /* what tx was given, in order (ours to free) */
	unsigned int n;
	unsigned int tx_calls;
	uint16_t accept; /* frames tx delivers per call; the rest it drops */
	uint32_t caps;   /* HV_OFFLOAD_CAP_* */
};

static struct fake fakes[N_PORTS];

static uint16_t
fake_rx(struct sw_port *p, uint16_t q, struct rte_mbuf **pkts, uint16_t n)
{
	RTE_SET_USED(p);
	RTE_SET_USED(q);
	RTE_SET_USED(pkts);
	RTE_SET_USED(n);
	return 0;
}

static uint16_t
fake_tx(struct sw_port *p, uint16_t q, struct rte_mbuf **pkts, uint16_t n)
{
	struct fake *f = p->priv;
	uint16_t sent = RTE_MIN(n, f->accept);

	RTE_SET_USED(q);
	f->tx_calls++;
	for (uint16_t i = 0; i < sent; i++) {
		ck_assert_uint_lt(f->n, GOT_MAX);
		f->got[f->n++] = pkts[i];
	}
	if (sent < n)
		rte_pktmbuf_free_bulk(&pkts[sent], n - sent);
	return sent;
}

static uint32_t
fake_caps(const struct sw_port *p)
{
	return ((const struct fake *)p->priv)->caps;
}

/* A frame lends memory when some segment is an external buffer (as vhost's borrowed tails). */
static bool
fake_needs_copy(const struct rte_mbuf *m)
{
	for (; m != NULL; m = m->next)
		if (RTE_MBUF_HAS_EXTBUF(m))
			return true;
	return false;
}

static const struct sw_port_ops fake_ops = {
	.type = "fake",
	.rx = fake_rx,
	.tx = fake_tx,
	.needs_copy = fake_needs_copy,
	.offload_caps = fake_caps,
};

/* The same, a device that reads frames after tx returns (a NIC). */
static const struct sw_port_ops fake_keeps_ops = {
	.type = "fake-nic",
	.rx = fake_rx,
	.tx = fake_tx,
	.tx_keeps = true,
	.offload_caps = fake_caps,
};

/* ---- the data path's context ---- */

static struct rte_mempool *mp;
static struct sw_dp dp;
static struct sw_pmd pmd;
static struct sw_port ports[N_PORTS];
static struct sw_port *table[SW_MAX_PORTS];
static uint64_t now_ms = 1000000;

static void
make_fdb(uint32_t mac_limit)
{
	struct hv_fdb_conf fc = {
		.capacity = 1024,
		.max_ports = SW_MAX_PORTS,
		.max_per_port = mac_limit,
		.age_ms = AGE_MS,
		.rcu = dp.rcu,
		.socket = (int)rte_socket_id(),
	};

	dp.fdb = hv_fdb_create("test_l2_fdb", &fc);
	ck_assert_ptr_nonnull(dp.fdb);
}

static void
setup(void)
{
	memset(&dp, 0, sizeof(dp));
	memset(&pmd, 0, sizeof(pmd));
	memset(fakes, 0, sizeof(fakes));
	memset(table, 0, sizeof(table));
	pmd.lcore = rte_lcore_id();
	dp.pmds = &pmd;
	dp.n_pmds = 1;
	dp.mp = mp;
	dp.tsc_per_ms = rte_get_tsc_hz() / 1000;
	ck_assert_int_eq(sw_dp_init(&dp), 0);
	make_fdb(0);
}

static void
teardown(void)
{
	for (int i = 0; i < N_PORTS; i++) {
		for (unsigned int k = 0; k < fakes[i].n; k++)
			rte_pktmbuf_free(fakes[i].got[k]);
		fakes[i].n = 0;
	}
	hv_fdb_free(dp.fdb);
	sw_dp_fini(&dp);
	/* every mbuf came back: nothing leaked, nothing freed twice */
	ck_assert_uint_eq(rte_mempool_avail_count(mp), mp->size);
}

/* Port @i: access port of @vlan, or a trunk; taking @caps; a NIC when @keeps. */
static void
port(uint16_t i, uint16_t vlan, bool trunk, uint32_t caps, bool keeps)
{
	struct sw_port *p = &ports[i];

	memset(p, 0, sizeof(*p));
	p->idx = i;
	snprintf(p->conf.name, sizeof(p->conf.name), "fake%u", i);
	p->conf.queues = 1;
	p->conf.vlan = vlan;
	p->conf.trunk = trunk;
	p->conf.pmd = -1;
	p->ops = keeps ? &fake_keeps_ops : &fake_ops;
	p->priv = &fakes[i];
	p->running = true;
	fakes[i].accept = UINT16_MAX;
	fakes[i].caps = caps;
	table[i] = p;
	sw_dp_view_publish(&dp, table);
}

/* Ports 0..@n-1, all access ports of the untagged domain. */
static void
flat(uint16_t n)
{
	for (uint16_t i = 0; i < n; i++)
		port(i, 0, false, 0, false);
}

static const struct rte_ether_addr BCAST = {{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}};

static struct rte_ether_addr
mac(uint8_t n)
{
	return (struct rte_ether_addr){{0x02, 0, 0, 0, 0, n}};
}

/* A @len-byte frame @src -> @dst, 802.1Q-tagged with @tci when @tagged; payload from @seed. */
static struct rte_mbuf *
frame_tagged(struct rte_ether_addr dst, struct rte_ether_addr src, bool tagged, uint16_t tci,
	     uint16_t len, uint8_t seed)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
	uint8_t *b;
	uint16_t off = 12;

	ck_assert_ptr_nonnull(m);
	b = (uint8_t *)rte_pktmbuf_append(m, len);
	ck_assert_ptr_nonnull(b);
	memcpy(b, &dst, 6);
	memcpy(b + 6, &src, 6);
	if (tagged) {
		b[12] = 0x81;
		b[13] = 0x00;
		b[14] = (uint8_t)(tci >> 8);
		b[15] = (uint8_t)tci;
		off = 16;
	}
	b[off] = 0x08; /* IPv4, not that anyone looks */
	b[off + 1] = 0x00;
	for (uint16_t i = off + 2; i < len; i++)
		b[i] = (uint8_t)(seed + i);
	return m;
}

static struct rte_mbuf *
frame(struct rte_ether_addr dst, struct rte_ether_addr src, uint8_t seed)
{
	return frame_tagged(dst, src, false, 0, 100, seed);
}

/* A burst of one from port @in; the control thread then applies what was learned. */
static void
send1(uint16_t in, struct rte_mbuf *m)
{
	sw_l2_input(&pmd, dp.view, &ports[in], &m, 1, now_ms);
	hv_fdb_apply(dp.fdb);
}

/* How many frames port @i got; they are freed. */
static unsigned int
got(uint16_t i)
{
	unsigned int n = fakes[i].n;

	for (unsigned int k = 0; k < n; k++)
		rte_pktmbuf_free(fakes[i].got[k]);
	fakes[i].n = 0;
	return n;
}

/* Port @i got exactly one frame, whose bytes are @want's; both freed. */
static void
got_bytes(uint16_t i, struct rte_mbuf *want)
{
	struct rte_mbuf *m;
	uint8_t a[2048], b[2048];

	ck_assert_msg(fakes[i].n == 1, "port %u got %u frames, wants 1", i, fakes[i].n);
	m = fakes[i].got[0];
	ck_assert_uint_eq(m->pkt_len, want->pkt_len);
	ck_assert_uint_le(m->pkt_len, sizeof(a));
	ck_assert_int_eq(memcmp(rte_pktmbuf_read(m, 0, m->pkt_len, a),
				rte_pktmbuf_read(want, 0, want->pkt_len, b), m->pkt_len),
			 0);
	got(i);
	rte_pktmbuf_free(want);
}

static struct rte_mbuf *
clone_of(const struct rte_mbuf *m)
{
	struct rte_mbuf *c = rte_pktmbuf_copy(m, mp, 0, UINT32_MAX);

	ck_assert_ptr_nonnull(c);
	return c;
}

/* ---- learning, moves, ageing, the MAC limit ---- */

START_TEST(unknown_floods_then_learned_unicast)
{
	struct rte_mbuf *m;

	flat(3);
	/* B is unknown: everyone but the source gets it, the same bytes */
	m = frame(mac(2), mac(1), 1);
	send1(0, clone_of(m));
	ck_assert_uint_eq(got(0), 0);
	ck_assert_uint_eq(got(2), 1);
	got_bytes(1, m);
	ck_assert_uint_eq(hv_fdb_count(dp.fdb, 0), 1);
	/* B answers: A was learned on port 0, only port 0 gets it */
	m = frame(mac(1), mac(2), 2);
	send1(1, clone_of(m));
	ck_assert_uint_eq(got(2), 0);
	got_bytes(0, m);
	/* and now both are known: A -> B is unicast */
	send1(0, frame(mac(2), mac(1), 3));
	ck_assert_uint_eq(got(1), 1);
	ck_assert_uint_eq(got(2), 0);
	ck_assert_uint_eq(ports[0].cnt[0].rx_packets, 2);
	ck_assert_uint_eq(ports[1].cnt[0].tx_packets, 2);
	ck_assert_uint_eq(ports[1].cnt[0].tx_bytes, 200);
}
END_TEST

START_TEST(station_moves)
{
	flat(3);
	send1(0, frame(BCAST, mac(1), 1));
	ck_assert_uint_eq(got(1) + got(2), 2);
	send1(1, frame(mac(1), mac(2), 2));
	ck_assert_uint_eq(got(0), 1);
	ck_assert_uint_eq(got(2), 0);
	/* A turns up behind port 2: frames for it follow */
	send1(2, frame(BCAST, mac(1), 3));
	ck_assert_uint_eq(got(0) + got(1), 2);
	send1(1, frame(mac(1), mac(2), 4));
	ck_assert_uint_eq(got(0), 0);
	ck_assert_uint_eq(got(2), 1);
	ck_assert_uint_eq(hv_fdb_count(dp.fdb, 0), 0);
	ck_assert_uint_eq(hv_fdb_count(dp.fdb, 2), 1);
}
END_TEST

START_TEST(entries_age_out)
{
	flat(3);
	send1(0, frame(BCAST, mac(1), 1));
	got(1);
	got(2);
	hv_fdb_age(dp.fdb, now_ms + AGE_MS / 2);
	send1(1, frame(mac(1), mac(2), 2));
	ck_assert_uint_eq(got(0), 1);
	ck_assert_uint_eq(got(2), 0);
	/* idle past the age (port 1's B was learned at the same time): both go, A floods */
	hv_fdb_age(dp.fdb, now_ms + 2 * AGE_MS);
	ck_assert_uint_eq(hv_fdb_count(dp.fdb, HV_FDB_PORT_NONE), 0);
	send1(1, frame(mac(1), mac(2), 3));
	ck_assert_uint_eq(got(0), 1);
	ck_assert_uint_eq(got(2), 1);
}
END_TEST

START_TEST(mac_limit_refuses_learning_not_switching)
{
	hv_fdb_free(dp.fdb);
	make_fdb(2);
	flat(3);
	for (uint8_t s = 1; s <= 3; s++) {
		send1(0, frame(BCAST, mac(s), s));
		/* the frame is switched whether or not its source was learned */
		ck_assert_uint_eq(got(1), 1);
		ck_assert_uint_eq(got(2), 1);
	}
	ck_assert_uint_eq(hv_fdb_count(dp.fdb, 0), 2);
	ck_assert_uint_eq(ports[0].cnt[0].learn_refused.limit, 1);
	/* the first two are known, the third floods */
	send1(1, frame(mac(1), mac(10), 4));
	ck_assert_uint_eq(got(0), 1);
	ck_assert_uint_eq(got(2), 0);
	send1(1, frame(mac(3), mac(10), 5));
	ck_assert_uint_eq(got(0), 1);
	ck_assert_uint_eq(got(2), 1);
}
END_TEST

/* ---- VLANs ---- */

/* 0, 1: access VLAN 10; 2: access VLAN 20; 3: trunk; 4: the untagged domain. */
static void
vlans(void)
{
	port(0, 10, false, 0, false);
	port(1, 10, false, 0, false);
	port(2, 20, false, 0, false);
	port(3, 0, true, 0, false);
	port(4, 0, false, 0, false);
}

START_TEST(access_ports_drop_tagged_frames)
{
	vlans();
	/* a tag of its own, a priority tag (VID 0), and an 802.1ad tag: all dropped */
	send1(0, frame_tagged(BCAST, mac(1), true, 20, 100, 1));
	send1(0, frame_tagged(BCAST, mac(1), true, 0, 100, 2));
	{
		struct rte_mbuf *m = frame_tagged(BCAST, mac(1), true, 20, 100, 3);

		rte_pktmbuf_mtod(m, uint8_t *)[12] = 0x88;
		rte_pktmbuf_mtod(m, uint8_t *)[13] = 0xa8;
		send1(0, m);
	}
	for (uint16_t i = 1; i < 5; i++)
		ck_assert_uint_eq(got(i), 0);
	ck_assert_uint_eq(ports[0].cnt[0].drops[SW_DROP_VLAN], 3);
	ck_assert_uint_eq(hv_fdb_count(dp.fdb, 0), 0);
}
END_TEST

START_TEST(trunk_pushes_and_pops_tags)
{
	struct rte_mbuf *m, *want;

	vlans();
	/* access VLAN 10 -> its domain: port 1 as it came, the trunk tagged 10 */
	m = frame(BCAST, mac(1), 1);
	want = frame_tagged(BCAST, mac(1), true, 10, 104, 1);
	/* the payload moved 4 bytes along: build the expected frame from the sent one */
	memcpy(rte_pktmbuf_mtod_offset(want, uint8_t *, 16),
	       rte_pktmbuf_mtod_offset(m, uint8_t *, 12), 88);
	send1(0, clone_of(m));
	ck_assert_uint_eq(got(2), 0);
	ck_assert_uint_eq(got(4), 0);
	got_bytes(1, m);
	got_bytes(3, want);
	/* tagged 20 from the trunk -> port 2, untagged */
	m = frame_tagged(BCAST, mac(7), true, 20, 104, 2);
	want = frame(BCAST, mac(7), 0);
	memcpy(rte_pktmbuf_mtod_offset(want, uint8_t *, 12),
	       rte_pktmbuf_mtod_offset(m, uint8_t *, 16), 88);
	send1(3, m);
	ck_assert_uint_eq(got(0) + got(1) + got(4), 0);
	got_bytes(2, want);
	/* untagged from the trunk: the untagged domain, port 4 */
	m = frame(BCAST, mac(8), 3);
	send1(3, clone_of(m));
	ck_assert_uint_eq(got(0) + got(1) + got(2), 0);
	got_bytes(4, m);
	/* learned per VLAN: mac 7 is known in VLAN 20 only */
	send1(2, frame(mac(7), mac(9), 4));
	ck_assert_uint_eq(got(3), 1);
	send1(0, frame(mac(7), mac(1), 5));
	ck_assert_uint_eq(got(1), 1); /* unknown in VLAN 10: flooded there */
	ck_assert_uint_eq(got(3), 1);
	ck_assert_uint_eq(got(2), 0);
}
END_TEST

/* ---- flooding and drops ---- */

START_TEST(flood_reaches_every_port_once_and_drops_are_counted)
{
	struct rte_mbuf *pkts[4];

	flat(5);
	/* a burst of two broadcasts: every other port gets both */
	pkts[0] = frame(BCAST, mac(1), 1);
	pkts[1] = frame(BCAST, mac(1), 2);
	sw_l2_input(&pmd, dp.view, &ports[0], pkts, 2, now_ms);
	hv_fdb_apply(dp.fdb);
	for (uint16_t i = 1; i < 5; i++) {
		ck_assert_uint_eq(fakes[i].n, 2);
		ck_assert_uint_eq(fakes[i].tx_calls, 1); /* one tx per port per burst */
		got(i);
	}
	ck_assert_uint_eq(got(0), 0);
	/* to where it came from: dropped */
	send1(0, frame(mac(1), mac(2), 3));
	ck_assert_uint_eq(ports[0].cnt[0].drops[SW_DROP_SAME_PORT], 1);
	/* a multicast source, a runt */
	{
		struct rte_ether_addr mc = {{0x01, 0, 0x5e, 0, 0, 1}};
		struct rte_mbuf *runt = rte_pktmbuf_alloc(mp);

		send1(1, frame(BCAST, mc, 4));
		ck_assert_ptr_nonnull(rte_pktmbuf_append(runt, 10));
		send1(1, runt);
	}
	ck_assert_uint_eq(ports[1].cnt[0].drops[SW_DROP_BAD_SRC], 1);
	ck_assert_uint_eq(ports[1].cnt[0].drops[SW_DROP_RUNT], 1);
	/* a destination that takes one of two: the other counted as tx_full */
	fakes[2].accept = 1;
	pkts[0] = frame(BCAST, mac(3), 5);
	pkts[1] = frame(BCAST, mac(3), 6);
	sw_l2_input(&pmd, dp.view, &ports[3], pkts, 2, now_ms);
	ck_assert_uint_eq(got(2), 1);
	ck_assert_uint_eq(ports[2].cnt[0].drops[SW_DROP_TX_FULL], 1);
	for (uint16_t i = 0; i < 5; i++)
		got(i);
}
END_TEST

/* ---- hand-off: offloads and borrowed frames ---- */

/* A TCPv4 frame of @payload bytes asking for TSO with @mss (partial checksum). */
static struct rte_mbuf *
tso_frame(struct rte_ether_addr dst, struct rte_ether_addr src, uint16_t payload, uint16_t mss)
{
	uint16_t len = (uint16_t)(14 + 20 + 20 + payload);
	struct rte_mbuf *head = NULL, *prev = NULL;
	uint8_t b[8192] = {0};
	uint8_t *ip = b + 14, *tcp = ip + 20;
	struct hv_offload_hdr *h;

	ck_assert_uint_le(len, sizeof(b));
	memcpy(b, &dst, 6);
	memcpy(b + 6, &src, 6);
	b[12] = 0x08;
	ip[0] = 0x45;
	ip[2] = (uint8_t)((len - 14) >> 8);
	ip[3] = (uint8_t)(len - 14);
	ip[8] = 64;
	ip[9] = 6;
	memcpy(ip + 12, "\x0a\x00\x00\x01\x0a\x00\x00\x02", 8);
	tcp[12] = 5 << 4;
	tcp[13] = 0x18; /* PSH ACK */
	for (uint16_t i = 0; i < payload; i++)
		tcp[20 + i] = (uint8_t)(i * 7);
	/* chained in mbuf-sized pieces */
	for (uint16_t off = 0; off < len;) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
		uint16_t k = RTE_MIN((uint16_t)(len - off), (uint16_t)1500);

		ck_assert_ptr_nonnull(m);
		memcpy(rte_pktmbuf_append(m, k), b + off, k);
		if (head == NULL) {
			head = m;
		} else {
			prev->next = m;
			head->nb_segs++;
			head->pkt_len += k;
		}
		prev = m;
		off += k;
	}
	h = hv_offload_mbuf_hdr(head);
	*h = (struct hv_offload_hdr){
		.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM,
		.gso_type = VIRTIO_NET_HDR_GSO_TCPV4,
		.gso_size = mss,
		.csum_start = 34,
		.csum_offset = 16,
	};
	head->ol_flags |= hv_offload_hdr_flag;
	return head;
}

START_TEST(offloads_go_in_the_form_each_port_takes)
{
	port(0, 0, false, 0, false);
	port(1, 0, false, 0, false);                                         /* takes none */
	port(2, 0, false, HV_OFFLOAD_CAP_CSUM | HV_OFFLOAD_CAP_TSO4, false); /* takes TSO */
	send1(1, frame(BCAST, mac(11), 1));
	send1(2, frame(BCAST, mac(12), 2));
	got(0);
	got(1);
	got(2);
	/* to port 1: cut into 3 segments of at most the MSS, each with its checksum */
	send1(0, tso_frame(mac(11), mac(1), 3000, 1000));
	ck_assert_uint_eq(fakes[1].n, 3);
	for (unsigned int k = 0; k < 3; k++) {
		ck_assert_uint_eq(fakes[1].got[k]->pkt_len, 54 + 1000);
		ck_assert(!hv_offload_mbuf_has_hdr(fakes[1].got[k]));
	}
	ck_assert_uint_eq(got(1), 3);
	ck_assert_uint_eq(ports[1].cnt[0].off.segmented, 1);
	ck_assert_uint_eq(ports[1].cnt[0].off.segments, 3);
	ck_assert_uint_eq(got(2), 0);
	/* to port 2: whole, its request kept */
	send1(0, tso_frame(mac(12), mac(1), 3000, 1000));
	ck_assert_uint_eq(fakes[2].n, 1);
	ck_assert_uint_eq(fakes[2].got[0]->pkt_len, 3054);
	ck_assert(hv_offload_mbuf_has_hdr(fakes[2].got[0]));
	ck_assert_uint_eq(hv_offload_mbuf_hdr(fakes[2].got[0])->gso_size, 1000);
	ck_assert_uint_eq(got(2), 1);
	ck_assert_uint_eq(ports[2].cnt[0].off.passthrough, 1);
	/* a request that does not hold (MSS under the minimum): dropped at the source */
	send1(0, tso_frame(mac(12), mac(1), 3000, 100));
	ck_assert_uint_eq(got(2), 0);
	ck_assert_uint_eq(ports[0].cnt[0].off.drops[HV_OFFLOAD_DROP_GSO_SIZE], 1);
}
END_TEST

static uint8_t lent[1024];
static struct rte_mbuf_ext_shared_info lent_info;
static unsigned int lent_returned;

static void
lent_free(void *addr, void *opaque)
{
	RTE_SET_USED(addr);
	RTE_SET_USED(opaque);
	lent_returned++;
}

/* A broadcast whose tail lies in memory lent by its source (as a guest's borrowed buffers). */
static struct rte_mbuf *
borrowing_frame(void)
{
	struct rte_mbuf *head = frame(BCAST, mac(1), 1), *tail = rte_pktmbuf_alloc(mp);

	ck_assert_ptr_nonnull(tail);
	for (size_t i = 0; i < sizeof(lent); i++)
		lent[i] = (uint8_t)(i * 3);
	lent_info.free_cb = lent_free;
	lent_info.fcb_opaque = NULL;
	rte_mbuf_ext_refcnt_set(&lent_info, 1);
	rte_pktmbuf_attach_extbuf(tail, lent, 0, sizeof(lent), &lent_info);
	tail->data_len = 500;
	head->next = tail;
	head->nb_segs = 2;
	head->pkt_len += 500;
	return head;
}

START_TEST(borrowed_frames_are_copied_for_ports_that_keep_them)
{
	struct rte_mbuf *m;

	port(0, 0, false, 0, false);
	port(1, 0, false, 0, false); /* copies at once (as a guest) */
	port(2, 0, false, 0, true);  /* reads later (as a NIC) */
	lent_returned = 0;
	m = borrowing_frame();
	send1(0, m);
	/* the guest-like port shares the lent frame, the NIC-like one has a copy of its own */
	ck_assert_uint_eq(fakes[1].n, 1);
	ck_assert_uint_eq(fakes[2].n, 1);
	ck_assert(fake_needs_copy(fakes[1].got[0]));
	ck_assert(!fake_needs_copy(fakes[2].got[0]));
	ck_assert_uint_eq(fakes[2].got[0]->pkt_len, 600);
	{
		uint8_t a[600], b[600];

		ck_assert_int_eq(memcmp(rte_pktmbuf_read(fakes[2].got[0], 0, 600, a),
					rte_pktmbuf_read(fakes[1].got[0], 0, 600, b), 600),
				 0);
	}
	/* once the sharing port is done, the lent memory is returned: the copy holds none */
	got(1);
	ck_assert_uint_eq(lent_returned, 1);
	got(2);
	ck_assert_uint_eq(lent_returned, 1);
}
END_TEST

int
main(int argc, char **argv)
{
	Suite *s = suite_create("l2");
	TCase *tc = tcase_create("l2");
	SRunner *sr;
	int failed;

	if (rte_eal_init(argc, argv) < 0 || hv_offload_mbuf_register() != 0) {
		fprintf(stderr, "test_l2: EAL\n");
		return 1;
	}
	mp = rte_pktmbuf_pool_create("test_l2", 4095, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				     (int)rte_socket_id());
	if (mp == NULL) {
		fprintf(stderr, "test_l2: no mbuf pool\n");
		return 1;
	}
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, unknown_floods_then_learned_unicast);
	tcase_add_test(tc, station_moves);
	tcase_add_test(tc, entries_age_out);
	tcase_add_test(tc, mac_limit_refuses_learning_not_switching);
	tcase_add_test(tc, access_ports_drop_tagged_frames);
	tcase_add_test(tc, trunk_pushes_and_pops_tags);
	tcase_add_test(tc, flood_reaches_every_port_once_and_drops_are_counted);
	tcase_add_test(tc, offloads_go_in_the_form_each_port_takes);
	tcase_add_test(tc, borrowed_frames_are_copied_for_ports_that_keep_them);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	rte_mempool_free(mp);
	rte_eal_cleanup();
	return failed == 0 ? 0 : 1;
}
