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

/*
 * What a key maps to, in rte_hash's data word itself: the port in the low 16
 * bits, the slot index in the next 32, the entry's tag (a tunnel's remote
 * VTEP) in the top 16. A lookup reads port and tag from the key's own cache
 * line (no second line per frame), and a move replaces the word atomically
 * (rte_hash_add_key_data() on a present key).
 */
#define DATA_PORT_BITS 16
#define DATA_TAG_SHIFT 48
/* the bits that say where a key goes: port and tag */
#define DATA_DEST_MASK (UINT64_C(0xffff) << DATA_TAG_SHIFT | UINT64_C(0xffff))

_Static_assert(sizeof(void *) == sizeof(uint64_t), "hv_fdb: a data word holds 64 bits");

static inline void *
data_make(uint32_t slot, uint16_t port, uint16_t tag)
{
	return (void *)(uintptr_t)((uint64_t)tag << DATA_TAG_SHIFT |
				   (uint64_t)slot << DATA_PORT_BITS | port);
}

static inline uint64_t
dest_word(uint16_t port, uint16_t tag)
{
	return (uint64_t)tag << DATA_TAG_SHIFT | port;
}

static inline uint16_t
data_tag(const void *d)
{
	return (uint16_t)((uint64_t)(uintptr_t)d >> DATA_TAG_SHIFT);
}

static inline uint16_t
data_port(const void *d)
{
	return (uint16_t)(uintptr_t)d;
}

static inline uint32_t
data_slot(const void *d)
{
	return (uint32_t)((uint64_t)(uintptr_t)d >> DATA_PORT_BITS);
}

struct learn_req {
	struct hv_fdb_key key;
	uint16_t port;
	uint16_t tag;
	uint16_t pad[2];
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
	/*
	 * Per slot: when the control thread last knew the key seen (its own),
	 * and whether a PMD saw it since (PMDs set, the ageing sweep clears).
	 * One byte a key read per frame, written once per sweep: a write of
	 * the time per frame would dirty a cache line per MAC.
	 */
	uint64_t *last_seen_ms;
	uint8_t *seen;
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
	uint64_t mem_bytes; /* heap taken by hv_fdb_create() */
	uint32_t capacity;
};

/* last_seen_ms of an entry a control plane installed: never aged, never moved by learning */
#define STATIC_MS UINT64_MAX
/* ... never aged, but a frame from its MAC on another port moves it (hv_fdb_set_remote()) */
#define REMOTE_MS (UINT64_MAX - 1)

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

/*
 * The key's one word through the CRC32 instruction: rte_hash_crc() would
 * walk the 8 bytes in its general loop (about 40 instructions a key).
 */
static uint32_t
key_hash(const void *key, uint32_t len, uint32_t init)
{
	uint64_t w;

	RTE_SET_USED(len);
	memcpy(&w, key, sizeof(w));
	return rte_hash_crc_8byte(w, init);
}

/* A free slot index, or UINT32_MAX. */
static uint32_t
slot_alloc(struct hv_fdb *fdb)
{
	if (fdb->n_free == 0)
		return UINT32_MAX;
	return fdb->free_slots[--fdb->n_free];
}

/* Called by rte_hash once no reader can hold the entry any more. */
static void
slot_free(void *p, void *key_data)
{
	struct hv_fdb *fdb = p;

	fdb->free_slots[fdb->n_free++] = data_slot(key_data);
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
	rte_free(fdb->last_seen_ms);
	rte_free(fdb->seen);
	rte_free(fdb->free_slots);
	rte_free(fdb->per_port);
	rte_free(fdb->queued);
	rte_free(fdb);
}

/*
 * Heap bytes in use on all sockets: the table's footprint is the difference
 * across hv_fdb_create() (rte_hash's internals included), exact while no
 * other thread allocates meanwhile (hvswitch creates it at start-up).
 */
static uint64_t
heap_bytes(void)
{
	uint64_t n = 0;

	for (unsigned int i = 0; i < rte_socket_count(); i++) {
		struct rte_malloc_socket_stats st;

		if (rte_malloc_get_socket_stats(rte_socket_id_by_idx(i), &st) == 0)
			n += st.heap_allocsz_bytes;
	}
	return n;
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
		.hash_func = key_hash,
		.socket_id = conf->socket,
		/* one writer (the control thread), lock-free readers */
		.extra_flag = RTE_HASH_EXTRA_FLAGS_RW_CONCURRENCY_LF,
	};
	struct rte_hash_rcu_config rc = {.mode = RTE_HASH_QSBR_MODE_SYNC,
					 .free_key_data_func = slot_free};
	struct hv_fdb *fdb;
	uint64_t heap0 = heap_bytes();

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
	fdb->capacity = conf->capacity;
	fdb->max_per_port = conf->max_per_port;
	fdb->age_ms = conf->age_ms;
	/* a slot is held until the grace period after its key's removal: keep spares */
	fdb->n_slots = conf->capacity * 2;
	fdb->last_seen_ms = rte_zmalloc_socket("hv_fdb_seen_ms", sizeof(uint64_t) * fdb->n_slots,
					       RTE_CACHE_LINE_SIZE, conf->socket);
	fdb->seen =
		rte_zmalloc_socket("hv_fdb_seen", fdb->n_slots, RTE_CACHE_LINE_SIZE, conf->socket);
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
	if (fdb->last_seen_ms == NULL || fdb->seen == NULL || fdb->free_slots == NULL ||
	    fdb->per_port == NULL || fdb->queued == NULL || fdb->learn == NULL || fdb->h == NULL ||
	    fdb->rcu == NULL)
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
	fdb->mem_bytes = heap_bytes() - heap0;
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
	for (unsigned int i = 0; i < n; i++)
		ports[i] = (hits >> i) & 1 ? data_port(data[i]) : HV_FDB_PORT_NONE;
}

void
hv_fdb_lookup_bulk_tag(const struct hv_fdb *fdb, const struct hv_fdb_key **keys, unsigned int n,
		       uint16_t *ports, uint16_t *tags)
{
	void *data[RTE_HASH_LOOKUP_BULK_MAX];
	uint64_t hits = 0;

	RTE_ASSERT(n <= RTE_HASH_LOOKUP_BULK_MAX);
	if (n == 0)
		return;
	lookup(fdb, keys, n, &hits, data);
	for (unsigned int i = 0; i < n; i++) {
		bool hit = (hits >> i) & 1;

		ports[i] = hit ? data_port(data[i]) : HV_FDB_PORT_NONE;
		tags[i] = hit ? data_tag(data[i]) : 0;
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

/* Both learn calls; @tags NULL: every tag 0 (inlined apart, the untagged one as lean as before). */
static __rte_always_inline void
learn_bulk(struct hv_fdb *fdb, const struct hv_fdb_key **keys, unsigned int n, uint16_t port,
	   const uint16_t *tags, uint64_t now_ms, struct hv_fdb_refused *refused)
{
	void *data[RTE_HASH_LOOKUP_BULK_MAX];
	struct learn_req req[RTE_HASH_LOOKUP_BULK_MAX];
	uint64_t hits = 0;
	unsigned int nreq = 0;

	if (n == 0)
		return;
	lookup(fdb, keys, n, &hits, data);
	for (unsigned int i = 0; i < n; i++) {
		uint16_t tag = tags != NULL ? tags[i] : 0;

		if ((hits >> i) & 1 &&
		    ((uint64_t)(uintptr_t)data[i] & DATA_DEST_MASK) == dest_word(port, tag)) {
			/* known here: marked seen, one write per ageing sweep */
			uint8_t *seen = &fdb->seen[data_slot(data[i])];

			if (__atomic_load_n(seen, __ATOMIC_RELAXED) == 0)
				__atomic_store_n(seen, 1, __ATOMIC_RELAXED);
			continue;
		}
		/* a burst from one new MAC asks once */
		if (nreq > 0 && req[nreq - 1].tag == tag &&
		    memcmp(&req[nreq - 1].key, keys[i], sizeof(*keys[i])) == 0)
			continue;
		req[nreq].key = *keys[i];
		req[nreq].port = port;
		req[nreq].tag = tag;
		req[nreq].now_ms = now_ms;
		nreq++;
	}
	/* known sources (the usual burst) end here */
	if (nreq == 0 || port >= fdb->max_ports)
		return;
	learn_queue(fdb, req, nreq, port, refused);
}

void
hv_fdb_learn_bulk(struct hv_fdb *fdb, const struct hv_fdb_key **keys, unsigned int n, uint16_t port,
		  uint64_t now_ms, struct hv_fdb_refused *refused)
{
	learn_bulk(fdb, keys, n, port, NULL, now_ms, refused);
}

void
hv_fdb_learn_bulk_tag(struct hv_fdb *fdb, const struct hv_fdb_key **keys, unsigned int n,
		      uint16_t port, const uint16_t *tags, uint64_t now_ms,
		      struct hv_fdb_refused *refused)
{
	learn_bulk(fdb, keys, n, port, tags, now_ms, refused);
}

static void
learn_one(struct hv_fdb *fdb, const struct learn_req *r)
{
	uint32_t slot;
	void *data;

	if (r->port >= fdb->max_ports)
		return;
	__atomic_fetch_sub(&fdb->queued[r->port].n, 1, __ATOMIC_RELAXED);
	if (rte_hash_lookup_data(fdb->h, &r->key, &data) >= 0) {
		uint16_t old = data_port(data);

		slot = data_slot(data);
		if (fdb->last_seen_ms[slot] == STATIC_MS ||
		    (fdb->last_seen_ms[slot] == REMOTE_MS && old == r->port)) {
			/* a control plane's entry: what a frame says does not move it */
			fdb->stats.static_kept++;
			return;
		}
		if (old != r->port || data_tag(data) != r->tag) {
			if (old != r->port && port_full(fdb, r->port)) {
				fdb->stats.limit_refused++;
				return;
			}
			/* a present key's data word is replaced atomically */
			if (rte_hash_add_key_data(fdb->h, &r->key,
						  data_make(slot, r->port, r->tag)) != 0)
				return;
			if (old != r->port) {
				per_port_add(fdb, old, -1);
				per_port_add(fdb, r->port, 1);
			}
			fdb->stats.moved++;
		}
		/* a remote entry moved here is a learned one from now on */
		if (fdb->last_seen_ms[slot] == REMOTE_MS)
			fdb->last_seen_ms[slot] = r->now_ms;
		if (r->now_ms > fdb->last_seen_ms[slot])
			fdb->last_seen_ms[slot] = r->now_ms;
		return;
	}
	if (port_full(fdb, r->port)) {
		fdb->stats.limit_refused++;
		return;
	}
	slot = slot_alloc(fdb);
	if (slot == UINT32_MAX) {
		fdb->stats.table_full++;
		return;
	}
	/* a reused slot must not pass its predecessor's sighting on */
	fdb->last_seen_ms[slot] = r->now_ms;
	__atomic_store_n(&fdb->seen[slot], 0, __ATOMIC_RELAXED);
	if (rte_hash_add_key_data(fdb->h, &r->key, data_make(slot, r->port, r->tag)) != 0) {
		fdb->free_slots[fdb->n_free++] = slot;
		fdb->stats.table_full++;
		return;
	}
	per_port_add(fdb, r->port, 1);
	fdb->stats.learned++;
}

static int
set_cp(struct hv_fdb *fdb, const struct hv_fdb_key *key, uint16_t port, uint16_t tag, uint64_t mark)
{
	uint32_t slot;
	void *data;

	if (port >= fdb->max_ports)
		return -EINVAL;
	if (rte_hash_lookup_data(fdb->h, key, &data) >= 0) {
		slot = data_slot(data);
		if (rte_hash_add_key_data(fdb->h, key, data_make(slot, port, tag)) != 0)
			return -ENOSPC;
		if (data_port(data) != port) {
			per_port_add(fdb, data_port(data), -1);
			per_port_add(fdb, port, 1);
		}
		fdb->last_seen_ms[slot] = mark;
		return 0;
	}
	slot = slot_alloc(fdb);
	if (slot == UINT32_MAX)
		return -ENOSPC;
	fdb->last_seen_ms[slot] = mark;
	__atomic_store_n(&fdb->seen[slot], 0, __ATOMIC_RELAXED);
	if (rte_hash_add_key_data(fdb->h, key, data_make(slot, port, tag)) != 0) {
		fdb->free_slots[fdb->n_free++] = slot;
		return -ENOSPC;
	}
	per_port_add(fdb, port, 1);
	return 0;
}

int
hv_fdb_set_static(struct hv_fdb *fdb, const struct hv_fdb_key *key, uint16_t port, uint16_t tag)
{
	return set_cp(fdb, key, port, tag, STATIC_MS);
}

int
hv_fdb_set_remote(struct hv_fdb *fdb, const struct hv_fdb_key *key, uint16_t port, uint16_t tag)
{
	return set_cp(fdb, key, port, tag, REMOTE_MS);
}

int
hv_fdb_del_static(struct hv_fdb *fdb, const struct hv_fdb_key *key)
{
	void *data;

	if (rte_hash_lookup_data(fdb->h, key, &data) < 0 ||
	    fdb->last_seen_ms[data_slot(data)] < REMOTE_MS)
		return -ENOENT;
	if (rte_hash_del_key(fdb->h, key) < 0)
		return -ENOENT;
	per_port_add(fdb, data_port(data), -1);
	return 0;
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
remove_if(struct hv_fdb *fdb, bool (*match)(struct hv_fdb *fdb, const void *data, uint64_t arg),
	  uint64_t arg)
{
	const void *key;
	void *data;
	uint32_t next = 0;
	unsigned int removed = 0;

	while (rte_hash_iterate(fdb->h, &key, &data, &next) >= 0) {
		uint16_t port = data_port(data);

		if (!match(fdb, data, arg))
			continue;
		if (rte_hash_del_key(fdb->h, key) >= 0) {
			per_port_add(fdb, port, -1);
			removed++;
		}
	}
	return removed;
}

/* An entry idle for longer than the age; a PMD's sighting since the last sweep counts as now. */
static bool
is_stale(struct hv_fdb *fdb, const void *data, uint64_t now_ms)
{
	uint32_t slot = data_slot(data);
	uint64_t seen;

	/* exchanged, not stored: a sighting in between is not lost (read first: lines stay clean) */
	if (__atomic_load_n(&fdb->seen[slot], __ATOMIC_RELAXED) != 0 &&
	    __atomic_exchange_n(&fdb->seen[slot], 0, __ATOMIC_RELAXED) != 0 &&
	    now_ms > fdb->last_seen_ms[slot])
		fdb->last_seen_ms[slot] = now_ms;
	seen = fdb->last_seen_ms[slot];
	return seen < REMOTE_MS && now_ms > seen && now_ms - seen > fdb->age_ms;
}

unsigned int
hv_fdb_age(struct hv_fdb *fdb, uint64_t now_ms)
{
	unsigned int n = remove_if(fdb, is_stale, now_ms);

	fdb->stats.aged += n;
	return n;
}

static bool
on_port(struct hv_fdb *fdb, const void *data, uint64_t port)
{
	RTE_SET_USED(fdb);
	return port == HV_FDB_PORT_NONE || data_port(data) == port;
}

unsigned int
hv_fdb_flush(struct hv_fdb *fdb, uint16_t port)
{
	return remove_if(fdb, on_port, port);
}

static bool
on_port_tag(struct hv_fdb *fdb, const void *data, uint64_t dest)
{
	RTE_SET_USED(fdb);
	return ((uint64_t)(uintptr_t)data & DATA_DEST_MASK) == dest;
}

unsigned int
hv_fdb_flush_tag(struct hv_fdb *fdb, uint16_t port, uint16_t tag)
{
	return remove_if(fdb, on_port_tag, dest_word(port, tag));
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
		struct hv_fdb_entry e = {
			.port = data_port(data),
			.tag = data_tag(data),
			.last_seen_ms = fdb->last_seen_ms[data_slot(data)],
		};

		e.is_static = e.last_seen_ms >= REMOTE_MS;
		if (e.is_static)
			e.last_seen_ms = 0;

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

void
hv_fdb_get_mem(const struct hv_fdb *fdb, struct hv_fdb_mem *out)
{
	out->bytes = fdb->mem_bytes;
	out->capacity = fdb->capacity;
	out->entries = (uint32_t)rte_hash_count(fdb->h);
}
