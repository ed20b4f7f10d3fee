/* SPDX-License-Identifier: BSD-3-Clause */
/* lib/fdb: learning, moves, limits, VLANs, ageing, flushing, concurrent readers. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "hv_fdb.h"

static struct hv_fdb *fdb;
static unsigned int seq;
/* what learn() was refused, per port */
static struct hv_fdb_refused refused[32];

static struct hv_fdb_key
key(uint32_t n, uint16_t vlan)
{
	struct hv_fdb_key k = {.mac = {{0x02, 0, (uint8_t)(n >> 24), (uint8_t)(n >> 16),
					(uint8_t)(n >> 8), (uint8_t)n}},
			       .vlan = vlan};

	return k;
}

static void
learn(uint32_t n, uint16_t vlan, uint16_t port, uint64_t now)
{
	struct hv_fdb_key k = key(n, vlan);
	const struct hv_fdb_key *kp = &k;

	hv_fdb_learn_bulk(fdb, &kp, 1, port, now, &refused[port]);
}

/* @n new keys from @first on @port, in bursts of 64 as a PMD hands them. */
static void
learn_many(uint32_t first, uint32_t n, uint16_t port, uint64_t now)
{
	struct hv_fdb_key k[64];
	const struct hv_fdb_key *kp[64];

	for (uint32_t done = 0; done < n;) {
		uint32_t b = RTE_MIN(n - done, 64u);

		for (uint32_t i = 0; i < b; i++) {
			k[i] = key(first + done + i, 0);
			kp[i] = &k[i];
		}
		hv_fdb_learn_bulk(fdb, kp, b, port, now, &refused[port]);
		done += b;
	}
}

static uint16_t
lookup(uint32_t n, uint16_t vlan)
{
	struct hv_fdb_key k = key(n, vlan);
	const struct hv_fdb_key *kp = &k;
	uint16_t port;

	hv_fdb_lookup_bulk(fdb, &kp, 1, &port);
	return port;
}

static void
make_ports(uint32_t capacity, uint32_t max_per_port, uint64_t age_ms, struct rte_rcu_qsbr *rcu,
	   uint16_t max_ports)
{
	char name[32];
	struct hv_fdb_conf c = {.capacity = capacity,
				.max_ports = max_ports,
				.max_per_port = max_per_port,
				.age_ms = age_ms,
				.rcu = rcu,
				.socket = SOCKET_ID_ANY};

	snprintf(name, sizeof(name), "fdb%u", seq++);
	fdb = hv_fdb_create(name, &c);
	ck_assert_ptr_nonnull(fdb);
	memset(refused, 0, sizeof(refused));
}

static void
make(uint32_t capacity, uint32_t max_per_port, uint64_t age_ms, struct rte_rcu_qsbr *rcu)
{
	make_ports(capacity, max_per_port, age_ms, rcu, 8);
}

static void
teardown(void)
{
	hv_fdb_free(fdb);
	fdb = NULL;
}

static void
setup(void)
{
	make(1024, 0, 1000, NULL);
}

START_TEST(learn_then_lookup)
{
	struct hv_fdb_stats st;

	learn(1, 0, 3, 10);
	/* learning goes through the control thread */
	ck_assert_uint_eq(lookup(1, 0), HV_FDB_PORT_NONE);
	ck_assert_uint_eq(hv_fdb_apply(fdb), 1);
	ck_assert_uint_eq(lookup(1, 0), 3);
	ck_assert_uint_eq(lookup(2, 0), HV_FDB_PORT_NONE);
	/* seen again on the same port: refreshed in place, nothing queued */
	learn(1, 0, 3, 20);
	ck_assert_uint_eq(hv_fdb_apply(fdb), 0);
	hv_fdb_get_stats(fdb, &st);
	ck_assert_uint_eq(st.learned, 1);
	ck_assert_uint_eq(hv_fdb_count(fdb, 3), 1);
}
END_TEST

START_TEST(mac_moves)
{
	struct hv_fdb_stats st;

	learn(7, 0, 1, 10);
	hv_fdb_apply(fdb);
	learn(7, 0, 2, 11);
	hv_fdb_apply(fdb);
	ck_assert_uint_eq(lookup(7, 0), 2);
	ck_assert_uint_eq(hv_fdb_count(fdb, 1), 0);
	ck_assert_uint_eq(hv_fdb_count(fdb, 2), 1);
	hv_fdb_get_stats(fdb, &st);
	ck_assert_uint_eq(st.moved, 1);
}
END_TEST

static void
learn_tag(uint32_t n, uint16_t port, uint16_t tag, uint64_t now)
{
	struct hv_fdb_key k = key(n, 0);
	const struct hv_fdb_key *kp = &k;

	hv_fdb_learn_bulk_tag(fdb, &kp, 1, port, &tag, now, &refused[port]);
}

static uint16_t
lookup_tag(uint32_t n, uint16_t *tag)
{
	struct hv_fdb_key k = key(n, 0);
	const struct hv_fdb_key *kp = &k;
	uint16_t port;

	hv_fdb_lookup_bulk_tag(fdb, &kp, 1, &port, tag);
	return port;
}

/* A tunnel port's MACs carry their remote VTEP: a move between VTEPs is a move. */
START_TEST(tags_follow_moves)
{
	struct hv_fdb_stats st;
	uint16_t tag = 99;

	learn_tag(5, 4, 7, 10);
	hv_fdb_apply(fdb);
	ck_assert_uint_eq(lookup_tag(5, &tag), 4);
	ck_assert_uint_eq(tag, 7);
	/* the same VTEP again: nothing queued */
	learn_tag(5, 4, 7, 11);
	ck_assert_uint_eq(hv_fdb_apply(fdb), 0);
	/* another VTEP behind the same port: moved, still one MAC of port 4 */
	learn_tag(5, 4, 9, 12);
	ck_assert_uint_eq(hv_fdb_apply(fdb), 1);
	ck_assert_uint_eq(lookup_tag(5, &tag), 4);
	ck_assert_uint_eq(tag, 9);
	ck_assert_uint_eq(hv_fdb_count(fdb, 4), 1);
	hv_fdb_get_stats(fdb, &st);
	ck_assert_uint_eq(st.moved, 1);
	/* to a local port, learned untagged: tag 0 */
	learn(5, 0, 2, 13);
	hv_fdb_apply(fdb);
	ck_assert_uint_eq(lookup_tag(5, &tag), 2);
	ck_assert_uint_eq(tag, 0);
	/* an unknown key: no port, tag 0 */
	ck_assert_uint_eq(lookup_tag(6, &tag), HV_FDB_PORT_NONE);
	ck_assert_uint_eq(tag, 0);
	/* flushing one VTEP's MACs leaves the port's others */
	learn_tag(10, 4, 7, 14);
	learn_tag(11, 4, 8, 14);
	hv_fdb_apply(fdb);
	ck_assert_uint_eq(hv_fdb_flush_tag(fdb, 4, 7), 1);
	ck_assert_uint_eq(lookup(10, 0), HV_FDB_PORT_NONE);
	ck_assert_uint_eq(lookup_tag(11, &tag), 4);
	ck_assert_uint_eq(tag, 8);
}
END_TEST

static int
first_entry(const struct hv_fdb_entry *e, void *arg)
{
	*(struct hv_fdb_entry *)arg = *e;
	return 1;
}

/* A control plane's entry: not aged, not moved by frames, removed only by it. */
START_TEST(static_entries)
{
	struct hv_fdb_key k = key(21, 0);
	struct hv_fdb_stats st;
	uint16_t tag = 0;

	ck_assert_int_eq(hv_fdb_set_static(fdb, &k, 4, 3), 0);
	ck_assert_uint_eq(lookup_tag(21, &tag), 4);
	ck_assert_uint_eq(tag, 3);
	/* a frame from it elsewhere does not move it */
	learn(21, 0, 2, 10);
	hv_fdb_apply(fdb);
	ck_assert_uint_eq(lookup(21, 0), 4);
	hv_fdb_get_stats(fdb, &st);
	ck_assert_uint_eq(st.static_kept, 1);
	ck_assert_uint_eq(st.moved, 0);
	/* long idle: still there */
	hv_fdb_age(fdb, 1000000);
	ck_assert_uint_eq(lookup(21, 0), 4);
	/* a learned entry is not a static one to delete; a static one goes */
	learn(22, 0, 2, 10);
	hv_fdb_apply(fdb);
	k = key(22, 0);
	ck_assert_int_eq(hv_fdb_del_static(fdb, &k), -ENOENT);
	k = key(21, 0);
	ck_assert_int_eq(hv_fdb_del_static(fdb, &k), 0);
	ck_assert_uint_eq(lookup(21, 0), HV_FDB_PORT_NONE);
	ck_assert_uint_eq(hv_fdb_count(fdb, 4), 0);
}
END_TEST

/* A remote entry (EVPN): not aged, kept against its own port's frames, moved by another's. */
START_TEST(remote_entries)
{
	struct hv_fdb_key k = key(31, 0);
	struct hv_fdb_entry e;
	struct hv_fdb_stats st;
	uint16_t tag = 0;

	ck_assert_int_eq(hv_fdb_set_remote(fdb, &k, 4, 3), 0);
	/* long idle: still there; a frame on its port from another VTEP: the control plane's wins */
	hv_fdb_age(fdb, 1000000);
	learn_tag(31, 4, 5, 1000001);
	hv_fdb_apply(fdb);
	ck_assert_uint_eq(lookup_tag(31, &tag), 4);
	ck_assert_uint_eq(tag, 3);
	hv_fdb_get_stats(fdb, &st);
	ck_assert_uint_eq(st.static_kept, 1);
	ck_assert_uint_eq(st.moved, 0);
	/* the MAC shows up on a local port: a move, learned (and aged) from then on */
	learn(31, 0, 2, 1000002);
	hv_fdb_apply(fdb);
	ck_assert_uint_eq(lookup(31, 0), 2);
	hv_fdb_get_stats(fdb, &st);
	ck_assert_uint_eq(st.moved, 1);
	ck_assert_uint_eq(hv_fdb_count(fdb, 4), 0);
	ck_assert_uint_eq(hv_fdb_count(fdb, 2), 1);
	ck_assert_int_eq(hv_fdb_walk(fdb, first_entry, &e), 1);
	ck_assert(!e.is_static);
	ck_assert_int_eq(hv_fdb_del_static(fdb, &k), -ENOENT);
	hv_fdb_age(fdb, 1000002 + 1001);
	ck_assert_uint_eq(lookup(31, 0), HV_FDB_PORT_NONE);
	/* and one the control plane deletes goes */
	ck_assert_int_eq(hv_fdb_set_remote(fdb, &k, 4, 3), 0);
	ck_assert_int_eq(hv_fdb_del_static(fdb, &k), 0);
	ck_assert_uint_eq(lookup(31, 0), HV_FDB_PORT_NONE);
}
END_TEST

START_TEST(vlans_are_separate)
{
	learn(5, 10, 1, 1);
	learn(5, 20, 2, 1);
	hv_fdb_apply(fdb);
	ck_assert_uint_eq(lookup(5, 10), 1);
	ck_assert_uint_eq(lookup(5, 20), 2);
	ck_assert_uint_eq(lookup(5, 0), HV_FDB_PORT_NONE);
}
END_TEST

START_TEST(per_port_limit)
{
	struct hv_fdb_stats st;

	teardown();
	make(1024, 3, 1000, NULL);
	for (uint32_t i = 0; i < 5; i++)
		learn(100 + i, 0, 4, 1);
	learn(200, 0, 5, 1);
	hv_fdb_apply(fdb);
	ck_assert_uint_eq(hv_fdb_count(fdb, 4), 3);
	ck_assert_uint_eq(hv_fdb_count(fdb, 5), 1);
	ck_assert_uint_eq(lookup(104, 0), HV_FDB_PORT_NONE);
	hv_fdb_get_stats(fdb, &st);
	ck_assert_uint_eq(st.limit_refused, 2);
	/* a full port cannot take over another port's MAC either */
	learn(200, 0, 4, 2);
	hv_fdb_apply(fdb);
	ck_assert_uint_eq(lookup(200, 0), 5);
	/* room again after a flush */
	ck_assert_uint_eq(hv_fdb_flush(fdb, 4), 3);
	learn(104, 0, 4, 3);
	hv_fdb_apply(fdb);
	ck_assert_uint_eq(lookup(104, 0), 4);
}
END_TEST

START_TEST(ageing)
{
	learn(1, 0, 1, 0);
	learn(2, 0, 1, 0);
	hv_fdb_apply(fdb);
	learn(2, 0, 1, 900); /* refreshed */
	ck_assert_uint_eq(hv_fdb_age(fdb, 500), 0);
	ck_assert_uint_eq(hv_fdb_age(fdb, 1001), 1);
	ck_assert_uint_eq(lookup(1, 0), HV_FDB_PORT_NONE);
	ck_assert_uint_eq(lookup(2, 0), 1);
	ck_assert_uint_eq(hv_fdb_age(fdb, 1901), 1);
	ck_assert_uint_eq(hv_fdb_count(fdb, HV_FDB_PORT_NONE), 0);
	ck_assert_uint_eq(hv_fdb_count(fdb, 1), 0);
}
END_TEST

static int
count_entries(const struct hv_fdb_entry *e, void *arg)
{
	unsigned int *n = arg;

	ck_assert(e->port == 1 || e->port == 2);
	(*n)++;
	return 0;
}

START_TEST(flush_and_walk)
{
	unsigned int n = 0;

	for (uint32_t i = 0; i < 10; i++)
		learn(i, 0, (uint16_t)(1 + i % 2), 1);
	hv_fdb_apply(fdb);
	hv_fdb_walk(fdb, count_entries, &n);
	ck_assert_uint_eq(n, 10);
	ck_assert_uint_eq(hv_fdb_flush(fdb, 1), 5);
	ck_assert_uint_eq(hv_fdb_count(fdb, HV_FDB_PORT_NONE), 5);
	ck_assert_uint_eq(hv_fdb_flush(fdb, HV_FDB_PORT_NONE), 5);
	ck_assert_uint_eq(hv_fdb_count(fdb, HV_FDB_PORT_NONE), 0);
}
END_TEST

START_TEST(learn_queue_overflow_is_counted)
{
	struct hv_fdb_stats st;

	/* many ports, each within its budget, together more than the ring holds */
	teardown();
	make_ports(16384, 0, 1000, NULL, 32);
	for (uint32_t i = 0; i < 6400; i++)
		learn(i, 0, (uint16_t)(i % 32), 1);
	hv_fdb_get_stats(fdb, &st);
	ck_assert_uint_ge(st.queue_full, 6400 - 4096);
	ck_assert_uint_eq(st.budget_refused, 0);
	while (hv_fdb_apply(fdb) > 0)
		;
	hv_fdb_get_stats(fdb, &st);
	ck_assert_uint_eq(st.learned + st.queue_full, 6400);
}
END_TEST

/*
 * One port spraying source addresses takes at most its budget of the ring:
 * another port's request still finds room, and the sprayer learns again once
 * the control thread took its requests.
 */
START_TEST(learn_budget_per_port)
{
	struct hv_fdb_stats st;
	unsigned int applied;

	teardown();
	make(16384, 0, 1000, NULL);
	learn_many(0, 5000, 1, 1);
	learn(9999, 0, 2, 1);
	applied = hv_fdb_apply(fdb);
	ck_assert_uint_eq(lookup(9999, 0), 2);
	ck_assert_uint_eq(applied, HV_FDB_LEARN_BUDGET + 1);
	ck_assert_uint_eq(refused[1].budget, 5000 - HV_FDB_LEARN_BUDGET);
	ck_assert_uint_eq(refused[2].budget + refused[2].limit, 0);
	ck_assert_uint_eq(hv_fdb_count(fdb, 1), HV_FDB_LEARN_BUDGET);
	hv_fdb_get_stats(fdb, &st);
	ck_assert_uint_eq(st.budget_refused, 5000 - HV_FDB_LEARN_BUDGET);
	ck_assert_uint_eq(st.queue_full, 0);
	/* applied: the budget is back */
	learn_many(20000, HV_FDB_LEARN_BUDGET, 1, 2);
	ck_assert_uint_eq(refused[1].budget, 5000 - HV_FDB_LEARN_BUDGET);
	ck_assert_uint_eq(hv_fdb_apply(fdb), HV_FDB_LEARN_BUDGET);
	ck_assert_uint_eq(hv_fdb_count(fdb, 1), 2 * HV_FDB_LEARN_BUDGET);
}
END_TEST

/* A port at its limit queues nothing: the control thread would refuse it. */
START_TEST(learn_refused_at_limit)
{
	struct hv_fdb_stats st;

	teardown();
	make(1024, 4, 1000, NULL);
	learn_many(0, 4, 3, 1);
	learn(500, 0, 4, 1);
	ck_assert_uint_eq(hv_fdb_apply(fdb), 5);
	learn_many(100, 10, 3, 2);
	learn(500, 0, 3, 2); /* nor a move to the full port */
	learn(0, 0, 3, 2);   /* its own: refreshed in place */
	ck_assert_uint_eq(hv_fdb_apply(fdb), 0);
	ck_assert_uint_eq(refused[3].limit, 11);
	ck_assert_uint_eq(lookup(500, 0), 4);
	hv_fdb_get_stats(fdb, &st);
	ck_assert_uint_eq(st.limit_refused, 11);
	/* below the limit again: learns */
	ck_assert_uint_eq(hv_fdb_flush(fdb, 3), 4);
	learn(100, 0, 3, 3);
	ck_assert_uint_eq(hv_fdb_apply(fdb), 1);
	ck_assert_uint_eq(lookup(100, 0), 3);
	ck_assert_uint_eq(refused[3].limit, 11);
}
END_TEST

START_TEST(bad_config_refused)
{
	struct hv_fdb_conf c = {.capacity = 0, .max_ports = 8};

	ck_assert_ptr_null(hv_fdb_create("bad", &c));
	c.capacity = 64;
	c.max_ports = 0;
	ck_assert_ptr_null(hv_fdb_create("bad", &c));
}
END_TEST

/* ---- a reader on another lcore while the table churns ---- */

static int
first_seen(const struct hv_fdb_entry *e, void *arg)
{
	*(uint64_t *)arg = e->last_seen_ms;
	return 1;
}

/* A PMD's sighting is a mark the next sweep dates; without sightings an entry ages. */
START_TEST(seen_dated_by_sweep)
{
	uint64_t seen = 0;

	learn(1, 0, 1, 0);
	hv_fdb_apply(fdb);
	learn(1, 0, 1, 500); /* seen on its port: marked, nothing queued */
	ck_assert_uint_eq(hv_fdb_apply(fdb), 0);
	ck_assert_uint_eq(hv_fdb_age(fdb, 800), 0);
	hv_fdb_walk(fdb, first_seen, &seen);
	ck_assert_uint_eq(seen, 800);
	/* the mark was taken: no sighting since 800 */
	ck_assert_uint_eq(hv_fdb_age(fdb, 1700), 0);
	ck_assert_uint_eq(hv_fdb_age(fdb, 1801), 1);
	ck_assert_uint_eq(lookup(1, 0), HV_FDB_PORT_NONE);
}
END_TEST

/* A slot freed and reused must not pass its old key's sighting to the new one. */
START_TEST(reused_slot_starts_unseen)
{
	learn(1, 0, 1, 0);
	hv_fdb_apply(fdb);
	learn(1, 0, 1, 10); /* marked seen */
	ck_assert_uint_eq(hv_fdb_flush(fdb, HV_FDB_PORT_NONE), 1);
	learn(2, 0, 1, 20); /* takes the freed slot (the free list is a stack) */
	hv_fdb_apply(fdb);
	ck_assert_uint_eq(lookup(2, 0), 1);
	/* never seen after learning at 20: idle for 1001 ms at 1021 */
	ck_assert_uint_eq(hv_fdb_age(fdb, 1021), 1);
	ck_assert_uint_eq(lookup(2, 0), HV_FDB_PORT_NONE);
}
END_TEST

/* After a move, the new port's frames refresh in place and lookups give the new port. */
START_TEST(moved_mac_served_from_new_port)
{
	learn(7, 0, 1, 10);
	hv_fdb_apply(fdb);
	ck_assert_uint_eq(lookup(7, 0), 1);
	learn(7, 0, 2, 11);
	ck_assert_uint_eq(lookup(7, 0), 1); /* the control thread has not moved it yet */
	ck_assert_uint_eq(hv_fdb_apply(fdb), 1);
	ck_assert_uint_eq(lookup(7, 0), 2);
	learn(7, 0, 2, 12);
	ck_assert_uint_eq(hv_fdb_apply(fdb), 0);
	/* and back: the old port's frames are a move again */
	learn(7, 0, 1, 13);
	ck_assert_uint_eq(hv_fdb_apply(fdb), 1);
	ck_assert_uint_eq(lookup(7, 0), 1);
	ck_assert_uint_eq(hv_fdb_count(fdb, 1), 1);
	ck_assert_uint_eq(hv_fdb_count(fdb, 2), 0);
}
END_TEST

static uint64_t
heap_used(void)
{
	struct rte_malloc_socket_stats st;
	uint64_t n = 0;

	for (unsigned int i = 0; i < rte_socket_count(); i++)
		if (rte_malloc_get_socket_stats(rte_socket_id_by_idx(i), &st) == 0)
			n += st.heap_allocsz_bytes;
	return n;
}

/* The memory reported is what creating the table took from the heap, and it is fixed. */
START_TEST(memory_reported)
{
	struct hv_fdb_mem m;
	uint64_t before, after;

	teardown();
	before = heap_used();
	make(65536, 0, 1000, NULL);
	after = heap_used();
	hv_fdb_get_mem(fdb, &m);
	ck_assert_uint_eq(m.bytes, after - before);
	/* at least rte_hash's 16-byte key entries and 64-byte buckets of 8 */
	ck_assert_uint_ge(m.bytes, 65536u * (16 + 8));
	ck_assert_uint_ge(m.capacity, 65536);
	ck_assert_uint_eq(m.entries, 0);
	/* within the learn budget (256 queued a port) at a time */
	for (uint32_t i = 0; i < 1000; i += 200) {
		learn_many(1 + i, 200, 1, 0);
		hv_fdb_apply(fdb);
	}
	hv_fdb_get_mem(fdb, &m);
	ck_assert_uint_eq(m.entries, 1000);
	ck_assert_uint_eq(m.bytes, after - before);
}
END_TEST

struct reader {
	struct rte_rcu_qsbr *rcu;
	volatile bool stop;
	uint64_t lookups;
	uint64_t wrong;
};

static int
reader_main(void *arg)
{
	struct reader *r = arg;

	rte_rcu_qsbr_thread_register(r->rcu, 0);
	rte_rcu_qsbr_thread_online(r->rcu, 0);
	while (!r->stop) {
		for (uint32_t i = 0; i < 256; i++) {
			uint16_t p = lookup(i, 0);

			/* key i only ever lives on port i % 4 */
			if (p != HV_FDB_PORT_NONE && p != i % 4)
				r->wrong++;
			r->lookups++;
		}
		rte_rcu_qsbr_quiescent(r->rcu, 0);
	}
	rte_rcu_qsbr_thread_offline(r->rcu, 0);
	rte_rcu_qsbr_thread_unregister(r->rcu, 0);
	return 0;
}

START_TEST(concurrent_reader)
{
	unsigned int lcore = rte_get_next_lcore(-1, 1, 0);
	size_t sz = rte_rcu_qsbr_get_memsize(1);
	struct reader r = {0};

	ck_assert_msg(lcore < RTE_MAX_LCORE, "needs a second lcore");
	r.rcu = rte_zmalloc("rcu", sz, RTE_CACHE_LINE_SIZE);
	ck_assert_int_eq(rte_rcu_qsbr_init(r.rcu, 1), 0);
	teardown();
	make(64, 0, 5, r.rcu);
	ck_assert_int_eq(rte_eal_remote_launch(reader_main, &r, lcore), 0);
	for (uint64_t t = 0; t < 2000; t++) {
		for (uint32_t i = (uint32_t)(t % 7); i < 256; i += 7)
			learn(i, 0, (uint16_t)(i % 4), t);
		hv_fdb_apply(fdb);
		hv_fdb_age(fdb, t);
	}
	r.stop = true;
	rte_eal_wait_lcore(lcore);
	ck_assert_uint_gt(r.lookups, 0);
	ck_assert_uint_eq(r.wrong, 0);
	teardown();
	rte_free(r.rcu);
}
END_TEST

static void *
suite(void)
{
	Suite *s = suite_create("fdb");
	TCase *t = tcase_create("fdb");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 60);
	tcase_add_test(t, learn_then_lookup);
	tcase_add_test(t, mac_moves);
	tcase_add_test(t, tags_follow_moves);
	tcase_add_test(t, static_entries);
	tcase_add_test(t, remote_entries);
	tcase_add_test(t, vlans_are_separate);
	tcase_add_test(t, per_port_limit);
	tcase_add_test(t, ageing);
	tcase_add_test(t, flush_and_walk);
	tcase_add_test(t, learn_queue_overflow_is_counted);
	tcase_add_test(t, learn_budget_per_port);
	tcase_add_test(t, learn_refused_at_limit);
	tcase_add_test(t, bad_config_refused);
	tcase_add_test(t, concurrent_reader);
	tcase_add_test(t, seen_dated_by_sweep);
	tcase_add_test(t, reused_slot_starts_unseen);
	tcase_add_test(t, moved_mac_served_from_new_port);
	tcase_add_test(t, memory_reported);
	suite_add_tcase(s, t);
	return s;
}

int
main(int argc, char **argv)
{
	SRunner *sr;
	int failed;

	if (rte_eal_init(argc, argv) < 0)
		return 1;
	sr = srunner_create(suite());
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	rte_eal_cleanup();
	return failed == 0 ? 0 : 1;
}
