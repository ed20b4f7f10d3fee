/* SPDX-License-Identifier: BSD-3-Clause */
/* Raw-socket helpers of the control-socket tests (test_ctl_limits.c, test_ctl_priv.c). */
#ifndef CTL_UTIL_H
#define CTL_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "hv_ctl.h"

#define CU_WAIT_MS 10000 /* upper bound on any wait; normally milliseconds */

/** A fresh directory under /tmp (mode 0755) in dir, the socket path in path. */
void cu_dir(char *dir, size_t dirlen, char *path, size_t pathlen, const char *sock);

/** Connect to path (asserts). */
int cu_connect(const char *path);

/** Connect to path; -1 on failure (for children: no asserts). */
int cu_try_connect(const char *path);

/** Send all of buf (asserts). */
void cu_send(int fd, const char *buf, size_t len);

/** One line (malloc'ed, no '\n') within timeout_ms, polling s meanwhile when
 * not NULL; NULL on EOF or timeout. */
char *cu_line(int fd, int timeout_ms, struct hv_ctl_server *s);

/** Wait up to ms for fd to be readable, polling s (when not NULL) meanwhile. */
bool cu_readable(int fd, int ms, struct hv_ctl_server *s);

/** Whether the peer closed fd within timeout_ms (polling s when not NULL). */
bool cu_closed(int fd, int timeout_ms, struct hv_ctl_server *s);

/** Poll s until child pid exits; its exit status, or -1 after CU_WAIT_MS. */
int cu_wait_child(struct hv_ctl_server *s, pid_t pid);

/** Milliseconds of CLOCK_MONOTONIC. */
unsigned long long cu_now_ms(void);

/** What one hvctl run left: its exit status (-1: killed after CU_WAIT_MS) and output. */
struct cu_run {
	int status;
	char out[65536];
	char err[4096];
};

/**
 * Start $HVCTL --socket @sock ARGS... with stdout and stderr into memfds
 * (*@ofd, *@efd); @comp_line, if not NULL, is set as bash's completion
 * would (COMP_LINE, COMP_POINT). The caller polls @sock's server until the
 * child ends (cu_wait_child).
 */
pid_t cu_hvctl_start(const char *sock, const char *comp_line, const char *const *args, int *ofd,
		     int *efd);

/** Run hvctl as cu_hvctl_start() does, serving @s meanwhile, into @r. */
void cu_hvctl(struct cu_run *r, struct hv_ctl_server *s, const char *sock, const char *comp_line,
	      const char *const *args);

#endif
