/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Test helper: the Internet checksum (RFC 1071) written out naively, byte by
 * byte, so that tests check lib/offload and the PMDs against code that shares
 * nothing with them (not rte_raw_cksum() and friends).
 */
#ifndef HV_TEST_CSUM_H
#define HV_TEST_CSUM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/**
 * @sum plus the @n bytes at @p as 16-bit big-endian words (an odd last byte
 * is the high half of a word), without folding. Thread: any.
 */
uint32_t hv_test_csum_add(uint32_t sum, const uint8_t *p, size_t n);

/** @sum folded to 16 bits (end-around carry), not complemented. Thread: any. */
uint16_t hv_test_csum_fold(uint32_t sum);

/** hv_test_csum_fold(hv_test_csum_add(@sum, @p, @n)). Thread: any. */
uint16_t hv_test_csum(uint32_t sum, const uint8_t *p, size_t n);

/**
 * The TCP pseudo-header sum, unfolded, of a segment of @len bytes (TCP header
 * and payload) after the IPv4 or (@v6) IPv6 header at @ip. Thread: any.
 */
uint32_t hv_test_csum_pseudo(const uint8_t *ip, bool v6, uint32_t len);

#endif
