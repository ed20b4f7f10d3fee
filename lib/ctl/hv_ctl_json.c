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
arg_get(const cJSON *args, const char *cmd, const char *key, bool required,
	const cJSON **item, char *err, size_t errlen)
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
hv_ctl_arg_str(const cJSON *args, const char *cmd, const char *key, bool required,
	       size_t maxlen, const char **out, char *err, size_t errlen)
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
hv_ctl_arg_uint(const cJSON *args, const char *cmd, const char *key, bool required,
		uint64_t min, uint64_t max, uint64_t *out, char *err, size_t errlen)
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
		snprintf(err, errlen, "%s: '%s' must be an integer %" PRIu64 "..%" PRIu64, cmd,
			 key, min, max);
		return -1;
	}
	*out = (uint64_t)v;
	return 1;
}

int
hv_ctl_arg_bool(const cJSON *args, const char *cmd, const char *key, bool required,
		bool *out, char *err, size_t errlen)
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
hv_ctl_args_check(const cJSON *args, const char *cmd, const char *const *allowed,
		  char *err, size_t errlen)
{
	const cJSON *item;
	size_t i;

	if (args == NULL)
		return 0;
	if (!cJSON_IsObject(args)) {
		snprintf(err, errlen, "%s: arguments must be an object", cmd);
		return -1;
	}
	cJSON_ArrayForEach(item, args) {
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
