/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Offload benchmark (tests/perf/bench_offload.sh drives it).
 *
 *   bench_offload [EAL] -- micro [SECONDS]
 *       lib/offload's segmentation against DPDK's rte_gso on the same input:
 *       a 64 KiB TCPv4 send in 2048-byte mbufs (as drivers/vhost builds it),
 *       cut at MSS 1448. Each variant runs SECONDS; the segments are either
 *       freed at once, or first copied out whole (what a vhost enqueue into a
 *       guest does with them). Prints "MICRO variant=.. gbps=.. segs_per_s=..".
 *
 *   bench_offload [EAL, two virtio-user vdevs] -- switch MODE SECONDS
 *       The generator and receiver of a switch run: port 0 sends, port 1
 *       receives, one thread. MODE pass: 64 KiB TSO sends to a receiver with
 *       GUEST_TSO (LRO); seg: the same sends to a receiver without offloads;
 *       mtu: 1514-byte frames, no offloads anywhere. Prints
 *       "SWITCH mode=.. gbps=.. frames_per_s=.." (TCP payload bytes received).
 *       The receiver reads every cache line of what it receives, into
 *       64 KiB buffers (pass) or 2 KiB mbufs (seg, mtu).
 *
 *   ... -- switch MODE SECONDS TICK_MS
 *       Also prints "TICK ns=<CLOCK_REALTIME> bytes=<received since start>"
 *       every TICK_MS ms, for a script that runs the modes side by side and
 *       pauses all but one (SIGSTOP, bench_offload.sh's turns). A gap of
 *       more than 100 ms between two loop turns is such a pause.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_gso.h>
#include <rte_ip.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>

#include "hv_offload.h"
#include "hv_test_mbuf.h"

#define MSS 1448
#define HDRS (14 + 20 + 32)
#define TSO_PAYLOAD (65000 - HDRS)
#define BURST 32

static struct rte_mempool *mp;
static uint8_t frame[70000];
static uint8_t sink[4096];

static void
die(const char *what)
{
	fprintf(stderr, "bench_offload: %s\n", what);
	exit(1);
}

/* A TCPv4 frame with @payload bytes: IPv4 checksum set, TCP checksum partial. */
static uint32_t
make_frame(uint32_t payload, const struct rte_ether_addr *src, const struct rte_ether_addr *dst)
{
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)frame;
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
	struct rte_tcp_hdr *tcp = (struct rte_tcp_hdr *)(ip + 1);

	memset(frame, 0, HDRS);
	eth->dst_addr = *dst;
	eth->src_addr = *src;
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	ip->version_ihl = 0x45;
	ip->total_length = rte_cpu_to_be_16((uint16_t)(20 + 32 + payload));
	ip->packet_id = rte_cpu_to_be_16(1);
	ip->fragment_offset = rte_cpu_to_be_16(0x4000);
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_TCP;
	ip->src_addr = rte_cpu_to_be_32(0x0a000001);
	ip->dst_addr = rte_cpu_to_be_32(0x0a000002);
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	tcp->src_port = rte_cpu_to_be_16(40000);
	tcp->dst_port = rte_cpu_to_be_16(5201);
	tcp->sent_seq = rte_cpu_to_be_32(1);
	tcp->data_off = 8 << 4;
	tcp->tcp_flags = RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG;
	tcp->rx_win = rte_cpu_to_be_16(502);
	for (uint32_t i = 0; i < payload; i++)
		frame[HDRS + i] = (uint8_t)(i * 31);
	tcp->cksum = rte_ipv4_phdr_cksum(ip, 0);
	return HDRS + payload;
}

static struct rte_mbuf *
frame_mbuf(uint32_t len)
{
	struct rte_mbuf *head = hv_test_mbuf_chain(mp, frame, len, 0);

	if (head == NULL)
		die("no mbuf");
	return head;
}

/* Copy a segment out whole, as an enqueue into a guest's buffer does. */
static inline void
deliver(struct rte_mbuf *m)
{
	uint32_t off = 0;

	for (struct rte_mbuf *s = m; s != NULL; s = s->next) {
		uint32_t k = RTE_MIN((uint32_t)s->data_len, (uint32_t)sizeof(sink) - off);

		rte_memcpy(sink + off, rte_pktmbuf_mtod(s, const void *), k);
		off += k;
	}
}

enum variant {
	OURS_PARTIAL,
	OURS_FULL,
	RTE_GSO
};

static void
micro_run(enum variant v, bool copy, double seconds)
{
	static const char *const names[] = {"ours_partial_csum", "ours_full_csum", "rte_gso"};
	struct rte_ether_addr a = {{2, 0, 0, 0, 0, 1}}, b = {{2, 0, 0, 0, 0, 2}};
	struct rte_mempool *indirect =
		rte_pktmbuf_pool_create("gso_ind", 4096, 256, 0, 0, rte_socket_id());
	struct rte_gso_ctx gso = {
		.direct_pool = mp,
		.indirect_pool = getenv("GSO_SAME_POOL") ? mp : indirect,
		.gso_types = RTE_ETH_TX_OFFLOAD_TCP_TSO,
		.gso_size = MSS + HDRS,
		.flag = 0,
	};
	struct hv_offload_stats st = {0};
	struct rte_mbuf *in, *out[HV_OFFLOAD_MAX_SEGS];
	uint64_t segs = 0, bytes = 0, start, end;
	uint32_t len = make_frame(TSO_PAYLOAD, &a, &b);

	if (indirect == NULL)
		die("no indirect pool");
	in = frame_mbuf(len);
	in->ol_flags = RTE_MBUF_F_TX_TCP_SEG | RTE_MBUF_F_TX_IPV4;
	in->l2_len = 14;
	in->l3_len = 20;
	in->l4_len = 32;
	in->tso_segsz = MSS;
	*hv_offload_mbuf_hdr(in) = (struct hv_offload_hdr){.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM,
							   .gso_type = VIRTIO_NET_HDR_GSO_TCPV4,
							   .gso_size = MSS,
							   .csum_start = 34,
							   .csum_offset = 16};
	start = rte_rdtsc();
	end = start + (uint64_t)(seconds * rte_get_tsc_hz());
	while (rte_rdtsc() < end) {
		for (int r = 0; r < 16; r++) {
			int n;

			/*
			 * Both get the frame as a switch would hand it over, one
			 * reference the call must give up: hv_offload_prepare()
			 * frees it; DPDK 22.11's rte_gso leaves it to the caller
			 * (its segments attach references of their own), so the
			 * caller's free is part of that variant's cost.
			 */
			rte_pktmbuf_refcnt_update(in, 1);
			if (v == RTE_GSO) {
				/* rte_gso clears TCP_SEG on its input */
				in->ol_flags |= RTE_MBUF_F_TX_TCP_SEG;
				n = rte_gso_segment(in, &gso, out, HV_OFFLOAD_MAX_SEGS);
				rte_pktmbuf_free(in);
				if (n <= 1) {
					fprintf(stderr, "rte_gso_segment: %d\n", n);
					die("rte_gso_segment failed");
				}
			} else {
				in->ol_flags |= hv_offload_hdr_flag;
				n = hv_offload_prepare(in,
						       v == OURS_PARTIAL ? HV_OFFLOAD_CAP_CSUM : 0,
						       mp, out, &st);
				if (n <= 1)
					die("hv_offload_prepare failed");
			}
			for (int i = 0; i < n; i++) {
				if (copy)
					deliver(out[i]);
				bytes += out[i]->pkt_len - HDRS;
			}
			rte_pktmbuf_free_bulk(out, (unsigned int)n);
			segs += (uint64_t)n;
		}
	}
	seconds = (double)(rte_rdtsc() - start) / rte_get_tsc_hz();
	printf("MICRO variant=%s copy_out=%d gbps=%.2f segs_per_s=%.0f\n", names[v], copy,
	       bytes * 8 / seconds / 1e9, segs / seconds);
	rte_pktmbuf_free(in);
	rte_mempool_free(indirect);
}

static volatile bool stop;

static void
on_signal(int sig)
{
	(void)sig;
	stop = true;
}

static void
port_setup(uint16_t port, struct rte_mempool *rx_mp, uint64_t rx_off, uint64_t tx_off)
{
	struct rte_eth_conf conf = {.rxmode = {.offloads = rx_off}, .txmode = {.offloads = tx_off}};

	if (rte_eth_dev_configure(port, 1, 1, &conf) != 0 ||
	    rte_eth_rx_queue_setup(port, 0, 256, rte_socket_id(), NULL, rx_mp) != 0 ||
	    rte_eth_tx_queue_setup(port, 0, 256, rte_socket_id(), NULL) != 0 ||
	    rte_eth_dev_start(port) != 0)
		die("port setup (offloads not negotiated?)");
}

static volatile uint8_t touched;

/*
 * Read every cache line of a received frame, as a guest's copy into its
 * socket buffer would: where the switch left the data (our cache, the
 * switch core's, memory) is part of the cost of the path.
 */
static void
touch_frame(const struct rte_mbuf *m)
{
	uint8_t x = 0;

	for (; m != NULL; m = m->next) {
		const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);

		for (uint32_t off = 0; off < m->data_len; off += RTE_CACHE_LINE_SIZE)
			x ^= p[off];
	}
	touched ^= x;
}

static uint64_t
drain(uint16_t port, uint64_t *frames)
{
	struct rte_mbuf *rx[BURST];
	uint64_t bytes = 0;
	uint16_t n = rte_eth_rx_burst(port, 0, rx, BURST);

	for (uint16_t i = 0; i < n; i++) {
		touch_frame(rx[i]);
		bytes += rx[i]->pkt_len - HDRS;
	}
	*frames += n;
	rte_pktmbuf_free_bulk(rx, n);
	return bytes;
}

static void
tick(uint64_t bytes)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	printf("TICK ns=%" PRIu64 " bytes=%" PRIu64 "\n",
	       (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec, bytes);
	fflush(stdout);
}

static void
switch_run(const char *mode, double seconds, uint32_t tick_ms)
{
	/*
	 * Sent frames in one mbuf of 64 KiB (one descriptor per frame), so
	 * that the generator's own cost per frame stays small next to the
	 * switch's. Receive buffers as the receiving guest would post them:
	 * 64 KiB for one that takes whole TSO frames (pass: a Linux guest's
	 * "big packets" receive mode, one buffer per frame), standard 2 KiB
	 * mbufs for one that takes frames of MTU size (seg, mtu). A 1514-byte
	 * frame in a 64 KiB buffer is no guest's layout, and it made those
	 * two paths slower (doc/performance.rst, "Offloads").
	 */
	bool tso = strcmp(mode, "mtu") != 0, lro = strcmp(mode, "pass") == 0;
	struct rte_mempool *rx_mp;

	mp = rte_pktmbuf_pool_create("bench_big", 1536, 64, 0, UINT16_MAX, rte_socket_id());
	if (mp == NULL)
		die("no 64 KiB mbuf pool");
	rx_mp = lro ? mp
		    : rte_pktmbuf_pool_create("bench_rx", 4095, 64, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
					      rte_socket_id());
	if (rx_mp == NULL)
		die("no receive mbuf pool");
	struct rte_ether_addr a, b;
	struct rte_mbuf *tmpl, *tx[BURST], *learn;
	uint64_t bytes = 0, frames = 0, t0, t_end, warm_end, window;
	uint64_t total_tx = 0;                      /* frames sent */
	uint64_t total_rx_frames = 0, rx_units = 0; /* received, in sent frames */
	uint64_t last_rx = 0, prev_turn, next_tick, all_bytes = 0;
	uint64_t tick_every = (uint64_t)tick_ms * rte_get_tsc_hz() / 1000;
	uint32_t len, per_frame;

	if (rte_eth_dev_count_avail() < 2)
		die("two virtio-user vdevs needed");
	port_setup(0, rx_mp, 0,
		   tso ? RTE_ETH_TX_OFFLOAD_TCP_TSO | RTE_ETH_TX_OFFLOAD_TCP_CKSUM |
				   RTE_ETH_TX_OFFLOAD_MULTI_SEGS
		       : 0);
	port_setup(1, rx_mp, lro ? RTE_ETH_RX_OFFLOAD_TCP_LRO | RTE_ETH_RX_OFFLOAD_TCP_CKSUM : 0,
		   0);
	rte_eth_macaddr_get(0, &a);
	rte_eth_macaddr_get(1, &b);
	/* the receiver speaks first: the switch learns it, the traffic is known unicast */
	len = make_frame(0, &b, &a);
	learn = frame_mbuf(len);
	while (rte_eth_tx_burst(1, 0, &learn, 1) == 0)
		;
	len = make_frame(tso ? TSO_PAYLOAD : MSS, &a, &b);
	/* what one sent frame becomes at the receiver */
	per_frame = strcmp(mode, "seg") == 0 ? (TSO_PAYLOAD + MSS - 1) / MSS : 1;
	tmpl = frame_mbuf(len);
	if (tso) {
		tmpl->ol_flags =
			RTE_MBUF_F_TX_TCP_SEG | RTE_MBUF_F_TX_TCP_CKSUM | RTE_MBUF_F_TX_IPV4;
		tmpl->l2_len = 14;
		tmpl->l3_len = 20;
		tmpl->l4_len = 32;
		tmpl->tso_segsz = MSS;
		if (rte_eth_tx_prepare(0, 0, &tmpl, 1) != 1)
			die("tx_prepare");
	} else {
		struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod_offset(tmpl, struct rte_ipv4_hdr *, 14);
		struct rte_tcp_hdr *tcp = (struct rte_tcp_hdr *)(ip + 1);

		tcp->cksum = 0;
		tcp->cksum = rte_ipv4_udptcp_cksum(ip, tcp);
	}
	t0 = rte_rdtsc();
	warm_end = t0 + rte_get_tsc_hz();
	t_end = warm_end + (uint64_t)(seconds * rte_get_tsc_hz());
	/*
	 * A window of frames in flight: more than the receiver's ring holds
	 * would only make the switch drop.
	 */
	window = getenv("HV_BENCH_WINDOW") ? (uint64_t)atoi(getenv("HV_BENCH_WINDOW"))
		 : tso                     ? 8
					   : 512;
	prev_turn = next_tick = t0;
	while (!stop) {
		uint64_t now = rte_rdtsc(), got, b;
		uint16_t sent, want;

		if (now >= t_end)
			break;
		/* paused with the switch (SIGSTOP) and resumed: nothing was dropped */
		if (now - prev_turn > rte_get_tsc_hz() / 10)
			last_rx = now;
		prev_turn = now;
		if (tick_every != 0 && now >= next_tick) {
			tick(all_bytes);
			next_tick = now + tick_every;
		}
		if (now >= warm_end && t0 < warm_end) {
			bytes = frames = 0;
			t0 = warm_end;
		}
		do {
			got = frames;
			b = drain(1, &frames);
			bytes += b;
			all_bytes += b;
			rx_units += frames - got;
			if (frames != got)
				last_rx = now;
			if (rx_units >= per_frame) {
				total_rx_frames += rx_units / per_frame;
				rx_units %= per_frame;
			}
		} while (frames != got);
		want = (uint16_t)RTE_MIN((uint64_t)BURST,
					 window - RTE_MIN(window, total_tx - total_rx_frames));
		if (want == 0) {
			/* a frame the switch dropped never comes: do not wait for it forever */
			if (now - last_rx > rte_get_tsc_hz() / 100) {
				total_rx_frames = total_tx;
				last_rx = now;
			}
			continue;
		}
		/* the same frame each time: one reference per queued copy */
		for (int i = 0; i < want; i++)
			tx[i] = tmpl;
		rte_pktmbuf_refcnt_update(tmpl, want);
		sent = rte_eth_tx_burst(0, 0, tx, want);
		if (sent < want)
			rte_pktmbuf_refcnt_update(tmpl, (int16_t)(sent - want));
		total_tx += sent;
	}
	seconds = (double)(rte_rdtsc() - t0) / rte_get_tsc_hz();
	printf("SWITCH mode=%s gbps=%.2f frames_per_s=%.0f\n", mode, bytes * 8 / seconds / 1e9,
	       frames / seconds);
	rte_eth_dev_stop(0);
	rte_eth_dev_stop(1);
	rte_pktmbuf_free(tmpl);
}

int
main(int argc, char **argv)
{
	int used = rte_eal_init(argc, argv);

	if (used < 0)
		die("EAL init failed");
	argc -= used;
	argv += used;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (hv_offload_mbuf_register() != 0)
		die("dynfield");
	mp = rte_pktmbuf_pool_create("bench", 16383, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				     rte_socket_id());
	if (mp == NULL)
		die("no mempool");
	if (argc >= 2 && strcmp(argv[1], "micro") == 0) {
		double s = argc >= 3 ? atof(argv[2]) : 3;

		for (int copy = 0; copy <= 1; copy++) {
			micro_run(RTE_GSO, copy, s);
			micro_run(OURS_PARTIAL, copy, s);
			micro_run(OURS_FULL, copy, s);
		}
	} else if (argc >= 4 && strcmp(argv[1], "switch") == 0) {
		switch_run(argv[2], atof(argv[3]), argc >= 5 ? (uint32_t)atoi(argv[4]) : 0);
	} else {
		die("usage: bench_offload [EAL] -- micro [SECONDS] | "
		    "switch pass|seg|mtu SECONDS [TICK_MS]");
	}
	rte_eal_cleanup();
	return 0;
}
