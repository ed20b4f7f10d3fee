/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hvctl against a fake server (ctl_fake.h): its tables, JSON, one-line
 * errors and exit statuses. No DPDK.
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

/* ---- hvctl ---- */

#define HVCTL(r, ...)                                                                              \
	cu_hvctl((r), ctl_srv, ctl_path, NULL, (const char *const[]){__VA_ARGS__, NULL})

static bool
have_hvctl(void)
{
	const char *exe = getenv("HVCTL");

	if (exe == NULL || access(exe, X_OK) != 0) {
		fprintf(stderr, "test_ctl: SKIP hvctl tests: $HVCTL is not set to the hvctl "
				"binary (run through meson test)\n");
		return false;
	}
	return true;
}

static void
assert_has(const char *text, const char *want)
{
	ck_assert_msg(strstr(text, want) != NULL, "'%s' not in output:\n%s", want, text);
}

/* stderr is exactly one line starting with "hvctl: ". */
static void
assert_one_error_line(const struct cu_run *r)
{
	size_t len = strlen(r->err);

	ck_assert_msg(strncmp(r->err, "hvctl: ", 7) == 0, "stderr: %s", r->err);
	ck_assert_msg(len > 0 && r->err[len - 1] == '\n' &&
			      strchr(r->err, '\n') == r->err + len - 1,
		      "stderr is not one line: %s", r->err);
}

START_TEST(hvctl_port_list)
{
	struct cu_run r;
	cJSON *j;

	if (!have_hvctl())
		return;
	HVCTL(&r, "port", "list");
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert_str_eq(r.err, "");
	assert_has(r.out, "NAME  TYPE        STATE  QUEUES  VLAN      PMD  SOCKET/DEVARGS\n");
	assert_has(r.out, "vm1   vhost-user  up          2  10        1,2  /tmp/vm1.sock\n");
	assert_has(r.out, "tap0  ethdev      down        1  untagged  3    net_tap0,iface=x\n");

	HVCTL(&r, "--json", "port", "list");
	ck_assert_int_eq(r.status, 0);
	j = cJSON_Parse(r.out);
	ck_assert_msg(j != NULL && cJSON_GetArraySize(j) == 2, "%s", r.out);
	cJSON_Delete(j);

	HVCTL(&r, "port", "show", "vm1");
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	assert_has(r.out, "name:  vm1\n");
	assert_has(r.out, "stats:\n  rx_packets: 100\n");
	assert_has(r.out, "queue pair 0: PMD 1\n  COUNTER    RX    TX\n  packets    11    22\n");
	assert_has(r.out, "  kicks       -     7\n");
}
END_TEST

START_TEST(hvctl_requests)
{
	struct cu_run r;
	cJSON *j;

	if (!have_hvctl())
		return;
	HVCTL(&r, "--json", "port", "add", "vm3", "--type", "vhost-user", "--socket",
	      "/tmp/vm3.sock", "--mode", "client", "--queues", "4", "--vlan", "100");
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	j = cJSON_Parse(r.out);
	ck_assert_ptr_nonnull(j);
	ck_assert_str_eq(cJSON_GetObjectItem(j, "name")->valuestring, "vm3");
	ck_assert_str_eq(cJSON_GetObjectItem(j, "mode")->valuestring, "client");
	ck_assert_int_eq(cJSON_GetObjectItem(j, "queues")->valueint, 4);
	ck_assert_int_eq(cJSON_GetObjectItem(j, "vlan")->valueint, 100);
	cJSON_Delete(j);

	HVCTL(&r, "--json", "port", "set", "vm3", "vlan=none", "pmd=2");
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	j = cJSON_Parse(r.out);
	ck_assert_ptr_nonnull(j);
	ck_assert_str_eq(cJSON_GetObjectItem(j, "vlan")->valuestring, "none");
	ck_assert(cJSON_IsNumber(cJSON_GetObjectItem(j, "pmd")));
	cJSON_Delete(j);

	HVCTL(&r, "port", "del", "nosuch");
	ck_assert_int_eq(r.status, 1);
	ck_assert_str_eq(r.out, "");
	ck_assert_str_eq(r.err, "hvctl: port.del: no port 'nosuch'\n");

	HVCTL(&r, "version");
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert_str_eq(r.out, "hvctl " HV_VERSION "\nhvswitch 0.1.0\nDPDK 22.11.1\n");

	HVCTL(&r, "fdb", "flush");
	ck_assert_int_eq(r.status, 1);
	assert_one_error_line(&r);
	assert_has(r.err, "unknown command 'fdb.flush'");
}
END_TEST

START_TEST(hvctl_stats)
{
	struct cu_run r;
	char *line, *save = NULL;
	int lines = 0, ofd, efd;
	pid_t pid;

	if (!have_hvctl())
		return;
	HVCTL(&r, "stats");
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	assert_has(r.out, "PORT   RX_PKTS  RX_BYTES  TX_PKTS  TX_BYTES  DROPS  IRQS\n");
	assert_has(r.out, "vm1       1000     64000        5       320      1     2\n");
	assert_has(r.out, "TOTAL     1007     64448     1005     64320      1     5\n");
	assert_has(r.out, "LCORE  BUSY%  PACKETS  BATCHES  PKTS/BATCH\n");
	assert_has(r.out, "    1   50.0     2000      100        20.0\n");

	HVCTL(&r, "stats", "--watch", "0.05", "--count", "2");
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	assert_has(r.out, "RX_PPS");
	assert_has(r.out, "PKTS/BATCH");
	assert_has(r.out, "    1   50.0        20.0\n");

	HVCTL(&r, "--json", "stats", "--watch=0.05", "--count", "3", "vm1");
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	for (line = strtok_r(r.out, "\n", &save); line != NULL;
	     line = strtok_r(NULL, "\n", &save)) {
		cJSON *j = cJSON_Parse(line);

		ck_assert_msg(j != NULL, "not JSON: %s", line);
		ck_assert(cJSON_IsArray(cJSON_GetObjectItem(j, "ports")));
		ck_assert(
			cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "ports"), 0),
					    "rx_pps") != NULL);
		cJSON_Delete(j);
		lines++;
	}
	ck_assert_int_eq(lines, 3);

	/* --watch runs until SIGINT, then exits 0 */
	pid = cu_hvctl_start(ctl_path, NULL,
			     (const char *const[]){"stats", "--watch", "0.02", NULL}, &ofd, &efd);
	{
		struct stat st;
		int i, status;

		for (i = 0; i < WAIT_MS / 5; i++) {
			ck_assert_int_eq(fstat(ofd, &st), 0);
			if (st.st_size > 0)
				break; /* an interval was printed */
			hv_ctl_server_poll(ctl_srv, 5);
		}
		ck_assert_int_gt(st.st_size, 0);
		kill(pid, SIGINT);
		status = cu_wait_child(ctl_srv, pid);
		ck_assert_int_eq(status, 0);
	}
	close(ofd);
	close(efd);
}
END_TEST

START_TEST(hvctl_usage)
{
	struct cu_run r;

	if (!have_hvctl())
		return;
	HVCTL(&r, "port", "frobnicate");
	ck_assert_int_eq(r.status, 1);
	ck_assert_str_eq(r.out, "");
	assert_one_error_line(&r);

	HVCTL(&r, "--frob");
	ck_assert_int_eq(r.status, 1);
	assert_one_error_line(&r);
	assert_has(r.err, "'--frob'");

	HVCTL(&r, "nosuchverb");
	ck_assert_int_eq(r.status, 1);
	assert_one_error_line(&r);

	HVCTL(&r, "port", "add", "x", "--queues", "lots", "--type", "ethdev");
	ck_assert_int_eq(r.status, 1);
	assert_one_error_line(&r);
	assert_has(r.err, "'queues' must be an integer 1..8");

	HVCTL(&r, "stats", "--bogus");
	ck_assert_int_eq(r.status, 1);
	assert_one_error_line(&r);

	HVCTL(&r, "port", "set", "vm1", "novalue");
	ck_assert_int_eq(r.status, 1);
	assert_one_error_line(&r);

	{
		static const char *const helps[][4] = {
			{"--help", NULL, NULL},       {"help", NULL, NULL},
			{"port", "--help", NULL},     {"port", "add", "--help"},
			{"port", "list", "--help"},   {"fdb", "show", "--help"},
			{"stats", "--help", NULL},    {"version", "--help", NULL},
			{"config", "save", "--help"},
		};
		unsigned int i;

		for (i = 0; i < sizeof(helps) / sizeof(helps[0]); i++) {
			cu_hvctl(&r, ctl_srv, ctl_path, NULL, helps[i]);
			ck_assert_msg(r.status == 0, "%s %s: exit %d", helps[i][0],
				      helps[i][1] ? helps[i][1] : "", r.status);
			assert_has(r.out, "usage: hvctl");
			ck_assert_str_eq(r.err, "");
		}
	}

	/* no daemon: one line naming the socket */
	{
		char *argv[] = {(char *)"port", (char *)"list", NULL};
		char saved[sizeof(ctl_path)];

		memcpy(saved, ctl_path, sizeof(ctl_path));
		snprintf(ctl_path, sizeof(ctl_path), "%s/absent.sock", ctl_dir);
		cu_hvctl(&r, ctl_srv, ctl_path, NULL, (const char *const *)argv);
		memcpy(ctl_path, saved, sizeof(ctl_path));
		ck_assert_int_eq(r.status, 1);
		assert_one_error_line(&r);
		assert_has(r.err, "absent.sock");
	}
}
END_TEST

static Suite *
ctl_suite(void)
{
	Suite *s = suite_create("ctl-hvctl");
	TCase *tc = tcase_create("hvctl");

	tcase_add_checked_fixture(tc, ctl_fake_setup, ctl_fake_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, hvctl_port_list);
	tcase_add_test(tc, hvctl_requests);
	tcase_add_test(tc, hvctl_stats);
	tcase_add_test(tc, hvctl_usage);
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
