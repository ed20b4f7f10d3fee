/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Crafted TCP frames for the lib/offload tests (test_offload.c,
 * test_offload_neg.c), as a Linux guest hands them with TSO: big-endian
 * field writers, the frame builder and its mbuf and virtio-net header.
 * Test thread only; failures are Check assertions.
 */
#ifndef HV_TEST_OFFLOAD_FRAMES_H
#define HV_TEST_OFFLOAD_FRAMES_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "hv_offload.h"

#define FRAME_MAX 70000

struct frame_spec {
	bool v6;
	bool vlan;
	uint8_t ip_opts;  /* IPv4 option bytes (multiple of 4) */
	uint8_t tcp_opts; /* TCP option bytes (multiple of 4) */
	uint32_t payload;
	uint8_t tcp_flags;
	uint8_t tos; /* IPv4 TOS / IPv6 traffic class (ECN bits) */
};

struct frame {
	uint8_t b[FRAME_MAX];
	uint32_t len;
	uint16_t l2, l3, l4;
};

/** The pool every test's mbufs come from (made by main()). */
extern struct rte_mempool *test_mp;

void put16(uint8_t *p, uint16_t v);
void put32(uint8_t *p, uint32_t v);
uint16_t get16(const uint8_t *p);
uint32_t get32(const uint8_t *p);
/** A TCP frame as Linux sends it with TSO: partial checksum (the pseudo-header sum). */
void craft(struct frame *f, const struct frame_spec *s);
/** The frame as an mbuf chain of @piece-byte segments, with the header @h if not NULL. */
struct rte_mbuf *
to_mbuf(const uint8_t *b, uint32_t len, uint32_t piece, const struct hv_offload_hdr *h);
/** The virtio-net header of a TSO send of @f at @mss (hdr_len left 0: a hint only). */
struct hv_offload_hdr tso_hdr(const struct frame *f, uint16_t mss, bool ecn);
/** hv_offload_check() on the frame @b as an mbuf. */
enum hv_offload_drop check_only(const uint8_t *b, uint32_t len, const struct hv_offload_hdr *h);
/** The validation rules' tests (test_offload_neg.c). */
TCase *offload_validation_tcase(void);

#endif
