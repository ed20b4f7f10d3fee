/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the control protocol (lib/ctl). No DPDK.
 *
 * Each test gets a server on a socket in a fresh directory under /tmp, with
 * a fake command table. Tests that use the blocking client run the server on
 * a thread (poll loop); tests that fork (the permission check, hvctl) poll it
 * from the test's own thread while waiting for the child, so that nothing
 * forks a threaded process. hvctl is found through $HVCTL (set by meson).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ctl_fake.h"
#include "ctl_util.h"
#include "hv_ctl.h"

#define TEST_GROUP ((gid_t)4242)
#define NOBODY ((uid_t)65534)
#define WAIT_MS 10000 /* upper bound on any wait; normally milliseconds */

/* ---- raw socket helpers ---- */

static int
raw_connect(const char *p)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(fd, 0);
	ck_assert_uint_lt(strlen(p), sizeof(sa.sun_path));
	memcpy(sa.sun_path, p, strlen(p) + 1);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

static void
raw_send(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);

		ck_assert_msg(n > 0, "send: %s", strerror(errno));
		buf += n;
		len -= (size_t)n;
	}
}

/* One reply line (malloc'ed, no '\n'), or NULL on EOF or after timeout_ms. */
static char *
raw_line(int fd, int timeout_ms)
{
	size_t len = 0, cap = 256;
	char *buf = malloc(cap);

	ck_assert_ptr_nonnull(buf);
	for (;;) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		ssize_t n;

		if (poll(&pfd, 1, timeout_ms) <= 0)
			break;
		n = recv(fd, buf + len, 1, 0);
		if (n <= 0)
			break;
		if (buf[len] == '\n') {
			buf[len] = '\0';
			return buf;
		}
		if (++len == cap) {
			cap *= 2;
			buf = realloc(buf, cap);
			ck_assert_ptr_nonnull(buf);
		}
	}
	free(buf);
	return NULL;
}

/* Whether the server closed fd (EOF or reset) within timeout_ms. */
static bool
raw_closed(int fd, int timeout_ms)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	char c;

	if (poll(&pfd, 1, timeout_ms) <= 0)
		return false;
	return recv(fd, &c, 1, 0) <= 0;
}

/* Send one line raw; assert an ok:false reply whose error contains want. */
static void
raw_expect_error(int fd, const char *line, const char *want)
{
	cJSON *rep, *ok, *e;
	char *text;

	raw_send(fd, line, strlen(line));
	text = raw_line(fd, WAIT_MS);
	ck_assert_msg(text != NULL, "no reply to %s", line);
	ck_assert_ptr_null(strchr(text, '\n'));
	rep = cJSON_Parse(text);
	ck_assert_msg(rep != NULL, "reply is not JSON: %s", text);
	ok = cJSON_GetObjectItem(rep, "ok");
	e = cJSON_GetObjectItem(rep, "error");
	ck_assert_msg(cJSON_IsFalse(ok) && cJSON_IsString(e), "bad reply %s", text);
	ck_assert_msg(strstr(e->valuestring, want) != NULL, "error '%s' lacks '%s'", e->valuestring,
		      want);
	cJSON_Delete(rep);
	free(text);
}

/* Send one line raw; assert an ok:true reply. */
static void
raw_expect_ok(int fd, const char *line)
{
	char *text;

	raw_send(fd, line, strlen(line));
	text = raw_line(fd, WAIT_MS);
	ck_assert_msg(text != NULL, "no reply to %s", line);
	ck_assert_msg(strncmp(text, "{\"ok\":true", 10) == 0, "bad reply %s", text);
	free(text);
}

static int
client(void)
{
	char err[256];
	int fd = hv_ctl_connect(ctl_path, err, sizeof(err));

	ck_assert_msg(fd >= 0, "connect: %s", err);
	ck_assert_int_eq(hv_ctl_set_timeout(fd, WAIT_MS), 0);
	return fd;
}

/* ---- protocol ---- */

START_TEST(ctl_ok_reply)
{
	char err[256] = "";
	cJSON *args, *res, *e;
	bool seen_echo = false, seen_help = false;
	int fd;

	ctl_fake_start_thread();
	fd = client();
	args = cJSON_Parse("{\"a\":1,\"s\":\"x\",\"l\":[true,null]}");
	ck_assert_int_eq(
		hv_ctl_call(fd, "echo", cJSON_Duplicate(args, true), &res, err, sizeof(err)), 0);
	ck_assert(cJSON_Compare(args, res, true));
	cJSON_Delete(res);
	cJSON_Delete(args);

	ck_assert_int_eq(hv_ctl_call(fd, "null", NULL, &res, err, sizeof(err)), 0);
	ck_assert(cJSON_IsNull(res));
	cJSON_Delete(res);
	ck_assert_int_eq(hv_ctl_call(fd, "echo", NULL, NULL, err, sizeof(err)), 0);

	ck_assert_int_eq(hv_ctl_call(fd, "help", NULL, &res, err, sizeof(err)), 0);
	ck_assert(cJSON_IsArray(res));
	cJSON_ArrayForEach(e, res)
	{
		const char *n = cJSON_GetObjectItem(e, "name")->valuestring;

		seen_echo |= strcmp(n, "echo") == 0;
		seen_help |= strcmp(n, "help") == 0;
		ck_assert(cJSON_IsString(cJSON_GetObjectItem(e, "help")));
	}
	ck_assert(seen_echo && seen_help);
	cJSON_Delete(res);
	close(fd);
}
END_TEST

/* Whether the other end of @fd's socket pair was closed within 2 s (EOF). */
static bool
closed_within(int fd)
{
	struct pollfd pf = {.fd = fd, .events = POLLIN};
	char c;

	return poll(&pf, 1, 2000) == 1 && read(fd, &c, 1) == 0;
}

/*
 * A descriptor passed with a request (SCM_RIGHTS) is its handler's to take;
 * one that no handler takes is closed once its request has run.
 */
START_TEST(ctl_pass_fd)
{
	char err[256] = "", buf[16];
	int fd, sv[2];
	cJSON *res;

	ctl_fake_start_thread();
	fd = client();
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	ck_assert_int_eq(hv_ctl_call_fd(fd, "take_fd", NULL, sv[1], &res, err, sizeof(err)), 0);
	ck_assert(cJSON_IsTrue(res));
	cJSON_Delete(res);
	close(sv[1]);
	ck_assert_int_eq(read(sv[0], buf, sizeof(buf)), 5);
	ck_assert_mem_eq(buf, "taken", 5);
	ck_assert(closed_within(sv[0]));
	close(sv[0]);
	/* not taken: closed by the server */
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	ck_assert_int_eq(hv_ctl_call_fd(fd, "null", NULL, sv[1], &res, err, sizeof(err)), 0);
	cJSON_Delete(res);
	close(sv[1]);
	ck_assert(closed_within(sv[0]));
	close(sv[0]);
	/* and not kept for the next request */
	ck_assert_int_eq(hv_ctl_call(fd, "take_fd", NULL, &res, err, sizeof(err)), 0);
	ck_assert(cJSON_IsFalse(res));
	cJSON_Delete(res);
	close(fd);
}
END_TEST

START_TEST(ctl_handler_error)
{
	char err[256] = "";
	cJSON *res = (cJSON *)1;
	int fd;

	ctl_fake_start_thread();
	fd = client();
	ck_assert_int_eq(hv_ctl_call(fd, "fail", NULL, &res, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "port.add: 'queues' must be an integer 1..8");
	ck_assert_ptr_null(res);
	ck_assert_int_eq(
		hv_ctl_call(fd, "queues", cJSON_Parse("{\"queues\":9}"), &res, err, sizeof(err)),
		-1);
	ck_assert_str_eq(err, "port.add: 'queues' must be an integer 1..8");
	ck_assert_int_eq(
		hv_ctl_call(fd, "queues", cJSON_Parse("{\"queues\":4}"), &res, err, sizeof(err)),
		0);
	ck_assert_int_eq((int)res->valuedouble, 4);
	cJSON_Delete(res);
	close(fd);
}
END_TEST

START_TEST(ctl_malformed_json)
{
	int fd;

	ctl_fake_start_thread();
	fd = raw_connect(ctl_path);
	raw_expect_error(fd, "{\"cmd\": \"echo\",\n", "malformed request: invalid JSON");
	raw_expect_error(fd, "{\"cmd\":\"echo\"} {}\n", "malformed request: data after");
	raw_expect_error(fd, "[1,2]\n", "expected a JSON object");
	raw_expect_error(fd, "\"\\u0000\n", "malformed request");
	/* the connection is still usable, and blank lines are ignored */
	raw_expect_ok(fd, "\n  \r\n{\"cmd\":\"echo\",\"args\":{\"x\":1}}\r\n");
	close(fd);
}
END_TEST

START_TEST(ctl_unknown_and_missing_cmd)
{
	char err[256];
	int fd;

	ctl_fake_start_thread();
	fd = raw_connect(ctl_path);
	raw_expect_error(fd, "{\"cmd\":\"nope\"}\n", "unknown command 'nope'");
	raw_expect_error(fd, "{\"args\":{}}\n", "missing 'cmd'");
	raw_expect_error(fd, "{\"cmd\":5}\n", "'cmd' must be a string");
	raw_expect_error(fd, "{\"cmd\":\"echo\",\"args\":5}\n", "echo: 'args' must be an object");
	raw_expect_ok(fd, "{\"cmd\":\"echo\",\"args\":null}\n");
	close(fd);

	fd = client();
	ck_assert_int_eq(hv_ctl_call(fd, "no.such", NULL, NULL, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "unknown command 'no.such' (try 'help')");
	close(fd);
}
END_TEST

START_TEST(ctl_oversized_request)
{
	size_t big = HV_CTL_MAX_REQUEST + 4096;
	const char *head = "{\"cmd\":\"echo\",\"args\":{\"p\":\"";
	const char *tail = "\"}}\n";
	char *buf = malloc(big + 1);
	size_t fill;
	char *text;
	int fd;

	ck_assert_ptr_nonnull(buf);
	ctl_fake_start_thread();

	/* exactly the limit (not counting '\n') is accepted */
	fd = raw_connect(ctl_path);
	fill = HV_CTL_MAX_REQUEST - strlen(head) - (strlen(tail) - 1);
	strcpy(buf, head);
	memset(buf + strlen(head), 'a', fill);
	strcpy(buf + strlen(head) + fill, tail);
	ck_assert_uint_eq(strlen(buf), HV_CTL_MAX_REQUEST + 1);
	raw_send(fd, buf, strlen(buf));
	text = raw_line(fd, WAIT_MS);
	ck_assert_ptr_nonnull(text);
	ck_assert(strncmp(text, "{\"ok\":true", 10) == 0);
	free(text);

	/* one more byte is not: error reply, then the connection is closed */
	memset(buf, 'a', big);
	buf[big] = '\0';
	memcpy(buf, head, strlen(head));
	raw_send(fd, buf, HV_CTL_MAX_REQUEST + 2);
	text = raw_line(fd, WAIT_MS);
	ck_assert_ptr_nonnull(text);
	ck_assert_msg(strstr(text, "request too large") != NULL, "%s", text);
	ck_assert(strncmp(text, "{\"ok\":false", 11) == 0);
	free(text);
	ck_assert(raw_closed(fd, WAIT_MS));
	close(fd);
	free(buf);
}
END_TEST

START_TEST(ctl_two_clients_interleaved)
{
	char err[256];
	cJSON *res;
	int a, b, i, raw;
	char *l1, *l2;

	ctl_fake_start_thread();
	a = client();
	b = client();
	for (i = 0; i < 5; i++) {
		int fd = i % 2 ? a : b;
		cJSON *args = cJSON_CreateObject();

		cJSON_AddNumberToObject(args, "i", i);
		ck_assert_int_eq(hv_ctl_call(fd, "echo", args, &res, err, sizeof(err)), 0);
		ck_assert_int_eq(cJSON_GetObjectItem(res, "i")->valueint, i);
		cJSON_Delete(res);
	}
	/* pipelined: two requests in one write, two replies in order */
	raw = raw_connect(ctl_path);
	{
		static const char two[] = "{\"cmd\":\"echo\",\"args\":{\"n\":1}}\n"
					  "{\"cmd\":\"echo\",\"args\":{\"n\":2}}\n";

		raw_send(raw, two, strlen(two));
	}
	l1 = raw_line(raw, WAIT_MS);
	l2 = raw_line(raw, WAIT_MS);
	ck_assert_ptr_nonnull(l1);
	ck_assert_ptr_nonnull(l2);
	ck_assert_str_eq(l1, "{\"ok\":true,\"result\":{\"n\":1}}");
	ck_assert_str_eq(l2, "{\"ok\":true,\"result\":{\"n\":2}}");
	free(l1);
	free(l2);
	close(raw);
	close(a);
	close(b);
}
END_TEST

START_TEST(ctl_stalled_client)
{
	char err[256];
	char *text;
	int stalled, fd;

	ctl_fake_start_thread();
	stalled = raw_connect(ctl_path);
	raw_send(stalled, "{\"cmd\":\"ec", 10);
	/* a second client is served while the first holds half a line */
	fd = client();
	ck_assert_int_eq(hv_ctl_set_timeout(fd, 2000), 0);
	ck_assert_int_eq(hv_ctl_call(fd, "echo", NULL, NULL, err, sizeof(err)), 0);
	ck_assert_int_eq(hv_ctl_call(fd, "null", NULL, NULL, err, sizeof(err)), 0);
	close(fd);
	/* a client that never reads its replies does not block others either */
	fd = raw_connect(ctl_path);
	{
		static char many[32768];
		size_t i;

		for (i = 0; i + 15 <= sizeof(many); i += 15)
			memcpy(many + i, "{\"cmd\":\"help\"}\n", 15);
		raw_send(fd, many, i);
	}
	{
		int other = client();

		ck_assert_int_eq(hv_ctl_set_timeout(other, 2000), 0);
		ck_assert_int_eq(hv_ctl_call(other, "echo", NULL, NULL, err, sizeof(err)), 0);
		close(other);
	}
	close(fd);
	/* the stalled client's request completes */
	raw_send(stalled, "ho\"}\n", 5);
	text = raw_line(stalled, WAIT_MS);
	ck_assert_ptr_nonnull(text);
	ck_assert_str_eq(text, "{\"ok\":true,\"result\":null}");
	free(text);
	close(stalled);
}
END_TEST

START_TEST(ctl_client_limit)
{
	int fds[HV_CTL_MAX_CLIENTS + 1];
	char err[256], *text;
	unsigned int i;
	int fd;

	ctl_fake_start_thread();
	for (i = 0; i <= HV_CTL_MAX_CLIENTS; i++)
		fds[i] = raw_connect(ctl_path);
	/* once every earlier one was accepted, the last is refused */
	for (i = 0; i < HV_CTL_MAX_CLIENTS; i++)
		raw_expect_ok(fds[i], "{\"cmd\":\"null\"}\n");
	/* refused at accept: the error comes unasked */
	text = raw_line(fds[HV_CTL_MAX_CLIENTS], WAIT_MS);
	ck_assert_ptr_nonnull(text);
	ck_assert_str_eq(text, "{\"ok\":false,\"error\":\"too many clients (limit 64)\"}");
	free(text);
	ck_assert(raw_closed(fds[HV_CTL_MAX_CLIENTS], WAIT_MS));
	for (i = 0; i <= HV_CTL_MAX_CLIENTS; i++)
		close(fds[i]);
	/* slots are freed: wait until the server has seen the closes */
	for (i = 0; i < WAIT_MS / 10; i++) {
		fd = client();
		if (hv_ctl_call(fd, "null", NULL, NULL, err, sizeof(err)) == 0) {
			close(fd);
			break;
		}
		ck_assert_str_eq(err, "too many clients (limit 64)");
		close(fd);
		poll(NULL, 0, 10);
	}
	ck_assert_uint_lt(i, WAIT_MS / 10);
}
END_TEST

START_TEST(ctl_client_timeout)
{
	char err[256];
	int fd;

	/* nobody polls the server: the kernel accepts, no reply comes */
	fd = client();
	ck_assert_int_eq(hv_ctl_set_timeout(fd, 100), 0);
	ck_assert_int_eq(hv_ctl_call(fd, "echo", NULL, NULL, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "timed out waiting for a reply");
	close(fd);
}
END_TEST

START_TEST(ctl_socket_lifecycle)
{
	char err[256], other[160];
	struct hv_ctl_server *s2;
	struct stat st;
	int fd;

	ck_assert_int_eq(stat(ctl_path, &st), 0);
	ck_assert(S_ISSOCK(st.st_mode));
	ck_assert_uint_eq(st.st_mode & 07777, 0660);
	/* a live socket is not taken over */
	s2 = hv_ctl_server_create(ctl_path, HV_CTL_NO_GROUP, ctl_fake_cmds, NULL, err, sizeof(err));
	ck_assert_ptr_null(s2);
	ck_assert_msg(strstr(err, "in use") != NULL, "%s", err);
	/* a regular file is not removed */
	snprintf(other, sizeof(other), "%s/file", ctl_dir);
	fd = open(other, O_CREAT | O_WRONLY, 0600);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_ptr_null(hv_ctl_server_create(other, HV_CTL_NO_GROUP, ctl_fake_cmds, NULL, err,
						sizeof(err)));
	ck_assert_msg(strstr(err, "not a socket") != NULL, "%s", err);
	unlink(other);
	/* destroy unlinks; a stale socket file is replaced */
	hv_ctl_server_destroy(ctl_srv);
	ctl_srv = NULL;
	ck_assert_int_eq(stat(ctl_path, &st), -1);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	{
		struct sockaddr_un sa = {.sun_family = AF_UNIX};

		memcpy(sa.sun_path, ctl_path, strlen(ctl_path) + 1);
		ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	}
	close(fd); /* stale: bound, nobody listening */
	ctl_srv = hv_ctl_server_create(ctl_path, HV_CTL_NO_GROUP, ctl_fake_cmds, NULL, err,
				       sizeof(err));
	ck_assert_msg(ctl_srv != NULL, "%s", err);
	/* connect errors are one line with the path */
	ck_assert_int_eq(hv_ctl_connect("/nonexistent/x.sock", err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "/nonexistent/x.sock") != NULL, "%s", err);
	ck_assert_ptr_null(strchr(err, '\n'));
}
END_TEST

/* ---- permissions ---- */

/* In a child: become nobody with the given groups, call "null", exit 0 if
 * the outcome is the expected one. */
static void
perm_child(const char *p, gid_t gid, const gid_t *groups, size_t ngroups, bool allowed)
{
	char err[256] = "";
	int fd, rc;

	if (setgroups(ngroups, groups) < 0 || setgid(gid) < 0 || setuid(NOBODY) < 0)
		_exit(10);
	fd = hv_ctl_connect(p, err, sizeof(err));
	if (fd < 0) {
		fprintf(stderr, "connect: %s\n", err);
		_exit(11);
	}
	hv_ctl_set_timeout(fd, WAIT_MS);
	rc = hv_ctl_call(fd, "null", NULL, NULL, err, sizeof(err));
	if (allowed && rc != 0) {
		fprintf(stderr, "refused: %s\n", err);
		_exit(12);
	}
	if (!allowed && (rc == 0 || strncmp(err, "permission denied: ", 19) != 0)) {
		fprintf(stderr, "not refused: rc %d, '%s'\n", rc, err);
		_exit(13);
	}
	_exit(0);
}

START_TEST(ctl_permission)
{
	static const struct {
		gid_t gid;
		gid_t groups[1];
		size_t ngroups;
		bool allowed;
	} cases[] = {
		{NOBODY, {0}, 0, false},         /* no matching group */
		{TEST_GROUP, {0}, 0, true},      /* primary group */
		{NOBODY, {TEST_GROUP}, 1, true}, /* supplementary group */
	};
	struct hv_ctl_server *s;
	char p[160], err[256];
	struct stat st;
	unsigned int i;

	if (geteuid() != 0) {
		fprintf(stderr, "test_ctl: SKIP ctl_permission: needs root to fork+setuid(%u)\n",
			(unsigned int)NOBODY);
		return;
	}
	snprintf(p, sizeof(p), "%s/group.sock", ctl_dir);
	s = hv_ctl_server_create(p, TEST_GROUP, ctl_fake_cmds, NULL, err, sizeof(err));
	ck_assert_msg(s != NULL, "%s", err);
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0660);
	ck_assert_uint_eq(st.st_uid, 0);
	ck_assert_uint_eq(st.st_gid, TEST_GROUP);
	/* let anyone reach the socket so that the credential check is what decides */
	ck_assert_int_eq(chmod(p, 0666), 0);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		pid_t pid = fork();

		ck_assert_int_ge(pid, 0);
		if (pid == 0)
			perm_child(p, cases[i].gid, cases[i].groups, cases[i].ngroups,
				   cases[i].allowed);
		ck_assert_msg(cu_wait_child(s, pid) == 0, "case %u failed", i);
	}
	hv_ctl_server_destroy(s);
	ck_assert_int_eq(access(p, F_OK), -1);
}
END_TEST

/* ---- argument helpers ---- */

START_TEST(ctl_arg_helpers)
{
	cJSON *a = cJSON_Parse("{\"name\":\"vm1\",\"queues\":9,\"frac\":1.5,\"neg\":-1,"
			       "\"s\":\"x\",\"b\":true,\"n\":null,\"empty\":\"\",\"big\":1e300}");
	const char *str = NULL;
	uint64_t u = 77;
	bool b = false;
	char err[256];

	ck_assert_int_eq(hv_ctl_arg_str(a, "port.add", "name", true, 15, &str, err, sizeof(err)),
			 1);
	ck_assert_str_eq(str, "vm1");
	ck_assert_int_eq(hv_ctl_arg_str(a, "port.add", "missing", true, 0, &str, err, sizeof(err)),
			 -1);
	ck_assert_str_eq(err, "port.add: missing 'missing'");
	ck_assert_int_eq(hv_ctl_arg_str(a, "port.add", "missing", false, 0, &str, err, sizeof(err)),
			 0);
	ck_assert_int_eq(hv_ctl_arg_str(a, "port.add", "n", false, 0, &str, err, sizeof(err)), 0);
	ck_assert_int_eq(hv_ctl_arg_str(a, "port.add", "queues", true, 0, &str, err, sizeof(err)),
			 -1);
	ck_assert_str_eq(err, "port.add: 'queues' must be a string");
	ck_assert_int_eq(hv_ctl_arg_str(a, "port.add", "empty", true, 15, &str, err, sizeof(err)),
			 -1);
	ck_assert_str_eq(err, "port.add: 'empty' must be a string of 1..15 characters");
	ck_assert_int_eq(hv_ctl_arg_str(a, "port.add", "name", true, 2, &str, err, sizeof(err)),
			 -1);

	ck_assert_int_eq(hv_ctl_arg_uint(a, "port.add", "queues", true, 1, 8, &u, err, sizeof(err)),
			 -1);
	ck_assert_str_eq(err, "port.add: 'queues' must be an integer 1..8");
	ck_assert_uint_eq(u, 77);
	ck_assert_int_eq(hv_ctl_arg_uint(a, "port.add", "queues", true, 1, 9, &u, err, sizeof(err)),
			 1);
	ck_assert_uint_eq(u, 9);
	ck_assert_int_eq(hv_ctl_arg_uint(a, "port.add", "frac", true, 0, 8, &u, err, sizeof(err)),
			 -1);
	ck_assert_int_eq(hv_ctl_arg_uint(a, "port.add", "neg", true, 0, 8, &u, err, sizeof(err)),
			 -1);
	ck_assert_str_eq(err, "port.add: 'neg' must be an integer 0..8");
	ck_assert_int_eq(hv_ctl_arg_uint(a, "port.add", "s", true, 0, 8, &u, err, sizeof(err)), -1);
	ck_assert_int_eq(hv_ctl_arg_uint(a, "x", "big", true, 0, UINT64_MAX, &u, err, sizeof(err)),
			 -1);
	ck_assert_str_eq(err, "x: 'big' must be an integer 0..9007199254740992");
	ck_assert_int_eq(
		hv_ctl_arg_uint(a, "port.add", "missing", false, 0, 8, &u, err, sizeof(err)), 0);
	ck_assert_int_eq(
		hv_ctl_arg_uint(NULL, "port.add", "vlan", true, 0, 4095, &u, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "port.add: missing 'vlan'");

	ck_assert_int_eq(hv_ctl_arg_bool(a, "port.set", "b", true, &b, err, sizeof(err)), 1);
	ck_assert(b);
	ck_assert_int_eq(hv_ctl_arg_bool(a, "port.set", "s", true, &b, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "port.set: 's' must be true or false");

	{
		static const char *const ok[] = {"name", "queues", "frac",  "neg", "s",
						 "b",    "n",      "empty", "big", NULL};
		static const char *const few[] = {"name", NULL};

		ck_assert_int_eq(hv_ctl_args_check(a, "port.add", ok, err, sizeof(err)), 0);
		ck_assert_int_eq(hv_ctl_args_check(a, "port.add", few, err, sizeof(err)), -1);
		ck_assert_str_eq(err, "port.add: unknown argument 'queues'");
		ck_assert_int_eq(hv_ctl_args_check(NULL, "port.add", few, err, sizeof(err)), 0);
	}
	cJSON_Delete(a);
}
END_TEST

static Suite *
ctl_suite(void)
{
	Suite *s = suite_create("ctl");
	TCase *tc;

	tc = tcase_create("protocol");
	tcase_add_checked_fixture(tc, ctl_fake_setup, ctl_fake_teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, ctl_ok_reply);
	tcase_add_test(tc, ctl_handler_error);
	tcase_add_test(tc, ctl_pass_fd);
	tcase_add_test(tc, ctl_malformed_json);
	tcase_add_test(tc, ctl_unknown_and_missing_cmd);
	tcase_add_test(tc, ctl_oversized_request);
	tcase_add_test(tc, ctl_two_clients_interleaved);
	tcase_add_test(tc, ctl_stalled_client);
	tcase_add_test(tc, ctl_client_limit);
	tcase_add_test(tc, ctl_client_timeout);
	tcase_add_test(tc, ctl_socket_lifecycle);
	tcase_add_test(tc, ctl_permission);
	tcase_add_test(tc, ctl_arg_helpers);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(ctl_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
