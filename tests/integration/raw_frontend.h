/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A hand-driven vhost-user frontend for hostile-guest tests: it owns the guest
 * memory (a memfd) and the split rings of queue pair 0, so a test can write
 * any descriptor, index or message a broken or malicious guest could.
 */
#ifndef HV_TEST_RAW_FRONTEND_H
#define HV_TEST_RAW_FRONTEND_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_bitops.h>

#include "hv_vhost_user.h"

#define RAW_MEM_SIZE (2u << 20)
#define RAW_GPA_BASE UINT64_C(0x100000)
#define RAW_RING_SIZE 256
#define RAW_DATA_OFF 0x10000u /* buffers start here */

struct raw_fe {
	int sock;
	int memfd;
	uint8_t *mem;
	struct vring_desc *desc[2];
	struct vring_avail *avail[2];
	struct vring_used *used[2];
	int kick[2];
	int call[2];
	uint16_t avail_idx[2];
	uint16_t used_seen[2];
};

/* Guest-physical address of byte @off of guest memory. */
static inline uint64_t
raw_gpa(uint32_t off)
{
	return RAW_GPA_BASE + off;
}

int raw_fe_connect(struct raw_fe *fe, const char *path);
void raw_fe_close(struct raw_fe *fe);

/* Send one message; the payload goes right after the 12-byte header. */
int raw_fe_send(struct raw_fe *fe, uint32_t request, uint32_t flags, const void *payload,
		uint32_t size, const int *fds, unsigned int nfds);
/* Send raw bytes as they are (partial or garbage messages). */
int raw_fe_send_bytes(struct raw_fe *fe, const void *buf, size_t len);
/* Wait for a reply; 0 or -1 on timeout / closed connection. */
int raw_fe_recv(struct raw_fe *fe, struct vhost_user_msg *reply, unsigned int timeout_ms);
/* Whether the backend closed the connection within @timeout_ms. */
bool raw_fe_closed(struct raw_fe *fe, unsigned int timeout_ms);

/*
 * Negotiate @features (VHOST_USER_F_PROTOCOL_FEATURES is added), share the
 * memory and set up both rings of queue pair 0. 0 on success.
 */
int raw_fe_setup(struct raw_fe *fe, uint64_t features);

/*
 * Post a TX chain of one descriptor per (gpa, len, flags) triple at descriptor
 * @first; returns the head. The avail index is published.
 */
uint16_t raw_fe_post(struct raw_fe *fe, int vring, uint16_t first, unsigned int n,
		     const uint64_t *addr, const uint32_t *len, const uint16_t *flags);

/* Put a frame (net header of @hdr_size zero bytes + @len pattern bytes) at @off. */
void raw_fe_frame(struct raw_fe *fe, uint32_t off, uint32_t hdr_size, uint32_t len);

/* Round-trip GET_VRING_BASE (stop) + SET_VRING_BASE + KICK (restart) of a ring. */
int raw_fe_reset_ring(struct raw_fe *fe, int vring);

#endif
