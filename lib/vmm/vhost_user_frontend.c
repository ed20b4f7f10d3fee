/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vhost-user frontend: message encoding (12-byte header, then the payload,
 * fds as SCM_RIGHTS), replies, and the start-up sequence. Blocking with a
 * timeout: these messages run at connect time and when the guest's driver
 * starts the device, never on the data path.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "vhost_user_frontend.h"
#include "vmm_internal.h"

enum {
	VU_GET_FEATURES = 1,
	VU_SET_FEATURES = 2,
	VU_SET_OWNER = 3,
	VU_SET_MEM_TABLE = 5,
	VU_SET_VRING_NUM = 8,
	VU_SET_VRING_ADDR = 9,
	VU_SET_VRING_BASE = 10,
	VU_GET_VRING_BASE = 11,
	VU_SET_VRING_KICK = 12,
	VU_SET_VRING_CALL = 13,
	VU_GET_PROTOCOL_FEATURES = 15,
	VU_SET_PROTOCOL_FEATURES = 16,
	VU_SET_VRING_ENABLE = 18,
};

#define VU_VERSION 0x1
#define VU_FLAG_REPLY 0x4
#define VU_FLAG_NEED_REPLY 0x8
#define VU_TIMEOUT_S 15 /* a busy switch may take seconds right after a disconnect */

struct vu_hdr {
	uint32_t request;
	uint32_t flags;
	uint32_t size;
};

struct vu_msg {
	struct vu_hdr hdr;
	union {
		uint64_t u64;
		struct {
			uint32_t index, num;
		} state;
		struct {
			uint32_t index, flags;
			uint64_t desc, used, avail, log;
		} addr;
		struct {
			uint32_t nregions, padding;
			struct {
				uint64_t gpa, size, uaddr, offset;
			} r[VU_MAX_REGIONS];
		} mem;
	} __attribute__((packed)) u;
} __attribute__((packed)); /* the payload follows the 12-byte header directly */

static int
vu_send(struct vu_frontend *fe, struct vu_msg *m, const int *fds, unsigned int nfds)
{
	char ctrl[CMSG_SPACE(sizeof(int) * VU_MAX_REGIONS)];
	struct iovec iov = {.iov_base = m, .iov_len = sizeof(m->hdr) + m->hdr.size};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	ssize_t n;

	m->hdr.flags |= VU_VERSION;
	if (nfds > 0) {
		struct cmsghdr *c;

		memset(ctrl, 0, sizeof(ctrl));
		mh.msg_control = ctrl;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
	}
	do {
		n = sendmsg(fe->fd, &mh, MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	if (n != (ssize_t)iov.iov_len)
		return vmm_err_errno("vhost-user: sending request %u", m->hdr.request);
	return 0;
}

static int
vu_recv_reply(struct vu_frontend *fe, uint32_t request, struct vu_msg *r)
{
	ssize_t n;

	do {
		n = recv(fe->fd, &r->hdr, sizeof(r->hdr), MSG_WAITALL);
	} while (n < 0 && errno == EINTR);
	if (n != sizeof(r->hdr))
		return n == 0 ? vmm_err("vhost-user: backend closed the connection")
			      : vmm_err_errno("vhost-user: reply to request %u", request);
	if (r->hdr.request != request || !(r->hdr.flags & VU_FLAG_REPLY) ||
	    r->hdr.size > sizeof(r->u))
		return vmm_err("vhost-user: bad reply to request %u", request);
	if (r->hdr.size > 0 &&
	    recv(fe->fd, &r->u, r->hdr.size, MSG_WAITALL) != (ssize_t)r->hdr.size)
		return vmm_err("vhost-user: short reply to request %u", request);
	return 0;
}

/* Send a message without a reply of its own; with REPLY_ACK, wait for the ack. */
static int
vu_request(struct vu_frontend *fe, struct vu_msg *m, const int *fds, unsigned int nfds)
{
	bool ack = fe->protocol_features & (1ull << VU_PROTOCOL_F_REPLY_ACK);
	struct vu_msg r;

	if (ack)
		m->hdr.flags |= VU_FLAG_NEED_REPLY;
	if (vu_send(fe, m, fds, nfds) != 0)
		return -1;
	if (!ack)
		return 0;
	if (vu_recv_reply(fe, m->hdr.request, &r) != 0)
		return -1;
	if (r.hdr.size != 8 || r.u.u64 != 0)
		return vmm_err("vhost-user: backend refused request %u", m->hdr.request);
	return 0;
}

static int
vu_get_u64(struct vu_frontend *fe, uint32_t request, uint64_t *out)
{
	struct vu_msg m = {.hdr = {.request = request}}, r;

	if (vu_send(fe, &m, NULL, 0) != 0 || vu_recv_reply(fe, request, &r) != 0)
		return -1;
	if (r.hdr.size != 8)
		return vmm_err("vhost-user: bad reply size to request %u", request);
	*out = r.u.u64;
	return 0;
}

static int
vu_set_u64(struct vu_frontend *fe, uint32_t request, uint64_t v)
{
	struct vu_msg m = {.hdr = {.request = request, .size = 8}};

	m.u.u64 = v;
	return vu_request(fe, &m, NULL, 0);
}

static int
vu_set_state(struct vu_frontend *fe, uint32_t request, uint32_t index, uint32_t num)
{
	struct vu_msg m = {.hdr = {.request = request, .size = sizeof(m.u.state)}};

	m.u.state.index = index;
	m.u.state.num = num;
	return vu_request(fe, &m, NULL, 0);
}

static int
vu_set_fd(struct vu_frontend *fe, uint32_t request, uint32_t index, int fd)
{
	struct vu_msg m = {.hdr = {.request = request, .size = 8}};

	m.u.u64 = index;
	return vu_request(fe, &m, &fd, 1);
}

int
vu_connect(struct vu_frontend *fe, const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct timeval tv = {.tv_sec = VU_TIMEOUT_S};

	fe->fd = -1;
	fe->protocol_features = 0;
	fe->owner_set = false;
	if (strlen(path) >= sizeof(sa.sun_path))
		return vmm_err("switch socket path too long: %s", path);
	strcpy(sa.sun_path, path);
	fe->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fe->fd < 0)
		return vmm_err_errno("socket");
	setsockopt(fe->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fe->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fe->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		vmm_err_errno("no switch port at %s", path);
		vu_close(fe);
		return -1;
	}
	if (vu_get_u64(fe, VU_GET_FEATURES, &fe->features) != 0) {
		vu_close(fe);
		return -1;
	}
	return 0;
}

void
vu_close(struct vu_frontend *fe)
{
	if (fe->fd >= 0)
		close(fe->fd);
	fe->fd = -1;
}

int
vu_start(struct vu_frontend *fe, uint64_t features, const struct vu_mem_region *regions,
	 unsigned int nregions, const struct vu_ring *rings, unsigned int nrings)
{
	struct vu_msg m;
	int fds[VU_MAX_REGIONS];
	unsigned int i;

	if (nregions > VU_MAX_REGIONS)
		return vmm_err("vhost-user: too many memory regions");
	if (fe->features & (1ull << VU_F_PROTOCOL_FEATURES)) {
		uint64_t pf = 0;

		if (vu_get_u64(fe, VU_GET_PROTOCOL_FEATURES, &pf) != 0 ||
		    vu_set_u64(fe, VU_SET_PROTOCOL_FEATURES,
			       pf & (1ull << VU_PROTOCOL_F_REPLY_ACK)) != 0)
			return -1;
		fe->protocol_features = pf & (1ull << VU_PROTOCOL_F_REPLY_ACK);
		features |= 1ull << VU_F_PROTOCOL_FEATURES;
	}
	if (!fe->owner_set) {
		memset(&m, 0, sizeof(m));
		m.hdr.request = VU_SET_OWNER;
		if (vu_request(fe, &m, NULL, 0) != 0)
			return -1;
		fe->owner_set = true;
	}
	if (vu_set_u64(fe, VU_SET_FEATURES, features) != 0)
		return -1;
	memset(&m, 0, sizeof(m));
	m.hdr.request = VU_SET_MEM_TABLE;
	m.hdr.size = 8 + nregions * sizeof(m.u.mem.r[0]);
	m.u.mem.nregions = nregions;
	for (i = 0; i < nregions; i++) {
		m.u.mem.r[i].gpa = regions[i].gpa;
		m.u.mem.r[i].size = regions[i].size;
		m.u.mem.r[i].uaddr = regions[i].uaddr;
		m.u.mem.r[i].offset = regions[i].offset;
		fds[i] = regions[i].fd;
	}
	if (vu_request(fe, &m, fds, nregions) != 0)
		return -1;
	for (i = 0; i < nrings; i++) {
		const struct vu_ring *r = &rings[i];

		if (vu_set_state(fe, VU_SET_VRING_NUM, i, r->num) != 0 ||
		    vu_set_state(fe, VU_SET_VRING_BASE, i, r->base) != 0)
			return -1;
		memset(&m, 0, sizeof(m));
		m.hdr.request = VU_SET_VRING_ADDR;
		m.hdr.size = sizeof(m.u.addr);
		m.u.addr.index = i;
		m.u.addr.desc = r->desc_ua;
		m.u.addr.used = r->used_ua;
		m.u.addr.avail = r->avail_ua;
		if (vu_request(fe, &m, NULL, 0) != 0 ||
		    vu_set_fd(fe, VU_SET_VRING_CALL, i, r->callfd) != 0 ||
		    vu_set_fd(fe, VU_SET_VRING_KICK, i, r->kickfd) != 0)
			return -1;
		if ((features & (1ull << VU_F_PROTOCOL_FEATURES)) &&
		    vu_set_state(fe, VU_SET_VRING_ENABLE, i, 1) != 0)
			return -1;
	}
	return 0;
}

int
vu_stop_ring(struct vu_frontend *fe, unsigned int index, uint16_t *base)
{
	struct vu_msg m = {.hdr = {.request = VU_GET_VRING_BASE, .size = sizeof(m.u.state)}}, r;

	m.u.state.index = index;
	if (vu_send(fe, &m, NULL, 0) != 0 || vu_recv_reply(fe, VU_GET_VRING_BASE, &r) != 0)
		return -1;
	*base = (uint16_t)r.u.state.num;
	return 0;
}
