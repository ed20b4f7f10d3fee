/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The fixture of the ring tests (test_hostile.c, test_rx_ring.c): a port
 * driven by a hand-written frontend (raw_frontend.h) that can write anything
 * a guest could, next to a well-behaved bystander port (DPDK's virtio-user).
 */
#ifndef HV_TEST_RING_FIXTURE_H
#define HV_TEST_RING_FIXTURE_H

#include <stdint.h>

#include "hv_vhost.h"
#include "peer.h"
#include "raw_frontend.h"

#define TIMEOUT_MS 3000
#define HDR 12 /* net header with VERSION_1 */

extern struct peer good;          /* the bystander */
extern struct hv_vhost_port *bad; /* the port the raw frontend talks to */
extern char bad_path[108];        /* its socket */
extern struct raw_fe fe;

void setup(void);
void teardown(void);
/* The bystander still gets frames through its own port. */
void assert_bystander_ok(void);
/* Counters of the raw frontend's port, ring @vring. */
struct hv_vhost_vring_stats stats(enum hv_vhost_dir dir);
/* Poll the raw frontend's TX ring a few times; returns frames received. */
unsigned int poll_tx(void);
/* Negotiate VERSION_1, mergeable buffers and indirect descriptors; both rings ready. */
void setup_rings(void);

#endif
