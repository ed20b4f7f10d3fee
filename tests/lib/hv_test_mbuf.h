/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Test helper: a frame held in a byte buffer as a segmented mbuf chain, the
 * shape a vhost dequeue or an application hands to lib/offload and the PMDs.
 */
#ifndef HV_TEST_MBUF_H
#define HV_TEST_MBUF_H

#include <stdint.h>

#include <rte_mbuf.h>

/**
 * Copy @len bytes of @b into a new chain of mbufs from @mp: each segment
 * holds @piece bytes (the last one the rest), or as many as fit when @piece
 * is 0 or more than a segment's tailroom. A @len of 0 gives one empty mbuf.
 * Only the data and the chain fields (next, nb_segs, pkt_len) are set.
 *
 * Thread: any; @mp must allow allocation from the calling thread.
 * @return the head, owned by the caller (rte_pktmbuf_free()); NULL when @mp
 *   ran out or the chain would pass RTE_MBUF_MAX_NB_SEGS (nothing is left
 *   allocated then).
 */
struct rte_mbuf *
hv_test_mbuf_chain(struct rte_mempool *mp, const void *b, uint32_t len, uint32_t piece);

#endif
