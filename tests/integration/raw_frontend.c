/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "raw_frontend.h"

/* Ring layout inside guest memory: per vring, desc / avail / used pages. */
static uint32_t
ring_off(int vring, int part)
{
	return (uint32_t)(vring * 0x4000 + part * 0x1000);
}

int
raw_fe_connect(struct raw_fe *fe, const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};

	memset(fe, 0, sizeof(*fe));
	fe->kick[0] = fe->kick[1] = fe->call[0] = fe->call[1] = -1;
	fe->memfd = memfd_create("raw-guest", MFD_CLOEXEC);
	if (fe->memfd < 0 || ftruncate(fe->memfd, RAW_MEM_SIZE) != 0)
		return -1;
	fe->mem = mmap(NULL, RAW_MEM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fe->memfd, 0);
	if (fe->mem == MAP_FAILED)
		return -1;
	for (int v = 0; v < 2; v++) {
		fe->desc[v] = (struct vring_desc *)(fe->mem + ring_off(v, 0));
		fe->avail[v] = (struct vring_avail *)(fe->mem + ring_off(v, 1));
		fe->used[v] = (struct vring_used *)(fe->mem + ring_off(v, 2));
	}
	fe->sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fe->sock < 0)
		return -1;
	strncpy(sa.sun_path, path, sizeof(sa.sun_path) - 1);
	return connect(fe->sock, (struct sockaddr *)&sa, sizeof(sa));
}

void
raw_fe_close(struct raw_fe *fe)
{
	for (int v = 0; v < 2; v++) {
		if (fe->kick[v] >= 0)
			close(fe->kick[v]);
		if (fe->call[v] >= 0)
			close(fe->call[v]);
	}
	if (fe->mem != NULL && fe->mem != MAP_FAILED)
		munmap(fe->mem, RAW_MEM_SIZE);
	if (fe->memfd >= 0)
		close(fe->memfd);
	if (fe->sock >= 0)
		close(fe->sock);
	memset(fe, 0, sizeof(*fe));
}

int
raw_fe_send_bytes(struct raw_fe *fe, const void *buf, size_t len)
{
	return send(fe->sock, buf, len, MSG_NOSIGNAL) == (ssize_t)len ? 0 : -1;
}

int
raw_fe_send(struct raw_fe *fe, uint32_t request, uint32_t flags, const void *payload, uint32_t size,
	    const int *fds, unsigned int nfds)
{
	struct vhost_user_hdr hdr = {.request = request, .flags = flags, .size = size};
	struct iovec iov[2] = {{.iov_base = &hdr, .iov_len = sizeof(hdr)},
			       {.iov_base = (void *)payload, .iov_len = size}};
	char cbuf[CMSG_SPACE(sizeof(int) * 16)];
	struct msghdr mh = {.msg_iov = iov, .msg_iovlen = size ? 2 : 1};

	if (nfds > 0) {
		struct cmsghdr *c;

		mh.msg_control = cbuf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
	}
	return sendmsg(fe->sock, &mh, MSG_NOSIGNAL) == (ssize_t)(sizeof(hdr) + size) ? 0 : -1;
}

static int
recv_all(int fd, void *buf, size_t len, unsigned int timeout_ms)
{
	size_t got = 0;

	while (got < len) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t n;

		if (poll(&p, 1, (int)timeout_ms) != 1)
			return -1;
		n = recv(fd, (uint8_t *)buf + got, len - got, 0);
		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	return 0;
}

int
raw_fe_recv(struct raw_fe *fe, struct vhost_user_msg *reply, unsigned int timeout_ms)
{
	if (recv_all(fe->sock, &reply->hdr, sizeof(reply->hdr), timeout_ms) != 0)
		return -1;
	if (reply->hdr.size > sizeof(reply->payload))
		return -1;
	return recv_all(fe->sock, &reply->payload, reply->hdr.size, timeout_ms);
}

bool
raw_fe_closed(struct raw_fe *fe, unsigned int timeout_ms)
{
	struct pollfd p = {.fd = fe->sock, .events = POLLIN};
	char c;

	ssize_t n;

	/* the backend sends nothing unasked: readable means EOF (or a reset) */
	if (poll(&p, 1, (int)timeout_ms) != 1)
		return false;
	n = recv(fe->sock, &c, 1, MSG_DONTWAIT);
	return n == 0 || (n < 0 && errno != EAGAIN);
}

static int
send_state(struct raw_fe *fe, uint32_t req, uint32_t index, uint32_t num)
{
	struct vhost_vring_state s = {.index = index, .num = num};

	return raw_fe_send(fe, req, VHOST_USER_VERSION, &s, sizeof(s), NULL, 0);
}

static int
send_vring_fd(struct raw_fe *fe, uint32_t req, uint32_t index, int fd)
{
	uint64_t v = index;

	return raw_fe_send(fe, req, VHOST_USER_VERSION, &v, sizeof(v), &fd, 1);
}

int
raw_fe_setup(struct raw_fe *fe, uint64_t features)
{
	struct vhost_memory mem = {.nregions = 1};
	struct vhost_user_msg reply;
	uint64_t f = features | RTE_BIT64(VHOST_USER_F_PROTOCOL_FEATURES);
	uint64_t pf = RTE_BIT64(VHOST_USER_PROTOCOL_F_REPLY_ACK);

	if (raw_fe_send(fe, VHOST_USER_GET_FEATURES, VHOST_USER_VERSION, NULL, 0, NULL, 0) ||
	    raw_fe_recv(fe, &reply, 2000) || (reply.payload.u64 & f) != f)
		return -1;
	if (raw_fe_send(fe, VHOST_USER_SET_PROTOCOL_FEATURES, VHOST_USER_VERSION, &pf, sizeof(pf),
			NULL, 0) ||
	    raw_fe_send(fe, VHOST_USER_SET_OWNER, VHOST_USER_VERSION, NULL, 0, NULL, 0) ||
	    raw_fe_send(fe, VHOST_USER_SET_FEATURES, VHOST_USER_VERSION, &f, sizeof(f), NULL, 0))
		return -1;
	mem.regions[0].guest_phys_addr = RAW_GPA_BASE;
	mem.regions[0].memory_size = RAW_MEM_SIZE;
	mem.regions[0].userspace_addr = (uint64_t)(uintptr_t)fe->mem;
	mem.regions[0].mmap_offset = 0;
	if (raw_fe_send(fe, VHOST_USER_SET_MEM_TABLE, VHOST_USER_VERSION, &mem,
			8 + sizeof(mem.regions[0]), &fe->memfd, 1))
		return -1;
	for (int v = 0; v < 2; v++) {
		struct vhost_vring_addr a = {
			.index = (uint32_t)v,
			.desc_user_addr = (uint64_t)(uintptr_t)fe->desc[v],
			.avail_user_addr = (uint64_t)(uintptr_t)fe->avail[v],
			.used_user_addr = (uint64_t)(uintptr_t)fe->used[v],
		};

		fe->kick[v] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		fe->call[v] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (send_state(fe, VHOST_USER_SET_VRING_NUM, v, RAW_RING_SIZE) ||
		    send_state(fe, VHOST_USER_SET_VRING_BASE, v, 0) ||
		    raw_fe_send(fe, VHOST_USER_SET_VRING_ADDR, VHOST_USER_VERSION, &a, sizeof(a),
				NULL, 0) ||
		    send_vring_fd(fe, VHOST_USER_SET_VRING_CALL, v, fe->call[v]) ||
		    send_vring_fd(fe, VHOST_USER_SET_VRING_KICK, v, fe->kick[v]))
			return -1;
	}
	/* the last one asks for an ack: once it comes, everything before was applied */
	for (int v = 0; v < 2; v++) {
		struct vhost_vring_state s = {.index = (uint32_t)v, .num = 1};

		if (raw_fe_send(fe, VHOST_USER_SET_VRING_ENABLE,
				VHOST_USER_VERSION | VHOST_USER_NEED_REPLY, &s, sizeof(s), NULL,
				0) ||
		    raw_fe_recv(fe, &reply, 2000) || reply.payload.u64 != 0)
			return -1;
	}
	return 0;
}

uint16_t
raw_fe_post(struct raw_fe *fe, int vring, uint16_t first, unsigned int n, const uint64_t *addr,
	    const uint32_t *len, const uint16_t *flags)
{
	for (unsigned int i = 0; i < n; i++) {
		struct vring_desc *d = &fe->desc[vring][(first + i) % RAW_RING_SIZE];

		d->addr = addr[i];
		d->len = len[i];
		d->flags = flags[i] | (i + 1 < n ? VRING_DESC_F_NEXT : 0);
		d->next = (uint16_t)((first + i + 1) % RAW_RING_SIZE);
	}
	fe->avail[vring]->ring[fe->avail_idx[vring] % RAW_RING_SIZE] = first;
	__atomic_store_n(&fe->avail[vring]->idx, ++fe->avail_idx[vring], __ATOMIC_RELEASE);
	return first;
}

void
raw_fe_frame(struct raw_fe *fe, uint32_t off, uint32_t hdr_size, uint32_t len)
{
	uint8_t *p = fe->mem + off;

	memset(p, 0, hdr_size);
	for (uint32_t i = 0; i < len; i++)
		p[hdr_size + i] = (uint8_t)(i * 13 + 1);
	memset(p + hdr_size, 0xff, 6);
}

int
raw_fe_reset_ring(struct raw_fe *fe, int vring)
{
	struct vhost_user_msg reply;
	int kick;

	if (send_state(fe, VHOST_USER_GET_VRING_BASE, (uint32_t)vring, 0) ||
	    raw_fe_recv(fe, &reply, 2000))
		return -1;
	fe->avail_idx[vring] = (uint16_t)reply.payload.state.num;
	fe->used[vring]->idx = fe->avail_idx[vring];
	fe->avail[vring]->idx = fe->avail_idx[vring];
	kick = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (send_state(fe, VHOST_USER_SET_VRING_BASE, (uint32_t)vring, reply.payload.state.num) ||
	    send_vring_fd(fe, VHOST_USER_SET_VRING_KICK, (uint32_t)vring, kick)) {
		close(kick);
		return -1;
	}
	close(fe->kick[vring]);
	fe->kick[vring] = kick;
	/* an acked no-op orders us after the backend applied the above */
	{
		struct vhost_vring_state s = {.index = (uint32_t)vring, .num = 1};

		if (raw_fe_send(fe, VHOST_USER_SET_VRING_ENABLE,
				VHOST_USER_VERSION | VHOST_USER_NEED_REPLY, &s, sizeof(s), NULL,
				0) ||
		    raw_fe_recv(fe, &reply, 2000))
			return -1;
	}
	return 0;
}
