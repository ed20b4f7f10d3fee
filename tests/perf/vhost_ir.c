/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vhost_ir: drivers/vhost's cost per frame in instructions, free of the
 * machine's load: one thread moves bursts of 32 frames from a virtio-user
 * frontend through our port A (hv_vhost_rx_burst()), into port B
 * (hv_vhost_tx_burst()) and out of B's virtio-user, the same bursts every
 * run. Under callgrind with collection only inside our functions
 * (tests/perf/profile_vhost_ir.sh), instructions / frames is the
 * data path's cost, split or packed ring (HV_IR_PACKED=1: both frontends
 * with packed_vq=1), without the generator's or the frontends' share.
 *
 * usage: [HV_IR_PACKED=1] [HV_IR_FRAMES=N] [HV_IR_SIZE=B] vhost_ir EAL-options
 * (defaults: split, 200000 frames of 64 bytes). Prints "FRAMES n" (frames
 * that went through both ports).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "hv_vhost.h"
#include "peer.h"

#define BURST 32

int
main(int argc, char **argv)
{
	const char *vu = getenv("HV_IR_PACKED") != NULL && strcmp(getenv("HV_IR_PACKED"), "1") == 0
				 ? "queue_size=1024,packed_vq=1"
				 : "queue_size=1024";
	const char *f = getenv("HV_IR_FRAMES"), *sz = getenv("HV_IR_SIZE");
	uint64_t want = f != NULL ? strtoull(f, NULL, 0) : 200000, done = 0, sent = 0;
	uint32_t size = sz != NULL ? (uint32_t)strtoul(sz, NULL, 0) : 64;
	struct peer a, b;

	if (peer_env_init(argc, argv) != 0)
		return 1;
	if (peer_open(&a, "ira", HV_VHOST_SERVER, 0, vu) != 0 ||
	    peer_open(&b, "irb", HV_VHOST_SERVER, 0, vu) != 0 || !peer_wait_ready(&a, 5000) ||
	    !peer_wait_ready(&b, 5000)) {
		fprintf(stderr, "vhost_ir: ports not ready\n");
		return 1;
	}
	while (done < want) {
		struct rte_mbuf *m[BURST], *pkts[BURST];
		uint16_t k, r;

		for (k = 0; k < BURST; k++)
			m[k] = peer_frame(peer_guest_pool(), size, k, 1);
		k = rte_eth_tx_burst(a.eth, 0, m, BURST);
		sent += k;
		if (k < BURST)
			rte_pktmbuf_free_bulk(&m[k], BURST - k);
		r = hv_vhost_rx_burst(a.port, 0, pkts, BURST);
		hv_vhost_tx_burst(b.port, 0, pkts, r);
		hv_vhost_rx_done(a.port, 0);
		do {
			r = rte_eth_rx_burst(b.eth, 0, pkts, BURST);
			rte_pktmbuf_free_bulk(pkts, r);
			done += r;
		} while (r > 0);
		if (sent > want + 10 * BURST && done == 0) {
			fprintf(stderr, "vhost_ir: nothing comes through\n");
			return 1;
		}
	}
	printf("FRAMES %llu packed=%d\n", (unsigned long long)done,
	       !!(hv_vhost_port_features(a.port) & HV_VHOST_F_RING_PACKED));
	peer_close(&a);
	peer_close(&b);
	peer_env_fini();
	return 0;
}
