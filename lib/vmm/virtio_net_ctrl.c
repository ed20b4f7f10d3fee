/* SPDX-License-Identifier: BSD-3-Clause */
/* The virtio-net control queue (see virtio_net_ctrl.h). */
#include <stddef.h>
#include <string.h>

#include <linux/virtio_net.h>
#include <linux/virtio_ring.h>

#include "virtio_net_ctrl.h"

/* the largest command we take: class, command and a VQ_PAIRS_SET body, with room */
#define CMD_MAX 64

void
vmm_net_ctrl_init(struct vmm_net_ctrlq *cq, uint16_t size, uint64_t desc, uint64_t avail,
		  uint64_t used, uint16_t max_pairs,
		  void *(*gpa)(void *ctx, uint64_t gpa, uint64_t len), void *ctx)
{
	memset(cq, 0, sizeof(*cq));
	cq->gpa = gpa;
	cq->ctx = ctx;
	cq->size = size;
	cq->desc = desc;
	cq->avail = avail;
	cq->used = used;
	cq->max_pairs = max_pairs;
	cq->pairs = 1;
}

struct cmd {
	uint8_t in[CMD_MAX]; /* what the driver wrote */
	uint32_t in_len;
	bool too_long;
	uint8_t *ack; /* the first device-writable byte */
};

/* One descriptor's worth: readable bytes to in[], the first writable to ack. */
static int
take(struct vmm_net_ctrlq *cq, const struct vring_desc *d, struct cmd *c, bool *seen_write)
{
	uint8_t *p;

	if (d->len == 0)
		return 0;
	p = cq->gpa(cq->ctx, d->addr, d->len);
	if (p == NULL)
		return -1;
	if (d->flags & VRING_DESC_F_WRITE) {
		if (c->ack == NULL)
			c->ack = p;
		*seen_write = true;
		return 0;
	}
	if (*seen_write)
		return -1; /* readable after writable (2.7.4.2) */
	if (d->len > CMD_MAX - c->in_len) {
		c->too_long = true;
		return 0;
	}
	memcpy(c->in + c->in_len, p, d->len);
	c->in_len += d->len;
	return 0;
}

/*
 * Walk the chain at head (an indirect table at most once); -1: malformed.
 * Descriptors are copied out: an indirect table's address is the driver's
 * and need not be aligned.
 */
static int
walk(struct vmm_net_ctrlq *cq, const uint8_t *table, uint32_t n, uint16_t head, struct cmd *c,
     bool nested)
{
	bool seen_write = false;
	uint32_t i, hops;

	for (i = head, hops = 0;; hops++) {
		struct vring_desc d;

		if (i >= n || hops >= n)
			return -1;
		memcpy(&d, table + (size_t)i * sizeof(d), sizeof(d));
		if (d.flags & VRING_DESC_F_INDIRECT) {
			const uint8_t *t;

			if (nested || hops > 0 || (d.flags & VRING_DESC_F_NEXT) ||
			    d.len % sizeof(d) || d.len == 0 || d.len / sizeof(d) > 65536)
				return -1;
			t = cq->gpa(cq->ctx, d.addr, d.len);
			if (t == NULL)
				return -1;
			return walk(cq, t, d.len / sizeof(d), 0, c, true);
		}
		if (take(cq, &d, c, &seen_write) != 0)
			return -1;
		if (!(d.flags & VRING_DESC_F_NEXT))
			return 0;
		i = d.next;
	}
}

static uint8_t
execute(struct vmm_net_ctrlq *cq, const struct cmd *c)
{
	struct virtio_net_ctrl_hdr h;
	struct virtio_net_ctrl_mq mq;

	if (c->too_long || c->in_len < sizeof(h)) {
		cq->bad++;
		return VIRTIO_NET_ERR;
	}
	memcpy(&h, c->in, sizeof(h));
	if (h.class != VIRTIO_NET_CTRL_MQ || h.cmd != VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET ||
	    c->in_len != sizeof(h) + sizeof(mq))
		return VIRTIO_NET_ERR;
	memcpy(&mq, c->in + sizeof(h), sizeof(mq));
	if (mq.virtqueue_pairs < VIRTIO_NET_CTRL_MQ_VQ_PAIRS_MIN ||
	    mq.virtqueue_pairs > cq->max_pairs)
		return VIRTIO_NET_ERR;
	cq->pairs = mq.virtqueue_pairs;
	return VIRTIO_NET_OK;
}

unsigned int
vmm_net_ctrl_process(struct vmm_net_ctrlq *cq)
{
	uint32_t n = cq->size;
	struct vring_desc *desc;
	struct vring_avail *avail;
	struct vring_used *used;
	unsigned int done = 0;
	uint16_t avail_idx;

	if (cq->broken || n == 0 || (n & (n - 1)))
		return 0;
	/* the ring parts' alignment (virtio 1.2, 2.7): we access them as structs */
	if ((cq->desc & 15) || (cq->avail & 1) || (cq->used & 3)) {
		cq->bad++;
		cq->broken = true;
		return 0;
	}
	desc = cq->gpa(cq->ctx, cq->desc, sizeof(*desc) * n);
	avail = cq->gpa(cq->ctx, cq->avail, offsetof(struct vring_avail, ring) + 2ull * n);
	used = cq->gpa(cq->ctx, cq->used,
		       offsetof(struct vring_used, ring) + sizeof(struct vring_used_elem) * n);
	if (desc == NULL || avail == NULL || used == NULL) {
		cq->broken = true;
		return 0;
	}
	avail_idx = __atomic_load_n(&avail->idx, __ATOMIC_ACQUIRE);
	/* more new entries than the ring holds: the driver lies about its index */
	if ((uint16_t)(avail_idx - cq->last_avail) > n) {
		cq->broken = true;
		return 0;
	}
	while (cq->last_avail != avail_idx) {
		uint16_t head = __atomic_load_n(&avail->ring[cq->last_avail % n], __ATOMIC_RELAXED);
		struct cmd c = {.in_len = 0};
		uint8_t ack;

		if (walk(cq, (const uint8_t *)desc, n, head, &c, false) != 0 || c.ack == NULL) {
			cq->bad++;
			cq->broken = true;
			break;
		}
		ack = execute(cq, &c);
		*c.ack = ack;
		used->ring[cq->used_idx % n].id = head;
		used->ring[cq->used_idx % n].len = 1;
		cq->used_idx++;
		cq->last_avail++;
		__atomic_store_n(&used->idx, cq->used_idx, __ATOMIC_RELEASE);
		done++;
	}
	return done;
}
