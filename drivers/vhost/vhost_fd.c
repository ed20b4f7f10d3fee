/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fds a frontend hands us, of a kind we do not know yet.
 *
 * A frontend can pass a file of a FUSE mount it serves itself: close() of it
 * waits for the server's answer to FLUSH, fstat() and fstatfs() for GETATTR
 * and STATFS, and a page fault in a mapping of it for READ. A server that
 * never answers would hold whatever thread does that, forever. So an fd is
 * first told apart by what the kernel knows of it without asking its file
 * system: readlink() of /proc/self/fd/N names an eventfd, and F_GET_SEALS
 * succeeds only on shmem (memfd, tmpfs) and hugetlbfs files, whatever the
 * mount namespace. Those are closed at once; any other fd goes to the reaper,
 * a thread that holds no lock and may block in close() for as long as the
 * frontend likes.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "vhost_internal.h"

/*
 * The reaper's queue. A port takes no frontend while an fd of its slot waits
 * here (vhost_fd_reaping()), and a connection is dropped at the first such fd
 * it sends, after at most one message's fds and one chunk's worth more: no
 * slot has more than VHOST_REAP_PER_SLOT fds queued, and the queue cannot fill.
 */
#define VHOST_REAP_PER_SLOT (2 * VHOST_MEMORY_BASELINE_NREGIONS)
#define VHOST_REAP_CAP (HV_VHOST_MAX_PORTS * VHOST_REAP_PER_SLOT)

struct reap_item {
	int fd;
	uint32_t slot;
};

static struct {
	pthread_mutex_t lock; /* held for queue updates only, never across close() */
	pthread_cond_t cond;
	pid_t pid; /* of the process the thread runs in (a fork has none) */
	uint32_t head, n;
	struct reap_item q[VHOST_REAP_CAP];
} reap = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};

static uint32_t vhost_reap_pending[HV_VHOST_MAX_PORTS]; /* per port slot (atomic) */
static uint64_t reap_leaked;

bool
vhost_fd_is_eventfd(int fd)
{
	char link[64], target[32];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, target, sizeof(target) - 1);
	if (n < 0)
		return false;
	target[n] = '\0';
	return strcmp(target, "anon_inode:[eventfd]") == 0;
}

bool
vhost_fd_on_memfs(int fd)
{
	/*
	 * The kernel answers from the file's own operations (shmem or
	 * hugetlbfs), never from its file system's server; an O_PATH fd fails.
	 */
	return fcntl(fd, F_GET_SEALS) >= 0;
}

static void *
reap_thread(void *arg)
{
	RTE_SET_USED(arg);
	pthread_mutex_lock(&reap.lock);
	for (;;) {
		struct reap_item it;

		while (reap.n == 0)
			pthread_cond_wait(&reap.cond, &reap.lock);
		it = reap.q[reap.head];
		reap.head = (reap.head + 1) % VHOST_REAP_CAP;
		reap.n--;
		pthread_mutex_unlock(&reap.lock);
		close(it.fd); /* may wait for the frontend's file system */
		__atomic_fetch_sub(&vhost_reap_pending[it.slot], 1, __ATOMIC_RELEASE);
		pthread_mutex_lock(&reap.lock);
	}
	return NULL;
}

/* Under reap.lock: a reaper runs in this process (started at first use). */
static bool
reap_start_locked(void)
{
	pthread_attr_t attr;
	sigset_t all, old;
	pthread_t t;
	pid_t pid = getpid();
	int rc;

	if (reap.pid == pid)
		return true;
	/* a child of fork() inherits the queue but not the thread: what was queued is lost */
	reap.head = reap.n = 0;
	memset(vhost_reap_pending, 0, sizeof(vhost_reap_pending));
	if (pthread_attr_init(&attr) != 0)
		return false;
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	/* no signal of the process for it: a close() it waits in is not to be disturbed */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&t, &attr, reap_thread, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (rc != 0)
		return false;
	pthread_setname_np(t, "hv-vhost-reap");
	reap.pid = pid;
	return true;
}

bool
vhost_fd_drop(int fd, uint32_t slot)
{
	bool queued = false;

	if (fd < 0)
		return false;
	if (vhost_fd_is_eventfd(fd) || vhost_fd_on_memfs(fd)) {
		close(fd);
		return false;
	}
	if (slot >= HV_VHOST_MAX_PORTS)
		slot = 0;
	pthread_mutex_lock(&reap.lock);
	if (reap.n < VHOST_REAP_CAP && reap_start_locked()) {
		reap.q[(reap.head + reap.n) % VHOST_REAP_CAP] = (struct reap_item){fd, slot};
		reap.n++;
		__atomic_fetch_add(&vhost_reap_pending[slot], 1, __ATOMIC_RELAXED);
		pthread_cond_signal(&reap.cond);
		queued = true;
	}
	pthread_mutex_unlock(&reap.lock);
	if (!queued) {
		/*
		 * Unreachable while the per-slot bound holds (or no thread could be
		 * made): keeping the fd open costs one fd; closing it could cost
		 * the thread.
		 */
		__atomic_fetch_add(&reap_leaked, 1, __ATOMIC_RELAXED);
		HV_LOG(ERR, "vhost: fd %d of unknown kind left open: no room to close it aside",
		       fd);
	}
	return true;
}

void
vhost_port_fd_drop(struct hv_vhost_port *port, int *fd)
{
	if (*fd < 0)
		return;
	if (vhost_fd_drop(*fd, (uint32_t)port->slot)) {
		port->fd_refused = true;
		__atomic_fetch_add(&port->mem_stats.fds_refused, 1, __ATOMIC_RELAXED);
	}
	*fd = -1;
}

uint32_t
vhost_fd_reaping(uint32_t slot)
{
	if (slot >= HV_VHOST_MAX_PORTS)
		return 0;
	return __atomic_load_n(&vhost_reap_pending[slot], __ATOMIC_ACQUIRE);
}

uint64_t
hv_vhost_fds_leaked(void)
{
	return __atomic_load_n(&reap_leaked, __ATOMIC_RELAXED);
}
