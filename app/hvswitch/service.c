/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hvswitch as a service: its run directory, its log on journald, and its
 * readiness (sd_notify) for systemd (doc/deployment.rst).
 */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include <rte_common.h>
#include <rte_log.h>

#include "ctl_policy.h"
#include "hv_ctl.h"
#include "sw.h"

/* ---- journald ---- */

static FILE *journal_fd_stream;
static bool journal_line_start = true;

/*
 * One message of rte_log (written whole: rte_vlog flushes after each), every
 * line with its syslog priority for journald ("<3>..."): DPDK's levels are
 * syslog's plus one. Called under the stream's lock.
 */
static ssize_t
journal_write(void *cookie, const char *buf, size_t size)
{
	int level = rte_log_cur_msg_loglevel();
	int prio =
		level >= (int)RTE_LOG_EMERG && level <= (int)RTE_LOG_DEBUG ? level - 1 : LOG_INFO;
	size_t off = 0;

	RTE_SET_USED(cookie);
	while (off < size) {
		const char *nl = memchr(buf + off, '\n', size - off);
		size_t len = nl != NULL ? (size_t)(nl - (buf + off)) + 1 : size - off;

		if (journal_line_start)
			fprintf(journal_fd_stream, "<%d>%.*s", prio, (int)len, buf + off);
		else
			fwrite(buf + off, 1, len, journal_fd_stream);
		journal_line_start = nl != NULL;
		off += len;
	}
	fflush(journal_fd_stream);
	return (ssize_t)size;
}

/* Whether @fd is the stream $JOURNAL_STREAM ("DEVICE:INODE") names. */
static bool
is_journal(int fd, const char *js)
{
	unsigned long long dev, ino;
	struct stat st;
	char end;

	return js != NULL && sscanf(js, "%llu:%llu%c", &dev, &ino, &end) == 2 &&
	       fstat(fd, &st) == 0 && (unsigned long long)st.st_dev == dev &&
	       (unsigned long long)st.st_ino == ino;
}

bool
sw_service_log_init(void)
{
	static const cookie_io_functions_t io = {.write = journal_write};
	const char *js = getenv("JOURNAL_STREAM");
	FILE *f;

	/*
	 * DPDK 22.11 writes each message to stdout and to syslog: under
	 * systemd both reach the journal. There, log to the stream only, with
	 * each line's priority.
	 */
	if (is_journal(STDERR_FILENO, js))
		journal_fd_stream = stderr;
	else if (is_journal(STDOUT_FILENO, js))
		journal_fd_stream = stdout;
	else
		return false;
	f = fopencookie(NULL, "w", io);
	/* unbuffered: each message is written whole, under the stream's lock, with its own level */
	if (f != NULL)
		setvbuf(f, NULL, _IONBF, 0);
	if (f == NULL || rte_openlog_stream(f) != 0) {
		if (f != NULL)
			fclose(f);
		return false;
	}
	return true;
}

/* ---- run directory ---- */

/* Whether user @pw is in group @g (primary or supplementary). */
static bool
user_in_group(const struct passwd *pw, gid_t g)
{
	gid_t list[64];
	int n = (int)RTE_DIM(list);

	if (pw->pw_gid == g)
		return true;
	if (getgrouplist(pw->pw_name, pw->pw_gid, list, &n) < 0)
		return false; /* in more than 64 groups: said to be out, a warning at worst */
	for (int i = 0; i < n; i++)
		if (list[i] == g)
			return true;
	return false;
}

/* Whether a directory of @st lets group @g, or user @pw if not NULL, through. */
static bool
dir_lets_in(const struct stat *st, const struct passwd *pw, gid_t g)
{
	if (st->st_mode & S_IXOTH)
		return true;
	if (pw != NULL && st->st_uid == pw->pw_uid)
		return (st->st_mode & S_IXUSR) != 0;
	if (pw != NULL)
		return user_in_group(pw, st->st_gid) && (st->st_mode & S_IXGRP) != 0;
	return g == st->st_gid && (st->st_mode & S_IXGRP) != 0;
}

int
sw_run_dir_prepare(void)
{
	/* who is named to reach a socket there */
	gid_t groups[3] = {sw.ctl_group, sw_ctl_admin_group,
			   sw_vhost_access.chown ? sw_vhost_access.gid : HV_CTL_NO_GROUP};
	uid_t vuser = sw_vhost_access.chown ? sw_vhost_access.uid : (uid_t)-1;
	const struct passwd *pw = vuser != (uid_t)-1 ? getpwuid(vuser) : NULL;
	gid_t dir_group = HV_CTL_NO_GROUP;
	mode_t mode = 0750;
	struct stat st;

	for (int i = 0; i < 3 && dir_group == HV_CTL_NO_GROUP; i++)
		dir_group = groups[i];
	if (mkdir(sw.run_dir, 0700) == 0) {
		/* made here: the first group named may list it; the others, if any, pass */
		for (int i = 0; i < 3; i++)
			if (groups[i] != HV_CTL_NO_GROUP && groups[i] != dir_group)
				mode |= S_IXOTH;
		if (vuser != (uid_t)-1 && vuser != geteuid() &&
		    (pw == NULL || dir_group == HV_CTL_NO_GROUP || !user_in_group(pw, dir_group)))
			mode |= S_IXOTH;
		if ((dir_group != HV_CTL_NO_GROUP &&
		     chown(sw.run_dir, (uid_t)-1, dir_group) != 0) ||
		    chmod(sw.run_dir, mode) != 0) {
			fprintf(stderr, "hvswitch: run dir %s: %s\n", sw.run_dir, strerror(errno));
			return -1;
		}
		return 0;
	}
	if (errno != EEXIST || stat(sw.run_dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "hvswitch: run dir %s: %s\n", sw.run_dir,
			errno == EEXIST ? "not a directory" : strerror(errno));
		return -1;
	}
	/* someone else's (systemd's RuntimeDirectory=, the operator's): only say what fails */
	for (int i = 0; i < 3; i++) {
		const struct group *g;

		if (groups[i] == HV_CTL_NO_GROUP || dir_lets_in(&st, NULL, groups[i]))
			continue;
		g = getgrgid(groups[i]);
		fprintf(stderr,
			"hvswitch: warning: run dir %s (mode %04o, group %u) does not let group "
			"%s through to its sockets\n",
			sw.run_dir, (unsigned int)(st.st_mode & 07777), (unsigned int)st.st_gid,
			g != NULL ? g->gr_name : "?");
	}
	if (pw != NULL && !dir_lets_in(&st, pw, HV_CTL_NO_GROUP))
		fprintf(stderr,
			"hvswitch: warning: run dir %s (mode %04o) does not let user %s through "
			"to its sockets\n",
			sw.run_dir, (unsigned int)(st.st_mode & 07777), pw->pw_name);
	return 0;
}

/* ---- readiness ---- */

void
sw_service_ready(unsigned int n_ports)
{
	/* no-op without $NOTIFY_SOCKET */
	sd_notifyf(0, "READY=1\nSTATUS=%u port(s), control socket %s/" HV_CTL_SOCK_NAME, n_ports,
		   sw.run_dir);
}

void
sw_service_stopping(void)
{
	sd_notify(0, "STOPPING=1");
}
