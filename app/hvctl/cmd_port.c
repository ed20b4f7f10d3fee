/* SPDX-License-Identifier: BSD-3-Clause */
/* hvctl port add|del|list|show|set: "port.*" requests. */
#include <stdlib.h>
#include <string.h>

#include "hv_ctl_api.h"
#include "hvctl.h"

#define MAX_QUEUE_COLS 32

const struct hvctl_api_verb hvctl_port_api[] = {
	{"port add", HV_CTL_C_PORT_ADD, false},   {"port del", HV_CTL_C_PORT_DEL, false},
	{"port list", HV_CTL_C_PORT_LIST, false}, {"port show", HV_CTL_C_PORT_SHOW, false},
	{"port set", HV_CTL_C_PORT_SET, true},    {NULL, 0, false},
};

/* Print a port object: settings, then counters and queues when present. */
static void
print_port(const cJSON *port)
{
	static const char *const skip[] = {"stats", "qps", NULL};
	static const struct hvctl_col fixed[] = {
		{"QP", HVCTL_RIGHT},
		{"PMD", HVCTL_RIGHT},
		{"DIR", HVCTL_LEFT},
	};
	const cJSON *stats = cJSON_GetObjectItemCaseSensitive(port, "stats");
	const cJSON *queues = cJSON_GetObjectItemCaseSensitive(port, "qps");
	struct hvctl_col cols[3 + MAX_QUEUE_COLS];
	const char *keys[MAX_QUEUE_COLS];
	unsigned int nkeys = 0, i;
	struct hvctl_table *t;
	const cJSON *q, *m;

	hvctl_print_kv(stdout, port, 0, skip);
	if (cJSON_IsObject(stats)) {
		printf("stats:\n");
		hvctl_print_kv(stdout, stats, 2, NULL);
	}
	if (!cJSON_IsArray(queues) || cJSON_GetArraySize(queues) == 0)
		return;

	/* Columns: QP PMD DIR, then every counter name seen, in order. */
	memcpy(cols, fixed, sizeof(fixed));
	cJSON_ArrayForEach(q, queues)
	{
		static const char *const dirs[] = {"rx", "tx"};

		for (i = 0; i < 2; i++) {
			cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(q, dirs[i]))
			{
				unsigned int k;

				for (k = 0; k < nkeys; k++)
					if (strcmp(keys[k], m->string) == 0)
						break;
				if (k == nkeys && nkeys < MAX_QUEUE_COLS) {
					keys[nkeys] = m->string;
					cols[3 + nkeys].title = m->string;
					cols[3 + nkeys].align = HVCTL_RIGHT;
					nkeys++;
				}
			}
		}
	}
	t = hvctl_table_new(cols, 3 + nkeys);
	if (t == NULL)
		return;
	cJSON_ArrayForEach(q, queues)
	{
		static const char *const dirs[] = {"rx", "tx"};

		for (i = 0; i < 2; i++) {
			const cJSON *d = cJSON_GetObjectItemCaseSensitive(q, dirs[i]);
			char buf[3 + MAX_QUEUE_COLS][64];
			const char *row[3 + MAX_QUEUE_COLS];
			unsigned int k;

			if (d == NULL)
				continue;
			row[0] = hvctl_cell(cJSON_GetObjectItemCaseSensitive(q, "qp"), buf[0], 64);
			row[1] = hvctl_cell(cJSON_GetObjectItemCaseSensitive(q, HV_CTL_KEY(PMD)),
					    buf[1], 64);
			row[2] = dirs[i];
			for (k = 0; k < nkeys; k++)
				row[3 + k] =
					hvctl_cell(cJSON_GetObjectItemCaseSensitive(d, keys[k]),
						   buf[3 + k], 64);
			hvctl_table_add(t, row);
		}
	}
	printf("queues:\n");
	hvctl_table_print(t, stdout);
	hvctl_table_free(t);
}

/* Send the verb's command from its argv; print the port it returns (or nothing). */
static int
port_request(struct hvctl *h, const struct hvctl_api_verb *v, int argc, char **argv)
{
	cJSON *args, *res;
	int rc;

	rc = hvctl_api_args("port", v, argc, argv, &args);
	if (rc >= 0)
		return rc;
	if (hvctl_call(h, hv_ctl_api_cmd(v->id)->name, args, &res) < 0)
		return 1;
	if (h->json)
		hvctl_print_json(stdout, res);
	else if (cJSON_IsObject(res))
		print_port(res);
	cJSON_Delete(res);
	return 0;
}

static int
port_add(struct hvctl *h, int argc, char **argv)
{
	return port_request(h, &hvctl_port_api[0], argc, argv);
}

static int
port_del(struct hvctl *h, int argc, char **argv)
{
	return port_request(h, &hvctl_port_api[1], argc, argv);
}

static int
port_show(struct hvctl *h, int argc, char **argv)
{
	return port_request(h, &hvctl_port_api[3], argc, argv);
}

static int
port_set(struct hvctl *h, int argc, char **argv)
{
	return port_request(h, &hvctl_port_api[4], argc, argv);
}

static int
port_list(struct hvctl *h, int argc, char **argv)
{
	static const struct hvctl_col cols[] = {
		{"NAME", HVCTL_LEFT},           {"TYPE", HVCTL_LEFT},  {"STATE", HVCTL_LEFT},
		{"QUEUES", HVCTL_RIGHT},        {"VLAN", HVCTL_RIGHT}, {"PMD", HVCTL_LEFT},
		{"SOCKET/DEVARGS", HVCTL_LEFT},
	};
	const char *keys[] = {HV_CTL_KEY(NAME),   HV_CTL_KEY(TYPE), "state",
			      HV_CTL_KEY(QUEUES), HV_CTL_KEY(VLAN), HV_CTL_KEY(PMD)};
	struct hvctl_table *t;
	cJSON *args, *res;
	const cJSON *p;
	int rc;

	rc = hvctl_api_args("port", &hvctl_port_api[2], argc, argv, &args);
	if (rc >= 0)
		return rc;
	if (hvctl_call(h, HV_CTL_CMD(PORT_LIST), args, &res) < 0)
		return 1;
	if (h->json) {
		hvctl_print_json(stdout, res);
		cJSON_Delete(res);
		return 0;
	}
	t = hvctl_table_new(cols, 7);
	cJSON_ArrayForEach(p, res)
	{
		const cJSON *where = cJSON_GetObjectItemCaseSensitive(p, HV_CTL_KEY(SOCKET));
		char buf[7][512];
		const char *row[7];
		unsigned int i;

		for (i = 0; i < 6; i++)
			row[i] = hvctl_cell(cJSON_GetObjectItemCaseSensitive(p, keys[i]), buf[i],
					    sizeof(buf[i]));
		/* VLAN 0 is untagged. */
		if (strcmp(row[4], "0") == 0)
			row[4] = "-";
		if (where == NULL || cJSON_IsNull(where))
			where = cJSON_GetObjectItemCaseSensitive(p, HV_CTL_KEY(DEVARGS));
		row[6] = hvctl_cell(where, buf[6], sizeof(buf[6]));
		if (t != NULL)
			hvctl_table_add(t, row);
	}
	if (t != NULL)
		hvctl_table_print(t, stdout);
	hvctl_table_free(t);
	cJSON_Delete(res);
	return 0;
}

int
hvctl_cmd_port(struct hvctl *h, int argc, char **argv)
{
	static const struct hvctl_verb verbs[] = {
		{"add", port_add, "create a port"},
		{"del", port_del, "delete a port"},
		{"list", port_list, "list the ports"},
		{"show", port_show, "show a port"},
		{"set", port_set, "change a port's settings"},
		{NULL, NULL, NULL},
	};
	char *usage = hvctl_api_group_usage(hvctl_port_api, NULL);
	int rc;

	if (usage == NULL) {
		hvctl_err("out of memory");
		return 1;
	}
	rc = hvctl_dispatch(h, "port", verbs, usage, argc, argv);
	free(usage);
	return rc;
}
