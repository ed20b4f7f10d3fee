/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A FUSE file system served by a thread of the test, straight on /dev/fuse
 * (no libfuse): one regular file, "f", that can be opened; then the server
 * stops answering, as a hostile frontend's server would. Whatever touches the
 * file afterwards (close() sends FLUSH, fstat() GETATTR, a page fault READ)
 * waits until fuse_stall_end() aborts the connection.
 */
#ifndef HV_TEST_FUSE_STALL_H
#define HV_TEST_FUSE_STALL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct fuse_stall {
	int dev;       /* /dev/fuse, -1 when not mounted */
	char dir[64];  /* the mount point */
	uint64_t size; /* of the file */
	pthread_t thread;
	bool running;
	bool stop;     /* the thread ends (atomic) */
	bool answer;   /* requests are answered (atomic); false: none is */
	uint64_t held; /* requests left unanswered (atomic) */
};

/*
 * Mount (as root) and serve. 0, or a negative errno when this machine cannot
 * mount FUSE (the caller says so and skips).
 */
int fuse_stall_start(struct fuse_stall *f, uint64_t file_size);
/* Open the file (O_RDWR) while requests are answered; then stop answering. */
int fuse_stall_open_and_hold(struct fuse_stall *f);
/* Stop the server, detach the mount and abort the connection: every waiter gets an error. */
void fuse_stall_end(struct fuse_stall *f);

#endif
