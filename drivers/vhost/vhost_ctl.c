/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control thread: vhost-user sockets (server and client mode), message
 * assembly from non-blocking streams, and the port table.
 *
 * One thread serves every port through epoll; a frontend that stalls mid-message
 * holds only its own buffer, never the thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf_dyn.h>

#include "vhost_internal.h"

#define RETRY_MIN_MS 50
#define RETRY_MAX_MS 1000
#define CTL_TICK_MS 100
/*
 * How often the control thread looks for a callfd write that a frontend
 * blocked (memory reads only): the most such a write holds a polling thread.
 */
#define CTL_CALL_CHECK_MS 10
/* Messages of one frontend handled per wakeup, before the other ports' events. */
#define CTL_MSG_BUDGET 32

enum ev_kind {
	EV_WAKE,
	EV_LISTEN,
	EV_CONN
};

static struct {
	pthread_mutex_t lock;
	pthread_t thread;
	bool running;
	int epfd;
	int wakefd;
	struct hv_vhost_port *ports[HV_VHOST_MAX_PORTS];
	uint32_t gen[HV_VHOST_MAX_PORTS];
} ctl = {.lock = PTHREAD_MUTEX_INITIALIZER, .epfd = -1, .wakefd = -1};

extern int hv_vhost_vnet_hdr_offset;
extern uint64_t hv_vhost_vnet_hdr_flag;

static const char *const drop_names[] = {
#define HV_X(id, name) [HV_VHOST_DROP_##id] = name,
	HV_VHOST_DROP_REASONS(HV_X)
#undef HV_X
};

const char *
hv_vhost_drop_name(enum hv_vhost_drop reason)
{
	if (reason < HV_VHOST_DROP__FIRST || reason >= HV_VHOST_DROP__MAX)
		return "unknown";
	return drop_names[reason];
}

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* epoll tag: which port (slot and generation, so a stale event finds nothing) and what. */
static uint64_t
ev_tag(const struct hv_vhost_port *port, enum ev_kind kind)
{
	return ((uint64_t)ctl.gen[port->slot] << 32) | ((uint64_t)port->slot << 2) | kind;
}

static struct hv_vhost_port *
ev_port(uint64_t tag)
{
	uint32_t slot = (uint32_t)(tag & 0xffffffff) >> 2;

	if (slot >= HV_VHOST_MAX_PORTS || ctl.ports[slot] == NULL ||
	    ctl.gen[slot] != (uint32_t)(tag >> 32))
		return NULL;
	return ctl.ports[slot];
}

static int
ep_add(int fd, uint64_t tag)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = tag};

	return epoll_ctl(ctl.epfd, EPOLL_CTL_ADD, fd, &ev);
}

static void
ep_del(int fd)
{
	epoll_ctl(ctl.epfd, EPOLL_CTL_DEL, fd, NULL);
}

/* Forget a half-received message; its fds may be of any kind (vhost_fd.c). */
static void
rxbuf_reset(struct hv_vhost_port *port)
{
	struct vhost_rxbuf *rx = &port->rx;

	for (unsigned int i = 0; i < rx->nfds; i++)
		vhost_port_fd_drop(port, &rx->fds[i]);
	rx->nfds = 0;
	rx->got = 0;
}

/* ---- connection lifecycle ---- */

static void
conn_attach(struct hv_vhost_port *port, int fd)
{
	if (ep_add(fd, ev_tag(port, EV_CONN)) != 0) {
		VHOST_LOG(ERR, port, "epoll: %s", strerror(errno));
		close(fd);
		return;
	}
	port->conn_fd = fd;
	port->connected = true;
	port->connections++;
	port->retry_delay_ms = RETRY_MIN_MS;
	VHOST_LOG(INFO, port, "frontend connected on %s", port->path);
}

/*
 * A frontend that blocked a callfd write is gone: take no other for a while,
 * since each time costs the polling thread, and the ports it serves.
 */
static void
conn_hold_off_if_blocked(struct hv_vhost_port *port)
{
	if (!__atomic_exchange_n(&vhost_call_blocked[port->slot], false, __ATOMIC_ACQ_REL))
		return;
	port->refuse_until_ms = now_ms() + HV_VHOST_CALL_BLOCKED_HOLDOFF_MS;
	if (port->mode == HV_VHOST_CLIENT)
		port->retry_at_ms = RTE_MAX(port->retry_at_ms, port->refuse_until_ms);
}

static void
conn_close(struct hv_vhost_port *port, const char *why)
{
	if (port->conn_fd < 0)
		return;
	VHOST_LOG(INFO, port, "frontend disconnected: %s", why);
	ep_del(port->conn_fd);
	close(port->conn_fd);
	port->conn_fd = -1;
	port->connected = false;
	rxbuf_reset(port);
	port->fd_refused = false;
	/* Rings stop and guest memory is unmapped before anyone else can reuse it. */
	vhost_dev_reset(port);
	if (port->mode == HV_VHOST_CLIENT)
		port->retry_at_ms = now_ms() + port->retry_delay_ms;
	/*
	 * The rings are left and the memory unmapped: whether this frontend
	 * blocked a callfd write is final, and a fault in its memory is history.
	 */
	conn_hold_off_if_blocked(port);
	__atomic_store_n(&vhost_mem_lost[port->slot], false, __ATOMIC_RELEASE);
}

static void
client_try_connect(struct hv_vhost_port *port)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd;

	/* bounds the fds a frontend can leave with the reaper: see server_accept() */
	if (vhost_fd_reaping((uint32_t)port->slot) > 0)
		goto retry;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		goto retry;
	memcpy(sa.sun_path, port->path, sizeof(port->path));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		close(fd);
		goto retry;
	}
	conn_attach(port, fd);
	return;
retry:
	/* The frontend is not there (yet, or is restarting): back off. */
	port->retry_at_ms = now_ms() + port->retry_delay_ms;
	port->retry_delay_ms = RTE_MIN(port->retry_delay_ms * 2, (uint32_t)RETRY_MAX_MS);
}

static void
server_accept(struct hv_vhost_port *port)
{
	int fd = accept4(port->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd < 0)
		return;
	if (port->connected) {
		HV_LOG_RL(&port->ctl_rl, WARNING,
			  "vhost %s: second frontend refused: one is connected", port->name);
		close(fd);
		return;
	}
	if (now_ms() < port->refuse_until_ms) {
		HV_LOG_RL(&port->ctl_rl, WARNING,
			  "vhost %s: frontend refused: the last one blocked an interrupt",
			  port->name);
		close(fd);
		return;
	}
	if (vhost_fd_reaping((uint32_t)port->slot) > 0) {
		HV_LOG_RL(&port->ctl_rl, WARNING,
			  "vhost %s: frontend refused: an fd the last one sent is not closed yet",
			  port->name);
		close(fd);
		return;
	}
	conn_attach(port, fd);
}

static void
conn_reply(struct hv_vhost_port *port, const struct vhost_user_msg *reply, size_t len)
{
	struct iovec iov[2] = {
		{.iov_base = (void *)&reply->hdr, .iov_len = sizeof(reply->hdr)},
		{.iov_base = (void *)&reply->payload, .iov_len = len - sizeof(reply->hdr)},
	};
	struct msghdr mh = {.msg_iov = iov, .msg_iovlen = 2};
	ssize_t n = sendmsg(port->conn_fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);

	/* A frontend that does not read its replies loses the connection. */
	if (n != (ssize_t)len)
		conn_close(port, "reply not sent");
}

static void
conn_dispatch(struct hv_vhost_port *port)
{
	struct vhost_rxbuf *rx = &port->rx;
	struct vhost_user_msg reply;
	size_t reply_len;
	unsigned int nfds = rx->nfds;
	int rc;

	/* the handler owns the fds from here on */
	rx->nfds = 0;
	rx->got = 0;
	rc = vhost_msg_dispatch(port, &rx->msg, rx->fds, nfds, &reply, &reply_len);
	if (reply_len > 0) {
		conn_reply(port, &reply, reply_len);
		if (!port->connected)
			return;
	}
	if (rc != 0) {
		char why[96];

		if (port->fd_refused)
			snprintf(why, sizeof(why),
				 "it sent an fd that is neither an eventfd nor "
				 "on a memory file system");
		else
			snprintf(why, sizeof(why), "bad %s message",
				 vhost_msg_name(rx->msg.hdr.request));
		conn_close(port, why);
	}
}

/* Keep the fds that came with a chunk; false if there were too many. */
static bool
conn_take_fds(struct hv_vhost_port *port, struct msghdr *mh)
{
	struct vhost_rxbuf *rx = &port->rx;
	bool ok = !(mh->msg_flags & MSG_CTRUNC);

	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c != NULL; c = CMSG_NXTHDR(mh, c)) {
		int *fds = (int *)CMSG_DATA(c);
		size_t n;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < n; i++) {
			if (rx->nfds < RTE_DIM(rx->fds)) {
				rx->fds[rx->nfds++] = fds[i];
			} else {
				int fd = fds[i];

				vhost_port_fd_drop(port, &fd);
				ok = false;
			}
		}
	}
	return ok;
}

static void
conn_readable(struct hv_vhost_port *port)
{
	struct vhost_rxbuf *rx = &port->rx;
	const size_t hdr = sizeof(struct vhost_user_hdr);
	unsigned int handled = 0;

	/*
	 * A frontend that floods us waits for its next turn after a few
	 * messages (epoll is level-triggered): the other ports get theirs.
	 */
	while (port->connected && handled < CTL_MSG_BUDGET) {
		char cbuf[CMSG_SPACE(sizeof(int) * VHOST_MEMORY_BASELINE_NREGIONS)];
		size_t want = rx->got < hdr ? hdr - rx->got : hdr + rx->msg.hdr.size - rx->got;
		uint8_t *dst = rx->got < hdr ? (uint8_t *)&rx->msg.hdr + rx->got
					     : (uint8_t *)&rx->msg.payload + (rx->got - hdr);
		struct iovec iov = {.iov_base = dst, .iov_len = want};
		struct msghdr mh = {.msg_iov = &iov,
				    .msg_iovlen = 1,
				    .msg_control = cbuf,
				    .msg_controllen = sizeof(cbuf)};
		ssize_t n;

		if (want == 0) {
			conn_dispatch(port);
			handled++;
			continue;
		}
		n = recvmsg(port->conn_fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n <= 0) {
			conn_close(port, n == 0 ? "closed by the frontend" : strerror(errno));
			return;
		}
		if (!conn_take_fds(port, &mh)) {
			conn_close(port, "too many fds in a message");
			return;
		}
		rx->got += (size_t)n;
		if (rx->got == hdr && rx->msg.hdr.size > sizeof(rx->msg.payload)) {
			VHOST_LOG(ERR, port, "message %u: payload of %u bytes is too large",
				  rx->msg.hdr.request, rx->msg.hdr.size);
			conn_close(port, "oversized message");
			return;
		}
		if (rx->got == hdr + rx->msg.hdr.size) {
			conn_dispatch(port);
			handled++;
		}
	}
}

/* ---- the thread ---- */

static void
ctl_event(uint64_t tag)
{
	struct hv_vhost_port *port;

	if ((tag & 3) == EV_WAKE) {
		uint64_t v;

		if (read(ctl.wakefd, &v, sizeof(v)) < 0)
			return;
		return;
	}
	port = ev_port(tag);
	if (port == NULL)
		return; /* the port went away after epoll_wait() */
	if ((tag & 3) == EV_LISTEN)
		server_accept(port);
	else if ((tag & 3) == EV_CONN && port->connected)
		conn_readable(port);
}

/*
 * Cut short the callfd writes frontends blocked, and drop those frontends
 * (their rings are stopped already): each time costs the polling thread, and
 * every port it serves, until the next look. Without the control lock but
 * to drop one: the polling threads take it to sleep on kicks.
 */
static void
ctl_check_calls(void)
{
	uint32_t slots = __atomic_load_n(&vhost_call_slots, __ATOMIC_ACQUIRE);

	vhost_call_rescue_all();
	for (uint32_t s = 0; s < slots; s++) {
		struct hv_vhost_port *port;

		if (!__atomic_load_n(&vhost_call_blocked[s], __ATOMIC_ACQUIRE) &&
		    !__atomic_load_n(&vhost_mem_lost[s], __ATOMIC_ACQUIRE))
			continue;
		pthread_mutex_lock(&ctl.lock);
		port = ctl.ports[s];
		if (port == NULL) {
			/* the port went away: its flags are history */
			__atomic_store_n(&vhost_call_blocked[s], false, __ATOMIC_RELAXED);
			__atomic_store_n(&vhost_mem_lost[s], false, __ATOMIC_RELAXED);
			pthread_mutex_unlock(&ctl.lock);
			continue;
		}
		if (__atomic_exchange_n(&vhost_mem_lost[s], false, __ATOMIC_ACQ_REL) &&
		    port->connected) {
			VHOST_LOG(ERR, port, "guest memory shrank under us: frontend dropped");
			conn_close(port, "it shrank its guest memory");
		}
		if (port->connected && __atomic_load_n(&vhost_call_blocked[s], __ATOMIC_ACQUIRE))
			conn_close(port, "it blocked an interrupt (callfd) write");
		else
			conn_hold_off_if_blocked(port);
		pthread_mutex_unlock(&ctl.lock);
	}
}

static void
ctl_tick(void)
{
	uint64_t now = now_ms();

	for (unsigned int i = 0; i < HV_VHOST_MAX_PORTS; i++) {
		struct hv_vhost_port *port = ctl.ports[i];

		if (port == NULL)
			continue;
		vhost_dev_drain_kicks(port);
		if (port->mode == HV_VHOST_CLIENT && !port->connected && now >= port->retry_at_ms)
			client_try_connect(port);
	}
}

static void *
ctl_thread(void *arg)
{
	struct epoll_event evs[16];
	uint64_t next_tick = 0;

	RTE_SET_USED(arg);
	while (__atomic_load_n(&ctl.running, __ATOMIC_ACQUIRE)) {
		int n = epoll_wait(ctl.epfd, evs, RTE_DIM(evs), CTL_CALL_CHECK_MS);
		uint64_t now;

		ctl_check_calls();
		now = now_ms();
		if (n <= 0 && now < next_tick)
			continue;
		pthread_mutex_lock(&ctl.lock);
		for (int i = 0; i < n; i++)
			ctl_event(evs[i].data.u64);
		ctl_tick();
		next_tick = now + CTL_TICK_MS;
		pthread_mutex_unlock(&ctl.lock);
	}
	return NULL;
}

static void
ctl_wake(void)
{
	uint64_t one = 1;

	if (write(ctl.wakefd, &one, sizeof(one)) < 0)
		HV_LOG(WARNING, "vhost: cannot wake the control thread");
}

int
hv_vhost_init(unsigned int flags)
{
	int rc = 0;

	if (flags & ~HV_VHOST_INIT_SIGNALS)
		return -EINVAL;
	if (ctl.running)
		return -EALREADY;
	/* the offload metadata of frames is lib/offload's dynfield */
	rc = hv_offload_mbuf_register();
	if (rc != 0)
		return rc;
	hv_vhost_vnet_hdr_offset = hv_offload_hdr_offset;
	hv_vhost_vnet_hdr_flag = hv_offload_hdr_flag;
	/* signals are the application's unless it hands them over */
	if (flags & HV_VHOST_INIT_CALL_SIGNAL)
		rc = vhost_call_signal_setup();
	if (rc == 0 && (flags & HV_VHOST_INIT_SIGBUS_GUARD))
		rc = vhost_guard_setup();
	if (rc != 0)
		return rc;
	if (vhost_asym_fence_setup() != 0)
		HV_LOG(INFO, "vhost: no expedited membarrier; the data path fences on every burst");
	ctl.epfd = epoll_create1(EPOLL_CLOEXEC);
	ctl.wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (ctl.epfd < 0 || ctl.wakefd < 0 || ep_add(ctl.wakefd, EV_WAKE) != 0) {
		rc = -errno;
		goto fail;
	}
	ctl.running = true;
	rc = rte_ctrl_thread_create(&ctl.thread, "hv-vhost-ctl", NULL, ctl_thread, NULL);
	if (rc != 0) {
		ctl.running = false;
		goto fail;
	}
	return 0;
fail:
	if (ctl.epfd >= 0)
		close(ctl.epfd);
	if (ctl.wakefd >= 0)
		close(ctl.wakefd);
	ctl.epfd = ctl.wakefd = -1;
	return rc;
}

void
hv_vhost_fini(void)
{
	if (!ctl.running)
		return;
	__atomic_store_n(&ctl.running, false, __ATOMIC_RELEASE);
	ctl_wake();
	pthread_join(ctl.thread, NULL);
	close(ctl.epfd);
	close(ctl.wakefd);
	ctl.epfd = ctl.wakefd = -1;
}

/* ---- ports ---- */

static int
conf_check(const struct hv_vhost_port_conf *conf)
{
	uint64_t f = conf->features ? conf->features : HV_VHOST_FEATURES_DEFAULT;

	if (conf->name == NULL || conf->name[0] == '\0' ||
	    strlen(conf->name) >= sizeof(((struct hv_vhost_port *)0)->name))
		return -EINVAL;
	if (conf->path == NULL || conf->path[0] == '\0' ||
	    strlen(conf->path) >= sizeof(((struct sockaddr_un *)0)->sun_path))
		return -EINVAL;
	if (conf->mode != HV_VHOST_SERVER && conf->mode != HV_VHOST_CLIENT)
		return -EINVAL;
	if (conf->queue_pairs < 1 || conf->queue_pairs > HV_VHOST_MAX_QUEUE_PAIRS)
		return -EINVAL;
	if ((f & ~HV_VHOST_FEATURES_SUPPORTED) || conf->mp == NULL)
		return -EINVAL;
	if (conf->mem_limit > HV_VHOST_MEM_LIMIT_MAX)
		return -EINVAL;
	if (conf->sock_perm & ~(mode_t)0777)
		return -EINVAL;
	return 0;
}

/* A socket file left by a dead process is removed; a live one is not ours to take. */
static int
server_path_free(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct stat st;
	int fd, rc;

	if (lstat(path, &st) != 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode))
		return -EEXIST;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	strcpy(sa.sun_path, path);
	rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	close(fd);
	if (rc == 0)
		return -EADDRINUSE;
	return unlink(path) == 0 ? 0 : -errno;
}

static int
server_listen(struct hv_vhost_port *port, const struct hv_vhost_port_conf *conf)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd, rc;

	rc = server_path_free(port->path);
	if (rc != 0)
		return rc;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	strcpy(sa.sun_path, port->path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	/*
	 * Owner and mode before listen(): until then a connect is refused. Not
	 * through a symlink: one swapped in for the socket must not hand a
	 * root-owned file to the port's owner.
	 */
	if ((conf->sock_chown && lchown(port->path, conf->sock_uid, conf->sock_gid) != 0) ||
	    (conf->sock_perm != 0 &&
	     fchmodat(AT_FDCWD, port->path, conf->sock_perm, AT_SYMLINK_NOFOLLOW) != 0) ||
	    listen(fd, 4) != 0) {
		rc = -errno;
		close(fd);
		unlink(port->path);
		return rc;
	}
	port->listen_fd = fd;
	if (ep_add(fd, ev_tag(port, EV_LISTEN)) != 0) {
		rc = -errno;
		close(fd);
		unlink(port->path);
		port->listen_fd = -1;
		return rc;
	}
	return 0;
}

struct hv_vhost_port *
hv_vhost_port_create(const struct hv_vhost_port_conf *conf)
{
	struct hv_vhost_port *port;
	int rc, slot = -1;

	rc = conf_check(conf);
	if (rc != 0) {
		rte_errno = -rc;
		return NULL;
	}
	if (!ctl.running) {
		rte_errno = ENODEV;
		return NULL;
	}
	port = calloc(1, sizeof(*port));
	if (port == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	snprintf(port->name, sizeof(port->name), "%s", conf->name);
	snprintf(port->path, sizeof(port->path), "%s", conf->path);
	port->mode = conf->mode;
	port->queue_pairs = conf->queue_pairs;
	port->offered_features = conf->features ? conf->features : HV_VHOST_FEATURES_DEFAULT;
	port->mp = conf->mp;
	port->borrow = conf->borrow;
	port->mem_limit = conf->mem_limit ? conf->mem_limit : HV_VHOST_MEM_LIMIT_DEFAULT;
	port->listen_fd = port->conn_fd = -1;
	port->retry_delay_ms = RETRY_MIN_MS;
	vhost_dev_init(port);

	pthread_mutex_lock(&ctl.lock);
	for (int i = 0; i < HV_VHOST_MAX_PORTS; i++) {
		if (ctl.ports[i] == NULL) {
			slot = i;
			break;
		}
	}
	if (slot < 0) {
		rc = -ENOSPC;
		goto fail;
	}
	port->slot = slot;
	ctl.gen[slot]++;
	/* a frontend of the slot's last port may have blocked a write: not this one's */
	__atomic_store_n(&vhost_call_blocked[slot], false, __ATOMIC_RELAXED);
	__atomic_store_n(&vhost_mem_lost[slot], false, __ATOMIC_RELAXED);
	vhost_dev_watch_calls(port);
	if ((uint32_t)slot >= vhost_call_slots)
		__atomic_store_n(&vhost_call_slots, (uint32_t)slot + 1, __ATOMIC_RELEASE);
	if (port->mode == HV_VHOST_SERVER) {
		rc = server_listen(port, conf);
		if (rc != 0)
			goto fail;
	} else {
		client_try_connect(port);
	}
	ctl.ports[slot] = port;
	pthread_mutex_unlock(&ctl.lock);
	VHOST_LOG(INFO, port, "%s on %s, %u queue pair(s), features 0x%" PRIx64,
		  port->mode == HV_VHOST_SERVER ? "listening" : "connecting", port->path,
		  port->queue_pairs, port->offered_features);
	return port;
fail:
	if (port->conn_fd >= 0) {
		ep_del(port->conn_fd);
		close(port->conn_fd);
	}
	pthread_mutex_unlock(&ctl.lock);
	free(port);
	rte_errno = -rc;
	return NULL;
}

void
hv_vhost_port_destroy(struct hv_vhost_port *port)
{
	if (port == NULL)
		return;
	pthread_mutex_lock(&ctl.lock);
	conn_close(port, "port destroyed");
	vhost_dev_reset(port);
	if (port->listen_fd >= 0) {
		ep_del(port->listen_fd);
		close(port->listen_fd);
		unlink(port->path);
	}
	ctl.ports[port->slot] = NULL;
	ctl.gen[port->slot]++;
	pthread_mutex_unlock(&ctl.lock);
	free(port);
}

/* ---- queries ---- */

void
hv_vhost_set_irq_hook(struct hv_vhost_port *port, hv_vhost_irq_hook_t *hook, void *ctx)
{
	pthread_mutex_lock(&ctl.lock);
	for (unsigned int i = 0; i < HV_VHOST_MAX_VRINGS; i++)
		vring_pause(&port->vr[i]);
	port->irq_hook = hook;
	port->irq_ctx = ctx;
	for (unsigned int i = 0; i < 2u * port->queue_pairs; i++)
		vring_try_start(port, &port->vr[i]);
	pthread_mutex_unlock(&ctl.lock);
}

int
hv_vhost_kick_fd(struct hv_vhost_port *port, uint16_t qp, enum hv_vhost_dir dir)
{
	struct hv_vring *vr = vring_qp(port, qp, dir);
	int fd = -1;

	if (vr == NULL)
		return -1;
	/* under the lock: the control thread replaces and closes kick fds */
	pthread_mutex_lock(&ctl.lock);
	if (vr->kickfd >= 0)
		fd = fcntl(vr->kickfd, F_DUPFD_CLOEXEC, 0);
	pthread_mutex_unlock(&ctl.lock);
	return fd;
}

bool
hv_vhost_port_connected(const struct hv_vhost_port *port)
{
	return __atomic_load_n(&port->connected, __ATOMIC_RELAXED);
}

bool
hv_vhost_queue_ready(const struct hv_vhost_port *port, uint16_t qp)
{
	if (qp >= port->queue_pairs)
		return false;
	return __atomic_load_n(&port->vr[2 * qp].ready, __ATOMIC_ACQUIRE) &&
	       __atomic_load_n(&port->vr[2 * qp + 1].ready, __ATOMIC_ACQUIRE);
}

uint64_t
hv_vhost_port_features(const struct hv_vhost_port *port)
{
	return __atomic_load_n(&port->features, __ATOMIC_RELAXED);
}

uint64_t
hv_vhost_port_connections(const struct hv_vhost_port *port)
{
	return __atomic_load_n(&port->connections, __ATOMIC_RELAXED);
}

int
hv_vhost_vring_stats(const struct hv_vhost_port *port, uint16_t qp, enum hv_vhost_dir dir,
		     struct hv_vhost_vring_stats *out)
{
	/* vring_qp() only reads the port */
	const struct hv_vring *vr = vring_qp((struct hv_vhost_port *)(uintptr_t)port, qp, dir);
	const uint64_t *src;
	uint64_t *dst;

	if (vr == NULL)
		return -EINVAL;
	/* word by word: each counter has one writer, and 64-bit loads do not tear */
	src = (const uint64_t *)&vr->stats;
	dst = (uint64_t *)out;
	for (size_t i = 0; i < sizeof(*out) / sizeof(uint64_t); i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
	out->kicks = __atomic_load_n(&vr->kicks, __ATOMIC_RELAXED);
	return 0;
}
