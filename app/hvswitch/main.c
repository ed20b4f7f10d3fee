/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hvswitch: the switch daemon. A DPDK primary process: PMD lcores switch
 * frames between ports (L2 learning); the main lcore runs the control plane
 * (control socket, config file, learning and ageing, telemetry).
 */
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_version.h>

#include "ctl_policy.h"
#include "hv_ctl.h"
#include "hv_ctl_api.h"
#include "hv_log.h"
#include "metrics.h"
#include "sw.h"

struct sw sw = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.settings = {.fdb_age_s = 300, .mac_limit = 1024, .fdb_capacity = 131072},
	.run_dir = "/run/hvswitch",
	.config_path = "/etc/hvswitch/hvswitch.json",
	.ctl_group = (gid_t)-1,
};

struct options {
	unsigned int mbufs;
	struct sw_port_conf cli_ports[SW_MAX_PORTS];
	unsigned int n_cli_ports;
	int64_t fdb_age_s, mac_limit, fdb_capacity; /* -1: not given */
	bool check_config;
	bool metrics; /* --metrics-listen given */
	struct sw_metrics_addr metrics_addr;
};

static void
on_signal(int sig)
{
	RTE_SET_USED(sig);
	sw.dp.stop = true;
}

static void
usage(FILE *out)
{
	fprintf(out,
		"usage: hvswitch [EAL options] -- [options]\n"
		"  --config FILE      ports and settings (default /etc/hvswitch/hvswitch.json);\n"
		"                     changes made with hvctl are written back to it\n"
		"  --run-dir DIR      control socket and default vhost-user sockets\n"
		"                     (default /run/hvswitch)\n"
		"  --group NAME       group that may read (list, show, stats) on the\n"
		"                     control socket\n"
		"  --admin-group NAME group that may also change ports, confined to\n"
		"                     the run dir and harmless ethdevs (doc/hvctl.rst)\n"
		"  --fdb-age S        seconds before an idle MAC is forgotten (default 300)\n"
		"  --mac-limit N      MACs one port may own, 0 = no limit (default 1024)\n"
		"  --fdb-capacity N   MACs in all (default 131072)\n"
		"  --mbufs N          mbufs in the pool (default 32768)\n"
		"  --port SOCKET[,client][,queues=N]\n"
		"                     a vhost-user port for this run only (not saved)\n"
		"  --vhost-owner USER[:GROUP]\n"
		"                     owner of the vhost-user server sockets (default: the\n"
		"                     daemon's); a port's \"owner\" overrides it\n"
		"  --vhost-perm MODE  their permissions, octal (default: the umask's); a\n"
		"                     port's \"perm\" overrides it\n"
		"  --check-config     check the options and the config file, and exit: no EAL,\n"
		"                     so it runs next to a running daemon\n"
		"  --version          print the version and exit\n"
		"  --guest-mem-limit MIB\n"
		"                     guest memory one vhost-user port may map (default 65536:\n"
		"                     64 GiB); set it to the largest guest's memory\n"
		"  --pmd-sleep US|N:US[,N:US]...\n"
		"                     a PMD idle that long sleeps on its guests' kicks\n"
		"                     (all PMDs, or PMD N); default: never (dedicated cores)\n"
		"  --metrics-listen ADDR:PORT\n"
		"                     serve Prometheus metrics on http://ADDR:PORT/metrics\n"
		"                     (numeric address, e.g. 127.0.0.1:9417; default: off)\n"
		"EAL: give at least two lcores (-l 0,1): the main lcore is the control\n"
		"plane, every other lcore is a PMD. Pass --no-pci unless NICs are wanted.\n"
		"'hvswitch --help' lists the EAL options too.\n");
}

/* After the EAL's own usage (hvswitch --help). */
static void
usage_hook(const char *prgname)
{
	RTE_SET_USED(prgname);
	usage(stdout);
}

static void
version(void)
{
	printf("hvswitch %s (%s)\n", HV_VERSION, rte_version());
}

/* The control API's one integer parser, with the option's name in the error. */
static int
parse_uint(const char *opt, const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	if (hv_ctl_parse_uint(s, min, max, out) != 0) {
		fprintf(stderr, "hvswitch: %s must be an integer %" PRIu64 "..%" PRIu64 "\n", opt,
			min, max);
		return -1;
	}
	return 0;
}

/* --port ARG: a port of the default type, for this run only (its conf_cli reads ARG). */
static int
parse_cli_port(struct options *o, char *arg)
{
	const struct sw_port_ops *type = sw_port_type_find(NULL);
	struct sw_port_conf *c;
	char err[128];

	if (o->n_cli_ports == SW_MAX_PORTS)
		return -1;
	if (type == NULL || type->ctl->conf_cli == NULL) {
		fprintf(stderr, "hvswitch: --port: no port type takes it\n");
		return -1;
	}
	c = &o->cli_ports[o->n_cli_ports];
	memset(c, 0, sizeof(*c));
	c->type = type;
	c->queues = 1;
	c->pmd = -1;
	snprintf(c->name, sizeof(c->name), "port%u", o->n_cli_ports);
	if (type->ctl->conf_cli(arg, c, err, sizeof(err)) != 0) {
		fprintf(stderr, "hvswitch: %s\n", err);
		return -1;
	}
	o->n_cli_ports++;
	return 0;
}

/* --pmd-sleep US (every PMD) or N:US[,N:US]... */
static int
parse_pmd_sleep(const char *arg)
{
	char buf[256], *tok, *save = NULL;

	snprintf(buf, sizeof(buf), "%s", arg);
	for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(tok, ':');
		uint64_t pmd, us;

		if (colon == NULL) {
			if (parse_uint("--pmd-sleep", tok, 0, 10000000, &us) != 0)
				return -1;
			for (unsigned int i = 0; i < SW_MAX_PMDS; i++)
				sw.pmd_sleep_us[i] = (uint32_t)us;
			continue;
		}
		*colon = '\0';
		if (parse_uint("--pmd-sleep PMD", tok, 0, SW_MAX_PMDS - 1, &pmd) != 0 ||
		    parse_uint("--pmd-sleep US", colon + 1, 0, 10000000, &us) != 0)
			return -1;
		sw.pmd_sleep_us[pmd] = (uint32_t)us;
	}
	return 0;
}

static int
parse_args(struct options *o, int argc, char **argv)
{
	static const struct option opts[] = {
		{"config", required_argument, NULL, 'c'},
		{"run-dir", required_argument, NULL, 'r'},
		{"group", required_argument, NULL, 'g'},
		{"admin-group", required_argument, NULL, 'G'},
		{"fdb-age", required_argument, NULL, 'a'},
		{"mac-limit", required_argument, NULL, 'l'},
		{"fdb-capacity", required_argument, NULL, 'f'},
		{"mbufs", required_argument, NULL, 'm'},
		{"port", required_argument, NULL, 'p'},
		{"check-config", no_argument, NULL, 'k'},
		{"vhost-owner", required_argument, NULL, 'O'},
		{"vhost-perm", required_argument, NULL, 'P'},
		{"version", no_argument, NULL, 'V'},
		{"pmd-sleep", required_argument, NULL, 's'},
		{"guest-mem-limit", required_argument, NULL, 'M'},
		{"metrics-listen", required_argument, NULL, 'L'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	uint64_t v;
	char err[160];
	int opt;

	o->mbufs = 32768;
	o->fdb_age_s = o->mac_limit = o->fdb_capacity = -1;
	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			snprintf(sw.config_path, sizeof(sw.config_path), "%s", optarg);
			break;
		case 'r':
			if (strlen(optarg) >= sizeof(sw.run_dir)) {
				fprintf(stderr, "hvswitch: --run-dir too long\n");
				return -1;
			}
			snprintf(sw.run_dir, sizeof(sw.run_dir), "%s", optarg);
			break;
		case 'g': {
			struct group *g = getgrnam(optarg);

			if (g == NULL) {
				fprintf(stderr, "hvswitch: no group %s\n", optarg);
				return -1;
			}
			sw.ctl_group = g->gr_gid;
			break;
		}
		case 'G': {
			struct group *g = getgrnam(optarg);

			if (g == NULL) {
				fprintf(stderr, "hvswitch: no group %s\n", optarg);
				return -1;
			}
			sw_ctl_admin_group = g->gr_gid;
			break;
		}
		case 'a':
			if (parse_uint("--fdb-age", optarg, 1, 86400 * 7, &v) != 0)
				return -1;
			o->fdb_age_s = (int64_t)v;
			break;
		case 'l':
			if (parse_uint("--mac-limit", optarg, 0, 1u << 24, &v) != 0)
				return -1;
			o->mac_limit = (int64_t)v;
			break;
		case 'f':
			if (parse_uint("--fdb-capacity", optarg, 1024, 1u << 24, &v) != 0)
				return -1;
			o->fdb_capacity = (int64_t)v;
			break;
		case 'm':
			if (parse_uint("--mbufs", optarg, 2048, 1u << 22, &v) != 0)
				return -1;
			o->mbufs = (unsigned int)v;
			break;
		case 'p':
			if (parse_cli_port(o, optarg) != 0)
				return -1;
			break;
		case 'k':
			o->check_config = true;
			break;
		case 's':
			if (parse_pmd_sleep(optarg) != 0)
				return -1;
			break;
		case 'M':
			if (parse_uint("--guest-mem-limit", optarg, 1, sw_vhost_mem_limit_max >> 20,
				       &v) != 0)
				return -1;
			sw_vhost_mem_limit = v << 20;
			break;
		case 'L':
			if (sw_metrics_parse(optarg, &o->metrics_addr, err, sizeof(err)) != 0) {
				fprintf(stderr, "hvswitch: %s\n", err);
				return -1;
			}
			o->metrics = true;
			break;
		case 'O':
			if (sw_sock_owner_parse(optarg, "--vhost-owner", &sw_vhost_access, err,
						sizeof(err)) != 0) {
				fprintf(stderr, "hvswitch: %s\n", err);
				return -1;
			}
			break;
		case 'P':
			if (sw_sock_perm_parse(optarg, "--vhost-perm", &sw_vhost_access, err,
					       sizeof(err)) != 0) {
				fprintf(stderr, "hvswitch: %s\n", err);
				return -1;
			}
			break;
		case 'V':
			version();
			exit(0);
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "hvswitch: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	return 0;
}

/* Command-line settings win over the config file's. */
static void
apply_cli_settings(const struct options *o)
{
	if (o->fdb_age_s >= 0)
		sw.settings.fdb_age_s = (uint32_t)o->fdb_age_s;
	if (o->mac_limit >= 0)
		sw.settings.mac_limit = (uint32_t)o->mac_limit;
	if (o->fdb_capacity >= 0)
		sw.settings.fdb_capacity = (uint32_t)o->fdb_capacity;
}

/* The run dir, and the config file's dir so that the first save works. */
static int
make_dirs(void)
{
	char dir[sizeof(sw.config_path)];
	char *slash;

	if (sw_run_dir_prepare() != 0)
		return -1;
	snprintf(dir, sizeof(dir), "%s", sw.config_path);
	slash = strrchr(dir, '/');
	if (slash != NULL && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
			fprintf(stderr, "hvswitch: config dir %s: %s\n", dir, strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* A PMD on each worker lcore, and the data path's context around them. */
static int
pmds_init(void)
{
	unsigned int lcore;

	sw.n_pmds = 0;
	RTE_LCORE_FOREACH_WORKER (lcore) {
		if (sw.n_pmds == SW_MAX_PMDS)
			break;
		sw.pmds[sw.n_pmds] = (struct sw_pmd){
			.lcore = lcore,
			.id = sw.n_pmds,
			.sleep_us = sw.pmd_sleep_us[sw.n_pmds],
		};
		sw.n_pmds++;
	}
	if (sw.n_pmds == 0) {
		fprintf(stderr, "hvswitch: needs at least one worker lcore for a PMD (-l 0,1)\n");
		return -1;
	}
	sw.dp.pmds = sw.pmds;
	sw.dp.n_pmds = sw.n_pmds;
	sw.dp.tsc_per_ms = rte_get_tsc_hz() / 1000;
	if (sw_dp_init(&sw.dp) != 0) {
		fprintf(stderr, "hvswitch: no memory for the PMDs\n");
		return -1;
	}
	return 0;
}

/* The port types' own set-up, and their per-PMD work on the data path. */
static int
types_init(void)
{
	const struct sw_port_ops *ops;

	for (unsigned int t = 0; (ops = sw_port_type_at(t)) != NULL; t++) {
		if (ops->ctl->init != NULL && ops->ctl->init() != 0) {
			fprintf(stderr, "hvswitch: %s ports: set-up failed\n", ops->type);
			return -1;
		}
		if ((ops->pmd_enter != NULL || ops->pmd_poll != NULL) &&
		    sw_dp_register_type(&sw.dp, ops) != 0)
			return -1;
	}
	return 0;
}

/* Every turn of the control loop, under sw.lock. */
static void
types_poll(void)
{
	const struct sw_port_ops *ops;

	for (unsigned int t = 0; (ops = sw_port_type_at(t)) != NULL; t++)
		if (ops->ctl->poll != NULL)
			ops->ctl->poll();
}

static void
types_fini(void)
{
	const struct sw_port_ops *ops;

	for (unsigned int t = 0; (ops = sw_port_type_at(t)) != NULL; t++) {
		if (ops->ctl->fini != NULL)
			ops->ctl->fini();
	}
}

static int
start(struct options *o, struct sw_port_conf *ports, unsigned int n_ports)
{
	struct hv_fdb_conf fc;
	char err[256];

	if (pmds_init() != 0)
		return -1;
	sw.mp = rte_pktmbuf_pool_create("hv_mbufs", o->mbufs, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
					rte_socket_id());
	if (sw.mp == NULL) {
		fprintf(stderr, "hvswitch: mbuf pool: %s\n", rte_strerror(rte_errno));
		return -1;
	}
	fc = (struct hv_fdb_conf){
		.capacity = sw.settings.fdb_capacity,
		.max_ports = SW_MAX_PORTS,
		.max_per_port = sw.settings.mac_limit,
		.age_ms = (uint64_t)sw.settings.fdb_age_s * 1000,
		.rcu = sw.dp.rcu,
		.socket = (int)rte_socket_id(),
	};
	sw.fdb = hv_fdb_create("hv_fdb", &fc);
	if (sw.fdb == NULL) {
		fprintf(stderr, "hvswitch: MAC table: %s\n", rte_strerror(rte_errno));
		return -1;
	}
	sw.dp.mp = sw.mp;
	sw.dp.fdb = sw.fdb;
	if (types_init() != 0)
		return -1;
	sw_view_publish();
	pthread_mutex_lock(&sw.lock);
	sw_config_add_ports(ports, n_ports);
	for (unsigned int i = 0; i < o->n_cli_ports; i++) {
		if (sw_port_add(&o->cli_ports[i], false, err, sizeof(err)) != 0) {
			pthread_mutex_unlock(&sw.lock);
			fprintf(stderr, "hvswitch: %s\n", err);
			return -1;
		}
		sw_port_find(o->cli_ports[i].name)->ephemeral = true;
	}
	pthread_mutex_unlock(&sw.lock);
	if (sw_telemetry_register() != 0)
		HV_LOG(WARNING, "telemetry commands not registered");
	return 0;
}

static void
stop(void)
{
	sw.dp.stop = true;
	rte_eal_mp_wait_lcore();
	pthread_mutex_lock(&sw.lock);
	sw_port_del_all();
	pthread_mutex_unlock(&sw.lock);
	sw_capture_fini();
	types_fini();
	hv_fdb_free(sw.fdb);
	rte_mempool_free(sw.mp);
	sw_dp_fini(&sw.dp);
}

static void
control_loop(struct hv_ctl_server *ctl)
{
	uint64_t next_age = sw_now_ms() + 1000;
	uint64_t next_rate = sw_now_ms() + 1000;

	while (!sw.dp.stop) {
		uint64_t now;

		hv_ctl_server_poll(ctl, 10);
		pthread_mutex_lock(&sw.lock);
		hv_fdb_apply(sw.fdb);
		types_poll();
		now = sw_now_ms();
		if (now >= next_age) {
			hv_fdb_age(sw.fdb, now);
			/* check ten times per age, at least once a second */
			next_age = now + RTE_MIN(1000u, sw.settings.fdb_age_s * 100u);
		}
		if (now >= next_rate) {
			const struct sw_port_ops *ops;

			for (unsigned int t = 0; (ops = sw_port_type_at(t)) != NULL; t++)
				if (ops->ctl->tick != NULL)
					ops->ctl->tick(now);
			next_rate = now + 1000;
		}
		pthread_mutex_unlock(&sw.lock);
	}
}

int
main(int argc, char **argv)
{
	static struct options o;
	static char *no_args[] = {"hvswitch", NULL};
	struct hv_ctl_server *ctl = NULL;
	struct sw_port_conf *ports = NULL;
	unsigned int n_ports = 0;
	char err[256];
	int n, dd, rc = 1;

	/* ours after "--", the EAL's before: ours first, so --check-config, --help and
	 * --version need no EAL (no hugepages, no clash with a running daemon) */
	for (dd = 1; dd < argc && strcmp(argv[dd], "--") != 0; dd++)
		;
	if (argc == 2 && strcmp(argv[1], "--version") == 0) {
		version();
		return 0;
	}
	rte_set_application_usage_hook(usage_hook);
	if (dd < argc ? parse_args(&o, argc - dd, argv + dd) != 0 : parse_args(&o, 1, no_args) != 0)
		return 1;
	/* defaults, then the config file, then the command line */
	if (sw_config_read(&ports, &n_ports, err, sizeof(err)) != 0) {
		fprintf(stderr, "hvswitch: %s\n", err);
		free(ports);
		return 1;
	}
	apply_cli_settings(&o);
	if (o.check_config) {
		printf("hvswitch: %s: %u port(s), settings valid\n", sw.config_path, n_ports);
		free(ports);
		return 0;
	}
	sw_service_log_init();
	n = rte_eal_init(dd, argv);
	if (n < 0) {
		/* some EAL failures leave rte_errno unset: its own messages say why */
		if (rte_errno != 0)
			fprintf(stderr, "hvswitch: EAL init failed: %s\n", rte_strerror(rte_errno));
		else
			fprintf(stderr, "hvswitch: EAL init failed (see the EAL messages above)\n");
		free(ports);
		return 1;
	}
	if (n + 1 < dd) {
		fprintf(stderr,
			"hvswitch: unexpected argument '%s' (hvswitch's options go after --)\n",
			argv[n + 1]);
		goto out_eal;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);
	if (make_dirs() != 0)
		goto out_eal;
	/* first the control socket: a second hvswitch on this run dir stops here */
	ctl = sw_ctl_start(err, sizeof(err));
	if (ctl == NULL) {
		fprintf(stderr, "hvswitch: control socket: %s\n", err);
		goto out_eal;
	}
	if (start(&o, ports, n_ports) != 0)
		goto out_stop;
	for (unsigned int i = 0; i < sw.n_pmds; i++)
		rte_eal_remote_launch(sw_dp_pmd_main, &sw.pmds[i], sw.pmds[i].lcore);
	if (o.metrics && sw_metrics_start(&o.metrics_addr, err, sizeof(err)) != 0) {
		fprintf(stderr, "hvswitch: %s\n", err);
		goto out_stop;
	}
	printf("hvswitch %s: %u PMD(s), control socket %s/hvswitch.sock\n", HV_VERSION, sw.n_pmds,
	       sw.run_dir);
	fflush(stdout);
	/* the control socket and every server port's socket are there */
	sw_service_ready(n_ports + o.n_cli_ports);
	control_loop(ctl);
	sw_service_stopping();
	HV_LOG(INFO, "stopping");
	rc = 0;
out_stop:
	sw_metrics_stop();
	stop();
	hv_ctl_server_destroy(ctl);
out_eal:
	free(ports);
	rte_eal_cleanup();
	return rc;
}
