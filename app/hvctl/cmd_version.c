/* SPDX-License-Identifier: BSD-3-Clause */
/* hvctl version: our version, then the daemon's ("version"). */
#include <getopt.h>
#include <string.h>

#include "hv_ctl_api.h"
#include "hvctl.h"

static const char version_usage[] =
	"usage: hvctl version\n"
	"\n"
	"Print hvctl's version, then the running hvswitch's and its DPDK's.\n";

int
hvctl_cmd_version(struct hvctl *h, int argc, char **argv)
{
	static const struct option opts[] = {
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	cJSON *res, *out;
	char buf[256];
	int c;

	optind = 0;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		if (c == 'h') {
			fputs(version_usage, stdout);
			return 0;
		}
		return hvctl_opt_err("version", c, argv);
	}
	if (optind < argc)
		return hvctl_usage_err("version", "version: unexpected argument '%s'",
				       argv[optind]);

	if (!h->json)
		printf("hvctl %s\n", HV_VERSION);
	if (hvctl_call(h, HV_CTL_CMD(VERSION), NULL, &res) < 0)
		return 1;
	if (h->json) {
		out = cJSON_CreateObject();
		cJSON_AddStringToObject(out, "hvctl", HV_VERSION);
		cJSON_AddItemToObject(out, "hvswitch", res);
		hvctl_print_json(stdout, out);
		cJSON_Delete(out);
		return 0;
	}
	printf("hvswitch %s\n",
	       hvctl_cell(cJSON_GetObjectItemCaseSensitive(res, "version"), buf, sizeof(buf)));
	if (cJSON_GetObjectItemCaseSensitive(res, "dpdk") != NULL)
		printf("%s\n",
		       hvctl_cell(cJSON_GetObjectItemCaseSensitive(res, "dpdk"), buf, sizeof(buf)));
	cJSON_Delete(res);
	return 0;
}
