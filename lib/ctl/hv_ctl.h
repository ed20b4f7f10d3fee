/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * hvswitch control protocol: one client library shared by the switch daemon
 * (server side), the hvctl CLI and the tests (client side).
 *
 * Transport: a Unix SOCK_STREAM socket. A request is one JSON object on one
 * line, `{"cmd": "port.add", "args": {...}}\n` ("args" optional, an object);
 * the reply is one line too, `{"ok": true, "result": <any>}\n` or
 * `{"ok": false, "error": "<one line>"}\n`. A connection carries any number of
 * requests, one after the other. See doc/hvctl.rst.
 *
 * No DPDK here: the CLI links this library without the EAL.
 */
#ifndef HV_CTL_H
#define HV_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <cjson/cJSON.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Default run directory of the daemon. */
#define HV_CTL_RUN_DIR "/run/hvswitch"
/** Name of the control socket in the run directory. */
#define HV_CTL_SOCK_NAME "hvswitch.sock"
/** Default control socket path. */
#define HV_CTL_SOCK_PATH HV_CTL_RUN_DIR "/" HV_CTL_SOCK_NAME
/** Longest request line accepted, not counting its '\n'. */
#define HV_CTL_MAX_REQUEST 65536
/** Most clients a server holds at once; more are refused with an error. */
#define HV_CTL_MAX_CLIENTS 64
/** A client holding a partial request or unread replies this long is dropped. */
#define HV_CTL_STALL_TIMEOUT_MS 30000
/** Default client receive/send timeout. */
#define HV_CTL_CLIENT_TIMEOUT_MS 10000
/** Longest reply a client accepts. */
#define HV_CTL_MAX_REPLY (64u << 20)
/** "No group" for hv_ctl_server_create(). */
#define HV_CTL_NO_GROUP ((gid_t)-1)

/*
 * Client
 */

/**
 * Connect to a control socket. The socket gets send and receive timeouts of
 * HV_CTL_CLIENT_TIMEOUT_MS (see hv_ctl_set_timeout()).
 *
 * @param path   socket path (NULL: HV_CTL_SOCK_PATH)
 * @param err    receives a one-line reason on failure
 * @param errlen size of err
 * @return a connected socket (close() it when done), or -1
 */
int hv_ctl_connect(const char *path, char *err, size_t errlen);

/**
 * Change the send/receive timeout of a connection from hv_ctl_connect().
 *
 * @param fd         connected socket
 * @param timeout_ms timeout in milliseconds, 0 for none
 * @return 0, or -1 with errno set
 */
int hv_ctl_set_timeout(int fd, unsigned int timeout_ms);

/**
 * Send one request and wait for its reply.
 *
 * @param fd     connected socket from hv_ctl_connect()
 * @param cmd    command name, e.g. "port.add"
 * @param args   arguments (a JSON object), consumed (freed) in every case;
 *               NULL sends no "args"
 * @param result on success, receives the reply's "result" (JSON null when the
 *               server sent none); the caller frees it with cJSON_Delete().
 *               May be NULL to discard it. Set to NULL on failure.
 * @param err    on failure, the server's error verbatim, or a transport error
 *               (connection closed, timeout, malformed reply)
 * @param errlen size of err
 * @return 0 when the server replied ok:true, -1 otherwise
 */
int hv_ctl_call(int fd, const char *cmd, cJSON *args, cJSON **result, char *err,
		size_t errlen);

/*
 * Server
 */

/**
 * A command handler, run on the thread calling hv_ctl_server_poll().
 *
 * @param ctx    the ctx given to hv_ctl_server_create()
 * @param args   the request's "args" object, or NULL when it had none
 * @param result set to the reply's result (ownership passes to the server);
 *               leaving it NULL replies JSON null
 * @param err    on failure, the one-line error to send back
 * @param errlen size of err
 * @return 0 on success, -1 on failure with err set
 */
typedef int (*hv_ctl_handler_t)(void *ctx, const cJSON *args, cJSON **result, char *err,
				size_t errlen);

/** One entry of a command table; a table ends with an entry whose name is NULL. */
struct hv_ctl_cmd {
	const char *name;         /**< e.g. "port.add" */
	hv_ctl_handler_t handler; /**< the command */
	const char *help;         /**< one line, listed by the built-in "help" */
};

/** A control socket server: listening socket, clients, an epoll set. */
struct hv_ctl_server;

/**
 * Create a server listening on path. A stale socket file at path (nobody
 * listening) is replaced; a live one is an error. The socket file gets mode
 * 0660 and, when group is not HV_CTL_NO_GROUP, owner root (if we are root)
 * and that group.
 *
 * Clients are accepted if their uid (SO_PEERCRED) is 0 or our effective uid,
 * or if group is set and is their gid or one of their supplementary groups.
 * Others get one `permission denied` error reply and are disconnected.
 *
 * A built-in "help" command lists the table (a table entry named "help"
 * overrides it).
 *
 * @param path   socket path (at most 107 bytes)
 * @param group  group allowed to connect, or HV_CTL_NO_GROUP
 * @param cmds   command table, NULL-name terminated; must outlive the server
 * @param ctx    passed to every handler
 * @param err    receives a one-line reason on failure
 * @param errlen size of err
 * @return the server, or NULL
 */
struct hv_ctl_server *hv_ctl_server_create(const char *path, gid_t group,
					   const struct hv_ctl_cmd *cmds, void *ctx,
					   char *err, size_t errlen);

/**
 * The server's epoll descriptor: readable when hv_ctl_server_poll() has work
 * (a connection to accept, a request to read, a reply that can be written).
 * Add it to the caller's poll()/epoll set with POLLIN/EPOLLIN and call
 * hv_ctl_server_poll(s, 0) when it fires. Do not read or close it.
 */
int hv_ctl_server_fd(const struct hv_ctl_server *s);

/**
 * Do the server's pending work: accept connections, read requests, run the
 * handlers of complete lines, write replies, drop stalled clients. Never
 * blocks on a client.
 *
 * @param s          the server
 * @param timeout_ms how long to wait for work first: 0 not at all, -1 forever
 */
void hv_ctl_server_poll(struct hv_ctl_server *s, int timeout_ms);

/**
 * Close every connection and the listening socket, unlink the socket file and
 * free the server. NULL is a no-op.
 */
void hv_ctl_server_destroy(struct hv_ctl_server *s);

/*
 * Argument helpers for handlers. Each returns 1 when the argument is present
 * and valid (*out set), 0 when it is absent and optional (*out untouched), and
 * -1 with a one-line error in err, prefixed with cmd:
 *   "port.add: missing 'name'"
 *   "port.add: 'queues' must be an integer 1..8"
 * args may be NULL (no arguments).
 */

/**
 * Get a string argument.
 *
 * @param args     the request's args (may be NULL)
 * @param cmd      command name, for the error message
 * @param key      argument name
 * @param required whether absence is an error
 * @param maxlen   when non-zero, the string must be 1..maxlen bytes long
 * @param out      receives a pointer into args (valid as long as args)
 * @param err      receives the error
 * @param errlen   size of err
 * @return 1, 0 or -1 as above
 */
int hv_ctl_arg_str(const cJSON *args, const char *cmd, const char *key, bool required,
		   size_t maxlen, const char **out, char *err, size_t errlen);

/**
 * Get an unsigned integer argument in min..max (a JSON number with no
 * fractional part; at most 2^53).
 *
 * @return 1, 0 or -1 as above
 */
int hv_ctl_arg_uint(const cJSON *args, const char *cmd, const char *key, bool required,
		    uint64_t min, uint64_t max, uint64_t *out, char *err, size_t errlen);

/**
 * Get a boolean argument (JSON true or false).
 *
 * @return 1, 0 or -1 as above
 */
int hv_ctl_arg_bool(const cJSON *args, const char *cmd, const char *key, bool required,
		    bool *out, char *err, size_t errlen);

/**
 * Check that args holds no key outside allowed.
 *
 * @param args    the request's args (may be NULL)
 * @param cmd     command name, for the error message
 * @param allowed NULL-terminated list of accepted keys
 * @return 0, or -1 with err = "<cmd>: unknown argument '<key>'"
 */
int hv_ctl_args_check(const cJSON *args, const char *cmd, const char *const *allowed,
		      char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
