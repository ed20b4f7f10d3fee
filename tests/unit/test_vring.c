/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of hv_vring_walk() on synthetic rings: the memory table is built
 * by hand over a malloc'd buffer, in hv_test_mem.h's layout (tests/lib); test_mem.c
 * tests the translation helpers.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hv_test_mem.h"
#include "vhost_mem.h"
#include "vhost_vring.h"

#define RING 16

static uint8_t *buf;
static struct hv_mem mem;
static struct vring_desc ring[256];
static struct hv_chain chain;
static uint32_t hint;

static void
setup(void)
{
	buf = hv_test_mem_init(&mem);
	ck_assert_ptr_nonnull(buf);
	memset(ring, 0, sizeof(ring));
	memset(&chain, 0xa5, sizeof(chain));
	hint = 0;
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
	return hv_test_mem_host(buf, gpa);
}

static void
set_desc(struct vring_desc *d, uint64_t addr, uint32_t len, uint16_t flags, uint16_t next)
{
	d->addr = addr;
	d->len = len;
	d->flags = flags;
	d->next = next;
}

/* An indirect table of @n entries at guest address @gpa (its host copy). */
static struct vring_desc *
itable(uint64_t gpa)
{
	return (struct vring_desc *)host(gpa);
}

static int
walk(uint16_t size, uint16_t head, bool writable, bool indirect_ok)
{
	return hv_vring_walk(ring, size, &mem, &hint, head, writable, indirect_ok, &chain);
}

static void
assert_iov(unsigned int i, uint64_t gpa, uint32_t len)
{
	ck_assert_uint_lt(i, chain.n_iov);
	ck_assert_ptr_eq(chain.iov[i].base, host(gpa));
	ck_assert_uint_eq(chain.iov[i].len, len);
}

/* ---- good chains ---- */

START_TEST(single_desc)
{
	set_desc(&ring[3], R0_GPA + 0x100, 64, 0, 0);
	ck_assert_int_eq(walk(RING, 3, false, false), 0);
	ck_assert_uint_eq(chain.head, 3);
	ck_assert_uint_eq(chain.n_iov, 1);
	ck_assert_uint_eq(chain.len, 64);
	assert_iov(0, R0_GPA + 0x100, 64);
}
END_TEST

START_TEST(chain_of_3)
{
	const uint16_t f = VRING_DESC_F_WRITE | VRING_DESC_F_NEXT;

	set_desc(&ring[0], R0_GPA, 100, f, 7);
	set_desc(&ring[7], R2_GPA + 0x1000, 200, f, 15);
	set_desc(&ring[15], R1_GPA + 0x10, 300, VRING_DESC_F_WRITE, 0);
	ck_assert_int_eq(walk(RING, 0, true, false), 0);
	ck_assert_uint_eq(chain.n_iov, 3);
	ck_assert_uint_eq(chain.len, 600);
	assert_iov(0, R0_GPA, 100);
	assert_iov(1, R2_GPA + 0x1000, 200);
	assert_iov(2, R1_GPA + 0x10, 300);
}
END_TEST

START_TEST(span_two_regions)
{
	set_desc(&ring[0], R1_GPA - 0x100, 0x300, 0, 0);
	ck_assert_int_eq(walk(RING, 0, false, false), 0);
	ck_assert_uint_eq(chain.n_iov, 2);
	ck_assert_uint_eq(chain.len, 0x300);
	assert_iov(0, R1_GPA - 0x100, 0x100);
	assert_iov(1, R1_GPA, 0x200);
	ck_assert_uint_eq(hint, 1);
}
END_TEST

START_TEST(chain_exactly_ring_size)
{
	for (uint16_t i = 0; i < 4; i++)
		set_desc(&ring[i], R0_GPA + i * 0x100u, 16, i < 3 ? VRING_DESC_F_NEXT : 0, i + 1);
	ck_assert_int_eq(walk(4, 0, false, false), 0);
	ck_assert_uint_eq(chain.n_iov, 4);
	ck_assert_uint_eq(chain.len, 64);
}
END_TEST

START_TEST(zero_len_in_chain)
{
	set_desc(&ring[0], R0_GPA, 16, VRING_DESC_F_NEXT, 1);
	/* no translation for an empty descriptor: even a gap address is harmless */
	set_desc(&ring[1], GAP_GPA, 0, VRING_DESC_F_NEXT, 2);
	set_desc(&ring[2], R2_GPA, 16, 0, 0);
	ck_assert_int_eq(walk(RING, 0, false, false), 0);
	ck_assert_uint_eq(chain.n_iov, 2);
	ck_assert_uint_eq(chain.len, 32);
	assert_iov(0, R0_GPA, 16);
	assert_iov(1, R2_GPA, 16);
}
END_TEST

START_TEST(indirect_good)
{
	const uint64_t t = R2_GPA + 0x800;
	struct vring_desc *it = itable(t);

	for (uint16_t i = 0; i < 4; i++)
		set_desc(&it[i], R0_GPA + 0x1000u * i, 10u + i, i < 3 ? VRING_DESC_F_NEXT : 0,
			 i + 1);
	set_desc(&ring[5], t, 4 * sizeof(struct vring_desc), VRING_DESC_F_INDIRECT, 0);
	ck_assert_int_eq(walk(RING, 5, false, true), 0);
	ck_assert_uint_eq(chain.head, 5);
	ck_assert_uint_eq(chain.n_iov, 4);
	ck_assert_uint_eq(chain.len, 10 + 11 + 12 + 13);
	for (unsigned int i = 0; i < 4; i++)
		assert_iov(i, R0_GPA + 0x1000u * i, 10 + i);
}
END_TEST

/* ---- ring corruption ---- */

START_TEST(head_out_of_range)
{
	ck_assert_int_eq(walk(RING, RING, false, false), HV_VHOST_DROP_BAD_DESC_INDEX);
	ck_assert_uint_eq(chain.n_iov, 0);
	ck_assert_int_eq(walk(RING, UINT16_MAX, false, false), HV_VHOST_DROP_BAD_DESC_INDEX);
}
END_TEST

START_TEST(next_out_of_range)
{
	set_desc(&ring[0], R0_GPA, 16, VRING_DESC_F_NEXT, RING);
	ck_assert_int_eq(walk(RING, 0, false, false), HV_VHOST_DROP_BAD_DESC_INDEX);
}
END_TEST

START_TEST(loop_a_b_a)
{
	set_desc(&ring[2], R0_GPA, 16, VRING_DESC_F_NEXT, 9);
	set_desc(&ring[9], R0_GPA + 16, 16, VRING_DESC_F_NEXT, 2);
	ck_assert_int_eq(walk(RING, 2, false, false), HV_VHOST_DROP_BAD_CHAIN);
}
END_TEST

START_TEST(chain_longer_than_ring)
{
	/* 0->1->2->3->0: one descriptor more than the ring holds */
	for (uint16_t i = 0; i < 4; i++)
		set_desc(&ring[i], R0_GPA + i * 0x100u, 16, VRING_DESC_F_NEXT, (i + 1) % 4);
	ck_assert_int_eq(walk(4, 0, false, false), HV_VHOST_DROP_BAD_CHAIN);
	/* a self loop */
	set_desc(&ring[0], R0_GPA, 16, VRING_DESC_F_NEXT, 0);
	ck_assert_int_eq(walk(RING, 0, false, false), HV_VHOST_DROP_BAD_CHAIN);
}
END_TEST

START_TEST(direction)
{
	set_desc(&ring[0], R0_GPA, 16, VRING_DESC_F_WRITE, 0);
	ck_assert_int_eq(walk(RING, 0, false, false), HV_VHOST_DROP_BAD_DIRECTION);
	set_desc(&ring[0], R0_GPA, 16, 0, 0);
	ck_assert_int_eq(walk(RING, 0, true, false), HV_VHOST_DROP_BAD_DIRECTION);
	/* mixed chain: the second descriptor is writable on a read-only walk */
	set_desc(&ring[0], R0_GPA, 16, VRING_DESC_F_NEXT, 1);
	set_desc(&ring[1], R0_GPA + 16, 16, VRING_DESC_F_WRITE, 0);
	ck_assert_int_eq(walk(RING, 0, false, false), HV_VHOST_DROP_BAD_DIRECTION);
}
END_TEST

START_TEST(bad_addr)
{
	set_desc(&ring[0], GAP_GPA + 0x100, 16, 0, 0);
	ck_assert_int_eq(walk(RING, 0, false, false), HV_VHOST_DROP_BAD_ADDR);
	set_desc(&ring[0], 0, 16, 0, 0);
	ck_assert_int_eq(walk(RING, 0, false, false), HV_VHOST_DROP_BAD_ADDR);
	/* starts in region 1 and runs into the gap */
	set_desc(&ring[0], GAP_GPA - 8, 16, 0, 0);
	ck_assert_int_eq(walk(RING, 0, false, false), HV_VHOST_DROP_BAD_ADDR);
	/* runs past the end of the last region */
	set_desc(&ring[0], R2_END - 0x100, 0x200, 0, 0);
	ck_assert_int_eq(walk(RING, 0, false, false), HV_VHOST_DROP_BAD_ADDR);
	set_desc(&ring[0], R2_END, 1, 0, 0);
	ck_assert_int_eq(walk(RING, 0, false, false), HV_VHOST_DROP_BAD_ADDR);
}
END_TEST

START_TEST(len_overflow)
{
	/* addr + len wraps past 2^64: must not wrap around to a low region */
	set_desc(&ring[0], UINT64_C(0xfffffffffffff000), 0x2000, 0, 0);
	ck_assert_int_eq(walk(RING, 0, false, false), HV_VHOST_DROP_BAD_ADDR);
	ck_assert_uint_eq(chain.n_iov, 0);
	/* the same with a region at GPA 0 */
	mem.r[0].gpa = 0;
	ck_assert_int_eq(walk(RING, 0, false, false), HV_VHOST_DROP_BAD_ADDR);
	set_desc(&ring[0], UINT64_MAX, 2, 0, 0);
	ck_assert_int_eq(walk(RING, 0, false, false), HV_VHOST_DROP_BAD_ADDR);
}
END_TEST

START_TEST(too_many_segs)
{
	for (uint16_t i = 0; i < 256; i++)
		set_desc(&ring[i], R0_GPA + i, 1, VRING_DESC_F_NEXT, i + 1);
	/* HV_CHAIN_MAX_IOV descriptors fit */
	ring[HV_CHAIN_MAX_IOV - 1].flags = 0;
	ck_assert_int_eq(walk(256, 0, false, false), 0);
	ck_assert_uint_eq(chain.n_iov, HV_CHAIN_MAX_IOV);
	/* one more does not */
	ring[HV_CHAIN_MAX_IOV - 1].flags = VRING_DESC_F_NEXT;
	ring[HV_CHAIN_MAX_IOV].flags = 0;
	ck_assert_int_eq(walk(256, 0, false, false), HV_VHOST_DROP_TOO_MANY_SEGS);
	ck_assert_uint_eq(chain.n_iov, HV_CHAIN_MAX_IOV);
	/* the last two pieces come from a descriptor spanning two regions */
	set_desc(&ring[HV_CHAIN_MAX_IOV - 2], R1_GPA - 1, 2, 0, 0);
	ck_assert_int_eq(walk(256, 0, false, false), 0);
	ck_assert_uint_eq(chain.n_iov, HV_CHAIN_MAX_IOV);
	/* one descriptor later, its second piece is one too many */
	set_desc(&ring[HV_CHAIN_MAX_IOV - 2], R0_GPA, 1, VRING_DESC_F_NEXT, HV_CHAIN_MAX_IOV - 1);
	set_desc(&ring[HV_CHAIN_MAX_IOV - 1], R1_GPA - 1, 2, 0, 0);
	ck_assert_int_eq(walk(256, 0, false, false), HV_VHOST_DROP_TOO_MANY_SEGS);
	ck_assert_uint_eq(chain.n_iov, HV_CHAIN_MAX_IOV);
}
END_TEST

START_TEST(too_long)
{
	const size_t big = 2 * (size_t)HV_CHAIN_MAX_LEN;
	uint8_t *p = mmap(NULL, big, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	ck_assert_ptr_ne(p, MAP_FAILED);
	mem.r[3] = (struct hv_mem_region){
		.gpa = 1ull << 32, .size = big, .uaddr = 1ull << 40, .hva = p};
	mem.n = 4;
	/* the limit itself is allowed */
	set_desc(&ring[0], 1ull << 32, HV_CHAIN_MAX_LEN, 0, 0);
	ck_assert_int_eq(walk(RING, 0, false, false), 0);
	ck_assert_uint_eq(chain.len, HV_CHAIN_MAX_LEN);
	ck_assert_uint_eq(chain.n_iov, 1);
	set_desc(&ring[0], 1ull << 32, HV_CHAIN_MAX_LEN + 1, 0, 0);
	ck_assert_int_eq(walk(RING, 0, false, false), HV_VHOST_DROP_TOO_LONG);
	/* over the limit as a sum */
	set_desc(&ring[0], 1ull << 32, HV_CHAIN_MAX_LEN - 10, VRING_DESC_F_NEXT, 1);
	set_desc(&ring[1], 1ull << 32, 11, 0, 0);
	ck_assert_int_eq(walk(RING, 0, false, false), HV_VHOST_DROP_TOO_LONG);
	munmap(p, big);
}
END_TEST

/* ---- indirect tables ---- */

START_TEST(indirect_not_negotiated)
{
	set_desc(itable(R2_GPA), R0_GPA, 16, 0, 0);
	set_desc(&ring[0], R2_GPA, 16, VRING_DESC_F_INDIRECT, 0);
	ck_assert_int_eq(walk(RING, 0, false, false), HV_VHOST_DROP_BAD_INDIRECT);
	ck_assert_int_eq(walk(RING, 0, false, true), 0);
}
END_TEST

START_TEST(indirect_with_next)
{
	set_desc(itable(R2_GPA), R0_GPA, 16, 0, 0);
	set_desc(&ring[0], R2_GPA, 16, VRING_DESC_F_INDIRECT | VRING_DESC_F_NEXT, 1);
	set_desc(&ring[1], R0_GPA, 16, 0, 0);
	ck_assert_int_eq(walk(RING, 0, false, true), HV_VHOST_DROP_BAD_INDIRECT);
	/* an indirect descriptor behind a direct one is fine as a chain's last */
	set_desc(&ring[0], R0_GPA, 16, VRING_DESC_F_NEXT, 1);
	set_desc(&ring[1], R2_GPA, 16, VRING_DESC_F_INDIRECT, 0);
	ck_assert_int_eq(walk(RING, 0, false, true), 0);
	ck_assert_uint_eq(chain.n_iov, 2);
}
END_TEST

START_TEST(indirect_nested)
{
	struct vring_desc *it = itable(R2_GPA);

	set_desc(&it[0], R0_GPA, 16, VRING_DESC_F_NEXT, 1);
	set_desc(&it[1], R2_GPA, 32, VRING_DESC_F_INDIRECT, 0);
	set_desc(&ring[0], R2_GPA, 32, VRING_DESC_F_INDIRECT, 0);
	ck_assert_int_eq(walk(RING, 0, false, true), HV_VHOST_DROP_BAD_INDIRECT);
}
END_TEST

START_TEST(indirect_bad_len)
{
	set_desc(&ring[0], R2_GPA, 24, VRING_DESC_F_INDIRECT, 0);
	ck_assert_int_eq(walk(RING, 0, false, true), HV_VHOST_DROP_BAD_INDIRECT);
	set_desc(&ring[0], R2_GPA, 15, VRING_DESC_F_INDIRECT, 0);
	ck_assert_int_eq(walk(RING, 0, false, true), HV_VHOST_DROP_BAD_INDIRECT);
	set_desc(&ring[0], R2_GPA, 0, VRING_DESC_F_INDIRECT, 0);
	ck_assert_int_eq(walk(RING, 0, false, true), HV_VHOST_DROP_BAD_INDIRECT);
	/* more entries than the largest ring */
	set_desc(&ring[0], R2_GPA, (HV_VRING_MAX_INDIRECT + 1) * 16, VRING_DESC_F_INDIRECT, 0);
	ck_assert_int_eq(walk(RING, 0, false, true), HV_VHOST_DROP_BAD_INDIRECT);
}
END_TEST

START_TEST(indirect_outside_memory)
{
	set_desc(&ring[0], GAP_GPA + 0x1000, 32, VRING_DESC_F_INDIRECT, 0);
	ck_assert_int_eq(walk(RING, 0, false, true), HV_VHOST_DROP_BAD_INDIRECT);
	/* crossing the end of region 1 into the gap */
	set_desc(&ring[0], GAP_GPA - 16, 32, VRING_DESC_F_INDIRECT, 0);
	ck_assert_int_eq(walk(RING, 0, false, true), HV_VHOST_DROP_BAD_INDIRECT);
	/* crossing from region 0 into region 1: not contiguous in host memory */
	set_desc(&ring[0], R1_GPA - 16, 32, VRING_DESC_F_INDIRECT, 0);
	ck_assert_int_eq(walk(RING, 0, false, true), HV_VHOST_DROP_BAD_INDIRECT);
	/* past the end of the last region */
	set_desc(&ring[0], R2_END - 16, 32, VRING_DESC_F_INDIRECT, 0);
	ck_assert_int_eq(walk(RING, 0, false, true), HV_VHOST_DROP_BAD_INDIRECT);
}
END_TEST

START_TEST(indirect_next_out_of_range)
{
	struct vring_desc *it = itable(R2_GPA);

	set_desc(&it[0], R0_GPA, 16, VRING_DESC_F_NEXT, 2);
	set_desc(&it[1], R0_GPA, 16, 0, 0);
	set_desc(&ring[0], R2_GPA, 32, VRING_DESC_F_INDIRECT, 0);
	ck_assert_int_eq(walk(RING, 0, false, true), HV_VHOST_DROP_BAD_DESC_INDEX);
}
END_TEST

START_TEST(indirect_loop)
{
	struct vring_desc *it = itable(R2_GPA);

	set_desc(&it[0], R0_GPA, 16, VRING_DESC_F_NEXT, 1);
	set_desc(&it[1], R0_GPA, 16, VRING_DESC_F_NEXT, 0);
	set_desc(&ring[0], R2_GPA, 32, VRING_DESC_F_INDIRECT, 0);
	ck_assert_int_eq(walk(RING, 0, false, true), HV_VHOST_DROP_BAD_CHAIN);
}
END_TEST

static Suite *
vring_suite(void)
{
	Suite *s = suite_create("vring");
	TCase *tc;

	tc = tcase_create("good");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, single_desc);
	tcase_add_test(tc, chain_of_3);
	tcase_add_test(tc, span_two_regions);
	tcase_add_test(tc, chain_exactly_ring_size);
	tcase_add_test(tc, zero_len_in_chain);
	tcase_add_test(tc, indirect_good);
	suite_add_tcase(s, tc);

	tc = tcase_create("corrupt");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, head_out_of_range);
	tcase_add_test(tc, next_out_of_range);
	tcase_add_test(tc, loop_a_b_a);
	tcase_add_test(tc, chain_longer_than_ring);
	tcase_add_test(tc, direction);
	tcase_add_test(tc, bad_addr);
	tcase_add_test(tc, len_overflow);
	tcase_add_test(tc, too_many_segs);
	tcase_add_test(tc, too_long);
	suite_add_tcase(s, tc);

	tc = tcase_create("indirect");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, indirect_not_negotiated);
	tcase_add_test(tc, indirect_with_next);
	tcase_add_test(tc, indirect_nested);
	tcase_add_test(tc, indirect_bad_len);
	tcase_add_test(tc, indirect_outside_memory);
	tcase_add_test(tc, indirect_next_out_of_range);
	tcase_add_test(tc, indirect_loop);
	suite_add_tcase(s, tc);

	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(vring_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
