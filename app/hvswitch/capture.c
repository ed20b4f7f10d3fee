/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Packet capture, the control plane's half (doc/capture.rst): capture.start
 * publishes a struct sw_capture on the port (the PMDs copy frames into its
 * ring, dp_capture.c), and a writer thread of its own turns the copies into
 * pcapng on the stream socket the client passed. The daemon opens no file:
 * the client owns what it writes to (least privilege), and the socket tells
 * when it is gone.
 *
 * A capture ends when it has written its count, when the client shuts the
 * socket down or closes it, when the client reads nothing for
 * CAP_STALL_MS, when its port is deleted, or when the daemon stops. The
 * writer then takes the capture off the port (under sw.lock), waits a grace
 * period so that no PMD still copies into it, writes the statistics block and
 * frees everything. A reader slower than the traffic costs frames of the
 * capture (counted, in the statistics block), never a PMD's time.
 *
 * rte_pcapng (DPDK 22.11) is not used: it describes only ethdev ports (its
 * interface table is indexed by ethdev port id; vhost-user ports are not
 * ethdevs), takes no per-frame comment (the virtio-net header of offloaded
 * frames), and converts timestamps through unlocked shared state. The blocks
 * written here are the pcapng format's (draft-ietf-opsawg-pcapng).
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <rte_version.h>

#include "hv_ctl_api.h"
#include "hv_log.h"
#include "sw.h"

#define CAP_MAX 8         /* captures at once */
#define CAP_RING 2048     /* copies waiting for the writer */
#define CAP_MBUFS 4095    /* the copies' mbufs (a 64 KiB frame takes 33) */
#define CAP_STALL_MS 5000 /* a reader that takes nothing this long ends the capture */
#define CAP_BUF (256u << 10)

/* pcapng block types and option codes */
#define PCAPNG_SHB 0x0A0D0D0Au
#define PCAPNG_IDB 1u
#define PCAPNG_ISB 5u
#define PCAPNG_EPB 6u
#define OPT_END 0
#define OPT_COMMENT 1
#define SHB_USERAPPL 4
#define IF_NAME 2
#define IF_DESCRIPTION 3
#define IF_TSRESOL 9
#define EPB_FLAGS 2
#define EPB_QUEUE 6
#define ISB_STARTTIME 2
#define ISB_ENDTIME 3
#define ISB_IFRECV 4
#define ISB_IFDROP 5

struct cap_run {
	struct sw_capture *dp; /* published in port->cap */
	struct sw_port *port;  /* under sw.lock; NULL once taken off its port */
	char name[SW_NAME_MAX];
	int fd;
	uint64_t count; /* 0: no limit */
	uint64_t written;
	volatile bool stop; /* its port went, or the daemon stops */
	uint64_t tsc0, ns0, hz;
	uint8_t *buf;
	size_t len;
};

/* Under sw.lock. */
static struct cap_run *runs[CAP_MAX];
static unsigned int seq;

static uint64_t
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* A TSC reading as nanoseconds since the epoch (pcapng timestamps, if_tsresol 9). */
static uint64_t
tsc_ns(const struct cap_run *r, uint64_t tsc)
{
	uint64_t d = tsc > r->tsc0 ? tsc - r->tsc0 : 0;

	return r->ns0 + d / r->hz * 1000000000u + d % r->hz * 1000000000u / r->hz;
}

/* ---- pcapng blocks into r->buf ---- */

static void
put(struct cap_run *r, const void *p, size_t n)
{
	if (n == 0)
		return; /* opt_endofopt has no value (p NULL) */
	memcpy(r->buf + r->len, p, n);
	r->len += n;
}

static void
put32(struct cap_run *r, uint32_t v)
{
	put(r, &v, sizeof(v));
}

static void
put_opt(struct cap_run *r, uint16_t code, const void *p, uint16_t n)
{
	static const uint8_t zero[4];

	put(r, &code, 2);
	put(r, &n, 2);
	put(r, p, n);
	put(r, zero, (4 - n % 4) % 4);
}

/* A 64-bit time as two 32-bit words, high first (pcapng timestamps). */
static void
put_opt_time(struct cap_run *r, uint16_t code, uint64_t ns)
{
	uint32_t w[2] = {(uint32_t)(ns >> 32), (uint32_t)ns};

	put_opt(r, code, w, sizeof(w));
}

/* Start a block; block_end() writes its lengths. */
static size_t
block_start(struct cap_run *r, uint32_t type)
{
	size_t at = r->len;

	put32(r, type);
	put32(r, 0);
	return at;
}

static void
block_end(struct cap_run *r, size_t at)
{
	uint32_t len = (uint32_t)(r->len - at + 4);

	memcpy(r->buf + at + 4, &len, 4);
	put32(r, len);
}

static void
header(struct cap_run *r, uint32_t snaplen, uint8_t dirs)
{
	static const uint8_t tsresol = 9; /* nanoseconds */
	char app[96], desc[96];
	uint64_t section_len = UINT64_MAX;
	uint16_t ver[2] = {1, 0};
	size_t at;

	at = block_start(r, PCAPNG_SHB);
	put32(r, 0x1A2B3C4D);
	put(r, ver, sizeof(ver));
	put(r, &section_len, sizeof(section_len));
	snprintf(app, sizeof(app), "hvswitch %s (%s)", HV_VERSION, rte_version());
	put_opt(r, SHB_USERAPPL, app, (uint16_t)strlen(app));
	put_opt(r, OPT_END, NULL, 0);
	block_end(r, at);

	at = block_start(r, PCAPNG_IDB);
	put32(r, 1); /* LINKTYPE_ETHERNET, reserved 0 */
	put32(r, snaplen);
	put_opt(r, IF_NAME, r->name, (uint16_t)strlen(r->name));
	snprintf(desc, sizeof(desc), "hvswitch port %s, %s", r->name,
		 dirs == SW_CAP_RX   ? "rx: frames the switch received from it"
		 : dirs == SW_CAP_TX ? "tx: frames the switch delivered to it"
				     : "both directions");
	put_opt(r, IF_DESCRIPTION, desc, (uint16_t)strlen(desc));
	put_opt(r, IF_TSRESOL, &tsresol, 1);
	put_opt(r, OPT_END, NULL, 0);
	block_end(r, at);
}

/* An Enhanced Packet Block of copy @m (interface 0). */
static void
epb(struct cap_run *r, struct rte_mbuf *m)
{
	static const uint8_t zero[4];
	const struct sw_capture_meta *meta = sw_capture_meta(m);
	uint32_t caplen = m->pkt_len, flags = meta->dir == SW_CAP_RX ? 1 : 2;
	uint64_t ns = tsc_ns(r, meta->tsc);
	uint32_t queue = meta->queue;
	const void *data;
	size_t at;

	at = block_start(r, PCAPNG_EPB);
	put32(r, 0);
	put32(r, (uint32_t)(ns >> 32));
	put32(r, (uint32_t)ns);
	put32(r, caplen);
	put32(r, meta->orig_len);
	data = rte_pktmbuf_read(m, 0, caplen, r->buf + r->len);
	if (data != r->buf + r->len)
		memcpy(r->buf + r->len, data, caplen);
	r->len += caplen;
	put(r, zero, (4 - caplen % 4) % 4);
	/* inbound/outbound as the port sees it: what it sent is what the switch received */
	put_opt(r, EPB_FLAGS, &flags, sizeof(flags));
	put_opt(r, EPB_QUEUE, &queue, sizeof(queue));
	if (hv_offload_mbuf_has_hdr(m)) {
		const struct hv_offload_hdr *h = hv_offload_mbuf_hdr(m);
		char c[160];
		int n = snprintf(c, sizeof(c),
				 "virtio_net_hdr flags=0x%x gso_type=0x%x hdr_len=%u gso_size=%u "
				 "csum_start=%u csum_offset=%u",
				 h->flags, h->gso_type, h->hdr_len, h->gso_size, h->csum_start,
				 h->csum_offset);

		put_opt(r, OPT_COMMENT, c, (uint16_t)n);
	}
	put_opt(r, OPT_END, NULL, 0);
	block_end(r, at);
}

/* Room for one more block of the largest frame. */
static bool
room(const struct cap_run *r)
{
	return r->len + 65536 + 512 <= CAP_BUF;
}

/* ---- the stream ---- */

/* What the client did to its end of the socket. */
enum peer {
	PEER_READS, /* nothing: it reads on */
	PEER_STOP,  /* shut it down for writing (hvctl on Ctrl-C): end, with the statistics */
	PEER_GONE,  /* closed it, or the socket failed: end */
};

static enum peer
peer_state(int fd, int wait_ms)
{
	struct pollfd pf = {.fd = fd, .events = POLLRDHUP};

	if (poll(&pf, 1, wait_ms) <= 0)
		return PEER_READS;
	if ((pf.revents & (POLLHUP | POLLERR)) != 0)
		return PEER_GONE;
	return (pf.revents & POLLRDHUP) != 0 ? PEER_STOP : PEER_READS;
}

/*
 * Write r->buf whole, never blocking: a reader that takes nothing for
 * CAP_STALL_MS, or a gone one, ends the capture (false).
 */
static bool
flush(struct cap_run *r)
{
	uint64_t last = mono_ms();
	size_t off = 0;

	while (off < r->len) {
		ssize_t n = send(r->fd, r->buf + off, r->len - off, MSG_DONTWAIT | MSG_NOSIGNAL);
		struct pollfd pf = {.fd = r->fd, .events = POLLOUT};

		if (n > 0) {
			off += (size_t)n;
			last = mono_ms();
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
			return false;
		if (mono_ms() - last >= CAP_STALL_MS) {
			HV_LOG(WARNING, "capture of %s: the reader took nothing for %u ms: ended",
			       r->name, CAP_STALL_MS);
			return false;
		}
		if (poll(&pf, 1, 100) > 0 && (pf.revents & (POLLERR | POLLHUP)) != 0)
			return false;
	}
	r->len = 0;
	return true;
}

static void
sum(const struct sw_capture *c, uint64_t *captured, uint64_t *dropped)
{
	*captured = *dropped = 0;
	for (unsigned int i = 0; i < SW_MAX_PMDS; i++) {
		*captured += __atomic_load_n(&c->cnt[i].captured, __ATOMIC_RELAXED);
		*dropped += __atomic_load_n(&c->cnt[i].dropped, __ATOMIC_RELAXED);
	}
}

/* Take the capture off its port, wait until no PMD copies into it, end the stream, free it. */
static void
finish(struct cap_run *r, bool stream_ok)
{
	struct rte_mbuf *m[SW_BURST];
	uint64_t captured, dropped, left = 0, end_ns;
	unsigned int n;
	size_t at;

	pthread_mutex_lock(&sw.lock);
	if (r->port != NULL) {
		__atomic_store_n(&r->port->cap, NULL, __ATOMIC_RELEASE);
		r->port = NULL;
	}
	pthread_mutex_unlock(&sw.lock);
	rte_rcu_qsbr_synchronize(sw.dp.rcu, RTE_QSBR_THRID_INVALID);
	/* what was captured before the end is written (a stop asked for), or freed */
	while ((n = rte_ring_sc_dequeue_burst(r->dp->ring, (void **)m, RTE_DIM(m), NULL)) > 0) {
		for (unsigned int i = 0; i < n; i++) {
			if (stream_ok && (r->count == 0 || r->written < r->count) &&
			    (room(r) || (stream_ok = flush(r)))) {
				epb(r, m[i]);
				r->written++;
			} else {
				left++;
			}
		}
		rte_pktmbuf_free_bulk(m, n);
	}
	sum(r->dp, &captured, &dropped);
	end_ns = tsc_ns(r, rte_rdtsc());
	if (stream_ok) {
		uint64_t seen = captured + dropped;

		at = block_start(r, PCAPNG_ISB);
		put32(r, 0);
		put32(r, (uint32_t)(end_ns >> 32));
		put32(r, (uint32_t)end_ns);
		put_opt_time(r, ISB_STARTTIME, r->ns0);
		put_opt_time(r, ISB_ENDTIME, end_ns);
		put_opt(r, ISB_IFRECV, &seen, sizeof(seen));
		put_opt(r, ISB_IFDROP, &dropped, sizeof(dropped));
		put_opt(r, OPT_END, NULL, 0);
		block_end(r, at);
		flush(r);
	}
	HV_LOG(INFO,
	       "capture of %s ended: %" PRIu64 " frames written, %" PRIu64
	       " dropped (no room), %" PRIu64 " not written (after the end)",
	       r->name, r->written, dropped, left);
	shutdown(r->fd, SHUT_RDWR);
	close(r->fd);
	rte_ring_free(r->dp->ring);
	rte_mempool_free(r->dp->mp);
	rte_free(r->dp);
	free(r->buf);
	pthread_mutex_lock(&sw.lock);
	for (unsigned int i = 0; i < CAP_MAX; i++)
		if (runs[i] == r)
			runs[i] = NULL;
	pthread_mutex_unlock(&sw.lock);
	free(r);
}

static void *
writer(void *arg)
{
	struct cap_run *r = arg;
	struct rte_mbuf *m[SW_BURST];
	enum peer peer = PEER_READS;
	bool ok = flush(r); /* the header */

	while (ok && peer == PEER_READS && !r->stop && (r->count == 0 || r->written < r->count)) {
		unsigned int n =
			rte_ring_sc_dequeue_burst(r->dp->ring, (void **)m, RTE_DIM(m), NULL);

		if (n == 0) {
			peer = peer_state(r->fd, 10);
			continue;
		}
		for (unsigned int i = 0; i < n; i++) {
			if (!room(r) && !(ok = flush(r)))
				break;
			if (r->count == 0 || r->written < r->count) {
				epb(r, m[i]);
				r->written++;
			}
		}
		rte_pktmbuf_free_bulk(m, n);
		ok = ok && flush(r);
		peer = peer_state(r->fd, 0);
	}
	finish(r, ok && peer != PEER_GONE);
	return NULL;
}

int
sw_capture_start(struct sw_port *p, int fd, uint8_t dirs, uint64_t count, uint32_t snaplen,
		 char *err, size_t errlen)
{
	const char *cmd = HV_CTL_CMD(CAPTURE_START);
	struct cap_run *r = NULL;
	struct timespec ts;
	char name[RTE_RING_NAMESIZE];
	unsigned int slot = CAP_MAX;
	pthread_t tid;

	/*
	 * First: the end of the stream is how the client stops the capture, and
	 * closing any other kind might make the close below wait.
	 */
	if (!hv_ctl_fd_is_unix_stream(fd)) {
		snprintf(err, errlen, "%s: the descriptor passed is not an AF_UNIX stream socket",
			 cmd);
		goto fail;
	}
	for (unsigned int i = 0; i < CAP_MAX; i++) {
		if (runs[i] != NULL && runs[i]->port == p) {
			snprintf(err, errlen, "%s: port %s is being captured already", cmd,
				 p->conf.name);
			goto fail;
		}
		if (runs[i] == NULL && slot == CAP_MAX)
			slot = i;
	}
	if (!p->running) {
		snprintf(err, errlen, "%s: port %s is not running", cmd, p->conf.name);
		goto fail;
	}
	if (slot == CAP_MAX) {
		snprintf(err, errlen, "%s: %u captures run already (the most at once)", cmd,
			 CAP_MAX);
		goto fail;
	}
	if (sw_capture_meta_register() != 0) {
		snprintf(err, errlen, "%s: no mbuf dynfield: %s", cmd, rte_strerror(rte_errno));
		goto fail;
	}
	r = calloc(1, sizeof(*r));
	if (r == NULL || (r->buf = malloc(CAP_BUF)) == NULL ||
	    (r->dp = rte_zmalloc("sw_capture", sizeof(*r->dp), RTE_CACHE_LINE_SIZE)) == NULL)
		goto nomem;
	seq++;
	snprintf(name, sizeof(name), "hvcap_r%u", seq);
	r->dp->ring = rte_ring_create(name, CAP_RING, SOCKET_ID_ANY, RING_F_SC_DEQ);
	snprintf(name, sizeof(name), "hvcap_m%u", seq);
	r->dp->mp = rte_pktmbuf_pool_create(name, CAP_MBUFS, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
					    SOCKET_ID_ANY);
	if (r->dp->ring == NULL || r->dp->mp == NULL)
		goto nomem;
	r->dp->snaplen = snaplen;
	r->dp->dirs = dirs;
	r->port = p;
	r->fd = fd;
	r->count = count;
	snprintf(r->name, sizeof(r->name), "%s", p->conf.name);
	r->hz = rte_get_tsc_hz();
	r->tsc0 = rte_rdtsc();
	clock_gettime(CLOCK_REALTIME, &ts);
	r->ns0 = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	header(r, snaplen, dirs);
	if (rte_ctrl_thread_create(&tid, "hv-capture", NULL, writer, r) != 0) {
		snprintf(err, errlen, "%s: no thread for the writer", cmd);
		goto fail;
	}
	pthread_detach(tid);
	runs[slot] = r;
	/* from here the PMDs copy */
	__atomic_store_n(&p->cap, r->dp, __ATOMIC_RELEASE);
	HV_LOG(INFO, "capture of %s started (%s, count %" PRIu64 ", snaplen %u)", r->name,
	       dirs == SW_CAP_RX   ? "rx"
	       : dirs == SW_CAP_TX ? "tx"
				   : "both",
	       count, snaplen);
	return 0;
nomem:
	snprintf(err, errlen, "%s: no memory for the capture", cmd);
fail:
	if (r != NULL) {
		if (r->dp != NULL) {
			rte_ring_free(r->dp->ring);
			rte_mempool_free(r->dp->mp);
		}
		rte_free(r->dp);
		free(r->buf);
		free(r);
	}
	close(fd);
	return -1;
}

void
sw_capture_port_gone(struct sw_port *p)
{
	for (unsigned int i = 0; i < CAP_MAX; i++) {
		struct cap_run *r = runs[i];

		if (r != NULL && r->port == p) {
			__atomic_store_n(&p->cap, NULL, __ATOMIC_RELEASE);
			r->port = NULL;
			r->stop = true;
		}
	}
}

void
sw_capture_fini(void)
{
	uint64_t end = mono_ms() + CAP_STALL_MS + 2000;
	bool busy = true;

	while (busy && mono_ms() < end) {
		busy = false;
		pthread_mutex_lock(&sw.lock);
		for (unsigned int i = 0; i < CAP_MAX; i++)
			if (runs[i] != NULL) {
				runs[i]->stop = true;
				busy = true;
			}
		pthread_mutex_unlock(&sw.lock);
		if (busy)
			usleep(10000);
	}
	if (busy)
		HV_LOG(ERR, "a capture writer did not end");
}
