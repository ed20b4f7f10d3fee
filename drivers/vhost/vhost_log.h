/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The dirty log of live migration (vhost-user VHOST_F_LOG_ALL with
 * VHOST_USER_PROTOCOL_F_LOG_SHMFD): while the frontend migrates the guest,
 * every guest page the switch writes gets its bit set in a bitmap the
 * frontend shares (bit n of byte n / 8 stands for guest-physical page
 * n * 4 KiB, as the kernel's vhost and QEMU count them), so that the page is
 * copied again. The frontend clears bits as it copies (an atomic exchange of
 * whole words): ours are atomic ORs, and a bit is set only after the bytes
 * it stands for are stored.
 *
 * Off, logging costs the data path one predictable branch per burst
 * (vring_used_done()). On, a burst's pages are found at its end from the
 * used entries it wrote (vhost_log_burst()), not at each store.
 */
#ifndef HV_VHOST_LOG_H
#define HV_VHOST_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_branch_prediction.h>

#include "vhost_mem.h"

/* Guest page size of the log: one bit per 4 KiB. */
#define HV_LOG_PAGE_SHIFT 12

/*
 * Largest log we map: 64 MiB of bits covers 2 TiB of guest-physical
 * addresses, twice the largest guest memory a port may have
 * (HV_VHOST_MEM_LIMIT_MAX), holes included.
 */
#define HV_LOG_MAX_BYTES (UINT64_C(64) << 20)

/* The log as the data path sees it; set by the control thread with every ring paused. */
struct hv_log {
	uint8_t *bits;  /* the bitmap while logging is on, else NULL: what the data path tests */
	uint8_t *base;  /* byte 0 of the mapped bitmap (NULL: none) */
	uint64_t size;  /* bytes of it */
	void *map_base; /* what mmap() returned (whole file blocks) */
	size_t map_len;
	bool features_on; /* VHOST_F_LOG_ALL negotiated */
};

/*
 * Set the bits of guest-physical range [@gpa, @gpa + @len) in @log.
 * @return the bits this call turned from 0 to 1 (dirty pages newly logged).
 * A page beyond the log is the frontend's to cover: it is skipped (a log
 * sized for the memory table always covers it).
 */
static inline uint32_t
hv_log_gpa(const struct hv_log *log, uint64_t gpa, uint64_t len)
{
	uint64_t page, last;
	uint32_t set = 0;

	if (unlikely(len == 0))
		return 0;
	page = gpa >> HV_LOG_PAGE_SHIFT;
	/* gpa + len - 1 cannot wrap: the range lies in a region, and regions do not wrap */
	last = (gpa + len - 1) >> HV_LOG_PAGE_SHIFT;
	for (; page <= last; page++) {
		uint8_t *b, bit = (uint8_t)(1u << (page & 7));

		if (unlikely((page >> 3) >= log->size))
			break;
		b = &log->bits[page >> 3];
		/*
		 * Always the locked read-modify-write, even when the bit looks set:
		 * it is a full barrier, so the frontend, which clears a bit and then
		 * copies the page, either sees our data store or still finds the bit
		 * set. A plain load of a set bit may pass our store (store-load
		 * reordering) and miss the frontend's clear: a page sent stale.
		 */
		set += !(__atomic_fetch_or(b, bit, __ATOMIC_SEQ_CST) & bit);
	}
	return set;
}

/*
 * The guest-physical address of host address @hva in guest memory @m, with
 * *@len clipped to what is contiguous there; UINT64_MAX when @hva is not
 * guest memory. *@hint caches the region last hit.
 */
static inline uint64_t
hv_log_hva_to_gpa(const struct hv_mem *m, uint32_t *hint, const void *hva, uint64_t *len)
{
	const uint8_t *p = hva;
	uint32_t i = *hint;

	if (likely(i < m->n && (uint64_t)(p - m->r[i].hva) < m->r[i].size))
		goto found;
	for (i = 0; i < m->n; i++)
		if ((uint64_t)(p - m->r[i].hva) < m->r[i].size) {
			*hint = i;
			goto found;
		}
	return UINT64_MAX;
found:
	if (*len > m->r[i].size - (uint64_t)(p - m->r[i].hva))
		*len = m->r[i].size - (uint64_t)(p - m->r[i].hva);
	return m->r[i].gpa + (uint64_t)(p - m->r[i].hva);
}

/*
 * "Log this range": the helper for any site that stores @len bytes at host
 * address @hva of guest memory @m (split or packed ring, buffers or ring
 * structures). Call it after the store, with logging on (@log->bits set).
 * @return the pages newly marked dirty.
 */
static inline uint32_t
hv_log_write(const struct hv_log *log, const struct hv_mem *m, uint32_t *hint, const void *hva,
	     uint64_t len)
{
	const uint8_t *p = hva;
	uint32_t set = 0;

	while (len > 0) {
		uint64_t k = len;
		uint64_t gpa = hv_log_hva_to_gpa(m, hint, p, &k);

		if (gpa == UINT64_MAX)
			break;
		set += hv_log_gpa(log, gpa, k);
		p += k;
		len -= k;
	}
	return set;
}

#endif
