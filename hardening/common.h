/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the zerosleep hardening tests, on top of those that they share
 * with the library's tests (probe.h: the policy and slack calls, clock and
 * context switch readings, and the probes of what the kernel does with
 * expired sleeps): short policy names, the policy calls made directly
 * with syscall(2), time arithmetic, a small seeded PRNG, CPU pinning, and
 * what the tests that came from the selftests use (privilege drops, /proc
 * paths, shorthands for the kselftest harness).
 *
 * The tests issue nanosleep(2), clock_nanosleep(2) and, where every
 * argument matters, prctl(2) through syscall(2) so that libc cannot change
 * the arguments (glibc turns nanosleep() into clock_nanosleep(), validates
 * some clock ids itself and returns errors from clock_nanosleep() instead
 * of setting errno).
 */
#ifndef ZEROSLEEP_HARDENING_COMMON_H
#define ZEROSLEEP_HARDENING_COMMON_H

#include <errno.h>
#include <grp.h>
#include <pthread.h>
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

#include "probe.h"

#ifndef CLONE_NEWTIME
# define CLONE_NEWTIME		0x00000080
#endif

/* Short names for the policies and the flag. */
#define ZS_DEFAULT		PR_TIMERSLACK_ZERO_DEFAULT
#define ZS_RETURN		PR_TIMERSLACK_ZERO_RETURN
#define ZS_SCHEDULE		PR_TIMERSLACK_ZERO_SCHEDULE
#define ZS_FULL_SLACK		PR_TIMERSLACK_ZERO_FULL_SLACK
#define ZS_ALL_THREADS		PR_TIMERSLACK_ZERO_ALL_THREADS

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

static inline int zs_set_policy_flags(int policy, unsigned long flags)
{
	return (int)zs_prctl(PR_SET_TIMERSLACK_ZERO_POLICY, (unsigned long)policy, flags, 0, 0);
}

/* Sets the policy of every thread of the calling process. */
static inline int zs_set_policy_all(int policy)
{
	return zs_set_policy_flags(policy, ZS_ALL_THREADS);
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

/* The calling thread's voluntary context switches. */
static inline long zs_nvcsw(void)
{
	long v;

	zs_switches(&v, NULL);
	return v;
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
		ASSERT_NE(ZS_MONO_UNKNOWN, zs_probe_monotonic())	\
			TH_LOG("the probe cannot tell whether expired "	\
			       "CLOCK_MONOTONIC sleeps wait");		\
	} while (0)

/* Whether the kernel returns early; ZS_ASSERT_PROBED() must have passed. */
static inline bool zs_kernel_returns_early(void)
{
	return zs_probe_early_return() == ZS_EARLY_RETURN;
}

/*
 * Whether DEFAULT's expired sleeps on CLOCK_MONOTONIC's clock base (relative
 * CLOCK_MONOTONIC and CLOCK_REALTIME, absolute CLOCK_MONOTONIC, and so
 * sleep(0), usleep(0) and libc's nanosleep()) wait for the slack: on every
 * kernel but PREEMPT_RT with the early return (probe.h).
 * ZS_ASSERT_PROBED() must have passed.
 */
static inline bool zs_monotonic_waits(void)
{
	return zs_probe_monotonic() == ZS_MONO_WAITS;
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

/*
 * Start a thread on CPU (any CPU when CPU < 0) with the scheduling policy
 * and priority given, not inherited.  Returns 0 or an error number, as
 * pthread_create() does (EPERM: an RT policy without CAP_SYS_NICE).
 */
static inline int zs_start_thread(pthread_t *t, void *(*fn)(void *), void *arg,
				  int cpu, int sched_policy, int prio)
{
	struct sched_param sp = { .sched_priority = prio };
	pthread_attr_t attr;
	cpu_set_t set;
	int ret;

	ret = pthread_attr_init(&attr);
	if (ret)
		return ret;
	if (cpu >= 0) {
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		ret = pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	}
	if (!ret)
		ret = pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
	if (!ret)
		ret = pthread_attr_setschedpolicy(&attr, sched_policy);
	if (!ret)
		ret = pthread_attr_setschedparam(&attr, &sp);
	if (!ret)
		ret = pthread_create(t, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	return ret;
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

/*
 * For the tests that came from the selftests (prctl, procfs, sched): set the
 * policy or the slack in a harness test, or fail it.
 */
#define SET_POLICY(p)							\
	do {								\
		int __policy = (p);					\
									\
		ASSERT_EQ(0, zs_set_policy(__policy))			\
			TH_LOG("PR_SET_TIMERSLACK_ZERO_POLICY(%d): %s",	\
			       __policy, strerror(errno));		\
	} while (0)

#define SET_SLACK(ns)							\
	do {								\
		unsigned long __slack = (ns);				\
									\
		ASSERT_EQ(0, zs_set_slack(__slack))			\
			TH_LOG("PR_SET_TIMERSLACK(%lu): %s", __slack,	\
			       strerror(errno));			\
	} while (0)

static inline pid_t sys_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static inline long sys_nanosleep(const void *req, void *rem)
{
	return syscall(SYS_nanosleep, req, rem);
}

static inline long sys_clock_nanosleep(clockid_t clk, int flags, const void *req, void *rem)
{
	return syscall(SYS_clock_nanosleep, clk, flags, req, rem);
}

/* Sleeps for @ns (nothing if it is not positive), through signals. */
static inline void zs_sleep_ns(int64_t ns)
{
	struct timespec ts = zs_ns_ts(ns > 0 ? ns : 0);

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static inline bool is_root(void)
{
	return geteuid() == 0;
}

#define NOBODY			65534

/* Another uid, no capabilities; still dumpable, so that /proc stays usable. */
static inline int drop_to_nobody(void)
{
	if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
	    setresuid(NOBODY, NOBODY, NOBODY))
		return -1;
	return prctl(PR_SET_DUMPABLE, 1UL, 0UL, 0UL, 0UL);
}

/* The policy file of a process (tid 0) or of one of its threads. */
#define PROC_PATH_LEN		80

static inline void policy_path(char *buf, size_t len, pid_t pid, pid_t tid)
{
	if (tid)
		snprintf(buf, len, "/proc/%d/task/%d/timerslack_zero_policy", pid, tid);
	else
		snprintf(buf, len, "/proc/%d/timerslack_zero_policy", pid);
}

#endif /* ZEROSLEEP_HARDENING_COMMON_H */
