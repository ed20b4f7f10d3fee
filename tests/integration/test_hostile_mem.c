/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The sparse-region probe (issue 21): a frontend shares a huge sparse memfd
 * and points TX descriptors at pages it never touched. Every page the switch
 * reads is allocated then, and counted to the switch (this process: the
 * driver runs in it; the frontend never touches those pages). The port's
 * guest memory limit refuses the region; within the limit, the cost is
 * bounded by the limit. The figures are printed (doc/vhost.rst quotes them).
 */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ring_fixture.h"

#define PAGE 4096u
#define PROBE_BUFFERS 65536u
#define BIG_GPA (UINT64_C(1) << 36)
#define BIG_UA (UINT64_C(1) << 44)

/* This process's shared memory resident, in KiB (/proc/self/status RssShmem). */
static uint64_t
rss_shmem_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[128];
	unsigned long long v = 0;

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "RssShmem: %llu kB", &v) == 1)
			break;
	fclose(f);
	return v;
}

/* ADD_MEM_REG of a sparse memfd of @size at BIG_GPA, acked: whether it was taken. */
static bool
add_sparse_region(uint64_t size)
{
	struct vhost_memory_single m = {.region = {.guest_phys_addr = BIG_GPA,
						   .memory_size = size,
						   .userspace_addr = BIG_UA}};
	struct vhost_user_msg reply;
	int fd = memfd_create("sparse-guest", MFD_CLOEXEC);
	bool taken;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, (off_t)size), 0);
	ck_assert_int_eq(raw_fe_send(&fe, VHOST_USER_ADD_MEM_REG,
				     VHOST_USER_VERSION | VHOST_USER_NEED_REPLY, &m, sizeof(m), &fd,
				     1),
			 0);
	close(fd);
	ck_assert_int_eq(raw_fe_recv(&fe, &reply, TIMEOUT_MS), 0);
	taken = reply.payload.u64 == 0;
	return taken;
}

/*
 * Post PROBE_BUFFERS one-descriptor frames at distinct pages of the sparse
 * region (wrapping over @pages), and let the switch read them. Returns the
 * frames it took; stops early when the ring is not running.
 */
static unsigned int
probe(uint64_t pages)
{
	unsigned int got = 0;

	for (unsigned int b = 0; b < PROBE_BUFFERS; b += RAW_RING_SIZE) {
		uint64_t end = peer_now_ms() + TIMEOUT_MS;
		unsigned int want = got + RAW_RING_SIZE;

		for (unsigned int i = 0; i < RAW_RING_SIZE; i++) {
			uint64_t addr = BIG_GPA + ((b + i) % pages) * PAGE;
			uint32_t len = HDR + 64;
			uint16_t flags = 0;

			raw_fe_post(&fe, 1, (uint16_t)i, 1, &addr, &len, &flags);
		}
		while (got < want && peer_now_ms() < end && hv_vhost_queue_ready(bad, 0))
			got += poll_tx();
		if (got < want)
			break;
	}
	return got;
}

static struct hv_vhost_mem_stats
mem_stats(void)
{
	struct hv_vhost_mem_stats st;

	ck_assert_int_eq(hv_vhost_mem_stats(bad, &st), 0);
	return st;
}

/*
 * 512 GiB sparse region (under the old 1 TiB cap): once taken, and 65536
 * buffers in it cost the switch 256 MiB. Now over the default limit: refused,
 * counted, the frontend dropped, and the probe costs nothing.
 */
START_TEST(sparse_region_over_limit)
{
	uint64_t before = rss_shmem_kib(), after;
	unsigned int got;

	setup_rings();
	ck_assert(!add_sparse_region(UINT64_C(512) << 30));
	got = probe((UINT64_C(512) << 30) / PAGE);
	after = rss_shmem_kib();
	fprintf(stderr,
		"sparse-region probe, 512 GiB region: %u of %u buffers read, "
		"RssShmem %" PRIu64 " -> %" PRIu64 " KiB (%+" PRId64 " KiB)\n",
		got, PROBE_BUFFERS, before, after, (int64_t)(after - before));
	ck_assert_uint_eq(got, 0);
	ck_assert_msg(after < before + 8192, "the switch grew by %" PRIu64 " KiB", after - before);
	ck_assert(raw_fe_closed(&fe, TIMEOUT_MS));
	ck_assert_uint_eq(mem_stats().over_limit, 1);
	ck_assert_uint_eq(mem_stats().mapped_bytes, 0);
	ck_assert_uint_eq(mem_stats().limit_bytes, HV_VHOST_MEM_LIMIT_DEFAULT);
	assert_bystander_ok();
}
END_TEST

/*
 * Within the limit the cost is bounded by the region: 64 MiB sparse, the
 * same 65536 buffers (each page read four times) cost at most 64 MiB, and the
 * port reports what it maps.
 */
START_TEST(sparse_region_within_limit_bounded)
{
	const uint64_t size = UINT64_C(64) << 20;
	uint64_t before = rss_shmem_kib(), after;
	unsigned int got;

	setup_rings();
	ck_assert(add_sparse_region(size));
	ck_assert_uint_eq(mem_stats().mapped_bytes, RAW_MEM_SIZE + size);
	ck_assert_uint_eq(mem_stats().regions, 2);
	got = probe(size / PAGE);
	after = rss_shmem_kib();
	fprintf(stderr,
		"sparse-region probe, 64 MiB region: %u of %u buffers read, "
		"RssShmem %" PRIu64 " -> %" PRIu64 " KiB (%+" PRId64 " KiB)\n",
		got, PROBE_BUFFERS, before, after, (int64_t)(after - before));
	ck_assert_uint_eq(got, PROBE_BUFFERS);
	ck_assert_uint_le(after, before + size / 1024 + 8192);
}
END_TEST

static void *
suite(void)
{
	Suite *s = suite_create("hostile-mem");
	TCase *t = tcase_create("sparse");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 120);
	tcase_add_test(t, sparse_region_over_limit);
	tcase_add_test(t, sparse_region_within_limit_bounded);
	suite_add_tcase(s, t);
	return s;
}

int
main(int argc, char **argv)
{
	return peer_run_suite(suite, argc, argv);
}
