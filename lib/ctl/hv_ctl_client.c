/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Client side of the control protocol: connect, send one request line, read
 * one reply line. Blocking, with socket timeouts so that a wedged daemon
 * cannot hang the CLI.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "hv_ctl.h"

int
hv_ctl_set_timeout(int fd, unsigned int timeout_ms)
{
	struct timeval tv = {
		.tv_sec = timeout_ms / 1000,
		.tv_usec = (timeout_ms % 1000) * 1000,
	};

	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0)
		return -1;
	return 0;
}

int
hv_ctl_connect(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd;

	if (path == NULL)
		path = HV_CTL_SOCK_PATH;
	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "socket path too long: %s", path);
		return -1;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	if (hv_ctl_set_timeout(fd, HV_CTL_CLIENT_TIMEOUT_MS) < 0) {
		snprintf(err, errlen, "setsockopt: %s", strerror(errno));
		close(fd);
		return -1;
	}
	while (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		if (errno == EINTR)
			continue;
		snprintf(err, errlen, "cannot connect to %s: %s%s", path, strerror(errno),
			 errno == ENOENT || errno == ECONNREFUSED ? " (is hvswitch running?)" : "");
		close(fd);
		return -1;
	}
	return fd;
}

/* 0, or the errno of the failure with err set. @pass_fd (-1: none) goes with the first byte. */
static int
send_all(int fd, const char *buf, size_t len, int pass_fd, char *err, size_t errlen)
{
	int e;

	while (len > 0) {
		union {
			char buf[CMSG_SPACE(sizeof(int))];
			struct cmsghdr align;
		} cm;
		struct iovec iov = {.iov_base = (void *)(uintptr_t)buf, .iov_len = len};
		struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
		ssize_t n;

		if (pass_fd >= 0) {
			struct cmsghdr *h;

			memset(&cm, 0, sizeof(cm));
			mh.msg_control = cm.buf;
			mh.msg_controllen = sizeof(cm.buf);
			h = CMSG_FIRSTHDR(&mh);
			h->cmsg_level = SOL_SOCKET;
			h->cmsg_type = SCM_RIGHTS;
			h->cmsg_len = CMSG_LEN(sizeof(int));
			memcpy(CMSG_DATA(h), &pass_fd, sizeof(int));
		}
		n = sendmsg(fd, &mh, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			e = errno;
			snprintf(err, errlen, "send: %s", e == EAGAIN ? "timed out" : strerror(e));
			return e;
		}
		buf += n;
		len -= (size_t)n;
		pass_fd = -1; /* sent */
	}
	return 0;
}

/*
 * Read one line into a malloc'ed, NUL-terminated buffer (without the '\n').
 * Requests and replies alternate, so nothing follows the reply's newline.
 */
static char *
recv_line(int fd, char *err, size_t errlen)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	char *nl;

	if (buf == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	for (;;) {
		ssize_t n;

		if (cap - len < 2048) {
			char *nbuf;

			if (cap >= HV_CTL_MAX_REPLY) {
				snprintf(err, errlen, "reply too large (over %u bytes)",
					 HV_CTL_MAX_REPLY);
				break;
			}
			nbuf = realloc(buf, cap * 2);
			if (nbuf == NULL) {
				snprintf(err, errlen, "out of memory");
				break;
			}
			buf = nbuf;
			cap *= 2;
		}
		n = recv(fd, buf + len, cap - len - 1, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				snprintf(err, errlen, "timed out waiting for a reply");
			else
				snprintf(err, errlen, "recv: %s", strerror(errno));
			break;
		}
		if (n == 0) {
			snprintf(err, errlen, "connection closed by the server");
			break;
		}
		nl = memchr(buf + len, '\n', (size_t)n);
		len += (size_t)n;
		if (nl != NULL) {
			*nl = '\0';
			return buf;
		}
	}
	free(buf);
	return NULL;
}

int
hv_ctl_call(int fd, const char *cmd, cJSON *args, cJSON **result, char *err, size_t errlen)
{
	return hv_ctl_call_fd(fd, cmd, args, -1, result, err, errlen);
}

int
hv_ctl_call_fd(int fd, const char *cmd, cJSON *args, int pass_fd, cJSON **result, char *err,
	       size_t errlen)
{
	cJSON *req = NULL, *rep = NULL, *ok, *item;
	char *line = NULL, *text = NULL;
	char sub[64];
	int rc = -1, e;
	size_t len;

	if (result != NULL)
		*result = NULL;
	if (err != NULL && errlen > 0)
		err[0] = '\0';
	req = cJSON_CreateObject();
	if (req == NULL || cJSON_AddStringToObject(req, "cmd", cmd) == NULL) {
		cJSON_Delete(args);
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (args != NULL)
		cJSON_AddItemToObject(req, "args", args);
	text = cJSON_PrintUnformatted(req);
	if (text == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	/* The terminating NUL becomes the request's newline. */
	len = strlen(text);
	text[len] = '\n';
	e = send_all(fd, text, len + 1, pass_fd, err, errlen);
	if (e != 0) {
		/*
		 * A server that refuses us (permission, too many clients) replies
		 * and closes at once: that reply may be waiting.
		 */
		if (e != EPIPE && e != ECONNRESET)
			goto out;
		line = recv_line(fd, sub, sizeof(sub));
	} else {
		line = recv_line(fd, err, errlen);
	}
	if (line == NULL)
		goto out;
	rep = cJSON_Parse(line);
	ok = cJSON_GetObjectItemCaseSensitive(rep, "ok");
	if (!cJSON_IsBool(ok)) {
		snprintf(err, errlen, "malformed reply from the server");
		goto out;
	}
	if (cJSON_IsFalse(ok)) {
		item = cJSON_GetObjectItemCaseSensitive(rep, "error");
		snprintf(err, errlen, "%s",
			 cJSON_IsString(item) ? item->valuestring : "error (no message)");
		goto out;
	}
	rc = 0;
	if (result != NULL) {
		*result = cJSON_DetachItemFromObjectCaseSensitive(rep, "result");
		if (*result == NULL)
			*result = cJSON_CreateNull();
	}
out:
	cJSON_Delete(req);
	cJSON_Delete(rep);
	free(text);
	free(line);
	return rc;
}
