/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A tunnel port following the FDB of a Linux vxlan netdev (its "mirror",
 * doc/vxlan.rst): what an external control plane (FRR's zebra for BGP
 * EVPN, or an operator with `bridge fdb`) installs there is installed in
 * hvswitch. A MAC with a destination becomes an FDB entry behind that
 * remote VTEP (hv_fdb_set_remote(): never aged, moved only by a frame on a
 * local port, a MAC move); the all-zeros MAC's destinations are the flood
 * list.
 * rtnetlink, AF_BRIDGE neighbours: one dump at open, then the changes.
 * The same messages about the push port (vxlan_push.c) go there.
 * Control thread, never blocking (the socket is non-blocking).
 *
 * A burst of changes beyond the socket's buffer overruns it (ENOBUFS): the
 * changes in it are lost. The mirror is then read again (a fresh dump):
 * what the dump shows is installed, and the entries it installed before
 * and the dump no longer shows are swept (mark and sweep: the entries are
 * listed when the dump is asked for, marked as the dump or later changes
 * name them, the rest removed when it ends), as OVS re-reads the kernel's
 * tables after an overrun of its notification socket.
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "hv_log.h"
#include "vxlan.h"

/* recv() calls one poll makes at most (one message each); what is left waits for the next poll */
#define MIRROR_POLL_RECVS 4096
/* A dump not done after this long is given up and asked for again. */
#define MIRROR_DUMP_TIMEOUT_MS 10000
/* Between the starts of two re-reads at least this; a dump that could not be trusted
 * doubles it, up to the maximum, until one sweeps. */
#define MIRROR_REREAD_MIN_MS 1000
#define MIRROR_REREAD_MAX_MS 60000

/* What a re-read may sweep: the mirror's entries when it began. */
struct vx_mirror_snap {
	bool flood_seen[VX_MAX_REMOTES]; /* a flood destination the re-read named */
	bool flood_was[VX_MAX_REMOTES];  /* in the mirror's flood list when it began */
	uint32_t n, cap;
	struct {
		struct rte_ether_addr mac;
		bool seen;
	} e[]; /* sorted by MAC */
};

/* Netlink's receive buffer of the mirror: HV_MIRROR_RCVBUF (bytes, for tests) or 8 MiB. */
static int
mirror_rcvbuf(void)
{
	const char *s = getenv("HV_MIRROR_RCVBUF");
	long v = s != NULL ? strtol(s, NULL, 0) : 0;

	return v >= 1024 && v <= (64 << 20) ? (int)v : 8 << 20;
}

/* A non-blocking rtnetlink socket subscribed to neighbour changes; -1 with errno. */
static int
mirror_socket(void)
{
	struct sockaddr_nl sa = {.nl_family = AF_NETLINK, .nl_groups = RTMGRP_NEIGH};
	int fd, rcvbuf = mirror_rcvbuf(), e;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return -1;
	/*
	 * Room for a control plane's burst (a BGP session coming up installs a
	 * whole table at once) between two polls: beyond rmem_max where we may
	 * (CAP_NET_ADMIN), else as much as rmem_max allows.
	 */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)) != 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/*
 * Ask socket @fd, subscribed already (no change falls between the two), for
 * the bridge neighbours (AF_BRIDGE: every FDB entry). 0, or -1 with errno.
 */
static int
dump_request(struct sw_vx *vx, int fd)
{
	struct {
		struct nlmsghdr nh;
		struct ndmsg ndm;
	} req = {
		.nh = {.nlmsg_len = NLMSG_LENGTH(sizeof(struct ndmsg)),
		       .nlmsg_type = RTM_GETNEIGH,
		       .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
		       .nlmsg_seq = vx->mirror_seq + 1},
		.ndm = {.ndm_family = AF_BRIDGE},
	};

	if (send(fd, &req, req.nh.nlmsg_len, MSG_DONTWAIT) < 0)
		return -1;
	vx->mirror_seq++;
	vx->mirror_dumping = true;
	vx->mirror_untrusted = false;
	vx->mirror_dump_ms = sw_now_ms();
	return 0;
}

int
vx_mirror_open(struct sw_vx *vx, const char *ifname, char *err, size_t errlen)
{
	int fd;

	vx->mirror_ifindex = (int)if_nametoindex(ifname);
	if (vx->mirror_ifindex == 0) {
		snprintf(err, errlen, "port %s: mirror %s: no such network device",
			 vx->port->conf.name, ifname);
		return -1;
	}
	fd = mirror_socket();
	if (fd < 0 || dump_request(vx, fd) != 0) {
		snprintf(err, errlen, "port %s: mirror %s: netlink: %s", vx->port->conf.name,
			 ifname, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	vx->nl_fd = fd;
	return 0;
}

void
vx_mirror_close(struct sw_vx *vx)
{
	if (vx->nl_fd >= 0)
		close(vx->nl_fd);
	vx->nl_fd = -1;
	free(vx->snap);
	vx->snap = NULL;
}

/* ---- the re-read after an overrun: mark and sweep ---- */

/* The port the FDB has @key on (HV_FDB_PORT_NONE: none). */
static uint16_t
fdb_port(const struct hv_fdb_key *key)
{
	uint16_t port;

	hv_fdb_lookup_bulk(sw.fdb, &key, 1, &port);
	return port;
}

static int
mac_cmp(const void *a, const void *b)
{
	return memcmp(a, b, RTE_ETHER_ADDR_LEN);
}

/* hv_fdb_walk(): the mirror's MACs are the static entries of the tunnel port (only it sets them). */
static int
snap_fn(const struct hv_fdb_entry *e, void *arg)
{
	struct sw_vx *vx = arg;
	struct vx_mirror_snap *sn = vx->snap;

	if (!e->is_static || e->port != vx->port->idx || e->key.vlan != vx->port->conf.vlan)
		return 0;
	if (sn->n == sn->cap)
		return 1; /* the table grew since it was counted: the rest is not swept */
	sn->e[sn->n].mac = e->key.mac;
	sn->e[sn->n].seen = false;
	sn->n++;
	return 0;
}

/*
 * List what may be swept, then dump on a fresh socket and drop the old
 * one: what it still held is older than the dump, and a dump in flight on
 * it goes with it (one dump at a time per socket). False to retry later
 * (the old socket stays).
 */
static bool
reread_start(struct sw_vx *vx)
{
	uint32_t cap = hv_fdb_count(sw.fdb, vx->port->idx);
	struct vx_mirror_snap *sn, *old = vx->snap;
	int fd = mirror_socket();

	if (fd < 0)
		return false;
	sn = calloc(1, sizeof(*sn) + sizeof(sn->e[0]) * (size_t)cap);
	if (sn == NULL) {
		close(fd);
		return false;
	}
	sn->cap = cap;
	for (unsigned int i = 0; i < VX_MAX_REMOTES; i++)
		sn->flood_was[i] = vx->ips[i] != 0 && vx->remotes[i].mirror_flood;
	vx->snap = sn;
	hv_fdb_walk(sw.fdb, snap_fn, vx);
	qsort(sn->e, sn->n, sizeof(sn->e[0]), mac_cmp);
	if (dump_request(vx, fd) != 0) {
		close(fd);
		free(sn);
		vx->snap = old;
		return false;
	}
	free(old);
	close(vx->nl_fd);
	vx->nl_fd = fd;
	/* changes of the push port were lost too: push every local MAC again */
	if (vx->mirror_lost)
		vx_push_forget(vx);
	vx->mirror_lost = false;
	vx->mirror_reread = false;
	return true;
}

/* The dump or a change named unicast MAC @mac: not to be swept. */
static void
snap_mark(struct sw_vx *vx, const struct rte_ether_addr *mac)
{
	struct vx_mirror_snap *sn = vx->snap;
	uint32_t lo = 0, hi;

	if (sn == NULL)
		return;
	hi = sn->n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int c = mac_cmp(&sn->e[mid].mac, mac);

		if (c == 0) {
			sn->e[mid].seen = true;
			return;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
}

/* The dump ended: remove what it did not name. Whether the flood list changed. */
static bool
reread_sweep(struct sw_vx *vx)
{
	struct vx_mirror_snap *sn = vx->snap;
	bool flood = false;

	for (uint32_t i = 0; i < sn->n; i++) {
		struct hv_fdb_key key = {.mac = sn->e[i].mac, .vlan = vx->port->conf.vlan};

		/* still ours: another tunnel's mirror may have taken the MAC since */
		if (!sn->e[i].seen && fdb_port(&key) == vx->port->idx &&
		    hv_fdb_del_static(sw.fdb, &key) == 0)
			vx->mirror_swept++;
	}
	for (unsigned int i = 0; i < VX_MAX_REMOTES; i++) {
		if (sn->flood_was[i] && !sn->flood_seen[i] && vx->remotes[i].mirror_flood) {
			vx->remotes[i].mirror_flood = false;
			vx->mirror_swept++;
			flood = true;
		}
	}
	free(sn);
	vx->snap = NULL;
	vx->mirror_rereads++;
	vx->mirror_backoff_ms = 0;
	HV_LOG(INFO, "port %s: mirror read again after an overrun", vx->port->conf.name);
	return flood;
}

/* One neighbour message; whether the flood list changed. */
static bool
neigh(struct sw_vx *vx, const struct nlmsghdr *nh)
{
	const struct ndmsg *ndm = NLMSG_DATA(nh);
	const struct rtattr *a;
	struct hv_fdb_key key = {.vlan = vx->port->conf.vlan};
	bool add = nh->nlmsg_type == RTM_NEWNEIGH, have_mac = false, have_ip = false;
	rte_be32_t ip = 0;
	int len, ri;

	if ((nh->nlmsg_type != RTM_NEWNEIGH && nh->nlmsg_type != RTM_DELNEIGH) ||
	    nh->nlmsg_len < NLMSG_LENGTH(sizeof(*ndm)) || ndm->ndm_family != AF_BRIDGE ||
	    (ndm->ndm_ifindex != vx->mirror_ifindex &&
	     (vx->push_fd < 0 || ndm->ndm_ifindex != vx->push_ifindex)))
		return false;
	vx->mirror_events++;
	len = (int)(nh->nlmsg_len - NLMSG_LENGTH(sizeof(*ndm)));
	for (a = (const struct rtattr *)((const char *)ndm + NLMSG_ALIGN(sizeof(*ndm)));
	     RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		if (a->rta_type == NDA_LLADDR && RTA_PAYLOAD(a) == RTE_ETHER_ADDR_LEN) {
			memcpy(&key.mac, RTA_DATA(a), RTE_ETHER_ADDR_LEN);
			have_mac = true;
		} else if (a->rta_type == NDA_DST && RTA_PAYLOAD(a) == sizeof(ip)) {
			memcpy(&ip, RTA_DATA(a), sizeof(ip));
			have_ip = true;
		}
	}
	if (ndm->ndm_ifindex != vx->mirror_ifindex) {
		/* the push port: what an earlier run pushed, or an entry that went */
		if (have_mac && rte_is_unicast_ether_addr(&key.mac))
			vx_push_neigh(vx, add, &key.mac, ndm->ndm_flags);
		return false;
	}
	/* IPv4 remotes only (an IPv6 destination has another length) */
	if (!have_mac || !have_ip || ip == 0 || ip == vx->local)
		return false;
	if (rte_is_zero_ether_addr(&key.mac)) {
		/* a flood destination (EVPN type 3, or `bridge fdb append 00:00:00:00:00:00`) */
		ri = add ? vx_remote_add(vx, ip, false, false) : -1;
		for (int i = 0; !add && i < VX_MAX_REMOTES; i++)
			if (vx->ips[i] == ip)
				ri = i;
		if (ri < 0) {
			vx->mirror_refused += add;
			return false;
		}
		vx->remotes[ri].mirror_flood = add;
		if (vx->snap != NULL)
			vx->snap->flood_seen[ri] = true;
		return true;
	}
	if (!rte_is_unicast_ether_addr(&key.mac))
		return false;
	snap_mark(vx, &key.mac);
	if (!add) {
		/* ours only: another tunnel's mirror may have the MAC */
		if (fdb_port(&key) == vx->port->idx)
			hv_fdb_del_static(sw.fdb, &key);
		return false;
	}
	ri = vx_remote_add(vx, ip, false, false);
	if (ri < 0 || hv_fdb_set_remote(sw.fdb, &key, vx->port->idx, (uint16_t)(ri + 1)) != 0) {
		vx->mirror_refused++;
		return false;
	}
	vx->remotes[ri].mirror = true;
	return false;
}

static struct hv_ratelimit overrun_rl;

/* The error a dump ended with: NLMSG_ERROR's, or the one NLMSG_DONE carries (0: none). */
static int
dump_error(const struct nlmsghdr *nh)
{
	int err = 0;

	if (nh->nlmsg_len < NLMSG_LENGTH(sizeof(int)))
		return nh->nlmsg_type == NLMSG_ERROR ? -EINVAL : 0;
	memcpy(&err, NLMSG_DATA(nh), sizeof(err)); /* struct nlmsgerr begins with it */
	return nh->nlmsg_type == NLMSG_ERROR && err == 0 ? -EINVAL : err;
}

/* Read the mirror again after a backoff (doubled from a second while dumps cannot be trusted). */
static void
reread_later(struct sw_vx *vx, uint64_t now)
{
	vx->mirror_backoff_ms =
		vx->mirror_backoff_ms == 0
			? MIRROR_REREAD_MIN_MS
			: RTE_MIN(2 * vx->mirror_backoff_ms, (uint64_t)MIRROR_REREAD_MAX_MS);
	vx->mirror_reread = true;
	/* an overrun since the last start keeps its deadline: a second after that start */
	vx->mirror_reread_ms = vx->mirror_lost
				       ? vx->mirror_start_ms + MIRROR_REREAD_MIN_MS
				       : RTE_MAX(vx->mirror_reread_ms, now + vx->mirror_backoff_ms);
}

/* The end of our dump (or its failure): whether the flood list changed. */
static bool
dump_done(struct sw_vx *vx, const struct nlmsghdr *nh, uint64_t now)
{
	int err;

	if (nh->nlmsg_seq != vx->mirror_seq || !vx->mirror_dumping)
		return false;
	vx->mirror_dumping = false;
	err = dump_error(nh);
	if (err != 0)
		HV_LOG_RL(&overrun_rl, WARNING, "port %s: mirror: dump failed: %s",
			  vx->port->conf.name, strerror(-err));
	/*
	 * Cut short, inconsistent, changes lost, or an entry deleted while it
	 * ran (below): what it did not name may still be there. Sweep nothing
	 * (the first dump installs what it named), read again later.
	 */
	if (err != 0 || (nh->nlmsg_flags & NLM_F_DUMP_INTR) || vx->mirror_untrusted ||
	    vx->mirror_reread) {
		if (vx->snap != NULL)
			vx->mirror_unswept++;
		free(vx->snap);
		vx->snap = NULL;
		reread_later(vx, now);
		return false;
	}
	return vx->snap != NULL ? reread_sweep(vx) : false;
}

/*
 * Whether a dump can be trusted to name every entry. The kernel resumes an
 * FDB dump by position (one count over the bridge's entries, then the
 * vxlan netdev's) and never sets NLM_F_DUMP_INTR for it: an entry of a
 * bridge deleted while it runs may make it skip another (ageing does not
 * hold rtnl: such a deletion may even come before the dump's first part).
 */
static void
dump_watch(struct sw_vx *vx, const struct nlmsghdr *nh)
{
	if (vx->mirror_dumping && nh->nlmsg_type == RTM_DELNEIGH &&
	    nh->nlmsg_len >= NLMSG_LENGTH(sizeof(struct ndmsg)) &&
	    ((const struct ndmsg *)NLMSG_DATA(nh))->ndm_family == AF_BRIDGE)
		vx->mirror_untrusted = true;
}

void
vx_mirror_poll(struct sw_vx *vx)
{
	char buf[16384] __rte_aligned(8);
	uint64_t now = sw_now_ms();
	bool flood = false;

	/* a dump that never ends (its reply lost): give it up, a re-read's socket replaces it */
	if (vx->mirror_dumping && now - vx->mirror_dump_ms > MIRROR_DUMP_TIMEOUT_MS) {
		vx->mirror_dumping = false;
		if (vx->snap != NULL)
			vx->mirror_unswept++;
		free(vx->snap);
		vx->snap = NULL;
		reread_later(vx, now);
		HV_LOG_RL(&overrun_rl, WARNING, "port %s: mirror: dump timed out, reading again",
			  vx->port->conf.name);
	}
	/*
	 * Before reading: the dump then drains in this same turn, not across
	 * the push side's turn (whose deletions would make it untrusted). At
	 * most one start a second, however often the socket overruns.
	 */
	if (vx->mirror_reread && now >= vx->mirror_reread_ms) {
		if (reread_start(vx))
			vx->mirror_start_ms = now;
		else
			HV_LOG_RL(&overrun_rl, WARNING, "port %s: mirror: re-read failed: %s",
				  vx->port->conf.name, strerror(errno));
		vx->mirror_reread_ms = now + MIRROR_REREAD_MIN_MS;
	}
	for (unsigned int round = 0; round < MIRROR_POLL_RECVS; round++) {
		ssize_t n = recv(vx->nl_fd, buf, sizeof(buf), MSG_DONTWAIT);
		int len;

		/*
		 * ENOBUFS: changes were lost; the re-read supersedes what the
		 * socket still holds. It comes a second after the last one at
		 * most, whatever backoff untrusted dumps built: it installs what
		 * was lost even if it cannot sweep.
		 */
		if (n < 0 && errno == ENOBUFS) {
			vx->mirror_overruns++;
			vx->mirror_reread = vx->mirror_lost = true;
			vx->mirror_reread_ms = vx->mirror_start_ms + MIRROR_REREAD_MIN_MS;
			HV_LOG_RL(&overrun_rl, WARNING,
				  "port %s: mirror: netlink overrun, reading the mirror again",
				  vx->port->conf.name);
			break;
		}
		if (n <= 0)
			break;
		len = (int)n;
		for (const struct nlmsghdr *nh = (const struct nlmsghdr *)buf; NLMSG_OK(nh, len);
		     nh = NLMSG_NEXT(nh, len)) {
			dump_watch(vx, nh);
			if (nh->nlmsg_type == NLMSG_DONE || nh->nlmsg_type == NLMSG_ERROR)
				flood |= dump_done(vx, nh, now);
			else
				flood |= neigh(vx, nh);
		}
	}
	if (flood)
		vx_flood_publish(vx);
}
