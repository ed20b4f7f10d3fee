/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * hvctl internals shared by the verb groups (one file per group, cmd_*.c):
 * the verb table, the connection to the daemon and output helpers.
 */
#ifndef HVCTL_H
#define HVCTL_H

#include <stdbool.h>
#include <stdio.h>

#include <cjson/cJSON.h>

/** Global state: options and the (lazily opened) connection. */
struct hvctl {
	const char *socket; /**< control socket path */
	bool json;          /**< --json: print results as JSON */
	int fd;             /**< connection, -1 until the first call */
};

/** A verb (or sub-verb): argv[0] is its name, options follow. Returns the exit code. */
struct hvctl_verb {
	const char *name;
	int (*run)(struct hvctl *h, int argc, char **argv);
	const char *summary; /**< one line for the verb list */
};

/**
 * A verb that sends one command of the API table (lib/ctl/hv_ctl_api.h);
 * its options, positional words and help come from the table.
 */
struct hvctl_api_verb {
	const char *words; /**< "port add"; NULL ends a list */
	int id;            /**< enum hv_ctl_cmd_id */
	bool kv;           /**< arguments as KEY=VALUE words ("port set"), not --KEY VALUE */
};

/**
 * Parse a verb's argv (argv[0] its name) into the command's args: --KEY
 * VALUE options (a boolean: --KEY or --KEY=false), the positional words in
 * order, KEY=VALUE words when v->kv; then validate them as the daemon does.
 *
 * @param group for usage errors ("port")
 * @param out   the args object on success (caller sends or frees it)
 * @return -1 to go on (*out set), else the exit code (help printed: 0;
 *         error printed: 1)
 */
int hvctl_api_args(const char *group, const struct hvctl_api_verb *v, int argc, char **argv,
		   cJSON **out);

/** Print a verb's help (usage line, the command's help, each argument) from the table. */
void hvctl_api_help(FILE *out, const struct hvctl_api_verb *v);

/**
 * A group's usage text: a usage line per verb, extra (more usage lines, may
 * be NULL), then a line per verb with its help. malloc'ed; NULL if out of memory.
 */
char *hvctl_api_group_usage(const struct hvctl_api_verb *verbs, const char *extra);

/** The table-driven verbs of each group (NULL-words terminated). */
extern const struct hvctl_api_verb hvctl_port_api[];
extern const struct hvctl_api_verb hvctl_fdb_api[];
extern const struct hvctl_api_verb hvctl_config_api[];
extern const struct hvctl_api_verb hvctl_stats_api[];
extern const struct hvctl_api_verb hvctl_log_api[];

/**
 * Shell completion (bash: `complete -C hvctl hvctl`): print the candidates
 * for the word under the cursor of line (up to point), one per line: verbs,
 * sub-verbs, a command's options or KEY= words and the words a key takes,
 * all from the API table.
 *
 * @param verbs the top-level verbs, NULL-name terminated
 */
void hvctl_complete(const struct hvctl_verb *verbs, const char *line, size_t point);

/** Verb groups (cmd_*.c). */
int hvctl_cmd_version(struct hvctl *h, int argc, char **argv);
int hvctl_cmd_port(struct hvctl *h, int argc, char **argv);
int hvctl_cmd_fdb(struct hvctl *h, int argc, char **argv);
int hvctl_cmd_stats(struct hvctl *h, int argc, char **argv);
int hvctl_cmd_config(struct hvctl *h, int argc, char **argv);
int hvctl_cmd_guest(struct hvctl *h, int argc, char **argv);
int hvctl_cmd_log(struct hvctl *h, int argc, char **argv);
/** The sub-verbs of "guest", NULL-name terminated. */
extern const struct hvctl_verb hvctl_guest_verbs[];
int hvctl_cmd_capture(struct hvctl *h, int argc, char **argv);

/** Print "hvctl: <message>\n" on stderr. */
void hvctl_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/**
 * Report a usage error: "hvctl: <message> (see 'hvctl <what> --help')" on
 * stderr, one line.
 * @return 1, the exit code
 */
int hvctl_usage_err(const char *what, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/**
 * Report a getopt_long() error (c is ':' or '?'; the option string began with
 * ':') as a usage error.
 * @return 1
 */
int hvctl_opt_err(const char *what, int c, char **argv);

/**
 * Send one request (args consumed, may be NULL). On failure prints
 * "hvctl: <reason>" and returns -1.
 * @param result receives the result (caller frees), may be NULL
 */
int hvctl_call(struct hvctl *h, const char *cmd, cJSON *args, cJSON **result);

/**
 * Run the sub-verb named argv[1] of a group (argv[0]); handles "--help" and
 * "help" by printing usage to stdout.
 */
int hvctl_dispatch(struct hvctl *h, const char *group, const struct hvctl_verb *verbs,
		   const char *usage, int argc, char **argv);

/**
 * Parse a decimal unsigned integer in min..max (the whole string) with the
 * control library's one parser, hv_ctl_parse_uint().
 * @return 0, or -1 (nothing printed)
 */
int hvctl_parse_uint(const char *s, unsigned long long min, unsigned long long max,
		     unsigned long long *out);

/** Print a JSON value pretty-printed, with a newline. */
void hvctl_print_json(FILE *out, const cJSON *v);

/**
 * Render a scalar JSON value as a table cell: strings as they are, integers
 * without a fraction, booleans as yes/no, null or missing as "-", arrays of
 * scalars joined with ',', other values as compact JSON.
 * @return buf
 */
const char *hvctl_cell(const cJSON *v, char *buf, size_t len);

/** Column alignment. */
enum hvctl_align {
	HVCTL_LEFT,
	HVCTL_RIGHT
};

/** A table column. */
struct hvctl_col {
	const char *title;
	enum hvctl_align align;
};

/** A text table: rows of cells printed with aligned columns. */
struct hvctl_table;

/** A table with ncols columns (cols is copied by reference: keep it alive). */
struct hvctl_table *hvctl_table_new(const struct hvctl_col *cols, unsigned int ncols);
/** Append a row of ncols cells (copied; NULL prints as "-"). Returns 0 or -1. */
int hvctl_table_add(struct hvctl_table *t, const char *const *cells);
/** Print the header and rows: two spaces between columns, no trailing blanks. */
void hvctl_table_print(const struct hvctl_table *t, FILE *out);
/** The same, each line after indent spaces. */
void hvctl_table_print_indent(const struct hvctl_table *t, FILE *out, int indent);
/** Free a table (NULL is a no-op). */
void hvctl_table_free(struct hvctl_table *t);

/**
 * Print an object for people: its scalar members (and arrays of scalars) as
 * aligned "key: value" lines with indent leading spaces, then each nested
 * object or array of objects as a "key:" line and its members indented by
 * two more; members named in skip (NULL-terminated, may be NULL) are left
 * out at this level. No JSON in the output.
 */
void hvctl_print_kv(FILE *out, const cJSON *obj, int indent, const char *const *skip);

/** The numeric value of member key of obj (0 when missing or not a number). */
double hvctl_num(const cJSON *obj, const char *key);

/** Format v with an SI suffix (k, M, G, T), e.g. "1.25M"; returns buf. */
const char *hvctl_si(double v, char *buf, size_t len);

#endif
