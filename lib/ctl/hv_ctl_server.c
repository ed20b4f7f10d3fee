/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Server side of the control protocol, polled from the daemon's main loop.
 *
 * Single-threaded and non-blocking: one epoll set holds the listening socket,
 * every client and a "work" eventfd. A client that has complete request lines
 * buffered is "ready": each poll gives it one turn of at most turn_requests
 * requests, round robin, so that one client's pipeline cannot hold the thread
 * (which also runs MAC learning) or starve the others. A client is read from
 * only when it has no line left to run and no reply left to write, and its
 * requests stop running while it holds out_budget reply bytes: one that does
 * not read its replies costs at most that plus one reply. Reads and writes
 * never wait.
 */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "hv_ctl.h"
#include "hv_ctl_priv.h"

#define IN_BUF_MIN 4096
#define IN_BUF_MAX (HV_CTL_MAX_REQUEST + 1) /* a full line plus its '\n' */
#define EVENTS_MAX 32
#define ACCEPT_MAX 16             /* connections accepted per poll */
#define LISTEN_TAG UINT64_MAX     /* epoll data of the listening socket */
#define WORK_TAG (UINT64_MAX - 1) /* epoll data of the work eventfd */

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void
client_close(struct hv_ctl_server *s, unsigned int idx)
{
	struct client *c = s->clients[idx];

	if (c == NULL)
		return;
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	if (c->pass_fd >= 0)
		close(c->pass_fd);
	free(c->in);
	free(c->out);
	free(c);
	s->clients[idx] = NULL;
}

/* Watch for what the client needs next: EPOLLOUT while replies wait, EPOLLIN
 * when it has nothing buffered to run, nothing while it waits for a turn. */
static int
client_watch(struct hv_ctl_server *s, unsigned int idx)
{
	struct client *c = s->clients[idx];
	struct epoll_event ev = {.data.u64 = idx};

	if (hv_ctl_out_pending(c) > 0)
		ev.events = EPOLLOUT;
	else if (!c->ready && !c->closing)
		ev.events = EPOLLIN;
	if (c->events == ev.events)
		return 0;
	if (epoll_ctl(s->epfd, EPOLL_CTL_MOD, c->fd, &ev) < 0)
		return -1;
	c->events = ev.events;
	return 0;
}

/* Whether the client has a line to run and room for its reply. */
static bool
runnable(const struct hv_ctl_server *s, const struct client *c)
{
	return c->ready && !c->closing && hv_ctl_out_pending(c) < s->lim.out_budget;
}

/* One turn: run up to turn_requests complete lines, while the replies held
 * stay under out_budget. -1 when the client must be closed. */
static int
client_run(struct hv_ctl_server *s, struct client *c)
{
	unsigned int n = 0;
	size_t start = 0;
	char *nl = NULL;
	int rc;

	c->turn = s->turn;
	while (n < s->lim.turn_requests && hv_ctl_out_pending(c) < s->lim.out_budget &&
	       start < c->in_len && (nl = memchr(c->in + start, '\n', c->in_len - start)) != NULL) {
		size_t len = (size_t)(nl - (c->in + start));

		if (len > 0 && c->in[start + len - 1] == '\r')
			len--;
		rc = hv_ctl_dispatch(s, c, c->in + start, len);
		/* a descriptor is the request's it came with: not taken, it goes */
		if (c->pass_fd >= 0) {
			close(c->pass_fd);
			c->pass_fd = -1;
		}
		if (rc < 0)
			return -1;
		start = (size_t)(nl - c->in) + 1;
		c->line_ms = 0;
		n++;
	}
	memmove(c->in, c->in + start, c->in_len - start);
	c->in_len -= start;
	c->ready = c->in_len > 0 && memchr(c->in, '\n', c->in_len) != NULL;
	if (c->in_len > 0 && c->line_ms == 0)
		c->line_ms = now_ms();
	if (!c->ready && c->in_len >= IN_BUF_MAX) {
		char err[HV_CTL_ERR_MAX];

		snprintf(err, sizeof(err),
			 "request too large (limit %u bytes per line); closing the connection",
			 HV_CTL_MAX_REQUEST);
		c->in_len = 0;
		c->closing = true;
		return hv_ctl_reply_err(c, err);
	}
	return 0;
}

/* Write what we can; close the client when done and closing, or on error. */
static void
client_flush(struct hv_ctl_server *s, unsigned int idx)
{
	struct client *c = s->clients[idx];
	bool sent = false;

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
		sent = true;
	}
	if (c->out_off == c->out_len) {
		c->out_off = c->out_len = 0;
		if (c->closing) {
			client_close(s, idx);
			return;
		}
		if (sent && c->in_len == 0)
			c->idle_ms = c->progress_ms; /* answered: idle from now */
	}
	if (client_watch(s, idx) < 0)
		client_close(s, idx);
}

/* A turn for the client, then what can be written. */
static void
client_turn(struct hv_ctl_server *s, unsigned int idx)
{
	if (client_run(s, s->clients[idx]) < 0) {
		client_close(s, idx);
		return;
	}
	client_flush(s, idx);
}

/* Closes of passed descriptors that may wait, running at once; beyond, they leak (counted). */
#define CLOSERS_MAX 8
/* The kernel's SCM_MAX_FD: room for all a message carries, none dropped by truncation. */
#define PASS_FDS_MAX 253

static uint32_t closers_running;
static uint64_t fds_leaked;

/* the only kind a request may pass (hvctl passes one end of a socketpair) */
bool
hv_ctl_fd_is_unix_stream(int fd)
{
	int v = 0;
	socklen_t len = sizeof(v);

	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &v, &len) != 0 || v != AF_UNIX)
		return false;
	len = sizeof(v);
	return getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &len) == 0 && v == SOCK_STREAM;
}

static void *
closer_main(void *arg)
{
	close((int)(intptr_t)arg);
	__atomic_fetch_sub(&closers_running, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * Close a descriptor of any other kind off the control thread: its close may
 * wait on its peer (a FUSE file's flush, a TCP socket set to linger). With
 * CLOSERS_MAX such closes stuck already it is kept open and counted.
 * @return false when it leaked: the client that sent it is to be dropped.
 */
static bool
close_aside(int fd)
{
	pthread_attr_t attr;
	pthread_t t;
	bool started = false;

	if (__atomic_add_fetch(&closers_running, 1, __ATOMIC_ACQ_REL) <= CLOSERS_MAX &&
	    pthread_attr_init(&attr) == 0) {
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		started = pthread_create(&t, &attr, closer_main, (void *)(intptr_t)fd) == 0;
		pthread_attr_destroy(&attr);
	}
	if (started)
		return true;
	__atomic_fetch_sub(&closers_running, 1, __ATOMIC_RELEASE);
	if (__atomic_add_fetch(&fds_leaked, 1, __ATOMIC_RELAXED) % 1000 == 1)
		fprintf(stderr,
			"ctl: a passed descriptor left open: %d closes of others wait "
			"(%llu in all)\n",
			CLOSERS_MAX, (unsigned long long)fds_leaked);
	return false;
}

/*
 * recv() that keeps a descriptor passed with a connection's first bytes
 * (SCM_RIGHTS) for its first request, and only an AF_UNIX stream socket:
 * anything else, later or more is closed aside, never on this thread.
 * -1 with errno EBADMSG when one could not be: drop the client.
 */
static ssize_t
recv_fds(struct client *c, char *buf, size_t len)
{
	union {
		char buf[CMSG_SPACE(PASS_FDS_MAX * sizeof(int))];
		struct cmsghdr align;
	} cm;
	struct iovec iov = {.iov_base = buf, .iov_len = len};
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = cm.buf,
			    .msg_controllen = sizeof(cm.buf)};
	ssize_t n = recvmsg(c->fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	bool first = !c->read_once, all_closed = true;

	if (n < 0)
		return n;
	c->read_once = true;
	for (struct cmsghdr *h = CMSG_FIRSTHDR(&mh); h != NULL; h = CMSG_NXTHDR(&mh, h)) {
		size_t nfd;

		if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS)
			continue;
		nfd = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < nfd; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(h) + i * sizeof(int), sizeof(int));
			if (first && c->pass_fd < 0 && hv_ctl_fd_is_unix_stream(fd))
				c->pass_fd = fd;
			else if (!close_aside(fd))
				all_closed = false;
		}
	}
	if (!all_closed) {
		errno = EBADMSG;
		return -1;
	}
	return n;
}

static void
client_read(struct hv_ctl_server *s, unsigned int idx)
{
	struct client *c = s->clients[idx];
	ssize_t n;

	if (c->closing || c->ready || hv_ctl_out_pending(c) > 0)
		return; /* lines to run and replies first */
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
	n = recv_fds(c, c->in + c->in_len, c->in_cap - c->in_len);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return;
	if (n <= 0) {
		client_close(s, idx); /* EOF (all replies were written) or error */
		return;
	}
	c->in_len += (size_t)n;
	client_turn(s, idx);
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

/* Send an error line without waiting: nothing else is queued on fd. */
static void
send_error_now(int fd, const char *why)
{
	char msg[HV_CTL_ERR_MAX];
	char *text;

	snprintf(msg, sizeof(msg), "%s", why);
	text = hv_ctl_error_text(msg);
	if (text != NULL) {
		size_t len = strlen(text);

		text[len] = '\n';
		if (send(fd, text, len + 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
			/* nothing more to do: the caller closes anyway */
		}
	}
	free(text);
}

static void
refuse(int fd, const char *why)
{
	send_error_now(fd, why);
	close(fd);
}

static void
refuse_perm(const struct hv_ctl_server *s, int fd, uid_t uid)
{
	char why[160];

	if (s->group != HV_CTL_NO_GROUP || s->admin_group != HV_CTL_NO_GROUP)
		snprintf(why, sizeof(why),
			 "permission denied: uid %u is neither root nor in group %d or %d",
			 (unsigned int)uid, s->group == HV_CTL_NO_GROUP ? -1 : (int)s->group,
			 s->admin_group == HV_CTL_NO_GROUP ? -1 : (int)s->admin_group);
	else
		snprintf(why, sizeof(why), "permission denied: uid %u is not root",
			 (unsigned int)uid);
	refuse(fd, why);
}

/* The peer's role, or -1 when it may not connect. */
static int
peer_role(const struct hv_ctl_server *s, const struct ucred *cred)
{
	if (cred->uid == 0 || cred->uid == s->euid)
		return HV_CTL_ROLE_ROOT;
	if (s->admin_group != HV_CTL_NO_GROUP &&
	    (cred->gid == s->admin_group || pid_in_group(cred->pid, s->admin_group)))
		return HV_CTL_ROLE_ADMIN;
	if (s->group != HV_CTL_NO_GROUP &&
	    (cred->gid == s->group || pid_in_group(cred->pid, s->group)))
		return HV_CTL_ROLE_READ;
	return -1;
}

/* A free slot for a client of this role, or HV_CTL_MAX_CLIENTS. */
static unsigned int
free_slot(const struct hv_ctl_server *s, int role)
{
	unsigned int idx, found = HV_CTL_MAX_CLIENTS, nfree = 0;

	for (idx = 0; idx < HV_CTL_MAX_CLIENTS; idx++)
		if (s->clients[idx] == NULL && nfree++ == 0)
			found = idx;
	/* the last slots are root's, so that the operator can always get in */
	if (role != HV_CTL_ROLE_ROOT && nfree <= HV_CTL_ROOT_SLOTS)
		return HV_CTL_MAX_CLIENTS;
	return found;
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
		int fd, role;

		fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return; /* EAGAIN, or out of fds: try again next poll */
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
			refuse(fd, "permission denied: cannot read peer credentials");
			continue;
		}
		role = peer_role(s, &cred);
		if (role < 0) {
			refuse_perm(s, fd, cred.uid);
			continue;
		}
		idx = free_slot(s, role);
		if (idx == HV_CTL_MAX_CLIENTS) {
			if (role == HV_CTL_ROLE_ROOT)
				snprintf(why, sizeof(why), "too many clients (limit %u)",
					 HV_CTL_MAX_CLIENTS);
			else
				snprintf(why, sizeof(why),
					 "too many clients (limit %u; the last %u kept for root)",
					 HV_CTL_MAX_CLIENTS, HV_CTL_ROOT_SLOTS);
			refuse(fd, why);
			continue;
		}
		c = calloc(1, sizeof(*c));
		if (c == NULL) {
			refuse(fd, "out of memory");
			continue;
		}
		c->fd = fd;
		c->pass_fd = -1;
		c->peer = (struct hv_ctl_peer){
			.uid = cred.uid,
			.gid = cred.gid,
			.pid = cred.pid,
			.role = (enum hv_ctl_role)role,
		};
		c->events = EPOLLIN;
		c->progress_ms = c->idle_ms = now_ms();
		ev.data.u64 = idx;
		if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
			free(c);
			refuse(fd, "out of resources");
			continue;
		}
		s->clients[idx] = c;
	}
}

/* Drop a client, telling it why when nothing else is queued for it. */
static void
client_drop(struct hv_ctl_server *s, unsigned int idx, const char *why)
{
	if (hv_ctl_out_pending(s->clients[idx]) == 0)
		send_error_now(s->clients[idx]->fd, why);
	client_close(s, idx);
}

/* Bound the life of clients that do not move: idle ones, partial requests
 * (however they dribble), unread replies. */
static void
server_sweep(struct hv_ctl_server *s)
{
	uint64_t now = now_ms();
	unsigned int idx;
	char why[128];

	for (idx = 0; idx < HV_CTL_MAX_CLIENTS; idx++) {
		struct client *c = s->clients[idx];

		if (c == NULL)
			continue;
		if (hv_ctl_out_pending(c) > 0) {
			if (now - c->progress_ms > s->lim.stall_ms)
				client_close(s, idx); /* however many requests it has queued */
		} else if (c->ready) {
			continue; /* being served */
		} else if (c->in_len > 0) {
			if (now - c->line_ms > s->lim.request_ms) {
				snprintf(
					why, sizeof(why),
					"request not complete within %u ms; closing the connection",
					s->lim.request_ms);
				client_drop(s, idx, why);
			}
		} else if (now - c->idle_ms > s->lim.idle_ms) {
			snprintf(why, sizeof(why), "idle for %u ms; closing the connection",
				 s->lim.idle_ms);
			client_drop(s, idx, why);
		}
	}
}

/* Give every ready client that has room a turn (one per poll), round robin;
 * keep the work eventfd readable while some still can run. */
static void
server_turns(struct hv_ctl_server *s)
{
	unsigned int i, start = s->rr, more = 0;
	uint64_t v;

	for (i = 0; i < HV_CTL_MAX_CLIENTS; i++) {
		unsigned int idx = (start + i) % HV_CTL_MAX_CLIENTS;
		struct client *c = s->clients[idx];

		if (c == NULL || !runnable(s, c) || c->turn == s->turn)
			continue;
		client_turn(s, idx);
	}
	s->rr = (start + 1) % HV_CTL_MAX_CLIENTS;
	for (i = 0; i < HV_CTL_MAX_CLIENTS; i++)
		if (s->clients[i] != NULL && runnable(s, s->clients[i]))
			more++;
	if (more > 0 && !s->work_set) {
		v = 1;
		s->work_set = write(s->work_fd, &v, sizeof(v)) == sizeof(v);
	} else if (more == 0 && s->work_set) {
		s->work_set = !(read(s->work_fd, &v, sizeof(v)) == sizeof(v));
	}
}

void
hv_ctl_server_poll(struct hv_ctl_server *s, int timeout_ms)
{
	struct epoll_event ev[EVENTS_MAX];
	int n, i;

	/* ready clients are work: do not wait for the sockets then */
	n = epoll_wait(s->epfd, ev, EVENTS_MAX, s->work_set ? 0 : timeout_ms);
	s->turn++;
	for (i = 0; i < n; i++) {
		uint64_t tag = ev[i].data.u64;
		struct client *c;

		if (tag == LISTEN_TAG) {
			server_accept(s);
			continue;
		}
		if (tag == WORK_TAG)
			continue; /* server_turns() below */
		/* An earlier event of this batch may have closed (or replaced) it. */
		if (tag >= HV_CTL_MAX_CLIENTS || s->clients[tag] == NULL)
			continue;
		c = s->clients[tag];
		if (c->events == EPOLLOUT)
			client_flush(s, (unsigned int)tag);
		else if (c->events == EPOLLIN)
			client_read(s, (unsigned int)tag);
		else if (ev[i].events & (EPOLLHUP | EPOLLERR))
			client_close(s, (unsigned int)tag); /* gone while waiting for a turn */
	}
	server_turns(s);
	server_sweep(s);
}

int
hv_ctl_server_fd(const struct hv_ctl_server *s)
{
	return s->epfd;
}

int
hv_ctl_server_set_admin_group(struct hv_ctl_server *s, gid_t group, char *err, size_t errlen)
{
	if (group != HV_CTL_NO_GROUP && s->group == HV_CTL_NO_GROUP &&
	    chown(s->path, s->euid == 0 ? 0 : (uid_t)-1, group) < 0) {
		snprintf(err, errlen, "chown %s to group %u: %s", s->path, (unsigned int)group,
			 strerror(errno));
		return -1;
	}
	s->admin_group = group;
	return 0;
}

void
hv_ctl_server_set_limits(struct hv_ctl_server *s, const struct hv_ctl_limits *lim)
{
	s->lim = *lim;
	if (s->lim.turn_requests == 0)
		s->lim.turn_requests = 1;
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
hv_ctl_server_create(const char *path, gid_t group, const struct hv_ctl_cmd *cmds, void *ctx,
		     char *err, size_t errlen)
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
	s->lfd = s->epfd = s->work_fd = -1;
	s->group = group;
	s->admin_group = HV_CTL_NO_GROUP;
	s->lim = (struct hv_ctl_limits){
		.idle_ms = HV_CTL_IDLE_TIMEOUT_MS,
		.request_ms = HV_CTL_REQUEST_TIMEOUT_MS,
		.stall_ms = HV_CTL_STALL_TIMEOUT_MS,
		.out_budget = HV_CTL_OUT_BUDGET,
		.turn_requests = HV_CTL_TURN_REQUESTS,
	};
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
	if (group != HV_CTL_NO_GROUP && chown(path, s->euid == 0 ? 0 : (uid_t)-1, group) < 0) {
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
	s->work_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	ev.data.u64 = WORK_TAG;
	if (s->work_fd < 0 || epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->work_fd, &ev) < 0) {
		snprintf(err, errlen, "eventfd: %s", strerror(errno));
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
	if (s->work_fd >= 0)
		close(s->work_fd);
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
	close(s->work_fd);
	free(s);
}
