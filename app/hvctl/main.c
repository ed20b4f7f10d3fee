/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hvctl: the operator's CLI for hvswitch. It talks to the daemon over its
 * control socket (lib/ctl, doc/hvctl.rst); each verb group lives in its own
 * cmd_*.c file. Exit status: 0 on success, 1 on any error, with one line
 * "hvctl: <reason>" on stderr.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hv_ctl.h"
#include "hvctl.h"

static int cmd_help(struct hvctl *h, int argc, char **argv);

static const struct hvctl_verb verbs[] = {
	{"version", hvctl_cmd_version, "print hvctl's and the daemon's versions"},
	{"port", hvctl_cmd_port, "add, delete, list, show and configure ports"},
	{"fdb", hvctl_cmd_fdb, "show or flush the forwarding database"},
	{"stats", hvctl_cmd_stats, "port and PMD counters, or rates with --watch"},
	{"config", hvctl_cmd_config, "save the running configuration"},
	{"log", hvctl_cmd_log, "set the daemon's log levels at run time"},
	{"capture", hvctl_cmd_capture, "write a port's frames as pcapng (tcpdump, tshark)"},
	{"guest", hvctl_cmd_guest, "run KVM guests attached to switch ports"},
	{"help", cmd_help, "list the verbs; help VERB [SUB]: their help"},
	{NULL, NULL, NULL},
};

static void
usage(FILE *out)
{
	const struct hvctl_verb *v;

	fprintf(out,
		"usage: hvctl [--socket PATH] [--json] VERB [ARGS...]\n"
		"       hvctl VERB --help\n"
		"\n"
		"options:\n"
		"  -s, --socket PATH  control socket (default $HVCTL_SOCKET, else %s);\n"
		"                     before the verb\n"
		"  -j, --json         print results as JSON (anywhere on the line)\n"
		"  -h, --help         this text\n"
		"\n"
		"verbs:\n",
		HV_CTL_SOCK_PATH);
	for (v = verbs; v->name != NULL; v++)
		fprintf(out, "  %-8s  %s\n", v->name, v->summary);
}

/* hvctl help [VERB [SUB]]: VERB [SUB] --help */
static int
cmd_help(struct hvctl *h, int argc, char **argv)
{
	char *args[4] = {NULL, NULL, NULL, NULL};
	const struct hvctl_verb *v;
	int n = 0;

	if (argc < 2 || strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return 0;
	}
	for (v = verbs; v->name != NULL; v++)
		if (strcmp(v->name, argv[1]) == 0)
			break;
	if (v->name == NULL)
		return hvctl_usage_err(NULL, "help: unknown verb '%s'", argv[1]);
	args[n++] = argv[1];
	if (argc >= 3)
		args[n++] = argv[2];
	args[n++] = (char *)"--help";
	return v->run(h, n, args);
}

/*
 * --json (-j) after the verb, as in "hvctl port list --json": set it and
 * drop the word, up to a "--". No verb has an option of that name; --socket
 * stays before the verb (port add has its own --socket).
 */
static size_t
count_args(char **argv)
{
	size_t n = 0;

	while (argv[n] != NULL)
		n++;
	return n;
}

static void
take_json(struct hvctl *h, int argc, char **argv)
{
	int i, n = 1;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			while (i < argc)
				argv[n++] = argv[i++];
			break;
		}
		if (strcmp(argv[i], "--json") == 0 || strcmp(argv[i], "-j") == 0)
			h->json = true;
		else
			argv[n++] = argv[i];
	}
	argv[n] = NULL;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"socket", required_argument, NULL, 's'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct hvctl h = {.socket = getenv("HVCTL_SOCKET"), .fd = -1};
	const struct hvctl_verb *v;
	int c, rc;

	/* bash's `complete -C hvctl hvctl` runs us with the line being typed */
	if (getenv("COMP_LINE") != NULL && getenv("COMP_POINT") != NULL) {
		hvctl_complete(verbs, getenv("COMP_LINE"), strtoul(getenv("COMP_POINT"), NULL, 10));
		return 0;
	}
	if (h.socket == NULL || h.socket[0] == '\0')
		h.socket = HV_CTL_SOCK_PATH;
	opterr = 0;
	/* '+': stop at the verb; each verb parses its own options. */
	while ((c = getopt_long(argc, argv, "+:s:jh", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			h.socket = optarg;
			break;
		case 'j':
			h.json = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			return hvctl_opt_err(NULL, c, argv);
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 1;
	}
	take_json(&h, argc - optind, argv + optind);
	for (v = verbs; v->name != NULL; v++)
		if (strcmp(v->name, argv[optind]) == 0)
			break;
	if (v->name == NULL)
		return hvctl_usage_err(NULL, "unknown verb '%s'", argv[optind]);

	rc = v->run(&h, (int)count_args(argv + optind), argv + optind);
	if (h.fd >= 0)
		close(h.fd);
	if (fflush(stdout) != 0 && rc == 0) {
		hvctl_err("write error on stdout");
		rc = 1;
	}
	return rc;
}
