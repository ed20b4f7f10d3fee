/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Interrupt moderation swept over frame rates with virtio-user guests, run by
 * tests/perf/bench_rxmod_vu.sh (which reads its RUN lines and prints the
 * summary and the targets; see doc/performance.rst, "Interrupt moderation").
 *
 * The hvswitch daemon ($HVSWITCH, its PMD on CPU 1) between a virtio-user
 * guest A that sends a paced stream and a virtio-user sink B in interrupt
 * mode (tests/integration/vu_irq_sink.h) at real-time priority, both on CPU
 * 0 (this process's main lcore). Per sink mode a fresh daemon; per rate the
 * settings in turns (A B C A B C ...), each run a fresh stream of the same
 * length. A Check suite only so that the harness's assertions stop it.
 *
 * Environment [defaults]:
 *   RXMOD_MODES     sink modes, napi and/or frame            ["napi frame"]
 *   RXMOD_RATES     frames/s, 0 = as fast as A's ring takes  ["1000 20000 50000 100000 0"]
 *   RXMOD_SETTINGS  rxmod settings of b                      ["0 100 adaptive"]
 *   RXMOD_PAIRS     turns of each setting per rate           [3]
 *   RXMOD_SECS      seconds of one run (a decimal)           [1]
 *   RXMOD_SIZE      frame size, bytes                        [200]
 *   RXMOD_FIFO      1: the sink at SCHED_FIFO where allowed  [1]
 *
 * One line per run:
 *   RUN mode=M rate=R rxmod=S pair=P sent=N received=N secs=F irqs=N wakeups=N
 *       lost=N sw_irqs=N suppressed=N unwanted=N held=N early=N window_us=N fifo=0|1
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "switch_harness.h"
#include "vu_irq_sink.h"
#include "vu_rate.h"

#define MAX_LIST 16

static const char *
env_or(const char *name, const char *dflt)
{
	const char *v = getenv(name);

	return v != NULL && v[0] != '\0' ? v : dflt;
}

/* Split @s (spaces) into @out; returns how many (at most MAX_LIST). */
static unsigned int
words(const char *s, char buf[MAX_LIST][32])
{
	unsigned int n = 0;
	const char *p = s;

	while (*p != '\0' && n < MAX_LIST) {
		size_t len;

		p += strspn(p, " \t");
		len = strcspn(p, " \t");
		if (len == 0)
			break;
		ck_assert_msg(len < 32, "list item too long: %s", p);
		memcpy(buf[n], p, len);
		buf[n++][len] = '\0';
		p += len;
	}
	return n;
}

static unsigned int
num_of(const char *name, const char *s)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	ck_assert_msg(*end == '\0' && v <= 10000000, "%s: not a number: %s", name, s);
	return (unsigned int)v;
}

/* Every run of one sink mode: a fresh daemon, A and B. */
static void
sweep_mode(enum vu_sink_mode mode, const char *mode_name)
{
	char rates[MAX_LIST][32], settings[MAX_LIST][32];
	unsigned int n_rates = words(env_or("RXMOD_RATES", "1000 20000 50000 100000 0"), rates);
	unsigned int n_set = words(env_or("RXMOD_SETTINGS", "0 100 adaptive"), settings);
	unsigned int pairs = num_of("RXMOD_PAIRS", env_or("RXMOD_PAIRS", "3"));
	unsigned int ms = (unsigned int)(atof(env_or("RXMOD_SECS", "1")) * 1000);
	unsigned int size = num_of("RXMOD_SIZE", env_or("RXMOD_SIZE", "200"));
	static struct hvsw d;
	static struct guest a;
	static struct vu_sink b;

	ck_assert_msg(ms >= 10 && ms <= 600000, "RXMOD_SECS out of range");
	ck_assert_msg(size >= 60 && size <= 1514, "RXMOD_SIZE: 60..1514");
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	b.mode = mode;
	b.fifo = strcmp(env_or("RXMOD_FIFO", "1"), "0") != 0;
	swh_reset();
	hvsw_init(&d);
	vu_pair_start(&d, &a, &b, "0", NULL);
	for (unsigned int i = 0; i < n_rates; i++) {
		unsigned int rate = num_of("RXMOD_RATES", rates[i]);

		for (unsigned int p = 1; p <= pairs; p++) {
			for (unsigned int k = 0; k < n_set; k++) {
				struct vu_rate_run r = {
					.rate = rate, .ms = ms, .size = (uint16_t)size};

				vu_set_rxmod(&d, settings[k]);
				vu_rate_run(&d, &a, &b, &r);
				printf("RUN mode=%s rate=%u rxmod=%s pair=%u sent=%" PRIu64
				       " received=%" PRIu64 " secs=%.6f irqs=%" PRIu64
				       " wakeups=%" PRIu64 " lost=%" PRIu64
				       " sw_irqs=%.0f suppressed=%.0f unwanted=%.0f held=%.0f "
				       "early=%.0f window_us=%.0f fifo=%d\n",
				       mode_name, rate, settings[k], p, r.sent, r.received, r.secs,
				       r.irqs, r.wakeups, r.lost, r.sw.irqs, r.sw.suppressed,
				       r.sw.unwanted, r.sw.held, r.sw.early, r.sw.window_us,
				       b.is_fifo);
				fflush(stdout);
			}
		}
	}
	vu_sink_close(&b);
	guest_close(&a);
	hvsw_cleanup(&d);
}

START_TEST(sweep)
{
	char modes[MAX_LIST][32];
	unsigned int n = words(env_or("RXMOD_MODES", "napi frame"), modes);

	for (unsigned int i = 0; i < n; i++) {
		if (strcmp(modes[i], "napi") == 0)
			sweep_mode(VU_SINK_NAPI, "napi");
		else if (strcmp(modes[i], "frame") == 0)
			sweep_mode(VU_SINK_FRAME, "frame");
		else
			ck_abort_msg("RXMOD_MODES: napi or frame, not %s", modes[i]);
	}
}
END_TEST

static Suite *
make_suite(void)
{
	Suite *s = suite_create("bench-rxmod-vu");
	TCase *t = tcase_create("sweep");

	tcase_add_test(t, sweep);
	suite_add_tcase(s, t);
	return s;
}

int
main(int argc, char **argv)
{
	return swh_run_suite(make_suite, argc, argv);
}
