/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hvswitch internals shared by its files: ports, PMDs, the switch view the
 * PMDs read, and the control plane's state.
 *
 * Threads: the main lcore runs the control plane (control socket, config,
 * learning and ageing, port changes) under sw.lock; telemetry callbacks take
 * the same lock. PMD lcores read only what is published through atomic
 * pointers and retired after an RCU grace period (sw.rcu).
 */
#ifndef HV_SW_H
#define HV_SW_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>
#include <rte_mbuf.h>
#include <rte_rcu_qsbr.h>
#include <rte_spinlock.h>

#include "hv_fdb.h"
#include "hv_offload.h"
#include "hv_rxmod.h"
#include "hv_vhost.h"

#define SW_MAX_PORTS 256
#define SW_MAX_QUEUES HV_VHOST_MAX_QUEUE_PAIRS
#define SW_MAX_PMDS 32
#define SW_BURST 32
#define SW_NAME_MAX 32
#define SW_VLAN_MAX 4094
#define SW_RXMOD_SPEC_MAX 64

/* Why the switch dropped a frame (beyond what a port driver counts). */
#define SW_DROP_REASONS(X)                                                    \
	X(RUNT, "runt")                 /* shorter than an Ethernet header */  \
	X(BAD_SRC, "bad_src")           /* multicast source address */          \
	X(VLAN, "vlan")                 /* tagged (802.1Q/ad) on an access port */ \
	X(SAME_PORT, "same_port")       /* destination is where it came from */ \
	X(NO_MBUF, "no_mbuf")           /* no mbuf for a flood copy or a tag */ \
	X(TX_FULL, "tx_full")           /* the destination did not take it */

enum sw_drop {
#define SW_X(id, name) SW_DROP_##id,
	SW_DROP_REASONS(SW_X)
#undef SW_X
	SW_DROP__MAX
};

const char *sw_drop_name(enum sw_drop d);

/* Counters of one port written by one PMD (no sharing between PMDs). */
struct sw_counters {
	uint64_t rx_packets;
	uint64_t rx_bytes;
	uint64_t tx_packets;
	uint64_t tx_bytes;
	uint64_t drops[SW_DROP__MAX];
	/* as a source: learn requests refused (frames still switched) */
	struct hv_fdb_refused learn_refused;
	/* as a destination: segments, finished checksums, pass-throughs; as a
	 * source: offload requests refused (drops by reason) */
	struct hv_offload_stats off;
} __rte_cache_aligned;

enum sw_port_type { SW_PORT_VHOST, SW_PORT_ETHDEV };

/* What an operator configures; saved in the config file. */
struct sw_port_conf {
	char name[SW_NAME_MAX];
	enum sw_port_type type;
	char socket[108];   /* vhost-user */
	bool client;        /* vhost-user: we connect */
	uint64_t features;  /* vhost-user: offered virtio features, 0 = the default set */
	char devargs[256];  /* ethdev */
	uint16_t queues;
	uint16_t vlan;      /* access VLAN, 0 = the untagged domain */
	bool trunk;         /* carries every VLAN tagged (uplinks) */
	int pmd;            /* pinned PMD index, -1 = round-robin */
	char rxmod[SW_RXMOD_SPEC_MAX]; /* vhost-user: interrupt moderation, "" = default */
};

struct sw_port;

/* A port type: a small ops table between the switch and the driver. */
struct sw_port_ops {
	const char *type;
	int (*open)(struct sw_port *p, char *err, size_t errlen);
	void (*close)(struct sw_port *p);
	uint16_t (*rx)(struct sw_port *p, uint16_t q, struct rte_mbuf **pkts, uint16_t n);
	/* after the frames of an rx burst are switched (they may borrow guest memory till then) */
	void (*rx_done)(struct sw_port *p, uint16_t q);
	/* takes every mbuf; returns how many were delivered */
	uint16_t (*tx)(struct sw_port *p, uint16_t q, struct rte_mbuf **pkts, uint16_t n);
	/* the device reads frames after tx returns (a NIC's DMA): nothing borrowed may go */
	bool tx_keeps;
	bool (*link_up)(const struct sw_port *p);
	/* type-specific state and driver counters, for show/telemetry */
	void (*describe)(const struct sw_port *p, cJSON *obj);
	/* driver-level drops and interrupts, summed over queues */
	void (*driver_counters)(const struct sw_port *p, uint64_t *drops, uint64_t *irqs);
	/* what the port takes whole (HV_OFFLOAD_CAP_*); called by PMDs per offload frame */
	uint32_t (*offload_caps)(const struct sw_port *p);
};

struct sw_port {
	uint16_t idx;
	struct sw_port_conf conf;
	const struct sw_port_ops *ops;
	struct hv_vhost_port *vhost;
	uint16_t eth_port;
	uint32_t eth_offload_caps; /* ethdev: from dev_info, fixed at open */
	char error[128]; /* why it is not running (configured, but open failed) */
	bool running;
	bool ephemeral;  /* given on the command line: not saved */
	bool txq_shared; /* fewer TX queues than PMDs: TX takes txq_lock */
	rte_spinlock_t txq_lock[SW_MAX_QUEUES];
	struct sw_counters cnt[SW_MAX_PMDS];
	struct sw_rxmod *rxmod; /* vhost-user: interrupt moderation state (rxmod.c) */
};

/* The switch as the PMDs see it; replaced whole, freed after a grace period. */
struct sw_view {
	uint16_t n_ports; /* entries of @active */
	uint16_t active[SW_MAX_PORTS];
	struct sw_port *ports[SW_MAX_PORTS]; /* by port index; NULL if none */
};

/* A queue a PMD polls. */
struct sw_rxq {
	struct sw_port *port;
	uint16_t q;
};

struct sw_rxq_list {
	uint16_t n;
	struct sw_rxq q[];
};

struct sw_pmd {
	unsigned int lcore;
	unsigned int id; /* 0..n_pmds-1, also its RCU thread id */
	struct sw_rxq_list *rxqs; /* published (atomic pointer) */
	/* counters (this PMD only) */
	uint64_t total_cycles;
	uint64_t busy_cycles;
	uint64_t packets;
	uint64_t batches;
	/* idle sleep (pmd_sleep.c) */
	int wake_fd;             /* written when its queue list changes */
	uint64_t sleeps;
	uint64_t wakeups_kick;   /* woken by a guest's kick */
	uint64_t wakeups_timeout;
	uint64_t sleep_aborts;   /* idle, but could not sleep (work found, ethdev queue) */
	uint64_t slept_cycles;
	uint64_t last_wake_tsc;  /* TSC when the last sleep ended (wake-up latency tests) */
} __rte_cache_aligned;

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
	struct rte_mempool *mp;
	struct rte_rcu_qsbr *rcu;
	struct hv_fdb *fdb;
	struct sw_port *ports[SW_MAX_PORTS];
	struct sw_view *view; /* published (atomic pointer) */
	struct sw_pmd pmds[SW_MAX_PMDS];
	unsigned int n_pmds;
	uint32_t pmd_sleep_us[SW_MAX_PMDS]; /* idle time before a PMD sleeps; 0 = never */
	volatile bool stop;
	uint64_t tsc_per_ms;
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
extern const struct sw_port_ops sw_port_vhost_ops;
/* Guest memory each vhost-user port may map (--guest-mem-limit), bytes; 0: the driver's */
extern uint64_t sw_vhost_mem_limit;
extern const struct sw_port_ops sw_port_ethdev_ops;

/* ---- PMDs (pmd.c) ---- */
int sw_pmd_init(void);
void sw_pmd_launch(void);
void sw_pmd_stop(void);
/* Recompute which PMD polls which queue and publish it (after a port change). */
void sw_pmd_reassign(void);
/* Publish a new view of the ports. */
void sw_view_publish(void);
uint64_t sw_now_ms(void);

/* ---- interrupt moderation (rxmod.c) ---- */
/* Windows per queue (µs or HV_RXMOD_ADAPTIVE) from "US|adaptive[,Q:US|adaptive]...". */
int sw_rxmod_spec_parse(const char *spec, uint16_t queues, uint32_t *win, char *err,
			size_t errlen);
int sw_rxmod_open(struct sw_port *p);
void sw_rxmod_close(struct sw_port *p);
/* Apply p->conf.rxmod to the running port (live). */
void sw_rxmod_apply(struct sw_port *p);
void sw_rxmod_json(const struct sw_port *p, uint16_t vring, cJSON *o);
/* Control thread, about once a second: interrupt rates (irqs_ps in port.show). */
void sw_rxmod_rates(uint64_t now_ms);
void sw_rxmod_port_json(const struct sw_port *p, cJSON *o);
/* PMD loop: once at start; after each rx burst of a queue; once per iteration. */
void sw_rxmod_pmd_enter(struct sw_pmd *pmd);
void sw_rxmod_poll_queue(struct sw_port *p, uint16_t qp);
/* Deliver what is due on this PMD's list; true while something stays owed. */
bool sw_rxmod_pmd_poll(struct sw_pmd *pmd, const struct sw_view *view);
/* Whether queue @qp's guest TX ring owes an interrupt (its polling PMD). */
bool sw_rxmod_queue_owed(const struct sw_port *p, uint16_t qp);

/* ---- idle PMD sleep (pmd_sleep.c) ---- */
int sw_pmd_sleep_init(struct sw_pmd *pmd);
void sw_pmd_sleep_fini(struct sw_pmd *pmd);
/* Sleep on the kicks of @l's rings; false if it could not (go on spinning). */
bool sw_pmd_sleep(struct sw_pmd *pmd, const struct sw_rxq_list *l);
void sw_pmd_wake(struct sw_pmd *pmd);
/* A PMD got a new queue list: kicks off on its rings (a former owner may have left them on). */
void sw_pmd_sleep_adopt(const struct sw_rxq_list *l);

/* ---- switching (l2.c) ---- */
void sw_l2_input(struct sw_pmd *pmd, const struct sw_view *view, struct sw_port *in,
		 struct rte_mbuf **pkts, uint16_t n, uint64_t now_ms);

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
