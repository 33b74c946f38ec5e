/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the zero-length sleep tests outside the series share: the policy and
 * slack calls, clock and context switch readings, and the probes of what
 * the running kernel does with expired sleeps under DEFAULT, which decide
 * what those tests expect of DEFAULT.  Used by hardening/ (through
 * common.h), libc-wrapper/tests/test-preload.c and
 * libc-wrapper/tests/probe-monotonic.c (for test-cli.sh).  Needs the C
 * library and a <linux/prctl.h> with the policy's numbers: build with
 * -isystem <repo>/uapi.
 *
 * Both probes are statistical, which is why the series' selftests have
 * none: under DEFAULT, at a 10 ms slack, 16 expired sleeps (after one to
 * warm up), and how many of them switched context.  12 or more: such
 * sleeps wait for the slack; 4 or fewer: they return at once; in between,
 * or when a call fails, the probe cannot tell.  The answer is kept and
 * printed once ("# kernel: ..."); slack and policy are restored.  Call them
 * from a thread that is not real-time (an RT thread's slack is 0, and on
 * PREEMPT_RT its sleeper stays on the hard base).
 *
 * zs_probe_early_return(): since Linux 7.2, commit b40c927345a9 ("hrtimer:
 * Use hrtimer_start_expires_user() for hrtimer sleepers"), a sleep whose
 * expiry has passed returns at once if its timer would be the first on its
 * clock base; before, it waits for the slack.  A kernel may have that
 * before 7.2, so the kernel is asked, never its version: relative {0, 0}
 * sleeps on CLOCK_TAI, whose base is nearly always empty.
 *
 * zs_probe_monotonic(): whether that holds on CLOCK_MONOTONIC's base, where
 * the scheduler tick is queued and, at a 10 ms slack, comes first: there
 * the sleep waits, and so do relative CLOCK_REALTIME sleeps, which use that
 * base too, and with them every C library entry point.  Not on PREEMPT_RT:
 * there the sleeper of a task that is not real-time is queued on the soft
 * twin of its base, which the tick does not use and which is nearly always
 * empty, so that every expired sleep returns at once, on every clock.
 * Probed with relative {0, 1} sleeps on CLOCK_MONOTONIC: a 1 ns request is
 * not zero-length, so no policy handles it, and it has expired by the time
 * its timer is armed.
 */
#ifndef ZEROSLEEP_PROBE_H
#define ZEROSLEEP_PROBE_H

#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#ifndef PR_SET_TIMERSLACK_ZERO_POLICY
# error "<linux/prctl.h> lacks PR_SET_TIMERSLACK_ZERO_POLICY: build with -isystem <repo>/uapi"
#endif
#define ZS_NR_POLICIES		4

#define NSEC_PER_USEC		1000LL
#define NSEC_PER_MSEC		1000000LL
#define NSEC_PER_SEC		1000000000LL

static inline int zs_set_policy(int policy)
{
	return prctl(PR_SET_TIMERSLACK_ZERO_POLICY, (unsigned long)policy, 0UL, 0UL, 0UL);
}

static inline int zs_get_policy(void)
{
	return prctl(PR_GET_TIMERSLACK_ZERO_POLICY, 0UL, 0UL, 0UL, 0UL);
}

static inline int zs_set_slack(unsigned long ns)
{
	return prctl(PR_SET_TIMERSLACK, ns, 0UL, 0UL, 0UL);
}

/* The time of @clk in ns, or -1. */
static inline int64_t zs_now(clockid_t clk)
{
	struct timespec ts;

	if (clock_gettime(clk, &ts))
		return -1;
	return (int64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

/* The calling thread's voluntary and (unless NULL) involuntary switches. */
static inline void zs_switches(long *nvcsw, long *nivcsw)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	*nvcsw = ru.ru_nvcsw;
	if (nivcsw)
		*nivcsw = ru.ru_nivcsw;
}

/* 1: expired sleeps of @nsec on @clk wait, 0: they return, -1: unknown. */
static inline int zs_probe(clockid_t clk, long nsec, const char *what)
{
	struct timespec ts = { 0, nsec };
	long slack, policy, before, after;
	int i, slept = 0, failed, answer;

	slack = prctl(PR_GET_TIMERSLACK, 0UL, 0UL, 0UL, 0UL);
	policy = zs_get_policy();
	failed = slack < 0 || zs_set_slack(10 * NSEC_PER_MSEC) ||
		 prctl(PR_GET_TIMERSLACK, 0UL, 0UL, 0UL, 0UL) != 10 * NSEC_PER_MSEC ||
		 (policy >= 0 && zs_set_policy(PR_TIMERSLACK_ZERO_DEFAULT));
	for (i = -1; i < 16 && !failed; i++) {	/* -1: a warm-up */
		zs_switches(&before, NULL);
		failed = syscall(SYS_clock_nanosleep, clk, 0, &ts, NULL) != 0;
		zs_switches(&after, NULL);
		slept += i >= 0 && after > before;
	}
	if (slack >= 0)
		zs_set_slack(slack);
	if (policy >= 0)
		zs_set_policy(policy);
	answer = failed ? -1 : slept >= 12 ? 1 : slept <= 4 ? 0 : -1;
	printf("# kernel: expired %s sleeps %s (%d of 16 probes slept%s)\n", what,
	       answer > 0 ? "wait for the slack" : answer == 0 ? "return at once" :
	       "are unknown", slept, failed ? ", probe failed" : "");
	fflush(stdout);
	return answer;
}

enum { ZS_EARLY_UNKNOWN = -1, ZS_EARLY_NONE, ZS_EARLY_RETURN };

/* Whether expired sleeps return early where their timer would be first. */
static inline int zs_probe_early_return(void)
{
	static int early = -2;	/* not probed yet */
	int waits;

	if (early == -2) {
		waits = zs_probe(CLOCK_TAI, 0, "CLOCK_TAI {0, 0}");
		early = waits < 0 ? ZS_EARLY_UNKNOWN : waits ? ZS_EARLY_NONE : ZS_EARLY_RETURN;
	}
	return early;
}

enum { ZS_MONO_UNKNOWN = -1, ZS_MONO_RETURNS, ZS_MONO_WAITS };

/* Whether expired sleeps on CLOCK_MONOTONIC's base wait for the slack. */
static inline int zs_probe_monotonic(void)
{
	static int mono = -2;	/* not probed yet */

	if (mono == -2)
		mono = zs_probe(CLOCK_MONOTONIC, 1, "CLOCK_MONOTONIC {0, 1}");
	return mono;
}

#endif /* ZEROSLEEP_PROBE_H */
