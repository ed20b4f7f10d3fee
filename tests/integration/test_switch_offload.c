/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Offloads through the hvswitch daemon, with DPDK's virtio-user PMD as the
 * guests (an independent virtio-net implementation): vm0 sends 64 KiB TCP
 * segments with TSO (HOST_TSO4/6 + CSUM); the frames are flooded to
 *   vm1  GUEST_TSO4/6 + GUEST_CSUM (RX LRO + TCP_CKSUM): the frame whole,
 *   vm2  no offloads: MSS-sized segments with full checksums,
 *   vm3  GUEST_CSUM only: segments with partial checksums,
 * all from one flooded mbuf. Payloads are compared byte for byte; checksums
 * are checked with a checksum routine of this file, not the library's.
 */
#include <check.h>
#include <stdio.h>
#include <sys/socket.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>

#include "capture_read.h"
#include "hv_test_csum.h"
#include "hv_test_mbuf.h"
#include "hv_test_net.h"
#include "switch_harness.h"

#define T SWH_TIMEOUT_MS
#define MSS 1448
#define BIG 65000
#define MAX_SEGS 64

static struct hvsw D;
static struct guest G[4];

static const uint64_t rx_caps[4] = {
	0,
	RTE_ETH_RX_OFFLOAD_TCP_LRO | RTE_ETH_RX_OFFLOAD_TCP_CKSUM,
	0,
	RTE_ETH_RX_OFFLOAD_TCP_CKSUM,
};

/* A big-endian 32-bit field at any alignment. */
static uint32_t
get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* ---- frames ---- */

struct tcp_frame {
	uint8_t b[BIG + 100];
	uint32_t len;
	uint16_t l2, l3, l4;
	bool v6;
};

static uint8_t rxbuf[BIG + 100];

static void
make_frame(struct tcp_frame *f, bool v6, uint32_t payload, const struct rte_ether_addr *dst)
{
	uint8_t *ip, *tcp;

	memset(f, 0, sizeof(*f));
	f->v6 = v6;
	f->l2 = 14;
	f->l3 = v6 ? 40 : 20;
	f->l4 = 32; /* with a timestamp option */
	memcpy(f->b, dst, 6);
	memcpy(f->b + 6, "\x02\x00\x00\x00\x00\x00", 6);
	f->b[12] = v6 ? 0x86 : 0x08;
	f->b[13] = v6 ? 0xdd : 0x00;
	ip = f->b + f->l2;
	if (v6) {
		ip[0] = 0x60;
		ip[4] = (uint8_t)((f->l4 + payload) >> 8);
		ip[5] = (uint8_t)(f->l4 + payload);
		ip[6] = 6;
		ip[7] = 64;
		for (int i = 0; i < 32; i++)
			ip[8 + i] = (uint8_t)(0xa0 + i);
	} else {
		uint16_t tot = (uint16_t)(f->l3 + f->l4 + payload), c;

		ip[0] = 0x45;
		ip[2] = (uint8_t)(tot >> 8);
		ip[3] = (uint8_t)tot;
		ip[4] = 0x12;
		ip[6] = 0x40;
		ip[8] = 64;
		ip[9] = 6;
		memcpy(ip + 12, "\x0a\x01\x00\x01\x0a\x01\x00\x02", 8);
		c = (uint16_t)~hv_test_csum(0, ip, 20);
		ip[10] = (uint8_t)(c >> 8);
		ip[11] = (uint8_t)c;
	}
	tcp = ip + f->l3;
	memcpy(tcp, "\x9c\x40\x14\x51\x00\x00\x10\x00\x00\x00\x00\x01\x80\x18\x01\xf5", 16);
	memcpy(tcp + 20, "\x01\x01\x08\x0a\x01\x02\x03\x04\x05\x06\x07\x08", 12);
	for (uint32_t i = 0; i < payload; i++)
		tcp[f->l4 + i] = (uint8_t)(i * 13 + (i >> 9));
	f->len = f->l2 + f->l3 + f->l4 + payload;
}

/*
 * Send @f from vm0; @tso: as a TSO send (else a partial checksum only).
 * The checksum field is left to the PMD's tx_prepare, as an application does;
 * @f is updated with the bytes that went out.
 */
static void
send_frame_as(struct tcp_frame *f, bool csum, bool tso, uint16_t mss)
{
	struct rte_mbuf *head = hv_test_mbuf_chain(swh_guest_pool(), f->b, f->len, 0);
	uint64_t end = swh_now_ms() + T;

	ck_assert_ptr_nonnull(head);
	head->l2_len = f->l2;
	head->l3_len = f->l3;
	head->l4_len = f->l4;
	if (csum)
		head->ol_flags =
			RTE_MBUF_F_TX_TCP_CKSUM | (f->v6 ? RTE_MBUF_F_TX_IPV6 : RTE_MBUF_F_TX_IPV4);
	if (tso) {
		head->ol_flags |= RTE_MBUF_F_TX_TCP_SEG;
		head->tso_segsz = mss;
	}
	ck_assert_uint_eq(rte_eth_tx_prepare(G[0].eth, 0, &head, 1), 1);
	memcpy(f->b, rte_pktmbuf_read(head, 0, f->len, rxbuf), f->len);
	while (rte_eth_tx_burst(G[0].eth, 0, &head, 1) == 0) {
		ck_assert_msg(swh_now_ms() < end, "vm0 could not send");
		usleep(100);
	}
}

static void
send_frame(struct tcp_frame *f, bool tso, uint16_t mss)
{
	send_frame_as(f, true, tso, mss);
}

/* Receive at guest @g until @want frames came (or the timeout). */
static unsigned int
receive(unsigned int g, struct rte_mbuf **pkts, unsigned int want)
{
	uint64_t end = swh_now_ms() + T;
	unsigned int n = 0;

	while (n < want && swh_now_ms() < end) {
		uint16_t k = rte_eth_rx_burst(G[g].eth, 0, pkts + n,
					      (uint16_t)RTE_MIN(32u, MAX_SEGS - n));

		if (k == 0)
			usleep(200);
		n += k;
	}
	return n;
}

/* Nothing more arrives at @g (after what the switch sent has been seen elsewhere). */
static void
no_more(unsigned int g)
{
	struct rte_mbuf *m;

	ck_assert_uint_eq(rte_eth_rx_burst(G[g].eth, 0, &m, 1), 0);
}

/* Check segments of @f cut at @mss; @partial: checksums are partial (finish them). */
static void
check_segments(const struct tcp_frame *f, struct rte_mbuf **segs, unsigned int n, uint16_t mss,
	       bool partial)
{
	uint32_t payload = f->len - f->l2 - f->l3 - f->l4, got = 0;
	uint32_t seq0 = get32(f->b + f->l2 + f->l3 + 4);

	ck_assert_uint_eq(n, (payload + mss - 1) / mss);
	for (unsigned int k = 0; k < n; k++) {
		struct rte_mbuf *m = segs[k];
		uint32_t plen = RTE_MIN((uint32_t)mss, payload - got);
		uint32_t len = f->l2 + f->l3 + f->l4 + plen;
		const uint8_t *b, *ip, *tcp;
		uint32_t sum;

		ck_assert_uint_eq(m->pkt_len, len);
		b = rte_pktmbuf_read(m, 0, len, rxbuf);
		ip = b + f->l2;
		tcp = ip + f->l3;
		if (!f->v6) {
			ck_assert_uint_eq(hv_test_csum(0, ip, 20), 0xffff);
			ck_assert_uint_eq(ip[2] << 8 | ip[3], f->l3 + f->l4 + plen);
			ck_assert_uint_eq(ip[4] << 8 | ip[5], 0x1200 + k);
		} else {
			ck_assert_uint_eq(ip[4] << 8 | ip[5], f->l4 + plen);
		}
		ck_assert_uint_eq(get32(tcp + 4), seq0 + got);
		/* PSH only on the last */
		ck_assert_uint_eq(!!(tcp[13] & RTE_TCP_PSH_FLAG), k + 1 == n);
		ck_assert_mem_eq(tcp + f->l4, f->b + f->l2 + f->l3 + f->l4 + got, plen);
		sum = hv_test_csum_pseudo(ip, f->v6, f->l4 + plen);
		if (partial) {
			/* the virtio PMD says "not checked"; the field is the pseudo-header sum */
			ck_assert_uint_eq(m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK,
					  RTE_MBUF_F_RX_L4_CKSUM_NONE);
			/* (what a receiver adds the segment's sum to: then it is complete) */
			ck_assert_uint_eq(tcp[16] << 8 | tcp[17], hv_test_csum_fold(sum));
		} else {
			ck_assert_uint_eq(hv_test_csum(sum, tcp, f->l4 + plen), 0xffff);
		}
		got += plen;
		rte_pktmbuf_free(m);
	}
	ck_assert_uint_eq(got, payload);
}

static double
off_stat(const char *port, const char *counter)
{
	char path[64];

	snprintf(path, sizeof(path), "offload.%s", counter);
	return hvsw_port_stat(&D, port, path);
}

static void
off_stat_is(const char *port, const char *counter, double want)
{
	uint64_t end = swh_now_ms() + T;
	double v;

	while ((v = off_stat(port, counter)) != want && swh_now_ms() < end)
		usleep(2000);
	ck_assert_msg(v == want, "%s offload.%s = %.0f, expected %.0f", port, counter, v, want);
}

/* Frames from @port whose tail the switch borrowed instead of copying (queue pair 0). */
static double
borrowed(const char *port)
{
	cJSON *r = hvsw_ok(&D, "port.show", "{\"name\":\"%s\"}", port);
	const cJSON *q0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(r, "qps"), 0);
	double v = swh_num(q0, "rx.borrowed");

	cJSON_Delete(r);
	return v;
}

static void
setup(void)
{
	const char *const opts[] = {NULL};

	memset(G, 0, sizeof(G));
	swh_reset();
	hvsw_init(&D);
	ck_assert(hvsw_start(&D, opts) == 0);
	for (unsigned int i = 0; i < RTE_DIM(G); i++) {
		char name[16], sock[160];

		snprintf(name, sizeof(name), "vm%u", i);
		snprintf(sock, sizeof(sock), "%s/%s.sock", D.dir, name);
		hvsw_add_port(&D, name, NULL);
		ck_assert_int_eq(guest_open_offloads(&G[i], name, i, sock, false, rx_caps[i],
						     i == 0 ? RTE_ETH_TX_OFFLOAD_TCP_TSO |
								      RTE_ETH_TX_OFFLOAD_TCP_CKSUM |
								      RTE_ETH_TX_OFFLOAD_MULTI_SEGS
							    : RTE_ETH_TX_OFFLOAD_MULTI_SEGS),
				 0);
		ck_assert_msg(hvsw_wait_up(&D, name, T), "port %s not up", name);
	}
}

static void
teardown(void)
{
	for (unsigned int i = 0; i < RTE_DIM(G); i++)
		guest_close(&G[i]);
	hvsw_cleanup(&D);
}

static struct tcp_frame frame;

/* One 64 KiB TSO send flooded to the three kinds of receiver. */
static void
flood_tso(bool v6)
{
	static const struct rte_ether_addr unknown = {{0x02, 0, 0, 0, 0, 0x99}};
	struct rte_mbuf *rx[MAX_SEGS];
	unsigned int n;

	make_frame(&frame, v6, BIG - 14 - (v6 ? 40 : 20) - 32, &unknown);
	send_frame(&frame, true, MSS);
	/* vm1 takes it whole, with its GSO header */
	ck_assert_uint_eq(receive(1, rx, 1), 1);
	ck_assert_uint_eq(rx[0]->pkt_len, frame.len);
	ck_assert(rx[0]->ol_flags & RTE_MBUF_F_RX_LRO);
	ck_assert_uint_eq(rx[0]->tso_segsz, MSS);
	ck_assert_mem_eq(rte_pktmbuf_read(rx[0], 0, frame.len, rxbuf), frame.b, frame.len);
	rte_pktmbuf_free(rx[0]);
	/* vm2: segments with every checksum computed */
	n = receive(2, rx, (frame.len - 14 - frame.l3 - 32 + MSS - 1) / MSS);
	check_segments(&frame, rx, n, MSS, false);
	/* vm3: segments with partial checksums */
	n = receive(3, rx, (frame.len - 14 - frame.l3 - 32 + MSS - 1) / MSS);
	check_segments(&frame, rx, n, MSS, true);
	no_more(0);
}

START_TEST(tso_flooded_to_each_in_its_form)
{
	uint32_t nseg4, nseg6;

	flood_tso(false);
	nseg4 = (frame.len - 14 - 20 - 32 + MSS - 1) / MSS;
	flood_tso(true);
	nseg6 = (frame.len - 14 - 40 - 32 + MSS - 1) / MSS;
	off_stat_is("vm1", "passthrough", 2);
	off_stat_is("vm2", "segments", nseg4 + nseg6);
	off_stat_is("vm2", "csum_finished", nseg4 + nseg6);
	off_stat_is("vm3", "segments", nseg4 + nseg6);
	off_stat_is("vm3", "csum_finished", 0);
	off_stat_is("vm3", "segmented", 2);
	ck_assert_int_eq(hvsw_port_stat(&D, "vm0", "drops"), 0);
	/* both sends went out of vm0's memory, shared by the three destinations */
	ck_assert_int_eq(borrowed("vm0"), 2);
}
END_TEST

/*
 * Captured, a TSO send keeps its virtio-net header as the frame's comment:
 * as vm0 sent it (rx of vm0), and as delivered whole to vm1 (tx of vm1);
 * the 64 KiB frame byte for byte.
 */
START_TEST(capture_keeps_virtio_net_hdr)
{
	static const char want[] = "gso_size=1448 csum_start=34 csum_offset=16";
	struct pcapng p[2] = {{0}};
	int s[2];

	s[0] = cap_start(&D, "vm0", ",\"direction\":\"rx\"");
	s[1] = cap_start(&D, "vm1", ",\"direction\":\"tx\"");
	flood_tso(false);
	for (int i = 0; i < 2; i++) {
		const struct frame *f = &p[i].f[0];

		cap_read_stream(s[i], &p[i], 1, false);
		ck_assert_uint_eq(p[i].n, 1);
		ck_assert_uint_eq(f->caplen, frame.len);
		ck_assert_uint_eq(f->origlen, frame.len);
		ck_assert_mem_eq(f->data, frame.b, frame.len);
		ck_assert_msg(strncmp(f->comment,
				      "virtio_net_hdr flags=0x1 gso_type=0x1 hdr_len=", 46) == 0 &&
				      strstr(f->comment, want) != NULL,
			      "capture of vm%d: comment '%s'", i, f->comment);
		close(s[i]);
		free(p[i].buf);
	}
}
END_TEST

START_TEST(single_frame_checksum_finished)
{
	static const struct rte_ether_addr unknown = {{0x02, 0, 0, 0, 0, 0x98}};
	struct rte_mbuf *rx[MAX_SEGS];
	const uint8_t *b;

	make_frame(&frame, false, 1000, &unknown);
	send_frame(&frame, false, 0);
	/* vm2 (no GUEST_CSUM) gets it finished; vm1 and vm3 as it was */
	ck_assert_uint_eq(receive(2, rx, 1), 1);
	b = rte_pktmbuf_read(rx[0], 0, frame.len, rxbuf);
	ck_assert_uint_eq(hv_test_csum(hv_test_csum_pseudo(b + 14, false, 1032), b + 34, 1032),
			  0xffff);
	ck_assert_mem_eq(b + 34 + 32, frame.b + 34 + 32, 1000);
	rte_pktmbuf_free(rx[0]);
	ck_assert_uint_eq(receive(1, rx, 1), 1);
	ck_assert_mem_eq(rte_pktmbuf_read(rx[0], 0, frame.len, rxbuf), frame.b, frame.len);
	rte_pktmbuf_free(rx[0]);
	ck_assert_uint_eq(receive(3, rx, 1), 1);
	rte_pktmbuf_free(rx[0]);
	off_stat_is("vm2", "csum_finished", 1);
	off_stat_is("vm1", "passthrough", 1);
	off_stat_is("vm3", "passthrough", 1);
	/* 1,066 bytes fit the first mbuf: nothing to borrow */
	ck_assert_int_eq(borrowed("vm0"), 0);
}
END_TEST

START_TEST(tiny_gso_size_dropped)
{
	static const struct rte_ether_addr unknown = {{0x02, 0, 0, 0, 0, 0x97}};
	struct rte_mbuf *rx[MAX_SEGS];

	/* 64 KiB cut at 100 bytes: refused at the switch, counted on the sender's port */
	make_frame(&frame, false, 20000, &unknown);
	send_frame(&frame, true, 100);
	off_stat_is("vm0", "drops.gso_size", 1);
	/* then a good one still goes through (nothing else broke) */
	make_frame(&frame, false, 3000, &unknown);
	send_frame(&frame, true, MSS);
	ck_assert_uint_eq(receive(1, rx, 1), 1);
	ck_assert_uint_eq(rx[0]->pkt_len, frame.len);
	rte_pktmbuf_free(rx[0]);
	ck_assert_uint_eq(receive(2, rx, 3), 3);
	for (int i = 0; i < 3; i++)
		rte_pktmbuf_free(rx[i]);
	ck_assert_uint_eq(receive(3, rx, 3), 3);
	for (int i = 0; i < 3; i++)
		rte_pktmbuf_free(rx[i]);
	ck_assert_int_eq(hvsw_port_stat(&D, "vm0", "drops"), 1);
}
END_TEST

/* vm@g sends a broadcast, taken off the others' rings; wait until the switch knows its MAC. */
static void
learn(unsigned int g)
{
	struct rte_mbuf *rx[MAX_SEGS];
	char name[16];
	uint64_t end = swh_now_ms() + T;

	guest_send(&G[g], &swh_bcast, NULL, 0);
	for (unsigned int i = 0; i < RTE_DIM(G); i++) {
		if (i == g)
			continue;
		ck_assert_uint_eq(receive(i, rx, 1), 1);
		rte_pktmbuf_free(rx[0]);
	}
	snprintf(name, sizeof(name), "vm%u", g);
	while (hvsw_fdb_has(&D, &G[g].mac, name) == 0 && swh_now_ms() < end)
		usleep(5000);
	ck_assert_msg(hvsw_fdb_has(&D, &G[g].mac, name) == 1, "%s's MAC not learned", name);
}

/*
 * Known unicast to vm2 (no offloads), not flooded: a TSO send arrives cut
 * into segments, a partial checksum finished, each as when flooded.
 */
START_TEST(known_unicast_segmented_and_finished)
{
	struct rte_mbuf *rx[MAX_SEGS];
	uint32_t nseg = (20000 + MSS - 1) / MSS;

	learn(2);
	make_frame(&frame, false, 20000, &G[2].mac);
	send_frame(&frame, true, MSS);
	check_segments(&frame, rx, receive(2, rx, nseg), MSS, false);
	off_stat_is("vm2", "segments", nseg);
	off_stat_is("vm2", "csum_finished", nseg);
	off_stat_is("vm2", "segmented", 1);
	/* a checksum left to the switch: one segment, its checksum computed */
	make_frame(&frame, true, 1000, &G[2].mac);
	send_frame(&frame, false, 0);
	check_segments(&frame, rx, receive(2, rx, 1), 1000, false);
	off_stat_is("vm2", "csum_finished", nseg + 1);
	off_stat_is("vm2", "segments", nseg);
	/* nothing was flooded: the others took no form of either */
	off_stat_is("vm1", "passthrough", 0);
	off_stat_is("vm3", "segments", 0);
	no_more(0);
	no_more(1);
	no_more(3);
	ck_assert_int_eq(hvsw_port_stat(&D, "vm0", "drops"), 0);
}
END_TEST

/* ---- to an ethdev: net_tap offers TSO and checksum offloads ---- */

/*
 * A TSO send flooded to the guests and a net_tap uplink: the switch hands it
 * whole to the tap PMD's TSO (RTE_MBUF_F_TX_TCP_SEG), which cuts it at the
 * interface's MTU; the kernel side sees valid segments carrying the payload.
 */
START_TEST(tso_to_tap_uplink)
{
	static const struct rte_ether_addr unknown = {{0x02, 0, 0, 0, 0, 0x96}};
	static uint8_t got[BIG];
	char ifname[16], devargs[64], cmd[96];
	struct rte_mbuf *rx[MAX_SEGS];
	uint32_t payload, have = 0, seq0;
	uint64_t end;
	int fd;

	snprintf(ifname, sizeof(ifname), "hvo%d", (int)getpid() % 100000);
	snprintf(devargs, sizeof(devargs), "net_tap%d,iface=%s", (int)getpid() % 1000, ifname);
	cJSON_Delete(hvsw_ok(&D, "port.add",
			     "{\"name\":\"up0\",\"type\":\"ethdev\",\"devargs\":\"%s\"}", devargs));
	snprintf(cmd, sizeof(cmd), "ip link set %s up", ifname);
	ck_assert_int_eq(system(cmd), 0);
	ck_assert_msg(hvsw_wait_up(&D, "up0", T), "tap port not up");
	fd = hv_test_raw_open(ifname);
	ck_assert_msg(fd >= 0, "raw socket on %s", ifname);
	make_frame(&frame, false, 20000, &unknown);
	payload = 20000;
	seq0 = get32(frame.b + 34 + 4);
	/*
	 * MSS 1400: net_tap refuses a TSO frame whose MSS plus all headers,
	 * Ethernet included, exceeds the MTU (1500)
	 */
	send_frame(&frame, true, 1400);
	end = swh_now_ms() + T;
	while (have < payload && swh_now_ms() < end) {
		uint8_t f[2048];
		ssize_t n = recv(fd, f, sizeof(f), MSG_DONTWAIT);
		uint32_t ip_len, plen, off;

		if (n <= 0) {
			usleep(200);
			continue;
		}
		/* ours: IPv4 TCP from port 40000 */
		if (n < 66 || f[12] != 0x08 || f[13] != 0 || f[23] != 6 || f[34] != 0x9c ||
		    f[35] != 0x40)
			continue;
		ip_len = (uint32_t)(f[16] << 8 | f[17]);
		ck_assert_uint_eq(ip_len + 14, (uint32_t)n);
		ck_assert_uint_eq(hv_test_csum(0, f + 14, 20), 0xffff);
		plen = ip_len - 20 - 32;
		ck_assert_uint_eq(hv_test_csum(hv_test_csum_pseudo(f + 14, false, 32 + plen),
					       f + 34, 32 + plen),
				  0xffff);
		off = get32(f + 34 + 4) - seq0;
		ck_assert_uint_le(off + plen, payload);
		memcpy(got + off, f + 66, plen);
		have += plen;
	}
	close(fd);
	if (have != payload) {
		cJSON *r = hvsw_ok(&D, "port.show", "{\"name\":\"up0\"}");
		char *txt = cJSON_PrintUnformatted(r);

		fprintf(stderr, "up0: %s\n", txt);
		free(txt);
		cJSON_Delete(r);
	}
	ck_assert_uint_eq(have, payload);
	ck_assert_mem_eq(got, frame.b + 66, payload);
	off_stat_is("up0", "hw_offload", 1);
	/* what the tap got was a copy: the send itself was borrowed */
	ck_assert_int_eq(borrowed("vm0"), 1);
	/* vm1 had it whole as usual (among the kernel's own frames from the tap) */
	{
		bool whole = false;

		end = swh_now_ms() + T;
		while (!whole && swh_now_ms() < end) {
			unsigned int n = receive(1, rx, 1);

			for (unsigned int i = 0; i < n; i++) {
				whole |= rx[i]->pkt_len == frame.len;
				rte_pktmbuf_free(rx[i]);
			}
		}
		ck_assert(whole);
	}
}
END_TEST

/*
 * A long frame without offloads flooded to the guests and to a net_ring
 * uplink whose TX ring is its own RX ring: the ring keeps the frame after
 * tx_burst returned, so it gets a copy, not the tail vm0 lent for the burst.
 * The frame comes back in through the uplink and is flooded again.
 */
START_TEST(long_frame_to_ring_uplink)
{
	static const struct rte_ether_addr unknown = {{0x02, 0, 0, 0, 0, 0x95}};
	struct rte_mbuf *rx[MAX_SEGS];
	char devargs[32];

	snprintf(devargs, sizeof(devargs), "net_ring%d", (int)getpid() % 1000);
	cJSON_Delete(hvsw_ok(&D, "port.add",
			     "{\"name\":\"up1\",\"type\":\"ethdev\",\"devargs\":\"%s\"}", devargs));
	ck_assert_msg(hvsw_wait_up(&D, "up1", T), "ring port not up");
	make_frame(&frame, false, 6000, &unknown);
	send_frame_as(&frame, false, false, 0);
	/* vm1: once from vm0, once back from the uplink; both byte-exact */
	ck_assert_uint_eq(receive(1, rx, 2), 2);
	for (int i = 0; i < 2; i++) {
		ck_assert_uint_eq(rx[i]->pkt_len, frame.len);
		ck_assert_mem_eq(rte_pktmbuf_read(rx[i], 0, frame.len, rxbuf), frame.b, frame.len);
		rte_pktmbuf_free(rx[i]);
	}
	/* vm0 hears its own frame back from the uplink */
	ck_assert_uint_eq(receive(0, rx, 1), 1);
	ck_assert_mem_eq(rte_pktmbuf_read(rx[0], 0, frame.len, rxbuf), frame.b, frame.len);
	rte_pktmbuf_free(rx[0]);
	ck_assert_int_eq(borrowed("vm0"), 1);
	ck_assert_int_eq(hvsw_port_stat(&D, "up1", "tx_packets"), 1);
	ck_assert_int_eq(hvsw_port_stat(&D, "up1", "rx_packets"), 1);
	ck_assert_int_eq(hvsw_port_stat(&D, "up1", "drops"), 0);
}
END_TEST

static Suite *
make_suite(void)
{
	Suite *s = suite_create("switch_offload");
	TCase *t = tcase_create("offload");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 120);
	tcase_add_test(t, tso_flooded_to_each_in_its_form);
	tcase_add_test(t, capture_keeps_virtio_net_hdr);
	tcase_add_test(t, single_frame_checksum_finished);
	tcase_add_test(t, tiny_gso_size_dropped);
	tcase_add_test(t, known_unicast_segmented_and_finished);
	tcase_add_test(t, tso_to_tap_uplink);
	tcase_add_test(t, long_frame_to_ring_uplink);
	suite_add_tcase(s, t);
	return s;
}

int
main(int argc, char **argv)
{
	return swh_run_suite(make_suite, argc, argv);
}
