/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * VXLAN tunnel ports through the hvswitch daemon, byte for byte: a
 * virtio-user guest (vm0, with TSO) and a tunnel vx0 whose uplink is
 * net_af_packet on one end of a veth pair; the test plays the remote VTEP
 * on the other end with a raw socket. It checks the ARP answer for the local
 * address, decapsulation (the inner frame whole at the guest, its source
 * learned behind the VTEP), a TSO send segmented then encapsulated (outer
 * Ethernet/IPv4/UDP/VXLAN fields, one UDP source port for the flow, inner
 * checksums and payload), and the tunnel frames the switch refuses.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "hv_test_csum.h"
#include "hv_test_mbuf.h"
#include "hv_test_net.h"
#include "switch_harness.h"

#define T SWH_TIMEOUT_MS
#define VNI 4242
#define MSS 1380 /* 1446-byte segments: 1482 once encapsulated, within the veth's 1500 */
#define PAYLOAD 20000

static struct hvsw D;
static struct guest G;
static char if_sw[16], if_peer[16];
static int fd = -1;
static uint8_t sw_mac[6];
static const uint8_t peer_mac[6] = {0x02, 0x77, 0, 0, 0, 0x02};
/* the remote VTEP's guest, behind it */
static const uint8_t far_mac[6] = {0x02, 0x88, 0, 0, 0, 0x05};
static const uint8_t local_ip[4] = {10, 77, 0, 1}, peer_ip[4] = {10, 77, 0, 2};

static uint32_t
get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint16_t
get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void
sh(const char *fmt, const char *a, const char *b)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), fmt, a, b);
	ck_assert_msg(system(cmd) == 0, "%s", cmd);
}

static void
setup(void)
{
	const char *const opts[] = {NULL};
	char sock[160], devargs[96], path[96];
	FILE *f;

	memset(&G, 0, sizeof(G));
	swh_reset();
	snprintf(if_sw, sizeof(if_sw), "hvxs%d", (int)getpid() % 100000);
	snprintf(if_peer, sizeof(if_peer), "hvxp%d", (int)getpid() % 100000);
	sh("ip link add %s type veth peer name %s", if_sw, if_peer);
	sh("sysctl -qw net.ipv6.conf.%s.disable_ipv6=1 net.ipv6.conf.%s.disable_ipv6=1", if_sw,
	   if_peer);
	sh("ip link set %s up && ip link set %s up", if_sw, if_peer);
	snprintf(path, sizeof(path), "/sys/class/net/%s/address", if_sw);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fscanf(f, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &sw_mac[0], &sw_mac[1],
				&sw_mac[2], &sw_mac[3], &sw_mac[4], &sw_mac[5]),
			 6);
	fclose(f);
	fd = hv_test_raw_open(if_peer);
	ck_assert_int_ge(fd, 0);
	hvsw_init(&D);
	ck_assert(hvsw_start(&D, opts) == 0);
	snprintf(sock, sizeof(sock), "%s/vm0.sock", D.dir);
	hvsw_add_port(&D, "vm0", NULL);
	ck_assert_int_eq(guest_open_offloads(&G, "vm0", 0, sock, false, 0,
					     RTE_ETH_TX_OFFLOAD_TCP_TSO |
						     RTE_ETH_TX_OFFLOAD_TCP_CKSUM |
						     RTE_ETH_TX_OFFLOAD_MULTI_SEGS),
			 0);
	ck_assert_msg(hvsw_wait_up(&D, "vm0", T), "vm0 not up");
	snprintf(devargs, sizeof(devargs), "net_af_packet%d,iface=%s", (int)getpid() % 1000, if_sw);
	cJSON_Delete(hvsw_ok(&D, "port.add",
			     "{\"name\":\"up0\",\"type\":\"ethdev\",\"devargs\":\"%s\","
			     "\"vlan\":4000}",
			     devargs));
	cJSON_Delete(
		hvsw_ok(&D, "port.add",
			"{\"name\":\"vx0\",\"type\":\"vxlan\",\"vni\":%d,\"local\":\"10.77.0.1\","
			"\"uplink\":\"up0\",\"remote\":\"10.77.0.2\"}",
			VNI));
}

static void
teardown(void)
{
	guest_close(&G);
	hvsw_cleanup(&D);
	if (fd >= 0)
		close(fd);
	fd = -1;
	sh("ip link del %s%s", if_sw, "");
}

/* The next frame on the peer's side that @want accepts, into @f; its length (0: none in time). */
static ssize_t
peer_recv(uint8_t *f, size_t len, bool (*want)(const uint8_t *f, ssize_t n))
{
	uint64_t end = swh_now_ms() + T;

	while (swh_now_ms() < end) {
		ssize_t n = recv(fd, f, len, MSG_DONTWAIT);

		if (n > 0 && want(f, n))
			return n;
		if (n <= 0)
			usleep(200);
	}
	return 0;
}

static bool
is_arp_reply(const uint8_t *f, ssize_t n)
{
	return n >= 42 && f[12] == 0x08 && f[13] == 0x06 && get16(f + 20) == 2;
}

static bool
is_vxlan(const uint8_t *f, ssize_t n)
{
	return n >= 50 && f[12] == 0x08 && f[13] == 0 && f[23] == 17 && get16(f + 36) == 4789;
}

/* The remote VTEP asks for the local address: the switch answers, and knows where .2 is. */
static void
arp_exchange(void)
{
	uint8_t q[60] = {0}, r[128];

	memset(q, 0xff, 6);
	memcpy(q + 6, peer_mac, 6);
	q[12] = 0x08, q[13] = 0x06;
	q[15] = 1, q[16] = 0x08, q[18] = 6, q[19] = 4, q[21] = 1;
	memcpy(q + 22, peer_mac, 6);
	memcpy(q + 28, peer_ip, 4);
	memcpy(q + 38, local_ip, 4);
	ck_assert_int_eq(send(fd, q, sizeof(q), 0), (ssize_t)sizeof(q));
	ck_assert_int_gt(peer_recv(r, sizeof(r), is_arp_reply), 0);
	ck_assert_mem_eq(r, peer_mac, 6);
	ck_assert_mem_eq(r + 6, sw_mac, 6);
	ck_assert_mem_eq(r + 22, sw_mac, 6);
	ck_assert_mem_eq(r + 28, local_ip, 4);
	ck_assert_mem_eq(r + 32, peer_mac, 6);
	ck_assert_mem_eq(r + 38, peer_ip, 4);
}

/* A VXLAN frame from the peer around @inner (@ilen bytes), with @flags and @vni. */
static size_t
encap(uint8_t *f, const uint8_t *inner, size_t ilen, uint8_t flags, uint32_t vni, uint8_t proto)
{
	size_t ip_len = 20 + 8 + 8 + ilen;
	uint16_t c;

	memset(f, 0, 50);
	memcpy(f, sw_mac, 6);
	memcpy(f + 6, peer_mac, 6);
	f[12] = 0x08;
	f[14] = 0x45;
	f[16] = (uint8_t)(ip_len >> 8), f[17] = (uint8_t)ip_len;
	f[22] = 64, f[23] = proto;
	memcpy(f + 26, peer_ip, 4);
	memcpy(f + 30, local_ip, 4);
	c = (uint16_t)~hv_test_csum(0, f + 14, 20);
	f[24] = (uint8_t)(c >> 8), f[25] = (uint8_t)c;
	f[34] = 0xc3, f[35] = 0x50; /* source port 50000 */
	f[36] = 0x12, f[37] = 0xb5; /* 4789 */
	f[38] = (uint8_t)((ip_len - 20) >> 8), f[39] = (uint8_t)(ip_len - 20);
	f[42] = flags;
	f[46] = (uint8_t)(vni >> 16), f[47] = (uint8_t)(vni >> 8), f[48] = (uint8_t)vni;
	memcpy(f + 50, inner, ilen);
	return 50 + ilen;
}

/* An inner broadcast from far_mac, @tag in its payload. */
static size_t
inner_bcast(uint8_t *in, uint8_t tag)
{
	memset(in, 0, 64);
	memset(in, 0xff, 6);
	memcpy(in + 6, far_mac, 6);
	in[12] = 0x88, in[13] = 0xb5;
	in[14] = tag;
	return 64;
}

/* Frames vm0 received whose first 14 bytes and tag byte match @in. */
static unsigned int
vm0_got(const uint8_t *in, size_t len, unsigned int want)
{
	uint64_t end = swh_now_ms() + (want ? T : 300);
	unsigned int got = 0;
	uint8_t buf[2048];

	while (swh_now_ms() < end && (want == 0 || got < want)) {
		struct rte_mbuf *m;

		if (rte_eth_rx_burst(G.eth, 0, &m, 1) == 0) {
			usleep(200);
			continue;
		}
		if (m->pkt_len == len && memcmp(rte_pktmbuf_read(m, 0, len, buf), in, len) == 0)
			got++;
		rte_pktmbuf_free(m);
	}
	return got;
}

static double
vx_num(const char *key)
{
	cJSON *r = hvsw_ok(&D, "port.show", "{\"name\":\"vx0\"}");
	double v = swh_num(r, key);

	cJSON_Delete(r);
	return v;
}

START_TEST(decap_then_tso_encap)
{
	static uint8_t frame[PAYLOAD + 100], got[PAYLOAD];
	uint8_t in[64], f[2048];
	uint32_t len = 14 + 20 + 20 + PAYLOAD, have = 0, seq0, nseg = 0;
	int sport = -1;
	struct rte_mbuf *head;
	uint64_t end;
	cJSON *fdb;
	char *txt;
	size_t n;

	arp_exchange();
	/* decapsulated: the guest gets the inner frame whole; its source learned behind .2 */
	n = encap(f, in, inner_bcast(in, 1), 0x08, VNI, 17);
	ck_assert_int_eq(send(fd, f, n, 0), (ssize_t)n);
	ck_assert_uint_eq(vm0_got(in, 64, 1), 1);
	fdb = hvsw_ok(&D, "fdb.show", "{\"port\":\"vx0\"}");
	txt = cJSON_PrintUnformatted(fdb);
	ck_assert_msg(strstr(txt, "\"mac\":\"02:88:00:00:00:05\"") != NULL &&
			      strstr(txt, "\"remote\":\"10.77.0.2\"") != NULL,
		      "%s", txt);
	free(txt);
	cJSON_Delete(fdb);

	/* vm0's TSO send to it: segmented, each segment encapsulated to .2 */
	memcpy(frame, far_mac, 6);
	memcpy(frame + 6, G.mac.addr_bytes, 6);
	frame[12] = 0x08;
	frame[14] = 0x45;
	frame[16] = (uint8_t)((len - 14) >> 8), frame[17] = (uint8_t)(len - 14);
	frame[22] = 64, frame[23] = 6;
	memcpy(frame + 26, "\x0a\x01\x00\x01\x0a\x01\x00\x02", 8);
	memcpy(frame + 34, "\x9c\x40\x14\x51\x00\x00\x10\x00\x00\x00\x00\x01\x50\x18\x01\xf5", 16);
	for (uint32_t i = 0; i < PAYLOAD; i++)
		frame[54 + i] = (uint8_t)(i * 7 + (i >> 8));
	seq0 = get32(frame + 38);
	head = hv_test_mbuf_chain(swh_guest_pool(), frame, len, 0);
	ck_assert_ptr_nonnull(head);
	head->l2_len = 14, head->l3_len = 20, head->l4_len = 20;
	head->ol_flags = RTE_MBUF_F_TX_TCP_CKSUM | RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_TCP_SEG;
	head->tso_segsz = MSS;
	ck_assert_uint_eq(rte_eth_tx_prepare(G.eth, 0, &head, 1), 1);
	ck_assert_uint_eq(rte_eth_tx_burst(G.eth, 0, &head, 1), 1);
	end = swh_now_ms() + T;
	while (have < PAYLOAD && swh_now_ms() < end) {
		ssize_t k = peer_recv(f, sizeof(f), is_vxlan);
		const uint8_t *ip = f + 14, *udp = f + 34, *vx = f + 42, *ie = f + 50;
		uint32_t plen, off;

		if (k == 0)
			break;
		/* outer Ethernet: to the VTEP's MAC (from its ARP), from the uplink's */
		ck_assert_mem_eq(f, peer_mac, 6);
		ck_assert_mem_eq(f + 6, sw_mac, 6);
		/* IPv4: 20 bytes, DF, UDP, our address to the VTEP's, its checksum right */
		ck_assert_uint_eq(ip[0], 0x45);
		ck_assert_uint_eq(get16(ip + 2), (uint32_t)k - 14);
		ck_assert_uint_eq(get16(ip + 6), 0x4000);
		ck_assert_mem_eq(ip + 12, local_ip, 4);
		ck_assert_mem_eq(ip + 16, peer_ip, 4);
		ck_assert_uint_eq(hv_test_csum(0, ip, 20), 0xffff);
		ck_assert_uint_le((uint32_t)k - 14, 1500);
		/* UDP: one source port for the flow, from the dynamic range; no checksum */
		ck_assert_uint_ge(get16(udp), 49152);
		if (sport < 0)
			sport = get16(udp);
		ck_assert_int_eq(get16(udp), sport);
		ck_assert_uint_eq(get16(udp + 4), (uint32_t)k - 34);
		ck_assert_uint_eq(get16(udp + 6), 0);
		/* VXLAN: I flag, the VNI */
		ck_assert_uint_eq(vx[0], 0x08);
		ck_assert_uint_eq(get32(vx + 4), (uint32_t)VNI << 8);
		/* inner: a TCP segment with its checksums finished */
		ck_assert_mem_eq(ie, far_mac, 6);
		ck_assert_uint_eq(hv_test_csum(0, ie + 14, 20), 0xffff);
		plen = get16(ie + 16) - 40;
		ck_assert_uint_eq((uint32_t)k, 50 + 14 + 40 + plen);
		ck_assert_uint_eq(hv_test_csum(hv_test_csum_pseudo(ie + 14, false, 20 + plen),
					       ie + 34, 20 + plen),
				  0xffff);
		off = get32(ie + 38) - seq0;
		ck_assert_uint_le(off + plen, PAYLOAD);
		memcpy(got + off, ie + 54, plen);
		have += plen;
		nseg++;
	}
	ck_assert_uint_eq(have, PAYLOAD);
	ck_assert_mem_eq(got, frame + 54, PAYLOAD);
	ck_assert_uint_eq(nseg, (PAYLOAD + MSS - 1) / MSS);
	ck_assert_int_eq(vx_num("vxlan.encap"), nseg);
	ck_assert_int_eq(vx_num("vxlan.decap"), 1);
	ck_assert_int_eq(vx_num("vxlan.mtu_drops"), 0);
	/* the tunnel took no offload: the switch segmented for it */
	ck_assert_int_eq(hvsw_port_stat(&D, "vx0", "offload.segmented"), 1);
}
END_TEST

/* What is not a tunnel frame of ours, to the local address: dropped, counted, not switched. */
START_TEST(bad_tunnel_frames_counted)
{
	uint8_t in[64], f[256];
	size_t n;

	arp_exchange();
	n = encap(f, in, inner_bcast(in, 2), 0x00, VNI, 17); /* no I flag */
	ck_assert_int_eq(send(fd, f, n, 0), (ssize_t)n);
	n = encap(f, in, inner_bcast(in, 3), 0x08, VNI + 1, 17); /* another VNI */
	ck_assert_int_eq(send(fd, f, n, 0), (ssize_t)n);
	n = encap(f, in, inner_bcast(in, 4), 0x08, VNI, 6); /* TCP, not UDP */
	ck_assert_int_eq(send(fd, f, n, 0), (ssize_t)n);
	n = encap(f, in, inner_bcast(in, 5), 0x08, VNI, 17);
	f[16] = 0, f[17] = 40; /* IPv4 length shorter than its headers and an inner header */
	ck_assert_int_eq(send(fd, f, n, 0), (ssize_t)n);
	n = encap(f, in, inner_bcast(in, 6), 0x08, VNI, 17); /* a good one, last */
	ck_assert_int_eq(send(fd, f, n, 0), (ssize_t)n);
	ck_assert_uint_eq(vm0_got(in, 64, 1), 1);
	for (uint8_t t = 2; t <= 5; t++) {
		inner_bcast(in, t);
		ck_assert_uint_eq(vm0_got(in, 64, 0), 0);
	}
	ck_assert_int_eq(vx_num("vxlan.uplinks.bad_vxlan"), 2);
	ck_assert_int_eq(vx_num("vxlan.uplinks.unknown_vni"), 1);
	ck_assert_int_eq(vx_num("vxlan.uplinks.not_vxlan"), 1);
	ck_assert_int_eq(vx_num("vxlan.decap"), 1);
}
END_TEST

static Suite *
make_suite(void)
{
	Suite *s = suite_create("switch-vxlan");
	TCase *t = tcase_create("vxlan");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 120);
	tcase_add_test(t, decap_then_tso_encap);
	tcase_add_test(t, bad_tunnel_frames_counted);
	suite_add_tcase(s, t);
	return s;
}

int
main(int argc, char **argv)
{
	return swh_run_suite(make_suite, argc, argv);
}
