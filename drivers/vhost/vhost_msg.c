/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vhost-user message handlers, driven by the table in hv_vhost_user.h.
 * Runs on the control thread (or a fuzz target), never on a PMD.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "vhost_internal.h"

#define OFFERED_PROTOCOL_FEATURES                                                                  \
	(RTE_BIT64(VHOST_USER_PROTOCOL_F_MQ) | RTE_BIT64(VHOST_USER_PROTOCOL_F_REPLY_ACK) |        \
	 RTE_BIT64(VHOST_USER_PROTOCOL_F_CONFIGURE_MEM_SLOTS) |                                    \
	 RTE_BIT64(VHOST_USER_PROTOCOL_F_LOG_SHMFD))

/*
 * Offered whatever the port's configuration: vhost-user's own bits. LOG_ALL
 * is what QEMU asks of a backend before it migrates a guest.
 */
#define VHOST_FEATURES_ALWAYS                                                                      \
	(RTE_BIT64(VHOST_USER_F_PROTOCOL_FEATURES) | RTE_BIT64(VHOST_USER_F_LOG_ALL))

/* What a handler works on: the message, its fds (take one by setting it to -1), the reply. */
struct vhost_msg_ctx {
	struct vhost_user_msg *msg;
	int *fds;
	unsigned int nfds;
	struct vhost_user_msg *reply;
};

typedef int vhost_msg_handler_t(struct hv_vhost_port *port, struct vhost_msg_ctx *ctx);

struct vhost_msg_desc {
	const char *name;
	vhost_msg_handler_t *handler;
	enum vhost_msg_size size;
	enum vhost_msg_fds fds;
	enum vhost_msg_reply reply;
};

#define X(name, fn, num, size, fds, reply) static vhost_msg_handler_t vhost_msg_##fn;
VHOST_USER_MESSAGES(X)
#undef X

/* Indexed by request number; holes are unknown requests. */
static const struct vhost_msg_desc vhost_msgs[] = {
#define X(name, fn, num, size, fds, reply) [num] = {#name, vhost_msg_##fn, size, fds, reply},
	VHOST_USER_MESSAGES(X)
#undef X
};

const char *
vhost_msg_name(uint32_t request)
{
	if (request < RTE_DIM(vhost_msgs) && vhost_msgs[request].name != NULL)
		return vhost_msgs[request].name;
	return "UNKNOWN";
}

/* ---- validation helpers ---- */

static struct hv_vring *
vring_of(struct hv_vhost_port *port, uint32_t index)
{
	if (index >= 2u * port->queue_pairs) {
		HV_LOG_RL(&port->ctl_rl, ERR, "vhost %s: vring index %u out of range (%u rings)",
			  port->name, index, 2u * port->queue_pairs);
		return NULL;
	}
	return &port->vr[index];
}

static bool
size_ok(const struct vhost_msg_desc *d, const struct vhost_user_msg *msg)
{
	uint32_t size = msg->hdr.size;

	switch (d->size) {
	case SIZE_NONE:
		return size == 0;
	case SIZE_U64:
		return size == sizeof(uint64_t);
	case SIZE_STATE:
		return size == sizeof(struct vhost_vring_state);
	case SIZE_ADDR:
		return size == sizeof(struct vhost_vring_addr);
	case SIZE_MEMREG:
		return size == sizeof(struct vhost_memory_single);
	case SIZE_LOG:
		return size == sizeof(struct vhost_user_log);
	case SIZE_MEM: {
		const size_t head = offsetof(struct vhost_memory, regions);
		uint32_t n;

		if (size < head || size > sizeof(struct vhost_memory))
			return false;
		n = msg->payload.memory.nregions;
		return n >= 1 && n <= VHOST_MEMORY_BASELINE_NREGIONS &&
		       size >= head + n * sizeof(struct vhost_memory_region);
	}
	}
	return false;
}

static bool
fds_ok(const struct vhost_msg_desc *d, const struct vhost_user_msg *msg, unsigned int nfds)
{
	switch (d->fds) {
	case FDS_NONE:
		return nfds == 0;
	case FDS_VRING:
		if (msg->payload.u64 &
		    ~(uint64_t)(VHOST_USER_VRING_IDX_MASK | VHOST_USER_VRING_NOFD_MASK))
			return false;
		return nfds == ((msg->payload.u64 & VHOST_USER_VRING_NOFD_MASK) ? 0u : 1u);
	case FDS_MEM:
		return nfds == msg->payload.memory.nregions;
	case FDS_ONE:
		return nfds == 1;
	case FDS_ANY:
		return nfds <= 1;
	}
	return false;
}

static void
reply_u64(struct vhost_user_msg *reply, uint64_t v)
{
	reply->payload.u64 = v;
	reply->hdr.size = sizeof(uint64_t);
}

/* ---- handlers ---- */

static int
vhost_msg_get_features(struct hv_vhost_port *port, struct vhost_msg_ctx *ctx)
{
	reply_u64(ctx->reply, port->offered_features | VHOST_FEATURES_ALWAYS);
	return 0;
}

static int
vhost_msg_set_features(struct hv_vhost_port *port, struct vhost_msg_ctx *ctx)
{
	uint64_t f = ctx->msg->payload.u64;
	uint64_t allowed = port->offered_features | VHOST_FEATURES_ALWAYS;

	if (f & ~allowed) {
		VHOST_LOG(ERR, port,
			  "SET_FEATURES 0x%" PRIx64 " asks for 0x%" PRIx64 " that we did not offer",
			  f, f & ~allowed);
		return -EINVAL;
	}
	/* The header size changes with the features: no burst may run meanwhile. */
	vhost_dev_pause_all(port);
	vhost_dev_set_features(port, f);
	port->features_set = true;
	VHOST_LOG(INFO, port, "features 0x%" PRIx64 " negotiated", f);
	vhost_dev_start_all(port);
	return 0;
}

static int
vhost_msg_set_owner(struct hv_vhost_port *port __rte_unused, struct vhost_msg_ctx *ctx __rte_unused)
{
	return 0;
}

static int
vhost_msg_reset_owner(struct hv_vhost_port *port, struct vhost_msg_ctx *ctx __rte_unused)
{
	vhost_dev_reset(port);
	return 0;
}

/* Count a refused region by reason. */
static void
count_refusal(struct hv_vhost_port *port, int rc)
{
	if (rc == -E2BIG)
		__atomic_fetch_add(&port->mem_stats.over_limit, 1, __ATOMIC_RELAXED);
	else if (rc == -EBADF)
		__atomic_fetch_add(&port->mem_stats.not_memfs, 1, __ATOMIC_RELAXED);
}

/* Map a region into @into (the fd stays the message's: the dispatcher drops it). */
static int
map_region(struct hv_vhost_port *port, const struct vhost_memory_region *desc, int fd,
	   struct hv_mem *into)
{
	struct hv_mem_region r;
	const char *why = NULL;
	int rc;

	if (into->n >= HV_VHOST_MAX_MEM_SLOTS) {
		VHOST_LOG(ERR, port, "memory region refused: more than %d regions",
			  HV_VHOST_MAX_MEM_SLOTS);
		return -ENOSPC;
	}
	rc = hv_mem_region_map(desc, fd, port->mem_limit, &r, &why);
	if (rc != 0) {
		count_refusal(port, rc);
		VHOST_LOG(ERR, port,
			  "memory region gpa 0x%" PRIx64 " size 0x%" PRIx64
			  " refused: %s (limit %" PRIu64 " MiB)",
			  desc->guest_phys_addr, desc->memory_size, why, port->mem_limit >> 20);
		return rc;
	}
	rc = hv_mem_admit(into, &r, port->mem_limit, &why);
	if (rc != 0) {
		count_refusal(port, rc);
		VHOST_LOG(ERR, port,
			  "memory region gpa 0x%" PRIx64 " size 0x%" PRIx64
			  " refused: %s (limit %" PRIu64 " MiB)",
			  r.gpa, r.size, why, port->mem_limit >> 20);
		hv_mem_region_unmap(&r);
		return rc;
	}
	rc = vhost_guard_add(r.map_base, r.map_len, (uint32_t)port->slot);
	if (rc != 0) {
		VHOST_LOG(ERR, port, "memory region gpa 0x%" PRIx64 " refused: no room to guard it",
			  r.gpa);
		hv_mem_region_unmap(&r);
		return rc;
	}
	into->r[into->n++] = r;
	return 0;
}

static int
vhost_msg_set_mem_table(struct hv_vhost_port *port, struct vhost_msg_ctx *ctx)
{
	const struct vhost_memory *m = &ctx->msg->payload.memory;
	struct hv_mem mem = {.n = 0};
	int rc;

	for (uint32_t i = 0; i < m->nregions; i++) {
		rc = map_region(port, &m->regions[i], ctx->fds[i], &mem);
		if (rc != 0) {
			hv_mem_clear(&mem);
			return rc;
		}
	}
	/* Swap tables with every ring stopped; ring addresses are translated anew. */
	vhost_dev_pause_all(port);
	hv_mem_clear(&port->mem);
	port->mem = mem;
	vhost_dev_mem_changed(port);
	for (unsigned int i = 0; i < HV_VHOST_MAX_VRINGS; i++)
		port->vr[i].mem_hint = 0;
	vhost_dev_start_all(port);
	return 0;
}

/*
 * The dirty log, shared in a file (LOG_SHMFD). The frontend waits for a
 * reply without payload (QEMU's vhost_user_set_log_base(), DPDK's lib/vhost
 * alike); a log refused costs the connection, as the frontend cannot
 * migrate without it and would wait for the reply forever.
 */
static int
vhost_msg_set_log_base(struct hv_vhost_port *port, struct vhost_msg_ctx *ctx)
{
	if (!(port->protocol_features & RTE_BIT64(VHOST_USER_PROTOCOL_F_LOG_SHMFD))) {
		VHOST_LOG(ERR, port, "SET_LOG_BASE refused: LOG_SHMFD not negotiated");
		return -EPROTO;
	}
	/* the fd stays the message's: the dispatcher closes it (we keep the mapping) */
	return vhost_log_set_base(port, &ctx->msg->payload.log, ctx->fds[0]);
}

/*
 * The kernel vhost's log eventfd (signalled when the log is written): no
 * vhost-user frontend waits on it, the log is shared memory. Taken and
 * closed by the dispatcher, which drops a frontend that sent an fd of
 * another kind.
 */
static int
vhost_msg_set_log_fd(struct hv_vhost_port *port __rte_unused,
		     struct vhost_msg_ctx *ctx __rte_unused)
{
	return 0;
}

static int
vhost_msg_set_vring_num(struct hv_vhost_port *port, struct vhost_msg_ctx *ctx)
{
	struct hv_vring *vr = vring_of(port, ctx->msg->payload.state.index);
	uint32_t num = ctx->msg->payload.state.num;

	if (vr == NULL)
		return -EINVAL;
	/* a packed ring may have any size (virtio 1.2, 2.8.10) */
	if (num == 0 || num > HV_VRING_MAX_SIZE || ((num & (num - 1)) != 0 && !port->packed)) {
		VHOST_LOG(ERR, port, "vring size %u refused: not a power of 2 up to %u", num,
			  HV_VRING_MAX_SIZE);
		return -EINVAL;
	}
	vring_pause(vr);
	vr->size = (uint16_t)num;
	vr->num_set = true;
	vring_try_start(port, vr);
	return 0;
}

static int
vhost_msg_set_vring_addr(struct hv_vhost_port *port, struct vhost_msg_ctx *ctx)
{
	const struct vhost_vring_addr *a = &ctx->msg->payload.addr;
	struct hv_vring *vr = vring_of(port, a->index);

	if (vr == NULL)
		return -EINVAL;
	/* virtio 1.2, 2.7: desc 16-byte, avail 2-byte, used 4-byte aligned */
	if ((a->desc_user_addr & 15) || (a->avail_user_addr & 1) || (a->used_user_addr & 3)) {
		VHOST_LOG(ERR, port, "vring %u addresses refused: misaligned", a->index);
		return -EINVAL;
	}
	vring_pause(vr);
	vr->desc_ua = a->desc_user_addr;
	vr->avail_ua = a->avail_user_addr;
	vr->used_ua = a->used_user_addr;
	vr->addr_set = true;
	vring_try_start(port, vr);
	return 0;
}

static int
vhost_msg_set_vring_base(struct hv_vhost_port *port, struct vhost_msg_ctx *ctx)
{
	struct hv_vring *vr = vring_of(port, ctx->msg->payload.state.index);
	uint32_t base = ctx->msg->payload.state.num;

	if (vr == NULL)
		return -EINVAL;
	if (port->packed)
		return vhost_packed_set_base(port, vr, base);
	if (base > UINT16_MAX) {
		VHOST_LOG(ERR, port, "vring base %u refused: split rings count to 65535", base);
		return -EINVAL;
	}
	vring_pause(vr);
	vr->last_avail_idx = (uint16_t)base;
	vr->last_used_idx = (uint16_t)base;
	vr->fresh = true;
	__atomic_store_n(&vr->broken, false, __ATOMIC_RELAXED);
	vring_try_start(port, vr);
	return 0;
}

static int
vhost_msg_get_vring_base(struct hv_vhost_port *port, struct vhost_msg_ctx *ctx)
{
	uint32_t index = ctx->msg->payload.state.index;
	struct hv_vring *vr = vring_of(port, index);

	if (vr == NULL)
		return -EINVAL;
	/* Stops the ring: the frontend may now reuse or unmap it. */
	vring_pause(vr);
	vr->started = false;
	vhost_close_fd(&vr->kickfd);
	__atomic_store_n(&vr->broken, false, __ATOMIC_RELAXED);
	ctx->reply->payload.state.index = index;
	ctx->reply->payload.state.num =
		port->packed ? vhost_packed_get_base(vr) : vr->last_avail_idx;
	ctx->reply->hdr.size = sizeof(struct vhost_vring_state);
	return 0;
}

/* The fd of a KICK/CALL/ERR message (or -1 with the NOFD bit), checked. */
static int
vring_fd_take(struct hv_vhost_port *port, struct vhost_msg_ctx *ctx, int *out)
{
	*out = -1;
	if (ctx->msg->payload.u64 & VHOST_USER_VRING_NOFD_MASK)
		return 0;
	/*
	 * kick, call and err fds must be eventfds: reading a pipe the frontend
	 * never fills, or writing one it never drains, would block the switch.
	 */
	if (!vhost_fd_is_eventfd(ctx->fds[0])) {
		VHOST_LOG(ERR, port, "%s refused: fd is not an eventfd",
			  vhost_msg_name(ctx->msg->hdr.request));
		return -EINVAL;
	}
	*out = ctx->fds[0];
	ctx->fds[0] = -1;
	/* neither our reads of a kick nor our writes of a call may wait */
	vhost_fd_nonblock(*out);
	return 0;
}

static int
vhost_msg_set_vring_kick(struct hv_vhost_port *port, struct vhost_msg_ctx *ctx)
{
	struct hv_vring *vr = vring_of(port, ctx->msg->payload.u64 & VHOST_USER_VRING_IDX_MASK);
	int fd;

	if (vr == NULL || vring_fd_take(port, ctx, &fd) != 0)
		return -EINVAL;
	vring_pause(vr);
	vhost_close_fd(&vr->kickfd);
	vr->kickfd = fd;
	vr->started = true;
	/* Without protocol features a ring is enabled as soon as it starts. */
	if (!(port->features & RTE_BIT64(VHOST_USER_F_PROTOCOL_FEATURES)))
		vr->enabled = true;
	vring_try_start(port, vr);
	return 0;
}

static int
vhost_msg_set_vring_call(struct hv_vhost_port *port, struct vhost_msg_ctx *ctx)
{
	struct hv_vring *vr = vring_of(port, ctx->msg->payload.u64 & VHOST_USER_VRING_IDX_MASK);
	int fd;

	if (vr == NULL || vring_fd_take(port, ctx, &fd) != 0)
		return -EINVAL;
	/* The data path writes callfd: swap it only while the ring is stopped. */
	vring_pause(vr);
	vhost_close_fd(&vr->callfd);
	vr->callfd = fd;
	vr->signalled_used_valid = false;
	vring_try_start(port, vr);
	return 0;
}

static int
vhost_msg_set_vring_err(struct hv_vhost_port *port, struct vhost_msg_ctx *ctx)
{
	struct hv_vring *vr = vring_of(port, ctx->msg->payload.u64 & VHOST_USER_VRING_IDX_MASK);
	int fd;

	if (vr == NULL || vring_fd_take(port, ctx, &fd) != 0)
		return -EINVAL;
	vhost_close_fd(&vr->errfd);
	vr->errfd = fd;
	return 0;
}

static int
vhost_msg_get_protocol_features(struct hv_vhost_port *port __rte_unused, struct vhost_msg_ctx *ctx)
{
	reply_u64(ctx->reply, OFFERED_PROTOCOL_FEATURES);
	return 0;
}

static int
vhost_msg_set_protocol_features(struct hv_vhost_port *port, struct vhost_msg_ctx *ctx)
{
	uint64_t f = ctx->msg->payload.u64;

	if (f & ~OFFERED_PROTOCOL_FEATURES) {
		VHOST_LOG(ERR, port, "SET_PROTOCOL_FEATURES 0x%" PRIx64 " refused: not offered", f);
		return -EINVAL;
	}
	port->protocol_features = f;
	return 0;
}

static int
vhost_msg_get_queue_num(struct hv_vhost_port *port, struct vhost_msg_ctx *ctx)
{
	reply_u64(ctx->reply, port->queue_pairs);
	return 0;
}

static int
vhost_msg_set_vring_enable(struct hv_vhost_port *port, struct vhost_msg_ctx *ctx)
{
	struct hv_vring *vr = vring_of(port, ctx->msg->payload.state.index);
	uint32_t on = ctx->msg->payload.state.num;

	if (vr == NULL)
		return -EINVAL;
	if (on > 1) {
		VHOST_LOG(ERR, port, "SET_VRING_ENABLE %u refused: 0 or 1", on);
		return -EINVAL;
	}
	vring_pause(vr);
	vr->enabled = on;
	vring_try_start(port, vr);
	return 0;
}

static int
vhost_msg_get_max_mem_slots(struct hv_vhost_port *port __rte_unused, struct vhost_msg_ctx *ctx)
{
	reply_u64(ctx->reply, HV_VHOST_MAX_MEM_SLOTS);
	return 0;
}

static int
vhost_msg_add_mem_reg(struct hv_vhost_port *port, struct vhost_msg_ctx *ctx)
{
	struct hv_mem mem;
	int rc;

	/* Map into a copy so that a refused region leaves the table untouched. */
	mem = port->mem;
	rc = map_region(port, &ctx->msg->payload.mem_reg.region, ctx->fds[0], &mem);
	if (rc != 0)
		return rc;
	vhost_dev_pause_all(port);
	port->mem = mem;
	vhost_dev_mem_changed(port);
	vhost_dev_start_all(port);
	return 0;
}

static int
vhost_msg_rem_mem_reg(struct hv_vhost_port *port, struct vhost_msg_ctx *ctx)
{
	const struct vhost_memory_region *d = &ctx->msg->payload.mem_reg.region;
	struct hv_mem *m = &port->mem;

	for (uint32_t i = 0; i < m->n; i++) {
		struct hv_mem_region *r = &m->r[i];

		if (r->gpa != d->guest_phys_addr || r->size != d->memory_size ||
		    r->uaddr != d->userspace_addr)
			continue;
		/* Rings in the region stop here; try_start refuses to restart them. */
		vhost_dev_pause_all(port);
		hv_mem_region_unmap(r);
		memmove(r, r + 1, sizeof(*r) * (m->n - i - 1));
		m->n--;
		vhost_dev_mem_changed(port);
		for (unsigned int k = 0; k < HV_VHOST_MAX_VRINGS; k++)
			port->vr[k].mem_hint = 0;
		vhost_dev_start_all(port);
		return 0;
	}
	VHOST_LOG(ERR, port, "REM_MEM_REG gpa 0x%" PRIx64 ": no such region", d->guest_phys_addr);
	return -ENOENT;
}

/* ---- dispatch ---- */

/*
 * The fds no handler kept: refused ones among them may be of any kind, so
 * none is closed here unless it is known not to block (vhost_fd.c).
 */
static void
close_fds(struct hv_vhost_port *port, int *fds, unsigned int nfds)
{
	for (unsigned int i = 0; i < nfds; i++)
		vhost_port_fd_drop(port, &fds[i]);
}

int
vhost_msg_dispatch(struct hv_vhost_port *port, struct vhost_user_msg *msg, int *fds,
		   unsigned int nfds, struct vhost_user_msg *reply, size_t *reply_len)
{
	uint32_t req = msg->hdr.request;
	const struct vhost_msg_desc *d = NULL;
	bool want_ack = (msg->hdr.flags & VHOST_USER_NEED_REPLY) &&
			(port->protocol_features & RTE_BIT64(VHOST_USER_PROTOCOL_F_REPLY_ACK));
	int rc = 0;

	*reply_len = 0;
	memset(&reply->hdr, 0, sizeof(reply->hdr));
	port->fd_refused = false;
	if (req < RTE_DIM(vhost_msgs) && vhost_msgs[req].handler != NULL)
		d = &vhost_msgs[req];
	if ((msg->hdr.flags & VHOST_USER_VERSION_MASK) != VHOST_USER_VERSION) {
		VHOST_LOG(ERR, port, "message %u: protocol version %u, not %u", req,
			  msg->hdr.flags & VHOST_USER_VERSION_MASK, VHOST_USER_VERSION);
		rc = -EPROTO;
		goto out;
	}
	if (d == NULL) {
		/* Not understood: refuse it, as the spec asks, and carry on. */
		HV_LOG_RL(&port->ctl_rl, WARNING, "vhost %s: request %u not supported, ignored",
			  port->name, req);
		if (want_ack) {
			reply_u64(reply, 1);
			goto send;
		}
		goto out;
	}
	if (!size_ok(d, msg)) {
		VHOST_LOG(ERR, port, "%s: payload of %u bytes is malformed", d->name,
			  msg->hdr.size);
		rc = -EBADMSG;
		goto out;
	}
	if (!fds_ok(d, msg, nfds)) {
		VHOST_LOG(ERR, port, "%s: %u fds, not what it must carry", d->name, nfds);
		rc = -EBADMSG;
		goto out;
	}
	VHOST_LOG(DEBUG, port, "%s size %u fds %u payload 0x%" PRIx64, d->name, msg->hdr.size, nfds,
		  msg->payload.u64);
	rc = d->handler(port, &(struct vhost_msg_ctx){msg, fds, nfds, reply});
	if (rc == 0 && d->reply == REPLY_ALWAYS)
		goto send;
	if (want_ack) {
		reply_u64(reply, rc == 0 ? 0 : 1);
		goto send;
	}
	goto out;
send:
	reply->hdr.request = req;
	reply->hdr.flags = VHOST_USER_VERSION | VHOST_USER_REPLY_MASK;
	*reply_len = sizeof(reply->hdr) + reply->hdr.size;
out:
	close_fds(port, fds, nfds);
	if (port->fd_refused) {
		/* a file of a kind no message takes: it could be made to block us */
		VHOST_LOG(ERR, port,
			  "%s: an fd that is neither an eventfd nor on a memory "
			  "file system",
			  vhost_msg_name(req));
		return -1;
	}
	return rc == 0 ? 0 : -1;
}
