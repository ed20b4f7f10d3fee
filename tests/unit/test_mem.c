/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the guest memory helpers: hv_mem_gpa() (clipping, the hint
 * cache), hv_mem_uva() bounds, and the region check of hv_mem_region_map().
 * Same guest layout as test_vring.c:
 *   region 0: 0x10000..0x18000 -> buf + 0x00000
 *   region 1: 0x18000..0x20000 -> buf + 0x10000 (GPA-adjacent to 0, not in host)
 *   gap:      0x20000..0x40000
 *   region 2: 0x40000..0x50000 -> buf + 0x20000
 */
#include <check.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vhost_mem.h"

#define BUF_SIZE 0x30000
#define R0_GPA 0x10000u
#define R1_GPA 0x18000u
#define GAP_GPA 0x20000u
#define R2_GPA 0x40000u
#define R2_END 0x50000u

static uint8_t *buf;
static struct hv_mem mem;

static void
setup(void)
{
	buf = aligned_alloc(4096, BUF_SIZE);
	ck_assert_ptr_nonnull(buf);
	memset(buf, 0, BUF_SIZE);
	memset(&mem, 0, sizeof(mem));
	mem.r[0] = (struct hv_mem_region){.gpa = R0_GPA, .size = 0x8000, .uaddr = 0x7000000,
					  .hva = buf};
	mem.r[1] = (struct hv_mem_region){.gpa = R1_GPA, .size = 0x8000, .uaddr = 0x7100000,
					  .hva = buf + 0x10000};
	mem.r[2] = (struct hv_mem_region){.gpa = R2_GPA, .size = 0x10000, .uaddr = 0x7200000,
					  .hva = buf + 0x20000};
	mem.n = 3;
}

static void
teardown(void)
{
	free(buf);
	buf = NULL;
}

/* Host address of a guest-physical address (test layout only). */
static uint8_t *
host(uint64_t gpa)
{
	if (gpa >= R2_GPA)
		return buf + 0x20000 + (gpa - R2_GPA);
	if (gpa >= R1_GPA)
		return buf + 0x10000 + (gpa - R1_GPA);
	return buf + (gpa - R0_GPA);
}

START_TEST(mem_gpa_clip_and_hint)
{
	uint64_t len = 0x100;
	uint32_t h = 0;

	ck_assert_ptr_eq(hv_mem_gpa(&mem, &h, R2_GPA + 0x10, &len), host(R2_GPA + 0x10));
	ck_assert_uint_eq(len, 0x100);
	ck_assert_uint_eq(h, 2);
	/* clipped to the end of region 0, hint now 0 */
	len = 0x1000;
	ck_assert_ptr_eq(hv_mem_gpa(&mem, &h, R1_GPA - 0x10, &len), host(R1_GPA - 0x10));
	ck_assert_uint_eq(len, 0x10);
	ck_assert_uint_eq(h, 0);
	/* a hit on the hinted region leaves the hint alone */
	len = UINT64_MAX;
	ck_assert_ptr_eq(hv_mem_gpa(&mem, &h, R0_GPA, &len), host(R0_GPA));
	ck_assert_uint_eq(len, 0x8000);
	ck_assert_uint_eq(h, 0);
	/* a hint past the table is ignored, even if a stale entry sits there */
	mem.r[5] = (struct hv_mem_region){.gpa = R1_GPA, .size = 0x8000, .hva = buf + 0x28000};
	h = 5;
	len = 1;
	ck_assert_ptr_eq(hv_mem_gpa(&mem, &h, R1_GPA, &len), host(R1_GPA));
	ck_assert_uint_eq(h, 1);
	/* misses do not move the hint or touch len */
	len = 7;
	ck_assert_ptr_null(hv_mem_gpa(&mem, &h, GAP_GPA, &len));
	ck_assert_ptr_null(hv_mem_gpa(&mem, &h, R2_END, &len));
	ck_assert_ptr_null(hv_mem_gpa(&mem, &h, R0_GPA - 1, &len));
	ck_assert_ptr_null(hv_mem_gpa(&mem, &h, UINT64_MAX, &len));
	ck_assert_uint_eq(h, 1);
	ck_assert_uint_eq(len, 7);
	/* last byte of a region */
	len = 2;
	ck_assert_ptr_eq(hv_mem_gpa(&mem, &h, R2_END - 1, &len), host(R2_END - 1));
	ck_assert_uint_eq(len, 1);
	/* an empty table */
	mem.n = 0;
	ck_assert_ptr_null(hv_mem_gpa(&mem, &h, R0_GPA, &len));
}
END_TEST

START_TEST(mem_uva_bounds)
{
	ck_assert_ptr_eq(hv_mem_uva(&mem, 0x7000000, 0x8000), buf);
	ck_assert_ptr_eq(hv_mem_uva(&mem, 0x7000010, 0x10), buf + 0x10);
	ck_assert_ptr_eq(hv_mem_uva(&mem, 0x7007fff, 1), buf + 0x7fff);
	ck_assert_ptr_eq(hv_mem_uva(&mem, 0x7200000 + 0x100, 0xff00), buf + 0x20100);
	/* crossing the region end, past it, before it */
	ck_assert_ptr_null(hv_mem_uva(&mem, 0x7007fff, 2));
	ck_assert_ptr_null(hv_mem_uva(&mem, 0x7000000, 0x8001));
	ck_assert_ptr_null(hv_mem_uva(&mem, 0x7008000, 1));
	ck_assert_ptr_null(hv_mem_uva(&mem, 0x6ffffff, 1));
	ck_assert_ptr_null(hv_mem_uva(&mem, 0x7000010, UINT64_MAX));
	ck_assert_ptr_null(hv_mem_uva(&mem, UINT64_MAX, 1));
}
END_TEST

/* The walk relies on no region ending at 2^64: mapping refuses one. */
START_TEST(mem_map_refuses_top_region)
{
	struct vhost_memory_region d = {.guest_phys_addr = UINT64_C(0xffffffffffff0000),
					.memory_size = 0x10000, .userspace_addr = 0x10000};
	struct hv_mem_region r;
	const char *why = NULL;
	int fd = memfd_create("test_vring", MFD_CLOEXEC);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, 0x10000), 0);
	ck_assert_int_lt(hv_mem_region_map(&d, fd, &r, &why), 0);
	ck_assert_ptr_nonnull(why);
	ck_assert_int_eq(fcntl(fd, F_GETFD), -1); /* consumed */
}
END_TEST

static Suite *
mem_suite(void)
{
	Suite *s = suite_create("mem");
	TCase *tc;

	tc = tcase_create("mem");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, mem_gpa_clip_and_hint);
	tcase_add_test(tc, mem_uva_bounds);
	tcase_add_test(tc, mem_map_refuses_top_region);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(mem_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
