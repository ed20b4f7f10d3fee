/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Who may do what on the real daemon's control socket: started with
 * --group users (reads) and --admin-group staff (writes, confined), it is
 * driven by setuid(65534) children in those groups. The daemon runs as root:
 * what the admin group asks must not make it write a file, reach a host
 * interface or bind a socket outside its run dir.
 */
#include <check.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hv_ctl.h"
#include "switch_harness.h"

#define NOBODY 65534

static struct hvsw D;

static void
setup(void)
{
	hvsw_init(&D);
}

static void
teardown(void)
{
	hvsw_cleanup(&D);
}

/* In a child in group gid: send cmd/args; exit 0 when the outcome is want_ok
 * and (on failure) the error contains want_err. */
static int
as_member(gid_t gid, const char *cmd, const char *args, bool want_ok, const char *want_err)
{
	pid_t pid = fork();
	int st;

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		char err[512] = "";
		cJSON *a = args != NULL ? cJSON_Parse(args) : NULL;
		int fd, rc;

		if (setgroups(1, &gid) != 0 || setgid(NOBODY) != 0 || setuid(NOBODY) != 0)
			_exit(10);
		fd = hv_ctl_connect(D.sock, err, sizeof(err));
		if (fd < 0) {
			fprintf(stderr, "connect: %s\n", err);
			_exit(11);
		}
		rc = hv_ctl_call(fd, cmd, a, NULL, err, sizeof(err));
		if ((rc == 0) != want_ok || (!want_ok && strstr(err, want_err) == NULL)) {
			fprintf(stderr, "%s %s as gid %u: rc %d '%s'\n", cmd, args ? args : "",
				(unsigned int)gid, rc, err);
			_exit(12);
		}
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static gid_t
gid_of(const char *name)
{
	struct group *g = getgrnam(name);

	ck_assert_msg(g != NULL, "no group %s on this machine", name);
	return g->gr_gid;
}

START_TEST(priv_groups)
{
	static const char *const opts[] = {"--group", "users", "--admin-group", "staff", NULL};
	gid_t readers = gid_of("users"), admins = gid_of("staff");
	char args[512], pcap[160], outside[160], denied[128];
	struct stat st;
	cJSON *r;

	if (geteuid() != 0) {
		fprintf(stderr, "test_switch_priv: SKIP: needs root to setuid\n");
		return;
	}
	ck_assert_msg(hvsw_start(&D, opts) == 0, "hvswitch did not start");
	ck_assert_int_eq(stat(D.sock, &st), 0);
	ck_assert_uint_eq(st.st_gid, readers);
	ck_assert_uint_eq(st.st_mode & 07777, 0660);
	/* let the children reach the socket: the credential check decides */
	ck_assert_int_eq(chmod(D.dir, 0711), 0);
	ck_assert_int_eq(chmod(D.sock, 0666), 0);
	snprintf(pcap, sizeof(pcap), "%s/owned.pcap", D.dir);
	snprintf(outside, sizeof(outside), "%s.out.sock", D.dir);
	snprintf(denied, sizeof(denied),
		 "permission denied: port.add changes the switch: root or group %u only",
		 (unsigned int)admins);

	/* the read group reads, and changes nothing */
	ck_assert_int_eq(as_member(readers, "port.list", NULL, true, NULL), 0);
	ck_assert_int_eq(as_member(readers, "stats", NULL, true, NULL), 0);
	ck_assert_int_eq(as_member(readers, "port.add", "{\"name\":\"r0\"}", false, denied), 0);
	ck_assert_int_eq(as_member(readers, "config.save", NULL, false, "permission denied"), 0);
	ck_assert_int_eq(as_member(readers, "fdb.flush", NULL, false, "permission denied"), 0);

	/* the admin group: no file written through a pcap port, no host interface */
	snprintf(args, sizeof(args),
		 "{\"name\":\"p0\",\"type\":\"ethdev\",\"devargs\":\"net_pcap0,tx_pcap=%s\"}",
		 pcap);
	ck_assert_int_eq(as_member(admins, "port.add", args, false, "devargs refused"), 0);
	ck_assert_int_eq(access(pcap, F_OK), -1);
	ck_assert_int_eq(as_member(admins, "port.add",
				   "{\"name\":\"p1\",\"type\":\"ethdev\","
				   "\"devargs\":\"net_af_packet0,iface=lo\"}",
				   false, "devargs refused"),
			 0);
	ck_assert_int_eq(as_member(admins, "port.add",
				   "{\"name\":\"p2\",\"type\":\"ethdev\","
				   "\"devargs\":\"net_pcap0,rx_iface=lo\"}",
				   false, "devargs refused"),
			 0);
	/* ... no socket bound outside the run dir */
	snprintf(args, sizeof(args), "{\"name\":\"v0\",\"socket\":\"%s\"}", outside);
	ck_assert_int_eq(as_member(admins, "port.add", args, false, "root's"), 0);
	ck_assert_int_eq(access(outside, F_OK), -1);
	/* ... but ports in the run dir, and changes to them */
	ck_assert_int_eq(as_member(admins, "port.add", "{\"name\":\"v1\"}", true, NULL), 0);
	snprintf(args, sizeof(args), "{\"name\":\"v2\",\"socket\":\"%s/v2.sock\"}", D.dir);
	ck_assert_int_eq(as_member(admins, "port.add", args, true, NULL), 0);
	ck_assert_int_eq(as_member(admins, "port.set", "{\"name\":\"v1\",\"vlan\":7}", true, NULL),
			 0);
	ck_assert_int_eq(as_member(admins, "port.del", "{\"name\":\"v2\"}", true, NULL), 0);

	/* what is saved is what was allowed */
	r = hvsw_ok(&D, "port.list", NULL);
	ck_assert_int_eq(cJSON_GetArraySize(r), 1);
	ck_assert_str_eq(swh_str(cJSON_GetArrayItem(r, 0), "name"), "v1");
	ck_assert_int_eq((int)swh_num(cJSON_GetArrayItem(r, 0), "vlan"), 7);
	cJSON_Delete(r);
	/* root keeps every verb, the pcap file included */
	r = hvsw_ok(&D, "port.add", "{\"name\":\"s0\",\"socket\":\"%s\"}", outside);
	cJSON_Delete(r);
	ck_assert_int_eq(stat(outside, &st), 0);
	ck_assert(S_ISSOCK(st.st_mode));
	cJSON_Delete(hvsw_ok(&D, "port.del", "{\"name\":\"s0\"}"));
	ck_assert_int_eq(hvsw_stop(&D), 0);
}
END_TEST

static Suite *
make_suite(void)
{
	Suite *s = suite_create("switch-priv");
	TCase *t = tcase_create("priv");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 120);
	tcase_add_test(t, priv_groups);
	suite_add_tcase(s, t);
	return s;
}

int
main(int argc, char **argv)
{
	return swh_run_suite(make_suite, argc, argv);
}
