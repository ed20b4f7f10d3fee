/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * L2 forwarding database: MAC address + broadcast domain (VLAN) -> port.
 *
 * Readers (PMD threads) look up without locks. Only the control thread writes
 * the table: PMDs queue what they learn on a lock-free ring and the control
 * thread applies it (hv_fdb_apply()), enforcing the per-port limit, and ages
 * entries out (hv_fdb_age()). Freed slots are reused only after an RCU grace
 * period of the PMDs (the rte_rcu_qsbr given at creation).
 *
 * The ring is shared by all ports, so a PMD refuses up front what would
 * crowd it: requests of a port at its limit (the control thread would refuse
 * them), and those beyond HV_FDB_LEARN_BUDGET queued for one port.
 */
#ifndef HV_FDB_H
#define HV_FDB_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_rcu_qsbr.h>

#ifdef __cplusplus
extern "C" {
#endif

/** No port: unknown destination (flood). */
#define HV_FDB_PORT_NONE UINT16_MAX

/**
 * Learn requests one port may have on the ring at a time (of 4095): a port
 * spraying source addresses cannot starve the others' learning.
 */
#define HV_FDB_LEARN_BUDGET 256

/** Lookup key: a MAC address in a broadcast domain (VLAN id, 0 = none). */
struct hv_fdb_key {
	struct rte_ether_addr mac;
	uint16_t vlan;
} __rte_aligned(2);

/** Table configuration. */
struct hv_fdb_conf {
	uint32_t capacity;        /**< MAC addresses in all */
	uint16_t max_ports;       /**< port indices are 0..max_ports-1 */
	uint32_t max_per_port;    /**< MACs one port may own (0: no limit) */
	uint64_t age_ms;          /**< idle time before an entry goes */
	struct rte_rcu_qsbr *rcu; /**< the readers' quiescent-state variable (may be NULL
				     when no other thread reads) */
	int socket;               /**< NUMA socket */
};

/** Counters (control thread). */
struct hv_fdb_stats {
	uint64_t learned;        /**< new entries */
	uint64_t moved;          /**< entries that changed port */
	uint64_t aged;           /**< entries removed by ageing */
	uint64_t limit_refused;  /**< not learned: the port owns max_per_port MACs (refused
				     by a PMD or the control thread) */
	uint64_t budget_refused; /**< not learned: the port had HV_FDB_LEARN_BUDGET
				      requests queued (refused by a PMD) */
	uint64_t table_full;     /**< not learned: no room */
	uint64_t queue_full;     /**< learn requests lost: the control thread lagged */
	uint64_t static_kept;    /**< learn requests that would have moved a static entry */
};

/** Learn requests a PMD refused for one port, in counters of the caller's. */
struct hv_fdb_refused {
	uint64_t limit;  /**< the port owns max_per_port MACs */
	uint64_t budget; /**< the port had HV_FDB_LEARN_BUDGET requests queued */
};

struct hv_fdb;

/** Create a table; NULL with rte_errno set on failure. */
struct hv_fdb *hv_fdb_create(const char *name, const struct hv_fdb_conf *conf);

/** Free a table (no reader may use it any more). */
void hv_fdb_free(struct hv_fdb *fdb);

/**
 * Data path: destination ports of @n keys (HV_FDB_PORT_NONE when unknown).
 * @n at most 64.
 */
void hv_fdb_lookup_bulk(const struct hv_fdb *fdb, const struct hv_fdb_key **keys, unsigned int n,
			uint16_t *ports);

/**
 * Data path: as hv_fdb_lookup_bulk(), with each key's tag (0 when unknown or
 * learned without one) in @tags.
 */
void hv_fdb_lookup_bulk_tag(const struct hv_fdb *fdb, const struct hv_fdb_key **keys,
			    unsigned int n, uint16_t *ports, uint16_t *tags);

/**
 * Data path: @n source keys seen on @port at time @now (any monotonic unit
 * shared with hv_fdb_age(), e.g. TSC cycles converted to ms). Known keys on
 * the same port are marked seen (the next hv_fdb_age() takes that as its
 * time; one byte a key, written once between sweeps); the rest are queued for the control
 * thread, unless @port owns its limit of MACs or has HV_FDB_LEARN_BUDGET
 * requests queued: those are refused and added to @refused (written by the
 * caller's thread only, e.g. per PMD). Any thread; no locks. @n at most 64.
 */
void hv_fdb_learn_bulk(struct hv_fdb *fdb, const struct hv_fdb_key **keys, unsigned int n,
		       uint16_t port, uint64_t now_ms, struct hv_fdb_refused *refused);

/**
 * Data path: as hv_fdb_learn_bulk(), each key with a tag of the caller's
 * (tags[i]; e.g. the remote VTEP behind a tunnel port) stored with it. A
 * known key on @port with another tag is queued as a move. Any thread; no
 * locks. @n at most 64.
 */
void hv_fdb_learn_bulk_tag(struct hv_fdb *fdb, const struct hv_fdb_key **keys, unsigned int n,
			   uint16_t port, const uint16_t *tags, uint64_t now_ms,
			   struct hv_fdb_refused *refused);

/** Control thread: apply queued learn requests. @return requests handled. */
unsigned int hv_fdb_apply(struct hv_fdb *fdb);

/**
 * Control thread: install @key on @port with @tag as a static entry (a
 * control plane's: never aged, never moved by learning, installed whatever
 * the per-port limit), replacing what the table had for it. 0, or -ENOSPC (table full)
 * or -EINVAL.
 */
int
hv_fdb_set_static(struct hv_fdb *fdb, const struct hv_fdb_key *key, uint16_t port, uint16_t tag);

/**
 * Control thread: as hv_fdb_set_static(), but a frame from the MAC on
 * another port moves it there as a learned entry (a MAC that moved from a
 * remote VTEP to a local port, as EVPN's MAC mobility has it); frames on
 * @port itself do not change it. hv_fdb_del_static() removes it.
 */
int
hv_fdb_set_remote(struct hv_fdb *fdb, const struct hv_fdb_key *key, uint16_t port, uint16_t tag);

/** Control thread: remove the static entry of @key. 0, or -ENOENT (none, or not static). */
int hv_fdb_del_static(struct hv_fdb *fdb, const struct hv_fdb_key *key);

/** Control thread: remove entries idle for longer than the age. @return removed. */
unsigned int hv_fdb_age(struct hv_fdb *fdb, uint64_t now_ms);

/** Control thread: remove the entries of @port (HV_FDB_PORT_NONE: all). @return removed. */
unsigned int hv_fdb_flush(struct hv_fdb *fdb, uint16_t port);

/** Control thread: remove the entries of @port with tag @tag. @return removed. */
unsigned int hv_fdb_flush_tag(struct hv_fdb *fdb, uint16_t port, uint16_t tag);

/** Control thread: change the idle time and the per-port limit. */
void hv_fdb_set_limits(struct hv_fdb *fdb, uint64_t age_ms, uint32_t max_per_port);

/** One entry, for hv_fdb_walk(). */
struct hv_fdb_entry {
	struct hv_fdb_key key;
	uint16_t port;
	uint16_t tag;          /**< as learned (hv_fdb_learn_bulk_tag()), else 0 */
	bool is_static;        /**< installed by hv_fdb_set_static() or hv_fdb_set_remote()
				    (last_seen_ms 0) */
	uint64_t last_seen_ms; /**< as of the last hv_fdb_age() (a sighting since then is
				    dated by the next one) */
};

/** Control thread: call @fn for every entry until it returns non-zero. */
int hv_fdb_walk(const struct hv_fdb *fdb, int (*fn)(const struct hv_fdb_entry *e, void *arg),
		void *arg);

/** Entries owned by @port (HV_FDB_PORT_NONE: all). */
uint32_t hv_fdb_count(const struct hv_fdb *fdb, uint16_t port);

/** Memory of a table. */
struct hv_fdb_mem {
	uint64_t bytes;    /**< DPDK heap taken at creation (rte_hash, slots, ring), fixed */
	uint32_t capacity; /**< keys it holds */
	uint32_t entries;  /**< keys in it now */
};

/** Any thread: the table's memory (allocated whole at creation, whatever it holds). */
void hv_fdb_get_mem(const struct hv_fdb *fdb, struct hv_fdb_mem *out);

/** Counters snapshot. */
void hv_fdb_get_stats(const struct hv_fdb *fdb, struct hv_fdb_stats *out);

#ifdef __cplusplus
}
#endif

#endif
