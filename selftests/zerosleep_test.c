// SPDX-License-Identifier: GPL-2.0
/*
 * Tests for PR_SET_TIMERSLACK_ZERO_POLICY and PR_GET_TIMERSLACK_ZERO_POLICY:
 * what a zero-length nanosleep() or clock_nanosleep() does under each policy.
 *
 * A zero-length sleep is a relative request of exactly 0 s and 0 ns, or an
 * absolute (TIMER_ABSTIME) deadline that is not in the future, on
 * CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_BOOTTIME or CLOCK_TAI.
 *
 *   FULL_SLACK (default)  the thread sleeps for its timer slack, as before
 *   RETURN                the call returns 0 at once
 *   SCHEDULE              the thread yields the CPU once, then returns 0
 *
 * Whether a thread slept is judged by its voluntary context switches
 * (getrusage(RUSAGE_THREAD)), and speed by large ratios between policies,
 * never by absolute durations, so that the tests hold on slow emulators.
 *
 * The test must be started under the default policy (FULL_SLACK), not from
 * a shell whose policy was changed.  Tests that use SCHED_FIFO,
 * SCHED_DEADLINE, time namespaces or drop privileges need root.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <linux/prctl.h>

#include "../kselftest_harness.h"

#ifndef PR_SET_TIMERSLACK_ZERO_POLICY
# define PR_SET_TIMERSLACK_ZERO_POLICY	0x545a5053
# define PR_GET_TIMERSLACK_ZERO_POLICY	0x545a5047
# define PR_TIMERSLACK_ZERO_FULL_SLACK	0
# define PR_TIMERSLACK_ZERO_RETURN	1
# define PR_TIMERSLACK_ZERO_SCHEDULE	2
#endif

#ifndef CLOCK_TAI
# define CLOCK_TAI		11
#endif
#ifndef SCHED_DEADLINE
# define SCHED_DEADLINE		6
#endif
#ifndef CLONE_NEWTIME
# define CLONE_NEWTIME		0x00000080
#endif

#define FULL_SLACK		PR_TIMERSLACK_ZERO_FULL_SLACK
#define RETURN			PR_TIMERSLACK_ZERO_RETURN
#define SCHEDULE		PR_TIMERSLACK_ZERO_SCHEDULE

#define NSEC_PER_USEC		1000LL
#define NSEC_PER_MSEC		1000000LL
#define NSEC_PER_SEC		1000000000LL

/* The slack of power-tuned systems: a zero sleep under FULL_SLACK is slow. */
#define LARGE_SLACK_NS		(10 * NSEC_PER_MSEC)

/* Calls per loop that must not sleep, and per loop that does sleep. */
#define FAST_CALLS		1000
#define RATIO_FAST_CALLS	200
#define RATIO_SLOW_CALLS	20
#define SLEEP_CALLS		10

/* RETURN and SCHEDULE per call versus FULL_SLACK with a 10 ms slack. */
#define MIN_SPEEDUP		20

#define PRINT_POLICY_ARG	"--print-policy"

static const int all_policies[] = { FULL_SLACK, RETURN, SCHEDULE };

static const char *policy_name(int policy)
{
	switch (policy) {
	case FULL_SLACK:
		return "FULL_SLACK";
	case RETURN:
		return "RETURN";
	case SCHEDULE:
		return "SCHEDULE";
	}
	return "?";
}

static int set_policy(unsigned long policy)
{
	return prctl(PR_SET_TIMERSLACK_ZERO_POLICY, policy, 0UL, 0UL, 0UL);
}

static int get_policy(void)
{
	return prctl(PR_GET_TIMERSLACK_ZERO_POLICY, 0UL, 0UL, 0UL, 0UL);
}

/* Sets the calling thread's policy, or ends the test. */
static void set_policy_or_fail(struct __test_metadata *_metadata, int policy)
{
	ASSERT_EQ(0, set_policy(policy))
		TH_LOG("PR_SET_TIMERSLACK_ZERO_POLICY(%d): %s", policy, strerror(errno));
}

static void set_slack_or_fail(struct __test_metadata *_metadata, unsigned long ns)
{
	ASSERT_EQ(0, prctl(PR_SET_TIMERSLACK, ns, 0UL, 0UL, 0UL))
		TH_LOG("PR_SET_TIMERSLACK(%lu): %s", ns, strerror(errno));
}

#define SET_POLICY(p)	set_policy_or_fail(_metadata, p)
#define SET_SLACK(ns)	set_slack_or_fail(_metadata, ns)

static long sys_nanosleep(const void *req, void *rem)
{
	return syscall(SYS_nanosleep, req, rem);
}

static long sys_clock_nanosleep(clockid_t clk, int flags, const void *req, void *rem)
{
	return syscall(SYS_clock_nanosleep, clk, flags, req, rem);
}

static int64_t ts_ns(const struct timespec *ts)
{
	return ts->tv_sec * NSEC_PER_SEC + ts->tv_nsec;
}

static struct timespec ns_ts(int64_t ns)
{
	struct timespec ts = {
		.tv_sec = ns / NSEC_PER_SEC,
		.tv_nsec = ns % NSEC_PER_SEC,
	};

	return ts;
}

static int64_t clock_ns(clockid_t clk)
{
	struct timespec ts;

	if (clock_gettime(clk, &ts))
		return -1;
	return ts_ns(&ts);
}

static int64_t now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static double per_call(int64_t ns, int calls)
{
	return calls ? (double)ns / calls : 0;
}

/*
 * The sleeps under test.  For the absolute kinds the deadline is read from
 * the clock right before the call, plus an offset.
 */
enum sleep_kind {
	NS_REL,		/* nanosleep(&{0, ns}) */
	CLK_REL,	/* clock_nanosleep(clk, 0, &{0, ns}) */
	CLK_ABS,	/* clock_nanosleep(clk, TIMER_ABSTIME, &(now + ns)) */
	CLK_ABS_ZERO,	/* clock_nanosleep(clk, TIMER_ABSTIME, &{0, 0}) */
#ifdef __x86_64__
	/* The IA-32 entry points, entered with int $0x80 (see compat test). */
	C32_NS_REL,	/* nanosleep, old_timespec32 */
	C32_CLK_REL,	/* clock_nanosleep, old_timespec32 */
	C32_CLK_ABS,
	C64_CLK_REL,	/* clock_nanosleep_time64, __kernel_timespec */
	C64_CLK_ABS,
#endif
};

struct sleep_case {
	enum sleep_kind kind;
	int64_t ns;
	const char *desc;
	/*
	 * Under FULL_SLACK the thread sleeps until the timer slack runs out.
	 * Not so for a deadline that is further in the past than the slack:
	 * its hard expiry has passed too, and the timer fires at once.
	 */
	bool slack_bound;
};

static const struct sleep_case ns_zero_cases[] = {
	{ NS_REL, 0, "nanosleep {0, 0}", true },
};

static const struct sleep_case clk_zero_cases[] = {
	{ CLK_REL, 0, "relative {0, 0}", true },
	{ CLK_ABS, 0, "absolute, deadline = now", true },
	{ CLK_ABS, -NSEC_PER_MSEC, "absolute, deadline = now - 1 ms", true },
	{ CLK_ABS, -NSEC_PER_SEC, "absolute, deadline = now - 1 s", false },
	{ CLK_ABS_ZERO, 0, "absolute, deadline = {0, 0}", false },
};

static const struct sleep_case ns_nonzero_cases[] = {
	{ NS_REL, 1, "nanosleep {0, 1}", false },
};

static const struct sleep_case clk_nonzero_cases[] = {
	{ CLK_REL, 1, "relative {0, 1}", false },
	{ CLK_ABS, NSEC_PER_MSEC, "absolute, deadline = now + 1 ms", false },
};

#ifdef __x86_64__
#define NR32_getpid			20
#define NR32_nanosleep			162
#define NR32_clock_nanosleep		267
#define NR32_clock_nanosleep_time64	407

struct timespec32 {
	int32_t tv_sec;
	int32_t tv_nsec;
};

struct timespec64 {
	int64_t tv_sec;
	int64_t tv_nsec;
};

/* Below 4 GiB, so that 32-bit system calls can address it. */
static void *compat_buf;

static int int80(long nr, long a1, long a2, long a3, long a4)
{
	long ret;

	asm volatile ("int $0x80"
		      : "=a" (ret)
		      : "a" (nr), "b" (a1), "c" (a2), "d" (a3), "S" (a4)
		      : "memory", "r8", "r9", "r10", "r11");
	return (int)ret;
}

static int compat_sleep(enum sleep_kind kind, clockid_t clk, int64_t ns)
{
	struct timespec32 *ts32 = compat_buf;
	struct timespec64 *ts64 = (struct timespec64 *)((char *)compat_buf + 64);
	long addr32 = (long)(uintptr_t)ts32, addr64 = (long)(uintptr_t)ts64;
	int flags = 0, ret;
	int64_t t = ns;

	if (kind == C32_CLK_ABS || kind == C64_CLK_ABS) {
		flags = TIMER_ABSTIME;
		t += clock_ns(clk);
	}
	ts32->tv_sec = t / NSEC_PER_SEC;
	ts32->tv_nsec = t % NSEC_PER_SEC;
	ts64->tv_sec = t / NSEC_PER_SEC;
	ts64->tv_nsec = t % NSEC_PER_SEC;

	switch (kind) {
	case C32_NS_REL:
		ret = int80(NR32_nanosleep, addr32, 0, 0, 0);
		break;
	case C32_CLK_REL:
	case C32_CLK_ABS:
		ret = int80(NR32_clock_nanosleep, clk, flags, addr32, 0);
		break;
	default:
		ret = int80(NR32_clock_nanosleep_time64, clk, flags, addr64, 0);
		break;
	}
	return ret < 0 ? -ret : ret;
}
#endif

/*
 * One sleep of the given case.  Returns 0 or the error number.  The
 * absolute deadline used, if any, is stored in *deadline.
 */
static int sleep_once(const struct sleep_case *c, clockid_t clk, void *rmtp,
		      int64_t *deadline)
{
	struct timespec ts = ns_ts(c->ns);
	long ret = -1;
	int64_t t;

	switch (c->kind) {
	case NS_REL:
		ret = sys_nanosleep(&ts, rmtp);
		break;
	case CLK_REL:
		ret = sys_clock_nanosleep(clk, 0, &ts, rmtp);
		break;
	case CLK_ABS:
		t = clock_ns(clk) + c->ns;
		if (t < 0)
			t = 0;
		if (deadline)
			*deadline = t;
		ts = ns_ts(t);
		ret = sys_clock_nanosleep(clk, TIMER_ABSTIME, &ts, rmtp);
		break;
	case CLK_ABS_ZERO:
		ts.tv_sec = 0;
		ts.tv_nsec = 0;
		ret = sys_clock_nanosleep(clk, TIMER_ABSTIME, &ts, rmtp);
		break;
#ifdef __x86_64__
	default:
		return compat_sleep(c->kind, clk, c->ns);
#endif
	}
	return ret ? errno : 0;
}

struct loop_result {
	int calls;
	int failures;		/* calls that did not return 0 */
	int first_err;		/* the error number of the first of them */
	long nvcsw;		/* voluntary context switches during the loop */
	long nivcsw;		/* involuntary ones */
	int64_t ns;		/* wall time of the loop */
};

static void sleep_loop(const struct sleep_case *c, clockid_t clk, int calls,
		       struct loop_result *r)
{
	struct rusage ru0, ru1;
	int64_t t0;
	int i, err;

	memset(r, 0, sizeof(*r));
	getrusage(RUSAGE_THREAD, &ru0);
	t0 = now_ns();
	for (i = 0; i < calls; i++) {
		err = sleep_once(c, clk, NULL, NULL);
		if (err && !r->failures++)
			r->first_err = err;
	}
	r->ns = now_ns() - t0;
	getrusage(RUSAGE_THREAD, &ru1);
	r->calls = calls;
	r->nvcsw = ru1.ru_nvcsw - ru0.ru_nvcsw;
	r->nivcsw = ru1.ru_nivcsw - ru0.ru_nivcsw;
}

/*
 * For loops that must not sleep at all: warm up first, then keep the best
 * of three attempts, the one with the fewest voluntary switches and then
 * the fastest.  A page fault that waits for I/O may switch once, and a
 * virtual CPU may stall, but not in every attempt, whereas a sleeping call
 * switches every time.  Failures of all attempts are counted.
 */
static void nosleep_loop(const struct sleep_case *c, clockid_t clk, int calls,
			 struct loop_result *r)
{
	struct loop_result tmp;
	int attempt, failures = 0, first_err = 0;

	sleep_loop(c, clk, 10, &tmp);
	for (attempt = 0; attempt < 3; attempt++) {
		sleep_loop(c, clk, calls, &tmp);
		if (tmp.failures && !failures)
			first_err = tmp.first_err;
		failures += tmp.failures;
		if (!attempt || tmp.nvcsw < r->nvcsw ||
		    (tmp.nvcsw == r->nvcsw && tmp.ns < r->ns))
			*r = tmp;
	}
	r->failures = failures;
	r->first_err = first_err;
}

static void expect_no_failures(struct __test_metadata *_metadata,
			       const struct loop_result *r, const char *what)
{
	EXPECT_EQ(0, r->failures)
		TH_LOG("%s: %d of %d calls failed, first with %s",
		       what, r->failures, r->calls, strerror(r->first_err));
}

#define EXPECT_NO_FAILURES(r, what)	expect_no_failures(_metadata, r, what)

static bool is_root(void)
{
	return geteuid() == 0;
}

/* Drop to nobody: no capabilities, another uid. */
static int drop_privileges(void)
{
	if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
	    setresuid(65534, 65534, 65534))
		return -1;
	return 0;
}

/* Two CPUs of the allowed set: @busy for the threads under test, @spare for the rest. */
static bool pick_cpus(int *busy, int *spare)
{
	cpu_set_t set;
	int cpu, first = -1, last = -1;

	if (sched_getaffinity(0, sizeof(set), &set))
		return false;
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &set))
			continue;
		if (first < 0)
			first = cpu;
		last = cpu;
	}
	*busy = last;
	*spare = first;
	return first >= 0 && first != last;
}

static int pin_self(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

static int start_thread(pthread_t *t, void *(*fn)(void *), void *arg, int cpu,
			int sched_policy, int prio)
{
	struct sched_param sp = { .sched_priority = prio };
	pthread_attr_t attr;
	cpu_set_t set;
	int ret;

	ret = pthread_attr_init(&attr);
	if (ret)
		return ret;
	ret = pthread_attr_setstacksize(&attr, 256 * 1024);
	if (!ret && cpu >= 0) {
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		ret = pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	}
	if (!ret && sched_policy != SCHED_OTHER) {
		ret = pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
		if (!ret)
			ret = pthread_attr_setschedpolicy(&attr, sched_policy);
		if (!ret)
			ret = pthread_attr_setschedparam(&attr, &sp);
	}
	if (!ret)
		ret = pthread_create(t, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	return ret;
}

static unsigned long load(const unsigned long *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static void store(unsigned long *p, unsigned long v)
{
	__atomic_store_n(p, v, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------------------
 * The prctl interface (SPEC 3.1)
 */

TEST(default_policy_is_full_slack)
{
	int policy = get_policy();

	/* The test must be started under the default policy. */
	ASSERT_EQ(FULL_SLACK, policy)
		TH_LOG("PR_GET_TIMERSLACK_ZERO_POLICY: %d (%s)", policy,
		       policy < 0 ? strerror(errno) : "started under another policy?");
}

TEST(set_get_round_trip)
{
	static const int seq[] = {
		RETURN, RETURN, SCHEDULE, FULL_SLACK, SCHEDULE, RETURN, FULL_SLACK, FULL_SLACK,
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(seq); i++) {
		SET_POLICY(seq[i]);
		EXPECT_EQ(seq[i], get_policy())
			TH_LOG("step %u: set %s, got %d (%s)", i, policy_name(seq[i]),
			       get_policy(), strerror(errno));
	}
}

static const struct {
	unsigned long a2, a3, a4, a5;
	const char *desc;
} bad_set_args[] = {
	{ 3, 0, 0, 0, "policy 3" },
	{ 4, 0, 0, 0, "policy 4" },
	{ -1UL, 0, 0, 0, "policy -1 (ULONG_MAX)" },
	{ INT_MAX, 0, 0, 0, "policy INT_MAX" },
	{ (unsigned long)INT_MIN, 0, 0, 0, "policy INT_MIN" },
	{ PR_SET_TIMERSLACK_ZERO_POLICY, 0, 0, 0, "policy 0x545a5053" },
	{ PR_GET_TIMERSLACK_ZERO_POLICY, 0, 0, 0, "policy 0x545a5047" },
#if ULONG_MAX > 0xffffffffUL
	{ 1UL << 32, 0, 0, 0, "policy 1 << 32 (0 if truncated to int)" },
	{ (1UL << 32) | RETURN, 0, 0, 0, "policy (1 << 32) | 1" },
	{ (1UL << 63) | SCHEDULE, 0, 0, 0, "policy (1 << 63) | 2" },
#endif
	{ RETURN, 1, 0, 0, "arg3 = 1" },
	{ RETURN, 0, 1, 0, "arg4 = 1" },
	{ RETURN, 0, 0, 1, "arg5 = 1" },
	{ FULL_SLACK, -1UL, 0, 0, "arg3 = -1" },
	{ FULL_SLACK, 0, -1UL, 0, "arg4 = -1" },
	{ FULL_SLACK, 0, 0, -1UL, "arg5 = -1" },
	{ SCHEDULE, 1, 1, 1, "arg3 = arg4 = arg5 = 1" },
	{ SCHEDULE, 0, 0, 1UL << (sizeof(long) * 8 - 1), "arg5 = top bit" },
};

TEST(set_invalid_arguments)
{
	unsigned int i, b;
	int ret;

	for (b = 0; b < ARRAY_SIZE(all_policies); b++) {
		int base = all_policies[b];

		for (i = 0; i < ARRAY_SIZE(bad_set_args); i++) {
			SET_POLICY(base);
			errno = 0;
			ret = prctl(PR_SET_TIMERSLACK_ZERO_POLICY, bad_set_args[i].a2,
				    bad_set_args[i].a3, bad_set_args[i].a4, bad_set_args[i].a5);
			EXPECT_EQ(-1, ret)
				TH_LOG("SET with %s under %s was accepted",
				       bad_set_args[i].desc, policy_name(base));
			EXPECT_EQ(EINVAL, errno)
				TH_LOG("SET with %s: %s instead of EINVAL",
				       bad_set_args[i].desc, strerror(errno));
			EXPECT_EQ(base, get_policy())
				TH_LOG("SET with %s changed the policy from %s to %d",
				       bad_set_args[i].desc, policy_name(base), get_policy());
		}
	}
}

TEST(get_invalid_arguments)
{
	static const unsigned long vals[] = { 1, 2, -1UL };
	unsigned long a[4];
	unsigned int b, pos, v;
	int ret;

	for (b = 0; b < ARRAY_SIZE(all_policies); b++) {
		SET_POLICY(all_policies[b]);
		for (pos = 0; pos < 4; pos++) {
			for (v = 0; v < ARRAY_SIZE(vals); v++) {
				memset(a, 0, sizeof(a));
				a[pos] = vals[v];
				errno = 0;
				ret = prctl(PR_GET_TIMERSLACK_ZERO_POLICY, a[0], a[1], a[2], a[3]);
				EXPECT_EQ(-1, ret)
					TH_LOG("GET with arg%u = %#lx returned %d",
					       pos + 2, vals[v], ret);
				EXPECT_EQ(EINVAL, errno)
					TH_LOG("GET with arg%u = %#lx: %s instead of EINVAL",
					       pos + 2, vals[v], strerror(errno));
				EXPECT_EQ(all_policies[b], get_policy())
					TH_LOG("policy changed by a failed GET");
			}
		}
	}
}

TEST(no_privilege_needed)
{
	unsigned int i;
	int status;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (is_root() && drop_privileges())
			_exit(100);
		for (i = 0; i < ARRAY_SIZE(all_policies); i++) {
			if (set_policy(all_policies[i]))
				_exit(101 + i);
			if (get_policy() != all_policies[i])
				_exit(111 + i);
		}
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	/* 100: no setresuid(); 10x: SET x failed; 11x: GET after SET x wrong */
	EXPECT_EQ(0, WEXITSTATUS(status))
		TH_LOG("unprivileged child: exit %d", WEXITSTATUS(status));
}

TEST(independent_of_timerslack)
{
	SET_SLACK(12345);
	SET_POLICY(RETURN);
	EXPECT_EQ(12345, prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0));
	SET_POLICY(SCHEDULE);
	EXPECT_EQ(12345, prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0));
	SET_SLACK(LARGE_SLACK_NS);
	EXPECT_EQ(SCHEDULE, get_policy());
	SET_SLACK(0);	/* back to the default slack */
	EXPECT_EQ(SCHEDULE, get_policy());
	SET_POLICY(FULL_SLACK);
	EXPECT_NE(12345, prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0));
}

/* ------------------------------------------------------------------------
 * Zero-length and other sleeps, per entry point and clock (SPEC 3.2, 3.3)
 */

/* The system call under test: nanosleep(), or clock_nanosleep() on a clock. */
struct sleep_call {
	bool nanosleep;		/* nanosleep() sleeps on CLOCK_MONOTONIC */
	clockid_t clk;
};

FIXTURE(sleep) {
};

FIXTURE_VARIANT(sleep) {
	struct sleep_call call;
};

FIXTURE_VARIANT_ADD(sleep, nanosleep) {
	.call = { .nanosleep = true, .clk = CLOCK_MONOTONIC },
};

FIXTURE_VARIANT_ADD(sleep, realtime) {
	.call = { .clk = CLOCK_REALTIME },
};

FIXTURE_VARIANT_ADD(sleep, monotonic) {
	.call = { .clk = CLOCK_MONOTONIC },
};

FIXTURE_VARIANT_ADD(sleep, boottime) {
	.call = { .clk = CLOCK_BOOTTIME },
};

FIXTURE_VARIANT_ADD(sleep, tai) {
	.call = { .clk = CLOCK_TAI },
};

FIXTURE_SETUP(sleep)
{
}

FIXTURE_TEARDOWN(sleep)
{
}

static const struct sleep_case *variant_cases(const struct sleep_call *v, bool zero,
					      unsigned int *n)
{
	if (v->nanosleep) {
		*n = zero ? ARRAY_SIZE(ns_zero_cases) : ARRAY_SIZE(ns_nonzero_cases);
		return zero ? ns_zero_cases : ns_nonzero_cases;
	}
	*n = zero ? ARRAY_SIZE(clk_zero_cases) : ARRAY_SIZE(clk_nonzero_cases);
	return zero ? clk_zero_cases : clk_nonzero_cases;
}

static void check_no_sleep(struct __test_metadata *_metadata,
			   const struct sleep_call *call, int policy)
{
	const struct sleep_case *cases;
	struct loop_result r;
	unsigned int i, n;

	cases = variant_cases(call, true, &n);
	SET_POLICY(policy);
	for (i = 0; i < n; i++) {
		nosleep_loop(&cases[i], call->clk, FAST_CALLS, &r);
		ksft_print_msg("%s, %s: %d calls, switches %ld voluntary %ld other, %.1f us/call\n",
			       policy_name(policy), cases[i].desc, r.calls, r.nvcsw, r.nivcsw,
			       per_call(r.ns, r.calls) / NSEC_PER_USEC);
		EXPECT_NO_FAILURES(&r, cases[i].desc);
		EXPECT_EQ(0, r.nvcsw)
			TH_LOG("%s, %s: slept: %ld voluntary switches in %d calls",
			       policy_name(policy), cases[i].desc, r.nvcsw, r.calls);
	}
}

/* RETURN: a zero-length sleep returns 0 at once and never sleeps. */
TEST_F(sleep, return_does_not_sleep)
{
	check_no_sleep(_metadata, &variant->call, RETURN);
}

/* SCHEDULE: a zero-length sleep yields, but never sleeps on a timer. */
TEST_F(sleep, schedule_does_not_sleep)
{
	check_no_sleep(_metadata, &variant->call, SCHEDULE);
}

/*
 * FULL_SLACK with a large slack really sleeps, and is far slower than
 * RETURN and SCHEDULE.
 */
TEST_F(sleep, full_slack_sleeps_and_is_slower)
{
	const struct sleep_case *cases;
	struct loop_result full, ret, sched;
	double r_ret, r_sched;
	unsigned int i, n;

	cases = variant_cases(&variant->call, true, &n);
	SET_SLACK(LARGE_SLACK_NS);
	for (i = 0; i < n; i++) {
		if (!cases[i].slack_bound)
			continue;
		SET_POLICY(FULL_SLACK);
		sleep_loop(&cases[i], variant->call.clk, RATIO_SLOW_CALLS, &full);
		SET_POLICY(RETURN);
		nosleep_loop(&cases[i], variant->call.clk, RATIO_FAST_CALLS, &ret);
		SET_POLICY(SCHEDULE);
		nosleep_loop(&cases[i], variant->call.clk, RATIO_FAST_CALLS, &sched);

		r_ret = per_call(full.ns, full.calls) / per_call(ret.ns ?: 1, ret.calls);
		r_sched = per_call(full.ns, full.calls) / per_call(sched.ns ?: 1, sched.calls);
		ksft_print_msg("%s, 10 ms slack: FULL_SLACK %.0f us/call, %ld/%d calls slept\n",
			       cases[i].desc, per_call(full.ns, full.calls) / NSEC_PER_USEC,
			       full.nvcsw, full.calls);
		ksft_print_msg("%s, 10 ms slack: RETURN %.1f us/call, SCHEDULE %.1f us/call\n",
			       cases[i].desc, per_call(ret.ns, ret.calls) / NSEC_PER_USEC,
			       per_call(sched.ns, sched.calls) / NSEC_PER_USEC);
		ksft_print_msg("%s: ratio FULL_SLACK/RETURN %.0f, FULL_SLACK/SCHEDULE %.0f\n",
			       cases[i].desc, r_ret, r_sched);
		EXPECT_NO_FAILURES(&full, cases[i].desc);
		EXPECT_NO_FAILURES(&ret, cases[i].desc);
		EXPECT_NO_FAILURES(&sched, cases[i].desc);
		EXPECT_GE(full.nvcsw, full.calls / 2)
			TH_LOG("FULL_SLACK, %s: only %ld voluntary switches in %d calls",
			       cases[i].desc, full.nvcsw, full.calls);
		EXPECT_GE(r_ret, MIN_SPEEDUP)
			TH_LOG("%s: RETURN only %.1f times faster per call than FULL_SLACK",
			       cases[i].desc, r_ret);
		EXPECT_GE(r_sched, MIN_SPEEDUP)
			TH_LOG("%s: SCHEDULE only %.1f times faster per call than FULL_SLACK",
			       cases[i].desc, r_sched);
	}
}

/*
 * A sleep that is not zero-length (1 ns relative, or an absolute deadline
 * 1 ms in the future) sleeps under every policy, and not shorter than asked.
 */
TEST_F(sleep, nonzero_sleeps_under_every_policy)
{
	const struct sleep_case *cases;
	unsigned int i, n, p;
	int64_t deadline, after;
	long nvcsw0, early, failures;
	struct rusage ru;
	int c, err;

	cases = variant_cases(&variant->call, false, &n);
	/* A 1 ms slack keeps each sleep long enough to be seen. */
	SET_SLACK(NSEC_PER_MSEC);
	for (p = 0; p < ARRAY_SIZE(all_policies); p++) {
		SET_POLICY(all_policies[p]);
		for (i = 0; i < n; i++) {
			getrusage(RUSAGE_THREAD, &ru);
			nvcsw0 = ru.ru_nvcsw;
			early = 0;
			failures = 0;
			for (c = 0; c < SLEEP_CALLS; c++) {
				deadline = -1;
				err = sleep_once(&cases[i], variant->call.clk, NULL, &deadline);
				after = clock_ns(variant->call.clk);
				if (err)
					failures++;
				if (deadline >= 0 && after < deadline)
					early++;
			}
			getrusage(RUSAGE_THREAD, &ru);
			ksft_print_msg("%s, %s: %ld voluntary switches in %d calls\n",
				       policy_name(all_policies[p]), cases[i].desc,
				       ru.ru_nvcsw - nvcsw0, SLEEP_CALLS);
			EXPECT_EQ(0, failures)
				TH_LOG("%s, %s: %ld calls failed", policy_name(all_policies[p]),
				       cases[i].desc, failures);
			EXPECT_EQ(0, early)
				TH_LOG("%s, %s: %ld calls returned before their deadline",
				       policy_name(all_policies[p]), cases[i].desc, early);
			EXPECT_GE(ru.ru_nvcsw - nvcsw0, SLEEP_CALLS / 2)
				TH_LOG("%s, %s: did not sleep: %ld switches in %d calls",
				       policy_name(all_policies[p]), cases[i].desc,
				       ru.ru_nvcsw - nvcsw0, SLEEP_CALLS);
		}
	}
}

static const struct {
	long long sec, nsec;
	const char *desc;
} bad_timespecs[] = {
	{ 0, -1, "{0, -1}" },
	{ 0, NSEC_PER_SEC, "{0, 1000000000}" },
	{ 0, LLONG_MAX, "{0, LLONG_MAX}" },
	{ -1, 0, "{-1, 0}" },
	{ -1, 999999999, "{-1, 999999999}" },
	{ LLONG_MIN, 0, "{LLONG_MIN, 0}" },
};

static int sleep_raw(const struct sleep_call *call, int flags, const void *req, void *rem)
{
	long ret;

	if (call->nanosleep)
		ret = sys_nanosleep(req, rem);
	else
		ret = sys_clock_nanosleep(call->clk, flags, req, rem);
	return ret ? errno : 0;
}

/* Argument validation comes first and is the same under every policy. */
TEST_F(sleep, invalid_arguments)
{
	static const int modes[] = { 0, TIMER_ABSTIME };
	struct timespec ts;
	unsigned int p, m, i;
	int err;

	for (p = 0; p < ARRAY_SIZE(all_policies); p++) {
		SET_POLICY(all_policies[p]);
		for (m = 0; m < (variant->call.nanosleep ? 1 : ARRAY_SIZE(modes)); m++) {
			const char *mode = modes[m] ? "absolute" : "relative";

			for (i = 0; i < ARRAY_SIZE(bad_timespecs); i++) {
				ts.tv_sec = bad_timespecs[i].sec;
				ts.tv_nsec = bad_timespecs[i].nsec;
				err = sleep_raw(&variant->call, modes[m], &ts, NULL);
				EXPECT_EQ(EINVAL, err)
					TH_LOG("%s, %s %s: %s instead of EINVAL",
					       policy_name(all_policies[p]), mode,
					       bad_timespecs[i].desc, strerror(err));
			}
			err = sleep_raw(&variant->call, modes[m], (void *)1, NULL);
			EXPECT_EQ(EFAULT, err)
				TH_LOG("%s, %s, request (void *)1: %s instead of EFAULT",
				       policy_name(all_policies[p]), mode, strerror(err));
			err = sleep_raw(&variant->call, modes[m], NULL, NULL);
			EXPECT_EQ(EFAULT, err)
				TH_LOG("%s, %s, request NULL: %s instead of EFAULT",
				       policy_name(all_policies[p]), mode, strerror(err));
		}
		EXPECT_EQ(all_policies[p], get_policy());
	}
}

/* A successful zero-length sleep does not write *rmtp, under every policy. */
TEST_F(sleep, rmtp_not_written)
{
	const struct sleep_case *cases;
	unsigned char rem[sizeof(struct timespec) + 16], pattern[sizeof(rem)];
	unsigned int p, i, n;
	int err;

	cases = variant_cases(&variant->call, true, &n);
	memset(pattern, 0x5a, sizeof(pattern));
	for (p = 0; p < ARRAY_SIZE(all_policies); p++) {
		SET_POLICY(all_policies[p]);
		for (i = 0; i < n; i++) {
			memcpy(rem, pattern, sizeof(rem));
			err = sleep_once(&cases[i], variant->call.clk, rem, NULL);
			EXPECT_EQ(0, err)
				TH_LOG("%s, %s: %s", policy_name(all_policies[p]),
				       cases[i].desc, strerror(err));
			EXPECT_EQ(0, memcmp(rem, pattern, sizeof(rem)))
				TH_LOG("%s, %s: rmtp was written", policy_name(all_policies[p]),
				       cases[i].desc);
			/* Not written at all: an unmapped rmtp does not fault. */
			err = sleep_once(&cases[i], variant->call.clk, (void *)1, NULL);
			EXPECT_EQ(0, err)
				TH_LOG("%s, %s, rmtp (void *)1: %s", policy_name(all_policies[p]),
				       cases[i].desc, strerror(err));
		}
	}
}

/* libc's own entry points reach the same code. */
TEST(libc_entry_points)
{
	static const char * const names[] = {
		"sleep(0)", "usleep(0)", "nanosleep({0, 0})",
		"clock_nanosleep(MONOTONIC, ABSTIME, now)",
	};
	struct rusage ru0, ru1;
	struct timespec ts;
	unsigned int p, k;
	int i, calls, failures;

	for (p = 0; p < ARRAY_SIZE(all_policies); p++) {
		int policy = all_policies[p];

		/* Under FULL_SLACK with a large slack, each call sleeps. */
		SET_SLACK(policy == FULL_SLACK ? LARGE_SLACK_NS : 0);
		SET_POLICY(policy);
		calls = policy == FULL_SLACK ? SLEEP_CALLS : FAST_CALLS;
		for (k = 0; k < ARRAY_SIZE(names); k++) {
			failures = 0;
			getrusage(RUSAGE_THREAD, &ru0);
			for (i = 0; i < calls; i++) {
				switch (k) {
				case 0:
					failures += sleep(0) != 0;
					break;
				case 1:
					failures += usleep(0) != 0;
					break;
				case 2:
					ts.tv_sec = 0;
					ts.tv_nsec = 0;
					failures += nanosleep(&ts, NULL) != 0;
					break;
				default:
					clock_gettime(CLOCK_MONOTONIC, &ts);
					failures += clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME,
								    &ts, NULL) != 0;
					break;
				}
			}
			getrusage(RUSAGE_THREAD, &ru1);
			ksft_print_msg("%s, %s: %ld voluntary switches in %d calls\n",
				       policy_name(policy), names[k], ru1.ru_nvcsw - ru0.ru_nvcsw,
				       calls);
			EXPECT_EQ(0, failures);
			if (policy == FULL_SLACK) {
				EXPECT_GE(ru1.ru_nvcsw - ru0.ru_nvcsw, calls / 2)
					TH_LOG("%s did not sleep under FULL_SLACK", names[k]);
			} else {
				/* Allow one switch for a page fault of the first calls. */
				EXPECT_GE(1, ru1.ru_nvcsw - ru0.ru_nvcsw)
					TH_LOG("%s, %s: %ld voluntary switches",
					       policy_name(policy), names[k],
					       ru1.ru_nvcsw - ru0.ru_nvcsw);
			}
		}
	}
}

/*
 * Clocks that are not covered (no slack, or no nanosleep at all) behave the
 * same under every policy.
 */
TEST(other_clocks_unchanged)
{
	static const struct {
		clockid_t clk;
		const char *name;
	} clocks[] = {
		{ CLOCK_MONOTONIC_RAW, "CLOCK_MONOTONIC_RAW" },
		{ CLOCK_REALTIME_COARSE, "CLOCK_REALTIME_COARSE" },
		{ CLOCK_MONOTONIC_COARSE, "CLOCK_MONOTONIC_COARSE" },
		{ CLOCK_THREAD_CPUTIME_ID, "CLOCK_THREAD_CPUTIME_ID" },
		{ CLOCK_REALTIME_ALARM, "CLOCK_REALTIME_ALARM" },
		{ CLOCK_BOOTTIME_ALARM, "CLOCK_BOOTTIME_ALARM" },
		{ 1000, "clock 1000" },
	};
	struct timespec zero = { 0, 0 };
	int expect[ARRAY_SIZE(clocks)][2];
	unsigned int p, c, m;
	int err;

	for (p = 0; p < ARRAY_SIZE(all_policies); p++) {
		SET_POLICY(all_policies[p]);
		for (c = 0; c < ARRAY_SIZE(clocks); c++) {
			for (m = 0; m < 2; m++) {
				err = sys_clock_nanosleep(clocks[c].clk, m ? TIMER_ABSTIME : 0,
							  &zero, NULL) ? errno : 0;
				if (p == 0) {
					expect[c][m] = err;
					ksft_print_msg("%s, %s {0, 0}: %s\n", clocks[c].name,
						       m ? "absolute" : "relative",
						       err ? strerror(err) : "0");
					continue;
				}
				EXPECT_EQ(expect[c][m], err)
					TH_LOG("%s, %s, %s {0, 0}: %s, but %s under FULL_SLACK",
					       policy_name(all_policies[p]), clocks[c].name,
					       m ? "absolute" : "relative", strerror(err),
					       strerror(expect[c][m]));
			}
		}
	}
}

/* ------------------------------------------------------------------------
 * SCHEDULE passes through the scheduler once (SPEC 3.3, 3.4)
 */

/*
 * Two SCHED_FIFO threads of equal priority on one CPU.  A loops on zero
 * sleeps and notes, after each, whether B's counter moved; B counts and
 * yields.  FIFO threads of equal priority run until they block or yield, so
 * under SCHEDULE each zero sleep of A hands the CPU to B, and under RETURN B
 * does not run at all while A loops.  Every loop is bounded, and another
 * CPU stays free.
 */
#define FIFO_PRIO		10
#define FIFO_ITERATIONS		1000
#define FIFO_B_LIMIT_NS		(2 * NSEC_PER_SEC)

struct fifo_pair {
	int policy;
	unsigned long counter;	/* B's iterations */
	unsigned long done;	/* A has finished */
	int a_err;
	int a_calls;
	int advanced;		/* A's iterations during which B ran */
};

static void *fifo_a(void *arg)
{
	struct fifo_pair *p = arg;
	struct timespec zero = { 0, 0 };
	unsigned long prev, cur;
	int i;

	if (set_policy(p->policy)) {
		p->a_err = errno;
		goto out;
	}
	prev = load(&p->counter);
	for (i = 0; i < FIFO_ITERATIONS; i++) {
		if (sys_nanosleep(&zero, NULL)) {
			p->a_err = errno;
			break;
		}
		cur = load(&p->counter);
		p->advanced += cur != prev;
		prev = cur;
		p->a_calls++;
	}
out:
	store(&p->done, 1);
	return NULL;
}

static void *fifo_b(void *arg)
{
	struct fifo_pair *p = arg;
	int64_t end = now_ns() + FIFO_B_LIMIT_NS;
	unsigned long i;

	for (i = 1; !load(&p->done); i++) {
		store(&p->counter, i);
		sched_yield();
		if (!(i & 255) && now_ns() > end)
			break;
	}
	return NULL;
}

/* Returns 0, or a pthread error number (EPERM without CAP_SYS_NICE). */
static int fifo_round(struct __test_metadata *_metadata, int busy, int policy,
		      struct fifo_pair *p)
{
	pthread_t a, b;
	int ret, i;

	memset(p, 0, sizeof(*p));
	p->policy = policy;
	ret = start_thread(&b, fifo_b, p, busy, SCHED_FIFO, FIFO_PRIO);
	if (ret)
		return ret;
	/* Let B spin first, so that A queues up behind it. */
	for (i = 0; i < 2000 && !load(&p->counter); i++)
		usleep(1000);
	ret = start_thread(&a, fifo_a, p, busy, SCHED_FIFO, FIFO_PRIO);
	if (ret) {
		store(&p->done, 1);
		pthread_join(b, NULL);
		return ret;
	}
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	EXPECT_EQ(0, p->a_err)
		TH_LOG("thread A: %s", strerror(p->a_err));
	return 0;
}

static void fifo_test(struct __test_metadata *_metadata, int policy)
{
	struct fifo_pair p;
	int busy, spare, attempt, ret;
	bool ok = false;

	if (!pick_cpus(&busy, &spare))
		SKIP(return, "needs two CPUs");
	ASSERT_EQ(0, pin_self(spare));
	/* No page fault may block thread A. */
	if (mlockall(MCL_CURRENT | MCL_FUTURE))
		ksft_print_msg("mlockall: %s\n", strerror(errno));

	for (attempt = 1; attempt <= 3 && !ok; attempt++) {
		ret = fifo_round(_metadata, busy, policy, &p);
		if (ret == EPERM && !is_root())
			SKIP(return, "SCHED_FIFO needs CAP_SYS_NICE");
		ASSERT_EQ(0, ret)
			TH_LOG("creating a SCHED_FIFO thread: %s", strerror(ret));
		ASSERT_EQ(FIFO_ITERATIONS, p.a_calls);
		ksft_print_msg("%s, round %d: the other FIFO thread ran in %d of %d zero sleeps\n",
			       policy_name(policy), attempt, p.advanced, p.a_calls);
		if (policy == SCHEDULE)
			ok = p.advanced >= p.a_calls * 9 / 10;
		else
			ok = p.advanced == 0;
	}
	if (policy == SCHEDULE) {
		EXPECT_TRUE(ok)
			TH_LOG("SCHEDULE: the other FIFO thread ran in only %d of %d calls",
			       p.advanced, p.a_calls);
	} else {
		EXPECT_TRUE(ok)
			TH_LOG("RETURN: the other FIFO thread ran during %d of %d zero sleeps",
			       p.advanced, p.a_calls);
	}
}

TEST(schedule_lets_equal_fifo_thread_run)
{
	fifo_test(_metadata, SCHEDULE);
}

TEST(return_keeps_cpu_from_equal_fifo_thread)
{
	fifo_test(_metadata, RETURN);
}

/*
 * A SCHED_OTHER CPU hog on the same CPU: while this thread loops on zero
 * sleeps under SCHEDULE, the hog gets most of the CPU; under RETURN the loop
 * is a busy loop, and the two share the CPU.
 *
 * The hog's share of the CPU is its CPU time over the wall time.  It is
 * judged by that rather than by the hog's iterations (which are logged
 * too): when a virtual CPU stalls, the time is still charged to one of the
 * two threads, and the scheduler keeps the shares fair over time, whereas
 * the iterations are simply lost.  RETURN and SCHEDULE phases alternate,
 * and the shares are summed over the pairs of phases, since a stall charged
 * in one phase is paid back in the next ones; the pairs with the lowest and
 * the highest ratio are left out.
 */
#define HOG_PHASE_NS		(250 * NSEC_PER_MSEC)
#define HOG_PAIRS		8
#define HOG_LIMIT_NS		(20 * NSEC_PER_SEC)
#define MIN_HOG_GAIN		1.5

struct hog {
	unsigned long count;
	unsigned long stop;
	clockid_t cpu_clock;	/* the hog thread's CPU-time clock */
};

struct hog_phase {
	int64_t cpu;		/* hog CPU time */
	int64_t wall;		/* wall time */
	unsigned long work;	/* hog iterations */
};

static void *hog_fn(void *arg)
{
	struct hog *h = arg;
	int64_t end = now_ns() + HOG_LIMIT_NS;
	unsigned long n = 0;

	while (!load(&h->stop)) {
		store(&h->count, ++n);
		if (!(n & 0xffff) && now_ns() > end)
			break;
	}
	return NULL;
}

/* One phase of zero sleeps under @policy, or of sleeping (policy -1). */
static struct hog_phase hog_phase(struct hog *h, int policy, int *failures)
{
	struct timespec zero = { 0, 0 }, phase = ns_ts(HOG_PHASE_NS);
	struct hog_phase r;
	int64_t t0, t1, cpu0, cpu1;
	unsigned long c0, c1;

	if (policy >= 0 && set_policy(policy))
		(*failures)++;
	c0 = load(&h->count);
	cpu0 = clock_ns(h->cpu_clock);
	t0 = now_ns();
	if (policy < 0) {
		nanosleep(&phase, NULL);
	} else {
		do {
			if (sys_nanosleep(&zero, NULL))
				(*failures)++;
		} while (now_ns() - t0 < HOG_PHASE_NS);
	}
	c1 = load(&h->count);
	cpu1 = clock_ns(h->cpu_clock);
	t1 = now_ns();
	if (cpu0 < 0 || cpu1 < 0)
		(*failures)++;
	r.cpu = cpu1 - cpu0;
	r.wall = t1 - t0;
	r.work = c1 - c0;
	return r;
}

static void hog_add(struct hog_phase *sum, const struct hog_phase *p)
{
	sum->cpu += p->cpu;
	sum->wall += p->wall;
	sum->work += p->work;
}

static double hog_share(const struct hog_phase *p)
{
	return p->wall ? (double)p->cpu / p->wall : 0;
}

static double hog_rate(const struct hog_phase *p)
{
	return p->wall ? (double)p->work * NSEC_PER_SEC / p->wall : 0;
}

TEST(schedule_gives_cpu_to_other_task)
{
	struct hog_phase solo, again, ret[HOG_PAIRS], sched[HOG_PAIRS];
	struct hog_phase sum_ret = { 0 }, sum_sched = { 0 };
	double ratio[HOG_PAIRS], share_ratio, rate_ratio;
	int busy, spare, i, lo = 0, hi = 0, failures = 0;
	struct hog h;
	pthread_t t;

	memset(&h, 0, sizeof(h));
	if (!pick_cpus(&busy, &spare))
		busy = spare;
	ASSERT_EQ(0, pin_self(busy));
	ASSERT_EQ(0, start_thread(&t, hog_fn, &h, busy, SCHED_OTHER, 0));
	ASSERT_EQ(0, pthread_getcpuclockid(t, &h.cpu_clock));

	solo = hog_phase(&h, -1, &failures);
	for (i = 0; i < HOG_PAIRS; i++) {
		ret[i] = hog_phase(&h, RETURN, &failures);
		sched[i] = hog_phase(&h, SCHEDULE, &failures);
	}
	/* The solo rate is only for the log; a stall lowers it, so take the best. */
	again = hog_phase(&h, -1, &failures);
	if (hog_rate(&again) > hog_rate(&solo))
		solo = again;
	store(&h.stop, 1);
	pthread_join(t, NULL);

	for (i = 0; i < HOG_PAIRS; i++) {
		ratio[i] = hog_share(&sched[i]) / (hog_share(&ret[i]) ?: 1);
		if (ratio[i] < ratio[lo])
			lo = i;
		if (ratio[i] >= ratio[hi])
			hi = i;
		ksft_print_msg("CPU hog, pair %d: CPU share RETURN %.0f%%, SCHEDULE %.0f%%\n",
			       i + 1, 100 * hog_share(&ret[i]), 100 * hog_share(&sched[i]));
	}
	if (lo == hi)	/* all equal */
		hi = (lo + 1) % HOG_PAIRS;
	for (i = 0; i < HOG_PAIRS; i++) {
		if (i == lo || i == hi)
			continue;
		hog_add(&sum_ret, &ret[i]);
		hog_add(&sum_sched, &sched[i]);
	}
	share_ratio = hog_share(&sum_sched) / (hog_share(&sum_ret) ?: 1);
	rate_ratio = hog_rate(&sum_sched) / (hog_rate(&sum_ret) ?: 1);
	ksft_print_msg("CPU hog, but pairs %d and %d: CPU share RETURN %.0f%%, SCHEDULE %.0f%%\n",
		       lo + 1, hi + 1, 100 * hog_share(&sum_ret), 100 * hog_share(&sum_sched));
	ksft_print_msg("CPU hog: work RETURN %.0f%%, SCHEDULE %.0f%% of solo: ratio %.2f\n",
		       100 * hog_rate(&sum_ret) / (hog_rate(&solo) ?: 1),
		       100 * hog_rate(&sum_sched) / (hog_rate(&solo) ?: 1), rate_ratio);
	ksft_print_msg("CPU hog: ratio SCHEDULE/RETURN of the CPU share %.2f\n", share_ratio);
	EXPECT_EQ(0, failures);
	EXPECT_GE(share_ratio, MIN_HOG_GAIN)
		TH_LOG("the hog got %.2f times as much CPU under SCHEDULE as under RETURN",
		       share_ratio);
}

/*
 * RT and deadline tasks follow their policy too, and SCHEDULE yields within
 * their class.  For SCHED_DEADLINE, a yield gives up the rest of the
 * current period, so each zero sleep under SCHEDULE waits for the next one.
 */
struct dl_attr {
	uint32_t size;
	uint32_t sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime;
	uint64_t sched_deadline;
	uint64_t sched_period;
};

#define DL_RUNTIME_NS		(5 * NSEC_PER_MSEC)
#define DL_PERIOD_NS		(10 * NSEC_PER_MSEC)
#define DL_SCHED_CALLS		10

struct dl_result {
	int setattr_err;
	int policy_err;
	struct loop_result ret, sched;
};

static void *dl_thread(void *arg)
{
	static const struct sleep_case zero = { NS_REL, 0, "nanosleep {0, 0}", true };
	struct dl_result *r = arg;
	struct dl_attr attr = {
		.size = sizeof(attr),
		.sched_policy = SCHED_DEADLINE,
		.sched_runtime = DL_RUNTIME_NS,
		.sched_deadline = DL_PERIOD_NS,
		.sched_period = DL_PERIOD_NS,
	};

	if (syscall(SYS_sched_setattr, 0, &attr, 0)) {
		r->setattr_err = errno;
		return NULL;
	}
	if (set_policy(RETURN))
		r->policy_err = errno;
	nosleep_loop(&zero, CLOCK_MONOTONIC, RATIO_FAST_CALLS, &r->ret);
	if (set_policy(SCHEDULE))
		r->policy_err = errno;
	/* Start at the beginning of a period. */
	sched_yield();
	sleep_loop(&zero, CLOCK_MONOTONIC, DL_SCHED_CALLS, &r->sched);
	return NULL;
}

TEST(deadline_task_follows_policy)
{
	struct dl_result r;
	pthread_t t;
	double ratio;

	memset(&r, 0, sizeof(r));
	ASSERT_EQ(0, start_thread(&t, dl_thread, &r, -1, SCHED_OTHER, 0));
	pthread_join(t, NULL);
	if (r.setattr_err == EPERM && !is_root())
		SKIP(return, "SCHED_DEADLINE needs CAP_SYS_NICE");
	ASSERT_EQ(0, r.setattr_err)
		TH_LOG("sched_setattr(SCHED_DEADLINE): %s", strerror(r.setattr_err));
	ASSERT_EQ(0, r.policy_err)
		TH_LOG("PR_SET_TIMERSLACK_ZERO_POLICY: %s", strerror(r.policy_err));
	ratio = per_call(r.sched.ns, r.sched.calls) / per_call(r.ret.ns ?: 1, r.ret.calls);
	ksft_print_msg("SCHED_DEADLINE, RETURN: %.1f us/call, %ld voluntary switches\n",
		       per_call(r.ret.ns, r.ret.calls) / NSEC_PER_USEC, r.ret.nvcsw);
	ksft_print_msg("SCHED_DEADLINE, SCHEDULE: %.0f us/call, switches %ld voluntary %ld other\n",
		       per_call(r.sched.ns, r.sched.calls) / NSEC_PER_USEC, r.sched.nvcsw,
		       r.sched.nivcsw);
	ksft_print_msg("SCHED_DEADLINE, %lld ms period: ratio SCHEDULE/RETURN %.0f\n",
		       DL_PERIOD_NS / NSEC_PER_MSEC, ratio);
	EXPECT_NO_FAILURES(&r.ret, "RETURN");
	EXPECT_NO_FAILURES(&r.sched, "SCHEDULE");
	EXPECT_EQ(0, r.ret.nvcsw)
		TH_LOG("RETURN: a deadline task slept %ld times", r.ret.nvcsw);
	EXPECT_EQ(0, r.sched.nvcsw)
		TH_LOG("SCHEDULE: a deadline task slept %ld times", r.sched.nvcsw);
	/* Each yield waits for the next period. */
	EXPECT_GE(ratio, MIN_SPEEDUP)
		TH_LOG("SCHEDULE: a deadline task did not give up its period (%.1f)",
		       ratio);
}

/* A SCHED_FIFO thread alone on its CPU: RETURN and SCHEDULE never sleep. */
#define MIN_RT_SPEEDUP		3
struct fifo_alone {
	struct loop_result r[ARRAY_SIZE(all_policies)];
	int err;
};

static void *fifo_alone_fn(void *arg)
{
	static const struct sleep_case zero = { CLK_ABS, 0, "absolute, deadline = now", true };
	struct fifo_alone *f = arg;
	unsigned int p;

	for (p = 0; p < ARRAY_SIZE(all_policies); p++) {
		if (set_policy(all_policies[p]))
			f->err = errno;
		if (all_policies[p] == FULL_SLACK)
			sleep_loop(&zero, CLOCK_MONOTONIC, RATIO_FAST_CALLS, &f->r[p]);
		else
			nosleep_loop(&zero, CLOCK_MONOTONIC, RATIO_FAST_CALLS, &f->r[p]);
	}
	return NULL;
}

TEST(fifo_task_follows_policy)
{
	struct fifo_alone f;
	int busy, spare, ret;
	unsigned int p;
	double ratio;
	pthread_t t;

	if (!pick_cpus(&busy, &spare))
		SKIP(return, "needs two CPUs");
	ASSERT_EQ(0, pin_self(spare));
	memset(&f, 0, sizeof(f));
	ret = start_thread(&t, fifo_alone_fn, &f, busy, SCHED_FIFO, FIFO_PRIO);
	if (ret == EPERM && !is_root())
		SKIP(return, "SCHED_FIFO needs CAP_SYS_NICE");
	ASSERT_EQ(0, ret);
	pthread_join(t, NULL);
	ASSERT_EQ(0, f.err);
	for (p = 0; p < ARRAY_SIZE(all_policies); p++) {
		ksft_print_msg("SCHED_FIFO, %s: %ld voluntary switches in %d calls, %.1f us/call\n",
			       policy_name(all_policies[p]), f.r[p].nvcsw, f.r[p].calls,
			       per_call(f.r[p].ns, f.r[p].calls) / NSEC_PER_USEC);
		EXPECT_NO_FAILURES(&f.r[p], policy_name(all_policies[p]));
		if (all_policies[p] == FULL_SLACK)
			continue;
		EXPECT_EQ(0, f.r[p].nvcsw)
			TH_LOG("SCHED_FIFO, %s: %ld voluntary switches",
			       policy_name(all_policies[p]), f.r[p].nvcsw);
	}
	/*
	 * With zero slack, a FULL_SLACK zero sleep still arms a timer and
	 * waits for its interrupt, which may come before the thread has
	 * switched out: judge it by time only, with a low bar.
	 */
	ratio = per_call(f.r[0].ns, f.r[0].calls) / per_call(f.r[1].ns ?: 1, f.r[1].calls);
	ksft_print_msg("SCHED_FIFO: ratio FULL_SLACK/RETURN %.1f\n", ratio);
	EXPECT_GE(ratio, MIN_RT_SPEEDUP)
		TH_LOG("SCHED_FIFO: RETURN only %.1f times faster than FULL_SLACK", ratio);
}

/*
 * A zero-length sleep under RETURN or SCHEDULE never fails with EINTR.
 * SIGALRM comes every 0.5 ms; each loop runs until enough signals have
 * arrived, whatever the speed of the machine.
 */
#define EINTR_SIGNALS		100
#define EINTR_MIN_CALLS		1000
#define EINTR_LIMIT_NS		(10 * NSEC_PER_SEC)

static unsigned long alarms;

static void on_alarm(int sig)
{
	(void)sig;
	__atomic_fetch_add(&alarms, 1, __ATOMIC_RELAXED);
}

TEST(no_eintr)
{
	static const struct sleep_case cases[] = {
		{ NS_REL, 0, "nanosleep {0, 0}", true },
		{ CLK_ABS, 0, "absolute, deadline = now", true },
	};
	struct itimerval it = {
		.it_interval = { 0, 500 },
		.it_value = { 0, 500 },
	}, off = { { 0, 0 }, { 0, 0 } };
	struct sigaction sa = { .sa_handler = on_alarm };	/* no SA_RESTART */
	unsigned int p, i;
	long calls, eintr, other, min_calls;
	int64_t t0;
	int err, sigs;

	ASSERT_EQ(0, sigaction(SIGALRM, &sa, NULL));
	for (p = 0; p < ARRAY_SIZE(all_policies); p++) {
		int policy = all_policies[p];

		SET_SLACK(policy == FULL_SLACK ? LARGE_SLACK_NS : 0);
		SET_POLICY(policy);
		min_calls = policy == FULL_SLACK ? 0 : EINTR_MIN_CALLS;
		for (i = 0; i < ARRAY_SIZE(cases); i++) {
			calls = 0;
			eintr = 0;
			other = 0;
			store(&alarms, 0);
			ASSERT_EQ(0, setitimer(ITIMER_REAL, &it, NULL));
			t0 = now_ns();
			do {
				err = sleep_once(&cases[i], CLOCK_MONOTONIC, NULL, NULL);
				calls++;
				if (err == EINTR)
					eintr++;
				else if (err)
					other++;
			} while ((load(&alarms) < EINTR_SIGNALS || calls < min_calls) &&
				 now_ns() - t0 < EINTR_LIMIT_NS);
			ASSERT_EQ(0, setitimer(ITIMER_REAL, &off, NULL));
			sigs = load(&alarms);
			ksft_print_msg("%s, %s: %d SIGALRM, %ld calls, %ld EINTR\n",
				       policy_name(policy), cases[i].desc, sigs, calls, eintr);
			EXPECT_EQ(0, other);
			EXPECT_LE(EINTR_SIGNALS, sigs)
				TH_LOG("too few signals (%d) to judge", sigs);
			if (policy == FULL_SLACK) {
				/* A control: these sleeps are long and get interrupted. */
				EXPECT_LT(0, eintr)
					TH_LOG("FULL_SLACK: no sleep was interrupted");
			} else {
				EXPECT_EQ(0, eintr)
					TH_LOG("%s: %ld of %ld zero sleeps failed with EINTR",
					       policy_name(policy), eintr, calls);
			}
		}
	}
}

#ifdef __x86_64__
/* The IA-32 entry points (nanosleep and clock_nanosleep with time32, and time64). */
TEST(compat_entry_points)
{
	static const struct sleep_case cases[] = {
		{ C32_NS_REL, 0, "ia32 nanosleep {0, 0}", true },
		{ C32_CLK_REL, 0, "ia32 clock_nanosleep relative {0, 0}", true },
		{ C32_CLK_ABS, 0, "ia32 clock_nanosleep absolute, deadline = now", true },
		{ C64_CLK_REL, 0, "ia32 clock_nanosleep_time64 relative {0, 0}", true },
		{ C64_CLK_ABS, 0, "ia32 clock_nanosleep_time64 absolute, deadline = now", true },
	};
	static const struct sleep_case bad[] = {
		{ C32_NS_REL, -1, "ia32 nanosleep {0, -1}", false },
		{ C32_CLK_REL, -1, "ia32 clock_nanosleep {0, -1}", false },
		{ C64_CLK_REL, -1, "ia32 clock_nanosleep_time64 {0, -1}", false },
	};
	struct loop_result r;
	unsigned int p, i;
	int status, err;
	pid_t pid;

	/* A kernel without IA-32 emulation kills the caller of int $0x80. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(int80(NR32_getpid, 0, 0, 0, 0) == getpid() ? 0 : 1);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	if (WIFSIGNALED(status))
		SKIP(return, "no IA-32 emulation (CONFIG_IA32_EMULATION)");
	ASSERT_EQ(0, WEXITSTATUS(status));

	compat_buf = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	ASSERT_NE(MAP_FAILED, compat_buf);

	for (p = 0; p < ARRAY_SIZE(all_policies); p++) {
		int policy = all_policies[p];

		SET_SLACK(policy == FULL_SLACK ? LARGE_SLACK_NS : 0);
		SET_POLICY(policy);
		for (i = 0; i < ARRAY_SIZE(cases); i++) {
			if (policy == FULL_SLACK)
				sleep_loop(&cases[i], CLOCK_MONOTONIC, SLEEP_CALLS, &r);
			else
				nosleep_loop(&cases[i], CLOCK_MONOTONIC, RATIO_FAST_CALLS, &r);
			ksft_print_msg("%s, %s: %ld voluntary switches in %d calls\n",
				       policy_name(policy), cases[i].desc, r.nvcsw, r.calls);
			EXPECT_NO_FAILURES(&r, cases[i].desc);
			if (policy == FULL_SLACK) {
				EXPECT_GE(r.nvcsw, r.calls / 2)
					TH_LOG("FULL_SLACK, %s: did not sleep", cases[i].desc);
			} else {
				EXPECT_EQ(0, r.nvcsw)
					TH_LOG("%s, %s: slept", policy_name(policy), cases[i].desc);
			}
		}
		for (i = 0; i < ARRAY_SIZE(bad); i++) {
			err = sleep_once(&bad[i], CLOCK_MONOTONIC, NULL, NULL);
			EXPECT_EQ(EINVAL, err)
				TH_LOG("%s, %s: %s instead of EINVAL", policy_name(policy),
				       bad[i].desc, strerror(err));
		}
	}
	munmap(compat_buf, 4096);
}
#endif

/*
 * In a time namespace, an absolute deadline is compared with the clock as
 * the namespace sees it.  Deadlines at the namespace's "now" are zero-length
 * sleeps, and deadlines after it are not, whichever way the offset goes.
 */
static int timens_check(int64_t offset_ns, int64_t host_mono)
{
	static const clockid_t clocks[] = { CLOCK_MONOTONIC, CLOCK_BOOTTIME };
	static const struct sleep_case now_case = { CLK_ABS, 0, "deadline = now", true };
	static const struct sleep_case future = { CLK_ABS, NSEC_PER_MSEC, "now + 1 ms", false };
	static const int policies[] = { RETURN, SCHEDULE };
	int64_t ns_mono, deadline, after;
	struct loop_result r;
	struct rusage ru0, ru1;
	unsigned int c, p;
	int i, fails = 0, err, early;

	alarm(10);	/* a deadline misread by the offset would sleep for long */
	ns_mono = clock_ns(CLOCK_MONOTONIC);
	if (ns_mono - host_mono < offset_ns ||
	    ns_mono - host_mono > offset_ns + 30 * NSEC_PER_SEC) {
		ksft_print_msg("time namespace offset %+lld s not in effect: %lld vs %lld\n",
			       (long long)(offset_ns / NSEC_PER_SEC), (long long)ns_mono,
			       (long long)host_mono);
		return 1;
	}
	for (p = 0; p < ARRAY_SIZE(policies); p++) {
		if (set_policy(policies[p]))
			return 2;
		for (c = 0; c < ARRAY_SIZE(clocks); c++) {
			const char *cn = clocks[c] == CLOCK_MONOTONIC ? "CLOCK_MONOTONIC" :
				"CLOCK_BOOTTIME";

			nosleep_loop(&now_case, clocks[c], RATIO_FAST_CALLS, &r);
			ksft_print_msg("timens %+llds, %s, %s, now: %ld/%d calls slept\n",
				       (long long)(offset_ns / NSEC_PER_SEC),
				       policy_name(policies[p]), cn, r.nvcsw, r.calls);
			if (r.failures || r.nvcsw) {
				ksft_print_msg("FAIL: %d failures (%s), %ld voluntary switches\n",
					       r.failures, strerror(r.first_err), r.nvcsw);
				fails++;
			}

			early = 0;
			getrusage(RUSAGE_THREAD, &ru0);
			for (i = 0; i < SLEEP_CALLS; i++) {
				err = sleep_once(&future, clocks[c], NULL, &deadline);
				after = clock_ns(clocks[c]);
				if (err)
					fails++;
				early += after < deadline;
			}
			getrusage(RUSAGE_THREAD, &ru1);
			ksft_print_msg("timens %+llds, %s, %s, now + 1ms: %ld/%d slept, %d early\n",
				       (long long)(offset_ns / NSEC_PER_SEC),
				       policy_name(policies[p]), cn, ru1.ru_nvcsw - ru0.ru_nvcsw,
				       SLEEP_CALLS, early);
			if (early || ru1.ru_nvcsw - ru0.ru_nvcsw < SLEEP_CALLS / 2) {
				ksft_print_msg("FAIL: a future deadline did not sleep\n");
				fails++;
			}
		}
	}
	return fails ? 3 : 0;
}

TEST(time_namespace)
{
	int64_t offsets[2], host_mono, boot;
	unsigned int i;
	int status;
	pid_t pid;

	if (access("/proc/self/ns/time", F_OK))
		SKIP(return, "no time namespaces (CONFIG_TIME_NS)");
	if (!is_root())
		SKIP(return, "time namespaces need CAP_SYS_ADMIN");
	/* The negative offset must keep the namespace's clocks positive. */
	boot = clock_ns(CLOCK_MONOTONIC);
	if (boot < 3 * NSEC_PER_SEC) {
		struct timespec wait = ns_ts(3 * NSEC_PER_SEC - boot);

		nanosleep(&wait, NULL);
	}
	offsets[0] = 1000 * NSEC_PER_SEC;
	offsets[1] = -(clock_ns(CLOCK_MONOTONIC) / NSEC_PER_SEC - 1) * NSEC_PER_SEC;

	for (i = 0; i < ARRAY_SIZE(offsets); i++) {
		pid = fork();
		ASSERT_LE(0, pid);
		if (pid == 0) {
			char buf[128];
			pid_t gc;
			int fd, len;

			if (unshare(CLONE_NEWTIME)) {
				ksft_print_msg("unshare(CLONE_NEWTIME): %s\n", strerror(errno));
				_exit(10);
			}
			len = snprintf(buf, sizeof(buf), "%d %lld 0\n%d %lld 0\n",
				       CLOCK_MONOTONIC, (long long)(offsets[i] / NSEC_PER_SEC),
				       CLOCK_BOOTTIME, (long long)(offsets[i] / NSEC_PER_SEC));
			fd = open("/proc/self/timens_offsets", O_WRONLY);
			if (fd < 0 || write(fd, buf, len) != len) {
				ksft_print_msg("timens_offsets: %s\n", strerror(errno));
				_exit(11);
			}
			close(fd);
			host_mono = clock_ns(CLOCK_MONOTONIC);
			gc = fork();
			if (gc < 0)
				_exit(12);
			if (gc == 0)
				_exit(timens_check(offsets[i], host_mono));
			if (waitpid(gc, &status, 0) != gc)
				_exit(13);
			if (WIFSIGNALED(status)) {
				ksft_print_msg("killed by signal %d\n", WTERMSIG(status));
				_exit(14);
			}
			_exit(WEXITSTATUS(status));
		}
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_TRUE(WIFEXITED(status));
		/*
		 * 1: offset not applied, 2: prctl failed, 3: a sleep misbehaved,
		 * 10: no CONFIG_TIME_NS, 14: a sleep hung
		 */
		EXPECT_EQ(0, WEXITSTATUS(status))
			TH_LOG("offset %+lld s: exit %d",
			       (long long)(offsets[i] / NSEC_PER_SEC), WEXITSTATUS(status));
	}
}

/* ------------------------------------------------------------------------
 * Scope: per thread, inherited, kept across execve (SPEC 3.4)
 */

static void *report_policy(void *arg)
{
	*(int *)arg = get_policy();
	return NULL;
}

TEST(inherited_by_new_threads)
{
	unsigned int i;
	pthread_t t;
	int got;

	for (i = 0; i < ARRAY_SIZE(all_policies); i++) {
		SET_POLICY(all_policies[i]);
		got = -2;
		ASSERT_EQ(0, pthread_create(&t, NULL, report_policy, &got));
		ASSERT_EQ(0, pthread_join(t, NULL));
		EXPECT_EQ(all_policies[i], got)
			TH_LOG("a new thread of a %s thread has policy %d",
			       policy_name(all_policies[i]), got);
	}
}

struct indep {
	pthread_barrier_t step;
	int t1_after_set, t1_after_main, t2_of_t1, t2_of_main;
	int err;
};

static void *indep_t1(void *arg)
{
	struct indep *s = arg;
	pthread_t t2;

	if (set_policy(RETURN))
		s->err = errno;
	s->t1_after_set = get_policy();
	/* A thread inherits from the thread that creates it. */
	if (pthread_create(&t2, NULL, report_policy, &s->t2_of_t1) ||
	    pthread_join(t2, NULL))
		s->err = -1;
	pthread_barrier_wait(&s->step);	/* 1: T1 has set RETURN */
	pthread_barrier_wait(&s->step);	/* 2: main has set FULL_SLACK */
	s->t1_after_main = get_policy();
	return NULL;
}

TEST(threads_are_independent)
{
	struct indep s = { .t2_of_t1 = -2, .t2_of_main = -2 };
	pthread_t t1, t2;

	ASSERT_EQ(0, pthread_barrier_init(&s.step, NULL, 2));
	SET_POLICY(SCHEDULE);
	ASSERT_EQ(0, pthread_create(&t1, NULL, indep_t1, &s));
	pthread_barrier_wait(&s.step);
	EXPECT_EQ(SCHEDULE, get_policy())
		TH_LOG("another thread's SET changed this thread");
	ASSERT_EQ(0, pthread_create(&t2, NULL, report_policy, &s.t2_of_main));
	ASSERT_EQ(0, pthread_join(t2, NULL));
	SET_POLICY(FULL_SLACK);
	pthread_barrier_wait(&s.step);
	ASSERT_EQ(0, pthread_join(t1, NULL));
	pthread_barrier_destroy(&s.step);

	ASSERT_EQ(0, s.err);
	EXPECT_EQ(RETURN, s.t1_after_set);
	EXPECT_EQ(RETURN, s.t2_of_t1)
		TH_LOG("a thread created by a RETURN thread has %d", s.t2_of_t1);
	EXPECT_EQ(SCHEDULE, s.t2_of_main)
		TH_LOG("a thread created by a SCHEDULE thread has %d", s.t2_of_main);
	EXPECT_EQ(RETURN, s.t1_after_main)
		TH_LOG("main thread's SET changed another thread to %d", s.t1_after_main);
	EXPECT_EQ(FULL_SLACK, get_policy());
}

/* Exit status of a child: the policy it sees (255 for an error). */
static int child_policy_status(struct __test_metadata *_metadata, pid_t pid)
{
	int status;

	ASSERT_LE(0, pid);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	return WEXITSTATUS(status);
}

TEST(inherited_across_fork_and_vfork)
{
	unsigned int i;
	pid_t pid;

	for (i = 0; i < ARRAY_SIZE(all_policies); i++) {
		SET_POLICY(all_policies[i]);
		pid = fork();
		if (pid == 0)
			_exit(get_policy() & 0xff);
		EXPECT_EQ(all_policies[i], child_policy_status(_metadata, pid))
			TH_LOG("fork");
		pid = vfork();
		if (pid == 0)
			_exit(get_policy() & 0xff);
		EXPECT_EQ(all_policies[i], child_policy_status(_metadata, pid))
			TH_LOG("vfork");
		/* The child's own change does not reach the parent. */
		pid = fork();
		if (pid == 0) {
			set_policy((all_policies[i] + 1) % 3);
			_exit(get_policy() & 0xff);
		}
		EXPECT_EQ((all_policies[i] + 1) % 3, child_policy_status(_metadata, pid));
		EXPECT_EQ(all_policies[i], get_policy());
	}
}

static void *fork_from_thread(void *arg)
{
	int *status = arg;
	pid_t pid;

	if (set_policy(RETURN)) {
		*status = -1;
		return NULL;
	}
	pid = fork();
	if (pid == 0)
		_exit(get_policy() & 0xff);
	if (pid < 0 || waitpid(pid, status, 0) != pid)
		*status = -1;
	return NULL;
}

TEST(fork_from_thread_inherits_its_policy)
{
	int status = -1;
	pthread_t t;

	SET_POLICY(SCHEDULE);
	ASSERT_EQ(0, pthread_create(&t, NULL, fork_from_thread, &status));
	ASSERT_EQ(0, pthread_join(t, NULL));
	ASSERT_NE(-1, status);
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(RETURN, WEXITSTATUS(status))
		TH_LOG("child forked by a RETURN thread of a SCHEDULE process has %d",
		       WEXITSTATUS(status));
}

/*
 * Runs this program again as "<self> --print-policy", with stdout to a pipe,
 * and returns what it printed (the policy it started with), or -1.
 */
static char self_exe[PATH_MAX];

static int exec_and_read_policy(bool use_vfork)
{
	char *const argv[] = { self_exe, PRINT_POLICY_ARG, NULL };
	char *const envp[] = { NULL };
	char buf[32];
	int fds[2], status, n;
	pid_t pid;

	if (pipe(fds))
		return -1;
	pid = use_vfork ? vfork() : fork();
	if (pid == 0) {
		if (dup2(fds[1], STDOUT_FILENO) < 0)
			_exit(127);
		execve(self_exe, argv, envp);
		_exit(127);
	}
	close(fds[1]);
	n = pid < 0 ? -1 : read(fds[0], buf, sizeof(buf) - 1);
	close(fds[0]);
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) || n < 2 || buf[n - 1] != '\n')
		return -1;
	buf[n] = '\0';
	return atoi(buf);
}

static bool find_self(void)
{
	ssize_t n = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);

	if (n <= 0)
		return false;
	self_exe[n] = '\0';
	return true;
}

TEST(kept_across_execve)
{
	unsigned int i;

	ASSERT_TRUE(find_self());
	for (i = 0; i < ARRAY_SIZE(all_policies); i++) {
		SET_POLICY(all_policies[i]);
		EXPECT_EQ(all_policies[i], exec_and_read_policy(false))
			TH_LOG("fork + execve under %s", policy_name(all_policies[i]));
		EXPECT_EQ(all_policies[i], exec_and_read_policy(true))
			TH_LOG("vfork + execve under %s", policy_name(all_policies[i]));
	}
}

static void *exec_from_thread(void *arg)
{
	char *const argv[] = { self_exe, PRINT_POLICY_ARG, NULL };
	char *const envp[] = { NULL };

	(void)arg;
	if (set_policy(RETURN))
		_exit(126);
	execve(self_exe, argv, envp);
	_exit(127);
}

/* execve() from a thread other than the leader keeps that thread's policy. */
TEST(kept_across_execve_from_thread)
{
	char buf[32];
	int fds[2], status, n;
	pthread_t t;
	pid_t pid;

	ASSERT_TRUE(find_self());
	ASSERT_EQ(0, pipe(fds));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (set_policy(SCHEDULE) || dup2(fds[1], STDOUT_FILENO) < 0)
			_exit(125);
		if (pthread_create(&t, NULL, exec_from_thread, NULL))
			_exit(124);
		pthread_join(t, NULL);	/* never returns: execve() ends this thread */
		_exit(123);
	}
	close(fds[1]);
	n = read(fds[0], buf, sizeof(buf) - 1);
	close(fds[0]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	ASSERT_LT(1, n);
	buf[n] = '\0';
	EXPECT_STREQ("1\n", buf)
		TH_LOG("program run by a RETURN thread of a SCHEDULE process started with %s", buf);
}

static int print_policy(void)
{
	int policy = get_policy();

	if (policy < 0) {
		fprintf(stderr, "PR_GET_TIMERSLACK_ZERO_POLICY: %s\n", strerror(errno));
		return 1;
	}
	printf("%d\n", policy);
	return 0;
}

int main(int argc, char **argv)
{
	/* Re-executed by the execve tests. */
	if (argc == 2 && !strcmp(argv[1], PRINT_POLICY_ARG))
		return print_policy();
	return test_harness_run(argc, argv);
}
