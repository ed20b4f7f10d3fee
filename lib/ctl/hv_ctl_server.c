/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Server side of the control protocol, polled from the daemon's main loop.
 *
 * Single-threaded and non-blocking: one epoll set holds the listening socket
 * and every client. A client is either reading (EPOLLIN: it has no reply
 * pending) or writing (EPOLLOUT: replies are queued); a client that does not
 * read its replies is therefore not read from either, and costs at most the
 * replies to one buffer of requests. Nothing a client does (send half a line,
 * stop reading) blocks another: reads and writes never wait.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "hv_ctl.h"

#define IN_BUF_MIN 4096
#define IN_BUF_MAX (HV_CTL_MAX_REQUEST + 1) /* a full line plus its '\n' */
#define EVENTS_MAX 32
#define ACCEPT_MAX 16 /* connections accepted per poll */
#define ERR_MAX 1024
#define LISTEN_TAG UINT64_MAX /* epoll data of the listening socket */

struct client {
	int fd;
	char *in;            /* request bytes not yet dispatched */
	size_t in_len, in_cap;
	char *out;           /* replies not yet written */
	size_t out_off, out_len, out_cap;
	bool closing;        /* close once out is written */
	bool writing;        /* registered for EPOLLOUT (else EPOLLIN) */
	uint64_t progress_ms; /* last byte read or written */
};

struct hv_ctl_server {
	int lfd;
	int epfd;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	dev_t sock_dev;
	ino_t sock_ino;
	gid_t group;
	uid_t euid;
	const struct hv_ctl_cmd *cmds;
	void *ctx;
	struct client *clients[HV_CTL_MAX_CLIENTS];
};

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Replace control characters so that an error stays one line. */
static void
one_line(char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = ' ';
}

static void
client_close(struct hv_ctl_server *s, unsigned int idx)
{
	struct client *c = s->clients[idx];

	if (c == NULL)
		return;
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	free(c->in);
	free(c->out);
	free(c);
	s->clients[idx] = NULL;
}

static int
client_watch(struct hv_ctl_server *s, unsigned int idx, bool writing)
{
	struct client *c = s->clients[idx];
	struct epoll_event ev = {
		.events = writing ? EPOLLOUT : EPOLLIN,
		.data.u64 = idx,
	};

	if (c->writing == writing)
		return 0;
	if (epoll_ctl(s->epfd, EPOLL_CTL_MOD, c->fd, &ev) < 0)
		return -1;
	c->writing = writing;
	return 0;
}

/* Queue text plus a newline; -1 on allocation failure. */
static int
client_queue(struct client *c, const char *text)
{
	size_t len = strlen(text);

	if (c->out_len + len + 1 > c->out_cap) {
		size_t cap = c->out_cap ? c->out_cap : 4096;
		char *nout;

		while (cap < c->out_len + len + 1)
			cap *= 2;
		nout = realloc(c->out, cap);
		if (nout == NULL)
			return -1;
		c->out = nout;
		c->out_cap = cap;
	}
	memcpy(c->out + c->out_len, text, len);
	c->out[c->out_len + len] = '\n';
	c->out_len += len + 1;
	return 0;
}

/* Queue {"ok":true,"result":result} (result consumed; NULL: null). */
static int
reply_ok(struct client *c, cJSON *result)
{
	cJSON *rep = cJSON_CreateObject();
	char *text = NULL;
	int rc = -1;

	if (result == NULL)
		result = cJSON_CreateNull();
	if (rep == NULL || result == NULL || cJSON_AddTrueToObject(rep, "ok") == NULL) {
		cJSON_Delete(result);
		goto out;
	}
	cJSON_AddItemToObject(rep, "result", result);
	text = cJSON_PrintUnformatted(rep);
	if (text != NULL)
		rc = client_queue(c, text);
out:
	if (rc < 0)
		rc = client_queue(c, "{\"ok\":false,\"error\":\"out of memory\"}");
	cJSON_Delete(rep);
	free(text);
	return rc;
}

/* Queue {"ok":false,"error":msg}. */
static int
reply_err(struct client *c, char *msg)
{
	cJSON *rep = cJSON_CreateObject();
	char *text = NULL;
	int rc = -1;

	one_line(msg);
	if (rep != NULL && cJSON_AddFalseToObject(rep, "ok") != NULL &&
	    cJSON_AddStringToObject(rep, "error", msg) != NULL)
		text = cJSON_PrintUnformatted(rep);
	if (text != NULL)
		rc = client_queue(c, text);
	if (rc < 0)
		rc = client_queue(c, "{\"ok\":false,\"error\":\"out of memory\"}");
	cJSON_Delete(rep);
	free(text);
	return rc;
}

static int
builtin_help(void *ctx, const cJSON *args, cJSON **result, char *err, size_t errlen)
{
	const struct hv_ctl_server *s = ctx;
	const struct hv_ctl_cmd *cmd;
	cJSON *list = cJSON_CreateArray(), *o;

	(void)args;
	if (list == NULL)
		goto nomem;
	for (cmd = s->cmds; cmd != NULL && cmd->name != NULL; cmd++) {
		o = cJSON_CreateObject();
		if (o == NULL || !cJSON_AddItemToArray(list, o) ||
		    cJSON_AddStringToObject(o, "name", cmd->name) == NULL ||
		    cJSON_AddStringToObject(o, "help", cmd->help ? cmd->help : "") == NULL)
			goto nomem;
	}
	o = cJSON_CreateObject();
	if (o == NULL || !cJSON_AddItemToArray(list, o) ||
	    cJSON_AddStringToObject(o, "name", "help") == NULL ||
	    cJSON_AddStringToObject(o, "help", "list the commands") == NULL)
		goto nomem;
	*result = list;
	return 0;
nomem:
	cJSON_Delete(list);
	snprintf(err, errlen, "help: out of memory");
	return -1;
}

static bool
blank(const char *p, const char *end)
{
	for (; p < end; p++)
		if (!isspace((unsigned char)*p))
			return false;
	return true;
}

/* Run one request line (without its '\n') and queue the reply. */
static int
dispatch(struct hv_ctl_server *s, struct client *c, const char *line, size_t len)
{
	const struct hv_ctl_cmd *cmd = NULL;
	const char *end = NULL;
	cJSON *req, *name = NULL, *args = NULL, *result = NULL;
	char err[ERR_MAX];
	void *ctx = s->ctx;
	hv_ctl_handler_t handler = NULL;
	int rc;

	if (blank(line, line + len))
		return 0; /* an empty line is no request */
	err[0] = '\0';
	req = cJSON_ParseWithLengthOpts(line, len, &end, false);
	if (req == NULL) {
		snprintf(err, sizeof(err), "malformed request: invalid JSON at byte %zu",
			 end != NULL && end >= line ? (size_t)(end - line) : (size_t)0);
		return reply_err(c, err);
	}
	if (!blank(end, line + len)) {
		snprintf(err, sizeof(err), "malformed request: data after the JSON object");
	} else if (!cJSON_IsObject(req)) {
		snprintf(err, sizeof(err), "malformed request: expected a JSON object");
	} else if ((name = cJSON_GetObjectItemCaseSensitive(req, "cmd")) == NULL) {
		snprintf(err, sizeof(err), "malformed request: missing 'cmd'");
	} else if (!cJSON_IsString(name) || name->valuestring == NULL) {
		snprintf(err, sizeof(err), "malformed request: 'cmd' must be a string");
	} else {
		for (cmd = s->cmds; cmd != NULL && cmd->name != NULL; cmd++)
			if (strcmp(cmd->name, name->valuestring) == 0)
				break;
		if (cmd != NULL && cmd->name != NULL) {
			handler = cmd->handler;
		} else if (strcmp(name->valuestring, "help") == 0) {
			handler = builtin_help;
			ctx = s;
		}
		args = cJSON_GetObjectItemCaseSensitive(req, "args");
		if (cJSON_IsNull(args))
			args = NULL;
		if (handler == NULL)
			snprintf(err, sizeof(err), "unknown command '%.64s' (try 'help')",
				 name->valuestring);
		else if (args != NULL && !cJSON_IsObject(args))
			snprintf(err, sizeof(err), "%s: 'args' must be an object",
				 name->valuestring);
	}
	if (err[0] != '\0') {
		cJSON_Delete(req);
		return reply_err(c, err);
	}

	rc = handler(ctx, args, &result, err, sizeof(err));
	if (rc != 0) {
		cJSON_Delete(result);
		if (err[0] == '\0')
			snprintf(err, sizeof(err), "%s: failed", name->valuestring);
		rc = reply_err(c, err);
	} else {
		rc = reply_ok(c, result);
	}
	cJSON_Delete(req);
	return rc;
}

/* Dispatch every complete line in c->in. */
static int
client_lines(struct hv_ctl_server *s, struct client *c)
{
	size_t start = 0;
	char *nl;

	while (start < c->in_len &&
	       (nl = memchr(c->in + start, '\n', c->in_len - start)) != NULL) {
		size_t len = (size_t)(nl - (c->in + start));

		if (len > 0 && c->in[start + len - 1] == '\r')
			len--;
		if (dispatch(s, c, c->in + start, len) < 0)
			return -1;
		start = (size_t)(nl - c->in) + 1;
	}
	memmove(c->in, c->in + start, c->in_len - start);
	c->in_len -= start;
	if (c->in_len >= IN_BUF_MAX) {
		char err[ERR_MAX];

		snprintf(err, sizeof(err),
			 "request too large (limit %u bytes per line); closing the connection",
			 HV_CTL_MAX_REQUEST);
		c->in_len = 0;
		c->closing = true;
		return reply_err(c, err);
	}
	return 0;
}

/* Write what we can; close the client when done and closing, or on error. */
static void
client_flush(struct hv_ctl_server *s, unsigned int idx)
{
	struct client *c = s->clients[idx];

	while (c->out_off < c->out_len) {
		ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n <= 0) {
			client_close(s, idx);
			return;
		}
		c->out_off += (size_t)n;
		c->progress_ms = now_ms();
	}
	if (c->out_off == c->out_len) {
		c->out_off = c->out_len = 0;
		if (c->closing) {
			client_close(s, idx);
			return;
		}
	}
	if (client_watch(s, idx, c->out_len > 0) < 0)
		client_close(s, idx);
}

static void
client_read(struct hv_ctl_server *s, unsigned int idx)
{
	struct client *c = s->clients[idx];
	ssize_t n;

	if (c->closing || c->out_len > 0)
		return; /* replies first */
	if (c->in_cap - c->in_len < IN_BUF_MIN && c->in_cap < IN_BUF_MAX) {
		size_t cap = c->in_cap ? c->in_cap * 2 : IN_BUF_MIN;
		char *nin;

		if (cap > IN_BUF_MAX)
			cap = IN_BUF_MAX;
		nin = realloc(c->in, cap);
		if (nin == NULL) {
			client_close(s, idx);
			return;
		}
		c->in = nin;
		c->in_cap = cap;
	}
	n = recv(c->fd, c->in + c->in_len, c->in_cap - c->in_len, MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return;
	if (n <= 0) {
		client_close(s, idx); /* EOF (all replies were written) or error */
		return;
	}
	c->in_len += (size_t)n;
	c->progress_ms = now_ms();
	if (client_lines(s, c) < 0) {
		client_close(s, idx);
		return;
	}
	client_flush(s, idx);
}

/* Whether the process pid has gid among its supplementary groups. */
static bool
pid_in_group(pid_t pid, gid_t gid)
{
	char path[64], line[4096];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (f == NULL)
		return false;
	while (!found && fgets(line, sizeof(line), f) != NULL) {
		char *p, *e;

		if (strncmp(line, "Groups:", 7) != 0)
			continue;
		for (p = line + 7;; p = e) {
			unsigned long g = strtoul(p, &e, 10);

			if (e == p)
				break;
			if ((gid_t)g == gid) {
				found = true;
				break;
			}
		}
		break;
	}
	fclose(f);
	return found;
}

/* Send a refusal on a fresh connection (its buffer is empty) and close it. */
static void
refuse(int fd, const char *why)
{
	cJSON *rep = cJSON_CreateObject();
	char *text = NULL;

	if (rep != NULL && cJSON_AddFalseToObject(rep, "ok") != NULL &&
	    cJSON_AddStringToObject(rep, "error", why) != NULL)
		text = cJSON_PrintUnformatted(rep);
	if (text != NULL) {
		size_t len = strlen(text);

		text[len] = '\n';
		if (send(fd, text, len + 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
			/* nothing more to do: we close anyway */
		}
	}
	cJSON_Delete(rep);
	free(text);
	close(fd);
}

static void
refuse_perm(int fd, uid_t uid, gid_t group)
{
	char why[128];

	if (group != HV_CTL_NO_GROUP)
		snprintf(why, sizeof(why),
			 "permission denied: uid %u is neither root nor in group %u",
			 (unsigned int)uid, (unsigned int)group);
	else
		snprintf(why, sizeof(why), "permission denied: uid %u is not root",
			 (unsigned int)uid);
	refuse(fd, why);
}

static void
server_accept(struct hv_ctl_server *s)
{
	unsigned int n, idx;

	for (n = 0; n < ACCEPT_MAX; n++) {
		struct epoll_event ev = {.events = EPOLLIN};
		struct ucred cred;
		socklen_t len = sizeof(cred);
		char why[160];
		struct client *c;
		int fd;

		fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return; /* EAGAIN, or out of fds: try again next poll */
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
			refuse(fd, "permission denied: cannot read peer credentials");
			continue;
		}
		if (!(cred.uid == 0 || cred.uid == s->euid ||
		      (s->group != HV_CTL_NO_GROUP &&
		       (cred.gid == s->group || pid_in_group(cred.pid, s->group))))) {
			refuse_perm(fd, cred.uid, s->group);
			continue;
		}
		for (idx = 0; idx < HV_CTL_MAX_CLIENTS; idx++)
			if (s->clients[idx] == NULL)
				break;
		if (idx == HV_CTL_MAX_CLIENTS) {
			snprintf(why, sizeof(why), "too many clients (limit %u)",
				 HV_CTL_MAX_CLIENTS);
			refuse(fd, why);
			continue;
		}
		c = calloc(1, sizeof(*c));
		if (c == NULL) {
			refuse(fd, "out of memory");
			continue;
		}
		c->fd = fd;
		c->progress_ms = now_ms();
		ev.data.u64 = idx;
		if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
			free(c);
			refuse(fd, "out of resources");
			continue;
		}
		s->clients[idx] = c;
	}
}

/* Drop clients that have held a partial request or unread replies too long. */
static void
server_sweep(struct hv_ctl_server *s)
{
	uint64_t now = now_ms();
	unsigned int idx;

	for (idx = 0; idx < HV_CTL_MAX_CLIENTS; idx++) {
		struct client *c = s->clients[idx];

		if (c != NULL && (c->in_len > 0 || c->out_len > 0) &&
		    now - c->progress_ms > HV_CTL_STALL_TIMEOUT_MS)
			client_close(s, idx);
	}
}

void
hv_ctl_server_poll(struct hv_ctl_server *s, int timeout_ms)
{
	struct epoll_event ev[EVENTS_MAX];
	int n, i;

	n = epoll_wait(s->epfd, ev, EVENTS_MAX, timeout_ms);
	for (i = 0; i < n; i++) {
		uint64_t tag = ev[i].data.u64;

		if (tag == LISTEN_TAG) {
			server_accept(s);
			continue;
		}
		/* An earlier event of this batch may have closed (or replaced) it. */
		if (tag >= HV_CTL_MAX_CLIENTS || s->clients[tag] == NULL)
			continue;
		if (s->clients[tag]->writing)
			client_flush(s, (unsigned int)tag);
		else
			client_read(s, (unsigned int)tag);
	}
	server_sweep(s);
}

int
hv_ctl_server_fd(const struct hv_ctl_server *s)
{
	return s->epfd;
}

/* Remove a stale socket file at path; -1 if it is live or not a socket. */
static int
clear_stale(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct stat st;
	int fd, rc;

	if (lstat(path, &st) < 0)
		return 0;
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(err, errlen, "%s exists and is not a socket", path);
		return -1;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	close(fd);
	if (rc == 0) {
		snprintf(err, errlen, "%s is in use by a running server", path);
		return -1;
	}
	if (unlink(path) < 0 && errno != ENOENT) {
		snprintf(err, errlen, "cannot remove stale %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

struct hv_ctl_server *
hv_ctl_server_create(const char *path, gid_t group, const struct hv_ctl_cmd *cmds,
		     void *ctx, char *err, size_t errlen)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = LISTEN_TAG};
	struct hv_ctl_server *s;
	struct stat st;
	bool bound = false;

	if (path == NULL || path[0] == '\0' || strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "bad socket path (empty or longer than %zu bytes)",
			 sizeof(sa.sun_path) - 1);
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->lfd = s->epfd = -1;
	s->group = group;
	s->euid = geteuid();
	s->cmds = cmds;
	s->ctx = ctx;
	memcpy(s->path, path, strlen(path) + 1);
	memcpy(sa.sun_path, path, strlen(path) + 1);

	if (clear_stale(path, err, errlen) < 0)
		goto fail;
	s->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s->lfd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		goto fail;
	}
	if (bind(s->lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		snprintf(err, errlen, "bind %s: %s", path, strerror(errno));
		goto fail;
	}
	bound = true;
	/*
	 * The file may briefly have the umask's mode; SO_PEERCRED is checked on
	 * every connection anyway, so that window grants nothing.
	 */
	if (chmod(path, 0660) < 0) {
		snprintf(err, errlen, "chmod %s: %s", path, strerror(errno));
		goto fail;
	}
	if (group != HV_CTL_NO_GROUP &&
	    chown(path, s->euid == 0 ? 0 : (uid_t)-1, group) < 0) {
		snprintf(err, errlen, "chown %s to group %u: %s", path, (unsigned int)group,
			 strerror(errno));
		goto fail;
	}
	if (stat(path, &st) < 0) {
		snprintf(err, errlen, "stat %s: %s", path, strerror(errno));
		goto fail;
	}
	s->sock_dev = st.st_dev;
	s->sock_ino = st.st_ino;
	if (listen(s->lfd, HV_CTL_MAX_CLIENTS) < 0) {
		snprintf(err, errlen, "listen %s: %s", path, strerror(errno));
		goto fail;
	}
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epfd < 0 || epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->lfd, &ev) < 0) {
		snprintf(err, errlen, "epoll: %s", strerror(errno));
		goto fail;
	}
	return s;
fail:
	if (bound)
		unlink(path);
	if (s->lfd >= 0)
		close(s->lfd);
	if (s->epfd >= 0)
		close(s->epfd);
	free(s);
	return NULL;
}

void
hv_ctl_server_destroy(struct hv_ctl_server *s)
{
	struct stat st;
	unsigned int idx;

	if (s == NULL)
		return;
	for (idx = 0; idx < HV_CTL_MAX_CLIENTS; idx++)
		client_close(s, idx);
	/* Unlink only our own socket, not one a newer server put there. */
	if (stat(s->path, &st) == 0 && st.st_dev == s->sock_dev && st.st_ino == s->sock_ino)
		unlink(s->path);
	close(s->lfd);
	close(s->epfd);
	free(s);
}
