/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hvctl capture PORT [--direction rx|tx|both] [--count N] [--snaplen N] -w FILE|-
 *
 * "capture.start" with one end of a socket pair passed along (SCM_RIGHTS):
 * the daemon writes pcapng into it, and hvctl copies the stream to FILE or
 * stdout. The file is opened here, with the operator's own rights; the
 * daemon opens nothing. Ctrl-C shuts our end for writing: the daemon ends
 * the capture with its statistics block and closes, so the file ends whole.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hv_ctl.h"
#include "hv_ctl_api.h"
#include "hvctl.h"

#define MIN_(a, b) ((a) < (b) ? (a) : (b))

static const char usage_text[] =
	"usage: hvctl capture PORT [--direction rx|tx|both] [--count N] [--snaplen N] "
	"-w FILE|-\n"
	"\n"
	"Write the frames of PORT as pcapng (tcpdump -r, tshark -r) to FILE, or to\n"
	"stdout with -w - (hvctl capture vm0 -w - | tcpdump -r -). Runs until\n"
	"--count frames are written, Ctrl-C, or the reader stops.\n"
	"\n"
	"  -d, --direction DIR  rx: frames the switch receives from the port, tx:\n"
	"                       frames it delivers to it, both (default)\n"
	"  -c, --count N        stop after N frames\n"
	"  -s, --snaplen N      bytes kept of each frame, 64..65535 (default 65535)\n"
	"  -w, --write FILE     the output file, - for stdout (required)\n"
	"  -h, --help           this text\n"
	"\n"
	"Needs the admin access level (doc/hvctl.rst). Offloaded frames carry their\n"
	"virtio-net header as a comment (tshark: frame.comment).\n";

static volatile sig_atomic_t stop_req;

static void
on_stop(int sig)
{
	(void)sig;
	stop_req++;
}

/* Follows the pcapng blocks of the stream: frames written, and the statistics block's drops. */
struct scan {
	uint8_t blk[256]; /* the start of the current block */
	size_t have;      /* bytes of it seen */
	uint32_t type, len;
	uint64_t frames, seen, dropped;
	bool stats, broken;
};

static void
scan_isb(struct scan *s)
{
	size_t end = s->len < sizeof(s->blk) ? s->len - 4 : sizeof(s->blk);

	/* type, length, interface, timestamp (20 bytes), then options */
	for (size_t off = 20; off + 4 <= end;) {
		uint16_t code, olen;
		uint64_t v;

		memcpy(&code, s->blk + off, 2);
		memcpy(&olen, s->blk + off + 2, 2);
		if (code == 0 || off + 4 + olen > end)
			break;
		if (olen == 8 && (code == 4 || code == 5)) {
			memcpy(&v, s->blk + off + 4, 8);
			*(code == 4 ? &s->seen : &s->dropped) = v;
			s->stats = true;
		}
		off += 4 + ((olen + 3u) & ~3u);
	}
}

static void
scan_feed(struct scan *s, const uint8_t *p, size_t n)
{
	while (n > 0 && !s->broken) {
		size_t k;

		if (s->have < 8) {
			k = MIN_(8 - s->have, n);
			memcpy(s->blk + s->have, p, k);
		} else {
			k = MIN_(s->len - s->have, n);
			if (s->have < sizeof(s->blk))
				memcpy(s->blk + s->have, p, MIN_(k, sizeof(s->blk) - s->have));
		}
		s->have += k;
		p += k;
		n -= k;
		if (s->have == 8) {
			memcpy(&s->type, s->blk, 4);
			memcpy(&s->len, s->blk + 4, 4);
			s->broken = s->len < 12 || s->len % 4 != 0;
		}
		if (s->have >= 8 && s->have == s->len) {
			if (s->type == 6)
				s->frames++;
			else if (s->type == 5)
				scan_isb(s);
			s->have = 0;
		}
	}
}

/* 0, or -1 (errno set). */
static int
write_all(int fd, const uint8_t *p, size_t n)
{
	while (n > 0) {
		ssize_t k = write(fd, p, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* Copy the stream until the daemon ends it. 0, or 1 on an error. */
static int
copy_stream(int sock, int out, const char *what, struct scan *s)
{
	static uint8_t buf[1 << 16];
	bool shut = false;

	for (;;) {
		struct pollfd pf = {.fd = sock, .events = POLLIN};
		ssize_t n;

		if (stop_req > 1)
			return 0; /* a second Ctrl-C: now */
		if (stop_req > 0 && !shut) {
			/* the daemon ends the capture, writes its statistics and closes */
			shutdown(sock, SHUT_WR);
			shut = true;
		}
		if (poll(&pf, 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			hvctl_err("capture: poll: %s", strerror(errno));
			return 1;
		}
		n = read(sock, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			hvctl_err("capture: %s", strerror(errno));
			return 1;
		}
		if (n == 0)
			return 0;
		if (write_all(out, buf, (size_t)n) != 0) {
			if (errno == EPIPE)
				return 0; /* the reader had enough (tcpdump -c) */
			hvctl_err("capture: writing %s: %s", what, strerror(errno));
			return 1;
		}
		scan_feed(s, buf, (size_t)n); /* what was written */
	}
}

/* The command's arguments from the options, checked against the API table. */
static int
make_args(const char *port, const char *const opt[3], cJSON **out)
{
	static const enum hv_ctl_key keys[3] = {HV_CTL_K_DIRECTION, HV_CTL_K_COUNT,
						HV_CTL_K_SNAPLEN};
	struct hv_ctl_vals vals;
	char err[512];
	cJSON *args = cJSON_CreateObject();

	if (args == NULL ||
	    !cJSON_AddItemToObject(args, HV_CTL_KEY(PORT), hv_ctl_api_value(HV_CTL_K_PORT, port)))
		goto nomem;
	for (unsigned int i = 0; i < 3; i++)
		if (opt[i] != NULL && !cJSON_AddItemToObject(args, hv_ctl_api_key(keys[i])->key,
							     hv_ctl_api_value(keys[i], opt[i])))
			goto nomem;
	if (hv_ctl_api_parse(hv_ctl_api_cmd(HV_CTL_C_CAPTURE_START), "capture", args, &vals, err,
			     sizeof(err)) != 0) {
		cJSON_Delete(args);
		hvctl_err("%s", err);
		return 1;
	}
	*out = args;
	return -1;
nomem:
	cJSON_Delete(args);
	hvctl_err("out of memory");
	return 1;
}

int
hvctl_cmd_capture(struct hvctl *h, int argc, char **argv)
{
	static const struct option opts[] = {
		{"direction", required_argument, NULL, 'd'},
		{"count", required_argument, NULL, 'c'},
		{"snaplen", required_argument, NULL, 's'},
		{"write", required_argument, NULL, 'w'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *opt[3] = {NULL, NULL, NULL}, *file = NULL;
	struct sigaction sa = {.sa_handler = on_stop};
	struct scan s = {.have = 0};
	char err[1024];
	cJSON *args, *res = NULL;
	int c, rc, out, sv[2];

	optind = 0;
	while ((c = getopt_long(argc, argv, ":d:c:s:w:h", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			opt[0] = optarg;
			break;
		case 'c':
			opt[1] = optarg;
			break;
		case 's':
			opt[2] = optarg;
			break;
		case 'w':
			file = optarg;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			return hvctl_opt_err("capture", c, argv);
		}
	}
	if (optind >= argc)
		return hvctl_usage_err("capture", "missing PORT");
	if (optind + 1 < argc)
		return hvctl_usage_err("capture", "unexpected '%s'", argv[optind + 1]);
	if (file == NULL)
		return hvctl_usage_err("capture", "missing -w FILE (- for stdout)");
	rc = make_args(argv[optind], opt, &args);
	if (rc >= 0)
		return rc;
	if (strcmp(file, "-") == 0 && isatty(STDOUT_FILENO)) {
		cJSON_Delete(args);
		hvctl_err("capture: not writing pcapng to a terminal (pipe it, or -w FILE)");
		return 1;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
		cJSON_Delete(args);
		hvctl_err("capture: socketpair: %s", strerror(errno));
		return 1;
	}
	h->fd = hv_ctl_connect(h->socket, err, sizeof(err));
	if (h->fd < 0 || hv_ctl_call_fd(h->fd, HV_CTL_CMD(CAPTURE_START), args, sv[1], &res, err,
					sizeof(err)) != 0) {
		if (h->fd < 0)
			cJSON_Delete(args);
		hvctl_err("%s", err);
		close(sv[0]);
		close(sv[1]);
		return 1;
	}
	/* the capture lives on the socket pair: the control connection is done */
	close(sv[1]);
	close(h->fd);
	h->fd = -1;
	/* opened once the daemon took the capture: a refused one leaves FILE as it was */
	out = strcmp(file, "-") == 0 ? STDOUT_FILENO
				     : open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0) {
		hvctl_err("capture: %s: %s", file, strerror(errno));
		cJSON_Delete(res);
		close(sv[0]); /* the daemon ends the capture */
		return 1;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	fprintf(stderr, "hvctl: capturing %s on %s, snaplen %d; Ctrl-C stops\n",
		cJSON_GetStringValue(cJSON_GetObjectItem(res, HV_CTL_KEY(DIRECTION))), argv[optind],
		(int)hvctl_num(res, HV_CTL_KEY(SNAPLEN)));
	cJSON_Delete(res);
	rc = copy_stream(sv[0], out, strcmp(file, "-") == 0 ? "stdout" : file, &s);
	close(sv[0]);
	if (out != STDOUT_FILENO && close(out) != 0 && rc == 0) {
		hvctl_err("capture: %s: %s", file, strerror(errno));
		rc = 1;
	}
	if (s.stats)
		fprintf(stderr,
			"hvctl: %" PRIu64 " frames written; the switch saw %" PRIu64
			", dropped %" PRIu64 " (no room: the reader was too slow)\n",
			s.frames, s.seen, s.dropped);
	else
		fprintf(stderr, "hvctl: %" PRIu64 " frames written\n", s.frames);
	return rc;
}
