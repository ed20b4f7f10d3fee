/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hvctl guest: the VMM verbs. "run" is the VMM itself (cmd_guest_run.c);
 * "start" runs it detached with a control socket and a log in the run
 * directory; the others talk to that socket (cmd_guest_ctl.c) or read the log.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hv_ctl.h"
#include "hv_ctl_api.h"
#include "hvctl.h"
#include "hvctl_guest.h"

static const char guest_usage[] =
	"usage: hvctl guest start NAME --kernel K [--initrd I] [--cmdline C] [--cpus N]\n"
	"                        [--memory M] [--port P] [--pin CPUS] [--hugepages] [...]\n"
	"       hvctl guest run NAME ...      the VMM in the foreground (see run --help)\n"
	"       hvctl guest list\n"
	"       hvctl guest show NAME\n"
	"       hvctl guest stats NAME        KVM statistics per vCPU\n"
	"       hvctl guest console NAME [--no-follow]\n"
	"       hvctl guest stop NAME [--force] [--timeout S]\n"
	"\n"
	"KVM guests whose virtio-net rings hvswitch serves. Each runs as its own\n"
	"process ('hvctl guest run'); 'start' detaches it, with its control socket\n"
	"NAME.sock and console log NAME.log in the run directory ($HV_GUEST_RUN_DIR,\n"
	"default: 'guests' in hvswitch's run directory, the directory of the control\n"
	"socket, " HV_GUEST_RUN_DIR " by default). 'hvctl guest VERB --help' for each.\n";

/* Each verb's own help (run: cmd_guest_run.c). */
static const struct {
	const char *verb, *text;
} verb_help[] = {
	{"start", "usage: hvctl guest start NAME --kernel K [options of guest run]\n"
		  "\n"
		  "Start guest NAME detached, with its control socket NAME.sock and console\n"
		  "log NAME.log in the guests' run directory (created, mode 0750, when\n"
		  "missing); returns once the guest's control socket answers.\n"},
	{"list", "usage: hvctl guest list\n"
		 "\n"
		 "The guests running in the guests' run directory: PID, state, vCPUs,\n"
		 "memory, the NIC's link and MAC.\n"},
	{"show", "usage: hvctl guest show NAME\n"
		 "\n"
		 "Guest NAME's configuration and the state of its NIC.\n"},
	{"stats", "usage: hvctl guest stats NAME\n"
		  "\n"
		  "KVM's statistics of each vCPU of guest NAME, then its NIC's virtqueues.\n"},
	{"console", "usage: hvctl guest console NAME [--no-follow]\n"
		    "\n"
		    "Print guest NAME's console log and follow it, sending what is typed to\n"
		    "its serial console; --no-follow: print it and return.\n"},
	{"stop", "usage: hvctl guest stop NAME [--force] [--timeout S]\n"
		 "\n"
		 "Power guest NAME off: a Linux guest gets the ACPI power button and S\n"
		 "seconds (default 10) to shut down; --force stops it at once.\n"},
};

static char switch_dir[180] = HV_GUEST_SWITCH_DIR;
static char run_dir[200] = HV_GUEST_RUN_DIR;

void
hvctl_guest_defaults(const struct hvctl *h)
{
	const char *e = getenv("HV_GUEST_RUN_DIR");
	const char *slash = h->socket != NULL ? strrchr(h->socket, '/') : NULL;

	if (slash != NULL && slash != h->socket && (size_t)(slash - h->socket) < sizeof(switch_dir))
		snprintf(switch_dir, sizeof(switch_dir), "%.*s", (int)(slash - h->socket),
			 h->socket);
	if (e != NULL && *e != '\0')
		snprintf(run_dir, sizeof(run_dir), "%s", e);
	else
		snprintf(run_dir, sizeof(run_dir), "%s/guests", switch_dir);
}

const char *
hvctl_guest_switch_dir(void)
{
	return switch_dir;
}

const char *
hvctl_guest_run_dir(void)
{
	return run_dir;
}

int
hvctl_guest_mkdir(const char *dir)
{
	char path[sizeof(run_dir)];
	size_t i;

	if (snprintf(path, sizeof(path), "%s", dir) >= (int)sizeof(path)) {
		hvctl_err("run directory %s: path too long", dir);
		return -1;
	}
	/* each missing component, as mkdir -p */
	for (i = 1; i <= strlen(dir); i++) {
		if (path[i] != '/' && path[i] != '\0')
			continue;
		path[i] = '\0';
		if (mkdir(path, 0750) != 0 && errno != EEXIST) {
			hvctl_err("run directory %s: %s", path, strerror(errno));
			return -1;
		}
		path[i] = dir[i];
	}
	return 0;
}

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* One request to guest NAME's VMM; -1 (printed) when it does not answer. */
static int
guest_call_args(const char *name, const char *cmd, cJSON *args, cJSON **result)
{
	char path[256], err[512];
	int fd, rc;

	if (hvctl_guest_socket_path(hvctl_guest_run_dir(), name, path, sizeof(path)) != 0) {
		hvctl_err("guest %s: name too long", name);
		cJSON_Delete(args);
		return -1;
	}
	fd = hv_ctl_connect(path, err, sizeof(err));
	if (fd < 0) {
		hvctl_err("no guest %s (%s)", name, errno == ENOENT ? "not running" : err);
		cJSON_Delete(args);
		return -1;
	}
	rc = hv_ctl_call(fd, cmd, args, result, err, sizeof(err));
	close(fd);
	if (rc != 0)
		hvctl_err("guest %s: %s", name, err);
	return rc;
}

static int
guest_call(const char *name, const char *cmd, cJSON **result)
{
	return guest_call_args(name, cmd, NULL, result);
}

static bool
guest_alive(const char *name)
{
	char path[256], err[256];
	int fd;

	hvctl_guest_socket_path(hvctl_guest_run_dir(), name, path, sizeof(path));
	fd = hv_ctl_connect(path, err, sizeof(err));
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* the NAME argument of a verb without options */
static const char *
one_name(const char *verb, int argc, char **argv)
{
	if (argc != 2 || argv[1][0] == '-') {
		hvctl_usage_err("guest", "guest %s: one guest NAME expected", verb);
		return NULL;
	}
	return argv[1];
}

/* The last "hvctl:" line of a log: why a detached VMM gave up. */
static void
print_log_error(const char *log)
{
	char line[512], last[512] = "";
	FILE *f = fopen(log, "r");

	if (f == NULL)
		return;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "hvctl: ", 7) == 0)
			snprintf(last, sizeof(last), "%s", line);
	fclose(f);
	if (last[0])
		fputs(last, stderr);
}

static int
cmd_start(struct hvctl *h, int argc, char **argv)
{
	const char *dir = hvctl_guest_run_dir(), *name;
	char log[300], **args;
	uint64_t deadline;
	pid_t pid;
	int i, fd, status;

	(void)h;
	if (argc < 2 || argv[1][0] == '-')
		return hvctl_usage_err("guest", "guest start: NAME first, then the run options");
	name = argv[1];
	if (strchr(name, '/') || strlen(name) > 64)
		return hvctl_usage_err("guest", "guest start: bad name '%s'", name);
	if (hvctl_guest_mkdir(dir) != 0)
		return 1;
	if (hvctl_guest_check_free(dir, name) != 0)
		return 1;
	snprintf(log, sizeof(log), "%s/%s.log", dir, name);
	/* hvctl guest run --switch-dir D NAME <options> --run-dir DIR: the
	 * default D is this hvctl's, an option given overrides it (the last wins) */
	args = calloc((size_t)argc + 8, sizeof(*args));
	if (args == NULL)
		return 1;
	args[0] = "hvctl";
	args[1] = "guest";
	args[2] = "run";
	args[3] = "--switch-dir";
	args[4] = (char *)hvctl_guest_switch_dir();
	for (i = 1; i < argc; i++)
		args[i + 4] = argv[i];
	args[argc + 4] = "--run-dir";
	args[argc + 5] = (char *)dir;
	fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
	if (fd < 0) {
		hvctl_err("log %s: %s", log, strerror(errno));
		free(args);
		return 1;
	}
	pid = fork();
	if (pid < 0) {
		hvctl_err("fork: %s", strerror(errno));
		free(args);
		close(fd);
		return 1;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);

		setsid();
		dup2(null, STDIN_FILENO);
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		execv("/proc/self/exe", args);
		_exit(127);
	}
	free(args);
	close(fd);
	/* ready when its control socket answers; failed if it exits first */
	deadline = now_ms() + 30000;
	while (now_ms() < deadline) {
		if (waitpid(pid, &status, WNOHANG) == pid) {
			print_log_error(log);
			hvctl_err("guest %s did not start (see %s)", name, log);
			return 1;
		}
		if (guest_alive(name)) {
			printf("guest %s started (pid %d), console log %s\n", name, (int)pid, log);
			return 0;
		}
		usleep(20000);
	}
	hvctl_err("guest %s: no answer on its control socket after 30 s (see %s)", name, log);
	return 1;
}

static void
print_show(const cJSON *r)
{
	static const char *const skip[] = {"net", NULL};
	const cJSON *net = cJSON_GetObjectItemCaseSensitive(r, "net");

	hvctl_print_kv(stdout, r, 0, skip);
	if (net) {
		printf("net:\n");
		hvctl_print_kv(stdout, net, 2, NULL);
	}
}

static int
cmd_show(struct hvctl *h, int argc, char **argv)
{
	const char *name = one_name("show", argc, argv);
	cJSON *r;

	if (name == NULL)
		return 1;
	if (guest_call(name, HV_CTL_CMD(GUEST_SHOW), &r) != 0)
		return 1;
	if (h->json)
		hvctl_print_json(stdout, r);
	else
		print_show(r);
	cJSON_Delete(r);
	return 0;
}

static int
cmd_list(struct hvctl *h, int argc, char **argv)
{
	static const struct hvctl_col cols[] = {
		{"NAME", HVCTL_LEFT},   {"PID", HVCTL_RIGHT},     {"STATE", HVCTL_LEFT},
		{"VCPUS", HVCTL_RIGHT}, {"MEM_MIB", HVCTL_RIGHT}, {"NET", HVCTL_LEFT},
		{"MAC", HVCTL_LEFT},
	};
	struct hvctl_table *t = hvctl_table_new(cols, 7);
	cJSON *all = cJSON_CreateArray();
	struct dirent *de;
	DIR *d;

	(void)argv;
	if (argc != 1)
		return hvctl_usage_err("guest", "guest list: no arguments expected");
	d = opendir(hvctl_guest_run_dir());
	while (d && (de = readdir(d)) != NULL) {
		size_t n = strlen(de->d_name);
		char name[256], path[512], err[256], b[7][64];
		const char *cells[7];
		cJSON *r = NULL, *net;
		int fd;

		if (n < 6 || strcmp(de->d_name + n - 5, ".sock") != 0)
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)(n - 5), de->d_name);
		snprintf(path, sizeof(path), "%s/%s", hvctl_guest_run_dir(), de->d_name);
		fd = hv_ctl_connect(path, err, sizeof(err));
		if (fd < 0)
			continue; /* a stale socket: not running */
		if (hv_ctl_call(fd, HV_CTL_CMD(GUEST_SHOW), NULL, &r, err, sizeof(err)) != 0) {
			close(fd);
			continue;
		}
		close(fd);
		net = cJSON_GetObjectItemCaseSensitive(r, "net");
		cells[0] = name;
		cells[1] = hvctl_cell(cJSON_GetObjectItemCaseSensitive(r, "pid"), b[1], 64);
		cells[2] = hvctl_cell(cJSON_GetObjectItemCaseSensitive(r, "state"), b[2], 64);
		cells[3] = hvctl_cell(cJSON_GetObjectItemCaseSensitive(r, "vcpus"), b[3], 64);
		cells[4] = hvctl_cell(cJSON_GetObjectItemCaseSensitive(r, "memory_mib"), b[4], 64);
		cells[5] = hvctl_cell(cJSON_GetObjectItemCaseSensitive(net, "state"), b[5], 64);
		cells[6] = hvctl_cell(cJSON_GetObjectItemCaseSensitive(net, "mac"), b[6], 64);
		hvctl_table_add(t, cells);
		cJSON_AddItemToArray(all, r);
	}
	if (d)
		closedir(d);
	if (h->json)
		hvctl_print_json(stdout, all);
	else
		hvctl_table_print(t, stdout);
	hvctl_table_free(t);
	cJSON_Delete(all);
	return 0;
}

static bool
wait_gone(const char *name, uint64_t ms)
{
	uint64_t deadline;

	for (deadline = now_ms() + ms; now_ms() < deadline; usleep(20000))
		if (!guest_alive(name))
			return true;
	return false;
}

/* hvctl guest stop NAME [--force] [--timeout S]: the ACPI power button
 * first (a Linux guest powers off), the VM stopped after S seconds (default
 * 10) if it still runs; --force stops it at once. The built-in guest has no
 * power button: it is stopped at once. */
static int
cmd_stop(struct hvctl *h, int argc, char **argv)
{
	const char *name = argc >= 2 && argv[1][0] != '-' ? argv[1] : NULL;
	unsigned long long timeout_s = 10;
	bool force = false, pressed = false;
	cJSON *args, *r = NULL;
	int i;

	(void)h;
	for (i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--force") == 0) {
			force = true;
		} else if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc) {
			if (hvctl_parse_uint(argv[++i], 0, 3600, &timeout_s) != 0)
				return hvctl_usage_err("guest",
						       "guest stop: --timeout: 0..3600 seconds");
		} else {
			name = NULL;
			break;
		}
	}
	if (name == NULL)
		return hvctl_usage_err("guest", "guest stop: NAME [--force] [--timeout S]");
	args = cJSON_CreateObject();
	cJSON_AddBoolToObject(args, HV_CTL_KEY(FORCE), force);
	if (guest_call_args(name, HV_CTL_CMD(GUEST_STOP), args, &r) != 0) /* args consumed */
		return 1;
	pressed = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "power_button"));
	cJSON_Delete(r);
	if (pressed) {
		if (wait_gone(name, timeout_s * 1000)) {
			printf("guest %s powered off\n", name);
			return 0;
		}
		hvctl_err("guest %s: no power off %llu s after the power button: stopping it", name,
			  timeout_s);
		args = cJSON_CreateObject();
		cJSON_AddBoolToObject(args, HV_CTL_KEY(FORCE), true);
		if (guest_call_args(name, HV_CTL_CMD(GUEST_STOP), args, NULL) != 0)
			return wait_gone(name, 1000) ? 0 : 1;
	}
	if (wait_gone(name, 10000)) {
		printf("guest %s stopped\n", name);
		return 0;
	}
	hvctl_err("guest %s: still running 10 s after the stop request", name);
	return 1;
}

/* The NIC's queues (guest.queues): one row each, after the vCPUs. */
static void
print_queues(const cJSON *queues)
{
	static const char *const keys[] = {"queue",  "role",      "size",    "enabled",
					   "vector", "avail_idx", "used_idx"};
	enum {
		NK = sizeof(keys) / sizeof(keys[0])
	};
	struct hvctl_col cols[NK];
	struct hvctl_table *t;
	const cJSON *q;
	unsigned int i;

	if (cJSON_GetArraySize(queues) == 0)
		return;
	for (i = 0; i < NK; i++)
		cols[i] = (struct hvctl_col){keys[i], i == 1 ? HVCTL_LEFT : HVCTL_RIGHT};
	t = hvctl_table_new(cols, NK);
	cJSON_ArrayForEach(q, queues)
	{
		char b[NK][32];
		const char *cells[NK];

		for (i = 0; i < NK; i++)
			cells[i] =
				hvctl_cell(cJSON_GetObjectItemCaseSensitive(q, keys[i]), b[i], 32);
		hvctl_table_add(t, cells);
	}
	printf("\n");
	hvctl_table_print(t, stdout);
	hvctl_table_free(t);
}

static int
cmd_stats(struct hvctl *h, int argc, char **argv)
{
	static const char *const keys[] = {
		"exits",          "io_exits",       "mmio_exits",           "irq_exits",
		"irq_injections", "halt_exits",     "halt_successful_poll", "halt_attempted_poll",
		"halt_wakeup",    "insn_emulation", "vmm_io_exits",         "vmm_mmio_exits",
	};
	enum {
		NK = sizeof(keys) / sizeof(keys[0])
	};
	struct hvctl_col cols[NK + 1];
	const char *name = one_name("stats", argc, argv);
	struct hvctl_table *t;
	const cJSON *cpu;
	cJSON *r, *queues;
	unsigned int i;

	if (name == NULL || guest_call(name, HV_CTL_CMD(GUEST_STATS), &r) != 0)
		return 1;
	if (guest_call(name, HV_CTL_CMD(GUEST_QUEUES), &queues) != 0) {
		cJSON_Delete(r);
		return 1;
	}
	if (h->json) {
		cJSON *o = cJSON_CreateObject();

		cJSON_AddItemToObject(o, "vcpus", r);
		cJSON_AddItemToObject(o, "queues", queues);
		hvctl_print_json(stdout, o);
		cJSON_Delete(o);
		return 0;
	}
	cols[0] = (struct hvctl_col){"VCPU", HVCTL_RIGHT};
	for (i = 0; i < NK; i++)
		cols[i + 1] = (struct hvctl_col){keys[i], HVCTL_RIGHT};
	t = hvctl_table_new(cols, NK + 1);
	cJSON_ArrayForEach(cpu, r)
	{
		char b[NK + 1][32];
		const char *cells[NK + 1];

		cells[0] = hvctl_cell(cJSON_GetObjectItemCaseSensitive(cpu, "vcpu"), b[0], 32);
		for (i = 0; i < NK; i++)
			cells[i + 1] = hvctl_cell(cJSON_GetObjectItemCaseSensitive(cpu, keys[i]),
						  b[i + 1], 32);
		hvctl_table_add(t, cells);
	}
	hvctl_table_print(t, stdout);
	hvctl_table_free(t);
	cJSON_Delete(r);
	print_queues(queues);
	cJSON_Delete(queues);
	return 0;
}

static volatile sig_atomic_t console_stop;

static void
on_console_signal(int sig)
{
	(void)sig;
	console_stop = 1;
}

/* Send one line of input to the guest's UART. */
static void
console_send(const char *name, const char *line)
{
	char path[256], err[256];
	cJSON *args = cJSON_CreateObject();
	int fd;

	cJSON_AddStringToObject(args, HV_CTL_KEY(INPUT), line);
	hvctl_guest_socket_path(hvctl_guest_run_dir(), name, path, sizeof(path));
	fd = hv_ctl_connect(path, err, sizeof(err));
	if (fd < 0) {
		cJSON_Delete(args);
		return;
	}
	if (hv_ctl_call(fd, HV_CTL_CMD(GUEST_CONSOLE), args, NULL, err, sizeof(err)) != 0)
		hvctl_err("guest %s: %s", name, err);
	close(fd);
}

/* Print the console log, and follow it while the guest runs; lines typed on
 * stdin go to the guest's UART (line by line: the terminal stays cooked). */
static int
cmd_console(struct hvctl *h, int argc, char **argv)
{
	bool follow = !(argc == 3 && strcmp(argv[2], "--no-follow") == 0);
	const char *name = argc >= 2 ? argv[1] : NULL;
	char log[300], buf[4096], line[4096];
	bool input = follow;
	uint64_t next_check = 0;
	struct sigaction sa;
	int fd;

	(void)h;
	if (name == NULL || name[0] == '-' || argc > 3 || (argc == 3 && follow))
		return hvctl_usage_err("guest", "guest console: NAME [--no-follow]");
	snprintf(log, sizeof(log), "%s/%s.log", hvctl_guest_run_dir(), name);
	fd = open(log, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		hvctl_err("no console log for guest %s (%s)", name, strerror(errno));
		return 1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_console_signal;
	sigaction(SIGINT, &sa, NULL);
	while (!console_stop) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n > 0) {
			fwrite(buf, 1, (size_t)n, stdout);
			continue;
		}
		fflush(stdout);
		if (!follow)
			break;
		if (input) {
			struct pollfd p = {.fd = STDIN_FILENO, .events = POLLIN};

			if (poll(&p, 1, 0) == 1) {
				if (fgets(line, sizeof(line), stdin) != NULL)
					console_send(name, line);
				else
					input = false; /* end of input: keep following */
			}
		}
		if (now_ms() >= next_check) {
			if (!guest_alive(name))
				break;
			next_check = now_ms() + 500;
		}
		usleep(50000);
	}
	close(fd);
	return 0;
}

/* the guest verbs (complete.c offers them) */
const struct hvctl_verb hvctl_guest_verbs[] = {
	{"run", hvctl_guest_cmd_run, "run a guest in the foreground (the VMM)"},
	{"start", cmd_start, "start a guest detached"},
	{"list", cmd_list, "list running guests"},
	{"show", cmd_show, "a guest's configuration and NIC"},
	{"stats", cmd_stats, "KVM statistics per vCPU"},
	{"console", cmd_console, "print (and follow) a guest's console"},
	{"stop", cmd_stop, "stop a guest"},
	{NULL, NULL, NULL},
};

int
hvctl_cmd_guest(struct hvctl *h, int argc, char **argv)
{
	hvctl_guest_defaults(h);
	/* every verb answers --help (anywhere after it); run parses its own */
	for (int i = 2; argc >= 3 && strcmp(argv[1], "run") != 0 && i < argc; i++) {
		if (strcmp(argv[i], "--help") != 0 && strcmp(argv[i], "-h") != 0)
			continue;
		for (size_t v = 0; v < sizeof(verb_help) / sizeof(verb_help[0]); v++)
			if (strcmp(verb_help[v].verb, argv[1]) == 0) {
				fputs(verb_help[v].text, stdout);
				if (strcmp(argv[1], "start") == 0) {
					printf("\noptions (those of 'hvctl guest run'):\n");
					fputs(hvctl_guest_run_options, stdout);
				}
				return 0;
			}
		break;
	}
	return hvctl_dispatch(h, "guest", hvctl_guest_verbs, guest_usage, argc, argv);
}
