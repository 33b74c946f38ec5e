/* SPDX-License-Identifier: GPL-2.0 */
/*
 * For tests of the zero-length sleep policy: its numbers, for C libraries
 * that lack them, clock and context switch readings, and a probe of what the
 * kernel does with zero-length sleeps.  Needs nothing but the C library.
 */
#ifndef ZERO_SLEEP_POLICY_H
#define ZERO_SLEEP_POLICY_H

#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#ifndef PR_SET_TIMERSLACK_ZERO_POLICY
#define PR_SET_TIMERSLACK_ZERO_POLICY	0x545a5053
#define PR_TIMERSLACK_ZERO_DEFAULT	0
#define PR_TIMERSLACK_ZERO_RETURN	1
#define PR_TIMERSLACK_ZERO_SCHEDULE	2
#define PR_TIMERSLACK_ZERO_FULL_SLACK	3
#define PR_TIMERSLACK_ZERO_ALL_THREADS	1
#define PR_GET_TIMERSLACK_ZERO_POLICY	0x545a5047
#endif
#define ZS_NR_POLICIES			4

#define NSEC_PER_USEC			1000LL
#define NSEC_PER_MSEC			1000000LL
#define NSEC_PER_SEC			1000000000LL

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

/*
 * Since Linux 7.2, commit b40c927345a9 ("hrtimer: Use
 * hrtimer_start_expires_user() for hrtimer sleepers"), a sleep whose expiry
 * has passed returns at once if its timer would be the first on its clock
 * base; before, it waits for the slack.  A kernel may have that before 7.2,
 * so ask it: under DEFAULT, at a 10 ms slack, a relative {0, 0} sleep on
 * CLOCK_TAI, whose base is nearly always empty, switches context in every call
 * without the early return and in (nearly) none with it.  The answer is kept;
 * slack and policy are restored.  Call it from a thread that is not real-time.
 */
enum { ZS_EARLY_UNKNOWN = -1, ZS_EARLY_NONE, ZS_EARLY_RETURN };

static inline int zs_probe_early_return(void)
{
	static int early = -2;	/* not probed yet */
	struct timespec zero = { 0, 0 };
	long slack, policy, before, after;
	int i, slept = 0, failed;

	if (early != -2)
		return early;
	slack = prctl(PR_GET_TIMERSLACK, 0UL, 0UL, 0UL, 0UL);
	policy = zs_get_policy();
	failed = slack < 0 || zs_set_slack(10 * NSEC_PER_MSEC) ||
		 prctl(PR_GET_TIMERSLACK, 0UL, 0UL, 0UL, 0UL) != 10 * NSEC_PER_MSEC ||
		 (policy >= 0 && zs_set_policy(PR_TIMERSLACK_ZERO_DEFAULT));
	for (i = -1; i < 16 && !failed; i++) {	/* -1: a warm-up */
		zs_switches(&before, NULL);
		failed = syscall(SYS_clock_nanosleep, CLOCK_TAI, 0, &zero, NULL) != 0;
		zs_switches(&after, NULL);
		slept += i >= 0 && after > before;
	}
	if (slack >= 0)
		zs_set_slack(slack);
	if (policy >= 0)
		zs_set_policy(policy);
	early = failed ? ZS_EARLY_UNKNOWN : slept <= 4 ? ZS_EARLY_RETURN :
		slept >= 12 ? ZS_EARLY_NONE : ZS_EARLY_UNKNOWN;
	printf("# kernel: zero-length sleeps %s (%d of 16 probes slept%s)\n",
	       early == ZS_EARLY_RETURN ? "return early" : early == ZS_EARLY_NONE ?
	       "wait for the slack" : "are unknown", slept, failed ? ", probe failed" : "");
	fflush(stdout);
	return early;
}

#endif /* ZERO_SLEEP_POLICY_H */
