/* SPDX-License-Identifier: BSD-3-Clause */
/* hvctl fdb show|flush: "fdb.show", "fdb.flush". */
#include <stdlib.h>

#include "hv_ctl_api.h"
#include "hvctl.h"

const struct hvctl_api_verb hvctl_fdb_api[] = {
	{"fdb show", HV_CTL_C_FDB_SHOW, false},
	{"fdb flush", HV_CTL_C_FDB_FLUSH, false},
	{NULL, 0, false},
};

static int
fdb_show(struct hvctl *h, int argc, char **argv)
{
	static const struct hvctl_col cols[] = {
		{"MAC", HVCTL_LEFT},
		{"VLAN", HVCTL_RIGHT},
		{"PORT", HVCTL_LEFT},
		{"AGE(s)", HVCTL_RIGHT},
	};
	struct hvctl_table *t;
	const cJSON *e;
	cJSON *args, *res;
	int rc;

	rc = hvctl_api_args("fdb", &hvctl_fdb_api[0], argc, argv, &args);
	if (rc >= 0)
		return rc;
	if (hvctl_call(h, HV_CTL_CMD(FDB_SHOW), args, &res) < 0)
		return 1;
	if (h->json) {
		hvctl_print_json(stdout, res);
		cJSON_Delete(res);
		return 0;
	}
	t = hvctl_table_new(cols, 4);
	cJSON_ArrayForEach(e, res)
	{
		const char *keys[] = {"mac", HV_CTL_KEY(VLAN), HV_CTL_KEY(PORT), "age_s"};
		char buf[4][256];
		const char *row[4];
		unsigned int i;

		for (i = 0; i < 4; i++)
			row[i] = hvctl_cell(cJSON_GetObjectItemCaseSensitive(e, keys[i]), buf[i],
					    sizeof(buf[i]));
		if (t != NULL)
			hvctl_table_add(t, row);
	}
	if (t != NULL)
		hvctl_table_print(t, stdout);
	hvctl_table_free(t);
	cJSON_Delete(res);
	return 0;
}

static int
fdb_flush(struct hvctl *h, int argc, char **argv)
{
	cJSON *args, *res;
	char buf[64];
	int rc;

	rc = hvctl_api_args("fdb", &hvctl_fdb_api[1], argc, argv, &args);
	if (rc >= 0)
		return rc;
	if (hvctl_call(h, HV_CTL_CMD(FDB_FLUSH), args, &res) < 0)
		return 1;
	if (h->json)
		hvctl_print_json(stdout, res);
	else
		printf("flushed %s entries\n",
		       hvctl_cell(cJSON_GetObjectItemCaseSensitive(res, "flushed"), buf,
				  sizeof(buf)));
	cJSON_Delete(res);
	return 0;
}

int
hvctl_cmd_fdb(struct hvctl *h, int argc, char **argv)
{
	static const struct hvctl_verb verbs[] = {
		{"show", fdb_show, "show the learned addresses"},
		{"flush", fdb_flush, "flush the learned addresses"},
		{NULL, NULL, NULL},
	};

	char *usage = hvctl_api_group_usage(hvctl_fdb_api, NULL);
	int rc;

	if (usage == NULL) {
		hvctl_err("out of memory");
		return 1;
	}
	rc = hvctl_dispatch(h, "fdb", verbs, usage, argc, argv);
	free(usage);
	return rc;
}
