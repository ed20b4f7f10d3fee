/* SPDX-License-Identifier: BSD-3-Clause */
#include "switch_harness.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rte_bus_vdev.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "hv_ctl.h"

#define ETH_TYPE_TEST 0x88b5 /* local experimental */
#define MAGIC 0x48565354u    /* "HVST" */

const struct rte_ether_addr swh_bcast = {{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}};

static struct rte_mempool *guest_mp;
static struct guest *guests[SWH_MAX_GUESTS];
static unsigned int vdev_seq, daemon_seq;

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

/* Daemons alive: killed (and their dirs removed) at exit whatever happens to the test. */
static struct hvsw *volatile live[8];

static void rm_dir(const char *path);

uint64_t
swh_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void
rm_eal_dir(const struct hvsw *d)
{
	char p[256];

	snprintf(p, sizeof(p), "/var/run/dpdk/%s", d->prefix);
	rm_dir(p);
}

static void
rm_runtime(const struct hvsw *d)
{
	rm_dir(d->dir);
	rm_eal_dir(d);
}

static void
kill_live(void)
{
	for (unsigned int i = 0; i < RTE_DIM(live); i++) {
		struct hvsw *d = live[i];

		if (d != NULL && d->pid > 0) {
			kill(d->pid, SIGKILL);
			waitpid(d->pid, NULL, 0);
			d->pid = 0;
			rm_runtime(d);
		}
		live[i] = NULL;
	}
}

static void
on_fatal_signal(int sig)
{
	kill_live();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void
live_set(struct hvsw *old, struct hvsw *d)
{
	for (unsigned int i = 0; i < RTE_DIM(live); i++) {
		if (live[i] == old) {
			live[i] = d;
			return;
		}
	}
}

/* ---- the daemon ---- */

void
hvsw_init(struct hvsw *d)
{
	memset(d, 0, sizeof(*d));
	d->ctl = -1;
	snprintf(d->dir, sizeof(d->dir), "/tmp/hvsw-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(d->dir));
	snprintf(d->prefix, sizeof(d->prefix), "hvsw%d_%u", getpid(), daemon_seq++);
	snprintf(d->sock, sizeof(d->sock), "%s/%s", d->dir, HV_CTL_SOCK_NAME);
	snprintf(d->config, sizeof(d->config), "%s/hv.json", d->dir);
	snprintf(d->log, sizeof(d->log), "%s/hvswitch.log", d->dir);
}

static void
print_log(const struct hvsw *d)
{
	char buf[4096];
	FILE *f = fopen(d->log, "r");
	size_t n;

	if (f == NULL)
		return;
	fprintf(stderr, "---- %s ----\n", d->log);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		fwrite(buf, 1, n, stderr);
	fprintf(stderr, "---- end of log ----\n");
	fclose(f);
}

int
hvsw_start(struct hvsw *d, const char *const *extra)
{
	const char *bin = getenv("HVSWITCH");
	const char *argv[32];
	unsigned int n = 0;
	pid_t parent = getpid(), pid;
	uint64_t t0, end;
	char err[256];

	if (bin == NULL)
		bin = "build/app/hvswitch/hvswitch";
	argv[n++] = bin;
	argv[n++] = "-l";
	argv[n++] = "0,1";
	argv[n++] = "--no-pci";
	argv[n++] = "--no-huge";
	argv[n++] = "-m";
	argv[n++] = "256";
	argv[n++] = "--file-prefix";
	argv[n++] = d->prefix;
	argv[n++] = "--";
	argv[n++] = "--config";
	argv[n++] = d->config;
	argv[n++] = "--run-dir";
	argv[n++] = d->dir;
	for (unsigned int i = 0; extra != NULL && extra[i] != NULL && n < RTE_DIM(argv) - 1; i++)
		argv[n++] = extra[i];
	argv[n] = NULL;

	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open(d->log, O_WRONLY | O_CREAT | O_APPEND, 0644);

		/* die with the test, even if it is killed */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		/* none of our sockets (guests, control) may leak into it */
		syscall(SYS_close_range, 3, ~0u, 0);
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		execv(bin, (char *const *)argv);
		_exit(127);
	}
	d->pid = pid;
	live_set(NULL, d);
	/* wait for the control socket to answer, or for the daemon to die */
	t0 = swh_now_ms();
	end = t0 + 20000;
	while (swh_now_ms() < end) {
		int st;

		if (waitpid(pid, &st, WNOHANG) == pid) {
			live_set(d, NULL);
			d->pid = 0;
			d->status = st;
			fprintf(stderr, "hvswitch exited during start (status 0x%x)\n", st);
			print_log(d);
			return -1;
		}
		if (access(d->sock, F_OK) == 0) {
			d->ctl = hv_ctl_connect(d->sock, err, sizeof(err));
			if (d->ctl >= 0 &&
			    hvsw_call(d, NULL, err, sizeof(err), "version", NULL) == 0) {
				if (swh_now_ms() - t0 > 2000)
					fprintf(stderr, "note: hvswitch took %u ms to answer\n",
						(unsigned int)(swh_now_ms() - t0));
				return 0;
			}
			if (d->ctl >= 0)
				close(d->ctl);
			d->ctl = -1;
		}
		usleep(10000);
	}
	fprintf(stderr, "hvswitch: control socket %s did not answer\n", d->sock);
	print_log(d);
	return -1;
}

int
hvsw_stop(struct hvsw *d)
{
	uint64_t end;
	int st = 0;

	if (d->ctl >= 0) {
		close(d->ctl);
		d->ctl = -1;
	}
	if (d->pid <= 0)
		return -1;
	kill(d->pid, SIGTERM);
	end = swh_now_ms() + 15000;
	while (waitpid(d->pid, &st, WNOHANG) == 0) {
		if (swh_now_ms() > end) {
			fprintf(stderr, "hvswitch %d ignored SIGTERM: killed\n", (int)d->pid);
			kill(d->pid, SIGKILL);
			waitpid(d->pid, &st, 0);
			break;
		}
		usleep(5000);
	}
	live_set(d, NULL);
	d->pid = 0;
	d->status = st;
	/* a restart takes a new prefix: this one's EAL directory is done with */
	rm_eal_dir(d);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		print_log(d);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void
rm_dir(const char *path)
{
	DIR *dir = opendir(path);
	struct dirent *e;
	char p[512];

	if (dir == NULL)
		return;
	while ((e = readdir(dir)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(p, sizeof(p), "%s/%s", path, e->d_name);
		unlink(p);
	}
	closedir(dir);
	rmdir(path);
}

void
hvsw_cleanup(struct hvsw *d)
{
	if (d->dir[0] == '\0')
		return;
	hvsw_stop(d);
	rm_runtime(d);
	d->dir[0] = '\0';
}

static int
vcall(struct hvsw *d, cJSON **res, char *err, size_t errlen, const char *cmd, const char *fmt,
      va_list ap)
{
	cJSON *args = NULL;

	if (res != NULL)
		*res = NULL;
	if (fmt != NULL) {
		char buf[1024];

		vsnprintf(buf, sizeof(buf), fmt, ap);
		args = cJSON_Parse(buf);
		if (args == NULL) {
			snprintf(err, errlen, "test bug: bad JSON %.200s", buf);
			return -1;
		}
	}
	if (d->ctl < 0) {
		cJSON_Delete(args);
		snprintf(err, errlen, "not connected");
		return -1;
	}
	return hv_ctl_call(d->ctl, cmd, args, res, err, errlen);
}

int
hvsw_call(struct hvsw *d, cJSON **res, char *err, size_t errlen, const char *cmd,
	  const char *args_fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, args_fmt);
	rc = vcall(d, res, err, errlen, cmd, args_fmt, ap);
	va_end(ap);
	return rc;
}

cJSON *
hvsw_ok(struct hvsw *d, const char *cmd, const char *args_fmt, ...)
{
	char err[512];
	cJSON *res;
	va_list ap;
	int rc;

	va_start(ap, args_fmt);
	rc = vcall(d, &res, err, sizeof(err), cmd, args_fmt, ap);
	va_end(ap);
	ck_assert_msg(rc == 0, "%s failed: %s", cmd, err);
	return res;
}

int
hvsw_raw(struct hvsw *d, const char *bytes, size_t len, char *line, size_t linelen)
{
	char err[256];
	int fd = hv_ctl_connect(d->sock, err, sizeof(err));
	size_t got = 0;

	if (fd < 0)
		return -1;
	if (send(fd, bytes, len, MSG_NOSIGNAL) != (ssize_t)len) {
		close(fd);
		return -1;
	}
	while (got + 1 < linelen) {
		ssize_t r = recv(fd, line + got, 1, 0);

		if (r <= 0 || line[got] == '\n')
			break;
		got++;
	}
	line[got] = '\0';
	close(fd);
	return got > 0 ? 0 : -1;
}

static const cJSON *
lookup(const cJSON *o, const char *path)
{
	char buf[128], *save = NULL, *tok;

	snprintf(buf, sizeof(buf), "%s", path);
	for (tok = strtok_r(buf, ".", &save); tok != NULL && o != NULL;
	     tok = strtok_r(NULL, ".", &save))
		o = cJSON_GetObjectItemCaseSensitive(o, tok);
	return o;
}

double
swh_num(const cJSON *o, const char *path)
{
	const cJSON *j = lookup(o, path);

	return cJSON_IsNumber(j) ? j->valuedouble : -1;
}

const char *
swh_str(const cJSON *o, const char *path)
{
	const cJSON *j = lookup(o, path);

	return cJSON_IsString(j) ? j->valuestring : NULL;
}

void
hvsw_add_port(struct hvsw *d, const char *name, const char *extra_json)
{
	cJSON_Delete(hvsw_ok(d, "port.add", "{\"name\":\"%s\",\"type\":\"vhost-user\"%s}", name,
			     extra_json ? extra_json : ""));
}

bool
hvsw_wait_up(struct hvsw *d, const char *name, unsigned int timeout_ms)
{
	uint64_t end = swh_now_ms() + timeout_ms;

	do {
		cJSON *r = hvsw_ok(d, "port.show", "{\"name\":\"%s\"}", name);
		const char *st = swh_str(r, "state");
		bool up = st != NULL && strcmp(st, "up") == 0;

		cJSON_Delete(r);
		if (up)
			return true;
		usleep(5000);
	} while (swh_now_ms() < end);
	return false;
}

double
hvsw_port_stat(struct hvsw *d, const char *name, const char *counter)
{
	cJSON *r = hvsw_ok(d, "port.show", "{\"name\":\"%s\"}", name);
	char path[64];
	double v;

	snprintf(path, sizeof(path), "stats.%s", counter);
	v = swh_num(r, path);
	cJSON_Delete(r);
	ck_assert_msg(v >= 0, "port.show %s: no stats.%s", name, counter);
	return v;
}

int
hvsw_fdb_has(struct hvsw *d, const struct rte_ether_addr *mac, const char *port)
{
	char m[RTE_ETHER_ADDR_FMT_SIZE];
	cJSON *r = hvsw_ok(d, "fdb.show", NULL), *e;
	int n = 0;

	rte_ether_format_addr(m, sizeof(m), mac);
	cJSON_ArrayForEach(e, r)
	{
		const char *em = swh_str(e, "mac"), *ep = swh_str(e, "port");

		if (em != NULL && strcasecmp(em, m) == 0 &&
		    (port == NULL || (ep != NULL && strcmp(ep, port) == 0)))
			n++;
	}
	cJSON_Delete(r);
	return n;
}

int
hvsw_fdb_count(struct hvsw *d, const char *port)
{
	cJSON *r = hvsw_ok(d, "fdb.show", "{\"port\":\"%s\"}", port), *e;
	int n = 0;

	cJSON_ArrayForEach(e, r)
	{
		const char *ep = swh_str(e, "port");

		ck_assert_msg(ep != NULL && strcmp(ep, port) == 0, "fdb.show port=%s lists %s",
			      port, ep ? ep : "(none)");
		n++;
	}
	cJSON_Delete(r);
	return n;
}

/* ---- guests ---- */

int
swh_env_init(int argc, char **argv)
{
	atexit(kill_live);
	signal(SIGTERM, on_fatal_signal);
	signal(SIGINT, on_fatal_signal);
	signal(SIGPIPE, SIG_IGN);
	if (rte_eal_init(argc, argv) < 0) {
		fprintf(stderr, "EAL: %s\n", rte_strerror(rte_errno));
		return -1;
	}
	guest_mp = rte_pktmbuf_pool_create("guests", 8191, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
					   rte_socket_id());
	if (guest_mp == NULL) {
		fprintf(stderr, "pool: %s\n", rte_strerror(rte_errno));
		return -1;
	}
	return 0;
}

void
swh_env_fini(void)
{
	char rt[PATH_MAX];

	kill_live();
	snprintf(rt, sizeof(rt), "%s", rte_eal_get_runtime_dir());
	rte_mempool_free(guest_mp);
	rte_eal_cleanup();
	rm_dir(rt); /* this process's own DPDK runtime dir */
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

/* ---- DPDK telemetry ---- */

int
swh_tel_open(const char *prefix, pid_t pid)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char buf[1024];
	cJSON *r;
	ssize_t n;
	int fd;
	bool ok;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "/var/run/dpdk/%s/dpdk_telemetry.v2", prefix);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(fd, 0);
	ck_assert_msg(connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0, "connect %s: %s",
		      sa.sun_path, strerror(errno));
	n = recv(fd, buf, sizeof(buf) - 1, 0);
	ck_assert_int_gt(n, 0);
	buf[n] = '\0';
	r = cJSON_Parse(buf);
	ok = (pid_t)swh_num(r, "pid") == pid && swh_num(r, "max_output_len") > 0;
	cJSON_Delete(r);
	ck_assert_msg(ok, "telemetry greeting: %s", buf);
	return fd;
}

cJSON *
swh_tel(int fd, const char *cmd)
{
	static char buf[65536];
	ssize_t n;
	cJSON *r, *v;

	ck_assert_int_eq(send(fd, cmd, strlen(cmd), 0), (ssize_t)strlen(cmd));
	n = recv(fd, buf, sizeof(buf) - 1, 0);
	ck_assert_msg(n > 0, "telemetry %s: no reply", cmd);
	buf[n] = '\0';
	r = cJSON_Parse(buf);
	ck_assert_msg(r != NULL && r->child != NULL, "telemetry %s: %s", cmd, buf);
	/* {"<command without its parameter>": value} */
	v = cJSON_DetachItemViaPointer(r, r->child);
	cJSON_Delete(r);
	return v;
}

double
swh_tel_num(const cJSON *v, const char *outer, const char *inner)
{
	const cJSON *j = cJSON_GetObjectItemCaseSensitive(v, outer);

	/* a nested dict (container); @inner may name a value flattened inside it */
	j = cJSON_GetObjectItemCaseSensitive(j, inner);
	return cJSON_IsNumber(j) ? j->valuedouble : -1;
}
