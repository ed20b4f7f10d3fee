/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vhost-user frontend: message encoding (12-byte header, then the payload,
 * fds as SCM_RIGHTS), replies, and the start-up sequence. Blocking with a
 * timeout: these messages run on the NIC's worker thread (and once when the
 * VM is created), never on a vCPU and never on the data path.
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

#define VU_TIMEOUT_S 15 /* a busy switch may take seconds right after a disconnect */

static int
vu_send(struct vu_frontend *fe, struct vhost_user_msg *m, const int *fds, unsigned int nfds)
{
	char ctrl[CMSG_SPACE(sizeof(int) * VHOST_MEMORY_BASELINE_NREGIONS)];
	/* the payload follows the 12-byte header directly on the wire */
	struct iovec iov[2] = {{.iov_base = &m->hdr, .iov_len = sizeof(m->hdr)},
			       {.iov_base = &m->payload, .iov_len = m->hdr.size}};
	struct msghdr mh = {.msg_iov = iov, .msg_iovlen = 2};
	ssize_t n;

	m->hdr.flags |= VHOST_USER_VERSION;
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
	if (n != (ssize_t)(sizeof(m->hdr) + m->hdr.size))
		return vmm_err_errno("vhost-user: sending request %u", m->hdr.request);
	return 0;
}

static int
vu_recv_reply(struct vu_frontend *fe, uint32_t request, struct vhost_user_msg *r)
{
	ssize_t n;

	do {
		n = recv(fe->fd, &r->hdr, sizeof(r->hdr), MSG_WAITALL);
	} while (n < 0 && errno == EINTR);
	if (n != sizeof(r->hdr))
		return n == 0 ? vmm_err("vhost-user: backend closed the connection")
			      : vmm_err_errno("vhost-user: reply to request %u", request);
	if (r->hdr.request != request || !(r->hdr.flags & VHOST_USER_REPLY_MASK) ||
	    r->hdr.size > sizeof(r->payload))
		return vmm_err("vhost-user: bad reply to request %u", request);
	if (r->hdr.size > 0 &&
	    recv(fe->fd, &r->payload, r->hdr.size, MSG_WAITALL) != (ssize_t)r->hdr.size)
		return vmm_err("vhost-user: short reply to request %u", request);
	return 0;
}

/* Send a message without a reply of its own; with REPLY_ACK, wait for the ack. */
static int
vu_request(struct vu_frontend *fe, struct vhost_user_msg *m, const int *fds, unsigned int nfds)
{
	bool ack = fe->protocol_features & (1ull << VHOST_USER_PROTOCOL_F_REPLY_ACK);
	struct vhost_user_msg r;

	if (ack)
		m->hdr.flags |= VHOST_USER_NEED_REPLY;
	if (vu_send(fe, m, fds, nfds) != 0)
		return -1;
	if (!ack)
		return 0;
	if (vu_recv_reply(fe, m->hdr.request, &r) != 0)
		return -1;
	if (r.hdr.size != 8 || r.payload.u64 != 0)
		return vmm_err("vhost-user: backend refused request %u", m->hdr.request);
	return 0;
}

static int
vu_get_u64(struct vu_frontend *fe, uint32_t request, uint64_t *out)
{
	struct vhost_user_msg m = {.hdr = {.request = request}}, r;

	if (vu_send(fe, &m, NULL, 0) != 0 || vu_recv_reply(fe, request, &r) != 0)
		return -1;
	if (r.hdr.size != 8)
		return vmm_err("vhost-user: bad reply size to request %u", request);
	*out = r.payload.u64;
	return 0;
}

static int
vu_set_u64(struct vu_frontend *fe, uint32_t request, uint64_t v)
{
	struct vhost_user_msg m = {.hdr = {.request = request, .size = 8}};

	m.payload.u64 = v;
	return vu_request(fe, &m, NULL, 0);
}

static int
vu_set_state(struct vu_frontend *fe, uint32_t request, uint32_t index, uint32_t num)
{
	struct vhost_user_msg m = {.hdr = {.request = request, .size = sizeof(m.payload.state)}};

	m.payload.state.index = index;
	m.payload.state.num = num;
	return vu_request(fe, &m, NULL, 0);
}

static int
vu_set_fd(struct vu_frontend *fe, uint32_t request, uint32_t index, int fd)
{
	struct vhost_user_msg m = {.hdr = {.request = request, .size = 8}};

	m.payload.u64 = index;
	return vu_request(fe, &m, &fd, 1);
}

int
vu_open(struct vu_frontend *fe, const char *path)
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
	return 0;
}

int
vu_handshake(struct vu_frontend *fe)
{
	if (vu_get_u64(fe, VHOST_USER_GET_FEATURES, &fe->features) != 0)
		return -1;
	fe->queue_pairs = 1;
	if (fe->features & (1ull << VHOST_USER_F_PROTOCOL_FEATURES)) {
		uint64_t pf = 0, want = (1ull << VHOST_USER_PROTOCOL_F_REPLY_ACK) |
					(1ull << VHOST_USER_PROTOCOL_F_MQ);

		if (vu_get_u64(fe, VHOST_USER_GET_PROTOCOL_FEATURES, &pf) != 0 ||
		    vu_set_u64(fe, VHOST_USER_SET_PROTOCOL_FEATURES, pf & want) != 0)
			return -1;
		fe->protocol_features = pf & want;
		if (pf & (1ull << VHOST_USER_PROTOCOL_F_MQ)) {
			uint64_t qn = 0;

			if (vu_get_u64(fe, VHOST_USER_GET_QUEUE_NUM, &qn) != 0)
				return -1;
			/* a backend that claims none or absurdly many gets what we handle */
			fe->queue_pairs = (uint16_t)(qn == 0 ? 1 : qn > 0x8000 ? 0x8000 : qn);
		}
	}
	return 0;
}

int
vu_connect(struct vu_frontend *fe, const char *path)
{
	if (vu_open(fe, path) != 0)
		return -1;
	if (vu_handshake(fe) != 0) {
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
	struct vhost_user_msg m;
	int fds[VHOST_MEMORY_BASELINE_NREGIONS];
	unsigned int i;

	if (nregions > VHOST_MEMORY_BASELINE_NREGIONS)
		return vmm_err("vhost-user: too many memory regions");
	if (fe->features & (1ull << VHOST_USER_F_PROTOCOL_FEATURES))
		features |= 1ull << VHOST_USER_F_PROTOCOL_FEATURES;
	if (!fe->owner_set) {
		memset(&m, 0, sizeof(m));
		m.hdr.request = VHOST_USER_SET_OWNER;
		if (vu_request(fe, &m, NULL, 0) != 0)
			return -1;
		fe->owner_set = true;
	}
	if (vu_set_u64(fe, VHOST_USER_SET_FEATURES, features) != 0)
		return -1;
	memset(&m, 0, sizeof(m));
	m.hdr.request = VHOST_USER_SET_MEM_TABLE;
	m.hdr.size = 8 + nregions * sizeof(m.payload.memory.regions[0]);
	m.payload.memory.nregions = nregions;
	for (i = 0; i < nregions; i++) {
		m.payload.memory.regions[i].guest_phys_addr = regions[i].gpa;
		m.payload.memory.regions[i].memory_size = regions[i].size;
		m.payload.memory.regions[i].userspace_addr = regions[i].uaddr;
		m.payload.memory.regions[i].mmap_offset = regions[i].offset;
		fds[i] = regions[i].fd;
	}
	if (vu_request(fe, &m, fds, nregions) != 0)
		return -1;
	for (i = 0; i < nrings; i++) {
		const struct vu_ring *r = &rings[i];

		if (vu_set_state(fe, VHOST_USER_SET_VRING_NUM, r->index, r->num) != 0 ||
		    vu_set_state(fe, VHOST_USER_SET_VRING_BASE, r->index, r->base) != 0)
			return -1;
		memset(&m, 0, sizeof(m));
		m.hdr.request = VHOST_USER_SET_VRING_ADDR;
		m.hdr.size = sizeof(m.payload.addr);
		m.payload.addr.index = r->index;
		m.payload.addr.desc_user_addr = r->desc_ua;
		m.payload.addr.used_user_addr = r->used_ua;
		m.payload.addr.avail_user_addr = r->avail_ua;
		if (vu_request(fe, &m, NULL, 0) != 0 ||
		    vu_set_fd(fe, VHOST_USER_SET_VRING_CALL, r->index, r->callfd) != 0 ||
		    vu_set_fd(fe, VHOST_USER_SET_VRING_KICK, r->index, r->kickfd) != 0)
			return -1;
		if ((features & (1ull << VHOST_USER_F_PROTOCOL_FEATURES)) && r->enable &&
		    vu_set_state(fe, VHOST_USER_SET_VRING_ENABLE, r->index, 1) != 0)
			return -1;
	}
	return 0;
}

int
vu_enable_ring(struct vu_frontend *fe, unsigned int index, bool on)
{
	if (!(fe->features & (1ull << VHOST_USER_F_PROTOCOL_FEATURES)))
		return vmm_err("vhost-user: rings cannot be enabled without protocol features");
	return vu_set_state(fe, VHOST_USER_SET_VRING_ENABLE, index, on);
}

int
vu_stop_ring(struct vu_frontend *fe, unsigned int index, uint16_t *base)
{
	struct vhost_user_msg m = {.hdr = {.request = VHOST_USER_GET_VRING_BASE,
					   .size = sizeof(m.payload.state)}},
			      r;

	m.payload.state.index = index;
	if (vu_send(fe, &m, NULL, 0) != 0 || vu_recv_reply(fe, VHOST_USER_GET_VRING_BASE, &r) != 0)
		return -1;
	*base = (uint16_t)r.payload.state.num;
	return 0;
}
