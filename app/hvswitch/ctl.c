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

#include "ctl_admin.h"
#include "ctl_policy.h"
#include "hv_ctl.h"
#include "hv_ctl_api.h"
#include "sw.h"

/* The table's limits are the switch's. */
_Static_assert(HV_CTL_MAX_QUEUES == SW_MAX_QUEUES, "hv_ctl_api.h: queues");
_Static_assert(HV_CTL_MAX_PMDS == SW_MAX_PMDS, "hv_ctl_api.h: PMDs");
_Static_assert(HV_CTL_VLAN_MAX == SW_VLAN_MAX, "hv_ctl_api.h: VLAN");
_Static_assert(HV_CTL_NAME_MAX == SW_NAME_MAX - 1, "hv_ctl_api.h: names");

/* Arguments reach the handlers validated (hv_ctl_server_use_api()). */
#define VAL(k) (&hv_ctl_current_vals()->v[HV_CTL_K_##k])

static int
cmd_version(void *ctx, const cJSON *args, cJSON **result, char *err, size_t errlen)
{
	RTE_SET_USED(ctx), RTE_SET_USED(args), RTE_SET_USED(err), RTE_SET_USED(errlen);
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
	if (!sw_ctl_port_add_allowed(args, hv_ctl_current_peer()->role, sw.run_dir, err, errlen) ||
	    sw_port_conf_from_vals(hv_ctl_current_vals(), HV_CTL_CMD(PORT_ADD), &c, err, errlen) !=
		    0 ||
	    sw_port_add(&c, false, err, errlen) != 0)
		return -1;
	if (sw_config_save(serr, sizeof(serr)) != 0) {
		char derr[64];

		sw_port_del(c.name, derr, sizeof(derr));
		snprintf(err, errlen, "%s: not added: %s", HV_CTL_CMD(PORT_ADD), serr);
		return -1;
	}
	*result = sw_port_json(sw_port_find(c.name), false);
	return 0;
}

/* The port named by the validated "name" (or, when !required, "port"), or NULL. */
static struct sw_port *
port_arg(const char *cmd, bool required, char *err, size_t errlen)
{
	const struct hv_ctl_val *v = required ? VAL(NAME) : VAL(PORT);
	struct sw_port *p;

	if (!v->set)
		return NULL;
	p = sw_port_find(v->s);
	if (p == NULL)
		snprintf(err, errlen, "%s: no port %s", cmd, v->s);
	return p;
}

static int
cmd_port_del(void *ctx, const cJSON *args, cJSON **result, char *err, size_t errlen)
{
	struct sw_port *p;
	struct sw_port_conf saved;

	RTE_SET_USED(ctx), RTE_SET_USED(args), RTE_SET_USED(result);
	p = port_arg(HV_CTL_CMD(PORT_DEL), true, err, errlen);
	if (p == NULL)
		return -1;
	saved = p->conf;
	if (sw_port_del(saved.name, err, errlen) != 0)
		return -1;
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
	RTE_SET_USED(ctx), RTE_SET_USED(args), RTE_SET_USED(err), RTE_SET_USED(errlen);
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

	RTE_SET_USED(ctx), RTE_SET_USED(args);
	p = port_arg(HV_CTL_CMD(PORT_SHOW), true, err, errlen);
	if (p == NULL)
		return -1;
	hv_fdb_apply(sw.fdb); /* what was learned up to now counts */
	*result = sw_port_json(p, true);
	return 0;
}

static int
cmd_port_set(void *ctx, const cJSON *args, cJSON **result, char *err, size_t errlen)
{
	const char *cmd = HV_CTL_CMD(PORT_SET);
	const struct hv_ctl_val *vlan = VAL(VLAN), *trunk_v = VAL(TRUNK), *pmd = VAL(PMD);
	struct sw_port *p;
	bool trunk;
	uint16_t new_vlan;
	struct sw_port_conf before, c;

	RTE_SET_USED(ctx), RTE_SET_USED(args);
	p = port_arg(cmd, true, err, errlen);
	if (p == NULL)
		return -1;
	/* all arguments checked before anything changes (types and ranges: the table) */
	new_vlan = vlan->set ? (uint16_t)vlan->u : p->conf.vlan;
	if (trunk_v->set)
		trunk = trunk_v->b;
	else
		trunk = vlan->set && new_vlan != 0 ? false : p->conf.trunk;
	if (trunk && new_vlan != 0) {
		snprintf(err, errlen, "%s: a trunk carries every VLAN: no '%s' with it", cmd,
			 HV_CTL_KEY(VLAN));
		return -1;
	}
	if (pmd->set && pmd->u != HV_CTL_AUTO && pmd->u >= sw.n_pmds) {
		snprintf(err, errlen, "%s: '%s' must be 0..%u: this switch runs %u PMD%s", cmd,
			 HV_CTL_KEY(PMD), sw.n_pmds - 1, sw.n_pmds, sw.n_pmds == 1 ? "" : "s");
		return -1;
	}
	/* the port type's own keys (the rest of the table's): checked by it into a copy */
	c = p->conf;
	if (sw_port_conf_foreign(p->ops, hv_ctl_current_vals(), cmd, err, errlen) != 0 ||
	    (p->ops->ctl->conf_set != NULL &&
	     p->ops->ctl->conf_set(p, hv_ctl_current_vals(), cmd, &c, err, errlen) != 0))
		return -1;
	before = p->conf;
	if (memcmp(c.priv, p->conf.priv, sizeof(c.priv)) != 0) {
		memcpy(p->conf.priv, c.priv, sizeof(c.priv));
		p->ops->ctl->conf_apply(p);
	}
	if ((vlan->set || trunk_v->set) && sw_port_set_vlan(p, new_vlan, trunk, err, errlen) != 0)
		return -1;
	if (pmd->set &&
	    sw_port_set_pmd(p, pmd->u == HV_CTL_AUTO ? -1 : (int)pmd->u, err, errlen) != 0)
		return -1;
	if (sw_config_save(err, errlen) != 0) {
		char uerr[64];

		sw_port_set_vlan(p, before.vlan, before.trunk, uerr, sizeof(uerr));
		sw_port_set_pmd(p, before.pmd, uerr, sizeof(uerr));
		if (memcmp(before.priv, p->conf.priv, sizeof(before.priv)) != 0) {
			memcpy(p->conf.priv, before.priv, sizeof(before.priv));
			p->ops->ctl->conf_apply(p);
		}
		return -1;
	}
	sw_ctl_log_port_set(&before, &p->conf);
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
	cJSON_AddNumberToObject(o, HV_CTL_KEY(VLAN), e->key.vlan);
	cJSON_AddStringToObject(o, HV_CTL_KEY(PORT),
				sw.ports[e->port] ? sw.ports[e->port]->conf.name : "?");
	if (e->is_static)
		cJSON_AddBoolToObject(o, "static", true);
	/* where behind the port (a tunnel's remote VTEP) */
	if (e->tag != 0 && sw.ports[e->port] != NULL && sw.ports[e->port]->ops->ctl->fdb_json)
		sw.ports[e->port]->ops->ctl->fdb_json(sw.ports[e->port], e->tag, o);
	cJSON_AddNumberToObject(
		o, "age_s",
		(double)(w->now_ms > e->last_seen_ms ? w->now_ms - e->last_seen_ms : 0) / 1000.0);
	cJSON_AddItemToArray(w->arr, o);
	return 0;
}

static int
cmd_fdb_show(void *ctx, const cJSON *args, cJSON **result, char *err, size_t errlen)
{
	struct fdb_walk w = {.port = HV_FDB_PORT_NONE, .now_ms = sw_now_ms()};
	struct sw_port *p;

	RTE_SET_USED(ctx), RTE_SET_USED(args);
	err[0] = '\0';
	p = port_arg(HV_CTL_CMD(FDB_SHOW), false, err, errlen);
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

	RTE_SET_USED(ctx), RTE_SET_USED(args);
	err[0] = '\0';
	p = port_arg(HV_CTL_CMD(FDB_FLUSH), false, err, errlen);
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

	sw_port_counters(p, &t, &drv, &irqs);
	off = sw_offload_json(&t, &off_drops);
	drops += off_drops;
	for (int d = 0; d < SW_DROP__MAX; d++)
		if (d != SW_DROP_TX_FULL) /* the driver counted those */
			drops += t.drops[d];
	cJSON_AddStringToObject(o, HV_CTL_KEY(NAME), p->conf.name);
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

	RTE_SET_USED(ctx), RTE_SET_USED(args);
	err[0] = '\0';
	p = port_arg(HV_CTL_CMD(STATS), false, err, errlen);
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
		uint64_t busy, total, packets, batches;

		sw_ctl_pmd_counters(i, &busy, &total, &packets, &batches);
		cJSON_AddNumberToObject(o, HV_CTL_KEY(PMD), i);
		cJSON_AddNumberToObject(o, "lcore", d->lcore);
		cJSON_AddNumberToObject(o, "busy_cycles", (double)busy);
		cJSON_AddNumberToObject(o, "total_cycles", (double)total);
		cJSON_AddNumberToObject(o, "packets", (double)packets);
		cJSON_AddNumberToObject(o, "batches", (double)batches);
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
	RTE_SET_USED(ctx), RTE_SET_USED(args);
	if (sw_config_save(err, errlen) != 0)
		return -1;
	*result = cJSON_CreateObject();
	cJSON_AddStringToObject(*result, "path", sw.config_path);
	return 0;
}

static int
cmd_stats_clear(void *ctx, const cJSON *args, cJSON **result, char *err, size_t errlen)
{
	RTE_SET_USED(ctx), RTE_SET_USED(args);
	return sw_ctl_stats_clear(hv_ctl_current_vals(), result, err, errlen);
}

static int
cmd_log_set(void *ctx, const cJSON *args, cJSON **result, char *err, size_t errlen)
{
	RTE_SET_USED(ctx), RTE_SET_USED(args);
	return sw_ctl_log_set(hv_ctl_current_vals(), result, err, errlen);
}

static int
cmd_capture_start(void *ctx, const cJSON *args, cJSON **result, char *err, size_t errlen)
{
	static const char *const dirs[] = {"", "rx", "tx", "both"};
	uint8_t dir = VAL(DIRECTION)->set ? (uint8_t)VAL(DIRECTION)->u : HV_CTL_DIR_BOTH;
	uint32_t snaplen = VAL(SNAPLEN)->set ? (uint32_t)VAL(SNAPLEN)->u : HV_CTL_SNAPLEN_MAX;
	uint64_t count = VAL(COUNT)->set ? VAL(COUNT)->u : 0;
	struct sw_port *p = sw_port_find(VAL(PORT)->s);
	int fd;

	RTE_SET_USED(ctx), RTE_SET_USED(args);
	_Static_assert(HV_CTL_DIR_RX == SW_CAP_RX && HV_CTL_DIR_TX == SW_CAP_TX, "directions");
	if (p == NULL) {
		snprintf(err, errlen, "%s: no port %s", HV_CTL_CMD(CAPTURE_START), VAL(PORT)->s);
		return -1;
	}
	fd = hv_ctl_current_take_fd();
	if (fd < 0) {
		snprintf(err, errlen,
			 "%s: no socket came with the request (pass a stream socket with "
			 "SCM_RIGHTS, as hvctl capture does)",
			 HV_CTL_CMD(CAPTURE_START));
		return -1;
	}
	if (sw_capture_start(p, fd, dir, count, snaplen, err, errlen) != 0)
		return -1;
	*result = cJSON_CreateObject();
	cJSON_AddStringToObject(*result, HV_CTL_KEY(PORT), p->conf.name);
	cJSON_AddStringToObject(*result, HV_CTL_KEY(DIRECTION), dirs[dir]);
	cJSON_AddNumberToObject(*result, HV_CTL_KEY(COUNT), (double)count);
	cJSON_AddNumberToObject(*result, HV_CTL_KEY(SNAPLEN), snaplen);
	return 0;
}

/* Every handler runs under sw.lock (telemetry reads the same state). */
#define LOCKED(fn)                                                                                 \
	static int fn##_locked(void *ctx, const cJSON *args, cJSON **result, char *err,            \
			       size_t errlen)                                                      \
	{                                                                                          \
		int rc;                                                                            \
		pthread_mutex_lock(&sw.lock);                                                      \
		rc = fn(ctx, args, result, err, errlen);                                           \
		pthread_mutex_unlock(&sw.lock);                                                    \
		return rc;                                                                         \
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
LOCKED(cmd_stats_clear)
LOCKED(cmd_log_set)
LOCKED(cmd_capture_start)

/* Who may run what: the API table (reads for the --group, changes for the
 * --admin-group, port.add further confined by sw_ctl_port_add_allowed()). */
static const hv_ctl_handler_t handlers[HV_CTL_C__MAX] = {
	[HV_CTL_C_VERSION] = cmd_version_locked,
	[HV_CTL_C_PORT_ADD] = cmd_port_add_locked,
	[HV_CTL_C_PORT_DEL] = cmd_port_del_locked,
	[HV_CTL_C_PORT_LIST] = cmd_port_list_locked,
	[HV_CTL_C_PORT_SHOW] = cmd_port_show_locked,
	[HV_CTL_C_PORT_SET] = cmd_port_set_locked,
	[HV_CTL_C_FDB_SHOW] = cmd_fdb_show_locked,
	[HV_CTL_C_FDB_FLUSH] = cmd_fdb_flush_locked,
	[HV_CTL_C_STATS] = cmd_stats_locked,
	[HV_CTL_C_CONFIG_SAVE] = cmd_config_save_locked,
	[HV_CTL_C_STATS_CLEAR] = cmd_stats_clear_locked,
	[HV_CTL_C_LOG_SET] = cmd_log_set_locked,
	[HV_CTL_C_CAPTURE_START] = cmd_capture_start_locked,
};

static struct hv_ctl_cmd commands[HV_CTL_C__MAX + 1];

gid_t sw_ctl_admin_group = HV_CTL_NO_GROUP;

struct hv_ctl_server *
sw_ctl_start(char *err, size_t errlen)
{
	char path[sizeof(sw.run_dir) + 16];
	struct hv_ctl_server *s;

	/* the switch's commands only: a guest.* request is an unknown command here */
	hv_ctl_api_server_cmds(HV_CTL_SVC_SWITCH, handlers, commands);
	snprintf(path, sizeof(path), "%s/" HV_CTL_SOCK_NAME, sw.run_dir);
	s = hv_ctl_server_create(path, sw.ctl_group, commands, NULL, err, errlen);
	if (s != NULL)
		hv_ctl_server_use_api(s);
	if (s != NULL && hv_ctl_server_set_admin_group(s, sw_ctl_admin_group, err, errlen) != 0) {
		hv_ctl_server_destroy(s);
		return NULL;
	}
	return s;
}
