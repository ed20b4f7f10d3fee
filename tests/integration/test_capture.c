/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Packet capture end to end (doc/capture.rst): the real daemon captures a
 * port while virtio-user guests of this process send known frames; the
 * pcapng it writes (through hvctl capture, or on a socket passed with
 * capture.start as hvctl does) must hold exactly those frames, byte for
 * byte, in the direction asked, and tcpdump must read the same.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "capture_read.h"
#include "hv_ctl.h"
#include "switch_harness.h"

#define T SWH_TIMEOUT_MS

static struct hvsw D;
static struct guest G[2];

static void
setup(void)
{
	memset(G, 0, sizeof(G));
	swh_reset();
	hvsw_init(&D);
}

static void
teardown(void)
{
	for (unsigned int i = 0; i < RTE_DIM(G); i++)
		guest_close(&G[i]);
	hvsw_cleanup(&D);
}

/* The daemon with ports vm0 and vm1, their guests attached. */
static void
two_ports(void)
{
	ck_assert_int_eq(hvsw_start(&D, NULL), 0);
	for (unsigned int i = 0; i < 2; i++) {
		char name[8], sock[160];

		snprintf(name, sizeof(name), "vm%u", i);
		snprintf(sock, sizeof(sock), "%s/%s.sock", D.dir, name);
		hvsw_add_port(&D, name, NULL);
		ck_assert_int_eq(guest_open(&G[i], name, i, sock, false), 0);
		ck_assert(hvsw_wait_up(&D, name, T));
	}
}

/* Send a frame from guest @from to guest @to's MAC and wait for it there. */
static uint32_t
send_one(unsigned int from, unsigned int to)
{
	uint32_t id = guest_send(&G[from], &G[to].mac, NULL, 0);

	ck_assert_msg(guest_wait(&G[to], id, T), "frame %u did not arrive", id);
	return id;
}

/* Frame @i of @p is frame @id as sent, whole, in direction @flags (1 in, 2 out). */
static void
frame_is(const struct pcapng *p, unsigned int i, uint32_t id, uint32_t flags)
{
	uint8_t want[SWH_FRAME_MAX];
	uint16_t len = swh_frame_bytes(id, want);
	const struct frame *f = &p->f[i];

	ck_assert_msg(f->caplen == len && f->origlen == len, "frame %u: %u/%u bytes, sent %u", i,
		      f->caplen, f->origlen, len);
	ck_assert_msg(memcmp(f->data, want, len) == 0, "frame %u: not the bytes of frame %u", i,
		      id);
	ck_assert_msg(f->flags == flags, "frame %u: direction flags %u, want %u", i, f->flags,
		      flags);
}

/* ---- tests ---- */

/*
 * hvctl capture vm1 --direction tx --count 8 -w FILE while both guests
 * send: the file holds the 8 frames delivered to vm1, byte for byte (none
 * of those vm1 sent), and tcpdump reads the same count and bytes.
 */
START_TEST(hvctl_capture_file)
{
	const char *exe = getenv("HVCTL");
	char path[160], cmd[256], line[512], ready[256] = "";
	uint32_t ids[8];
	struct pcapng p = {0};
	int efd[2], status, n = -1, frame = -1;
	unsigned int off = 0;
	uint8_t got[8][SWH_FRAME_MAX];
	unsigned int got_len[8] = {0};
	ssize_t k;
	pid_t pid;
	FILE *f;

	ck_assert_ptr_nonnull(exe);
	two_ports();
	snprintf(path, sizeof(path), "%s/cap.pcapng", D.dir);
	ck_assert_int_eq(pipe(efd), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(efd[1], 2);
		execl(exe, "hvctl", "--socket", D.sock, "capture", "vm1", "--direction", "tx",
		      "--count", "8", "-w", path, (char *)NULL);
		_exit(127);
	}
	close(efd[1]);
	/* its first line says the capture runs */
	while (strchr(ready, '\n') == NULL &&
	       (k = read(efd[0], ready + off, sizeof(ready) - 1 - off)) > 0) {
		off += (unsigned int)k;
		ready[off] = '\0';
	}
	ck_assert_msg(strstr(ready, "hvctl: capturing tx on vm1") != NULL, "hvctl: %s", ready);
	for (int i = 0; i < 8; i++) {
		send_one(1, 0); /* vm1's own frames: rx, not asked for */
		ids[i] = send_one(0, 1);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	k = read(efd[0], ready, sizeof(ready) - 1);
	ready[k > 0 ? k : 0] = '\0';
	close(efd[0]);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "hvctl: %s", ready);
	ck_assert_msg(strstr(ready, "hvctl: 8 frames written; the switch saw") != NULL, "hvctl: %s",
		      ready);

	cap_read_file(path, &p);
	ck_assert_str_eq(p.ifname, "vm1");
	ck_assert_uint_eq(p.n, 8);
	for (unsigned int i = 0; i < 8; i++)
		frame_is(&p, i, ids[i], 2);
	ck_assert(p.stats);
	free(p.buf);

	/* tcpdump: 8 frames, the same lengths and bytes (-xx: the whole frame in hex) */
	snprintf(cmd, sizeof(cmd), "tcpdump -r %s -nn -xx 2>&1", path);
	f = popen(cmd, "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f) != NULL) {
		unsigned int at, w[8];
		int m;

		if (strncmp(line, "\t0x", 3) != 0) {
			if (strstr(line, "reading from file") == NULL && ++n < 8)
				frame = n;
			continue;
		}
		ck_assert_int_ge(frame, 0);
		m = sscanf(line, "\t0x%x: %x %x %x %x %x %x %x %x", &at, &w[0], &w[1], &w[2], &w[3],
			   &w[4], &w[5], &w[6], &w[7]);
		/* 4 hex digits a word (a last odd byte: 2, read as 0x00XX) */
		for (int i = 0; i + 1 < m; i++) {
			if (got_len[frame] + 2 <= SWH_FRAME_MAX) {
				got[frame][got_len[frame]++] = (uint8_t)(w[i] >> 8);
				got[frame][got_len[frame]++] = (uint8_t)w[i];
			}
		}
	}
	ck_assert_int_eq(pclose(f), 0);
	ck_assert_int_eq(n + 1, 8);
	for (unsigned int i = 0; i < 8; i++) {
		uint8_t want[SWH_FRAME_MAX];
		uint16_t len = swh_frame_bytes(ids[i], want);

		/* an odd length prints its last byte alone: compare what both have */
		ck_assert_msg(got_len[i] == len || got_len[i] == len + 1u,
			      "tcpdump frame %u: %u bytes, sent %u", i, got_len[i], len);
		ck_assert_msg(memcmp(got[i], want, len - len % 2) == 0,
			      "tcpdump frame %u: other bytes", i);
	}
	hvsw_stop(&D);
}
END_TEST

/*
 * --direction rx on a stream: only what vm0 sends, in order; shutting our
 * end down (what hvctl does on Ctrl-C) ends the capture with its statistics.
 */
START_TEST(stream_rx_until_shutdown)
{
	struct pcapng p = {0};
	uint32_t ids[5];
	int s;

	two_ports();
	s = cap_start(&D, "vm0", ",\"direction\":\"rx\"");
	for (int i = 0; i < 5; i++) {
		ids[i] = send_one(0, 1);
		send_one(1, 0); /* delivered to vm0: tx, not asked for */
	}
	cap_read_stream(s, &p, 5, false);
	ck_assert_str_eq(p.ifname, "vm0");
	shutdown(s, SHUT_WR);
	cap_read_stream(s, &p, 5, true);
	ck_assert_uint_eq(p.n, 5);
	for (unsigned int i = 0; i < 5; i++)
		frame_is(&p, i, ids[i], 1);
	ck_assert(p.stats);
	ck_assert_uint_eq(p.ifrecv, 5);
	ck_assert_uint_eq(p.ifdrop, 0);
	close(s);
	free(p.buf);
	ck_assert_int_eq(hvsw_stop(&D), 0);
}
END_TEST

/*
 * A reader that does not read: the switch forwards every frame all the same,
 * the capture drops what does not fit (counted), and what it wrote is whole.
 */
START_TEST(slow_reader_drops_not_traffic)
{
	const unsigned int n = 8000; /* more than the capture's ring and socket buffers hold */
	struct rte_ether_addr dst[SWH_MAX_BURST];
	uint32_t ids[SWH_MAX_BURST], last = 0;
	struct pcapng p = {0};
	int s;

	two_ports();
	send_one(1, 0); /* vm1 learned: unicast from here */
	s = cap_start(&D, "vm1", "");
	for (unsigned int i = 0; i < RTE_DIM(dst); i++)
		dst[i] = G[1].mac;
	for (unsigned int sent = 0; sent < n; sent += SWH_MAX_BURST) {
		guest_send_burst(&G[0], dst, SWH_MAX_BURST, ids);
		last = ids[SWH_MAX_BURST - 1];
		ck_assert_msg(guest_wait(&G[1], last, T), "the switch stopped forwarding");
	}
	for (uint32_t id = 1; id <= last; id++)
		ck_assert_msg(guest_count(&G[1], id) == 1, "frame %u: %u times at vm1", id,
			      guest_count(&G[1], id));
	/* now read: the capture ends on our shutdown, with its counts */
	shutdown(s, SHUT_WR);
	cap_read_stream(s, &p, 0, true);
	ck_assert(p.stats);
	printf("slow reader: %u frames written, %lu seen, %lu dropped\n", p.n,
	       (unsigned long)p.ifrecv, (unsigned long)p.ifdrop);
	ck_assert_uint_ge(p.ifrecv, n);
	ck_assert_uint_gt(p.ifdrop, 0);
	ck_assert_uint_eq(p.n + p.ifdrop, p.ifrecv); /* all written but the drops */
	for (unsigned int i = 0; i < p.n && i < RTE_DIM(p.f); i++)
		ck_assert_uint_eq(p.f[i].caplen, p.f[i].origlen);
	close(s);
	free(p.buf);
	ck_assert_int_eq(hvsw_stop(&D), 0);
}
END_TEST

/* What capture.start refuses, with the connection's next request still served. */
START_TEST(refused)
{
	char err[512];
	cJSON *r = NULL;
	int s, fd;

	two_ports();
	/* no socket passed */
	ck_assert_int_eq(hvsw_call(&D, &r, err, sizeof(err), "capture.start", "{\"port\":\"vm0\"}"),
			 -1);
	ck_assert_str_eq(err, "capture.start: no socket came with the request (pass a stream "
			      "socket with SCM_RIGHTS, as hvctl capture does)");
	ck_assert_int_eq(hvsw_call(&D, &r, err, sizeof(err), "capture.start", "{\"port\":\"vm9\"}"),
			 -1);
	ck_assert_str_eq(err, "capture.start: no port vm9");
	ck_assert_int_eq(hvsw_call(&D, &r, err, sizeof(err), "capture.start",
				   "{\"port\":\"vm0\",\"snaplen\":10}"),
			 -1);
	ck_assert_str_eq(err, "capture.start: 'snaplen' must be an integer 64..65535");
	/*
	 * descriptors of other kinds (a pipe, a TCP socket: their close may wait on
	 * a peer) never reach the request: the server closes them off its thread
	 */
	{
		int pp[2], tcp = socket(AF_INET, SOCK_STREAM, 0), others[2];

		ck_assert_int_eq(pipe(pp), 0);
		ck_assert_int_ge(tcp, 0);
		others[0] = pp[1];
		others[1] = tcp;
		for (int i = 0; i < 2; i++) {
			fd = hv_ctl_connect(D.sock, err, sizeof(err));
			ck_assert_int_ge(fd, 0);
			ck_assert_int_eq(hv_ctl_call_fd(fd, "capture.start",
							cJSON_Parse("{\"port\":\"vm0\"}"),
							others[i], &r, err, sizeof(err)),
					 -1);
			ck_assert_str_eq(err,
					 "capture.start: no socket came with the request (pass "
					 "a stream socket with SCM_RIGHTS, as hvctl capture does)");
			close(fd);
		}
		close(pp[0]);
		close(pp[1]);
		close(tcp);
	}
	/* one capture per port; deleting the port ends it */
	s = cap_start(&D, "vm0", "");
	{
		int sv[2];

		ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
		fd = hv_ctl_connect(D.sock, err, sizeof(err));
		ck_assert_int_eq(hv_ctl_call_fd(fd, "capture.start",
						cJSON_Parse("{\"port\":\"vm0\"}"), sv[1], &r, err,
						sizeof(err)),
				 -1);
		ck_assert_str_eq(err, "capture.start: port vm0 is being captured already");
		/* still serving this connection */
		ck_assert_int_eq(hv_ctl_call(fd, "version", NULL, &r, err, sizeof(err)), 0);
		cJSON_Delete(r);
		close(fd);
		close(sv[0]);
		close(sv[1]);
	}
	guest_close(&G[0]);
	cJSON_Delete(hvsw_ok(&D, "port.del", "{\"name\":\"vm0\"}"));
	{
		struct pcapng p = {0};

		cap_read_stream(s, &p, 0, true);
		ck_assert(p.stats);
		free(p.buf);
	}
	close(s);
	ck_assert_int_eq(hvsw_stop(&D), 0);
}
END_TEST

/* The daemon stops cleanly with a capture running, which ends whole. */
START_TEST(daemon_stops_with_capture)
{
	struct pcapng p = {0};
	uint32_t id;
	int s;

	two_ports();
	s = cap_start(&D, "vm1", "");
	id = send_one(0, 1);
	cap_read_stream(s, &p, 1, false);
	ck_assert_int_eq(hvsw_stop(&D), 0);
	cap_read_stream(s, &p, 1, true);
	ck_assert_uint_eq(p.n, 1);
	frame_is(&p, 0, id, 2);
	ck_assert(p.stats);
	close(s);
	free(p.buf);
}
END_TEST

static Suite *
make_suite(void)
{
	Suite *s = suite_create("capture");
	TCase *t = tcase_create("capture");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 120);
	tcase_add_test(t, hvctl_capture_file);
	tcase_add_test(t, stream_rx_until_shutdown);
	tcase_add_test(t, slow_reader_drops_not_traffic);
	tcase_add_test(t, refused);
	tcase_add_test(t, daemon_stops_with_capture);
	suite_add_tcase(s, t);
	return s;
}

int
main(int argc, char **argv)
{
	return swh_run_suite(make_suite, argc, argv);
}
