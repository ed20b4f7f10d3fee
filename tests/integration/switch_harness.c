/* SPDX-License-Identifier: BSD-3-Clause */
#include "switch_harness.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rte_bus_vdev.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "hv_ctl.h"

static unsigned int daemon_seq;

/* Daemons alive: killed (and their dirs removed) at exit whatever happens to the test. */
static struct hvsw *volatile live[8];

static void rm_dir(const char *path);

uint64_t
swh_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void
rm_eal_dir(const struct hvsw *d)
{
	char p[256];

	snprintf(p, sizeof(p), "/var/run/dpdk/%s", d->prefix);
	rm_dir(p);
}

static void
rm_runtime(const struct hvsw *d)
{
	rm_dir(d->dir);
	rm_eal_dir(d);
}

static void
kill_live(void)
{
	for (unsigned int i = 0; i < RTE_DIM(live); i++) {
		struct hvsw *d = live[i];

		if (d != NULL && d->pid > 0) {
			kill(d->pid, SIGKILL);
			waitpid(d->pid, NULL, 0);
			d->pid = 0;
			rm_runtime(d);
		}
		live[i] = NULL;
	}
}

static void
on_fatal_signal(int sig)
{
	kill_live();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void
live_set(struct hvsw *old, struct hvsw *d)
{
	for (unsigned int i = 0; i < RTE_DIM(live); i++) {
		if (live[i] == old) {
			live[i] = d;
			return;
		}
	}
}

/* ---- the daemon ---- */

void
hvsw_init(struct hvsw *d)
{
	memset(d, 0, sizeof(*d));
	d->ctl = -1;
	snprintf(d->dir, sizeof(d->dir), "/tmp/hvsw-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(d->dir));
	snprintf(d->prefix, sizeof(d->prefix), "hvsw%d_%u", getpid(), daemon_seq++);
	snprintf(d->sock, sizeof(d->sock), "%s/%s", d->dir, HV_CTL_SOCK_NAME);
	snprintf(d->config, sizeof(d->config), "%s/hv.json", d->dir);
	snprintf(d->log, sizeof(d->log), "%s/hvswitch.log", d->dir);
}

static void
print_log(const struct hvsw *d)
{
	char buf[4096];
	FILE *f = fopen(d->log, "r");
	size_t n;

	if (f == NULL)
		return;
	fprintf(stderr, "---- %s ----\n", d->log);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		fwrite(buf, 1, n, stderr);
	fprintf(stderr, "---- end of log ----\n");
	fclose(f);
}

int
hvsw_start(struct hvsw *d, const char *const *extra)
{
	const char *bin = getenv("HVSWITCH");
	const char *argv[32];
	unsigned int n = 0;
	pid_t parent = getpid(), pid;
	uint64_t t0, end;
	char err[256];

	if (bin == NULL)
		bin = "build/app/hvswitch/hvswitch";
	argv[n++] = bin;
	argv[n++] = "-l";
	argv[n++] = "0,1";
	argv[n++] = "--no-pci";
	argv[n++] = "--no-huge";
	argv[n++] = "-m";
	argv[n++] = "256";
	argv[n++] = "--file-prefix";
	argv[n++] = d->prefix;
	argv[n++] = "--";
	argv[n++] = "--config";
	argv[n++] = d->config;
	argv[n++] = "--run-dir";
	argv[n++] = d->dir;
	for (unsigned int i = 0; extra != NULL && extra[i] != NULL && n < RTE_DIM(argv) - 1; i++)
		argv[n++] = extra[i];
	argv[n] = NULL;

	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open(d->log, O_WRONLY | O_CREAT | O_APPEND, 0644);

		/* die with the test, even if it is killed */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		/* none of our sockets (guests, control) may leak into it */
		syscall(SYS_close_range, 3, ~0u, 0);
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		execv(bin, (char *const *)argv);
		_exit(127);
	}
	d->pid = pid;
	live_set(NULL, d);
	/* wait for the control socket to answer, or for the daemon to die */
	t0 = swh_now_ms();
	end = t0 + 20000;
	while (swh_now_ms() < end) {
		int st;

		if (waitpid(pid, &st, WNOHANG) == pid) {
			live_set(d, NULL);
			d->pid = 0;
			d->status = st;
			fprintf(stderr, "hvswitch exited during start (status 0x%x)\n", st);
			print_log(d);
			return -1;
		}
		if (access(d->sock, F_OK) == 0) {
			d->ctl = hv_ctl_connect(d->sock, err, sizeof(err));
			if (d->ctl >= 0 &&
			    hvsw_call(d, NULL, err, sizeof(err), "version", NULL) == 0) {
				if (swh_now_ms() - t0 > 2000)
					fprintf(stderr, "note: hvswitch took %u ms to answer\n",
						(unsigned int)(swh_now_ms() - t0));
				return 0;
			}
			if (d->ctl >= 0)
				close(d->ctl);
			d->ctl = -1;
		}
		usleep(10000);
	}
	fprintf(stderr, "hvswitch: control socket %s did not answer\n", d->sock);
	print_log(d);
	return -1;
}

int
hvsw_stop(struct hvsw *d)
{
	uint64_t end;
	int st = 0;

	if (d->ctl >= 0) {
		close(d->ctl);
		d->ctl = -1;
	}
	if (d->pid <= 0)
		return -1;
	kill(d->pid, SIGTERM);
	end = swh_now_ms() + 15000;
	while (waitpid(d->pid, &st, WNOHANG) == 0) {
		if (swh_now_ms() > end) {
			fprintf(stderr, "hvswitch %d ignored SIGTERM: killed\n", (int)d->pid);
			kill(d->pid, SIGKILL);
			waitpid(d->pid, &st, 0);
			break;
		}
		usleep(5000);
	}
	live_set(d, NULL);
	d->pid = 0;
	d->status = st;
	/* a restart takes a new prefix: this one's EAL directory is done with */
	rm_eal_dir(d);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		print_log(d);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void
rm_dir(const char *path)
{
	DIR *dir = opendir(path);
	struct dirent *e;
	char p[512];

	if (dir == NULL)
		return;
	while ((e = readdir(dir)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(p, sizeof(p), "%s/%s", path, e->d_name);
		unlink(p);
	}
	closedir(dir);
	rmdir(path);
}

void
hvsw_cleanup(struct hvsw *d)
{
	if (d->dir[0] == '\0')
		return;
	hvsw_stop(d);
	rm_runtime(d);
	d->dir[0] = '\0';
}

static int
vcall(struct hvsw *d, cJSON **res, char *err, size_t errlen, const char *cmd, const char *fmt,
      va_list ap)
{
	cJSON *args = NULL;

	if (res != NULL)
		*res = NULL;
	if (fmt != NULL) {
		char buf[1024];

		vsnprintf(buf, sizeof(buf), fmt, ap);
		args = cJSON_Parse(buf);
		if (args == NULL) {
			snprintf(err, errlen, "test bug: bad JSON %.200s", buf);
			return -1;
		}
	}
	if (d->ctl < 0) {
		cJSON_Delete(args);
		snprintf(err, errlen, "not connected");
		return -1;
	}
	return hv_ctl_call(d->ctl, cmd, args, res, err, errlen);
}

int
hvsw_call(struct hvsw *d, cJSON **res, char *err, size_t errlen, const char *cmd,
	  const char *args_fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, args_fmt);
	rc = vcall(d, res, err, errlen, cmd, args_fmt, ap);
	va_end(ap);
	return rc;
}

cJSON *
hvsw_ok(struct hvsw *d, const char *cmd, const char *args_fmt, ...)
{
	char err[512];
	cJSON *res;
	va_list ap;
	int rc;

	va_start(ap, args_fmt);
	rc = vcall(d, &res, err, sizeof(err), cmd, args_fmt, ap);
	va_end(ap);
	ck_assert_msg(rc == 0, "%s failed: %s", cmd, err);
	return res;
}

int
hvsw_raw(struct hvsw *d, const char *bytes, size_t len, char *line, size_t linelen)
{
	char err[256];
	int fd = hv_ctl_connect(d->sock, err, sizeof(err));
	size_t got = 0;

	if (fd < 0)
		return -1;
	if (send(fd, bytes, len, MSG_NOSIGNAL) != (ssize_t)len) {
		close(fd);
		return -1;
	}
	while (got + 1 < linelen) {
		ssize_t r = recv(fd, line + got, 1, 0);

		if (r <= 0 || line[got] == '\n')
			break;
		got++;
	}
	line[got] = '\0';
	close(fd);
	return got > 0 ? 0 : -1;
}

static const cJSON *
lookup(const cJSON *o, const char *path)
{
	char buf[128], *save = NULL, *tok;

	snprintf(buf, sizeof(buf), "%s", path);
	for (tok = strtok_r(buf, ".", &save); tok != NULL && o != NULL;
	     tok = strtok_r(NULL, ".", &save))
		o = cJSON_GetObjectItemCaseSensitive(o, tok);
	return o;
}

double
swh_num(const cJSON *o, const char *path)
{
	const cJSON *j = lookup(o, path);

	return cJSON_IsNumber(j) ? j->valuedouble : -1;
}

const char *
swh_str(const cJSON *o, const char *path)
{
	const cJSON *j = lookup(o, path);

	return cJSON_IsString(j) ? j->valuestring : NULL;
}

void
hvsw_add_port(struct hvsw *d, const char *name, const char *extra_json)
{
	cJSON_Delete(hvsw_ok(d, "port.add", "{\"name\":\"%s\",\"type\":\"vhost-user\"%s}", name,
			     extra_json ? extra_json : ""));
}

bool
hvsw_wait_up(struct hvsw *d, const char *name, unsigned int timeout_ms)
{
	uint64_t end = swh_now_ms() + timeout_ms;

	do {
		cJSON *r = hvsw_ok(d, "port.show", "{\"name\":\"%s\"}", name);
		const char *st = swh_str(r, "state");
		bool up = st != NULL && strcmp(st, "up") == 0;

		cJSON_Delete(r);
		if (up)
			return true;
		usleep(5000);
	} while (swh_now_ms() < end);
	return false;
}

double
hvsw_port_stat(struct hvsw *d, const char *name, const char *counter)
{
	cJSON *r = hvsw_ok(d, "port.show", "{\"name\":\"%s\"}", name);
	char path[64];
	double v;

	snprintf(path, sizeof(path), "stats.%s", counter);
	v = swh_num(r, path);
	cJSON_Delete(r);
	ck_assert_msg(v >= 0, "port.show %s: no stats.%s", name, counter);
	return v;
}

int
hvsw_fdb_has(struct hvsw *d, const struct rte_ether_addr *mac, const char *port)
{
	char m[RTE_ETHER_ADDR_FMT_SIZE];
	cJSON *r = hvsw_ok(d, "fdb.show", NULL), *e;
	int n = 0;

	rte_ether_format_addr(m, sizeof(m), mac);
	cJSON_ArrayForEach(e, r)
	{
		const char *em = swh_str(e, "mac"), *ep = swh_str(e, "port");

		if (em != NULL && strcasecmp(em, m) == 0 &&
		    (port == NULL || (ep != NULL && strcmp(ep, port) == 0)))
			n++;
	}
	cJSON_Delete(r);
	return n;
}

int
hvsw_fdb_count(struct hvsw *d, const char *port)
{
	cJSON *r = hvsw_ok(d, "fdb.show", "{\"port\":\"%s\"}", port), *e;
	int n = 0;

	cJSON_ArrayForEach(e, r)
	{
		const char *ep = swh_str(e, "port");

		ck_assert_msg(ep != NULL && strcmp(ep, port) == 0, "fdb.show port=%s lists %s",
			      port, ep ? ep : "(none)");
		n++;
	}
	cJSON_Delete(r);
	return n;
}

/* ---- guests ---- */

int
swh_env_init(int argc, char **argv)
{
	atexit(kill_live);
	signal(SIGTERM, on_fatal_signal);
	signal(SIGINT, on_fatal_signal);
	signal(SIGPIPE, SIG_IGN);
	if (rte_eal_init(argc, argv) < 0) {
		fprintf(stderr, "EAL: %s\n", rte_strerror(rte_errno));
		return -1;
	}
	return swh_guests_init();
}

void
swh_env_fini(void)
{
	char rt[PATH_MAX];

	kill_live();
	snprintf(rt, sizeof(rt), "%s", rte_eal_get_runtime_dir());
	swh_guests_fini();
	rte_eal_cleanup();
	rm_dir(rt); /* this process's own DPDK runtime dir */
}

/* ---- DPDK telemetry ---- */

int
swh_tel_open(const char *prefix, pid_t pid)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char buf[1024];
	cJSON *r;
	ssize_t n;
	int fd;
	bool ok;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "/var/run/dpdk/%s/dpdk_telemetry.v2", prefix);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(fd, 0);
	ck_assert_msg(connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0, "connect %s: %s",
		      sa.sun_path, strerror(errno));
	n = recv(fd, buf, sizeof(buf) - 1, 0);
	ck_assert_int_gt(n, 0);
	buf[n] = '\0';
	r = cJSON_Parse(buf);
	ok = (pid_t)swh_num(r, "pid") == pid && swh_num(r, "max_output_len") > 0;
	cJSON_Delete(r);
	ck_assert_msg(ok, "telemetry greeting: %s", buf);
	return fd;
}

cJSON *
swh_tel(int fd, const char *cmd)
{
	static char buf[65536];
	ssize_t n;
	cJSON *r, *v;

	ck_assert_int_eq(send(fd, cmd, strlen(cmd), 0), (ssize_t)strlen(cmd));
	n = recv(fd, buf, sizeof(buf) - 1, 0);
	ck_assert_msg(n > 0, "telemetry %s: no reply", cmd);
	buf[n] = '\0';
	r = cJSON_Parse(buf);
	ck_assert_msg(r != NULL && r->child != NULL, "telemetry %s: %s", cmd, buf);
	/* {"<command without its parameter>": value} */
	v = cJSON_DetachItemViaPointer(r, r->child);
	cJSON_Delete(r);
	return v;
}

double
swh_tel_num(const cJSON *v, const char *outer, const char *inner)
{
	const cJSON *j = cJSON_GetObjectItemCaseSensitive(v, outer);

	/* a nested dict (container); @inner may name a value flattened inside it */
	j = cJSON_GetObjectItemCaseSensitive(j, inner);
	return cJSON_IsNumber(j) ? j->valuedouble : -1;
}
