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
#include "hv_ctl_api.h"
#include "hv_log.h"
#include "sw.h"

#define CONFIG_MAX (1 << 20)

int
sw_port_conf_foreign(const struct sw_port_ops *type, const struct hv_ctl_vals *v, const char *cmd,
		     char *err, size_t errlen)
{
	const struct sw_port_ops *t;

	/* a key is one type's (its keys); given for a port of another, it is an error */
	for (unsigned int i = 0; (t = sw_port_type_at(i)) != NULL; i++) {
		if (t == type)
			continue;
		for (const int *k = t->ctl->keys; k != NULL && *k != HV_CTL_K__MAX; k++) {
			bool mine = false;

			for (const int *m = type->ctl->keys; m != NULL && *m != HV_CTL_K__MAX; m++)
				mine |= *m == *k;
			if (v->v[*k].set && !mine) {
				snprintf(err, errlen, "%s: '%s' is for %s ports", cmd,
					 hv_ctl_api_key(*k)->key, t->type);
				return -1;
			}
		}
	}
	return 0;
}

int
sw_port_conf_from_vals(const struct hv_ctl_vals *v, const char *cmd, struct sw_port_conf *c,
		       char *err, size_t errlen)
{
	const struct hv_ctl_val *type = &v->v[HV_CTL_K_TYPE], *pmd = &v->v[HV_CTL_K_PMD];
	bool trunk = v->v[HV_CTL_K_TRUNK].b;
	uint64_t vlan = v->v[HV_CTL_K_VLAN].u;

	/* types and ranges were checked against the table (hv_ctl_api_parse()) */
	memset(c, 0, sizeof(*c));
	snprintf(c->name, sizeof(c->name), "%s", v->v[HV_CTL_K_NAME].s);
	c->type = sw_port_type_find(type->set ? type->s : NULL);
	if (c->type == NULL) {
		snprintf(err, errlen, "%s: no port type '%s' in this switch", cmd,
			 type->set ? type->s : "(default)");
		return -1;
	}
	if (sw_port_conf_foreign(c->type, v, cmd, err, errlen) != 0)
		return -1;
	if (trunk && vlan != 0) {
		snprintf(err, errlen, "%s: a trunk carries every VLAN: no '%s' with it", cmd,
			 HV_CTL_KEY(VLAN));
		return -1;
	}
	c->queues = v->v[HV_CTL_K_QUEUES].set ? (uint16_t)v->v[HV_CTL_K_QUEUES].u : 1;
	c->vlan = (uint16_t)vlan;
	c->trunk = trunk;
	c->pmd = pmd->set && pmd->u != HV_CTL_AUTO ? (int)pmd->u : -1;
	return c->type->ctl->conf_parse(v, cmd, c, err, errlen);
}

int
sw_port_conf_from_json(const cJSON *j, const char *cmd, struct sw_port_conf *c, char *err,
		       size_t errlen)
{
	struct hv_ctl_vals v;

	/* a config file's port is port.add's arguments, checked by the same table */
	if (hv_ctl_api_parse(hv_ctl_api_cmd(HV_CTL_C_PORT_ADD), cmd, j, &v, err, errlen) != 0)
		return -1;
	return sw_port_conf_from_vals(&v, cmd, c, err, errlen);
}

cJSON *
sw_port_conf_to_json(const struct sw_port_conf *c)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, HV_CTL_KEY(NAME), c->name);
	cJSON_AddStringToObject(o, HV_CTL_KEY(TYPE), c->type->type);
	c->type->ctl->conf_json(c, o);
	cJSON_AddNumberToObject(o, HV_CTL_KEY(QUEUES), c->queues);
	cJSON_AddNumberToObject(o, HV_CTL_KEY(VLAN), c->vlan);
	if (c->trunk)
		cJSON_AddBoolToObject(o, HV_CTL_KEY(TRUNK), true);
	if (c->pmd >= 0)
		cJSON_AddNumberToObject(o, HV_CTL_KEY(PMD), c->pmd);
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

/* "line L, column C" of byte offset @at of @text (both from 1; a tab is one column). */
static const char *
line_col(const char *text, size_t at, char *buf, size_t len)
{
	size_t line = 1, col = 1;

	for (size_t i = 0; i < at; i++) {
		if (text[i] == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	snprintf(buf, len, "line %zu, column %zu", line, col);
	return buf;
}

static int
settings_from_json(const cJSON *s, char *err, size_t errlen)
{
	const struct hv_ctl_cmd_def *def = hv_ctl_api_settings();
	struct hv_ctl_vals v;

	if (s == NULL)
		return 0;
	if (hv_ctl_api_parse(def, def->name, s, &v, err, errlen) != 0)
		return -1;
	if (v.v[HV_CTL_K_FDB_AGE_S].set)
		sw.settings.fdb_age_s = (uint32_t)v.v[HV_CTL_K_FDB_AGE_S].u;
	if (v.v[HV_CTL_K_MAC_LIMIT].set)
		sw.settings.mac_limit = (uint32_t)v.v[HV_CTL_K_MAC_LIMIT].u;
	if (v.v[HV_CTL_K_FDB_CAPACITY].set)
		sw.settings.fdb_capacity = (uint32_t)v.v[HV_CTL_K_FDB_CAPACITY].u;
	return 0;
}

/*
 * Read the settings, and the ports into @ports (count in @n). A missing file
 * is an empty configuration; a malformed one is an error (nothing is changed).
 */
static int
parse(struct sw_port_conf *ports, unsigned int *n, char *err, size_t errlen)
{
	cJSON *root = NULL, *list, *it;
	char where[48], prefix[sizeof(sw.config_path) + 64];
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
	if (root == NULL) {
		snprintf(err, errlen, "config %s: invalid JSON at byte offset %zu (%s)",
			 sw.config_path, at, line_col(text, at, where, sizeof(where)));
		goto out;
	}
	if (!cJSON_IsObject(root)) {
		/* where the value starts: what an editor shows */
		at = strspn(text, " \t\r\n");
		snprintf(err, errlen, "config %s: not a JSON object at byte offset %zu (%s)",
			 sw.config_path, at, line_col(text, at, where, sizeof(where)));
		goto out;
	}
	if (at < len) {
		snprintf(err, errlen,
			 "config %s: data after the JSON object at byte offset %zu (%s)",
			 sw.config_path, at, line_col(text, at, where, sizeof(where)));
		goto out;
	}
	if (settings_from_json(cJSON_GetObjectItemCaseSensitive(root, "settings"), err, errlen) !=
	    0)
		goto out;
	list = cJSON_GetObjectItemCaseSensitive(root, "ports");
	if (list != NULL && !cJSON_IsArray(list)) {
		snprintf(err, errlen, "config %s: 'ports' must be an array", sw.config_path);
		goto out;
	}
	cJSON_ArrayForEach(it, list)
	{
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(it, HV_CTL_KEY(NAME));

		if (*n == SW_MAX_PORTS) {
			snprintf(err, errlen, "config %s: more than %d ports", sw.config_path,
				 SW_MAX_PORTS);
			goto out;
		}
		/* which port: its index in the array, and its name when it has one */
		if (cJSON_IsString(name))
			snprintf(prefix, sizeof(prefix), "config %s: ports[%u] (%.31s)",
				 sw.config_path, *n, name->valuestring);
		else
			snprintf(prefix, sizeof(prefix), "config %s: ports[%u]", sw.config_path,
				 *n);
		if (sw_port_conf_from_json(it, prefix, &ports[*n], err, errlen) != 0)
			goto out;
		(*n)++;
	}
	rc = 0;
out:
	free(text);
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
	/* ports that use others (tunnels on their uplinks) after the others */
	for (int pass = 0; pass < 2; pass++) {
		for (unsigned int i = 0; i < n; i++) {
			bool later = ports[i].type != NULL && ports[i].type->ctl->uses != NULL;
			char perr[256];

			if (later != (pass == 1))
				continue;
			/* a port that cannot open now stays configured, shown in error */
			if (sw_port_add(&ports[i], true, perr, sizeof(perr)) != 0)
				HV_LOG(ERR, "config: %s", perr);
		}
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
	cJSON_AddNumberToObject(s, HV_CTL_KEY(FDB_AGE_S), sw.settings.fdb_age_s);
	cJSON_AddNumberToObject(s, HV_CTL_KEY(MAC_LIMIT), sw.settings.mac_limit);
	cJSON_AddNumberToObject(s, HV_CTL_KEY(FDB_CAPACITY), sw.settings.fdb_capacity);
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
