/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What vhost_ir and vhost_ir_dpdk share: their parameters and the frontends'
 * side of the loop, so that the two backends see the same frames.
 */
#ifndef HV_VHOST_IR_H
#define HV_VHOST_IR_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "peer.h"

#define IR_BURST 32

struct ir_params {
	uint64_t frames; /* HV_IR_FRAMES, default 200000 */
	uint32_t size;   /* HV_IR_SIZE, default 64 */
	/* the frontends' devargs: 1024 slots, HV_IR_PACKED=1 adds packed_vq=1,
	 * HV_IR_VU_ARGS whatever else (e.g. mrg_rxbuf=0) */
	char vu_args[160];
};

static inline void
ir_params_get(struct ir_params *p)
{
	const char *f = getenv("HV_IR_FRAMES"), *sz = getenv("HV_IR_SIZE");
	const char *packed = getenv("HV_IR_PACKED"), *extra = getenv("HV_IR_VU_ARGS");

	p->frames = f != NULL ? strtoull(f, NULL, 0) : 200000;
	p->size = sz != NULL ? (uint32_t)strtoul(sz, NULL, 0) : 64;
	snprintf(p->vu_args, sizeof(p->vu_args), "queue_size=1024%s%s%s",
		 packed != NULL && strcmp(packed, "1") == 0 ? ",packed_vq=1" : "",
		 extra != NULL && extra[0] != '\0' ? "," : "", extra != NULL ? extra : "");
}

/* A burst of frames from the frontend of @eth: @return how many it took. */
static inline uint16_t
ir_send(uint16_t eth, uint32_t size)
{
	struct rte_mbuf *m[IR_BURST];
	uint16_t k;

	for (k = 0; k < IR_BURST; k++)
		m[k] = peer_frame(peer_guest_pool(), size, k, 1);
	k = rte_eth_tx_burst(eth, 0, m, IR_BURST);
	if (k < IR_BURST)
		rte_pktmbuf_free_bulk(&m[k], IR_BURST - k);
	return k;
}

/* Everything the frontend of @eth has received, freed: @return how many. */
static inline uint64_t
ir_drain(uint16_t eth)
{
	struct rte_mbuf *pkts[IR_BURST];
	uint64_t done = 0;
	uint16_t r;

	do {
		r = rte_eth_rx_burst(eth, 0, pkts, IR_BURST);
		rte_pktmbuf_free_bulk(pkts, r);
		done += r;
	} while (r > 0);
	return done;
}

#endif
