/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hvctl guest run: this process becomes the VMM of one guest (lib/vmm), in
 * the foreground, until the guest stops. The console goes to stdout (or
 * --log). Exit status: the built-in guest's own status when it reported one,
 * 0 on a clean stop (power off, reset, signal), 3 on a triple fault or a KVM
 * error, 1 when the VM could not be built.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "hv_vmm.h"
#include "hvctl.h"
#include "hvctl_guest.h"

static const char run_head[] =
	"usage: hvctl guest run NAME --kernel K [--initrd I] [--cmdline C] [--cpus N]\n"
	"                       [--memory M] [--port P] [--pin CPUS] [--hugepages]\n"
	"                       [--mac MAC] [--mtu N] [--halt-poll NS] [--switch-dir DIR]\n"
	"                       [--log FILE] [--run-dir DIR] [--cpu-mask-features LIST]\n"
	"                       [--queue-size N]\n"
	"\n"
	"Run guest NAME in the foreground: this process is its VMM (KVM).\n";

const char hvctl_guest_run_options[] =
	"  --kernel K     bzImage, ELF vmlinux, or 'builtin' (the test guest)\n"
	"  --initrd I     initramfs (the root file system of a Linux guest)\n"
	"  --cmdline C    kernel command line\n"
	"  --cpus N       vCPUs (default 1)\n"
	"  --memory M     RAM, e.g. 256M or 1G (default 64M)\n"
	"  --port P       hvswitch port: a vhost-user socket path, or a port name\n"
	"                 whose socket is DIR/P.sock\n"
	"  --switch-dir DIR  hvswitch's run directory (default: the directory of the\n"
	"                 control socket, hvctl --socket or $HVCTL_SOCKET, else " HV_GUEST_SWITCH_DIR
	")\n"
	"  --mac MAC      the NIC's MAC (default 52:54:00:..., from NAME)\n"
	"  --mtu N        the NIC's MTU, offered to the guest\n"
	"  --pin CPUS     host CPU of each vCPU, comma-separated\n"
	"  --hugepages    back guest memory with hugetlbfs pages\n"
	"  --halt-poll NS KVM halt-polling time of this VM\n"
	"  --queue-size N most entries per NIC queue, a power of 2 in 64..1024 (default\n"
	"                 1024; the built-in guest needs 512)\n"
	"  --cpu-mask-features LIST  CPUID features hidden from the guest, by their\n"
	"                 /proc/cpuinfo names, comma-separated (e.g. cx16,popcnt)\n";

static const char run_tail[] =
	"  --log FILE     the console to FILE (default stdout)\n"
	"  --run-dir DIR  serve a control socket DIR/NAME.sock (hvctl guest show/stop/stats)\n";

/* guest run's options (guest start passes them on; complete.c offers them) */
const struct option hvctl_guest_run_opts[] = {
	{"kernel", required_argument, NULL, 'k'},
	{"initrd", required_argument, NULL, 'i'},
	{"cmdline", required_argument, NULL, 'c'},
	{"cpus", required_argument, NULL, 'n'},
	{"memory", required_argument, NULL, 'm'},
	{"port", required_argument, NULL, 'p'},
	{"pin", required_argument, NULL, 'P'},
	{"hugepages", no_argument, NULL, 'H'},
	{"mac", required_argument, NULL, 'M'},
	{"mtu", required_argument, NULL, 'u'},
	{"halt-poll", required_argument, NULL, 'T'},
	{"switch-dir", required_argument, NULL, 'd'},
	{"log", required_argument, NULL, 'l'},
	{"run-dir", required_argument, NULL, 'R'},
	{"cpu-mask-features", required_argument, NULL, 'F'},
	{"queue-size", required_argument, NULL, 'Q'},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};

static struct hv_vm *run_vm;

static void
on_signal(int sig)
{
	if (run_vm)
		hv_vm_request_stop(run_vm,
				   sig == SIGINT ? "stopped (SIGINT)" : "stopped (SIGTERM)");
}

int
hvctl_guest_parse_mem(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	uint64_t mul = 1ull << 20;

	if (end == s)
		return -1;
	if (*end == 'K' || *end == 'k')
		mul = 1ull << 10;
	else if (*end == 'M' || *end == 'm')
		mul = 1ull << 20;
	else if (*end == 'G' || *end == 'g')
		mul = 1ull << 30;
	else if (*end != '\0')
		return -1;
	if (*end != '\0' && end[1] != '\0' && strcmp(end + 1, "iB") != 0 && strcmp(end + 1, "B"))
		return -1;
	if (v > (1ull << 44) / mul)
		return -1;
	*out = v * mul;
	return 0;
}

int
hvctl_guest_parse_mac(const char *s, uint8_t mac[6])
{
	unsigned int b[6], i;
	char tail;

	if (sscanf(s, "%x:%x:%x:%x:%x:%x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &tail) != 6)
		return -1;
	for (i = 0; i < 6; i++) {
		if (b[i] > 255)
			return -1;
		mac[i] = (uint8_t)b[i];
	}
	return 0;
}

static int
parse_pin(const char *s, struct hv_vm_config *cfg)
{
	unsigned int i = 0;
	char *end;

	while (*s && i < HV_VMM_MAX_CPUS) {
		long v = strtol(s, &end, 10);

		if (end == s || v < 0 || v > 4095)
			return -1;
		cfg->pin[i++] = (int)v;
		s = *end == ',' ? end + 1 : end;
		if (*end != ',' && *end != '\0')
			return -1;
	}
	return 0;
}

const char *
hvctl_guest_builtin_image(void)
{
	const char *e = getenv("HV_GUEST_IMAGE");

	if (e && *e)
		return e;
	/* the build's own image, else the installed one */
	return access(HV_BUILTIN_GUEST, R_OK) == 0 ? HV_BUILTIN_GUEST : HV_BUILTIN_GUEST_INSTALLED;
}

int
hvctl_guest_cmd_run(struct hvctl *h, int argc, char **argv)
{
	struct hv_vm_config cfg;
	const char *port = NULL, *dir = hvctl_guest_switch_dir(), *log = NULL, *run_dir = NULL;
	unsigned long long n;
	char sock[256];
	struct sigaction sa;
	const char *reason;
	int c, rc, status;

	(void)h;
	hv_vm_config_init(&cfg);
	cfg.console_fd = STDOUT_FILENO;
	optind = 0;
	while ((c = getopt_long(argc, argv, ":h", hvctl_guest_run_opts, NULL)) != -1) {
		switch (c) {
		case 'k':
			cfg.kernel = optarg;
			break;
		case 'i':
			cfg.initrd = optarg;
			break;
		case 'c':
			cfg.cmdline = optarg;
			break;
		case 'n':
			if (hvctl_parse_uint(optarg, 1, HV_VMM_MAX_CPUS, &n) != 0)
				return hvctl_usage_err("guest run", "--cpus: 1..%d",
						       HV_VMM_MAX_CPUS);
			cfg.ncpus = (unsigned int)n;
			break;
		case 'm':
			if (hvctl_guest_parse_mem(optarg, &cfg.mem_size) != 0)
				return hvctl_usage_err("guest run", "--memory: bad size '%s'",
						       optarg);
			break;
		case 'p':
			port = optarg;
			break;
		case 'P':
			if (parse_pin(optarg, &cfg) != 0)
				return hvctl_usage_err("guest run", "--pin: bad CPU list '%s'",
						       optarg);
			break;
		case 'H':
			cfg.hugepages = true;
			break;
		case 'M':
			if (hvctl_guest_parse_mac(optarg, cfg.mac) != 0)
				return hvctl_usage_err("guest run", "--mac: bad MAC '%s'", optarg);
			cfg.mac_set = true;
			break;
		case 'u':
			if (hvctl_parse_uint(optarg, 68, 65535, &n) != 0)
				return hvctl_usage_err("guest run", "--mtu: 68..65535");
			cfg.mtu = (uint16_t)n;
			break;
		case 'T':
			if (hvctl_parse_uint(optarg, 0, 1000000000, &n) != 0)
				return hvctl_usage_err("guest run", "--halt-poll: nanoseconds");
			cfg.halt_poll_ns = (int)n;
			break;
		case 'd':
			dir = optarg;
			break;
		case 'l':
			log = optarg;
			break;
		case 'R':
			run_dir = optarg;
			break;
		case 'F':
			cfg.cpu_mask_features = optarg;
			break;
		case 'Q':
			if (hvctl_parse_uint(optarg, HV_VMM_NET_QUEUE_MIN, HV_VMM_NET_QUEUE_SIZE,
					     &n) != 0 ||
			    (n & (n - 1)) != 0)
				return hvctl_usage_err("guest run",
						       "--queue-size: a power of 2 in %d..%d",
						       HV_VMM_NET_QUEUE_MIN, HV_VMM_NET_QUEUE_SIZE);
			cfg.net_queue_size = (uint16_t)n;
			break;
		case 'h':
			fputs(run_head, stdout);
			fputs(hvctl_guest_run_options, stdout);
			fputs(run_tail, stdout);
			return 0;
		default:
			return hvctl_opt_err("guest run", c, argv);
		}
	}
	if (optind != argc - 1)
		return hvctl_usage_err("guest run", "guest run: one guest NAME expected");
	cfg.name = argv[optind];
	if (cfg.kernel == NULL)
		return hvctl_usage_err("guest run", "guest run: --kernel is required");
	cfg.builtin_image = hvctl_guest_builtin_image();
	/* the files first: a missing kernel is the error, not what comes after it */
	if (strcmp(cfg.kernel, HV_VMM_BUILTIN_KERNEL) != 0 && access(cfg.kernel, R_OK) != 0) {
		hvctl_err("guest %s: kernel %s: %s", cfg.name, cfg.kernel, strerror(errno));
		return 1;
	}
	if (cfg.initrd != NULL && access(cfg.initrd, R_OK) != 0) {
		hvctl_err("guest %s: initrd %s: %s", cfg.name, cfg.initrd, strerror(errno));
		return 1;
	}
	if (port != NULL) {
		if (strchr(port, '/'))
			snprintf(sock, sizeof(sock), "%s", port);
		else
			snprintf(sock, sizeof(sock), "%s/%s.sock", dir, port);
		cfg.port_socket = sock;
	}
	if (run_dir != NULL && hvctl_guest_check_free(run_dir, cfg.name) != 0)
		return 1;
	if (log != NULL) {
		cfg.console_fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (cfg.console_fd < 0) {
			hvctl_err("log %s: %m", log);
			return 1;
		}
	}
	run_vm = hv_vm_create(&cfg);
	if (run_vm == NULL) {
		hvctl_err("guest %s: %s", cfg.name, hv_vmm_error());
		if (cfg.console_fd != STDOUT_FILENO)
			close(cfg.console_fd);
		return 1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	rc = hvctl_guest_serve(run_vm, &cfg, run_dir);
	if (rc == 0 && hv_vm_start(run_vm) != 0) {
		hvctl_err("guest %s: %s", cfg.name, hv_vmm_error());
		rc = -1;
	}
	while (rc == 0 && hv_vm_poll(run_vm, -1) == 0)
		;
	reason = hv_vm_exit_reason(run_vm);
	status = hv_vm_exit_status(run_vm);
	fprintf(stderr, "hvctl: guest %s stopped: %s\n", cfg.name, reason ? reason : "error");

	if (rc != 0)
		status = 1;
	else if (status < 0)
		status = reason && (strncmp(reason, "triple fault", 12) == 0 ||
				    strncmp(reason, "KVM", 3) == 0 ||
				    strncmp(reason, "vCPU", 4) == 0)
				 ? 3
				 : 0;
	hvctl_guest_unserve(run_vm);
	hv_vm_destroy(run_vm);
	run_vm = NULL;
	if (cfg.console_fd != STDOUT_FILENO)
		close(cfg.console_fd);
	return status;
}
