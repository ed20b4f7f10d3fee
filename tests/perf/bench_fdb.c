/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/fdb's data path alone, the way app/hvswitch's l2.c calls it, for
 * instruction and cache-miss counts per frame (valgrind --tool=cachegrind)
 * and a rough cycles-per-frame figure, without PMDs or vhost.
 *
 * usage: bench_fdb EAL-ARGS -- [MACS [FRAMES [CAPACITY]]]   (10, 1000000, 262144)
 *
 * The traffic is hv_pktgen's --src-macs MACS --dst-macs MACS: frame i comes
 * from source i mod MACS on port 0 and goes to destination i mod MACS,
 * learned on port 1; bursts of 32. Prints one "RESULT" line: TSC cycles
 * per frame, the minimum and the median over windows of 65536 frames (on a
 * shared host the minimum is the window nobody preempted).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_eal.h>

#include "hv_fdb.h"

#define BURST 32
#define WINDOW 65536
#define MAX_WINDOWS 4096

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static struct hv_fdb_key
mac_key(uint32_t tail)
{
	struct hv_fdb_key k = {.mac = {{0x02, 0, (uint8_t)(tail >> 24), (uint8_t)(tail >> 16),
					(uint8_t)(tail >> 8), (uint8_t)tail}}};

	return k;
}

/* Teach the table every source (port 0) and destination (port 1). */
static void
learn_all(struct hv_fdb *fdb, uint32_t macs)
{
	struct hv_fdb_refused refused = {0};

	for (uint32_t side = 0; side < 2; side++)
		for (uint32_t i = 0; i < macs; i += BURST) {
			struct hv_fdb_key k[BURST];
			const struct hv_fdb_key *kp[BURST];
			uint32_t n = RTE_MIN(macs - i, (uint32_t)BURST);

			for (uint32_t j = 0; j < n; j++) {
				k[j] = mac_key(side == 0 ? 2 * (i + j) + 1 : 2 * (i + j) + 2);
				kp[j] = &k[j];
			}
			hv_fdb_learn_bulk(fdb, kp, n, (uint16_t)side, 0, &refused);
			while (hv_fdb_apply(fdb) > 0)
				;
		}
}

int
main(int argc, char **argv)
{
	int eal = rte_eal_init(argc, argv);
	uint32_t macs, src = 0, dst = 0;
	uint64_t frames, t0, flooded = 0;
	static uint64_t win[MAX_WINDOWS];
	struct hv_fdb_mem mem;
	unsigned int nwin = 0;
	struct hv_fdb *fdb;
	struct hv_fdb_conf conf = {
		.capacity = 262144, .max_ports = 32, .age_ms = 3600 * 1000, .socket = 0};

	if (eal < 0)
		return 1;
	argc -= eal;
	argv += eal;
	macs = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 0) : 10;
	frames = argc > 2 ? strtoull(argv[2], NULL, 0) : 1000000;
	if (argc > 3)
		conf.capacity = (uint32_t)strtoul(argv[3], NULL, 0);
	frames = RTE_MIN(frames, (uint64_t)WINDOW * MAX_WINDOWS);
	if (macs == 0 || macs > conf.capacity / 2) {
		fprintf(stderr, "bench_fdb: MACS must be 1..%u\n", conf.capacity / 2);
		return 1;
	}
	fdb = hv_fdb_create("bench_fdb", &conf);
	if (fdb == NULL) {
		fprintf(stderr, "bench_fdb: no table\n");
		return 1;
	}
	learn_all(fdb, macs);
	t0 = rte_rdtsc();
	for (uint64_t f = 0; f < frames; f += BURST) {
		struct hv_fdb_key keys[2][BURST];
		const struct hv_fdb_key *s[BURST], *d[BURST];
		uint64_t last_s = 0, last_d = 0;
		uint16_t ports[BURST];
		unsigned int ns = 0, nd = 0;
		struct hv_fdb_refused refused = {0};

		/* as l2.c: keys in a row that repeat are looked up once */
		for (unsigned int i = 0; i < BURST; i++) {
			uint64_t ws, wd;

			keys[0][i] = mac_key(2 * src + 1);
			keys[1][i] = mac_key(2 * dst + 2);
			memcpy(&ws, &keys[0][i], sizeof(ws));
			memcpy(&wd, &keys[1][i], sizeof(wd));
			if (ns == 0 || ws != last_s)
				s[ns++] = &keys[0][i];
			if (nd == 0 || wd != last_d)
				d[nd++] = &keys[1][i];
			last_s = ws;
			last_d = wd;
			if (++src == macs)
				src = 0;
			if (++dst == macs)
				dst = 0;
		}
		hv_fdb_learn_bulk(fdb, s, ns, 0, (f / BURST) >> 8, &refused);
		hv_fdb_lookup_bulk(fdb, d, nd, ports);
		for (unsigned int i = 0; i < nd; i++)
			flooded += ports[i] != 1;
		if ((f + BURST) % WINDOW == 0) {
			uint64_t t = rte_rdtsc();

			win[nwin++] = t - t0;
			t0 = t;
		}
	}
	qsort(win, nwin, sizeof(win[0]), cmp_u64);
	hv_fdb_get_mem(fdb, &mem);
	printf("RESULT macs=%u frames=%" PRIu64 " cycles_per_frame_min=%.1f"
	       " cycles_per_frame_median=%.1f not_port1=%" PRIu64
	       " entries=%u capacity=%u mem_bytes=%" PRIu64 "\n",
	       macs, frames, nwin ? (double)win[0] / WINDOW : 0.0,
	       nwin ? (double)win[nwin / 2] / WINDOW : 0.0, flooded, mem.entries, mem.capacity,
	       mem.bytes);
	hv_fdb_free(fdb);
	rte_eal_cleanup();
	return flooded == 0 ? 0 : 1;
}
