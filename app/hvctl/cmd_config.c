/* SPDX-License-Identifier: BSD-3-Clause */
/* hvctl config save: "config.save". */
#include <stdlib.h>

#include "hv_ctl_api.h"
#include "hvctl.h"

const struct hvctl_api_verb hvctl_config_api[] = {
	{"config save", HV_CTL_C_CONFIG_SAVE, false},
	{NULL, 0, false},
};

static int
config_save(struct hvctl *h, int argc, char **argv)
{
	char buf[1024];
	cJSON *args, *res;
	int rc;

	rc = hvctl_api_args("config", &hvctl_config_api[0], argc, argv, &args);
	if (rc >= 0)
		return rc;
	if (hvctl_call(h, HV_CTL_CMD(CONFIG_SAVE), args, &res) < 0)
		return 1;
	if (h->json)
		hvctl_print_json(stdout, res);
	else if (cJSON_IsObject(res))
		hvctl_print_kv(stdout, res, 0, NULL);
	else if (!cJSON_IsNull(res))
		printf("%s\n", hvctl_cell(res, buf, sizeof(buf)));
	cJSON_Delete(res);
	return 0;
}

int
hvctl_cmd_config(struct hvctl *h, int argc, char **argv)
{
	static const struct hvctl_verb verbs[] = {
		{"save", config_save, "save the running configuration"},
		{NULL, NULL, NULL},
	};

	char *usage = hvctl_api_group_usage(hvctl_config_api, NULL);
	int rc;

	if (usage == NULL) {
		hvctl_err("out of memory");
		return 1;
	}
	rc = hvctl_dispatch(h, "config", verbs, usage, argc, argv);
	free(usage);
	return rc;
}
