/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The daemon and hvctl against the one API table (lib/ctl/hv_ctl_api.h):
 * the daemon refuses a bad value sent raw with the message hvctl gives
 * before sending it; an unknown key (the per-port mac_limit and rxq that the
 * docs once named) is answered with the valid keys; the config file's ports
 * are checked as port.add arguments; PMD placement per port works; a port
 * type's own keys go to that type only and come back from the config file as
 * they were given.
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
		      "rxmod, remote)");
	refused_alike("{\"cmd\":\"port.set\",\"args\":{\"name\":\"vm0\",\"rxq\":\"0:pmd=3\"}}\n",
		      (const char *const[]){"port", "set", "vm0", "rxq=0:pmd=3", NULL},
		      "port.set: unknown argument 'rxq' (valid: name, vlan, trunk, pmd, rxmod, "
		      "remote)");
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
	ck_assert_int_eq(hvctl(D.sock,
			       (const char *const[]){"port", "set", "vm0", "pmd=auto", NULL}, err,
			       sizeof(err)),
			 0);
	ck_assert_msg(!config_has("\"pmd\""), "still pinned after pmd=auto");
	ck_assert_int_eq(hvctl(D.sock, (const char *const[]){"port", "set", "vm0", "pmd=1", NULL},
			       err, sizeof(err)),
			 1);
	ck_assert_str_eq(err, "hvctl: port.set: 'pmd' must be 0..0: this switch runs 1 PMD\n");
}
END_TEST

/* Whether the daemon's log contains text. */
static bool
log_has(const char *text)
{
	char log[8192];
	FILE *f = fopen(D.log, "r");
	size_t n;

	ck_assert_ptr_nonnull(f);
	n = fread(log, 1, sizeof(log) - 1, f);
	fclose(f);
	log[n] = '\0';
	return strstr(log, text) != NULL;
}

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
	ck_assert_msg(
		strstr(log,
		       ": ports[0] (vm0): unknown argument 'mac_limit' (valid: name, type, "
		       "socket, mode, queues, vlan, trunk, devargs, pmd, features, "
		       "rxmod, owner, perm, vni, local, uplink, dstport, remote, mirror, push)") !=
			NULL,
		"%s", log);
}
END_TEST

/* The error of a refused call. */
static void
refused(const char *cmd, const char *args, const char *want)
{
	char err[512];

	ck_assert_int_ne(hvsw_call(&D, NULL, err, sizeof(err), cmd, "%s", args), 0);
	ck_assert_str_eq(err, want);
}

/*
 * port.list without what the running switch adds to the configuration
 * (state, and the MACs learned: a net_null port receives frames of
 * whatever its mbufs held, so it learns at its own pace).
 */
static cJSON *
port_config(void)
{
	cJSON *ports = hvsw_ok(&D, "port.list", NULL), *p;

	cJSON_ArrayForEach(p, ports)
	{
		cJSON_DeleteItemFromObjectCaseSensitive(p, "state");
		cJSON_DeleteItemFromObjectCaseSensitive(p, "macs");
	}
	return ports;
}

/*
 * Each type's keys are its own (port.add, port.set), and its configuration
 * survives a save and a restart key for key.
 */
START_TEST(type_keys)
{
	cJSON *before, *after;

	ck_assert_int_eq(hvsw_start(&D, NULL), 0);
	refused("port.add",
		"{\"name\":\"n0\",\"type\":\"ethdev\",\"devargs\":\"net_null0\","
		"\"rxmod\":5}",
		"port.add: 'rxmod' is for vhost-user ports");
	refused("port.add",
		"{\"name\":\"n0\",\"type\":\"ethdev\",\"devargs\":\"net_null0\","
		"\"features\":\"mq\"}",
		"port.add: 'features' is for vhost-user ports");
	refused("port.add", "{\"name\":\"v0\",\"devargs\":\"net_null0\"}",
		"port.add: 'devargs' is for ethdev ports");
	refused("port.add", "{\"name\":\"n0\",\"type\":\"ethdev\"}",
		"port n0: an ethdev port needs devargs");
	refused("port.add", "{\"name\":\"v0\",\"features\":\"mq,bogus\"}",
		"port.add: unknown feature 'bogus' (known: mrg_rxbuf, indirect_desc, event_idx, "
		"mq, csum, guest_csum, host_tso4, host_tso6, guest_tso4, guest_tso6, in_order, "
		"guest_announce, ring_packed)");
	cJSON_Delete(hvsw_ok(&D, "port.add",
			     "{\"name\":\"n0\",\"type\":\"ethdev\","
			     "\"devargs\":\"net_null0\",\"vlan\":7}"));
	cJSON_Delete(hvsw_ok(&D, "port.add",
			     "{\"name\":\"v0\",\"queues\":2,"
			     "\"features\":\"event_idx,mrg_rxbuf\",\"rxmod\":\"adaptive\"}"));
	refused("port.set", "{\"name\":\"n0\",\"rxmod\":5}",
		"port.set: 'rxmod' is for vhost-user ports");
	cJSON_Delete(hvsw_ok(&D, "port.set", "{\"name\":\"v0\",\"rxmod\":\"0,1:30\"}"));
	/* saved as given: the type's keys among the common ones */
	ck_assert(config_has("\"type\":\t\"ethdev\",\n\t\t\t\"devargs\":\t\"net_null0\",\n"
			     "\t\t\t\"queues\":\t1,\n\t\t\t\"vlan\":\t7"));
	ck_assert(config_has("\"mode\":\t\"server\",\n\t\t\t\"features\":\t\"mrg_rxbuf,event_idx\","
			     "\n\t\t\t\"rxmod\":\t\"0,1:30\",\n\t\t\t\"queues\":\t2"));
	before = port_config();
	ck_assert_int_eq(hvsw_stop(&D), 0);
	ck_assert_int_eq(hvsw_start(&D, NULL), 0);
	after = port_config();
	ck_assert_msg(cJSON_Compare(before, after, true), "%s\n%s", cJSON_Print(before),
		      cJSON_Print(after));
	cJSON_Delete(before);
	cJSON_Delete(after);
}
END_TEST

/* --port is the default type's command-line port: its options, its errors. */
START_TEST(cli_port)
{
	char sock[160], arg[200];
	const cJSON *p;
	cJSON *r;

	snprintf(sock, sizeof(sock), "%s.cli.sock", D.config);
	snprintf(arg, sizeof(arg), "%s,queues=2", sock);
	ck_assert_int_eq(hvsw_start(&D, (const char *const[]){"--port", arg, NULL}), 0);
	r = hvsw_ok(&D, "port.list", NULL);
	p = cJSON_GetArrayItem(r, 0);
	ck_assert_ptr_nonnull(p);
	ck_assert_str_eq(swh_str(p, "name"), "port0");
	ck_assert_str_eq(swh_str(p, "type"), "vhost-user");
	ck_assert_str_eq(swh_str(p, "socket"), sock);
	ck_assert_int_eq((int)swh_num(p, "queues"), 2);
	cJSON_Delete(r);
	ck_assert_int_eq(hvsw_stop(&D), 0);
	snprintf(arg, sizeof(arg), "%s,bogus", sock);
	ck_assert_msg(hvsw_start(&D, (const char *const[]){"--port", arg, NULL}) != 0,
		      "hvswitch kept running");
	ck_assert(log_has("hvswitch: unknown --port option 'bogus'"));
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
	tcase_add_test(t, type_keys);
	tcase_add_test(t, cli_port);
	suite_add_tcase(s, t);
	return s;
}

int
main(int argc, char **argv)
{
	return swh_run_suite(make_suite, argc, argv);
}
