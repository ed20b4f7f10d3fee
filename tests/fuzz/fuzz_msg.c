/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: a stream of vhost-user messages into vhost_msg_dispatch().
 *
 * Input: one byte of port configuration (queue pairs: (b & 7) + 1), then records
 *   [ctl: 1 byte][header: 12 bytes][payload: header.size bytes]
 * as they come on the socket. A header.size over the payload union, or an input
 * that ends inside a payload, ends the stream (the connection layer would
 * disconnect, or wait). ctl chooses the fds sent with the message:
 *   bits 0-1  0, 1: the count the message must carry; 2: that count +-1 (bit 2);
 *             3: ((ctl >> 4) & 7) + 1 fds
 *   bit 3     the wrong kind of fd: a pipe (bit 4), else a memfd where an
 *             eventfd belongs and the other way round
 *   bits 4-7  memfd size: 0 fits the region (up to 1 MiB), else 4 KiB << ((s-1) % 9)
 * SET_LOG_BASE's memfd (sel 0) holds the log the payload describes.
 * The first message refused ends the stream with vhost_dev_reset(), as the real
 * connection does. Every fd handed over must then be closed or kept by a vring,
 * and after the final reset none may be open and no memory stay mapped
 * (/proc/self/fd and /proc/self/maps are checked every HV_FUZZ_CHECK_EVERY
 * inputs, default 1000).
 */
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hv_test_fuzz.h"
#include "vhost_internal.h"

#define MAX_FDS VHOST_MEMORY_BASELINE_NREGIONS /* what the socket layer accepts */
#define MAX_FILE (1u << 20)
#define MEMFD_NAME "hv-fuzz-mem"
#define CHECK_EVERY 1000
/* fds created while one input runs: at most MAX_FDS per message */
#define MAX_TRACKED 4096

/* Fd rule of each request, from the driver's own table; 0: unknown request. */
static const uint8_t msg_fds[] = {
#define X(name, fn, num, size, fds, reply) [num] = (fds) + 1,
	VHOST_USER_MESSAGES(X)
#undef X
};

static struct hv_vhost_port *port;
static int tracked[MAX_TRACKED];
static unsigned int n_tracked;
static uint64_t inputs;
static uint64_t check_every = CHECK_EVERY;

/*
 * Open fds of the kinds this target hands to the driver (memfds, eventfds): after
 * a reset there must be none. Pipes are checked one by one (they are tracked);
 * counting all fds would also count those of the sanitizers' symbolizer.
 */
static unsigned int
count_our_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	char link[300], target[256];
	unsigned int n = 0;
	ssize_t len;

	FUZZ_ASSERT(d != NULL);
	while ((e = readdir(d)) != NULL) {
		snprintf(link, sizeof(link), "/proc/self/fd/%s", e->d_name);
		len = readlink(link, target, sizeof(target) - 1);
		if (len < 0)
			continue;
		target[len] = '\0';
		if (strncmp(target, "/memfd:" MEMFD_NAME, strlen("/memfd:" MEMFD_NAME)) == 0 ||
		    strcmp(target, "anon_inode:[eventfd]") == 0) {
			fprintf(stderr, "leaked: fd %s -> %s\n", e->d_name, target);
			n++;
		}
	}
	closedir(d);
	return n;
}

static unsigned int
count_memfd_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	unsigned int n = 0;

	FUZZ_ASSERT(f != NULL);
	while (fgets(line, sizeof(line), f) != NULL)
		if (strstr(line, "memfd:" MEMFD_NAME) != NULL)
			n++;
	fclose(f);
	return n;
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	void *p = NULL;

	(void)argc, (void)argv;
	/* Log formatting still runs; its output goes nowhere unless asked for. */
	if (getenv("HV_FUZZ_LOG") == NULL)
		rte_openlog_stream(fopen("/dev/null", "w"));
	rte_log_set_level(hv_logtype, RTE_LOG_DEBUG);
	if (getenv("HV_FUZZ_CHECK_EVERY") != NULL)
		check_every = strtoull(getenv("HV_FUZZ_CHECK_EVERY"), NULL, 0) ?: 1;
	if (posix_memalign(&p, RTE_CACHE_LINE_SIZE, sizeof(*port)) != 0)
		abort();
	port = p;
	return 0;
}

static void
port_init(uint8_t cfg)
{
	memset(port, 0, sizeof(*port));
	snprintf(port->name, sizeof(port->name), "fuzz");
	port->queue_pairs = (cfg & 7) + 1;
	port->offered_features = HV_VHOST_FEATURES_DEFAULT;
	port->mp = NULL;
	port->mem_limit = HV_VHOST_MEM_LIMIT_DEFAULT;
	port->listen_fd = port->conn_fd = -1;
	vhost_dev_init(port);
}

static const struct vhost_memory_region *
region_of(const struct vhost_user_msg *m, unsigned int i)
{
	if (m->hdr.request == VHOST_USER_SET_MEM_TABLE)
		return i < VHOST_MEMORY_BASELINE_NREGIONS ? &m->payload.memory.regions[i] : NULL;
	return i == 0 ? &m->payload.mem_reg.region : NULL;
}

static int
make_memfd(const struct vhost_memory_region *r, uint8_t sel)
{
	uint64_t size;
	int fd;

	if (sel == 0) {
		size = MAX_FILE;
		if (r != NULL && r->mmap_offset <= MAX_FILE &&
		    r->memory_size <= MAX_FILE - r->mmap_offset)
			size = r->mmap_offset + r->memory_size;
	} else {
		size = UINT64_C(4096) << ((sel - 1) % 9);
	}
	fd = memfd_create(MEMFD_NAME, MFD_CLOEXEC);
	FUZZ_ASSERT(fd >= 0);
	FUZZ_ASSERT(ftruncate(fd, (off_t)size) == 0);
	return fd;
}

/* SET_LOG_BASE's file: sel 0 fits the log (offset + size, up to 1 MiB), else as make_memfd(). */
static int
make_log_memfd(const struct vhost_user_log *l, uint8_t sel)
{
	struct vhost_memory_region r = {0};

	if (sel == 0 && l->mmap_offset <= MAX_FILE && l->mmap_size <= MAX_FILE - l->mmap_offset) {
		r.memory_size = l->mmap_size;
		r.mmap_offset = l->mmap_offset;
	}
	return make_memfd(&r, sel);
}

static int
make_fd(const struct vhost_user_msg *m, unsigned int rule, uint8_t ctl, unsigned int i)
{
	bool mem = rule == FDS_MEM + 1 || rule == FDS_ONE + 1 || rule == FDS_ANY + 1;
	int p[2], fd;

	if (m->hdr.request == VHOST_USER_SET_LOG_BASE && !(ctl & 8))
		return make_log_memfd(&m->payload.log, ctl >> 4);

	if (ctl & 8) {
		/* the wrong kind: a pipe, or the other of memfd/eventfd */
		if (ctl & 0x10) {
			FUZZ_ASSERT(pipe2(p, O_CLOEXEC) == 0);
			close(p[1]);
			return p[0];
		}
		mem = !mem;
	}
	if (mem)
		return make_memfd(region_of(m, i), ctl >> 4);
	fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	FUZZ_ASSERT(fd >= 0);
	return fd;
}

static unsigned int
expected_fds(const struct vhost_user_msg *m, unsigned int rule)
{
	switch (rule) {
	case FDS_VRING + 1:
		return (m->payload.u64 & VHOST_USER_VRING_NOFD_MASK) ? 0 : 1;
	case FDS_MEM + 1:
		return RTE_MIN(m->payload.memory.nregions, (uint32_t)MAX_FDS);
	case FDS_ONE + 1:
		return 1;
	case FDS_ANY + 1:
		return m->payload.u64 & 1; /* the padding: 0 or 1 */
	default:
		return 0;
	}
}

static bool
fd_open(int fd)
{
	return fcntl(fd, F_GETFD) != -1;
}

static bool
kept_by_port(int fd)
{
	unsigned int owners = 0;

	for (unsigned int i = 0; i < HV_VHOST_MAX_VRINGS; i++) {
		const struct hv_vring *vr = &port->vr[i];

		owners += (vr->kickfd == fd) + (vr->callfd == fd) + (vr->errfd == fd);
	}
	FUZZ_ASSERT(owners <= 1); /* two owners would close it twice */
	return owners == 1;
}

static bool
in_guest_memory(const void *p, size_t len)
{
	for (uint32_t i = 0; i < port->mem.n; i++) {
		const struct hv_mem_region *r = &port->mem.r[i];
		const uint8_t *b = p;

		if (b >= r->hva && len <= r->size && (uint64_t)(b - r->hva) <= r->size - len)
			return true;
	}
	return false;
}

/* Read by no one, written so that the reads of ring memory stay. */
volatile uint8_t hv_fuzz_sink;

/* A running ring must lie in mapped guest memory: touch its ends. */
static void
check_rings(void)
{
	FUZZ_ASSERT(port->mem.n <= HV_VHOST_MAX_MEM_SLOTS);
	for (unsigned int i = 0; i < HV_VHOST_MAX_VRINGS; i++) {
		const struct hv_vring *vr = &port->vr[i];
		size_t dl, al, ul;

		if (!vr->ready)
			continue;
		FUZZ_ASSERT(i < 2u * port->queue_pairs);
		if (port->packed) {
			/* a packed ring of any size, its two event areas */
			dl = sizeof(struct vring_packed_desc) * vr->size;
			FUZZ_ASSERT(vr->size != 0 && vr->last_avail_idx < vr->size);
			FUZZ_ASSERT(in_guest_memory(vr->pdesc, dl));
			FUZZ_ASSERT(in_guest_memory(vr->driver_event, 4));
			FUZZ_ASSERT(in_guest_memory(vr->device_event, 4));
			hv_fuzz_sink = ((const uint8_t *)vr->pdesc)[dl - 1];
			hv_fuzz_sink = ((const uint8_t *)vr->driver_event)[3];
			hv_fuzz_sink = ((const uint8_t *)vr->device_event)[3];
			continue;
		}
		FUZZ_ASSERT(vr->size != 0 && (vr->size & (vr->size - 1)) == 0);
		FUZZ_ASSERT(vr->mask == vr->size - 1);
		dl = sizeof(struct vring_desc) * vr->size;
		al = sizeof(struct vring_avail) + sizeof(uint16_t) * (vr->size + 1u);
		ul = sizeof(struct vring_used) + sizeof(struct vring_used_elem) * vr->size + 2;
		FUZZ_ASSERT(in_guest_memory(vr->desc, dl));
		FUZZ_ASSERT(in_guest_memory(vr->avail, al));
		FUZZ_ASSERT(in_guest_memory(vr->used, ul));
		hv_fuzz_sink = ((const uint8_t *)vr->desc)[dl - 1];
		hv_fuzz_sink = ((const uint8_t *)vr->avail)[al - 1];
		hv_fuzz_sink = ((const uint8_t *)vr->used)[ul - 1];
	}
	/* the dirty log: in use only with LOG_ALL, and mapped whole (touch its ends) */
	FUZZ_ASSERT(port->log.bits == NULL ||
		    (port->log.bits == port->log.base && port->log.features_on));
	if (port->log.base != NULL) {
		FUZZ_ASSERT(port->log.size > 0 && port->log.size <= HV_LOG_MAX_BYTES);
		hv_fuzz_sink = port->log.base[0];
		port->log.base[port->log.size - 1] |= 1;
	}
}

/* One message; false when the connection ends. */
static bool
one_message(struct vhost_user_msg *msg, uint8_t ctl)
{
	struct vhost_user_msg reply;
	unsigned int rule, nfds;
	size_t reply_len = 0;
	int fds[MAX_FDS + 1];
	int rc;

	rule = msg->hdr.request < RTE_DIM(msg_fds) ? msg_fds[msg->hdr.request] : 0;
	nfds = expected_fds(msg, rule);
	switch (ctl & 3) {
	case 2:
		nfds = (ctl & 4) ? nfds + 1 : (nfds > 0 ? nfds - 1 : 0);
		break;
	case 3:
		nfds = ((ctl >> 4) & 7) + 1;
		break;
	}
	nfds = RTE_MIN(nfds, (unsigned int)MAX_FDS);
	FUZZ_ASSERT(n_tracked + nfds <= MAX_TRACKED);
	for (unsigned int i = 0; i < nfds; i++) {
		fds[i] = make_fd(msg, rule, ctl, i);
		tracked[n_tracked++] = fds[i];
	}
	fds[nfds] = -2; /* canary: the dispatcher must not look past nfds */

	rc = vhost_msg_dispatch(port, msg, fds, nfds, &reply, &reply_len);
	FUZZ_ASSERT(rc == 0 || rc == -1);
	FUZZ_ASSERT(fds[nfds] == -2);
	if (reply_len > 0) {
		FUZZ_ASSERT(reply.hdr.size <= sizeof(reply.payload));
		FUZZ_ASSERT(reply_len == sizeof(reply.hdr) + reply.hdr.size);
		FUZZ_ASSERT(reply.hdr.request == msg->hdr.request);
	}
	/* every fd given is now closed, or held by exactly one vring */
	for (unsigned int i = 0; i < nfds; i++) {
		int fd = tracked[n_tracked - nfds + i];

		/* one of unknown kind (a pipe) is closed by the driver's reaper thread */
		for (unsigned int t = 0; t < 1000000 && fd_open(fd) && !kept_by_port(fd); t++)
			sched_yield();
		FUZZ_ASSERT(!fd_open(fd) || kept_by_port(fd));
	}
	check_rings();
	return rc == 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct vhost_user_msg msg; /* stale bytes carry over, as in the rx buffer */
	const size_t hdr = sizeof(struct vhost_user_hdr);
	size_t off = 1;

	if (size < 1)
		return 0;
	port_init(data[0]);
	memset(&msg, 0, sizeof(msg));
	n_tracked = 0;
	while (size - off >= 1 + hdr) {
		uint8_t ctl = data[off++];

		memcpy(&msg.hdr, data + off, hdr);
		off += hdr;
		if (msg.hdr.size > sizeof(msg.payload) || msg.hdr.size > size - off)
			break;
		memcpy(&msg.payload, data + off, msg.hdr.size);
		off += msg.hdr.size;
		if (!one_message(&msg, ctl))
			break;
	}
	vhost_dev_reset(port);
	FUZZ_ASSERT(port->mem.n == 0 && port->log.base == NULL && port->log.bits == NULL);
	for (unsigned int i = 0; i < HV_VHOST_MAX_VRINGS; i++)
		FUZZ_ASSERT(port->vr[i].kickfd == -1 && port->vr[i].callfd == -1 &&
			    port->vr[i].errfd == -1 && !port->vr[i].ready);
	for (unsigned int i = 0; i < n_tracked; i++)
		FUZZ_ASSERT(!fd_open(tracked[i]));
	if (++inputs % check_every == 0) {
		FUZZ_ASSERT(count_our_fds() == 0);
		FUZZ_ASSERT(count_memfd_maps() == 0);
	}
	return 0;
}
