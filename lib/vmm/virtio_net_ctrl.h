/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The virtio-net control queue (virtio 1.2, 5.1.6.5), which the VMM serves
 * itself (the switch serves the data queues). Pure: guest memory through a
 * translation callback, so that the unit test and the fuzz target drive it
 * without KVM. Only VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET is accepted; every other
 * command is answered VIRTIO_NET_ERR.
 */
#ifndef VMM_VIRTIO_NET_CTRL_H
#define VMM_VIRTIO_NET_CTRL_H

#include <stdbool.h>
#include <stdint.h>

struct vmm_net_ctrlq {
	/* host address of [gpa, gpa + len) of guest RAM, or NULL */
	void *(*gpa)(void *ctx, uint64_t gpa, uint64_t len);
	void *ctx;
	uint16_t size;              /* queue size, a power of two */
	uint64_t desc, avail, used; /* guest-physical ring addresses */
	uint16_t last_avail;        /* next avail entry to take */
	uint16_t used_idx;          /* next used entry to fill */
	uint16_t max_pairs;         /* what VQ_PAIRS_SET may ask for */
	uint16_t pairs;             /* what the driver asked for (1 after set-up) */
	bool broken;                /* a malformed ring: no more processing until reset */
	unsigned int bad;           /* commands refused as malformed */
};

/**
 * Set up the queue's state for a driver that just set DRIVER_OK: one queue
 * pair in use (5.1.6.5.5), nothing processed.
 */
void vmm_net_ctrl_init(struct vmm_net_ctrlq *cq, uint16_t size, uint64_t desc, uint64_t avail,
		       uint64_t used, uint16_t max_pairs,
		       void *(*gpa)(void *ctx, uint64_t gpa, uint64_t len), void *ctx);
/**
 * Answer every command the driver queued since the last call (each gets its
 * ack byte and a used entry). Every index, length and address is checked;
 * a ring that breaks the rules (a head or next out of range, a chain longer
 * than the queue, memory outside RAM) is marked broken and left alone.
 * Returns how many entries were used (the caller interrupts the driver when
 * non-zero). Caller: one thread at a time per queue.
 */
unsigned int vmm_net_ctrl_process(struct vmm_net_ctrlq *cq);

#endif
