/* SPDX-License-Identifier: BSD-3-Clause */
/* hvctl port add|del|list|show|set: "port.*" requests. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "hvctl.h"

#define MAX_QUEUE_COLS 32

static const char port_usage[] =
	"usage: hvctl port add NAME --type vhost-user [--socket PATH] [--mode server|client]\n"
	"                          [--queues N] [--vlan ID | --trunk] [--pmd N]\n"
	"                          [--features mrg_rxbuf,indirect_desc,event_idx,mq,...]\n"
	"                          [--rxmod US|adaptive[,Q:US|adaptive]...]\n"
	"       hvctl port add NAME --type ethdev --devargs DEVARGS [--queues N]\n"
	"                          [--vlan ID | --trunk] [--pmd N]\n"
	"       hvctl port del NAME\n"
	"       hvctl port list\n"
	"       hvctl port show NAME\n"
	"       hvctl port set NAME KEY=VALUE...\n"
	"\n"
	"  add   create a port: a vhost-user socket (we listen on it, or connect to it\n"
	"        with --mode client) or a DPDK ethdev (e.g. --devargs 'net_tap0,iface=x')\n"
	"  del   delete a port\n"
	"  list  one line per port\n"
	"  show  a port's settings, counters and queues\n"
	"  set   change settings: vlan=ID|none trunk=true|false pmd=N|auto\n"
	"        rxmod=US|adaptive[,Q:US|adaptive]... (live)\n"
	"        (integers are sent as numbers, true/false as booleans)\n"
	"\n"
	"  --vlan ID   access VLAN (1..4094): the guest's frames belong to it, untagged\n"
	"  --trunk     the port carries every VLAN tagged (uplinks)\n"
	"  --pmd N     poll the port's queues on PMD N instead of round-robin\n"
	"  --features  virtio features offered on a vhost-user port (default:\n"
	"              mrg_rxbuf,indirect_desc,event_idx,mq,csum,guest_csum,\n"
	"              host_tso4,host_tso6,guest_tso4,guest_tso6,in_order)\n"
	"  --rxmod     guest interrupt moderation window in microseconds (default 100,\n"
	"              0 = off) or 'adaptive'; Q:VALUE overrides it for queue Q\n";

/* Parse "--help" only; returns -1 to go on, else the exit code. */
static int
only_help(const char *what, int argc, char **argv)
{
	static const struct option opts[] = {
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;

	optind = 0;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		if (c == 'h') {
			fputs(port_usage, stdout);
			return 0;
		}
		return hvctl_opt_err(what, c, argv);
	}
	return -1;
}

/* Print a port object: settings, then counters and queues when present. */
static void
print_port(const cJSON *port)
{
	static const char *const skip[] = {"stats", "qps", NULL};
	static const struct hvctl_col fixed[] = {
		{"QP", HVCTL_RIGHT}, {"PMD", HVCTL_RIGHT}, {"DIR", HVCTL_LEFT},
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
	cJSON_ArrayForEach(q, queues) {
		static const char *const dirs[] = {"rx", "tx"};

		for (i = 0; i < 2; i++) {
			cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(q, dirs[i])) {
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
	cJSON_ArrayForEach(q, queues) {
		static const char *const dirs[] = {"rx", "tx"};

		for (i = 0; i < 2; i++) {
			const cJSON *d = cJSON_GetObjectItemCaseSensitive(q, dirs[i]);
			char buf[3 + MAX_QUEUE_COLS][64];
			const char *row[3 + MAX_QUEUE_COLS];
			unsigned int k;

			if (d == NULL)
				continue;
			row[0] = hvctl_cell(cJSON_GetObjectItemCaseSensitive(q, "qp"), buf[0], 64);
			row[1] = hvctl_cell(cJSON_GetObjectItemCaseSensitive(q, "pmd"), buf[1], 64);
			row[2] = dirs[i];
			for (k = 0; k < nkeys; k++)
				row[3 + k] = hvctl_cell(cJSON_GetObjectItemCaseSensitive(d, keys[k]),
							buf[3 + k], 64);
			hvctl_table_add(t, row);
		}
	}
	printf("queues:\n");
	hvctl_table_print(t, stdout);
	hvctl_table_free(t);
}

static int
port_add(struct hvctl *h, int argc, char **argv)
{
	static const struct option opts[] = {
		{"type", required_argument, NULL, 't'},
		{"socket", required_argument, NULL, 's'},
		{"mode", required_argument, NULL, 'm'},
		{"queues", required_argument, NULL, 'q'},
		{"vlan", required_argument, NULL, 'v'},
		{"devargs", required_argument, NULL, 'd'},
		{"trunk", no_argument, NULL, 'T'},
		{"pmd", required_argument, NULL, 'p'},
		{"features", required_argument, NULL, 'f'},
		{"rxmod", required_argument, NULL, 'r'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *type = NULL, *sock = NULL, *mode = NULL, *devargs = NULL, *features = NULL;
	const char *rxmod = NULL;
	unsigned long long queues = 0, vlan = 0, pmd = 0;
	bool has_queues = false, has_vlan = false, trunk = false, has_pmd = false;
	cJSON *args, *res;
	int c;

	optind = 0;
	while ((c = getopt_long(argc, argv, ":t:s:m:q:v:d:Tp:f:r:h", opts, NULL)) != -1) {
		switch (c) {
		case 'T':
			trunk = true;
			break;
		case 'f':
			features = optarg;
			break;
		case 'r':
			rxmod = optarg;
			break;
		case 'p':
			if (hvctl_parse_uint(optarg, 0, 65535, &pmd) < 0)
				return hvctl_usage_err("port", "port add: --pmd: '%s' is not a "
						       "number", optarg);
			has_pmd = true;
			break;
		case 't':
			type = optarg;
			break;
		case 's':
			sock = optarg;
			break;
		case 'm':
			mode = optarg;
			break;
		case 'd':
			devargs = optarg;
			break;
		case 'q':
			if (hvctl_parse_uint(optarg, 1, 65535, &queues) < 0)
				return hvctl_usage_err("port", "port add: --queues: '%s' is not a "
						       "number 1..65535", optarg);
			has_queues = true;
			break;
		case 'v':
			if (hvctl_parse_uint(optarg, 0, 4095, &vlan) < 0)
				return hvctl_usage_err("port", "port add: --vlan: '%s' is not a "
						       "VLAN id 0..4095", optarg);
			has_vlan = true;
			break;
		case 'h':
			fputs(port_usage, stdout);
			return 0;
		default:
			return hvctl_opt_err("port", c, argv);
		}
	}
	if (optind >= argc)
		return hvctl_usage_err("port", "port add: missing NAME");
	if (optind + 1 < argc)
		return hvctl_usage_err("port", "port add: unexpected argument '%s'",
				       argv[optind + 1]);
	if (type == NULL)
		return hvctl_usage_err("port", "port add: missing --type (vhost-user or ethdev)");

	args = cJSON_CreateObject();
	cJSON_AddStringToObject(args, "name", argv[optind]);
	cJSON_AddStringToObject(args, "type", type);
	if (sock != NULL)
		cJSON_AddStringToObject(args, "socket", sock);
	if (mode != NULL)
		cJSON_AddStringToObject(args, "mode", mode);
	if (devargs != NULL)
		cJSON_AddStringToObject(args, "devargs", devargs);
	if (has_queues)
		cJSON_AddNumberToObject(args, "queues", (double)queues);
	if (has_vlan)
		cJSON_AddNumberToObject(args, "vlan", (double)vlan);
	if (trunk)
		cJSON_AddBoolToObject(args, "trunk", true);
	if (has_pmd)
		cJSON_AddNumberToObject(args, "pmd", (double)pmd);
	if (features != NULL)
		cJSON_AddStringToObject(args, "features", features);
	if (rxmod != NULL)
		cJSON_AddStringToObject(args, "rxmod", rxmod);
	if (hvctl_call(h, "port.add", args, &res) < 0)
		return 1;
	if (h->json)
		hvctl_print_json(stdout, res);
	else if (cJSON_IsObject(res))
		print_port(res);
	cJSON_Delete(res);
	return 0;
}

/* port del|show NAME: one request with {"name": NAME}. */
static int
port_named(struct hvctl *h, const char *what, const char *cmd, int argc, char **argv)
{
	cJSON *args, *res;
	int rc;

	rc = only_help("port", argc, argv);
	if (rc >= 0)
		return rc;
	if (optind >= argc)
		return hvctl_usage_err("port", "port %s: missing NAME", what);
	if (optind + 1 < argc)
		return hvctl_usage_err("port", "port %s: unexpected argument '%s'", what,
				       argv[optind + 1]);
	args = cJSON_CreateObject();
	cJSON_AddStringToObject(args, "name", argv[optind]);
	if (hvctl_call(h, cmd, args, &res) < 0)
		return 1;
	if (h->json)
		hvctl_print_json(stdout, res);
	else if (cJSON_IsObject(res))
		print_port(res);
	cJSON_Delete(res);
	return 0;
}

static int
port_del(struct hvctl *h, int argc, char **argv)
{
	return port_named(h, "del", "port.del", argc, argv);
}

static int
port_show(struct hvctl *h, int argc, char **argv)
{
	return port_named(h, "show", "port.show", argc, argv);
}

static int
port_list(struct hvctl *h, int argc, char **argv)
{
	static const struct hvctl_col cols[] = {
		{"NAME", HVCTL_LEFT}, {"TYPE", HVCTL_LEFT}, {"STATE", HVCTL_LEFT},
		{"QUEUES", HVCTL_RIGHT}, {"VLAN", HVCTL_RIGHT}, {"PMD", HVCTL_LEFT},
		{"SOCKET/DEVARGS", HVCTL_LEFT},
	};
	struct hvctl_table *t;
	cJSON *res;
	const cJSON *p;
	int rc;

	rc = only_help("port", argc, argv);
	if (rc >= 0)
		return rc;
	if (optind < argc)
		return hvctl_usage_err("port", "port list: unexpected argument '%s'",
				       argv[optind]);
	if (hvctl_call(h, "port.list", NULL, &res) < 0)
		return 1;
	if (h->json) {
		hvctl_print_json(stdout, res);
		cJSON_Delete(res);
		return 0;
	}
	t = hvctl_table_new(cols, 7);
	cJSON_ArrayForEach(p, res) {
		static const char *const keys[] = {"name", "type", "state", "queues", "vlan", "pmd"};
		const cJSON *where = cJSON_GetObjectItemCaseSensitive(p, "socket");
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
			where = cJSON_GetObjectItemCaseSensitive(p, "devargs");
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

static int
port_set(struct hvctl *h, int argc, char **argv)
{
	cJSON *args, *res;
	int rc, i;

	rc = only_help("port", argc, argv);
	if (rc >= 0)
		return rc;
	if (optind >= argc)
		return hvctl_usage_err("port", "port set: missing NAME");
	if (optind + 1 >= argc)
		return hvctl_usage_err("port", "port set: missing KEY=VALUE");
	args = cJSON_CreateObject();
	cJSON_AddStringToObject(args, "name", argv[optind]);
	for (i = optind + 1; i < argc; i++) {
		char *eq = strchr(argv[i], '=');
		char key[128];
		size_t klen;

		klen = eq != NULL ? (size_t)(eq - argv[i]) : 0;
		if (klen == 0 || klen >= sizeof(key) || eq[1] == '\0') {
			cJSON_Delete(args);
			return hvctl_usage_err("port", "port set: '%s' is not KEY=VALUE", argv[i]);
		}
		memcpy(key, argv[i], klen);
		key[klen] = '\0';
		if (strcmp(key, "name") == 0 || cJSON_HasObjectItem(args, key)) {
			cJSON_Delete(args);
			return hvctl_usage_err("port", "port set: '%s' given twice", key);
		}
		if (hvctl_is_integer(eq + 1))
			cJSON_AddNumberToObject(args, key, strtod(eq + 1, NULL));
		else if (strcmp(eq + 1, "true") == 0 || strcmp(eq + 1, "false") == 0)
			cJSON_AddBoolToObject(args, key, eq[1] == 't');
		else
			cJSON_AddStringToObject(args, key, eq + 1);
	}
	if (hvctl_call(h, "port.set", args, &res) < 0)
		return 1;
	if (h->json)
		hvctl_print_json(stdout, res);
	else if (cJSON_IsObject(res))
		print_port(res);
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

	return hvctl_dispatch(h, "port", verbs, port_usage, argc, argv);
}
