/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: hv_packed_walk() (and its inline fast path) over
 * fuzz-written guest memory, and a guest-side ring consumer on top of it;
 * hv_packed_run_one() (a burst's read-ahead) against hv_packed_one_in() on
 * every slot.
 *
 * Input: [size: le16][position: le16][flags][memory image: up to 64 KiB]
 *   size      1 + (v % 2048) ring slots (any size: packed rings need no
 *             power of two); the ring is the start of region 0
 *   position  v % (size + 1): the slot read first (size itself: out of range)
 *   flags     bit 0: writable chain expected; bit 1: indirect negotiated;
 *             bit 2: wrap counter; bits 3-4: where region 1 lies (adjacent,
 *             after a gap, above 4 GiB, just below 2^64); bits 5-7: hint
 * Guest memory is two regions of 32 KiB, each its own heap buffer so that
 * AddressSanitizer sees any iov that leaves one. Region 0 is at GPA 0x1000.
 * After the single walk, the ring is consumed from the position as a burst
 * does (walk, advance, up to 64 chains): positions must stay in the ring,
 * each chain take at least one slot, and the slots taken never exceed what a
 * chain may (size) nor does the burst revisit the first slot at its wrap.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hv_test_fuzz.h"
#include "vhost_packed.h"

#define REGION_SIZE 0x8000u
#define R0_GPA UINT64_C(0x1000)
#define HDR_SIZE 5
#define MAX_SLOTS (REGION_SIZE / sizeof(struct vring_packed_desc))

static const uint64_t r1_gpa[4] = {
	R0_GPA + REGION_SIZE,         /* adjacent: chains span both */
	R0_GPA + 4 * REGION_SIZE,     /* after a gap */
	UINT64_C(0x100000000),        /* above 4 GiB */
	UINT64_C(0xffffffffffff0000), /* near the top of the address space */
};

static uint8_t *region_buf[2];
static bool verbose;
/* not static: the copies into it must not be optimised away */
uint8_t hv_fuzz_scratch[REGION_SIZE];
static struct hv_chain chain, fast;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	verbose = getenv("HV_FUZZ_LOG") != NULL;
	for (unsigned int i = 0; i < 2; i++) {
		region_buf[i] = malloc(REGION_SIZE);
		FUZZ_ASSERT(region_buf[i] != NULL);
	}
	return 0;
}

static bool
iov_in_region(const struct hv_mem *mem, const struct hv_iov *iov)
{
	for (uint32_t i = 0; i < mem->n; i++) {
		const struct hv_mem_region *r = &mem->r[i];

		if (iov->base >= r->hva && iov->base < r->hva + r->size &&
		    iov->len <= r->size - (uint64_t)(iov->base - r->hva))
			return true;
	}
	return false;
}

/* What every successful walk must satisfy; reads every byte it describes. */
static void
check_chain(const struct hv_mem *mem, const struct hv_chain *c, const struct hv_packed_buf *b,
	    struct hv_packed_pos at, uint16_t ring_size)
{
	uint32_t total = 0;

	FUZZ_ASSERT(c->head == at.idx);
	FUZZ_ASSERT(c->n_iov <= HV_CHAIN_MAX_IOV);
	FUZZ_ASSERT(c->len <= HV_CHAIN_MAX_LEN);
	FUZZ_ASSERT(b->id < ring_size);
	FUZZ_ASSERT(b->ndesc >= 1 && b->ndesc <= ring_size);
	FUZZ_ASSERT(b->next.idx < ring_size);
	/* the next position is ndesc slots on, the wrap flipped once per lap */
	{
		struct hv_packed_pos want = hv_packed_advance(at, b->ndesc, ring_size);

		FUZZ_ASSERT(want.idx == b->next.idx && want.wrap == b->next.wrap);
	}
	for (unsigned int i = 0; i < c->n_iov; i++) {
		FUZZ_ASSERT(c->iov[i].len > 0);
		FUZZ_ASSERT(iov_in_region(mem, &c->iov[i]));
		total += c->iov[i].len;
		memcpy(hv_fuzz_scratch, c->iov[i].base, c->iov[i].len);
	}
	FUZZ_ASSERT(total == c->len);
}

/*
 * hv_packed_run_one() (a burst's read-ahead) must take exactly what
 * hv_packed_one_in() takes, once its caller has checked the id, with the
 * same buffer; what it takes lies whole in the region. Every slot of the
 * ring (the first 256), both regions.
 */
static void
check_run_one(const struct vring_packed_desc *ring, uint16_t ring_size, const struct hv_mem *mem,
	      uint16_t want)
{
	for (uint32_t h = 0; h < mem->n; h++) {
		const struct hv_mem_region *mr = &mem->r[h];
		const struct hv_packed_region r = {
			.gpa = mr->gpa, .size = mr->size, .hva = mr->hva};
		const uint32_t len_max = hv_packed_len_max(mr->size);

		for (uint16_t i = 0; i < ring_size && i < 256; i++) {
			struct hv_packed_one o;
			uint64_t off = 0;
			uint32_t len = 0;
			uint16_t id = 0;
			bool ok = hv_packed_run_one(&ring[i], want, mr->gpa, mr->size, len_max,
						    &off, &len, &id);
			int rc = hv_packed_one_in(&ring[i], ring_size, &r, want, &o);

			FUZZ_ASSERT((rc == 0) == (ok && id < ring_size));
			if (!ok)
				continue;
			FUZZ_ASSERT(len >= 1 && len <= HV_CHAIN_MAX_LEN);
			FUZZ_ASSERT(off < mr->size && len <= mr->size - off);
			memcpy(hv_fuzz_scratch, mr->hva + off, RTE_MIN(len, REGION_SIZE));
			if (rc == 0)
				FUZZ_ASSERT(o.base == mr->hva + off && o.len == len && o.id == id);
		}
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct vring_packed_desc *ring = (const struct vring_packed_desc *)region_buf[0];
	struct hv_mem mem = {.n = 2};
	struct hv_packed_buf b, fb;
	struct hv_packed_pos at;
	uint16_t ring_size;
	uint32_t hint, hint0, fhint, slots = 0;
	bool writable, indirect_ok;
	uint8_t flags;
	size_t img;
	int rc, frc;

	if (size < HDR_SIZE)
		return 0;
	ring_size = (uint16_t)(1 + (data[0] | data[1] << 8) % MAX_SLOTS);
	at.idx = (uint16_t)((data[2] | data[3] << 8) % (ring_size + 1u));
	flags = data[4];
	writable = flags & 1;
	indirect_ok = flags & 2;
	at.wrap = flags & 4;
	hint = hint0 = flags >> 5;
	data += HDR_SIZE;
	size -= HDR_SIZE;
	for (unsigned int i = 0; i < 2; i++) {
		img = size > REGION_SIZE ? REGION_SIZE : size;
		memcpy(region_buf[i], data, img);
		memset(region_buf[i] + img, 0, REGION_SIZE - img);
		data += img;
		size -= img;
	}
	mem.r[0] = (struct hv_mem_region){.gpa = R0_GPA, .size = REGION_SIZE, .hva = region_buf[0]};
	mem.r[1] = (struct hv_mem_region){
		.gpa = r1_gpa[(flags >> 3) & 3], .size = REGION_SIZE, .hva = region_buf[1]};

	check_run_one(ring, ring_size, &mem, hv_packed_one_want(at.wrap, writable));

	rc = hv_packed_walk(ring, ring_size, &mem, &hint, at, writable, indirect_ok, &chain, &b);
	if (verbose)
		fprintf(stderr,
			"walk: %d (0: ok, -1: empty, else enum hv_vhost_drop), %u iovs, "
			"%u bytes, id %u, %u slots\n",
			rc, chain.n_iov, chain.len, b.id, b.ndesc);
	FUZZ_ASSERT(rc == HV_PACKED_EMPTY ||
		    (rc >= HV_VHOST_DROP__NONE && rc < HV_VHOST_DROP__MAX));
	FUZZ_ASSERT(hint < mem.n || hint == hint0);
	/* the inline fast path must agree with the full walker on every input */
	fhint = hint0;
	frc = hv_packed_walk_fast(ring, ring_size, &mem, &fhint, at, writable, indirect_ok, &fast,
				  &fb);
	FUZZ_ASSERT(frc == rc);
	if (rc != 0)
		return 0;
	FUZZ_ASSERT(at.idx < ring_size);
	check_chain(&mem, &chain, &b, at, ring_size);
	FUZZ_ASSERT(fast.n_iov == chain.n_iov && fast.len == chain.len);
	FUZZ_ASSERT(fb.id == b.id && fb.ndesc == b.ndesc && fb.next.idx == b.next.idx &&
		    fb.next.wrap == b.next.wrap);
	for (unsigned int i = 0; i < chain.n_iov; i++)
		FUZZ_ASSERT(fast.iov[i].base == chain.iov[i].base &&
			    fast.iov[i].len == chain.iov[i].len);

	/* a burst: chains one after another until the ring is empty or broken */
	for (unsigned int k = 0; k < 64; k++) {
		struct hv_packed_pos p = at;

		rc = hv_packed_walk_fast(ring, ring_size, &mem, &hint, p, writable, indirect_ok,
					 &chain, &b);
		if (rc != 0)
			break;
		check_chain(&mem, &chain, &b, p, ring_size);
		slots += b.ndesc;
		/* a slot is available at one wrap only: one lap at most without used writes */
		FUZZ_ASSERT(slots <= ring_size);
		at = b.next;
	}
	return 0;
}
