/* SPDX-License-Identifier: BSD-3-Clause */
/* Test helper of the libFuzzer targets (tests/fuzz). */
#ifndef HV_TEST_FUZZ_H
#define HV_TEST_FUZZ_H

#include <stdio.h>
#include <stdlib.h>

/*
 * An invariant of the code under test: when it does not hold, say which and
 * abort, so that libFuzzer keeps the input (assert() would vanish under NDEBUG).
 */
#define FUZZ_ASSERT(cond)                                                                          \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #cond);                 \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

#endif
