/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Borrowed tails. A 64 KiB TSO send copied into mbufs and then into the
 * receiving guest moves every byte twice; the second copy is the one that
 * cannot be avoided (another guest's memory). So on ports created with
 * @c borrow, the part of a frame beyond its first mbuf is not copied: it is
 * chained as external-buffer mbufs that point into the sending guest's
 * memory, and the guest gets those buffers back only when the burst is over
 * (hv_vhost_rx_done()). The ring stays entered until then, so the control
 * thread cannot unmap that memory under the mbufs.
 *
 * The first mbuf is always a private copy holding every header the switch
 * reads or writes; the borrowed part is payload, which the guest may change
 * under us only to its own harm. Nothing writes into a borrowed segment:
 * lib/offload copies a frame that is not all direct before writing it.
 */
#include <rte_mbuf.h>

#include "vhost_internal.h"
#include "vhost_vring.h"

/* Largest piece one mbuf describes: buf_len is 16 bits. */
#define BORROW_SEG_MAX 0xffc0u

/*
 * The guest gets its buffers back per burst (hv_vhost_rx_done()), not per
 * mbuf: freeing a borrowed segment has nothing to give back. Its address
 * also tells borrowed segments from other external buffers.
 */
static void
borrow_free(void *addr, void *opaque)
{
	RTE_SET_USED(addr);
	RTE_SET_USED(opaque);
}

void
vhost_borrow_init(struct hv_vring *vr)
{
	vr->borrow_shinfo.free_cb = borrow_free;
	vr->borrow_shinfo.fcb_opaque = NULL;
	rte_mbuf_ext_refcnt_set(&vr->borrow_shinfo, 1);
}

bool
vhost_borrow_leaked(struct hv_vring *vr)
{
	return rte_mbuf_ext_refcnt_read(&vr->borrow_shinfo) != 1;
}

/* Point @s at @len bytes of guest memory at @base. */
static void
borrow_attach(struct hv_vring *vr, struct rte_mbuf *s, uint8_t *base, uint16_t len)
{
	/* one reference per segment: a clone of it adds its own */
	rte_mbuf_ext_refcnt_update(&vr->borrow_shinfo, 1);
	/* no IOVA: a device must never see guest memory (the ethdev path copies) */
	rte_pktmbuf_attach_extbuf(s, base, RTE_BAD_IOVA, len, &vr->borrow_shinfo);
	s->data_len = len;
}

int
vhost_borrow_tail(struct hv_vhost_port *port, struct hv_vring *vr, const struct hv_chain *c,
		  uint16_t i, uint32_t off, struct rte_mbuf *m, struct rte_mbuf *last)
{
	for (; i < c->n_iov; i++, off = 0) {
		uint8_t *base = c->iov[i].base;
		uint32_t len = c->iov[i].len;

		while (off < len) {
			uint16_t k = (uint16_t)RTE_MIN(len - off, BORROW_SEG_MAX);
			struct rte_mbuf *s = rte_pktmbuf_alloc(port->mp);

			if (unlikely(s == NULL))
				return HV_VHOST_DROP_NO_MBUF;
			borrow_attach(vr, s, base + off, k);
			last->next = s;
			last = s;
			m->nb_segs++;
			m->pkt_len += k;
			off += k;
		}
	}
	return 0;
}

bool
hv_vhost_mbuf_borrows(const struct rte_mbuf *m)
{
	for (; m != NULL; m = m->next)
		if ((m->ol_flags & RTE_MBUF_F_EXTERNAL) && m->shinfo != NULL &&
		    m->shinfo->free_cb == borrow_free)
			return true;
	return false;
}
