/* SPDX-License-Identifier: BSD-3-Clause */
/* AML encoder (see aml.h); opcodes and layouts: ACPI 6.4, chapters 6.4 and 20. */
#include <string.h>

#include "aml.h"
#include "le_bytes.h"

#define AML_ZERO 0x00
#define AML_ONE 0x01
#define AML_NAME 0x08
#define AML_BYTE 0x0a
#define AML_WORD 0x0b
#define AML_DWORD 0x0c
#define AML_STRING 0x0d
#define AML_QWORD 0x0e
#define AML_SCOPE 0x10
#define AML_BUFFER 0x11
#define AML_PACKAGE 0x12
#define AML_METHOD 0x14
#define AML_EXT 0x5b
#define AML_DEVICE 0x82

void
aml_init(struct aml *a, uint8_t *buf, size_t cap)
{
	memset(a, 0, sizeof(*a));
	a->buf = buf;
	a->cap = cap;
}

void
aml_bytes(struct aml *a, const void *p, size_t n)
{
	if (a->overflow || n > a->cap - a->len) {
		a->overflow = true;
		return;
	}
	memcpy(a->buf + a->len, p, n);
	a->len += n;
}

void
aml_byte(struct aml *a, uint8_t b)
{
	aml_bytes(a, &b, 1);
}

void
aml_nameseg(struct aml *a, const char *seg)
{
	char s[4] = {'_', '_', '_', '_'};
	size_t n = strnlen(seg, 4);

	memcpy(s, seg, n);
	aml_bytes(a, s, 4);
}

void
aml_int(struct aml *a, uint64_t v)
{
	uint8_t b[9];

	if (v <= 1) {
		aml_byte(a, v ? AML_ONE : AML_ZERO);
		return;
	}
	if (v <= 0xff) {
		b[0] = AML_BYTE;
		b[1] = (uint8_t)v;
		aml_bytes(a, b, 2);
	} else if (v <= 0xffff) {
		b[0] = AML_WORD;
		le_put16(b + 1, (uint16_t)v);
		aml_bytes(a, b, 3);
	} else if (v <= 0xffffffff) {
		b[0] = AML_DWORD;
		le_put32(b + 1, (uint32_t)v);
		aml_bytes(a, b, 5);
	} else {
		b[0] = AML_QWORD;
		le_put64(b + 1, v);
		aml_bytes(a, b, 9);
	}
}

void
aml_string(struct aml *a, const char *s)
{
	aml_byte(a, AML_STRING);
	aml_bytes(a, s, strlen(s) + 1);
}

static uint8_t
hexval(char c)
{
	return (uint8_t)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
}

void
aml_eisaid(struct aml *a, const char *id)
{
	/* three letters in 5 bits each, then four hex digits; big-endian bytes */
	uint16_t v = (uint16_t)(((id[0] - 0x40) & 0x1f) << 10 | ((id[1] - 0x40) & 0x1f) << 5 |
				((id[2] - 0x40) & 0x1f));
	uint8_t b[5] = {AML_DWORD, (uint8_t)(v >> 8), (uint8_t)v,
			(uint8_t)(hexval(id[3]) << 4 | hexval(id[4])),
			(uint8_t)(hexval(id[5]) << 4 | hexval(id[6]))};

	aml_bytes(a, b, sizeof(b));
}

void
aml_name(struct aml *a, const char *seg)
{
	aml_byte(a, AML_NAME);
	aml_nameseg(a, seg);
}

static void
aml_open(struct aml *a)
{
	if (a->depth >= AML_DEPTH) {
		a->overflow = true;
		return;
	}
	a->open[a->depth++] = a->len;
}

void
aml_close(struct aml *a)
{
	size_t start, body, total, n, i;

	if (a->depth == 0) {
		a->overflow = true;
		return;
	}
	start = a->open[--a->depth];
	if (a->overflow)
		return;
	body = a->len - start;
	/* PkgLength counts its own bytes: 1 byte up to 63, then 2, 3 or 4 bytes */
	for (n = 1; n <= 4; n++)
		if (body + n < (n == 1 ? 0x40u : 1u << (4 + 8 * (n - 1))))
			break;
	if (n > 4 || n > a->cap - a->len) {
		a->overflow = true;
		return;
	}
	total = body + n;
	memmove(a->buf + start + n, a->buf + start, body);
	if (n == 1) {
		a->buf[start] = (uint8_t)total;
	} else {
		a->buf[start] = (uint8_t)((n - 1) << 6 | (total & 0xf));
		for (i = 1; i < n; i++)
			a->buf[start + i] = (uint8_t)(total >> (4 + 8 * (i - 1)));
	}
	a->len += n;
}

void
aml_scope(struct aml *a, const char *path)
{
	aml_byte(a, AML_SCOPE);
	aml_open(a);
	if (path[0] == '\\') {
		aml_byte(a, '\\');
		path++;
	}
	aml_nameseg(a, path);
}

void
aml_device(struct aml *a, const char *seg)
{
	aml_byte(a, AML_EXT);
	aml_byte(a, AML_DEVICE);
	aml_open(a);
	aml_nameseg(a, seg);
}

void
aml_method(struct aml *a, const char *seg, unsigned int nargs)
{
	aml_byte(a, AML_METHOD);
	aml_open(a);
	aml_nameseg(a, seg);
	aml_byte(a, (uint8_t)(nargs & 7)); /* NotSerialized, SyncLevel 0 */
}

void
aml_package(struct aml *a, unsigned int nelem)
{
	aml_byte(a, AML_PACKAGE);
	aml_open(a);
	aml_byte(a, (uint8_t)nelem);
}

/* The buffer's size is an integer term after the PkgLength: it is patched in
 * when the buffer is closed, so the contents are kept after a DWordConst. */
void
aml_buffer(struct aml *a)
{
	uint8_t size[5] = {AML_DWORD, 0, 0, 0, 0};

	aml_byte(a, AML_BUFFER);
	aml_open(a);
	aml_bytes(a, size, sizeof(size));
}

void
aml_res_io(struct aml *a, uint16_t base, uint8_t len)
{
	uint8_t b[8] = {0x47, 0x01}; /* I/O port descriptor, 16-bit decode */

	le_put16(b + 2, base);
	le_put16(b + 4, base);
	b[6] = 1; /* alignment */
	b[7] = len;
	aml_bytes(a, b, sizeof(b));
}

void
aml_res_irq(struct aml *a, unsigned int irq)
{
	uint8_t b[3] = {0x22, 0, 0}; /* IRQ descriptor without flags: edge, active high */

	le_put16(b + 1, (uint16_t)(1u << (irq & 15)));
	aml_bytes(a, b, sizeof(b));
}

void
aml_res_interrupt(struct aml *a, uint32_t gsi)
{
	uint8_t b[9] = {0x89, 6, 0, 0x03, 1}; /* consumer, edge, active high, exclusive */

	le_put32(b + 5, gsi);
	aml_bytes(a, b, sizeof(b));
}

/* Word address space descriptor: a producer with fixed min and max. */
static void
word_space(struct aml *a, uint8_t type, uint8_t tflags, uint16_t min, uint16_t max)
{
	uint8_t b[16] = {0x88, 13, 0, type, 0x0c, tflags};

	le_put16(b + 6, 0); /* granularity */
	le_put16(b + 8, min);
	le_put16(b + 10, max);
	le_put16(b + 12, 0); /* translation */
	le_put16(b + 14, (uint16_t)(max - min + 1));
	aml_bytes(a, b, sizeof(b));
}

void
aml_res_bus(struct aml *a, uint16_t min, uint16_t max)
{
	word_space(a, 2, 0, min, max);
}

void
aml_res_wordio(struct aml *a, uint16_t min, uint16_t max)
{
	word_space(a, 1, 3, min, max); /* ISA and non-ISA ranges */
}

void
aml_res_dwordmem(struct aml *a, uint32_t min, uint32_t max)
{
	uint8_t b[26] = {0x87, 23, 0, 0, 0x0c, 0x01}; /* memory, read-write, non-cacheable */

	le_put32(b + 6, 0);
	le_put32(b + 10, min);
	le_put32(b + 14, max);
	le_put32(b + 18, 0);
	le_put32(b + 22, max - min + 1);
	aml_bytes(a, b, sizeof(b));
}

void
aml_res_end(struct aml *a)
{
	uint8_t b[2] = {0x79, 0}; /* end tag, checksum 0: "already summed" */
	size_t start;
	uint32_t size;

	aml_bytes(a, b, sizeof(b));
	/* the buffer's size: everything after the DWordConst of aml_buffer() */
	if (a->depth == 0 || a->overflow)
		return;
	start = a->open[a->depth - 1];
	size = (uint32_t)(a->len - start - 5);
	le_put32(a->buf + start + 1, size);
}
