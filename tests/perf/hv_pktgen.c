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
 * The frames are never copied: the TX pool is filled with the template once,
 * and since a freed mbuf keeps its data, each burst only allocates mbufs and
 * sets their lengths. The virtio-net header goes in the headroom (one
 * descriptor per frame), as a DPDK guest sends it.
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

#include <dirent.h>

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

#define NB_PORTS 2
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

struct options {
	unsigned int size;
	unsigned int burst;
	double warmup_s;
	double duration_s;
	double link_timeout_s;
	long watch_pid;
};

#define MAX_WATCHED_THREADS 64

/* CPU time of the threads of the DUT, sampled at both ends of the window. */
struct thread_times {
	unsigned int n;
	long tid[MAX_WATCHED_THREADS];
	unsigned long long ticks[MAX_WATCHED_THREADS];
};

/* Counters of one phase (warm-up or measured window). */
struct counts {
	uint64_t tx_pkts;    /* frames the TX ring took */
	uint64_t rx_pkts;    /* frames received on port 1 */
	uint64_t rx_bytes;   /* their bytes (pkt_len) */
	uint64_t tx_calls;   /* tx_burst calls */
	uint64_t tx_full;    /* tx_burst calls that did not take everything */
	uint64_t rx_calls;   /* rx_burst calls */
	uint64_t rx_empty;   /* rx_burst calls that returned nothing */
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
	       "                    during the measured window\n",
	       prog, MIN_SIZE, MAX_SIZE, MAX_BURST);
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
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int opt, rc = 0;

	*o = (struct options){.size = 64, .burst = 32, .warmup_s = 2, .duration_s = 10,
			      .link_timeout_s = 10};
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

/* utime + stime of every thread of @pid, in clock ticks. */
static void
thread_times_read(long pid, struct thread_times *t)
{
	char path[320];
	struct dirent *e;
	DIR *d;

	t->n = 0;
	snprintf(path, sizeof(path), "/proc/%ld/task", pid);
	d = opendir(path);
	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL && t->n < MAX_WATCHED_THREADS) {
		char buf[1024], *p;
		unsigned long long ut, st;
		size_t len;
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/task/%s/stat", pid, e->d_name);
		f = fopen(path, "r");
		if (f == NULL)
			continue;
		len = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[len] = '\0';
		/* the command name may hold spaces: fields restart after its ')' */
		p = strrchr(buf, ')');
		if (p == NULL ||
		    sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
			   &ut, &st) != 2)
			continue;
		t->tid[t->n] = strtol(e->d_name, NULL, 10);
		t->ticks[t->n] = ut + st;
		t->n++;
	}
	closedir(d);
}

/*
 * Share of one CPU used over @secs by the busiest thread (the forwarding
 * one) and by all the others together.
 */
static void
thread_times_diff(const struct thread_times *a, const struct thread_times *b, double secs,
		  double *fwd_pct, double *other_pct)
{
	double hz = (double)sysconf(_SC_CLK_TCK), best = 0, sum = 0;

	for (unsigned int i = 0; i < b->n; i++) {
		unsigned long long before = 0;
		double d;

		for (unsigned int j = 0; j < a->n; j++)
			if (a->tid[j] == b->tid[i])
				before = a->ticks[j];
		d = (double)(b->ticks[i] - before);
		sum += d;
		if (d > best)
			best = d;
	}
	*fwd_pct = 100.0 * best / hz / secs;
	*other_pct = 100.0 * (sum - best) / hz / secs;
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
	for (uint16_t p = 0; p < NB_PORTS; p++) {
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
	for (uint16_t i = 0; i < n; i++)
		c->rx_bytes += rx[i]->pkt_len;
	rte_pktmbuf_free_bulk(rx, n);
}

/*
 * Send and receive until @until (TSC) or a stall of @stall_cycles with nothing
 * received. @pend/@npend carry frames the TX ring did not take over to the
 * next call.
 * @return 0, or -1 on a stall.
 */
static int
run_phase(const struct options *o, struct rte_mempool *tx_mp, struct rte_mbuf **pend,
	  uint16_t *npend, uint64_t until, uint64_t stall_cycles, struct counts *c)
{
	uint64_t last_rx = rte_rdtsc(), now;
	uint16_t burst = (uint16_t)o->burst;
	uint32_t turn = 0;

	while (!quit) {
		uint16_t have = *npend, sent;
		uint64_t rx_before = c->rx_pkts;

		if (have < burst) {
			if (rte_pktmbuf_alloc_bulk(tx_mp, pend + have, burst - have) == 0) {
				for (uint16_t i = have; i < burst; i++) {
					pend[i]->data_len = (uint16_t)o->size;
					pend[i]->pkt_len = o->size;
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
		/* nothing is expected back on port 0; keep its ring empty all the same */
		if ((++turn & 63) == 0) {
			struct counts junk = {0};

			drain_port(TX_PORT, &junk);
		}
		if (c->rx_pkts != rx_before) {
			last_rx = rte_rdtsc();
			now = last_rx;
		} else {
			now = rte_rdtsc();
			if (now - last_rx > stall_cycles)
				return -1;
		}
		if (now >= until)
			return 0;
	}
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
	struct rte_mempool *tx_mp, *rx_mp;
	struct counts warm = {0}, meas = {0};
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
	if (rte_eth_dev_count_avail() != NB_PORTS) {
		fprintf(stderr, "hv_pktgen: need exactly %d ports (two net_virtio_user vdevs), "
			"have %u\n", NB_PORTS, rte_eth_dev_count_avail());
		goto out_eal;
	}
	tx_mp = rte_pktmbuf_pool_create("gen_tx", TX_POOL_SIZE, POOL_CACHE, 0,
					RTE_MBUF_DEFAULT_BUF_SIZE, rte_socket_id());
	rx_mp = rte_pktmbuf_pool_create("gen_rx", RX_POOL_SIZE, POOL_CACHE, 0,
					RTE_MBUF_DEFAULT_BUF_SIZE, rte_socket_id());
	if (tx_mp == NULL || rx_mp == NULL) {
		fprintf(stderr, "hv_pktgen: mbuf pools: %s\n", rte_strerror(rte_errno));
		goto out_pools;
	}
	if (prefill_pool(tx_mp, TX_POOL_SIZE, o.size) != 0) {
		fprintf(stderr, "hv_pktgen: cannot prefill the TX pool\n");
		goto out_pools;
	}
	for (uint16_t p = 0; p < NB_PORTS; p++)
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

	/* warm-up: also waits for the DUT to start its rings (stall limit: link timeout) */
	t0 = rte_rdtsc();
	if (run_phase(&o, tx_mp, pend, &npend, t0 + (uint64_t)(o.warmup_s * hz),
		      (uint64_t)(o.link_timeout_s * hz), &warm) != 0) {
		print_stall("warm-up", &warm);
		goto out_ports;
	}
	if (o.watch_pid)
		thread_times_read(o.watch_pid, &dut0);
	cpu0 = thread_cpu_s();
	t0 = rte_rdtsc();
	if (run_phase(&o, tx_mp, pend, &npend, t0 + (uint64_t)(o.duration_s * hz), hz,
		      &meas) != 0) {
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
	       " gen_cpu_pct=%.1f dut_fwd_cpu_pct=%.1f dut_other_cpu_pct=%.1f\n",
	       o.size, meas.rx_pkts / secs, meas.tx_pkts / secs, meas.rx_bytes * 8.0 / secs,
	       meas.rx_pkts, meas.tx_pkts, secs,
	       meas.tx_calls ? 100.0 * meas.tx_full / meas.tx_calls : 0.0,
	       meas.rx_calls ? 100.0 * meas.rx_empty / meas.rx_calls : 0.0,
	       100.0 * (cpu1 - cpu0) / secs, dut_fwd, dut_other);
	fflush(stdout);
	rc = 0;
out_ports:
	if (npend)
		rte_pktmbuf_free_bulk(pend, npend);
	for (uint16_t p = 0; p < NB_PORTS; p++) {
		rte_eth_dev_stop(p);
		rte_eth_dev_close(p);
	}
out_pools:
	rte_mempool_free(tx_mp);
	rte_mempool_free(rx_mp);
out_eal:
	rte_eal_cleanup();
	return rc;
}
