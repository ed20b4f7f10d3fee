/* SPDX-License-Identifier: BSD-3-Clause */
/* Helpers of the vhost_msg_dispatch() tests (msg_util.c). */
#ifndef HV_TEST_MSG_UTIL_H
#define HV_TEST_MSG_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vhost_internal.h"

#define MEM_SIZE 0x10000u
#define MEM_UA UINT64_C(0x7f0000000000)
#define MEM_GPA UINT64_C(0x100000)

/* The port under test (set up by setup(), freed by teardown()) and the last reply. */
extern struct hv_vhost_port *port;
extern struct vhost_user_msg reply;
extern size_t reply_len;

/* Check fixture: a port as the control thread makes it, without sockets. */
void setup(void);
void teardown(void);
void msg_init(struct vhost_user_msg *m, uint32_t req, uint32_t size);
int send_fds(struct vhost_user_msg *m, int *fds, unsigned int nfds);
int send_msg(struct vhost_user_msg *m);
int send_u64(uint32_t req, uint64_t v);
int send_state(uint32_t req, uint32_t index, uint32_t num);
int send_vring_fd(uint32_t req, uint64_t u64, int fd);
bool fd_closed(int fd);
/* Whether @fd gets closed within 2 s (the reaper closes fds of unknown kind). */
bool wait_closed(int fd);
int memfd(size_t size);
int evfd(void);
struct vhost_memory_region region(uint64_t gpa, uint64_t size, uint64_t ua);
/* SET_MEM_TABLE of @n regions with @nfds memfds of @file_size bytes; checks they are closed. */
int send_mem_table(const struct vhost_memory_region *r, uint32_t n, unsigned int nfds,
		   size_t file_size);
int send_mem_reg(uint32_t req, struct vhost_memory_region r, int fd);
unsigned int count_fds(void);
/* Vring 0 fully set up but not enabled; *memfd_out: a dup of its memory fd. */
void ring_setup(int *memfd_out);

#endif
