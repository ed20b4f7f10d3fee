/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The daemon and hvctl against the one API table (lib/ctl/hv_ctl_api.h):
 * the daemon refuses a bad value sent raw with the message hvctl gives
 * before sending it; an unknown key (the per-port mac_limit and rxq that the
 * docs once named) is answered with the valid keys; the config file's ports
 * are checked as port.add arguments; PMD placement per port works.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "switch_harness.h"

static struct hvsw D;

static void
setup(void)
{
	swh_reset();
	hvsw_init(&D);
}

static void
teardown(void)
{
	hvsw_cleanup(&D);
}

/* hvctl --socket sock ARGS...: its exit status and stderr. */
static int
hvctl(const char *sock, const char *const *args, char *err, size_t errlen)
{
	const char *exe = getenv("HVCTL");
	char *argv[32];
	unsigned int n = 0;
	int efd, status;
	ssize_t len;
	pid_t pid;

	ck_assert_ptr_nonnull(exe);
	argv[n++] = (char *)"hvctl";
	argv[n++] = (char *)"--socket";
	argv[n++] = (char *)sock;
	for (; *args != NULL && n < 31; args++)
		argv[n++] = (char *)*args;
	argv[n] = NULL;
	efd = memfd_create("err", 0);
	ck_assert_int_ge(efd, 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(efd, 2);
		execv(exe, argv);
		_exit(127);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid); /* hvctl's own timeouts bound it */
	len = pread(efd, err, errlen - 1, 0);
	err[len > 0 ? len : 0] = '\0';
	close(efd);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The daemon's refusal of raw (a request line) and hvctl's of cli, both want. */
static void
refused_alike(const char *raw, const char *const *cli, const char *want)
{
	char line[1024], err[1024], exp[1100];
	cJSON *j;

	ck_assert_int_eq(hvsw_raw(&D, raw, strlen(raw), line, sizeof(line)), 0);
	j = cJSON_Parse(line);
	ck_assert_ptr_nonnull(j);
	ck_assert_str_eq(swh_str(j, "error"), want);
	cJSON_Delete(j);
	/* hvctl refuses it on its own: the daemon need not be there */
	ck_assert_int_eq(hvctl("/nonexistent/hvswitch.sock", cli, err, sizeof(err)), 1);
	snprintf(exp, sizeof(exp), "hvctl: %s\n", want);
	ck_assert_str_eq(err, exp);
}

START_TEST(same_refusals)
{
	cJSON *r;

	ck_assert_int_eq(hvsw_start(&D, NULL), 0);
	hvsw_add_port(&D, "vm0", "");
	refused_alike("{\"cmd\":\"port.add\",\"args\":{\"name\":\"x\",\"queues\":9}}\n",
		      (const char *const[]){"port", "add", "x", "--queues", "9", NULL},
		      "port.add: 'queues' must be an integer 1..8");
	refused_alike("{\"cmd\":\"port.add\",\"args\":{\"name\":\"x\",\"vlan\":4095}}\n",
		      (const char *const[]){"port", "add", "x", "--vlan", "4095", NULL},
		      "port.add: 'vlan' must be an integer 0..4094 or none");
	refused_alike("{\"cmd\":\"port.set\",\"args\":{\"name\":\"vm0\",\"mac_limit\":5}}\n",
		      (const char *const[]){"port", "set", "vm0", "mac_limit=5", NULL},
		      "port.set: unknown argument 'mac_limit' (valid: name, vlan, trunk, pmd, "
		      "rxmod)");
	refused_alike("{\"cmd\":\"port.set\",\"args\":{\"name\":\"vm0\",\"rxq\":\"0:pmd=3\"}}\n",
		      (const char *const[]){"port", "set", "vm0", "rxq=0:pmd=3", NULL},
		      "port.set: unknown argument 'rxq' (valid: name, vlan, trunk, pmd, rxmod)");
	/* nothing changed */
	r = hvsw_ok(&D, "port.list", NULL);
	ck_assert_int_eq(cJSON_GetArraySize(r), 1);
	cJSON_Delete(r);
}
END_TEST

/* Whether the saved config file contains text. */
static bool
config_has(const char *text)
{
	char buf[16384];
	FILE *f = fopen(D.config, "r");
	size_t n;

	ck_assert_ptr_nonnull(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return strstr(buf, text) != NULL;
}

/* A port pinned to a PMD polls all its queues there; auto unpins it (saved both ways). */
START_TEST(pmd_placement)
{
	const cJSON *q;
	cJSON *r;
	char err[512];

	ck_assert_int_eq(hvsw_start(&D, NULL), 0);
	hvsw_add_port(&D, "vm0", ",\"queues\":2,\"pmd\":0");
	r = hvsw_ok(&D, "port.show", "{\"name\":\"vm0\"}");
	ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(r, "qps")), 2);
	cJSON_ArrayForEach(q, cJSON_GetObjectItem(r, "qps"))
		ck_assert_int_eq((int)swh_num(q, "pmd"), 0);
	cJSON_Delete(r);
	ck_assert(config_has("\"pmd\":\t0"));
	ck_assert_int_eq(hvctl(D.sock, (const char *const[]){"port", "set", "vm0", "pmd=auto",
							    NULL}, err, sizeof(err)), 0);
	ck_assert_msg(!config_has("\"pmd\""), "still pinned after pmd=auto");
	ck_assert_int_eq(hvctl(D.sock, (const char *const[]){"port", "set", "vm0", "pmd=1", NULL},
			       err, sizeof(err)), 1);
	ck_assert_str_eq(err, "hvctl: port.set: 'pmd' must be 0..0: this switch runs 1 PMD\n");
}
END_TEST

/* The config file's port objects are port.add arguments: the same check, the same list. */
START_TEST(config_port_keys)
{
	static const char bad[] = "{\"ports\":[{\"name\":\"vm0\",\"mac_limit\":5}]}\n";
	char log[8192];
	FILE *f;
	size_t n;

	f = fopen(D.config, "w");
	ck_assert_ptr_nonnull(f);
	fwrite(bad, 1, sizeof(bad) - 1, f);
	fclose(f);
	ck_assert_msg(hvsw_start(&D, (const char *const[]){"--check-config", NULL}) != 0,
		      "hvswitch kept running");
	f = fopen(D.log, "r");
	ck_assert_ptr_nonnull(f);
	n = fread(log, 1, sizeof(log) - 1, f);
	fclose(f);
	log[n] = '\0';
	ck_assert_msg(strstr(log, "config port: unknown argument 'mac_limit' (valid: name, type, "
				  "socket, mode, queues, vlan, trunk, devargs, pmd, features, "
				  "rxmod)") != NULL, "%s", log);
}
END_TEST

static Suite *
make_suite(void)
{
	Suite *s = suite_create("switch-api");
	TCase *t = tcase_create("api");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 60);
	tcase_add_test(t, same_refusals);
	tcase_add_test(t, pmd_placement);
	tcase_add_test(t, config_port_keys);
	suite_add_tcase(s, t);
	return s;
}

int
main(int argc, char **argv)
{
	return swh_run_suite(make_suite, argc, argv);
}
