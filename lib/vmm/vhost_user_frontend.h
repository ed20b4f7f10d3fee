/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The frontend side of the vhost-user protocol (QEMU's docs/interop/
 * vhost-user.rst): the VMM tells a backend (hvswitch) where guest memory and
 * the rings are, and hands it the kick and call eventfds.
 */
#ifndef VMM_VHOST_USER_FRONTEND_H
#define VMM_VHOST_USER_FRONTEND_H

#include <stdbool.h>
#include <stdint.h>

#include "hv_vhost_user.h"

struct vu_mem_region {
	uint64_t gpa;
	uint64_t size;
	uint64_t uaddr;  /* where this process maps it */
	uint64_t offset; /* in fd */
	int fd;
};

struct vu_ring {
	uint16_t num;
	uint16_t base;   /* next avail index the backend processes */
	uint64_t desc_ua, avail_ua, used_ua;
	int kickfd;
	int callfd;
};

struct vu_frontend {
	int fd;                      /* -1: not connected */
	uint64_t features;           /* backend's offer */
	uint64_t protocol_features;  /* negotiated */
	bool owner_set;
};

/* Connect to the backend's socket and read its features (GET_FEATURES). 0 or -1. */
int vu_connect(struct vu_frontend *fe, const char *path);
void vu_close(struct vu_frontend *fe);
/*
 * Negotiate and start rings: protocol features (REPLY_ACK when offered),
 * SET_OWNER, SET_FEATURES(features), SET_MEM_TABLE, and per ring NUM, BASE,
 * ADDR, CALL, KICK, ENABLE. 0 or -1.
 */
int vu_start(struct vu_frontend *fe, uint64_t features, const struct vu_mem_region *regions,
	     unsigned int nregions, const struct vu_ring *rings, unsigned int nrings);
/* Stop a ring (GET_VRING_BASE); *base gets the backend's next avail index. 0 or -1. */
int vu_stop_ring(struct vu_frontend *fe, unsigned int index, uint16_t *base);

#endif
