/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Whether an expired sleep on CLOCK_MONOTONIC waits for its slack on this
 * kernel, for the tests that expect DEFAULT's zero-length sleeps to block
 * (the hardening tests and the preload's).  Include after
 * ../selftests/timers/zero_sleep_policy.h.
 *
 * Without the early return of Linux 7.2 (zs_probe_early_return()) every
 * expired sleep waits for its slack.  With it, an expired sleep returns at
 * once when its timer would be the first of its clock base to expire.  On
 * CLOCK_MONOTONIC's base the scheduler tick's timer is queued, and at a
 * 10 ms slack it comes first: there the sleep waits, and so do relative
 * CLOCK_REALTIME sleeps, which use that base too, and with them every C
 * library entry point.  Not on PREEMPT_RT: there the sleeper of a task
 * that is not real-time is queued on the soft twin of its base
 * (__hrtimer_init_sleeper()), which the tick does not use and which is
 * nearly always empty, so that every expired sleep returns at once, on
 * every clock.
 *
 * Probed, not read from the kernel's configuration: under DEFAULT, at a
 * 10 ms slack, relative {0, 1} sleeps on CLOCK_MONOTONIC.  A 1 ns request
 * is not zero-length, so no policy handles it, and it has expired by the
 * time its timer is armed: it takes the path of DEFAULT's zero-length
 * sleep without passing through the code under test.
 */
#ifndef ZEROSLEEP_MONOTONIC_PROBE_H
#define ZEROSLEEP_MONOTONIC_PROBE_H

#include <stdbool.h>

enum { ZS_MONO_UNKNOWN = -1, ZS_MONO_RETURNS, ZS_MONO_WAITS };

/*
 * ZS_MONO_WAITS, ZS_MONO_RETURNS, or ZS_MONO_UNKNOWN when 16 probes do not
 * tell (5 to 11 of them slept) or a call failed.  The answer is kept and
 * printed once; slack and policy are restored.  Call it from a thread that
 * is not real-time (on PREEMPT_RT a real-time task's sleeper stays on the
 * hard base).
 */
static inline int zs_probe_monotonic(void)
{
	static int answer = -2;	/* not probed yet */
	struct timespec one = { 0, 1 };
	long slack, policy, before, after;
	int i, slept = 0, failed;

	if (answer != -2)
		return answer;
	slack = prctl(PR_GET_TIMERSLACK, 0UL, 0UL, 0UL, 0UL);
	policy = zs_get_policy();
	failed = slack < 0 || zs_set_slack(10 * NSEC_PER_MSEC) ||
		 (policy >= 0 && zs_set_policy(PR_TIMERSLACK_ZERO_DEFAULT));
	for (i = -1; i < 16 && !failed; i++) {	/* -1: a warm-up */
		zs_switches(&before, NULL);
		failed = syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &one, NULL) != 0;
		zs_switches(&after, NULL);
		slept += i >= 0 && after > before;
	}
	if (slack >= 0)
		zs_set_slack(slack);
	if (policy >= 0)
		zs_set_policy(policy);
	answer = failed ? ZS_MONO_UNKNOWN : slept >= 12 ? ZS_MONO_WAITS :
		 slept <= 4 ? ZS_MONO_RETURNS : ZS_MONO_UNKNOWN;
	printf("# kernel: expired CLOCK_MONOTONIC sleeps %s (%d of 16 probes slept%s)\n",
	       answer == ZS_MONO_WAITS ? "wait for the slack" :
	       answer == ZS_MONO_RETURNS ? "return at once (PREEMPT_RT?)" : "are unknown",
	       slept, failed ? ", probe failed" : "");
	fflush(stdout);
	return answer;
}

#endif /* ZEROSLEEP_MONOTONIC_PROBE_H */
