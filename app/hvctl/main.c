/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hvctl: the operator's CLI, and (with `hvctl guest run`) the VMM. This stage
 * knows only its version; the port, fdb, stats and guest verbs arrive with the
 * switch daemon's control socket and the VMM.
 */
#include <stdio.h>
#include <string.h>

static int
usage(FILE *out)
{
	fprintf(out, "usage: hvctl version\n"
		     "       hvctl --help\n");
	return out == stdout ? 0 : 1;
}

int
main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "version") == 0) {
		printf("hvctl %s\n", HV_VERSION);
		return 0;
	}
	if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0))
		return usage(stdout);
	if (argc >= 2)
		fprintf(stderr, "hvctl: unknown command '%s'\n", argv[1]);
	return usage(stderr);
}
