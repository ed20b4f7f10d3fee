/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Test helper: a guest memory table built by hand over one malloc'd buffer,
 * for the unit tests of the translation helpers and the ring walk.
 *
 * Guest layout (GPA -> buffer offset):
 *   region 0: 0x10000..0x18000 -> buf + 0x00000
 *   region 1: 0x18000..0x20000 -> buf + 0x10000 (GPA-adjacent to 0, not in host)
 *   gap:      0x20000..0x40000
 *   region 2: 0x40000..0x50000 -> buf + 0x20000
 * Each region's frontend address (uaddr) is 0x7000000 + 0x100000 * index.
 */
#ifndef HV_TEST_MEM_H
#define HV_TEST_MEM_H

#include <stdint.h>

#include "vhost_mem.h"

/* the buffer, and the layout's addresses under the names the tests use */
#define HV_TEST_MEM_SIZE 0x30000
#define R0_GPA 0x10000u
#define R1_GPA 0x18000u
#define GAP_GPA 0x20000u
#define R2_GPA 0x40000u
#define R2_END 0x50000u

/**
 * Allocate the zeroed, page-aligned buffer and fill @mem (cleared first) with
 * the three regions of the layout over it.
 *
 * Thread: any. @return the buffer, owned by the caller (free()); NULL when
 *   out of memory (@mem is not touched then).
 */
uint8_t *hv_test_mem_init(struct hv_mem *mem);

/**
 * The host address of guest-physical @gpa in @buf of hv_test_mem_init(); @gpa
 * must lie in one of the regions (not checked: tests compare against it).
 *
 * Thread: any.
 */
uint8_t *hv_test_mem_host(uint8_t *buf, uint64_t gpa);

#endif
