/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The hvswitch daemon's config file: what it refuses to read, and how it
 * writes it (errors of a full disk, a durable rename).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "switch_harness.h"

static struct hvsw D;
static char mnt[64]; /* a small tmpfs, "" when none */

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
	if (mnt[0] != '\0') {
		umount2(mnt, MNT_DETACH);
		rmdir(mnt);
		mnt[0] = '\0';
	}
}

static void
write_file(const char *path, const char *bytes, size_t len)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(bytes, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
}

/* The file's bytes (NUL-terminated) into @buf; returns the length. */
static size_t
read_back(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	size_t n;

	ck_assert_ptr_nonnull(f);
	n = fread(buf, 1, size - 1, f);
	fclose(f);
	buf[n] = '\0';
	return n;
}

/* Whether the daemon's log holds @want. */
static bool
log_has(const char *want)
{
	static char log[65536];

	read_back(D.log, log, sizeof(log));
	return strstr(log, want) != NULL;
}

/* Run the daemon with @extra on the config as it is: it must exit with @code. */
static void
run_exits(const char *const *extra, int code)
{
	truncate(D.log, 0);
	ck_assert_msg(hvsw_start(&D, extra) != 0, "hvswitch kept running");
	ck_assert_msg(WIFEXITED(D.status) && WEXITSTATUS(D.status) == code,
		      "hvswitch: status 0x%x, expected exit %d", D.status, code);
}

/*
 * Bytes after the JSON object are refused, with their position, by
 * --check-config and at start: a later save would drop them silently.
 */
START_TEST(trailing_data_refused)
{
	static const char good[] = "{\"settings\":{\"mac_limit\":7},\"ports\":[]}\n";
	static const char bad[] = "{\"settings\":{\"mac_limit\":7},\"ports\":[]}\n"
				  "}{\"ports\":[{\"name\":\"lost\"}]}\n";
	static const char nul[] = "{\"ports\":[]}\0{\"ports\":[{\"name\":\"lost\"}]}";
	static char before[4096], after[4096];
	const size_t obj = sizeof(good) - 2; /* the object without its line end */

	write_file(D.config, bad, sizeof(bad) - 1);
	run_exits((const char *const[]){"--check-config", NULL}, 1);
	{
		char want[96];

		snprintf(want, sizeof(want), "data after the JSON object at byte offset %zu",
			 obj + 1);
		ck_assert_msg(log_has(want), "log lacks '%s'", want);
	}
	read_back(D.config, before, sizeof(before));
	run_exits(NULL, 1);
	read_back(D.config, after, sizeof(after));
	ck_assert_str_eq(before, after);
	/* a NUL byte is no end of the file */
	write_file(D.config, nul, sizeof(nul) - 1);
	run_exits((const char *const[]){"--check-config", NULL}, 1);
	ck_assert(log_has("data after the JSON object at byte offset 12"));
	/* malformed JSON: where */
	write_file(D.config, "{\"ports\":[}", 11);
	run_exits((const char *const[]){"--check-config", NULL}, 1);
	ck_assert(log_has("invalid JSON at byte offset 10"));
	/* trailing white space is fine */
	write_file(D.config, good, sizeof(good) - 1);
	run_exits((const char *const[]){"--check-config", NULL}, 0);
}
END_TEST

/* A config error says where: line and column, or which port and which key. */
START_TEST(error_positions)
{
	static const struct {
		const char *text, *want;
	} cases[] = {
		{"\n\n  [1, 2]\n", "not a JSON object at byte offset 4 (line 3, column 3)"},
		{"{\n  \"ports\": [\n}\n", "invalid JSON at byte offset 15 (line 3, column 1)"},
		{"{\"ports\": []}\n\t{}\n",
		 "data after the JSON object at byte offset 15 (line 2, column 2)"},
		{"{\n  \"ports\": [\n    {\"name\": \"a\"},\n    {\"name\": \"b\", \"qeues\": 2}\n  ]\n}\n",
		 ": ports[1] (b): unknown argument 'qeues' (valid: name, type, "},
		{"{\"ports\": [{\"queues\": 2}]}", ": ports[0]: missing 'name'"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		write_file(D.config, cases[i].text, strlen(cases[i].text));
		run_exits((const char *const[]){"--check-config", NULL}, 1);
		ck_assert_msg(log_has(cases[i].want), "log lacks '%s'", cases[i].want);
	}
}
END_TEST

/* Fill the file system at @dir but for one page: @fill holds the rest. */
static void
fill_but_one_page(const char *fill)
{
	static char page[4096];
	int fd = open(fill, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	off_t size = 0;

	ck_assert_int_ge(fd, 0);
	memset(page, 0xa5, sizeof(page));
	while (write(fd, page, sizeof(page)) == (ssize_t)sizeof(page))
		size += (off_t)sizeof(page);
	ck_assert_int_eq(errno, ENOSPC);
	ck_assert_int_eq(ftruncate(fd, size - (off_t)sizeof(page)), 0);
	close(fd);
}

/*
 * A save cut short by a full disk says so (not a stale errno), and the
 * config file stays as it was.
 */
START_TEST(save_on_full_disk)
{
	static const char feat[] =
		",\"features\":\"mrg_rxbuf,indirect_desc,event_idx,mq,csum,"
		"guest_csum,host_tso4,host_tso6,guest_tso4,guest_tso6,in_order\"";
	static char before[16384], after[16384], config[96], fill[96];
	char err[512], name[16];
	struct stat st;
	int i;

	if (geteuid() != 0) {
		fprintf(stderr, "save_on_full_disk: not root, no tmpfs: not tested\n");
		return;
	}
	snprintf(mnt, sizeof(mnt), "/tmp/hvsw-full-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(mnt));
	ck_assert_msg(mount("tmpfs", mnt, "tmpfs", 0, "size=64k,mode=0700") == 0, "mount: %s",
		      strerror(errno));
	snprintf(config, sizeof(config), "%s/hv.json", mnt);
	snprintf(fill, sizeof(fill), "%s/fill", mnt);
	ck_assert_int_eq(hvsw_start(&D, (const char *const[]){"--config", config, NULL}), 0);
	/* a config longer than a page: the write of the next one is cut short */
	for (i = 0; stat(config, &st) != 0 || st.st_size < 4096 + 512; i++) {
		ck_assert_int_lt(i, 64);
		snprintf(name, sizeof(name), "p%d", i);
		hvsw_add_port(&D, name, feat);
	}
	fill_but_one_page(fill);
	read_back(config, before, sizeof(before));
	ck_assert_int_ne(hvsw_call(&D, NULL, err, sizeof(err), "port.add",
				   "{\"name\":\"late\",\"type\":\"vhost-user\"}"),
			 0);
	ck_assert_msg(strstr(err, "No space left on device") != NULL, "error: %s", err);
	read_back(config, after, sizeof(after));
	ck_assert_str_eq(before, after);
	ck_assert_int_eq(hvsw_stop(&D), 0);
}
END_TEST

/* Stop a daemon that runs under strace: SIGTERM to it, strace exits with it. */
static void
stop_traced(void)
{
	char path[64];
	int pid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", D.pid, D.pid);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fscanf(f, "%d", &pid), 1);
	fclose(f);
	ck_assert_int_eq(kill(pid, SIGTERM), 0);
	ck_assert_int_eq(hvsw_stop(&D), 0);
}

/*
 * A save makes its rename durable: the directory is fsynced after it. Seen
 * through strace (the daemon runs under it); not tested without strace.
 */
START_TEST(save_fsyncs_directory)
{
	const char *bin = getenv("HVSWITCH");
	static char trace[128], wrapper[128], text[1 << 20];
	char *ren, *line;
	bool synced = false;
	FILE *f;

	if (system("strace -V >/dev/null 2>&1") != 0) {
		fprintf(stderr, "save_fsyncs_directory: no strace: not tested\n");
		return;
	}
	ck_assert_ptr_nonnull(bin);
	snprintf(trace, sizeof(trace), "%s/strace.out", D.dir);
	snprintf(wrapper, sizeof(wrapper), "%s/hvswitch-strace", D.dir);
	f = fopen(wrapper, "w");
	ck_assert_ptr_nonnull(f);
	/* LeakSanitizer cannot run under ptrace (ASan builds) */
	fprintf(f,
		"#!/bin/sh\nASAN_OPTIONS=\"${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0\" "
		"exec strace -f -qq -y -e trace=rename,renameat,renameat2,fsync -o %s %s "
		"\"$@\"\n",
		trace, bin);
	fclose(f);
	ck_assert_int_eq(chmod(wrapper, 0755), 0);
	setenv("HVSWITCH", wrapper, 1);
	ck_assert_int_eq(hvsw_start(&D, NULL), 0);
	setenv("HVSWITCH", bin, 1);
	hvsw_add_port(&D, "p0", NULL);
	stop_traced();
	read_back(trace, text, sizeof(text));
	/* after the rename onto the config file: an fsync of its directory */
	ren = strstr(text, "hv.json.tmp\", ");
	ck_assert_msg(ren != NULL, "no rename in the trace:\n%.2000s", text);
	for (line = strstr(ren, "fsync("); line != NULL; line = strstr(line + 1, "fsync(")) {
		const char *path = strchr(line, '<'), *eol = strchr(line, '\n');
		const char *ok = strstr(line, "= 0");
		char want[96];

		snprintf(want, sizeof(want), "<%s>)", D.dir);
		if (path != NULL && strncmp(path, want, strlen(want)) == 0 && ok != NULL &&
		    (eol == NULL || ok < eol))
			synced = true;
	}
	ck_assert_msg(synced, "no fsync of %s after the rename:\n%.2000s", D.dir, ren);
}
END_TEST

static Suite *
make_suite(void)
{
	Suite *s = suite_create("switch-config");
	TCase *t = tcase_create("config");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 120);
	tcase_add_test(t, trailing_data_refused);
	tcase_add_test(t, error_positions);
	tcase_add_test(t, save_on_full_disk);
	tcase_add_test(t, save_fsyncs_directory);
	suite_add_tcase(s, t);
	return s;
}

int
main(int argc, char **argv)
{
	return swh_run_suite(make_suite, argc, argv);
}
