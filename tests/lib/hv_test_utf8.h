/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef HV_TEST_UTF8_H
#define HV_TEST_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* len bytes at p are strict UTF-8 (no overlong forms, surrogates or code points past
 * U+10FFFF), written apart from lib/ctl's hv_ctl_utf8_clean() to check it. */
bool hv_test_utf8_valid(const void *p, size_t len);

#endif
