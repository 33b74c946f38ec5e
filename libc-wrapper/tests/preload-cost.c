// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * preload-cost: what one zero-length sleep costs, in microseconds per call,
 * for each function that libzerosleep-preload.so interposes, next to one
 * getpid() (the price of a system call on this machine).  Run it as is
 * (the C library's own sleeps) and under the preload:
 *
 *   preload-cost [CALLS]
 *   LD_PRELOAD=.../libzerosleep-preload.so ZEROSLEEP_POLICY=return preload-cost
 *
 * "make -C libc-wrapper preload-cost" runs both.  Requests are either a
 * local of the calling function ("stack") or in static storage ("static"):
 * the preload reads the first kind without a system call when it lies on
 * the page of its own frame.
 */
#include <stdio.h>
#include <stdlib.h>
#include <threads.h>
#include <time.h>
#include <unistd.h>

static long calls = 20000;
static const struct timespec static_zero = { 0, 0 };

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

enum kind {
	K_GETPID, K_SLEEP, K_USLEEP, K_NANOSLEEP, K_NANOSLEEP_STATIC,
	K_REL, K_ABS, K_THRD_SLEEP, K_NR
};

static const char *const kind_name[K_NR] = {
	"getpid() (one system call)", "sleep(0)", "usleep(0)",
	"nanosleep({0,0}), stack", "nanosleep({0,0}), static",
	"clock_nanosleep(MONOTONIC, {0,0}), stack",
	"clock_nanosleep(MONOTONIC, ABSTIME, past), stack",
	"thrd_sleep({0,0}), stack",
};

static int one(enum kind k, const struct timespec *req,
	       const struct timespec *past)
{
	switch (k) {
	case K_GETPID:
		return getpid() < 0;
	case K_SLEEP:
		return (int)sleep(0);
	case K_USLEEP:
		return usleep(0);
	case K_NANOSLEEP:
		return nanosleep(req, NULL);
	case K_NANOSLEEP_STATIC:
		return nanosleep(&static_zero, NULL);
	case K_REL:
		return clock_nanosleep(CLOCK_MONOTONIC, 0, req, NULL);
	case K_ABS:
		return clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, past, NULL);
	default:
		return thrd_sleep(req, NULL);
	}
}

int main(int argc, char **argv)
{
	struct timespec zero = { 0, 0 }, past;
	const char *preload = getenv("LD_PRELOAD");
	const char *policy = getenv("ZEROSLEEP_POLICY");
	double t;
	long i;
	int k, failed = 0;

	if (argc > 1) {
		char *end;

		calls = strtol(argv[1], &end, 10);
		if (*end || calls < 1 || calls > 100000000) {
			fprintf(stderr, "usage: %s [CALLS], CALLS from 1 to 100000000\n",
				argv[0]);
			return 2;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &past);
	printf("# %ld calls each; %s%s%s\n", calls,
	       preload && *preload ? "ZEROSLEEP_POLICY=" : "without the preload",
	       preload && *preload ? (policy ? policy : "") : "",
	       preload && *preload ? ", under the preload" : "");
	for (k = 0; k < K_NR; k++) {
		t = now();
		for (i = 0; i < calls; i++)
			failed |= one((enum kind)k, &zero, &past);
		t = now() - t;
		printf("%-50s %9.3f us/call\n", kind_name[k], t / calls * 1e6);
	}
	if (failed)
		fprintf(stderr, "preload-cost: a call failed\n");
	return failed;
}
