/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: the from-guest offload path of lib/offload, what a guest
 * controls entirely: its virtio-net header and its frame.
 *
 * Input: [virtio-net header: 10 bytes, little endian as a guest writes it]
 *        [caps: 1 byte][piece: 1 byte][frame: up to 65553 bytes]
 *   caps   HV_OFFLOAD_CAP_* of the destination (low 6 bits)
 *   piece  the frame arrives as an mbuf chain of (piece * 64 + 1) byte pieces
 *          (0: one 2048-byte piece after another, as drivers/vhost builds it)
 * hv_offload_check() runs on it, then hv_offload_prepare() whatever the
 * check said (it must refuse what the check refuses). Invariants: a frame
 * the check refuses comes out as nothing; segments carry at most gso_size
 * payload bytes and their payloads add up to the frame's; no mbuf leaks.
 */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_mbuf.h>

#include "hv_offload.h"
#include "hv_test_fuzz.h"
#include "hv_test_mbuf.h"

#define IN_HDR 12
#define FRAME_MAX (65535 + 18)

static struct rte_mempool *mp;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The EAL's runtime directory is ours alone: remove it when the fuzzer exits. */
static void
remove_runtime_dir(void)
{
	const char *dir = rte_eal_get_runtime_dir();
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[PATH_MAX];

	while (d != NULL && (e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	if (d != NULL)
		closedir(d);
	rmdir(dir);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	/* no shared config: nothing another process could find or that outlives us */
	char prefix[32];
	char *eal[] = {
		"fuzz_offload",   "--no-pci",      "--no-huge",     "-m",   "256", "--no-shconf",
		"--no-telemetry", "--log-level=4", "--file-prefix", prefix, NULL};

	(void)argc, (void)argv;
	snprintf(prefix, sizeof(prefix), "fuzzoff%d", (int)getpid());
	FUZZ_ASSERT(rte_eal_init(10, eal) >= 0);
	atexit(remove_runtime_dir);
	FUZZ_ASSERT(hv_offload_mbuf_register() == 0);
	/* room for the largest frame in 1-byte pieces would be 64 K mbufs: pieces are >= 65 */
	mp = rte_pktmbuf_pool_create("fuzz", 4096, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	FUZZ_ASSERT(mp != NULL);
	return 0;
}

static uint16_t
le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct rte_mbuf *out[HV_OFFLOAD_MAX_SEGS];
	struct hv_offload_stats st = {0};
	struct hv_offload_hdr h;
	struct hv_offload_layout lo;
	struct rte_mbuf *m;
	enum hv_offload_drop rc;
	uint32_t caps, piece, len, total = 0;
	uint16_t n;

	if (size < IN_HDR + 14 || size - IN_HDR > FRAME_MAX)
		return 0;
	h.flags = data[0];
	h.gso_type = data[1];
	h.hdr_len = le16(data + 2);
	h.gso_size = le16(data + 4);
	h.csum_start = le16(data + 6);
	h.csum_offset = le16(data + 8);
	caps = data[10] & 0x3f;
	piece = data[11] == 0 ? 2048 : data[11] * 64u + 1;
	len = (uint32_t)(size - IN_HDR);
	m = hv_test_mbuf_chain(mp, data + IN_HDR, len, piece);
	FUZZ_ASSERT(m != NULL);
	*hv_offload_mbuf_hdr(m) = h;
	m->ol_flags |= hv_offload_hdr_flag;
	rc = hv_offload_check(m, &h, &lo);
	n = hv_offload_prepare(m, caps, mp, out, &st);
	if (rc != HV_OFFLOAD_DROP__NONE) {
		FUZZ_ASSERT(n == 0);
		FUZZ_ASSERT(st.drops[rc] == 1);
	}
	if (rc == HV_OFFLOAD_DROP__NONE && st.segmented == 1) {
		uint32_t hlen = lo.l2_len + lo.l3_len + lo.l4_len;

		FUZZ_ASSERT(n == st.segments);
		for (uint16_t i = 0; i < n; i++) {
			FUZZ_ASSERT(out[i]->pkt_len >= hlen);
			FUZZ_ASSERT(out[i]->pkt_len - hlen <= h.gso_size);
			total += out[i]->pkt_len - hlen;
		}
		FUZZ_ASSERT(total == lo.payload_len);
	}
	for (uint16_t i = 0; i < n; i++) {
		/* read every byte: a bad length or pointer shows under ASan */
		static uint8_t sink[FRAME_MAX];
		const void *p = rte_pktmbuf_read(out[i], 0, out[i]->pkt_len, sink);

		FUZZ_ASSERT(p != NULL);
		rte_pktmbuf_free(out[i]);
	}
	FUZZ_ASSERT(rte_mempool_in_use_count(mp) == 0);
	return 0;
}
