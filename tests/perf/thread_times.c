/* SPDX-License-Identifier: BSD-3-Clause */
/* CPU time of another process's threads, from /proc (tests/perf/hv_pktgen.c). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "thread_times.h"

void
thread_times_read(long pid, struct thread_times *t)
{
	char path[320];
	struct dirent *e;
	DIR *d;

	t->n = 0;
	snprintf(path, sizeof(path), "/proc/%ld/task", pid);
	d = opendir(path);
	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL && t->n < MAX_WATCHED_THREADS) {
		char buf[1024], *p;
		unsigned long long ut, st;
		size_t len;
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/task/%s/stat", pid, e->d_name);
		f = fopen(path, "r");
		if (f == NULL)
			continue;
		len = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[len] = '\0';
		/* the command name may hold spaces: fields restart after its ')' */
		p = strrchr(buf, ')');
		if (p == NULL ||
		    sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut,
			   &st) != 2)
			continue;
		t->tid[t->n] = strtol(e->d_name, NULL, 10);
		t->ticks[t->n] = ut + st;
		t->n++;
	}
	closedir(d);
}

void
thread_times_diff(const struct thread_times *a, const struct thread_times *b, double secs,
		  double *fwd_pct, double *other_pct)
{
	double hz = (double)sysconf(_SC_CLK_TCK), best = 0, sum = 0;

	for (unsigned int i = 0; i < b->n; i++) {
		unsigned long long before = 0;
		double d;

		for (unsigned int j = 0; j < a->n; j++)
			if (a->tid[j] == b->tid[i])
				before = a->ticks[j];
		d = (double)(b->ticks[i] - before);
		sum += d;
		if (d > best)
			best = d;
	}
	*fwd_pct = 100.0 * best / hz / secs;
	*other_pct = 100.0 * (sum - best) / hz / secs;
}
