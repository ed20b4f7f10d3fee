/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Requests and replies of the control protocol server: parse a line, check
 * the client's role against the command, run the handler, queue the reply.
 * Every reply is one line of valid UTF-8, whatever bytes the client sent.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hv_ctl.h"
#include "hv_ctl_api.h"
#include "hv_ctl_priv.h"

/* The client whose request runs now (handlers read it through hv_ctl_current_peer()). */
static __thread const struct hv_ctl_peer *current_peer;
/* Its arguments as validated against the API table (hv_ctl_server_use_api()). */
static __thread const struct hv_ctl_vals *current_vals;
/* The descriptor passed with it (the client's slot), for hv_ctl_current_take_fd(). */
static __thread int *current_fd;

int
hv_ctl_current_take_fd(void)
{
	int fd = current_fd != NULL ? *current_fd : -1;

	if (current_fd != NULL)
		*current_fd = -1;
	return fd;
}

const struct hv_ctl_peer *
hv_ctl_current_peer(void)
{
	return current_peer;
}

const struct hv_ctl_vals *
hv_ctl_current_vals(void)
{
	return current_vals;
}

/* Replace control characters so that an error stays one line. */
static void
one_line(char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = ' ';
}

/* Queue text plus a newline, as valid UTF-8; -1 on allocation failure. */
static int
client_queue(struct client *c, const char *text)
{
	size_t len = strlen(text);

	if (c->out_off > 0) { /* keep the buffer to what is still to be written */
		memmove(c->out, c->out + c->out_off, hv_ctl_out_pending(c));
		c->out_len -= c->out_off;
		c->out_off = 0;
	}
	if (c->out_len + len + 1 > c->out_cap) {
		size_t cap = c->out_cap ? c->out_cap : 4096;
		char *nout;

		while (cap < c->out_len + len + 1)
			cap *= 2;
		nout = realloc(c->out, cap);
		if (nout == NULL)
			return -1;
		c->out = nout;
		c->out_cap = cap;
	}
	/* the text and its NUL fit: cap >= out_len + len + 1 */
	len = hv_ctl_utf8_clean(c->out + c->out_len, len + 1, text, len);
	c->out[c->out_len + len] = '\n';
	c->out_len += len + 1;
	return 0;
}

/* Queue {"ok":true,"result":result} (result consumed; NULL: null). */
static int
reply_ok(struct client *c, cJSON *result)
{
	cJSON *rep = cJSON_CreateObject();
	char *text = NULL;
	int rc = -1;

	if (result == NULL)
		result = cJSON_CreateNull();
	if (rep == NULL || result == NULL || cJSON_AddTrueToObject(rep, "ok") == NULL) {
		cJSON_Delete(result);
		goto out;
	}
	cJSON_AddItemToObject(rep, "result", result);
	text = cJSON_PrintUnformatted(rep);
	if (text != NULL)
		rc = client_queue(c, text);
out:
	if (rc < 0)
		rc = client_queue(c, "{\"ok\":false,\"error\":\"out of memory\"}");
	cJSON_Delete(rep);
	free(text);
	return rc;
}

char *
hv_ctl_error_text(char *msg)
{
	cJSON *rep = cJSON_CreateObject();
	char *text = NULL;

	one_line(msg);
	if (rep != NULL && cJSON_AddFalseToObject(rep, "ok") != NULL &&
	    cJSON_AddStringToObject(rep, "error", msg) != NULL)
		text = cJSON_PrintUnformatted(rep);
	cJSON_Delete(rep);
	return text;
}

int
hv_ctl_reply_err(struct client *c, char *msg)
{
	char *text = hv_ctl_error_text(msg);
	int rc = -1;

	if (text != NULL)
		rc = client_queue(c, text);
	if (rc < 0)
		rc = client_queue(c, "{\"ok\":false,\"error\":\"out of memory\"}");
	free(text);
	return rc;
}

/* "args": [{"key", "accepts", "required"}] of a command of the API table. */
static int
help_args(const struct hv_ctl_cmd_def *def, cJSON *o)
{
	cJSON *args = cJSON_AddArrayToObject(o, "args");
	char exp[128];

	if (args == NULL)
		return -1;
	for (unsigned int i = 0; i < def->n_params; i++) {
		cJSON *a = cJSON_CreateObject();

		if (a == NULL || !cJSON_AddItemToArray(args, a) ||
		    cJSON_AddStringToObject(a, "key", hv_ctl_api_key(def->params[i].key)->key) ==
			    NULL ||
		    cJSON_AddStringToObject(
			    a, "accepts",
			    hv_ctl_api_expect(def->params[i].key, exp, sizeof(exp))) == NULL ||
		    cJSON_AddBoolToObject(a, "required", def->params[i].required) == NULL)
			return -1;
	}
	return 0;
}

static int
builtin_help(void *ctx, const cJSON *args, cJSON **result, char *err, size_t errlen)
{
	const struct hv_ctl_server *s = ctx;
	const struct hv_ctl_cmd *cmd;
	cJSON *list = cJSON_CreateArray(), *o;

	(void)args;
	if (list == NULL)
		goto nomem;
	for (cmd = s->cmds; cmd != NULL && cmd->name != NULL; cmd++) {
		const struct hv_ctl_cmd_def *def =
			s->api ? hv_ctl_api_find_in(s->api_svc, cmd->name) : NULL;

		o = cJSON_CreateObject();
		if (o == NULL || !cJSON_AddItemToArray(list, o) ||
		    cJSON_AddStringToObject(o, "name", cmd->name) == NULL ||
		    cJSON_AddStringToObject(o, "help", cmd->help ? cmd->help : "") == NULL)
			goto nomem;
		if (def != NULL && help_args(def, o) != 0)
			goto nomem;
	}
	o = cJSON_CreateObject();
	if (o == NULL || !cJSON_AddItemToArray(list, o) ||
	    cJSON_AddStringToObject(o, "name", "help") == NULL ||
	    cJSON_AddStringToObject(o, "help", "list the commands") == NULL)
		goto nomem;
	*result = list;
	return 0;
nomem:
	cJSON_Delete(list);
	snprintf(err, errlen, "help: out of memory");
	return -1;
}

static bool
blank(const char *p, const char *end)
{
	for (; p < end; p++)
		if (!isspace((unsigned char)*p))
			return false;
	return true;
}

/* Whether the client's role allows the command; else the refusal in err. */
static bool
allowed(const struct hv_ctl_server *s, const struct client *c, const char *name,
	enum hv_ctl_access access, char *err, size_t errlen)
{
	if (c->peer.role == HV_CTL_ROLE_ROOT || access == HV_CTL_READ ||
	    (access == HV_CTL_WRITE && c->peer.role == HV_CTL_ROLE_ADMIN))
		return true;
	if (access == HV_CTL_WRITE && s->admin_group != HV_CTL_NO_GROUP)
		snprintf(err, errlen,
			 "permission denied: %s changes the switch: root or group %u only", name,
			 (unsigned int)s->admin_group);
	else if (access == HV_CTL_WRITE)
		snprintf(err, errlen, "permission denied: %s changes the switch: root only", name);
	else
		snprintf(err, errlen, "permission denied: %s is for root only", name);
	return false;
}

int
hv_ctl_dispatch(struct hv_ctl_server *s, struct client *c, const char *line, size_t len)
{
	const struct hv_ctl_cmd *cmd = NULL;
	enum hv_ctl_access access = HV_CTL_READ;
	const char *end = NULL;
	cJSON *req, *name = NULL, *args = NULL, *result = NULL;
	char err[HV_CTL_ERR_MAX];
	void *ctx = s->ctx;
	hv_ctl_handler_t handler = NULL;
	struct hv_ctl_vals vals;
	int rc;

	if (blank(line, line + len))
		return 0; /* an empty line is no request */
	err[0] = '\0';
	req = cJSON_ParseWithLengthOpts(line, len, &end, false);
	if (req == NULL) {
		snprintf(err, sizeof(err), "malformed request: invalid JSON at byte %zu",
			 end != NULL && end >= line ? (size_t)(end - line) : (size_t)0);
		return hv_ctl_reply_err(c, err);
	}
	if (!blank(end, line + len)) {
		snprintf(err, sizeof(err), "malformed request: data after the JSON object");
	} else if (!cJSON_IsObject(req)) {
		snprintf(err, sizeof(err), "malformed request: expected a JSON object");
	} else if ((name = cJSON_GetObjectItemCaseSensitive(req, "cmd")) == NULL) {
		snprintf(err, sizeof(err), "malformed request: missing 'cmd'");
	} else if (!cJSON_IsString(name) || name->valuestring == NULL) {
		snprintf(err, sizeof(err), "malformed request: 'cmd' must be a string");
	} else {
		for (cmd = s->cmds; cmd != NULL && cmd->name != NULL; cmd++)
			if (strcmp(cmd->name, name->valuestring) == 0)
				break;
		if (cmd != NULL && cmd->name != NULL) {
			handler = cmd->handler;
			access = cmd->access;
		} else if (strcmp(name->valuestring, "help") == 0) {
			handler = builtin_help;
			ctx = s;
		}
		args = cJSON_GetObjectItemCaseSensitive(req, "args");
		if (cJSON_IsNull(args))
			args = NULL;
		if (handler == NULL) {
			char shown[72];

			/* an unknown name is the client's bytes: at most 64 of them, whole characters */
			hv_ctl_utf8_clean(shown, sizeof(shown), name->valuestring, 64);
			snprintf(err, sizeof(err), "unknown command '%s' (try 'help')", shown);
		} else if (!allowed(s, c, name->valuestring, access, err, sizeof(err))) {
			/* err set */
		} else if (args != NULL && !cJSON_IsObject(args)) {
			snprintf(err, sizeof(err), "%s: 'args' must be an object",
				 name->valuestring);
		} else if (s->api && hv_ctl_api_find_in(s->api_svc, name->valuestring) != NULL) {
			/* types, ranges, unknown keys: refused before the handler runs */
			hv_ctl_api_parse(hv_ctl_api_find_in(s->api_svc, name->valuestring), NULL,
					 args, &vals, err, sizeof(err));
		} else {
			memset(&vals, 0, sizeof(vals));
		}
	}
	if (err[0] != '\0') {
		cJSON_Delete(req);
		return hv_ctl_reply_err(c, err);
	}

	current_peer = &c->peer;
	current_vals = &vals;
	current_fd = &c->pass_fd;
	rc = handler(ctx, args, &result, err, sizeof(err));
	current_peer = NULL;
	current_vals = NULL;
	current_fd = NULL;
	if (rc != 0) {
		cJSON_Delete(result);
		if (err[0] == '\0')
			snprintf(err, sizeof(err), "%s: failed", name->valuestring);
		rc = hv_ctl_reply_err(c, err);
	} else {
		rc = reply_ok(c, result);
	}
	cJSON_Delete(req);
	return rc;
}

void
hv_ctl_server_use_api(struct hv_ctl_server *s)
{
	hv_ctl_server_use_api_for(s, HV_CTL_SVC_SWITCH);
}

void
hv_ctl_server_use_api_for(struct hv_ctl_server *s, enum hv_ctl_service svc)
{
	s->api = true;
	s->api_svc = svc;
}
