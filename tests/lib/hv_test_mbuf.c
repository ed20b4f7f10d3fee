/* SPDX-License-Identifier: BSD-3-Clause */
#include "hv_test_mbuf.h"

#include <string.h>

struct rte_mbuf *
hv_test_mbuf_chain(struct rte_mempool *mp, const void *b, uint32_t len, uint32_t piece)
{
	struct rte_mbuf *head = NULL;
	uint32_t off = 0;

	do {
		struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
		uint32_t k;

		if (m == NULL) {
			rte_pktmbuf_free(head);
			return NULL;
		}
		k = RTE_MIN(len - off, (uint32_t)rte_pktmbuf_tailroom(m));
		if (piece != 0)
			k = RTE_MIN(k, piece);
		memcpy(rte_pktmbuf_append(m, (uint16_t)k), (const uint8_t *)b + off, k);
		if (head == NULL) {
			head = m;
		} else if (rte_pktmbuf_chain(head, m) != 0) {
			rte_pktmbuf_free(m);
			rte_pktmbuf_free(head);
			return NULL;
		}
		off += k;
	} while (off < len);
	return head;
}
