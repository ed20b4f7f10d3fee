/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of vhost_msg_dispatch(): vhost-user messages are built in memory
 * and handed to the dispatcher with fds, without sockets or EAL.
 * This file: memory tables, and whole rings brought up and down.
 */
#include <check.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "msg_util.h"

/* ---- memory ---- */

START_TEST(mem_table)
{
	struct vhost_memory_region r[9];

	for (unsigned int i = 0; i < RTE_DIM(r); i++)
		r[i] = region(MEM_GPA + i * MEM_SIZE, MEM_SIZE, MEM_UA + i * MEM_SIZE);
	ck_assert_int_eq(send_mem_table(r, 1, 1, MEM_SIZE), 0);
	ck_assert_uint_eq(port->mem.n, 1);
	ck_assert_uint_eq(port->mem.r[0].gpa, MEM_GPA);
	ck_assert_ptr_nonnull(port->mem.r[0].hva);
	/* a new table replaces the old */
	ck_assert_int_eq(send_mem_table(r, 8, 8, MEM_SIZE), 0);
	ck_assert_uint_eq(port->mem.n, 8);

	/* refused tables leave the current one alone */
	ck_assert_int_eq(send_mem_table(r, 1, 1, MEM_SIZE - 4096), -1);
	ck_assert_int_eq(send_mem_table(r, 0, 0, MEM_SIZE), -1);
	ck_assert_int_eq(send_mem_table(r, 9, 8, MEM_SIZE), -1);
	ck_assert_int_eq(send_mem_table(r, 9, 9, MEM_SIZE), -1);
	ck_assert_int_eq(send_mem_table(r, 2, 1, MEM_SIZE), -1);
	ck_assert_int_eq(send_mem_table(r, 1, 2, MEM_SIZE), -1);
	r[1].guest_phys_addr = MEM_GPA + MEM_SIZE / 2;
	ck_assert_int_eq(send_mem_table(r, 2, 2, MEM_SIZE), -1); /* GPA overlap */
	r[1].guest_phys_addr = MEM_GPA + MEM_SIZE;
	r[1].userspace_addr = MEM_UA;
	ck_assert_int_eq(send_mem_table(r, 2, 2, MEM_SIZE), -1); /* UA overlap */
	r[1] = region(MEM_GPA + 0x800, MEM_SIZE, MEM_UA + MEM_SIZE);
	ck_assert_int_eq(send_mem_table(&r[1], 1, 1, 2 * MEM_SIZE), -1); /* unaligned */
	r[1] = region(MEM_GPA, 0, MEM_UA);
	ck_assert_int_eq(send_mem_table(&r[1], 1, 1, MEM_SIZE), -1); /* empty */
	r[1] = region(UINT64_MAX - 4095, MEM_SIZE, MEM_UA);
	ck_assert_int_eq(send_mem_table(&r[1], 1, 1, MEM_SIZE), -1); /* wraps */
	ck_assert_uint_eq(port->mem.n, 8);
}
END_TEST

START_TEST(mem_table_bad_fd)
{
	struct vhost_memory_region r = region(MEM_GPA, MEM_SIZE, MEM_UA);
	struct vhost_user_msg m;
	int p[2];

	ck_assert_int_eq(pipe(p), 0);
	msg_init(&m, VHOST_USER_SET_MEM_TABLE, offsetof(struct vhost_memory, regions) + sizeof(r));
	m.payload.memory.nregions = 1;
	m.payload.memory.regions[0] = r;
	ck_assert_int_eq(send_fds(&m, &p[0], 1), -1);
	ck_assert(wait_closed(p[0]));
	close(p[1]);
	ck_assert_uint_eq(port->mem.n, 0);
}
END_TEST

START_TEST(mem_reg_add_rem)
{
	struct vhost_memory_region a = region(MEM_GPA, MEM_SIZE, MEM_UA);
	struct vhost_memory_region b = region(MEM_GPA + MEM_SIZE, MEM_SIZE, MEM_UA + MEM_SIZE);
	int fd;

	ck_assert_int_eq(send_mem_reg(VHOST_USER_ADD_MEM_REG, a, memfd(MEM_SIZE)), 0);
	ck_assert_int_eq(send_mem_reg(VHOST_USER_ADD_MEM_REG, b, memfd(MEM_SIZE)), 0);
	ck_assert_uint_eq(port->mem.n, 2);
	ck_assert_int_eq(send_mem_reg(VHOST_USER_ADD_MEM_REG, a, memfd(MEM_SIZE)), -1);
	fd = memfd(MEM_SIZE / 2);
	ck_assert_int_eq(send_mem_reg(VHOST_USER_ADD_MEM_REG, region(0, MEM_SIZE, 0), fd), -1);
	ck_assert(fd_closed(fd));
	ck_assert_uint_eq(port->mem.n, 2);

	ck_assert_int_eq(send_mem_reg(VHOST_USER_REM_MEM_REG, a, -1), 0);
	ck_assert_uint_eq(port->mem.n, 1);
	ck_assert_uint_eq(port->mem.r[0].gpa, b.guest_phys_addr);
	ck_assert_int_eq(send_mem_reg(VHOST_USER_REM_MEM_REG, a, -1), -1);
	/* REM with an fd (as QEMU sends): the fd is closed */
	fd = memfd(MEM_SIZE);
	ck_assert_int_eq(send_mem_reg(VHOST_USER_REM_MEM_REG, b, fd), 0);
	ck_assert(fd_closed(fd));
	ck_assert_uint_eq(port->mem.n, 0);
	/* a region matching in GPA but not in size is not removed */
	ck_assert_int_eq(send_mem_reg(VHOST_USER_ADD_MEM_REG, a, memfd(MEM_SIZE)), 0);
	a.memory_size = MEM_SIZE / 2;
	ck_assert_int_eq(send_mem_reg(VHOST_USER_REM_MEM_REG, a, -1), -1);
	ck_assert_uint_eq(port->mem.n, 1);
}
END_TEST

START_TEST(mem_reg_slots_full)
{
	for (uint32_t i = 0; i < HV_VHOST_MAX_MEM_SLOTS; i++)
		ck_assert_int_eq(send_mem_reg(VHOST_USER_ADD_MEM_REG,
					      region(i * 4096ull, 4096, MEM_UA + i * 4096ull),
					      memfd(4096)),
				 0);
	ck_assert_uint_eq(port->mem.n, HV_VHOST_MAX_MEM_SLOTS);
	ck_assert_int_eq(send_mem_reg(VHOST_USER_ADD_MEM_REG, region(1ull << 32, 4096, 1ull << 32),
				      memfd(4096)),
			 -1);
	ck_assert_uint_eq(port->mem.n, HV_VHOST_MAX_MEM_SLOTS);
}
END_TEST

/* Host address of @gpa in the port's table, NULL when in none. */
static uint8_t *
port_gpa(uint64_t gpa)
{
	uint64_t len = 1;
	uint32_t h = 0;

	return hv_mem_gpa(&port->mem, &h, gpa, &len);
}

/* The port's memory counters. */
static struct hv_vhost_mem_stats
mstats(void)
{
	struct hv_vhost_mem_stats st;

	ck_assert_int_eq(hv_vhost_mem_stats(port, &st), 0);
	return st;
}

/* A table over the port's limit in sum (each region under it) is refused whole. */
START_TEST(mem_table_over_limit)
{
	const uint64_t lim = 1ull << 30, half = lim / 2;
	struct vhost_memory_region r[2] = {
		region(0, half + 4096, MEM_UA),
		region(lim, half + 4096, MEM_UA + lim),
	};
	struct vhost_memory_region small = region(MEM_GPA, MEM_SIZE, MEM_UA);
	uint8_t *p;

	port->mem_limit = lim;
	ck_assert_int_eq(send_mem_table(&small, 1, 1, MEM_SIZE), 0);
	ck_assert_uint_eq(mstats().mapped_bytes, MEM_SIZE);
	p = port_gpa(MEM_GPA + MEM_SIZE - 1);
	ck_assert_ptr_nonnull(p);
	*p = 0x5a;
	ck_assert_int_eq(send_mem_table(r, 2, 2, half + 4096), -1);
	ck_assert_uint_eq(mstats().over_limit, 1);
	/* the previous table is still there, and still mapped */
	ck_assert_uint_eq(port->mem.n, 1);
	ck_assert_uint_eq(port->mem.r[0].gpa, MEM_GPA);
	ck_assert_ptr_eq(port_gpa(MEM_GPA + MEM_SIZE - 1), p);
	ck_assert_uint_eq(*p, 0x5a);
	/* at the limit exactly: accepted, and counted */
	r[0].memory_size = r[1].memory_size = half;
	ck_assert_int_eq(send_mem_table(r, 2, 2, half), 0);
	ck_assert_uint_eq(port->mem.n, 2);
	ck_assert_uint_eq(mstats().mapped_bytes, lim);
	ck_assert_uint_eq(mstats().regions, 2);
	ck_assert_uint_eq(mstats().limit_bytes, lim);
	vhost_dev_reset(port);
	ck_assert_uint_eq(mstats().mapped_bytes, 0);
}
END_TEST

/* ADD_MEM_REG past the port's limit is refused; the regions already there stay usable. */
START_TEST(mem_reg_add_over_limit)
{
	const uint64_t lim = 1ull << 30;
	struct vhost_memory_region a = region(MEM_GPA, MEM_SIZE, MEM_UA);
	struct vhost_memory_region b = region(1ull << 32, lim - MEM_SIZE, 1ull << 32);
	struct vhost_memory_region c = region(0, 4096, 0x1000);
	int afd = memfd(MEM_SIZE), fd;
	uint8_t *p, v;

	port->mem_limit = lim;
	ck_assert_int_eq(send_mem_reg(VHOST_USER_ADD_MEM_REG, a, dup(afd)), 0);
	/* up to the limit exactly */
	ck_assert_int_eq(send_mem_reg(VHOST_USER_ADD_MEM_REG, b, memfd(b.memory_size)), 0);
	ck_assert_uint_eq(port->mem.n, 2);
	ck_assert_uint_eq(mstats().mapped_bytes, lim);
	fd = memfd(4096);
	ck_assert_int_eq(send_mem_reg(VHOST_USER_ADD_MEM_REG, c, fd), -1);
	ck_assert(fd_closed(fd));
	ck_assert_uint_eq(mstats().over_limit, 1);
	ck_assert_uint_eq(port->mem.n, 2);
	ck_assert_ptr_null(port_gpa(0));
	/* region a still maps the frontend's file */
	p = port_gpa(MEM_GPA + 0x100);
	ck_assert_ptr_nonnull(p);
	*p = 0x77;
	ck_assert_int_eq(pread(afd, &v, 1, 0x100), 1);
	ck_assert_uint_eq(v, 0x77);
	/* room again once b is gone */
	ck_assert_int_eq(send_mem_reg(VHOST_USER_REM_MEM_REG, b, -1), 0);
	ck_assert_uint_eq(mstats().mapped_bytes, MEM_SIZE);
	ck_assert_int_eq(send_mem_reg(VHOST_USER_ADD_MEM_REG, c, memfd(4096)), 0);
	ck_assert_uint_eq(port->mem.n, 2);
	close(afd);
}
END_TEST

/*
 * The sparse-region probe of issue 21: a 512 GiB region of a sparse memfd
 * once passed (the only cap was 1 TiB), and every page of it the switch read
 * was charged to the switch. The default limit refuses it, before the fd is
 * mapped; a region of the default limit exactly is taken.
 */
START_TEST(mem_sparse_region_over_default_limit)
{
	struct vhost_memory_region big = region(1ull << 32, 512ull << 30, 1ull << 40);
	int fd;

	ck_assert_uint_eq(port->mem_limit, HV_VHOST_MEM_LIMIT_DEFAULT);
	ck_assert_uint_lt(HV_VHOST_MEM_LIMIT_DEFAULT, big.memory_size);
	fd = memfd(big.memory_size);
	ck_assert_int_eq(send_mem_reg(VHOST_USER_ADD_MEM_REG, big, fd), -1);
	ck_assert(fd_closed(fd));
	ck_assert_uint_eq(port->mem.n, 0);
	ck_assert_uint_eq(mstats().over_limit, 1);
	ck_assert_uint_eq(mstats().mapped_bytes, 0);
	big.memory_size = HV_VHOST_MEM_LIMIT_DEFAULT;
	ck_assert_int_eq(send_mem_reg(VHOST_USER_ADD_MEM_REG, big, memfd(big.memory_size)), 0);
	ck_assert_uint_eq(mstats().mapped_bytes, HV_VHOST_MEM_LIMIT_DEFAULT);
}
END_TEST

/*
 * Guest memory only from memory file systems: a regular file elsewhere (here
 * on the file system of the current directory: a FUSE mount the frontend
 * serves would be one) is refused before anything touches it, and counted;
 * a file on tmpfs (/dev/shm) is taken.
 */
START_TEST(mem_region_not_on_memfs)
{
	struct vhost_memory_region r = region(MEM_GPA, MEM_SIZE, MEM_UA);
	char path[] = "hv-test-mem-XXXXXX", shm[] = "/dev/shm/hv-test-mem-XXXXXX";
	int fd = mkstemp(path), sfd;
	struct statfs sfs;

	ck_assert_int_ge(fd, 0);
	unlink(path);
	ck_assert_int_eq(ftruncate(fd, MEM_SIZE), 0);
	ck_assert_int_eq(fstatfs(fd, &sfs), 0);
	if (sfs.f_type == TMPFS_MAGIC || sfs.f_type == HUGETLBFS_MAGIC) {
		fprintf(stderr, "mem_region_not_on_memfs: the current directory is on tmpfs, "
				"not run\n");
		close(fd);
		return;
	}
	ck_assert_int_eq(send_mem_reg(VHOST_USER_ADD_MEM_REG, r, fd), -1);
	ck_assert(wait_closed(fd));
	ck_assert_uint_eq(port->mem.n, 0);
	ck_assert_uint_eq(mstats().not_memfs, 1);
	ck_assert_uint_eq(mstats().fds_refused, 1);

	sfd = mkstemp(shm);
	if (sfd < 0) {
		fprintf(stderr, "mem_region_not_on_memfs: no /dev/shm here, tmpfs not checked\n");
		return;
	}
	unlink(shm);
	ck_assert_int_eq(ftruncate(sfd, MEM_SIZE), 0);
	ck_assert_int_eq(send_mem_reg(VHOST_USER_ADD_MEM_REG, r, sfd), 0);
	ck_assert(fd_closed(sfd));
	ck_assert_uint_eq(port->mem.n, 1);
	ck_assert_uint_eq(mstats().fds_refused, 1);
}
END_TEST

/* ---- a whole ring ---- */

START_TEST(ring_happy_path)
{
	struct hv_vring *vr = &port->vr[0];
	int mfd;

	ring_setup(&mfd);
	ck_assert_int_eq(send_state(VHOST_USER_SET_VRING_ENABLE, 0, 1), 0);
	ck_assert_uint_eq(vr->ready, 1);
	ck_assert_ptr_eq(vr->desc, port->mem.r[0].hva);
	ck_assert_ptr_eq((uint8_t *)vr->used, port->mem.r[0].hva + 0x2000);
	ck_assert_uint_eq(vr->used->flags, VRING_USED_F_NO_NOTIFY);
	ck_assert_uint_eq(vr->last_avail_idx, 7);
	ck_assert_uint_eq(vr->mask, 255);
	ck_assert_uint_eq(port->vr[1].ready, 0); /* not set up */

	ck_assert_int_eq(send_state(VHOST_USER_GET_VRING_BASE, 0, 0), 0);
	ck_assert_uint_eq(vr->ready, 0);
	ck_assert_int_eq(vr->kickfd, -1);
	ck_assert_uint_eq(reply_len, sizeof(reply.hdr) + sizeof(struct vhost_vring_state));
	ck_assert_uint_eq(reply.hdr.request, VHOST_USER_GET_VRING_BASE);
	ck_assert_uint_eq(reply.payload.state.index, 0);
	ck_assert_uint_eq(reply.payload.state.num, 7);
	/* a new kick starts it again */
	ck_assert_int_eq(send_vring_fd(VHOST_USER_SET_VRING_KICK, 0, evfd()), 0);
	ck_assert_uint_eq(vr->ready, 1);
	ck_assert_int_eq(send_state(VHOST_USER_SET_VRING_ENABLE, 0, 0), 0);
	ck_assert_uint_eq(vr->ready, 0);
	close(mfd);
}
END_TEST

START_TEST(ring_stops_without_memory)
{
	struct vhost_memory_region r = region(MEM_GPA, MEM_SIZE, MEM_UA);
	struct vhost_user_msg m;
	int mfd;

	ring_setup(&mfd);
	ck_assert_int_eq(send_state(VHOST_USER_SET_VRING_ENABLE, 0, 1), 0);
	ck_assert_uint_eq(port->vr[0].ready, 1);
	ck_assert_int_eq(send_mem_reg(VHOST_USER_REM_MEM_REG, r, -1), 0);
	ck_assert_uint_eq(port->vr[0].ready, 0);
	/* the ring's memory is back: it restarts */
	ck_assert_int_eq(send_mem_reg(VHOST_USER_ADD_MEM_REG, r, mfd), 0);
	ck_assert_uint_eq(port->vr[0].ready, 1);
	/* ring addresses outside memory: not started */
	ck_assert_int_eq(send_state(VHOST_USER_SET_VRING_NUM, 0, 32768), 0);
	ck_assert_uint_eq(port->vr[0].ready, 0);
	msg_init(&m, VHOST_USER_RESET_OWNER, 0);
	ck_assert_int_eq(send_msg(&m), 0);
	ck_assert_uint_eq(port->mem.n, 0);
	ck_assert_int_eq(port->vr[0].kickfd, -1);
}
END_TEST

START_TEST(ring_enabled_without_protocol_features)
{
	int mfd;

	ring_setup(&mfd);
	close(mfd);
	/* a split ring (the packed ring: test_packed.c, test_hostile_packed.c) */
	ck_assert_int_eq(send_u64(VHOST_USER_SET_FEATURES,
				  HV_VHOST_FEATURES_DEFAULT & ~HV_VHOST_F_RING_PACKED),
			 0);
	ck_assert_uint_eq(port->vr[0].ready, 0);
	ck_assert_int_eq(send_vring_fd(VHOST_USER_SET_VRING_KICK, 0, evfd()), 0);
	ck_assert_uint_eq(port->vr[0].ready, 1);
}
END_TEST

/* A ring size valid only for the packed layout does not survive a switch to the split one. */
START_TEST(ring_layout_follows_features)
{
	const uint64_t split = (HV_VHOST_FEATURES_DEFAULT & ~HV_VHOST_F_RING_PACKED) |
			       RTE_BIT64(VHOST_USER_F_PROTOCOL_FEATURES);
	struct hv_vring *vr = &port->vr[0];
	int mfd;

	ring_setup(&mfd);
	close(mfd);
	ck_assert_int_eq(send_state(VHOST_USER_SET_VRING_ENABLE, 0, 1), 0);
	ck_assert_uint_eq(vr->ready, 1);
	ck_assert_int_eq(send_u64(VHOST_USER_SET_FEATURES, split | HV_VHOST_F_RING_PACKED), 0);
	ck_assert(port->packed);
	ck_assert_uint_eq(vr->ready, 1);
	ck_assert_int_eq(send_state(VHOST_USER_SET_VRING_NUM, 0, 255), 0);
	ck_assert_uint_eq(vr->ready, 1);
	ck_assert_ptr_eq(vr->pdesc, port->mem.r[0].hva);
	/* split again: 255 slots is no split ring */
	ck_assert_int_eq(send_u64(VHOST_USER_SET_FEATURES, split), 0);
	ck_assert(!port->packed);
	ck_assert_uint_eq(vr->ready, 0);
	ck_assert_int_eq(send_state(VHOST_USER_SET_VRING_NUM, 0, 100), -1);
	ck_assert_uint_eq(vr->ready, 0);
	ck_assert_int_eq(send_state(VHOST_USER_SET_VRING_NUM, 0, 256), 0);
	ck_assert_uint_eq(vr->ready, 1);
	ck_assert_uint_eq(vr->mask, 255);
}
END_TEST

START_TEST(no_leaks)
{
	unsigned int before = count_fds();
	int mfd, p[2];

	ring_setup(&mfd);
	close(mfd);
	ck_assert_int_eq(send_state(VHOST_USER_SET_VRING_ENABLE, 0, 1), 0);
	ck_assert_int_eq(send_vring_fd(VHOST_USER_SET_VRING_CALL, 0, evfd()), 0);
	ck_assert_int_eq(send_vring_fd(VHOST_USER_SET_VRING_ERR, 1, evfd()), 0);
	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(send_vring_fd(VHOST_USER_SET_VRING_CALL, 1, p[0]), -1);
	ck_assert_int_eq(send_vring_fd(VHOST_USER_SET_VRING_KICK, 2, p[1]), -1);
	ck_assert_int_eq(send_mem_reg(VHOST_USER_ADD_MEM_REG,
				      region(1ull << 30, MEM_SIZE, 1ull << 40), memfd(MEM_SIZE)),
			 0);
	ck_assert_uint_gt(count_fds(), before);
	ck_assert(wait_closed(p[0]));
	ck_assert(wait_closed(p[1]));
	vhost_dev_reset(port);
	ck_assert_uint_eq(count_fds(), before);
	ck_assert_uint_eq(port->mem.n, 0);
}
END_TEST

static Suite *
msg_suite(void)
{
	Suite *s = suite_create("msg_mem");
	TCase *tc;

	tc = tcase_create("mem");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, mem_table);
	tcase_add_test(tc, mem_table_bad_fd);
	tcase_add_test(tc, mem_reg_add_rem);
	tcase_add_test(tc, mem_reg_slots_full);
	tcase_add_test(tc, mem_table_over_limit);
	tcase_add_test(tc, mem_reg_add_over_limit);
	tcase_add_test(tc, mem_sparse_region_over_default_limit);
	tcase_add_test(tc, mem_region_not_on_memfs);
	suite_add_tcase(s, tc);

	tc = tcase_create("ring");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, ring_happy_path);
	tcase_add_test(tc, ring_stops_without_memory);
	tcase_add_test(tc, ring_enabled_without_protocol_features);
	tcase_add_test(tc, ring_layout_follows_features);
	tcase_add_test(tc, no_leaks);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(msg_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
