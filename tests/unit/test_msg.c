/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of vhost_msg_dispatch(): vhost-user messages are built in memory
 * and handed to the dispatcher with fds, without sockets or EAL.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vhost_internal.h"

#define MEM_SIZE 0x10000u
#define MEM_UA UINT64_C(0x7f0000000000)
#define MEM_GPA UINT64_C(0x100000)

static struct hv_vhost_port *port;
static struct vhost_user_msg reply;
static size_t reply_len;

/* The port is cache-line aligned: calloc() would not align it. */
static void
setup(void)
{
	void *p = NULL;

	ck_assert_int_eq(posix_memalign(&p, RTE_CACHE_LINE_SIZE, sizeof(*port)), 0);
	memset(p, 0, sizeof(*port));
	port = p;
	snprintf(port->name, sizeof(port->name), "test");
	port->queue_pairs = 1;
	port->offered_features = HV_VHOST_FEATURES_DEFAULT;
	port->mp = NULL;
	port->listen_fd = port->conn_fd = -1;
	vhost_dev_init(port);
}

static void
teardown(void)
{
	vhost_dev_reset(port);
	free(port);
	port = NULL;
}

static void
msg_init(struct vhost_user_msg *m, uint32_t req, uint32_t size)
{
	memset(m, 0, sizeof(*m));
	m->hdr.request = req;
	m->hdr.flags = VHOST_USER_VERSION;
	m->hdr.size = size;
}

static int
send_fds(struct vhost_user_msg *m, int *fds, unsigned int nfds)
{
	return vhost_msg_dispatch(port, m, fds, nfds, &reply, &reply_len);
}

static int
send_msg(struct vhost_user_msg *m)
{
	return send_fds(m, NULL, 0);
}

static int
send_u64(uint32_t req, uint64_t v)
{
	struct vhost_user_msg m;

	msg_init(&m, req, sizeof(uint64_t));
	m.payload.u64 = v;
	return send_msg(&m);
}

static int
send_state(uint32_t req, uint32_t index, uint32_t num)
{
	struct vhost_user_msg m;

	msg_init(&m, req, sizeof(struct vhost_vring_state));
	m.payload.state.index = index;
	m.payload.state.num = num;
	return send_msg(&m);
}

static int
send_vring_fd(uint32_t req, uint64_t u64, int fd)
{
	struct vhost_user_msg m;
	int fds[1] = {fd};

	msg_init(&m, req, sizeof(uint64_t));
	m.payload.u64 = u64;
	return send_fds(&m, fds, fd >= 0 ? 1 : 0);
}

static bool
fd_closed(int fd)
{
	return fcntl(fd, F_GETFD) == -1 && errno == EBADF;
}

static int
memfd(size_t size)
{
	int fd = memfd_create("hv-test-mem", MFD_CLOEXEC);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, (off_t)size), 0);
	return fd;
}

static int
evfd(void)
{
	int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

	ck_assert_int_ge(fd, 0);
	return fd;
}

static struct vhost_memory_region
region(uint64_t gpa, uint64_t size, uint64_t ua)
{
	return (struct vhost_memory_region){.guest_phys_addr = gpa, .memory_size = size,
					    .userspace_addr = ua, .mmap_offset = 0};
}

/* SET_MEM_TABLE with @n regions and @nfds fds (memfds of @file_size bytes). */
static int
send_mem_table(const struct vhost_memory_region *r, uint32_t n, unsigned int nfds,
	       size_t file_size)
{
	struct vhost_user_msg m;
	int fds[VHOST_MEMORY_BASELINE_NREGIONS + 1];
	int rc;

	ck_assert_uint_le(nfds, RTE_DIM(fds));
	msg_init(&m, VHOST_USER_SET_MEM_TABLE,
		 offsetof(struct vhost_memory, regions) +
		 RTE_MIN(n, (uint32_t)VHOST_MEMORY_BASELINE_NREGIONS) * sizeof(*r));
	m.payload.memory.nregions = n;
	for (uint32_t i = 0; i < n && i < VHOST_MEMORY_BASELINE_NREGIONS; i++)
		m.payload.memory.regions[i] = r[i];
	for (unsigned int i = 0; i < nfds; i++)
		fds[i] = memfd(file_size);
	rc = send_fds(&m, fds, nfds);
	for (unsigned int i = 0; i < nfds; i++)
		ck_assert_msg(fd_closed(fds[i]), "mem fd %u left open", i);
	return rc;
}

static int
send_mem_reg(uint32_t req, struct vhost_memory_region r, int fd)
{
	struct vhost_user_msg m;
	int fds[1] = {fd};

	msg_init(&m, req, sizeof(struct vhost_memory_single));
	m.payload.mem_reg.region = r;
	return send_fds(&m, fds, fd >= 0 ? 1 : 0);
}

static unsigned int
count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	unsigned int n = 0;

	ck_assert_ptr_nonnull(d);
	while (readdir(d) != NULL)
		n++;
	closedir(d);
	return n;
}

/* ---- features and generic checks ---- */

START_TEST(get_features)
{
	struct vhost_user_msg m;

	msg_init(&m, VHOST_USER_GET_FEATURES, 0);
	ck_assert_int_eq(send_msg(&m), 0);
	ck_assert_uint_eq(reply_len, sizeof(reply.hdr) + sizeof(uint64_t));
	ck_assert_uint_eq(reply.hdr.request, VHOST_USER_GET_FEATURES);
	ck_assert_uint_eq(reply.hdr.flags, VHOST_USER_VERSION | VHOST_USER_REPLY_MASK);
	ck_assert_uint_eq(reply.hdr.size, sizeof(uint64_t));
	ck_assert_uint_eq(reply.payload.u64,
			  HV_VHOST_FEATURES_DEFAULT | BIT64(VHOST_USER_F_PROTOCOL_FEATURES));
}
END_TEST

START_TEST(set_features)
{
	ck_assert_int_eq(send_u64(VHOST_USER_SET_FEATURES, HV_VHOST_FEATURES_DEFAULT), 0);
	ck_assert_uint_eq(reply_len, 0);
	ck_assert_uint_eq(port->features, HV_VHOST_FEATURES_DEFAULT);
	ck_assert(port->mrg_rxbuf && port->event_idx && port->indirect);
	ck_assert_uint_eq(port->hdr_size, 12);
	ck_assert_int_eq(send_u64(VHOST_USER_SET_FEATURES, 0), 0);
	ck_assert_uint_eq(port->hdr_size, 10);
	/* CSUM is supported but not offered by default */
	ck_assert_int_eq(send_u64(VHOST_USER_SET_FEATURES, HV_VHOST_F_CSUM), -1);
	ck_assert_int_eq(send_u64(VHOST_USER_SET_FEATURES, BIT64(63)), -1);
	ck_assert_uint_eq(port->features, 0);
}
END_TEST

START_TEST(bad_size_and_version)
{
	struct vhost_user_msg m;

	msg_init(&m, VHOST_USER_SET_FEATURES, 4);
	ck_assert_int_eq(send_msg(&m), -1);
	msg_init(&m, VHOST_USER_GET_FEATURES, 8);
	ck_assert_int_eq(send_msg(&m), -1);
	msg_init(&m, VHOST_USER_SET_VRING_NUM, sizeof(uint64_t) + 1);
	ck_assert_int_eq(send_msg(&m), -1);
	msg_init(&m, VHOST_USER_SET_VRING_ADDR, sizeof(struct vhost_vring_addr) - 8);
	ck_assert_int_eq(send_msg(&m), -1);
	msg_init(&m, VHOST_USER_GET_FEATURES, 0);
	m.hdr.flags = 2;
	ck_assert_int_eq(send_msg(&m), -1);
	ck_assert_uint_eq(reply_len, 0);
}
END_TEST

START_TEST(wrong_fd_count)
{
	struct vhost_user_msg m;
	int p[2];

	ck_assert_int_eq(pipe(p), 0);
	msg_init(&m, VHOST_USER_SET_OWNER, 0);
	ck_assert_int_eq(send_fds(&m, &p[0], 1), -1);
	ck_assert(fd_closed(p[0]));
	/* KICK without an fd and without NOFD */
	ck_assert_int_eq(send_vring_fd(VHOST_USER_SET_VRING_KICK, 0, -1), -1);
	/* NOFD and an fd anyway */
	ck_assert_int_eq(send_vring_fd(VHOST_USER_SET_VRING_KICK, VHOST_USER_VRING_NOFD_MASK,
				       p[1]), -1);
	ck_assert(fd_closed(p[1]));
	/* unknown bits in a vring fd payload */
	ck_assert_int_eq(send_vring_fd(VHOST_USER_SET_VRING_CALL, 0x200, -1), -1);
	/* ADD_MEM_REG without an fd */
	ck_assert_int_eq(send_mem_reg(VHOST_USER_ADD_MEM_REG, region(0, MEM_SIZE, MEM_UA), -1),
			 -1);
}
END_TEST

START_TEST(vring_index_range)
{
	int fd = evfd();

	ck_assert_int_eq(send_state(VHOST_USER_SET_VRING_NUM, 2, 256), -1);
	ck_assert_int_eq(send_state(VHOST_USER_SET_VRING_BASE, 1000, 0), -1);
	ck_assert_int_eq(send_state(VHOST_USER_GET_VRING_BASE, 2, 0), -1);
	ck_assert_int_eq(send_state(VHOST_USER_SET_VRING_ENABLE, UINT32_MAX, 1), -1);
	ck_assert_int_eq(send_vring_fd(VHOST_USER_SET_VRING_KICK, 2, fd), -1);
	ck_assert(fd_closed(fd));
	ck_assert_int_eq(send_state(VHOST_USER_SET_VRING_NUM, 1, 256), 0);
}
END_TEST

START_TEST(vring_num)
{
	ck_assert_int_eq(send_state(VHOST_USER_SET_VRING_NUM, 0, 0), -1);
	ck_assert_int_eq(send_state(VHOST_USER_SET_VRING_NUM, 0, 3), -1);
	ck_assert_int_eq(send_state(VHOST_USER_SET_VRING_NUM, 0, 65536), -1);
	ck_assert_int_eq(send_state(VHOST_USER_SET_VRING_NUM, 0, 65535), -1);
	ck_assert(!port->vr[0].num_set);
	ck_assert_int_eq(send_state(VHOST_USER_SET_VRING_NUM, 0, 1), 0);
	ck_assert_int_eq(send_state(VHOST_USER_SET_VRING_NUM, 0, 32768), 0);
	ck_assert_uint_eq(port->vr[0].size, 32768);
}
END_TEST

START_TEST(vring_addr_and_base)
{
	struct vhost_user_msg m;
	struct vhost_vring_addr *a = &m.payload.addr;

	msg_init(&m, VHOST_USER_SET_VRING_ADDR, sizeof(*a));
	a->desc_user_addr = MEM_UA + 8;
	ck_assert_int_eq(send_msg(&m), -1);
	a->desc_user_addr = MEM_UA;
	a->avail_user_addr = MEM_UA + 1;
	ck_assert_int_eq(send_msg(&m), -1);
	a->avail_user_addr = MEM_UA + 2;
	a->used_user_addr = MEM_UA + 2;
	ck_assert_int_eq(send_msg(&m), -1);
	ck_assert(!port->vr[0].addr_set);
	a->used_user_addr = MEM_UA + 4;
	ck_assert_int_eq(send_msg(&m), 0);
	ck_assert(port->vr[0].addr_set);

	ck_assert_int_eq(send_state(VHOST_USER_SET_VRING_BASE, 0, 65536), -1);
	ck_assert_int_eq(send_state(VHOST_USER_SET_VRING_BASE, 0, UINT32_MAX), -1);
	ck_assert_int_eq(send_state(VHOST_USER_SET_VRING_BASE, 0, 65535), 0);
	ck_assert_uint_eq(port->vr[0].last_avail_idx, 65535);
	ck_assert_int_eq(send_state(VHOST_USER_SET_VRING_ENABLE, 0, 2), -1);
}
END_TEST

START_TEST(vring_fds)
{
	int p[2], e = evfd(), c = evfd();

	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(send_vring_fd(VHOST_USER_SET_VRING_KICK, 0, p[0]), -1);
	ck_assert(fd_closed(p[0]));
	ck_assert_int_eq(send_vring_fd(VHOST_USER_SET_VRING_CALL, 1, p[1]), -1);
	ck_assert(fd_closed(p[1]));
	ck_assert_int_eq(send_vring_fd(VHOST_USER_SET_VRING_CALL, 1, c), 0);
	ck_assert_int_eq(port->vr[1].callfd, c);
	ck_assert(!fd_closed(c));
	/* a new call fd replaces (and closes) the old one */
	ck_assert_int_eq(send_vring_fd(VHOST_USER_SET_VRING_CALL, 1, e), 0);
	ck_assert(fd_closed(c));
	ck_assert_int_eq(port->vr[1].callfd, e);
	ck_assert_int_eq(send_vring_fd(VHOST_USER_SET_VRING_CALL,
				       1 | VHOST_USER_VRING_NOFD_MASK, -1), 0);
	ck_assert(fd_closed(e));
	ck_assert_int_eq(port->vr[1].callfd, -1);
	e = evfd();
	ck_assert_int_eq(send_vring_fd(VHOST_USER_SET_VRING_ERR, 0, e), 0);
	ck_assert_int_eq(port->vr[0].errfd, e);
	vhost_dev_reset(port);
	ck_assert(fd_closed(e));
}
END_TEST

START_TEST(reply_ack)
{
	struct vhost_user_msg m;
	const uint64_t ack = BIT64(VHOST_USER_PROTOCOL_F_REPLY_ACK);

	/* unknown request without REPLY_ACK: ignored, no reply */
	msg_init(&m, 99, 0);
	m.hdr.flags |= VHOST_USER_NEED_REPLY;
	ck_assert_int_eq(send_msg(&m), 0);
	ck_assert_uint_eq(reply_len, 0);

	ck_assert_int_eq(send_u64(VHOST_USER_SET_PROTOCOL_FEATURES, BIT64(1)), -1);
	ck_assert_int_eq(send_u64(VHOST_USER_SET_PROTOCOL_FEATURES, ack), 0);
	ck_assert_uint_eq(port->protocol_features, ack);

	ck_assert_int_eq(send_msg(&m), 0);
	ck_assert_uint_eq(reply_len, sizeof(reply.hdr) + sizeof(uint64_t));
	ck_assert_uint_eq(reply.hdr.request, 99);
	ck_assert_uint_eq(reply.hdr.flags, VHOST_USER_VERSION | VHOST_USER_REPLY_MASK);
	ck_assert_uint_eq(reply.payload.u64, 1);

	msg_init(&m, VHOST_USER_SET_OWNER, 0);
	m.hdr.flags |= VHOST_USER_NEED_REPLY;
	ck_assert_int_eq(send_msg(&m), 0);
	ck_assert_uint_eq(reply_len, sizeof(reply.hdr) + sizeof(uint64_t));
	ck_assert_uint_eq(reply.payload.u64, 0);

	/* a refused message is acked with 1, and still disconnects */
	msg_init(&m, VHOST_USER_SET_VRING_NUM, sizeof(struct vhost_vring_state));
	m.hdr.flags |= VHOST_USER_NEED_REPLY;
	m.payload.state.num = 3;
	ck_assert_int_eq(send_msg(&m), -1);
	ck_assert_uint_eq(reply_len, sizeof(reply.hdr) + sizeof(uint64_t));
	ck_assert_uint_eq(reply.payload.u64, 1);

	/* without NEED_REPLY there is no ack */
	ck_assert_int_eq(send_state(VHOST_USER_SET_VRING_NUM, 0, 4), 0);
	ck_assert_uint_eq(reply_len, 0);
}
END_TEST

START_TEST(get_small_replies)
{
	struct vhost_user_msg m;

	msg_init(&m, VHOST_USER_GET_MAX_MEM_SLOTS, 0);
	ck_assert_int_eq(send_msg(&m), 0);
	ck_assert_uint_eq(reply_len, sizeof(reply.hdr) + sizeof(uint64_t));
	ck_assert_uint_eq(reply.payload.u64, HV_VHOST_MAX_MEM_SLOTS);
	msg_init(&m, VHOST_USER_GET_QUEUE_NUM, 0);
	ck_assert_int_eq(send_msg(&m), 0);
	ck_assert_uint_eq(reply.payload.u64, 1);
	msg_init(&m, VHOST_USER_GET_PROTOCOL_FEATURES, 0);
	ck_assert_int_eq(send_msg(&m), 0);
	ck_assert(reply.payload.u64 & BIT64(VHOST_USER_PROTOCOL_F_REPLY_ACK));
	ck_assert(reply.payload.u64 & BIT64(VHOST_USER_PROTOCOL_F_CONFIGURE_MEM_SLOTS));
}
END_TEST

/* ---- memory ---- */

START_TEST(mem_table)
{
	struct vhost_memory_region r[9];

	for (unsigned int i = 0; i < RTE_DIM(r); i++)
		r[i] = region(MEM_GPA + i * MEM_SIZE, MEM_SIZE, MEM_UA + i * MEM_SIZE);
	ck_assert_int_eq(send_mem_table(r, 1, 1, MEM_SIZE), 0);
	ck_assert_uint_eq(port->mem.n, 1);
	ck_assert_uint_eq(port->mem.r[0].gpa, MEM_GPA);
	ck_assert_ptr_nonnull(port->mem.r[0].hva);
	/* a new table replaces the old */
	ck_assert_int_eq(send_mem_table(r, 8, 8, MEM_SIZE), 0);
	ck_assert_uint_eq(port->mem.n, 8);

	/* refused tables leave the current one alone */
	ck_assert_int_eq(send_mem_table(r, 1, 1, MEM_SIZE - 4096), -1);
	ck_assert_int_eq(send_mem_table(r, 0, 0, MEM_SIZE), -1);
	ck_assert_int_eq(send_mem_table(r, 9, 8, MEM_SIZE), -1);
	ck_assert_int_eq(send_mem_table(r, 9, 9, MEM_SIZE), -1);
	ck_assert_int_eq(send_mem_table(r, 2, 1, MEM_SIZE), -1);
	ck_assert_int_eq(send_mem_table(r, 1, 2, MEM_SIZE), -1);
	r[1].guest_phys_addr = MEM_GPA + MEM_SIZE / 2;
	ck_assert_int_eq(send_mem_table(r, 2, 2, MEM_SIZE), -1); /* GPA overlap */
	r[1].guest_phys_addr = MEM_GPA + MEM_SIZE;
	r[1].userspace_addr = MEM_UA;
	ck_assert_int_eq(send_mem_table(r, 2, 2, MEM_SIZE), -1); /* UA overlap */
	r[1] = region(MEM_GPA + 0x800, MEM_SIZE, MEM_UA + MEM_SIZE);
	ck_assert_int_eq(send_mem_table(&r[1], 1, 1, 2 * MEM_SIZE), -1); /* unaligned */
	r[1] = region(MEM_GPA, 0, MEM_UA);
	ck_assert_int_eq(send_mem_table(&r[1], 1, 1, MEM_SIZE), -1); /* empty */
	r[1] = region(UINT64_MAX - 4095, MEM_SIZE, MEM_UA);
	ck_assert_int_eq(send_mem_table(&r[1], 1, 1, MEM_SIZE), -1); /* wraps */
	ck_assert_uint_eq(port->mem.n, 8);
}
END_TEST

START_TEST(mem_table_bad_fd)
{
	struct vhost_memory_region r = region(MEM_GPA, MEM_SIZE, MEM_UA);
	struct vhost_user_msg m;
	int p[2];

	ck_assert_int_eq(pipe(p), 0);
	msg_init(&m, VHOST_USER_SET_MEM_TABLE, offsetof(struct vhost_memory, regions) + sizeof(r));
	m.payload.memory.nregions = 1;
	m.payload.memory.regions[0] = r;
	ck_assert_int_eq(send_fds(&m, &p[0], 1), -1);
	ck_assert(fd_closed(p[0]));
	close(p[1]);
	ck_assert_uint_eq(port->mem.n, 0);
}
END_TEST

START_TEST(mem_reg_add_rem)
{
	struct vhost_memory_region a = region(MEM_GPA, MEM_SIZE, MEM_UA);
	struct vhost_memory_region b = region(MEM_GPA + MEM_SIZE, MEM_SIZE, MEM_UA + MEM_SIZE);
	int fd;

	ck_assert_int_eq(send_mem_reg(VHOST_USER_ADD_MEM_REG, a, memfd(MEM_SIZE)), 0);
	ck_assert_int_eq(send_mem_reg(VHOST_USER_ADD_MEM_REG, b, memfd(MEM_SIZE)), 0);
	ck_assert_uint_eq(port->mem.n, 2);
	ck_assert_int_eq(send_mem_reg(VHOST_USER_ADD_MEM_REG, a, memfd(MEM_SIZE)), -1);
	fd = memfd(MEM_SIZE / 2);
	ck_assert_int_eq(send_mem_reg(VHOST_USER_ADD_MEM_REG, region(0, MEM_SIZE, 0), fd), -1);
	ck_assert(fd_closed(fd));
	ck_assert_uint_eq(port->mem.n, 2);

	ck_assert_int_eq(send_mem_reg(VHOST_USER_REM_MEM_REG, a, -1), 0);
	ck_assert_uint_eq(port->mem.n, 1);
	ck_assert_uint_eq(port->mem.r[0].gpa, b.guest_phys_addr);
	ck_assert_int_eq(send_mem_reg(VHOST_USER_REM_MEM_REG, a, -1), -1);
	/* REM with an fd (as QEMU sends): the fd is closed */
	fd = memfd(MEM_SIZE);
	ck_assert_int_eq(send_mem_reg(VHOST_USER_REM_MEM_REG, b, fd), 0);
	ck_assert(fd_closed(fd));
	ck_assert_uint_eq(port->mem.n, 0);
	/* a region matching in GPA but not in size is not removed */
	ck_assert_int_eq(send_mem_reg(VHOST_USER_ADD_MEM_REG, a, memfd(MEM_SIZE)), 0);
	a.memory_size = MEM_SIZE / 2;
	ck_assert_int_eq(send_mem_reg(VHOST_USER_REM_MEM_REG, a, -1), -1);
	ck_assert_uint_eq(port->mem.n, 1);
}
END_TEST

START_TEST(mem_reg_slots_full)
{
	for (uint32_t i = 0; i < HV_VHOST_MAX_MEM_SLOTS; i++)
		ck_assert_int_eq(send_mem_reg(VHOST_USER_ADD_MEM_REG,
					      region(i * 4096ull, 4096, MEM_UA + i * 4096ull),
					      memfd(4096)), 0);
	ck_assert_uint_eq(port->mem.n, HV_VHOST_MAX_MEM_SLOTS);
	ck_assert_int_eq(send_mem_reg(VHOST_USER_ADD_MEM_REG, region(1ull << 32, 4096, 1ull << 32),
				      memfd(4096)), -1);
	ck_assert_uint_eq(port->mem.n, HV_VHOST_MAX_MEM_SLOTS);
}
END_TEST

/* ---- a whole ring ---- */

/* Mem table, NUM 256, ADDR, BASE, features with PROTOCOL_FEATURES, KICK; not enabled yet. */
static void
ring_setup(int *memfd_out)
{
	struct vhost_memory_region r = region(MEM_GPA, MEM_SIZE, MEM_UA);
	struct vhost_user_msg m;
	uint16_t *used_idx;
	int fds[1];

	msg_init(&m, VHOST_USER_SET_MEM_TABLE, offsetof(struct vhost_memory, regions) + sizeof(r));
	m.payload.memory.nregions = 1;
	m.payload.memory.regions[0] = r;
	fds[0] = memfd(MEM_SIZE);
	*memfd_out = dup(fds[0]);
	/* the frontend's view: used ring at +0x2000, its index 7 */
	used_idx = mmap(NULL, MEM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0], 0);
	ck_assert_ptr_ne(used_idx, MAP_FAILED);
	used_idx[0x2000 / 2 + 1] = 7;
	munmap(used_idx, MEM_SIZE);
	ck_assert_int_eq(send_fds(&m, fds, 1), 0);

	ck_assert_int_eq(send_state(VHOST_USER_SET_VRING_NUM, 0, 256), 0);
	msg_init(&m, VHOST_USER_SET_VRING_ADDR, sizeof(m.payload.addr));
	m.payload.addr.desc_user_addr = MEM_UA;
	m.payload.addr.avail_user_addr = MEM_UA + 0x1000;
	m.payload.addr.used_user_addr = MEM_UA + 0x2000;
	ck_assert_int_eq(send_msg(&m), 0);
	ck_assert_int_eq(send_state(VHOST_USER_SET_VRING_BASE, 0, 7), 0);
	ck_assert_int_eq(send_u64(VHOST_USER_SET_FEATURES, HV_VHOST_FEATURES_DEFAULT |
				  BIT64(VHOST_USER_F_PROTOCOL_FEATURES)), 0);
	ck_assert_int_eq(send_vring_fd(VHOST_USER_SET_VRING_KICK, 0, evfd()), 0);
	ck_assert_uint_eq(port->vr[0].ready, 0);
}

START_TEST(ring_happy_path)
{
	struct hv_vring *vr = &port->vr[0];
	int mfd;

	ring_setup(&mfd);
	ck_assert_int_eq(send_state(VHOST_USER_SET_VRING_ENABLE, 0, 1), 0);
	ck_assert_uint_eq(vr->ready, 1);
	ck_assert_ptr_eq(vr->desc, port->mem.r[0].hva);
	ck_assert_ptr_eq((uint8_t *)vr->used, port->mem.r[0].hva + 0x2000);
	ck_assert_uint_eq(vr->used->flags, VRING_USED_F_NO_NOTIFY);
	ck_assert_uint_eq(vr->last_avail_idx, 7);
	ck_assert_uint_eq(vr->mask, 255);
	ck_assert_uint_eq(port->vr[1].ready, 0); /* not set up */

	ck_assert_int_eq(send_state(VHOST_USER_GET_VRING_BASE, 0, 0), 0);
	ck_assert_uint_eq(vr->ready, 0);
	ck_assert_int_eq(vr->kickfd, -1);
	ck_assert_uint_eq(reply_len, sizeof(reply.hdr) + sizeof(struct vhost_vring_state));
	ck_assert_uint_eq(reply.hdr.request, VHOST_USER_GET_VRING_BASE);
	ck_assert_uint_eq(reply.payload.state.index, 0);
	ck_assert_uint_eq(reply.payload.state.num, 7);
	/* a new kick starts it again */
	ck_assert_int_eq(send_vring_fd(VHOST_USER_SET_VRING_KICK, 0, evfd()), 0);
	ck_assert_uint_eq(vr->ready, 1);
	ck_assert_int_eq(send_state(VHOST_USER_SET_VRING_ENABLE, 0, 0), 0);
	ck_assert_uint_eq(vr->ready, 0);
	close(mfd);
}
END_TEST

START_TEST(ring_stops_without_memory)
{
	struct vhost_memory_region r = region(MEM_GPA, MEM_SIZE, MEM_UA);
	struct vhost_user_msg m;
	int mfd;

	ring_setup(&mfd);
	ck_assert_int_eq(send_state(VHOST_USER_SET_VRING_ENABLE, 0, 1), 0);
	ck_assert_uint_eq(port->vr[0].ready, 1);
	ck_assert_int_eq(send_mem_reg(VHOST_USER_REM_MEM_REG, r, -1), 0);
	ck_assert_uint_eq(port->vr[0].ready, 0);
	/* the ring's memory is back: it restarts */
	ck_assert_int_eq(send_mem_reg(VHOST_USER_ADD_MEM_REG, r, mfd), 0);
	ck_assert_uint_eq(port->vr[0].ready, 1);
	/* ring addresses outside memory: not started */
	ck_assert_int_eq(send_state(VHOST_USER_SET_VRING_NUM, 0, 32768), 0);
	ck_assert_uint_eq(port->vr[0].ready, 0);
	msg_init(&m, VHOST_USER_RESET_OWNER, 0);
	ck_assert_int_eq(send_msg(&m), 0);
	ck_assert_uint_eq(port->mem.n, 0);
	ck_assert_int_eq(port->vr[0].kickfd, -1);
}
END_TEST

START_TEST(ring_enabled_without_protocol_features)
{
	int mfd;

	ring_setup(&mfd);
	close(mfd);
	ck_assert_int_eq(send_u64(VHOST_USER_SET_FEATURES, HV_VHOST_FEATURES_DEFAULT), 0);
	ck_assert_uint_eq(port->vr[0].ready, 0);
	ck_assert_int_eq(send_vring_fd(VHOST_USER_SET_VRING_KICK, 0, evfd()), 0);
	ck_assert_uint_eq(port->vr[0].ready, 1);
}
END_TEST

START_TEST(no_leaks)
{
	unsigned int before = count_fds();
	int mfd, p[2];

	ring_setup(&mfd);
	close(mfd);
	ck_assert_int_eq(send_state(VHOST_USER_SET_VRING_ENABLE, 0, 1), 0);
	ck_assert_int_eq(send_vring_fd(VHOST_USER_SET_VRING_CALL, 0, evfd()), 0);
	ck_assert_int_eq(send_vring_fd(VHOST_USER_SET_VRING_ERR, 1, evfd()), 0);
	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(send_vring_fd(VHOST_USER_SET_VRING_CALL, 1, p[0]), -1);
	ck_assert_int_eq(send_vring_fd(VHOST_USER_SET_VRING_KICK, 2, p[1]), -1);
	ck_assert_int_eq(send_mem_reg(VHOST_USER_ADD_MEM_REG,
				      region(1ull << 30, MEM_SIZE, 1ull << 40), memfd(MEM_SIZE)),
			 0);
	ck_assert_uint_gt(count_fds(), before);
	vhost_dev_reset(port);
	ck_assert_uint_eq(count_fds(), before);
	ck_assert_uint_eq(port->mem.n, 0);
}
END_TEST

static Suite *
msg_suite(void)
{
	Suite *s = suite_create("msg");
	TCase *tc;

	tc = tcase_create("generic");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, get_features);
	tcase_add_test(tc, set_features);
	tcase_add_test(tc, bad_size_and_version);
	tcase_add_test(tc, wrong_fd_count);
	tcase_add_test(tc, reply_ack);
	tcase_add_test(tc, get_small_replies);
	suite_add_tcase(s, tc);

	tc = tcase_create("vring");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, vring_index_range);
	tcase_add_test(tc, vring_num);
	tcase_add_test(tc, vring_addr_and_base);
	tcase_add_test(tc, vring_fds);
	tcase_add_test(tc, ring_happy_path);
	tcase_add_test(tc, ring_stops_without_memory);
	tcase_add_test(tc, ring_enabled_without_protocol_features);
	tcase_add_test(tc, no_leaks);
	suite_add_tcase(s, tc);

	tc = tcase_create("mem");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, mem_table);
	tcase_add_test(tc, mem_table_bad_fd);
	tcase_add_test(tc, mem_reg_add_rem);
	tcase_add_test(tc, mem_reg_slots_full);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(msg_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
