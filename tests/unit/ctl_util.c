/* SPDX-License-Identifier: BSD-3-Clause */
#include <check.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/mman.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ctl_util.h"

void
cu_dir(char *dir, size_t dirlen, char *path, size_t pathlen, const char *sock)
{
	snprintf(dir, dirlen, "/tmp/test_ctl.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(chmod(dir, 0755), 0); /* reachable by setuid children */
	snprintf(path, pathlen, "%s/%s", dir, sock);
}

int
cu_try_connect(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || strlen(path) >= sizeof(sa.sun_path))
		return -1;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

int
cu_connect(const char *path)
{
	int fd = cu_try_connect(path);

	ck_assert_msg(fd >= 0, "connect %s: %s", path, strerror(errno));
	return fd;
}

void
cu_send(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);

		ck_assert_msg(n > 0, "send: %s", strerror(errno));
		buf += n;
		len -= (size_t)n;
	}
}

unsigned long long
cu_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000 + (unsigned long long)ts.tv_nsec / 1000000;
}

bool
cu_readable(int fd, int ms, struct hv_ctl_server *s)
{
	unsigned long long end = cu_now_ms() + (unsigned long long)ms;

	for (;;) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};

		if (s != NULL)
			hv_ctl_server_poll(s, 0);
		if (poll(&pfd, 1, s != NULL ? 2 : ms) > 0)
			return true;
		if (cu_now_ms() >= end)
			return false;
	}
}

char *
cu_line(int fd, int timeout_ms, struct hv_ctl_server *s)
{
	size_t len = 0, cap = 65536;
	char *buf = malloc(cap);

	if (buf == NULL)
		return NULL;
	for (;;) {
		ssize_t n;
		char *nl;

		if (!cu_readable(fd, timeout_ms, s))
			break;
		/* peek, then take up to the end of the line: the rest stays queued */
		n = recv(fd, buf + len, cap - len - 1, MSG_PEEK);
		if (n <= 0)
			break;
		nl = memchr(buf + len, '\n', (size_t)n);
		if (nl != NULL)
			n = nl - (buf + len) + 1;
		n = recv(fd, buf + len, (size_t)n, 0);
		if (n <= 0)
			break;
		len += (size_t)n;
		if (nl != NULL) {
			buf[len - 1] = '\0';
			return buf;
		}
		if (cap - len < 4096) {
			char *nb = realloc(buf, cap * 2);

			if (nb == NULL)
				break;
			buf = nb;
			cap *= 2;
		}
	}
	free(buf);
	return NULL;
}

bool
cu_closed(int fd, int timeout_ms, struct hv_ctl_server *s)
{
	char c;

	if (!cu_readable(fd, timeout_ms, s))
		return false;
	return recv(fd, &c, 1, 0) <= 0;
}

int
cu_wait_child(struct hv_ctl_server *s, pid_t pid)
{
	int status, i;

	for (i = 0; i < CU_WAIT_MS / 5; i++) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		hv_ctl_server_poll(s, 5);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return -1;
}

pid_t
cu_hvctl_start(const char *sock, const char *comp_line, const char *const *args, int *ofd, int *efd)
{
	const char *exe = getenv("HVCTL");
	char *argv[32], point[24];
	unsigned int n = 0;
	pid_t pid;

	ck_assert_msg(exe != NULL, "$HVCTL is not set (run through meson test)");
	argv[n++] = (char *)"hvctl";
	argv[n++] = (char *)"--socket";
	argv[n++] = (char *)sock;
	for (; *args != NULL && n < 31; args++)
		argv[n++] = (char *)*args;
	argv[n] = NULL;
	*ofd = memfd_create("out", 0);
	*efd = memfd_create("err", 0);
	ck_assert(*ofd >= 0 && *efd >= 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(*ofd, 1);
		dup2(*efd, 2);
		if (comp_line != NULL) {
			snprintf(point, sizeof(point), "%zu", strlen(comp_line));
			setenv("COMP_LINE", comp_line, 1);
			setenv("COMP_POINT", point, 1);
		}
		execv(exe, argv);
		_exit(127);
	}
	return pid;
}

/* The whole of a memfd, NUL-terminated; closes it. */
static void
read_back(int fd, char *buf, size_t len)
{
	ssize_t n;

	lseek(fd, 0, SEEK_SET);
	n = read(fd, buf, len - 1);
	buf[n > 0 ? n : 0] = '\0';
	close(fd);
}

void
cu_hvctl(struct cu_run *r, struct hv_ctl_server *s, const char *sock, const char *comp_line,
	 const char *const *args)
{
	int ofd, efd;
	pid_t pid = cu_hvctl_start(sock, comp_line, args, &ofd, &efd);

	r->status = cu_wait_child(s, pid);
	read_back(ofd, r->out, sizeof(r->out));
	read_back(efd, r->err, sizeof(r->err));
}
