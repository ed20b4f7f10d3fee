/* SPDX-License-Identifier: BSD-3-Clause */
/* hvctl config save: "config.save". */
#include <getopt.h>

#include "hvctl.h"

static const char config_usage[] =
	"usage: hvctl config save\n"
	"\n"
	"  save  write the running configuration (ports, settings) to the\n"
	"        daemon's configuration file\n";

static int
config_save(struct hvctl *h, int argc, char **argv)
{
	static const struct option opts[] = {
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	char buf[1024];
	cJSON *res;
	int c;

	optind = 0;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		if (c == 'h') {
			fputs(config_usage, stdout);
			return 0;
		}
		return hvctl_opt_err("config", c, argv);
	}
	if (optind < argc)
		return hvctl_usage_err("config", "config save: unexpected argument '%s'",
				       argv[optind]);
	if (hvctl_call(h, "config.save", NULL, &res) < 0)
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

	return hvctl_dispatch(h, "config", verbs, config_usage, argc, argv);
}
