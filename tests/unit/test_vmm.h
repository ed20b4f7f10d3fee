/* SPDX-License-Identifier: BSD-3-Clause */
/* test_vmm: the virtio tests live in test_vmm_virtio.c. */
#ifndef TEST_VMM_H
#define TEST_VMM_H

#include <check.h>

/* Add the virtio transport and control queue tests to tc. */
void vmm_virtio_tests(TCase *tc);

#endif
