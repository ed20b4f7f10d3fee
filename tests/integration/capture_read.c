/* SPDX-License-Identifier: BSD-3-Clause */
/* Reading back the pcapng of a capture (capture_read.h). */
#include <check.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "capture_read.h"
#include "hv_ctl.h"

static uint32_t
u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* Parse the blocks of @p->buf; false if a block is cut or malformed. */
bool
cap_parse(struct pcapng *p)
{
	size_t off = 0;

	p->n = 0;
	p->stats = false;
	while (off + 12 <= p->len) {
		const uint8_t *b = p->buf + off;
		uint32_t type = u32(b), len = u32(b + 4);
		size_t o;

		if (len < 12 || len % 4 != 0 || off + len > p->len || u32(b + len - 4) != len)
			return false;
		if (off == 0 && (type != 0x0A0D0D0A || u32(b + 8) != 0x1A2B3C4D))
			return false;
		o = type == 1   ? 16
		    : type == 6 ? 28 + ((u32(b + 20) + 3u) & ~3u)
		    : type == 5 ? 20
				: len;
		if (type == 6) {
			struct frame *f = &p->f[p->n < RTE_DIM(p->f) ? p->n : RTE_DIM(p->f) - 1];

			f->caplen = u32(b + 20);
			f->origlen = u32(b + 24);
			f->data = b + 28;
			f->flags = 0;
			f->comment[0] = '\0';
			p->n++;
		}
		/* options: code, length, value padded to 4 */
		while (o + 4 <= len - 4) {
			uint16_t code = (uint16_t)(b[o] | b[o + 1] << 8), olen;

			memcpy(&olen, b + o + 2, 2);
			if (code == 0)
				break;
			if (type == 1 && code == 2)
				snprintf(p->ifname, sizeof(p->ifname), "%.*s", olen, b + o + 4);
			if (type == 6) {
				struct frame *f =
					&p->f[p->n <= RTE_DIM(p->f) ? p->n - 1 : RTE_DIM(p->f) - 1];

				if (code == 2)
					f->flags = u32(b + o + 4);
				if (code == 1)
					snprintf(f->comment, sizeof(f->comment), "%.*s", olen,
						 b + o + 4);
			}
			if (type == 5 && (code == 4 || code == 5)) {
				memcpy(code == 4 ? &p->ifrecv : &p->ifdrop, b + o + 4, 8);
				p->stats = true;
			}
			o += 4 + ((olen + 3u) & ~3u);
		}
		off += len;
	}
	return off == p->len;
}

void
cap_read_file(const char *path, struct pcapng *p)
{
	FILE *f = fopen(path, "rb");

	ck_assert_ptr_nonnull(f);
	p->buf = malloc(1 << 22);
	ck_assert_ptr_nonnull(p->buf);
	p->len = fread(p->buf, 1, 1 << 22, f);
	fclose(f);
	ck_assert_msg(cap_parse(p), "%s: not whole pcapng (%zu bytes)", path, p->len);
}

void
cap_read_stream(int sock, struct pcapng *p, unsigned int n, bool to_eof)
{
	uint64_t end = swh_now_ms() + SWH_TIMEOUT_MS;

	if (p->buf == NULL) {
		p->buf = malloc(1 << 22);
		ck_assert_ptr_nonnull(p->buf);
	}
	while (swh_now_ms() < end) {
		struct pollfd pf = {.fd = sock, .events = POLLIN};
		ssize_t k;

		if (!to_eof && cap_parse(p) && p->n >= n)
			return;
		if (poll(&pf, 1, 10) <= 0)
			continue;
		k = read(sock, p->buf + p->len, (1 << 22) - p->len);
		ck_assert_int_ge(k, 0);
		if (k == 0) {
			ck_assert_msg(cap_parse(p), "the stream ended inside a block");
			return;
		}
		p->len += (size_t)k;
	}
	ck_abort_msg("capture stream: %u frames of %u after %u ms", p->n, n, SWH_TIMEOUT_MS);
}

int
cap_start(struct hvsw *d, const char *port, const char *more)
{
	char err[256], text[256];
	int sv[2], fd;
	cJSON *res = NULL;

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	fd = hv_ctl_connect(d->sock, err, sizeof(err));
	ck_assert_int_ge(fd, 0);
	snprintf(text, sizeof(text), "{\"port\":\"%s\"%s}", port, more);
	ck_assert_msg(hv_ctl_call_fd(fd, "capture.start", cJSON_Parse(text), sv[1], &res, err,
				     sizeof(err)) == 0,
		      "capture.start: %s", err);
	cJSON_Delete(res);
	close(fd);
	close(sv[1]);
	return sv[0];
}
