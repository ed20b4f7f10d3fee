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

/*
 * Start loading the descriptors of the next @n avail entries from @idx. The
 * guest just wrote them on another core: issued back to back, their misses
 * overlap, where one frame at a time would wait for each in turn.
 */
static inline void
prefetch_descs(const struct hv_vring *vr, uint16_t idx, uint16_t n)
{
	for (uint16_t i = 0; i < n; i++) {
		uint16_t head = avail_entry(vr, (uint16_t)(idx + i));

		if (likely(head < vr->size))
			rte_prefetch0(&vr->desc[head]);
	}
}

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
 * Whether line @a of a receive buffer starting at @p holds the net header
 * and nothing else: a DPDK guest puts it at the end of its mbuf headroom,
 * the frame from the next line on. That line is only read, and written
 * only if the header changed (hdr_store()): claiming it for writing would
 * take it from the guest's core for nothing.
 */
static inline bool
hdr_line_alone(const struct hv_vhost_port *port, const uint8_t *p, uintptr_t a)
{
	uintptr_t hdr_end = (uintptr_t)p + port->hdr_size;

	/* a header (at most 12 bytes) that ends where a line ends lies in that line */
	return a == (uintptr_t)p && (hdr_end & (RTE_CACHE_LINE_SIZE - 1)) == 0;
}

/* How much of a chain's first buffer a burst loads ahead: a small frame whole. */
#define PREFETCH_SPAN 192

/*
 * Start loading the first buffer of the chain at avail position @idx, so that
 * copying the frame before it hides the cache miss. Every line of the first
 * @span bytes (at most PREFETCH_SPAN, at most the descriptor): a 64 B frame
 * behind its net header straddles two lines, and the second miss taken in
 * the copy would wait alone. Only a hint: nothing is read through it, and an
 * address outside the hinted region is skipped.
 */
static inline void
prefetch_chain(const struct hv_vhost_port *port, const struct hv_vring *vr, uint16_t idx,
	       uint32_t span, bool for_write)
{
	const struct hv_mem_region *r;
	uint16_t head = avail_entry(vr, idx);
	uint64_t addr, off;
	uint32_t len;
	const uint8_t *p;

	if (unlikely(head >= vr->size || vr->mem_hint >= port->mem.n))
		return;
	addr = __atomic_load_n(&vr->desc[head].addr, __ATOMIC_RELAXED);
	len = __atomic_load_n(&vr->desc[head].len, __ATOMIC_RELAXED);
	r = &port->mem.r[vr->mem_hint];
	off = addr - r->gpa;
	if (off >= r->size)
		return;
	span = RTE_MIN(RTE_MIN(span, len), (uint32_t)PREFETCH_SPAN);
	if (span > r->size - off)
		span = (uint32_t)(r->size - off);
	p = r->hva + off;
	/* the first line, then the start of each following line the span reaches */
	for (uintptr_t a = (uintptr_t)p; a < (uintptr_t)p + RTE_MAX(span, 1u);
	     a = RTE_ALIGN_FLOOR(a, RTE_CACHE_LINE_SIZE) + RTE_CACHE_LINE_SIZE) {
		prefetch_line((const void *)a, for_write && !hdr_line_alone(port, p, a));
	}
}

/*
 * Start loading the first buffer of each of the next @n chains, all before
 * copying any. Guest buffers miss the caches and often the TLB; issued back
 * to back their misses and page walks overlap, where a frame at a time would
 * wait for each in turn. Into the guest (@pkts set) the span is what the
 * frame will fill; out of it, what the guest's descriptor holds.
 */
static inline void
prefetch_chains(const struct hv_vhost_port *port, const struct hv_vring *vr, uint16_t idx,
		uint16_t n, struct rte_mbuf *const *pkts)
{
	prefetch_descs(vr, idx, n);
	for (uint16_t i = 0; i < n; i++)
		prefetch_chain(port, vr, (uint16_t)(idx + i),
			       pkts != NULL ? port->hdr_size + pkts[i]->data_len : UINT32_MAX,
			       pkts != NULL);
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
