/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CPU time of the threads of a process (the DUT of a benchmark), sampled at
 * both ends of a window from /proc/PID/task/TID/stat.
 */
#ifndef HV_PERF_THREAD_TIMES_H
#define HV_PERF_THREAD_TIMES_H

#define MAX_WATCHED_THREADS 64

struct thread_times {
	unsigned int n;
	long tid[MAX_WATCHED_THREADS];
	unsigned long long ticks[MAX_WATCHED_THREADS];
};

/* utime + stime of every thread of @pid, in clock ticks. */
void thread_times_read(long pid, struct thread_times *t);

/*
 * Share of one CPU used over @secs by the busiest thread (the forwarding
 * one) and by all the others together, between samples @a and @b.
 */
void thread_times_diff(const struct thread_times *a, const struct thread_times *b, double secs,
		       double *fwd_pct, double *other_pct);

#endif
