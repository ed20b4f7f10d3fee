/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hv_pktgen: the traffic generator of the vhost-user benchmark
 * (tests/perf/bench_vhost.sh).
 *
 * Two virtio-user frontends (given with --vdev on the EAL command line) are
 * connected to the two ports of a device under test (DUT) that forwards
 * port 0 <-> port 1. Everything runs on the main lcore: each loop turn sends
 * one burst of prebuilt UDP frames on port 0 and receives what the DUT
 * forwarded to port 1. After a warm-up, frames and bytes received during a
 * measured window are counted and one line is printed:
 *
 *   RESULT size=64 rx_pps=... tx_pps=... rx_bps=... ...
 *
 * Like a guest, it reads the Ethernet header of every frame it receives
 * (counting the multicast ones: rx_mcast): each received buffer's first line
 * then moves to the generator's core, as into a real guest, whichever
 * virtio-user path runs (the scalar ones read it for their statistics, the
 * AVX-512 ones do not).
 *
 * The frames are never copied: the TX pool is filled with the template once,
 * and since a freed mbuf keeps its data, each burst only allocates mbufs and
 * sets their lengths. The virtio-net header goes in the headroom (one
 * descriptor per frame), as a DPDK guest sends it.
 *
 * For switches (tests/perf/bench_switch.sh) there is more:
 *
 *   --ports N       N virtio-user vdevs instead of two. Traffic still flows
 *                   port 0 -> port 1 only; ports 2..N-1 are connected and
 *                   started (the DUT sees N live guests) and only drained
 *                   now and then.
 *   --src-macs K    port 0's frames cycle their source MAC over K addresses
 *   --dst-macs K    and their destination MAC over K addresses; then the 12
 *                   MAC bytes are written into each frame before it is sent
 *                   (the rest of the frame still comes from the template).
 *                   Sources are 02:00:XX:XX:XX:XX with an odd 32-bit tail
 *                   (2i+1), destinations with an even one (2j+2), so K = 1
 *                   gives the default 02:00:00:00:00:01 -> ...:02.
 *   --learn-first   before the warm-up, teach the DUT where every address
 *                   is: a probe frame from port 0 (source 0 -> destination
 *                   0), repeated until something comes out of port 1 (the
 *                   DUT forwards); then, twice, one frame from port 1 for
 *                   each destination address (source dst_j -> src_0) and one
 *                   from port 0 for each source address (src_i -> dst_0),
 *                   paced (256 frames, then drain every port and sleep 1 ms)
 *                   so that a switch whose control thread learns can keep
 *                   up. A learning switch then knows the K destinations on
 *                   port 1 and the K sources on port 0, and forwards the
 *                   measured traffic as known unicast (no flooding).
 *
 * Extra RESULT fields then: ports, src_macs, dst_macs, learn_sent (learning
 * frames sent), learn_rx (learning frames that came back out of port 0 or 1).
 *
 * For runs that take turns on one CPU (bench_switch.sh, HV_BENCH_SLICES):
 *
 *   --report-ms N   every N ms of traffic, one line
 *                     TICK ns=<CLOCK_REALTIME> rx_pkts=<since start> tx_pkts=..
 *                       tx_calls=.. tx_full=..
 *                   A script that stops this process and its DUT (SIGSTOP)
 *                   reads each turn's rate from the ticks inside the turn. A
 *                   gap of more than 100 ms between two loop turns is such a
 *                   pause, not a stall of the DUT. tx_full over tx_calls
 *                   within a turn is the share of bursts the DUT's ring did
 *                   not take whole: near 100 %, the DUT is the bottleneck.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_udp.h>

#include "thread_times.h"

#define NB_PORTS 2 /* default number of ports */
#define MAX_PORTS RTE_MAX_ETHPORTS
#define MAX_MACS (1u << 22)
#define LEARN_POOL_SIZE 2047
#define LEARN_CHUNK 256
#define TX_PORT 0
#define RX_PORT 1
#define MAX_BURST 64
#define RING_SIZE 1024
#define TX_POOL_SIZE 4095
#define RX_POOL_SIZE 8191
#define POOL_CACHE 256
#define MIN_SIZE 60
#define MAX_SIZE 1518

static volatile bool quit;
static uint16_t nb_ports = NB_PORTS;

/*
 * Address sets: 02:00 then a 32-bit big-endian tail, odd for sources (2i+1),
 * even for destinations (2j+2).
 */
#define SRC_TAIL(i) (2u * (uint32_t)(i) + 1u)
#define DST_TAIL(j) (2u * (uint32_t)(j) + 2u)

/* Where the next frame's addresses are in their sets (--src-macs, --dst-macs). */
struct mac_cursor {
	uint32_t n_src, n_dst;
	uint32_t src, dst;
};

/* Write the tails of destination @dst and source @src into a frame (02:00 is there). */
static inline void
put_macs(uint8_t *frame, uint32_t dst, uint32_t src)
{
	uint32_t d = rte_cpu_to_be_32(dst), s = rte_cpu_to_be_32(src);

	frame[0] = 0x02;
	frame[1] = 0x00;
	memcpy(frame + 2, &d, 4);
	frame[6] = 0x02;
	frame[7] = 0x00;
	memcpy(frame + 8, &s, 4);
}

struct options {
	unsigned int size;
	unsigned int burst;
	double warmup_s;
	double duration_s;
	double link_timeout_s;
	long watch_pid;
	unsigned int ports;
	unsigned int src_macs;
	unsigned int dst_macs;
	bool learn_first;
	unsigned int report_ms;
};

/* TICK lines (--report-ms) and pauses of the whole process. */
struct ticker {
	uint64_t every; /* TSC cycles between ticks, 0: none */
	uint64_t next;  /* TSC of the next tick */
	uint64_t pause; /* a loop turn this much later than the last was a pause */
	/* totals of the phases before this one */
	uint64_t rx, tx, tx_calls, tx_full;
};

/* Counters of one phase (warm-up or measured window). */
struct counts {
	uint64_t tx_pkts;  /* frames the TX ring took */
	uint64_t rx_pkts;  /* frames received on port 1 */
	uint64_t rx_bytes; /* their bytes (pkt_len) */
	uint64_t rx_mcast; /* of them multicast or broadcast (read from each frame) */
	uint64_t tx_calls; /* tx_burst calls */
	uint64_t tx_full;  /* tx_burst calls that did not take everything */
	uint64_t rx_calls; /* rx_burst calls */
	uint64_t rx_empty; /* rx_burst calls that returned nothing */
};

static void
on_signal(int sig)
{
	(void)sig;
	quit = true;
}

static void
usage(const char *prog)
{
	printf("usage: %s [EAL options with two net_virtio_user vdevs] -- [options]\n"
	       "  --size N          frame length in bytes, no FCS (%u..%u, default 64)\n"
	       "  --burst N         frames per TX burst (1..%u, default 32)\n"
	       "  --warmup-s S      seconds of traffic before measuring (default 2)\n"
	       "  --duration-s S    seconds measured (default 10)\n"
	       "  --link-timeout-s S  seconds to wait for both links (default 10)\n"
	       "  --watch-pid PID   report the CPU use of this process's threads (the DUT)\n"
	       "                    during the measured window\n"
	       "  --ports N         number of net_virtio_user vdevs (2..%u, default 2); traffic\n"
	       "                    goes from port 0 to port 1, the others are only attached\n"
	       "  --src-macs K      cycle the source MAC over K addresses (1..%u, default 1)\n"
	       "  --dst-macs K      cycle the destination MAC over K addresses (default 1)\n"
	       "  --learn-first     before the warm-up, make a learning switch learn every\n"
	       "                    destination MAC on port 1 and every source MAC on port 0\n"
	       "  --report-ms N     print a TICK line (time, frames so far) every N ms "
	       "(1..10000)\n",
	       prog, MIN_SIZE, MAX_SIZE, MAX_BURST, MAX_PORTS, MAX_MACS);
}

static int
parse_double(const char *s, double lo, double hi, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

static int
parse_uint(const char *s, unsigned long lo, unsigned long hi, unsigned int *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi)
		return -1;
	*out = (unsigned int)v;
	return 0;
}

static int
parse_args(struct options *o, int argc, char **argv)
{
	static const struct option opts[] = {
		{"size", required_argument, NULL, 's'},
		{"burst", required_argument, NULL, 'b'},
		{"warmup-s", required_argument, NULL, 'w'},
		{"duration-s", required_argument, NULL, 'd'},
		{"link-timeout-s", required_argument, NULL, 'l'},
		{"watch-pid", required_argument, NULL, 'p'},
		{"ports", required_argument, NULL, 'n'},
		{"src-macs", required_argument, NULL, 'S'},
		{"dst-macs", required_argument, NULL, 'D'},
		{"learn-first", no_argument, NULL, 'L'},
		{"report-ms", required_argument, NULL, 'r'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int opt, rc = 0;

	*o = (struct options){.size = 64,
			      .burst = 32,
			      .warmup_s = 2,
			      .duration_s = 10,
			      .link_timeout_s = 10,
			      .ports = NB_PORTS,
			      .src_macs = 1,
			      .dst_macs = 1};
	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 's':
			rc = parse_uint(optarg, MIN_SIZE, MAX_SIZE, &o->size);
			break;
		case 'b':
			rc = parse_uint(optarg, 1, MAX_BURST, &o->burst);
			break;
		case 'w':
			rc = parse_double(optarg, 0, 3600, &o->warmup_s);
			break;
		case 'd':
			rc = parse_double(optarg, 0.1, 3600, &o->duration_s);
			break;
		case 'l':
			rc = parse_double(optarg, 0.1, 3600, &o->link_timeout_s);
			break;
		case 'p': {
			unsigned int pid;

			rc = parse_uint(optarg, 1, INT32_MAX, &pid);
			o->watch_pid = pid;
			break;
		}
		case 'n':
			rc = parse_uint(optarg, 2, MAX_PORTS, &o->ports);
			break;
		case 'S':
			rc = parse_uint(optarg, 1, MAX_MACS, &o->src_macs);
			break;
		case 'D':
			rc = parse_uint(optarg, 1, MAX_MACS, &o->dst_macs);
			break;
		case 'L':
			o->learn_first = true;
			break;
		case 'r':
			rc = parse_uint(optarg, 1, 10000, &o->report_ms);
			break;
		case 'h':
			usage(argv[0]);
			exit(0);
		default:
			usage(argv[0]);
			return -1;
		}
		if (rc != 0) {
			fprintf(stderr, "hv_pktgen: bad option value '%s'\n", optarg);
			return -1;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "hv_pktgen: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	return 0;
}

/* An Ethernet/IPv4/UDP frame of @size bytes. */
static void
build_frame(uint8_t *buf, unsigned int size)
{
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)buf;
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip + 1);
	unsigned int l3_len = size - sizeof(*eth);
	static const struct rte_ether_addr src = {{0x02, 0x00, 0x00, 0x00, 0x00, 0x01}};
	static const struct rte_ether_addr dst = {{0x02, 0x00, 0x00, 0x00, 0x00, 0x02}};

	memset(buf, 0, size);
	rte_ether_addr_copy(&dst, &eth->dst_addr);
	rte_ether_addr_copy(&src, &eth->src_addr);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->total_length = rte_cpu_to_be_16((uint16_t)l3_len);
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->src_addr = rte_cpu_to_be_32(RTE_IPV4(198, 18, 0, 1));
	ip->dst_addr = rte_cpu_to_be_32(RTE_IPV4(198, 19, 0, 1));
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	udp->src_port = rte_cpu_to_be_16(1024);
	udp->dst_port = rte_cpu_to_be_16(1025);
	udp->dgram_len = rte_cpu_to_be_16((uint16_t)(l3_len - sizeof(*ip)));
	for (unsigned int i = sizeof(*eth) + sizeof(*ip) + sizeof(*udp); i < size; i++)
		buf[i] = (uint8_t)i;
}

/*
 * Write the template into every mbuf of the pool: an mbuf keeps its data when
 * freed, so later allocations need no copy.
 */
static int
prefill_pool(struct rte_mempool *mp, unsigned int n, unsigned int size)
{
	struct rte_mbuf **all = calloc(n, sizeof(*all));
	uint8_t tmpl[MAX_SIZE];

	if (all == NULL)
		return -ENOMEM;
	if (rte_pktmbuf_alloc_bulk(mp, all, n) != 0) {
		free(all);
		return -ENOBUFS;
	}
	build_frame(tmpl, size);
	for (unsigned int i = 0; i < n; i++)
		memcpy(rte_pktmbuf_mtod(all[i], void *), tmpl, size);
	rte_pktmbuf_free_bulk(all, n);
	free(all);
	return 0;
}

static double
thread_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int
port_setup(uint16_t port, struct rte_mempool *rx_mp)
{
	struct rte_eth_conf conf = {0};
	int rc;

	rc = rte_eth_dev_configure(port, 1, 1, &conf);
	if (rc == 0)
		rc = rte_eth_rx_queue_setup(port, 0, RING_SIZE, rte_socket_id(), NULL, rx_mp);
	if (rc == 0)
		rc = rte_eth_tx_queue_setup(port, 0, RING_SIZE, rte_socket_id(), NULL);
	if (rc == 0)
		rc = rte_eth_dev_start(port);
	if (rc != 0)
		fprintf(stderr, "hv_pktgen: port %u setup: %s\n", port, rte_strerror(-rc));
	return rc;
}

static bool
links_up(void)
{
	for (uint16_t p = 0; p < nb_ports; p++) {
		struct rte_eth_link link;

		if (rte_eth_link_get_nowait(p, &link) != 0 || !link.link_status)
			return false;
	}
	return true;
}

static inline void
drain_port(uint16_t port, struct counts *c)
{
	struct rte_mbuf *rx[MAX_BURST];
	uint16_t n;

	n = rte_eth_rx_burst(port, 0, rx, MAX_BURST);
	c->rx_calls++;
	if (n == 0) {
		c->rx_empty++;
		return;
	}
	c->rx_pkts += n;
	for (uint16_t i = 0; i < n; i++) {
		const struct rte_ether_hdr *eth =
			rte_pktmbuf_mtod(rx[i], const struct rte_ether_hdr *);

		c->rx_bytes += rx[i]->pkt_len;
		c->rx_mcast += rte_is_multicast_ether_addr(&eth->dst_addr);
	}
	rte_pktmbuf_free_bulk(rx, n);
}

/* One TICK line: the time and the frames of every phase so far. */
static void
tick(struct ticker *t, const struct counts *c, uint64_t now)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	printf("TICK ns=%" PRIu64 " rx_pkts=%" PRIu64 " tx_pkts=%" PRIu64 " tx_calls=%" PRIu64
	       " tx_full=%" PRIu64 "\n",
	       (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec, t->rx + c->rx_pkts,
	       t->tx + c->tx_pkts, t->tx_calls + c->tx_calls, t->tx_full + c->tx_full);
	fflush(stdout);
	t->next = now + t->every;
}

/*
 * Send and receive until @until (TSC) or a stall of @stall_cycles with nothing
 * received. @pend/@npend carry frames the TX ring did not take over to the
 * next call.
 * @return 0, or -1 on a stall.
 */
static int
run_phase(const struct options *o, struct rte_mempool *tx_mp, struct rte_mbuf **pend,
	  uint16_t *npend, uint64_t until, uint64_t stall_cycles, struct counts *c,
	  struct mac_cursor *mc, struct ticker *tk)
{
	uint64_t last_rx = rte_rdtsc(), now, prev_turn = last_rx;
	uint16_t burst = (uint16_t)o->burst;
	uint32_t turn = 0;
	bool vary = mc->n_src > 1 || mc->n_dst > 1;

	while (!quit) {
		uint16_t have = *npend, sent;
		uint64_t rx_before = c->rx_pkts;

		if (have < burst) {
			if (rte_pktmbuf_alloc_bulk(tx_mp, pend + have, burst - have) == 0) {
				for (uint16_t i = have; i < burst; i++) {
					pend[i]->data_len = (uint16_t)o->size;
					pend[i]->pkt_len = o->size;
				}
				if (vary) {
					for (uint16_t i = have; i < burst; i++) {
						put_macs(rte_pktmbuf_mtod(pend[i], uint8_t *),
							 DST_TAIL(mc->dst), SRC_TAIL(mc->src));
						if (++mc->src == mc->n_src)
							mc->src = 0;
						if (++mc->dst == mc->n_dst)
							mc->dst = 0;
					}
				}
				have = burst;
			}
		}
		sent = have ? rte_eth_tx_burst(TX_PORT, 0, pend, have) : 0;
		c->tx_calls++;
		c->tx_pkts += sent;
		if (sent < have) {
			c->tx_full++;
			memmove(pend, pend + sent, (have - sent) * sizeof(*pend));
		}
		*npend = have - sent;
		drain_port(RX_PORT, c);
		/*
		 * nothing is expected back on port 0 (nor on the extra ports); keep
		 * their rings empty all the same
		 */
		if ((++turn & 63) == 0) {
			struct counts junk = {0};

			drain_port(TX_PORT, &junk);
			for (uint16_t p = NB_PORTS; p < nb_ports; p++)
				drain_port(p, &junk);
		}
		if (c->rx_pkts != rx_before) {
			last_rx = rte_rdtsc();
			now = last_rx;
		} else {
			now = rte_rdtsc();
			/* stopped with the DUT (SIGSTOP) and resumed: no stall */
			if (now - prev_turn > tk->pause)
				last_rx = now;
			if (now - last_rx > stall_cycles)
				return -1;
		}
		prev_turn = now;
		if (tk->every && now >= tk->next)
			tick(tk, c, now);
		if (now >= until)
			return 0;
	}
	return 0;
}

/* Receive and free everything waiting on every port; @return frames from ports 0 and 1. */
static uint64_t
drain_all(void)
{
	uint64_t n01 = 0;

	for (uint16_t p = 0; p < nb_ports; p++) {
		struct counts c = {0};

		for (int i = 0; i < 64; i++) {
			drain_port(p, &c);
			if (c.rx_empty)
				break;
		}
		if (p == TX_PORT || p == RX_PORT)
			n01 += c.rx_pkts;
	}
	return n01;
}

/*
 * Send @n learning frames (64 bytes) on @port, numbers @first.. of a set:
 * from port 1, source DST_TAIL(k) to SRC_TAIL(0); from port 0, source
 * SRC_TAIL(k) to DST_TAIL(0). Waits (1 s at most) while the ring or the pool
 * is full. @return frames sent.
 */
static unsigned int
learn_send(struct rte_mempool *mp, const uint8_t *tmpl, uint16_t port, uint32_t first,
	   unsigned int n)
{
	struct rte_mbuf *m[LEARN_CHUNK];
	uint64_t deadline = rte_rdtsc() + rte_get_tsc_hz();
	unsigned int done = 0;

	while (done < n && !quit) {
		unsigned int want = RTE_MIN(n - done, (unsigned int)LEARN_CHUNK), sent = 0;

		if (rte_pktmbuf_alloc_bulk(mp, m, want) != 0) {
			if (rte_rdtsc() > deadline)
				break;
			drain_all();
			rte_delay_us_sleep(100);
			continue;
		}
		for (unsigned int i = 0; i < want; i++) {
			uint8_t *d = rte_pktmbuf_mtod(m[i], uint8_t *);
			uint32_t k = first + done + i;

			memcpy(d, tmpl, 64);
			if (port == RX_PORT)
				put_macs(d, SRC_TAIL(0), DST_TAIL(k));
			else
				put_macs(d, DST_TAIL(0), SRC_TAIL(k));
			m[i]->data_len = 64;
			m[i]->pkt_len = 64;
		}
		while (sent < want && rte_rdtsc() <= deadline)
			sent += rte_eth_tx_burst(port, 0, m + sent, (uint16_t)(want - sent));
		if (sent < want)
			rte_pktmbuf_free_bulk(m + sent, want - sent);
		done += sent;
		if (sent < want)
			break;
	}
	return done;
}

/*
 * --learn-first: probe until the DUT forwards port 0 -> port 1, then teach it
 * the destination set on port 1 and the source set on port 0 (twice, paced).
 * @return 0, or -1 when the probe never came through.
 */
static int
learn_first(const struct options *o, struct rte_mempool *mp, uint64_t *sent, uint64_t *rx)
{
	uint64_t hz = rte_get_tsc_hz(), deadline = rte_rdtsc() + (uint64_t)(o->link_timeout_s * hz);
	uint8_t tmpl[64];
	bool through = false;

	build_frame(tmpl, 64);
	*sent = *rx = 0;
	while (!through && !quit && rte_rdtsc() < deadline) {
		uint64_t until = rte_rdtsc() + hz / 10;

		*sent += learn_send(mp, tmpl, TX_PORT, 0, 1);
		while (!through && rte_rdtsc() < until) {
			struct counts c = {0};

			drain_port(RX_PORT, &c);
			through = c.rx_pkts > 0;
			*rx += c.rx_pkts;
			if (!through)
				rte_delay_us_sleep(1000);
		}
	}
	if (!through) {
		fprintf(stderr,
			"hv_pktgen: learning probe: nothing came out of port 1 after %.1f s\n",
			o->link_timeout_s);
		return -1;
	}
	for (int pass = 0; pass < 2 && !quit; pass++) {
		for (int side = 0; side < 2; side++) {
			uint16_t port = side == 0 ? RX_PORT : TX_PORT;
			uint32_t k = side == 0 ? o->dst_macs : o->src_macs;

			for (uint32_t first = 0; first < k && !quit; first += LEARN_CHUNK) {
				*sent += learn_send(mp, tmpl, port, first,
						    RTE_MIN(k - first, (uint32_t)LEARN_CHUNK));
				rte_delay_us_sleep(1000);
				*rx += drain_all();
			}
		}
	}
	/* let the control thread apply what is queued */
	rte_delay_us_sleep(200 * 1000);
	*rx += drain_all();
	return 0;
}

static void
print_stall(const char *phase, const struct counts *c)
{
	struct rte_eth_stats s[NB_PORTS];

	for (uint16_t p = 0; p < NB_PORTS; p++)
		rte_eth_stats_get(p, &s[p]);
	fprintf(stderr,
		"hv_pktgen: STALL during %s: tx %" PRIu64 " rx %" PRIu64 " tx_full %" PRIu64
		"/%" PRIu64 "; port0 opackets %" PRIu64 " port1 ipackets %" PRIu64
		" imissed %" PRIu64 " rx_nombuf %" PRIu64 "\n",
		phase, c->tx_pkts, c->rx_pkts, c->tx_full, c->tx_calls, s[0].opackets,
		s[1].ipackets, s[1].imissed, s[1].rx_nombuf);
}

int
main(int argc, char **argv)
{
	struct rte_mbuf *pend[MAX_BURST];
	struct rte_mempool *tx_mp, *rx_mp, *learn_mp = NULL;
	struct counts warm = {0}, meas = {0};
	struct ticker tk = {0};
	struct mac_cursor mc = {0};
	uint64_t learn_sent = 0, learn_rx = 0;
	struct thread_times dut0 = {0}, dut1 = {0};
	struct options o;
	uint16_t npend = 0;
	uint64_t hz, t0, t1, deadline;
	double secs, cpu0, cpu1, dut_fwd = -1, dut_other = -1;
	int n, rc = 1;

	n = rte_eal_init(argc, argv);
	if (n < 0) {
		fprintf(stderr, "hv_pktgen: EAL init failed: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	argc -= n;
	argv += n;
	if (parse_args(&o, argc, argv) != 0)
		goto out_eal;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (rte_eth_dev_count_avail() != o.ports) {
		fprintf(stderr,
			"hv_pktgen: need exactly %u ports (net_virtio_user vdevs), "
			"have %u\n",
			o.ports, rte_eth_dev_count_avail());
		goto out_eal;
	}
	nb_ports = (uint16_t)o.ports;
	mc.n_src = o.src_macs;
	mc.n_dst = o.dst_macs;
	tx_mp = rte_pktmbuf_pool_create("gen_tx", TX_POOL_SIZE, POOL_CACHE, 0,
					RTE_MBUF_DEFAULT_BUF_SIZE, rte_socket_id());
	/* every RX ring is filled at start: room for the extra ports' rings */
	rx_mp = rte_pktmbuf_pool_create("gen_rx", RX_POOL_SIZE + (o.ports - NB_PORTS) * RING_SIZE,
					POOL_CACHE, 0, RTE_MBUF_DEFAULT_BUF_SIZE, rte_socket_id());
	if (o.learn_first)
		learn_mp = rte_pktmbuf_pool_create("gen_learn", 2 * LEARN_POOL_SIZE + 1, POOL_CACHE,
						   0, RTE_PKTMBUF_HEADROOM + 128, rte_socket_id());
	if (tx_mp == NULL || rx_mp == NULL || (o.learn_first && learn_mp == NULL)) {
		fprintf(stderr, "hv_pktgen: mbuf pools: %s\n", rte_strerror(rte_errno));
		goto out_pools;
	}
	if (prefill_pool(tx_mp, TX_POOL_SIZE, o.size) != 0) {
		fprintf(stderr, "hv_pktgen: cannot prefill the TX pool\n");
		goto out_pools;
	}
	for (uint16_t p = 0; p < nb_ports; p++)
		if (port_setup(p, rx_mp) != 0)
			goto out_ports;

	hz = rte_get_tsc_hz();
	deadline = rte_rdtsc() + (uint64_t)(o.link_timeout_s * hz);
	while (!links_up()) {
		if (quit || rte_rdtsc() > deadline) {
			fprintf(stderr, "hv_pktgen: links not up after %.1f s\n", o.link_timeout_s);
			goto out_ports;
		}
		rte_delay_us_sleep(10 * 1000);
	}

	if (o.learn_first && learn_first(&o, learn_mp, &learn_sent, &learn_rx) != 0)
		goto out_ports;

	tk.every = (uint64_t)o.report_ms * hz / 1000;
	tk.pause = hz / 10;
	/* warm-up: also waits for the DUT to start its rings (stall limit: link timeout) */
	t0 = rte_rdtsc();
	tk.next = t0;
	if (run_phase(&o, tx_mp, pend, &npend, t0 + (uint64_t)(o.warmup_s * hz),
		      (uint64_t)(o.link_timeout_s * hz), &warm, &mc, &tk) != 0) {
		print_stall("warm-up", &warm);
		goto out_ports;
	}
	if (o.watch_pid)
		thread_times_read(o.watch_pid, &dut0);
	cpu0 = thread_cpu_s();
	t0 = rte_rdtsc();
	tk.rx = warm.rx_pkts;
	tk.tx = warm.tx_pkts;
	tk.tx_calls = warm.tx_calls;
	tk.tx_full = warm.tx_full;
	if (run_phase(&o, tx_mp, pend, &npend, t0 + (uint64_t)(o.duration_s * hz), hz, &meas, &mc,
		      &tk) != 0) {
		print_stall("measurement", &meas);
		goto out_ports;
	}
	t1 = rte_rdtsc();
	cpu1 = thread_cpu_s();
	if (o.watch_pid) {
		thread_times_read(o.watch_pid, &dut1);
		thread_times_diff(&dut0, &dut1, (double)(t1 - t0) / hz, &dut_fwd, &dut_other);
	}
	if (quit) {
		fprintf(stderr, "hv_pktgen: interrupted\n");
		goto out_ports;
	}
	secs = (double)(t1 - t0) / hz;
	printf("RESULT size=%u rx_pps=%.0f tx_pps=%.0f rx_bps=%.0f rx_pkts=%" PRIu64
	       " tx_pkts=%" PRIu64 " duration_s=%.3f tx_full_pct=%.1f rx_empty_pct=%.1f"
	       " gen_cpu_pct=%.1f dut_fwd_cpu_pct=%.1f dut_other_cpu_pct=%.1f"
	       " ports=%u src_macs=%u dst_macs=%u learn_sent=%" PRIu64 " learn_rx=%" PRIu64
	       " rx_mcast=%" PRIu64 "\n",
	       o.size, meas.rx_pkts / secs, meas.tx_pkts / secs, meas.rx_bytes * 8.0 / secs,
	       meas.rx_pkts, meas.tx_pkts, secs,
	       meas.tx_calls ? 100.0 * meas.tx_full / meas.tx_calls : 0.0,
	       meas.rx_calls ? 100.0 * meas.rx_empty / meas.rx_calls : 0.0,
	       100.0 * (cpu1 - cpu0) / secs, dut_fwd, dut_other, o.ports, o.src_macs, o.dst_macs,
	       learn_sent, learn_rx, meas.rx_mcast);
	fflush(stdout);
	rc = 0;
out_ports:
	if (npend)
		rte_pktmbuf_free_bulk(pend, npend);
	for (uint16_t p = 0; p < nb_ports; p++) {
		rte_eth_dev_stop(p);
		rte_eth_dev_close(p);
	}
out_pools:
	rte_mempool_free(tx_mp);
	rte_mempool_free(rx_mp);
	rte_mempool_free(learn_mp);
out_eal:
	rte_eal_cleanup();
	return rc;
}
