/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_malloc.h>
#include <rte_ring_elem.h>

#include "hv_fdb.h"

#define LEARN_RING_SIZE 4096
#define APPLY_BURST 64
#define APPLY_MAX 8192 /* requests per hv_fdb_apply(), so one call stays short */

/* What a key maps to: published with the key, freed after a grace period. */
struct fdb_slot {
	uint16_t port;
	uint64_t last_seen_ms;
};

struct learn_req {
	struct hv_fdb_key key;
	uint16_t port;
	uint16_t pad[3];
	uint64_t now_ms;
};

/* Learn requests of one port on the ring: PMDs add, the control thread takes. */
struct port_queued {
	uint32_t n;
} __rte_cache_aligned;

struct hv_fdb {
	struct rte_hash *h;
	struct rte_ring *learn;
	struct rte_rcu_qsbr *rcu;
	bool own_rcu;
	struct fdb_slot *slots;
	uint32_t *free_slots; /* stack of free slot indices (control thread) */
	uint32_t n_free;
	uint32_t n_slots;
	uint32_t *per_port; /* MACs owned; the control thread writes, PMDs read */
	struct port_queued *queued;
	uint16_t max_ports;
	uint32_t max_per_port; /* the control thread writes, PMDs read */
	uint64_t age_ms;
	struct hv_fdb_stats stats;
	/* PMDs add to these */
	uint64_t queue_full;
	uint64_t pmd_limit_refused;
	uint64_t budget_refused;
};

/* Keys are 8 bytes: one load each, not memcmp (rte_hash's default for this size). */
static int
key_cmp(const void *a, const void *b, size_t len)
{
	uint64_t x, y;

	RTE_SET_USED(len);
	memcpy(&x, a, sizeof(x));
	memcpy(&y, b, sizeof(y));
	return x != y;
}

static struct fdb_slot *
slot_alloc(struct hv_fdb *fdb)
{
	if (fdb->n_free == 0)
		return NULL;
	return &fdb->slots[fdb->free_slots[--fdb->n_free]];
}

/* Called by rte_hash once no reader can hold the entry any more. */
static void
slot_free(void *p, void *key_data)
{
	struct hv_fdb *fdb = p;
	struct fdb_slot *s = key_data;

	fdb->free_slots[fdb->n_free++] = (uint32_t)(s - fdb->slots);
}

void
hv_fdb_free(struct hv_fdb *fdb)
{
	if (fdb == NULL)
		return;
	rte_hash_free(fdb->h);
	rte_ring_free(fdb->learn);
	if (fdb->own_rcu)
		rte_free(fdb->rcu);
	rte_free(fdb->slots);
	rte_free(fdb->free_slots);
	rte_free(fdb->per_port);
	rte_free(fdb->queued);
	rte_free(fdb);
}

static struct rte_rcu_qsbr *
rcu_create(int socket)
{
	size_t sz = rte_rcu_qsbr_get_memsize(1);
	struct rte_rcu_qsbr *v = rte_zmalloc_socket("hv_fdb_rcu", sz, RTE_CACHE_LINE_SIZE, socket);

	if (v != NULL && rte_rcu_qsbr_init(v, 1) != 0) {
		rte_free(v);
		return NULL;
	}
	return v;
}

struct hv_fdb *
hv_fdb_create(const char *name, const struct hv_fdb_conf *conf)
{
	char rname[RTE_RING_NAMESIZE];
	struct rte_hash_parameters hp = {
		.name = name,
		.entries = conf->capacity,
		.key_len = sizeof(struct hv_fdb_key),
		.hash_func = rte_hash_crc,
		.socket_id = conf->socket,
		/* one writer (the control thread), lock-free readers */
		.extra_flag = RTE_HASH_EXTRA_FLAGS_RW_CONCURRENCY_LF,
	};
	struct rte_hash_rcu_config rc = {.mode = RTE_HASH_QSBR_MODE_SYNC,
					 .free_key_data_func = slot_free};
	struct hv_fdb *fdb;

	if (conf->capacity < 8 || conf->max_ports == 0 || conf->max_ports == HV_FDB_PORT_NONE) {
		rte_errno = EINVAL;
		return NULL;
	}
	fdb = rte_zmalloc_socket("hv_fdb", sizeof(*fdb), RTE_CACHE_LINE_SIZE, conf->socket);
	if (fdb == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	fdb->max_ports = conf->max_ports;
	fdb->max_per_port = conf->max_per_port;
	fdb->age_ms = conf->age_ms;
	/* a slot is held until the grace period after its key's removal: keep spares */
	fdb->n_slots = conf->capacity * 2;
	fdb->slots = rte_zmalloc_socket("hv_fdb_slots", sizeof(*fdb->slots) * fdb->n_slots,
					RTE_CACHE_LINE_SIZE, conf->socket);
	fdb->free_slots =
		rte_malloc_socket("hv_fdb_free", sizeof(uint32_t) * fdb->n_slots, 0, conf->socket);
	fdb->per_port = rte_zmalloc_socket("hv_fdb_ports", sizeof(uint32_t) * conf->max_ports, 0,
					   conf->socket);
	fdb->queued = rte_zmalloc_socket("hv_fdb_queued", sizeof(*fdb->queued) * conf->max_ports,
					 RTE_CACHE_LINE_SIZE, conf->socket);
	snprintf(rname, sizeof(rname), "%s_learn", name);
	fdb->learn = rte_ring_create_elem(rname, sizeof(struct learn_req), LEARN_RING_SIZE,
					  conf->socket, RING_F_SC_DEQ);
	fdb->h = rte_hash_create(&hp);
	fdb->rcu = conf->rcu;
	if (fdb->rcu == NULL) {
		fdb->rcu = rcu_create(conf->socket);
		fdb->own_rcu = true;
	}
	if (fdb->slots == NULL || fdb->free_slots == NULL || fdb->per_port == NULL ||
	    fdb->queued == NULL || fdb->learn == NULL || fdb->h == NULL || fdb->rcu == NULL)
		goto fail;
	for (uint32_t i = 0; i < fdb->n_slots; i++)
		fdb->free_slots[i] = fdb->n_slots - 1 - i;
	fdb->n_free = fdb->n_slots;
	RTE_BUILD_BUG_ON(sizeof(struct hv_fdb_key) != sizeof(uint64_t));
	rte_hash_set_cmp_func(fdb->h, key_cmp);
	rc.v = fdb->rcu;
	rc.key_data_ptr = fdb;
	if (rte_hash_rcu_qsbr_add(fdb->h, &rc) != 0)
		goto fail;
	return fdb;
fail:
	hv_fdb_free(fdb);
	rte_errno = ENOMEM;
	return NULL;
}

/* Bulk lookup; a single key (the usual burst: one conversation) skips the bulk pipeline. */
static inline void
lookup(const struct hv_fdb *fdb, const struct hv_fdb_key **keys, unsigned int n, uint64_t *hits,
       void **data)
{
	if (n == 1) {
		*hits = rte_hash_lookup_data(fdb->h, keys[0], &data[0]) >= 0;
		return;
	}
	rte_hash_lookup_bulk_data(fdb->h, (const void **)keys, n, hits, data);
}

void
hv_fdb_lookup_bulk(const struct hv_fdb *fdb, const struct hv_fdb_key **keys, unsigned int n,
		   uint16_t *ports)
{
	void *data[RTE_HASH_LOOKUP_BULK_MAX];
	uint64_t hits = 0;

	RTE_ASSERT(n <= RTE_HASH_LOOKUP_BULK_MAX);
	if (n == 0)
		return;
	lookup(fdb, keys, n, &hits, data);
	for (unsigned int i = 0; i < n; i++) {
		const struct fdb_slot *s = data[i];

		ports[i] = (hits >> i) & 1 ? __atomic_load_n(&s->port, __ATOMIC_RELAXED)
					   : HV_FDB_PORT_NONE;
	}
}

/* Whether @port owns its limit of MACs (any thread: the control thread writes both). */
static inline bool
port_full(const struct hv_fdb *fdb, uint16_t port)
{
	uint32_t max = __atomic_load_n(&fdb->max_per_port, __ATOMIC_RELAXED);

	return max != 0 && __atomic_load_n(&fdb->per_port[port], __ATOMIC_RELAXED) >= max;
}

/* The control thread changes the MAC count of @port by @d (PMDs read it). */
static inline void
per_port_add(struct hv_fdb *fdb, uint16_t port, int d)
{
	__atomic_store_n(&fdb->per_port[port], fdb->per_port[port] + (uint32_t)d, __ATOMIC_RELAXED);
}

/*
 * Queue @nreq learn requests of @port within its budget; what is refused
 * goes to @refused and the table's counters.
 */
static void
learn_queue(struct hv_fdb *fdb, const struct learn_req *req, unsigned int nreq, uint16_t port,
	    struct hv_fdb_refused *refused)
{
	uint32_t *queued = &fdb->queued[port].n;
	unsigned int allowed = 0, sent = 0;
	uint32_t before;

	/* what the control thread would refuse need not take room on the ring */
	if (port_full(fdb, port)) {
		refused->limit += nreq;
		__atomic_fetch_add(&fdb->pmd_limit_refused, nreq, __ATOMIC_RELAXED);
		return;
	}
	/* claim first: PMDs sharing the port cannot together exceed the budget */
	before = __atomic_fetch_add(queued, nreq, __ATOMIC_RELAXED);
	if (before < HV_FDB_LEARN_BUDGET)
		allowed = RTE_MIN(nreq, HV_FDB_LEARN_BUDGET - before);
	if (allowed > 0)
		sent = rte_ring_mp_enqueue_burst_elem(fdb->learn, req, sizeof(req[0]), allowed,
						      NULL);
	if (sent < nreq)
		__atomic_fetch_sub(queued, nreq - sent, __ATOMIC_RELAXED);
	if (allowed < nreq) {
		refused->budget += nreq - allowed;
		__atomic_fetch_add(&fdb->budget_refused, nreq - allowed, __ATOMIC_RELAXED);
	}
	if (sent < allowed)
		__atomic_fetch_add(&fdb->queue_full, allowed - sent, __ATOMIC_RELAXED);
}

void
hv_fdb_learn_bulk(struct hv_fdb *fdb, const struct hv_fdb_key **keys, unsigned int n, uint16_t port,
		  uint64_t now_ms, struct hv_fdb_refused *refused)
{
	void *data[RTE_HASH_LOOKUP_BULK_MAX];
	struct learn_req req[RTE_HASH_LOOKUP_BULK_MAX];
	uint64_t hits = 0;
	unsigned int nreq = 0;

	if (n == 0)
		return;
	lookup(fdb, keys, n, &hits, data);
	for (unsigned int i = 0; i < n; i++) {
		struct fdb_slot *s = data[i];

		if ((hits >> i) & 1 && __atomic_load_n(&s->port, __ATOMIC_RELAXED) == port) {
			/* known here: refresh, at most one write per millisecond */
			if (__atomic_load_n(&s->last_seen_ms, __ATOMIC_RELAXED) != now_ms)
				__atomic_store_n(&s->last_seen_ms, now_ms, __ATOMIC_RELAXED);
			continue;
		}
		/* a burst from one new MAC asks once */
		if (nreq > 0 && memcmp(&req[nreq - 1].key, keys[i], sizeof(*keys[i])) == 0)
			continue;
		req[nreq].key = *keys[i];
		req[nreq].port = port;
		req[nreq].now_ms = now_ms;
		nreq++;
	}
	/* known sources (the usual burst) end here */
	if (nreq == 0 || port >= fdb->max_ports)
		return;
	learn_queue(fdb, req, nreq, port, refused);
}

static void
learn_one(struct hv_fdb *fdb, const struct learn_req *r)
{
	struct fdb_slot *s;
	void *data;

	if (r->port >= fdb->max_ports)
		return;
	__atomic_fetch_sub(&fdb->queued[r->port].n, 1, __ATOMIC_RELAXED);
	if (rte_hash_lookup_data(fdb->h, &r->key, &data) >= 0) {
		s = data;
		if (s->port != r->port) {
			if (port_full(fdb, r->port)) {
				fdb->stats.limit_refused++;
				return;
			}
			per_port_add(fdb, s->port, -1);
			per_port_add(fdb, r->port, 1);
			__atomic_store_n(&s->port, r->port, __ATOMIC_RELAXED);
			fdb->stats.moved++;
		}
		if (r->now_ms > s->last_seen_ms)
			__atomic_store_n(&s->last_seen_ms, r->now_ms, __ATOMIC_RELAXED);
		return;
	}
	if (port_full(fdb, r->port)) {
		fdb->stats.limit_refused++;
		return;
	}
	s = slot_alloc(fdb);
	if (s == NULL) {
		fdb->stats.table_full++;
		return;
	}
	s->port = r->port;
	s->last_seen_ms = r->now_ms;
	/* the slot is complete before the key becomes visible */
	if (rte_hash_add_key_data(fdb->h, &r->key, s) != 0) {
		fdb->free_slots[fdb->n_free++] = (uint32_t)(s - fdb->slots);
		fdb->stats.table_full++;
		return;
	}
	per_port_add(fdb, r->port, 1);
	fdb->stats.learned++;
}

unsigned int
hv_fdb_apply(struct hv_fdb *fdb)
{
	struct learn_req req[APPLY_BURST];
	unsigned int done = 0, n;

	do {
		n = rte_ring_sc_dequeue_burst_elem(fdb->learn, req, sizeof(req[0]), APPLY_BURST,
						   NULL);
		for (unsigned int i = 0; i < n; i++)
			learn_one(fdb, &req[i]);
		done += n;
	} while (n == APPLY_BURST && done < APPLY_MAX);
	return done;
}

/* Remove every entry @match selects; slots come back after the grace period. */
static unsigned int
remove_if(struct hv_fdb *fdb, bool (*match)(const struct fdb_slot *s, uint64_t arg), uint64_t arg)
{
	const void *key;
	void *data;
	uint32_t next = 0;
	unsigned int removed = 0;

	while (rte_hash_iterate(fdb->h, &key, &data, &next) >= 0) {
		const struct fdb_slot *s = data;
		uint16_t port = s->port;

		if (!match(s, arg))
			continue;
		if (rte_hash_del_key(fdb->h, key) >= 0) {
			per_port_add(fdb, port, -1);
			removed++;
		}
	}
	return removed;
}

struct age_arg {
	uint64_t now_ms;
	uint64_t age_ms;
};

static bool
is_stale(const struct fdb_slot *s, uint64_t arg)
{
	const struct age_arg *a = (const struct age_arg *)(uintptr_t)arg;
	uint64_t seen = __atomic_load_n(&s->last_seen_ms, __ATOMIC_RELAXED);

	return a->now_ms > seen && a->now_ms - seen > a->age_ms;
}

unsigned int
hv_fdb_age(struct hv_fdb *fdb, uint64_t now_ms)
{
	struct age_arg a = {.now_ms = now_ms, .age_ms = fdb->age_ms};
	unsigned int n = remove_if(fdb, is_stale, (uint64_t)(uintptr_t)&a);

	fdb->stats.aged += n;
	return n;
}

static bool
on_port(const struct fdb_slot *s, uint64_t port)
{
	return port == HV_FDB_PORT_NONE || s->port == port;
}

unsigned int
hv_fdb_flush(struct hv_fdb *fdb, uint16_t port)
{
	return remove_if(fdb, on_port, port);
}

void
hv_fdb_set_limits(struct hv_fdb *fdb, uint64_t age_ms, uint32_t max_per_port)
{
	fdb->age_ms = age_ms;
	__atomic_store_n(&fdb->max_per_port, max_per_port, __ATOMIC_RELAXED);
}

int
hv_fdb_walk(const struct hv_fdb *fdb, int (*fn)(const struct hv_fdb_entry *e, void *arg), void *arg)
{
	const void *key;
	void *data;
	uint32_t next = 0;
	int rc;

	while (rte_hash_iterate(fdb->h, &key, &data, &next) >= 0) {
		const struct fdb_slot *s = data;
		struct hv_fdb_entry e = {
			.port = s->port,
			.last_seen_ms = __atomic_load_n(&s->last_seen_ms, __ATOMIC_RELAXED),
		};

		memcpy(&e.key, key, sizeof(e.key));
		rc = fn(&e, arg);
		if (rc != 0)
			return rc;
	}
	return 0;
}

uint32_t
hv_fdb_count(const struct hv_fdb *fdb, uint16_t port)
{
	if (port == HV_FDB_PORT_NONE)
		return (uint32_t)rte_hash_count(fdb->h);
	return port < fdb->max_ports ? fdb->per_port[port] : 0;
}

void
hv_fdb_get_stats(const struct hv_fdb *fdb, struct hv_fdb_stats *out)
{
	*out = fdb->stats;
	out->queue_full = __atomic_load_n(&fdb->queue_full, __ATOMIC_RELAXED);
	out->limit_refused += __atomic_load_n(&fdb->pmd_limit_refused, __ATOMIC_RELAXED);
	out->budget_refused = __atomic_load_n(&fdb->budget_refused, __ATOMIC_RELAXED);
}
