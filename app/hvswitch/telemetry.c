/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Counters on DPDK's telemetry socket (/var/run/dpdk/<prefix>/dpdk_telemetry.v2),
 * readable with the stock dpdk-telemetry.py:
 *   /hvswitch/ports          port names
 *   /hvswitch/port,<name>    every counter of one port (qps/0: {rx/packets: ...})
 *   /hvswitch/pmd            per-PMD cycles, packets, batches
 *   /hvswitch/fdb            FDB size and learning counters
 * The same JSON the control socket serves, in telemetry's two levels: the
 * top object's scalars in the reply's dict, each of its objects (and each
 * object of its arrays, "qps/<i>") a nested dict (a container: 256 values
 * each), flattened below that ('/' joins names: telemetry takes only
 * [A-Za-z0-9_/] in keys). A bad parameter is a reply {"error": "..."}: the
 * library answers a failed callback with null.
 * Callbacks run on the telemetry thread and take sw.lock.
 */
#include <stdio.h>
#include <string.h>

#include <rte_telemetry.h>

#include "hv_ctl.h"
#include "hv_ctl_api.h"
#include "sw.h"

/* A scalar of @j into dict @d as @name. */
static void
add_scalar(struct rte_tel_data *d, const char *name, const cJSON *it)
{
	if (cJSON_IsNumber(it) && it->valuedouble >= 0)
		rte_tel_data_add_dict_u64(d, name, (uint64_t)it->valuedouble);
	else if (cJSON_IsNumber(it))
		rte_tel_data_add_dict_int(d, name, (int)it->valuedouble);
	else if (cJSON_IsBool(it))
		rte_tel_data_add_dict_u64(d, name, cJSON_IsTrue(it));
	else if (cJSON_IsString(it))
		rte_tel_data_add_dict_string(d, name, it->valuestring);
}

/* Every scalar below @j into dict @d, names joined with '/' under @prefix. */
static void
flatten(struct rte_tel_data *d, const cJSON *j, const char *prefix)
{
	const cJSON *it;
	int i = 0;

	cJSON_ArrayForEach(it, j)
	{
		char name[RTE_TEL_MAX_STRING_LEN];

		if (cJSON_IsArray(j))
			snprintf(name, sizeof(name), "%s%s%d", prefix, prefix[0] ? "/" : "", i++);
		else
			snprintf(name, sizeof(name), "%s%s%s", prefix, prefix[0] ? "/" : "",
				 it->string);
		if (cJSON_IsObject(it) || cJSON_IsArray(it))
			flatten(d, it, name);
		else
			add_scalar(d, name, it);
	}
}

/* Object @j, flattened, as the nested dict @name of @d. */
static void
add_container(struct rte_tel_data *d, const char *name, const cJSON *j)
{
	struct rte_tel_data *c = rte_tel_data_alloc();

	if (c == NULL)
		return;
	rte_tel_data_start_dict(c);
	flatten(c, j, "");
	if (rte_tel_data_add_dict_container(d, name, c, 0) != 0)
		rte_tel_data_free(c);
}

/*
 * @j into @d on telemetry's two levels: scalars at the top, each object a
 * container, each object of an array a container "<array>/<i>" (queue
 * pairs, PMDs), so that no container holds more than one of them.
 */
static void
to_tel(struct rte_tel_data *d, const cJSON *j)
{
	const cJSON *it;

	rte_tel_data_start_dict(d);
	cJSON_ArrayForEach(it, j)
	{
		const cJSON *e;
		int i = 0;

		if (cJSON_IsObject(it)) {
			add_container(d, it->string, it);
			continue;
		}
		if (!cJSON_IsArray(it)) {
			add_scalar(d, it->string, it);
			continue;
		}
		cJSON_ArrayForEach(e, it)
		{
			char name[RTE_TEL_MAX_STRING_LEN];

			snprintf(name, sizeof(name), "%s/%d", it->string, i++);
			if (cJSON_IsObject(e) || cJSON_IsArray(e))
				add_container(d, name, e);
			else
				add_scalar(d, name, e);
		}
	}
}

/* An error reply: the library would answer a failed callback with null. */
static int
tel_error(struct rte_tel_data *d, const char *fmt, const char *arg)
{
	char msg[RTE_TEL_MAX_STRING_LEN];

	snprintf(msg, sizeof(msg), fmt, arg);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "error", msg);
	return 0;
}

/* Run a control command and put its result into @d (an error reply if it fails). */
static int
from_command(int (*fn)(cJSON **out, const char *param, char *err, size_t errlen), const char *param,
	     struct rte_tel_data *d)
{
	char err[RTE_TEL_MAX_STRING_LEN];
	cJSON *j = NULL;
	int rc;

	pthread_mutex_lock(&sw.lock);
	rc = fn(&j, param, err, sizeof(err));
	pthread_mutex_unlock(&sw.lock);
	if (rc != 0)
		return tel_error(d, "%s", err);
	to_tel(d, j);
	cJSON_Delete(j);
	return 0;
}

static int
port_detail(cJSON **out, const char *name, char *err, size_t errlen)
{
	struct sw_port *p;

	if (name == NULL || name[0] == '\0') {
		snprintf(err, errlen, "missing port name: /hvswitch/port,<name>");
		return -1;
	}
	hv_fdb_apply(sw.fdb); /* what was learned up to now counts */
	p = sw_port_find(name);
	if (p == NULL) {
		char shown[HV_CTL_NAME_MAX + 2];

		hv_ctl_utf8_clean(shown, sizeof(shown), name, HV_CTL_NAME_MAX + 1);
		snprintf(err, errlen, "no port '%s' (see /hvswitch/ports)", shown);
		return -1;
	}
	*out = sw_port_json(p, true);
	return 0;
}

static int
pmd_detail(cJSON **out, const char *param, char *err, size_t errlen)
{
	RTE_SET_USED(param), RTE_SET_USED(err), RTE_SET_USED(errlen);
	*out = cJSON_CreateObject();
	for (unsigned int i = 0; i < sw.n_pmds; i++) {
		const struct sw_pmd *d = &sw.pmds[i];
		char name[16];
		cJSON *o;

		snprintf(name, sizeof(name), "%u", i);
		o = cJSON_AddObjectToObject(*out, name);
		cJSON_AddNumberToObject(o, "lcore", d->lcore);
		cJSON_AddNumberToObject(o, "busy_cycles", (double)d->busy_cycles);
		cJSON_AddNumberToObject(o, "total_cycles", (double)d->total_cycles);
		cJSON_AddNumberToObject(o, "packets", (double)d->packets);
		cJSON_AddNumberToObject(o, "batches", (double)d->batches);
		cJSON_AddNumberToObject(o, "quiet_rxqs",
					__atomic_load_n(&d->quiet_rxqs, __ATOMIC_RELAXED));
		cJSON_AddNumberToObject(o, "sleep_us", sw.pmd_sleep_us[i]);
		cJSON_AddNumberToObject(o, "sleeps", (double)d->sleeps);
		cJSON_AddNumberToObject(o, "wakeups_kick", (double)d->wakeups_kick);
		cJSON_AddNumberToObject(o, "wakeups_timeout", (double)d->wakeups_timeout);
		cJSON_AddNumberToObject(o, "slept_us",
					(double)d->slept_cycles * 1000.0 / sw.dp.tsc_per_ms);
		cJSON_AddNumberToObject(
			o, "last_wake_ns",
			(double)__atomic_load_n(&d->last_wake_ns, __ATOMIC_RELAXED));
	}
	return 0;
}

static int
fdb_detail(cJSON **out, const char *param, char *err, size_t errlen)
{
	struct hv_fdb_stats fs;
	struct hv_fdb_mem fm;

	RTE_SET_USED(param), RTE_SET_USED(err), RTE_SET_USED(errlen);
	hv_fdb_apply(sw.fdb);
	hv_fdb_get_stats(sw.fdb, &fs);
	*out = cJSON_CreateObject();
	cJSON_AddNumberToObject(*out, "entries", hv_fdb_count(sw.fdb, HV_FDB_PORT_NONE));
	cJSON_AddNumberToObject(*out, "capacity", sw.settings.fdb_capacity);
	cJSON_AddNumberToObject(*out, "age_s", sw.settings.fdb_age_s);
	cJSON_AddNumberToObject(*out, "mac_limit", sw.settings.mac_limit);
	cJSON_AddNumberToObject(*out, "learned", (double)fs.learned);
	cJSON_AddNumberToObject(*out, "moved", (double)fs.moved);
	cJSON_AddNumberToObject(*out, "aged", (double)fs.aged);
	cJSON_AddNumberToObject(*out, "limit_refused", (double)fs.limit_refused);
	cJSON_AddNumberToObject(*out, "budget_refused", (double)fs.budget_refused);
	cJSON_AddNumberToObject(*out, "table_full", (double)fs.table_full);
	cJSON_AddNumberToObject(*out, "queue_full", (double)fs.queue_full);
	/* allocated whole at start-up: the same at 10 MACs as at capacity */
	hv_fdb_get_mem(sw.fdb, &fm);
	cJSON_AddNumberToObject(*out, "memory_bytes", (double)fm.bytes);
	cJSON_AddNumberToObject(*out, "memory_bytes_per_entry",
				fm.capacity ? (double)fm.bytes / fm.capacity : 0);
	return 0;
}

static int
tel_ports(const char *cmd, const char *params, struct rte_tel_data *d)
{
	RTE_SET_USED(cmd), RTE_SET_USED(params);
	rte_tel_data_start_array(d, RTE_TEL_STRING_VAL);
	pthread_mutex_lock(&sw.lock);
	for (uint16_t i = 0; i < SW_MAX_PORTS; i++)
		if (sw.ports[i] != NULL)
			rte_tel_data_add_array_string(d, sw.ports[i]->conf.name);
	pthread_mutex_unlock(&sw.lock);
	return 0;
}

static int
tel_port(const char *cmd, const char *params, struct rte_tel_data *d)
{
	RTE_SET_USED(cmd);
	return from_command(port_detail, params, d);
}

static int
tel_pmd(const char *cmd, const char *params, struct rte_tel_data *d)
{
	RTE_SET_USED(cmd);
	return from_command(pmd_detail, params, d);
}

static int
tel_fdb(const char *cmd, const char *params, struct rte_tel_data *d)
{
	RTE_SET_USED(cmd);
	return from_command(fdb_detail, params, d);
}

int
sw_telemetry_register(void)
{
	return rte_telemetry_register_cmd("/hvswitch/ports", tel_ports, "Names of the ports") |
	       rte_telemetry_register_cmd("/hvswitch/port", tel_port,
					  "Every counter of a port. Parameter: port name") |
	       rte_telemetry_register_cmd("/hvswitch/pmd", tel_pmd,
					  "Cycles, packets and batches of each PMD") |
	       rte_telemetry_register_cmd("/hvswitch/fdb", tel_fdb,
					  "Size and learning counters of the MAC table");
}
