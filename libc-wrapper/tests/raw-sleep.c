// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A dynamically linked program that sleeps with raw system calls, as Go's
 * runtime or a program calling syscall(SYS_nanosleep) does: the preload
 * never sees these calls.  For test-supervisor.sh.
 *
 *   raw-sleep POLICY     (return or schedule) exit 0 when zero-length syscall(SYS_nanosleep)
 *                        and syscall(SYS_clock_nanosleep) calls behave as
 *                        POLICY says, else 1; one line on stdout says which
 *   raw-sleep backend    print zerosleep_backend()'s answer, the policy
 *                        that zerosleep_get_policy() gives, and what
 *                        zerosleep_set_policy(ZEROSLEEP_DEFAULT) does
 *   raw-sleep cost NS CALLS
 *                        the median time of CALLS nanosleep() calls of NS
 *                        ns through the C library, at 1 ns slack, in us:
 *                        what the supervisor behind the preload adds to a
 *                        sleep that is not zero-length (README)
 *
 * As in test-supervised.c, "returns at once" and "sleeps" are told apart by
 * a ratio, never an absolute time: at a timer slack of 20 ms a 1 ns sleep
 * lasts about 20 ms; a zero-length sleep answered at once lasts a small
 * fraction of it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <zerosleep.h>
#include "timing.h"

#define SLACK_NS	20000000L
#define CALLS		5

/* Median time of CALLS raw sleeps of @ns, with nanosleep or clock_nanosleep. */
static long long median(int clock_call, long ns)
{
	struct timespec req = { 0, ns };
	long long t[CALLS], start;
	int i;

	for (i = 0; i < CALLS; i++) {
		start = now_ns(CLOCK_MONOTONIC);
		if (clock_call)
			syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &req, NULL);
		else
			syscall(SYS_nanosleep, &req, NULL);
		t[i] = now_ns(CLOCK_MONOTONIC) - start;
	}
	return median_ns(t, CALLS);
}

/* raw-sleep backend */
static int backend(void)
{
	static const char *const names[] = { "none", "kernel", "preload", "supervisor" };
	int b = zerosleep_backend(), policy = zerosleep_get_policy();
	const char *name = policy >= 0 ? zerosleep_policy_name(policy) : strerror(errno);
	int set = zerosleep_set_policy(ZEROSLEEP_DEFAULT);

	printf("%s %s set:%s\n", b >= 0 && b <= 3 ? names[b] : "?", name,
	       set == 0 ? "0" : strerror(errno));
	return 0;
}

/* raw-sleep cost NS CALLS */
static int cost(long ns, long calls)
{
	struct timespec req = { 0, ns };
	long long *t, start;
	long i;

	if (ns < 0 || ns >= NSEC || calls < 1 || calls > 10000000) {
		fprintf(stderr, "raw-sleep: cost NS CALLS: NS in [0, 1e9), CALLS in [1, 1e7]\n");
		return 2;
	}
	t = malloc((size_t)calls * sizeof(*t));
	if (!t || prctl(PR_SET_TIMERSLACK, 1L, 0L, 0L, 0L) < 0) {
		perror("raw-sleep");
		free(t);
		return 2;
	}
	for (i = 0; i < calls; i++) {
		start = now_ns(CLOCK_MONOTONIC);
		nanosleep(&req, NULL);
		t[i] = now_ns(CLOCK_MONOTONIC) - start;
	}
	printf("%.1f us: median of %ld nanosleep({0, %ld}) calls at 1 ns slack\n",
	       median_ns(t, (size_t)calls) / 1e3, calls, ns);
	free(t);
	return 0;
}

int main(int argc, char **argv)
{
	long long ref, zero, zero_clock;
	int ok;

	if (argc == 2 && strcmp(argv[1], "backend") == 0)
		return backend();
	if (argc == 4 && strcmp(argv[1], "cost") == 0)
		return cost(atol(argv[2]), atol(argv[3]));

	if (argc != 2) {
		fprintf(stderr, "usage: raw-sleep return|schedule\n");
		return 2;
	}
	if (strcmp(argv[1], "return") != 0 && strcmp(argv[1], "schedule") != 0) {
		fprintf(stderr, "raw-sleep: POLICY is return or schedule\n");
		return 2;
	}
	if (prctl(PR_SET_TIMERSLACK, SLACK_NS, 0L, 0L, 0L) < 0) {
		perror("raw-sleep: PR_SET_TIMERSLACK");
		return 2;
	}
	ref = median(0, 1);
	zero = median(0, 0);
	zero_clock = median(1, 0);
	ok = zero < ref / 4 && zero_clock < ref / 4;
	printf("%s: zero-length raw nanosleep %lld us, clock_nanosleep %lld us, "
	       "1 ns %lld us, at 20 ms slack\n", ok ? "ok" : "not ok",
	       zero / 1000, zero_clock / 1000, ref / 1000);
	return ok ? 0 : 1;
}
