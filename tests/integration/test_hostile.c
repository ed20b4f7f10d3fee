/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Hostile frontends and guests against drivers/vhost: each case breaks one
 * rule, and then checks that (a) the offender lost its ring or its connection,
 * counted by reason, and (b) a well-behaved guest on another port (DPDK's
 * virtio-user) still exchanges frames.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <rte_ethdev.h>

#include "ring_fixture.h"

/* One TX descriptor; checks the ring was stopped for @why and nothing came out. */
static void
assert_tx_breaks(uint64_t addr, uint32_t len, uint16_t flags, enum hv_vhost_drop why)
{
	setup_rings();
	raw_fe_frame(&fe, RAW_DATA_OFF, HDR, 100);
	raw_fe_post(&fe, 1, 0, 1, &addr, &len, &flags);
	ck_assert_uint_eq(poll_tx(), 0);
	ck_assert_uint_eq(stats(HV_VHOST_RX).drops[why], 1);
	ck_assert_uint_eq(stats(HV_VHOST_RX).stops, 1);
	ck_assert(!hv_vhost_queue_ready(bad, 0));
	assert_bystander_ok();
}

/* A well-formed 100-byte frame on the guest's TX ring (vring 1), entry @i. */
static void
post_tx_frame(uint16_t i)
{
	uint64_t addr = raw_gpa(RAW_DATA_OFF);
	uint32_t len = HDR + 100;
	uint16_t flags = 0;

	raw_fe_frame(&fe, RAW_DATA_OFF, HDR, 100);
	raw_fe_post(&fe, 1, i, 1, &addr, &len, &flags);
}

START_TEST(good_frame_passes)
{
	setup_rings();
	post_tx_frame(0);
	ck_assert_uint_eq(poll_tx(), 1);
	ck_assert_uint_eq(fe.used[1]->idx, 1);
	ck_assert_uint_eq(stats(HV_VHOST_RX).packets, 1);
	ck_assert_uint_eq(stats(HV_VHOST_RX).bytes, 100);
}
END_TEST

START_TEST(avail_index_jump)
{
	setup_rings();
	__atomic_store_n(&fe.avail[1]->idx, 1000, __ATOMIC_RELEASE);
	ck_assert_uint_eq(poll_tx(), 0);
	ck_assert_uint_eq(stats(HV_VHOST_RX).drops[HV_VHOST_DROP_BAD_AVAIL_IDX], 1);
	ck_assert_uint_eq(stats(HV_VHOST_RX).stops, 1);
	assert_bystander_ok();
	/* the frontend resets the ring: it runs again */
	ck_assert_int_eq(raw_fe_reset_ring(&fe, 1), 0);
	ck_assert(hv_vhost_queue_ready(bad, 0));
	{
		uint64_t addr = raw_gpa(RAW_DATA_OFF);
		uint32_t len = HDR + 64;
		uint16_t flags = 0;

		raw_fe_frame(&fe, RAW_DATA_OFF, HDR, 64);
		raw_fe_post(&fe, 1, 0, 1, &addr, &len, &flags);
		ck_assert_uint_eq(poll_tx(), 1);
	}
}
END_TEST

START_TEST(head_out_of_range)
{
	setup_rings();
	fe.avail[1]->ring[0] = RAW_RING_SIZE + 3;
	__atomic_store_n(&fe.avail[1]->idx, 1, __ATOMIC_RELEASE);
	ck_assert_uint_eq(poll_tx(), 0);
	ck_assert_uint_eq(stats(HV_VHOST_RX).drops[HV_VHOST_DROP_BAD_DESC_INDEX], 1);
	assert_bystander_ok();
}
END_TEST

START_TEST(chain_loop)
{
	setup_rings();
	/* empty descriptors: the walk runs into its budget, not into the iov limit */
	fe.desc[1][0] = (struct vring_desc){raw_gpa(RAW_DATA_OFF), 0, VRING_DESC_F_NEXT, 1};
	fe.desc[1][1] = (struct vring_desc){raw_gpa(RAW_DATA_OFF), 0, VRING_DESC_F_NEXT, 0};
	fe.avail[1]->ring[0] = 0;
	__atomic_store_n(&fe.avail[1]->idx, 1, __ATOMIC_RELEASE);
	ck_assert_uint_eq(poll_tx(), 0);
	ck_assert_uint_eq(stats(HV_VHOST_RX).drops[HV_VHOST_DROP_BAD_CHAIN], 1);
	assert_bystander_ok();
}
END_TEST

START_TEST(chain_loop_with_data)
{
	setup_rings();
	fe.desc[1][0] = (struct vring_desc){raw_gpa(RAW_DATA_OFF), 64, VRING_DESC_F_NEXT, 1};
	fe.desc[1][1] = (struct vring_desc){raw_gpa(RAW_DATA_OFF), 64, VRING_DESC_F_NEXT, 0};
	fe.avail[1]->ring[0] = 0;
	__atomic_store_n(&fe.avail[1]->idx, 1, __ATOMIC_RELEASE);
	ck_assert_uint_eq(poll_tx(), 0);
	ck_assert_uint_eq(stats(HV_VHOST_RX).drops[HV_VHOST_DROP_TOO_MANY_SEGS], 1);
	ck_assert_uint_eq(stats(HV_VHOST_RX).stops, 1);
	assert_bystander_ok();
}
END_TEST

START_TEST(next_out_of_range)
{
	setup_rings();
	fe.desc[1][0] = (struct vring_desc){raw_gpa(RAW_DATA_OFF), 64, VRING_DESC_F_NEXT, 999};
	fe.avail[1]->ring[0] = 0;
	__atomic_store_n(&fe.avail[1]->idx, 1, __ATOMIC_RELEASE);
	ck_assert_uint_eq(poll_tx(), 0);
	ck_assert_uint_eq(stats(HV_VHOST_RX).drops[HV_VHOST_DROP_BAD_DESC_INDEX], 1);
	assert_bystander_ok();
}
END_TEST

START_TEST(writable_on_tx)
{
	assert_tx_breaks(raw_gpa(RAW_DATA_OFF), HDR + 100, VRING_DESC_F_WRITE,
			 HV_VHOST_DROP_BAD_DIRECTION);
}
END_TEST

START_TEST(addr_outside_memory)
{
	assert_tx_breaks(raw_gpa(RAW_MEM_SIZE + 0x1000), 200, 0, HV_VHOST_DROP_BAD_ADDR);
}
END_TEST

START_TEST(len_past_region)
{
	assert_tx_breaks(raw_gpa(RAW_MEM_SIZE - 100), 4096, 0, HV_VHOST_DROP_BAD_ADDR);
}
END_TEST

START_TEST(addr_wraps)
{
	assert_tx_breaks(UINT64_C(0xfffffffffffff000), 0x2000, 0, HV_VHOST_DROP_BAD_ADDR);
}
END_TEST

START_TEST(indirect_nested)
{
	uint32_t t = RAW_DATA_OFF + 0x2000;
	struct vring_desc *tab = (struct vring_desc *)(fe.mem + t);

	/* an indirect table whose entry is itself indirect */
	tab[0] = (struct vring_desc){raw_gpa(t), 32, VRING_DESC_F_INDIRECT, 0};
	tab[1] = (struct vring_desc){raw_gpa(RAW_DATA_OFF), 64, 0, 0};
	assert_tx_breaks(raw_gpa(t), 32, VRING_DESC_F_INDIRECT, HV_VHOST_DROP_BAD_INDIRECT);
}
END_TEST

START_TEST(indirect_odd_size)
{
	assert_tx_breaks(raw_gpa(RAW_DATA_OFF + 0x2000), 24, VRING_DESC_F_INDIRECT,
			 HV_VHOST_DROP_BAD_INDIRECT);
}
END_TEST

START_TEST(indirect_good)
{
	uint32_t t = RAW_DATA_OFF + 0x2000;
	struct vring_desc *tab = (struct vring_desc *)(fe.mem + t);
	uint64_t addr = raw_gpa(t);
	uint32_t len = 2 * sizeof(struct vring_desc);
	uint16_t flags = VRING_DESC_F_INDIRECT;

	setup_rings();
	raw_fe_frame(&fe, RAW_DATA_OFF, HDR, 300);
	/* header and frame split over two indirect entries */
	tab[0] = (struct vring_desc){raw_gpa(RAW_DATA_OFF), 50, VRING_DESC_F_NEXT, 1};
	tab[1] = (struct vring_desc){raw_gpa(RAW_DATA_OFF + 50), HDR + 300 - 50, 0, 0};
	raw_fe_post(&fe, 1, 0, 1, &addr, &len, &flags);
	ck_assert_uint_eq(poll_tx(), 1);
	ck_assert_uint_eq(stats(HV_VHOST_RX).bytes, 300);
}
END_TEST

START_TEST(offload_not_agreed)
{
	uint64_t addr[2] = {raw_gpa(RAW_DATA_OFF), raw_gpa(RAW_DATA_OFF + 0x1000)};
	uint32_t len[2] = {HDR + 100, HDR + 100};
	uint16_t flags[2] = {0, 0};

	setup_rings();
	/* NEEDS_CSUM without CSUM negotiated: that frame only is dropped */
	raw_fe_frame(&fe, RAW_DATA_OFF, HDR, 100);
	fe.mem[RAW_DATA_OFF] = VIRTIO_NET_HDR_F_NEEDS_CSUM;
	raw_fe_frame(&fe, RAW_DATA_OFF + 0x1000, HDR, 100);
	raw_fe_post(&fe, 1, 0, 1, &addr[0], &len[0], &flags[0]);
	raw_fe_post(&fe, 1, 1, 1, &addr[1], &len[1], &flags[1]);
	ck_assert_uint_eq(poll_tx(), 1);
	ck_assert_uint_eq(stats(HV_VHOST_RX).drops[HV_VHOST_DROP_BAD_HEADER], 1);
	ck_assert_uint_eq(stats(HV_VHOST_RX).stops, 0);
	ck_assert_uint_eq(fe.used[1]->idx, 2); /* both buffers went back to the guest */
}
END_TEST

/*
 * Three TX chains, the middle one too short, taken in one burst. Returns the
 * used ring after it; entries the switch did not write keep 0xffff as id.
 */
static const struct vring_used *
tx_burst_of_three(uint64_t features)
{
	ck_assert_int_eq(raw_fe_setup(&fe, features), 0);
	ck_assert(hv_vhost_queue_ready(bad, 0));
	for (uint16_t i = 0; i < 3; i++) {
		uint64_t addr = raw_gpa(RAW_DATA_OFF + i * 2048u);
		uint32_t len = i == 1 ? HDR + 5 : HDR + 100;
		uint16_t flags = 0;

		fe.used[1]->ring[i].id = 0xffff;
		raw_fe_frame(&fe, RAW_DATA_OFF + i * 2048u, HDR, 100);
		raw_fe_post(&fe, 1, i, 1, &addr, &len, &flags);
	}
	ck_assert_uint_eq(poll_tx(), 2);
	ck_assert_uint_eq(stats(HV_VHOST_RX).drops[HV_VHOST_DROP_TOO_SHORT], 1);
	/* every chain, the dropped one too, went back to the guest */
	ck_assert_uint_eq(fe.used[1]->idx, 3);
	return fe.used[1];
}

START_TEST(in_order_tx_one_entry_per_burst)
{
	const struct vring_used *u = tx_burst_of_three(HV_VHOST_F_VERSION_1 | HV_VHOST_F_MRG_RXBUF |
						       HV_VHOST_F_IN_ORDER);

	ck_assert(hv_vhost_port_features(bad) & HV_VHOST_F_IN_ORDER);
	/* in order the batch is told by its last entry alone */
	ck_assert_uint_eq(u->ring[2].id, 2);
	ck_assert_uint_eq(u->ring[0].id, 0xffff);
	ck_assert_uint_eq(u->ring[1].id, 0xffff);
	assert_bystander_ok();
}
END_TEST

START_TEST(not_in_order_tx_every_entry)
{
	const struct vring_used *u = tx_burst_of_three(HV_VHOST_F_VERSION_1 | HV_VHOST_F_MRG_RXBUF);

	ck_assert(!(hv_vhost_port_features(bad) & HV_VHOST_F_IN_ORDER));
	for (uint16_t i = 0; i < 3; i++) {
		ck_assert_uint_eq(u->ring[i].id, i);
		ck_assert_uint_eq(u->ring[i].len, 0);
	}
}
END_TEST

/* ---- borrowed tails: a long frame's tail stays in guest memory until rx_done ---- */

#define LONG_FRAME 6000

/* Check @m holds the frame at RAW_DATA_OFF; returns how many of its bytes are lent. */
static uint32_t
assert_frame_is(struct rte_mbuf *m, uint32_t len)
{
	static uint8_t buf[LONG_FRAME];
	uint32_t lent = 0;

	ck_assert_uint_eq(m->pkt_len, len);
	ck_assert_mem_eq(rte_pktmbuf_read(m, 0, len, buf), fe.mem + RAW_DATA_OFF + HDR, len);
	for (struct rte_mbuf *s = m; s != NULL; s = s->next)
		if (s->ol_flags & RTE_MBUF_F_EXTERNAL)
			lent += s->data_len;
	return lent;
}

START_TEST(borrow_held_until_done)
{
	uint64_t addr = raw_gpa(RAW_DATA_OFF);
	uint32_t len = HDR + LONG_FRAME;
	uint16_t flags = 0;
	struct vhost_user_msg reply;
	struct vhost_vring_state st = {.index = 1};
	struct rte_mbuf *m;

	setup_rings();
	raw_fe_frame(&fe, RAW_DATA_OFF, HDR, LONG_FRAME);
	raw_fe_post(&fe, 1, 0, 1, &addr, &len, &flags);
	ck_assert_uint_eq(hv_vhost_rx_burst(bad, 0, &m, 1), 1);
	ck_assert(hv_vhost_mbuf_borrows(m));
	ck_assert_uint_gt(assert_frame_is(m, LONG_FRAME), LONG_FRAME / 2);
	/* the first segment is always ours: the headers the switch reads */
	ck_assert(RTE_MBUF_DIRECT(m));
	ck_assert_uint_eq(stats(HV_VHOST_RX).borrowed, 1);
	/* the guest may not reuse the buffer yet, nor may the ring be stopped */
	ck_assert_uint_eq(fe.used[1]->idx, 0);
	ck_assert_int_eq(raw_fe_send(&fe, VHOST_USER_GET_VRING_BASE, VHOST_USER_VERSION, &st,
				     sizeof(st), NULL, 0),
			 0);
	/* not even after an interrupt entered and left the ring in between */
	hv_vhost_irq_signal(bad, 0, HV_VHOST_RX, 0);
	ck_assert_int_eq(raw_fe_recv(&fe, &reply, 200), -1);
	/*
	 * A clone still points into the guest, also once the original is freed
	 * and its mbufs are reused and rewritten; a copy (what a NIC gets) does
	 * not point there.
	 */
	{
		struct rte_mbuf *c = rte_pktmbuf_clone(m, peer_switch_pool());
		struct rte_mbuf *d = rte_pktmbuf_copy(m, peer_switch_pool(), 0, UINT32_MAX);
		struct rte_mbuf *junk[64];

		ck_assert(c != NULL && d != NULL);
		rte_pktmbuf_free(m);
		ck_assert_int_eq(rte_pktmbuf_alloc_bulk(peer_switch_pool(), junk, 64), 0);
		for (int i = 0; i < 64; i++)
			memset(junk[i]->buf_addr, 0xa5, junk[i]->buf_len);
		rte_pktmbuf_free_bulk(junk, 64);
		ck_assert(hv_vhost_mbuf_borrows(c));
		ck_assert_uint_gt(assert_frame_is(c, LONG_FRAME), LONG_FRAME / 2);
		ck_assert(!hv_vhost_mbuf_borrows(d));
		ck_assert_uint_eq(assert_frame_is(d, LONG_FRAME), 0);
		rte_pktmbuf_free(c);
		rte_pktmbuf_free(d);
	}
	hv_vhost_rx_done(bad, 0);
	ck_assert_uint_eq(fe.used[1]->idx, 1);
	/* now the stop goes through, at the index after the frame */
	ck_assert_int_eq(raw_fe_recv(&fe, &reply, TIMEOUT_MS), 0);
	ck_assert_uint_eq(reply.payload.state.num, 1);
	assert_bystander_ok();
}
END_TEST

START_TEST(borrow_across_descriptors)
{
	uint64_t addr[3] = {raw_gpa(RAW_DATA_OFF), raw_gpa(RAW_DATA_OFF + HDR + 1000),
			    raw_gpa(RAW_DATA_OFF + HDR + 3000)};
	uint32_t len[3] = {HDR + 1000, 2000, LONG_FRAME - 3000};
	uint16_t flags[3] = {0, 0, 0};
	struct rte_mbuf *m;

	setup_rings();
	raw_fe_frame(&fe, RAW_DATA_OFF, HDR, LONG_FRAME);
	raw_fe_post(&fe, 1, 0, 3, addr, len, flags);
	ck_assert_uint_eq(hv_vhost_rx_burst(bad, 0, &m, 1), 1);
	/* the first mbuf fills from two descriptors; the rest of both is lent */
	ck_assert_uint_eq(m->nb_segs, 3);
	ck_assert_uint_eq(assert_frame_is(m, LONG_FRAME), LONG_FRAME - m->data_len);
	rte_pktmbuf_free(m);
	hv_vhost_rx_done(bad, 0);
	ck_assert_uint_eq(fe.used[1]->idx, 1);
}
END_TEST

/*
 * 12 pieces where a copy takes 4 mbufs: copied, so that a guest of tiny
 * buffers cannot make the switch hold many mbufs of the shared pool.
 */
START_TEST(borrow_not_for_many_pieces)
{
	uint64_t addr[12];
	uint32_t len[12];
	uint16_t flags[12] = {0};
	struct rte_mbuf *m;

	setup_rings();
	raw_fe_frame(&fe, RAW_DATA_OFF, HDR, LONG_FRAME);
	for (int i = 0; i < 12; i++) {
		addr[i] = raw_gpa(RAW_DATA_OFF + (i == 0 ? 0 : HDR + 500u * i));
		len[i] = i == 0 ? HDR + 500 : 500;
	}
	raw_fe_post(&fe, 1, 0, 12, addr, len, flags);
	ck_assert_uint_eq(hv_vhost_rx_burst(bad, 0, &m, 1), 1);
	ck_assert(!hv_vhost_mbuf_borrows(m));
	ck_assert_uint_eq(assert_frame_is(m, LONG_FRAME), 0);
	ck_assert_uint_eq(fe.used[1]->idx, 1);
	rte_pktmbuf_free(m);
	hv_vhost_rx_done(bad, 0);
}
END_TEST

/* A checksum field beyond the first mbuf: nothing is lent, the frame is copied. */
START_TEST(borrow_not_past_headers)
{
	uint64_t addr = raw_gpa(RAW_DATA_OFF);
	uint32_t len = HDR + LONG_FRAME;
	uint16_t flags = 0, csum_start = 5000, csum_offset = 16;
	struct rte_mbuf *m;

	ck_assert_int_eq(
		raw_fe_setup(&fe, HV_VHOST_F_VERSION_1 | HV_VHOST_F_MRG_RXBUF | HV_VHOST_F_CSUM),
		0);
	raw_fe_frame(&fe, RAW_DATA_OFF, HDR, LONG_FRAME);
	fe.mem[RAW_DATA_OFF] = VIRTIO_NET_HDR_F_NEEDS_CSUM;
	memcpy(fe.mem + RAW_DATA_OFF + 6, &csum_start, 2);
	memcpy(fe.mem + RAW_DATA_OFF + 8, &csum_offset, 2);
	raw_fe_post(&fe, 1, 0, 1, &addr, &len, &flags);
	ck_assert_uint_eq(hv_vhost_rx_burst(bad, 0, &m, 1), 1);
	ck_assert(!hv_vhost_mbuf_borrows(m));
	ck_assert_uint_eq(assert_frame_is(m, LONG_FRAME), 0);
	/* nothing borrowed: the buffer went back within the burst */
	ck_assert_uint_eq(fe.used[1]->idx, 1);
	ck_assert_uint_eq(stats(HV_VHOST_RX).borrowed, 0);
	rte_pktmbuf_free(m);
	hv_vhost_rx_done(bad, 0);
}
END_TEST

/* ---- a frame in one descriptor: one copy when it fits its mbuf ---- */

/* Frame bytes one mbuf of the port's pool holds. */
static uint32_t
mbuf_room(void)
{
	return rte_pktmbuf_data_room_size(peer_switch_pool()) - RTE_PKTMBUF_HEADROOM;
}

/*
 * One TX descriptor holding the header and a @len-byte frame: the mbuf it
 * becomes has @segs segments, none written past its buffer, and the frame's
 * bytes exactly.
 */
static void
assert_tx_one_piece(uint32_t len, uint16_t segs)
{
	uint64_t addr = raw_gpa(RAW_DATA_OFF);
	uint32_t dlen = HDR + len;
	uint16_t flags = 0;
	const char *why = "";
	struct rte_mbuf *m;

	setup_rings();
	raw_fe_frame(&fe, RAW_DATA_OFF, HDR, len);
	raw_fe_post(&fe, 1, 0, 1, &addr, &dlen, &flags);
	ck_assert_uint_eq(hv_vhost_rx_burst(bad, 0, &m, 1), 1);
	ck_assert_msg(rte_mbuf_check(m, 1, &why) == 0, "%u-byte frame: %s", len, why);
	ck_assert_uint_eq(m->nb_segs, segs);
	assert_frame_is(m, len);
	rte_pktmbuf_free(m);
	hv_vhost_rx_done(bad, 0);
	ck_assert_uint_eq(fe.used[1]->idx, 1);
	ck_assert_uint_eq(stats(HV_VHOST_RX).bytes, len);
}

START_TEST(tx_frame_fills_mbuf)
{
	assert_tx_one_piece(mbuf_room(), 1);
}
END_TEST

/* A byte more than the mbuf holds: a second segment, not a byte past the first. */
START_TEST(tx_frame_one_byte_past_mbuf)
{
	assert_tx_one_piece(mbuf_room() + 1, 2);
}
END_TEST

START_TEST(too_short)
{
	uint64_t addr = raw_gpa(RAW_DATA_OFF);
	uint32_t len = HDR + 5;
	uint16_t flags = 0;

	setup_rings();
	raw_fe_post(&fe, 1, 0, 1, &addr, &len, &flags);
	ck_assert_uint_eq(poll_tx(), 0);
	ck_assert_uint_eq(stats(HV_VHOST_RX).drops[HV_VHOST_DROP_TOO_SHORT], 1);
	ck_assert(hv_vhost_queue_ready(bad, 0));
}
END_TEST

START_TEST(readonly_rx_buffer)
{
	uint64_t addr = raw_gpa(RAW_DATA_OFF);
	uint32_t len = 2048;
	uint16_t flags = 0; /* device-readable: not a receive buffer */
	struct rte_mbuf *m;

	setup_rings();
	raw_fe_post(&fe, 0, 0, 1, &addr, &len, &flags);
	m = peer_frame(peer_switch_pool(), 100, 1, 1);
	ck_assert_uint_eq(hv_vhost_tx_burst(bad, 0, &m, 1), 0);
	ck_assert_uint_eq(stats(HV_VHOST_TX).drops[HV_VHOST_DROP_BAD_DIRECTION], 1);
	ck_assert_uint_eq(stats(HV_VHOST_TX).stops, 1);
	assert_bystander_ok();
}
END_TEST

START_TEST(rx_delivers_with_num_buffers)
{
	uint64_t addr[3] = {raw_gpa(RAW_DATA_OFF), raw_gpa(RAW_DATA_OFF + 0x1000),
			    raw_gpa(RAW_DATA_OFF + 0x2000)};
	uint32_t len[3] = {1024, 1024, 1024};
	uint16_t flags[3] = {VRING_DESC_F_WRITE, VRING_DESC_F_WRITE, VRING_DESC_F_WRITE};
	struct rte_mbuf *m;
	uint16_t nb;

	setup_rings();
	for (int i = 0; i < 3; i++)
		raw_fe_post(&fe, 0, (uint16_t)i, 1, &addr[i], &len[i], &flags[i]);
	m = peer_frame(peer_switch_pool(), 2000, 3, 2);
	ck_assert_uint_eq(hv_vhost_tx_burst(bad, 0, &m, 1), 1);
	/* 12 + 2000 bytes over two 1024-byte buffers */
	ck_assert_uint_eq(fe.used[0]->idx, 2);
	ck_assert_uint_eq(fe.used[0]->ring[0].len, 1024);
	ck_assert_uint_eq(fe.used[0]->ring[1].len, HDR + 2000 - 1024);
	memcpy(&nb, fe.mem + RAW_DATA_OFF + 10, 2);
	ck_assert_uint_eq(nb, 2);
}
END_TEST

/* ---- the vhost-user socket ---- */

static void
assert_disconnected_then_usable(void)
{
	ck_assert(raw_fe_closed(&fe, TIMEOUT_MS));
	raw_fe_close(&fe);
	assert_bystander_ok();
	/* the port listens again and a correct frontend gets its rings */
	ck_assert_int_eq(raw_fe_connect(&fe, bad_path), 0);
	setup_rings();
}

START_TEST(msg_oversized)
{
	struct vhost_user_hdr h = {
		.request = VHOST_USER_SET_FEATURES, .flags = VHOST_USER_VERSION, .size = 1u << 20};

	ck_assert_int_eq(raw_fe_send_bytes(&fe, &h, sizeof(h)), 0);
	assert_disconnected_then_usable();
}
END_TEST

START_TEST(msg_wrong_size)
{
	uint32_t v = 1;

	ck_assert_int_eq(raw_fe_send(&fe, VHOST_USER_SET_FEATURES, VHOST_USER_VERSION, &v,
				     sizeof(v), NULL, 0),
			 0);
	assert_disconnected_then_usable();
}
END_TEST

START_TEST(msg_bad_version)
{
	ck_assert_int_eq(raw_fe_send(&fe, VHOST_USER_SET_OWNER, 0x2, NULL, 0, NULL, 0), 0);
	assert_disconnected_then_usable();
}
END_TEST

START_TEST(msg_too_many_fds)
{
	int fds[12];
	uint64_t v = 0;

	for (int i = 0; i < 12; i++)
		fds[i] = eventfd(0, EFD_CLOEXEC);
	ck_assert_int_eq(raw_fe_send(&fe, VHOST_USER_SET_VRING_CALL, VHOST_USER_VERSION, &v,
				     sizeof(v), fds, 12),
			 0);
	for (int i = 0; i < 12; i++)
		close(fds[i]);
	assert_disconnected_then_usable();
}
END_TEST

START_TEST(msg_kick_not_eventfd)
{
	int pfd[2];
	uint64_t v = 1;

	ck_assert_int_eq(pipe(pfd), 0);
	ck_assert_int_eq(raw_fe_send(&fe, VHOST_USER_SET_VRING_KICK, VHOST_USER_VERSION, &v,
				     sizeof(v), &pfd[0], 1),
			 0);
	close(pfd[0]);
	close(pfd[1]);
	assert_disconnected_then_usable();
}
END_TEST

/*
 * A frontend that shrinks the file behind its guest memory once we mapped it:
 * our next access would raise SIGBUS and end the switch. The region turns
 * into anonymous memory (the access reads zeros: no frame), the frontend is
 * dropped, and the bystander goes on.
 */
START_TEST(mem_shrunk_under_us)
{
	setup_rings();
	post_tx_frame(0);
	ck_assert_int_eq(ftruncate(fe.memfd, 0), 0);
	ck_assert_uint_eq(poll_tx(), 0);
	ck_assert_uint_eq(stats(HV_VHOST_RX).packets, 0);
	assert_disconnected_then_usable();
	/* and the new frontend's frames pass */
	post_tx_frame(0);
	ck_assert_uint_eq(poll_tx(), 1);
}
END_TEST

START_TEST(msg_region_beyond_file)
{
	struct vhost_memory mem = {.nregions = 1};

	mem.regions[0] = (struct vhost_memory_region){RAW_GPA_BASE, RAW_MEM_SIZE * 4,
						      (uint64_t)(uintptr_t)fe.mem, 0};
	ck_assert_int_eq(raw_fe_send(&fe, VHOST_USER_SET_MEM_TABLE, VHOST_USER_VERSION, &mem,
				     8 + sizeof(mem.regions[0]), &fe.memfd, 1),
			 0);
	assert_disconnected_then_usable();
}
END_TEST

START_TEST(msg_regions_overlap)
{
	struct vhost_memory mem = {.nregions = 2};
	int fds[2] = {fe.memfd, fe.memfd};

	mem.regions[0] = (struct vhost_memory_region){RAW_GPA_BASE, 0x100000,
						      (uint64_t)(uintptr_t)fe.mem, 0};
	mem.regions[1] = (struct vhost_memory_region){
		RAW_GPA_BASE + 0x80000, 0x100000, (uint64_t)(uintptr_t)fe.mem + 0x100000, 0x100000};
	ck_assert_int_eq(raw_fe_send(&fe, VHOST_USER_SET_MEM_TABLE, VHOST_USER_VERSION, &mem,
				     8 + 2 * sizeof(mem.regions[0]), fds, 2),
			 0);
	assert_disconnected_then_usable();
}
END_TEST

/* A frontend that stops mid-message holds only its own connection. */
START_TEST(msg_stalled_half_way)
{
	struct vhost_user_hdr h = {
		.request = VHOST_USER_SET_FEATURES, .flags = VHOST_USER_VERSION, .size = 8};

	ck_assert_int_eq(raw_fe_send_bytes(&fe, &h, 7), 0);
	assert_bystander_ok();
	/* and the stalled one can still finish its message */
	ck_assert_int_eq(raw_fe_send_bytes(&fe, (uint8_t *)&h + 7, sizeof(h) - 7), 0);
	{
		uint64_t f = HV_VHOST_F_VERSION_1;

		ck_assert_int_eq(raw_fe_send_bytes(&fe, &f, sizeof(f)), 0);
	}
	ck_assert(!raw_fe_closed(&fe, 200));
	ck_assert_uint_eq(hv_vhost_port_features(bad), HV_VHOST_F_VERSION_1);
}
END_TEST

/*
 * More messages at once than the control thread handles per turn: each is
 * answered all the same (the rest wait for the next turn, not forever).
 */
START_TEST(msg_flood_all_answered)
{
	struct vhost_user_msg reply;
	enum {
		FLOOD = 200
	};

	for (int i = 0; i < FLOOD; i++)
		ck_assert_int_eq(raw_fe_send(&fe, VHOST_USER_GET_FEATURES, VHOST_USER_VERSION, NULL,
					     0, NULL, 0),
				 0);
	for (int i = 0; i < FLOOD; i++) {
		ck_assert_int_eq(raw_fe_recv(&fe, &reply, TIMEOUT_MS), 0);
		ck_assert_uint_eq(reply.hdr.request, VHOST_USER_GET_FEATURES);
	}
	ck_assert(!raw_fe_closed(&fe, 100));
	assert_bystander_ok();
}
END_TEST

START_TEST(msg_unknown_request_nacked)
{
	struct vhost_user_msg reply;
	uint64_t pf = RTE_BIT64(VHOST_USER_PROTOCOL_F_REPLY_ACK);

	ck_assert_int_eq(raw_fe_send(&fe, VHOST_USER_SET_PROTOCOL_FEATURES, VHOST_USER_VERSION, &pf,
				     sizeof(pf), NULL, 0),
			 0);
	ck_assert_int_eq(
		raw_fe_send(&fe, 99, VHOST_USER_VERSION | VHOST_USER_NEED_REPLY, NULL, 0, NULL, 0),
		0);
	ck_assert_int_eq(raw_fe_recv(&fe, &reply, TIMEOUT_MS), 0);
	ck_assert_uint_eq(reply.hdr.request, 99);
	ck_assert_uint_eq(reply.payload.u64, 1);
	ck_assert(!raw_fe_closed(&fe, 100));
}
END_TEST

static void *
suite(void)
{
	Suite *s = suite_create("hostile");
	TCase *ring = tcase_create("guest-memory");
	TCase *sock = tcase_create("socket");
	tcase_add_checked_fixture(ring, setup, teardown);
	tcase_add_checked_fixture(sock, setup, teardown);
	tcase_set_timeout(ring, 60);
	tcase_set_timeout(sock, 60);
	tcase_add_test(ring, good_frame_passes);
	tcase_add_test(ring, avail_index_jump);
	tcase_add_test(ring, head_out_of_range);
	tcase_add_test(ring, chain_loop);
	tcase_add_test(ring, chain_loop_with_data);
	tcase_add_test(ring, next_out_of_range);
	tcase_add_test(ring, writable_on_tx);
	tcase_add_test(ring, addr_outside_memory);
	tcase_add_test(ring, len_past_region);
	tcase_add_test(ring, addr_wraps);
	tcase_add_test(ring, indirect_nested);
	tcase_add_test(ring, indirect_odd_size);
	tcase_add_test(ring, indirect_good);
	tcase_add_test(ring, offload_not_agreed);
	tcase_add_test(ring, too_short);
	tcase_add_test(ring, in_order_tx_one_entry_per_burst);
	tcase_add_test(ring, borrow_held_until_done);
	tcase_add_test(ring, borrow_across_descriptors);
	tcase_add_test(ring, borrow_not_past_headers);
	tcase_add_test(ring, borrow_not_for_many_pieces);
	tcase_add_test(ring, tx_frame_fills_mbuf);
	tcase_add_test(ring, tx_frame_one_byte_past_mbuf);
	tcase_add_test(ring, not_in_order_tx_every_entry);
	tcase_add_test(ring, readonly_rx_buffer);
	tcase_add_test(ring, rx_delivers_with_num_buffers);
	tcase_add_test(sock, msg_oversized);
	tcase_add_test(sock, msg_wrong_size);
	tcase_add_test(sock, msg_bad_version);
	tcase_add_test(sock, msg_too_many_fds);
	tcase_add_test(sock, msg_kick_not_eventfd);
	tcase_add_test(sock, msg_region_beyond_file);
	tcase_add_test(sock, mem_shrunk_under_us);
	tcase_add_test(sock, msg_regions_overlap);
	tcase_add_test(sock, msg_stalled_half_way);
	tcase_add_test(sock, msg_unknown_request_nacked);
	tcase_add_test(sock, msg_flood_all_answered);
	suite_add_tcase(s, ring);
	suite_add_tcase(s, sock);
	return s;
}

int
main(int argc, char **argv)
{
	return peer_run_suite(suite, argc, argv);
}
