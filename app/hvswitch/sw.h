/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hvswitch's control plane, shared by its files: the port registry and port
 * types, settings, config, control socket and telemetry, around the data
 * path library (dp.h) whose context it owns (sw.dp).
 *
 * Threads: the main lcore runs the control plane (control socket, config,
 * learning and ageing, port changes) under sw.lock; telemetry callbacks take
 * the same lock. PMD lcores run the data path (dp.h) and see only what it
 * publishes.
 */
#ifndef HV_SW_H
#define HV_SW_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <cjson/cJSON.h>

#include "dp.h"
#include "hv_fdb.h"
#include "hv_offload.h"

struct hv_ctl_vals;

/*
 * The control plane's half of a port type (struct sw_port_ops.ctl): its own
 * configuration (struct sw_port_conf.priv) is parsed, checked, saved and
 * changed here only. Control thread, under sw.lock; @v are arguments the API
 * table has checked (types, ranges), @cmd names them in errors ("port.add",
 * "config port"); errors are one line in @err, and nothing is changed.
 */
struct sw_port_ctl_ops {
	/* once, at start (after the EAL) and at exit; NULL: nothing */
	int (*init)(void);
	void (*fini)(void);
	/* the type of a port.add that names none */
	bool is_default;
	/* the port.add keys that are this type's, ended by HV_CTL_K__MAX */
	const int *keys;
	/* c->priv from @v (c's common fields are set); only this type's keys are given */
	int (*conf_parse)(const struct hv_ctl_vals *v, const char *cmd, struct sw_port_conf *c,
			  char *err, size_t errlen);
	/* c->priv as port.add's keys, into @o (config file, port.show) */
	void (*conf_json)(const struct sw_port_conf *c, cJSON *o);
	/* check a conf against the other ports, fill in defaults (at port add) */
	int (*conf_check)(struct sw_port_conf *c, char *err, size_t errlen);
	/*
	 * port.set's keys of this type (those of @keys given in @v) into @c, a
	 * copy of p->conf; NULL: it takes none.
	 */
	int (*conf_set)(const struct sw_port *p, const struct hv_ctl_vals *v, const char *cmd,
			struct sw_port_conf *c, char *err, size_t errlen);
	/* apply p->conf.priv (changed by conf_set, or restored) to the port, live */
	void (*conf_apply)(struct sw_port *p);
	/* the --port command-line argument into c->priv and c->queues; NULL: none */
	int (*conf_cli)(char *arg, struct sw_port_conf *c, char *err, size_t errlen);
	/* about once a second (rates for show); NULL: nothing */
	void (*tick)(uint64_t now_ms);
	/* every turn of the control loop (about every 10 ms); NULL: nothing */
	void (*poll)(void);
	/* whether @p needs port @other (a tunnel its uplink): @other may not go first; NULL: never */
	bool (*uses)(const struct sw_port *p, const struct sw_port *other);
	/* type-specific state and driver counters, for show/telemetry */
	void (*describe)(const struct sw_port *p, cJSON *obj);
	/* what an FDB entry's tag (hv_fdb_learn_bulk_tag()) means, into @o (fdb.show); NULL: none */
	void (*fdb_json)(const struct sw_port *p, uint16_t tag, cJSON *o);
};

/* Types registered at most. */
#define SW_PORT_MAX_TYPES 4

/* Each port type registers its ops at load (RTE_INIT); its name is ops->type. */
void sw_port_type_register(const struct sw_port_ops *ops);
/* The type named @name, the default type for NULL; NULL if none. */
const struct sw_port_ops *sw_port_type_find(const char *name);
/* The @i-th registered type, NULL past the last (for walks). */
const struct sw_port_ops *sw_port_type_at(unsigned int i);

struct sw_settings {
	uint32_t fdb_age_s;
	uint32_t mac_limit;
	uint32_t fdb_capacity;
};

struct sw {
	pthread_mutex_t lock;
	struct sw_settings settings;
	char run_dir[96];
	char config_path[256];
	gid_t ctl_group;
	/* made at start, freed at exit; the data path's context refers to them */
	struct rte_mempool *mp;
	struct hv_fdb *fdb;
	struct sw_port *ports[SW_MAX_PORTS];
	struct sw_pmd pmds[SW_MAX_PMDS];    /* sw.dp.pmds */
	unsigned int n_pmds;                /* fixed at start (sw.dp.n_pmds) */
	uint32_t pmd_sleep_us[SW_MAX_PMDS]; /* idle time before a PMD sleeps; 0 = never */
	struct sw_dp dp;                    /* the data path's context */
};

extern struct sw sw;

/* ---- ports (port.c) ---- */
int sw_port_add(const struct sw_port_conf *conf, bool keep_on_error, char *err, size_t errlen);
int sw_port_del(const char *name, char *err, size_t errlen);
struct sw_port *sw_port_find(const char *name);
int sw_port_set_vlan(struct sw_port *p, uint16_t vlan, bool trunk, char *err, size_t errlen);
int sw_port_set_pmd(struct sw_port *p, int pmd, char *err, size_t errlen);
void sw_port_del_all(void);
void sw_port_totals(const struct sw_port *p, struct sw_counters *out);
/* Since the last stats.clear: the totals, and the driver's drops and interrupts. */
void sw_port_counters(const struct sw_port *p, struct sw_counters *t, uint64_t *drv_drops,
		      uint64_t *irqs);
/* Start what sw_port_counters() reports from 0 (control thread, under sw.lock). */
void sw_port_clear_counters(struct sw_port *p);
cJSON *sw_port_json(const struct sw_port *p, bool details);
/* The offload counters of @t as JSON, and their drops summed. */
cJSON *sw_offload_json(const struct sw_counters *t, uint64_t *drops);
/* Guest memory each vhost-user port may map (--guest-mem-limit), bytes; 0: the driver's */
extern uint64_t sw_vhost_mem_limit;
/* The highest it may be. */
extern const uint64_t sw_vhost_mem_limit_max;
/*
 * Who may connect to a vhost-user server socket: its owner and permissions,
 * for every port (--vhost-owner, --vhost-perm) or one (port.add owner, perm).
 */
struct sw_sock_access {
	char owner[66]; /* USER[:GROUP] as given; "": the daemon's uid and gid */
	bool chown;
	uid_t uid;     /* (uid_t)-1: keep */
	gid_t gid;     /* (gid_t)-1: keep */
	uint16_t perm; /* 0: the umask's */
};
extern struct sw_sock_access sw_vhost_access;
/* "USER", "USER:GROUP" or ":GROUP" (names or numbers) into @a; -1 with @err. */
int sw_sock_owner_parse(const char *s, const char *what, struct sw_sock_access *a, char *err,
			size_t errlen);
/* Octal permission bits, at most 0777, into @a; -1 with @err. */
int sw_sock_perm_parse(const char *s, const char *what, struct sw_sock_access *a, char *err,
		       size_t errlen);

/* ---- the data path (dp.h) on sw's ports (port.c) ---- */
/* Recompute which PMD polls which queue and publish it (after a port change). */
void sw_pmd_reassign(void);
/* Publish a new view of the ports. */
void sw_view_publish(void);
uint64_t sw_now_ms(void);

/* ---- as a service (service.c) ---- */
/* Under journald ($JOURNAL_STREAM): DPDK's log to it once, with priorities. */
bool sw_service_log_init(void);
/* Create sw.run_dir for the groups named (or warn that an existing one keeps them out). */
int sw_run_dir_prepare(void);
/* sd_notify: the control socket and every server port's socket exist; stopping. */
void sw_service_ready(unsigned int n_ports);
void sw_service_stopping(void);

/* ---- config (config.c) ---- */
/* Read the config file: settings go to sw.settings, ports to *ports (free() it). */
int sw_config_read(struct sw_port_conf **ports, unsigned int *n, char *err, size_t errlen);
/* Add the configured ports; those that fail stay listed in error. */
void sw_config_add_ports(const struct sw_port_conf *ports, unsigned int n);
int sw_config_save(char *err, size_t errlen);
/* A port from port.add's arguments (a config file's port object), checked by the API table. */
int sw_port_conf_from_json(const cJSON *j, const char *cmd, struct sw_port_conf *conf, char *err,
			   size_t errlen);
/* The same from arguments hv_ctl_api_parse() already checked. */
int sw_port_conf_from_vals(const struct hv_ctl_vals *v, const char *cmd, struct sw_port_conf *conf,
			   char *err, size_t errlen);
cJSON *sw_port_conf_to_json(const struct sw_port_conf *conf);
/*
 * -1 with a one-line error in @err if @v gives a key of another port type
 * that is not @type's too ("CMD: 'KEY' is for TYPE ports"), else 0. Control thread.
 */
int sw_port_conf_foreign(const struct sw_port_ops *type, const struct hv_ctl_vals *v,
			 const char *cmd, char *err, size_t errlen);

/* ---- packet capture (capture.c, doc/capture.rst) ---- */
/*
 * Capture @p's frames in @dirs (SW_CAP_*) as pcapng into the stream socket
 * @fd (the capture owns it from here, error or not), at most @count frames
 * (0: no limit) of at most @snaplen bytes, on a writer thread of its own.
 * Control thread, under sw.lock. 0, or -1 with a one-line error.
 */
int sw_capture_start(struct sw_port *p, int fd, uint8_t dirs, uint64_t count, uint32_t snaplen,
		     char *err, size_t errlen);
/* @p is being deleted: its capture ends. Under sw.lock. */
void sw_capture_port_gone(struct sw_port *p);
/* End every capture and wait for the writers (at exit, PMDs stopped; not under sw.lock). */
void sw_capture_fini(void);

/* ---- control socket (ctl.c) and telemetry (telemetry.c) ---- */
struct hv_ctl_server *sw_ctl_start(char *err, size_t errlen);
int sw_telemetry_register(void);

#endif
