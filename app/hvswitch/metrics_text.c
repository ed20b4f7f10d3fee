/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The metrics text: a snapshot of the switch's counters, taken under sw.lock
 * with the accessors telemetry.c and port.show use, then written out of the
 * lock in the Prometheus text format (0.0.4) or OpenMetrics 1.0.0. Every
 * family's samples are contiguous (both formats require it), so the snapshot
 * comes first and each family walks it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>

#include "hv_metrics.h"
#include "hv_vhost.h"
#include "metrics.h"
#include "port_vhost.h"
#include "sw.h"

/* One port as a scrape saw it. */
struct m_port {
	char name[SW_NAME_MAX];
	const char *type; /* the type's static name */
	bool up;
	uint32_t macs;
	uint16_t queues;
	struct sw_counters t;
	uint64_t drv_drops, irqs;
	bool rings; /* ring[] filled (vhost-user ports) */
	int pmd[SW_MAX_QUEUES];
	struct hv_vhost_vring_stats ring[SW_MAX_QUEUES][2]; /* [qp][HV_VHOST_RX/TX] */
};

struct m_pmd {
	unsigned int lcore;
	uint32_t sleep_us;
	uint64_t total_cycles, busy_cycles, slept_cycles, packets, batches;
	uint64_t sleeps, wakeups_kick, wakeups_timeout, sleep_aborts;
	uint64_t quiet_rxqs;
};

struct m_snap {
	unsigned int n_ports, n_pmds;
	struct m_port *ports;
	struct m_pmd pmds[SW_MAX_PMDS];
	uint32_t fdb_entries;
	struct sw_settings settings;
	struct hv_fdb_stats fdb;
	double tsc_hz;
};

/* ---- the snapshot (sw.lock held) ---- */

/* Which PMD polls queue @q of @p, from the published lists (as port.show); -1: none. */
static int
queue_pmd(const struct sw_port *p, uint16_t q)
{
	for (unsigned int i = 0; i < sw.n_pmds; i++) {
		const struct sw_rxq_list *l = __atomic_load_n(&sw.pmds[i].rxqs, __ATOMIC_ACQUIRE);

		for (uint16_t k = 0; l != NULL && k < l->n; k++)
			if (l->q[k].port == p && l->q[k].q == q)
				return (int)i;
	}
	return -1;
}

static void
snap_port(const struct sw_port *p, struct m_port *m)
{
	snprintf(m->name, sizeof(m->name), "%s", p->conf.name);
	m->type = p->ops->type;
	m->up = p->running && p->ops->link_up(p);
	m->macs = hv_fdb_count(sw.fdb, p->idx);
	m->queues = RTE_MIN(p->conf.queues, (uint16_t)SW_MAX_QUEUES);
	sw_port_totals(p, &m->t);
	if (p->running)
		p->ops->driver_counters(p, &m->drv_drops, &m->irqs);
	for (uint16_t q = 0; q < m->queues; q++)
		m->pmd[q] = queue_pmd(p, q);
	/* ring counters: the vhost-user type's (port.show's "qps"), read as its describe() does */
	m->rings = p->ops == &sw_port_vhost_ops && p->running && p->priv != NULL;
	for (uint16_t q = 0; m->rings && q < m->queues; q++)
		for (int d = HV_VHOST_RX; d <= HV_VHOST_TX; d++)
			if (hv_vhost_vring_stats(sw_vhost(p)->dev, q, d, &m->ring[q][d]) != 0)
				memset(&m->ring[q][d], 0, sizeof(m->ring[q][d]));
}

static void
snap_pmd(const struct sw_pmd *d, uint32_t sleep_us, struct m_pmd *m)
{
	/* each is written by its PMD only: relaxed loads, as port totals */
	m->lcore = d->lcore;
	m->sleep_us = sleep_us;
	m->total_cycles = __atomic_load_n(&d->total_cycles, __ATOMIC_RELAXED);
	m->busy_cycles = __atomic_load_n(&d->busy_cycles, __ATOMIC_RELAXED);
	m->slept_cycles = __atomic_load_n(&d->slept_cycles, __ATOMIC_RELAXED);
	m->packets = __atomic_load_n(&d->packets, __ATOMIC_RELAXED);
	m->batches = __atomic_load_n(&d->batches, __ATOMIC_RELAXED);
	m->sleeps = __atomic_load_n(&d->sleeps, __ATOMIC_RELAXED);
	m->wakeups_kick = __atomic_load_n(&d->wakeups_kick, __ATOMIC_RELAXED);
	m->wakeups_timeout = __atomic_load_n(&d->wakeups_timeout, __ATOMIC_RELAXED);
	m->sleep_aborts = __atomic_load_n(&d->sleep_aborts, __ATOMIC_RELAXED);
	m->quiet_rxqs = __atomic_load_n(&d->quiet_rxqs, __ATOMIC_RELAXED);
}

/* 0, or -1: no memory. */
static int
snap_take(struct m_snap *s)
{
	memset(s, 0, sizeof(*s));
	/* struct sw_counters is cache aligned: so must its copies be */
	s->ports = aligned_alloc(RTE_CACHE_LINE_SIZE, SW_MAX_PORTS * sizeof(*s->ports));
	if (s->ports == NULL)
		return -1;
	memset(s->ports, 0, SW_MAX_PORTS * sizeof(*s->ports));
	s->tsc_hz = (double)rte_get_tsc_hz();
	pthread_mutex_lock(&sw.lock);
	hv_fdb_apply(sw.fdb); /* what was learned up to now counts (as telemetry) */
	for (uint16_t i = 0; i < SW_MAX_PORTS; i++)
		if (sw.ports[i] != NULL)
			snap_port(sw.ports[i], &s->ports[s->n_ports++]);
	s->n_pmds = sw.n_pmds;
	for (unsigned int i = 0; i < sw.n_pmds; i++)
		snap_pmd(&sw.pmds[i], sw.pmd_sleep_us[i], &s->pmds[i]);
	s->fdb_entries = hv_fdb_count(sw.fdb, HV_FDB_PORT_NONE);
	s->settings = sw.settings;
	hv_fdb_get_stats(sw.fdb, &s->fdb);
	pthread_mutex_unlock(&sw.lock);
	return 0;
}

/* ---- the families ---- */

static const char *const dir_name[2] = {[HV_VHOST_RX] = "rx", [HV_VHOST_TX] = "tx"};

/* A per-port counter: @off is the offset of a uint64_t in struct m_port. */
static void
port_counter(struct hv_metrics_out *o, const struct m_snap *s, const char *name, const char *help,
	     size_t off)
{
	hv_metrics_family(o, name, HV_METRICS_COUNTER, help);
	for (unsigned int i = 0; i < s->n_ports; i++) {
		hv_metrics_sample(o, name, HV_METRICS_COUNTER);
		hv_metrics_label(o, "port", s->ports[i].name);
		hv_metrics_value_u(o, *(const uint64_t *)((const char *)&s->ports[i] + off));
	}
}

#define PORT_COUNTER(o, s, name, help, field)                                                      \
	port_counter(o, s, name, help, offsetof(struct m_port, field))

static void
write_ports(struct hv_metrics_out *o, const struct m_snap *s)
{
	const struct m_port *p;
	unsigned int i;

	hv_metrics_family(
		o, "hvswitch_port_up", HV_METRICS_GAUGE,
		"1 when the port runs and its link is up (a vhost-user frontend is attached)");
	for (i = 0, p = s->ports; i < s->n_ports; i++, p++) {
		hv_metrics_sample(o, "hvswitch_port_up", HV_METRICS_GAUGE);
		hv_metrics_label(o, "port", p->name);
		hv_metrics_label(o, "type", p->type);
		hv_metrics_value_u(o, p->up);
	}
	hv_metrics_family(o, "hvswitch_port_macs", HV_METRICS_GAUGE,
			  "MAC addresses the switch learned on the port");
	for (i = 0, p = s->ports; i < s->n_ports; i++, p++) {
		hv_metrics_sample(o, "hvswitch_port_macs", HV_METRICS_GAUGE);
		hv_metrics_label(o, "port", p->name);
		hv_metrics_value_u(o, p->macs);
	}
	hv_metrics_family(o, "hvswitch_port_packets", HV_METRICS_COUNTER,
			  "Frames the switch received from (rx) and delivered to (tx) the port");
	for (i = 0, p = s->ports; i < s->n_ports; i++, p++)
		for (int d = 0; d < 2; d++) {
			hv_metrics_sample(o, "hvswitch_port_packets", HV_METRICS_COUNTER);
			hv_metrics_label(o, "port", p->name);
			hv_metrics_label(o, "direction", d ? "tx" : "rx");
			hv_metrics_value_u(o, d ? p->t.tx_packets : p->t.rx_packets);
		}
	hv_metrics_family(o, "hvswitch_port_bytes", HV_METRICS_COUNTER,
			  "Bytes of the frames received from (rx) and delivered to (tx) the port");
	for (i = 0, p = s->ports; i < s->n_ports; i++, p++)
		for (int d = 0; d < 2; d++) {
			hv_metrics_sample(o, "hvswitch_port_bytes", HV_METRICS_COUNTER);
			hv_metrics_label(o, "port", p->name);
			hv_metrics_label(o, "direction", d ? "tx" : "rx");
			hv_metrics_value_u(o, d ? p->t.tx_bytes : p->t.rx_bytes);
		}
	hv_metrics_family(o, "hvswitch_port_drops", HV_METRICS_COUNTER,
			  "Frames the switch dropped, by reason: runt, bad_src, vlan, same_port on "
			  "the port they came from; no_mbuf, tx_full on the port they were for "
			  "(tx_full also in hvswitch_port_driver_drops_total)");
	for (i = 0, p = s->ports; i < s->n_ports; i++, p++)
		for (int r = 0; r < SW_DROP__MAX; r++) {
			hv_metrics_sample(o, "hvswitch_port_drops", HV_METRICS_COUNTER);
			hv_metrics_label(o, "port", p->name);
			hv_metrics_label(o, "reason", sw_drop_name(r));
			hv_metrics_value_u(o, p->t.drops[r]);
		}
	PORT_COUNTER(o, s, "hvswitch_port_driver_drops",
		     "Frames the port's driver dropped (all its queues)", drv_drops);
	PORT_COUNTER(o, s, "hvswitch_port_interrupts",
		     "Interrupts sent to the port's guest (all its queues)", irqs);
	hv_metrics_family(o, "hvswitch_port_learn_refused", HV_METRICS_COUNTER,
			  "Source MACs of the port not learned (frames still switched), by reason");
	for (i = 0, p = s->ports; i < s->n_ports; i++, p++)
		for (int r = 0; r < 2; r++) {
			hv_metrics_sample(o, "hvswitch_port_learn_refused", HV_METRICS_COUNTER);
			hv_metrics_label(o, "port", p->name);
			hv_metrics_label(o, "reason", r ? "budget" : "limit");
			hv_metrics_value_u(o, r ? p->t.learn_refused.budget
						: p->t.learn_refused.limit);
		}
	PORT_COUNTER(o, s, "hvswitch_port_offload_passthrough",
		     "Offload frames delivered to the port as they came (it takes them whole)",
		     t.off.passthrough);
	PORT_COUNTER(o, s, "hvswitch_port_offload_hw",
		     "Offload frames handed to the port's NIC to finish", t.off.hw_offload);
	PORT_COUNTER(o, s, "hvswitch_port_offload_segmented",
		     "GSO frames the switch segmented for the port", t.off.segmented);
	PORT_COUNTER(o, s, "hvswitch_port_offload_segments", "Segments made of them for the port",
		     t.off.segments);
	PORT_COUNTER(o, s, "hvswitch_port_offload_csum_finished",
		     "Partial checksums the switch finished for the port", t.off.csum_finished);
	hv_metrics_family(o, "hvswitch_port_offload_drops", HV_METRICS_COUNTER,
			  "Offload frames from the port refused, by reason");
	for (i = 0, p = s->ports; i < s->n_ports; i++, p++)
		for (int r = HV_OFFLOAD_DROP__FIRST; r < HV_OFFLOAD_DROP__MAX; r++) {
			hv_metrics_sample(o, "hvswitch_port_offload_drops", HV_METRICS_COUNTER);
			hv_metrics_label(o, "port", p->name);
			hv_metrics_label(o, "reason", hv_offload_drop_name(r));
			hv_metrics_value_u(o, p->t.off.drops[r]);
		}
}

/* A per-ring counter of vhost-user ports: @off is a uint64_t in struct hv_vhost_vring_stats. */
static void
queue_counter(struct hv_metrics_out *o, const struct m_snap *s, const char *name, const char *help,
	      size_t off)
{
	hv_metrics_family(o, name, HV_METRICS_COUNTER, help);
	for (unsigned int i = 0; i < s->n_ports; i++) {
		const struct m_port *p = &s->ports[i];

		for (uint16_t q = 0; p->rings && q < p->queues; q++)
			for (int d = HV_VHOST_RX; d <= HV_VHOST_TX; d++) {
				hv_metrics_sample(o, name, HV_METRICS_COUNTER);
				hv_metrics_label(o, "port", p->name);
				hv_metrics_label_u(o, "queue", q);
				hv_metrics_label(o, "direction", dir_name[d]);
				hv_metrics_value_u(
					o, *(const uint64_t *)((const char *)&p->ring[q][d] + off));
			}
	}
}

#define QUEUE_COUNTER(o, s, name, help, field)                                                     \
	queue_counter(o, s, name, help, offsetof(struct hv_vhost_vring_stats, field))

static void
write_queues(struct hv_metrics_out *o, const struct m_snap *s)
{
	hv_metrics_family(o, "hvswitch_queue_pmd", HV_METRICS_GAUGE,
			  "The PMD polling the queue pair (-1: none)");
	for (unsigned int i = 0; i < s->n_ports; i++)
		for (uint16_t q = 0; q < s->ports[i].queues; q++) {
			hv_metrics_sample(o, "hvswitch_queue_pmd", HV_METRICS_GAUGE);
			hv_metrics_label(o, "port", s->ports[i].name);
			hv_metrics_label_u(o, "queue", q);
			hv_metrics_value_i(o, s->ports[i].pmd[q]);
		}
	QUEUE_COUNTER(o, s, "hvswitch_queue_packets",
		      "Frames through the ring (rx: the guest sent, tx: it was given)", packets);
	QUEUE_COUNTER(o, s, "hvswitch_queue_bytes", "Bytes of those frames", bytes);
	QUEUE_COUNTER(o, s, "hvswitch_queue_kicks", "Notifications the guest sent on the ring",
		      kicks);
	QUEUE_COUNTER(o, s, "hvswitch_queue_interrupts", "Interrupts sent to the guest", irqs_sent);
	QUEUE_COUNTER(o, s, "hvswitch_queue_interrupts_suppressed",
		      "Interrupts owed that the guest asked not to get", irqs_suppressed);
	QUEUE_COUNTER(o, s, "hvswitch_queue_stops",
		      "Times the ring was stopped for guest misbehaviour", stops);
	QUEUE_COUNTER(o, s, "hvswitch_queue_borrowed",
		      "Frames whose tail was lent from guest memory, not copied", borrowed);
	QUEUE_COUNTER(o, s, "hvswitch_queue_log_pages",
		      "Guest pages marked dirty in the live-migration log", log_pages);
	QUEUE_COUNTER(o, s, "hvswitch_queue_log_syncs",
		      "Bursts that logged their writes to guest memory (live migration)",
		      log_syncs);
	hv_metrics_family(o, "hvswitch_queue_drops", HV_METRICS_COUNTER,
			  "Frames (or rings) the vhost-user driver dropped, by reason");
	for (unsigned int i = 0; i < s->n_ports; i++) {
		const struct m_port *p = &s->ports[i];

		for (uint16_t q = 0; p->rings && q < p->queues; q++)
			for (int d = HV_VHOST_RX; d <= HV_VHOST_TX; d++)
				for (int r = HV_VHOST_DROP__FIRST; r < HV_VHOST_DROP__MAX; r++) {
					hv_metrics_sample(o, "hvswitch_queue_drops",
							  HV_METRICS_COUNTER);
					hv_metrics_label(o, "port", p->name);
					hv_metrics_label_u(o, "queue", q);
					hv_metrics_label(o, "direction", dir_name[d]);
					hv_metrics_label(o, "reason", hv_vhost_drop_name(r));
					hv_metrics_value_u(o, p->ring[q][d].drops[r]);
				}
	}
}

/* A per-PMD value: @off is a uint64_t in struct m_pmd; @scale > 0 turns cycles into seconds. */
static void
pmd_value(struct hv_metrics_out *o, const struct m_snap *s, const char *name,
	  enum hv_metrics_type t, const char *help, size_t off, double scale)
{
	hv_metrics_family(o, name, t, help);
	for (unsigned int i = 0; i < s->n_pmds; i++) {
		uint64_t v = *(const uint64_t *)((const char *)&s->pmds[i] + off);

		hv_metrics_sample(o, name, t);
		hv_metrics_label_u(o, "pmd", i);
		if (scale > 0)
			hv_metrics_value_d(o, (double)v / scale);
		else
			hv_metrics_value_u(o, v);
	}
}

#define PMD_VALUE(o, s, name, t, help, field, scale)                                               \
	pmd_value(o, s, name, t, help, offsetof(struct m_pmd, field), scale)

static void
write_pmds(struct hv_metrics_out *o, const struct m_snap *s)
{
	hv_metrics_family(o, "hvswitch_pmd_lcore", HV_METRICS_GAUGE,
			  "The EAL lcore the PMD runs on");
	for (unsigned int i = 0; i < s->n_pmds; i++) {
		hv_metrics_sample(o, "hvswitch_pmd_lcore", HV_METRICS_GAUGE);
		hv_metrics_label_u(o, "pmd", i);
		hv_metrics_value_u(o, s->pmds[i].lcore);
	}
	PMD_VALUE(o, s, "hvswitch_pmd_loop_seconds", HV_METRICS_COUNTER,
		  "Time the PMD spent in its loop, awake", total_cycles, s->tsc_hz);
	PMD_VALUE(o, s, "hvswitch_pmd_busy_seconds", HV_METRICS_COUNTER,
		  "Time the PMD spent on bursts that carried frames", busy_cycles, s->tsc_hz);
	PMD_VALUE(o, s, "hvswitch_pmd_slept_seconds", HV_METRICS_COUNTER,
		  "Time the PMD slept waiting for its queues' kicks", slept_cycles, s->tsc_hz);
	PMD_VALUE(o, s, "hvswitch_pmd_packets", HV_METRICS_COUNTER, "Frames the PMD received",
		  packets, 0);
	PMD_VALUE(o, s, "hvswitch_pmd_batches", HV_METRICS_COUNTER, "Bursts that carried frames",
		  batches, 0);
	PMD_VALUE(o, s, "hvswitch_pmd_quiet_queues", HV_METRICS_GAUGE,
		  "Queues idle long enough to be polled on every 4th iteration only", quiet_rxqs,
		  0);
	PMD_VALUE(o, s, "hvswitch_pmd_sleeps", HV_METRICS_COUNTER, "Times the PMD went to sleep",
		  sleeps, 0);
	hv_metrics_family(o, "hvswitch_pmd_wakeups", HV_METRICS_COUNTER,
			  "Ends of the PMD's sleeps, by reason (kick: a queue's notification)");
	for (unsigned int i = 0; i < s->n_pmds; i++)
		for (int r = 0; r < 2; r++) {
			hv_metrics_sample(o, "hvswitch_pmd_wakeups", HV_METRICS_COUNTER);
			hv_metrics_label_u(o, "pmd", i);
			hv_metrics_label(o, "reason", r ? "timeout" : "kick");
			hv_metrics_value_u(o, r ? s->pmds[i].wakeups_timeout
						: s->pmds[i].wakeups_kick);
		}
	PMD_VALUE(o, s, "hvswitch_pmd_sleep_aborts", HV_METRICS_COUNTER,
		  "Times the PMD was idle but could not sleep", sleep_aborts, 0);
	hv_metrics_family(o, "hvswitch_pmd_sleep_after_seconds", HV_METRICS_GAUGE,
			  "Idle time after which the PMD sleeps (0: never, --pmd-sleep)");
	for (unsigned int i = 0; i < s->n_pmds; i++) {
		hv_metrics_sample(o, "hvswitch_pmd_sleep_after_seconds", HV_METRICS_GAUGE);
		hv_metrics_label_u(o, "pmd", i);
		hv_metrics_value_d(o, s->pmds[i].sleep_us / 1e6);
	}
}

static void
gauge1(struct hv_metrics_out *o, const char *name, const char *help, uint64_t v)
{
	hv_metrics_family(o, name, HV_METRICS_GAUGE, help);
	hv_metrics_sample(o, name, HV_METRICS_GAUGE);
	hv_metrics_value_u(o, v);
}

static void
counter1(struct hv_metrics_out *o, const char *name, const char *help, uint64_t v)
{
	hv_metrics_family(o, name, HV_METRICS_COUNTER, help);
	hv_metrics_sample(o, name, HV_METRICS_COUNTER);
	hv_metrics_value_u(o, v);
}

static void
write_fdb(struct hv_metrics_out *o, const struct m_snap *s)
{
	gauge1(o, "hvswitch_fdb_entries", "MAC addresses in the table", s->fdb_entries);
	gauge1(o, "hvswitch_fdb_capacity", "MAC addresses the table holds at most",
	       s->settings.fdb_capacity);
	gauge1(o, "hvswitch_fdb_mac_limit", "MAC addresses one port may own (0: no limit)",
	       s->settings.mac_limit);
	gauge1(o, "hvswitch_fdb_age_seconds", "Idle time before a MAC is forgotten",
	       s->settings.fdb_age_s);
	counter1(o, "hvswitch_fdb_learned", "MAC addresses learned (new entries)", s->fdb.learned);
	counter1(o, "hvswitch_fdb_moved", "Entries that moved to another port", s->fdb.moved);
	counter1(o, "hvswitch_fdb_aged", "Entries removed by ageing", s->fdb.aged);
	hv_metrics_family(
		o, "hvswitch_fdb_refused", HV_METRICS_COUNTER,
		"MAC addresses not learned, by reason (limit: the port's mac_limit, budget: "
		"the port's queued requests, table_full: no room)");
	for (int r = 0; r < 3; r++) {
		hv_metrics_sample(o, "hvswitch_fdb_refused", HV_METRICS_COUNTER);
		hv_metrics_label(o, "reason", r == 0 ? "limit" : r == 1 ? "budget" : "table_full");
		hv_metrics_value_u(o, r == 0   ? s->fdb.limit_refused
				      : r == 1 ? s->fdb.budget_refused
					       : s->fdb.table_full);
	}
	counter1(o, "hvswitch_fdb_learn_queue_full",
		 "Learn requests lost: the control thread lagged", s->fdb.queue_full);
}

char *
sw_metrics_render(bool openmetrics, size_t *len)
{
	struct hv_metrics_out o = {.openmetrics = openmetrics};
	struct m_snap s;

	if (snap_take(&s) != 0)
		return NULL;
	hv_metrics_family(&o, "hvswitch_build", HV_METRICS_INFO, "The switch's version");
	hv_metrics_sample(&o, "hvswitch_build", HV_METRICS_INFO);
	hv_metrics_label(&o, "version", HV_VERSION);
	hv_metrics_value_u(&o, 1);
	write_ports(&o, &s);
	write_queues(&o, &s);
	write_pmds(&o, &s);
	write_fdb(&o, &s);
	free(s.ports);
	return hv_metrics_finish(&o, len);
}
