/* SPDX-License-Identifier: BSD-3-Clause */
/* A control server with a fake command table: see ctl_fake.h. */
#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl_fake.h"

char ctl_dir[64];
char ctl_path[100];
struct hv_ctl_server *ctl_srv;
static pthread_t srv_thread;
static bool srv_threaded;
static atomic_bool srv_stop;
static unsigned int stats_calls; /* touched by the server's thread only */

/* ---- fake command table ---- */

static int
h_echo(void *ctx, const cJSON *args, cJSON **result, char *err, size_t errlen)
{
	(void)ctx;
	(void)err;
	(void)errlen;
	*result = args != NULL ? cJSON_Duplicate(args, true) : NULL;
	return 0;
}

static int
h_null(void *ctx, const cJSON *args, cJSON **result, char *err, size_t errlen)
{
	(void)ctx;
	(void)args;
	(void)result;
	(void)err;
	(void)errlen;
	return 0;
}

static int
h_fail(void *ctx, const cJSON *args, cJSON **result, char *err, size_t errlen)
{
	(void)ctx;
	(void)args;
	*result = cJSON_CreateString("dropped"); /* a result set on failure is freed */
	snprintf(err, errlen, "port.add: 'queues' must be an integer 1..8");
	return -1;
}

static int
h_queues(void *ctx, const cJSON *args, cJSON **result, char *err, size_t errlen)
{
	uint64_t q = 1;

	(void)ctx;
	if (hv_ctl_arg_uint(args, "port.add", "queues", false, 1, 8, &q, err, errlen) < 0)
		return -1;
	*result = cJSON_CreateNumber((double)q);
	return 0;
}

static int
h_canned(const char *text, cJSON **result, char *err, size_t errlen)
{
	*result = cJSON_Parse(text);
	if (*result == NULL) {
		snprintf(err, errlen, "bad canned JSON");
		return -1;
	}
	return 0;
}

static const char port_list_json[] =
	"[{\"name\":\"vm1\",\"type\":\"vhost-user\",\"state\":\"up\",\"queues\":2,\"vlan\":10,"
	"\"pmd\":[1,2],\"socket\":\"/tmp/vm1.sock\",\"mode\":\"server\"},"
	"{\"name\":\"tap0\",\"type\":\"ethdev\",\"state\":\"down\",\"queues\":1,\"vlan\":0,"
	"\"pmd\":3,\"devargs\":\"net_tap0,iface=x\"}]";

static int
h_port_list(void *ctx, const cJSON *args, cJSON **result, char *err, size_t errlen)
{
	(void)ctx;
	(void)args;
	return h_canned(port_list_json, result, err, errlen);
}

static int
h_port_show(void *ctx, const cJSON *args, cJSON **result, char *err, size_t errlen)
{
	const char *name;

	(void)ctx;
	if (hv_ctl_arg_str(args, "port.show", "name", true, 32, &name, err, errlen) < 0)
		return -1;
	return h_canned("{\"name\":\"vm1\",\"type\":\"vhost-user\",\"state\":\"up\","
			"\"stats\":{\"rx_packets\":100,\"tx_packets\":200},"
			"\"qps\":[{\"qp\":0,\"pmd\":1,\"rx\":{\"packets\":11,\"bytes\":1100},"
			"\"tx\":{\"packets\":22,\"bytes\":2200,\"kicks\":7}}]}",
			result, err, errlen);
}

static int
h_port_del(void *ctx, const cJSON *args, cJSON **result, char *err, size_t errlen)
{
	const char *name = "?";

	(void)ctx;
	(void)result;
	hv_ctl_arg_str(args, "port.del", "name", true, 0, &name, err, errlen);
	snprintf(err, errlen, "port.del: no port '%s'", name);
	return -1;
}

/* Counters that grow by 1000 packets per call. */
static int
h_stats(void *ctx, const cJSON *args, cJSON **result, char *err, size_t errlen)
{
	char text[1024];
	unsigned int n = ++stats_calls;

	(void)ctx;
	(void)args;
	snprintf(text, sizeof(text),
		 "{\"ports\":[{\"name\":\"vm1\",\"rx_packets\":%u,\"rx_bytes\":%u,"
		 "\"tx_packets\":5,\"tx_bytes\":320,\"drops\":1,\"interrupts\":2},"
		 "{\"name\":\"vm2\",\"rx_packets\":7,\"rx_bytes\":448,\"tx_packets\":%u,"
		 "\"tx_bytes\":%u,\"drops\":0,\"interrupts\":3}],"
		 "\"pmds\":[{\"lcore\":1,\"busy_cycles\":%u,\"total_cycles\":%u,"
		 "\"packets\":%u,\"batches\":%u}]}",
		 1000 * n, 64000 * n, 1000 * n, 64000 * n, 500 * n, 1000 * n, 2000 * n, 100 * n);
	return h_canned(text, result, err, errlen);
}

static int
h_version(void *ctx, const cJSON *args, cJSON **result, char *err, size_t errlen)
{
	(void)ctx;
	(void)args;
	return h_canned("{\"version\":\"0.1.0\",\"dpdk\":\"DPDK 22.11.1\"}", result, err, errlen);
}

/* Take the descriptor passed with the request (if any) and write "taken" into it. */
static int
h_take_fd(void *ctx, const cJSON *args, cJSON **result, char *err, size_t errlen)
{
	int fd = hv_ctl_current_take_fd();

	(void)ctx, (void)args, (void)err, (void)errlen;
	if (fd >= 0) {
		if (write(fd, "taken", 5) != 5)
			fd = -fd - 2;
		close(fd < 0 ? -fd - 2 : fd);
	}
	*result = cJSON_CreateBool(fd >= 0);
	return 0;
}

const struct hv_ctl_cmd ctl_fake_cmds[] = {
	{"echo", h_echo, "reply with the arguments", HV_CTL_WRITE},
	{"take_fd", h_take_fd, "write into the descriptor passed", HV_CTL_WRITE},
	{"null", h_null, "reply null", HV_CTL_READ},
	{"fail", h_fail, "always fail", HV_CTL_WRITE},
	{"queues", h_queues, "range-checked argument", HV_CTL_WRITE},
	{"port.list", h_port_list, "canned ports", HV_CTL_READ},
	{"port.show", h_port_show, "canned port", HV_CTL_READ},
	{"port.del", h_port_del, "always 'no port'", HV_CTL_WRITE},
	{"port.add", h_echo, "echo", HV_CTL_WRITE},
	{"port.set", h_echo, "echo", HV_CTL_WRITE},
	{"stats", h_stats, "growing counters", HV_CTL_READ},
	{"version", h_version, "canned version", HV_CTL_READ},
	{NULL, NULL, NULL, 0},
};

/* ---- fixture ---- */

static void *
srv_loop(void *arg)
{
	(void)arg;
	while (!atomic_load(&srv_stop))
		hv_ctl_server_poll(ctl_srv, 10);
	return NULL;
}

void
ctl_fake_start_thread(void)
{
	atomic_store(&srv_stop, false);
	ck_assert_int_eq(pthread_create(&srv_thread, NULL, srv_loop, NULL), 0);
	srv_threaded = true;
}

void
ctl_fake_setup(void)
{
	char err[256];

	snprintf(ctl_dir, sizeof(ctl_dir), "/tmp/test_ctl.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(ctl_dir));
	ck_assert_int_eq(chmod(ctl_dir, 0755), 0); /* reachable by the setuid child */
	snprintf(ctl_path, sizeof(ctl_path), "%s/ctl.sock", ctl_dir);
	ctl_srv = hv_ctl_server_create(ctl_path, HV_CTL_NO_GROUP, ctl_fake_cmds, NULL, err,
				       sizeof(err));
	ck_assert_msg(ctl_srv != NULL, "server: %s", err);
	srv_threaded = false;
}

void
ctl_fake_teardown(void)
{
	if (srv_threaded) {
		atomic_store(&srv_stop, true);
		pthread_join(srv_thread, NULL);
		srv_threaded = false;
	}
	hv_ctl_server_destroy(ctl_srv);
	ctl_srv = NULL;
	rmdir(ctl_dir);
}
