/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A frontend that hands the switch a file of a FUSE file system it serves
 * itself, whose server then answers nothing (fuse_stall.c): whatever touches
 * the file waits forever. Against the real daemon: the frontend's port drops
 * it, counted, and throughout, the other ports pass traffic, another
 * frontend's messages are answered and the control socket answers port.list
 * within 1 s. Needs root (mount(2) of type fuse); skipped where that fails.
 */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "fuse_stall.h"
#include "hv_vhost.h"
#include "raw_frontend.h"
#include "switch_harness.h"

#define T SWH_TIMEOUT_MS
#define LIVE_MS 1000 /* what "still answers" means */

static struct hvsw D;
static struct guest G[2];
static struct fuse_stall F = {.dev = -1};
static struct raw_fe probe; /* a well-behaved frontend, connected */
static bool probe_open;
static int ffd = -1; /* our fd of the FUSE file */
static bool fuse_ok;

static void
sock_of(const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s.sock", D.dir, name);
}

/* A frontend on port @name that has been answered once (so it is the port's). */
static void
fe_connect(struct raw_fe *fe, const char *name)
{
	struct vhost_user_msg r;
	char sock[160];

	sock_of(name, sock, sizeof(sock));
	ck_assert_int_eq(raw_fe_connect(fe, sock), 0);
	ck_assert_int_eq(
		raw_fe_send(fe, VHOST_USER_GET_FEATURES, VHOST_USER_VERSION, NULL, 0, NULL, 0), 0);
	ck_assert_msg(raw_fe_recv(fe, &r, T) == 0, "no GET_FEATURES reply on %s", name);
}

static void
setup(void)
{
	static const char *const opts[] = {"--guest-mem-limit", "4096", NULL};
	struct timeval tv = {.tv_sec = 3};
	char sock[160];
	int rc;

	memset(G, 0, sizeof(G));
	swh_reset();
	hvsw_init(&D);
	ck_assert_msg(hvsw_start(&D, opts) == 0, "hvswitch did not start");
	/* a daemon that stalls fails the test instead of hanging it */
	setsockopt(D.ctl, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	for (unsigned int i = 0; i < 2; i++) {
		char name[8];

		snprintf(name, sizeof(name), "vm%u", i);
		hvsw_add_port(&D, name, NULL);
		sock_of(name, sock, sizeof(sock));
		ck_assert_int_eq(guest_open(&G[i], name, i, sock, false), 0);
		ck_assert_msg(hvsw_wait_up(&D, name, T), "port %s not up", name);
	}
	hvsw_add_port(&D, "evil", NULL);
	hvsw_add_port(&D, "probe", NULL);
	fe_connect(&probe, "probe");
	probe_open = true;
	/* after the daemon's fork: its copy of /dev/fuse would keep the connection up */
	rc = fuse_stall_start(&F, RAW_MEM_SIZE);
	fuse_ok = rc == 0;
	if (!fuse_ok) {
		fprintf(stderr, "no FUSE mount here (%s): not run\n", strerror(-rc));
		return;
	}
	ffd = fuse_stall_open_and_hold(&F);
	ck_assert_int_ge(ffd, 0);
}

static void
teardown(void)
{
	/* first: a daemon thread may wait on the file system, and could not exit */
	fuse_stall_end(&F);
	if (ffd >= 0)
		close(ffd);
	ffd = -1;
	if (probe_open)
		raw_fe_close(&probe);
	probe_open = false;
	for (unsigned int i = 0; i < RTE_DIM(G); i++)
		guest_close(&G[i]);
	hvsw_cleanup(&D);
}

/* A number of port @name's guest_memory counters. */
static double
gm(const char *name, const char *counter)
{
	cJSON *r = hvsw_ok(&D, "port.show", "{\"name\":\"%s\"}", name);
	char path[64];
	double v;

	snprintf(path, sizeof(path), "guest_memory.%s", counter);
	v = swh_num(r, path);
	cJSON_Delete(r);
	ck_assert_msg(v >= 0, "port.show %s: no %s", name, path);
	return v;
}

/* One control request; it must answer (ok) within LIVE_MS. */
static void
answers_within(const char *cmd, const char *args)
{
	uint64_t t0 = swh_now_ms(), ms;
	cJSON *r = NULL;
	char err[256];

	ck_assert_msg(hvsw_call(&D, &r, err, sizeof(err), cmd, args ? "%s" : NULL, args) == 0,
		      "%s: %s", cmd, err);
	cJSON_Delete(r);
	ms = swh_now_ms() - t0;
	ck_assert_msg(ms < LIVE_MS, "%s took %" PRIu64 " ms", cmd, ms);
}

/*
 * For @ms: port.list answers, a frame from vm0 reaches vm1, and the probe
 * frontend's messages are answered, each within LIVE_MS; at the end a port
 * is added and removed, each within LIVE_MS.
 */
static void
assert_live(unsigned int ms)
{
	uint64_t end = swh_now_ms() + ms;

	do {
		struct vhost_user_msg r;
		uint32_t id;

		answers_within("port.list", NULL);
		id = guest_send(&G[0], &G[1].mac, NULL, 0);
		ck_assert_msg(guest_wait(&G[1], id, LIVE_MS), "frame %u: vm0 -> vm1 took over 1 s",
			      id);
		ck_assert_int_eq(raw_fe_send(&probe, VHOST_USER_GET_QUEUE_NUM, VHOST_USER_VERSION,
					     NULL, 0, NULL, 0),
				 0);
		ck_assert_msg(raw_fe_recv(&probe, &r, LIVE_MS) == 0,
			      "another frontend's message unanswered for 1 s");
		usleep(20000);
	} while (swh_now_ms() < end);
	answers_within("port.add", "{\"name\":\"extra\",\"type\":\"vhost-user\"}");
	answers_within("port.del", "{\"name\":\"extra\"}");
}

static void
send_state(struct raw_fe *fe, uint32_t req, uint32_t index, uint32_t num)
{
	struct vhost_vring_state s = {.index = index, .num = num};

	(void)raw_fe_send(fe, req, VHOST_USER_VERSION, &s, sizeof(s), NULL, 0);
}

/* What a frontend sends to start ring 0 on the memory it shared (answers not awaited). */
static void
start_ring0(struct raw_fe *fe)
{
	struct vhost_vring_addr a = {.index = 0,
				     .desc_user_addr = RAW_GPA_BASE,
				     .avail_user_addr = RAW_GPA_BASE + 0x1000,
				     .used_user_addr = RAW_GPA_BASE + 0x2000};
	uint64_t idx = 0;
	int kick = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

	send_state(fe, VHOST_USER_SET_VRING_NUM, 0, RAW_RING_SIZE);
	(void)raw_fe_send(fe, VHOST_USER_SET_VRING_ADDR, VHOST_USER_VERSION, &a, sizeof(a), NULL,
			  0);
	send_state(fe, VHOST_USER_SET_VRING_BASE, 0, 0);
	(void)raw_fe_send(fe, VHOST_USER_SET_VRING_KICK, VHOST_USER_VERSION, &idx, sizeof(idx),
			  &kick, 1);
	send_state(fe, VHOST_USER_SET_VRING_ENABLE, 0, 1);
	close(kick);
}

/* The frontend lost its connection; the port counts a refused fd being closed aside. */
static void
assert_dropped(struct raw_fe *fe)
{
	ck_assert_msg(raw_fe_closed(fe, T), "the frontend with a FUSE fd was not dropped");
	ck_assert_uint_eq(gm("evil", "fds_refused"), 1);
	/* the server answers no FLUSH: the reaper waits in close() */
	ck_assert_uint_eq(gm("evil", "fds_closing"), 1);
}

/*
 * Once the file system's server is gone, the fd is closed and the port takes
 * a frontend again; while it was not, the port took none.
 */
static void
assert_port_recovers(void)
{
	struct raw_fe fe;
	char sock[160];
	uint64_t end = swh_now_ms() + T;

	sock_of("evil", sock, sizeof(sock));
	ck_assert_int_eq(raw_fe_connect(&fe, sock), 0);
	ck_assert_msg(raw_fe_closed(&fe, T), "a frontend was taken while an fd was not closed");
	raw_fe_close(&fe);
	fuse_stall_end(&F);
	while (gm("evil", "fds_closing") > 0 && swh_now_ms() < end)
		usleep(5000);
	ck_assert_uint_eq(gm("evil", "fds_closing"), 0);
	fe_connect(&fe, "evil");
	raw_fe_close(&fe);
}

/*
 * SET_MEM_TABLE with the FUSE file: once fstat() (GETATTR) or the close
 * (FLUSH) of it, or the ring start's first access to it (READ), held the
 * control thread with the control lock.
 */
START_TEST(fuse_region_refused)
{
	struct {
		uint32_t nregions, padding;
		struct vhost_memory_region r;
	} mem = {.nregions = 1,
		 .r = {.guest_phys_addr = RAW_GPA_BASE,
		       .memory_size = RAW_MEM_SIZE,
		       .userspace_addr = RAW_GPA_BASE}};
	uint64_t f = RTE_BIT64(VHOST_USER_F_PROTOCOL_FEATURES) | HV_VHOST_F_VERSION_1;
	struct raw_fe fe;

	if (!fuse_ok)
		return;
	assert_live(200);
	fe_connect(&fe, "evil");
	(void)raw_fe_send(&fe, VHOST_USER_SET_FEATURES, VHOST_USER_VERSION, &f, sizeof(f), NULL, 0);
	(void)raw_fe_send(&fe, VHOST_USER_SET_OWNER, VHOST_USER_VERSION, NULL, 0, NULL, 0);
	(void)raw_fe_send(&fe, VHOST_USER_SET_MEM_TABLE, VHOST_USER_VERSION, &mem, sizeof(mem),
			  &ffd, 1);
	start_ring0(&fe);
	assert_live(1500);
	assert_dropped(&fe);
	ck_assert_uint_eq(gm("evil", "refused_not_memfs"), 1);
	ck_assert_uint_eq(gm("evil", "mapped_bytes"), 0);
	/* --guest-mem-limit reaches the ports */
	ck_assert_uint_eq(gm("evil", "limit_bytes"), 4096.0 * 1024 * 1024);
	raw_fe_close(&fe);
	assert_live(300);
	assert_port_recovers();
}
END_TEST

/*
 * SET_VRING_CALL with the FUSE file (not an eventfd): refused, and its close
 * (FLUSH) once held the control thread.
 */
START_TEST(fuse_call_fd_refused)
{
	uint64_t idx = 0;
	struct raw_fe fe;

	if (!fuse_ok)
		return;
	fe_connect(&fe, "evil");
	(void)raw_fe_send(&fe, VHOST_USER_SET_VRING_CALL, VHOST_USER_VERSION, &idx, sizeof(idx),
			  &ffd, 1);
	assert_live(1500);
	assert_dropped(&fe);
	raw_fe_close(&fe);
	assert_port_recovers();
}
END_TEST

/* An unknown request carrying the FUSE file: its close once held the control thread too. */
START_TEST(fuse_fd_with_unknown_request)
{
	struct raw_fe fe;

	if (!fuse_ok)
		return;
	fe_connect(&fe, "evil");
	(void)raw_fe_send(&fe, 99, VHOST_USER_VERSION, NULL, 0, &ffd, 1);
	assert_live(1500);
	assert_dropped(&fe);
	raw_fe_close(&fe);
	assert_port_recovers();
}
END_TEST

static Suite *
make_suite(void)
{
	Suite *s = suite_create("hostile-fuse");
	TCase *t = tcase_create("fuse");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 120);
	tcase_add_test(t, fuse_region_refused);
	tcase_add_test(t, fuse_call_fd_refused);
	tcase_add_test(t, fuse_fd_with_unknown_request);
	suite_add_tcase(s, t);
	return s;
}

int
main(int argc, char **argv)
{
	return swh_run_suite(make_suite, argc, argv);
}
