/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control-socket commands (the protocol is lib/ctl's; doc/hvctl.rst). Each
 * handler validates everything before it changes anything: a bad request gets
 * a one-line error and leaves the switch as it was. Changes are saved to the
 * config file; if that fails, the change is undone. Who may do what: the
 * command table and ctl_policy.c (doc/hvctl.rst, "Access control").
 */
#include <stdio.h>
#include <string.h>

#include <rte_version.h>

#include "ctl_policy.h"
#include "hv_ctl.h"
#include "sw.h"

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

static const char *const no_args[] = {NULL};

static int
cmd_version(void *ctx, const cJSON *args, cJSON **result, char *err, size_t errlen)
{
	RTE_SET_USED(ctx);
	if (hv_ctl_args_check(args, "version", no_args, err, errlen) != 0)
		return -1;
	*result = cJSON_CreateObject();
	cJSON_AddStringToObject(*result, "version", HV_VERSION);
	cJSON_AddStringToObject(*result, "dpdk", rte_version());
	return 0;
}

static int
cmd_port_add(void *ctx, const cJSON *args, cJSON **result, char *err, size_t errlen)
{
	struct sw_port_conf c;
	char serr[256];

	RTE_SET_USED(ctx);
	/* what reaches the host (files, interfaces, sockets) is root's */
	if (!sw_ctl_port_add_allowed(args, hv_ctl_current_peer()->role, sw.run_dir, err,
				     errlen) ||
	    sw_port_conf_from_json(args, "port.add", &c, err, errlen) != 0 ||
	    sw_port_add(&c, false, err, errlen) != 0)
		return -1;
	if (sw_config_save(serr, sizeof(serr)) != 0) {
		char derr[64];

		sw_port_del(c.name, derr, sizeof(derr));
		snprintf(err, errlen, "port.add: not added: %s", serr);
		return -1;
	}
	*result = sw_port_json(sw_port_find(c.name), false);
	return 0;
}

/* Whether args[key] is the string @word. */
static bool
is_word(const cJSON *args, const char *key, const char *word)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, key);

	return cJSON_IsString(v) && strcmp(v->valuestring, word) == 0;
}

static struct sw_port *
port_arg(const cJSON *args, const char *cmd, bool required, char *err, size_t errlen)
{
	const char *name = NULL;
	struct sw_port *p;

	if (hv_ctl_arg_str(args, cmd, required ? "name" : "port", required, SW_NAME_MAX, &name,
			   err, errlen) < 0)
		return NULL;
	if (name == NULL)
		return NULL;
	p = sw_port_find(name);
	if (p == NULL)
		snprintf(err, errlen, "%s: no port %s", cmd, name);
	return p;
}

static int
cmd_port_del(void *ctx, const cJSON *args, cJSON **result, char *err, size_t errlen)
{
	struct sw_port *p;
	struct sw_port_conf saved;

	RTE_SET_USED(ctx), RTE_SET_USED(result);
	if (hv_ctl_args_check(args, "port.del", ARGS("name"), err, errlen) != 0)
		return -1;
	p = port_arg(args, "port.del", true, err, errlen);
	if (p == NULL)
		return -1;
	saved = p->conf;
	sw_port_del(saved.name, err, errlen);
	if (sw_config_save(err, errlen) != 0) {
		char aerr[128];

		sw_port_add(&saved, true, aerr, sizeof(aerr));
		return -1;
	}
	return 0;
}

static int
cmd_port_list(void *ctx, const cJSON *args, cJSON **result, char *err, size_t errlen)
{
	RTE_SET_USED(ctx);
	if (hv_ctl_args_check(args, "port.list", no_args, err, errlen) != 0)
		return -1;
	*result = cJSON_CreateArray();
	for (uint16_t i = 0; i < SW_MAX_PORTS; i++)
		if (sw.ports[i] != NULL)
			cJSON_AddItemToArray(*result, sw_port_json(sw.ports[i], false));
	return 0;
}

static int
cmd_port_show(void *ctx, const cJSON *args, cJSON **result, char *err, size_t errlen)
{
	struct sw_port *p;

	RTE_SET_USED(ctx);
	if (hv_ctl_args_check(args, "port.show", ARGS("name"), err, errlen) != 0)
		return -1;
	p = port_arg(args, "port.show", true, err, errlen);
	if (p == NULL)
		return -1;
	hv_fdb_apply(sw.fdb); /* what was learned up to now counts */
	*result = sw_port_json(p, true);
	return 0;
}

static int
cmd_port_set(void *ctx, const cJSON *args, cJSON **result, char *err, size_t errlen)
{
	struct sw_port *p;
	uint64_t vlan, pmd;
	bool trunk;
	int has_vlan, has_trunk, has_pmd, has_rxmod;
	char rxmod[SW_RXMOD_SPEC_MAX];
	struct sw_port_conf before;

	RTE_SET_USED(ctx);
	if (hv_ctl_args_check(args, "port.set", ARGS("name", "vlan", "trunk", "pmd", "rxmod"), err,
			      errlen) != 0)
		return -1;
	p = port_arg(args, "port.set", true, err, errlen);
	if (p == NULL)
		return -1;
	/* all arguments checked before anything changes; vlan=none and pmd=auto are words */
	if (is_word(args, "vlan", "none")) {
		has_vlan = 1;
		vlan = 0;
	} else if ((has_vlan = hv_ctl_arg_uint(args, "port.set", "vlan", false, 0, SW_VLAN_MAX,
					       &vlan, err, errlen)) < 0) {
		return -1;
	}
	if (is_word(args, "pmd", "auto")) {
		has_pmd = 2;
	} else if ((has_pmd = hv_ctl_arg_uint(args, "port.set", "pmd", false, 0,
					      SW_MAX_PMDS - 1, &pmd, err, errlen)) < 0) {
		return -1;
	}
	has_trunk = hv_ctl_arg_bool(args, "port.set", "trunk", false, &trunk, err, errlen);
	if (has_trunk < 0)
		return -1;
	if (has_vlan != 1)
		vlan = p->conf.vlan;
	if (has_trunk != 1)
		trunk = has_vlan == 1 && vlan != 0 ? false : p->conf.trunk;
	if (trunk && vlan != 0) {
		snprintf(err, errlen, "port.set: a trunk carries every VLAN: no 'vlan' with it");
		return -1;
	}
	if (has_pmd == 1 && pmd >= sw.n_pmds) {
		snprintf(err, errlen, "port.set: 'pmd' must be 0..%u", sw.n_pmds - 1);
		return -1;
	}
	if (cJSON_GetObjectItemCaseSensitive(args, "rxmod") != NULL &&
	    p->conf.type != SW_PORT_VHOST) {
		snprintf(err, errlen, "port.set: 'rxmod' is for vhost-user ports");
		return -1;
	}
	has_rxmod = sw_rxmod_arg(args, "port.set", p->conf.queues, rxmod, err, errlen);
	if (has_rxmod < 0)
		return -1;
	before = p->conf;
	if (has_rxmod == 1) {
		memcpy(p->conf.rxmod, rxmod, sizeof(rxmod));
		sw_rxmod_apply(p);
	}
	if ((has_vlan == 1 || has_trunk == 1) &&
	    sw_port_set_vlan(p, (uint16_t)vlan, trunk, err, errlen) != 0)
		return -1;
	if (has_pmd != 0 && sw_port_set_pmd(p, has_pmd == 2 ? -1 : (int)pmd, err, errlen) != 0)
		return -1;
	if (sw_config_save(err, errlen) != 0) {
		char uerr[64];

		sw_port_set_vlan(p, before.vlan, before.trunk, uerr, sizeof(uerr));
		sw_port_set_pmd(p, before.pmd, uerr, sizeof(uerr));
		memcpy(p->conf.rxmod, before.rxmod, sizeof(before.rxmod));
		sw_rxmod_apply(p);
		return -1;
	}
	*result = sw_port_json(p, false);
	return 0;
}

struct fdb_walk {
	cJSON *arr;
	uint16_t port;
	uint64_t now_ms;
};

static int
fdb_entry_json(const struct hv_fdb_entry *e, void *arg)
{
	struct fdb_walk *w = arg;
	char mac[RTE_ETHER_ADDR_FMT_SIZE];
	cJSON *o;

	if (w->port != HV_FDB_PORT_NONE && e->port != w->port)
		return 0;
	rte_ether_format_addr(mac, sizeof(mac), &e->key.mac);
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "mac", mac);
	cJSON_AddNumberToObject(o, "vlan", e->key.vlan);
	cJSON_AddStringToObject(o, "port", sw.ports[e->port] ? sw.ports[e->port]->conf.name : "?");
	cJSON_AddNumberToObject(o, "age_s",
				(double)(w->now_ms > e->last_seen_ms ? w->now_ms - e->last_seen_ms : 0) /
					1000.0);
	cJSON_AddItemToArray(w->arr, o);
	return 0;
}

static int
cmd_fdb_show(void *ctx, const cJSON *args, cJSON **result, char *err, size_t errlen)
{
	struct fdb_walk w = {.port = HV_FDB_PORT_NONE, .now_ms = sw_now_ms()};
	struct sw_port *p;

	RTE_SET_USED(ctx);
	if (hv_ctl_args_check(args, "fdb.show", ARGS("port"), err, errlen) != 0)
		return -1;
	err[0] = '\0';
	p = port_arg(args, "fdb.show", false, err, errlen);
	if (p == NULL && err[0] != '\0')
		return -1;
	if (p != NULL)
		w.port = p->idx;
	hv_fdb_apply(sw.fdb);
	w.arr = cJSON_CreateArray();
	hv_fdb_walk(sw.fdb, fdb_entry_json, &w);
	*result = w.arr;
	return 0;
}

static int
cmd_fdb_flush(void *ctx, const cJSON *args, cJSON **result, char *err, size_t errlen)
{
	struct sw_port *p;
	unsigned int n;

	RTE_SET_USED(ctx);
	if (hv_ctl_args_check(args, "fdb.flush", ARGS("port"), err, errlen) != 0)
		return -1;
	err[0] = '\0';
	p = port_arg(args, "fdb.flush", false, err, errlen);
	if (p == NULL && err[0] != '\0')
		return -1;
	hv_fdb_apply(sw.fdb);
	n = hv_fdb_flush(sw.fdb, p ? p->idx : HV_FDB_PORT_NONE);
	*result = cJSON_CreateObject();
	cJSON_AddNumberToObject(*result, "flushed", n);
	return 0;
}

static cJSON *
port_stats_json(const struct sw_port *p)
{
	cJSON *o = cJSON_CreateObject();
	struct sw_counters t;
	uint64_t drv = 0, irqs = 0, drops = 0, off_drops;
	cJSON *off;

	sw_port_totals(p, &t);
	off = sw_offload_json(&t, &off_drops);
	drops += off_drops;
	if (p->running)
		p->ops->driver_counters(p, &drv, &irqs);
	for (int d = 0; d < SW_DROP__MAX; d++)
		if (d != SW_DROP_TX_FULL) /* the driver counted those */
			drops += t.drops[d];
	cJSON_AddStringToObject(o, "name", p->conf.name);
	cJSON_AddNumberToObject(o, "rx_packets", (double)t.rx_packets);
	cJSON_AddNumberToObject(o, "rx_bytes", (double)t.rx_bytes);
	cJSON_AddNumberToObject(o, "tx_packets", (double)t.tx_packets);
	cJSON_AddNumberToObject(o, "tx_bytes", (double)t.tx_bytes);
	cJSON_AddNumberToObject(o, "drops", (double)(drops + drv));
	cJSON_AddNumberToObject(o, "interrupts", (double)irqs);
	cJSON_AddItemToObject(o, "offload", off);
	return o;
}

static int
cmd_stats(void *ctx, const cJSON *args, cJSON **result, char *err, size_t errlen)
{
	struct hv_fdb_stats fs;
	struct sw_port *p;
	cJSON *ports, *pmds, *fdb;

	RTE_SET_USED(ctx);
	if (hv_ctl_args_check(args, "stats", ARGS("port"), err, errlen) != 0)
		return -1;
	err[0] = '\0';
	p = port_arg(args, "stats", false, err, errlen);
	if (p == NULL && err[0] != '\0')
		return -1;
	hv_fdb_apply(sw.fdb);
	*result = cJSON_CreateObject();
	ports = cJSON_AddArrayToObject(*result, "ports");
	for (uint16_t i = 0; i < SW_MAX_PORTS; i++)
		if (sw.ports[i] != NULL && (p == NULL || p == sw.ports[i]))
			cJSON_AddItemToArray(ports, port_stats_json(sw.ports[i]));
	pmds = cJSON_AddArrayToObject(*result, "pmds");
	for (unsigned int i = 0; i < sw.n_pmds; i++) {
		const struct sw_pmd *d = &sw.pmds[i];
		cJSON *o = cJSON_CreateObject();

		cJSON_AddNumberToObject(o, "pmd", i);
		cJSON_AddNumberToObject(o, "lcore", d->lcore);
		cJSON_AddNumberToObject(o, "busy_cycles", (double)d->busy_cycles);
		cJSON_AddNumberToObject(o, "total_cycles", (double)d->total_cycles);
		cJSON_AddNumberToObject(o, "packets", (double)d->packets);
		cJSON_AddNumberToObject(o, "batches", (double)d->batches);
		cJSON_AddItemToArray(pmds, o);
	}
	hv_fdb_get_stats(sw.fdb, &fs);
	fdb = cJSON_AddObjectToObject(*result, "fdb");
	cJSON_AddNumberToObject(fdb, "entries", hv_fdb_count(sw.fdb, HV_FDB_PORT_NONE));
	cJSON_AddNumberToObject(fdb, "learned", (double)fs.learned);
	cJSON_AddNumberToObject(fdb, "moved", (double)fs.moved);
	cJSON_AddNumberToObject(fdb, "aged", (double)fs.aged);
	cJSON_AddNumberToObject(fdb, "limit_refused", (double)fs.limit_refused);
	cJSON_AddNumberToObject(fdb, "budget_refused", (double)fs.budget_refused);
	cJSON_AddNumberToObject(fdb, "table_full", (double)fs.table_full);
	cJSON_AddNumberToObject(fdb, "queue_full", (double)fs.queue_full);
	return 0;
}

static int
cmd_config_save(void *ctx, const cJSON *args, cJSON **result, char *err, size_t errlen)
{
	RTE_SET_USED(ctx);
	if (hv_ctl_args_check(args, "config.save", no_args, err, errlen) != 0 ||
	    sw_config_save(err, errlen) != 0)
		return -1;
	*result = cJSON_CreateObject();
	cJSON_AddStringToObject(*result, "path", sw.config_path);
	return 0;
}

/* Every handler runs under sw.lock (telemetry reads the same state). */
#define LOCKED(fn)                                                                       \
	static int fn##_locked(void *ctx, const cJSON *args, cJSON **result, char *err,   \
			       size_t errlen)                                             \
	{                                                                                \
		int rc;                                                                  \
		pthread_mutex_lock(&sw.lock);                                            \
		rc = fn(ctx, args, result, err, errlen);                                 \
		pthread_mutex_unlock(&sw.lock);                                          \
		return rc;                                                               \
	}
LOCKED(cmd_version)
LOCKED(cmd_port_add)
LOCKED(cmd_port_del)
LOCKED(cmd_port_list)
LOCKED(cmd_port_show)
LOCKED(cmd_port_set)
LOCKED(cmd_fdb_show)
LOCKED(cmd_fdb_flush)
LOCKED(cmd_stats)
LOCKED(cmd_config_save)

/* Reads for the --group, changes for the --admin-group (port.add further
 * confined by sw_ctl_port_add_allowed()), everything for root. */
static const struct hv_ctl_cmd commands[] = {
	{"version", cmd_version_locked, "versions of hvswitch and DPDK", HV_CTL_READ},
	{"port.add", cmd_port_add_locked, "add a port: name, type, socket, mode, queues, vlan, "
					  "trunk, devargs, pmd", HV_CTL_WRITE},
	{"port.del", cmd_port_del_locked, "remove a port: name", HV_CTL_WRITE},
	{"port.list", cmd_port_list_locked, "every port", HV_CTL_READ},
	{"port.show", cmd_port_show_locked, "one port with its counters: name", HV_CTL_READ},
	{"port.set", cmd_port_set_locked, "change a port: name, vlan, trunk, pmd, rxmod",
	 HV_CTL_WRITE},
	{"fdb.show", cmd_fdb_show_locked, "learned MAC addresses: [port]", HV_CTL_READ},
	{"fdb.flush", cmd_fdb_flush_locked, "forget learned MAC addresses: [port]", HV_CTL_WRITE},
	{"stats", cmd_stats_locked, "counters of ports, PMDs and the FDB: [port]", HV_CTL_READ},
	{"config.save", cmd_config_save_locked, "write the config file", HV_CTL_WRITE},
	{NULL, NULL, NULL, 0},
};

gid_t sw_ctl_admin_group = HV_CTL_NO_GROUP;

struct hv_ctl_server *
sw_ctl_start(char *err, size_t errlen)
{
	char path[sizeof(sw.run_dir) + 16];
	struct hv_ctl_server *s;

	snprintf(path, sizeof(path), "%s/" HV_CTL_SOCK_NAME, sw.run_dir);
	s = hv_ctl_server_create(path, sw.ctl_group, commands, NULL, err, errlen);
	if (s != NULL && hv_ctl_server_set_admin_group(s, sw_ctl_admin_group, err, errlen) != 0) {
		hv_ctl_server_destroy(s);
		return NULL;
	}
	return s;
}
