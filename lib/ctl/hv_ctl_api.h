/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The control API, defined once: every command of the switch daemon and of
 * a guest's VMM (which serves it) with its name, who may run it, its help,
 * and its arguments with their types and ranges. Compiled into the daemon (which dispatches and validates from it,
 * and reads its config file's port objects as port.add arguments) and into
 * hvctl (which builds, validates and documents requests from it), so both
 * refuse a bad value with the same message. doc/hvctl.rst's command table is
 * printed by hv_ctl_api_doc() and checked against it by test_ctl.
 *
 * A new command: an HV_CTL_C_* id, its entry in hv_ctl_api.c, a handler in
 * the daemon (app/hvswitch/ctl.c) and a verb in hvctl. A new argument: an
 * HV_CTL_K_* id and its entry in the key table. No DPDK here.
 */
#ifndef HV_CTL_API_H
#define HV_CTL_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "hv_ctl.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Queue pairs of a port: the daemon's real limit (HV_VHOST_MAX_QUEUE_PAIRS, checked there). */
#define HV_CTL_MAX_QUEUES 8
/** PMD threads the daemon may run (SW_MAX_PMDS, checked there). */
#define HV_CTL_MAX_PMDS 32
/** Highest access VLAN; 0 is the untagged domain. */
#define HV_CTL_VLAN_MAX 4094
/** Longest port name, bytes. */
#define HV_CTL_NAME_MAX 31
/** Longest rxmod window, microseconds (HV_RXMOD_MAX_US, checked there). */
#define HV_CTL_RXMOD_MAX_US 10000
/** The value of the word "auto" for "pmd": no pinning. */
#define HV_CTL_AUTO UINT64_MAX

/** The commands. */
enum hv_ctl_cmd_id {
	HV_CTL_C_VERSION,
	HV_CTL_C_PORT_ADD,
	HV_CTL_C_PORT_DEL,
	HV_CTL_C_PORT_LIST,
	HV_CTL_C_PORT_SHOW,
	HV_CTL_C_PORT_SET,
	HV_CTL_C_FDB_SHOW,
	HV_CTL_C_FDB_FLUSH,
	HV_CTL_C_STATS,
	HV_CTL_C_CONFIG_SAVE,
	HV_CTL_C_STATS_CLEAR,
	HV_CTL_C_LOG_SET,
	HV_CTL_C_CAPTURE_START,
	/* served by a guest's VMM (hvctl guest run) */
	HV_CTL_C_GUEST_SHOW,
	HV_CTL_C_GUEST_STATS,
	HV_CTL_C_GUEST_CONSOLE,
	HV_CTL_C_GUEST_STOP,
	HV_CTL_C_GUEST_QUEUES,
	HV_CTL_C__MAX,
};

/** The argument keys (also the config file's keys). */
enum hv_ctl_key {
	HV_CTL_K_NAME,
	HV_CTL_K_TYPE,
	HV_CTL_K_SOCKET,
	HV_CTL_K_MODE,
	HV_CTL_K_QUEUES,
	HV_CTL_K_VLAN,
	HV_CTL_K_TRUNK,
	HV_CTL_K_DEVARGS,
	HV_CTL_K_PMD,
	HV_CTL_K_FEATURES,
	HV_CTL_K_RXMOD,
	HV_CTL_K_OWNER,
	HV_CTL_K_PERM,
	/* vxlan ports */
	HV_CTL_K_VNI,
	HV_CTL_K_LOCAL,
	HV_CTL_K_UPLINK,
	HV_CTL_K_DSTPORT,
	HV_CTL_K_REMOTE,
	HV_CTL_K_MIRROR,
	HV_CTL_K_PUSH,
	HV_CTL_K_PORT,
	HV_CTL_K_LOGTYPE,
	HV_CTL_K_LEVEL,
	/* the config file's "settings" object */
	HV_CTL_K_FDB_AGE_S,
	HV_CTL_K_MAC_LIMIT,
	HV_CTL_K_FDB_CAPACITY,
	/* a guest's VMM */
	HV_CTL_K_INPUT,
	HV_CTL_K_FORCE,
	/* capture.start */
	HV_CTL_K_DIRECTION,
	HV_CTL_K_COUNT,
	HV_CTL_K_SNAPLEN,
	HV_CTL_K__MAX,
};

/** Values of the "type" argument (the index of its word). */
enum hv_ctl_port_type {
	HV_CTL_TYPE_VHOST,
	HV_CTL_TYPE_ETHDEV,
	HV_CTL_TYPE_VXLAN
};
/** Highest VXLAN network identifier (24 bits). */
#define HV_CTL_VNI_MAX 16777215u
/** Longest vxlan "remote" list (comma-separated IPv4 addresses). */
#define HV_CTL_REMOTE_MAX 255
/** Values of the "direction" argument (bits: both is rx | tx). */
enum hv_ctl_direction {
	HV_CTL_DIR_RX = 1, /**< frames the switch receives from the port */
	HV_CTL_DIR_TX = 2, /**< frames the switch delivers to the port */
	HV_CTL_DIR_BOTH = 3
};
/** Longest capture.start snaplen, bytes (a whole 64 KiB TSO frame). */
#define HV_CTL_SNAPLEN_MAX 65535
/** Most frames a capture.start count may ask for. */
#define HV_CTL_CAPTURE_COUNT_MAX 1000000000u
/** Values of the "mode" argument. */
enum hv_ctl_port_mode {
	HV_CTL_MODE_SERVER,
	HV_CTL_MODE_CLIENT
};

/** Which server serves a command: each has its own socket and only its own commands. */
enum hv_ctl_service {
	HV_CTL_SVC_SWITCH, /**< the switch daemon (hvswitch.sock) */
	HV_CTL_SVC_GUEST,  /**< a guest's VMM, hvctl guest run (RUN_DIR/NAME.sock) */
};

/** Longest guest.console input, bytes. */
#define HV_CTL_CONSOLE_INPUT_MAX 4096

/** What an argument's JSON value is. */
enum hv_ctl_type {
	HV_CTL_T_STR,      /**< a string of min..max bytes */
	HV_CTL_T_UINT,     /**< an integer min..max, or one of its words */
	HV_CTL_T_BOOL,     /**< true or false */
	HV_CTL_T_ENUM,     /**< one of its words (value: the word's) */
	HV_CTL_T_UINT_STR, /**< an integer min..max, or a string of 1..str_max bytes */
};

/** A word an argument accepts in place of a number, and the number it stands for. */
struct hv_ctl_word {
	const char *word;
	uint64_t value;
};

/** An argument key and its type. */
struct hv_ctl_key_def {
	const char *key;
	enum hv_ctl_type type;
	uint64_t min, max;               /**< UINT*: range; STR: length range */
	size_t str_max;                  /**< UINT_STR: longest string */
	const struct hv_ctl_word *words; /**< UINT, ENUM: words, ended by a NULL word */
	const char *metavar;             /**< for help: "N", "PATH" */
	const char *help;                /**< one line */
};

/** Most arguments of one command. */
#define HV_CTL_MAX_PARAMS 20

/** An argument of a command. */
struct hv_ctl_param {
	enum hv_ctl_key key;
	bool required;
	bool positional; /**< hvctl takes it as a bare word (NAME), not an option */
};

/** A command. */
struct hv_ctl_cmd_def {
	const char *name;          /**< e.g. "port.add" */
	enum hv_ctl_access access; /**< who may run it */
	const char *help;          /**< one line */
	unsigned int n_params;
	struct hv_ctl_param params[HV_CTL_MAX_PARAMS];
	enum hv_ctl_service service; /**< who serves it */
};

/** One argument as validated. */
struct hv_ctl_val {
	bool set;      /**< given */
	uint64_t u;    /**< UINT, ENUM, UINT_STR given as a number: the value */
	bool b;        /**< BOOL */
	const char *s; /**< STR, ENUM, UINT_STR given as a string: points into the args */
};

/** A request's arguments as validated, by key. */
struct hv_ctl_vals {
	struct hv_ctl_val v[HV_CTL_K__MAX];
};

/** The command of this id. */
const struct hv_ctl_cmd_def *hv_ctl_api_cmd(enum hv_ctl_cmd_id id);

/** The command named name, or NULL. */
const struct hv_ctl_cmd_def *hv_ctl_api_find(const char *name);

/** The command named name that svc serves, or NULL. */
const struct hv_ctl_cmd_def *hv_ctl_api_find_in(enum hv_ctl_service svc, const char *name);

/**
 * Fill a server's command table with the commands svc serves, in table
 * order, each with its handler (handlers[id]; a command whose handler is
 * NULL is left out), name, help and access, ended by a NULL entry.
 *
 * @param svc      the server
 * @param handlers by command id, HV_CTL_C__MAX of them
 * @param out      HV_CTL_C__MAX + 1 entries; the caller's, to pass to
 *                 hv_ctl_server_create() (it must outlive the server)
 * @return the commands filled. Thread: any.
 */
unsigned int hv_ctl_api_server_cmds(enum hv_ctl_service svc, const hv_ctl_handler_t *handlers,
				    struct hv_ctl_cmd *out);

/** Shorthand: the name of command id. */
#define HV_CTL_CMD(id) (hv_ctl_api_cmd(HV_CTL_C_##id)->name)

/** The definition of key k. */
const struct hv_ctl_key_def *hv_ctl_api_key(enum hv_ctl_key k);

/** Shorthand: the string of key k, e.g. HV_CTL_KEY(VLAN) is "vlan". */
#define HV_CTL_KEY(k) (hv_ctl_api_key(HV_CTL_K_##k)->key)

/** The keys of the config file's "settings" object, as a pseudo-command. */
const struct hv_ctl_cmd_def *hv_ctl_api_settings(void);

/** The word of value v of key k (a "type", "mode"), or NULL. */
const char *hv_ctl_api_word(enum hv_ctl_key k, uint64_t v);

/**
 * Validate args (a JSON object or NULL) against cmd: no key outside its
 * parameters (the error lists them), each value of its type and range, the
 * required ones present. Same messages in the daemon and in hvctl:
 *   "port.add: unknown argument 'colour' (valid: name, type, ...)"
 *   "port.add: 'queues' must be an integer 1..8"
 *
 * @param cmd    the command
 * @param prefix message prefix (NULL: cmd->name)
 * @param args   the arguments; out's strings point into it
 * @param out    the values (zeroed first)
 * @return 0, or -1 with err set. Thread: any.
 */
int hv_ctl_api_parse(const struct hv_ctl_cmd_def *cmd, const char *prefix, const cJSON *args,
		     struct hv_ctl_vals *out, char *err, size_t errlen);

/**
 * What key k accepts, in words: "an integer 1..8", "vhost-user or ethdev".
 * @return buf
 */
const char *hv_ctl_api_expect(enum hv_ctl_key k, char *buf, size_t len);

/**
 * The JSON value an operator's text stands for, for key k: a number when the
 * text is a decimal integer and the key takes numbers, a boolean for
 * true/false when the key is a boolean, else the string. The result is
 * checked by hv_ctl_api_parse(), not here. NULL only when out of memory.
 */
cJSON *hv_ctl_api_value(enum hv_ctl_key k, const char *text);

/**
 * The one parser of decimal unsigned integers (the whole string, no sign,
 * no blanks), in min..max.
 * @return 0, or -1 (out untouched)
 */
int hv_ctl_parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/**
 * Make a server validate every request for a command the switch serves (by
 * name, in the API table) with hv_ctl_api_parse() before its handler runs:
 * a bad request is answered with the error and the handler is not called.
 * Its built-in help lists each command's arguments. Call it before the
 * first hv_ctl_server_poll(). Same as hv_ctl_server_use_api_for(s, HV_CTL_SVC_SWITCH).
 */
void hv_ctl_server_use_api(struct hv_ctl_server *s);

/**
 * hv_ctl_server_use_api() for the commands svc serves (a guest's VMM:
 * HV_CTL_SVC_GUEST); the table's commands of other services are not
 * looked up (a server registers only its own, hv_ctl_api_server_cmds()).
 */
void hv_ctl_server_use_api_for(struct hv_ctl_server *s, enum hv_ctl_service svc);

/**
 * The validated arguments of the request the calling handler runs (all unset
 * when its server does not use the API table), or NULL outside a handler.
 * Valid until the handler returns; thread: the polling one.
 */
const struct hv_ctl_vals *hv_ctl_current_vals(void);

/**
 * Print the command reference (doc/hvctl.rst, "Commands") as reStructuredText:
 * per service a lead line, then one block per command with its access level
 * and arguments.
 */
void hv_ctl_api_doc(FILE *out);

#ifdef __cplusplus
}
#endif

#endif
