/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Argument helpers for command handlers: typed getters with range checks that
 * produce the one-line errors sent back to the client.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "hv_ctl.h"

/* Largest integer a double (hence a cJSON number) holds exactly. */
#define JSON_MAX_EXACT_INT (UINT64_C(1) << 53)

/* The member key of args, or NULL; -1 with err when args is not an object. */
static int
arg_get(const cJSON *args, const char *cmd, const char *key, bool required, const cJSON **item,
	char *err, size_t errlen)
{
	*item = NULL;
	if (args != NULL && !cJSON_IsObject(args)) {
		snprintf(err, errlen, "%s: arguments must be an object", cmd);
		return -1;
	}
	if (args != NULL)
		*item = cJSON_GetObjectItemCaseSensitive(args, key);
	if (*item == NULL || cJSON_IsNull(*item)) {
		*item = NULL;
		if (required) {
			snprintf(err, errlen, "%s: missing '%s'", cmd, key);
			return -1;
		}
		return 0;
	}
	return 1;
}

int
hv_ctl_arg_str(const cJSON *args, const char *cmd, const char *key, bool required, size_t maxlen,
	       const char **out, char *err, size_t errlen)
{
	const cJSON *item;
	int rc = arg_get(args, cmd, key, required, &item, err, errlen);
	size_t len;

	if (rc <= 0)
		return rc;
	if (!cJSON_IsString(item) || item->valuestring == NULL) {
		snprintf(err, errlen, "%s: '%s' must be a string", cmd, key);
		return -1;
	}
	len = strlen(item->valuestring);
	if (maxlen != 0 && (len == 0 || len > maxlen)) {
		snprintf(err, errlen, "%s: '%s' must be a string of 1..%zu characters", cmd, key,
			 maxlen);
		return -1;
	}
	*out = item->valuestring;
	return 1;
}

int
hv_ctl_arg_uint(const cJSON *args, const char *cmd, const char *key, bool required, uint64_t min,
		uint64_t max, uint64_t *out, char *err, size_t errlen)
{
	const cJSON *item;
	int rc = arg_get(args, cmd, key, required, &item, err, errlen);
	double v;

	if (rc <= 0)
		return rc;
	if (max > JSON_MAX_EXACT_INT)
		max = JSON_MAX_EXACT_INT;
	v = cJSON_IsNumber(item) ? item->valuedouble : NAN;
	if (!isfinite(v) || v != floor(v) || v < (double)min || v > (double)max) {
		snprintf(err, errlen, "%s: '%s' must be an integer %" PRIu64 "..%" PRIu64, cmd, key,
			 min, max);
		return -1;
	}
	*out = (uint64_t)v;
	return 1;
}

int
hv_ctl_arg_bool(const cJSON *args, const char *cmd, const char *key, bool required, bool *out,
		char *err, size_t errlen)
{
	const cJSON *item;
	int rc = arg_get(args, cmd, key, required, &item, err, errlen);

	if (rc <= 0)
		return rc;
	if (!cJSON_IsBool(item)) {
		snprintf(err, errlen, "%s: '%s' must be true or false", cmd, key);
		return -1;
	}
	*out = cJSON_IsTrue(item);
	return 1;
}

int
hv_ctl_args_check(const cJSON *args, const char *cmd, const char *const *allowed, char *err,
		  size_t errlen)
{
	const cJSON *item;
	size_t i;

	if (args == NULL)
		return 0;
	if (!cJSON_IsObject(args)) {
		snprintf(err, errlen, "%s: arguments must be an object", cmd);
		return -1;
	}
	cJSON_ArrayForEach(item, args)
	{
		for (i = 0; allowed[i] != NULL; i++)
			if (item->string != NULL && strcmp(item->string, allowed[i]) == 0)
				break;
		if (allowed[i] == NULL) {
			snprintf(err, errlen, "%s: unknown argument '%s'", cmd,
				 item->string != NULL ? item->string : "");
			return -1;
		}
	}
	return 0;
}

/* Length of the valid UTF-8 sequence at s (at most avail bytes), 0 if invalid. */
static size_t
utf8_seq(const unsigned char *s, size_t avail)
{
	size_t n, i;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (n > avail)
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* overlong forms, UTF-16 surrogates, beyond U+10FFFF */
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

size_t
hv_ctl_utf8_clean(char *dst, size_t dstlen, const char *src, size_t max)
{
	const unsigned char *s = (const unsigned char *)src;
	size_t len = strnlen(src, max), i = 0, o = 0;

	if (dstlen == 0)
		return 0;
	while (i < len && o + 1 < dstlen) {
		size_t n = utf8_seq(s + i, len - i);

		if (n == 0 && len == max && src[len] != '\0' && utf8_seq(s + i, SIZE_MAX) != 0)
			break; /* a character cut by max: leave it out whole */
		if (n == 0) {
			dst[o++] = '?';
			i++;
			continue;
		}
		if (o + n >= dstlen)
			break; /* the whole character or nothing */
		memmove(dst + o, s + i, n);
		o += n;
		i += n;
	}
	dst[o] = '\0';
	return o;
}
