/* SPDX-License-Identifier: BSD-3-Clause */
/* hvctl port add|del|list|show|set: "port.*" requests. */
#include <stdlib.h>
#include <string.h>

#include "hv_ctl_api.h"
#include "hvctl.h"

#define MAX_QUEUE_ROWS 48

const struct hvctl_api_verb hvctl_port_api[] = {
	{"port add", HV_CTL_C_PORT_ADD, false},   {"port del", HV_CTL_C_PORT_DEL, false},
	{"port list", HV_CTL_C_PORT_LIST, false}, {"port show", HV_CTL_C_PORT_SHOW, false},
	{"port set", HV_CTL_C_PORT_SET, true},    {NULL, 0, false},
};

/* Longest counter cell of the queue tables: they stay within 100 columns. */
#define QUEUE_CELL_MAX 36

/* Add the counter names of one ring's object to keys (nested objects as "a.b"). */
static void
queue_keys(const cJSON *ring, char keys[][64], unsigned int *nkeys)
{
	const cJSON *m;

	cJSON_ArrayForEach(m, ring)
	{
		unsigned int k;

		for (k = 0; k < *nkeys; k++)
			if (strcmp(keys[k], m->string) == 0)
				break;
		if (k == *nkeys && *nkeys < MAX_QUEUE_ROWS)
			snprintf(keys[(*nkeys)++], 64, "%s", m->string);
	}
}

/* One cell of a queue table, cut to QUEUE_CELL_MAX (a histogram: --json has it whole). */
static const char *
queue_cell(const cJSON *ring, const char *key, char *buf, size_t len)
{
	hvctl_cell(cJSON_GetObjectItemCaseSensitive(ring, key), buf, len);
	if (strlen(buf) > QUEUE_CELL_MAX)
		memcpy(buf + QUEUE_CELL_MAX - 3, "...", 4);
	return buf;
}

/*
 * The queue pairs, one small table each: a row per counter, a column per
 * direction (rx: what the port received, tx: what it sent), so that the
 * width does not grow with the number of counters.
 */
static void
print_queues(const cJSON *queues)
{
	static const struct hvctl_col cols[] = {
		{"COUNTER", HVCTL_LEFT},
		{"RX", HVCTL_RIGHT},
		{"TX", HVCTL_RIGHT},
	};
	const cJSON *q;

	cJSON_ArrayForEach(q, queues)
	{
		const cJSON *rx = cJSON_GetObjectItemCaseSensitive(q, "rx");
		const cJSON *tx = cJSON_GetObjectItemCaseSensitive(q, "tx");
		char keys[MAX_QUEUE_ROWS][64], b[3][64];
		unsigned int nkeys = 0, k;
		struct hvctl_table *t;

		printf("queue pair %s: PMD %s",
		       hvctl_cell(cJSON_GetObjectItemCaseSensitive(q, "qp"), b[0], 64),
		       hvctl_cell(cJSON_GetObjectItemCaseSensitive(q, HV_CTL_KEY(PMD)), b[1], 64));
		if (cJSON_HasObjectItem(q, "lcore"))
			printf(", lcore %s",
			       hvctl_cell(cJSON_GetObjectItemCaseSensitive(q, "lcore"), b[2], 64));
		printf("\n");
		queue_keys(rx, keys, &nkeys);
		queue_keys(tx, keys, &nkeys);
		if (nkeys == 0)
			continue;
		t = hvctl_table_new(cols, 3);
		if (t == NULL)
			return;
		for (k = 0; k < nkeys; k++) {
			const char *row[3] = {keys[k], queue_cell(rx, keys[k], b[1], 64),
					      queue_cell(tx, keys[k], b[2], 64)};

			hvctl_table_add(t, row);
		}
		hvctl_table_print_indent(t, stdout, 2);
		hvctl_table_free(t);
	}
}

/* Print a port object: settings, then counters and queues when present. */
static void
print_port(const cJSON *port)
{
	static const char *const skip[] = {"qps", NULL};
	const cJSON *queues = cJSON_GetObjectItemCaseSensitive(port, "qps");

	hvctl_print_kv(stdout, port, 0, skip);
	if (cJSON_IsArray(queues))
		print_queues(queues);
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
		{"NAME", HVCTL_LEFT},           {"TYPE", HVCTL_LEFT}, {"STATE", HVCTL_LEFT},
		{"QUEUES", HVCTL_RIGHT},        {"VLAN", HVCTL_LEFT}, {"PMD", HVCTL_LEFT},
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
		/* VLAN 0 is the untagged domain; a trunk carries every VLAN tagged */
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(p, HV_CTL_KEY(TRUNK))))
			row[4] = "trunk";
		else if (strcmp(row[4], "0") == 0)
			row[4] = "untagged";
		if (where == NULL || cJSON_IsNull(where))
			where = cJSON_GetObjectItemCaseSensitive(p, HV_CTL_KEY(DEVARGS));
		row[6] = hvctl_cell(where, buf[6], sizeof(buf[6]));
		/* a tunnel: its VNI and uplink */
		if (where == NULL &&
		    cJSON_IsString(cJSON_GetObjectItemCaseSensitive(p, HV_CTL_KEY(UPLINK)))) {
			snprintf(buf[6], sizeof(buf[6]), "vni %.0f on %s",
				 cJSON_GetNumberValue(
					 cJSON_GetObjectItemCaseSensitive(p, HV_CTL_KEY(VNI))),
				 cJSON_GetStringValue(
					 cJSON_GetObjectItemCaseSensitive(p, HV_CTL_KEY(UPLINK))));
			row[6] = buf[6];
		}
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
