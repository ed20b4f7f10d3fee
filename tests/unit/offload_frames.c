/* SPDX-License-Identifier: BSD-3-Clause */
/* Crafted TCP frames for the lib/offload tests: see offload_frames.h. */
#include <check.h>
#include <string.h>

#include "hv_test_csum.h"
#include "hv_test_mbuf.h"
#include "offload_frames.h"

struct rte_mempool *test_mp;
void
put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

void
put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v & 0xffff);
}

uint16_t
get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

uint32_t
get32(const uint8_t *p)
{
	return (uint32_t)get16(p) << 16 | get16(p + 2);
}

/* A TCP frame as Linux sends it with TSO: partial checksum (the pseudo-header sum). */
void
craft(struct frame *f, const struct frame_spec *s)
{
	uint8_t *p = f->b;
	uint8_t *ip, *tcp;
	uint32_t tcp_len;

	memset(f, 0, sizeof(*f));
	memcpy(p, "\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01", 12);
	f->l2 = 14;
	if (s->vlan) {
		put16(p + 12, 0x8100);
		put16(p + 14, 42);
		f->l2 = 18;
	}
	put16(p + f->l2 - 2, s->v6 ? 0x86dd : 0x0800);
	ip = p + f->l2;
	f->l3 = s->v6 ? 40 : 20 + s->ip_opts;
	f->l4 = 20 + s->tcp_opts;
	tcp_len = f->l4 + s->payload;
	if (s->v6) {
		ip[0] = 0x60 | s->tos >> 4;
		ip[1] = (uint8_t)(s->tos << 4);
		put16(ip + 4, (uint16_t)tcp_len);
		ip[6] = 6;
		ip[7] = 64;
		for (int i = 0; i < 16; i++) {
			ip[8 + i] = (uint8_t)(0x20 + i);
			ip[24 + i] = (uint8_t)(0x40 + i);
		}
	} else {
		ip[0] = 0x40 | (f->l3 / 4);
		ip[1] = s->tos;
		put16(ip + 2, (uint16_t)(f->l3 + tcp_len));
		put16(ip + 4, 0xfffe); /* the id wraps within the send */
		put16(ip + 6, 0x4000); /* DF */
		ip[8] = 64;
		ip[9] = 6;
		memcpy(ip + 12, "\x0a\x00\x00\x01\x0a\x00\x00\x02", 8);
		for (int i = 0; i < s->ip_opts; i++)
			ip[20 + i] = 1; /* NOP options */
		put16(ip + 10, (uint16_t)~hv_test_csum(0, ip, f->l3));
	}
	tcp = ip + f->l3;
	put16(tcp, 40000);
	put16(tcp + 2, 5201);
	put32(tcp + 4, 0xfffff000); /* the sequence wraps within the send */
	put32(tcp + 8, 12345);
	tcp[12] = (uint8_t)((f->l4 / 4) << 4);
	tcp[13] = s->tcp_flags;
	put16(tcp + 14, 501);
	for (int i = 0; i + 10 <= s->tcp_opts; i += 12) {
		/* NOP NOP timestamp(10) */
		tcp[20 + i] = 1;
		tcp[21 + i] = 1;
		tcp[22 + i] = 8;
		tcp[23 + i] = 10;
		put32(tcp + 24 + i, 0x11223344 + i);
		put32(tcp + 28 + i, 0x55667788);
	}
	for (uint32_t i = 0; i < s->payload; i++)
		tcp[f->l4 + i] = (uint8_t)(i * 7 + i / 251);
	put16(tcp + 16, hv_test_csum_fold(hv_test_csum_pseudo(ip, s->v6, tcp_len)));
	f->len = f->l2 + f->l3 + tcp_len;
}

/* The frame as an mbuf chain of @piece-byte segments, with metadata. */
struct rte_mbuf *
to_mbuf(const uint8_t *b, uint32_t len, uint32_t piece, const struct hv_offload_hdr *h)
{
	struct rte_mbuf *head = hv_test_mbuf_chain(test_mp, b, len, piece);

	ck_assert_ptr_nonnull(head);
	if (h != NULL) {
		*hv_offload_mbuf_hdr(head) = *h;
		head->ol_flags |= hv_offload_hdr_flag;
	}
	return head;
}

struct hv_offload_hdr
tso_hdr(const struct frame *f, uint16_t mss, bool ecn)
{
	struct hv_offload_hdr h = {
		.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM,
		.gso_type = (uint8_t)((f->b[f->l2] >> 4 == 6 ? VIRTIO_NET_HDR_GSO_TCPV6
							     : VIRTIO_NET_HDR_GSO_TCPV4) |
				      (ecn ? VIRTIO_NET_HDR_GSO_ECN : 0)),
		.hdr_len = 0, /* a hint only: deliberately useless */
		.gso_size = mss,
		.csum_start = (uint16_t)(f->l2 + f->l3),
		.csum_offset = 16,
	};
	return h;
}

/* hv_offload_check() on the frame @b as an mbuf. */
enum hv_offload_drop
check_only(const uint8_t *b, uint32_t len, const struct hv_offload_hdr *h)
{
	struct rte_mbuf *m = to_mbuf(b, len, 2048, h);
	enum hv_offload_drop rc = hv_offload_check(m, h, NULL);

	rte_pktmbuf_free(m);
	return rc;
}
