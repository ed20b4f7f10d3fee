/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The tests' side of packet capture: capture.start on a socket pair (as
 * hvctl capture does), and the pcapng it writes read back block by block.
 */
#ifndef HV_CAPTURE_READ_H
#define HV_CAPTURE_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "switch_harness.h"

/* A frame as captured (an Enhanced Packet Block). */
struct frame {
	uint32_t caplen, origlen;
	uint32_t flags;      /* epb_flags: 1 inbound, 2 outbound */
	char comment[192];   /* opt_comment, "" if none */
	const uint8_t *data; /* into struct pcapng.buf */
};

/* A capture read back: its bytes, and what they hold. */
struct pcapng {
	uint8_t *buf; /* malloc'ed (4 MiB) by the readers; the caller frees it */
	size_t len;
	char ifname[64]; /* the interface block's if_name */
	unsigned int n;  /* frames; the first 4096 in f[] */
	struct frame f[4096];
	bool stats; /* an Interface Statistics Block came */
	uint64_t ifrecv, ifdrop;
};

/* Parse p->buf: false if a block is cut or malformed. */
bool cap_parse(struct pcapng *p);
/* Read the file at @path into @p (its pcapng must be whole). */
void cap_read_file(const char *path, struct pcapng *p);
/* Read @sock into @p until @n frames came, or (@to_eof) until it ends whole. */
void cap_read_stream(int sock, struct pcapng *p, unsigned int n, bool to_eof);
/* capture.start of @port (@more: more JSON members, ",\"direction\":\"rx\"") on a
 * socket pair passed to daemon @d: returns our end, the capture running. */
int cap_start(struct hvsw *d, const char *port, const char *more);

#endif
