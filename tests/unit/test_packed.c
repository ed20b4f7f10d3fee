/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of hv_packed_walk() (and its inline fast path, which must agree
 * with it) on synthetic packed rings over hv_test_mem.h's layout: good
 * chains, wrap counters, and what a hostile guest can write.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "hv_test_mem.h"
#include "vhost_mem.h"
#include "vhost_packed.h"

#define RING 16

static uint8_t *buf;
static struct hv_mem mem;
static struct vring_packed_desc ring[RING];
static struct hv_chain chain;
static struct hv_packed_buf pb;
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

static uint8_t *
host(uint64_t gpa)
{
	return hv_test_mem_host(buf, gpa);
}

/* The flags that make a descriptor available at wrap counter @wrap, plus @f. */
static uint16_t
avail(bool wrap, uint16_t f)
{
	return (uint16_t)(f | (wrap ? HV_PACKED_F_AVAIL : HV_PACKED_F_USED));
}

static void
set_desc(struct vring_packed_desc *d, uint64_t addr, uint32_t len, uint16_t id, uint16_t flags)
{
	d->addr = addr;
	d->len = len;
	d->id = id;
	d->flags = flags;
}

/* Walk from (@idx, @wrap) with the full walker and the fast path; both must agree. */
static int
walk_at(uint16_t size, uint16_t idx, bool wrap, bool writable, bool indirect_ok)
{
	struct hv_packed_pos at = {idx, wrap};
	static struct hv_chain fast;
	struct hv_packed_buf fb;
	uint32_t h0 = hint, fh = hint;
	int rc, frc;

	rc = hv_packed_walk(ring, size, &mem, &hint, at, writable, indirect_ok, &chain, &pb);
	frc = hv_packed_walk_fast(ring, size, &mem, &fh, at, writable, indirect_ok, &fast, &fb);
	ck_assert_int_eq(frc, rc);
	if (rc == 0) {
		ck_assert_uint_eq(fast.len, chain.len);
		ck_assert_uint_eq(fast.n_iov, chain.n_iov);
		ck_assert_uint_eq(fb.id, pb.id);
		ck_assert_uint_eq(fb.ndesc, pb.ndesc);
		ck_assert_uint_eq(fb.next.idx, pb.next.idx);
		ck_assert_int_eq(fb.next.wrap, pb.next.wrap);
	}
	RTE_SET_USED(h0);
	return rc;
}

static int
walk(uint16_t idx, bool writable, bool indirect_ok)
{
	return walk_at(RING, idx, true, writable, indirect_ok);
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
	set_desc(&ring[0], R0_GPA + 0x100, 64, 7, avail(true, 0));
	ck_assert_int_eq(walk(0, false, false), 0);
	ck_assert_uint_eq(chain.n_iov, 1);
	ck_assert_uint_eq(chain.len, 64);
	assert_iov(0, R0_GPA + 0x100, 64);
	ck_assert_uint_eq(pb.id, 7);
	ck_assert_uint_eq(pb.ndesc, 1);
	ck_assert_uint_eq(pb.next.idx, 1);
	ck_assert(pb.next.wrap);
}
END_TEST

/* A slot written for the other lap, or not yet written, is not available. */
START_TEST(empty_and_wrong_lap)
{
	ck_assert_int_eq(walk(0, false, false), HV_PACKED_EMPTY);
	set_desc(&ring[0], R0_GPA, 64, 0, avail(false, 0));
	ck_assert_int_eq(walk(0, false, false), HV_PACKED_EMPTY);
	/* both bits set: a used descriptor of wrap 1, not an available one */
	set_desc(&ring[0], R0_GPA, 64, 0, HV_PACKED_F_AVAIL | HV_PACKED_F_USED);
	ck_assert_int_eq(walk(0, false, false), HV_PACKED_EMPTY);
	/* read at wrap 0 the same slot is still not available (avail bit 1 != 0) */
	ck_assert_int_eq(walk_at(RING, 0, false, false, false), HV_PACKED_EMPTY);
	set_desc(&ring[0], R0_GPA, 64, 0, avail(false, 0));
	ck_assert_int_eq(walk_at(RING, 0, false, false, false), 0);
}
END_TEST

/* A chain across the end of the ring flips the wrap counter of its tail. */
START_TEST(chain_across_wrap)
{
	set_desc(&ring[RING - 1], R0_GPA, 100, 0, avail(true, VRING_DESC_F_NEXT));
	set_desc(&ring[0], R0_GPA + 0x1000, 200, 9, avail(false, 0));
	ck_assert_int_eq(walk(RING - 1, false, false), 0);
	ck_assert_uint_eq(chain.len, 300);
	ck_assert_uint_eq(pb.id, 9); /* the last descriptor's */
	ck_assert_uint_eq(pb.ndesc, 2);
	ck_assert_uint_eq(pb.next.idx, 1);
	ck_assert(!pb.next.wrap);
	/* the tail written for the old lap: the chain is corrupt */
	set_desc(&ring[0], R0_GPA + 0x1000, 200, 9, avail(true, 0));
	ck_assert_int_eq(walk(RING - 1, false, false), HV_VHOST_DROP_BAD_CHAIN);
}
END_TEST

START_TEST(span_two_regions)
{
	/* region 0 ends where region 1 begins: one descriptor, two pieces */
	set_desc(&ring[0], R1_GPA - 16, 48, 1, avail(true, VRING_DESC_F_WRITE));
	ck_assert_int_eq(walk(0, true, false), 0);
	ck_assert_uint_eq(chain.n_iov, 2);
	assert_iov(0, R1_GPA - 16, 16);
	assert_iov(1, R1_GPA, 32);
}
END_TEST

START_TEST(indirect_good)
{
	struct vring_packed_desc *t = (struct vring_packed_desc *)host(R2_GPA);

	set_desc(&t[0], R0_GPA, 12, 0xffff, VRING_DESC_F_NEXT); /* NEXT and id ignored */
	set_desc(&t[1], R0_GPA + 0x800, 1500, 0, 0);
	set_desc(&ring[3], R2_GPA, 2 * sizeof(*t), 5, avail(true, VRING_DESC_F_INDIRECT));
	ck_assert_int_eq(walk(3, false, true), 0);
	ck_assert_uint_eq(chain.len, 1512);
	ck_assert_uint_eq(chain.n_iov, 2);
	ck_assert_uint_eq(pb.id, 5);
	ck_assert_uint_eq(pb.ndesc, 1);
}
END_TEST

/* A chain of exactly the ring's slots is allowed; one more laps itself. */
START_TEST(chain_of_ring_size)
{
	for (uint16_t i = 0; i < RING; i++)
		set_desc(&ring[i], R0_GPA + i * 64u, 64, 3, avail(true, VRING_DESC_F_NEXT));
	ring[RING - 1].flags = avail(true, 0);
	ck_assert_int_eq(walk(0, false, false), 0);
	ck_assert_uint_eq(pb.ndesc, RING);
	ck_assert(!pb.next.wrap);
	/* all NEXT: the chain would lap the ring */
	ring[RING - 1].flags = avail(true, VRING_DESC_F_NEXT);
	ck_assert_int_eq(walk(0, false, false), HV_VHOST_DROP_BAD_CHAIN);
}
END_TEST

/* ---- hostile ---- */

START_TEST(id_out_of_range)
{
	set_desc(&ring[0], R0_GPA, 64, RING, avail(true, 0));
	ck_assert_int_eq(walk(0, false, false), HV_VHOST_DROP_BAD_ID);
	set_desc(&ring[0], R0_GPA, 64, 0xffff, avail(true, 0));
	ck_assert_int_eq(walk(0, false, false), HV_VHOST_DROP_BAD_ID);
	/* in a chain, the last descriptor's id counts, not the head's */
	set_desc(&ring[0], R0_GPA, 64, 1, avail(true, VRING_DESC_F_NEXT));
	set_desc(&ring[1], R0_GPA, 64, RING + 1, avail(true, 0));
	ck_assert_int_eq(walk(0, false, false), HV_VHOST_DROP_BAD_ID);
}
END_TEST

START_TEST(position_out_of_range)
{
	ck_assert_int_eq(walk(RING, false, false), HV_VHOST_DROP_BAD_DESC_INDEX);
}
END_TEST

START_TEST(direction)
{
	set_desc(&ring[0], R0_GPA, 64, 0, avail(true, VRING_DESC_F_WRITE));
	ck_assert_int_eq(walk(0, false, false), HV_VHOST_DROP_BAD_DIRECTION);
	set_desc(&ring[0], R0_GPA, 64, 0, avail(true, 0));
	ck_assert_int_eq(walk(0, true, false), HV_VHOST_DROP_BAD_DIRECTION);
}
END_TEST

START_TEST(bad_addr)
{
	set_desc(&ring[0], GAP_GPA, 64, 0, avail(true, 0));
	ck_assert_int_eq(walk(0, false, false), HV_VHOST_DROP_BAD_ADDR);
	/* runs off the end of the last region */
	set_desc(&ring[0], R2_END - 32, 64, 0, avail(true, 0));
	ck_assert_int_eq(walk(0, false, false), HV_VHOST_DROP_BAD_ADDR);
	/* wraps the address space */
	set_desc(&ring[0], UINT64_MAX - 16, 64, 0, avail(true, 0));
	ck_assert_int_eq(walk(0, false, false), HV_VHOST_DROP_BAD_ADDR);
}
END_TEST

START_TEST(too_long)
{
	set_desc(&ring[0], R0_GPA, HV_CHAIN_MAX_LEN + 1u, 0, avail(true, 0));
	ck_assert_int_eq(walk(0, false, false), HV_VHOST_DROP_TOO_LONG);
}
END_TEST

START_TEST(indirect_not_negotiated)
{
	set_desc(&ring[0], R2_GPA, 32, 0, avail(true, VRING_DESC_F_INDIRECT));
	ck_assert_int_eq(walk(0, false, false), HV_VHOST_DROP_BAD_INDIRECT);
}
END_TEST

START_TEST(indirect_with_next_or_in_chain)
{
	set_desc(&ring[0], R2_GPA, 32, 0, avail(true, VRING_DESC_F_INDIRECT | VRING_DESC_F_NEXT));
	set_desc(&ring[1], R0_GPA, 32, 0, avail(true, 0));
	ck_assert_int_eq(walk(0, false, true), HV_VHOST_DROP_BAD_INDIRECT);
	/* reached by a chain */
	set_desc(&ring[0], R0_GPA, 32, 0, avail(true, VRING_DESC_F_NEXT));
	set_desc(&ring[1], R2_GPA, 32, 0, avail(true, VRING_DESC_F_INDIRECT));
	ck_assert_int_eq(walk(0, false, true), HV_VHOST_DROP_BAD_INDIRECT);
}
END_TEST

START_TEST(indirect_nested)
{
	struct vring_packed_desc *t = (struct vring_packed_desc *)host(R2_GPA);

	set_desc(&t[0], R2_GPA, 32, 0, VRING_DESC_F_INDIRECT);
	set_desc(&ring[0], R2_GPA, 16, 0, avail(true, VRING_DESC_F_INDIRECT));
	ck_assert_int_eq(walk(0, false, true), HV_VHOST_DROP_BAD_INDIRECT);
}
END_TEST

START_TEST(indirect_bad_len)
{
	set_desc(&ring[0], R2_GPA, 0, 0, avail(true, VRING_DESC_F_INDIRECT));
	ck_assert_int_eq(walk(0, false, true), HV_VHOST_DROP_BAD_INDIRECT);
	set_desc(&ring[0], R2_GPA, 24, 0, avail(true, VRING_DESC_F_INDIRECT));
	ck_assert_int_eq(walk(0, false, true), HV_VHOST_DROP_BAD_INDIRECT);
	set_desc(&ring[0], R2_GPA, (HV_VRING_MAX_INDIRECT + 1u) * 16u, 0,
		 avail(true, VRING_DESC_F_INDIRECT));
	ck_assert_int_eq(walk(0, false, true), HV_VHOST_DROP_BAD_INDIRECT);
}
END_TEST

/* The table must lie whole in one region: not across the GPA-adjacent regions 0 and 1. */
START_TEST(indirect_placement)
{
	set_desc(&ring[0], R1_GPA - 16, 32, 0, avail(true, VRING_DESC_F_INDIRECT));
	ck_assert_int_eq(walk(0, false, true), HV_VHOST_DROP_BAD_INDIRECT);
	set_desc(&ring[0], GAP_GPA, 32, 0, avail(true, VRING_DESC_F_INDIRECT));
	ck_assert_int_eq(walk(0, false, true), HV_VHOST_DROP_BAD_INDIRECT);
	set_desc(&ring[0], R2_END - 16, 32, 0, avail(true, VRING_DESC_F_INDIRECT));
	ck_assert_int_eq(walk(0, false, true), HV_VHOST_DROP_BAD_INDIRECT);
}
END_TEST

START_TEST(indirect_direction)
{
	struct vring_packed_desc *t = (struct vring_packed_desc *)host(R2_GPA);

	set_desc(&t[0], R0_GPA, 32, 0, 0);
	/* the ring descriptor's WRITE is ignored; the table's counts: read-only, not written */
	set_desc(&ring[0], R2_GPA, 16, 0, avail(true, VRING_DESC_F_INDIRECT | VRING_DESC_F_WRITE));
	ck_assert_int_eq(walk(0, true, true), HV_VHOST_DROP_BAD_DIRECTION);
	ck_assert_int_eq(walk(0, false, true), 0);
	/* writable entries may be read (DPDK's virtio PMD marks its TX tables so) */
	t[0].flags = VRING_DESC_F_WRITE;
	ck_assert_int_eq(walk(0, false, true), 0);
	ck_assert_int_eq(walk(0, true, true), 0);
}
END_TEST

START_TEST(too_many_segs)
{
	struct vring_packed_desc *t = (struct vring_packed_desc *)host(R2_GPA);

	for (unsigned int i = 0; i < HV_CHAIN_MAX_IOV + 1; i++)
		set_desc(&t[i], R0_GPA + i * 16u, 16, 0, 0);
	set_desc(&ring[0], R2_GPA, (HV_CHAIN_MAX_IOV + 1) * 16u, 0,
		 avail(true, VRING_DESC_F_INDIRECT));
	ck_assert_int_eq(walk(0, false, true), HV_VHOST_DROP_TOO_MANY_SEGS);
}
END_TEST

static Suite *
packed_suite(void)
{
	Suite *s = suite_create("packed");
	TCase *tc = tcase_create("walk");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, single_desc);
	tcase_add_test(tc, empty_and_wrong_lap);
	tcase_add_test(tc, chain_across_wrap);
	tcase_add_test(tc, span_two_regions);
	tcase_add_test(tc, indirect_good);
	tcase_add_test(tc, chain_of_ring_size);
	tcase_add_test(tc, id_out_of_range);
	tcase_add_test(tc, position_out_of_range);
	tcase_add_test(tc, direction);
	tcase_add_test(tc, bad_addr);
	tcase_add_test(tc, too_long);
	tcase_add_test(tc, indirect_not_negotiated);
	tcase_add_test(tc, indirect_with_next_or_in_chain);
	tcase_add_test(tc, indirect_nested);
	tcase_add_test(tc, indirect_bad_len);
	tcase_add_test(tc, indirect_placement);
	tcase_add_test(tc, indirect_direction);
	tcase_add_test(tc, too_many_segs);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(packed_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
