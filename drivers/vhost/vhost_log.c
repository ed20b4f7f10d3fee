/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The dirty log of live migration (see vhost_log.h): the control side maps
 * the frontend's log (SET_LOG_BASE) with the care of guest memory, the data
 * path logs what a burst wrote at its end.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vhost_internal.h"
#include "vhost_log.h"
#include "vhost_vring.h"

/* ---- data path ---- */

/*
 * The pages of the guest buffer a used entry of the guest's receive ring
 * says we filled: its chain walked again, as far as the entry's length. The
 * entry and the chain were handed to us and are not the guest's to change
 * until the used index is published; a guest that changes them anyway gets
 * other pages logged, and only its own memory is wrong after migration.
 */
static uint32_t
log_buffer(struct hv_vhost_port *port, struct hv_vring *vr, const struct vring_used_elem *e)
{
	uint32_t id = __atomic_load_n(&e->id, __ATOMIC_RELAXED);
	uint32_t len = __atomic_load_n(&e->len, __ATOMIC_RELAXED);
	struct hv_chain c;
	uint32_t set = 0;

	if (len == 0 || id >= vr->size)
		return 0;
	if (hv_vring_walk(vr->desc, vr->size, &port->mem, &vr->mem_hint, (uint16_t)id, true,
			  port->indirect, &c) != 0)
		return 0;
	for (uint16_t i = 0; i < c.n_iov && len > 0; i++) {
		uint32_t k = RTE_MIN(len, c.iov[i].len);

		set += hv_log_write(&port->log, &port->mem, &vr->log_hint, c.iov[i].base, k);
		len -= k;
	}
	return set;
}

void
vhost_log_used_done(struct hv_vhost_port *port, struct hv_vring *vr, uint16_t entries)
{
	const struct hv_log *log = &port->log;
	struct vring_used *used = vr->used;
	uint16_t from = (uint16_t)(vr->last_used_idx - entries);
	/* vring 2n is the guest's receive ring: the one whose buffers we fill */
	bool rx = ((vr - port->vr) & 1) == 0;
	uint32_t set = 0;

	/* the burst's stores before the bits that stand for them */
	rte_atomic_thread_fence(__ATOMIC_RELEASE);
	for (uint16_t k = 0; k < entries; k++) {
		const struct vring_used_elem *e = &used->ring[(uint16_t)(from + k) & vr->mask];

		set += hv_log_write(log, &port->mem, &vr->log_hint, e, sizeof(*e));
		if (rx)
			set += log_buffer(port, vr, e);
	}
	/* the bits before the index: the release store orders them */
	__atomic_store_n(&used->idx, vr->last_used_idx, __ATOMIC_RELEASE);
	/* and the index's own page after it, or the frontend could copy it before */
	set += hv_log_write(log, &port->mem, &vr->log_hint, &used->idx, sizeof(used->idx));
	vr->stats.log_pages += set;
	vr->stats.log_syncs++;
}

uint32_t
vhost_log_used_flags(struct hv_vhost_port *port, struct hv_vring *vr)
{
	/* flags, and avail_event after the entries (virtio 1.2, 2.7.10) */
	return hv_log_write(&port->log, &port->mem, &vr->log_hint, &vr->used->flags,
			    sizeof(vr->used->flags)) +
	       hv_log_write(&port->log, &port->mem, &vr->log_hint, &vr->used->ring[vr->size],
			    sizeof(uint16_t));
}

/* ---- control side ---- */

/* Logging runs when it was negotiated and there is a log. Rings paused. */
static void
log_update(struct hv_vhost_port *port)
{
	struct hv_log *log = &port->log;

	log->bits = log->features_on && log->map_base != NULL ? log->base : NULL;
	__atomic_store_n(&port->mem_stats.log_bytes, log->map_base != NULL ? log->size : 0,
			 __ATOMIC_RELAXED);
}

void
vhost_log_features(struct hv_vhost_port *port, uint64_t features)
{
	port->log.features_on = !!(features & RTE_BIT64(VHOST_USER_F_LOG_ALL));
	log_update(port);
}

static void
log_unmap(struct hv_log *log)
{
	if (log->map_base != NULL) {
		vhost_guard_del(log->map_base);
		munmap(log->map_base, log->map_len);
	}
	log->map_base = NULL;
	log->map_len = 0;
	log->base = NULL;
	log->size = 0;
}

void
vhost_log_clear(struct hv_vhost_port *port)
{
	log_unmap(&port->log);
	log_update(port);
}

/*
 * Map @size bytes at @off of @fd, checked as guest memory is (hv_mem_region_map()):
 * 0 or a negative errno with *why set.
 */
static int
log_map(const struct vhost_user_log *l, int fd, struct hv_log *out, const char **why)
{
	uint64_t size = l->mmap_size, off = l->mmap_offset, blk, map_off, map_len;
	struct stat st;
	void *base;

	/* first, before any call that reaches the file's file system (FUSE could hold it) */
	if (!vhost_fd_on_memfs(fd)) {
		*why = "log file not on a memory file system (memfd, tmpfs, hugetlbfs)";
		return -EBADF;
	}
	if (size == 0 || size > HV_LOG_MAX_BYTES) {
		*why = "log size 0 or over 64 MiB";
		return -EINVAL;
	}
	if (off + size < off) {
		*why = "log wraps around";
		return -EINVAL;
	}
	if (fstat(fd, &st) != 0) {
		*why = "log fd unusable";
		return -EINVAL;
	}
	/* a store past the file's end would raise SIGBUS: the file must hold the log */
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size < off + size) {
		*why = "log larger than its file";
		return -EINVAL;
	}
	/* whole file blocks, as hugetlbfs maps them (up to 1 GiB pages) */
	blk = st.st_blksize > 0 ? (uint64_t)st.st_blksize : 4096;
	if ((blk & (blk - 1)) != 0 || blk > (UINT64_C(1) << 30)) {
		*why = "log file has an odd block size";
		return -EINVAL;
	}
	map_off = RTE_ALIGN_FLOOR(off, blk);
	map_len = RTE_ALIGN_CEIL(off - map_off + size, blk);
	base = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)map_off);
	if (base == MAP_FAILED) {
		*why = "mmap failed";
		return -errno;
	}
	out->map_base = base;
	out->map_len = map_len;
	out->base = (uint8_t *)base + (off - map_off);
	out->size = size;
	return 0;
}

int
vhost_log_set_base(struct hv_vhost_port *port, const struct vhost_user_log *l, int fd)
{
	struct hv_log next = {0}, old;
	const char *why = NULL;
	int rc;

	rc = log_map(l, fd, &next, &why);
	if (rc == 0 && vhost_guard_add(next.map_base, next.map_len, (uint32_t)port->slot) != 0) {
		why = "no room to guard it";
		munmap(next.map_base, next.map_len);
		rc = -ENOSPC;
	}
	if (rc != 0) {
		/* a file of another kind is also counted as such by the dispatcher (fds_refused) */
		VHOST_LOG(ERR, port,
			  "SET_LOG_BASE size 0x%" PRIx64 " offset 0x%" PRIx64 " refused: %s",
			  l->mmap_size, l->mmap_offset, why);
		return rc;
	}
	/* the data path stores into the log: swap it with every ring stopped */
	vhost_dev_pause_all(port);
	old = port->log;
	next.features_on = old.features_on;
	port->log = next;
	log_update(port);
	vhost_dev_start_all(port);
	log_unmap(&old);
	VHOST_LOG(INFO, port, "dirty log of %" PRIu64 " bytes mapped (logging %s)", next.size,
		  port->log.bits != NULL ? "on" : "off until VHOST_F_LOG_ALL");
	return 0;
}
