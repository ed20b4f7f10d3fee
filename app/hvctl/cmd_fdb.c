/* SPDX-License-Identifier: BSD-3-Clause */
/* hvctl fdb show|flush: "fdb.show", "fdb.flush". */
#include <getopt.h>

#include "hvctl.h"

static const char fdb_usage[] =
	"usage: hvctl fdb show [--port NAME]\n"
	"       hvctl fdb flush [--port NAME]\n"
	"\n"
	"  show   the learned MAC addresses (of one port with --port)\n"
	"  flush  forget the learned MAC addresses (of one port with --port)\n";

/* Parse [--port NAME]; returns -1 to go on, else the exit code. */
static int
fdb_opts(const char *what, int argc, char **argv, cJSON **args)
{
	static const struct option opts[] = {
		{"port", required_argument, NULL, 'p'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *port = NULL;
	int c;

	*args = NULL;
	optind = 0;
	while ((c = getopt_long(argc, argv, ":p:h", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			port = optarg;
			break;
		case 'h':
			fputs(fdb_usage, stdout);
			return 0;
		default:
			return hvctl_opt_err("fdb", c, argv);
		}
	}
	if (optind < argc)
		return hvctl_usage_err("fdb", "fdb %s: unexpected argument '%s'", what,
				       argv[optind]);
	if (port != NULL) {
		*args = cJSON_CreateObject();
		cJSON_AddStringToObject(*args, "port", port);
	}
	return -1;
}

static int
fdb_show(struct hvctl *h, int argc, char **argv)
{
	static const struct hvctl_col cols[] = {
		{"MAC", HVCTL_LEFT}, {"VLAN", HVCTL_RIGHT}, {"PORT", HVCTL_LEFT},
		{"AGE(s)", HVCTL_RIGHT},
	};
	struct hvctl_table *t;
	const cJSON *e;
	cJSON *args, *res;
	int rc;

	rc = fdb_opts("show", argc, argv, &args);
	if (rc >= 0)
		return rc;
	if (hvctl_call(h, "fdb.show", args, &res) < 0)
		return 1;
	if (h->json) {
		hvctl_print_json(stdout, res);
		cJSON_Delete(res);
		return 0;
	}
	t = hvctl_table_new(cols, 4);
	cJSON_ArrayForEach(e, res) {
		static const char *const keys[] = {"mac", "vlan", "port", "age_s"};
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

	rc = fdb_opts("flush", argc, argv, &args);
	if (rc >= 0)
		return rc;
	if (hvctl_call(h, "fdb.flush", args, &res) < 0)
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

	return hvctl_dispatch(h, "fdb", verbs, fdb_usage, argc, argv);
}
