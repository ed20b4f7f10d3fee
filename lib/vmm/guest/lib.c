/* SPDX-License-Identifier: BSD-3-Clause */
/* The built-in guest's little C library (CPL3): memory, console, time, args. */
#include <stdarg.h>

#include "guest.h"

void *
memcpy(void *d, const void *s, size_t n)
{
	uint8_t *dp = d;
	const uint8_t *sp = s;

	while (n >= 8) {
		*(uint64_t *)(void *)dp = *(const uint64_t *)(const void *)sp;
		dp += 8;
		sp += 8;
		n -= 8;
	}
	while (n--)
		*dp++ = *sp++;
	return d;
}

void *
memset(void *d, int c, size_t n)
{
	uint8_t *dp = d;

	while (n--)
		*dp++ = (uint8_t)c;
	return d;
}

int
memcmp(const void *a, const void *b, size_t n)
{
	const uint8_t *x = a, *y = b;

	for (; n; n--, x++, y++)
		if (*x != *y)
			return *x - *y;
	return 0;
}

size_t
strlen(const char *s)
{
	size_t n = 0;

	while (s[n])
		n++;
	return n;
}

static volatile uint64_t *const testdev = (volatile uint64_t *)HV_TESTDEV_BASE;
static char line[512];

static void
put_num(char **p, char *end, uint64_t v, unsigned int base, int width, char pad)
{
	char tmp[24];
	int n = 0;

	do {
		tmp[n++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	while (n < width && *p < end) {
		*(*p)++ = pad;
		width--;
	}
	while (n > 0 && *p < end)
		*(*p)++ = tmp[--n];
}

void
print(const char *fmt, ...)
{
	char *p = line, *end = line + sizeof(line) - 1;
	va_list ap;

	va_start(ap, fmt);
	for (; *fmt && p < end; fmt++) {
		int width = 0, lng = 0;
		char pad = ' ';

		if (*fmt != '%') {
			*p++ = *fmt;
			continue;
		}
		fmt++;
		if (*fmt == '0')
			pad = '0';
		while (*fmt >= '0' && *fmt <= '9')
			width = width * 10 + (*fmt++ - '0');
		while (*fmt == 'l') {
			lng = 1;
			fmt++;
		}
		switch (*fmt) {
		case 's': {
			const char *s = va_arg(ap, const char *);

			while (*s && p < end)
				*p++ = *s++;
			break;
		}
		case 'd': {
			int64_t v = lng ? va_arg(ap, int64_t) : va_arg(ap, int);

			if (v < 0 && p < end) {
				*p++ = '-';
				v = -v;
			}
			put_num(&p, end, (uint64_t)v, 10, width, pad);
			break;
		}
		case 'u':
			put_num(&p, end, lng ? va_arg(ap, uint64_t) : va_arg(ap, unsigned int), 10,
				width, pad);
			break;
		case 'x':
			put_num(&p, end, lng ? va_arg(ap, uint64_t) : va_arg(ap, unsigned int), 16,
				width, pad);
			break;
		case 'c':
			*p++ = (char)va_arg(ap, int);
			break;
		default:
			*p++ = *fmt;
			break;
		}
	}
	va_end(ap);
	*p = '\0';
	testdev[HV_TESTDEV_LINE / 8] = (uint64_t)line;
}

void
guest_exit(int status)
{
	for (;;)
		testdev[HV_TESTDEV_EXIT / 8] = (uint64_t)status;
}

void
guest_mark(uint64_t n)
{
	testdev[HV_TESTDEV_MARK / 8] = n;
}

uint64_t
now_ns(void)
{
	uint32_t lo, hi;
	uint64_t tsc, khz = info->tsc_khz;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	tsc = (uint64_t)hi << 32 | lo;
	return tsc / khz * 1000000 + tsc % khz * 1000000 / khz;
}

void
wait_irq(void)
{
	wait_irq_since(irq_rx + irq_timer);
}

__attribute__((noinline)) void
wait_irq_since(uint64_t seen)
{
	/* faults into gp_entry (entry.S), which sleeps and steps over it */
	__asm__ volatile(".globl wait_hlt\nwait_hlt: hlt" ::"D"(seen) : "memory");
}

const char *
arg_str(const char *key, char *buf, size_t len)
{
	const char *c = info->cmdline;
	size_t kl = strlen(key);

	while (*c) {
		while (*c == ' ')
			c++;
		if (memcmp(c, key, kl) == 0 && c[kl] == '=') {
			size_t n = 0;

			c += kl + 1;
			while (c[n] && c[n] != ' ' && n + 1 < len) {
				buf[n] = c[n];
				n++;
			}
			buf[n] = '\0';
			return buf;
		}
		while (*c && *c != ' ')
			c++;
	}
	return NULL;
}

uint64_t
arg_num(const char *key, uint64_t dflt)
{
	char buf[24];
	const char *s = arg_str(key, buf, sizeof(buf));
	uint64_t v = 0;

	if (s == NULL || *s == '\0')
		return dflt;
	for (; *s >= '0' && *s <= '9'; s++)
		v = v * 10 + (uint64_t)(*s - '0');
	return v;
}

int
parse_ip(const char *s, uint32_t *ip)
{
	uint32_t v = 0, part = 0;
	int dots = 0, digits = 0;

	for (;; s++) {
		if (*s >= '0' && *s <= '9') {
			part = part * 10 + (uint32_t)(*s - '0');
			digits++;
			if (part > 255)
				return -1;
		} else if ((*s == '.' || *s == '\0') && digits) {
			v = v << 8 | part;
			part = 0;
			digits = 0;
			if (*s == '\0')
				break;
			dots++;
		} else {
			return -1;
		}
	}
	if (dots != 3)
		return -1;
	*ip = v;
	return 0;
}
