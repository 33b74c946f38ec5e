/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the zerosleep hardening tests: the policy values, the
 * policy calls made directly with syscall(2), time arithmetic, a small
 * seeded PRNG and CPU pinning.
 *
 * The tests issue nanosleep(2), clock_nanosleep(2) and prctl(2) through
 * syscall(2) so that libc cannot change the arguments (glibc turns
 * nanosleep() into clock_nanosleep(), validates some clock ids itself and
 * returns errors from clock_nanosleep() instead of setting errno).
 */
#ifndef ZEROSLEEP_HARDENING_COMMON_H
#define ZEROSLEEP_HARDENING_COMMON_H

#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <linux/prctl.h>

#ifndef PR_SET_TIMERSLACK_ZERO_POLICY
# error "<linux/prctl.h> lacks PR_SET_TIMERSLACK_ZERO_POLICY: build with -isystem <repo>/uapi"
#endif

#ifndef CLOCK_TAI
# define CLOCK_TAI		11
#endif
#ifndef CLONE_NEWTIME
# define CLONE_NEWTIME		0x00000080
#endif

/*
 * The policy values and the flag, spelled out: an older <linux/prctl.h>
 * gave PR_TIMERSLACK_ZERO_FULL_SLACK the value 0, which is DEFAULT now.
 * A header that has PR_TIMERSLACK_ZERO_DEFAULT must agree with them.
 */
#define ZS_DEFAULT		0	/* the kernel's own behaviour */
#define ZS_RETURN		1	/* return at once */
#define ZS_SCHEDULE		2	/* pass through the scheduler once */
#define ZS_FULL_SLACK		3	/* sleep for the slack on every kernel */
#define ZS_NR_POLICIES		4
#define ZS_ALL_THREADS		1	/* SET's arg3: every thread of the process */

#ifdef PR_TIMERSLACK_ZERO_DEFAULT
_Static_assert(PR_TIMERSLACK_ZERO_DEFAULT == ZS_DEFAULT, "PR_TIMERSLACK_ZERO_DEFAULT");
_Static_assert(PR_TIMERSLACK_ZERO_RETURN == ZS_RETURN, "PR_TIMERSLACK_ZERO_RETURN");
_Static_assert(PR_TIMERSLACK_ZERO_SCHEDULE == ZS_SCHEDULE, "PR_TIMERSLACK_ZERO_SCHEDULE");
_Static_assert(PR_TIMERSLACK_ZERO_FULL_SLACK == ZS_FULL_SLACK, "PR_TIMERSLACK_ZERO_FULL_SLACK");
_Static_assert(PR_TIMERSLACK_ZERO_ALL_THREADS == ZS_ALL_THREADS, "PR_TIMERSLACK_ZERO_ALL_THREADS");
#endif

#define NSEC_PER_USEC		1000LL
#define NSEC_PER_MSEC		1000000LL
#define NSEC_PER_SEC		1000000000LL

#define ZS_ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static inline const char *zs_policy_name(int policy)
{
	switch (policy) {
	case ZS_DEFAULT:
		return "DEFAULT";
	case ZS_RETURN:
		return "RETURN";
	case ZS_SCHEDULE:
		return "SCHEDULE";
	case ZS_FULL_SLACK:
		return "FULL_SLACK";
	}
	return "?";
}

/* The hrtimer clocks that the policy applies to. */
static const clockid_t zs_hrtimer_clocks[] = {
	CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_BOOTTIME, CLOCK_TAI,
};

static inline const char *zs_clock_name(clockid_t clk)
{
	switch (clk) {
	case CLOCK_REALTIME:
		return "REALTIME";
	case CLOCK_MONOTONIC:
		return "MONOTONIC";
	case CLOCK_BOOTTIME:
		return "BOOTTIME";
	case CLOCK_TAI:
		return "TAI";
	}
	return "?";
}

/* Index of an hrtimer clock in zs_hrtimer_clocks[]. */
static inline int zs_clock_index(clockid_t clk)
{
	unsigned int i;

	for (i = 0; i < ZS_ARRAY_SIZE(zs_hrtimer_clocks); i++)
		if (zs_hrtimer_clocks[i] == clk)
			return (int)i;
	return -1;
}

/* prctl(2) with every argument given, as unsigned long like the kernel's. */
static inline long zs_prctl(unsigned long option, unsigned long a2, unsigned long a3,
			    unsigned long a4, unsigned long a5)
{
	return syscall(SYS_prctl, option, a2, a3, a4, a5);
}

static inline int zs_set_policy(int policy)
{
	return (int)zs_prctl(PR_SET_TIMERSLACK_ZERO_POLICY, (unsigned long)policy, 0, 0, 0);
}

/* Sets the policy of every thread of the calling process. */
static inline int zs_set_policy_all(int policy)
{
	return (int)zs_prctl(PR_SET_TIMERSLACK_ZERO_POLICY, (unsigned long)policy,
			     ZS_ALL_THREADS, 0, 0);
}

static inline int zs_get_policy(void)
{
	return (int)zs_prctl(PR_GET_TIMERSLACK_ZERO_POLICY, 0, 0, 0, 0);
}

static inline int zs_set_slack(unsigned long ns)
{
	return (int)zs_prctl(PR_SET_TIMERSLACK, ns, 0, 0, 0);
}

static inline int64_t zs_ts_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * NSEC_PER_SEC + ts->tv_nsec;
}

static inline struct timespec zs_ns_ts(int64_t ns)
{
	struct timespec ts;

	ts.tv_sec = (time_t)(ns / NSEC_PER_SEC);
	ts.tv_nsec = (long)(ns % NSEC_PER_SEC);
	return ts;
}

/* The clock's current time in ns; the clocks used here cannot fail. */
static inline int64_t zs_now(clockid_t clk)
{
	struct timespec ts;

	if (clock_gettime(clk, &ts))
		return -1;
	return zs_ts_ns(&ts);
}

/*
 * The @i-th of a cycle of zero-length sleeps: nanosleep() {0, 0}, and
 * clock_nanosleep() relative {0, 0} and absolute "now" on every hrtimer
 * clock.  Returns 0 or the errno value.
 */
static inline int zs_zero_sleep(unsigned int i)
{
	struct timespec ts = { 0, 0 };
	clockid_t clk = zs_hrtimer_clocks[(i / 2) % ZS_ARRAY_SIZE(zs_hrtimer_clocks)];
	long ret;

	if (i % 9 == 0)
		ret = syscall(SYS_nanosleep, &ts, NULL);
	else if (i % 2)
		ret = syscall(SYS_clock_nanosleep, clk, 0, &ts, NULL);
	else {
		ts = zs_ns_ts(zs_now(clk));
		ret = syscall(SYS_clock_nanosleep, clk, TIMER_ABSTIME, &ts, NULL);
	}
	return ret ? errno : 0;
}

/* The calling thread's voluntary and involuntary context switches. */
static inline void zs_switches(long *nvcsw, long *nivcsw)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	*nvcsw = ru.ru_nvcsw;
	if (nivcsw)
		*nivcsw = ru.ru_nivcsw;
}

static inline long zs_nvcsw(void)
{
	long v;

	zs_switches(&v, NULL);
	return v;
}

/*
 * Whether the running kernel has the early return of Linux 7.2, commits
 * bd5956166d20 ("hrtimer: Provide hrtimer_start_range_ns_user()") and
 * b40c927345a9 ("hrtimer: Use hrtimer_start_expires_user() for hrtimer
 * sleepers"): a sleeper whose requested expiry has already passed returns
 * without sleeping when its timer would be the first to expire on the CPU.
 * Without it (6.12), a zero-length sleep under DEFAULT sleeps for the
 * slack, exactly as under FULL_SLACK; with it, whether it sleeps depends on
 * its clock base and the other timers on the CPU.
 *
 * A distribution kernel may carry those commits before 7.2, so this asks
 * the kernel, not its version: under DEFAULT with a 10 ms slack, a relative
 * {0, 0} sleep on CLOCK_TAI, whose clock base is nearly always empty,
 * sleeps (one voluntary switch) in every call without the early return,
 * and in (nearly) none with it.  Anything in between is reported as
 * ZS_EARLY_UNKNOWN, for the test to fail rather than guess.
 *
 * The first call probes and prints the result as a TAP diagnostic; later
 * ones in the same process (or its children) give the same answer.  Probe
 * from a SCHED_OTHER thread (a real-time one has no slack); the thread's
 * slack and policy are left as they were.
 */
enum zs_early_return {
	ZS_EARLY_UNKNOWN = -1,	/* the probe could not tell */
	ZS_EARLY_NONE = 0,	/* DEFAULT sleeps like FULL_SLACK */
	ZS_EARLY_RETURN = 1,	/* the kernel returns from expired sleeps */
};

#define ZS_PROBE_CALLS		16
#define ZS_PROBE_SLACK_NS	(10 * NSEC_PER_MSEC)

static inline int zs_probe_early_return(void)
{
	static const char * const verdicts[] = {
		"inconclusive", "no early return, they wait for the slack",
		"early return",
	};
	static int early = -2;	/* not probed yet */
	struct timespec zero = { 0, 0 };
	int i, slept = 0, failed = 0;
	long slack, policy, nv0;

	if (early != -2)
		return early;
	slack = zs_prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
	policy = zs_prctl(PR_GET_TIMERSLACK_ZERO_POLICY, 0, 0, 0, 0);
	if (slack < 0 || zs_set_slack(ZS_PROBE_SLACK_NS) ||
	    zs_prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0) != ZS_PROBE_SLACK_NS ||
	    (policy >= 0 && zs_set_policy(ZS_DEFAULT)))
		failed = 1;
	if (!failed)
		clock_nanosleep(CLOCK_TAI, 0, &zero, NULL);	/* warm-up */
	for (i = 0; i < ZS_PROBE_CALLS && !failed; i++) {
		nv0 = zs_nvcsw();
		failed += !!clock_nanosleep(CLOCK_TAI, 0, &zero, NULL);
		slept += zs_nvcsw() > nv0;
	}
	if (slack >= 0)
		zs_set_slack((unsigned long)slack);
	if (policy >= 0)
		zs_set_policy((int)policy);

	if (failed)
		early = ZS_EARLY_UNKNOWN;
	else if (4 * slept <= ZS_PROBE_CALLS)
		early = ZS_EARLY_RETURN;
	else if (4 * slept >= 3 * ZS_PROBE_CALLS)
		early = ZS_EARLY_NONE;
	else
		early = ZS_EARLY_UNKNOWN;
	printf("# kernel: zero-length sleeps: %s (probe: %d of %d calls slept%s)\n",
	       verdicts[early + 1], slept, i, failed ? ", the probe failed" : "");
	fflush(stdout);
	return early;
}

/*
 * In a kselftest harness test that depends on the answer: probe, and fail
 * the test if the probe cannot tell.
 */
#define ZS_ASSERT_PROBED()						\
	do {								\
		ASSERT_NE(ZS_EARLY_UNKNOWN, zs_probe_early_return())	\
			TH_LOG("the probe cannot tell whether the kernel " \
			       "returns early from expired sleeps");	\
	} while (0)

/* Whether the kernel returns early; ZS_ASSERT_PROBED() must have passed. */
static inline bool zs_kernel_returns_early(void)
{
	return zs_probe_early_return() == ZS_EARLY_RETURN;
}

/* Whether a zero-length sleep under @policy must sleep on this kernel. */
static inline bool zs_zero_sleep_sleeps(int policy)
{
	return policy == ZS_FULL_SLACK || (policy == ZS_DEFAULT && !zs_kernel_returns_early());
}

/* splitmix64: small, fast, and good enough to drive a fuzzer. */
static inline uint64_t zs_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, n), n > 0 (the bias is irrelevant here). */
static inline uint64_t zs_below(uint64_t *state, uint64_t n)
{
	return zs_rand(state) % n;
}

/* True with probability 1/n. */
static inline bool zs_one_in(uint64_t *state, uint64_t n)
{
	return zs_below(state, n) == 0;
}

static inline int zs_pin_self(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/* The highest CPU that this process may use, or -1. */
static inline int zs_last_cpu(void)
{
	cpu_set_t set;
	int cpu;

	if (sched_getaffinity(0, sizeof(set), &set))
		return -1;
	for (cpu = CPU_SETSIZE - 1; cpu >= 0; cpu--)
		if (CPU_ISSET(cpu, &set))
			return cpu;
	return -1;
}

/*
 * Locks the process's memory, so that no page fault can block a measured
 * call.  Not under AddressSanitizer, whose shadow memory is far too large.
 */
static inline int zs_lock_memory(void)
{
#if defined(__SANITIZE_ADDRESS__)
	return 0;
#else
	return mlockall(MCL_CURRENT | MCL_FUTURE);
#endif
}

static inline unsigned long zs_load(const unsigned long *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline void zs_store(unsigned long *p, unsigned long v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

static inline void zs_add(unsigned long *p, unsigned long v)
{
	__atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}

#endif /* ZEROSLEEP_HARDENING_COMMON_H */
