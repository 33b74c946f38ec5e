// SPDX-License-Identifier: GPL-2.0
/*
 * The cost of a sleep in a statically linked program, for make
 * bench-supervisor (bench/supervisor.sh), which runs it plain and under
 * the launcher's supervised fallback.
 *
 *   supervisor-bench SLACK_NS NS CALLS
 *
 * Sets the thread's timer slack to SLACK_NS, makes CALLS nanosleep() calls
 * of NS ns (0: zero-length) and prints the median and the mean time per
 * call, in ns, on one line.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <sys/prctl.h>

static long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int compare(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	struct timespec ts = { 0, 0 };
	long long *t, start, first;
	long calls, i;

	if (argc != 4 || (calls = atol(argv[3])) <= 0 || atol(argv[2]) < 0 ||
	    atol(argv[2]) >= 1000000000L || atol(argv[1]) <= 0) {
		fprintf(stderr, "usage: %s SLACK_NS NS CALLS\n", argv[0]);
		return 2;
	}
	ts.tv_nsec = atol(argv[2]);
	t = malloc(calls * sizeof(*t));
	if (!t || prctl(PR_SET_TIMERSLACK, atol(argv[1]), 0L, 0L, 0L)) {
		perror("supervisor-bench");
		return 1;
	}
	nanosleep(&ts, NULL);	/* warm-up */
	first = now_ns();
	for (i = 0; i < calls; i++) {
		start = now_ns();
		nanosleep(&ts, NULL);
		t[i] = now_ns() - start;
	}
	start = now_ns() - first;
	qsort(t, calls, sizeof(*t), compare);
	printf("%lld %lld\n", t[calls / 2], start / calls);
	free(t);
	return 0;
}
