/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control-socket commands of the admin level that change no configuration:
 * stats.clear (baselines: the PMDs' counters are never written) and log.set
 * (DPDK's log levels at run time); and the log line of each port.set.
 */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_log.h>

#include "ctl_admin.h"
#include "hv_ctl.h"
#include "hv_ctl_api.h"
#include "hv_log.h"
#include "sw.h"

/* The PMDs' counters at the last stats.clear of every port (under sw.lock). */
static struct {
	uint64_t busy_cycles, total_cycles, packets, batches;
} pmd_base[SW_MAX_PMDS];

static uint64_t
since(uint64_t cur, uint64_t base)
{
	return cur >= base ? cur - base : cur;
}

void
sw_ctl_pmd_counters(unsigned int i, uint64_t *busy, uint64_t *total, uint64_t *packets,
		    uint64_t *batches)
{
	const struct sw_pmd *d = &sw.pmds[i];

	*busy = since(__atomic_load_n(&d->busy_cycles, __ATOMIC_RELAXED), pmd_base[i].busy_cycles);
	*total = since(__atomic_load_n(&d->total_cycles, __ATOMIC_RELAXED),
		       pmd_base[i].total_cycles);
	*packets = since(__atomic_load_n(&d->packets, __ATOMIC_RELAXED), pmd_base[i].packets);
	*batches = since(__atomic_load_n(&d->batches, __ATOMIC_RELAXED), pmd_base[i].batches);
}

int
sw_ctl_stats_clear(const struct hv_ctl_vals *vals, cJSON **result, char *err, size_t errlen)
{
	const struct hv_ctl_val *port = &vals->v[HV_CTL_K_PORT];
	struct sw_port *only = NULL;
	cJSON *names;

	if (port->set) {
		only = sw_port_find(port->s);
		if (only == NULL) {
			snprintf(err, errlen, "%s: no port %s", HV_CTL_CMD(STATS_CLEAR), port->s);
			return -1;
		}
	}
	*result = cJSON_CreateObject();
	names = cJSON_AddArrayToObject(*result, "ports");
	for (uint16_t i = 0; i < SW_MAX_PORTS; i++) {
		struct sw_port *p = sw.ports[i];

		if (p == NULL || (only != NULL && p != only))
			continue;
		sw_port_clear_counters(p);
		cJSON_AddItemToArray(names, cJSON_CreateString(p->conf.name));
	}
	/* the PMDs' counters are every port's: only a clear of all clears them */
	if (only == NULL)
		for (unsigned int i = 0; i < sw.n_pmds; i++) {
			const struct sw_pmd *d = &sw.pmds[i];

			pmd_base[i].busy_cycles =
				__atomic_load_n(&d->busy_cycles, __ATOMIC_RELAXED);
			pmd_base[i].total_cycles =
				__atomic_load_n(&d->total_cycles, __ATOMIC_RELAXED);
			pmd_base[i].packets = __atomic_load_n(&d->packets, __ATOMIC_RELAXED);
			pmd_base[i].batches = __atomic_load_n(&d->batches, __ATOMIC_RELAXED);
		}
	cJSON_AddBoolToObject(*result, "pmds", only == NULL);
	HV_LOG(INFO, "ctl: counters of %s cleared (uid %u)",
	       only != NULL ? only->conf.name : "every port and PMD",
	       (unsigned int)hv_ctl_current_peer()->uid);
	return 0;
}

/* The log types whose names match pattern (rte_log_dump()'s "id N: NAME, level is ..."). */
static cJSON *
matching_types(const char *pattern)
{
	cJSON *names = cJSON_CreateArray();
	char *buf = NULL, *line, *save = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (f == NULL)
		return names;
	rte_log_dump(f);
	fclose(f);
	for (line = strtok_r(buf, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		char name[128];

		if (sscanf(line, "id %*u: %127[^,], level is", name) == 1 &&
		    fnmatch(pattern, name, 0) == 0)
			cJSON_AddItemToArray(names, cJSON_CreateString(name));
	}
	free(buf);
	return names;
}

int
sw_ctl_log_set(const struct hv_ctl_vals *vals, cJSON **result, char *err, size_t errlen)
{
	const char *pattern = vals->v[HV_CTL_K_LOGTYPE].s;
	const char *word = vals->v[HV_CTL_K_LEVEL].s;
	uint32_t level = (uint32_t)vals->v[HV_CTL_K_LEVEL].u;
	cJSON *types = matching_types(pattern);

	if (cJSON_GetArraySize(types) == 0) {
		char shown[72];

		cJSON_Delete(types);
		hv_ctl_utf8_clean(shown, sizeof(shown), pattern, 64);
		snprintf(err, errlen, "%s: no log type '%s' (see the daemon's --log-level)",
			 HV_CTL_CMD(LOG_SET), shown);
		return -1;
	}
	/* a pattern also applies to types registered later, as --log-level's */
	if (rte_log_set_level_pattern(pattern, level) != 0) {
		cJSON_Delete(types);
		snprintf(err, errlen, "%s: out of memory", HV_CTL_CMD(LOG_SET));
		return -1;
	}
	HV_LOG(NOTICE, "ctl: log level of %s set to %s (uid %u)", pattern, word,
	       (unsigned int)hv_ctl_current_peer()->uid);
	*result = cJSON_CreateObject();
	cJSON_AddItemToObject(*result, "types", types);
	cJSON_AddStringToObject(*result, HV_CTL_KEY(LEVEL), word);
	return 0;
}

/* A config value for the log: a missing trunk is false, a missing pmd auto. */
static void
conf_value(const cJSON *conf, const char *key, char *buf, size_t len)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(conf, key);

	if (cJSON_IsString(v))
		snprintf(buf, len, "%s", v->valuestring);
	else if (cJSON_IsNumber(v))
		snprintf(buf, len, "%.0f", v->valuedouble);
	else if (cJSON_IsBool(v))
		snprintf(buf, len, "%s", cJSON_IsTrue(v) ? "true" : "false");
	else if (v == NULL && strcmp(key, HV_CTL_KEY(PMD)) == 0)
		snprintf(buf, len, "auto");
	else if (v == NULL && strcmp(key, HV_CTL_KEY(TRUNK)) == 0)
		snprintf(buf, len, "false");
	else
		snprintf(buf, len, "-");
}

void
sw_ctl_log_port_set(const struct sw_port_conf *before, const struct sw_port_conf *after)
{
	cJSON *b = sw_port_conf_to_json(before), *a = sw_port_conf_to_json(after);
	const cJSON *objs[2] = {a, b};
	char line[512] = "", vb[128], va[128];
	size_t off = 0;

	/* every key of either, once: the new config's, then those it dropped */
	for (int o = 0; o < 2; o++) {
		const cJSON *m;

		cJSON_ArrayForEach(m, objs[o])
		{
			if (o == 1 && cJSON_HasObjectItem(a, m->string))
				continue;
			conf_value(b, m->string, vb, sizeof(vb));
			conf_value(a, m->string, va, sizeof(va));
			if (strcmp(vb, va) != 0 && off < sizeof(line))
				off += (size_t)snprintf(line + off, sizeof(line) - off,
							"%s%s %s -> %s", off ? ", " : "", m->string,
							vb, va);
		}
	}
	if (off > 0)
		HV_LOG(NOTICE, "ctl: port %s set: %s (uid %u)", after->name, line,
		       (unsigned int)hv_ctl_current_peer()->uid);
	cJSON_Delete(a);
	cJSON_Delete(b);
}
