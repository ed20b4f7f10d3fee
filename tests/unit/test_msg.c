/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of vhost_msg_dispatch(): vhost-user messages are built in memory
 * and handed to the dispatcher with fds, without sockets or EAL.
 */
#include <check.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "msg_util.h"

/* ---- features and generic checks ---- */

START_TEST(get_features)
{
	struct vhost_user_msg m;

	msg_init(&m, VHOST_USER_GET_FEATURES, 0);
	ck_assert_int_eq(send_msg(&m), 0);
	ck_assert_uint_eq(reply_len, sizeof(reply.hdr) + sizeof(uint64_t));
	ck_assert_uint_eq(reply.hdr.request, VHOST_USER_GET_FEATURES);
	ck_assert_uint_eq(reply.hdr.flags, VHOST_USER_VERSION | VHOST_USER_REPLY_MASK);
	ck_assert_uint_eq(reply.hdr.size, sizeof(uint64_t));
	ck_assert_uint_eq(reply.payload.u64, HV_VHOST_FEATURES_DEFAULT |
						     RTE_BIT64(VHOST_USER_F_PROTOCOL_FEATURES) |
						     RTE_BIT64(VHOST_USER_F_LOG_ALL));
}
END_TEST

START_TEST(set_features)
{
	ck_assert_int_eq(send_u64(VHOST_USER_SET_FEATURES, HV_VHOST_FEATURES_DEFAULT), 0);
	ck_assert_uint_eq(reply_len, 0);
	ck_assert_uint_eq(port->features, HV_VHOST_FEATURES_DEFAULT);
	ck_assert(port->mrg_rxbuf && port->event_idx && port->indirect);
	ck_assert_uint_eq(port->hdr_size, 12);
	ck_assert_int_eq(send_u64(VHOST_USER_SET_FEATURES, 0), 0);
	ck_assert_uint_eq(port->hdr_size, 10);
	/* the offloads are offered by default (the switch honours them) */
	ck_assert_int_eq(send_u64(VHOST_USER_SET_FEATURES, HV_VHOST_F_CSUM), 0);
	ck_assert_int_eq(send_u64(VHOST_USER_SET_FEATURES, 0), 0);
	ck_assert_int_eq(send_u64(VHOST_USER_SET_FEATURES, RTE_BIT64(63)), -1);
	ck_assert_uint_eq(port->features, 0);
}
END_TEST

START_TEST(bad_size_and_version)
{
	struct vhost_user_msg m;

	msg_init(&m, VHOST_USER_SET_FEATURES, 4);
	ck_assert_int_eq(send_msg(&m), -1);
	msg_init(&m, VHOST_USER_GET_FEATURES, 8);
	ck_assert_int_eq(send_msg(&m), -1);
	msg_init(&m, VHOST_USER_SET_VRING_NUM, sizeof(uint64_t) + 1);
	ck_assert_int_eq(send_msg(&m), -1);
	msg_init(&m, VHOST_USER_SET_VRING_ADDR, sizeof(struct vhost_vring_addr) - 8);
	ck_assert_int_eq(send_msg(&m), -1);
	msg_init(&m, VHOST_USER_GET_FEATURES, 0);
	m.hdr.flags = 2;
	ck_assert_int_eq(send_msg(&m), -1);
	ck_assert_uint_eq(reply_len, 0);
}
END_TEST

START_TEST(wrong_fd_count)
{
	struct vhost_user_msg m;
	int p[2];

	ck_assert_int_eq(pipe(p), 0);
	msg_init(&m, VHOST_USER_SET_OWNER, 0);
	ck_assert_int_eq(send_fds(&m, &p[0], 1), -1);
	ck_assert(wait_closed(p[0]));
	/* KICK without an fd and without NOFD */
	ck_assert_int_eq(send_vring_fd(VHOST_USER_SET_VRING_KICK, 0, -1), -1);
	/* NOFD and an fd anyway */
	ck_assert_int_eq(send_vring_fd(VHOST_USER_SET_VRING_KICK, VHOST_USER_VRING_NOFD_MASK, p[1]),
			 -1);
	ck_assert(wait_closed(p[1]));
	/* unknown bits in a vring fd payload */
	ck_assert_int_eq(send_vring_fd(VHOST_USER_SET_VRING_CALL, 0x200, -1), -1);
	/* ADD_MEM_REG without an fd */
	ck_assert_int_eq(send_mem_reg(VHOST_USER_ADD_MEM_REG, region(0, MEM_SIZE, MEM_UA), -1), -1);
}
END_TEST

START_TEST(vring_index_range)
{
	int fd = evfd();

	ck_assert_int_eq(send_state(VHOST_USER_SET_VRING_NUM, 2, 256), -1);
	ck_assert_int_eq(send_state(VHOST_USER_SET_VRING_BASE, 1000, 0), -1);
	ck_assert_int_eq(send_state(VHOST_USER_GET_VRING_BASE, 2, 0), -1);
	ck_assert_int_eq(send_state(VHOST_USER_SET_VRING_ENABLE, UINT32_MAX, 1), -1);
	ck_assert_int_eq(send_vring_fd(VHOST_USER_SET_VRING_KICK, 2, fd), -1);
	ck_assert(fd_closed(fd));
	ck_assert_int_eq(send_state(VHOST_USER_SET_VRING_NUM, 1, 256), 0);
}
END_TEST

START_TEST(vring_num)
{
	ck_assert_int_eq(send_state(VHOST_USER_SET_VRING_NUM, 0, 0), -1);
	ck_assert_int_eq(send_state(VHOST_USER_SET_VRING_NUM, 0, 3), -1);
	ck_assert_int_eq(send_state(VHOST_USER_SET_VRING_NUM, 0, 65536), -1);
	ck_assert_int_eq(send_state(VHOST_USER_SET_VRING_NUM, 0, 65535), -1);
	ck_assert(!port->vr[0].num_set);
	ck_assert_int_eq(send_state(VHOST_USER_SET_VRING_NUM, 0, 1), 0);
	ck_assert_int_eq(send_state(VHOST_USER_SET_VRING_NUM, 0, 32768), 0);
	ck_assert_uint_eq(port->vr[0].size, 32768);
}
END_TEST

START_TEST(vring_addr_and_base)
{
	struct vhost_user_msg m;
	struct vhost_vring_addr *a = &m.payload.addr;

	msg_init(&m, VHOST_USER_SET_VRING_ADDR, sizeof(*a));
	a->desc_user_addr = MEM_UA + 8;
	ck_assert_int_eq(send_msg(&m), -1);
	a->desc_user_addr = MEM_UA;
	a->avail_user_addr = MEM_UA + 1;
	ck_assert_int_eq(send_msg(&m), -1);
	a->avail_user_addr = MEM_UA + 2;
	a->used_user_addr = MEM_UA + 2;
	ck_assert_int_eq(send_msg(&m), -1);
	ck_assert(!port->vr[0].addr_set);
	a->used_user_addr = MEM_UA + 4;
	ck_assert_int_eq(send_msg(&m), 0);
	ck_assert(port->vr[0].addr_set);

	ck_assert_int_eq(send_state(VHOST_USER_SET_VRING_BASE, 0, 65536), -1);
	ck_assert_int_eq(send_state(VHOST_USER_SET_VRING_BASE, 0, UINT32_MAX), -1);
	ck_assert_int_eq(send_state(VHOST_USER_SET_VRING_BASE, 0, 65535), 0);
	ck_assert_uint_eq(port->vr[0].last_avail_idx, 65535);
	ck_assert_int_eq(send_state(VHOST_USER_SET_VRING_ENABLE, 0, 2), -1);
}
END_TEST

START_TEST(vring_fds)
{
	int p[2], e = evfd(), c = evfd();

	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(send_vring_fd(VHOST_USER_SET_VRING_KICK, 0, p[0]), -1);
	ck_assert(wait_closed(p[0]));
	ck_assert_int_eq(send_vring_fd(VHOST_USER_SET_VRING_CALL, 1, p[1]), -1);
	ck_assert(wait_closed(p[1]));
	ck_assert_int_eq(send_vring_fd(VHOST_USER_SET_VRING_CALL, 1, c), 0);
	ck_assert_int_eq(port->vr[1].callfd, c);
	ck_assert(!fd_closed(c));
	/* a new call fd replaces (and closes) the old one */
	ck_assert_int_eq(send_vring_fd(VHOST_USER_SET_VRING_CALL, 1, e), 0);
	ck_assert(fd_closed(c));
	ck_assert_int_eq(port->vr[1].callfd, e);
	ck_assert_int_eq(
		send_vring_fd(VHOST_USER_SET_VRING_CALL, 1 | VHOST_USER_VRING_NOFD_MASK, -1), 0);
	ck_assert(fd_closed(e));
	ck_assert_int_eq(port->vr[1].callfd, -1);
	e = evfd();
	ck_assert_int_eq(send_vring_fd(VHOST_USER_SET_VRING_ERR, 0, e), 0);
	ck_assert_int_eq(port->vr[0].errfd, e);
	vhost_dev_reset(port);
	ck_assert(fd_closed(e));
}
END_TEST

/* Kick and call fds come in the frontend's mode; we never wait on them. */
START_TEST(vring_fds_made_nonblocking)
{
	int k = eventfd(0, EFD_CLOEXEC), c = eventfd(0, EFD_CLOEXEC);

	ck_assert_int_ge(k, 0);
	ck_assert_int_ge(c, 0);
	ck_assert_int_eq(send_vring_fd(VHOST_USER_SET_VRING_KICK, 1, dup(k)), 0);
	ck_assert_int_eq(send_vring_fd(VHOST_USER_SET_VRING_CALL, 0, dup(c)), 0);
	/* the same file description as the frontend's */
	ck_assert(fcntl(k, F_GETFL) & O_NONBLOCK);
	ck_assert(fcntl(c, F_GETFL) & O_NONBLOCK);
	close(k);
	close(c);
}
END_TEST

/* The end of a burst, as a polling thread does it: publish, then interrupt. */
static void *
burst_end(void *arg)
{
	struct hv_vring *vr = arg;

	if (vring_enter(vr)) {
		vring_used_done(port, vr, 1);
		vring_leave(vr);
	}
	return NULL;
}

/*
 * A pause waits for the polling thread to leave the ring, holding the control
 * lock: if that thread is stuck in a callfd write the frontend blocked, the
 * pause itself cuts the write short (a hang here fails by Check's timeout).
 */
START_TEST(pause_cuts_blocked_call_write)
{
	uint64_t full = UINT64_C(0xfffffffffffffffe);
	int mfd, c = eventfd(0, EFD_CLOEXEC);
	struct hv_vring *vr = &port->vr[0];
	pthread_t t;

	ck_assert_int_ge(c, 0);
	ck_assert_int_eq(vhost_call_signal_setup(), 0);
	ring_setup(&mfd);
	ck_assert_int_eq(send_state(VHOST_USER_SET_VRING_ENABLE, 0, 1), 0);
	ck_assert_int_eq(send_vring_fd(VHOST_USER_SET_VRING_CALL, 0, dup(c)), 0);
	ck_assert_uint_eq(vr->ready, 1);
	ck_assert_int_eq(write(c, &full, sizeof(full)), (int)sizeof(full));
	ck_assert_int_eq(fcntl(c, F_SETFL, fcntl(c, F_GETFL) & ~O_NONBLOCK), 0);
	ck_assert_int_eq(pthread_create(&t, NULL, burst_end, vr), 0);
	while (__atomic_load_n(&vr->call_watch->since, __ATOMIC_ACQUIRE) == 0 &&
	       __atomic_load_n(&vr->stats.irqs_sent, __ATOMIC_RELAXED) == 0)
		sched_yield();
	ck_assert_int_eq(send_state(VHOST_USER_SET_VRING_ENABLE, 0, 0), 0);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	ck_assert_uint_eq(vr->stats.drops[HV_VHOST_DROP_CALL_BLOCKED], 1);
	ck_assert_uint_eq(vr->stats.irqs_sent, 0);
	close(c);
	close(mfd);
}
END_TEST

START_TEST(reply_ack)
{
	struct vhost_user_msg m;
	const uint64_t ack = RTE_BIT64(VHOST_USER_PROTOCOL_F_REPLY_ACK);

	/* unknown request without REPLY_ACK: ignored, no reply */
	msg_init(&m, 99, 0);
	m.hdr.flags |= VHOST_USER_NEED_REPLY;
	ck_assert_int_eq(send_msg(&m), 0);
	ck_assert_uint_eq(reply_len, 0);

	/* a protocol feature not offered (2: RARP) */
	ck_assert_int_eq(send_u64(VHOST_USER_SET_PROTOCOL_FEATURES, RTE_BIT64(2)), -1);
	ck_assert_int_eq(send_u64(VHOST_USER_SET_PROTOCOL_FEATURES, ack), 0);
	ck_assert_uint_eq(port->protocol_features, ack);

	ck_assert_int_eq(send_msg(&m), 0);
	ck_assert_uint_eq(reply_len, sizeof(reply.hdr) + sizeof(uint64_t));
	ck_assert_uint_eq(reply.hdr.request, 99);
	ck_assert_uint_eq(reply.hdr.flags, VHOST_USER_VERSION | VHOST_USER_REPLY_MASK);
	ck_assert_uint_eq(reply.payload.u64, 1);

	msg_init(&m, VHOST_USER_SET_OWNER, 0);
	m.hdr.flags |= VHOST_USER_NEED_REPLY;
	ck_assert_int_eq(send_msg(&m), 0);
	ck_assert_uint_eq(reply_len, sizeof(reply.hdr) + sizeof(uint64_t));
	ck_assert_uint_eq(reply.payload.u64, 0);

	/* a refused message is acked with 1, and still disconnects */
	msg_init(&m, VHOST_USER_SET_VRING_NUM, sizeof(struct vhost_vring_state));
	m.hdr.flags |= VHOST_USER_NEED_REPLY;
	m.payload.state.num = 3;
	ck_assert_int_eq(send_msg(&m), -1);
	ck_assert_uint_eq(reply_len, sizeof(reply.hdr) + sizeof(uint64_t));
	ck_assert_uint_eq(reply.payload.u64, 1);

	/* without NEED_REPLY there is no ack */
	ck_assert_int_eq(send_state(VHOST_USER_SET_VRING_NUM, 0, 4), 0);
	ck_assert_uint_eq(reply_len, 0);
}
END_TEST

START_TEST(get_small_replies)
{
	struct vhost_user_msg m;

	msg_init(&m, VHOST_USER_GET_MAX_MEM_SLOTS, 0);
	ck_assert_int_eq(send_msg(&m), 0);
	ck_assert_uint_eq(reply_len, sizeof(reply.hdr) + sizeof(uint64_t));
	ck_assert_uint_eq(reply.payload.u64, HV_VHOST_MAX_MEM_SLOTS);
	msg_init(&m, VHOST_USER_GET_QUEUE_NUM, 0);
	ck_assert_int_eq(send_msg(&m), 0);
	ck_assert_uint_eq(reply.payload.u64, 1);
	msg_init(&m, VHOST_USER_GET_PROTOCOL_FEATURES, 0);
	ck_assert_int_eq(send_msg(&m), 0);
	ck_assert(reply.payload.u64 & RTE_BIT64(VHOST_USER_PROTOCOL_F_REPLY_ACK));
	ck_assert(reply.payload.u64 & RTE_BIT64(VHOST_USER_PROTOCOL_F_CONFIGURE_MEM_SLOTS));
}
END_TEST

static Suite *
msg_suite(void)
{
	Suite *s = suite_create("msg");
	TCase *tc;

	tc = tcase_create("generic");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, get_features);
	tcase_add_test(tc, set_features);
	tcase_add_test(tc, bad_size_and_version);
	tcase_add_test(tc, wrong_fd_count);
	tcase_add_test(tc, reply_ack);
	tcase_add_test(tc, get_small_replies);
	suite_add_tcase(s, tc);

	tc = tcase_create("vring");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, vring_index_range);
	tcase_add_test(tc, vring_num);
	tcase_add_test(tc, vring_addr_and_base);
	tcase_add_test(tc, vring_fds);
	tcase_add_test(tc, vring_fds_made_nonblocking);
	tcase_add_test(tc, pause_cuts_blocked_call_write);
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
