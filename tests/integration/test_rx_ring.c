/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a guest reads in its receive ring, whatever its buffers and used
 * slots held before: drivers/vhost stores a net header, num_buffers or a
 * used entry only where the guest's bytes differ, and copies long pieces in
 * chunks that claim the lines ahead and short ones at the end of the burst
 * (doc/vhost.rst, "Stores into a guest's receive ring").
 */
#include <check.h>
#include <stdbool.h>
#include <string.h>

#include <rte_common.h>
#include <rte_mbuf.h>

#include "ring_fixture.h"

/* A frame to deliver and the receive buffers it goes to. */
struct rx_case {
	uint32_t len;       /* frame bytes */
	unsigned int segs;  /* mbufs it comes in */
	uint32_t buf_len;   /* each receive buffer */
	unsigned int nbufs; /* buffers it must take */
};

#define RX_BUF_STRIDE 0x4000u

/* Guest offset of receive buffer @i of a case whose first buffer is at @base. */
static uint32_t
rx_buf_off(uint32_t base, unsigned int i)
{
	return base + i * RX_BUF_STRIDE;
}

/*
 * Post @c->nbufs receive buffers (descriptors @first on, at @base, then
 * every RX_BUF_STRIDE), deliver the frame, and check what the guest reads:
 * its @hdr-byte net header (num_buffers in it when 12), each used entry,
 * every byte of the frame.
 */
static void
rx_post(uint16_t first, uint32_t base, const struct rx_case *c, unsigned int from, unsigned int to)
{
	for (unsigned int i = from; i < to; i++) {
		uint64_t addr = raw_gpa(rx_buf_off(base, i));
		uint32_t len = c->buf_len;
		uint16_t flags = VRING_DESC_F_WRITE;

		raw_fe_post(&fe, 0, (uint16_t)(first + i), 1, &addr, &len, &flags);
	}
}

/* rx_expect() without posting: the buffers are already there. */
static void
rx_deliver_expect(uint16_t first, uint32_t base, const struct rx_case *c, uint32_t hdr,
		  uint32_t seed)
{
	uint8_t want_hdr[HDR] = {0};
	struct rte_mbuf *m, *want;
	uint32_t left = hdr + c->len, copied = 0;

	m = peer_frame(peer_guest_pool(), c->len, seed, c->segs);
	want = peer_frame(peer_guest_pool(), c->len, seed, 1);
	ck_assert_ptr_nonnull(m);
	ck_assert_ptr_nonnull(want);
	ck_assert_uint_eq(hv_vhost_tx_burst(bad, 0, &m, 1), 1);
	ck_assert_uint_eq(fe.used[0]->idx, (uint16_t)(first + c->nbufs));
	if (hdr == HDR)
		want_hdr[10] = (uint8_t)c->nbufs; /* num_buffers, little endian */
	ck_assert_mem_eq(fe.mem + base, want_hdr, hdr);
	for (unsigned int i = 0; i < c->nbufs; i++) {
		uint32_t in_buf = RTE_MIN(left, c->buf_len), skip = i == 0 ? hdr : 0;

		ck_assert_uint_eq(fe.used[0]->ring[first + i].id, first + i);
		ck_assert_uint_eq(fe.used[0]->ring[first + i].len, in_buf);
		ck_assert_mem_eq(fe.mem + rx_buf_off(base, i) + skip,
				 rte_pktmbuf_mtod_offset(want, uint8_t *, copied), in_buf - skip);
		copied += in_buf - skip;
		left -= in_buf;
	}
	ck_assert_uint_eq(left, 0);
	rte_pktmbuf_free(want);
}

static void
rx_expect(uint16_t first, uint32_t base, const struct rx_case *c, uint32_t hdr, uint32_t seed)
{
	rx_post(first, base, c, 0, c->nbufs);
	rx_deliver_expect(first, base, c, hdr, seed);
}

/* Make receive buffer 0 at @base hold @hdr_bytes and used slot @slot {@id, @len}. */
static void
rx_preset(uint32_t base, const uint8_t *hdr_bytes, uint16_t slot, uint32_t id, uint32_t len)
{
	memcpy(fe.mem + base, hdr_bytes, HDR);
	fe.used[0]->ring[slot].id = id;
	fe.used[0]->ring[slot].len = len;
}

/*
 * Net headers and used entries are stored only where the guest's bytes differ
 * (a store would take the line from the guest's core): whatever a receive
 * buffer or a used slot held before, the guest reads exactly the right ones.
 */
START_TEST(rx_header_and_used_right_whatever_was_there)
{
	const struct rx_case small = {60, 1, 0x800, 1}, two = {2000, 1, 1024, 2};
	/* a header alone in the line before the frame, as in a DPDK guest's mbuf */
	const uint32_t alone = 64 - HDR;
	uint8_t garbage[HDR], right[HDR] = {[10] = 1}, tail_wrong[HDR] = {0};
	uint8_t two_bufs[HDR] = {[10] = 2}, high_byte[HDR] = {[10] = 1, [11] = 1};
	uint16_t slot = 0;

	memset(garbage, 0xa5, sizeof(garbage));
	memset(tail_wrong + 8, 0xa5, 4); /* csum_offset and num_buffers only */
	setup_rings();
	/* garbage in the header, the right entry already in the used slot */
	rx_preset(RAW_DATA_OFF + alone, garbage, slot, slot, HDR + 60);
	rx_expect(slot, RAW_DATA_OFF + alone, &small, HDR, 1);
	slot++;
	/* the right header already there, garbage in both fields of the used slot */
	rx_preset(RAW_DATA_OFF + alone, right, slot, 0xffff, UINT32_MAX);
	rx_expect(slot, RAW_DATA_OFF + alone, &small, HDR, 2);
	slot++;
	/* only the header's last bytes wrong; the used slot's id wrong above 16 bits */
	rx_preset(RAW_DATA_OFF + alone, tail_wrong, slot, 0x10000u | slot, HDR + 60);
	rx_expect(slot, RAW_DATA_OFF + alone, &small, HDR, 3);
	slot++;
	/* only num_buffers wrong: 2, then 257 (its high byte), for one buffer */
	rx_preset(RAW_DATA_OFF + alone, two_bufs, slot, slot, 0);
	rx_expect(slot, RAW_DATA_OFF + alone, &small, HDR, 4);
	slot++;
	rx_preset(RAW_DATA_OFF + alone, high_byte, slot, slot, 0);
	rx_expect(slot, RAW_DATA_OFF + alone, &small, HDR, 5);
	slot++;
	/* a header that says one buffer, for a frame that takes two */
	rx_preset(RAW_DATA_OFF, right, slot, slot, HDR + 2000);
	rx_expect(slot, RAW_DATA_OFF, &two, HDR, 6);
	ck_assert_uint_eq(stats(HV_VHOST_TX).packets, 6);
}
END_TEST

/*
 * A frame that runs out of buffers half way leaves a header, data and a used
 * entry in the guest's ring, unpublished; the next frame into those buffers
 * must not take any of it for already there.
 */
START_TEST(rx_after_frame_out_of_buffers)
{
	const struct rx_case two = {2000, 1, 1024, 2};
	uint8_t garbage[HDR];
	struct rte_mbuf *m = peer_frame(peer_guest_pool(), 2500, 7, 1);

	memset(garbage, 0xa5, sizeof(garbage));
	setup_rings();
	rx_preset(RAW_DATA_OFF, garbage, 0, 0xffff, UINT32_MAX);
	rx_post(0, RAW_DATA_OFF, &two, 0, 1);
	ck_assert_uint_eq(hv_vhost_tx_burst(bad, 0, &m, 1), 0);
	ck_assert_uint_eq(stats(HV_VHOST_TX).drops[HV_VHOST_DROP_NO_BUFFER], 1);
	ck_assert_uint_eq(fe.used[0]->idx, 0);
	rx_post(0, RAW_DATA_OFF, &two, 1, 2);
	rx_deliver_expect(0, RAW_DATA_OFF, &two, HDR, 8);
	ck_assert_uint_eq(stats(HV_VHOST_TX).packets, 1);
}
END_TEST

/* Without VERSION_1 and mergeable buffers the header is 10 bytes, no num_buffers. */
START_TEST(rx_header_of_10_bytes)
{
	const struct rx_case small = {60, 1, 0x800, 1};
	const uint32_t base = RAW_DATA_OFF + 64 - 10;

	ck_assert_int_eq(raw_fe_setup(&fe, HV_VHOST_F_INDIRECT_DESC), 0);
	ck_assert(hv_vhost_queue_ready(bad, 0));
	memset(fe.mem + base, 0xa5, 16);
	rx_expect(0, base, &small, 10, 1);
	/* the same header again: left as it is, still right */
	rx_expect(1, base, &small, 10, 2);
}
END_TEST

/*
 * VERSION_1 without mergeable buffers: the header is 12 bytes all the same,
 * and num_buffers in it must say 1 (virtio 1.2, "Device Operation"), however
 * the frame's one buffer is filled.
 */
START_TEST(rx_header_of_12_bytes_without_mrg)
{
	const struct rx_case small = {60, 1, 0x800, 1};
	const uint32_t base = RAW_DATA_OFF + 64 - HDR;

	ck_assert_int_eq(raw_fe_setup(&fe, HV_VHOST_F_VERSION_1 | HV_VHOST_F_INDIRECT_DESC), 0);
	ck_assert(hv_vhost_queue_ready(bad, 0));
	memset(fe.mem + base, 0xa5, 0x800);
	/* header bytes 10-11 are 1, 0; the frame exact behind them */
	rx_expect(0, base, &small, HDR, 1);
	ck_assert_uint_eq(fe.mem[base + 10], 1);
	ck_assert_uint_eq(fe.mem[base + 11], 0);
	ck_assert_uint_eq(fe.mem[base + HDR + 60], 0xa5);
	/* the same header again: left as it is, still right */
	rx_expect(1, base, &small, HDR, 2);
	ck_assert_uint_eq(fe.mem[base + 10], 1);
	ck_assert_uint_eq(stats(HV_VHOST_TX).packets, 2);
}
END_TEST

/*
 * Long copies into the guest go in chunks that claim the lines ahead:
 * lengths around the chunk and look-ahead sizes, in one piece, across
 * buffers and from several mbufs, arrive byte for byte.
 */
START_TEST(rx_long_copies_byte_exact)
{
	static const struct rx_case cases[] = {
		{2047, 1, 0x4000, 1}, {2048, 1, 0x4000, 1},
		{2049, 1, 0x4000, 1}, {3071, 1, 0x4000, 1},
		{3072, 1, 0x4000, 1}, {3073, 1, 0x4000, 1},
		{4097, 1, 0x4000, 1}, {10240, 1, 0x4000, 1},
		{10240, 1, 3000, 4},  /* pieces of 2988, 3000, 3000, 1252 */
		{9000, 2, 0x4000, 1}, /* 4500 from each mbuf, the second at offset 4512 */
	};
	uint16_t first = 0;

	setup_rings();
	for (unsigned int i = 0; i < RTE_DIM(cases); i++) {
		memset(fe.mem + RAW_DATA_OFF, 0x5a, cases[i].nbufs * RX_BUF_STRIDE);
		rx_expect(first, RAW_DATA_OFF, &cases[i], HDR, 10 + i);
		first = (uint16_t)(first + cases[i].nbufs);
	}
}
END_TEST

/*
 * Short frames are copied at the end of their burst, up to a batch's worth
 * (COPY_BATCH_SIZE, 64), before the used index is published: one burst of
 * 160 frames, short ones around the batching limit (256 B) mixed with long
 * and two-mbuf ones (101 of them batchable), each in its own buffer.
 */
enum {
	SHORT_N = 160,
	SHORT_BUF = 0x1000
};
/* 7 in 10 short: more than a batch holds */
static const uint32_t short_lens[] = {60, 64, 255, 256, 257, 61, 200, 1000, 128, 2100};
static unsigned int short_published_bad; /* frames published before their bytes were there */

static uint32_t
short_len(unsigned int i)
{
	return short_lens[i % RTE_DIM(short_lens)];
}

/* Whether frame @i is in its buffer: header, every byte, nothing past it. */
static bool
short_frame_there(unsigned int i)
{
	uint8_t want_hdr[HDR] = {0};
	uint32_t len = short_len(i);
	struct rte_mbuf *want = peer_frame(peer_guest_pool(), len, 100 + i, 1);
	const uint8_t *buf = fe.mem + RAW_DATA_OFF + i * SHORT_BUF;
	bool ok;

	want_hdr[10] = 1; /* num_buffers */
	ok = want != NULL && fe.used[0]->ring[i].id == i && fe.used[0]->ring[i].len == HDR + len &&
	     memcmp(buf, want_hdr, HDR) == 0 &&
	     memcmp(buf + HDR, rte_pktmbuf_mtod(want, uint8_t *), len) == 0 &&
	     buf[HDR + len] == 0x5a;
	rte_pktmbuf_free(want);
	return ok;
}

/* Right after the used index is published: every frame it covers must be there. */
static void
short_on_publish(void *ctx, struct hv_vhost_port *port, uint16_t qp, enum hv_vhost_dir dir,
		 const struct hv_vhost_irq_event *ev)
{
	RTE_SET_USED(ctx);
	RTE_SET_USED(port);
	RTE_SET_USED(ev);
	if (qp != 0 || dir != HV_VHOST_TX)
		return;
	for (unsigned int i = 0; i < fe.used[0]->idx; i++)
		short_published_bad += !short_frame_there(i);
}

/* Post @nbufs buffers, send SHORT_N frames in one burst: the first @nbufs arrive. */
static void
short_burst(unsigned int nbufs)
{
	struct rte_mbuf *m[SHORT_N];
	unsigned int got = RTE_MIN(nbufs, (unsigned int)SHORT_N);

	setup_rings();
	memset(fe.mem + RAW_DATA_OFF, 0x5a, SHORT_N * SHORT_BUF);
	for (unsigned int i = 0; i < SHORT_N; i++) {
		uint64_t addr = raw_gpa(RAW_DATA_OFF + i * SHORT_BUF);
		uint32_t len = SHORT_BUF;
		uint16_t flags = VRING_DESC_F_WRITE;

		if (i < nbufs)
			raw_fe_post(&fe, 0, (uint16_t)i, 1, &addr, &len, &flags);
		m[i] = peer_frame(peer_guest_pool(), short_len(i), 100 + i, i % 11 == 10 ? 2 : 1);
		ck_assert_ptr_nonnull(m[i]);
	}
	short_published_bad = 0;
	hv_vhost_set_irq_hook(bad, short_on_publish, NULL);
	ck_assert_uint_eq(hv_vhost_tx_burst(bad, 0, m, SHORT_N), got);
	hv_vhost_set_irq_hook(bad, NULL, NULL);
	ck_assert_uint_eq(fe.used[0]->idx, got);
	ck_assert_uint_eq(short_published_bad, 0);
	for (unsigned int i = 0; i < got; i++)
		ck_assert_msg(short_frame_there(i), "frame %u", i);
	ck_assert_uint_eq(stats(HV_VHOST_TX).drops[HV_VHOST_DROP_NO_BUFFER], SHORT_N - got);
}

START_TEST(rx_burst_of_short_copies_byte_exact)
{
	short_burst(SHORT_N);
}
END_TEST

/* The burst runs out of buffers after 100 frames: those 100 are all there. */
START_TEST(rx_short_copies_then_out_of_buffers)
{
	short_burst(100);
}
END_TEST

/* A first buffer that holds only the header: the frame goes (batched) to the next. */
START_TEST(rx_short_frame_after_header_only_buffer)
{
	uint64_t addr[2] = {raw_gpa(RAW_DATA_OFF), raw_gpa(RAW_DATA_OFF + 0x1000)};
	uint32_t len[2] = {HDR, 0x800};
	uint16_t flags[2] = {VRING_DESC_F_WRITE, VRING_DESC_F_WRITE};
	uint8_t want_hdr[HDR] = {0};
	struct rte_mbuf *m = peer_frame(peer_guest_pool(), 100, 7, 1);
	struct rte_mbuf *want = peer_frame(peer_guest_pool(), 100, 7, 1);

	setup_rings();
	ck_assert_ptr_nonnull(m);
	ck_assert_ptr_nonnull(want);
	memset(fe.mem + RAW_DATA_OFF, 0x5a, 0x2000);
	raw_fe_post(&fe, 0, 0, 1, &addr[0], &len[0], &flags[0]);
	raw_fe_post(&fe, 0, 1, 1, &addr[1], &len[1], &flags[1]);
	ck_assert_uint_eq(hv_vhost_tx_burst(bad, 0, &m, 1), 1);
	ck_assert_uint_eq(fe.used[0]->idx, 2);
	want_hdr[10] = 2; /* num_buffers */
	ck_assert_mem_eq(fe.mem + RAW_DATA_OFF, want_hdr, HDR);
	ck_assert_uint_eq(fe.used[0]->ring[0].len, HDR);
	ck_assert_uint_eq(fe.used[0]->ring[1].id, 1);
	ck_assert_uint_eq(fe.used[0]->ring[1].len, 100);
	ck_assert_mem_eq(fe.mem + RAW_DATA_OFF + 0x1000, rte_pktmbuf_mtod(want, uint8_t *), 100);
	ck_assert_uint_eq(fe.mem[RAW_DATA_OFF + 0x1000 + 100], 0x5a);
	rte_pktmbuf_free(want);
}
END_TEST

/*
 * ---- mbufs handed to the guest go back where they belong ----
 * A burst of plain mbufs of one pool goes back to it in one piece; anything
 * else (another pool, a chain, a second reference, a clone, an external
 * buffer) is freed the long way, its owners told.
 */

/* Post @n receive buffers and hand the guest @pkts in one burst: all of it taken. */
static void
rx_send_all(struct rte_mbuf **pkts, uint16_t n)
{
	const struct rx_case each = {0, 1, 0x800, n};

	rx_post(0, RAW_DATA_OFF, &each, 0, n);
	ck_assert_uint_eq(hv_vhost_tx_burst(bad, 0, pkts, n), n);
	ck_assert_uint_eq(fe.used[0]->idx, n);
}

/* Whether receive buffer @i holds the frame peer_frame(@len, @seed), after its header. */
static bool
rx_buf_holds(unsigned int i, uint32_t len, uint32_t seed)
{
	struct rte_mbuf *want = peer_frame(peer_guest_pool(), len, seed, 1);
	bool ok = want != NULL && fe.used[0]->ring[i].len == HDR + len &&
		  memcmp(fe.mem + rx_buf_off(RAW_DATA_OFF, i) + HDR,
			 rte_pktmbuf_mtod(want, uint8_t *), len) == 0;

	rte_pktmbuf_free(want);
	return ok;
}

/* One burst of mbufs from two pools: each goes back to its own. */
START_TEST(rx_sent_mbufs_back_to_their_pools)
{
	struct rte_mempool *mp[2] = {peer_guest_pool(), peer_switch_pool()};
	unsigned int in_use[2];
	struct rte_mbuf *m[4];

	setup_rings();
	for (unsigned int p = 0; p < 2; p++)
		in_use[p] = rte_mempool_in_use_count(mp[p]);
	for (unsigned int i = 0; i < 4; i++) {
		m[i] = peer_frame(mp[i % 2], 100, 20 + i, 1);
		ck_assert_ptr_nonnull(m[i]);
	}
	rx_send_all(m, 4);
	for (unsigned int p = 0; p < 2; p++)
		ck_assert_msg(rte_mempool_in_use_count(mp[p]) == in_use[p],
			      "pool %s: %u in use, %u before", mp[p]->name,
			      rte_mempool_in_use_count(mp[p]), in_use[p]);
	for (unsigned int i = 0; i < 4; i++)
		ck_assert_msg(rx_buf_holds(i, 100, 20 + i), "frame %u", i);
}
END_TEST

/* An mbuf someone else still holds: delivering it drops one reference, no more. */
START_TEST(rx_sent_mbuf_still_held_kept)
{
	struct rte_mempool *mp = peer_switch_pool();
	unsigned int in_use = rte_mempool_in_use_count(mp);
	struct rte_mbuf *m[3], *held;

	setup_rings();
	for (unsigned int i = 0; i < 3; i++) {
		m[i] = peer_frame(mp, 100, 30 + i, 1);
		ck_assert_ptr_nonnull(m[i]);
	}
	held = m[1];
	rte_mbuf_refcnt_update(held, 1);
	rx_send_all(m, 3);
	ck_assert_uint_eq(rte_mbuf_refcnt_read(held), 1);
	ck_assert(peer_frame_check(held, 100, 31));
	ck_assert_uint_eq(rte_mempool_in_use_count(mp), in_use + 1);
	for (unsigned int i = 0; i < 3; i++)
		ck_assert_msg(rx_buf_holds(i, 100, 30 + i), "frame %u", i);
	rte_pktmbuf_free(held);
	ck_assert_uint_eq(rte_mempool_in_use_count(mp), in_use);
}
END_TEST

static unsigned int ext_freed; /* calls of ext_free() */

static void
ext_free(void *addr, void *opaque)
{
	RTE_SET_USED(addr);
	RTE_SET_USED(opaque);
	ext_freed++;
}

/* An mbuf of @mp on the external buffer @buf, holding the bytes of @like. */
static struct rte_mbuf *
ext_mbuf(struct rte_mempool *mp, uint8_t *buf, uint16_t len, const struct rte_mbuf *like)
{
	struct rte_mbuf_ext_shared_info *shinfo;
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp);

	shinfo = rte_pktmbuf_ext_shinfo_init_helper(buf, &len, ext_free, NULL);
	ck_assert(m != NULL && shinfo != NULL);
	rte_pktmbuf_attach_extbuf(m, buf, RTE_BAD_IOVA, len, shinfo);
	ck_assert_uint_le(like->data_len, len);
	memcpy(rte_pktmbuf_append(m, like->data_len), rte_pktmbuf_mtod(like, void *),
	       like->data_len);
	return m;
}

/*
 * A clone, after a plain mbuf in its burst: freed, it gives the reference it
 * holds back to the original. (Alone in its burst: one odd mbuf sends all of
 * a burst the long way.)
 */
START_TEST(rx_sent_clone_detached)
{
	struct rte_mempool *mp = peer_switch_pool();
	unsigned int in_use = rte_mempool_in_use_count(mp);
	struct rte_mbuf *orig, *m[2];

	setup_rings();
	m[0] = peer_frame(mp, 100, 40, 1);
	orig = peer_frame(mp, 100, 41, 1);
	ck_assert(m[0] != NULL && orig != NULL);
	m[1] = rte_pktmbuf_clone(orig, mp);
	ck_assert_ptr_nonnull(m[1]);
	ck_assert_uint_eq(rte_mbuf_refcnt_read(orig), 2);
	rx_send_all(m, 2);
	ck_assert_uint_eq(rte_mbuf_refcnt_read(orig), 1);
	ck_assert(peer_frame_check(orig, 100, 41));
	ck_assert(rx_buf_holds(0, 100, 40));
	ck_assert(rx_buf_holds(1, 100, 41));
	rte_pktmbuf_free(orig);
	ck_assert_uint_eq(rte_mempool_in_use_count(mp), in_use);
}
END_TEST

/* An mbuf on an external buffer, after a plain one: freed, the buffer's owner is told once. */
START_TEST(rx_sent_extbuf_detached)
{
	static uint8_t ext[512];
	struct rte_mempool *mp = peer_switch_pool();
	unsigned int in_use = rte_mempool_in_use_count(mp);
	struct rte_mbuf *like, *m[2];

	setup_rings();
	m[0] = peer_frame(mp, 100, 50, 1);
	like = peer_frame(mp, 100, 51, 1);
	ck_assert(m[0] != NULL && like != NULL);
	ext_freed = 0;
	m[1] = ext_mbuf(mp, ext, sizeof(ext), like);
	rte_pktmbuf_free(like);
	rx_send_all(m, 2);
	ck_assert_uint_eq(ext_freed, 1);
	ck_assert(rx_buf_holds(0, 100, 50));
	ck_assert(rx_buf_holds(1, 100, 51));
	ck_assert_uint_eq(rte_mempool_in_use_count(mp), in_use);
}
END_TEST

static void *
suite(void)
{
	Suite *s = suite_create("rx-ring");
	TCase *ring = tcase_create("receive-ring");

	tcase_add_checked_fixture(ring, setup, teardown);
	tcase_set_timeout(ring, 60);
	tcase_add_test(ring, rx_header_and_used_right_whatever_was_there);
	tcase_add_test(ring, rx_header_of_10_bytes);
	tcase_add_test(ring, rx_header_of_12_bytes_without_mrg);
	tcase_add_test(ring, rx_after_frame_out_of_buffers);
	tcase_add_test(ring, rx_long_copies_byte_exact);
	tcase_add_test(ring, rx_burst_of_short_copies_byte_exact);
	tcase_add_test(ring, rx_short_copies_then_out_of_buffers);
	tcase_add_test(ring, rx_short_frame_after_header_only_buffer);
	tcase_add_test(ring, rx_sent_mbufs_back_to_their_pools);
	tcase_add_test(ring, rx_sent_mbuf_still_held_kept);
	tcase_add_test(ring, rx_sent_clone_detached);
	tcase_add_test(ring, rx_sent_extbuf_detached);
	suite_add_tcase(s, ring);
	return s;
}

int
main(int argc, char **argv)
{
	return peer_run_suite(suite, argc, argv);
}
