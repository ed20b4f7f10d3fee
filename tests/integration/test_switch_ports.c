/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The hvswitch daemon end to end, its ports: an ethdev uplink, ports added,
 * changed and restarted under traffic, requests it must refuse, and what
 * DPDK telemetry shows. The daemon is a child process, the guests are
 * virtio-user ethdevs of this process (switch_fixture.h).
 *
 * "Frame X did not reach guest G" is proved with a barrier, never a sleep:
 * the daemon has one PMD, which handles frames in the order it reads them
 * and delivers each burst before it reads the next; so once a frame sent
 * after X's burst was handled (seen somewhere) reaches G, X would have
 * reached G before it.
 */
#include <check.h>
#include <sys/socket.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hv_test_net.h"
#include "switch_fixture.h"

/* ---- ethdev uplink: a kernel tap interface behind net_tap ---- */

/* Wait for a frame of ours with id @id on the raw socket (the guests are polled meanwhile). */
static bool
raw_wait(int fd, uint32_t id)
{
	uint64_t end = swh_now_ms() + T;
	uint8_t f[2048];

	while (swh_now_ms() < end) {
		ssize_t n = recv(fd, f, sizeof(f), MSG_DONTWAIT);

		/* ethertype 0x88b5, magic "HVST", then the id (see switch_harness.c) */
		if (n >= 24 && f[12] == 0x88 && f[13] == 0xb5 && memcmp(f + 14, "HVST", 4) == 0 &&
		    ((uint32_t)f[18] << 24 | (uint32_t)f[19] << 16 | (uint32_t)f[20] << 8 |
		     f[21]) == id)
			return true;
		swh_poll();
	}
	return false;
}

static int
iface_set_up(const char *ifname, bool up)
{
	char cmd[96];

	snprintf(cmd, sizeof(cmd), "ip link set %s %s", ifname, up ? "up" : "down");
	return system(cmd);
}

START_TEST(ethdev_uplink)
{
	char ifname[16], devargs[64], args[160];
	uint8_t f[64] = {0};
	uint32_t id;
	int fd;

	snprintf(ifname, sizeof(ifname), "hvt%d", (int)getpid() % 100000);
	snprintf(devargs, sizeof(devargs), "net_tap%d,iface=%s", (int)getpid() % 1000, ifname);
	swf_start(NULL);
	swf_add(0, NULL);
	snprintf(args, sizeof(args), "{\"name\":\"up0\",\"type\":\"ethdev\",\"devargs\":\"%s\"}",
		 devargs);
	cJSON_Delete(hvsw_ok(&dut, "port.add", "%s", args));
	ck_assert_int_eq(iface_set_up(ifname, true), 0);
	ck_assert_msg(hvsw_wait_up(&dut, "up0", T), "tap port not up");
	fd = hv_test_raw_open(ifname);
	ck_assert_msg(fd >= 0, "raw socket on %s", ifname);
	/* guest -> uplink: a broadcast floods to the tap interface */
	id = guest_send(&vm[0], &swh_bcast, NULL, 0);
	ck_assert_msg(raw_wait(fd, id), "frame %u did not reach %s", id, ifname);
	/* uplink -> guest: a frame sent into the interface reaches the guest byte-exact */
	memset(f, 0xff, 6);
	memcpy(f + 6, "\x02\x00\x00\x00\x00\x77", 6);
	f[12] = 0x08;
	f[13] = 0x06; /* an ARP-looking frame */
	ck_assert_int_eq(send(fd, f, sizeof(f), 0), (int)sizeof(f));
	{
		const struct rte_ether_addr mac = {{2, 0, 0, 0, 0, 0x77}};
		uint64_t end = swh_now_ms() + T;

		/* learned on the uplink once the switch received it */
		while (hvsw_fdb_has(&dut, &mac, "up0") != 1 && swh_now_ms() < end)
			usleep(5000);
		ck_assert_int_eq(hvsw_fdb_has(&dut, &mac, "up0"), 1);
	}
	/* the link state follows the interface */
	ck_assert_int_eq(iface_set_up(ifname, false), 0);
	{
		uint64_t end = swh_now_ms() + T;
		const char *st = NULL;
		cJSON *r = NULL;

		while (swh_now_ms() < end) {
			cJSON_Delete(r);
			r = hvsw_ok(&dut, "port.show", "{\"name\":\"up0\"}");
			st = swh_str(r, "state");
			if (st != NULL && strcmp(st, "down") == 0)
				break;
			usleep(10000);
		}
		ck_assert_msg(st != NULL && strcmp(st, "down") == 0, "up0 state %s", st);
		cJSON_Delete(r);
	}
	close(fd);
	/* (the kernel's own frames on the tap, e.g. IPv6 router solicitations, reach vm0 too) */
	ck_assert_uint_ge(hvsw_port_stat(&dut, "vm0", "tx_packets"), 1);
	swf_stop_ok();
}
END_TEST

/* ---- 7. port changes under traffic ---- */

/* PMD of queue pair @qp in port.show's "qps" array. */
static int
queue_pmd(const cJSON *show, int qp)
{
	const cJSON *q;

	cJSON_ArrayForEach(q, cJSON_GetObjectItemCaseSensitive(
				      show, "qps")) if ((int)swh_num(q, "qp") ==
							qp) return (int)swh_num(q, "pmd");
	return -2;
}

START_TEST(port_changes_under_traffic)
{
	enum {
		ROUNDS = 20,
		BURST = 16
	};
	static uint32_t ids[ROUNDS * BURST];
	unsigned int n = 0;
	char err[256];
	cJSON *r;

	swf_start(NULL);
	for (unsigned int i = 0; i < 3; i++)
		swf_add(i, NULL);
	swf_must_arrive(0, guest_send(&vm[1], &swh_bcast, NULL, 0));
	ck_assert(swf_fdb_wait(&vm[1].mac, "vm1", true, T));
	for (unsigned int round = 0; round < ROUNDS; round++) {
		unsigned int first = n;

		for (unsigned int k = 0; k < BURST; k++)
			ids[n++] = guest_send(&vm[0], &vm[1].mac, NULL, 0);
		/* the change runs while the PMD switches that burst */
		switch (round) {
		case 4:
			swf_add(3, NULL);
			break;
		case 8:
			cJSON_Delete(hvsw_ok(&dut, "port.del", "{\"name\":\"vm2\"}"));
			guest_close(&vm[2]);
			break;
		case 12:
			r = hvsw_ok(&dut, "port.set", "{\"name\":\"vm1\",\"pmd\":0}");
			ck_assert_int_eq((int)swh_num(r, "pmd"), 0);
			cJSON_Delete(r);
			break;
		case 14:
			ck_assert_int_ne(hvsw_call(&dut, NULL, err, sizeof(err), "port.set",
						   "{\"name\":\"vm1\",\"pmd\":5}"),
					 0);
			ck_assert_msg(strstr(err, "pmd") != NULL, "error: %s", err);
			break;
		default:
			break;
		}
		for (unsigned int k = first; k < n; k++)
			swf_must_arrive(1, ids[k]);
	}
	swf_barrier(0, 1);
	swf_barrier(0, 3);
	swf_barrier(1, 0);
	for (unsigned int k = 0; k < n; k++) {
		ck_assert_msg(guest_count(&vm[1], ids[k]) == 1, "frame %u reached vm1 %u times",
			      ids[k], guest_count(&vm[1], ids[k]));
		ck_assert_uint_eq(guest_count(&vm[0], ids[k]), 0);
		ck_assert_uint_eq(guest_count(&vm[3], ids[k]), 0);
	}
	r = hvsw_ok(&dut, "port.show", "{\"name\":\"vm1\"}");
	ck_assert_int_eq((int)swh_num(r, "pmd"), 0);
	ck_assert_msg(queue_pmd(r, 0) == 0, "vm1's queue 0 on PMD %d", queue_pmd(r, 0));
	cJSON_Delete(r);
	ck_assert_int_ne(hvsw_call(&dut, NULL, err, sizeof(err), "port.show", "{\"name\":\"vm2\"}"),
			 0);
	swf_stat_is("vm1", "tx_packets", n + 2); /* the frames and two barriers */
	swf_no_bad_frames(4);
	swf_stop_ok();
}
END_TEST

/* ---- 8. restart ---- */

/* Names (and sockets) of port.list, as one string. */
static void
port_list(char *buf, size_t len)
{
	cJSON *r = hvsw_ok(&dut, "port.list", NULL), *e;
	size_t off = 0;

	buf[0] = '\0';
	cJSON_ArrayForEach(e, r) off +=
		(size_t)snprintf(buf + off, len - off, "%s=%s,%s;", swh_str(e, "name"),
				 swh_str(e, "socket"), swh_str(e, "mode"));
	cJSON_Delete(r);
}

static void
both_ways(unsigned int a, unsigned int b)
{
	swf_barrier(a, b);
	swf_barrier(b, a);
}

START_TEST(restart_server_ports)
{
	char before[512], after[512], *text;
	cJSON *conf, *ports, *e;
	unsigned int n = 0;
	FILE *f;

	swf_start(NULL);
	swf_add(0, NULL);
	swf_add(1, ",\"vlan\":7");
	cJSON_Delete(hvsw_ok(&dut, "port.set", "{\"name\":\"vm0\",\"vlan\":7}"));
	both_ways(0, 1);
	port_list(before, sizeof(before));
	swf_stop_ok();

	text = calloc(1, 65536);
	f = fopen(dut.config, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert(fread(text, 1, 65535, f) > 0);
	fclose(f);
	conf = cJSON_Parse(text);
	free(text);
	ck_assert_ptr_nonnull(conf);
	ports = cJSON_GetObjectItem(conf, "ports");
	cJSON_ArrayForEach(e, ports)
	{
		const char *name = swh_str(e, "name");

		ck_assert_ptr_nonnull(name);
		ck_assert(strcmp(name, "vm0") == 0 || strcmp(name, "vm1") == 0);
		ck_assert_int_eq((int)swh_num(e, "vlan"), 7);
		n++;
	}
	cJSON_Delete(conf);
	ck_assert_uint_eq(n, 2);

	swf_start(NULL);
	port_list(after, sizeof(after));
	ck_assert_str_eq(before, after);
	/* a client-mode frontend does not reconnect by itself: make it anew */
	for (unsigned int i = 0; i < 2; i++) {
		guest_close(&vm[i]);
		swf_attach(i);
	}
	both_ways(0, 1);
	swf_no_bad_frames(2);
	swf_stop_ok();
}
END_TEST

START_TEST(restart_client_port)
{
	char sock[160];
	cJSON *r;

	swf_start(NULL);
	swf_add(1, NULL);
	/* the daemon connects to the guest: the frontend listens */
	swf_sock_of("vmc", sock, sizeof(sock));
	cJSON_Delete(hvsw_ok(&dut, "port.add",
			     "{\"name\":\"vm0\",\"type\":\"vhost-user\",\"mode\":\"client\","
			     "\"socket\":\"%s\"}",
			     sock));
	/* blocks until the daemon (retrying at least once a second) connects */
	ck_assert_int_eq(guest_open(&vm[0], "vm0", 0, sock, true), 0);
	ck_assert(hvsw_wait_up(&dut, "vm0", T));
	both_ways(0, 1);
	swf_stop_ok();

	swf_start(NULL);
	r = hvsw_ok(&dut, "port.show", "{\"name\":\"vm0\"}");
	ck_assert_str_eq(swh_str(r, "mode"), "client");
	cJSON_Delete(r);
	guest_close(&vm[1]);
	swf_attach(1);
	/* vm0's frontend is left alone: the daemon reconnects to it */
	ck_assert_msg(hvsw_wait_up(&dut, "vm0", T), "client port did not reconnect");
	both_ways(0, 1);
	swf_no_bad_frames(2);
	swf_stop_ok();
}
END_TEST

/* ---- 9. bad requests ---- */

static void
snapshot(char *list, size_t len, char *config, size_t clen)
{
	cJSON *r = hvsw_ok(&dut, "port.list", NULL);
	char *s = cJSON_PrintUnformatted(r);
	int fd;
	ssize_t n;

	snprintf(list, len, "%s", s);
	free(s);
	cJSON_Delete(r);
	fd = open(dut.config, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	n = read(fd, config, clen - 1);
	close(fd);
	ck_assert_int_gt(n, 0);
	config[n] = '\0';
}

/* The request fails with a one-line error containing @want, and changes nothing. */
static void
refused(const char *want, const char *cmd, const char *args)
{
	static char l0[8192], c0[8192], l1[8192], c1[8192];
	char err[512];

	snapshot(l0, sizeof(l0), c0, sizeof(c0));
	ck_assert_msg(hvsw_call(&dut, NULL, err, sizeof(err), cmd, args ? "%s" : NULL, args) != 0,
		      "%s %s was accepted", cmd, args ? args : "");
	ck_assert_msg(err[0] != '\0' && strchr(err, '\n') == NULL, "bad error '%s'", err);
	ck_assert_msg(strstr(err, want) != NULL, "%s %s: error '%s' lacks '%s'", cmd,
		      args ? args : "", err, want);
	snapshot(l1, sizeof(l1), c1, sizeof(c1));
	ck_assert_str_eq(l0, l1);
	ck_assert_str_eq(c0, c1);
}

static void
raw_refused(const char *bytes, const char *want)
{
	char line[512];

	ck_assert_int_eq(hvsw_raw(&dut, bytes, strlen(bytes), line, sizeof(line)), 0);
	ck_assert_msg(strncmp(line, "{\"ok\":false,\"error\":\"", 21) == 0 &&
			      strstr(line, want) != NULL,
		      "reply to %s: %s", bytes, line);
}

START_TEST(bad_requests)
{
	static char args[256], l0[8192], c0[8192], l1[8192], c1[8192];
	char sock[160], line[512];
	int st;
	pid_t pid;

	swf_start(NULL);
	hvsw_add_port(&dut, "vm0", NULL);
	hvsw_add_port(&dut, "vm1", ",\"vlan\":3");
	snapshot(l0, sizeof(l0), c0, sizeof(c0));
	raw_refused("{\"cmd\": \"port.list\"\n", "malformed");
	raw_refused("\x01\xfe garbage\n", "malformed");
	raw_refused("[1,2]\n", "malformed");
	raw_refused("{\"args\":{}}\n", "missing 'cmd'");
	raw_refused("{\"cmd\":\"port.del\",\"args\":{\"name\":\"vm0\"}} trailing\n", "malformed");
	refused("unknown command", "port.frobnicate", NULL);
	refused("no port", "port.del", "{\"name\":\"nope\"}");
	refused("no port", "port.show", "{\"name\":\"nope\"}");
	refused("no port", "port.set", "{\"name\":\"nope\",\"vlan\":1}");
	refused("already exists", "port.add", "{\"name\":\"vm0\"}");
	swf_sock_of("vm0", sock, sizeof(sock));
	snprintf(args, sizeof(args), "{\"name\":\"other\",\"socket\":\"%s\"}", sock);
	refused("socket", "port.add", args);
	refused("queues", "port.add", "{\"name\":\"x\",\"queues\":0}");
	refused("queues", "port.add", "{\"name\":\"x\",\"queues\":9}");
	refused("vlan", "port.add", "{\"name\":\"x\",\"vlan\":4095}");
	refused("pmd", "port.add", "{\"name\":\"x\",\"pmd\":99}");
	refused("pmd", "port.add", "{\"name\":\"x\",\"pmd\":5}");
	refused("mode", "port.add", "{\"name\":\"x\",\"mode\":\"bogus\"}");
	refused("type", "port.add", "{\"name\":\"x\",\"type\":\"bogus\"}");
	refused("unknown argument", "port.add", "{\"name\":\"x\",\"colour\":\"red\"}");
	refused("name", "port.add", "{\"name\":\"a/b\"}");
	refused("name", "port.add", "{\"queues\":1}");
	refused("vlan", "port.set", "{\"name\":\"vm0\",\"vlan\":4095}");
	refused("pmd", "port.set", "{\"name\":\"vm0\",\"pmd\":99}");
	refused("pmd", "port.set", "{\"name\":\"vm0\",\"vlan\":5,\"pmd\":3}");
	refused("trunk", "port.set", "{\"name\":\"vm1\",\"trunk\":true,\"vlan\":5}");
	refused("unknown argument", "port.set", "{\"name\":\"vm0\",\"queues\":2}");
	refused("unknown argument", "port.del", "{\"name\":\"vm0\",\"force\":true}");
	refused("unknown argument", "port.list", "{\"all\":true}");

	/* someone who is neither root nor in the group: let them reach the socket */
	ck_assert_int_eq(chmod(dut.dir, 0711), 0);
	ck_assert_int_eq(chmod(dut.sock, 0666), 0);
	if (geteuid() != 0) {
		fprintf(stderr, "bad_requests: not root, unauthorised peer not tested\n");
	} else {
		pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			struct sockaddr_un sa = {.sun_family = AF_UNIX};
			int fd = socket(AF_UNIX, SOCK_STREAM, 0);
			size_t got = 0;

			if (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0)
				_exit(2);
			memcpy(sa.sun_path, dut.sock, strlen(dut.sock) + 1);
			if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
				_exit(3);
			while (got + 1 < sizeof(line) && read(fd, line + got, 1) == 1 &&
			       line[got] != '\n')
				got++;
			line[got] = '\0';
			_exit(strncmp(line, "{\"ok\":false,\"error\":\"permission denied", 38) == 0
				      ? 0
				      : 4);
		}
		ck_assert_int_eq(waitpid(pid, &st, 0), pid);
		ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
			      "unauthorised peer: child status 0x%x", st);
	}
	snapshot(l1, sizeof(l1), c1, sizeof(c1));
	ck_assert_str_eq(l0, l1);
	ck_assert_str_eq(c0, c1);
	cJSON_Delete(hvsw_ok(&dut, "version", NULL)); /* still serving */
	swf_stop_ok();
}
END_TEST

/* ---- 10. telemetry ---- */

/* Traffic on vm0 and vm1: 4 frames each way, 2 MACs learned. */
static void
tel_traffic(void)
{
	swf_start(NULL);
	swf_add(0, NULL);
	swf_add(1, NULL);
	for (int i = 0; i < 3; i++)
		both_ways(0, 1);
	swf_must_arrive(1, guest_send(&vm[0], &vm[1].mac, NULL, 0));
	swf_barrier(1, 0);
	/* learning reaches the table on the daemon's next control tick */
	ck_assert(swf_fdb_wait(&vm[0].mac, "vm0", true, T));
	ck_assert(swf_fdb_wait(&vm[1].mac, "vm1", true, T));
}

START_TEST(telemetry)
{
	char buf[4096], cmd[256];
	cJSON *r, *v, *fdb;
	int fd;
	FILE *p;

	tel_traffic();
	fd = swh_tel_open(dut.prefix, dut.pid);
	v = swh_tel(fd, "/hvswitch/ports");
	ck_assert_int_eq(cJSON_GetArraySize(v), 2);
	ck_assert_str_eq(cJSON_GetStringValue(cJSON_GetArrayItem(v, 0)), "vm0");
	ck_assert_str_eq(cJSON_GetStringValue(cJSON_GetArrayItem(v, 1)), "vm1");
	cJSON_Delete(v);

	v = swh_tel(fd, "/hvswitch/port,vm0");
	ck_assert_str_eq(swh_str(v, "name"), "vm0");
	ck_assert_str_eq(swh_str(v, "state"), "up");
	ck_assert_int_eq((int)swh_num(v, "macs"), 1);
	ck_assert_int_eq((int)swh_num(v, "connected"), 1);
	cJSON_Delete(v);

	/* a bad parameter is an error, not null */
	v = swh_tel(fd, "/hvswitch/port,nope");
	ck_assert_str_eq(swh_str(v, "error"), "no port 'nope' (see /hvswitch/ports)");
	cJSON_Delete(v);
	v = swh_tel(fd, "/hvswitch/port");
	ck_assert_str_eq(swh_str(v, "error"), "missing port name: /hvswitch/port,<name>");
	cJSON_Delete(v);

	v = swh_tel(fd, "/hvswitch/fdb");
	fdb = hvsw_ok(&dut, "fdb.show", NULL);
	ck_assert_int_eq((int)swh_num(v, "entries"), 2);
	ck_assert_int_eq((int)swh_num(v, "entries"), cJSON_GetArraySize(fdb));
	ck_assert_int_eq((int)swh_num(v, "learned"), 2);
	ck_assert_int_eq((int)swh_num(v, "mac_limit"), 1024);
	ck_assert_int_eq((int)swh_num(v, "age_s"), 300);
	cJSON_Delete(fdb);
	cJSON_Delete(v);
	close(fd);

	/* the stock client, non-interactive (optional: needs python3) */
	if (access("/usr/bin/dpdk-telemetry.py", X_OK) == 0 &&
	    access("/usr/bin/python3", X_OK) == 0) {
		bool seen = false;

		snprintf(cmd, sizeof(cmd),
			 "printf '/hvswitch/ports\\n' | /usr/bin/dpdk-telemetry.py -f %s 2>&1",
			 dut.prefix);
		p = popen(cmd, "r");
		ck_assert_ptr_nonnull(p);
		while (fgets(buf, sizeof(buf), p) != NULL) {
			r = cJSON_Parse(buf);
			if (r != NULL &&
			    cJSON_GetArraySize(cJSON_GetObjectItem(r, "/hvswitch/ports")) == 2)
				seen = true;
			cJSON_Delete(r);
		}
		ck_assert_int_eq(pclose(p), 0);
		ck_assert_msg(seen, "dpdk-telemetry.py did not list the ports");
	} else {
		fprintf(stderr, "telemetry: dpdk-telemetry.py not run (not installed)\n");
	}
	swf_stop_ok();
}
END_TEST

/* The nested counters (port stats, PMDs) survive the flattening into telemetry dicts. */
START_TEST(telemetry_counters)
{
	static const char *const c[] = {"rx_packets", "tx_packets", "rx_bytes", "tx_bytes"};
	static char dump[4096];
	double tv[RTE_DIM(c)], sv[RTE_DIM(c)], lcore, packets;
	cJSON *v, *show;
	int fd;

	tel_traffic();
	fd = swh_tel_open(dut.prefix, dut.pid);
	v = swh_tel(fd, "/hvswitch/port,vm0");
	show = hvsw_ok(&dut, "port.show", "{\"name\":\"vm0\"}");
	for (unsigned int i = 0; i < RTE_DIM(c); i++) {
		char path[64];

		snprintf(path, sizeof(path), "stats.%s", c[i]);
		tv[i] = swh_tel_num(v, "stats", c[i]);
		sv[i] = swh_num(show, path);
	}
	cJSON_PrintPreallocated(v, dump, sizeof(dump), 0);
	cJSON_Delete(show);
	cJSON_Delete(v);
	v = swh_tel(fd, "/hvswitch/pmd");
	lcore = swh_tel_num(v, "0", "lcore");
	packets = swh_tel_num(v, "0", "packets");
	cJSON_Delete(v);
	close(fd);
	ck_assert_msg(tv[0] >= 0, "/hvswitch/port,vm0 has no stats counters: %s", dump);
	ck_assert(tv[0] == 4 && tv[1] == 4);
	for (unsigned int i = 0; i < RTE_DIM(c); i++)
		ck_assert_msg(tv[i] == sv[i], "%s: telemetry %.0f, port.show %.0f", c[i], tv[i],
			      sv[i]);
	ck_assert_msg(lcore == 1 && packets >= 8, "/hvswitch/pmd: lcore %.0f packets %.0f", lcore,
		      packets);
	swf_stop_ok();
}
END_TEST

/* Values (leaves) under @j, and whether a key names a TSC (a raw timestamp). */
static unsigned int
tel_leaves(const cJSON *j, bool *tsc)
{
	const cJSON *it;
	unsigned int n = 0;

	cJSON_ArrayForEach(it, j)
	{
		if (it->string != NULL && strstr(it->string, "tsc") != NULL)
			*tsc = true;
		n += cJSON_IsObject(it) || cJSON_IsArray(it) ? tel_leaves(it, tsc) : 1;
	}
	return n;
}

/*
 * A port of 4 queue pairs has more values than a telemetry dict holds (256):
 * each queue pair comes whole in a nested dict of its own, with the same
 * counters as port.show; /hvswitch/pmd has no raw TSC value.
 */
START_TEST(telemetry_queue_pairs)
{
	static const char *const c[] = {"packets", "bytes", "kicks", "irqs"};
	bool tsc = false;
	cJSON *v, *show;
	unsigned int n;
	int fd;

	swf_start(NULL);
	swf_add(0, NULL);
	hvsw_add_port(&dut, "vm1", ",\"queues\":4");
	swf_attach(1);
	for (int i = 0; i < 3; i++)
		both_ways(0, 1);
	fd = swh_tel_open(dut.prefix, dut.pid);
	v = swh_tel(fd, "/hvswitch/port,vm1");
	show = hvsw_ok(&dut, "port.show", "{\"name\":\"vm1\"}");
	n = tel_leaves(v, &tsc);
	ck_assert_msg(n > 256, "/hvswitch/port,vm1: %u values", n);
	ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(show, "qps")), 4);
	for (int q = 0; q < 4; q++) {
		char qp[16];

		snprintf(qp, sizeof(qp), "qps/%d", q);
		ck_assert_msg(swh_tel_num(v, qp, "pmd") == 0, "%s: no pmd", qp);
		for (unsigned int i = 0; i < RTE_DIM(c); i++) {
			const cJSON *sq = cJSON_GetArrayItem(cJSON_GetObjectItem(show, "qps"), q);
			char path[64], key[32];

			snprintf(path, sizeof(path), "rx.%s", c[i]);
			snprintf(key, sizeof(key), "rx/%s", c[i]);
			ck_assert_msg(swh_num(sq, path) >= 0, "port.show has no qps[%d].%s", q,
				      path);
			ck_assert_msg(swh_tel_num(v, qp, key) == swh_num(sq, path),
				      "%s %s: telemetry %.0f, port.show %.0f", qp, key,
				      swh_tel_num(v, qp, key), swh_num(sq, path));
		}
	}
	/* vm1's guest uses its first queue pair: 3 broadcasts sent */
	ck_assert(swh_tel_num(v, "qps/0", "rx/packets") == 3);
	ck_assert(swh_tel_num(v, "stats", "rx_packets") == 3);
	cJSON_Delete(show);
	cJSON_Delete(v);
	v = swh_tel(fd, "/hvswitch/pmd");
	tel_leaves(v, &tsc);
	ck_assert_msg(swh_tel_num(v, "0", "packets") >= 6, "/hvswitch/pmd: no packets");
	cJSON_Delete(v);
	close(fd);
	ck_assert_msg(!tsc, "a raw TSC value in telemetry");
	swf_stop_ok();
}
END_TEST

static Suite *
make_suite(void)
{
	Suite *s = suite_create("switch-ports");
	TCase *t = tcase_create("ports");

	tcase_add_checked_fixture(t, swf_setup, swf_teardown);
	tcase_set_timeout(t, 120);
	tcase_add_test(t, ethdev_uplink);
	tcase_add_test(t, port_changes_under_traffic);
	tcase_add_test(t, restart_server_ports);
	tcase_add_test(t, restart_client_port);
	tcase_add_test(t, bad_requests);
	suite_add_tcase(s, t);
	/* its own case: CK_RUN_CASE=telemetry runs it alone */
	t = tcase_create("telemetry");
	tcase_add_checked_fixture(t, swf_setup, swf_teardown);
	tcase_set_timeout(t, 120);
	tcase_add_test(t, telemetry);
	tcase_add_test(t, telemetry_counters);
	tcase_add_test(t, telemetry_queue_pairs);
	suite_add_tcase(s, t);
	return s;
}

int
main(int argc, char **argv)
{
	return swh_run_suite(make_suite, argc, argv);
}
