/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One frame, one destination: pass it whole, hand it to a NIC's offloads,
 * finish its checksum, or cut it into MSS-sized TCP segments.
 *
 * Segments are copies: a header copy and the payload range, in fresh mbufs of
 * the given pool. Copying costs the same memory reads as attaching indirect
 * mbufs plus one write per byte, but the segments come out as one direct
 * mbuf each (cheaper for every consumer: one piece to copy into a guest, no
 * shared reference counts, checksums computed on data already in cache), and
 * the source frame is never touched (measured against rte_gso's indirect
 * mbufs in doc/performance.rst).
 */
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_memcpy.h>
#include <rte_tcp.h>
#include <rte_udp.h>

#include "offload_internal.h"

static inline uint32_t
fold32(uint32_t s)
{
	s = (s & 0xffff) + (s >> 16);
	return (s & 0xffff) + (s >> 16);
}

/* One's-complement sum of bytes [off, off + len) of @m (folded, not inverted). */
static uint16_t
sum_range(const struct rte_mbuf *m, uint32_t off, uint32_t len)
{
	uint32_t sum = 0;
	bool odd = false; /* the next piece starts at an odd distance from @off */

	while (m != NULL && off >= m->data_len) {
		off -= m->data_len;
		m = m->next;
	}
	for (; m != NULL && len > 0; m = m->next, off = 0) {
		uint32_t k = RTE_MIN(len, (uint32_t)m->data_len - off);
		uint16_t s = rte_raw_cksum(rte_pktmbuf_mtod_offset(m, const void *, off), k);

		/* a piece that starts at an odd position pairs its bytes the other way */
		sum += odd ? rte_bswap16(s) : s;
		if (k & 1)
			odd = !odd;
		len -= k;
	}
	return (uint16_t)fold32(sum);
}

/* Write @len bytes at byte @off of a chain (the range lies within it). */
static void
mbuf_write(struct rte_mbuf *m, uint32_t off, const void *src, uint32_t len)
{
	const uint8_t *s = src;

	for (; m != NULL && len > 0; m = m->next) {
		uint32_t k;

		if (off >= m->data_len) {
			off -= m->data_len;
			continue;
		}
		k = RTE_MIN(len, (uint32_t)m->data_len - off);
		memcpy(rte_pktmbuf_mtod_offset(m, uint8_t *, off), s, k);
		s += k;
		len -= k;
		off = 0;
	}
}

int
hv_offload_csum_finish(struct rte_mbuf *m, uint16_t csum_start, uint16_t csum_offset)
{
	uint16_t c;

	if ((uint32_t)csum_start + csum_offset + 2 > m->pkt_len)
		return -1;
	/* the field holds the pseudo-header sum: it is part of what is summed */
	c = (uint16_t)~sum_range(m, csum_start, m->pkt_len - csum_start);
	/* 0 means "no checksum" to UDP; 0xffff is the same value to TCP */
	if (c == 0)
		c = 0xffff;
	mbuf_write(m, (uint32_t)csum_start + csum_offset, &c, sizeof(c));
	return 0;
}

bool
hv_offload_mbuf_shift(struct rte_mbuf *m, int delta)
{
	struct hv_offload_hdr *h;

	if (!hv_offload_mbuf_has_hdr(m))
		return true;
	h = hv_offload_mbuf_hdr(m);
	if ((h->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) &&
	    (int)h->csum_start + delta < RTE_ETHER_HDR_LEN)
		return false;
	if (h->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM)
		h->csum_start = (uint16_t)(h->csum_start + delta);
	if ((int)h->hdr_len + delta >= 0)
		h->hdr_len = (uint16_t)(h->hdr_len + delta);
	return true;
}

/* Whether we hold the only reference to every byte of @m (we may write it). */
static inline bool
mbuf_exclusive(const struct rte_mbuf *m)
{
	for (; m != NULL; m = m->next)
		if (!RTE_MBUF_DIRECT(m) || rte_mbuf_refcnt_read(m) != 1)
			return false;
	return true;
}

/* @m itself if we may write it, else a private copy (@m's reference is given up). */
static struct rte_mbuf *
make_writable(struct rte_mbuf *m, struct rte_mempool *mp)
{
	struct rte_mbuf *c;

	if (mbuf_exclusive(m))
		return m;
	/* the copy keeps ol_flags and the dynfields (the metadata) */
	c = rte_pktmbuf_copy(m, mp, 0, UINT32_MAX);
	rte_pktmbuf_free(m);
	return c;
}

static inline void
clear_meta(struct rte_mbuf *m)
{
	m->ol_flags &= ~hv_offload_hdr_flag;
}

/* How a segment's TCP checksum is left. */
enum seg_csum {
	SEG_CSUM_FULL,    /* computed here */
	SEG_CSUM_PARTIAL, /* pseudo-header sum + NEEDS_CSUM metadata (a GUEST_CSUM guest) */
	SEG_CSUM_NIC,     /* pseudo-header sum + ol_flags for the NIC */
};

/* Reads the source payload across its segments, in order. */
struct src_cursor {
	const struct rte_mbuf *seg;
	uint32_t off;
};

/*
 * Append @len bytes from @c to the chain @head whose last segment is *@tail,
 * adding mbufs from @mp as each fills. @return 0, or -1 without mbufs.
 */
static int
copy_payload(struct src_cursor *c, struct rte_mbuf *head, struct rte_mbuf **tail, uint32_t len,
	     struct rte_mempool *mp)
{
	struct rte_mbuf *d = *tail;

	while (len > 0) {
		uint32_t room = rte_pktmbuf_tailroom(d);
		uint32_t avail, k;

		if (room == 0) {
			struct rte_mbuf *n = rte_pktmbuf_alloc(mp);

			if (n == NULL)
				return -1;
			d->next = n;
			d = n;
			head->nb_segs++;
			*tail = d;
			continue;
		}
		while (c->off == c->seg->data_len) {
			c->seg = c->seg->next;
			c->off = 0;
		}
		avail = c->seg->data_len - c->off;
		k = RTE_MIN(len, RTE_MIN(room, avail));
		memcpy(rte_pktmbuf_mtod_offset(d, uint8_t *, d->data_len),
		       rte_pktmbuf_mtod_offset(c->seg, const uint8_t *, c->off), k);
		d->data_len += k;
		head->pkt_len += k;
		c->off += k;
		len -= k;
	}
	return 0;
}

/*
 * Sums that are the same for every segment of a frame, computed once: the
 * IPv4 header without its length, id and checksum, and the pseudo-header
 * without its length. One's-complement sums in memory order, as
 * rte_raw_cksum() makes them.
 */
struct seg_sums {
	uint32_t ip_base;
	uint32_t pseudo_base;
};

static void
seg_sums_init(struct seg_sums *ss, const uint8_t *hdr, const struct hv_offload_layout *lo)
{
	const uint8_t *l3 = hdr + lo->l2_len;

	if (!lo->ipv6) {
		const struct rte_ipv4_hdr *ip = (const struct rte_ipv4_hdr *)l3;

		/* the whole header less the three fields each segment rewrites */
		ss->ip_base = __rte_raw_cksum(l3, lo->l3_len, 0) + (uint16_t)~ip->total_length +
			      (uint16_t)~ip->packet_id + (uint16_t)~ip->hdr_checksum;
		ss->pseudo_base = __rte_raw_cksum(&ip->src_addr, 8, 0);
	} else {
		const struct rte_ipv6_hdr *ip = (const struct rte_ipv6_hdr *)l3;

		ss->ip_base = 0;
		ss->pseudo_base = __rte_raw_cksum(ip->src_addr, 32, 0);
	}
	ss->pseudo_base += rte_cpu_to_be_16(IPPROTO_TCP);
}

/* Fix the copied headers of segment @i of @n (payload @plen bytes) in place. */
static inline void
fix_headers(struct rte_mbuf *d, const struct hv_offload_layout *lo, const struct seg_sums *ss,
	    uint16_t i, uint16_t n, uint32_t plen, uint16_t mss, enum seg_csum mode)
{
	uint8_t *l3 = rte_pktmbuf_mtod_offset(d, uint8_t *, lo->l2_len);
	struct rte_tcp_hdr *tcp = (struct rte_tcp_hdr *)(l3 + lo->l3_len);
	uint16_t tcp_len = (uint16_t)(lo->l4_len + plen);
	uint16_t pseudo;

	tcp->sent_seq = rte_cpu_to_be_32(rte_be_to_cpu_32(tcp->sent_seq) + (uint32_t)i * mss);
	/* CWR belongs to the first segment, FIN and PSH to the last */
	if (i > 0)
		tcp->tcp_flags &= ~RTE_TCP_CWR_FLAG;
	if (i + 1 < n)
		tcp->tcp_flags &= ~(RTE_TCP_FIN_FLAG | RTE_TCP_PSH_FLAG);
	if (!lo->ipv6) {
		struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)l3;

		ip->total_length = rte_cpu_to_be_16((uint16_t)(lo->l3_len + tcp_len));
		ip->packet_id = rte_cpu_to_be_16((uint16_t)(rte_be_to_cpu_16(ip->packet_id) + i));
		ip->hdr_checksum =
			(uint16_t)~fold32(ss->ip_base + ip->total_length + ip->packet_id);
	} else {
		struct rte_ipv6_hdr *ip = (struct rte_ipv6_hdr *)l3;

		ip->payload_len = rte_cpu_to_be_16(tcp_len);
	}
	pseudo = (uint16_t)fold32(ss->pseudo_base + rte_cpu_to_be_16(tcp_len));
	tcp->cksum = pseudo;
	if (mode == SEG_CSUM_FULL) {
		uint32_t off = lo->l2_len + lo->l3_len;

		/* TCP sends a computed 0 as 0 (no UDP "no checksum" meaning) */
		tcp->cksum = (uint16_t)~sum_range(d, off, d->pkt_len - off);
	} else if (mode == SEG_CSUM_PARTIAL) {
		struct hv_offload_hdr *h = hv_offload_mbuf_hdr(d);

		h->flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
		h->gso_type = VIRTIO_NET_HDR_GSO_NONE;
		h->gso_size = 0;
		h->hdr_len = lo->l2_len + lo->l3_len + lo->l4_len;
		h->csum_start = lo->l2_len + lo->l3_len;
		h->csum_offset = offsetof(struct rte_tcp_hdr, cksum);
		d->ol_flags |= hv_offload_hdr_flag;
	} else {
		d->ol_flags |= RTE_MBUF_F_TX_TCP_CKSUM |
			       (lo->ipv6 ? RTE_MBUF_F_TX_IPV6 : RTE_MBUF_F_TX_IPV4);
		d->l2_len = lo->l2_len;
		d->l3_len = lo->l3_len;
		d->l4_len = lo->l4_len;
	}
}

/* Cut @m into segments of @mss payload bytes; consumes @m. @return segments, 0 if dropped. */
static uint16_t
segment(struct rte_mbuf *m, const struct hv_offload_layout *lo, uint16_t mss, enum seg_csum mode,
	struct rte_mempool *mp, struct rte_mbuf **out, struct hv_offload_stats *st)
{
	uint16_t hlen = lo->l2_len + lo->l3_len + lo->l4_len;
	uint8_t hbuf[OFFLOAD_HDR_MAX];
	const uint8_t *hdr = rte_pktmbuf_read(m, 0, hlen, hbuf);
	uint32_t n = lo->payload_len == 0 ? 1 : (lo->payload_len + mss - 1) / mss;
	struct src_cursor c = {.seg = m, .off = 0};
	uint32_t skip = hlen;
	struct seg_sums ss;

	if (hdr == NULL || n > HV_OFFLOAD_MAX_SEGS) {
		st->drops[HV_OFFLOAD_DROP_BAD_L3]++;
		rte_pktmbuf_free(m);
		return 0;
	}
	if (rte_pktmbuf_alloc_bulk(mp, out, n) != 0) {
		st->drops[HV_OFFLOAD_DROP_NO_MBUF]++;
		rte_pktmbuf_free(m);
		return 0;
	}
	/* the payload starts after the headers */
	while (skip >= c.seg->data_len && c.seg->next != NULL) {
		skip -= c.seg->data_len;
		c.seg = c.seg->next;
	}
	c.off = skip;
	seg_sums_init(&ss, hdr, lo);
	for (uint32_t i = 0; i < n; i++) {
		struct rte_mbuf *d = out[i], *tail = d;
		uint32_t plen = RTE_MIN((uint32_t)mss, lo->payload_len - i * mss);

		rte_memcpy(rte_pktmbuf_mtod(d, uint8_t *), hdr, hlen);
		d->data_len = hlen;
		d->pkt_len = hlen;
		if (copy_payload(&c, d, &tail, plen, mp) != 0) {
			for (uint32_t j = 0; j < n; j++)
				rte_pktmbuf_free(out[j]);
			st->drops[HV_OFFLOAD_DROP_NO_MBUF]++;
			rte_pktmbuf_free(m);
			return 0;
		}
		d->port = m->port;
		d->vlan_tci = m->vlan_tci;
		fix_headers(d, lo, &ss, (uint16_t)i, (uint16_t)n, plen, mss, mode);
	}
	st->segmented++;
	st->segments += n;
	if (mode == SEG_CSUM_FULL)
		st->csum_finished += n;
	rte_pktmbuf_free(m);
	return (uint16_t)n;
}

/* Hand a GSO frame whole to a NIC's TSO (writes the headers: a private copy if shared). */
static struct rte_mbuf *
nic_tso(struct rte_mbuf *m, const struct hv_offload_layout *lo, uint16_t mss,
	struct rte_mempool *mp)
{
	uint8_t *l3;
	struct rte_tcp_hdr *tcp;
	uint64_t fl = RTE_MBUF_F_TX_TCP_SEG | RTE_MBUF_F_TX_TCP_CKSUM;

	m = make_writable(m, mp);
	if (m == NULL)
		return NULL;
	l3 = rte_pktmbuf_mtod_offset(m, uint8_t *, lo->l2_len);
	tcp = (struct rte_tcp_hdr *)(l3 + lo->l3_len);
	if (!lo->ipv6) {
		struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)l3;

		fl |= RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM;
		ip->hdr_checksum = 0;
		/* DPDK's TSO wants the pseudo-header sum without the length */
		tcp->cksum = rte_ipv4_phdr_cksum(ip, fl);
	} else {
		fl |= RTE_MBUF_F_TX_IPV6;
		tcp->cksum = rte_ipv6_phdr_cksum((struct rte_ipv6_hdr *)l3, fl);
	}
	clear_meta(m);
	m->ol_flags |= fl;
	m->l2_len = lo->l2_len;
	m->l3_len = lo->l3_len;
	m->l4_len = lo->l4_len;
	m->tso_segsz = mss;
	return m;
}

/*
 * A single frame with a partial TCP/UDP checksum to a NIC that finishes it:
 * the field already holds the pseudo-header sum DPDK expects. Only the
 * mbuf's offload fields change: a clone when others hold the frame.
 * @return the frame, NULL when the NIC cannot do it (the caller finishes).
 */
static struct rte_mbuf *
nic_csum(struct rte_mbuf **mp_m, const struct hv_offload_hdr *h, struct rte_mempool *mp)
{
	struct rte_mbuf *m = *mp_m, *c;
	uint8_t buf[OFFLOAD_HDR_MAX];
	uint32_t len = RTE_MIN(m->pkt_len, (uint32_t)OFFLOAD_HDR_MAX);
	const uint8_t *b = rte_pktmbuf_read(m, 0, len, buf);
	uint16_t l2, type, l3;
	uint8_t proto;
	uint64_t fl;

	if (b == NULL || offload_parse_l2(b, len, &l2, &type) != 0)
		return NULL;
	/*
	 * The NIC takes the headers' lengths from us: a header that lies about
	 * them (checked as parse_tcp() does) is finished in software instead.
	 */
	if (type == RTE_ETHER_TYPE_IPV4 && len >= l2 + sizeof(struct rte_ipv4_hdr)) {
		const struct rte_ipv4_hdr *ip = (const void *)(b + l2);

		l3 = (ip->version_ihl & 0xf) * 4;
		if ((ip->version_ihl >> 4) != 4 || l3 < sizeof(*ip) || len < (uint32_t)l2 + l3)
			return NULL;
		proto = ip->next_proto_id;
		fl = RTE_MBUF_F_TX_IPV4;
	} else if (type == RTE_ETHER_TYPE_IPV6 && len >= l2 + sizeof(struct rte_ipv6_hdr)) {
		if ((b[l2] >> 4) != 6)
			return NULL;
		l3 = sizeof(struct rte_ipv6_hdr);
		proto = ((const struct rte_ipv6_hdr *)(b + l2))->proto;
		fl = RTE_MBUF_F_TX_IPV6;
	} else {
		return NULL;
	}
	if (h->csum_start != l2 + l3)
		return NULL;
	if (proto == IPPROTO_TCP && h->csum_offset == offsetof(struct rte_tcp_hdr, cksum))
		fl |= RTE_MBUF_F_TX_TCP_CKSUM;
	else if (proto == IPPROTO_UDP &&
		 h->csum_offset == offsetof(struct rte_udp_hdr, dgram_cksum))
		fl |= RTE_MBUF_F_TX_UDP_CKSUM;
	else
		return NULL;
	if (!mbuf_exclusive(m)) {
		c = rte_pktmbuf_clone(m, mp);
		if (c == NULL)
			return NULL;
		rte_pktmbuf_free(m);
		*mp_m = m = c;
	}
	clear_meta(m);
	m->ol_flags |= fl;
	m->l2_len = l2;
	m->l3_len = l3;
	return m;
}

static uint16_t
drop(struct rte_mbuf *m, enum hv_offload_drop why, struct hv_offload_stats *st)
{
	st->drops[why]++;
	rte_pktmbuf_free(m);
	return 0;
}

/* A frame with a partial checksum and no GSO. */
static uint16_t
prepare_csum(struct rte_mbuf *m, const struct hv_offload_hdr *h, uint32_t caps,
	     struct rte_mempool *mp, struct rte_mbuf **out, struct hv_offload_stats *st)
{
	uint16_t start = h->csum_start, offset = h->csum_offset;

	if (!(caps & HV_OFFLOAD_CAP_ETHDEV) && (caps & HV_OFFLOAD_CAP_CSUM)) {
		st->passthrough++;
		out[0] = m;
		return 1;
	}
	if ((caps & HV_OFFLOAD_CAP_ETHDEV) && (caps & HV_OFFLOAD_CAP_CSUM)) {
		struct rte_mbuf *r = nic_csum(&m, h, mp);

		if (r != NULL) {
			st->passthrough++;
			st->hw_offload++;
			out[0] = r;
			return 1;
		}
	}
	m = make_writable(m, mp);
	if (m == NULL)
		return drop(NULL, HV_OFFLOAD_DROP_NO_MBUF, st);
	if (hv_offload_csum_finish(m, start, offset) != 0)
		return drop(m, HV_OFFLOAD_DROP_CSUM_RANGE, st);
	clear_meta(m);
	st->csum_finished++;
	out[0] = m;
	return 1;
}

uint16_t
hv_offload_prepare(struct rte_mbuf *m, uint32_t caps, struct rte_mempool *mp, struct rte_mbuf **out,
		   struct hv_offload_stats *st)
{
	struct hv_offload_layout lo;
	struct hv_offload_hdr h;
	enum hv_offload_drop rc;
	uint8_t gso;
	bool whole;

	if (!hv_offload_mbuf_has_hdr(m)) {
		out[0] = m;
		return 1;
	}
	/* one copy of the metadata: a private copy of the frame may replace @m */
	h = *hv_offload_mbuf_hdr(m);
	gso = h.gso_type & ~VIRTIO_NET_HDR_GSO_ECN;
	if (gso == VIRTIO_NET_HDR_GSO_NONE) {
		rc = hv_offload_check(m, &h, NULL);
		if (rc != HV_OFFLOAD_DROP__NONE)
			return drop(m, rc, st);
		if (!(h.flags & VIRTIO_NET_HDR_F_NEEDS_CSUM)) {
			out[0] = m;
			return 1;
		}
		return prepare_csum(m, &h, caps, mp, out, st);
	}
	rc = hv_offload_check(m, &h, &lo);
	if (rc != HV_OFFLOAD_DROP__NONE)
		return drop(m, rc, st);
	whole = (caps & HV_OFFLOAD_CAP_CSUM) &&
		(caps &
		 (gso == VIRTIO_NET_HDR_GSO_TCPV4 ? HV_OFFLOAD_CAP_TSO4 : HV_OFFLOAD_CAP_TSO6)) &&
		(!(h.gso_type & VIRTIO_NET_HDR_GSO_ECN) || (caps & HV_OFFLOAD_CAP_ECN));
	if (whole && !(caps & HV_OFFLOAD_CAP_ETHDEV)) {
		/* the guest takes it as it came: the header goes with it */
		st->passthrough++;
		out[0] = m;
		return 1;
	}
	/* a NIC segments only what is longer than one MSS */
	if (whole && lo.payload_len > h.gso_size &&
	    m->data_len >= lo.l2_len + lo.l3_len + lo.l4_len) {
		struct rte_mbuf *r = nic_tso(m, &lo, h.gso_size, mp);

		if (r == NULL)
			return drop(NULL, HV_OFFLOAD_DROP_NO_MBUF, st);
		st->passthrough++;
		st->hw_offload++;
		out[0] = r;
		return 1;
	}
	return segment(m, &lo, h.gso_size,
		       !(caps & HV_OFFLOAD_CAP_CSUM)    ? SEG_CSUM_FULL
		       : (caps & HV_OFFLOAD_CAP_ETHDEV) ? SEG_CSUM_NIC
							: SEG_CSUM_PARTIAL,
		       mp, out, st);
}
