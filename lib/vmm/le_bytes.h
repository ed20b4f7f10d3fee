/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Little-endian stores and loads into guest-visible tables (PCI config
 * space, MP and ACPI tables) at any alignment, and the byte checksum the
 * firmware tables carry.
 */
#ifndef HV_VMM_LE_BYTES_H
#define HV_VMM_LE_BYTES_H

#include <stddef.h>
#include <stdint.h>

static inline void
le_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void
le_put32(uint8_t *p, uint32_t v)
{
	le_put16(p, (uint16_t)v);
	le_put16(p + 2, (uint16_t)(v >> 16));
}

static inline void
le_put64(uint8_t *p, uint64_t v)
{
	le_put32(p, (uint32_t)v);
	le_put32(p + 4, (uint32_t)(v >> 32));
}

static inline uint32_t
le_get32(const uint8_t *p)
{
	return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The byte that makes the @n bytes at @p sum to 0 (MP and ACPI tables). */
static inline uint8_t
table_checksum(const uint8_t *p, size_t n)
{
	uint8_t s = 0;

	while (n--)
		s = (uint8_t)(s + *p++);
	return (uint8_t)-s;
}

#endif
