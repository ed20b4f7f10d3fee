/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * port.add for the admin group: the daemon runs as root, so devargs and
 * socket paths are how a client would make it write, read, bind or unlink
 * what the client itself may not (a pcap tx file, a host interface, a socket
 * anywhere). Allow-lists, not deny-lists: what is not named here is root's.
 */
#include <stdio.h>
#include <string.h>

#include "ctl_policy.h"
#include "hv_ctl_api.h"

#define VALUE_MAX 64

static const char *const null_keys[] = {"size", "copy", "no-rx", NULL};
static const char *const no_keys[] = {NULL};
static const char *const tap_keys[] = {"mac", NULL}; /* no iface, no remote */

static const struct {
	const char *driver;
	const char *const *keys;
} drivers[] = {
	{"net_null", null_keys},
	{"net_ring", no_keys},
	{"net_tap", tap_keys},
};

#define DEVARGS_HELP                                                                               \
	"the admin group may use net_nullN[,size=,copy=,no-rx=], net_ringN, "                      \
	"net_tapN[,mac=]; other drivers and keys reach host files or interfaces: root only"

static bool
word_char(char ch, const char *extra)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       (ch != '\0' && strchr(extra, ch) != NULL);
}

/* "net_null0", "net_tap" -> its keys; NULL when not allow-listed. */
static const char *const *
driver_keys(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof(drivers) / sizeof(drivers[0]); i++) {
		size_t dl = strlen(drivers[i].driver);

		if (len < dl || memcmp(name, drivers[i].driver, dl) != 0)
			continue;
		/* only digits after the driver: no bus prefix, no other driver's name */
		for (size_t j = dl; j < len; j++)
			if (name[j] < '0' || name[j] > '9')
				return NULL;
		return drivers[i].keys;
	}
	return NULL;
}

static bool
devargs_ok(const char *devargs)
{
	const char *p = devargs, *end;
	const char *const *keys;

	end = p + strcspn(p, ",");
	keys = driver_keys(p, (size_t)(end - p));
	if (keys == NULL)
		return false;
	while (*end == ',') {
		const char *k = end + 1, *eq, *v;
		size_t i;

		end = k + strcspn(k, ",");
		eq = memchr(k, '=', (size_t)(end - k));
		if (eq == NULL)
			return false;
		for (i = 0; keys[i] != NULL; i++)
			if (strlen(keys[i]) == (size_t)(eq - k) &&
			    memcmp(keys[i], k, (size_t)(eq - k)) == 0)
				break;
		if (keys[i] == NULL)
			return false;
		/* plain values only: no lists ("[...]"), no paths */
		if (end == eq + 1 || end - (eq + 1) > VALUE_MAX)
			return false;
		for (v = eq + 1; v < end; v++)
			if (!word_char(*v, ":._-"))
				return false;
	}
	return *end == '\0';
}

/* RUN_DIR/NAME.sock, NAME of [A-Za-z0-9._-] not starting with '.', not the control socket. */
static bool
socket_ok(const char *sock, const char *run_dir)
{
	size_t rl = strlen(run_dir), nl;
	const char *name;

	while (rl > 1 && run_dir[rl - 1] == '/')
		rl--;
	if (strncmp(sock, run_dir, rl) != 0 || sock[rl] != '/')
		return false;
	name = sock + rl + 1;
	nl = strlen(name);
	if (nl <= 5 || name[0] == '.' || strcmp(name + nl - 5, ".sock") != 0 ||
	    strcmp(name, HV_CTL_SOCK_NAME) == 0)
		return false;
	for (size_t i = 0; i < nl; i++)
		if (!word_char(name[i], "._-"))
			return false;
	return true;
}

bool
sw_ctl_port_add_allowed(const cJSON *args, enum hv_ctl_role role, const char *run_dir, char *err,
			size_t errlen)
{
	const cJSON *type, *v;

	if (role == HV_CTL_ROLE_ROOT || !cJSON_IsObject(args))
		return true; /* not an object: port.add refuses it anyway */
	type = cJSON_GetObjectItemCaseSensitive(args, HV_CTL_KEY(TYPE));
	if (!cJSON_IsString(type) ||
	    strcmp(type->valuestring, hv_ctl_api_word(HV_CTL_K_TYPE, HV_CTL_TYPE_VHOST)) == 0) {
		/* who may connect to a socket of the root daemon's is root's to say */
		if (cJSON_GetObjectItemCaseSensitive(args, HV_CTL_KEY(OWNER)) != NULL ||
		    cJSON_GetObjectItemCaseSensitive(args, HV_CTL_KEY(PERM)) != NULL) {
			snprintf(err, errlen,
				 "%s: '%s' and '%s' are root's: the admin group's sockets get the "
				 "daemon's (--vhost-owner, --vhost-perm)",
				 HV_CTL_CMD(PORT_ADD), HV_CTL_KEY(OWNER), HV_CTL_KEY(PERM));
			return false;
		}
		v = cJSON_GetObjectItemCaseSensitive(args, HV_CTL_KEY(SOCKET));
		/* no socket: RUN_DIR/NAME.sock, NAME checked by port.add */
		if (!cJSON_IsString(v) || socket_ok(v->valuestring, run_dir))
			return true;
		snprintf(err, errlen,
			 "%s: a vhost-user socket outside %s is root's: the admin group "
			 "may use %s/NAME.sock (NAME of [A-Za-z0-9._-])",
			 HV_CTL_CMD(PORT_ADD), run_dir, run_dir);
		return false;
	}
	if (strcmp(type->valuestring, hv_ctl_api_word(HV_CTL_K_TYPE, HV_CTL_TYPE_ETHDEV)) != 0)
		return true; /* port.add refuses the type */
	v = cJSON_GetObjectItemCaseSensitive(args, HV_CTL_KEY(DEVARGS));
	if (!cJSON_IsString(v) || devargs_ok(v->valuestring))
		return true;
	snprintf(err, errlen, "%s: devargs refused: " DEVARGS_HELP, HV_CTL_CMD(PORT_ADD));
	return false;
}
