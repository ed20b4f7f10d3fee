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
/** Slots of HV_CTL_MAX_CLIENTS that only root (or the server's own uid) may take. */
#define HV_CTL_ROOT_SLOTS 1
/** A client whose replies have not moved this long is dropped. */
#define HV_CTL_STALL_TIMEOUT_MS 30000
/** A request must be complete this long after its first byte, or the client is dropped. */
#define HV_CTL_REQUEST_TIMEOUT_MS 30000
/** A client that sends nothing this long (since connecting or its last reply) is dropped. */
#define HV_CTL_IDLE_TIMEOUT_MS 60000
/** Queued reply bytes past which a client's next requests wait until it reads. */
#define HV_CTL_OUT_BUDGET (256u << 10)
/** Requests of one client run per turn of hv_ctl_server_poll(). */
#define HV_CTL_TURN_REQUESTS 8
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
int hv_ctl_call(int fd, const char *cmd, cJSON *args, cJSON **result, char *err, size_t errlen);

/**
 * hv_ctl_call() that passes a file descriptor with the request
 * (SCM_RIGHTS), for a command that takes one (capture.start). The caller
 * keeps its own copy of pass_fd.
 *
 * @param pass_fd descriptor to pass, -1 for none
 * @return as hv_ctl_call()
 */
int hv_ctl_call_fd(int fd, const char *cmd, cJSON *args, int pass_fd, cJSON **result, char *err,
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

/**
 * What a client may do, from its credentials (SO_PEERCRED) at connection
 * time; see hv_ctl_server_create() and hv_ctl_server_set_admin_group().
 */
enum hv_ctl_role {
	HV_CTL_ROLE_READ,  /**< in the (read) group: HV_CTL_READ commands only */
	HV_CTL_ROLE_ADMIN, /**< in the admin group: HV_CTL_READ and HV_CTL_WRITE */
	HV_CTL_ROLE_ROOT,  /**< uid 0 or the server's own euid: everything */
};

/** Who may run a command. The zero value (an entry that says nothing) is a write. */
enum hv_ctl_access {
	HV_CTL_WRITE = 0, /**< the admin group and root */
	HV_CTL_READ,      /**< every accepted client */
	HV_CTL_ROOT_ONLY, /**< root (or the server's own uid) only */
};

/** The client whose request a handler is running. */
struct hv_ctl_peer {
	uid_t uid;
	gid_t gid;
	pid_t pid;
	enum hv_ctl_role role;
};

/** One entry of a command table; a table ends with an entry whose name is NULL. */
struct hv_ctl_cmd {
	const char *name;          /**< e.g. "port.add" */
	hv_ctl_handler_t handler;  /**< the command */
	const char *help;          /**< one line, listed by the built-in "help" */
	enum hv_ctl_access access; /**< who may run it; omitted: HV_CTL_WRITE */
};

/** Tunable limits of a server; the HV_CTL_* defaults unless changed (tests shorten them). */
struct hv_ctl_limits {
	unsigned int idle_ms;       /**< HV_CTL_IDLE_TIMEOUT_MS */
	unsigned int request_ms;    /**< HV_CTL_REQUEST_TIMEOUT_MS */
	unsigned int stall_ms;      /**< HV_CTL_STALL_TIMEOUT_MS */
	size_t out_budget;          /**< HV_CTL_OUT_BUDGET */
	unsigned int turn_requests; /**< HV_CTL_TURN_REQUESTS (at least 1) */
};

/** A control socket server: listening socket, clients, an epoll set. */
struct hv_ctl_server;

/**
 * Create a server listening on path. A stale socket file at path (nobody
 * listening) is replaced; a live one is an error. The socket file gets mode
 * 0660 and, when group is not HV_CTL_NO_GROUP, owner root (if we are root)
 * and that group.
 *
 * Clients are accepted if their uid (SO_PEERCRED) is 0 or our effective uid
 * (role HV_CTL_ROLE_ROOT), or if group is set and is their gid or one of their
 * supplementary groups (HV_CTL_ROLE_READ), or if they are in the admin group
 * (HV_CTL_ROLE_ADMIN, hv_ctl_server_set_admin_group()). Others get one
 * `permission denied` error reply and are disconnected. A request for a
 * command above the client's role gets `permission denied: ...` and the
 * connection stays open.
 *
 * The last HV_CTL_ROOT_SLOTS of the HV_CTL_MAX_CLIENTS slots are root's. A
 * client is dropped (with an error line when it can take one) when it sends
 * nothing for HV_CTL_IDLE_TIMEOUT_MS, does not complete a request within
 * HV_CTL_REQUEST_TIMEOUT_MS of its first byte, or leaves its replies unread
 * for HV_CTL_STALL_TIMEOUT_MS. Each poll runs at most HV_CTL_TURN_REQUESTS
 * requests of a client, and none while it holds HV_CTL_OUT_BUDGET reply bytes
 * or more: a client that does not read holds at most that plus one reply.
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
struct hv_ctl_server *
hv_ctl_server_create(const char *path, gid_t group, const struct hv_ctl_cmd *cmds, void *ctx,
		     char *err, size_t errlen);

/**
 * Let the members of group run HV_CTL_WRITE commands (HV_CTL_ROLE_ADMIN).
 * When the server has no read group, the socket file is chown'ed to this
 * group instead. Call it before the first hv_ctl_server_poll().
 *
 * @param s      the server
 * @param group  the admin group, or HV_CTL_NO_GROUP for none
 * @param err    receives a one-line reason on failure
 * @param errlen size of err
 * @return 0, or -1 (the chown failed)
 */
int hv_ctl_server_set_admin_group(struct hv_ctl_server *s, gid_t group, char *err, size_t errlen);

/**
 * Change the server's limits (see struct hv_ctl_limits). Takes effect at
 * the next hv_ctl_server_poll(); calling thread: the one that polls.
 */
void hv_ctl_server_set_limits(struct hv_ctl_server *s, const struct hv_ctl_limits *lim);

/**
 * The client whose request the calling handler runs, or NULL outside a
 * handler. Valid until the handler returns; thread: the polling thread.
 */
const struct hv_ctl_peer *hv_ctl_current_peer(void);

/**
 * Take the file descriptor the client passed (SCM_RIGHTS) with the request
 * the calling handler runs; the caller then owns it (closes it). Only an
 * AF_UNIX stream socket passed with a connection's first request comes here
 * (any other is closed off the polling thread: its close might wait); one no
 * handler takes is closed once its request has run.
 *
 * @return the descriptor (O_CLOEXEC), or -1 when none came. Thread: the polling one.
 */
int hv_ctl_current_take_fd(void);

/**
 * Whether @p fd is an AF_UNIX stream socket, learnt with getsockopt(), which
 * never calls into a file system (a FUSE file cannot stall the caller), and
 * whose close never waits on a peer. Any thread.
 */
bool hv_ctl_fd_is_unix_stream(int fd);

/**
 * Copy at most max bytes of src into dst as valid UTF-8: an invalid byte
 * becomes '?', and the cut falls on a character boundary. Used for every
 * text the server sends, so that strict JSON parsers accept its replies.
 *
 * @param dst    destination, NUL-terminated (may be src: in place)
 * @param dstlen size of dst (dst gets at most dstlen - 1 bytes)
 * @param src    source, NUL-terminated
 * @param max    most bytes of src to take
 * @return the number of bytes written, without the NUL
 */
size_t hv_ctl_utf8_clean(char *dst, size_t dstlen, const char *src, size_t max);

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
int hv_ctl_arg_bool(const cJSON *args, const char *cmd, const char *key, bool required, bool *out,
		    char *err, size_t errlen);

/**
 * Check that args holds no key outside allowed.
 *
 * @param args    the request's args (may be NULL)
 * @param cmd     command name, for the error message
 * @param allowed NULL-terminated list of accepted keys
 * @return 0, or -1 with err = "<cmd>: unknown argument '<key>'"
 */
int hv_ctl_args_check(const cJSON *args, const char *cmd, const char *const *allowed, char *err,
		      size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
