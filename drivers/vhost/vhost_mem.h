/* SPDX-License-Identifier: BSD-3-Clause */
/* Guest memory: the regions a frontend shares, and bounds-checked translation. */
#ifndef HV_VHOST_MEM_H
#define HV_VHOST_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_branch_prediction.h>

#include "hv_vhost.h"
#include "hv_vhost_user.h"

/* Slots we accept with CONFIGURE_MEM_SLOTS (GET_MAX_MEM_SLOTS answers this). */
#define HV_VHOST_MAX_MEM_SLOTS 32

/*
 * Most bytes one port may ever map for its guest memory, summed over its
 * regions: the ceiling of a port's limit (hv_vhost_port_conf.mem_limit).
 * Regions are backed by files the frontend chooses, which may be sparse:
 * without a cap a hostile frontend could use up the switch's 128 TiB of
 * address space and starve every other port.
 */
#define HV_MEM_MAX_BYTES HV_VHOST_MEM_LIMIT_MAX

struct hv_mem_region {
	uint64_t gpa;   /* guest-physical start */
	uint64_t size;  /* bytes */
	uint64_t uaddr; /* the frontend's virtual address of gpa */
	uint8_t *hva;   /* our address of gpa */
	void *map_base; /* what mmap() returned: the region widened to whole file blocks */
	size_t map_len;
};

struct hv_mem {
	uint32_t n;
	struct hv_mem_region r[HV_VHOST_MAX_MEM_SLOTS];
};

/*
 * Check a region description and map it from @fd, which stays the caller's.
 * The fd is used only if it is on a memory file system (vhost_fd_on_memfs()).
 * @return 0, or a negative errno with *why set to a reason for the log:
 *         -E2BIG over @limit bytes (whole file blocks), -EBADF a file on
 *         another file system, -EINVAL (or mmap's errno) otherwise.
 */
int hv_mem_region_map(const struct vhost_memory_region *desc, int fd, uint64_t limit,
		      struct hv_mem_region *out, const char **why);

/* Unmap one region. */
void hv_mem_region_unmap(struct hv_mem_region *r);

/*
 * Whether @r may join @m: 0, or a negative errno with *why set when it overlaps
 * (in guest-physical or frontend space) one of @m's regions (-EINVAL), or would
 * take @m's mapped bytes over @limit (-E2BIG).
 */
int hv_mem_admit(const struct hv_mem *m, const struct hv_mem_region *r, uint64_t limit,
		 const char **why);

/* Bytes mapped for @m (whole file blocks). */
uint64_t hv_mem_mapped(const struct hv_mem *m);

/*
 * Whether the kernel keeps @fd's file in memory (shmem: memfd, tmpfs; or
 * hugetlbfs), asked without calling into its file system (vhost_fd.c).
 */
bool vhost_fd_on_memfs(int fd);

/* Unmap every region. */
void hv_mem_clear(struct hv_mem *m);

/*
 * Guard a mapped region of the port in control-thread slot @slot: if its file
 * shrinks and an access faults (SIGBUS), the region becomes anonymous memory
 * and the port is flagged in vhost_mem_lost (vhost_guard.c). Unmapping a
 * region (hv_mem_region_unmap()) ends its guard.
 */
int vhost_guard_add(const void *base, size_t len, uint32_t slot); /* 0 or -ENOSPC */
void vhost_guard_del(const void *base);
/*
 * Install the SIGBUS handler (once; hv_vhost_init() with
 * HV_VHOST_INIT_SIGBUS_GUARD). 0 or a negative errno.
 */
int vhost_guard_setup(void);

/*
 * Translate a guest-physical range. Returns the host address of @gpa and
 * clips *len to what is contiguous there (the caller walks on for the rest),
 * or NULL when @gpa lies in no region. *hint caches the last region hit.
 */
static inline void *
hv_mem_gpa(const struct hv_mem *m, uint32_t *hint, uint64_t gpa, uint64_t *len)
{
	const struct hv_mem_region *r;
	uint32_t i = *hint;

	if (likely(i < m->n)) {
		r = &m->r[i];
		if (likely(gpa - r->gpa < r->size))
			goto found;
	}
	for (i = 0; i < m->n; i++) {
		r = &m->r[i];
		if (gpa - r->gpa < r->size) {
			*hint = i;
			goto found;
		}
	}
	return NULL;
found:
	if (*len > r->size - (gpa - r->gpa))
		*len = r->size - (gpa - r->gpa);
	return r->hva + (gpa - r->gpa);
}

/* Translate a frontend virtual range that must lie whole in one region. */
void *hv_mem_uva(const struct hv_mem *m, uint64_t uva, uint64_t len);

#endif
