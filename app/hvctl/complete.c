/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shell completion from the API table: bash runs `hvctl` with COMP_LINE and
 * COMP_POINT set (`complete -C hvctl hvctl`) and offers what it prints.
 * Words are split on blanks; quoting is not interpreted.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hv_ctl_api.h"
#include "hvctl.h"
#include "hvctl_guest.h"

#define MAX_WORDS 64

static const struct hvctl_api_verb *const groups[] = {
	hvctl_port_api, hvctl_fdb_api, hvctl_config_api, hvctl_stats_api, hvctl_log_api,
};

static void
offer(const char *cand, const char *prefix)
{
	if (strncmp(cand, prefix, strlen(prefix)) == 0)
		printf("%s\n", cand);
}

/* stats' own options (its clear is in the API table) */
static const char *const stats_opts[] = {"--watch", "--count", "--help", NULL};
/* guest console's and guest stop's (parsed by hand in cmd_guest.c) */
static const char *const console_opts[] = {"--no-follow", "--help", NULL};
static const char *const stop_opts[] = {"--force", "--timeout", "--help", NULL};

/*
 * The candidates of the verbs outside the API table, for words ("guest",
 * "guest run"); whether words is one of them. The guest verbs and run's
 * options come from their own tables; start passes run's on but --log and
 * --run-dir, which it sets itself.
 */
static bool
offer_extra(const char *words, const char *cur)
{
	const char *const *list = NULL;
	char opt[64];

	if (strcmp(words, "stats") == 0)
		list = stats_opts;
	else if (strcmp(words, "guest console") == 0)
		list = console_opts;
	else if (strcmp(words, "guest stop") == 0)
		list = stop_opts;
	if (list != NULL) {
		for (; *list != NULL; list++)
			offer(*list, cur);
		return true;
	}
	if (strcmp(words, "guest") == 0) {
		for (const struct hvctl_verb *v = hvctl_guest_verbs; v->name != NULL; v++)
			offer(v->name, cur);
		return true;
	}
	if (strcmp(words, "guest run") != 0 && strcmp(words, "guest start") != 0)
		return false;
	for (const struct option *o = hvctl_guest_run_opts; o->name != NULL; o++) {
		if (strcmp(words, "guest start") == 0 &&
		    (strcmp(o->name, "log") == 0 || strcmp(o->name, "run-dir") == 0))
			continue;
		snprintf(opt, sizeof(opt), "--%s", o->name);
		offer(opt, cur);
	}
	return true;
}

/* The table-driven verb "group verb", or NULL. */
static const struct hvctl_api_verb *
find_verb(const char *group, const char *verb)
{
	char words[64];

	snprintf(words, sizeof(words), "%s %s", group, verb);
	for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++)
		for (const struct hvctl_api_verb *v = groups[g]; v->words != NULL; v++)
			if (strcmp(v->words, words) == 0)
				return v;
	return NULL;
}

/* The sub-verbs of group. */
static void
offer_verbs(const char *group, const char *cur)
{
	size_t gl = strlen(group);

	for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++)
		for (const struct hvctl_api_verb *v = groups[g]; v->words != NULL; v++)
			if (strncmp(v->words, group, gl) == 0 && v->words[gl] == ' ')
				offer(v->words + gl + 1, cur);
}

/* The words key k takes ("vhost-user", "auto", "true"), each after lead. */
static void
offer_values(enum hv_ctl_key k, const char *lead, const char *cur)
{
	const struct hv_ctl_key_def *d = hv_ctl_api_key(k);
	char buf[128];

	if (d->type == HV_CTL_T_BOOL) {
		snprintf(buf, sizeof(buf), "%.64strue", lead);
		offer(buf, cur);
		snprintf(buf, sizeof(buf), "%.64sfalse", lead);
		offer(buf, cur);
	}
	for (const struct hv_ctl_word *w = d->words; w != NULL && w->word != NULL; w++) {
		snprintf(buf, sizeof(buf), "%.64s%.32s", lead, w->word);
		offer(buf, cur);
	}
}

/* The arguments of v: --KEY options, or KEY= words, or a key's values;
 * npos: positional words typed before cur (a positional key's words next). */
static void
offer_args(const struct hvctl_api_verb *v, const char *prev, const char *cur, unsigned int npos)
{
	const struct hv_ctl_cmd_def *d = hv_ctl_api_cmd(v->id);
	const char *eq = strchr(cur, '=');
	unsigned int pos = 0;
	char buf[128];

	for (unsigned int i = 0; i < d->n_params && cur[0] != '-'; i++) {
		if (!d->params[i].positional)
			continue;
		if (pos++ == npos && hv_ctl_api_key(d->params[i].key)->words != NULL) {
			offer_values(d->params[i].key, "", cur);
			return;
		}
	}

	for (unsigned int i = 0; i < d->n_params; i++) {
		const struct hv_ctl_key_def *k = hv_ctl_api_key(d->params[i].key);
		size_t kl = strlen(k->key);

		if (d->params[i].positional)
			continue;
		if (!v->kv && prev != NULL && strncmp(prev, "--", 2) == 0 &&
		    strcmp(prev + 2, k->key) == 0 && k->type != HV_CTL_T_BOOL) {
			offer_values(d->params[i].key, "", cur);
			return;
		}
		if (v->kv && eq != NULL && (size_t)(eq - cur) == kl &&
		    strncmp(cur, k->key, kl) == 0) {
			snprintf(buf, sizeof(buf), "%s=", k->key);
			offer_values(d->params[i].key, buf, cur);
			return;
		}
	}
	for (unsigned int i = 0; i < d->n_params; i++) {
		const char *key = hv_ctl_api_key(d->params[i].key)->key;

		if (d->params[i].positional)
			continue;
		snprintf(buf, sizeof(buf), v->kv ? "%s=" : "--%s", key);
		offer(buf, cur);
	}
	offer("--help", cur);
}

void
hvctl_complete(const struct hvctl_verb *verbs, const char *line, size_t point)
{
	char buf[4096], two[128], *words[MAX_WORDS], *tok, *save = NULL;
	const struct hvctl_api_verb *v;
	size_t len = strlen(line);
	unsigned int n = 0, w = 1;
	const char *cur = "";

	if (point < len)
		len = point;
	if (len >= sizeof(buf))
		return;
	memcpy(buf, line, len);
	buf[len] = '\0';
	for (tok = strtok_r(buf, " \t", &save); tok != NULL && n < MAX_WORDS;
	     tok = strtok_r(NULL, " \t", &save))
		words[n++] = tok;
	/* the word being typed: the last one, or a new one after a blank */
	if (n > 0 && len > 0 && line[len - 1] != ' ' && line[len - 1] != '\t')
		cur = words[--n];
	/* words[0] is hvctl; skip the global options */
	while (w < n && words[w][0] == '-') {
		if (strcmp(words[w], "-s") == 0 || strcmp(words[w], "--socket") == 0)
			w++;
		w++;
	}
	if (w >= n) {
		for (const struct hvctl_verb *t = verbs; t->name != NULL; t++)
			offer(t->name, cur);
		return;
	}
	if (w + 1 >= n) {
		if (strcmp(words[w], "help") == 0)
			for (const struct hvctl_verb *t = verbs; t->name != NULL; t++)
				offer(t->name, cur);
		offer_verbs(words[w], cur);
		offer_extra(words[w], cur);
		return;
	}
	v = find_verb(words[w], words[w + 1]);
	if (v != NULL) {
		unsigned int npos = 0;

		/* positional words so far: not options, nor the value of one */
		for (unsigned int i = w + 2; i < n; i++)
			if (words[i][0] != '-' && (words[i - 1][0] != '-' || i == w + 2))
				npos++;
		offer_args(v, n > w + 2 ? words[n - 1] : NULL, cur, npos);
		return;
	}
	snprintf(two, sizeof(two), "%.60s %.60s", words[w], words[w + 1]);
	if (!offer_extra(two, cur) && strcmp(words[w], "help") == 0 && w + 2 >= n) {
		offer_verbs(words[w + 1], cur);
		offer_extra(words[w + 1], cur);
	}
}
