/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control socket of a running VMM ("hvctl guest run --run-dir DIR"):
 * DIR/NAME.sock speaks lib/ctl's JSON-lines protocol, like the switch's.
 * Commands: guest.show, guest.stats (KVM binary statistics per vCPU),
 * guest.console (input to the UART), guest.stop. The client verbs are in cmd_guest.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hv_ctl.h"
#include "hv_ctl_api.h"
#include "hvctl_guest.h"

struct guest_ctl {
	struct hv_vm *vm;
	const struct hv_vm_config *cfg;
	const char *port_socket;
	struct hv_ctl_server *srv;
	char path[256];
};

static struct guest_ctl ctl;

static int
cmd_show(void *opaque, const cJSON *args, cJSON **result, char *err, size_t errlen)
{
	struct guest_ctl *c = opaque;
	cJSON *r = cJSON_CreateObject(), *net;
	char buf[64];
	uint8_t mac[6];

	(void)args;
	(void)err;
	(void)errlen;
	cJSON_AddStringToObject(r, "name", c->cfg->name);
	cJSON_AddNumberToObject(r, "pid", getpid());
	cJSON_AddStringToObject(r, "state", hv_vm_exit_reason(c->vm) ? "stopping" : "running");
	cJSON_AddNumberToObject(r, "vcpus", c->cfg->ncpus);
	cJSON_AddNumberToObject(r, "memory_mib", (double)(c->cfg->mem_size >> 20));
	cJSON_AddBoolToObject(r, "hugepages", c->cfg->hugepages);
	cJSON_AddStringToObject(r, "kernel", c->cfg->kernel);
	cJSON_AddStringToObject(r, "cmdline", c->cfg->cmdline ? c->cfg->cmdline : "");
	net = cJSON_AddObjectToObject(r, "net");
	cJSON_AddStringToObject(net, "state", hv_vm_net_state(c->vm));
	if (c->port_socket)
		cJSON_AddStringToObject(net, "socket", c->port_socket);
	hv_vm_net_mac(c->vm, mac);
	snprintf(buf, sizeof(buf), "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3],
		 mac[4], mac[5]);
	cJSON_AddStringToObject(net, "mac", buf);
	snprintf(buf, sizeof(buf), "0x%" PRIx64, hv_vm_net_features(c->vm));
	cJSON_AddStringToObject(net, "features", buf);
	cJSON_AddNumberToObject(net, "reconnects", hv_vm_net_reconnects(c->vm));
	cJSON_AddNumberToObject(net, "queue_size",
				c->cfg->net_queue_size ? c->cfg->net_queue_size
						       : HV_VMM_NET_QUEUE_SIZE);
	*result = r;
	return 0;
}

static int
cmd_stats(void *opaque, const cJSON *args, cJSON **result, char *err, size_t errlen)
{
	struct guest_ctl *c = opaque;
	struct hv_vm_stat s[160];
	cJSON *arr = cJSON_CreateArray();
	unsigned int cpu;
	int n, i;

	(void)args;
	for (cpu = 0; cpu < hv_vm_ncpus(c->vm); cpu++) {
		cJSON *o = cJSON_CreateObject();

		n = hv_vm_vcpu_stats(c->vm, cpu, s, 160);
		if (n < 0) {
			snprintf(err, errlen, "%s: %s", HV_CTL_CMD(GUEST_STATS), hv_vmm_error());
			cJSON_Delete(o);
			cJSON_Delete(arr);
			return -1;
		}
		cJSON_AddNumberToObject(o, "vcpu", cpu);
		for (i = 0; i < n; i++) {
			char hex[24];

			/* an address does not fit a JSON number (a double) */
			if (strcmp(s[i].name, "rip") == 0) {
				snprintf(hex, sizeof(hex), "0x%" PRIx64, s[i].value);
				cJSON_AddStringToObject(o, s[i].name, hex);
				continue;
			}
			cJSON_AddNumberToObject(o, s[i].name, (double)s[i].value);
		}
		cJSON_AddItemToArray(arr, o);
	}
	*result = arr;
	return 0;
}

/* {"force": bool}: without force, a Linux guest gets the ACPI power button
 * ({"power_button": true}: the client waits, then forces); the built-in
 * guest, which has no ACPI, is stopped at once. */
static int
cmd_stop(void *opaque, const cJSON *args, cJSON **result, char *err, size_t errlen)
{
	/* checked by the server against the API table (hv_ctl_server_use_api_for()) */
	const struct hv_ctl_val *force_arg = &hv_ctl_current_vals()->v[HV_CTL_K_FORCE];
	bool force = force_arg->set && force_arg->b, button;
	struct guest_ctl *c = opaque;
	cJSON *r;

	(void)args;
	(void)err;
	(void)errlen;
	button = !force && strcmp(c->cfg->kernel, HV_VMM_BUILTIN_KERNEL) != 0 &&
		 hv_vm_power_button(c->vm) == 0;
	if (!button)
		hv_vm_request_stop(c->vm, "stopped (hvctl guest stop)");
	r = cJSON_CreateObject();
	cJSON_AddBoolToObject(r, "power_button", button);
	*result = r;
	return 0;
}

/* The NIC's queues: set-up and ring indices (packets mod 2^16). */
static int
cmd_queues(void *opaque, const cJSON *args, cJSON **result, char *err, size_t errlen)
{
	struct guest_ctl *c = opaque;
	struct hv_vm_queue_stats st;
	cJSON *arr = cJSON_CreateArray();
	unsigned int q;

	(void)args;
	(void)err;
	(void)errlen;
	for (q = 0; hv_vm_net_queue_stats(c->vm, q, &st) == 0; q++) {
		cJSON *o = cJSON_CreateObject();

		cJSON_AddNumberToObject(o, "queue", q);
		cJSON_AddStringToObject(o, "role", q % 2 ? "tx" : "rx");
		cJSON_AddNumberToObject(o, "size", st.size);
		cJSON_AddBoolToObject(o, "enabled", st.enabled);
		cJSON_AddNumberToObject(o, "vector", st.vector);
		cJSON_AddNumberToObject(o, "avail_idx", st.avail_idx);
		cJSON_AddNumberToObject(o, "used_idx", st.used_idx);
		cJSON_AddItemToArray(arr, o);
	}
	*result = arr;
	return 0;
}

static int
cmd_console_input(void *opaque, const cJSON *args, cJSON **result, char *err, size_t errlen)
{
	/* checked by the server against the API table (hv_ctl_server_use_api_for()) */
	const char *in = hv_ctl_current_vals()->v[HV_CTL_K_INPUT].s;
	struct guest_ctl *c = opaque;
	cJSON *r;
	size_t n;

	(void)args;
	(void)err;
	(void)errlen;
	n = hv_vm_console_input(c->vm, in, strlen(in));
	r = cJSON_CreateObject();
	cJSON_AddNumberToObject(r, "queued", (double)n);
	*result = r;
	return 0;
}

/* The commands a guest's VMM serves: names, help, access, arguments from the API table. */
static const hv_ctl_handler_t guest_handlers[HV_CTL_C__MAX] = {
	[HV_CTL_C_GUEST_SHOW] = cmd_show,
	[HV_CTL_C_GUEST_STATS] = cmd_stats,
	[HV_CTL_C_GUEST_CONSOLE] = cmd_console_input,
	[HV_CTL_C_GUEST_STOP] = cmd_stop,
	[HV_CTL_C_GUEST_QUEUES] = cmd_queues,
};
static struct hv_ctl_cmd guest_cmds[HV_CTL_C__MAX + 1];

static void
on_ctl(void *opaque, int fd)
{
	(void)fd;
	hv_ctl_server_poll(((struct guest_ctl *)opaque)->srv, 0);
}

int
hvctl_guest_socket_path(const char *run_dir, const char *name, char *buf, size_t len)
{
	return snprintf(buf, len, "%s/%s.sock", run_dir, name) < (int)len ? 0 : -1;
}

int
hvctl_guest_check_free(const char *run_dir, const char *name)
{
	char path[256], err[256];
	int fd;

	if (hvctl_guest_socket_path(run_dir, name, path, sizeof(path)) != 0) {
		hvctl_err("guest %s: run directory path too long", name);
		return -1;
	}
	fd = hv_ctl_connect(path, err, sizeof(err));
	if (fd >= 0) {
		close(fd);
		hvctl_err("guest %s already runs (%s)", name, path);
		return -1;
	}
	return 0;
}

int
hvctl_guest_serve(struct hv_vm *vm, const struct hv_vm_config *cfg, const char *run_dir)
{
	char err[256];

	ctl.vm = vm;
	ctl.cfg = cfg;
	ctl.port_socket = cfg->port_socket;
	if (run_dir == NULL)
		return 0;
	if (hvctl_guest_mkdir(run_dir) != 0)
		return -1;
	hvctl_guest_socket_path(run_dir, cfg->name, ctl.path, sizeof(ctl.path));
	hv_ctl_api_server_cmds(HV_CTL_SVC_GUEST, guest_handlers, guest_cmds);
	ctl.srv =
		hv_ctl_server_create(ctl.path, HV_CTL_NO_GROUP, guest_cmds, &ctl, err, sizeof(err));
	if (ctl.srv == NULL) {
		hvctl_err("guest %s: control socket %s: %s", cfg->name, ctl.path, err);
		return -1;
	}
	hv_ctl_server_use_api_for(ctl.srv, HV_CTL_SVC_GUEST);
	if (hv_vm_add_fd(vm, hv_ctl_server_fd(ctl.srv), on_ctl, &ctl) != 0) {
		hvctl_err("guest %s: %s", cfg->name, hv_vmm_error());
		return -1;
	}
	return 0;
}

void
hvctl_guest_unserve(struct hv_vm *vm)
{
	if (ctl.srv) {
		hv_vm_del_fd(vm, hv_ctl_server_fd(ctl.srv));
		hv_ctl_server_destroy(ctl.srv);
		ctl.srv = NULL;
	}
}
