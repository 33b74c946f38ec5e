/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the zero-length sleep policy selftests.
 */
#ifndef ZEROSLEEP_SELFTEST_H
#define ZEROSLEEP_SELFTEST_H

#include <errno.h>
#include <grp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <linux/prctl.h>

#include "../kselftest_harness.h"

#ifndef CLOCK_TAI
# define CLOCK_TAI			11
#endif

#ifndef PR_SET_TIMERSLACK_ZERO_POLICY
# define PR_SET_TIMERSLACK_ZERO_POLICY	0x545a5053
#endif
#ifndef PR_TIMERSLACK_ZERO_DEFAULT
# define PR_TIMERSLACK_ZERO_DEFAULT	0
#endif
#ifndef PR_TIMERSLACK_ZERO_RETURN
# define PR_TIMERSLACK_ZERO_RETURN	1
#endif
#ifndef PR_TIMERSLACK_ZERO_SCHEDULE
# define PR_TIMERSLACK_ZERO_SCHEDULE	2
#endif
#ifndef PR_TIMERSLACK_ZERO_FULL_SLACK
# define PR_TIMERSLACK_ZERO_FULL_SLACK	3
#endif
#ifndef PR_TIMERSLACK_ZERO_ALL_THREADS
# define PR_TIMERSLACK_ZERO_ALL_THREADS	1
#endif
#ifndef PR_GET_TIMERSLACK_ZERO_POLICY
# define PR_GET_TIMERSLACK_ZERO_POLICY	0x545a5047
#endif

#define DEFAULT			PR_TIMERSLACK_ZERO_DEFAULT
#define RETURN			PR_TIMERSLACK_ZERO_RETURN
#define SCHEDULE		PR_TIMERSLACK_ZERO_SCHEDULE
#define FULL_SLACK		PR_TIMERSLACK_ZERO_FULL_SLACK
#define ALL_THREADS		PR_TIMERSLACK_ZERO_ALL_THREADS
#define NR_POLICIES		4

#define NOBODY			65534

#define NSEC_PER_USEC		1000LL
#define NSEC_PER_MSEC		1000000LL
#define NSEC_PER_SEC		1000000000LL

static const int all_policies[NR_POLICIES] = { DEFAULT, RETURN, SCHEDULE, FULL_SLACK };

static inline const char *policy_name(int policy)
{
	static const char * const names[NR_POLICIES] = {
		"DEFAULT", "RETURN", "SCHEDULE", "FULL_SLACK",
	};

	return policy >= 0 && policy < NR_POLICIES ? names[policy] : "?";
}

static inline int set_policy_flags(unsigned long policy, unsigned long flags)
{
	return prctl(PR_SET_TIMERSLACK_ZERO_POLICY, policy, flags, 0UL, 0UL);
}

static inline int set_policy(unsigned long policy)
{
	return set_policy_flags(policy, 0);
}

static inline int get_policy(void)
{
	return prctl(PR_GET_TIMERSLACK_ZERO_POLICY, 0UL, 0UL, 0UL, 0UL);
}

#define SET_POLICY(p)							\
	do {								\
		int __policy = (p);					\
									\
		ASSERT_EQ(0, set_policy(__policy))			\
			TH_LOG("PR_SET_TIMERSLACK_ZERO_POLICY(%d): %s",	\
			       __policy, strerror(errno));		\
	} while (0)

#define SET_SLACK(ns)							\
	do {								\
		unsigned long __slack = (ns);				\
									\
		ASSERT_EQ(0, prctl(PR_SET_TIMERSLACK, __slack, 0UL, 0UL, 0UL)) \
			TH_LOG("PR_SET_TIMERSLACK(%lu): %s", __slack,	\
			       strerror(errno));			\
	} while (0)

static inline pid_t sys_gettid(void)
{
	return syscall(SYS_gettid);
}

static inline long sys_nanosleep(const void *req, void *rem)
{
	return syscall(SYS_nanosleep, req, rem);
}

static inline long sys_clock_nanosleep(clockid_t clk, int flags, const void *req, void *rem)
{
	return syscall(SYS_clock_nanosleep, clk, flags, req, rem);
}

static inline int64_t ts_ns(const struct timespec *ts)
{
	return ts->tv_sec * NSEC_PER_SEC + ts->tv_nsec;
}

static inline struct timespec ns_ts(int64_t ns)
{
	struct timespec ts = {
		.tv_sec = ns / NSEC_PER_SEC,
		.tv_nsec = ns % NSEC_PER_SEC,
	};

	return ts;
}

static inline int64_t clock_ns(clockid_t clk)
{
	struct timespec ts;

	if (clock_gettime(clk, &ts))
		return -1;
	return ts_ns(&ts);
}

static inline int64_t now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static inline void sleep_ns(int64_t ns)
{
	struct timespec ts = ns_ts(ns);

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static inline long thread_nvcsw(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_nvcsw;
}

static inline bool is_root(void)
{
	return geteuid() == 0;
}

/* Another uid, no capabilities; still dumpable, so that /proc stays usable. */
static inline int drop_to_nobody(void)
{
	if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
	    setresuid(NOBODY, NOBODY, NOBODY))
		return -1;
	return prctl(PR_SET_DUMPABLE, 1UL, 0UL, 0UL, 0UL);
}

/*
 * Since Linux 7.2, commits bd5956166d20 ("hrtimer: Provide
 * hrtimer_start_range_ns_user()") and b40c927345a9 ("hrtimer: Use
 * hrtimer_start_expires_user() for hrtimer sleepers"), a sleeper whose
 * requested expiry has passed returns without schedule() when its timer
 * would be the first to expire on the CPU.  Without them (6.12), a
 * zero-length sleep always waits for the timer slack.  A distribution
 * kernel may carry them before 7.2, so the tests ask the kernel, not its
 * version: under DEFAULT with a 10 ms slack, a relative {0, 0} sleep on
 * CLOCK_TAI, whose clock base is nearly always empty, sleeps (one voluntary
 * context switch) in every call without the early return, and in (nearly)
 * none with it.  Anything in between is not guessed at.
 *
 * Call it from a SCHED_OTHER thread (the slack of a real-time one is 0);
 * it leaves the thread's slack and policy as they were.
 */
enum early_return {
	EARLY_RETURN_UNKNOWN = -1,	/* the probe could not tell */
	NO_EARLY_RETURN = 0,		/* DEFAULT sleeps like FULL_SLACK */
	EARLY_RETURN = 1,		/* the kernel returns from expired sleeps */
};

#define PROBE_CALLS		16
#define PROBE_SLACK_NS		(10 * NSEC_PER_MSEC)

static inline int probe_early_return(void)
{
	static const char * const verdicts[] = {
		"inconclusive", "no early return, they wait for the slack",
		"early return",
	};
	struct timespec zero = { 0, 0 };
	int slack, policy, i, slept = 0, failed = 0, early;
	long nvcsw0;

	slack = prctl(PR_GET_TIMERSLACK, 0UL, 0UL, 0UL, 0UL);
	policy = get_policy();
	if (slack < 0 ||
	    prctl(PR_SET_TIMERSLACK, (unsigned long)PROBE_SLACK_NS, 0UL, 0UL, 0UL) ||
	    prctl(PR_GET_TIMERSLACK, 0UL, 0UL, 0UL, 0UL) != PROBE_SLACK_NS ||
	    (policy >= 0 && set_policy(DEFAULT)))
		failed = 1;
	if (!failed)
		sys_clock_nanosleep(CLOCK_TAI, 0, &zero, NULL);	/* warm-up */
	for (i = 0; i < PROBE_CALLS && !failed; i++) {
		nvcsw0 = thread_nvcsw();
		failed += !!sys_clock_nanosleep(CLOCK_TAI, 0, &zero, NULL);
		slept += thread_nvcsw() > nvcsw0;
	}
	if (slack >= 0)
		prctl(PR_SET_TIMERSLACK, (unsigned long)slack, 0UL, 0UL, 0UL);
	if (policy >= 0)
		set_policy(policy);

	if (failed)
		early = EARLY_RETURN_UNKNOWN;
	else if (4 * slept <= PROBE_CALLS)
		early = EARLY_RETURN;
	else if (4 * slept >= 3 * PROBE_CALLS)
		early = NO_EARLY_RETURN;
	else
		early = EARLY_RETURN_UNKNOWN;
	ksft_print_msg("kernel: zero-length sleeps: %s (probe: %d of %d calls slept%s)\n",
		       verdicts[early + 1], slept, i, failed ? ", the probe failed" : "");
	return early;
}

/*
 * In a test: sets @returns to whether the kernel returns early from expired
 * sleeps, or fails the test if the probe cannot tell.
 */
#define PROBE_EARLY_RETURN(returns)					\
	do {								\
		int __early = probe_early_return();			\
									\
		ASSERT_NE(EARLY_RETURN_UNKNOWN, __early)		\
			TH_LOG("the probe cannot tell whether the kernel "	\
			       "returns early from expired sleeps");	\
		(returns) = __early == EARLY_RETURN;			\
	} while (0)

/* The file of a process (tid 0) or of one of its threads. */
#define PROC_PATH_LEN		80

static inline void policy_path(char *buf, size_t len, pid_t pid, pid_t tid)
{
	if (tid)
		snprintf(buf, len, "/proc/%d/task/%d/timerslack_zero_policy", pid, tid);
	else
		snprintf(buf, len, "/proc/%d/timerslack_zero_policy", pid);
}

#endif /* ZEROSLEEP_SELFTEST_H */
