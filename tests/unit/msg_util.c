/* SPDX-License-Identifier: BSD-3-Clause */
/* Helpers of the vhost_msg_dispatch() tests: a port without sockets, message builders. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "msg_util.h"

struct hv_vhost_port *port;
struct vhost_user_msg reply;
size_t reply_len;

/* The port is cache-line aligned: calloc() would not align it. */
void
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
	port->mem_limit = HV_VHOST_MEM_LIMIT_DEFAULT;
	port->listen_fd = port->conn_fd = -1;
	vhost_dev_init(port);
}

void
teardown(void)
{
	vhost_dev_reset(port);
	free(port);
	port = NULL;
}

void
msg_init(struct vhost_user_msg *m, uint32_t req, uint32_t size)
{
	memset(m, 0, sizeof(*m));
	m->hdr.request = req;
	m->hdr.flags = VHOST_USER_VERSION;
	m->hdr.size = size;
}

int
send_fds(struct vhost_user_msg *m, int *fds, unsigned int nfds)
{
	return vhost_msg_dispatch(port, m, fds, nfds, &reply, &reply_len);
}

int
send_msg(struct vhost_user_msg *m)
{
	return send_fds(m, NULL, 0);
}

int
send_u64(uint32_t req, uint64_t v)
{
	struct vhost_user_msg m;

	msg_init(&m, req, sizeof(uint64_t));
	m.payload.u64 = v;
	return send_msg(&m);
}

int
send_state(uint32_t req, uint32_t index, uint32_t num)
{
	struct vhost_user_msg m;

	msg_init(&m, req, sizeof(struct vhost_vring_state));
	m.payload.state.index = index;
	m.payload.state.num = num;
	return send_msg(&m);
}

int
send_vring_fd(uint32_t req, uint64_t u64, int fd)
{
	struct vhost_user_msg m;
	int fds[1] = {fd};

	msg_init(&m, req, sizeof(uint64_t));
	m.payload.u64 = u64;
	return send_fds(&m, fds, fd >= 0 ? 1 : 0);
}

bool
fd_closed(int fd)
{
	return fcntl(fd, F_GETFD) == -1 && errno == EBADF;
}

bool
wait_closed(int fd)
{
	/* an fd of unknown kind is closed by the reaper thread, a moment later */
	for (int i = 0; i < 2000; i++) {
		if (fd_closed(fd))
			return true;
		usleep(1000);
	}
	return false;
}

int
memfd(size_t size)
{
	int fd = memfd_create("hv-test-mem", MFD_CLOEXEC);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, (off_t)size), 0);
	return fd;
}

int
evfd(void)
{
	int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

	ck_assert_int_ge(fd, 0);
	return fd;
}

struct vhost_memory_region
region(uint64_t gpa, uint64_t size, uint64_t ua)
{
	return (struct vhost_memory_region){.guest_phys_addr = gpa,
					    .memory_size = size,
					    .userspace_addr = ua,
					    .mmap_offset = 0};
}

/* SET_MEM_TABLE with @n regions and @nfds fds (memfds of @file_size bytes). */
int
send_mem_table(const struct vhost_memory_region *r, uint32_t n, unsigned int nfds, size_t file_size)
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

int
send_mem_reg(uint32_t req, struct vhost_memory_region r, int fd)
{
	struct vhost_user_msg m;
	int fds[1] = {fd};

	msg_init(&m, req, sizeof(struct vhost_memory_single));
	m.payload.mem_reg.region = r;
	return send_fds(&m, fds, fd >= 0 ? 1 : 0);
}

unsigned int
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

/* Mem table, NUM 256, ADDR, BASE, features with PROTOCOL_FEATURES, KICK; not enabled yet. */
void
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
	ck_assert_int_eq(send_u64(VHOST_USER_SET_FEATURES,
				  (HV_VHOST_FEATURES_DEFAULT & ~HV_VHOST_F_RING_PACKED) |
					  RTE_BIT64(VHOST_USER_F_PROTOCOL_FEATURES)),
			 0);
	ck_assert_int_eq(send_vring_fd(VHOST_USER_SET_VRING_KICK, 0, evfd()), 0);
	ck_assert_uint_eq(port->vr[0].ready, 0);
}
