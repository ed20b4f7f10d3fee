/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of vhost_msg_dispatch(): the messages of live migration.
 * SET_LOG_BASE maps the frontend's dirty log with the checks of guest
 * memory; SET_LOG_FD; the feature bits QEMU needs to migrate a guest.
 */
#include <check.h>
#include <stdlib.h>
#include <unistd.h>

#include "msg_util.h"

#define LOG_SIZE 0x4000u

static int
set_protocol_log_shmfd(void)
{
	return send_u64(VHOST_USER_SET_PROTOCOL_FEATURES,
			RTE_BIT64(VHOST_USER_PROTOCOL_F_LOG_SHMFD) |
				RTE_BIT64(VHOST_USER_PROTOCOL_F_REPLY_ACK));
}

/* SET_LOG_BASE of @size bytes at @off of @fd (taken: checked closed after). */
static int
send_log_base(uint64_t size, uint64_t off, int fd)
{
	struct vhost_user_msg m;
	int fds[1] = {fd};
	int rc;

	msg_init(&m, VHOST_USER_SET_LOG_BASE, sizeof(struct vhost_user_log));
	m.payload.log.mmap_size = size;
	m.payload.log.mmap_offset = off;
	rc = send_fds(&m, fds, fd >= 0 ? 1 : 0);
	if (fd >= 0)
		ck_assert_msg(wait_closed(fd), "log fd left open");
	return rc;
}

static uint64_t
log_bytes(void)
{
	struct hv_vhost_mem_stats st;

	ck_assert_int_eq(hv_vhost_mem_stats(port, &st), 0);
	return st.log_bytes;
}

START_TEST(features_offered)
{
	ck_assert_int_eq(send_msg(&(struct vhost_user_msg){
				 .hdr = {VHOST_USER_GET_FEATURES, VHOST_USER_VERSION, 0}}),
			 0);
	ck_assert(reply.payload.u64 & RTE_BIT64(VHOST_USER_F_LOG_ALL));
	ck_assert(reply.payload.u64 & HV_VHOST_F_GUEST_ANNOUNCE);
	ck_assert_int_eq(send_msg(&(struct vhost_user_msg){
				 .hdr = {VHOST_USER_GET_PROTOCOL_FEATURES, VHOST_USER_VERSION, 0}}),
			 0);
	ck_assert(reply.payload.u64 & RTE_BIT64(VHOST_USER_PROTOCOL_F_LOG_SHMFD));
	/* and they are taken */
	ck_assert_int_eq(set_protocol_log_shmfd(), 0);
	ck_assert_int_eq(send_u64(VHOST_USER_SET_FEATURES,
				  HV_VHOST_FEATURES_DEFAULT | RTE_BIT64(VHOST_USER_F_LOG_ALL)),
			 0);
	ck_assert(port->log.features_on);
	ck_assert_ptr_null(port->log.bits); /* no log yet: nothing logged */
}
END_TEST

/* A log taken: the reply QEMU waits for (no payload), mapped, logging on with LOG_ALL. */
START_TEST(log_base_taken)
{
	int memfd_dup, fd = memfd(LOG_SIZE);

	ring_setup(&memfd_dup);
	close(memfd_dup);
	ck_assert_int_eq(set_protocol_log_shmfd(), 0);
	ck_assert_int_eq(send_log_base(LOG_SIZE, 0, fd), 0);
	ck_assert_uint_eq(reply_len, sizeof(struct vhost_user_hdr));
	ck_assert_uint_eq(reply.hdr.request, VHOST_USER_SET_LOG_BASE);
	ck_assert_uint_eq(reply.hdr.flags, VHOST_USER_VERSION | VHOST_USER_REPLY_MASK);
	ck_assert_uint_eq(reply.hdr.size, 0);
	ck_assert_ptr_nonnull(port->log.base);
	ck_assert_ptr_null(port->log.bits);
	ck_assert_uint_eq(log_bytes(), LOG_SIZE);
	ck_assert_int_eq(send_u64(VHOST_USER_SET_FEATURES,
				  HV_VHOST_FEATURES_DEFAULT | RTE_BIT64(VHOST_USER_F_LOG_ALL) |
					  RTE_BIT64(VHOST_USER_F_PROTOCOL_FEATURES)),
			 0);
	ck_assert_ptr_eq(port->log.bits, port->log.base);
	/* a second log replaces the first, at an offset */
	ck_assert_int_eq(send_log_base(LOG_SIZE, 0x1000, memfd(LOG_SIZE + 0x1000)), 0);
	ck_assert_uint_eq(log_bytes(), LOG_SIZE);
	ck_assert_ptr_eq(port->log.bits, port->log.base);
	/* logging off: the log stays mapped, nothing is logged */
	ck_assert_int_eq(
		send_u64(VHOST_USER_SET_FEATURES,
			 HV_VHOST_FEATURES_DEFAULT | RTE_BIT64(VHOST_USER_F_PROTOCOL_FEATURES)),
		0);
	ck_assert_ptr_null(port->log.bits);
	/* reset: unmapped */
	vhost_dev_reset(port);
	ck_assert_ptr_null(port->log.base);
	ck_assert_uint_eq(log_bytes(), 0);
}
END_TEST

/* Every hostile size, offset or file is refused, and the log in place stays. */
START_TEST(log_base_hostile)
{
	int p[2];
	void *before;

	ck_assert_int_eq(set_protocol_log_shmfd(), 0);
	ck_assert_int_eq(send_log_base(LOG_SIZE, 0, memfd(LOG_SIZE)), 0);
	before = port->log.base;

	/* larger than the file; offset taking it past the file's end */
	ck_assert_int_eq(send_log_base(LOG_SIZE + 1, 0, memfd(LOG_SIZE)), -1);
	ck_assert_int_eq(send_log_base(LOG_SIZE, 0x1000, memfd(LOG_SIZE)), -1);
	ck_assert_int_eq(send_log_base(8, LOG_SIZE, memfd(LOG_SIZE)), -1);
	/* offset + size wrapping around */
	ck_assert_int_eq(send_log_base(LOG_SIZE, UINT64_MAX - 0xfff, memfd(LOG_SIZE)), -1);
	ck_assert_int_eq(send_log_base(UINT64_MAX, 0x1000, memfd(LOG_SIZE)), -1);
	/* empty; over the 64 MiB cap (the sparse file holds it) */
	ck_assert_int_eq(send_log_base(0, 0, memfd(LOG_SIZE)), -1);
	ck_assert_int_eq(send_log_base(HV_LOG_MAX_BYTES + 8, 0, memfd(HV_LOG_MAX_BYTES + 4096)),
			 -1);
	/* not on a memory file system: never mapped, the fd closed off this thread */
	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(send_log_base(LOG_SIZE, 0, p[0]), -1);
	close(p[1]);
	/* no fd, two fds, a short payload */
	ck_assert_int_eq(send_log_base(LOG_SIZE, 0, -1), -1);
	{
		struct vhost_user_msg m;
		int fds[2] = {memfd(LOG_SIZE), memfd(LOG_SIZE)};

		msg_init(&m, VHOST_USER_SET_LOG_BASE, sizeof(struct vhost_user_log));
		m.payload.log.mmap_size = LOG_SIZE;
		ck_assert_int_eq(send_fds(&m, fds, 2), -1);
		ck_assert(wait_closed(fds[0]) && wait_closed(fds[1]));
		fds[0] = memfd(LOG_SIZE);
		msg_init(&m, VHOST_USER_SET_LOG_BASE, sizeof(uint64_t));
		m.payload.log.mmap_size = LOG_SIZE;
		ck_assert_int_eq(send_fds(&m, fds, 1), -1);
		ck_assert(wait_closed(fds[0]));
	}
	ck_assert_ptr_eq(port->log.base, before);
	ck_assert_uint_eq(port->log.size, LOG_SIZE);
	ck_assert_uint_eq(log_bytes(), LOG_SIZE);
}
END_TEST

/* Without LOG_SHMFD the frontend would not wait for the reply: refused. */
START_TEST(log_base_needs_shmfd)
{
	ck_assert_int_eq(send_log_base(LOG_SIZE, 0, memfd(LOG_SIZE)), -1);
	ck_assert_ptr_null(port->log.base);
}
END_TEST

START_TEST(log_fd)
{
	struct vhost_user_msg m;
	int fds[1] = {evfd()}, p[2];

	msg_init(&m, VHOST_USER_SET_LOG_FD, 0);
	ck_assert_int_eq(send_fds(&m, fds, 1), 0);
	ck_assert(fd_closed(fds[0]));
	/* an fd of another kind costs the connection */
	ck_assert_int_eq(pipe(p), 0);
	fds[0] = p[0];
	ck_assert_int_eq(send_fds(&m, fds, 1), -1);
	ck_assert(wait_closed(p[0]));
	close(p[1]);
	ck_assert_int_eq(send_fds(&m, fds, 0), -1);
}
END_TEST

static Suite *
log_suite(void)
{
	Suite *s = suite_create("msg-log");
	TCase *tc = tcase_create("log");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, features_offered);
	tcase_add_test(tc, log_base_taken);
	tcase_add_test(tc, log_base_hostile);
	tcase_add_test(tc, log_base_needs_shmfd);
	tcase_add_test(tc, log_fd);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(log_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
