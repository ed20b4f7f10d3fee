/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: hv_vring_walk() over fuzz-written guest memory.
 *
 * Input: [size exponent][head: le16][flags][memory image: up to 64 KiB]
 *   size      1 << (b % 12) descriptors; the table is the start of region 0
 *   flags     bit 0: writable chain expected; bit 1: indirect negotiated;
 *             bits 2-3: where region 1 lies (adjacent, after a gap, above 4 GiB,
 *             just below 2^64); bits 4-7: initial hint
 * Guest memory is two regions of 32 KiB, each its own heap buffer so that
 * AddressSanitizer sees any iov that leaves one. Region 0 is at GPA 0x1000.
 * A walk that succeeds must describe only bytes inside the regions; they are
 * all read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hv_test_fuzz.h"
#include "vhost_vring.h"

#define REGION_SIZE 0x8000u
#define R0_GPA UINT64_C(0x1000)
#define HDR_SIZE 4

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
static struct hv_chain chain;

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

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hv_mem mem = {.n = 2};
	uint16_t ring_size, head;
	uint32_t hint, hint0, total = 0;
	bool writable, indirect_ok;
	uint8_t flags;
	size_t img;
	int rc;

	if (size < HDR_SIZE)
		return 0;
	ring_size = (uint16_t)(1u << (data[0] % 12));
	head = (uint16_t)(data[1] | data[2] << 8);
	flags = data[3];
	writable = flags & 1;
	indirect_ok = flags & 2;
	hint = hint0 = flags >> 4;
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
		.gpa = r1_gpa[(flags >> 2) & 3], .size = REGION_SIZE, .hva = region_buf[1]};

	/* the descriptor table: the first ring_size * 16 bytes of region 0 */
	rc = hv_vring_walk((const struct vring_desc *)region_buf[0], ring_size, &mem, &hint, head,
			   writable, indirect_ok, &chain);
	if (verbose)
		fprintf(stderr, "walk: %d (0: ok, else enum hv_vhost_drop), %u iovs, %u bytes\n",
			rc, chain.n_iov, chain.len);
	FUZZ_ASSERT(rc >= HV_VHOST_DROP__NONE && rc < HV_VHOST_DROP__MAX);
	FUZZ_ASSERT(chain.head == head);
	FUZZ_ASSERT(chain.n_iov <= HV_CHAIN_MAX_IOV);
	FUZZ_ASSERT(hint < mem.n || hint == hint0);
	for (unsigned int i = 0; i < chain.n_iov; i++) {
		FUZZ_ASSERT(chain.iov[i].len > 0);
		FUZZ_ASSERT(iov_in_region(&mem, &chain.iov[i]));
		total += chain.iov[i].len;
	}
	/* the inline fast path must agree with the full walker on every input */
	{
		static struct hv_chain fast;
		uint32_t fhint = hint0;
		int frc = hv_vring_walk_fast((const struct vring_desc *)region_buf[0], ring_size,
					     &mem, &fhint, head, writable, indirect_ok, &fast);

		FUZZ_ASSERT(frc == rc);
		if (rc == 0) {
			FUZZ_ASSERT(fast.n_iov == chain.n_iov && fast.len == chain.len);
			for (unsigned int i = 0; i < chain.n_iov; i++)
				FUZZ_ASSERT(fast.iov[i].base == chain.iov[i].base &&
					    fast.iov[i].len == chain.iov[i].len);
		}
	}
	if (rc != 0)
		return 0;
	FUZZ_ASSERT(head < ring_size);
	FUZZ_ASSERT(chain.len <= HV_CHAIN_MAX_LEN);
	FUZZ_ASSERT(total == chain.len);
	/* read every byte described: ASan checks the whole range of a memcpy */
	for (unsigned int i = 0; i < chain.n_iov; i++)
		memcpy(hv_fuzz_scratch, chain.iov[i].base, chain.iov[i].len);
	return 0;
}
