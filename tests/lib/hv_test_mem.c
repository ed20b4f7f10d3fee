/* SPDX-License-Identifier: BSD-3-Clause */
#include "hv_test_mem.h"

#include <stdlib.h>
#include <string.h>

uint8_t *
hv_test_mem_init(struct hv_mem *mem)
{
	uint8_t *buf = aligned_alloc(4096, HV_TEST_MEM_SIZE);

	if (buf == NULL)
		return NULL;
	memset(buf, 0, HV_TEST_MEM_SIZE);
	memset(mem, 0, sizeof(*mem));
	mem->r[0] = (struct hv_mem_region){
		.gpa = R0_GPA, .size = 0x8000, .uaddr = 0x7000000, .hva = buf};
	mem->r[1] = (struct hv_mem_region){
		.gpa = R1_GPA, .size = 0x8000, .uaddr = 0x7100000, .hva = buf + 0x10000};
	mem->r[2] = (struct hv_mem_region){
		.gpa = R2_GPA, .size = 0x10000, .uaddr = 0x7200000, .hva = buf + 0x20000};
	mem->n = 3;
	return buf;
}

uint8_t *
hv_test_mem_host(uint8_t *buf, uint64_t gpa)
{
	if (gpa >= R2_GPA)
		return buf + 0x20000 + (gpa - R2_GPA);
	if (gpa >= R1_GPA)
		return buf + 0x10000 + (gpa - R1_GPA);
	return buf + (gpa - R0_GPA);
}
