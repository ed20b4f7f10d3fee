/* SPDX-License-Identifier: BSD-3-Clause */
/* vhost-user ports: a guest's virtio-net rings, served by drivers/vhost. */
#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "hv_ctl_api.h"
#include "port_vhost.h"

uint64_t sw_vhost_mem_limit;
const uint64_t sw_vhost_mem_limit_max = HV_VHOST_MEM_LIMIT_MAX;

struct sw_sock_access sw_vhost_access;

/* A user or group name, or a number: its id; -1 when there is none. */
static int
id_parse(const char *s, bool group, unsigned int *out)
{
	char *end;
	unsigned long v;

	if (group) {
		const struct group *g = getgrnam(s);

		if (g != NULL) {
			*out = g->gr_gid;
			return 0;
		}
	} else {
		const struct passwd *pw = getpwnam(s);

		if (pw != NULL) {
			*out = pw->pw_uid;
			return 0;
		}
	}
	errno = 0;
	v = strtoul(s, &end, 10);
	if (s[0] < '0' || s[0] > '9' || *end != '\0' || errno != 0 || v >= UINT32_MAX)
		return -1;
	*out = (unsigned int)v;
	return 0;
}

int
sw_sock_owner_parse(const char *s, const char *what, struct sw_sock_access *a, char *err,
		    size_t errlen)
{
	char buf[sizeof(a->owner)], *colon;
	unsigned int uid = (unsigned int)-1, gid = (unsigned int)-1;

	if (strlen(s) >= sizeof(buf) || s[0] == '\0') {
		snprintf(err, errlen, "%s must be USER, USER:GROUP or :GROUP", what);
		return -1;
	}
	snprintf(buf, sizeof(buf), "%s", s);
	colon = strchr(buf, ':');
	if (colon != NULL)
		*colon = '\0';
	if ((colon != NULL && colon[1] == '\0') || (colon == NULL && buf[0] == '\0') ||
	    (colon == buf && colon[1] == '\0')) {
		snprintf(err, errlen, "%s must be USER, USER:GROUP or :GROUP", what);
		return -1;
	}
	if (buf[0] != '\0' && id_parse(buf, false, &uid) != 0) {
		snprintf(err, errlen, "%s: no user %s", what, buf);
		return -1;
	}
	if (colon != NULL && id_parse(colon + 1, true, &gid) != 0) {
		snprintf(err, errlen, "%s: no group %s", what, colon + 1);
		return -1;
	}
	snprintf(a->owner, sizeof(a->owner), "%s", s);
	a->chown = true;
	a->uid = (uid_t)uid;
	a->gid = (gid_t)gid;
	return 0;
}

int
sw_sock_perm_parse(const char *s, const char *what, struct sw_sock_access *a, char *err,
		   size_t errlen)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 8);
	if (s[0] < '0' || s[0] > '7' || *end != '\0' || errno != 0 || v > 0777 || v == 0) {
		snprintf(err, errlen, "%s must be octal permissions 1..0777, e.g. 0660", what);
		return -1;
	}
	a->perm = (uint16_t)v;
	return 0;
}

/* Its configuration fits a port's (and its alignment). */
_Static_assert(sizeof(struct sw_vhost_conf) <= SW_PORT_CONF_PRIV, "sw_port_conf.priv: vhost-user");
_Static_assert(_Alignof(struct sw_vhost_conf) <= 16, "sw_port_conf.priv: vhost-user alignment");
_Static_assert(sizeof(((struct sw_vhost_conf *)0)->socket) == 107 + 1, "hv_ctl_api.c: socket");

/* The switch's queues are the driver's queue pairs. */
_Static_assert(SW_MAX_QUEUES == HV_VHOST_MAX_QUEUE_PAIRS, "a port's queues are queue pairs");

/* Feature names an operator may offer on a vhost-user port (VERSION_1 always is). */
static const struct {
	const char *name;
	uint64_t bit;
} feature_names[] = {
	{"mrg_rxbuf", HV_VHOST_F_MRG_RXBUF},
	{"indirect_desc", HV_VHOST_F_INDIRECT_DESC},
	{"event_idx", HV_VHOST_F_EVENT_IDX},
	{"mq", HV_VHOST_F_MQ},
	{"csum", HV_VHOST_F_CSUM},
	{"guest_csum", HV_VHOST_F_GUEST_CSUM},
	{"host_tso4", HV_VHOST_F_HOST_TSO4},
	{"host_tso6", HV_VHOST_F_HOST_TSO6},
	{"guest_tso4", HV_VHOST_F_GUEST_TSO4},
	{"guest_tso6", HV_VHOST_F_GUEST_TSO6},
	{"in_order", HV_VHOST_F_IN_ORDER},
	{"guest_announce", HV_VHOST_F_GUEST_ANNOUNCE},
	{"ring_packed", HV_VHOST_F_RING_PACKED},
};

/* "mrg_rxbuf,event_idx" -> feature bits (VERSION_1 always); -1 on an unknown name. */
static int
features_parse(const char *list, const char *cmd, uint64_t *out, char *err, size_t errlen)
{
	char buf[256], *tok, *save = NULL;

	*out = HV_VHOST_F_VERSION_1;
	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		size_t i;

		for (i = 0; i < RTE_DIM(feature_names); i++)
			if (strcmp(tok, feature_names[i].name) == 0)
				break;
		if (i == RTE_DIM(feature_names)) {
			snprintf(
				err, errlen,
				"%s: unknown feature '%s' (known: mrg_rxbuf, "
				"indirect_desc, event_idx, mq, csum, guest_csum, host_tso4, "
				"host_tso6, guest_tso4, guest_tso6, in_order, guest_announce, ring_packed)",
				cmd, tok);
			return -1;
		}
		*out |= feature_names[i].bit;
	}
	return 0;
}

/* The names of the features of @f, comma separated. */
static void
features_format(uint64_t f, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < RTE_DIM(feature_names) && off < len; i++)
		if (f & feature_names[i].bit)
			off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? "," : "",
						feature_names[i].name);
}

/* ---- configuration (struct sw_port_conf.priv) ---- */

static const int vhost_keys[] = {HV_CTL_K_SOCKET, HV_CTL_K_MODE, HV_CTL_K_FEATURES, HV_CTL_K_RXMOD,
				 HV_CTL_K_OWNER,  HV_CTL_K_PERM, HV_CTL_K__MAX};

/* The "rxmod" argument (number or string), checked, into @spec; 0 if not given. */
static int
rxmod_arg(const struct hv_ctl_val *v, uint16_t queues, char *spec, char *err, size_t errlen)
{
	uint32_t win[SW_MAX_QUEUES];
	char buf[SW_RXMOD_SPEC_MAX];

	if (!v->set)
		return 0;
	/* a number or a string of the table's length: it fits */
	if (v->s != NULL)
		snprintf(buf, sizeof(buf), "%s", v->s);
	else
		snprintf(buf, sizeof(buf), "%" PRIu64, v->u);
	if (sw_rxmod_spec_parse(buf, queues, win, err, errlen) != 0)
		return -1;
	memcpy(spec, buf, sizeof(buf));
	return 0;
}

static int
vhost_conf_parse(const struct hv_ctl_vals *v, const char *cmd, struct sw_port_conf *c, char *err,
		 size_t errlen)
{
	const struct hv_ctl_val *sock = &v->v[HV_CTL_K_SOCKET], *mode = &v->v[HV_CTL_K_MODE];
	const struct hv_ctl_val *feat = &v->v[HV_CTL_K_FEATURES];
	const struct hv_ctl_val *owner = &v->v[HV_CTL_K_OWNER], *perm = &v->v[HV_CTL_K_PERM];
	struct sw_vhost_conf *vc = sw_vhost_conf(c);
	char what[64];

	if (feat->set && features_parse(feat->s, cmd, &vc->features, err, errlen) != 0)
		return -1;
	vc->client = mode->set && mode->u == HV_CTL_MODE_CLIENT;
	if (sock->set)
		snprintf(vc->socket, sizeof(vc->socket), "%s", sock->s);
	if ((owner->set || perm->set) && vc->client) {
		/* in client mode the socket is the frontend's: its owner decides */
		snprintf(err, errlen,
			 "%s: '%s' and '%s' are for server mode: a client-mode port "
			 "connects to its frontend's socket",
			 cmd, HV_CTL_KEY(OWNER), HV_CTL_KEY(PERM));
		return -1;
	}
	snprintf(what, sizeof(what), "%s: %s", cmd, HV_CTL_KEY(OWNER));
	if (owner->set && sw_sock_owner_parse(owner->s, what, &vc->access, err, errlen) != 0)
		return -1;
	snprintf(what, sizeof(what), "%s: %s", cmd, HV_CTL_KEY(PERM));
	if (perm->set && sw_sock_perm_parse(perm->s, what, &vc->access, err, errlen) != 0)
		return -1;
	return rxmod_arg(&v->v[HV_CTL_K_RXMOD], c->queues, vc->rxmod, err, errlen);
}

static void
vhost_conf_json(const struct sw_port_conf *c, cJSON *o)
{
	const struct sw_vhost_conf *vc = sw_vhost_conf_c(c);

	cJSON_AddStringToObject(o, HV_CTL_KEY(SOCKET), vc->socket);
	cJSON_AddStringToObject(o, HV_CTL_KEY(MODE),
				hv_ctl_api_word(HV_CTL_K_MODE, vc->client ? HV_CTL_MODE_CLIENT
									  : HV_CTL_MODE_SERVER));
	if (vc->features != 0) {
		char f[256];

		features_format(vc->features, f, sizeof(f));
		cJSON_AddStringToObject(o, HV_CTL_KEY(FEATURES), f);
	}
	if (vc->rxmod[0] != '\0')
		cJSON_AddStringToObject(o, HV_CTL_KEY(RXMOD), vc->rxmod);
	if (vc->access.chown)
		cJSON_AddStringToObject(o, HV_CTL_KEY(OWNER), vc->access.owner);
	if (vc->access.perm != 0) {
		char perm[8];

		snprintf(perm, sizeof(perm), "%04o", vc->access.perm);
		cJSON_AddStringToObject(o, HV_CTL_KEY(PERM), perm);
	}
}

/* port.set: rxmod, live. */
static int
vhost_conf_set(const struct sw_port *p, const struct hv_ctl_vals *v, const char *cmd,
	       struct sw_port_conf *c, char *err, size_t errlen)
{
	RTE_SET_USED(cmd);
	return rxmod_arg(&v->v[HV_CTL_K_RXMOD], p->conf.queues, sw_vhost_conf(c)->rxmod, err,
			 errlen);
}

/* --port SOCKET[,client][,queues=N]: a vhost-user port for this run. */
static int
vhost_conf_cli(char *arg, struct sw_port_conf *c, char *err, size_t errlen)
{
	struct sw_vhost_conf *vc = sw_vhost_conf(c);
	char *tok, *save = NULL, *path;

	path = strtok_r(arg, ",", &save);
	if (path == NULL || strlen(path) >= sizeof(vc->socket)) {
		snprintf(err, errlen, "--port needs a socket path");
		return -1;
	}
	snprintf(vc->socket, sizeof(vc->socket), "%s", path);
	while ((tok = strtok_r(NULL, ",", &save)) != NULL) {
		size_t ql = strlen(HV_CTL_KEY(QUEUES)); /* queues=N, as in port.add */
		uint64_t q;

		if (strcmp(tok, "client") == 0) {
			vc->client = true;
		} else if (strncmp(tok, HV_CTL_KEY(QUEUES), ql) == 0 && tok[ql] == '=') {
			if (hv_ctl_parse_uint(tok + ql + 1, 1, SW_MAX_QUEUES, &q) != 0) {
				snprintf(err, errlen, "%s must be an integer 1..%d",
					 HV_CTL_KEY(QUEUES), SW_MAX_QUEUES);
				return -1;
			}
			c->queues = (uint16_t)q;
		} else {
			snprintf(err, errlen, "unknown --port option '%s'", tok);
			return -1;
		}
	}
	return 0;
}

/* A default socket in the run dir, and no socket twice. */
static int
vhost_conf_check(struct sw_port_conf *c, char *err, size_t errlen)
{
	struct sw_vhost_conf *vc = sw_vhost_conf(c);

	if (vc->socket[0] == '\0' && (size_t)snprintf(vc->socket, sizeof(vc->socket), "%s/%s.sock",
						      sw.run_dir, c->name) >= sizeof(vc->socket)) {
		snprintf(err, errlen, "port %s: socket path too long", c->name);
		return -1;
	}
	for (uint16_t i = 0; i < SW_MAX_PORTS; i++) {
		const struct sw_port *o = sw.ports[i];

		if (o != NULL && o->ops == &sw_port_vhost_ops &&
		    strcmp(sw_vhost_conf_c(&o->conf)->socket, vc->socket) == 0) {
			snprintf(err, errlen, "port %s: socket %s is port %s's", c->name,
				 vc->socket, o->conf.name);
			return -1;
		}
	}
	return 0;
}

static int
vhost_open(struct sw_port *p, char *err, size_t errlen)
{
	const struct sw_vhost_conf *vc = sw_vhost_conf_c(&p->conf);
	/* the port's own owner and perm, else the daemon's */
	const struct sw_sock_access *own = vc->access.chown ? &vc->access : &sw_vhost_access;
	const struct sw_sock_access *perm = vc->access.perm ? &vc->access : &sw_vhost_access;
	struct hv_vhost_port_conf c = {
		.name = p->conf.name,
		.path = vc->socket,
		.mode = vc->client ? HV_VHOST_CLIENT : HV_VHOST_SERVER,
		.queue_pairs = p->conf.queues,
		.features = vc->features,
		.mp = sw.mp,
		/* a PMD switches a burst whole before the next: see vhost_rx_done() */
		.borrow = true,
		.mem_limit = sw_vhost_mem_limit,
		.sock_perm = perm->perm,
		.sock_chown = own->chown,
		.sock_uid = own->uid,
		.sock_gid = own->gid,
	};

	struct sw_vhost *v = rte_zmalloc("sw_vhost", sizeof(*v), RTE_CACHE_LINE_SIZE);

	if (v == NULL) {
		snprintf(err, errlen, "port %s: out of memory", p->conf.name);
		return -1;
	}
	p->priv = v;
	v->dev = hv_vhost_port_create(&c);
	if (v->dev == NULL) {
		snprintf(err, errlen, "port %s: socket %s: %s", p->conf.name, vc->socket,
			 rte_errno == EADDRINUSE ? "in use by another process"
						 : strerror(rte_errno));
		goto fail;
	}
	if (sw_rxmod_open(p) != 0) {
		snprintf(err, errlen, "port %s: out of memory", p->conf.name);
		hv_vhost_port_destroy(v->dev);
		goto fail;
	}
	return 0;
fail:
	rte_free(v);
	p->priv = NULL;
	return -1;
}

static void
vhost_close(struct sw_port *p)
{
	sw_rxmod_close(p);
	hv_vhost_port_destroy(sw_vhost(p)->dev);
	rte_free(p->priv);
	p->priv = NULL;
}

static uint16_t
vhost_rx(struct sw_port *p, uint16_t q, struct rte_mbuf **pkts, uint16_t n)
{
	return hv_vhost_rx_burst(sw_vhost(p)->dev, q, pkts, n);
}

/*
 * Every frame of the burst was delivered (copied into guests), copied for an
 * ethdev, or dropped by now: the sending guest gets its buffers back.
 */
static void
vhost_rx_done(struct sw_port *p, uint16_t q)
{
	hv_vhost_rx_done(sw_vhost(p)->dev, q);
}

static uint16_t
vhost_tx(struct sw_port *p, uint16_t q, struct rte_mbuf **pkts, uint16_t n)
{
	return hv_vhost_tx_burst(sw_vhost(p)->dev, q, pkts, n);
}

static bool
vhost_link_up(const struct sw_port *p)
{
	return p->priv != NULL && hv_vhost_queue_ready(sw_vhost(p)->dev, 0);
}

/* A frontend is connected; its guest's driver may not have started the rings. */
static bool
vhost_attached(const struct sw_port *p)
{
	return p->priv != NULL && hv_vhost_port_connected(sw_vhost(p)->dev);
}

/*
 * A frame received on a vhost-user port may keep its tail in the sending
 * guest's memory until rx_done (the port borrows).
 */
static bool
vhost_needs_copy(const struct rte_mbuf *m)
{
	return hv_vhost_mbuf_borrows(m);
}

/* One ring's counters; the switch's rx is the guest's TX ring. */
static cJSON *
vring_json(const struct sw_port *p, uint16_t qp, enum hv_vhost_dir dir)
{
	struct hv_vhost_vring_stats s;
	cJSON *o;

	if (hv_vhost_vring_stats(sw_vhost(p)->dev, qp, dir, &s) != 0)
		return NULL;
	o = cJSON_CreateObject();
	/* the virtio ring number, as the guest's driver names it */
	cJSON_AddNumberToObject(o, "vring", 2 * qp + (dir == HV_VHOST_RX));
	cJSON_AddNumberToObject(o, "packets", (double)s.packets);
	cJSON_AddNumberToObject(o, "bytes", (double)s.bytes);
	cJSON_AddNumberToObject(o, "kicks", (double)s.kicks);
	cJSON_AddNumberToObject(o, "irqs", (double)s.irqs_sent);
	cJSON_AddNumberToObject(o, "irqs_suppressed", (double)s.irqs_suppressed);
	cJSON_AddNumberToObject(o, "stops", (double)s.stops);
	cJSON_AddNumberToObject(o, "borrowed", (double)s.borrowed);
	cJSON_AddNumberToObject(o, "log_pages", (double)s.log_pages);
	cJSON_AddNumberToObject(o, "log_syncs", (double)s.log_syncs);
	for (int d = HV_VHOST_DROP__FIRST; d < HV_VHOST_DROP__MAX; d++)
		cJSON_AddNumberToObject(o, hv_vhost_drop_name(d), (double)s.drops[d]);
	sw_rxmod_json(p, qp, dir, o);
	return o;
}

static void
vhost_describe(const struct sw_port *p, cJSON *obj)
{
	cJSON *qps = cJSON_GetObjectItemCaseSensitive(obj, "qps");
	struct hv_vhost_mem_stats m;
	struct hv_vhost_port *dev;

	if (p->priv == NULL)
		return;
	dev = sw_vhost(p)->dev;
	cJSON_AddBoolToObject(obj, "connected", hv_vhost_port_connected(dev));
	cJSON_AddNumberToObject(obj, "connections", (double)hv_vhost_port_connections(dev));
	cJSON_AddNumberToObject(obj, "negotiated_features", (double)hv_vhost_port_features(dev));
	sw_rxmod_port_json(p, obj);
	if (hv_vhost_mem_stats(dev, &m) == 0) {
		cJSON *o = cJSON_AddObjectToObject(obj, "guest_memory");

		cJSON_AddNumberToObject(o, "limit_bytes", (double)m.limit_bytes);
		cJSON_AddNumberToObject(o, "mapped_bytes", (double)m.mapped_bytes);
		cJSON_AddNumberToObject(o, "regions", (double)m.regions);
		cJSON_AddNumberToObject(o, "refused_over_limit", (double)m.over_limit);
		cJSON_AddNumberToObject(o, "refused_not_memfs", (double)m.not_memfs);
		cJSON_AddNumberToObject(o, "fds_refused", (double)m.fds_refused);
		cJSON_AddNumberToObject(o, "fds_closing", (double)m.fds_closing);
		cJSON_AddNumberToObject(o, "log_bytes", (double)m.log_bytes);
	}
	/* per queue pair: rx = what the guest sent, tx = what it was given */
	for (uint16_t q = 0; q < p->conf.queues; q++) {
		cJSON *qp = cJSON_GetArrayItem(qps, q);

		if (qp == NULL)
			break;
		cJSON_AddItemToObject(qp, "rx", vring_json(p, q, HV_VHOST_RX));
		cJSON_AddItemToObject(qp, "tx", vring_json(p, q, HV_VHOST_TX));
	}
}

static void
vhost_driver_counters(const struct sw_port *p, uint64_t *drops, uint64_t *irqs)
{
	*drops = *irqs = 0;
	if (p->priv == NULL)
		return;
	for (uint16_t qp = 0; qp < p->conf.queues; qp++) {
		for (int dir = HV_VHOST_RX; dir <= HV_VHOST_TX; dir++) {
			struct hv_vhost_vring_stats s;

			if (hv_vhost_vring_stats(sw_vhost(p)->dev, qp, dir, &s) != 0)
				continue;
			*irqs += s.irqs_sent;
			for (int d = HV_VHOST_DROP__FIRST; d < HV_VHOST_DROP__MAX; d++)
				*drops += s.drops[d];
		}
	}
}

/* Negotiated per connection: read each time (a plain load of the port's features). */
static uint32_t
vhost_offload_caps(const struct sw_port *p)
{
	return hv_offload_caps_from_virtio(hv_vhost_port_features(sw_vhost(p)->dev));
}

/* ---- idle sleep: on the guest's kicks of its TX ring ---- */

static bool
vhost_sleep_ok(const struct sw_port *p, uint16_t q)
{
	/* an owed interrupt must go on time */
	return !sw_rxmod_queue_owed(p, q);
}

static int
vhost_sleep_arm(struct sw_port *p, uint16_t q)
{
	struct hv_vhost_port *dev = sw_vhost(p)->dev;
	int fd = hv_vhost_kick_fd(dev, q, HV_VHOST_RX);

	if (fd >= 0 && hv_vhost_vring_notify(dev, q, HV_VHOST_RX, true) != 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static bool
vhost_sleep_ready(struct sw_port *p, uint16_t q)
{
	return hv_vhost_vring_has_avail(sw_vhost(p)->dev, q, HV_VHOST_RX);
}

static void
vhost_sleep_disarm(struct sw_port *p, uint16_t q, int fd)
{
	/* never waiting: the frontend shares the fd and may empty it first */
	uint64_t count = hv_vhost_kick_read(fd);

	if (p == NULL)
		return;
	hv_vhost_vring_notify(sw_vhost(p)->dev, q, HV_VHOST_RX, false);
	if (count > 0)
		hv_vhost_vring_count_kicks(sw_vhost(p)->dev, q, HV_VHOST_RX, count);
}

static void
vhost_sleep_adopt(struct sw_port *p, uint16_t q)
{
	hv_vhost_vring_notify(sw_vhost(p)->dev, q, HV_VHOST_RX, false);
}

/* The driver's control thread, shared by every vhost-user port. */
static int
vhost_type_init(void)
{
	/* the daemon has no handlers of its own for the driver's signals */
	return hv_vhost_init(HV_VHOST_INIT_SIGNALS);
}

static const struct sw_port_ctl_ops vhost_ctl_ops = {
	.init = vhost_type_init,
	.fini = hv_vhost_fini,
	.is_default = true,
	.keys = vhost_keys,
	.conf_parse = vhost_conf_parse,
	.conf_json = vhost_conf_json,
	.conf_check = vhost_conf_check,
	.conf_set = vhost_conf_set,
	.conf_apply = sw_rxmod_apply,
	.conf_cli = vhost_conf_cli,
	.tick = sw_rxmod_rates,
	.describe = vhost_describe,
};

const struct sw_port_ops sw_port_vhost_ops = {
	.type = "vhost-user",
	.open = vhost_open,
	.close = vhost_close,
	.link_up = vhost_link_up,
	.attached = vhost_attached,
	.driver_counters = vhost_driver_counters,
	.ctl = &vhost_ctl_ops,
	.rx = vhost_rx,
	.rx_done = vhost_rx_done,
	.tx = vhost_tx,
	.needs_copy = vhost_needs_copy,
	.offload_caps = vhost_offload_caps,
	.queue_poll = sw_rxmod_poll_queue,
	.pmd_enter = sw_rxmod_pmd_enter,
	.pmd_poll = sw_rxmod_pmd_poll,
	.sleep_ok = vhost_sleep_ok,
	.sleep_arm = vhost_sleep_arm,
	.sleep_ready = vhost_sleep_ready,
	.sleep_disarm = vhost_sleep_disarm,
	.sleep_adopt = vhost_sleep_adopt,
};

RTE_INIT(vhost_type_register)
{
	sw_port_type_register(&sw_port_vhost_ops);
}
