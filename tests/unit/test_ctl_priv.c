/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Who may do what on the control socket: the roles of lib/ctl (root, the
 * admin group, the read group) tried by setuid children, and the daemon's
 * port.add policy for non-root callers (app/hvswitch/ctl_policy.c).
 */
#include <check.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl_policy.h"
#include "ctl_util.h"
#include "hv_ctl.h"

#define READ_GROUP ((gid_t)4242)
#define ADMIN_GROUP ((gid_t)4243)
#define NOBODY ((uid_t)65534)

gid_t sw_ctl_admin_group = HV_CTL_NO_GROUP; /* the daemon's, declared by ctl_policy.h */

/* The caller's role as a number: what a handler sees. */
static int
h_whoami(void *ctx, const cJSON *args, cJSON **result, char *err, size_t errlen)
{
	const struct hv_ctl_peer *p = hv_ctl_current_peer();

	(void)ctx, (void)args, (void)err, (void)errlen;
	*result = cJSON_CreateNumber(p != NULL ? (double)p->role : -1);
	return 0;
}

static const struct hv_ctl_cmd cmds[] = {
	{"look", h_whoami, "a read", HV_CTL_READ},
	{"change", h_whoami, "a write", HV_CTL_WRITE},
	{"rootly", h_whoami, "root only", HV_CTL_ROOT_ONLY},
	{NULL, NULL, NULL, 0},
};

/* In a child: call cmd, compare with the expected role (>= 0) or error prefix. */
static int
call_as(const char *path, const char *cmd, int want_role, const char *want_err)
{
	char err[256] = "";
	cJSON *res = NULL;
	int fd = hv_ctl_connect(path, err, sizeof(err)), rc;

	if (fd < 0)
		return 20;
	hv_ctl_set_timeout(fd, CU_WAIT_MS);
	rc = hv_ctl_call(fd, cmd, NULL, &res, err, sizeof(err));
	close(fd);
	if (want_role >= 0) {
		if (rc != 0 || !cJSON_IsNumber(res) || (int)res->valuedouble != want_role) {
			fprintf(stderr, "%s: rc %d err '%s'\n", cmd, rc, err);
			return 21;
		}
	} else if (rc == 0 || strcmp(err, want_err) != 0) {
		fprintf(stderr, "%s: rc %d err '%s', expected '%s'\n", cmd, rc, err, want_err);
		return 22;
	}
	cJSON_Delete(res);
	return 0;
}

static const char denied_write[] =
	"permission denied: change changes the switch: root or group 4243 only";
static const char denied_root[] = "permission denied: rootly is for root only";

START_TEST(ctl_roles)
{
	static const struct {
		gid_t group;
		const char *cmd;
		int role;
		const char *err;
	} cases[] = {
		{READ_GROUP, "look", HV_CTL_ROLE_READ, NULL},
		{READ_GROUP, "change", -1, denied_write},
		{READ_GROUP, "rootly", -1, denied_root},
		{ADMIN_GROUP, "look", HV_CTL_ROLE_ADMIN, NULL},
		{ADMIN_GROUP, "change", HV_CTL_ROLE_ADMIN, NULL},
		{ADMIN_GROUP, "rootly", -1, denied_root},
		{NOBODY, "look", -1,
		 "permission denied: uid 65534 is neither root nor in group "
		 "4242 or 4243"},
	};
	struct hv_ctl_server *s;
	char dir[64], path[100], err[256];
	struct stat st;

	if (geteuid() != 0) {
		fprintf(stderr, "test_ctl_priv: SKIP ctl_roles: needs root to setuid\n");
		return;
	}
	cu_dir(dir, sizeof(dir), path, sizeof(path), "ctl.sock");
	s = hv_ctl_server_create(path, READ_GROUP, cmds, NULL, err, sizeof(err));
	ck_assert_msg(s != NULL, "%s", err);
	ck_assert_int_eq(hv_ctl_server_set_admin_group(s, ADMIN_GROUP, err, sizeof(err)), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_gid, READ_GROUP); /* the file stays the read group's */
	ck_assert_int_eq(chmod(path, 0666), 0);   /* the credential check decides */
	for (unsigned int i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		pid_t pid = fork();

		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			gid_t g = cases[i].group;

			if (setgroups(1, &g) < 0 || setgid(NOBODY) < 0 || setuid(NOBODY) < 0)
				_exit(10);
			_exit(call_as(path, cases[i].cmd, cases[i].role, cases[i].err));
		}
		ck_assert_msg(cu_wait_child(s, pid) == 0, "case %u (%s) failed", i, cases[i].cmd);
	}
	/* root (and the server's own uid) may do everything */
	for (unsigned int i = 0; i < 3; i++) {
		pid_t pid = fork();

		ck_assert_int_ge(pid, 0);
		if (pid == 0)
			_exit(call_as(path, cmds[i].name, HV_CTL_ROLE_ROOT, NULL));
		ck_assert_int_eq(cu_wait_child(s, pid), 0);
	}
	/* a refused command leaves the connection usable */
	{
		pid_t pid = fork();

		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			gid_t g = READ_GROUP;
			char e[256];
			int fd;

			if (setgroups(1, &g) < 0 || setgid(NOBODY) < 0 || setuid(NOBODY) < 0)
				_exit(10);
			fd = hv_ctl_connect(path, e, sizeof(e));
			hv_ctl_set_timeout(fd, CU_WAIT_MS);
			if (hv_ctl_call(fd, "change", NULL, NULL, e, sizeof(e)) == 0 ||
			    hv_ctl_call(fd, "look", NULL, NULL, e, sizeof(e)) != 0)
				_exit(11);
			_exit(0);
		}
		ck_assert_int_eq(cu_wait_child(s, pid), 0);
	}
	hv_ctl_server_destroy(s);
	rmdir(dir);
}
END_TEST

/* Only an admin group: the socket file is that group's. */
START_TEST(ctl_admin_group_only)
{
	struct hv_ctl_server *s;
	char dir[64], path[100], err[256];
	struct stat st;

	if (geteuid() != 0)
		return;
	cu_dir(dir, sizeof(dir), path, sizeof(path), "ctl.sock");
	s = hv_ctl_server_create(path, HV_CTL_NO_GROUP, cmds, NULL, err, sizeof(err));
	ck_assert_msg(s != NULL, "%s", err);
	ck_assert_int_eq(hv_ctl_server_set_admin_group(s, ADMIN_GROUP, err, sizeof(err)), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_gid, ADMIN_GROUP);
	ck_assert_uint_eq(st.st_mode & 07777, 0660);
	hv_ctl_server_destroy(s);
	rmdir(dir);
}
END_TEST

/* port.add's arguments (JSON) allowed for role? */
static bool
port_add_ok(enum hv_ctl_role role, const char *json, char *err, size_t errlen)
{
	cJSON *a = cJSON_Parse(json);
	bool ok;

	ck_assert_msg(a != NULL, "bad test JSON %s", json);
	err[0] = '\0';
	ok = sw_ctl_port_add_allowed(a, role, "/run/hvswitch", err, errlen);
	cJSON_Delete(a);
	return ok;
}

START_TEST(ctl_port_add_policy)
{
	static const char *const refused[] = {
		/* files and interfaces through devargs */
		"{\"name\":\"p\",\"type\":\"ethdev\",\"devargs\":\"net_pcap0,tx_pcap=/etc/"
		"shadow\"}",
		"{\"name\":\"p\",\"type\":\"ethdev\",\"devargs\":\"net_pcap0,rx_iface=eth0\"}",
		"{\"name\":\"p\",\"type\":\"ethdev\",\"devargs\":\"net_af_packet0,iface=eth0\"}",
		"{\"name\":\"p\",\"type\":\"ethdev\",\"devargs\":\"net_tap0,iface=eth0\"}",
		"{\"name\":\"p\",\"type\":\"ethdev\",\"devargs\":\"net_tap0,remote=eth0\"}",
		"{\"name\":\"p\",\"type\":\"ethdev\",\"devargs\":\"net_vhost0,iface=/tmp/x.sock\"}",
		"{\"name\":\"p\",\"type\":\"ethdev\",\"devargs\":\"net_virtio_user0,path=/dev/"
		"vhost-net\"}",
		"{\"name\":\"p\",\"type\":\"ethdev\",\"devargs\":\"0000:00:01.0\"}",
		/* disguises of an allowed driver */
		"{\"name\":\"p\",\"type\":\"ethdev\",\"devargs\":\"vdev:net_pcap0,tx_pcap=/x\"}",
		"{\"name\":\"p\",\"type\":\"ethdev\",\"devargs\":\"net_null_pcap0\"}",
		"{\"name\":\"p\",\"type\":\"ethdev\",\"devargs\":\"net_tapx,iface=eth0\"}",
		"{\"name\":\"p\",\"type\":\"ethdev\",\"devargs\":\"net_null0,size=[1,2]\"}",
		"{\"name\":\"p\",\"type\":\"ethdev\",\"devargs\":\"net_null0,size=/x\"}",
		"{\"name\":\"p\",\"type\":\"ethdev\",\"devargs\":\"net_null0,size\"}",
		"{\"name\":\"p\",\"type\":\"ethdev\",\"devargs\":\"net_null0,,size=1\"}",
		"{\"name\":\"p\",\"type\":\"ethdev\",\"devargs\":\"net_null0,size=\"}",
		"{\"name\":\"p\",\"type\":\"ethdev\",\"devargs\":\"net_ring0,nodeaction=r:0:"
		"ATTACH\"}",
		/* vhost-user sockets outside the run dir */
		"{\"name\":\"p\",\"socket\":\"/tmp/p.sock\"}",
		"{\"name\":\"p\",\"type\":\"vhost-user\",\"mode\":\"client\","
		"\"socket\":\"/var/run/docker.sock\"}",
		"{\"name\":\"p\",\"socket\":\"/run/hvswitch/../p.sock\"}",
		"{\"name\":\"p\",\"socket\":\"/run/hvswitch/guests/p.sock\"}",
		"{\"name\":\"p\",\"socket\":\"/run/hvswitch/hvswitch.sock\"}",
		"{\"name\":\"p\",\"socket\":\"/run/hvswitch/.p.sock\"}",
		"{\"name\":\"p\",\"socket\":\"/run/hvswitch/p\"}",
		"{\"name\":\"p\",\"socket\":\"/run/hvswitchx/p.sock\"}",
		/* who may connect to a socket in the run dir */
		"{\"name\":\"p\",\"owner\":\"nobody\"}",
		"{\"name\":\"p\",\"type\":\"vhost-user\",\"perm\":\"0666\"}",
		"{\"name\":\"p\",\"socket\":\"/run/hvswitch/p.sock\",\"owner\":\":kvm\"}",
	};
	static const char *const allowed[] = {
		"{\"name\":\"p\"}",
		"{\"name\":\"p\",\"socket\":\"/run/hvswitch/p.sock\"}",
		"{\"name\":\"p\",\"mode\":\"client\",\"socket\":\"/run/hvswitch/vm-1.sock\"}",
		"{\"name\":\"p\",\"type\":\"ethdev\",\"devargs\":\"net_null0\"}",
		"{\"name\":\"p\",\"type\":\"ethdev\",\"devargs\":\"net_null12,size=64,copy=1\"}",
		"{\"name\":\"p\",\"type\":\"ethdev\",\"devargs\":\"net_ring0\"}",
		"{\"name\":\"p\",\"type\":\"ethdev\",\"devargs\":\"net_tap3,mac=02:00:00:00:00:01\"}",
		/* malformed: left to port.add's own checks */
		"{\"name\":\"p\",\"type\":7}",
		"{\"name\":\"p\",\"type\":\"bogus\",\"devargs\":\"net_pcap0,tx_pcap=/x\"}",
	};
	char err[512];

	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		ck_assert_msg(!port_add_ok(HV_CTL_ROLE_ADMIN, refused[i], err, sizeof(err)),
			      "allowed for the admin group: %s", refused[i]);
		ck_assert_msg(strncmp(err, "port.add: ", 10) == 0 && strchr(err, '\n') == NULL,
			      "error '%s'", err);
		ck_assert(!port_add_ok(HV_CTL_ROLE_READ, refused[i], err, sizeof(err)));
		ck_assert_msg(port_add_ok(HV_CTL_ROLE_ROOT, refused[i], err, sizeof(err)),
			      "refused for root: %s", refused[i]);
	}
	for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
		ck_assert_msg(port_add_ok(HV_CTL_ROLE_ADMIN, allowed[i], err, sizeof(err)),
			      "refused for the admin group: %s (%s)", allowed[i], err);
	port_add_ok(HV_CTL_ROLE_ADMIN, refused[0], err, sizeof(err));
	ck_assert_str_eq(err, "port.add: devargs refused: the admin group may use "
			      "net_nullN[,size=,copy=,no-rx=], net_ringN, net_tapN[,mac=]; other "
			      "drivers and keys reach host files or interfaces: root only");
	ck_assert(sw_ctl_port_add_allowed(NULL, HV_CTL_ROLE_ADMIN, "/run/hvswitch", err,
					  sizeof(err)));
	/* a run dir given with a trailing slash */
	{
		cJSON *a = cJSON_Parse("{\"name\":\"p\",\"socket\":\"/run/hv/p.sock\"}");

		ck_assert(sw_ctl_port_add_allowed(a, HV_CTL_ROLE_ADMIN, "/run/hv/", err,
						  sizeof(err)));
		cJSON_Delete(a);
	}
}
END_TEST

static Suite *
priv_suite(void)
{
	Suite *s = suite_create("ctl-priv");
	TCase *tc = tcase_create("priv");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, ctl_roles);
	tcase_add_test(tc, ctl_admin_group_only);
	tcase_add_test(tc, ctl_port_add_policy);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(priv_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
