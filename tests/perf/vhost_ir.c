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
 * usage: [HV_IR_PACKED=1] [HV_IR_FRAMES=N] [HV_IR_SIZE=B] [HV_IR_VU_ARGS=...]
 *        vhost_ir EAL-options
 * (defaults: split, 200000 frames of 64 bytes; vhost_ir.h). Prints
 * "FRAMES n packed=0|1" (frames that went through both ports).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "hv_vhost.h"
#include "peer.h"
#include "vhost_ir.h"

int
main(int argc, char **argv)
{
	struct ir_params ip;
	uint64_t done = 0, sent = 0;
	struct peer a, b;

	ir_params_get(&ip);
	if (peer_env_init(argc, argv) != 0)
		return 1;
	if (peer_open(&a, "ira", HV_VHOST_SERVER, 0, ip.vu_args) != 0 ||
	    peer_open(&b, "irb", HV_VHOST_SERVER, 0, ip.vu_args) != 0 ||
	    !peer_wait_ready(&a, 5000) || !peer_wait_ready(&b, 5000)) {
		fprintf(stderr, "vhost_ir: ports not ready\n");
		return 1;
	}
	while (done < ip.frames) {
		struct rte_mbuf *pkts[IR_BURST];
		uint16_t r;

		sent += ir_send(a.eth, ip.size);
		r = hv_vhost_rx_burst(a.port, 0, pkts, IR_BURST);
		hv_vhost_tx_burst(b.port, 0, pkts, r);
		hv_vhost_rx_done(a.port, 0);
		done += ir_drain(b.eth);
		if (sent > ip.frames + 10 * IR_BURST && done == 0) {
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
