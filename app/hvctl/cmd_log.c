/* SPDX-License-Identifier: BSD-3-Clause */
/* hvctl log set TYPE LEVEL: "log.set", the daemon's DPDK log levels at run time. */
#include <stdlib.h>

#include "hv_ctl_api.h"
#include "hvctl.h"

const struct hvctl_api_verb hvctl_log_api[] = {
	{"log set", HV_CTL_C_LOG_SET, false},
	{NULL, 0, false},
};

static int
log_set(struct hvctl *h, int argc, char **argv)
{
	const cJSON *types, *t;
	cJSON *args, *res;
	int rc;

	rc = hvctl_api_args("log", &hvctl_log_api[0], argc, argv, &args);
	if (rc >= 0)
		return rc;
	if (hvctl_call(h, HV_CTL_CMD(LOG_SET), args, &res) < 0)
		return 1;
	types = cJSON_GetObjectItemCaseSensitive(res, "types");
	if (h->json) {
		hvctl_print_json(stdout, res);
	} else {
		cJSON_ArrayForEach(t, types)
		{
			if (cJSON_IsString(t))
				printf("%s: %s\n", t->valuestring,
				       cJSON_GetStringValue(
					       cJSON_GetObjectItemCaseSensitive(res, "level")));
		}
	}
	cJSON_Delete(res);
	return 0;
}

int
hvctl_cmd_log(struct hvctl *h, int argc, char **argv)
{
	static const struct hvctl_verb verbs[] = {
		{"set", log_set, "set the level of log types"},
		{NULL, NULL, NULL},
	};
	char *usage = hvctl_api_group_usage(hvctl_log_api, NULL);
	int rc;

	if (usage == NULL) {
		hvctl_err("out of memory");
		return 1;
	}
	rc = hvctl_dispatch(h, "log", verbs, usage, argc, argv);
	free(usage);
	return rc;
}
