/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vhost_ir_dpdk: vhost_ir's loop with DPDK's lib/vhost as the backend, the
 * peer of bench_switch.sh's testpmd and tpmdpacked DUTs. The same virtio-user
 * frontends and frames as vhost_ir; between them, one thread takes bursts of
 * 32 out of backend A (rte_vhost_dequeue_burst()) and puts them into B
 * (rte_vhost_enqueue_burst(), then frees them, as net_vhost does). lib/vhost
 * is set up as net_vhost sets it up for testpmd: compliant offload flags,
 * host TSO off, guest notifications off. Under callgrind with collection only
 * inside ir_dpdk_rx() and ir_dpdk_tx() (tests/perf/profile_vhost_ir.sh,
 * HV_PROF_BACKEND=dpdk), instructions / frames is lib/vhost's cost per
 * frame, comparable to drivers/vhost's from vhost_ir.
 *
 * usage: [HV_IR_PACKED=1] [HV_IR_FRAMES=N] [HV_IR_SIZE=B] [HV_IR_VU_ARGS=...]
 *        vhost_ir_dpdk EAL-options (as vhost_ir's, vhost_ir.h)
 * Prints "FRAMES n packed=0|1".
 */
#include <stdbool.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_vhost.h>

#include "peer.h"
#include "vhost_ir.h"

/* the virtqueues of the first queue pair, as lib/vhost numbers them */
#define VQ_RX 0
#define VQ_TX 1

struct backend {
	char path[108];
	struct peer fe; /* its virtio-user frontend (fe.port unused) */
	bool fe_open;
	int vid; /* -1 until lib/vhost says the device is ready */
};

static struct backend backends[2];

static int
new_device(int vid)
{
	char path[108];

	if (rte_vhost_get_ifname(vid, path, sizeof(path)) != 0)
		return -1;
	for (unsigned int i = 0; i < RTE_DIM(backends); i++) {
		if (strcmp(path, backends[i].path) != 0)
			continue;
		/* polled, as net_vhost's queues are: the frontend need not kick */
		for (uint16_t q = 0; q < rte_vhost_get_vring_num(vid); q++)
			rte_vhost_enable_guest_notification(vid, q, 0);
		__atomic_store_n(&backends[i].vid, vid, __ATOMIC_RELEASE);
		return 0;
	}
	return -1;
}

static void
destroy_device(int vid)
{
	for (unsigned int i = 0; i < RTE_DIM(backends); i++)
		if (__atomic_load_n(&backends[i].vid, __ATOMIC_ACQUIRE) == vid)
			__atomic_store_n(&backends[i].vid, -1, __ATOMIC_RELEASE);
}

static const struct rte_vhost_device_ops ops = {
	.new_device = new_device,
	.destroy_device = destroy_device,
};

static int
backend_open(struct backend *be, const char *name, const char *vu_args)
{
	const uint64_t no_tso = (1ULL << VIRTIO_NET_F_HOST_TSO4) | (1ULL << VIRTIO_NET_F_HOST_TSO6);

	memset(be, 0, sizeof(*be));
	be->vid = -1;
	snprintf(be->path, sizeof(be->path), "/tmp/hvir-dpdk-%d-%s.sock", getpid(), name);
	unlink(be->path);
	if (rte_vhost_driver_register(be->path, RTE_VHOST_USER_NET_COMPLIANT_OL_FLAGS) != 0 ||
	    rte_vhost_driver_disable_features(be->path, no_tso) != 0 ||
	    rte_vhost_driver_callback_register(be->path, &ops) != 0 ||
	    rte_vhost_driver_start(be->path) != 0) {
		fprintf(stderr, "vhost_ir_dpdk: lib/vhost on %s failed\n", be->path);
		return -1;
	}
	be->fe.queue_pairs = 1;
	snprintf(be->fe.vdev, sizeof(be->fe.vdev), "net_virtio_user_ir%s", name);
	snprintf(be->fe.devargs, sizeof(be->fe.devargs), "path=%s,queues=1,%s", be->path, vu_args);
	if (peer_frontend_open(&be->fe) != 0)
		return -1;
	be->fe_open = true;
	return 0;
}

static bool
backends_ready(unsigned int timeout_ms)
{
	for (unsigned int t = 0; t < timeout_ms; t++) {
		if (__atomic_load_n(&backends[0].vid, __ATOMIC_ACQUIRE) >= 0 &&
		    __atomic_load_n(&backends[1].vid, __ATOMIC_ACQUIRE) >= 0)
			return true;
		usleep(1000);
	}
	return false;
}

static void
backend_close(struct backend *be)
{
	if (be->fe_open)
		peer_frontend_close(&be->fe);
	rte_vhost_driver_unregister(be->path);
	unlink(be->path);
}

/* What the backend's owner does per burst: its cost is what callgrind counts. */
__attribute__((noinline)) uint16_t ir_dpdk_rx(int vid, struct rte_mbuf **pkts, uint16_t n);
__attribute__((noinline)) void ir_dpdk_tx(int vid, struct rte_mbuf **pkts, uint16_t n);

uint16_t
ir_dpdk_rx(int vid, struct rte_mbuf **pkts, uint16_t n)
{
	return rte_vhost_dequeue_burst(vid, VQ_TX, peer_switch_pool(), pkts, n);
}

void
ir_dpdk_tx(int vid, struct rte_mbuf **pkts, uint16_t n)
{
	rte_vhost_enqueue_burst(vid, VQ_RX, pkts, n);
	/* lib/vhost copies: every mbuf goes back, taken or not (net_vhost's drops) */
	rte_pktmbuf_free_bulk(pkts, n);
}

int
main(int argc, char **argv)
{
	struct ir_params ip;
	uint64_t done = 0, sent = 0, features = 0;
	int rc = 1;

	ir_params_get(&ip);
	if (peer_env_init(argc, argv) != 0)
		return 1;
	if (backend_open(&backends[0], "a", ip.vu_args) != 0 ||
	    backend_open(&backends[1], "b", ip.vu_args) != 0 || !backends_ready(5000)) {
		fprintf(stderr, "vhost_ir_dpdk: backends not ready\n");
		goto out;
	}
	while (done < ip.frames) {
		struct rte_mbuf *pkts[IR_BURST];
		uint16_t r;

		sent += ir_send(backends[0].fe.eth, ip.size);
		r = ir_dpdk_rx(backends[0].vid, pkts, IR_BURST);
		ir_dpdk_tx(backends[1].vid, pkts, r);
		done += ir_drain(backends[1].fe.eth);
		if (sent > ip.frames + 10 * IR_BURST && done == 0) {
			fprintf(stderr, "vhost_ir_dpdk: nothing comes through\n");
			goto out;
		}
	}
	rte_vhost_get_negotiated_features(backends[0].vid, &features);
	printf("FRAMES %llu packed=%d\n", (unsigned long long)done,
	       !!(features & (1ULL << VIRTIO_F_RING_PACKED)));
	rc = 0;
out:
	for (unsigned int i = 0; i < RTE_DIM(backends); i++)
		if (backends[i].path[0] != '\0')
			backend_close(&backends[i]);
	peer_env_fini();
	return rc;
}
