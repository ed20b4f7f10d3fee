/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hvctl helpers shared by the verb groups: errors, the daemon connection,
 * sub-verb dispatch, number parsing, tables and JSON output.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "hv_ctl.h"
#include "hv_ctl_api.h"
#include "hvctl.h"

void
hvctl_err(const char *fmt, ...)
{
	va_list ap;

	fputs("hvctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int
hvctl_usage_err(const char *what, const char *fmt, ...)
{
	va_list ap;

	fputs("hvctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see 'hvctl %s%s--help')\n", what ? what : "", what ? " " : "");
	return 1;
}

int
hvctl_opt_err(const char *what, int c, char **argv)
{
	char opt[3] = {'-', (char)optopt, '\0'};
	const char *name = opt;

	if (optopt == 0 || strncmp(argv[optind - 1], "--", 2) == 0)
		name = argv[optind - 1];
	if (c == ':')
		return hvctl_usage_err(what, "option '%s' needs an argument", name);
	return hvctl_usage_err(what, "unknown option '%s'", name);
}

int
hvctl_call(struct hvctl *h, const char *cmd, cJSON *args, cJSON **result)
{
	char err[1024];

	if (result != NULL)
		*result = NULL;
	if (h->fd < 0) {
		h->fd = hv_ctl_connect(h->socket, err, sizeof(err));
		if (h->fd < 0) {
			cJSON_Delete(args);
			hvctl_err("%s", err);
			return -1;
		}
	}
	if (hv_ctl_call(h->fd, cmd, args, result, err, sizeof(err)) < 0) {
		hvctl_err("%s", err);
		return -1;
	}
	return 0;
}

int
hvctl_dispatch(struct hvctl *h, const char *group, const struct hvctl_verb *verbs,
	       const char *usage, int argc, char **argv)
{
	const struct hvctl_verb *v;

	if (argc < 2)
		return hvctl_usage_err(group, "%s: missing sub-command", group);
	if (strcmp(argv[1], "help") == 0 && argc >= 3) {
		/* "hvctl port help del" is "hvctl port del --help" */
		char *sub[] = {argv[2], (char *)"--help", NULL};

		for (v = verbs; v->name != NULL; v++)
			if (strcmp(v->name, argv[2]) == 0)
				return v->run(h, 2, sub);
		return hvctl_usage_err(group, "%s: unknown sub-command '%s'", group, argv[2]);
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		fputs(usage, stdout);
		return 0;
	}
	for (v = verbs; v->name != NULL; v++)
		if (strcmp(v->name, argv[1]) == 0)
			return v->run(h, argc - 1, argv + 1);
	return hvctl_usage_err(group, "%s: unknown sub-command '%s'", group, argv[1]);
}

int
hvctl_parse_uint(const char *s, unsigned long long min, unsigned long long max,
		 unsigned long long *out)
{
	uint64_t v;

	if (hv_ctl_parse_uint(s, min, max, &v) != 0)
		return -1;
	*out = v;
	return 0;
}

void
hvctl_print_json(FILE *out, const cJSON *v)
{
	char *text = cJSON_Print(v);

	fprintf(out, "%s\n", text != NULL ? text : "null");
	free(text);
}

static void
cell_scalar(const cJSON *v, char *buf, size_t len)
{
	if (v == NULL || cJSON_IsNull(v)) {
		snprintf(buf, len, "-");
	} else if (cJSON_IsString(v)) {
		snprintf(buf, len, "%s", v->valuestring);
	} else if (cJSON_IsBool(v)) {
		snprintf(buf, len, "%s", cJSON_IsTrue(v) ? "yes" : "no");
	} else if (cJSON_IsNumber(v)) {
		double d = v->valuedouble;

		if (d == floor(d) && fabs(d) < 9.007199254740992e15)
			snprintf(buf, len, "%" PRId64, (int64_t)d);
		else
			snprintf(buf, len, "%g", d);
	} else {
		char *text = cJSON_PrintUnformatted(v);

		snprintf(buf, len, "%s", text != NULL ? text : "?");
		free(text);
	}
}

const char *
hvctl_cell(const cJSON *v, char *buf, size_t len)
{
	const cJSON *e;
	size_t off = 0;

	if (len == 0)
		return buf;
	if (!cJSON_IsArray(v)) {
		cell_scalar(v, buf, len);
		return buf;
	}
	cJSON_ArrayForEach(e, v)
	{
		if (cJSON_IsArray(e) || cJSON_IsObject(e)) {
			cell_scalar(v, buf, len);
			return buf;
		}
	}
	buf[0] = '\0';
	if (cJSON_GetArraySize(v) == 0) {
		snprintf(buf, len, "-");
		return buf;
	}
	cJSON_ArrayForEach(e, v)
	{
		if (off + 1 >= len)
			break;
		if (off > 0)
			buf[off++] = ',';
		cell_scalar(e, buf + off, len - off);
		off += strlen(buf + off);
	}
	return buf;
}

struct hvctl_table {
	const struct hvctl_col *cols;
	unsigned int ncols;
	unsigned int nrows, cap;
	char **cells; /* nrows * ncols */
};

struct hvctl_table *
hvctl_table_new(const struct hvctl_col *cols, unsigned int ncols)
{
	struct hvctl_table *t = calloc(1, sizeof(*t));

	if (t == NULL)
		return NULL;
	t->cols = cols;
	t->ncols = ncols;
	return t;
}

int
hvctl_table_add(struct hvctl_table *t, const char *const *cells)
{
	unsigned int i;

	if (t->nrows == t->cap) {
		unsigned int cap = t->cap ? t->cap * 2 : 16;
		char **ncells = realloc(t->cells, sizeof(*ncells) * cap * t->ncols);

		if (ncells == NULL)
			return -1;
		t->cells = ncells;
		t->cap = cap;
	}
	for (i = 0; i < t->ncols; i++) {
		char *c = strdup(cells[i] != NULL ? cells[i] : "-");

		if (c == NULL) {
			while (i-- > 0)
				free(t->cells[t->nrows * t->ncols + i]);
			return -1;
		}
		t->cells[t->nrows * t->ncols + i] = c;
	}
	t->nrows++;
	return 0;
}

static void
print_row(const struct hvctl_table *t, const size_t *w, const char *const *row, FILE *out,
	  int indent)
{
	unsigned int i;

	fprintf(out, "%*s", indent, "");
	for (i = 0; i < t->ncols; i++) {
		bool last = i + 1 == t->ncols;
		int pad = (int)w[i];

		if (i > 0)
			fputs("  ", out);
		if (t->cols[i].align == HVCTL_RIGHT)
			fprintf(out, "%*s", pad, row[i]);
		else if (last)
			fputs(row[i], out);
		else
			fprintf(out, "%-*s", pad, row[i]);
	}
	fputc('\n', out);
}

void
hvctl_table_print(const struct hvctl_table *t, FILE *out)
{
	hvctl_table_print_indent(t, out, 0);
}

void
hvctl_table_print_indent(const struct hvctl_table *t, FILE *out, int indent)
{
	const char *titles[64];
	size_t w[64];
	unsigned int i, r;

	if (t->ncols > 64)
		return;
	for (i = 0; i < t->ncols; i++) {
		titles[i] = t->cols[i].title;
		w[i] = strlen(titles[i]);
		for (r = 0; r < t->nrows; r++) {
			size_t l = strlen(t->cells[r * t->ncols + i]);

			if (l > w[i])
				w[i] = l;
		}
	}
	print_row(t, w, titles, out, indent);
	for (r = 0; r < t->nrows; r++)
		print_row(t, w, (const char *const *)&t->cells[r * t->ncols], out, indent);
}

void
hvctl_table_free(struct hvctl_table *t)
{
	unsigned int i;

	if (t == NULL)
		return;
	for (i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	free(t);
}

static bool
skipped(const char *name, const char *const *skip)
{
	for (; skip != NULL && *skip != NULL; skip++)
		if (strcmp(name, *skip) == 0)
			return true;
	return false;
}

/* An object, or an array that holds one: printed as a nested block, not a cell. */
static bool
nested(const cJSON *v)
{
	const cJSON *e;

	if (cJSON_IsObject(v))
		return true;
	if (!cJSON_IsArray(v))
		return false;
	cJSON_ArrayForEach(e, v)
	{
		if (cJSON_IsObject(e) || cJSON_IsArray(e))
			return true;
	}
	return false;
}

void
hvctl_print_kv(FILE *out, const cJSON *obj, int indent, const char *const *skip)
{
	const cJSON *m, *e;
	char buf[1024];
	int w = 0, i;

	cJSON_ArrayForEach(m, obj)
	{
		if (m->string != NULL && !skipped(m->string, skip) && !nested(m) &&
		    (int)strlen(m->string) > w)
			w = (int)strlen(m->string);
	}
	/* the scalars aligned, then each nested object as an indented block */
	cJSON_ArrayForEach(m, obj)
	{
		if (m->string == NULL || skipped(m->string, skip) || nested(m))
			continue;
		fprintf(out, "%*s%s:%*s %s\n", indent, "", m->string, w - (int)strlen(m->string),
			"", hvctl_cell(m, buf, sizeof(buf)));
	}
	cJSON_ArrayForEach(m, obj)
	{
		if (m->string == NULL || skipped(m->string, skip) || !nested(m))
			continue;
		fprintf(out, "%*s%s:\n", indent, "", m->string);
		if (cJSON_IsObject(m)) {
			hvctl_print_kv(out, m, indent + 2, NULL);
			continue;
		}
		i = 0;
		cJSON_ArrayForEach(e, m)
		{
			if (cJSON_IsObject(e)) {
				fprintf(out, "%*s[%d]:\n", indent + 2, "", i);
				hvctl_print_kv(out, e, indent + 4, NULL);
			} else {
				fprintf(out, "%*s[%d]: %s\n", indent + 2, "", i,
					hvctl_cell(e, buf, sizeof(buf)));
			}
			i++;
		}
	}
}

double
hvctl_num(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

const char *
hvctl_si(double v, char *buf, size_t len)
{
	static const char suffix[] = {'\0', 'k', 'M', 'G', 'T', 'P'};
	unsigned int i = 0;

	while (fabs(v) >= 1000 && i + 1 < sizeof(suffix)) {
		v /= 1000;
		i++;
	}
	if (i == 0)
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%.2f%c", v, suffix[i]);
	return buf;
}
