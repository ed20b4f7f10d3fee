/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/offload's validation: one negative test per rule a sender's header
 * must pass, each refused by hv_offload_check() and by hv_offload_prepare()
 * for the same reason, counted once.
 */
#include <check.h>
#include <string.h>

#include "offload_frames.h"

static enum hv_offload_drop
check_bytes(const uint8_t *b, uint32_t len, const struct hv_offload_hdr *h)
{
	struct rte_mbuf *m = to_mbuf(b, len, 2048, h);
	struct rte_mbuf *out[HV_OFFLOAD_MAX_SEGS];
	struct hv_offload_stats st = {0};
	enum hv_offload_drop rc = hv_offload_check(m, h, NULL);

	/* prepare refuses it for the same reason, to any destination */
	rte_pktmbuf_refcnt_update(m, 1);
	ck_assert_uint_eq(hv_offload_prepare(m, 0, test_mp, out, &st), 0);
	if (rc != HV_OFFLOAD_DROP__NONE)
		ck_assert_uint_eq(st.drops[rc], 1);
	rte_pktmbuf_free(m);
	return rc;
}

static struct frame neg;

static void
neg_setup(bool v6)
{
	struct frame_spec s = {.v6 = v6, .payload = 3000, .tcp_flags = 0x10};

	craft(&neg, &s);
}

START_TEST(neg_flags)
{
	struct hv_offload_hdr h;

	neg_setup(false);
	h = tso_hdr(&neg, 1448, false);
	h.flags |= 2; /* DATA_VALID means nothing from a sender */
	ck_assert_uint_eq(check_bytes(neg.b, neg.len, &h), HV_OFFLOAD_DROP_BAD_FLAGS);
}
END_TEST

START_TEST(neg_gso_type)
{
	struct hv_offload_hdr h;

	neg_setup(false);
	h = tso_hdr(&neg, 1448, false);
	h.gso_type = 3; /* UDP fragmentation offload */
	ck_assert_uint_eq(check_bytes(neg.b, neg.len, &h), HV_OFFLOAD_DROP_BAD_GSO_TYPE);
	h.gso_type = VIRTIO_NET_HDR_GSO_ECN; /* ECN without GSO */
	ck_assert_uint_eq(check_bytes(neg.b, neg.len, &h), HV_OFFLOAD_DROP_BAD_GSO_TYPE);
}
END_TEST

START_TEST(neg_csum_range)
{
	struct hv_offload_hdr h;

	neg_setup(false);
	h = tso_hdr(&neg, 1448, false);
	h.gso_type = 0;
	h.csum_start = (uint16_t)(neg.len - 1); /* the field would end past the frame */
	h.csum_offset = 0;
	ck_assert_uint_eq(check_bytes(neg.b, neg.len, &h), HV_OFFLOAD_DROP_CSUM_RANGE);
	h.csum_start = 34;
	h.csum_offset = 0xffff; /* CVE-2024-11614's kind: far beyond */
	ck_assert_uint_eq(check_bytes(neg.b, neg.len, &h), HV_OFFLOAD_DROP_CSUM_RANGE);
	h.csum_start = 4; /* inside the Ethernet header */
	h.csum_offset = 16;
	ck_assert_uint_eq(check_bytes(neg.b, neg.len, &h), HV_OFFLOAD_DROP_CSUM_RANGE);
	/* exactly at the end is fine */
	h.csum_start = (uint16_t)(neg.len - 2);
	h.csum_offset = 0;
	ck_assert_uint_eq(check_only(neg.b, neg.len, &h), 0);
}
END_TEST

START_TEST(neg_gso_no_csum)
{
	struct hv_offload_hdr h;

	neg_setup(false);
	h = tso_hdr(&neg, 1448, false);
	h.flags = 0;
	ck_assert_uint_eq(check_bytes(neg.b, neg.len, &h), HV_OFFLOAD_DROP_GSO_NO_CSUM);
}
END_TEST

START_TEST(neg_gso_size)
{
	struct hv_offload_hdr h;

	neg_setup(false);
	h = tso_hdr(&neg, HV_OFFLOAD_GSO_SIZE_MIN - 1, false);
	ck_assert_uint_eq(check_bytes(neg.b, neg.len, &h), HV_OFFLOAD_DROP_GSO_SIZE);
	h.gso_size = 0;
	ck_assert_uint_eq(check_bytes(neg.b, neg.len, &h), HV_OFFLOAD_DROP_GSO_SIZE);
	h.gso_size = HV_OFFLOAD_GSO_SIZE_MIN;
	ck_assert_uint_eq(check_only(neg.b, neg.len, &h), 0);
}
END_TEST

START_TEST(neg_l3)
{
	struct hv_offload_hdr h;
	uint8_t *ip;

	/* gso_type says IPv4, the frame is IPv6 */
	neg_setup(true);
	h = tso_hdr(&neg, 1448, false);
	h.gso_type = VIRTIO_NET_HDR_GSO_TCPV4;
	ck_assert_uint_eq(check_bytes(neg.b, neg.len, &h), HV_OFFLOAD_DROP_BAD_L3);
	/* IPv6 with an extension header (hop-by-hop) in front of TCP */
	h = tso_hdr(&neg, 1448, false);
	neg.b[14 + 6] = 0;
	ck_assert_uint_eq(check_bytes(neg.b, neg.len, &h), HV_OFFLOAD_DROP_BAD_L3);
	/* IPv6 payload length that lies */
	neg_setup(true);
	neg.b[14 + 5] ^= 1;
	ck_assert_uint_eq(check_bytes(neg.b, neg.len, &h), HV_OFFLOAD_DROP_BAD_L3);

	neg_setup(false);
	h = tso_hdr(&neg, 1448, false);
	ip = neg.b + 14;
	ip[0] = 0x44; /* IHL 4 */
	ck_assert_uint_eq(check_bytes(neg.b, neg.len, &h), HV_OFFLOAD_DROP_BAD_L3);
	ip[0] = 0x45;
	ip[6] = 0x20; /* more fragments */
	ck_assert_uint_eq(check_bytes(neg.b, neg.len, &h), HV_OFFLOAD_DROP_BAD_L3);
	ip[6] = 0x40;
	ip[3] ^= 1; /* total length that lies */
	ck_assert_uint_eq(check_bytes(neg.b, neg.len, &h), HV_OFFLOAD_DROP_BAD_L3);
	ip[3] ^= 1;
	/* gso_type TCPv6, frame IPv4 */
	h.gso_type = VIRTIO_NET_HDR_GSO_TCPV6;
	ck_assert_uint_eq(check_bytes(neg.b, neg.len, &h), HV_OFFLOAD_DROP_BAD_L3);
	/* a frame that ends inside the IP header */
	h = tso_hdr(&neg, 1448, false);
	h.csum_start = 14;
	h.csum_offset = 0;
	ck_assert_uint_eq(check_bytes(neg.b, 30, &h), HV_OFFLOAD_DROP_BAD_L3);
}
END_TEST

START_TEST(neg_l4)
{
	struct hv_offload_hdr h;

	neg_setup(false);
	h = tso_hdr(&neg, 1448, false);
	neg.b[14 + 9] = 17; /* UDP */
	ck_assert_uint_eq(check_bytes(neg.b, neg.len, &h), HV_OFFLOAD_DROP_BAD_L4);
	neg_setup(false);
	neg.b[34 + 12] = 4 << 4; /* data offset 4 words */
	ck_assert_uint_eq(check_bytes(neg.b, neg.len, &h), HV_OFFLOAD_DROP_BAD_L4);
	neg_setup(false);
	/* a TCP header cut short by the end of the frame (lengths agreeing) */
	neg.b[34 + 12] = 15 << 4;
	neg.b[14 + 2] = 0;
	neg.b[14 + 3] = 20 + 40;
	ck_assert_uint_eq(check_bytes(neg.b, 14 + 60, &h), HV_OFFLOAD_DROP_BAD_L4);
}
END_TEST

START_TEST(neg_csum_not_tcp)
{
	struct hv_offload_hdr h;

	neg_setup(false);
	h = tso_hdr(&neg, 1448, false);
	h.csum_start += 2;
	ck_assert_uint_eq(check_bytes(neg.b, neg.len, &h), HV_OFFLOAD_DROP_CSUM_NOT_TCP);
	h = tso_hdr(&neg, 1448, false);
	h.csum_offset = 6; /* UDP's place */
	ck_assert_uint_eq(check_bytes(neg.b, neg.len, &h), HV_OFFLOAD_DROP_CSUM_NOT_TCP);
}
END_TEST

START_TEST(neg_no_mbuf)
{
	struct rte_mempool *tiny =
		rte_pktmbuf_pool_create("tiny", 8, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	struct rte_mbuf *out[HV_OFFLOAD_MAX_SEGS];
	struct hv_offload_stats st = {0};
	struct hv_offload_hdr h;

	ck_assert_ptr_nonnull(tiny);
	neg_setup(false);
	neg.len = 14 + 20 + 20 + 30000;
	{
		struct frame_spec s = {.payload = 30000, .tcp_flags = 0x10};

		craft(&neg, &s);
	}
	h = tso_hdr(&neg, 1448, false);
	ck_assert_uint_eq(hv_offload_prepare(to_mbuf(neg.b, neg.len, 2048, &h), 0, tiny, out, &st),
			  0);
	ck_assert_uint_eq(st.drops[HV_OFFLOAD_DROP_NO_MBUF], 1);
	ck_assert_uint_eq(rte_mempool_in_use_count(tiny), 0);
	rte_mempool_free(tiny);
	ck_assert_uint_eq(rte_mempool_in_use_count(test_mp), 0);
}
END_TEST

START_TEST(hdr_len_is_a_hint)
{
	static struct frame f;
	struct frame_spec s = {.tcp_opts = 12, .payload = 4000, .tcp_flags = 0x10};
	struct rte_mbuf *out[HV_OFFLOAD_MAX_SEGS];
	struct hv_offload_stats st = {0};
	struct hv_offload_hdr h;
	uint16_t n;

	craft(&f, &s);
	h = tso_hdr(&f, 1000, false);
	h.hdr_len = 0xffff; /* nonsense either way: not used */
	n = hv_offload_prepare(to_mbuf(f.b, f.len, 2048, &h), 0, test_mp, out, &st);
	ck_assert_uint_eq(n, 4);
	for (uint16_t k = 0; k < n; k++) {
		ck_assert_uint_eq(out[k]->pkt_len, 14 + 20 + 32 + 1000u);
		rte_pktmbuf_free(out[k]);
	}
	ck_assert_str_eq(hv_offload_drop_name(HV_OFFLOAD_DROP_GSO_SIZE), "gso_size");
}
END_TEST

TCase *
offload_validation_tcase(void)
{
	TCase *tc = tcase_create("validation");

	tcase_add_test(tc, neg_flags);
	tcase_add_test(tc, neg_gso_type);
	tcase_add_test(tc, neg_csum_range);
	tcase_add_test(tc, neg_gso_no_csum);
	tcase_add_test(tc, neg_gso_size);
	tcase_add_test(tc, neg_l3);
	tcase_add_test(tc, neg_l4);
	tcase_add_test(tc, neg_csum_not_tcp);
	tcase_add_test(tc, neg_no_mbuf);
	tcase_add_test(tc, hdr_len_is_a_hint);
	return tc;
}
