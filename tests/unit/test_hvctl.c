/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hvctl as an operator types it (doc/hvctl.rst): argument parsing, help,
 * where --json may go, the human layouts of port list and port show, and the
 * admin verbs stats clear and log set. The server is lib/ctl's with a fake
 * command table, polled by this thread while the forked hvctl runs;
 * completion runs hvctl with COMP_LINE set. hvctl is found through $HVCTL.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ctl_util.h"
#include "hv_ctl.h"

static char dir[64];
static char path[100];
static struct hv_ctl_server *srv;
static unsigned int calls;   /* requests the fake server answered */
static char last_args[1024]; /* the arguments of the last one, as compact JSON */

static int
canned(const char *text, const cJSON *args, cJSON **result, char *err, size_t errlen)
{
	char *a = args != NULL ? cJSON_PrintUnformatted(args) : NULL;

	calls++;
	snprintf(last_args, sizeof(last_args), "%s", a != NULL ? a : "null");
	free(a);
	*result = cJSON_Parse(text);
	if (*result == NULL) {
		snprintf(err, errlen, "bad canned JSON");
		return -1;
	}
	return 0;
}

#define CANNED(fn, text)                                                                           \
	static int fn(void *ctx, const cJSON *args, cJSON **result, char *err, size_t errlen)      \
	{                                                                                          \
		(void)ctx;                                                                         \
		return canned(text, args, result, err, errlen);                                    \
	}

CANNED(h_port_list,
       "[{\"name\":\"vm1\",\"type\":\"vhost-user\",\"state\":\"connected\",\"queues\":1,"
       "\"vlan\":10,\"socket\":\"/tmp/vm1.sock\"},"
       "{\"name\":\"up0\",\"type\":\"vhost-user\",\"state\":\"up\",\"queues\":1,\"vlan\":0,"
       "\"trunk\":true,\"socket\":\"/tmp/up0.sock\"},"
       "{\"name\":\"vm2\",\"type\":\"vhost-user\",\"state\":\"down\",\"queues\":1,\"vlan\":0,"
       "\"socket\":\"/tmp/vm2.sock\"}]")
CANNED(h_stats, "{\"ports\":[{\"name\":\"vm1\",\"rx_packets\":1}],\"pmds\":[]}")
CANNED(h_stats_clear, "{\"ports\":[\"vm1\",\"up0\",\"vm2\"],\"pmds\":true}")
CANNED(h_log_set, "{\"types\":[\"lib.eal\"],\"level\":\"debug\"}")

/* port.show as the daemon's: nested objects, and queue pairs with many counters. */
static int
h_port_show(void *ctx, const cJSON *args, cJSON **result, char *err, size_t errlen)
{
	static char text[16384];
	size_t off = 0;

	(void)ctx;
	off += (size_t)snprintf(
		text + off, sizeof(text) - off,
		"{\"name\":\"vm1\",\"type\":\"vhost-user\",\"state\":\"up\",\"vlan\":10,"
		"\"stats\":{\"rx_packets\":100,\"offload\":{\"passthrough\":3,"
		"\"drops\":{\"bad_flags\":1,\"gso_size\":2}}},"
		"\"guest_memory\":{\"regions\":2,\"mapped_bytes\":1073741824},\"qps\":[");
	for (int q = 0; q < 2; q++) {
		off += (size_t)snprintf(text + off, sizeof(text) - off,
					"%s{\"qp\":%d,\"pmd\":%d,\"lcore\":%d", q ? "," : "", q,
					q + 1, q + 4);
		for (int d = 0; d < 2; d++) {
			off += (size_t)snprintf(text + off, sizeof(text) - off, ",\"%s\":{",
						d ? "tx" : "rx");
			for (int c = 0; c < 30; c++)
				off += (size_t)snprintf(text + off, sizeof(text) - off,
							"\"counter_number_%02d\":%d,", c,
							1000000 * c + q);
			off += (size_t)snprintf(text + off, sizeof(text) - off,
						"\"fpi\":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,"
						"17,18,19,20]}");
		}
		off += (size_t)snprintf(text + off, sizeof(text) - off, "}");
	}
	snprintf(text + off, sizeof(text) - off, "]}");
	return canned(text, args, result, err, errlen);
}

static const struct hv_ctl_cmd cmds[] = {
	{"port.list", h_port_list, "canned ports", HV_CTL_READ},
	{"port.show", h_port_show, "canned port", HV_CTL_READ},
	{"stats", h_stats, "canned counters", HV_CTL_READ},
	{"stats.clear", h_stats_clear, "canned", HV_CTL_WRITE},
	{"log.set", h_log_set, "canned", HV_CTL_WRITE},
	{NULL, NULL, NULL, 0},
};

static void
setup(void)
{
	char err[256];

	cu_dir(dir, sizeof(dir), path, sizeof(path), "ctl.sock");
	srv = hv_ctl_server_create(path, HV_CTL_NO_GROUP, cmds, NULL, err, sizeof(err));
	ck_assert_msg(srv != NULL, "server: %s", err);
	calls = 0;
	last_args[0] = '\0';
}

static void
teardown(void)
{
	hv_ctl_server_destroy(srv);
	srv = NULL;
	rmdir(dir);
}

#define HVCTL(r, ...) cu_hvctl((r), srv, path, NULL, (const char *const[]){__VA_ARGS__, NULL})

static void
assert_has(const char *text, const char *want)
{
	ck_assert_msg(strstr(text, want) != NULL, "'%s' not in output:\n%.3000s", want, text);
}

static void
assert_lacks(const char *text, const char *bad)
{
	ck_assert_msg(strstr(text, bad) == NULL, "'%s' in output:\n%.3000s", bad, text);
}

/* Exit 1 and exactly one line on stderr, "hvctl: ..." holding want; nothing on stdout. */
static void
assert_error(const struct cu_run *r, const char *want)
{
	size_t len = strlen(r->err);

	ck_assert_msg(r->status == 1, "exit %d (stderr %s)", r->status, r->err);
	ck_assert_str_eq(r->out, "");
	ck_assert_msg(strncmp(r->err, "hvctl: ", 7) == 0 && len > 0 &&
			      strchr(r->err, '\n') == r->err + len - 1,
		      "stderr is not one 'hvctl:' line: %s", r->err);
	assert_has(r->err, want);
}

static void
assert_ok(const struct cu_run *r)
{
	ck_assert_msg(r->status == 0, "exit %d: %s", r->status, r->err);
	ck_assert_str_eq(r->err, "");
}

/* A --watch interval is a number of seconds, not a port name. */
START_TEST(watch_interval)
{
	struct cu_run r;

	HVCTL(&r, "stats", "--watch", "0.001");
	assert_error(&r, "stats: --watch: '0.001' is not 0.01..86400 seconds");
	HVCTL(&r, "stats", "--watch=1e9");
	assert_error(&r, "'1e9' is not 0.01..86400 seconds");
	ck_assert_uint_eq(calls, 0);
	/* a fraction is an interval; a word after --watch is the port */
	HVCTL(&r, "stats", "--watch", "0.02", "--count", "1", "vm1");
	assert_ok(&r);
	assert_has(r.out, "RX_PPS");
	ck_assert_str_eq(last_args, "{\"port\":\"vm1\"}");
	HVCTL(&r, "stats", "--watch", "vm1", "--count", "1");
	assert_ok(&r);
	ck_assert_str_eq(last_args, "{\"port\":\"vm1\"}");
}
END_TEST

/* Each sub-verb's --help is its own; "help VERB SUB" is the same text. */
START_TEST(specific_help)
{
	static struct cu_run a, b;

	HVCTL(&a, "stats", "--help");
	assert_ok(&a);
	assert_has(a.out, "busy % and packets");
	assert_lacks(a.out, "%%");
	HVCTL(&a, "port", "del", "--help");
	assert_ok(&a);
	ck_assert_msg(strncmp(a.out, "usage: hvctl port del NAME\n", 27) == 0, "%s", a.out);
	assert_lacks(a.out, "port add");
	HVCTL(&b, "help", "port", "del");
	assert_ok(&b);
	ck_assert_str_eq(a.out, b.out);
	HVCTL(&b, "port", "help", "del");
	assert_ok(&b);
	ck_assert_str_eq(a.out, b.out);
	HVCTL(&a, "guest", "start", "--help");
	assert_ok(&a);
	ck_assert_msg(strncmp(a.out, "usage: hvctl guest start NAME", 29) == 0, "%s", a.out);
	assert_has(a.out, "  --memory M ");
	assert_has(a.out, "  --port P ");
	assert_has(a.out, "  --switch-dir DIR ");
	assert_lacks(a.out, "guest console");
	HVCTL(&a, "guest", "stop", "x", "--help");
	assert_ok(&a);
	ck_assert_msg(strncmp(a.out, "usage: hvctl guest stop NAME", 28) == 0, "%s", a.out);
	assert_lacks(a.out, "guest start");
	HVCTL(&a, "log", "set", "--help");
	assert_ok(&a);
	assert_has(a.out, "usage: hvctl log set TYPE LEVEL\n");
	assert_has(a.out, "emerg, alert, crit, err, warning, notice, info or debug");
	ck_assert_uint_eq(calls, 0);
}
END_TEST

/* --json after the verb, as after hvctl. */
START_TEST(json_anywhere)
{
	struct cu_run r;
	cJSON *j;

	HVCTL(&r, "port", "list", "--json");
	assert_ok(&r);
	j = cJSON_Parse(r.out);
	ck_assert_msg(cJSON_IsArray(j) && cJSON_GetArraySize(j) == 3, "%s", r.out);
	cJSON_Delete(j);
	HVCTL(&r, "port", "-j", "show", "vm1");
	assert_ok(&r);
	j = cJSON_Parse(r.out);
	ck_assert_msg(cJSON_IsObject(j), "%s", r.out);
	ck_assert_str_eq(last_args, "{\"name\":\"vm1\"}");
	cJSON_Delete(j);
	/* after "--" it is a word like any other */
	HVCTL(&r, "port", "show", "--", "--json");
	assert_ok(&r);
	ck_assert_str_eq(last_args, "{\"name\":\"--json\"}");
}
END_TEST

/* STATE says a frontend is there; VLAN tells access, trunk and untagged apart. */
START_TEST(port_list_columns)
{
	struct cu_run r;

	HVCTL(&r, "port", "list");
	assert_ok(&r);
	ck_assert_str_eq(r.out,
			 "NAME  TYPE        STATE      QUEUES  VLAN      PMD  SOCKET/DEVARGS\n"
			 "vm1   vhost-user  connected       1  10        -    /tmp/vm1.sock\n"
			 "up0   vhost-user  up              1  trunk     -    /tmp/up0.sock\n"
			 "vm2   vhost-user  down            1  untagged  -    /tmp/vm2.sock\n");
}
END_TEST

/* port show for people: within 100 columns, nested blocks, no JSON. */
START_TEST(port_show_layout)
{
	struct cu_run r;
	char *line, *save = NULL;
	unsigned int lines = 0;

	HVCTL(&r, "port", "show", "vm1");
	assert_ok(&r);
	assert_has(r.out, "stats:\n  rx_packets: 100\n  offload:\n    passthrough: 3\n"
			  "    drops:\n      bad_flags: 1\n      gso_size:  2\n");
	assert_has(r.out, "guest_memory:\n  regions:      2\n  mapped_bytes: 1073741824\n");
	assert_has(r.out, "queue pair 1: PMD 2, lcore 5\n  COUNTER");
	assert_has(r.out, "  counter_number_29     ");
	assert_has(r.out, " 29000001\n"); /* qp 1, tx: the last counter row */
	assert_has(r.out, "  fpi                1,2,3,4,5,6,7,8,9,10,11,12,13,14,...  ");
	for (line = strtok_r(r.out, "\n", &save); line != NULL;
	     line = strtok_r(NULL, "\n", &save), lines++) {
		ck_assert_msg(strlen(line) <= 100, "%zu columns: %s", strlen(line), line);
		ck_assert_msg(strpbrk(line, "{}\"[") == NULL, "JSON in: %s", line);
	}
	ck_assert_uint_gt(lines, 60);
}
END_TEST

/* stats clear and log set send their requests; a bad level never leaves hvctl. */
START_TEST(admin_verbs)
{
	struct cu_run r;

	HVCTL(&r, "stats", "clear", "vm1");
	assert_ok(&r);
	ck_assert_str_eq(last_args, "{\"port\":\"vm1\"}");
	HVCTL(&r, "stats", "clear");
	assert_ok(&r);
	ck_assert_str_eq(last_args, "{}");
	ck_assert_str_eq(r.out, "cleared the counters of 3 ports and the PMDs\n");
	HVCTL(&r, "log", "set", "lib.eal", "debug");
	assert_ok(&r);
	ck_assert_str_eq(last_args, "{\"logtype\":\"lib.eal\",\"level\":\"debug\"}");
	ck_assert_str_eq(r.out, "lib.eal: debug\n");
	ck_assert_uint_eq(calls, 3);
	HVCTL(&r, "log", "set", "lib.eal", "loud");
	assert_error(&r, "log.set: 'level' must be emerg, alert, crit, err, warning, notice, "
			 "info or debug");
	HVCTL(&r, "log", "set", "lib.eal");
	assert_error(&r, "log set: missing LEVEL");
	HVCTL(&r, "stats", "clear", "vm1", "vm2");
	assert_error(&r, "unexpected argument 'vm2'");
	ck_assert_uint_eq(calls, 3);
}
END_TEST

/* Completion offers the new verbs, sub-verbs and a positional key's words. */
START_TEST(completion)
{
	static const struct {
		const char *line, *want;
	} cases[] = {
		{"hvctl ", "log\n"},           {"hvctl stats ", "clear\n"},
		{"hvctl log ", "set\n"},       {"hvctl log set lib.eal d", "debug\n"},
		{"hvctl guest ", "start\n"},   {"hvctl guest start g --mem", "--memory\n"},
		{"hvctl help port ", "del\n"},
	};
	struct cu_run r;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cu_hvctl(&r, srv, path, cases[i].line, (const char *const[]){NULL});
		assert_ok(&r);
		ck_assert_msg(strstr(r.out, cases[i].want) != NULL, "'%s': offered '%s'",
			      cases[i].line, r.out);
	}
	ck_assert_uint_eq(calls, 0);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("hvctl");
	TCase *t = tcase_create("cli");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 60);
	tcase_add_test(t, watch_interval);
	tcase_add_test(t, specific_help);
	tcase_add_test(t, json_anywhere);
	tcase_add_test(t, port_list_columns);
	tcase_add_test(t, port_show_layout);
	tcase_add_test(t, admin_verbs);
	tcase_add_test(t, completion);
	suite_add_tcase(s, t);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
