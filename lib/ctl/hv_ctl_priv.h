/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/ctl internals shared by the server's files (hv_ctl_server.c: sockets,
 * turns, limits; hv_ctl_dispatch.c: requests and replies) and the fuzz
 * target. Not part of the API.
 */
#ifndef HV_CTL_PRIV_H
#define HV_CTL_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

#include "hv_ctl.h"
#include "hv_ctl_api.h"

#define HV_CTL_ERR_MAX 1024

struct client {
	int fd;
	struct hv_ctl_peer peer;
	char *in; /* request bytes not yet dispatched */
	size_t in_len, in_cap;
	char *out; /* replies not yet written */
	size_t out_off, out_len, out_cap;
	bool closing;         /* close once out is written */
	bool ready;           /* complete lines in `in` wait for a turn */
	uint32_t events;      /* what epoll watches for it */
	uint64_t progress_ms; /* last reply byte written */
	uint64_t line_ms;     /* first byte of the request being received, 0: none */
	uint64_t idle_ms;     /* connected, or last reply written */
	uint64_t turn;        /* the poll that last gave it a turn */
	int pass_fd;          /* passed with the next request (SCM_RIGHTS), -1: none */
	bool read_once;       /* a descriptor counts only with a connection's first read */
};

struct hv_ctl_server {
	int lfd;
	int epfd;
	int work_fd; /* eventfd: readable while a ready client can run */
	bool work_set;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	dev_t sock_dev;
	ino_t sock_ino;
	gid_t group;
	gid_t admin_group;
	uid_t euid;
	struct hv_ctl_limits lim;
	uint64_t turn;
	unsigned int rr; /* where the next round of turns starts */
	const struct hv_ctl_cmd *cmds;
	bool api;                    /* validate requests against hv_ctl_api.h's table */
	enum hv_ctl_service api_svc; /* ... its commands that this service serves */
	void *ctx;
	struct client *clients[HV_CTL_MAX_CLIENTS];
};

/** Reply bytes queued and not yet written. */
static inline size_t
hv_ctl_out_pending(const struct client *c)
{
	return c->out_len - c->out_off;
}

/**
 * Run one request line (without its '\n') for c and queue the reply (valid
 * UTF-8, one line). Thread: the polling one.
 * @return 0, or -1 when even an error reply could not be queued
 */
int hv_ctl_dispatch(struct hv_ctl_server *s, struct client *c, const char *line, size_t len);

/** Queue {"ok":false,"error":msg} for c; msg is made one line in place. */
int hv_ctl_reply_err(struct client *c, char *msg);

/** {"ok":false,"error":msg} as malloc'ed text (msg made one line), or NULL. */
char *hv_ctl_error_text(char *msg);

#endif
