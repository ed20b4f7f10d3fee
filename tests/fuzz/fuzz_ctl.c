/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the control protocol: a request line into the
 * server's dispatcher (lib/ctl/hv_ctl_dispatch.c) as a client of a
 * fuzz-chosen role, with a command table whose handlers run the argument
 * helpers (hv_ctl_json.c) and the daemon's port.add policy
 * (app/hvswitch/ctl_policy.c) on the request's args. No sockets, no EAL.
 *
 * Input: byte 0 picks the role (% 3) and run dir variant (bit 7); the rest
 * is the request line (no '\n' needed; it may contain any bytes).
 *
 * Checked after every input: the reply is exactly one line of valid UTF-8
 * that a strict JSON parser accepts, {"ok":true,"result":...} or
 * {"ok":false,"error":"..."}; a role below the command's access is refused;
 * what the policy allows a non-root client cannot name a file, a host
 * interface or a path outside the run dir.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_policy.h"
#include "hv_ctl.h"
#include "hv_ctl_api.h"
#include "hv_ctl_priv.h"
#include "hv_test_utf8.h"

gid_t sw_ctl_admin_group = HV_CTL_NO_GROUP; /* the daemon's, declared by ctl_policy.h */

static unsigned int ran_write; /* write handler runs of the current input */
static const char *run_dir;

#define FUZZ_CHECK(cond)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "fuzz_ctl: check failed: %s (line %d)\n", #cond,           \
				__LINE__);                                                         \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

/* Every ",key=" of devargs is one that reaches no file or interface. */
static int
keys_harmless(const char *devargs)
{
	static const char *const ok[] = {"size", "copy", "no-rx", "mac"};
	const char *p = strchr(devargs, ',');

	while (p != NULL) {
		const char *k = p + 1, *eq = strchr(k, '='), *next = strchr(k, ',');
		size_t i;

		if (eq == NULL || (next != NULL && next < eq))
			return 0;
		for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
			if ((size_t)(eq - k) == strlen(ok[i]) &&
			    strncmp(k, ok[i], strlen(ok[i])) == 0)
				break;
		if (i == sizeof(ok) / sizeof(ok[0]))
			return 0;
		p = next;
	}
	return 1;
}

/* port.add: the daemon's policy, then the helpers on its usual arguments. */
static int
h_port_add(void *ctx, const cJSON *args, cJSON **result, char *err, size_t errlen)
{
	const struct hv_ctl_peer *p = hv_ctl_current_peer();
	const char *name = NULL, *type = "vhost-user", *sock = NULL, *dev = NULL;
	uint64_t queues = 1;
	bool trunk = false;

	(void)ctx;
	FUZZ_CHECK(p != NULL && p->role != HV_CTL_ROLE_READ);
	ran_write++;
	if (!sw_ctl_port_add_allowed(args, p->role, run_dir, err, errlen))
		return -1;
	if (p->role != HV_CTL_ROLE_ROOT && cJSON_IsObject(args)) {
		const cJSON *t = cJSON_GetObjectItemCaseSensitive(args, "type");
		const cJSON *d = cJSON_GetObjectItemCaseSensitive(args, "devargs");
		const cJSON *s = cJSON_GetObjectItemCaseSensitive(args, "socket");

		if (cJSON_IsString(t) && strcmp(t->valuestring, "ethdev") == 0 &&
		    cJSON_IsString(d)) {
			/* an allowed driver, and nothing path- or list-like */
			FUZZ_CHECK(strncmp(d->valuestring, "net_null", 8) == 0 ||
				   strncmp(d->valuestring, "net_ring", 8) == 0 ||
				   strncmp(d->valuestring, "net_tap", 7) == 0);
			FUZZ_CHECK(strpbrk(d->valuestring, "/[]{} ") == NULL);
			FUZZ_CHECK(keys_harmless(d->valuestring));
		}
		if ((!cJSON_IsString(t) || strcmp(t->valuestring, "vhost-user") == 0) &&
		    cJSON_IsString(s)) {
			size_t rl = strlen("/run/hvswitch");

			/* a plain name right in the run dir */
			FUZZ_CHECK(strncmp(s->valuestring, "/run/hvswitch/", rl + 1) == 0);
			FUZZ_CHECK(strchr(s->valuestring + rl + 1, '/') == NULL);
			FUZZ_CHECK(s->valuestring[rl + 1] != '.');
			FUZZ_CHECK(strcmp(s->valuestring + rl + 1, HV_CTL_SOCK_NAME) != 0);
		}
	}
	if (hv_ctl_arg_str(args, "port.add", "name", true, 15, &name, err, errlen) < 0 ||
	    hv_ctl_arg_str(args, "port.add", "type", false, 16, &type, err, errlen) < 0 ||
	    hv_ctl_arg_str(args, "port.add", "socket", false, 107, &sock, err, errlen) < 0 ||
	    hv_ctl_arg_str(args, "port.add", "devargs", false, 255, &dev, err, errlen) < 0 ||
	    hv_ctl_arg_uint(args, "port.add", "queues", false, 1, 8, &queues, err, errlen) < 0 ||
	    hv_ctl_arg_bool(args, "port.add", "trunk", false, &trunk, err, errlen) < 0)
		return -1;
	*result = cJSON_CreateObject();
	cJSON_AddStringToObject(*result, "name", name);
	cJSON_AddStringToObject(*result, "type", type);
	if (sock != NULL)
		cJSON_AddStringToObject(*result, "socket", sock);
	if (dev != NULL)
		cJSON_AddStringToObject(*result, "devargs", dev); /* client bytes, echoed */
	cJSON_AddNumberToObject(*result, "queues", (double)queues);
	return 0;
}

/* port.del: an error that echoes the client's bytes, as the daemon's do. */
static int
h_port_del(void *ctx, const cJSON *args, cJSON **result, char *err, size_t errlen)
{
	const char *name = "";
	static const char *const keys[] = {"name", NULL};

	(void)ctx, (void)result;
	ran_write++;
	if (hv_ctl_args_check(args, "port.del", keys, err, errlen) != 0 ||
	    hv_ctl_arg_str(args, "port.del", "name", true, 0, &name, err, errlen) < 0)
		return -1;
	snprintf(err, errlen, "port.del: no port %s", name);
	return -1;
}

static int
h_echo(void *ctx, const cJSON *args, cJSON **result, char *err, size_t errlen)
{
	(void)ctx, (void)err, (void)errlen;
	*result = args != NULL ? cJSON_Duplicate(args, true) : NULL;
	return 0;
}

static int
h_root(void *ctx, const cJSON *args, cJSON **result, char *err, size_t errlen)
{
	(void)ctx, (void)args, (void)result, (void)err, (void)errlen;
	FUZZ_CHECK(hv_ctl_current_peer()->role == HV_CTL_ROLE_ROOT);
	return 0;
}

static const struct hv_ctl_cmd cmds[] = {
	{"port.add", h_port_add, "policy and helpers", HV_CTL_WRITE},
	{"port.del", h_port_del, "an echoing error", HV_CTL_WRITE},
	{"stats", h_echo, "echo", HV_CTL_READ},
	{"config.save", h_root, "root only", HV_CTL_ROOT_ONLY},
	{NULL, NULL, NULL, 0},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hv_ctl_server *s;
	struct client c;
	const char *end = NULL;
	cJSON *rep, *ok;
	char *text;
	size_t len;

	if (size < 1)
		return 0;
	/* the dispatcher needs only the table and the context of the server */
	s = calloc(1, sizeof(*s));
	FUZZ_CHECK(s != NULL);
	s->cmds = cmds;
	s->admin_group = 4243;
	s->api = (data[0] & 0x40) != 0; /* requests checked against hv_ctl_api.h's table */
	memset(&c, 0, sizeof(c));
	c.fd = -1;
	c.pass_fd = -1;
	c.peer.role = (enum hv_ctl_role)(data[0] % 3);
	run_dir = data[0] & 0x80 ? "/run/hvswitch/" : "/run/hvswitch";
	ran_write = 0;

	FUZZ_CHECK(hv_ctl_dispatch(s, &c, (const char *)data + 1, size - 1) == 0);
	FUZZ_CHECK(hv_ctl_current_peer() == NULL);
	FUZZ_CHECK(hv_ctl_current_vals() == NULL);
	if (c.out_len > 0) {
		/* exactly one line */
		FUZZ_CHECK(c.out[c.out_len - 1] == '\n');
		FUZZ_CHECK(memchr(c.out, '\n', c.out_len - 1) == NULL);
		FUZZ_CHECK(hv_test_utf8_valid(c.out, c.out_len - 1));
		len = c.out_len - 1;
		text = malloc(len + 1);
		FUZZ_CHECK(text != NULL);
		memcpy(text, c.out, len);
		text[len] = '\0';
		FUZZ_CHECK(strlen(text) == len); /* no NUL inside */
		rep = cJSON_ParseWithOpts(text, &end, true);
		FUZZ_CHECK(rep != NULL);
		ok = cJSON_GetObjectItemCaseSensitive(rep, "ok");
		FUZZ_CHECK(cJSON_IsBool(ok));
		if (cJSON_IsTrue(ok))
			FUZZ_CHECK(cJSON_GetObjectItemCaseSensitive(rep, "result") != NULL);
		else
			FUZZ_CHECK(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(rep, "error")));
		cJSON_Delete(rep);
		free(text);
	}
	/* the read role never reaches a write handler */
	if (c.peer.role == HV_CTL_ROLE_READ)
		FUZZ_CHECK(ran_write == 0);
	free(c.in);
	free(c.out);
	free(s);

	/* the cleaner on its own, with a cut anywhere */
	{
		char src[512], dst[512];
		size_t n = size - 1 < sizeof(src) - 1 ? size - 1 : sizeof(src) - 1;
		size_t max = size > 1 ? data[size - 1] : 0, got;

		memcpy(src, data + 1, n);
		src[n] = '\0';
		got = hv_ctl_utf8_clean(dst, 1 + data[0] % sizeof(dst), src, max);
		FUZZ_CHECK(got == strlen(dst) && got <= max && got <= data[0] % sizeof(dst));
		FUZZ_CHECK(hv_test_utf8_valid(dst, got));
	}
	return 0;
}
