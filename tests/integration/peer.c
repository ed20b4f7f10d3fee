/* SPDX-License-Identifier: BSD-3-Clause */
#include <check.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_bus_vdev.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>

#include "peer.h"

static struct rte_mempool *switch_mp;
static struct rte_mempool *guest_mp;
static struct rte_mempool *guest_small_mp;
static unsigned int vdev_seq;

/* Frontend buffers big enough for 9000-byte frames without mergeable buffers. */
#define GUEST_MBUF_SIZE (10240 + RTE_PKTMBUF_HEADROOM)

uint64_t
peer_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int
peer_env_init(int argc, char **argv)
{
	/* virtio-user writes to sockets without MSG_NOSIGNAL: a backend that hangs
	 * up (as ours does on a second frontend) must not kill the test */
	signal(SIGPIPE, SIG_IGN);
	if (rte_eal_init(argc, argv) < 0) {
		fprintf(stderr, "EAL: %s\n", rte_strerror(rte_errno));
		return -1;
	}
	switch_mp = rte_pktmbuf_pool_create("switch", 8191, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
					    rte_socket_id());
	guest_mp = rte_pktmbuf_pool_create("guest", 4095, 256, 0, GUEST_MBUF_SIZE, rte_socket_id());
	/* 2 KiB receive buffers make big frames span several mergeable buffers */
	guest_small_mp = rte_pktmbuf_pool_create("guest_small", 4095, 256, 0,
						 RTE_MBUF_DEFAULT_BUF_SIZE, rte_socket_id());
	if (switch_mp == NULL || guest_mp == NULL || guest_small_mp == NULL) {
		fprintf(stderr, "pools: %s\n", rte_strerror(rte_errno));
		return -1;
	}
	/* the hostile tests rely on both guards: the switch does the same */
	return hv_vhost_init(HV_VHOST_INIT_SIGNALS);
}

void
peer_env_fini(void)
{
	hv_vhost_fini();
	rte_mempool_free(switch_mp);
	rte_mempool_free(guest_mp);
	rte_mempool_free(guest_small_mp);
	rte_eal_cleanup();
}

struct rte_mempool *
peer_switch_pool(void)
{
	return switch_mp;
}

struct rte_mempool *
peer_guest_pool(void)
{
	return guest_mp;
}

int
peer_frontend_open(struct peer *p)
{
	struct rte_eth_conf conf = {.rxmode = {.mtu = 9000}};
	bool mrg = strstr(p->devargs, "mrg_rxbuf=0") == NULL;
	int rc;

	/* with mergeable buffers, frames larger than one 2 KiB buffer are scattered */
	if (mrg)
		conf.rxmode.offloads = RTE_ETH_RX_OFFLOAD_SCATTER;

	rc = rte_vdev_init(p->vdev, p->devargs);
	if (rc != 0) {
		fprintf(stderr, "vdev %s %s: %d\n", p->vdev, p->devargs, rc);
		return rc;
	}
	rc = rte_eth_dev_get_port_by_name(p->vdev, &p->eth);
	if (rc == 0)
		rc = rte_eth_dev_configure(p->eth, p->queue_pairs, p->queue_pairs, &conf);
	for (uint16_t q = 0; rc == 0 && q < p->queue_pairs; q++) {
		rc = rte_eth_rx_queue_setup(p->eth, q, 256, rte_socket_id(), NULL,
					    mrg ? guest_small_mp : guest_mp);
		if (rc == 0)
			rc = rte_eth_tx_queue_setup(p->eth, q, 256, rte_socket_id(), NULL);
	}
	if (rc == 0)
		rc = rte_eth_dev_start(p->eth);
	if (rc != 0)
		fprintf(stderr, "ethdev %s: %d\n", p->vdev, rc);
	return rc;
}

void
peer_frontend_close(struct peer *p)
{
	rte_eth_dev_stop(p->eth);
	rte_eth_dev_close(p->eth);
	rte_vdev_uninit(p->vdev);
}

int
peer_open(struct peer *p, const char *name, enum hv_vhost_mode mode, uint64_t features,
	  const char *vu_args)
{
	return peer_open_mq(p, name, mode, features, vu_args, 1);
}

int
peer_open_mq(struct peer *p, const char *name, enum hv_vhost_mode mode, uint64_t features,
	     const char *vu_args, uint16_t queue_pairs)
{
	struct hv_vhost_port_conf conf = {
		.name = name,
		.mode = mode,
		.queue_pairs = queue_pairs,
		.features = features,
		.mp = switch_mp,
	};

	memset(p, 0, sizeof(*p));
	p->queue_pairs = queue_pairs;
	snprintf(p->path, sizeof(p->path), "/tmp/hvtest-%d-%s.sock", getpid(), name);
	snprintf(p->vdev, sizeof(p->vdev), "net_virtio_user%u", vdev_seq++);
	/* virtio-user needs its control queue to use more than one queue pair */
	snprintf(p->devargs, sizeof(p->devargs), "path=%s,queues=%u%s,queue_size=256%s%s%s",
		 p->path, queue_pairs, queue_pairs > 1 ? ",cq=1" : "",
		 mode == HV_VHOST_CLIENT ? ",server=1" : "", vu_args && vu_args[0] ? "," : "",
		 vu_args ? vu_args : "");
	conf.path = p->path;
	unlink(p->path);
	p->port = hv_vhost_port_create(&conf);
	if (p->port == NULL) {
		fprintf(stderr, "port %s: %s\n", name, rte_strerror(rte_errno));
		return -1;
	}
	if (peer_frontend_open(p) != 0) {
		hv_vhost_port_destroy(p->port);
		p->port = NULL;
		return -1;
	}
	return 0;
}

void
peer_close(struct peer *p)
{
	if (p->port == NULL)
		return;
	peer_frontend_close(p);
	hv_vhost_port_destroy(p->port);
	p->port = NULL;
	unlink(p->path);
}

bool
peer_wait_ready(struct peer *p, unsigned int timeout_ms)
{
	uint64_t end = peer_now_ms() + timeout_ms;

	while (peer_now_ms() < end) {
		if (hv_vhost_queue_ready(p->port, 0))
			return true;
		usleep(1000);
	}
	return false;
}

static uint8_t
pattern(uint32_t seed, uint32_t i)
{
	return (uint8_t)((seed * 131u + i * 7u + (i >> 8)) & 0xff);
}

struct rte_mbuf *
peer_frame(struct rte_mempool *mp, uint32_t len, uint32_t seed, unsigned int segs)
{
	struct rte_mbuf *head = NULL, *tail = NULL;
	uint32_t off = 0, per = (len + segs - 1) / segs;

	for (unsigned int s = 0; s < segs && off < len; s++) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
		uint32_t n = RTE_MIN(per, len - off);
		uint8_t *d;

		if (m == NULL || n > rte_pktmbuf_tailroom(m)) {
			rte_pktmbuf_free(m);
			rte_pktmbuf_free(head);
			return NULL;
		}
		d = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)n);
		for (uint32_t i = 0; i < n; i++)
			d[i] = pattern(seed, off + i);
		if (off == 0) {
			/* broadcast destination, locally administered source */
			memset(d, 0xff, 6);
			d[6] = 0x02;
			d[7] = (uint8_t)seed;
			memset(d + 8, 0, 4);
		}
		off += n;
		if (head == NULL) {
			head = tail = m;
		} else {
			tail->next = m;
			tail = m;
			head->nb_segs++;
			head->pkt_len += n;
		}
	}
	return head;
}

bool
peer_frame_check(const struct rte_mbuf *m, uint32_t len, uint32_t seed)
{
	uint32_t off = 0;

	if (m->pkt_len != len)
		return false;
	for (const struct rte_mbuf *s = m; s != NULL; s = s->next) {
		const uint8_t *d = rte_pktmbuf_mtod(s, const uint8_t *);

		for (uint32_t i = 0; i < s->data_len; i++, off++) {
			uint8_t want = pattern(seed, off);

			if (off < 6)
				want = 0xff;
			else if (off == 6)
				want = 0x02;
			else if (off == 7)
				want = (uint8_t)seed;
			else if (off < 12)
				want = 0;
			if (d[i] != want)
				return false;
		}
	}
	return off == len;
}

int
peer_count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1; /* the directory's own fd */
}

int
peer_run_suite(void *(*make_suite)(void), int argc, char **argv)
{
	SRunner *sr;
	int failed;

	if (peer_env_init(argc, argv) != 0)
		return 1;
	sr = srunner_create(make_suite());
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	peer_env_fini();
	return failed == 0 ? 0 : 1;
}
