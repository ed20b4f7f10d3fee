/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the guest memory helpers: hv_mem_gpa() (clipping, the hint
 * cache), hv_mem_uva() bounds, and the region check of hv_mem_region_map():
 * that it maps the region alone (not the file from offset 0) and keeps to
 * HV_MEM_MAX_BYTES.
 * The guest layout is hv_test_mem.h's (tests/lib), as in test_vring.c.
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rte_common.h>

#include "vhost_internal.h"
#include "hv_test_mem.h"
#include "vhost_mem.h"

static uint8_t *buf;
static struct hv_mem mem;

static void
setup(void)
{
	buf = hv_test_mem_init(&mem);
	ck_assert_ptr_nonnull(buf);
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
					.memory_size = 0x10000,
					.userspace_addr = 0x10000};
	struct hv_mem_region r;
	const char *why = NULL;
	int fd = memfd_create("test_vring", MFD_CLOEXEC);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, 0x10000), 0);
	ck_assert_int_lt(hv_mem_region_map(&d, fd, HV_MEM_MAX_BYTES, &r, &why), 0);
	ck_assert_ptr_nonnull(why);
	ck_assert_int_ge(fcntl(fd, F_GETFD), 0); /* still the caller's */
	close(fd);
}
END_TEST

/* A memfd of @size bytes: sparse, so even a TiB costs no memory. */
static int
sparse_memfd(uint64_t size, unsigned int flags)
{
	int fd = memfd_create("test_mem", MFD_CLOEXEC | flags);

	if (fd < 0)
		return -1;
	if (ftruncate(fd, (off_t)size) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static uint64_t
blksize(int fd)
{
	struct stat st;

	ck_assert_int_eq(fstat(fd, &st), 0);
	return (uint64_t)st.st_blksize;
}

/* Whether [p, p + len) is wholly unmapped (mincore() fails with ENOMEM on a hole). */
static bool
unmapped(void *p, size_t len)
{
	unsigned char vec[64];

	for (size_t off = 0; off < len; off += 4096)
		if (mincore((uint8_t *)p + off, 4096, vec) == 0 || errno != ENOMEM)
			return false;
	return true;
}

/*
 * A region far into a sparse file: only the region is mapped, not the prefix
 * (which once cost the switch mmap_offset bytes of address space per region).
 */
START_TEST(mem_map_region_only)
{
	const uint64_t off = HV_MEM_MAX_BYTES, size = 0x2000;
	struct vhost_memory_region d = {.guest_phys_addr = 0x100000,
					.memory_size = size,
					.userspace_addr = 0x7000000,
					.mmap_offset = off};
	struct hv_mem m = {.n = 1};
	const char *why = NULL;
	uint64_t len = size, blk, want;
	uint32_t h = 0;
	uint8_t *p, b;
	int fd = sparse_memfd(off + size, 0);

	ck_assert_int_ge(fd, 0);
	blk = blksize(fd);
	want = RTE_ALIGN_CEIL(size, blk);
	ck_assert_int_eq(hv_mem_region_map(&d, fd, HV_MEM_MAX_BYTES, &m.r[0], &why), 0);
	ck_assert_uint_le(m.r[0].map_len, want);
	p = hv_mem_gpa(&m, &h, d.guest_phys_addr, &len);
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(len, size);
	ck_assert_ptr_eq(hv_mem_uva(&m, d.userspace_addr, size), p);
	/* the frontend's bytes at mmap_offset are ours at gpa, both ways */
	ck_assert_int_eq(pwrite(fd, "front", 5, (off_t)off), 5);
	ck_assert_mem_eq(p, "front", 5);
	p[size - 1] = 0xa5;
	ck_assert_int_eq(pread(fd, &b, 1, (off_t)(off + size - 1)), 1);
	ck_assert_uint_eq(b, 0xa5);
	hv_mem_region_unmap(&m.r[0]);
	close(fd);
}
END_TEST

/*
 * A region at @off of @fd (a file of @file_size bytes): mapped no wider than its
 * file blocks, translated right at its first and last byte, unmapped whole.
 */
static void
check_offset_region(int fd, uint64_t file_size, uint64_t off, uint64_t size)
{
	const uint64_t gpa = 0x40000000, ua = 0x7f0000000000;
	struct vhost_memory_region d = {.guest_phys_addr = gpa,
					.memory_size = size,
					.userspace_addr = ua,
					.mmap_offset = off};
	struct hv_mem m = {.n = 1};
	const char *why = NULL;
	const uint64_t blk = blksize(fd), delta = off - RTE_ALIGN_FLOOR(off, blk);
	const uint64_t want = RTE_ALIGN_CEIL(delta + size, blk);
	uint64_t len = 1;
	uint32_t h = 0;
	uint8_t *front, *first, *last;
	void *base;
	size_t map_len;

	/* the frontend's view of the whole file */
	front = mmap(NULL, file_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ck_assert_ptr_ne(front, MAP_FAILED);
	ck_assert_int_eq(hv_mem_region_map(&d, fd, HV_MEM_MAX_BYTES, &m.r[0], &why), 0);
	ck_assert_uint_le(m.r[0].map_len, want);
	first = hv_mem_gpa(&m, &h, gpa, &len);
	len = 2;
	last = hv_mem_gpa(&m, &h, gpa + size - 1, &len);
	ck_assert_ptr_nonnull(first);
	ck_assert_ptr_eq(last, first + size - 1);
	ck_assert_uint_eq(len, 1);
	ck_assert_ptr_eq(hv_mem_uva(&m, ua, size), first);
	ck_assert_ptr_eq(hv_mem_uva(&m, ua + size - 1, 1), last);
	front[off] = 0x11;
	front[off + size - 1] = 0x22;
	ck_assert_uint_eq(*first, 0x11);
	ck_assert_uint_eq(*last, 0x22);
	*first = 0x33;
	*last = 0x44;
	ck_assert_uint_eq(front[off], 0x33);
	ck_assert_uint_eq(front[off + size - 1], 0x44);
	/* the mapping starts at the block: what precedes the region in it is the file's */
	if (delta != 0) {
		front[off - 1] = 0x55;
		ck_assert_uint_eq(first[-1], 0x55);
	}
	base = m.r[0].map_base;
	map_len = m.r[0].map_len;
	hv_mem_region_unmap(&m.r[0]);
	ck_assert(unmapped(base, map_len));
	munmap(front, file_size);
}

/* A region at a non-zero offset, not at the file's start nor its end. */
START_TEST(mem_map_offset_first_last)
{
	int fd = sparse_memfd(0x10000, 0);

	ck_assert_int_ge(fd, 0);
	check_offset_region(fd, 0x10000, 0x5000, 0x3000);
	close(fd);
}
END_TEST

/*
 * hugetlbfs (blocks of 2 MiB): the mapping must start at a huge page, so an
 * offset inside one is rounded down and the translation skips the difference.
 * Skipped where no huge page is free.
 */
START_TEST(mem_map_offset_hugetlb)
{
	const uint64_t hp = 2u << 20;
	int fd = sparse_memfd(2 * hp, MFD_HUGETLB);
	void *probe;

	if (fd < 0) {
		fprintf(stderr, "mem_map_offset_hugetlb: no hugetlbfs memfd here, not run\n");
		return;
	}
	probe = mmap(NULL, 2 * hp, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (probe == MAP_FAILED) {
		fprintf(stderr, "mem_map_offset_hugetlb: no two free 2 MiB pages, not run\n");
		close(fd);
		return;
	}
	munmap(probe, 2 * hp);
	ck_assert_uint_eq(blksize(fd), hp);
	check_offset_region(fd, 2 * hp, hp + 0x3000, 0x2000);
	close(fd);
}
END_TEST

/* One region over HV_MEM_MAX_BYTES is refused before it is mapped; one at it is not. */
START_TEST(mem_map_refuses_over_limit)
{
	struct vhost_memory_region d = {.guest_phys_addr = 0,
					.memory_size = HV_MEM_MAX_BYTES + 4096,
					.userspace_addr = 0x10000};
	struct hv_mem_region r;
	const char *why = NULL;
	int fd = sparse_memfd(HV_MEM_MAX_BYTES + 4096, 0);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_lt(hv_mem_region_map(&d, fd, HV_MEM_MAX_BYTES, &r, &why), 0);
	ck_assert_str_eq(why, "guest memory over the limit");
	d.memory_size = HV_MEM_MAX_BYTES;
	ck_assert_int_eq(hv_mem_region_map(&d, fd, HV_MEM_MAX_BYTES, &r, &why), 0);
	ck_assert_uint_eq(r.map_len, HV_MEM_MAX_BYTES);
	hv_mem_region_unmap(&r);
	close(fd);
}
END_TEST

/* ---- SIGBUS on guest memory whose file shrank (vhost_guard.c) ---- */

static void
prior_handler(int sig)
{
	(void)sig;
	_exit(42);
}

/* In a child: a shared page of a memfd that then shrinks; touching it faults. */
static volatile uint8_t *
page_then_shrink(void)
{
	int fd = memfd_create("not_guest", MFD_CLOEXEC);
	void *p;

	if (fd < 0 || ftruncate(fd, 4096) != 0)
		_exit(2);
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED || ftruncate(fd, 0) != 0)
		_exit(3);
	return p;
}

/* Runs @child in a process of its own; its wait status. */
static int
in_child(void (*child)(void))
{
	pid_t pid = fork();
	int st = 0;

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		child();
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	return st;
}

static void
fault_with_prior_handler(void)
{
	struct sigaction sa = {.sa_handler = prior_handler};

	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
	if (vhost_guard_setup() != 0)
		_exit(1);
	(void)page_then_shrink()[0];
}

static void
fault_without_guard(void)
{
	(void)page_then_shrink()[0];
}

static void
fault_with_default(void)
{
	if (vhost_guard_setup() != 0)
		_exit(1);
	(void)page_then_shrink()[0];
}

static void
fault_in_guarded_region(void)
{
	struct vhost_memory_region d = {
		.guest_phys_addr = 0x100000, .memory_size = 0x2000, .userspace_addr = 0x7000000};
	struct hv_mem_region r;
	const char *why = NULL;
	int fd = memfd_create("guest", MFD_CLOEXEC);
	volatile uint8_t *p;

	if (fd < 0 || ftruncate(fd, 0x2000) != 0 || pwrite(fd, "x", 1, 0x1000) != 1)
		_exit(2);
	if (vhost_guard_setup() != 0 || hv_mem_region_map(&d, fd, HV_MEM_MAX_BYTES, &r, &why) != 0)
		_exit(1);
	if (vhost_guard_add(r.map_base, r.map_len, 7) != 0)
		_exit(1);
	p = r.hva;
	if (p[0x1000] != 'x')
		_exit(4);
	if (ftruncate(fd, 0) != 0)
		_exit(3);
	/* faults, and reads the zeros that replaced the lost pages */
	if (p[0x1000] != 0 || !vhost_mem_lost[7] || vhost_mem_lost[6])
		_exit(5);
	hv_mem_region_unmap(&r);
	_exit(0);
}

/* A region guarded, then unmapped: a fault at its old address is not ours. */
static void
fault_after_unmap(void)
{
	struct vhost_memory_region d = {
		.guest_phys_addr = 0x100000, .memory_size = 0x2000, .userspace_addr = 0x7000000};
	struct hv_mem_region r;
	const char *why = NULL;
	int fd = memfd_create("guest", MFD_CLOEXEC), other = memfd_create("other", MFD_CLOEXEC);
	volatile uint8_t *p;
	void *base;

	if (fd < 0 || other < 0 || ftruncate(fd, 0x2000) != 0 || ftruncate(other, 0x2000) != 0)
		_exit(2);
	if (vhost_guard_setup() != 0 || hv_mem_region_map(&d, fd, HV_MEM_MAX_BYTES, &r, &why) != 0)
		_exit(1);
	if (vhost_guard_add(r.map_base, r.map_len, 7) != 0)
		_exit(1);
	base = r.map_base;
	hv_mem_region_unmap(&r);
	p = mmap(base, 0x2000, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, other, 0);
	if (p == MAP_FAILED || ftruncate(other, 0) != 0)
		_exit(3);
	(void)p[0];
	_exit(6); /* not reached: the fault ends the process */
}

/*
 * A SIGBUS another process sends, made to look as if it were about a guarded
 * region (si_addr shares its bytes with si_pid and si_uid): not taken for a
 * fault there.
 */
static void
sent_sigbus_aimed_at_region(void)
{
	struct vhost_memory_region d = {
		.guest_phys_addr = 0x100000, .memory_size = 0x2000, .userspace_addr = 0x7000000};
	struct hv_mem_region r;
	const char *why = NULL;
	siginfo_t si = {.si_signo = SIGBUS, .si_code = SI_QUEUE};
	int fd = memfd_create("guest", MFD_CLOEXEC);

	if (fd < 0 || ftruncate(fd, 0x2000) != 0)
		_exit(2);
	if (vhost_guard_setup() != 0 ||
	    hv_mem_region_map(&d, fd, HV_MEM_MAX_BYTES, &r, &why) != 0 ||
	    vhost_guard_add(r.map_base, r.map_len, 7) != 0)
		_exit(1);
	si.si_addr = r.hva;
	syscall(SYS_rt_sigqueueinfo, getpid(), SIGBUS, &si);
	_exit(vhost_mem_lost[7] ? 5 : 6); /* not reached: it ends the process */
}

/* A SIGBUS outside guest memory goes to the handler there was before ours... */
START_TEST(guard_passes_on_other_sigbus)
{
	int st = in_child(fault_with_prior_handler);

	ck_assert(WIFEXITED(st));
	ck_assert_int_eq(WEXITSTATUS(st), 42);
}
END_TEST

/*
 * ... or ends the process as it would have without us (SIGBUS; under ASan,
 * whose handler was there before ours, its report and abort).
 */
/* @child dies of its fault as a process without our handler does. */
static void
assert_dies_as_unguarded(void (*child)(void))
{
	int ref = in_child(fault_without_guard), st = in_child(child);

	ck_assert(WIFSIGNALED(ref));
	ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == WTERMSIG(ref),
		      "child status 0x%x, not 0x%x", st, ref);
}

START_TEST(guard_default_sigbus_kills)
{
	assert_dies_as_unguarded(fault_with_default);
}
END_TEST

/* In a guarded region it reads zeros and flags the port's slot... */
START_TEST(guard_region_shrunk)
{
	int st = in_child(fault_in_guarded_region);

	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status 0x%x", st);
}
END_TEST

/* ... until the region is unmapped. */
START_TEST(guard_ends_at_unmap)
{
	assert_dies_as_unguarded(fault_after_unmap);
}
END_TEST

START_TEST(guard_ignores_sent_sigbus)
{
	assert_dies_as_unguarded(sent_sigbus_aimed_at_region);
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

	tc = tcase_create("map");
	tcase_add_test(tc, mem_map_region_only);
	tcase_add_test(tc, mem_map_offset_first_last);
	tcase_add_test(tc, mem_map_offset_hugetlb);
	tcase_add_test(tc, mem_map_refuses_over_limit);
	tcase_add_test(tc, guard_passes_on_other_sigbus);
	tcase_add_test(tc, guard_default_sigbus_kills);
	tcase_add_test(tc, guard_region_shrunk);
	tcase_add_test(tc, guard_ends_at_unmap);
	tcase_add_test(tc, guard_ignores_sent_sigbus);
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
