/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/offload on crafted frames. Results are checked twice, independently of
 * the library: by a byte-by-byte RFC 1071 checksum and field reads here, and
 * by scapy (offload_verify.py, run on a case file at the end).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "hv_offload.h"
#include "hv_test_csum.h"
#include "hv_test_mbuf.h"

static FILE *cases; /* for offload_verify.py */
static char cases_path[64];

#include "offload_frames.h"

static void
write_hex(const uint8_t *b, uint32_t len)
{
	for (uint32_t i = 0; i < len; i++)
		fprintf(cases, "%02x", b[i]);
}

static uint8_t linear[HV_OFFLOAD_MAX_SEGS][9216];
static uint8_t big[FRAME_MAX];

/* The first @len bytes of @m, contiguous in @b. */
static void
linearize(const struct rte_mbuf *m, uint32_t len, uint8_t *b)
{
	const void *p = rte_pktmbuf_read(m, 0, len, b);

	ck_assert_ptr_nonnull(p);
	if (p != b)
		memcpy(b, p, len);
}

/*
 * Segment @f at @mss for a destination with @caps; check every segment here
 * and record the case for scapy. @return the segment count.
 */
static uint16_t
run_segmentation(const char *name, const struct frame *f, uint16_t mss, bool ecn, uint32_t caps,
		 uint32_t piece)
{
	struct hv_offload_hdr h = tso_hdr(f, mss, ecn);
	struct rte_mbuf *out[HV_OFFLOAD_MAX_SEGS];
	struct hv_offload_stats st = {0};
	bool v6 = f->b[f->l2] >> 4 == 6, partial = caps & HV_OFFLOAD_CAP_CSUM;
	uint32_t payload = f->len - f->l2 - f->l3 - f->l4, got = 0;
	uint32_t seq0 = get32(f->b + f->l2 + f->l3 + 4);
	uint16_t n;

	struct rte_mbuf *in = to_mbuf(f->b, f->len, piece, &h);

	ck_assert_int_eq(hv_offload_check(in, &h, NULL), 0);
	n = hv_offload_prepare(in, caps, test_mp, out, &st);
	ck_assert_uint_eq(n, (payload + mss - 1) / mss);
	ck_assert_uint_eq(st.segmented, 1);
	ck_assert_uint_eq(st.segments, n);
	ck_assert_uint_eq(st.csum_finished, partial ? 0 : n);
	fprintf(cases, "case %s mss=%u mode=%s\nin ", name, mss, partial ? "partial" : "full");
	write_hex(f->b, f->len);
	fprintf(cases, "\n");
	for (uint16_t k = 0; k < n; k++) {
		struct rte_mbuf *m = out[k];
		uint8_t *b = linear[k];
		const uint8_t *ip = b + f->l2, *tcp = ip + f->l3;
		uint32_t plen = RTE_MIN((uint32_t)mss, payload - k * mss);
		uint32_t seg_len = f->l2 + f->l3 + f->l4 + plen;
		uint32_t sum;

		ck_assert_uint_eq(m->pkt_len, seg_len);
		linearize(m, seg_len, b);
		/* headers before the changed fields are the sender's */
		ck_assert_mem_eq(b, f->b, f->l2);
		if (!v6) {
			ck_assert_uint_eq(get16(ip + 2), f->l3 + f->l4 + plen);
			ck_assert_uint_eq(get16(ip + 4), (uint16_t)(0xfffe + k));
			ck_assert_uint_eq(hv_test_csum(0, ip, f->l3), 0xffff);
		} else {
			ck_assert_uint_eq(get16(ip + 4), f->l4 + plen);
		}
		ck_assert_uint_eq(get32(tcp + 4), seq0 + (uint32_t)k * mss);
		ck_assert_mem_eq(tcp + 20, f->b + f->l2 + f->l3 + 20, f->l4 - 20u);
		ck_assert_mem_eq(tcp + f->l4, f->b + f->l2 + f->l3 + f->l4 + got, plen);
		got += plen;
		/* the checksum field sum with the pseudo-header: 0xffff when complete */
		sum = hv_test_csum_pseudo(ip, v6, f->l4 + plen);
		if (partial) {
			const struct hv_offload_hdr *mh = hv_offload_mbuf_hdr(m);

			ck_assert(hv_offload_mbuf_has_hdr(m));
			ck_assert_uint_eq(mh->flags, VIRTIO_NET_HDR_F_NEEDS_CSUM);
			ck_assert_uint_eq(mh->gso_type, 0);
			ck_assert_uint_eq(mh->csum_start, f->l2 + f->l3);
			ck_assert_uint_eq(mh->csum_offset, 16);
			/* a partial checksum is the pseudo-header sum, not inverted */
			ck_assert_uint_eq(get16(tcp + 16), hv_test_csum_fold(sum));
		} else {
			ck_assert(!hv_offload_mbuf_has_hdr(m));
			ck_assert_uint_eq(hv_test_csum(sum, tcp, f->l4 + plen), 0xffff);
		}
		fprintf(cases, "out ");
		write_hex(b, seg_len);
		if (partial) {
			const struct hv_offload_hdr *mh = hv_offload_mbuf_hdr(m);

			fprintf(cases, " %u %u %u %u\n", mh->flags, mh->gso_type, mh->csum_start,
				mh->csum_offset);
		} else {
			fprintf(cases, " 0 0 0 0\n");
		}
		rte_pktmbuf_free(m);
	}
	ck_assert_uint_eq(got, payload);
	return n;
}

/* ---- segmentation, checked here and by scapy ---- */

START_TEST(seg_ipv4_options_odd_last)
{
	static struct frame f;
	struct frame_spec s = {.ip_opts = 4,
			       .tcp_opts = 12,
			       .payload = 65000 - 92,
			       .tcp_flags = 0x18 /* PSH ACK */};

	craft(&f, &s);
	/* 64908 bytes at 1448: 44 full segments and an odd-sized last one */
	ck_assert_uint_eq(run_segmentation("ipv4_opts_full", &f, 1448, false, 0, 2048), 45);
	ck_assert_uint_eq(
		run_segmentation("ipv4_opts_partial", &f, 1448, false, HV_OFFLOAD_CAP_CSUM, 2048),
		45);
}
END_TEST

START_TEST(seg_ipv6_fin_psh_cwr_ecn)
{
	static struct frame f;
	/* FIN PSH ACK CWR ECE, traffic class with ECT(0) */
	struct frame_spec s = {.v6 = true,
			       .tcp_opts = 12,
			       .payload = 30001,
			       .tcp_flags = 0x01 | 0x08 | 0x10 | 0x80 | 0x40,
			       .tos = 0x02};

	craft(&f, &s);
	ck_assert_uint_eq(run_segmentation("ipv6_flags_full", &f, 1440, true, 0, 2048), 21);
	ck_assert_uint_eq(
		run_segmentation("ipv6_flags_partial", &f, 1440, true, HV_OFFLOAD_CAP_CSUM, 2048),
		21);
}
END_TEST

START_TEST(seg_ipv4_vlan_odd_mss_odd_pieces)
{
	static struct frame f;
	struct frame_spec s = {
		.vlan = true, .payload = 9999, .tcp_flags = 0x19 | 0x80, .tos = 0x03 /* CE */};

	craft(&f, &s);
	/* an odd MSS and a source chain of odd-sized pieces: sums across odd boundaries */
	ck_assert_uint_eq(run_segmentation("ipv4_vlan_oddmss", &f, 1001, true, 0, 777), 10);
	ck_assert_uint_eq(run_segmentation("ipv4_vlan_oddmss_partial", &f, 1001, true,
					   HV_OFFLOAD_CAP_CSUM, 333),
			  10);
}
END_TEST

START_TEST(seg_large_mss_chains_output)
{
	static struct frame f;
	struct frame_spec s = {.v6 = true, .payload = 20000, .tcp_flags = 0x10};

	craft(&f, &s);
	/* segments longer than one mbuf come out as chains */
	ck_assert_uint_eq(run_segmentation("ipv6_mss9000", &f, 9000, false, 0, 2048), 3);
}
END_TEST

/* ---- pass-through and checksum finishing ---- */

START_TEST(whole_to_tso_guest)
{
	static struct frame f;
	struct frame_spec s = {.payload = 20000, .tcp_flags = 0x10};
	struct rte_mbuf *out[HV_OFFLOAD_MAX_SEGS], *m;
	struct hv_offload_stats st = {0};
	struct hv_offload_hdr h;
	uint8_t *b = big;

	craft(&f, &s);
	h = tso_hdr(&f, 1448, false);
	m = to_mbuf(f.b, f.len, 2048, &h);
	ck_assert_uint_eq(
		hv_offload_prepare(m, hv_offload_caps_from_virtio(0x183), test_mp, out, &st), 1);
	ck_assert_ptr_eq(out[0], m);
	ck_assert_uint_eq(st.passthrough, 1);
	ck_assert_uint_eq(st.segments + st.csum_finished, 0);
	ck_assert(hv_offload_mbuf_has_hdr(m));
	ck_assert_mem_eq(hv_offload_mbuf_hdr(m), &h, sizeof(h));
	linearize(m, f.len, b);
	ck_assert_mem_eq(b, f.b, f.len);
	fprintf(cases, "case whole_v4 mss=1448 mode=whole\nin ");
	write_hex(f.b, f.len);
	fprintf(cases, "\nout ");
	write_hex(b, f.len);
	fprintf(cases, " 1 1 34 16\n");
	rte_pktmbuf_free(m);
	/* TSO4 only: an IPv6 send to it is segmented */
	ck_assert_uint_eq(hv_offload_caps_from_virtio((1u << 1) | (1u << 7)),
			  HV_OFFLOAD_CAP_CSUM | HV_OFFLOAD_CAP_TSO4);
	/* GUEST_TSO without GUEST_CSUM is no capability at all */
	ck_assert_uint_eq(hv_offload_caps_from_virtio(1u << 7), 0);
}
END_TEST

START_TEST(finish_single_frame)
{
	static struct frame f;
	struct frame_spec s = {.v6 = true, .tcp_opts = 12, .payload = 777, .tcp_flags = 0x18};
	struct rte_mbuf *out[HV_OFFLOAD_MAX_SEGS], *m;
	struct hv_offload_stats st = {0};
	struct hv_offload_hdr h;
	uint8_t *b = big;
	const uint8_t *tcp;

	craft(&f, &s);
	h = tso_hdr(&f, 0, false);
	h.gso_type = 0;
	/* to a guest with GUEST_CSUM: as it is */
	m = to_mbuf(f.b, f.len, 300, &h);
	ck_assert_uint_eq(hv_offload_prepare(m, HV_OFFLOAD_CAP_CSUM, test_mp, out, &st), 1);
	ck_assert_ptr_eq(out[0], m);
	ck_assert_uint_eq(st.passthrough, 1);
	rte_pktmbuf_free(m);
	/* to one without: finished in software (in a chain of odd pieces) */
	m = to_mbuf(f.b, f.len, 301, &h);
	ck_assert_uint_eq(hv_offload_prepare(m, 0, test_mp, out, &st), 1);
	ck_assert_uint_eq(st.csum_finished, 1);
	ck_assert(!hv_offload_mbuf_has_hdr(out[0]));
	linearize(out[0], f.len, b);
	tcp = b + f.l2 + f.l3;
	ck_assert_uint_eq(hv_test_csum(hv_test_csum_pseudo(b + f.l2, true, f.len - f.l2 - f.l3),
				       tcp, f.len - f.l2 - f.l3),
			  0xffff);
	fprintf(cases, "case finish_v6 mss=1 mode=finish\nin ");
	write_hex(f.b, f.len);
	fprintf(cases, "\nout ");
	write_hex(b, f.len);
	fprintf(cases, " 0 0 0 0\n");
	rte_pktmbuf_free(out[0]);
}
END_TEST

START_TEST(shared_frame_left_alone)
{
	static struct frame f;
	struct frame_spec s = {.payload = 5000, .tcp_flags = 0x10};
	struct rte_mbuf *out[HV_OFFLOAD_MAX_SEGS], *m;
	struct hv_offload_stats st = {0};
	struct hv_offload_hdr h;
	uint8_t *b = big;
	uint16_t n;

	craft(&f, &s);
	/* a flooded frame: the other destination holds a reference */
	h = tso_hdr(&f, 1448, false);
	h.gso_type = 0;
	m = to_mbuf(f.b, f.len, 2048, &h);
	rte_pktmbuf_refcnt_update(m, 1);
	ck_assert_uint_eq(hv_offload_prepare(m, 0, test_mp, out, &st), 1);
	ck_assert_ptr_ne(out[0], m);
	linearize(m, f.len, b);
	ck_assert_mem_eq(b, f.b, f.len);
	ck_assert(hv_offload_mbuf_has_hdr(m));
	rte_pktmbuf_free(out[0]);
	/* and segmentation does not touch it either */
	h = tso_hdr(&f, 1448, false);
	*hv_offload_mbuf_hdr(m) = h;
	rte_pktmbuf_refcnt_update(m, 1);
	n = hv_offload_prepare(m, 0, test_mp, out, &st);
	ck_assert_uint_eq(n, 4);
	linearize(m, f.len, b);
	ck_assert_mem_eq(b, f.b, f.len);
	for (uint16_t k = 0; k < n; k++)
		rte_pktmbuf_free(out[k]);
	rte_pktmbuf_free(m);
	ck_assert_uint_eq(rte_mempool_in_use_count(test_mp), 0);
}
END_TEST

START_TEST(nic_offloads)
{
	static struct frame f;
	struct frame_spec s = {.payload = 5000, .tcp_flags = 0x10};
	uint64_t capa = RTE_ETH_TX_OFFLOAD_MULTI_SEGS | RTE_ETH_TX_OFFLOAD_IPV4_CKSUM |
			RTE_ETH_TX_OFFLOAD_TCP_CKSUM | RTE_ETH_TX_OFFLOAD_UDP_CKSUM |
			RTE_ETH_TX_OFFLOAD_TCP_TSO;
	struct rte_mbuf *out[HV_OFFLOAD_MAX_SEGS], *m;
	struct hv_offload_stats st = {0};
	struct hv_offload_hdr h;
	uint8_t *b = big;

	craft(&f, &s);
	h = tso_hdr(&f, 1448, false);
	m = to_mbuf(f.b, f.len, 2048, &h);
	ck_assert_uint_eq(
		hv_offload_prepare(m, hv_offload_caps_from_ethdev(capa), test_mp, out, &st), 1);
	ck_assert_uint_eq(st.hw_offload, 1);
	ck_assert(out[0]->ol_flags & RTE_MBUF_F_TX_TCP_SEG);
	ck_assert(out[0]->ol_flags & RTE_MBUF_F_TX_IPV4);
	ck_assert_uint_eq(out[0]->tso_segsz, 1448);
	ck_assert_uint_eq(out[0]->l2_len + out[0]->l3_len + out[0]->l4_len, 54);
	ck_assert(!hv_offload_mbuf_has_hdr(out[0]));
	/* DPDK's TSO convention: the pseudo-header sum without the length */
	linearize(out[0], 60, b);
	ck_assert_uint_eq(get16(b + 34 + 16), hv_test_csum(6, b + 26, 8));
	rte_pktmbuf_free(out[0]);
	/* without TSO but with checksums: segments for the NIC to finish */
	m = to_mbuf(f.b, f.len, 2048, &h);
	ck_assert_uint_eq(
		hv_offload_prepare(m,
				   hv_offload_caps_from_ethdev(capa & ~RTE_ETH_TX_OFFLOAD_TCP_TSO),
				   test_mp, out, &st),
		4);
	for (int k = 0; k < 4; k++) {
		ck_assert(out[k]->ol_flags & RTE_MBUF_F_TX_TCP_CKSUM);
		rte_pktmbuf_free(out[k]);
	}
	ck_assert_uint_eq(rte_mempool_in_use_count(test_mp), 0);
}
END_TEST

/*
 * A partial checksum for a NIC whose IP header lies about its length or
 * version: the NIC would parse by a wrong l3_len (0..16 bytes), so it is
 * finished in software; a sound one next to it still goes to the NIC.
 */
START_TEST(nic_csum_bad_ip_header)
{
	static struct frame f;
	static const struct {
		bool v6;
		uint8_t first; /* version and IHL byte */
	} bad[] = {{false, 0x40}, {false, 0x44}, {false, 0x65}, {false, 0x05}, {true, 0x40}};
	uint64_t capa = RTE_ETH_TX_OFFLOAD_MULTI_SEGS | RTE_ETH_TX_OFFLOAD_IPV4_CKSUM |
			RTE_ETH_TX_OFFLOAD_TCP_CKSUM | RTE_ETH_TX_OFFLOAD_UDP_CKSUM;
	uint32_t caps = hv_offload_caps_from_ethdev(capa);
	struct rte_mbuf *out[HV_OFFLOAD_MAX_SEGS], *m;
	struct hv_offload_stats st = {0};
	struct hv_offload_hdr h;

	for (unsigned int i = 0; i < RTE_DIM(bad); i++) {
		struct frame_spec s = {.v6 = bad[i].v6, .payload = 300, .tcp_flags = 0x18};
		uint16_t l3;

		craft(&f, &s);
		f.b[f.l2] = bad[i].first;
		/* where the guest claims TCP starts: after the header it describes */
		l3 = bad[i].v6 ? 40 : (bad[i].first & 0xf) * 4;
		h = tso_hdr(&f, 0, false);
		h.gso_type = 0;
		h.csum_start = (uint16_t)(f.l2 + l3);
		m = to_mbuf(f.b, f.len, 2048, &h);
		ck_assert_uint_eq(hv_offload_prepare(m, caps, test_mp, out, &st), 1);
		ck_assert_msg(!(out[0]->ol_flags & (RTE_MBUF_F_TX_TCP_CKSUM | RTE_MBUF_F_TX_IPV4 |
						    RTE_MBUF_F_TX_IPV6)),
			      "case %u (0x%02x): handed to the NIC, l3_len %u", i, bad[i].first,
			      out[0]->l3_len);
		ck_assert(!hv_offload_mbuf_has_hdr(out[0]));
		rte_pktmbuf_free(out[0]);
	}
	ck_assert_uint_eq(st.csum_finished, RTE_DIM(bad));
	ck_assert_uint_eq(st.hw_offload, 0);
	/* the same frames, sound: the NIC's */
	for (int v6 = 0; v6 < 2; v6++) {
		struct frame_spec s = {.v6 = v6, .payload = 300, .tcp_flags = 0x18};

		craft(&f, &s);
		h = tso_hdr(&f, 0, false);
		h.gso_type = 0;
		m = to_mbuf(f.b, f.len, 2048, &h);
		ck_assert_uint_eq(hv_offload_prepare(m, caps, test_mp, out, &st), 1);
		ck_assert(out[0]->ol_flags & RTE_MBUF_F_TX_TCP_CKSUM);
		ck_assert_uint_eq(out[0]->l3_len, f.l3);
		rte_pktmbuf_free(out[0]);
	}
	ck_assert_uint_eq(st.hw_offload, 2);
	ck_assert_uint_eq(rte_mempool_in_use_count(test_mp), 0);
}
END_TEST

/* ---- scapy's verdict on every recorded case ---- */

START_TEST(scapy_verifies)
{
	const char *script = getenv("OFFLOAD_VERIFY");
	char cmd[512];
	int rc;

	fflush(cases);
	if (script == NULL || access("/usr/bin/python3", X_OK) != 0 ||
	    system("/usr/bin/python3 -c 'import scapy' 2>/dev/null") != 0) {
		fprintf(stderr, "scapy not available: cases not verified independently\n");
		ck_abort_msg("python3-scapy is needed (tests/deps.sh installs it)");
	}
	snprintf(cmd, sizeof(cmd), "/usr/bin/python3 %s %s", script, cases_path);
	rc = system(cmd);
	ck_assert_int_eq(WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, 0);
}
END_TEST

int
main(int argc, char **argv)
{
	Suite *s = suite_create("offload");
	TCase *seg = tcase_create("segmentation"), *neg_tc = offload_validation_tcase();
	TCase *ver = tcase_create("scapy");
	SRunner *sr;
	int failed, fd;

	if (rte_eal_init(argc, argv) < 0 || hv_offload_mbuf_register() != 0)
		return 1;
	test_mp = rte_pktmbuf_pool_create("test_offload", 8192, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
					  SOCKET_ID_ANY);
	snprintf(cases_path, sizeof(cases_path), "/tmp/hv-offload-cases-XXXXXX");
	fd = mkstemp(cases_path);
	if (test_mp == NULL || fd < 0)
		return 1;
	cases = fdopen(fd, "w");
	tcase_add_test(seg, seg_ipv4_options_odd_last);
	tcase_add_test(seg, seg_ipv6_fin_psh_cwr_ecn);
	tcase_add_test(seg, seg_ipv4_vlan_odd_mss_odd_pieces);
	tcase_add_test(seg, seg_large_mss_chains_output);
	tcase_add_test(seg, whole_to_tso_guest);
	tcase_add_test(seg, finish_single_frame);
	tcase_add_test(seg, shared_frame_left_alone);
	tcase_add_test(seg, nic_offloads);
	tcase_add_test(seg, nic_csum_bad_ip_header);
	tcase_add_test(ver, scapy_verifies);
	suite_add_tcase(s, seg);
	suite_add_tcase(s, neg_tc);
	suite_add_tcase(s, ver);
	sr = srunner_create(s);
	/* one process: the EAL and the case file are shared by the tests */
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	fclose(cases);
	unlink(cases_path);
	rte_mempool_free(test_mp);
	rte_eal_cleanup();
	return failed == 0 ? 0 : 1;
}
