/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The config file: settings and ports, as JSON. Every change made through
 * the control socket is written back atomically (temp file, fsync, rename,
 * fsync of the directory), so a restart brings the same ports back.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_common.h>

#include "hv_ctl.h"
#include "hv_log.h"
#include "sw.h"

#define CONFIG_MAX (1 << 20)

static const char *const port_keys[] = {"name", "type", "socket", "mode", "queues", "vlan",
					"trunk", "devargs", "pmd", "features", "rxmod", NULL};

int
sw_port_conf_from_json(const cJSON *j, const char *cmd, struct sw_port_conf *c, char *err,
		       size_t errlen)
{
	const char *name = NULL, *type = "vhost-user", *sock = NULL, *mode = NULL, *dev = NULL;
	const char *feat = NULL;
	uint64_t queues = 1, vlan = 0, pmd = 0;
	bool trunk = false;
	int has_pmd;

	memset(c, 0, sizeof(*c));
	if (hv_ctl_args_check(j, cmd, port_keys, err, errlen) != 0 ||
	    hv_ctl_arg_str(j, cmd, "name", true, SW_NAME_MAX - 1, &name, err, errlen) < 0 ||
	    hv_ctl_arg_str(j, cmd, "type", false, 16, &type, err, errlen) < 0 ||
	    hv_ctl_arg_str(j, cmd, "socket", false, sizeof(c->socket) - 1, &sock, err, errlen) < 0 ||
	    hv_ctl_arg_str(j, cmd, "mode", false, 8, &mode, err, errlen) < 0 ||
	    hv_ctl_arg_str(j, cmd, "devargs", false, sizeof(c->devargs) - 1, &dev, err, errlen) < 0 ||
	    hv_ctl_arg_uint(j, cmd, "queues", false, 1, SW_MAX_QUEUES, &queues, err, errlen) < 0 ||
	    hv_ctl_arg_uint(j, cmd, "vlan", false, 0, SW_VLAN_MAX, &vlan, err, errlen) < 0 ||
	    hv_ctl_arg_bool(j, cmd, "trunk", false, &trunk, err, errlen) < 0 ||
	    hv_ctl_arg_str(j, cmd, "features", false, 255, &feat, err, errlen) < 0 ||
	    (has_pmd = hv_ctl_arg_uint(j, cmd, "pmd", false, 0, SW_MAX_PMDS - 1, &pmd, err,
				       errlen)) < 0)
		return -1;
	snprintf(c->name, sizeof(c->name), "%s", name);
	if (strcmp(type, "vhost-user") == 0) {
		c->type = SW_PORT_VHOST;
	} else if (strcmp(type, "ethdev") == 0) {
		c->type = SW_PORT_ETHDEV;
	} else {
		snprintf(err, errlen, "%s: 'type' must be vhost-user or ethdev", cmd);
		return -1;
	}
	if (mode != NULL && strcmp(mode, "server") != 0 && strcmp(mode, "client") != 0) {
		snprintf(err, errlen, "%s: 'mode' must be server or client", cmd);
		return -1;
	}
	if (c->type == SW_PORT_ETHDEV && (sock != NULL || mode != NULL)) {
		snprintf(err, errlen, "%s: 'socket' and 'mode' are for vhost-user ports", cmd);
		return -1;
	}
	if (feat != NULL && (c->type != SW_PORT_VHOST ||
			     sw_vhost_features_parse(feat, cmd, &c->features, err, errlen) != 0)) {
		if (c->type != SW_PORT_VHOST)
			snprintf(err, errlen, "%s: 'features' is for vhost-user ports", cmd);
		return -1;
	}
	if (c->type == SW_PORT_VHOST && dev != NULL) {
		snprintf(err, errlen, "%s: 'devargs' is for ethdev ports", cmd);
		return -1;
	}
	if (trunk && vlan != 0) {
		snprintf(err, errlen, "%s: a trunk carries every VLAN: no 'vlan' with it", cmd);
		return -1;
	}
	c->client = mode != NULL && strcmp(mode, "client") == 0;
	if (sock != NULL)
		snprintf(c->socket, sizeof(c->socket), "%s", sock);
	if (dev != NULL)
		snprintf(c->devargs, sizeof(c->devargs), "%s", dev);
	c->queues = (uint16_t)queues;
	c->vlan = (uint16_t)vlan;
	c->trunk = trunk;
	c->pmd = has_pmd == 1 ? (int)pmd : -1;
	if (cJSON_GetObjectItemCaseSensitive(j, "rxmod") != NULL && c->type != SW_PORT_VHOST) {
		snprintf(err, errlen, "%s: 'rxmod' is for vhost-user ports", cmd);
		return -1;
	}
	if (sw_rxmod_arg(j, cmd, c->queues, c->rxmod, err, errlen) < 0)
		return -1;
	return 0;
}

int
sw_rxmod_arg(const cJSON *j, const char *cmd, uint16_t queues, char *spec, char *err,
	     size_t errlen)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, "rxmod");
	uint32_t win[SW_MAX_QUEUES];
	char buf[SW_RXMOD_SPEC_MAX];

	if (v == NULL)
		return 0;
	if (cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble <= HV_RXMOD_MAX_US &&
	    v->valuedouble == (double)(uint32_t)v->valuedouble) {
		snprintf(buf, sizeof(buf), "%u", (uint32_t)v->valuedouble);
	} else if (cJSON_IsString(v) && strlen(v->valuestring) < sizeof(buf)) {
		snprintf(buf, sizeof(buf), "%s", v->valuestring);
	} else {
		snprintf(err, errlen, "%s: 'rxmod' must be microseconds 0..%d, 'adaptive', or such "
			 "a list with per-queue Q:VALUE", cmd, HV_RXMOD_MAX_US);
		return -1;
	}
	if (sw_rxmod_spec_parse(buf, queues, win, err, errlen) != 0)
		return -1;
	memcpy(spec, buf, sizeof(buf));
	return 1;
}

cJSON *
sw_port_conf_to_json(const struct sw_port_conf *c)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "name", c->name);
	if (c->type == SW_PORT_VHOST) {
		cJSON_AddStringToObject(o, "type", "vhost-user");
		cJSON_AddStringToObject(o, "socket", c->socket);
		cJSON_AddStringToObject(o, "mode", c->client ? "client" : "server");
		if (c->features != 0) {
			char f[256];

			sw_vhost_features_format(c->features, f, sizeof(f));
			cJSON_AddStringToObject(o, "features", f);
		}
		if (c->rxmod[0] != '\0')
			cJSON_AddStringToObject(o, "rxmod", c->rxmod);
	} else {
		cJSON_AddStringToObject(o, "type", "ethdev");
		cJSON_AddStringToObject(o, "devargs", c->devargs);
	}
	cJSON_AddNumberToObject(o, "queues", c->queues);
	cJSON_AddNumberToObject(o, "vlan", c->vlan);
	if (c->trunk)
		cJSON_AddBoolToObject(o, "trunk", true);
	if (c->pmd >= 0)
		cJSON_AddNumberToObject(o, "pmd", c->pmd);
	return o;
}

/* The whole file, NUL-terminated, its length in *@len. */
static char *
read_file(const char *path, size_t *len, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char *buf;
	size_t n;

	if (f == NULL) {
		snprintf(err, errlen, "config %s: %s", path, strerror(errno));
		return NULL;
	}
	buf = malloc(CONFIG_MAX + 1);
	n = buf ? fread(buf, 1, CONFIG_MAX + 1, f) : 0;
	fclose(f);
	if (buf == NULL || n > CONFIG_MAX) {
		snprintf(err, errlen, "config %s: larger than %d bytes", path, CONFIG_MAX);
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

static int
settings_from_json(const cJSON *s, char *err, size_t errlen)
{
	static const char *const keys[] = {"fdb_age_s", "mac_limit", "fdb_capacity", NULL};
	uint64_t age = sw.settings.fdb_age_s, limit = sw.settings.mac_limit;
	uint64_t cap = sw.settings.fdb_capacity;

	if (s == NULL)
		return 0;
	if (hv_ctl_args_check(s, "config settings", keys, err, errlen) != 0 ||
	    hv_ctl_arg_uint(s, "config settings", "fdb_age_s", false, 1, 86400 * 7, &age, err,
			    errlen) < 0 ||
	    hv_ctl_arg_uint(s, "config settings", "mac_limit", false, 0, 1u << 24, &limit, err,
			    errlen) < 0 ||
	    hv_ctl_arg_uint(s, "config settings", "fdb_capacity", false, 1024, 1u << 24, &cap, err,
			    errlen) < 0)
		return -1;
	sw.settings.fdb_age_s = (uint32_t)age;
	sw.settings.mac_limit = (uint32_t)limit;
	sw.settings.fdb_capacity = (uint32_t)cap;
	return 0;
}

/*
 * Read the settings, and the ports into @ports (count in @n). A missing file
 * is an empty configuration; a malformed one is an error (nothing is changed).
 */
static int
parse(struct sw_port_conf *ports, unsigned int *n, char *err, size_t errlen)
{
	cJSON *root, *list, *it;
	const char *end = NULL;
	size_t len, at;
	char *text;
	int rc = -1;

	*n = 0;
	if (access(sw.config_path, F_OK) != 0)
		return 0;
	text = read_file(sw.config_path, &len, err, errlen);
	if (text == NULL)
		return -1;
	root = cJSON_ParseWithLengthOpts(text, len, &end, false);
	at = end != NULL ? (size_t)(end - text) : 0;
	/*
	 * Nothing but white space may follow the object: the next save would
	 * drop it silently (a NUL byte included: it is no end of the file).
	 */
	while (root != NULL && at < len &&
	       (text[at] == ' ' || text[at] == '\t' || text[at] == '\r' || text[at] == '\n'))
		at++;
	free(text);
	if (root == NULL) {
		snprintf(err, errlen, "config %s: invalid JSON at byte offset %zu", sw.config_path, at);
		goto out;
	}
	if (!cJSON_IsObject(root)) {
		snprintf(err, errlen, "config %s: not a JSON object", sw.config_path);
		goto out;
	}
	if (at < len) {
		snprintf(err, errlen, "config %s: data after the JSON object at byte offset %zu",
			 sw.config_path, at);
		goto out;
	}
	if (settings_from_json(cJSON_GetObjectItemCaseSensitive(root, "settings"), err,
			       errlen) != 0)
		goto out;
	list = cJSON_GetObjectItemCaseSensitive(root, "ports");
	if (list != NULL && !cJSON_IsArray(list)) {
		snprintf(err, errlen, "config %s: 'ports' must be an array", sw.config_path);
		goto out;
	}
	cJSON_ArrayForEach(it, list) {
		if (*n == SW_MAX_PORTS) {
			snprintf(err, errlen, "config %s: more than %d ports", sw.config_path,
				 SW_MAX_PORTS);
			goto out;
		}
		if (sw_port_conf_from_json(it, "config port", &ports[*n], err, errlen) != 0)
			goto out;
		(*n)++;
	}
	rc = 0;
out:
	cJSON_Delete(root);
	return rc;
}

static struct sw_port_conf *
conf_buf(void)
{
	return calloc(SW_MAX_PORTS, sizeof(struct sw_port_conf));
}

int
sw_config_read(struct sw_port_conf **ports, unsigned int *n, char *err, size_t errlen)
{
	*ports = conf_buf();
	if (*ports == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (parse(*ports, n, err, errlen) != 0) {
		free(*ports);
		*ports = NULL;
		return -1;
	}
	return 0;
}

void
sw_config_add_ports(const struct sw_port_conf *ports, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		char perr[256];

		/* a port that cannot open now stays configured, shown in error */
		if (sw_port_add(&ports[i], true, perr, sizeof(perr)) != 0)
			HV_LOG(ERR, "config: %s", perr);
	}
	HV_LOG(INFO, "config %s: %u port(s)", sw.config_path, n);
}

/* All of @len bytes; -1 with errno set (ENOSPC for a write the disk cut short). */
static int
write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0) {
			errno = ENOSPC;
			return -1;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Make a rename in the directory of @path durable. */
static int
fsync_dir(const char *path)
{
	char buf[sizeof(sw.config_path)];
	int fd, rc;

	snprintf(buf, sizeof(buf), "%s", path);
	fd = open(dirname(buf), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	rc = fsync(fd);
	close(fd);
	return rc;
}

int
sw_config_save(char *err, size_t errlen)
{
	char tmp[sizeof(sw.config_path) + 8];
	cJSON *root = cJSON_CreateObject(), *s, *list;
	char *text;
	int fd, rc = -1;
	size_t len;

	s = cJSON_AddObjectToObject(root, "settings");
	cJSON_AddNumberToObject(s, "fdb_age_s", sw.settings.fdb_age_s);
	cJSON_AddNumberToObject(s, "mac_limit", sw.settings.mac_limit);
	cJSON_AddNumberToObject(s, "fdb_capacity", sw.settings.fdb_capacity);
	list = cJSON_AddArrayToObject(root, "ports");
	for (uint16_t i = 0; i < SW_MAX_PORTS; i++)
		if (sw.ports[i] != NULL && !sw.ports[i]->ephemeral)
			cJSON_AddItemToArray(list, sw_port_conf_to_json(&sw.ports[i]->conf));
	text = cJSON_Print(root);
	cJSON_Delete(root);
	if (text == NULL) {
		snprintf(err, errlen, "config: out of memory");
		return -1;
	}
	len = strlen(text);
	snprintf(tmp, sizeof(tmp), "%s.tmp", sw.config_path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
	text[len] = '\n'; /* over the NUL: the file ends with a line */
	if (fd < 0 || write_all(fd, text, len + 1) != 0 || fsync(fd) != 0) {
		snprintf(err, errlen, "config %s: %s", tmp, strerror(errno));
		goto out;
	}
	if (rename(tmp, sw.config_path) != 0) {
		snprintf(err, errlen, "config %s: %s", sw.config_path, strerror(errno));
		goto out;
	}
	/* the rename itself survives a crash only once its directory is on disk */
	if (fsync_dir(sw.config_path) != 0) {
		snprintf(err, errlen, "config %s: directory: %s", sw.config_path, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	if (rc != 0)
		unlink(tmp);
	free(text);
	return rc;
}
