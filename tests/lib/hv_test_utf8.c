/* SPDX-License-Identifier: BSD-3-Clause */
/* An independent strict UTF-8 check for the tests (not the code under test). */
#include "hv_test_utf8.h"

bool
hv_test_utf8_valid(const void *p, size_t len)
{
	const unsigned char *s = p;
	size_t i = 0;

	while (i < len) {
		unsigned int n, cp, min;

		if (s[i] < 0x80) {
			i++;
			continue;
		}
		if ((s[i] & 0xe0) == 0xc0)
			n = 1, cp = s[i] & 0x1f, min = 0x80;
		else if ((s[i] & 0xf0) == 0xe0)
			n = 2, cp = s[i] & 0x0f, min = 0x800;
		else if ((s[i] & 0xf8) == 0xf0)
			n = 3, cp = s[i] & 0x07, min = 0x10000;
		else
			return false;
		for (unsigned int k = 1; k <= n; k++) {
			if (i + k >= len || (s[i + k] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += n + 1;
	}
	return true;
}
