/* SPDX-License-Identifier: BSD-3-Clause */
/* lib/offload internals shared by its files. */
#ifndef HV_OFFLOAD_INTERNAL_H
#define HV_OFFLOAD_INTERNAL_H

#include <stdint.h>

#include "hv_offload.h"

/* Longest header stack parsed: Ethernet, two tags, IPv4 with options, TCP with options. */
#define OFFLOAD_HDR_MAX (14 + 2 * 4 + 60 + 60)

/*
 * Ethernet header and up to two VLAN tags in the first @len bytes at @b.
 * @return 0 with the header length and the (host order) ethertype, -1 if cut.
 */
int offload_parse_l2(const uint8_t *b, uint32_t len, uint16_t *l2_len, uint16_t *ethertype);

#endif
