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

#include "hv_log.h"
#include "vxlan.h"

int
vx_mirror_open(struct sw_vx *vx, const char *ifname, char *err, size_t errlen)
{
	struct sockaddr_nl sa = {.nl_family = AF_NETLINK, .nl_groups = RTMGRP_NEIGH};
	struct {
		struct nlmsghdr nh;
		struct ndmsg ndm;
	} req = {
		.nh = {.nlmsg_len = NLMSG_LENGTH(sizeof(struct ndmsg)),
		       .nlmsg_type = RTM_GETNEIGH,
		       .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
		       .nlmsg_seq = 1},
		.ndm = {.ndm_family = AF_BRIDGE},
	};
	int fd, rcvbuf = 8 << 20;

	vx->mirror_ifindex = (int)if_nametoindex(ifname);
	if (vx->mirror_ifindex == 0) {
		snprintf(err, errlen, "port %s: mirror %s: no such network device",
			 vx->port->conf.name, ifname);
		return -1;
	}
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_ROUTE);
	/*
	 * Room for a control plane's burst (a BGP session coming up installs a
	 * whole table at once) between two polls: beyond rmem_max where we may
	 * (CAP_NET_ADMIN), else as much as rmem_max allows. An overrun is logged.
	 */
	if (fd >= 0 && setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)) != 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	/* subscribed before the dump: no change falls between the two */
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    send(fd, &req, req.nh.nlmsg_len, 0) < 0) {
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
		return true;
	}
	if (!rte_is_unicast_ether_addr(&key.mac))
		return false;
	if (!add) {
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

void
vx_mirror_poll(struct sw_vx *vx)
{
	char buf[16384] __rte_aligned(8);
	bool flood = false;
	ssize_t n;

	while ((n = recv(vx->nl_fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0) {
		int len = (int)n;

		for (const struct nlmsghdr *nh = (const struct nlmsghdr *)buf; NLMSG_OK(nh, len);
		     nh = NLMSG_NEXT(nh, len))
			flood |= neigh(vx, nh);
	}
	/* ENOBUFS: changes were lost; a fresh dump would be needed (logged, rate-limited) */
	if (n < 0 && errno == ENOBUFS)
		HV_LOG_RL(&overrun_rl, WARNING,
			  "port %s: mirror: netlink overrun, entries may be missed",
			  vx->port->conf.name);
	if (flood)
		vx_flood_publish(vx);
}
