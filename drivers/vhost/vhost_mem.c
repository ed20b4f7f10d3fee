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
hv_mem_region_map(const struct vhost_memory_region *desc, int fd,
		  struct hv_mem_region *out, const char **why)
{
	uint64_t gpa = desc->guest_phys_addr, size = desc->memory_size;
	uint64_t uaddr = desc->userspace_addr, off = desc->mmap_offset;
	uint64_t blk, map_len;
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
	if (add_overflows(gpa, size) || add_overflows(uaddr, size) ||
	    add_overflows(off, size)) {
		*why = "region wraps around";
		goto out;
	}
	if (fd < 0 || fstat(fd, &st) != 0) {
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
	/* hugetlbfs maps only whole huge pages */
	blk = st.st_blksize > 0 ? (uint64_t)st.st_blksize : HV_PAGE_SIZE;
	map_len = off + size;
	if (add_overflows(map_len, blk) || (blk & (blk - 1)) != 0) {
		*why = "region file has an odd block size";
		goto out;
	}
	map_len = RTE_ALIGN_CEIL(map_len, blk);
	if (map_len > SIZE_MAX) {
		*why = "region too large";
		goto out;
	}
	base = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
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
	out->hva = (uint8_t *)base + off;
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	return rc;
}

void
hv_mem_region_unmap(struct hv_mem_region *r)
{
	if (r->map_base != NULL)
		munmap(r->map_base, r->map_len);
	memset(r, 0, sizeof(*r));
}

static bool
ranges_overlap(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
	return a < b + blen && b < a + alen;
}

bool
hv_mem_overlaps(const struct hv_mem *m, const struct hv_mem_region *r)
{
	for (uint32_t i = 0; i < m->n; i++) {
		const struct hv_mem_region *o = &m->r[i];

		if (ranges_overlap(o->gpa, o->size, r->gpa, r->size) ||
		    ranges_overlap(o->uaddr, o->size, r->uaddr, r->size))
			return true;
	}
	return false;
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
