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
	uint16_t index; /* the vring's index on the backend */
	bool enable;    /* enabled once started (SET_VRING_ENABLE) */
	uint16_t num;
	uint16_t base; /* next avail index the backend processes */
	uint64_t desc_ua, avail_ua, used_ua;
	int kickfd;
	int callfd;
};

struct vu_frontend {
	int fd;                     /* -1: not connected */
	uint64_t features;          /* backend's offer */
	uint64_t protocol_features; /* negotiated */
	uint16_t queue_pairs;       /* the backend's (GET_QUEUE_NUM), 1 without MQ */
	bool owner_set;
};

/*
 * Connect to the backend's socket, read its features (GET_FEATURES) and
 * negotiate the protocol features (REPLY_ACK, MQ; the number of queue pairs
 * with GET_QUEUE_NUM). Blocks up to the message timeout: not for a vCPU.
 * 0 or -1 (fe closed).
 */
int vu_connect(struct vu_frontend *fe, const char *path);
/* vu_connect in two steps: the connection (fe->fd set), then the messages
 * (on failure fe->fd stays open: the caller closes it). */
int vu_open(struct vu_frontend *fe, const char *path);
int vu_handshake(struct vu_frontend *fe);
void vu_close(struct vu_frontend *fe);
/*
 * Start rings: SET_OWNER, SET_FEATURES(features), SET_MEM_TABLE, and per ring
 * NUM, BASE, ADDR, CALL, KICK, and ENABLE for those marked so. 0 or -1.
 */
int vu_start(struct vu_frontend *fe, uint64_t features, const struct vu_mem_region *regions,
	     unsigned int nregions, const struct vu_ring *rings, unsigned int nrings);
/* Enable or disable a started ring (SET_VRING_ENABLE; needs the protocol
 * features). 0 or -1. */
int vu_enable_ring(struct vu_frontend *fe, unsigned int index, bool on);
/* Stop a ring (GET_VRING_BASE); *base gets the backend's next avail index. 0 or -1. */
int vu_stop_ring(struct vu_frontend *fe, unsigned int index, uint16_t *base);

#endif
