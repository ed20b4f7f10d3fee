/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hv_fwd: the benchmark DUT of drivers/vhost alone: a cross-connect between
 * two vhost-user ports on pinned PMD lcores (frames from port 0 go to port 1 and
 * back), no switching: what DPDK testpmd io forwarding does on net_vhost.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "hv_log.h"
#include "hv_vhost.h"

#define BURST 32
#define NB_PORTS 2

static volatile bool stop;

struct fwd_conf {
	struct hv_vhost_port_conf port[NB_PORTS];
	char name[NB_PORTS][32];
	unsigned int nb_ports;
	unsigned int nb_mbufs;
};

static void
on_signal(int sig)
{
	(void)sig;
	stop = true;
}

static void
usage(const char *prog)
{
	printf("usage: %s [EAL options] -- --port SOCKET[,client][,queues=N] "
	       "--port SOCKET[,client][,queues=N] [--mbufs N]\n"
	       "  Cross-connects two vhost-user ports: frames from one go to the other.\n"
	       "  SOCKET   unix socket path; we listen on it unless 'client' is given\n"
	       "  queues   queue pairs (1..%d), polled round-robin by the worker lcores\n"
	       "  --mbufs  mbufs in the pool (default 16384)\n",
	       prog, HV_VHOST_MAX_QUEUE_PAIRS);
}

static int
parse_port(struct fwd_conf *c, char *arg)
{
	struct hv_vhost_port_conf *p;
	char *tok, *save = NULL;
	unsigned int i = c->nb_ports;

	if (i >= NB_PORTS) {
		fprintf(stderr, "hv_fwd: exactly %d --port options are needed\n", NB_PORTS);
		return -1;
	}
	p = &c->port[i];
	snprintf(c->name[i], sizeof(c->name[i]), "port%u", i);
	p->name = c->name[i];
	p->mode = HV_VHOST_SERVER;
	p->queue_pairs = 1;
	p->path = strtok_r(arg, ",", &save);
	while ((tok = strtok_r(NULL, ",", &save)) != NULL) {
		char *end;

		if (strcmp(tok, "client") == 0) {
			p->mode = HV_VHOST_CLIENT;
		} else if (strncmp(tok, "queues=", 7) == 0) {
			unsigned long q = strtoul(tok + 7, &end, 10);

			if (*end != '\0' || q < 1 || q > HV_VHOST_MAX_QUEUE_PAIRS) {
				fprintf(stderr, "hv_fwd: queues must be 1..%d: %s\n",
					HV_VHOST_MAX_QUEUE_PAIRS, tok);
				return -1;
			}
			p->queue_pairs = (uint16_t)q;
		} else {
			fprintf(stderr, "hv_fwd: unknown port option '%s'\n", tok);
			return -1;
		}
	}
	if (p->path == NULL) {
		fprintf(stderr, "hv_fwd: --port needs a socket path\n");
		return -1;
	}
	c->nb_ports++;
	return 0;
}

static int
parse_args(struct fwd_conf *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{"port", required_argument, NULL, 'p'},
		{"mbufs", required_argument, NULL, 'm'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int opt;

	c->nb_mbufs = 16384;
	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			if (parse_port(c, optarg) != 0)
				return -1;
			break;
		case 'm': {
			char *end;
			unsigned long n = strtoul(optarg, &end, 10);

			if (*end != '\0' || n < 1024 || n > (1u << 22)) {
				fprintf(stderr, "hv_fwd: --mbufs must be 1024..4194304\n");
				return -1;
			}
			c->nb_mbufs = (unsigned int)n;
			break;
		}
		case 'h':
			usage(argv[0]);
			exit(0);
		default:
			usage(argv[0]);
			return -1;
		}
	}
	if (c->nb_ports != NB_PORTS) {
		fprintf(stderr, "hv_fwd: exactly %d --port options are needed\n", NB_PORTS);
		return -1;
	}
	if (c->port[0].queue_pairs != c->port[1].queue_pairs) {
		fprintf(stderr, "hv_fwd: both ports need the same number of queues\n");
		return -1;
	}
	return 0;
}

struct pmd {
	struct hv_vhost_port *port[NB_PORTS];
	uint16_t first_qp; /* this PMD serves queue pairs first_qp, first_qp + step, ... */
	uint16_t step;
	uint16_t nb_qp;
};

static int
pmd_main(void *arg)
{
	const struct pmd *pmd = arg;
	struct rte_mbuf *pkts[BURST];

	HV_LOG(INFO, "PMD on lcore %u: queue pairs from %u step %u", rte_lcore_id(), pmd->first_qp,
	       pmd->step);
	while (!stop) {
		for (uint16_t qp = pmd->first_qp; qp < pmd->nb_qp; qp += pmd->step) {
			for (unsigned int from = 0; from < NB_PORTS; from++) {
				uint16_t n = hv_vhost_rx_burst(pmd->port[from], qp, pkts, BURST);

				if (n > 0)
					hv_vhost_tx_burst(pmd->port[from ^ 1], qp, pkts, n);
			}
		}
	}
	return 0;
}

static void
print_stats(struct hv_vhost_port *port, const char *name, uint16_t qps)
{
	for (uint16_t v = 0; v < 2 * qps; v++) {
		uint16_t qp = v / 2;
		enum hv_vhost_dir dir = v % 2 ? HV_VHOST_RX : HV_VHOST_TX;
		struct hv_vhost_vring_stats s;

		if (hv_vhost_vring_stats(port, qp, dir, &s) != 0)
			continue;
		printf("%s qp %u %s: packets %" PRIu64 " bytes %" PRIu64 " kicks %" PRIu64
		       " irqs %" PRIu64 " suppressed %" PRIu64 " stops %" PRIu64,
		       name, qp, dir == HV_VHOST_RX ? "rx (guest tx)" : "tx (guest rx)", s.packets,
		       s.bytes, s.kicks, s.irqs_sent, s.irqs_suppressed, s.stops);
		for (int d = HV_VHOST_DROP__FIRST; d < HV_VHOST_DROP__MAX; d++)
			if (s.drops[d])
				printf(" %s %" PRIu64, hv_vhost_drop_name(d), s.drops[d]);
		printf("\n");
	}
}

int
main(int argc, char **argv)
{
	struct fwd_conf conf = {0};
	struct hv_vhost_port *ports[NB_PORTS] = {NULL};
	struct pmd pmds[RTE_MAX_LCORE];
	struct rte_mempool *mp;
	unsigned int lcore, nb_workers, w = 0;
	int rc = 1, n;

	n = rte_eal_init(argc, argv);
	if (n < 0) {
		fprintf(stderr, "hv_fwd: EAL init failed: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	argc -= n;
	argv += n;
	if (parse_args(&conf, argc, argv) != 0)
		goto out_eal;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	mp = rte_pktmbuf_pool_create("hv_mbufs", conf.nb_mbufs, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				     rte_socket_id());
	if (mp == NULL) {
		fprintf(stderr, "hv_fwd: mbuf pool: %s\n", rte_strerror(rte_errno));
		goto out_eal;
	}
	if (hv_vhost_init(HV_VHOST_INIT_SIGNALS) != 0) {
		fprintf(stderr, "hv_fwd: vhost control thread did not start\n");
		goto out_pool;
	}
	for (unsigned int i = 0; i < NB_PORTS; i++) {
		conf.port[i].mp = mp;
		ports[i] = hv_vhost_port_create(&conf.port[i]);
		if (ports[i] == NULL) {
			fprintf(stderr, "hv_fwd: port %s: %s\n", conf.port[i].path,
				strerror(rte_errno));
			goto out_ports;
		}
	}

	nb_workers = rte_lcore_count() > 1 ? rte_lcore_count() - 1 : 1;
	RTE_LCORE_FOREACH_WORKER (lcore) {
		struct pmd *p = &pmds[w];

		*p = (struct pmd){.port = {ports[0], ports[1]},
				  .first_qp = w,
				  .step = nb_workers,
				  .nb_qp = conf.port[0].queue_pairs};
		rte_eal_remote_launch(pmd_main, p, lcore);
		w++;
	}
	printf("hv_fwd: forwarding between %s and %s on %u PMD lcore(s)\n", conf.port[0].path,
	       conf.port[1].path, w ? w : 1);
	fflush(stdout);
	if (w == 0) {
		/* no worker lcore: the main lcore polls */
		pmds[0] = (struct pmd){.port = {ports[0], ports[1]},
				       .first_qp = 0,
				       .step = 1,
				       .nb_qp = conf.port[0].queue_pairs};
		pmd_main(&pmds[0]);
	} else {
		/* the main lcore sleeps: it may share its CPU with other work */
		while (!stop)
			usleep(100 * 1000);
		rte_eal_mp_wait_lcore();
	}
	for (unsigned int i = 0; i < NB_PORTS; i++)
		print_stats(ports[i], conf.port[i].name, conf.port[i].queue_pairs);
	rc = 0;
out_ports:
	for (unsigned int i = 0; i < NB_PORTS; i++)
		hv_vhost_port_destroy(ports[i]);
	hv_vhost_fini();
out_pool:
	rte_mempool_free(mp);
out_eal:
	rte_eal_cleanup();
	return rc;
}
