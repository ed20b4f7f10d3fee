/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control API table (lib/ctl/hv_ctl_api.h): a server that uses it
 * refuses bad arguments before the handler runs, hvctl refuses them with the
 * same message before sending, unknown keys are answered with the valid
 * ones, hvctl's help comes from the table, and doc/hvctl.rst's command
 * reference is the table's.
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
#include "hv_ctl_api.h"

static char dir[64], path[128];
static struct hv_ctl_server *srv;
static int calls; /* handler runs */

static int
h_count(void *ctx, const cJSON *args, cJSON **result, char *err, size_t errlen)
{
	(void)ctx, (void)args, (void)err, (void)errlen;
	calls++;
	*result = cJSON_CreateString("ran");
	return 0;
}

static struct hv_ctl_cmd cmds[HV_CTL_C__MAX + 1];
static hv_ctl_handler_t all_count[HV_CTL_C__MAX]; /* h_count for every command */

static void
setup(void)
{
	char err[256];

	for (unsigned int i = 0; i < HV_CTL_C__MAX; i++)
		all_count[i] = h_count;
	/* the switch's commands, as hvswitch registers them */
	hv_ctl_api_server_cmds(HV_CTL_SVC_SWITCH, all_count, cmds);
	cu_dir(dir, sizeof(dir), path, sizeof(path), "api.sock");
	srv = hv_ctl_server_create(path, HV_CTL_NO_GROUP, cmds, NULL, err, sizeof(err));
	ck_assert_msg(srv != NULL, "%s", err);
	hv_ctl_server_use_api(srv);
	calls = 0;
}

static void
teardown(void)
{
	hv_ctl_server_destroy(srv);
	rmdir(dir);
}

/* One raw request line to server sv at sock; its error (or "" when ok), malloc'ed. */
static char *
raw_error_at(struct hv_ctl_server *sv, const char *sock, const char *line)
{
	int fd = cu_connect(sock);
	char *rep, *out;
	cJSON *j, *e;

	cu_send(fd, line, strlen(line));
	rep = cu_line(fd, CU_WAIT_MS, sv);
	close(fd);
	ck_assert_ptr_nonnull(rep);
	j = cJSON_Parse(rep);
	ck_assert_ptr_nonnull(j);
	e = cJSON_GetObjectItem(j, "error");
	out = strdup(cJSON_IsString(e) ? e->valuestring : "");
	cJSON_Delete(j);
	free(rep);
	return out;
}

static char *
raw_error(const char *line)
{
	return raw_error_at(srv, path, line);
}

struct run {
	int status;
	char out[16384];
	char err[4096];
};

static void
slurp(int fd, char *buf, size_t len)
{
	ssize_t n = pread(fd, buf, len - 1, 0);

	buf[n > 0 ? n : 0] = '\0';
	close(fd);
}

/* Run hvctl --socket sock ARGS... while the server polls. */
static bool
hvctl_at(struct run *r, const char *sock, const char *const *args)
{
	const char *exe = getenv("HVCTL");
	char *argv[32];
	unsigned int n = 0;
	int ofd, efd;
	pid_t pid;

	if (exe == NULL) {
		fprintf(stderr, "test_ctl_api: SKIP hvctl checks: $HVCTL not set\n");
		return false;
	}
	argv[n++] = (char *)"hvctl";
	argv[n++] = (char *)"--socket";
	argv[n++] = (char *)sock;
	for (; *args != NULL && n < 31; args++)
		argv[n++] = (char *)*args;
	argv[n] = NULL;
	ofd = memfd_create("out", 0);
	efd = memfd_create("err", 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(ofd, 1);
		dup2(efd, 2);
		execv(exe, argv);
		_exit(127);
	}
	r->status = cu_wait_child(srv, pid);
	slurp(ofd, r->out, sizeof(r->out));
	slurp(efd, r->err, sizeof(r->err));
	return true;
}

static bool
hvctl(struct run *r, const char *const *args)
{
	return hvctl_at(r, path, args);
}

#define HVCTL(r, ...) hvctl((r), (const char *const[]){__VA_ARGS__, NULL})

START_TEST(unknown_key_lists_valid)
{
	char *e =
		raw_error("{\"cmd\":\"port.set\",\"args\":{\"name\":\"a\",\"rxq\":\"0:pmd=3\"}}\n");
	struct hv_ctl_vals v;
	char err[512];
	cJSON *a;

	ck_assert_str_eq(e, "port.set: unknown argument 'rxq' (valid: name, vlan, trunk, pmd, "
			    "rxmod, remote)");
	free(e);
	e = raw_error("{\"cmd\":\"port.set\",\"args\":{\"name\":\"a\",\"mac_limit\":5}}\n");
	ck_assert_str_eq(e, "port.set: unknown argument 'mac_limit' (valid: name, vlan, trunk, "
			    "pmd, rxmod, remote)");
	free(e);
	e = raw_error("{\"cmd\":\"port.list\",\"args\":{\"all\":true}}\n");
	ck_assert_str_eq(e, "port.list: unknown argument 'all' (valid: none)");
	free(e);
	ck_assert_int_eq(calls, 0);

	/* the config file's port objects: the same table, the file's prefix */
	a = cJSON_Parse("{\"name\":\"a\",\"colour\":\"red\"}");
	ck_assert_int_eq(hv_ctl_api_parse(hv_ctl_api_cmd(HV_CTL_C_PORT_ADD), "config port", a, &v,
					  err, sizeof(err)),
			 -1);
	ck_assert_str_eq(
		err, "config port: unknown argument 'colour' (valid: name, type, socket, "
		     "mode, queues, vlan, trunk, devargs, pmd, features, rxmod, owner, perm, vni, "
		     "local, uplink, dstport, remote, mirror, push)");
	cJSON_Delete(a);

	{
		struct run r;

		if (!HVCTL(&r, "port", "set", "a", "rxq=0:pmd=3"))
			return;
		ck_assert_int_eq(r.status, 1);
		ck_assert_str_eq(r.err, "hvctl: port.set: unknown argument 'rxq' (valid: name, "
					"vlan, trunk, pmd, rxmod, remote)\n");
		ck_assert_int_eq(calls, 0);
	}
}
END_TEST

/* A value out of range: refused by the server (sent raw) and by hvctl (not sent), alike. */
static void
same_refusal(const char *raw, const char *const *cli, const char *want)
{
	char *e = raw_error(raw);
	struct run r;
	char line[512];

	ck_assert_str_eq(e, want);
	free(e);
	ck_assert_int_eq(calls, 0);
	/* no daemon at that socket: the refusal can only be hvctl's own */
	if (!hvctl_at(&r, "/nonexistent/hvswitch.sock", cli))
		return;
	snprintf(line, sizeof(line), "hvctl: %s\n", want);
	ck_assert_int_eq(r.status, 1);
	ck_assert_str_eq(r.err, line);
}

START_TEST(range_same_message)
{
	same_refusal("{\"cmd\":\"port.add\",\"args\":{\"name\":\"x\",\"queues\":9}}\n",
		     (const char *const[]){"port", "add", "x", "--queues", "9", NULL},
		     "port.add: 'queues' must be an integer 1..8");
	same_refusal("{\"cmd\":\"port.add\",\"args\":{\"name\":\"x\",\"queues\":0}}\n",
		     (const char *const[]){"port", "add", "x", "--queues", "0", NULL},
		     "port.add: 'queues' must be an integer 1..8");
	same_refusal("{\"cmd\":\"port.add\",\"args\":{\"name\":\"x\",\"vlan\":4095}}\n",
		     (const char *const[]){"port", "add", "x", "--vlan", "4095", NULL},
		     "port.add: 'vlan' must be an integer 0..4094 or none");
	same_refusal("{\"cmd\":\"port.set\",\"args\":{\"name\":\"x\",\"vlan\":65536}}\n",
		     (const char *const[]){"port", "set", "x", "vlan=65536", NULL},
		     "port.set: 'vlan' must be an integer 0..4094 or none");
	same_refusal("{\"cmd\":\"port.set\",\"args\":{\"name\":\"x\",\"pmd\":32}}\n",
		     (const char *const[]){"port", "set", "x", "pmd=32", NULL},
		     "port.set: 'pmd' must be an integer 0..31 or auto");
	same_refusal("{\"cmd\":\"port.add\",\"args\":{\"name\":\"x\",\"type\":\"tap\"}}\n",
		     (const char *const[]){"port", "add", "x", "--type", "tap", NULL},
		     "port.add: 'type' must be vhost-user, ethdev or vxlan");
	same_refusal("{\"cmd\":\"port.add\",\"args\":{\"name\":\"x\",\"rxmod\":10001}}\n",
		     (const char *const[]){"port", "add", "x", "--rxmod", "10001", NULL},
		     "port.add: 'rxmod' must be an integer 0..10000 or a string of 1..63 "
		     "characters");
	same_refusal("{\"cmd\":\"fdb.show\",\"args\":{\"port\":"
		     "\"a-name-that-is-longer-than-31-bytes\"}}\n",
		     (const char *const[]){"fdb", "show", "--port",
					   "a-name-that-is-longer-than-31-bytes", NULL},
		     "fdb.show: 'port' must be a string of 1..31 characters");
}
END_TEST

START_TEST(valid_request_passes)
{
	struct run r;
	char *e = raw_error("{\"cmd\":\"port.add\",\"args\":{\"name\":\"x\",\"queues\":8,"
			    "\"vlan\":4094,\"pmd\":\"auto\",\"trunk\":false}}\n");

	ck_assert_str_eq(e, "");
	free(e);
	ck_assert_int_eq(calls, 1);
	if (!HVCTL(&r, "port", "set", "x", "vlan=0", "pmd=auto", "trunk=true", "rxmod=adaptive"))
		return;
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_int_eq(calls, 2);
}
END_TEST

/* The built-in help lists each command's arguments from the table. */
START_TEST(builtin_help_args)
{
	int fd = cu_connect(path);
	const cJSON *c, *a;
	char *rep;
	cJSON *j;
	bool seen = false;

	cu_send(fd, "{\"cmd\":\"help\"}\n", 15);
	rep = cu_line(fd, CU_WAIT_MS, srv);
	close(fd);
	j = cJSON_Parse(rep);
	ck_assert_ptr_nonnull(j);
	cJSON_ArrayForEach(c, cJSON_GetObjectItem(j, "result"))
	{
		if (strcmp(cJSON_GetObjectItem(c, "name")->valuestring, "port.add") != 0)
			continue;
		cJSON_ArrayForEach(
			a,
			cJSON_GetObjectItem(
				c, "args")) if (strcmp(cJSON_GetObjectItem(a, "key")->valuestring,
						       "queues") == 0)
		{
			ck_assert_str_eq(cJSON_GetObjectItem(a, "accepts")->valuestring,
					 "an integer 1..8");
			seen = true;
		}
	}
	ck_assert_msg(seen, "%s", rep);
	cJSON_Delete(j);
	free(rep);
}
END_TEST

START_TEST(help_from_table)
{
	const struct hv_ctl_cmd_def *d = hv_ctl_api_cmd(HV_CTL_C_PORT_ADD);
	struct run r;
	char want[256];

	if (!HVCTL(&r, "port", "add", "--help"))
		return;
	ck_assert_int_eq(r.status, 0);
	ck_assert_msg(strstr(r.out, d->help) != NULL, "%s", r.out);
	for (unsigned int i = 0; i < d->n_params; i++) {
		const struct hv_ctl_key_def *k = hv_ctl_api_key(d->params[i].key);

		if (d->params[i].positional)
			snprintf(want, sizeof(want), "  %-10s  %s\n", k->metavar, k->help);
		else
			snprintf(want, sizeof(want), "  --%-8s  %s\n", k->key, k->help);
		ck_assert_msg(strstr(r.out, want) != NULL, "'%s' not in:\n%s", want, r.out);
	}
	ck_assert_ptr_null(strstr(r.out, "mac_limit"));
	ck_assert_int_eq(calls, 0);
}
END_TEST

/* What hvctl offers bash (complete -C hvctl hvctl) for a line, as one string. */
static bool
complete(struct run *r, const char *line)
{
	char point[24];
	bool ran;

	snprintf(point, sizeof(point), "%zu", strlen(line));
	setenv("COMP_LINE", line, 1);
	setenv("COMP_POINT", point, 1);
	ran = HVCTL(r, "ignored");
	unsetenv("COMP_LINE");
	unsetenv("COMP_POINT");
	if (ran)
		ck_assert_int_eq(r->status, 0);
	return ran;
}

START_TEST(completion_from_table)
{
	const struct hv_ctl_cmd_def *d = hv_ctl_api_cmd(HV_CTL_C_PORT_SET);
	char want[512] = "";
	struct run r;

	if (!complete(&r, "hvctl port add vm0 --type "))
		return;
	ck_assert_str_eq(r.out, "vhost-user\nethdev\nvxlan\n");
	complete(&r, "hvctl port ");
	ck_assert_str_eq(r.out, "add\ndel\nlist\nshow\nset\n");
	complete(&r, "hvctl --json port set vm0 pmd=a");
	ck_assert_str_eq(r.out, "pmd=auto\n");
	complete(&r, "hvctl port set vm0 ");
	for (unsigned int i = 0; i < d->n_params; i++)
		if (!d->params[i].positional)
			snprintf(want + strlen(want), sizeof(want) - strlen(want), "%s=\n",
				 hv_ctl_api_key(d->params[i].key)->key);
	strcat(want, "--help\n");
	ck_assert_str_eq(r.out, want);
	complete(&r, "hvctl port add vm0 --q");
	ck_assert_str_eq(r.out, "--queues\n");
	ck_assert_int_eq(calls, 0);
}
END_TEST

static const char *guest_input_seen; /* h_console's input as validated */

static int
h_console(void *ctx, const cJSON *args, cJSON **result, char *err, size_t errlen)
{
	const char *in = hv_ctl_current_vals()->v[HV_CTL_K_INPUT].s;

	(void)ctx, (void)args, (void)err, (void)errlen;
	calls++;
	guest_input_seen = in != NULL ? strdup(in) : NULL; /* NULL: not validated */
	*result = NULL;
	return 0;
}

/* The VMM's commands are the table's, served by a guest's server only, which
 * validates them from the table; the switch does not know them. */
START_TEST(guest_commands_scoped)
{
	static const struct {
		enum hv_ctl_cmd_id id;
		const char *name;
	} guest[] = {{HV_CTL_C_GUEST_SHOW, "guest.show"},
		     {HV_CTL_C_GUEST_STATS, "guest.stats"},
		     {HV_CTL_C_GUEST_CONSOLE, "guest.console"},
		     {HV_CTL_C_GUEST_STOP, "guest.stop"},
		     {HV_CTL_C_GUEST_QUEUES, "guest.queues"}};
	static struct hv_ctl_cmd gcmds[HV_CTL_C__MAX + 1];
	hv_ctl_handler_t gh[HV_CTL_C__MAX];
	char gpath[192], err[256], big[4200], line[4400], *e;
	struct hv_ctl_server *g;

	for (unsigned int i = 0; i < sizeof(guest) / sizeof(guest[0]); i++) {
		const struct hv_ctl_cmd_def *d = hv_ctl_api_cmd(guest[i].id);

		ck_assert_str_eq(d->name, guest[i].name);
		ck_assert_int_eq(d->service, HV_CTL_SVC_GUEST);
		ck_assert_ptr_eq(hv_ctl_api_find_in(HV_CTL_SVC_GUEST, guest[i].name), d);
		ck_assert_ptr_null(hv_ctl_api_find_in(HV_CTL_SVC_SWITCH, guest[i].name));
	}
	ck_assert_int_eq(hv_ctl_api_cmd(HV_CTL_C_PORT_ADD)->service, HV_CTL_SVC_SWITCH);
	ck_assert_str_eq(HV_CTL_KEY(INPUT), "input");

	/* the switch: guest.* is unknown, its help does not list it */
	e = raw_error("{\"cmd\":\"guest.show\"}\n");
	ck_assert_str_eq(e, "unknown command 'guest.show' (try 'help')");
	free(e);
	for (const struct hv_ctl_cmd *c = cmds; c->name != NULL; c++)
		ck_assert_msg(strncmp(c->name, "guest.", 6) != 0, "switch serves %s", c->name);
	ck_assert_int_eq(calls, 0);

	/* a guest's VMM: its five commands, validated from the table */
	memcpy(gh, all_count, sizeof(gh));
	gh[HV_CTL_C_GUEST_CONSOLE] = h_console;
	ck_assert_uint_eq(hv_ctl_api_server_cmds(HV_CTL_SVC_GUEST, gh, gcmds), 5);
	snprintf(gpath, sizeof(gpath), "%s/guest.sock", dir);
	g = hv_ctl_server_create(gpath, HV_CTL_NO_GROUP, gcmds, NULL, err, sizeof(err));
	ck_assert_msg(g != NULL, "%s", err);
	hv_ctl_server_use_api_for(g, HV_CTL_SVC_GUEST);
	e = raw_error_at(g, gpath, "{\"cmd\":\"guest.console\"}\n");
	ck_assert_str_eq(e, "guest.console: missing 'input'");
	free(e);
	e = raw_error_at(g, gpath, "{\"cmd\":\"guest.console\",\"args\":{\"input\":5}}\n");
	ck_assert_str_eq(e, "guest.console: 'input' must be a string of 1..4096 characters");
	free(e);
	memset(big, 'a', 4097);
	big[4097] = '\0';
	snprintf(line, sizeof(line), "{\"cmd\":\"guest.console\",\"args\":{\"input\":\"%s\"}}\n",
		 big);
	e = raw_error_at(g, gpath, line);
	ck_assert_str_eq(e, "guest.console: 'input' must be a string of 1..4096 characters");
	free(e);
	e = raw_error_at(g, gpath, "{\"cmd\":\"guest.stop\",\"args\":{\"input\":\"x\"}}\n");
	ck_assert_str_eq(e, "guest.stop: unknown argument 'input' (valid: force)");
	free(e);
	e = raw_error_at(g, gpath, "{\"cmd\":\"port.list\"}\n");
	ck_assert_str_eq(e, "unknown command 'port.list' (try 'help')");
	free(e);
	ck_assert_int_eq(calls, 0);
	e = raw_error_at(g, gpath, "{\"cmd\":\"guest.console\",\"args\":{\"input\":\"ls\\n\"}}\n");
	ck_assert_str_eq(e, "");
	free(e);
	ck_assert_int_eq(calls, 1);
	ck_assert_str_eq(guest_input_seen, "ls\n");
	free((char *)guest_input_seen);
	e = raw_error_at(g, gpath, "{\"cmd\":\"guest.show\"}\n");
	ck_assert_str_eq(e, "");
	free(e);
	ck_assert_int_eq(calls, 2);
	hv_ctl_server_destroy(g);
}
END_TEST

/* doc/hvctl.rst's reference is exactly what the table prints. */
START_TEST(doc_matches_table)
{
	const char *doc = getenv("HV_CTL_DOC");
	char *text = NULL, *gen = NULL, *begin, *end;
	size_t tlen = 0, glen = 0;
	FILE *f, *g;

	if (doc == NULL) {
		fprintf(stderr, "test_ctl_api: SKIP doc check: $HV_CTL_DOC not set\n");
		return;
	}
	f = fopen(doc, "r");
	ck_assert_ptr_nonnull(f);
	g = open_memstream(&text, &tlen);
	for (int c; (c = fgetc(f)) != EOF;)
		fputc(c, g);
	fclose(f);
	fclose(g);
	g = open_memstream(&gen, &glen);
	hv_ctl_api_doc(g);
	fclose(g);
	begin = strstr(text, ".. hvctl-api-begin\n");
	end = strstr(text, ".. hvctl-api-end\n");
	ck_assert_msg(begin != NULL && end != NULL && end > begin, "no hvctl-api block in %s", doc);
	begin += strlen(".. hvctl-api-begin\n\n");
	*end = '\0';
	ck_assert_msg(strcmp(begin, gen) == 0,
		      "doc/hvctl.rst's command reference differs from the table; it should read:"
		      "\n%s",
		      gen);
	ck_assert_ptr_null(strstr(text, "mac_limit=1024"));
	ck_assert_ptr_null(strstr(text, "rxq=0:pmd"));
	free(text);
	free(gen);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("ctl-api");
	TCase *t = tcase_create("api");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 60);
	tcase_add_test(t, unknown_key_lists_valid);
	tcase_add_test(t, range_same_message);
	tcase_add_test(t, valid_request_passes);
	tcase_add_test(t, builtin_help_args);
	tcase_add_test(t, help_from_table);
	tcase_add_test(t, completion_from_table);
	tcase_add_test(t, guest_commands_scoped);
	tcase_add_test(t, doc_matches_table);
	suite_add_tcase(s, t);
	sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
