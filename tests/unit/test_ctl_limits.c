/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control socket under abuse (lib/ctl): reply bytes held for a client
 * that does not read, requests run per turn, idle and dribbling clients,
 * the root slot, and replies that stay valid UTF-8 whatever the client sent.
 * The server is polled from the test's own thread (no thread: children fork).
 */
#include <check.h>
#include <grp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ctl_util.h"
#include "hv_test_utf8.h"
#include "hv_ctl.h"

#define TEST_GROUP ((gid_t)4242)
#define NOBODY ((uid_t)65534)
#define BIG_REPLY (60u << 10)

static char dir[64], path[100];
static struct hv_ctl_server *srv;
static unsigned int big_calls, null_calls, echo_calls;

static int
h_null(void *ctx, const cJSON *args, cJSON **result, char *err, size_t errlen)
{
	(void)ctx, (void)args, (void)result, (void)err, (void)errlen;
	null_calls++;
	return 0;
}

static int
h_echo(void *ctx, const cJSON *args, cJSON **result, char *err, size_t errlen)
{
	(void)ctx, (void)err, (void)errlen;
	echo_calls++;
	*result = args != NULL ? cJSON_Duplicate(args, true) : NULL;
	return 0;
}

/* A 60 KiB reply, like fdb.show on a large table. */
static int
h_big(void *ctx, const cJSON *args, cJSON **result, char *err, size_t errlen)
{
	static char text[BIG_REPLY + 1];

	(void)ctx, (void)args, (void)err, (void)errlen;
	memset(text, 'x', BIG_REPLY);
	big_calls++;
	*result = cJSON_CreateString(text);
	return 0;
}

static int
h_named(void *ctx, const cJSON *args, cJSON **result, char *err, size_t errlen)
{
	const char *name = "";

	(void)ctx, (void)result;
	hv_ctl_arg_str(args, "port.del", "name", true, 0, &name, err, errlen);
	snprintf(err, errlen, "port.del: no port '%s'", name);
	return -1;
}

static const struct hv_ctl_cmd cmds[] = {
	{"null", h_null, "reply null", HV_CTL_READ},
	{"echo", h_echo, "reply with the arguments", HV_CTL_READ},
	{"big", h_big, "a 60 KiB reply", HV_CTL_READ},
	{"port.del", h_named, "echo the name in an error", HV_CTL_WRITE},
	{NULL, NULL, NULL, 0},
};

static void
setup(void)
{
	char err[256];

	cu_dir(dir, sizeof(dir), path, sizeof(path), "ctl.sock");
	srv = hv_ctl_server_create(path, TEST_GROUP, cmds, NULL, err, sizeof(err));
	ck_assert_msg(srv != NULL, "server: %s", err);
	big_calls = null_calls = echo_calls = 0;
}

static void
teardown(void)
{
	hv_ctl_server_destroy(srv);
	srv = NULL;
	rmdir(dir);
}

/* Poll the server for ms milliseconds. */
static void
poll_for(int ms)
{
	unsigned long long end = cu_now_ms() + (unsigned long long)ms;

	while (cu_now_ms() < end)
		hv_ctl_server_poll(srv, 5);
}

/* A pipelining client that never reads holds the replies of a few requests,
 * not of every request it sent: the server runs no more of them while it
 * holds HV_CTL_OUT_BUDGET bytes. All are answered, in order, once it reads. */
START_TEST(ctl_reply_bytes_bounded)
{
	const unsigned int n = 300;
	static const char req[] = "{\"cmd\":\"big\"}\n";
	char *buf = malloc(n * (sizeof(req) - 1)), *line;
	unsigned int i, most;
	int fd;

	ck_assert_ptr_nonnull(buf);
	for (i = 0; i < n; i++)
		memcpy(buf + i * (sizeof(req) - 1), req, sizeof(req) - 1);
	fd = cu_connect(path);
	cu_send(fd, buf, n * (sizeof(req) - 1));
	free(buf);
	/* the budget, one reply past it, and what the socket buffers take */
	most = (HV_CTL_OUT_BUDGET + (1u << 20)) / BIG_REPLY + 1;
	poll_for(500);
	ck_assert_msg(big_calls <= most,
		      "ran %u of %u requests of a client that does not read "
		      "(at most %u expected)",
		      big_calls, n, most);
	ck_assert_uint_gt(big_calls, 0);
	for (i = 0; i < n; i++) {
		line = cu_line(fd, CU_WAIT_MS, srv);
		ck_assert_msg(line != NULL, "reply %u missing", i);
		ck_assert_uint_eq(strlen(line),
				  BIG_REPLY + strlen("{\"ok\":true,\"result\":\"\"}"));
		free(line);
	}
	ck_assert_uint_eq(big_calls, n);
	close(fd);
}
END_TEST

/* A client with thousands of pipelined requests gets HV_CTL_TURN_REQUESTS of
 * them per poll: another client is answered after a few dozen, not after the
 * whole pipeline. */
START_TEST(ctl_turns_are_bounded)
{
	static char flood[60000];
	static const char req[] = "{\"cmd\":\"null\"}\n";
	unsigned int ran;
	size_t i;
	char *line;
	int a, b;

	for (i = 0; i + sizeof(req) - 1 <= sizeof(flood); i += sizeof(req) - 1)
		memcpy(flood + i, req, sizeof(req) - 1);
	a = cu_connect(path);
	cu_send(a, flood, i);
	hv_ctl_server_poll(srv, 100); /* accept */
	hv_ctl_server_poll(srv, 100); /* a's first turn */
	ck_assert_uint_gt(null_calls, 0);
	b = cu_connect(path);
	cu_send(b, "{\"cmd\":\"echo\",\"args\":{\"b\":1}}\n", 30);
	ck_assert(cu_readable(b, CU_WAIT_MS, srv));
	ran = null_calls;
	line = cu_line(b, CU_WAIT_MS, NULL);
	ck_assert_ptr_nonnull(line);
	ck_assert_str_eq(line, "{\"ok\":true,\"result\":{\"b\":1}}");
	free(line);
	ck_assert_msg(ran <= 4 * HV_CTL_TURN_REQUESTS,
		      "%u of the flood's %zu requests ran before another client's one", ran,
		      i / (sizeof(req) - 1));
	/* the flood is still served in full */
	for (size_t k = 0; k < i / (sizeof(req) - 1); k++) {
		line = cu_line(a, CU_WAIT_MS, srv);
		ck_assert_msg(line != NULL, "flood reply %zu missing", k);
		free(line);
	}
	ck_assert_uint_eq(null_calls, i / (sizeof(req) - 1));
	close(a);
	close(b);
}
END_TEST

/* With 63 flooding clients that never read, another client's request is
 * answered quickly and the server holds a bounded number of replies. */
START_TEST(ctl_flood_latency)
{
	enum {
		FLOODERS = HV_CTL_MAX_CLIENTS - 1 - HV_CTL_ROOT_SLOTS
	};
	static char flood[60000];
	static const char req[] = "{\"cmd\":\"null\"}\n";
	unsigned long long t0, t;
	unsigned int ran;
	int fds[FLOODERS], b;
	size_t i;
	char *line;

	for (i = 0; i + sizeof(req) - 1 <= sizeof(flood); i += sizeof(req) - 1)
		memcpy(flood + i, req, sizeof(req) - 1);
	for (int k = 0; k < FLOODERS; k++) {
		fds[k] = cu_connect(path);
		cu_send(fds[k], flood, i);
	}
	b = cu_connect(path);
	t0 = cu_now_ms();
	ran = null_calls;
	cu_send(b, "{\"cmd\":\"echo\"}\n", 15);
	ck_assert(cu_readable(b, CU_WAIT_MS, srv));
	t = cu_now_ms() - t0;
	ran = null_calls - ran;
	line = cu_line(b, CU_WAIT_MS, NULL);
	ck_assert_ptr_nonnull(line);
	free(line);
	fprintf(stderr,
		"test_ctl_limits: one request among %d floods of %zu requests: "
		"answered in %llu ms, after %u flood requests\n",
		FLOODERS, i / (sizeof(req) - 1), t, ran);
	ck_assert_msg(t < 1000, "answered after %llu ms", t);
	for (int k = 0; k < FLOODERS; k++)
		close(fds[k]);
	close(b);
}
END_TEST

static void
short_limits(void)
{
	struct hv_ctl_limits lim = {
		.idle_ms = 800,
		.request_ms = 300,
		.stall_ms = 300,
		.out_budget = HV_CTL_OUT_BUDGET,
		.turn_requests = HV_CTL_TURN_REQUESTS,
	};

	hv_ctl_server_set_limits(srv, &lim);
}

/* A pipelining client that stops reading is dropped once its replies have
 * not moved for stall_ms, although it still has requests queued. */
START_TEST(ctl_unread_replies_dropped)
{
	const unsigned int n = 300;
	static const char req[] = "{\"cmd\":\"big\"}\n";
	char *buf = malloc(n * (sizeof(req) - 1)), sink[65536];
	unsigned long long t0;
	size_t got = 0;
	ssize_t r;
	int fd;

	ck_assert_ptr_nonnull(buf);
	short_limits();
	for (unsigned int i = 0; i < n; i++)
		memcpy(buf + i * (sizeof(req) - 1), req, sizeof(req) - 1);
	fd = cu_connect(path);
	cu_send(fd, buf, n * (sizeof(req) - 1));
	free(buf);
	/* wait until the server has closed it, then read what was sent */
	t0 = cu_now_ms();
	while (cu_now_ms() - t0 < CU_WAIT_MS) {
		struct pollfd pfd = {.fd = fd, .events = POLLRDHUP};

		hv_ctl_server_poll(srv, 10);
		if (poll(&pfd, 1, 0) == 1 && (pfd.revents & (POLLRDHUP | POLLHUP)))
			break;
	}
	ck_assert_msg(cu_now_ms() - t0 < CU_WAIT_MS, "not dropped");
	while ((r = recv(fd, sink, sizeof(sink), MSG_DONTWAIT)) > 0)
		got += (size_t)r;
	ck_assert_uint_lt(got, (size_t)n * BIG_REPLY);
	ck_assert_uint_lt(big_calls, n);
	close(fd);
}
END_TEST

/* A client that sends nothing is dropped after the idle time, with a line
 * saying why; one that keeps asking is not. */
START_TEST(ctl_idle_client_dropped)
{
	unsigned long long t0 = cu_now_ms(), t;
	char *line;
	int idle, busy;

	short_limits();
	idle = cu_connect(path);
	busy = cu_connect(path);
	for (int k = 0; k < 20; k++) {
		cu_send(busy, "{\"cmd\":\"null\"}\n", 15);
		line = cu_line(busy, CU_WAIT_MS, srv);
		ck_assert_ptr_nonnull(line);
		free(line);
		poll_for(50);
	}
	line = cu_line(idle, CU_WAIT_MS, srv);
	t = cu_now_ms() - t0;
	ck_assert_ptr_nonnull(line);
	ck_assert_str_eq(line,
			 "{\"ok\":false,\"error\":\"idle for 800 ms; closing the connection\"}");
	free(line);
	ck_assert(cu_closed(idle, CU_WAIT_MS, srv));
	ck_assert_uint_ge(t, 800);
	/* the busy one (1 s of requests, 50 ms apart) is still served */
	cu_send(busy, "{\"cmd\":\"null\"}\n", 15);
	line = cu_line(busy, CU_WAIT_MS, srv);
	ck_assert_ptr_nonnull(line);
	ck_assert_str_eq(line, "{\"ok\":true,\"result\":null}");
	free(line);
	close(idle);
	close(busy);
}
END_TEST

/* A request dribbled a byte at a time is dropped request_ms after its first
 * byte, although every byte is progress. */
START_TEST(ctl_dribbling_client_dropped)
{
	static const char req[] =
		"{\"cmd\":\"echo\",\"args\":{\"pad\":\"aaaaaaaaaaaaaaaaaaaa\"}}\n";
	unsigned long long t0;
	char *line = NULL;
	size_t i;
	int fd;

	short_limits();
	fd = cu_connect(path);
	t0 = cu_now_ms();
	for (i = 0; i + 1 < sizeof(req) - 1; i++) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};

		if (send(fd, req + i, 1, MSG_NOSIGNAL) != 1)
			break;
		poll_for(50);
		if (poll(&pfd, 1, 0) == 1) {
			line = cu_line(fd, CU_WAIT_MS, srv);
			break;
		}
	}
	ck_assert_msg(line != NULL, "still connected after %llu ms of dribbling", cu_now_ms() - t0);
	ck_assert_str_eq(line, "{\"ok\":false,\"error\":\"request not complete within 300 ms; "
			       "closing the connection\"}");
	ck_assert_uint_lt(i, sizeof(req) - 2);
	free(line);
	ck_assert(cu_closed(fd, CU_WAIT_MS, srv));
	ck_assert_uint_eq(echo_calls, 0);
	close(fd);
}
END_TEST

/* The last slot is root's: a non-root client that holds every other slot
 * does not lock the operator out. */
START_TEST(ctl_root_slot)
{
	int to_parent[2], to_child[2], fd, st;
	char c = 0, *line;
	pid_t pid;

	if (geteuid() != 0) {
		fprintf(stderr, "test_ctl_limits: SKIP ctl_root_slot: needs root to setuid\n");
		return;
	}
	ck_assert_int_eq(chmod(path, 0666), 0);
	ck_assert_int_eq(pipe(to_parent), 0);
	ck_assert_int_eq(pipe(to_child), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		gid_t g = TEST_GROUP;
		int fds[HV_CTL_MAX_CLIENTS], ok = 0, full = 0;
		char *l;

		if (setgroups(1, &g) < 0 || setgid(NOBODY) < 0 || setuid(NOBODY) < 0)
			_exit(10);
		for (int k = 0; k < HV_CTL_MAX_CLIENTS; k++) {
			fds[k] = cu_try_connect(path);
			if (fds[k] < 0 ||
			    send(fds[k], "{\"cmd\":\"null\"}\n", 15, MSG_NOSIGNAL) != 15)
				_exit(11);
			l = cu_line(fds[k], CU_WAIT_MS, NULL);
			if (l != NULL && strcmp(l, "{\"ok\":true,\"result\":null}") == 0)
				ok++;
			else if (l != NULL && strstr(l, "too many clients (limit 64; the last 1 "
							"kept for root)") != NULL)
				full++;
			else
				_exit(12);
			free(l);
		}
		if (ok != HV_CTL_MAX_CLIENTS - HV_CTL_ROOT_SLOTS || full != HV_CTL_ROOT_SLOTS)
			_exit(13);
		if (write(to_parent[1], "R", 1) != 1 || read(to_child[0], &c, 1) != 1)
			_exit(14);
		_exit(0);
	}
	/* serve the child until it holds every slot it can */
	while (read(to_parent[0], &c, 0) == 0) {
		struct pollfd pfd = {.fd = to_parent[0], .events = POLLIN};

		hv_ctl_server_poll(srv, 5);
		if (poll(&pfd, 1, 0) == 1)
			break;
		if (waitpid(pid, &st, WNOHANG) == pid)
			ck_abort_msg("child exited early: 0x%x", st);
	}
	ck_assert_int_eq(read(to_parent[0], &c, 1), 1);
	/* root still gets in */
	fd = cu_connect(path);
	cu_send(fd, "{\"cmd\":\"null\"}\n", 15);
	line = cu_line(fd, CU_WAIT_MS, srv);
	ck_assert_ptr_nonnull(line);
	ck_assert_str_eq(line, "{\"ok\":true,\"result\":null}");
	free(line);
	close(fd);
	ck_assert_int_eq(write(to_child[1], "D", 1), 1);
	ck_assert_int_eq(cu_wait_child(srv, pid), 0);
	close(to_parent[0]), close(to_parent[1]), close(to_child[0]), close(to_child[1]);
}
END_TEST

/* Send line, return the reply (asserting that it is strict JSON and UTF-8). */
static cJSON *
utf8_reply(int fd, const char *line)
{
	cJSON *rep;
	char *text;

	cu_send(fd, line, strlen(line));
	text = cu_line(fd, CU_WAIT_MS, srv);
	ck_assert_ptr_nonnull(text);
	ck_assert_msg(hv_test_utf8_valid(text, strlen(text)), "reply not UTF-8: %s", text);
	rep = cJSON_Parse(text);
	ck_assert_msg(rep != NULL, "reply not JSON: %s", text);
	free(text);
	return rep;
}

static const char *
error_of(const cJSON *rep)
{
	ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(rep, "ok")));
	return cJSON_GetStringValue(cJSON_GetObjectItem(rep, "error"));
}

START_TEST(ctl_replies_are_utf8)
{
	char line[256], want[160];
	cJSON *rep;
	int fd = cu_connect(path);

	/* 63 ASCII bytes, then "é" across the 64-byte cut: the cut drops it whole */
	snprintf(line, sizeof(line), "{\"cmd\":\"%.*s\xc3\xa9xyz\"}\n", 63,
		 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
	rep = utf8_reply(fd, line);
	snprintf(want, sizeof(want), "unknown command '%.*s' (try 'help')", 63,
		 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
	ck_assert_str_eq(error_of(rep), want);
	cJSON_Delete(rep);
	/* a whole character within the cut stays */
	rep = utf8_reply(fd, "{\"cmd\":\"n\xc3\xa9\"}\n");
	ck_assert_str_eq(error_of(rep), "unknown command 'n\xc3\xa9' (try 'help')");
	cJSON_Delete(rep);
	/* invalid bytes become '?' */
	rep = utf8_reply(fd, "{\"cmd\":\"\xff\xfe\xc3(\"}\n");
	ck_assert_str_eq(error_of(rep), "unknown command '??"
					"?(' (try 'help')");
	cJSON_Delete(rep);
	/* ... in a handler's error, and in a result */
	rep = utf8_reply(fd, "{\"cmd\":\"port.del\",\"args\":{\"name\":\"a\xed\xa0\x80z\"}}\n");
	ck_assert_str_eq(error_of(rep), "port.del: no port 'a???z'");
	cJSON_Delete(rep);
	rep = utf8_reply(fd, "{\"cmd\":\"echo\",\"args\":{\"s\":\"\xc0\xaf/\xe2\x82\xac\"}}\n");
	ck_assert_str_eq(
		cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(rep, "result"), "s")),
		"??"
		"/\xe2\x82\xac");
	cJSON_Delete(rep);
	close(fd);
}
END_TEST

START_TEST(ctl_utf8_clean)
{
	char out[16];

	ck_assert_uint_eq(hv_ctl_utf8_clean(out, sizeof(out), "a\xc3\xa9", 2), 1);
	ck_assert_str_eq(out, "a");
	ck_assert_uint_eq(hv_ctl_utf8_clean(out, sizeof(out), "a\xc3\xa9", 3), 3);
	ck_assert_str_eq(out, "a\xc3\xa9");
	/* the string itself ends inside a character: that byte is invalid */
	ck_assert_uint_eq(hv_ctl_utf8_clean(out, sizeof(out), "a\xc3", 8), 2);
	ck_assert_str_eq(out, "a?");
	/* dst too small: whole characters only */
	ck_assert_uint_eq(hv_ctl_utf8_clean(out, 3, "a\xe2\x82\xac", 8), 1);
	ck_assert_str_eq(out, "a");
	ck_assert_uint_eq(hv_ctl_utf8_clean(out, sizeof(out), "\xf4\x90\x80\x80\xe0\x80\x80", 16),
			  7);
	ck_assert_str_eq(out, "???????");
	ck_assert_uint_eq(hv_ctl_utf8_clean(out, sizeof(out), "\xf0\x9f\x98\x80", 16), 4);
	/* in place */
	strcpy(out, "x\xffy");
	ck_assert_uint_eq(hv_ctl_utf8_clean(out, sizeof(out), out, 16), 3);
	ck_assert_str_eq(out, "x?y");
}
END_TEST

static Suite *
limits_suite(void)
{
	Suite *s = suite_create("ctl-limits");
	TCase *tc = tcase_create("limits");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, ctl_reply_bytes_bounded);
	tcase_add_test(tc, ctl_turns_are_bounded);
	tcase_add_test(tc, ctl_flood_latency);
	tcase_add_test(tc, ctl_unread_replies_dropped);
	tcase_add_test(tc, ctl_idle_client_dropped);
	tcase_add_test(tc, ctl_dribbling_client_dropped);
	tcase_add_test(tc, ctl_root_slot);
	tcase_add_test(tc, ctl_replies_are_utf8);
	tcase_add_test(tc, ctl_utf8_clean);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(limits_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
