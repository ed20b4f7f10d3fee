/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The data path's half of packet capture: a PMD copies the frames of a
 * burst into the capture's ring. The copies are private (rte_pktmbuf_copy()
 * from the capture's own pool): the frames go on unchanged, and frames whose
 * data a port only lends until the burst ends are read while still valid.
 * Nothing here waits; what does not fit is counted.
 */
#include <rte_cycles.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>
#include <rte_ring.h>

#include "dp.h"

int sw_capture_meta_offset = -1;

int
sw_capture_meta_register(void)
{
	static const struct rte_mbuf_dynfield d = {
		.name = "hvswitch_capture_meta",
		.size = sizeof(struct sw_capture_meta),
		.align = __alignof__(struct sw_capture_meta),
	};

	if (sw_capture_meta_offset < 0)
		sw_capture_meta_offset = rte_mbuf_dynfield_register(&d);
	return sw_capture_meta_offset < 0 ? -1 : 0;
}

void
sw_dp_capture(struct sw_capture *cap, unsigned int pmd, uint16_t q, struct rte_mbuf **pkts,
	      uint16_t n, uint8_t dir)
{
	struct rte_mbuf *copies[SW_BURST];
	uint64_t tsc;
	unsigned int k = 0, sent;

	if ((cap->dirs & dir) == 0)
		return;
	tsc = rte_rdtsc();
	for (uint16_t i = 0; i < n && k < RTE_DIM(copies); i++) {
		struct rte_mbuf *c = rte_pktmbuf_copy(pkts[i], cap->mp, 0, cap->snaplen);
		struct sw_capture_meta *m;

		if (unlikely(c == NULL))
			continue;
		m = sw_capture_meta(c);
		m->tsc = tsc;
		m->orig_len = pkts[i]->pkt_len;
		m->queue = q;
		m->dir = dir;
		copies[k++] = c;
	}
	sent = k == 0 ? 0 : rte_ring_mp_enqueue_burst(cap->ring, (void **)copies, k, NULL);
	if (unlikely(sent < k))
		rte_pktmbuf_free_bulk(copies + sent, k - sent);
	/* one writer (this PMD); the control side loads them atomically */
	__atomic_store_n(&cap->cnt[pmd].captured, cap->cnt[pmd].captured + sent, __ATOMIC_RELAXED);
	__atomic_store_n(&cap->cnt[pmd].dropped, cap->cnt[pmd].dropped + (n - sent),
			 __ATOMIC_RELAXED);
}
