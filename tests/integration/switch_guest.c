/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The switch tests' guests (switch_harness.h, "guests"): virtio-user ethdevs
 * of the test process that send numbered frames whose bytes can be rebuilt
 * from the id, and record what reaches them.
 */
#include "switch_harness.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_bus_vdev.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#define ETH_TYPE_TEST 0x88b5 /* local experimental */
#define MAGIC 0x48565354u    /* "HVST" */

const struct rte_ether_addr swh_bcast = {{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}};

static struct rte_mempool *guest_mp;
static struct guest *guests[SWH_MAX_GUESTS];
static unsigned int vdev_seq;

/* What was sent, by id: enough to rebuild the exact bytes. */
struct sent {
	struct rte_ether_addr dst, src;
	uint16_t tag;
	uint16_t tpid; /* of the tag */
	uint16_t len;
};
static struct sent sent[SWH_MAX_IDS];
static uint32_t next_id;
static uint16_t next_tpid = 0x8100; /* guest_send_tpid() */

int
swh_guests_init(void)
{
	guest_mp = rte_pktmbuf_pool_create("guests", 8191, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
					   rte_socket_id());
	if (guest_mp == NULL) {
		fprintf(stderr, "pool: %s\n", rte_strerror(rte_errno));
		return -1;
	}
	return 0;
}

void
swh_guests_fini(void)
{
	rte_mempool_free(guest_mp);
	guest_mp = NULL;
}

struct rte_ether_addr
swh_mac(uint8_t n)
{
	struct rte_ether_addr a = {{0x02, 0, 0, 0, 0, n}};

	return a;
}

int
guest_open(struct guest *g, const char *name, unsigned int idx, const char *sock, bool server)
{
	return guest_open_offloads(g, name, idx, sock, server, 0, 0);
}

struct rte_mempool *
swh_guest_pool(void)
{
	return guest_mp;
}

int
guest_open_offloads(struct guest *g, const char *name, unsigned int idx, const char *sock,
		    bool server, uint64_t rx_offloads, uint64_t tx_offloads)
{
	struct rte_eth_conf conf = {.intr_conf = {.lsc = server ? 1 : 0},
				    .rxmode = {.offloads = rx_offloads},
				    .txmode = {.offloads = tx_offloads}};
	struct rte_ether_addr want = swh_mac((uint8_t)idx), got;
	int rc;

	memset(g, 0, sizeof(*g));
	snprintf(g->name, sizeof(g->name), "%s", name);
	snprintf(g->vdev, sizeof(g->vdev), "net_virtio_user%u", vdev_seq++);
	/* HV_TEST_VU_ARGS: more virtio-user devargs for every guest (e.g. packed_vq=1) */
	snprintf(g->devargs, sizeof(g->devargs),
		 "path=%s,queues=1,queue_size=256,mac=02:00:00:00:00:%02x%s%s%s", sock, idx,
		 server ? ",server=1" : "", getenv("HV_TEST_VU_ARGS") ? "," : "",
		 getenv("HV_TEST_VU_ARGS") ? getenv("HV_TEST_VU_ARGS") : "");
	g->mac = want;
	rc = rte_vdev_init(g->vdev, g->devargs);
	if (rc != 0) {
		fprintf(stderr, "vdev %s %s: %d\n", g->vdev, g->devargs, rc);
		return rc;
	}
	g->open = true;
	rc = rte_eth_dev_get_port_by_name(g->vdev, &g->eth);
	if (rc == 0)
		rc = rte_eth_dev_configure(g->eth, 1, 1, &conf);
	if (rc == 0)
		rc = rte_eth_rx_queue_setup(g->eth, 0, 256, rte_socket_id(), NULL, guest_mp);
	if (rc == 0)
		rc = rte_eth_tx_queue_setup(g->eth, 0, 256, rte_socket_id(), NULL);
	if (rc == 0)
		rc = rte_eth_dev_start(g->eth);
	if (rc == 0)
		rc = rte_eth_macaddr_get(g->eth, &got);
	if (rc == 0 && !rte_is_same_ether_addr(&got, &want)) {
		fprintf(stderr, "%s: the mac devarg was not taken\n", name);
		rc = -1;
	}
	if (rc != 0) {
		fprintf(stderr, "ethdev %s: %d\n", g->vdev, rc);
		guest_close(g);
		return rc;
	}
	for (unsigned int i = 0; i < SWH_MAX_GUESTS; i++) {
		if (guests[i] == NULL) {
			guests[i] = g;
			break;
		}
	}
	return 0;
}

void
guest_close(struct guest *g)
{
	if (!g->open)
		return;
	for (unsigned int i = 0; i < SWH_MAX_GUESTS; i++)
		if (guests[i] == g)
			guests[i] = NULL;
	rte_eth_dev_stop(g->eth);
	rte_eth_dev_close(g->eth);
	rte_vdev_uninit(g->vdev);
	g->open = false;
}

void
swh_reset(void)
{
	for (unsigned int i = 0; i < SWH_MAX_GUESTS; i++)
		if (guests[i] != NULL)
			guests[i]->n_rx = 0;
	next_id = 0;
	next_tpid = 0x8100;
}

static uint8_t
pattern(uint32_t id, uint32_t i)
{
	return (uint8_t)(id * 37u + i * 11u + 5u);
}

/* The bytes of frame @id into @buf; returns its length. */
static uint16_t
build(uint32_t id, uint8_t *buf)
{
	const struct sent *s = &sent[id];
	uint16_t off = 12, n;

	memcpy(buf, &s->dst, 6);
	memcpy(buf + 6, &s->src, 6);
	if (s->tag != 0) {
		buf[off++] = (uint8_t)(s->tpid >> 8);
		buf[off++] = (uint8_t)s->tpid;
		buf[off++] = (uint8_t)(s->tag >> 8);
		buf[off++] = (uint8_t)s->tag;
	}
	buf[off++] = ETH_TYPE_TEST >> 8;
	buf[off++] = ETH_TYPE_TEST & 0xff;
	for (int k = 3; k >= 0; k--)
		buf[off++] = (uint8_t)(MAGIC >> (8 * k));
	for (int k = 3; k >= 0; k--)
		buf[off++] = (uint8_t)(id >> (8 * k));
	for (n = off; n < s->len; n++)
		buf[n] = pattern(id, n);
	return s->len;
}

uint16_t
swh_frame_bytes(uint32_t id, uint8_t *buf)
{
	ck_assert_uint_lt(id, next_id);
	return build(id, buf);
}

/* A new frame from @g (see guest_send()), recorded as sent; *@id is its id. */
static struct rte_mbuf *
frame_new(struct guest *g, const struct rte_ether_addr *dst, const struct rte_ether_addr *src,
	  uint16_t vlan_tag, uint32_t *id)
{
	struct rte_mbuf *m;
	uint8_t *p;

	*id = next_id++;
	ck_assert_msg(*id < SWH_MAX_IDS, "test sends too many frames");
	sent[*id] = (struct sent){
		.dst = *dst,
		.src = src ? *src : g->mac,
		.tag = vlan_tag,
		.tpid = next_tpid,
		.len = (uint16_t)(64 + (*id * 97u) % 1200), /* 64..1263 bytes */
	};
	m = rte_pktmbuf_alloc(guest_mp);
	ck_assert_ptr_nonnull(m);
	p = (uint8_t *)rte_pktmbuf_append(m, sent[*id].len);
	ck_assert_ptr_nonnull(p);
	build(*id, p);
	return m;
}

uint32_t
guest_send(struct guest *g, const struct rte_ether_addr *dst, const struct rte_ether_addr *src,
	   uint16_t vlan_tag)
{
	uint32_t id;
	struct rte_mbuf *m = frame_new(g, dst, src, vlan_tag, &id);
	uint64_t end = swh_now_ms() + SWH_TIMEOUT_MS;

	/* the ring frees as the switch consumes it: retry, receiving meanwhile */
	while (rte_eth_tx_burst(g->eth, 0, &m, 1) != 1) {
		if (swh_now_ms() > end) {
			rte_pktmbuf_free(m);
			ck_abort_msg("%s: frame %u not taken by the TX ring", g->name, id);
		}
		swh_poll();
	}
	return id;
}

uint32_t
guest_send_tpid(struct guest *g, const struct rte_ether_addr *dst, uint16_t tpid, uint16_t tci)
{
	uint32_t id;

	next_tpid = tpid;
	id = guest_send(g, dst, NULL, tci);
	next_tpid = 0x8100;
	return id;
}

void
guest_send_burst(struct guest *g, const struct rte_ether_addr *dst, unsigned int n, uint32_t *ids)
{
	struct rte_mbuf *m[SWH_MAX_BURST];
	uint16_t took;

	ck_assert_uint_le(n, SWH_MAX_BURST);
	for (unsigned int i = 0; i < n; i++)
		m[i] = frame_new(g, &dst[i], NULL, 0, &ids[i]);
	took = rte_eth_tx_burst(g->eth, 0, m, (uint16_t)n);
	if (took < n) {
		rte_pktmbuf_free_bulk(m + took, n - took);
		ck_abort_msg("%s: the TX ring took %u of a burst of %u", g->name, took, n);
	}
}

/* Copy a frame without its 802.1Q tag (if any); returns its length. */
static uint32_t
untag(const uint8_t *f, uint32_t len, uint8_t *out, uint16_t *vid)
{
	*vid = 0;
	if (len >= 18 && f[12] == 0x81 && f[13] == 0x00) {
		*vid = (uint16_t)((f[14] << 8 | f[15]) & 0xfff);
		memcpy(out, f, 12);
		memcpy(out + 12, f + 16, len - 16);
		return len - 4;
	}
	memcpy(out, f, len);
	return len;
}

static void
record(struct guest *g, struct rte_mbuf *m)
{
	uint8_t buf[2048], want[2048], got[2048], sent_bare[2048];
	struct rx_rec r = {.id = UINT32_MAX};
	const uint8_t *d;
	uint32_t off;

	if (m->pkt_len <= sizeof(buf)) {
		d = rte_pktmbuf_read(m, 0, m->pkt_len, buf);
		off = 12;
		if (m->pkt_len >= 22 && d[12] == 0x81 && d[13] == 0x00)
			off = 16;
		if (m->pkt_len >= off + 10 && d[off] == (ETH_TYPE_TEST >> 8) &&
		    d[off + 1] == (ETH_TYPE_TEST & 0xff) &&
		    ((uint32_t)d[off + 2] << 24 | (uint32_t)d[off + 3] << 16 |
		     (uint32_t)d[off + 4] << 8 | d[off + 5]) == MAGIC) {
			uint32_t id = (uint32_t)d[off + 6] << 24 | (uint32_t)d[off + 7] << 16 |
				      (uint32_t)d[off + 8] << 8 | d[off + 9];

			if (id < next_id) {
				uint16_t vid_sent;
				uint32_t n_got = untag(d, m->pkt_len, got, &r.tag);
				uint32_t n_sent =
					untag(want, build(id, want), sent_bare, &vid_sent);

				r.id = id;
				/* a switch may push or pop a tag; everything else is as sent */
				r.exact = n_got == n_sent && memcmp(got, sent_bare, n_got) == 0;
			}
		}
	}
	if (g->n_rx < SWH_MAX_RX)
		g->rx[g->n_rx++] = r;
}

uint16_t
guest_tag(const struct guest *g, uint32_t id)
{
	for (unsigned int i = 0; i < g->n_rx; i++)
		if (g->rx[i].id == id)
			return g->rx[i].tag;
	return UINT16_MAX;
}

unsigned int
swh_poll(void)
{
	unsigned int total = 0;

	for (unsigned int i = 0; i < SWH_MAX_GUESTS; i++) {
		struct guest *g = guests[i];
		struct rte_mbuf *pkts[32];
		uint16_t n;

		if (g == NULL)
			continue;
		n = rte_eth_rx_burst(g->eth, 0, pkts, RTE_DIM(pkts));
		for (uint16_t k = 0; k < n; k++) {
			record(g, pkts[k]);
			rte_pktmbuf_free(pkts[k]);
		}
		total += n;
	}
	return total;
}

unsigned int
guest_count(const struct guest *g, uint32_t id)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < g->n_rx; i++)
		n += g->rx[i].id == id;
	return n;
}

bool
guest_wait(struct guest *g, uint32_t id, unsigned int timeout_ms)
{
	uint64_t end = swh_now_ms() + timeout_ms;

	while (guest_count(g, id) == 0) {
		if (swh_now_ms() > end)
			return false;
		if (swh_poll() == 0)
			usleep(50); /* let the daemon's threads on this CPU run */
	}
	return true;
}

unsigned int
guest_bad(const struct guest *g)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < g->n_rx; i++)
		n += g->rx[i].id == UINT32_MAX || !g->rx[i].exact;
	return n;
}
