/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_common.h>

#include "vhost_mem.h"

#define HV_PAGE_SIZE 4096u

static bool
add_overflows(uint64_t a, uint64_t b)
{
	return a + b < a;
}

int
hv_mem_region_map(const struct vhost_memory_region *desc, int fd, uint64_t limit,
		  struct hv_mem_region *out, const char **why)
{
	uint64_t gpa = desc->guest_phys_addr, size = desc->memory_size;
	uint64_t uaddr = desc->userspace_addr, off = desc->mmap_offset;
	uint64_t blk, map_off, map_len;
	struct stat st;
	void *base;
	int rc = -EINVAL;

	if (size == 0) {
		*why = "empty region";
		goto out;
	}
	if ((gpa | size | uaddr | off) & (HV_PAGE_SIZE - 1)) {
		*why = "region not page aligned";
		goto out;
	}
	if (add_overflows(gpa, size) || add_overflows(uaddr, size) || add_overflows(off, size)) {
		*why = "region wraps around";
		goto out;
	}
	if (size > limit) {
		*why = "guest memory over the limit";
		rc = -E2BIG;
		goto out;
	}
	/*
	 * Nothing else may touch the fd before this: on a file system served by
	 * the frontend (FUSE), even fstat() can wait for it forever, and so
	 * would the first page fault in a mapping of it.
	 */
	if (fd < 0 || !vhost_fd_on_memfs(fd)) {
		*why = "region file not on a memory file system (memfd, tmpfs, hugetlbfs)";
		rc = -EBADF;
		goto out;
	}
	if (fstat(fd, &st) != 0) {
		*why = "region fd unusable";
		goto out;
	}
	/*
	 * Touching a shared mapping past the end of its file raises SIGBUS in the
	 * switch: the file must hold the whole region.
	 */
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size < off + size) {
		*why = "region larger than its file";
		goto out;
	}
	/*
	 * Map the region alone, not the file from offset 0: a sparse file with the
	 * region far into it would otherwise cost the switch the whole prefix in
	 * address space. hugetlbfs maps only whole huge pages, so offset and length
	 * are widened to the file's block size.
	 */
	blk = st.st_blksize > 0 ? (uint64_t)st.st_blksize : HV_PAGE_SIZE;
	if ((blk & (blk - 1)) != 0) {
		*why = "region file has an odd block size";
		goto out;
	}
	map_off = RTE_ALIGN_FLOOR(off, blk);
	/* cannot wrap: off + size did not, and map_off <= off */
	map_len = off - map_off + size;
	if (add_overflows(map_len, blk)) {
		*why = "region file has an odd block size";
		goto out;
	}
	map_len = RTE_ALIGN_CEIL(map_len, blk);
	if (map_len > limit) {
		*why = "guest memory over the limit";
		rc = -E2BIG;
		goto out;
	}
	if (map_len > SIZE_MAX) {
		*why = "region too large";
		goto out;
	}
	base = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)map_off);
	if (base == MAP_FAILED) {
		rc = -errno;
		*why = "mmap failed";
		goto out;
	}
	out->gpa = gpa;
	out->size = size;
	out->uaddr = uaddr;
	out->map_base = base;
	out->map_len = map_len;
	out->hva = (uint8_t *)base + (off - map_off);
	rc = 0;
out:
	return rc;
}

void
hv_mem_region_unmap(struct hv_mem_region *r)
{
	if (r->map_base != NULL) {
		vhost_guard_del(r->map_base);
		munmap(r->map_base, r->map_len);
	}
	memset(r, 0, sizeof(*r));
}

static bool
ranges_overlap(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
	return a < b + blen && b < a + alen;
}

int
hv_mem_admit(const struct hv_mem *m, const struct hv_mem_region *r, uint64_t limit,
	     const char **why)
{
	uint64_t total = r->map_len;

	for (uint32_t i = 0; i < m->n; i++) {
		const struct hv_mem_region *o = &m->r[i];

		if (ranges_overlap(o->gpa, o->size, r->gpa, r->size) ||
		    ranges_overlap(o->uaddr, o->size, r->uaddr, r->size)) {
			*why = "overlaps another";
			return -EINVAL;
		}
		/* no wrap: at most HV_VHOST_MAX_MEM_SLOTS terms, each at most HV_MEM_MAX_BYTES */
		total += o->map_len;
	}
	if (total > limit) {
		*why = "guest memory over the limit";
		return -E2BIG;
	}
	return 0;
}

void
hv_mem_clear(struct hv_mem *m)
{
	for (uint32_t i = 0; i < m->n; i++)
		hv_mem_region_unmap(&m->r[i]);
	m->n = 0;
}

void *
hv_mem_uva(const struct hv_mem *m, uint64_t uva, uint64_t len)
{
	for (uint32_t i = 0; i < m->n; i++) {
		const struct hv_mem_region *r = &m->r[i];
		uint64_t off = uva - r->uaddr;

		if (uva >= r->uaddr && off < r->size && len <= r->size - off)
			return r->hva + off;
	}
	return NULL;
}

uint64_t
hv_mem_mapped(const struct hv_mem *m)
{
	uint64_t total = 0;

	for (uint32_t i = 0; i < m->n; i++)
		total += m->r[i].map_len;
	return total;
}
