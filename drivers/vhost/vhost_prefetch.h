/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Loads issued ahead by the data path (vhost_rxtx.c): guest memory, written
 * on another core, is far, and misses issued back to back overlap where one
 * frame at a time would wait for each in turn. Also the copies into a guest:
 * long ones claim their lines ahead, short ones wait for the end of the burst.
 */
#ifndef HV_VHOST_PREFETCH_H
#define HV_VHOST_PREFETCH_H

#include <rte_mbuf.h>
#include <rte_memcpy.h>
#include <rte_prefetch.h>

#include "vhost_internal.h"

static inline uint16_t
avail_entry(const struct hv_vring *vr, uint16_t idx)
{
	return __atomic_load_n(&vr->avail->ring[idx & vr->mask], __ATOMIC_RELAXED);
}

/* How many frames ahead a burst starts loading buffers: guest memory is far. */
#define PREFETCH_AHEAD 4

/* Chains a burst loads ahead at most: more would be evicted before use. */
#define PREFETCH_MAX 64

/*
 * Ask for a line we are about to write in exclusive state, so the store does
 * not miss a second time to take it from the core that read it last.
 * PREFETCHW is on every x86-64 since AMD K8 and Intel Broadwell, and a NOP on
 * the Intel cores before (the baseline -march here does not enable it).
 */
static inline void
prefetch_for_write(const void *p)
{
#if defined(RTE_ARCH_X86_64)
	asm volatile("prefetchw %0" : : "m"(*(const volatile char *)p));
#else
	__builtin_prefetch(p, 1, 3);
#endif
}

/* Load line @p, or claim it for writing (prefetch_for_write()). */
static inline void
prefetch_line(const void *p, bool for_write)
{
	if (for_write)
		prefetch_for_write(p);
	else
		rte_prefetch0(p);
}

/*
 * Whether the first line of a receive buffer starting at @p holds the net
 * header (@hdr_size bytes) and nothing else: a DPDK guest puts it at the end
 * of its mbuf headroom, the frame from the next line on. That line is only
 * read, and written only if the header changed (hdr_store()): claiming it
 * for writing would take it from the guest's core for nothing.
 */
static inline bool
hdr_line_alone(uint32_t hdr_size, const uint8_t *p)
{
	uintptr_t hdr_end = (uintptr_t)p + hdr_size;

	/* a header (at most 12 bytes) that ends where a line ends lies in that line */
	return (hdr_end & (RTE_CACHE_LINE_SIZE - 1)) == 0;
}

/* How much of a chain's first buffer a burst loads ahead: a small frame whole. */
#define PREFETCH_SPAN 192

/*
 * Start loading the lines from @p to @end (at least the first), so that
 * copying the frame before hides their misses: a 64 B frame behind its net
 * header straddles two lines, and the second miss taken in the copy would
 * wait alone. @hdr_alone: the first line holds only the net header (see
 * hdr_line_alone()), so it is loaded even when the rest is claimed.
 */
static inline void
prefetch_buffer(const uint8_t *p, const uint8_t *end, bool for_write, bool hdr_alone)
{
	prefetch_line(p, for_write && !hdr_alone);
	/* addresses as integers: the last step may pass the end of the region */
	for (uintptr_t a = RTE_ALIGN_FLOOR((uintptr_t)p, RTE_CACHE_LINE_SIZE) + RTE_CACHE_LINE_SIZE;
	     a < (uintptr_t)end; a += RTE_CACHE_LINE_SIZE)
		prefetch_line((const void *)a, for_write);
}

/*
 * prefetch_buffer() from @p over @span bytes, PREFETCH_SPAN at most, without
 * a loop: the first line, the last, and the ones between (a span of over 64
 * bytes reaches one line more, of over 128 two).
 */
static __rte_always_inline void
prefetch_span(const uint8_t *p, uint32_t span, bool for_write, bool hdr_alone)
{
	prefetch_line(p, for_write && !hdr_alone);
	if (span > RTE_CACHE_LINE_SIZE) {
		prefetch_line(p + RTE_CACHE_LINE_SIZE, for_write);
		if (unlikely(span > 2 * RTE_CACHE_LINE_SIZE)) {
			prefetch_line(p + 2 * RTE_CACHE_LINE_SIZE, for_write);
			span = RTE_MIN(span, (uint32_t)PREFETCH_SPAN);
		}
		prefetch_line(p + span - 1, for_write);
	}
}

/*
 * Start loading the descriptors of the next @n chains from avail position
 * @idx, then the first buffer of each, all before copying any. The guest
 * just wrote them on another core, and guest buffers miss the caches and
 * often the TLB; issued back to back their misses and page walks overlap,
 * where a frame at a time would wait for each in turn. Of each first buffer,
 * the first PREFETCH_SPAN bytes at most: into the guest (@pkts set) what the
 * frame will fill, out of it what the descriptor holds. Only a hint: each
 * avail entry and descriptor is read once here and trusted for nothing, and
 * a buffer outside the region the ring last hit is skipped.
 */
static inline void
prefetch_chains(const struct hv_vhost_port *port, const struct hv_vring *vr, uint16_t idx,
		uint16_t n, struct rte_mbuf *const *pkts)
{
	const struct vring_avail *avail = vr->avail;
	const struct vring_desc *desc = vr->desc;
	const uint16_t mask = vr->mask, size = vr->size;
	const uint32_t hdr_size = port->hdr_size;
	const bool for_write = pkts != NULL;
	const struct hv_mem_region *r;
	uint16_t heads[PREFETCH_MAX];
	uint64_t gpa, region_size;
	const uint8_t *hva;

	n = RTE_MIN(n, (uint16_t)PREFETCH_MAX);
	for (uint16_t i = 0; i < n; i++) {
		heads[i] =
			__atomic_load_n(&avail->ring[(uint16_t)(idx + i) & mask], __ATOMIC_RELAXED);
		if (likely(heads[i] < size))
			rte_prefetch0(&desc[heads[i]]);
	}
	if (unlikely(vr->mem_hint >= port->mem.n))
		return;
	/* held in registers: the atomic loads below would make the compiler reload them */
	r = &port->mem.r[vr->mem_hint];
	gpa = r->gpa;
	region_size = r->size;
	hva = r->hva;
	for (uint16_t i = 0; i < n; i++) {
		uint64_t off;
		uint32_t span;
		const uint8_t *p;

		if (unlikely(heads[i] >= size))
			continue;
		off = __atomic_load_n(&desc[heads[i]].addr, __ATOMIC_RELAXED) - gpa;
		if (unlikely(off >= region_size))
			continue;
		span = __atomic_load_n(&desc[heads[i]].len, __ATOMIC_RELAXED);
		if (for_write)
			span = RTE_MIN(span, hdr_size + pkts[i]->data_len);
		span = RTE_MIN(span, (uint32_t)PREFETCH_SPAN);
		p = hva + off;
		prefetch_buffer(p, p + RTE_MIN((uint64_t)span, region_size - off), for_write,
				hdr_line_alone(hdr_size, p));
	}
}

/*
 * Ask for the used-ring lines the next @n entries from @idx will go to: the
 * guest reads them on its core, and a store that has to fetch its line holds
 * up every store behind it. @for_write false: lines expected to be only
 * read (entries already in place, see used_put_unless_equal()).
 */
static inline void
prefetch_used(const struct hv_vring *vr, uint16_t idx, uint16_t n, bool for_write)
{
	const uint16_t per_line = RTE_CACHE_LINE_SIZE / sizeof(struct vring_used_elem);

	for (uint16_t i = 0; i < n; i += per_line)
		prefetch_line(&vr->used->ring[(uint16_t)(idx + i) & vr->mask], for_write);
	if (n > 0)
		prefetch_line(&vr->used->ring[(uint16_t)(idx + n - 1) & vr->mask], for_write);
}

/*
 * Copy @len bytes, 32 to 64 (a short frame's usual copy), in two moves of
 * 32 that overlap, without rte_memcpy()'s tests of size and alignment. The
 * overlap is read and written twice: for frame bytes, which nothing reads
 * before the copy is done, that is harmless.
 */
static __rte_always_inline void
copy_32_to_64(uint8_t *dst, const uint8_t *src, uint32_t len)
{
	rte_mov32(dst, src);
	rte_mov32(dst + len - 32, src + len - 32);
}

/*
 * Copy into guest memory. A large piece (a borrowed 64 KiB tail) goes in
 * chunks, each first claiming for writing the lines COPY_AHEAD bytes further
 * on: the receiving guest's core read them last, and the hardware prefetcher
 * neither claims lines for writing early nor crosses a 4 KiB page. Measured
 * inside one run, 18 % more bytes per cycle for a 64 KiB TSO frame
 * (doc/performance.rst, "Offloads"); prefetching the source as well was
 * slower.
 */
#define COPY_CHUNK 1024
#define COPY_AHEAD 2048

static inline void
copy_to_guest(uint8_t *dst, const uint8_t *src, uint32_t len)
{
	uint32_t done = 0;

	if (likely(len < COPY_AHEAD)) {
		rte_memcpy(dst, src, len);
		return;
	}
	for (uint32_t x = 0; x < COPY_AHEAD; x += RTE_CACHE_LINE_SIZE)
		prefetch_for_write(dst + x);
	for (; done + COPY_CHUNK <= len; done += COPY_CHUNK) {
		uint32_t ahead_end = RTE_MIN(done + COPY_AHEAD + COPY_CHUNK, len);

		for (uint32_t x = done + COPY_AHEAD; x < ahead_end; x += RTE_CACHE_LINE_SIZE)
			prefetch_for_write(dst + x);
		rte_memcpy(dst + done, src + done, COPY_CHUNK);
	}
	if (done < len)
		rte_memcpy(dst + done, src + done, len - done);
}

/*
 * Copies of short frames into a guest, held until the end of the burst and
 * then done back to back. Each store goes to a line the guest's core read
 * last and waits for it; done frame by frame, they fill the store buffer
 * and every store of the burst loop (stack, counters) queues behind them.
 * DPDK's vhost library batches its short copies the same way. Measured
 * inside one run at 64 B: 1.00 to 1.17 times the frames (median 1.05), the
 * most where cross-core lines are dearest (doc/performance.rst, "Switch").
 */
#define COPY_BATCH_MAX_LEN 256
#define COPY_BATCH_SIZE 64

struct copy_batch {
	uint16_t n;
	struct {
		uint8_t *dst;
		const uint8_t *src;
		uint32_t len;
	} e[COPY_BATCH_SIZE];
};

/* Copy @len bytes to guest memory now or at copy_batch_run(): @src must live until then. */
static inline void
copy_to_guest_batched(struct copy_batch *b, uint8_t *dst, const uint8_t *src, uint32_t len)
{
	if (len > COPY_BATCH_MAX_LEN || b->n == COPY_BATCH_SIZE) {
		copy_to_guest(dst, src, len);
		return;
	}
	b->e[b->n].dst = dst;
	b->e[b->n].src = src;
	b->e[b->n].len = len;
	b->n++;
}

static inline void
copy_batch_run(struct copy_batch *b)
{
	for (uint16_t i = 0; i < b->n; i++)
		rte_memcpy(b->e[i].dst, b->e[i].src, b->e[i].len);
	b->n = 0;
}

#endif
