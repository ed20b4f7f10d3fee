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
#include "hv_rxmod.h"

/* The control plane's half of a port type (struct sw_port_ops.ctl). */
struct sw_port_ctl_ops {
	/* once, at start (after the EAL) and at exit; NULL: nothing */
	int (*init)(void);
	void (*fini)(void);
	/* check an operator's conf of this type, fill in defaults; a one-line error */
	int (*conf_check)(struct sw_port_conf *c, char *err, size_t errlen);
	/* type-specific state and driver counters, for show/telemetry */
	void (*describe)(const struct sw_port *p, cJSON *obj);
};

/* Each port type registers its ops for its configuration type (at load: RTE_INIT). */
void sw_port_type_register(enum sw_port_type t, const struct sw_port_ops *ops);
/* The ops of type @t, NULL if none registered. */
const struct sw_port_ops *sw_port_type_ops(enum sw_port_type t);

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
	struct sw_pmd pmds[SW_MAX_PMDS]; /* sw.dp.pmds */
	unsigned int n_pmds;             /* fixed at start (sw.dp.n_pmds) */
	uint32_t pmd_sleep_us[SW_MAX_PMDS]; /* idle time before a PMD sleeps; 0 = never */
	struct sw_dp dp;                 /* the data path's context */
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
cJSON *sw_port_json(const struct sw_port *p, bool details);
/* The offload counters of @t as JSON, and their drops summed. */
cJSON *sw_offload_json(const struct sw_counters *t, uint64_t *drops);
/* The vhost-user type (port_vhost.c): interrupt moderation is its own. */
extern const struct sw_port_ops sw_port_vhost_ops;
/* Guest memory each vhost-user port may map (--guest-mem-limit), bytes; 0: the driver's */
extern uint64_t sw_vhost_mem_limit;
/* The highest it may be. */
extern const uint64_t sw_vhost_mem_limit_max;
/* Virtio features by name: "mrg_rxbuf,event_idx" -> bits (VERSION_1 always); -1 on an unknown. */
int sw_vhost_features_parse(const char *list, const char *cmd, uint64_t *out, char *err,
			    size_t errlen);
/* The names of the features of @f, comma separated. */
void sw_vhost_features_format(uint64_t f, char *buf, size_t len);

/* ---- the data path (dp.h) on sw's ports (port.c) ---- */
/* Recompute which PMD polls which queue and publish it (after a port change). */
void sw_pmd_reassign(void);
/* Publish a new view of the ports. */
void sw_view_publish(void);
uint64_t sw_now_ms(void);

/* ---- interrupt moderation of vhost-user ports (rxmod.c) ---- */
/* Windows per queue (µs or HV_RXMOD_ADAPTIVE) from "US|adaptive[,Q:US|adaptive]...". */
int sw_rxmod_spec_parse(const char *spec, uint16_t queues, uint32_t *win, char *err,
			size_t errlen);
/* Apply p->conf.rxmod to the running port (live); nothing on other types. */
void sw_rxmod_apply(struct sw_port *p);
/* Control thread, about once a second: interrupt rates (irqs_ps in port.show). */
void sw_rxmod_rates(uint64_t now_ms);

/* ---- config (config.c) ---- */
/* Read the config file: settings go to sw.settings, ports to *ports (free() it). */
int sw_config_read(struct sw_port_conf **ports, unsigned int *n, char *err, size_t errlen);
/* Add the configured ports; those that fail stay listed in error. */
void sw_config_add_ports(const struct sw_port_conf *ports, unsigned int n);
int sw_config_save(char *err, size_t errlen);
struct hv_ctl_vals;
struct hv_ctl_val;
/* A port from port.add's arguments (a config file's port object), checked by the API table. */
int sw_port_conf_from_json(const cJSON *j, const char *cmd, struct sw_port_conf *conf,
			   char *err, size_t errlen);
/* The same from arguments hv_ctl_api_parse() already checked. */
int sw_port_conf_from_vals(const struct hv_ctl_vals *v, const char *cmd,
			   struct sw_port_conf *conf, char *err, size_t errlen);
cJSON *sw_port_conf_to_json(const struct sw_port_conf *conf);
/* The "rxmod" argument (number or string), checked, into @spec: 1 if given, 0 if not, -1. */
int sw_rxmod_arg(const struct hv_ctl_val *v, uint16_t queues, char *spec, char *err,
		 size_t errlen);

/* ---- control socket (ctl.c) and telemetry (telemetry.c) ---- */
struct hv_ctl_server *sw_ctl_start(char *err, size_t errlen);
int sw_telemetry_register(void);

#endif
