/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Test peers for drivers/vhost: a DPDK virtio-user ethdev (an independent
 * vhost-user frontend) attached to one of our ports, in the same process.
 */
#ifndef HV_TEST_PEER_H
#define HV_TEST_PEER_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "hv_vhost.h"

struct peer {
	struct hv_vhost_port *port; /* our side */
	uint16_t eth;               /* virtio-user ethdev port id */
	char vdev[32];              /* its vdev name */
	char devargs[256];
	char path[108];
	uint16_t queue_pairs;
};

/*
 * main() of a test program: EAL, pools and the vhost control thread, then the
 * Check suite made by @make_suite, run in this process (one EAL per process).
 */
int peer_run_suite(void *(*make_suite)(void), int argc, char **argv);

/* EAL, pools and the vhost control thread; call once from main(). */
int peer_env_init(int argc, char **argv);
void peer_env_fini(void);

/* Pools: ours (switch side) and the frontend's (guest side, 10 KiB buffers). */
struct rte_mempool *peer_switch_pool(void);
struct rte_mempool *peer_guest_pool(void);

/*
 * Create our port (server or client mode) and a virtio-user peer on it.
 * @vu_args: extra virtio-user devargs (e.g. "mrg_rxbuf=0").
 */
int peer_open(struct peer *p, const char *name, enum hv_vhost_mode mode, uint64_t features,
	      const char *vu_args);
/* The same with @queue_pairs queue pairs on both sides. */
int peer_open_mq(struct peer *p, const char *name, enum hv_vhost_mode mode, uint64_t features,
		 const char *vu_args, uint16_t queue_pairs);
/* Remove the virtio-user ethdev only (the frontend goes away). */
void peer_frontend_close(struct peer *p);
/* Bring the virtio-user ethdev back with the same arguments. */
int peer_frontend_open(struct peer *p);
/* Both sides gone. */
void peer_close(struct peer *p);

/* Wait until queue pair 0 runs on our side; false after timeout_ms. */
bool peer_wait_ready(struct peer *p, unsigned int timeout_ms);

/* A frame of @len bytes (dst/src MAC then a pattern from @seed), in @segs mbufs. */
struct rte_mbuf *peer_frame(struct rte_mempool *mp, uint32_t len, uint32_t seed, unsigned int segs);
/* Whether @m holds exactly the bytes peer_frame(len, seed) made. */
bool peer_frame_check(const struct rte_mbuf *m, uint32_t len, uint32_t seed);

/* Open file descriptors of this process. */
int peer_count_fds(void);

uint64_t peer_now_ms(void);

#endif
