/* SPDX-License-Identifier: BSD-3-Clause */
#include "hv_test_csum.h"

uint32_t
hv_test_csum_add(uint32_t sum, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	if (n & 1)
		sum += (uint32_t)p[n - 1] << 8;
	return sum;
}

uint16_t
hv_test_csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

uint16_t
hv_test_csum(uint32_t sum, const uint8_t *p, size_t n)
{
	return hv_test_csum_fold(hv_test_csum_add(sum, p, n));
}

uint32_t
hv_test_csum_pseudo(const uint8_t *ip, bool v6, uint32_t len)
{
	/* addresses, the segment length, and the protocol (6) */
	if (v6)
		return hv_test_csum_add(0, ip + 8, 32) + (len >> 16) + (len & 0xffff) + 6;
	return hv_test_csum_add(0, ip + 12, 8) + len + 6;
}
