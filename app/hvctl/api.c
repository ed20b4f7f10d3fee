/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Requests built from the API table (lib/ctl/hv_ctl_api.h): options and
 * help come from a command's arguments, and the request is validated by the
 * same code as the daemon's before it is sent, so a bad value gets the
 * daemon's message without a round trip.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "hv_ctl_api.h"
#include "hvctl.h"

/* "[--queues N]", "NAME", "[--trunk]" */
static void
param_usage(FILE *out, const struct hv_ctl_param *p, bool kv)
{
	const struct hv_ctl_key_def *d = hv_ctl_api_key(p->key);
	const char *open = p->required ? "" : "[", *close = p->required ? "" : "]";

	if (p->positional)
		fprintf(out, " %s%s%s", open, d->metavar, close);
	else if (kv)
		fprintf(out, " [%s=%s]", d->key,
			d->type == HV_CTL_T_BOOL ? "true|false" : d->metavar);
	else if (d->type == HV_CTL_T_BOOL)
		fprintf(out, " %s--%s%s", open, d->key, close);
	else
		fprintf(out, " %s--%s %s%s", open, d->key, d->metavar, close);
}

static void
usage_line(FILE *out, const char *lead, const struct hvctl_api_verb *v)
{
	const struct hv_ctl_cmd_def *d = hv_ctl_api_cmd(v->id);

	fprintf(out, "%s hvctl %s", lead, v->words);
	for (unsigned int i = 0; i < d->n_params; i++)
		if (d->params[i].positional)
			param_usage(out, &d->params[i], v->kv);
	for (unsigned int i = 0; i < d->n_params; i++)
		if (!d->params[i].positional)
			param_usage(out, &d->params[i], v->kv);
	fputc('\n', out);
}

void
hvctl_api_help(FILE *out, const struct hvctl_api_verb *v)
{
	const struct hv_ctl_cmd_def *d = hv_ctl_api_cmd(v->id);
	char exp[128];

	usage_line(out, "usage:", v);
	fprintf(out, "\n%s (request %s).\n", d->help, d->name);
	if (d->n_params != 0)
		fprintf(out, "\n");
	for (unsigned int i = 0; i < d->n_params; i++) {
		const struct hv_ctl_key_def *k = hv_ctl_api_key(d->params[i].key);
		char name[64];

		if (d->params[i].positional)
			snprintf(name, sizeof(name), "%s", k->metavar);
		else if (v->kv)
			snprintf(name, sizeof(name), "%s=", k->key);
		else
			snprintf(name, sizeof(name), "--%s", k->key);
		fprintf(out, "  %-10s  %s\n  %-10s  (%s)\n", name, k->help, "",
			hv_ctl_api_expect(d->params[i].key, exp, sizeof(exp)));
	}
}

char *
hvctl_api_group_usage(const struct hvctl_api_verb *verbs, const char *extra)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	if (out == NULL)
		return NULL;
	for (const struct hvctl_api_verb *v = verbs; v->words != NULL; v++)
		usage_line(out, v == verbs ? "usage:" : "      ", v);
	if (extra != NULL)
		fputs(extra, out);
	fputc('\n', out);
	for (const struct hvctl_api_verb *v = verbs; v->words != NULL; v++)
		fprintf(out, "  %-10s  %s\n",
			strchr(v->words, ' ') ? strchr(v->words, ' ') + 1 : v->words,
			hv_ctl_api_cmd(v->id)->help);
	fprintf(out, "\n'hvctl %s --help' lists a command's arguments.\n",
		strchr(verbs->words, ' ') ? "GROUP VERB" : "VERB");
	if (fclose(out) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* Add key=text to args as the key's JSON type; a usage error if given twice. */
static int
add_arg(cJSON *args, const char *group, const char *words, enum hv_ctl_key k, const char *text)
{
	const char *key = hv_ctl_api_key(k)->key;

	if (cJSON_HasObjectItem(args, key))
		return hvctl_usage_err(group, "%s: '%s' given twice", words, key);
	cJSON_AddItemToObject(args, key, hv_ctl_api_value(k, text));
	return 0;
}

/* The key named by the first len bytes of s among cmd's; HV_CTL_K__MAX if none. */
static enum hv_ctl_key
find_key(const struct hv_ctl_cmd_def *d, const char *s, size_t len)
{
	for (unsigned int i = 0; i < d->n_params; i++) {
		const char *key = hv_ctl_api_key(d->params[i].key)->key;

		if (strlen(key) == len && memcmp(key, s, len) == 0)
			return d->params[i].key;
	}
	return HV_CTL_K__MAX;
}

int
hvctl_api_args(const char *group, const struct hvctl_api_verb *v, int argc, char **argv,
	       cJSON **out)
{
	const struct hv_ctl_cmd_def *d = hv_ctl_api_cmd(v->id);
	struct option opts[HV_CTL_MAX_PARAMS + 2];
	enum hv_ctl_key optkey[HV_CTL_MAX_PARAMS];
	struct hv_ctl_vals vals;
	unsigned int n = 0, i;
	char err[512];
	cJSON *args;
	int c;

	*out = NULL;
	for (i = 0; i < d->n_params; i++) {
		const struct hv_ctl_key_def *k = hv_ctl_api_key(d->params[i].key);

		if (d->params[i].positional)
			continue;
		optkey[n] = d->params[i].key;
		opts[n] = (struct option){
			k->key, k->type == HV_CTL_T_BOOL ? optional_argument : required_argument,
			NULL, 256 + (int)n};
		n++;
	}
	opts[n] = (struct option){"help", no_argument, NULL, 'h'};
	opts[n + 1] = (struct option){NULL, 0, NULL, 0};
	args = cJSON_CreateObject();
	if (args == NULL) {
		hvctl_err("out of memory");
		return 1;
	}
	optind = 0;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		if (c == 'h') {
			hvctl_api_help(stdout, v);
			cJSON_Delete(args);
			return 0;
		}
		if (c < 256 || c >= 256 + (int)n) {
			cJSON_Delete(args);
			return hvctl_opt_err(group, c, argv);
		}
		if (add_arg(args, group, v->words, optkey[c - 256], optarg ? optarg : "true") !=
		    0) {
			cJSON_Delete(args);
			return 1;
		}
	}
	for (i = 0; i < d->n_params; i++) {
		const struct hv_ctl_param *p = &d->params[i];

		if (!p->positional)
			continue;
		if (optind >= argc) {
			if (!p->required)
				continue;
			cJSON_Delete(args);
			return hvctl_usage_err(group, "%s: missing %s", v->words,
					       hv_ctl_api_key(p->key)->metavar);
		}
		if (add_arg(args, group, v->words, p->key, argv[optind++]) != 0) {
			cJSON_Delete(args);
			return 1;
		}
	}
	if (v->kv && optind >= argc) {
		cJSON_Delete(args);
		return hvctl_usage_err(group, "%s: missing KEY=VALUE", v->words);
	}
	for (; optind < argc; optind++) {
		const char *arg = argv[optind], *eq = strchr(arg, '=');
		enum hv_ctl_key k;

		if (!v->kv) {
			cJSON_Delete(args);
			return hvctl_usage_err(group, "%s: unexpected argument '%s'", v->words,
					       arg);
		}
		if (eq == NULL || eq == arg || eq[1] == '\0') {
			cJSON_Delete(args);
			return hvctl_usage_err(group, "%s: '%s' is not KEY=VALUE", v->words, arg);
		}
		k = find_key(d, arg, (size_t)(eq - arg));
		if (k == HV_CTL_K__MAX) {
			/* the table's check names it and lists the valid keys */
			char key[128];

			snprintf(key, sizeof(key), "%.*s", (int)(eq - arg), arg);
			cJSON_AddStringToObject(args, key, eq + 1);
			break;
		}
		if (add_arg(args, group, v->words, k, eq + 1) != 0) {
			cJSON_Delete(args);
			return 1;
		}
	}
	if (hv_ctl_api_parse(d, NULL, args, &vals, err, sizeof(err)) != 0) {
		hvctl_err("%s", err);
		cJSON_Delete(args);
		return 1;
	}
	*out = args;
	return -1;
}
