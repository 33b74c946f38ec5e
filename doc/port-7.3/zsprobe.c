// SPDX-License-Identifier: GPL-2.0
/*
 * zsprobe: what a zero-length sleep costs under a timer slack and a
 * zero-sleep policy, for the Linux 7.3 port notes (doc/port-7.3-notes.md).
 *
 *   zsprobe SLACK_NS POLICY COUNT [rel|abs]
 *
 * Sets the calling thread's timer slack (PR_SET_TIMERSLACK), then, unless
 * POLICY is "-", its zero-sleep policy (PR_SET_TIMERSLACK_ZERO_POLICY, SPEC
 * v2 values 0..3), and makes COUNT zero-length sleeps: nanosleep({0, 0})
 * for "rel" (the default), clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME,
 * now) for "abs".  Prints one line:
 *
 *   slack=N policy=P kind=K calls=N us/call=F calls/s=F vcsw/call=F ivcsw/call=F
 *
 * Voluntary context switches (ru_nvcsw of the thread) count the sleeps that
 * went through schedule() and slept.  Exit status 0, or 1 on an error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>

#define ZS_SET 0x545a5053	/* PR_SET_TIMERSLACK_ZERO_POLICY */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct rusage r0, r1;
	unsigned long slack, count, i;
	int abs_mode = 0;
	double t0, t1;

	if (argc < 4) {
		fprintf(stderr, "usage: zsprobe SLACK_NS POLICY|- COUNT [rel|abs]\n");
		return 1;
	}
	slack = strtoul(argv[1], NULL, 0);
	count = strtoul(argv[3], NULL, 0);
	if (argc > 4)
		abs_mode = !strcmp(argv[4], "abs");
	if (prctl(PR_SET_TIMERSLACK, slack, 0, 0, 0)) {
		perror("PR_SET_TIMERSLACK");
		return 1;
	}
	if (strcmp(argv[2], "-") && prctl(ZS_SET, strtoul(argv[2], NULL, 0), 0, 0, 0)) {
		perror("PR_SET_TIMERSLACK_ZERO_POLICY");
		return 1;
	}
	getrusage(RUSAGE_THREAD, &r0);
	t0 = now_s();
	for (i = 0; i < count; i++) {
		struct timespec ts = { 0, 0 };
		int ret;

		if (abs_mode) {
			clock_gettime(CLOCK_MONOTONIC, &ts);
			ret = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		} else {
			ret = nanosleep(&ts, NULL) ? errno : 0;
		}
		if (ret) {
			fprintf(stderr, "sleep: %s\n", strerror(ret));
			return 1;
		}
	}
	t1 = now_s();
	getrusage(RUSAGE_THREAD, &r1);
	printf("slack=%lu policy=%s kind=%s calls=%lu us/call=%.2f calls/s=%.0f vcsw/call=%.3f ivcsw/call=%.3f\n",
	       slack, argv[2], abs_mode ? "abs" : "rel", count, (t1 - t0) * 1e6 / count,
	       count / (t1 - t0), (double)(r1.ru_nvcsw - r0.ru_nvcsw) / count,
	       (double)(r1.ru_nivcsw - r0.ru_nivcsw) / count);
	return 0;
}
