/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control API table (hv_ctl_api.h): the only place where command names
 * and argument keys are spelled out.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "hv_ctl_api.h"

#define RTE_DIM_(a) (sizeof(a) / sizeof((a)[0]))

static const struct hv_ctl_word type_words[] = {{"vhost-user", HV_CTL_TYPE_VHOST},
						{"ethdev", HV_CTL_TYPE_ETHDEV},
						{"vxlan", HV_CTL_TYPE_VXLAN},
						{NULL, 0}};
static const struct hv_ctl_word mode_words[] = {
	{"server", HV_CTL_MODE_SERVER}, {"client", HV_CTL_MODE_CLIENT}, {NULL, 0}};
static const struct hv_ctl_word vlan_words[] = {{"none", 0}, {NULL, 0}};
static const struct hv_ctl_word pmd_words[] = {{"auto", HV_CTL_AUTO}, {NULL, 0}};
/* DPDK's RTE_LOG_* values (rte_log.h), spelled as its --log-level option takes them */
static const struct hv_ctl_word level_words[] = {
	{"emerg", 1},  {"alert", 2}, {"crit", 3},  {"err", 4}, {"warning", 5},
	{"notice", 6}, {"info", 7},  {"debug", 8}, {NULL, 0},
};
static const struct hv_ctl_word dir_words[] = {
	{"rx", HV_CTL_DIR_RX}, {"tx", HV_CTL_DIR_TX}, {"both", HV_CTL_DIR_BOTH}, {NULL, 0}};

static const struct hv_ctl_key_def keys[HV_CTL_K__MAX] = {
	[HV_CTL_K_NAME] = {"name", HV_CTL_T_STR, 1, HV_CTL_NAME_MAX, 0, NULL, "NAME",
			   "the port's name"},
	[HV_CTL_K_TYPE] =
		{"type", HV_CTL_T_ENUM, 0, 0, 0, type_words, "TYPE",
		 "a vhost-user socket, a DPDK ethdev, or a VXLAN tunnel (default vhost-user)"},
	[HV_CTL_K_SOCKET] = {"socket", HV_CTL_T_STR, 1, 107, 0, NULL, "PATH",
			     "vhost-user socket (default RUN_DIR/NAME.sock)"},
	[HV_CTL_K_MODE] = {"mode", HV_CTL_T_ENUM, 0, 0, 0, mode_words, "MODE",
			   "vhost-user: listen on the socket (server, default) or connect to it"},
	[HV_CTL_K_QUEUES] = {"queues", HV_CTL_T_UINT, 1, HV_CTL_MAX_QUEUES, 0, NULL, "N",
			     "queue pairs (default 1)"},
	[HV_CTL_K_VLAN] = {"vlan", HV_CTL_T_UINT, 0, HV_CTL_VLAN_MAX, 0, vlan_words, "ID",
			   "access VLAN: the port's untagged frames belong to it; 0 or none: "
			   "the untagged domain"},
	[HV_CTL_K_TRUNK] = {"trunk", HV_CTL_T_BOOL, 0, 0, 0, NULL, NULL,
			    "the port carries every VLAN tagged (uplinks); not with vlan"},
	[HV_CTL_K_DEVARGS] = {"devargs", HV_CTL_T_STR, 1, 255, 0, NULL, "DEVARGS",
			      "ethdev: DPDK device arguments, e.g. net_tap0,iface=x"},
	[HV_CTL_K_PMD] = {"pmd", HV_CTL_T_UINT, 0, HV_CTL_MAX_PMDS - 1, 0, pmd_words, "N",
			  "poll every queue of the port on PMD N (0..PMDs-1); auto: spread "
			  "round-robin (default)"},
	[HV_CTL_K_FEATURES] = {"features", HV_CTL_T_STR, 1, 255, 0, NULL, "LIST",
			       "vhost-user: virtio features offered, e.g. mrg_rxbuf,event_idx,mq "
			       "(default: all known)"},
	[HV_CTL_K_RXMOD] = {"rxmod", HV_CTL_T_UINT_STR, 0, HV_CTL_RXMOD_MAX_US, 63, NULL, "SPEC",
			    "vhost-user: guest interrupt moderation, US|adaptive[,Q:US|adaptive]"
			    "... (doc/rxmod.rst)"},
	[HV_CTL_K_OWNER] = {"owner", HV_CTL_T_STR, 1, 65, 0, NULL, "USER[:GROUP]",
			    "vhost-user server: the socket's owner, USER, USER:GROUP or :GROUP "
			    "(default: hvswitch --vhost-owner, else the daemon's)"},
	[HV_CTL_K_PERM] = {"perm", HV_CTL_T_STR, 1, 4, 0, NULL, "MODE",
			   "vhost-user server: the socket's permissions in octal, e.g. 0660 "
			   "(default: hvswitch --vhost-perm, else the daemon's umask)"},
	[HV_CTL_K_VNI] = {"vni", HV_CTL_T_UINT, 0, HV_CTL_VNI_MAX, 0, NULL, "N",
			  "vxlan: the VXLAN network identifier"},
	[HV_CTL_K_LOCAL] = {"local", HV_CTL_T_STR, 7, 15, 0, NULL, "IP",
			    "vxlan: the local VTEP's IPv4 address (answered on the uplink)"},
	[HV_CTL_K_UPLINK] = {"uplink", HV_CTL_T_STR, 1, HV_CTL_NAME_MAX, 0, NULL, "PORT",
			     "vxlan: the ethdev port that carries the underlay"},
	[HV_CTL_K_DSTPORT] = {"dstport", HV_CTL_T_UINT, 1, 65535, 0, NULL, "N",
			      "vxlan: UDP destination port (default 4789)"},
	[HV_CTL_K_REMOTE] = {"remote", HV_CTL_T_STR, 0, HV_CTL_REMOTE_MAX, 0, NULL, "IP[,IP...]",
			     "vxlan: remote VTEPs of the flood list (head-end replication); "
			     "\"\": none"},
	[HV_CTL_K_MIRROR] = {"mirror", HV_CTL_T_STR, 1, 15, 0, NULL, "NETDEV",
			     "vxlan: a Linux vxlan device whose FDB (remote MACs, flood "
			     "entries) the port follows, e.g. as FRR's zebra programs it"},
	[HV_CTL_K_PUSH] = {"push", HV_CTL_T_STR, 1, 15, 0, NULL, "NETDEV",
			   "vxlan, with mirror: a port of the mirror's bridge where the MACs "
			   "learned on the tunnel's VLAN are pushed (extern_learn) for zebra "
			   "to advertise"},
	[HV_CTL_K_PORT] = {"port", HV_CTL_T_STR, 1, HV_CTL_NAME_MAX, 0, NULL, "NAME",
			   "only this port"},
	[HV_CTL_K_LOGTYPE] = {"logtype", HV_CTL_T_STR, 1, 64, 0, NULL, "TYPE",
			      "a DPDK log type (hvswitch, lib.eal, ...) or a pattern (lib.*)"},
	[HV_CTL_K_LEVEL] = {"level", HV_CTL_T_ENUM, 0, 0, 0, level_words, "LEVEL",
			    "the most verbose level logged"},
	[HV_CTL_K_FDB_AGE_S] = {"fdb_age_s", HV_CTL_T_UINT, 1, 86400 * 7, 0, NULL, "S",
				"learned MACs are forgotten after this idle time"},
	[HV_CTL_K_MAC_LIMIT] = {"mac_limit", HV_CTL_T_UINT, 0, 1u << 24, 0, NULL, "N",
				"MACs one port may own, every port alike (0: no limit)"},
	[HV_CTL_K_FDB_CAPACITY] = {"fdb_capacity", HV_CTL_T_UINT, 1024, 1u << 24, 0, NULL, "N",
				   "FDB entries (at start)"},
	[HV_CTL_K_INPUT] = {"input", HV_CTL_T_STR, 1, HV_CTL_CONSOLE_INPUT_MAX, 0, NULL, "TEXT",
			    "bytes for the guest's serial console"},
	[HV_CTL_K_FORCE] = {"force", HV_CTL_T_BOOL, 0, 0, 0, NULL, NULL,
			    "stop at once (else a Linux guest gets the ACPI power button)"},
	[HV_CTL_K_DIRECTION] = {"direction", HV_CTL_T_ENUM, 0, 0, 0, dir_words, "DIR",
				"rx: frames the switch receives from the port, tx: frames it "
				"delivers to it, both (default)"},
	[HV_CTL_K_COUNT] = {"count", HV_CTL_T_UINT, 1, HV_CTL_CAPTURE_COUNT_MAX, 0, NULL, "N",
			    "stop after N frames (default: when the reader stops)"},
	[HV_CTL_K_SNAPLEN] = {"snaplen", HV_CTL_T_UINT, 64, HV_CTL_SNAPLEN_MAX, 0, NULL, "N",
			      "bytes kept of each frame (default 65535)"},
};

#define P(k)                                                                                       \
	{                                                                                          \
		HV_CTL_K_##k, false, false                                                         \
	}
#define REQ(k)                                                                                     \
	{                                                                                          \
		HV_CTL_K_##k, true, false                                                          \
	}
#define POS(k)                                                                                     \
	{                                                                                          \
		HV_CTL_K_##k, true, true                                                           \
	}
#define POS_OPT(k)                                                                                 \
	{                                                                                          \
		HV_CTL_K_##k, false, true                                                          \
	}

static const struct hv_ctl_cmd_def cmds[HV_CTL_C__MAX] = {
	[HV_CTL_C_VERSION] =
		{"version", HV_CTL_READ, "versions of hvswitch and DPDK", 0, {}, HV_CTL_SVC_SWITCH},
	[HV_CTL_C_PORT_ADD] = {"port.add",
			       HV_CTL_WRITE,
			       "create a port",
			       20,
			       {POS(NAME), P(TYPE),    P(SOCKET),  P(MODE),   P(QUEUES),
				P(VLAN),   P(TRUNK),   P(DEVARGS), P(PMD),    P(FEATURES),
				P(RXMOD),  P(OWNER),   P(PERM),    P(VNI),    P(LOCAL),
				P(UPLINK), P(DSTPORT), P(REMOTE),  P(MIRROR), P(PUSH)},
			       HV_CTL_SVC_SWITCH},
	[HV_CTL_C_PORT_DEL] =
		{"port.del", HV_CTL_WRITE, "delete a port", 1, {POS(NAME)}, HV_CTL_SVC_SWITCH},
	[HV_CTL_C_PORT_LIST] = {"port.list", HV_CTL_READ, "every port", 0, {}, HV_CTL_SVC_SWITCH},
	[HV_CTL_C_PORT_SHOW] = {"port.show",
				HV_CTL_READ,
				"one port with its counters and queues",
				1,
				{POS(NAME)},
				HV_CTL_SVC_SWITCH},
	[HV_CTL_C_PORT_SET] = {"port.set",
			       HV_CTL_WRITE,
			       "change a port's settings (live)",
			       6,
			       {POS(NAME), P(VLAN), P(TRUNK), P(PMD), P(RXMOD), P(REMOTE)},
			       HV_CTL_SVC_SWITCH},
	[HV_CTL_C_FDB_SHOW] = {"fdb.show",
			       HV_CTL_READ,
			       "the learned MAC addresses",
			       1,
			       {P(PORT)},
			       HV_CTL_SVC_SWITCH},
	[HV_CTL_C_FDB_FLUSH] = {"fdb.flush",
				HV_CTL_WRITE,
				"forget learned MAC addresses",
				1,
				{P(PORT)},
				HV_CTL_SVC_SWITCH},
	[HV_CTL_C_STATS] = {"stats",
			    HV_CTL_READ,
			    "counters of ports, PMDs and the FDB",
			    1,
			    {POS_OPT(PORT)},
			    HV_CTL_SVC_SWITCH},
	[HV_CTL_C_CONFIG_SAVE] =
		{"config.save", HV_CTL_WRITE, "write the config file", 0, {}, HV_CTL_SVC_SWITCH},
	[HV_CTL_C_STATS_CLEAR] = {"stats.clear",
				  HV_CTL_WRITE,
				  "start the counters of one port, or of all and the PMDs, from 0",
				  1,
				  {POS_OPT(PORT)},
				  HV_CTL_SVC_SWITCH},
	[HV_CTL_C_LOG_SET] = {"log.set",
			      HV_CTL_WRITE,
			      "set the level of the daemon's log types (at run time)",
			      2,
			      {POS(LOGTYPE), POS(LEVEL)},
			      HV_CTL_SVC_SWITCH},
	[HV_CTL_C_CAPTURE_START] = {"capture.start",
				    HV_CTL_WRITE,
				    "copy a port's frames as pcapng into the stream socket passed "
				    "with the request (SCM_RIGHTS), until the reader closes it",
				    4,
				    {POS(PORT), P(DIRECTION), P(COUNT), P(SNAPLEN)},
				    HV_CTL_SVC_SWITCH},
	[HV_CTL_C_GUEST_SHOW] = {"guest.show",
				 HV_CTL_READ,
				 "the guest's configuration and NIC state",
				 0,
				 {},
				 HV_CTL_SVC_GUEST},
	[HV_CTL_C_GUEST_STATS] = {"guest.stats",
				  HV_CTL_READ,
				  "KVM's binary statistics of each vCPU",
				  0,
				  {},
				  HV_CTL_SVC_GUEST},
	[HV_CTL_C_GUEST_CONSOLE] = {"guest.console",
				    HV_CTL_WRITE,
				    "send input to the guest's serial console",
				    1,
				    {REQ(INPUT)},
				    HV_CTL_SVC_GUEST},
	[HV_CTL_C_GUEST_STOP] = {"guest.stop",
				 HV_CTL_WRITE,
				 "power the guest off (ACPI power button), or stop it",
				 1,
				 {P(FORCE)},
				 HV_CTL_SVC_GUEST},
	[HV_CTL_C_GUEST_QUEUES] = {"guest.queues",
				   HV_CTL_READ,
				   "the NIC's virtqueues: set-up and ring indices",
				   0,
				   {},
				   HV_CTL_SVC_GUEST},
};

static const struct hv_ctl_cmd_def settings = {"config settings",
					       HV_CTL_ROOT_ONLY,
					       "the config file's settings object",
					       3,
					       {P(FDB_AGE_S), P(MAC_LIMIT), P(FDB_CAPACITY)},
					       HV_CTL_SVC_SWITCH};

const struct hv_ctl_cmd_def *
hv_ctl_api_cmd(enum hv_ctl_cmd_id id)
{
	return (unsigned int)id < HV_CTL_C__MAX ? &cmds[id] : NULL;
}

const struct hv_ctl_cmd_def *
hv_ctl_api_find(const char *name)
{
	for (size_t i = 0; i < RTE_DIM_(cmds); i++)
		if (strcmp(cmds[i].name, name) == 0)
			return &cmds[i];
	return NULL;
}

const struct hv_ctl_cmd_def *
hv_ctl_api_find_in(enum hv_ctl_service svc, const char *name)
{
	const struct hv_ctl_cmd_def *d = hv_ctl_api_find(name);

	return d != NULL && d->service == svc ? d : NULL;
}

unsigned int
hv_ctl_api_server_cmds(enum hv_ctl_service svc, const hv_ctl_handler_t *handlers,
		       struct hv_ctl_cmd *out)
{
	unsigned int n = 0;

	for (size_t i = 0; i < RTE_DIM_(cmds); i++)
		if (cmds[i].service == svc && handlers[i] != NULL)
			out[n++] = (struct hv_ctl_cmd){cmds[i].name, handlers[i], cmds[i].help,
						       cmds[i].access};
	out[n] = (struct hv_ctl_cmd){NULL, NULL, NULL, 0};
	return n;
}

const struct hv_ctl_key_def *
hv_ctl_api_key(enum hv_ctl_key k)
{
	return (unsigned int)k < HV_CTL_K__MAX ? &keys[k] : NULL;
}

const struct hv_ctl_cmd_def *
hv_ctl_api_settings(void)
{
	return &settings;
}

const char *
hv_ctl_api_word(enum hv_ctl_key k, uint64_t v)
{
	const struct hv_ctl_word *w = keys[k].words;

	for (; w != NULL && w->word != NULL; w++)
		if (w->value == v)
			return w->word;
	return NULL;
}

int
hv_ctl_parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (s == NULL || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

const char *
hv_ctl_api_expect(enum hv_ctl_key k, char *buf, size_t len)
{
	const struct hv_ctl_key_def *d = &keys[k];
	const struct hv_ctl_word *w;
	size_t off = 0;

	buf[0] = '\0';
	switch (d->type) {
	case HV_CTL_T_STR:
		snprintf(buf, len, "a string of %" PRIu64 "..%" PRIu64 " characters", d->min,
			 d->max);
		break;
	case HV_CTL_T_BOOL:
		snprintf(buf, len, "true or false");
		break;
	case HV_CTL_T_UINT_STR:
		snprintf(buf, len,
			 "an integer %" PRIu64 "..%" PRIu64 " or a string of 1..%zu "
			 "characters",
			 d->min, d->max, d->str_max);
		break;
	case HV_CTL_T_UINT:
		off = (size_t)snprintf(buf, len, "an integer %" PRIu64 "..%" PRIu64, d->min,
				       d->max);
		for (w = d->words; w != NULL && w->word != NULL && off < len; w++)
			off += (size_t)snprintf(buf + off, len - off, " or %s", w->word);
		break;
	case HV_CTL_T_ENUM:
		for (w = d->words; w->word != NULL && off < len; w++)
			off += (size_t)snprintf(buf + off, len - off, "%s%s",
						w == d->words ? ""
						: w[1].word   ? ", "
							      : " or ",
						w->word);
		break;
	}
	return buf;
}

/* Whether the string is one of the key's words; its value in *v. */
static bool
word_value(const struct hv_ctl_key_def *d, const char *s, uint64_t *v)
{
	for (const struct hv_ctl_word *w = d->words; w != NULL && w->word != NULL; w++)
		if (strcmp(w->word, s) == 0) {
			*v = w->value;
			return true;
		}
	return false;
}

/* Check one value against its key; fill val. */
static bool
check_value(const struct hv_ctl_key_def *d, const cJSON *j, struct hv_ctl_val *val)
{
	size_t n;

	switch (d->type) {
	case HV_CTL_T_BOOL:
		val->b = cJSON_IsTrue(j);
		return cJSON_IsBool(j);
	case HV_CTL_T_STR:
		if (!cJSON_IsString(j))
			return false;
		val->s = j->valuestring;
		n = strlen(val->s);
		return n >= d->min && n <= d->max;
	case HV_CTL_T_ENUM:
		val->s = cJSON_IsString(j) ? j->valuestring : NULL;
		return val->s != NULL && word_value(d, val->s, &val->u);
	case HV_CTL_T_UINT:
	case HV_CTL_T_UINT_STR:
		if (cJSON_IsString(j)) {
			val->s = j->valuestring;
			if (d->type == HV_CTL_T_UINT_STR) {
				n = strlen(val->s);
				return n >= 1 && n <= d->str_max;
			}
			return word_value(d, val->s, &val->u);
		}
		/* a JSON number with no fraction, exact as a double (2^53) */
		if (!cJSON_IsNumber(j) || j->valuedouble < 0 ||
		    j->valuedouble > 9007199254740992.0 ||
		    j->valuedouble != (double)(uint64_t)j->valuedouble)
			return false;
		val->u = (uint64_t)j->valuedouble;
		return val->u >= d->min && val->u <= d->max;
	}
	return false;
}

int
hv_ctl_api_parse(const struct hv_ctl_cmd_def *cmd, const char *prefix, const cJSON *args,
		 struct hv_ctl_vals *out, char *err, size_t errlen)
{
	const cJSON *it;
	unsigned int i;
	char exp[128];

	memset(out, 0, sizeof(*out));
	if (prefix == NULL)
		prefix = cmd->name;
	if (args != NULL && !cJSON_IsObject(args)) {
		snprintf(err, errlen, "%s: arguments must be an object", prefix);
		return -1;
	}
	cJSON_ArrayForEach(it, args)
	{
		const struct hv_ctl_key_def *d = NULL;

		for (i = 0; i < cmd->n_params; i++)
			if (strcmp(keys[cmd->params[i].key].key, it->string) == 0) {
				d = &keys[cmd->params[i].key];
				break;
			}
		if (d == NULL) {
			char shown[72], valid[256];
			size_t off = 0;

			valid[0] = '\0';
			for (i = 0; i < cmd->n_params && off < sizeof(valid); i++)
				off += (size_t)snprintf(valid + off, sizeof(valid) - off, "%s%s",
							i ? ", " : "",
							keys[cmd->params[i].key].key);
			hv_ctl_utf8_clean(shown, sizeof(shown), it->string, 64);
			snprintf(err, errlen, "%s: unknown argument '%s' (valid: %s)", prefix,
				 shown, cmd->n_params ? valid : "none");
			return -1;
		}
		if (cJSON_IsNull(it))
			continue; /* null is absent */
		if (out->v[cmd->params[i].key].set) {
			snprintf(err, errlen, "%s: '%s' given twice", prefix, d->key);
			return -1;
		}
		if (!check_value(d, it, &out->v[cmd->params[i].key])) {
			snprintf(err, errlen, "%s: '%s' must be %s", prefix, d->key,
				 hv_ctl_api_expect(cmd->params[i].key, exp, sizeof(exp)));
			return -1;
		}
		out->v[cmd->params[i].key].set = true;
	}
	for (i = 0; i < cmd->n_params; i++)
		if (cmd->params[i].required && !out->v[cmd->params[i].key].set) {
			snprintf(err, errlen, "%s: missing '%s'", prefix,
				 keys[cmd->params[i].key].key);
			return -1;
		}
	return 0;
}

cJSON *
hv_ctl_api_value(enum hv_ctl_key k, const char *text)
{
	const struct hv_ctl_key_def *d = &keys[k];
	uint64_t v;

	if ((d->type == HV_CTL_T_UINT || d->type == HV_CTL_T_UINT_STR) &&
	    hv_ctl_parse_uint(text, 0, UINT64_MAX, &v) == 0 && v <= (1ull << 53))
		return cJSON_CreateNumber((double)v);
	if (d->type == HV_CTL_T_BOOL && (strcmp(text, "true") == 0 || strcmp(text, "false") == 0))
		return cJSON_CreateBool(text[0] == 't');
	return cJSON_CreateString(text);
}

static const char *
access_name(enum hv_ctl_access a)
{
	return a == HV_CTL_READ ? "read" : a == HV_CTL_WRITE ? "admin" : "root";
}

/* The lead line of a service's part of the reference. */
static const char *const service_doc[] = {
	[HV_CTL_SVC_SWITCH] = "Served by the switch daemon (``hvswitch.sock``):",
	[HV_CTL_SVC_GUEST] = "Served by a guest's VMM (``hvctl guest run``, its "
			     "``RUN_DIR/NAME.sock``; called by ``hvctl guest``):",
};

void
hv_ctl_api_doc(FILE *out)
{
	char exp[128];

	for (size_t c = 0; c < RTE_DIM_(cmds); c++) {
		const struct hv_ctl_cmd_def *cmd = &cmds[c];

		if (c == 0 || cmd->service != cmds[c - 1].service)
			fprintf(out, "%s\n\n", service_doc[cmd->service]);

		fprintf(out, "``%s`` (%s)\n    %s.", cmd->name, access_name(cmd->access),
			cmd->help);
		if (cmd->n_params == 0)
			fprintf(out, " No arguments.");
		fprintf(out, "\n\n");
		for (unsigned int i = 0; i < cmd->n_params; i++) {
			enum hv_ctl_key k = cmd->params[i].key;

			fprintf(out, "    * ``%s``%s: %s; %s\n", keys[k].key,
				cmd->params[i].required ? " (required)" : "",
				hv_ctl_api_expect(k, exp, sizeof(exp)), keys[k].help);
		}
		if (cmd->n_params != 0)
			fprintf(out, "\n");
	}
}
