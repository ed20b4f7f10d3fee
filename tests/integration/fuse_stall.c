/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuse_stall.h"

#define ROOT_ID 1 /* FUSE_ROOT_ID */
#define FILE_ID 2
#define BUF_SIZE (128 * 1024) /* more than a request can be (max_write is 4 KiB) */

static void
reply(const struct fuse_stall *f, uint64_t unique, int error, const void *out, size_t len)
{
	struct fuse_out_header h = {
		.len = (uint32_t)(sizeof(h) + len), .error = error, .unique = unique};
	uint8_t buf[sizeof(h) + 256];

	memcpy(buf, &h, sizeof(h));
	if (len > 0)
		memcpy(buf + sizeof(h), out, len);
	if (write(f->dev, buf, h.len) < 0)
		perror("fuse_stall: reply");
}

/* Attributes valid for 0 s: any later fstat() must ask, and gets no answer. */
static void
attr_of(const struct fuse_stall *f, uint64_t node, struct fuse_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->ino = node;
	a->nlink = 1;
	a->blksize = 4096;
	if (node == ROOT_ID) {
		a->mode = S_IFDIR | 0755;
	} else {
		a->mode = S_IFREG | 0666;
		a->size = f->size;
		a->blocks = f->size / 512;
	}
}

static void
serve(struct fuse_stall *f, const struct fuse_in_header *in, const void *arg)
{
	switch (in->opcode) {
	case FUSE_INIT: {
		struct fuse_init_out o = {.major = FUSE_KERNEL_VERSION,
					  .minor = FUSE_KERNEL_MINOR_VERSION,
					  .max_background = 16,
					  .congestion_threshold = 12,
					  .max_write = 4096,
					  .time_gran = 1};

		reply(f, in->unique, 0, &o, sizeof(o));
		return;
	}
	case FUSE_LOOKUP: {
		struct fuse_entry_out o = {.nodeid = FILE_ID};

		if (in->nodeid != ROOT_ID || strcmp(arg, "f") != 0) {
			reply(f, in->unique, -ENOENT, NULL, 0);
			return;
		}
		attr_of(f, FILE_ID, &o.attr);
		reply(f, in->unique, 0, &o, sizeof(o));
		return;
	}
	case FUSE_GETATTR: {
		struct fuse_attr_out o = {0};

		attr_of(f, in->nodeid, &o.attr);
		reply(f, in->unique, 0, &o, sizeof(o));
		return;
	}
	case FUSE_OPEN: {
		struct fuse_open_out o = {.fh = 1};

		reply(f, in->unique, 0, &o, sizeof(o));
		return;
	}
	case FUSE_FORGET:
	case FUSE_BATCH_FORGET:
	case FUSE_INTERRUPT:
		return; /* no reply expected */
	default:
		reply(f, in->unique, -ENOSYS, NULL, 0);
	}
}

static void *
server(void *arg)
{
	struct fuse_stall *f = arg;
	uint8_t *buf = malloc(BUF_SIZE);

	while (buf != NULL && !__atomic_load_n(&f->stop, __ATOMIC_ACQUIRE)) {
		struct pollfd p = {.fd = f->dev, .events = POLLIN};
		const struct fuse_in_header *in = (const void *)buf;
		ssize_t n;

		if (poll(&p, 1, 20) != 1)
			continue;
		n = read(f->dev, buf, BUF_SIZE);
		if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == ENOENT))
			continue;
		if (n < (ssize_t)sizeof(*in))
			break; /* the connection is gone */
		if (__atomic_load_n(&f->answer, __ATOMIC_ACQUIRE) || in->opcode == FUSE_INIT)
			serve(f, in, buf + sizeof(*in));
		else if (in->opcode != FUSE_FORGET && in->opcode != FUSE_BATCH_FORGET &&
			 in->opcode != FUSE_INTERRUPT)
			__atomic_fetch_add(&f->held, 1, __ATOMIC_RELAXED);
	}
	free(buf);
	return NULL;
}

int
fuse_stall_start(struct fuse_stall *f, uint64_t file_size)
{
	char opts[128];
	int rc;

	memset(f, 0, sizeof(*f));
	f->size = file_size;
	f->answer = true;
	snprintf(f->dir, sizeof(f->dir), "/tmp/hv-fuse-XXXXXX");
	if (mkdtemp(f->dir) == NULL)
		return -errno;
	f->dev = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (f->dev < 0) {
		rc = -errno;
		rmdir(f->dir);
		return rc;
	}
	snprintf(opts, sizeof(opts), "fd=%d,rootmode=40000,user_id=0,group_id=0", f->dev);
	if (mount("hv-fuse-stall", f->dir, "fuse", MS_NOSUID | MS_NODEV, opts) != 0) {
		rc = -errno;
		close(f->dev);
		f->dev = -1;
		rmdir(f->dir);
		return rc;
	}
	rc = pthread_create(&f->thread, NULL, server, f);
	if (rc != 0) {
		umount2(f->dir, MNT_DETACH);
		close(f->dev);
		f->dev = -1;
		rmdir(f->dir);
		return -rc;
	}
	f->running = true;
	return 0;
}

int
fuse_stall_open_and_hold(struct fuse_stall *f)
{
	char path[96];
	int fd;

	snprintf(path, sizeof(path), "%s/f", f->dir);
	fd = open(path, O_RDWR | O_CLOEXEC);
	__atomic_store_n(&f->answer, false, __ATOMIC_RELEASE);
	return fd;
}

void
fuse_stall_end(struct fuse_stall *f)
{
	if (f->running) {
		__atomic_store_n(&f->stop, true, __ATOMIC_RELEASE);
		pthread_join(f->thread, NULL);
		f->running = false;
	}
	if (f->dev >= 0) {
		umount2(f->dir, MNT_DETACH);
		/* the last /dev/fuse fd: the kernel aborts the connection, waiters get errors */
		close(f->dev);
		f->dev = -1;
		rmdir(f->dir);
	}
}
