/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The other half of a tunnel port's kernel mirror (doc/vxlan.rst): the MACs
 * the switch learned on the tunnel's VLAN behind its other ports are pushed
 * into the mirror's Linux bridge as entries of one of its ports (--push,
 * e.g. a veth end), with the extern_learn flag, so that FRR's zebra takes
 * them as local MACs and advertises them (EVPN type 2). An entry goes when
 * its MAC ages out, is flushed, or moves behind the tunnel.
 *
 * Control thread only: the PMDs already hand every learn to it (the FDB's
 * ring), so the FDB the control thread owns is the truth; it is compared
 * with what was pushed when it changed (its counters, the mirror's events;
 * at most every 50 ms) and once a second whatever happened, a walk that
 * costs no PMD anything.
 * rtnetlink requests go on a non-blocking socket without acknowledgements;
 * a refused one comes back as an error naming its MAC, which is then
 * pushed again at the next comparison.
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include <rte_hash.h>
#include <rte_malloc.h>

#include "hv_log.h"
#include "vxlan.h"

/* MACs one tunnel pushes at most (more are counted as refused). */
#define VX_PUSH_MAX 4096
/* Between two comparisons when nothing seemed to change. */
#define VX_PUSH_FULL_MS 1000
/* Between two comparisons at least (an FDB that keeps changing costs a walk per this). */
#define VX_PUSH_MIN_MS 50
/* Entries compared before the stale ones are deleted, per round. */
#define VX_PUSH_STALE_BATCH 256

/* A pushed MAC's data word: the comparison round that last found it, and whether it was
 * found in the kernel at start (an earlier run's) rather than pushed by this one. */
#define PUSH_ADOPTED UINT64_C(1)
#define PUSH_GEN(d) ((uint64_t)(uintptr_t)(d) >> 1)

struct vx_push {
	struct rte_hash *h; /* struct rte_ether_addr -> data word */
	uint64_t gen;
	uint64_t adopt_until_ms; /* an earlier run's MACs stay this long unless learned again */
	uint64_t next_full_ms;
	uint64_t last_ms;
	uint64_t sig; /* the FDB's and the mirror's counters at the last comparison */
	bool dirty;   /* compare at the next poll */
	uint32_t seq;
	uint64_t added, deleted, errors, refused, adopted;
};

static struct hv_ratelimit push_rl;

static uint64_t
sig_now(const struct sw_vx *vx)
{
	struct hv_fdb_stats st;

	hv_fdb_get_stats(sw.fdb, &st);
	return st.learned + st.moved + st.aged + hv_fdb_count(sw.fdb, HV_FDB_PORT_NONE) +
	       vx->mirror_events;
}

int
vx_push_open(struct sw_vx *vx, const char *ifname, char *err, size_t errlen)
{
	struct sockaddr_nl sa = {.nl_family = AF_NETLINK};
	char name[RTE_HASH_NAMESIZE];
	struct rte_hash_parameters hp = {
		.name = name,
		.entries = VX_PUSH_MAX,
		.key_len = RTE_ETHER_ADDR_LEN,
		.socket_id = SOCKET_ID_ANY,
	};
	struct vx_push *ps;
	int fd;

	vx->push_ifindex = (int)if_nametoindex(ifname);
	if (vx->push_ifindex == 0) {
		snprintf(err, errlen, "port %s: push %s: no such network device",
			 vx->port->conf.name, ifname);
		return -1;
	}
	snprintf(name, sizeof(name), "vx_push_%u", vx->port->idx);
	ps = rte_zmalloc("vx_push", sizeof(*ps), 0);
	if (ps != NULL)
		ps->h = rte_hash_create(&hp);
	if (ps == NULL || ps->h == NULL) {
		snprintf(err, errlen, "port %s: out of memory", vx->port->conf.name);
		rte_free(ps);
		return -1;
	}
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		snprintf(err, errlen, "port %s: push %s: netlink: %s", vx->port->conf.name, ifname,
			 strerror(errno));
		if (fd >= 0)
			close(fd);
		rte_hash_free(ps->h);
		rte_free(ps);
		return -1;
	}
	ps->gen = 1;
	ps->adopt_until_ms = sw_now_ms() + (uint64_t)sw.settings.fdb_age_s * 1000;
	ps->dirty = true;
	vx->push = ps;
	vx->push_fd = fd;
	return 0;
}

void
vx_push_close(struct sw_vx *vx)
{
	if (vx->push_fd >= 0)
		close(vx->push_fd);
	vx->push_fd = -1;
	if (vx->push != NULL)
		rte_hash_free(vx->push->h);
	rte_free(vx->push);
	vx->push = NULL;
}

/* RTM_NEWNEIGH (extern_learn) or RTM_DELNEIGH of @mac on the push port; 0 when sent. */
static int
request(struct sw_vx *vx, bool add, const struct rte_ether_addr *mac)
{
	struct {
		struct nlmsghdr nh;
		struct ndmsg ndm;
		struct rtattr a;
		uint8_t mac[8];
	} req = {
		.nh = {.nlmsg_len =
			       NLMSG_LENGTH(sizeof(struct ndmsg)) + RTA_LENGTH(RTE_ETHER_ADDR_LEN),
		       .nlmsg_type = add ? RTM_NEWNEIGH : RTM_DELNEIGH,
		       .nlmsg_flags = NLM_F_REQUEST | (add ? NLM_F_CREATE | NLM_F_REPLACE : 0),
		       .nlmsg_seq = ++vx->push->seq},
		/* a bridge entry (NTF_MASTER) learned by a control plane: zebra takes it
		 * as local, the bridge never ages it, learning still moves it */
		.ndm = {.ndm_family = AF_BRIDGE,
			.ndm_ifindex = vx->push_ifindex,
			.ndm_state = NUD_REACHABLE,
			.ndm_flags = NTF_MASTER | NTF_EXT_LEARNED},
		.a = {.rta_len = RTA_LENGTH(RTE_ETHER_ADDR_LEN), .rta_type = NDA_LLADDR},
	};

	memcpy(req.mac, mac, RTE_ETHER_ADDR_LEN);
	if (send(vx->push_fd, &req, req.nh.nlmsg_len, MSG_DONTWAIT) < 0) {
		/* the socket's buffer is full: the next comparison sends it again */
		vx->push->dirty = true;
		return -1;
	}
	return 0;
}

void
vx_push_neigh(struct sw_vx *vx, bool add, const struct rte_ether_addr *mac, uint8_t flags)
{
	struct vx_push *ps = vx->push;

	if (ps == NULL || rte_is_zero_ether_addr(mac))
		return;
	if (!add) {
		/* gone from the bridge (deleted by hand, moved by zebra): pushed again if local */
		if (rte_hash_del_key(ps->h, mac) >= 0)
			ps->dirty = true;
		return;
	}
	/* a MAC of an earlier run (or ours echoed): kept while it may still be local */
	if ((flags & NTF_EXT_LEARNED) && rte_hash_lookup(ps->h, mac) < 0 &&
	    rte_hash_add_key_data(ps->h, mac, (void *)(uintptr_t)PUSH_ADOPTED) == 0)
		ps->adopted++;
}

void
vx_push_forget(struct sw_vx *vx)
{
	/*
	 * A lost RTM_DELNEIGH would leave a MAC here that the bridge no longer
	 * has. Forgotten, every local MAC is pushed again (NLM_F_REPLACE: the
	 * same entry costs nothing), and what the re-read finds of an earlier
	 * push comes back as adopted, swept if it is not local.
	 */
	if (vx->push == NULL)
		return;
	rte_hash_reset(vx->push->h);
	vx->push->dirty = true;
}

struct walk {
	struct sw_vx *vx;
	uint64_t gen;
};

static int
walk_fn(const struct hv_fdb_entry *e, void *arg)
{
	struct walk *w = arg;
	struct sw_vx *vx = w->vx;
	struct vx_push *ps = vx->push;
	const struct sw_port *p = e->port < SW_MAX_PORTS ? sw.ports[e->port] : NULL;
	void *data = (void *)(uintptr_t)(w->gen << 1);
	void *old;

	/* local: on the tunnel's VLAN behind a port that is no tunnel */
	if (e->key.vlan != vx->port->conf.vlan || p == NULL || p->ops == vx->port->ops ||
	    !rte_is_unicast_ether_addr(&e->key.mac) || rte_is_zero_ether_addr(&e->key.mac))
		return 0;
	if (rte_hash_lookup_data(ps->h, &e->key.mac, &old) >= 0) {
		if (PUSH_GEN(old) != w->gen)
			rte_hash_add_key_data(ps->h, &e->key.mac, data);
		return 0;
	}
	if (rte_hash_count(ps->h) >= VX_PUSH_MAX) {
		ps->refused++;
		return 0;
	}
	if (request(vx, true, &e->key.mac) != 0)
		return 1; /* the socket is full: the rest waits for the next round */
	if (rte_hash_add_key_data(ps->h, &e->key.mac, data) != 0)
		ps->refused++;
	ps->added++;
	return 0;
}

/* Whether the FDB has @mac on the tunnel's VLAN behind the tunnel itself. */
static bool
behind_tunnel(const struct sw_vx *vx, const struct rte_ether_addr *mac)
{
	struct hv_fdb_key k = {.mac = *mac, .vlan = vx->port->conf.vlan};
	const struct hv_fdb_key *kp = &k;
	uint16_t port;

	hv_fdb_lookup_bulk(sw.fdb, &kp, 1, &port);
	return port == vx->port->idx;
}

/* Delete the pushed MACs the last walk did not find local; false when the socket was full. */
static bool
sweep(struct sw_vx *vx, uint64_t now_ms)
{
	struct vx_push *ps = vx->push;
	struct rte_ether_addr stale[VX_PUSH_STALE_BATCH];
	unsigned int n;

	do {
		const void *key;
		void *data;
		uint32_t next = 0;

		n = 0;
		while (n < VX_PUSH_STALE_BATCH &&
		       rte_hash_iterate(ps->h, &key, &data, &next) >= 0) {
			if (PUSH_GEN(data) == ps->gen)
				continue;
			/* an earlier run's MAC not learned again: kept for an age, unless
			 * it is behind the tunnel now */
			if (((uintptr_t)data & PUSH_ADOPTED) && now_ms < ps->adopt_until_ms &&
			    !behind_tunnel(vx, key))
				continue;
			memcpy(&stale[n++], key, sizeof(stale[0]));
		}
		for (unsigned int i = 0; i < n; i++) {
			if (request(vx, false, &stale[i]) != 0)
				return false;
			rte_hash_del_key(ps->h, &stale[i]);
			ps->deleted++;
		}
	} while (n == VX_PUSH_STALE_BATCH);
	return true;
}

/* Errors the kernel sent back: their MAC is forgotten, so pushed again at the next round. */
static void
drain(struct sw_vx *vx)
{
	char buf[4096] __rte_aligned(8);
	ssize_t r;

	while ((r = recv(vx->push_fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0) {
		int len = (int)r;

		for (const struct nlmsghdr *nh = (const struct nlmsghdr *)buf; NLMSG_OK(nh, len);
		     nh = NLMSG_NEXT(nh, len)) {
			const struct nlmsgerr *e = NLMSG_DATA(nh);
			const struct ndmsg *ndm = NLMSG_DATA(&e->msg);
			const struct rtattr *a = (const struct rtattr *)(ndm + 1);

			if (nh->nlmsg_type != NLMSG_ERROR ||
			    nh->nlmsg_len < NLMSG_LENGTH(sizeof(*e)) || e->error == 0)
				continue;
			/* a delete of what is gone already (moved behind the tunnel): done */
			if (e->error == -ENOENT && e->msg.nlmsg_type == RTM_DELNEIGH)
				continue;
			vx->push->errors++;
			HV_LOG_RL(&push_rl, WARNING,
				  "port %s: push: the kernel refused an entry: %s",
				  vx->port->conf.name, strerror(-e->error));
			/* the request comes back whole: its MAC is at a fixed place */
			if (nh->nlmsg_len >= NLMSG_LENGTH(sizeof(*e)) + sizeof(*ndm) +
						     RTA_LENGTH(RTE_ETHER_ADDR_LEN) &&
			    e->msg.nlmsg_type == RTM_NEWNEIGH && a->rta_type == NDA_LLADDR &&
			    RTA_PAYLOAD(a) == RTE_ETHER_ADDR_LEN)
				rte_hash_del_key(vx->push->h, RTA_DATA(a));
			vx->push->dirty = true;
		}
	}
}

void
vx_push_poll(struct sw_vx *vx)
{
	struct vx_push *ps = vx->push;
	uint64_t now = sw_now_ms(), sig;
	struct walk w;

	drain(vx);
	/* a deletion now could make the mirror's dump skip an entry: compare once it is done */
	if (vx->mirror_dumping)
		return;
	sig = sig_now(vx);
	if ((!ps->dirty && sig == ps->sig && now < ps->next_full_ms) ||
	    now < ps->last_ms + VX_PUSH_MIN_MS)
		return;
	ps->dirty = false;
	ps->sig = sig;
	ps->last_ms = now;
	ps->next_full_ms = now + VX_PUSH_FULL_MS;
	/* the control loop applied what the PMDs queued just before */
	w = (struct walk){.vx = vx, .gen = ++ps->gen};
	if (hv_fdb_walk(sw.fdb, walk_fn, &w) != 0 || !sweep(vx, now))
		ps->dirty = true;
}

void
vx_push_withdraw(struct sw_vx *vx)
{
	const void *key;
	void *data;
	uint32_t next = 0;

	if (vx->push == NULL)
		return;
	while (rte_hash_iterate(vx->push->h, &key, &data, &next) >= 0)
		if (request(vx, false, key) != 0)
			HV_LOG_RL(&push_rl, WARNING, "port %s: push: entries left in the kernel",
				  vx->port->conf.name);
}

void
vx_push_describe(const struct sw_vx *vx, cJSON *o)
{
	const struct vx_push *ps = vx->push;
	cJSON *po = cJSON_AddObjectToObject(o, "push");

	cJSON_AddNumberToObject(po, "entries", rte_hash_count(ps->h));
	cJSON_AddNumberToObject(po, "added", (double)ps->added);
	cJSON_AddNumberToObject(po, "deleted", (double)ps->deleted);
	cJSON_AddNumberToObject(po, "adopted", (double)ps->adopted);
	cJSON_AddNumberToObject(po, "errors", (double)ps->errors);
	cJSON_AddNumberToObject(po, "refused", (double)ps->refused);
}
