// SPDX-License-Identifier: GPL-2.0
/*
 * PR_SET_TIMERSLACK_ZERO_POLICY and PR_GET_TIMERSLACK_ZERO_POLICY: the
 * interface, and what a zero-length nanosleep() or clock_nanosleep() does
 * under each policy.  The series carries the contract of it
 * (selftests/timers/zero_sleep_policy.c); this is the exhaustive version,
 * outside the series: every bad argument, every clock and boundary case at
 * two slacks, rmtp, signals, restarts, other clocks, inheritance (also
 * through vfork() and set-user-ID programs) and ALL_THREADS races.
 *
 * A zero-length sleep is a relative request of exactly 0 s and 0 ns, or an
 * absolute (TIMER_ABSTIME) deadline that is not in the future, on
 * CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_BOOTTIME or CLOCK_TAI.
 *
 *   DEFAULT     what the kernel does without this interface
 *   RETURN      the call returns 0 at once
 *   SCHEDULE    the thread passes through the scheduler once, then returns 0
 *   FULL_SLACK  the thread sleeps for its timer slack
 *
 * Before Linux 7.2, DEFAULT and FULL_SLACK are the same: every zero-length
 * sleep waits for the slack.  Since 7.2, commits bd5956166d20 ("hrtimer:
 * Provide hrtimer_start_range_ns_user()") and b40c927345a9 ("hrtimer: Use
 * hrtimer_start_expires_user() for hrtimer sleepers"), DEFAULT returns
 * without a context switch when the sleeper's timer would be the first to
 * expire on the CPU.  Which of the two the running kernel does is probed
 * (zs_probe_early_return()), never read from its version: a distribution
 * kernel may carry the early return before 7.2.
 *
 * Whether a thread slept is judged by its voluntary context switches
 * (getrusage(RUSAGE_THREAD)), never by how fast a call was.  The test must
 * be started under the default policy.  Some tests need root.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "common.h"
#include "harness.h"

/* A slack large enough that a sleep of that length is always seen. */
#define LARGE_SLACK_NS		(10 * NSEC_PER_MSEC)
#define DEFAULT_SLACK_NS	(50 * NSEC_PER_USEC)

#define FAST_CALLS		500
#define SLEEP_CALLS		20

#define PRINT_POLICY_ARG	"--print-policy"

enum sleep_kind {
	NS_REL,		/* nanosleep(&{0, ns}) */
	CLK_REL,	/* clock_nanosleep(clk, 0, &{0, ns}) */
	CLK_ABS,	/* clock_nanosleep(clk, TIMER_ABSTIME, &(now + ns)) */
	CLK_ABS_ZERO,	/* clock_nanosleep(clk, TIMER_ABSTIME, &{0, 0}) */
};

struct sleep_case {
	enum sleep_kind kind;
	int64_t ns;
	const char *desc;
};

static const struct sleep_case ns_zero_cases[] = {
	{ NS_REL, 0, "nanosleep {0, 0}" },
};

static const struct sleep_case clk_zero_cases[] = {
	{ CLK_REL, 0, "relative {0, 0}" },
	{ CLK_ABS, 0, "absolute, deadline = now" },
	{ CLK_ABS, -NSEC_PER_MSEC, "absolute, deadline = now - 1 ms" },
	{ CLK_ABS, -NSEC_PER_SEC, "absolute, deadline = now - 1 s" },
	{ CLK_ABS_ZERO, 0, "absolute, deadline = {0, 0}" },
};

static const struct sleep_case ns_nonzero_cases[] = {
	{ NS_REL, 1, "nanosleep {0, 1}" },
};

static const struct sleep_case clk_nonzero_cases[] = {
	{ CLK_REL, 1, "relative {0, 1}" },
	{ CLK_ABS, NSEC_PER_MSEC, "absolute, deadline = now + 1 ms" },
};

/*
 * Where a sleep waits for the slack, it does so only while the hard expiry
 * (deadline + slack) is still ahead: not for a deadline that is further in
 * the past than the slack.
 */
static bool slack_bound(const struct sleep_case *c, int64_t slack)
{
	return c->kind != CLK_ABS_ZERO && -c->ns < slack / 2;
}

/* One sleep; returns 0 or the error number.  *deadline: the absolute one used. */
static int sleep_once(const struct sleep_case *c, clockid_t clk, void *rmtp,
		      int64_t *deadline)
{
	struct timespec ts = zs_ns_ts(c->ns);
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
		t = zs_now(clk) + c->ns;
		t = t < 0 ? 0 : t;
		if (deadline)
			*deadline = t;
		ts = zs_ns_ts(t);
		ret = sys_clock_nanosleep(clk, TIMER_ABSTIME, &ts, rmtp);
		break;
	case CLK_ABS_ZERO:
		ts = zs_ns_ts(0);
		ret = sys_clock_nanosleep(clk, TIMER_ABSTIME, &ts, rmtp);
		break;
	}
	return ret ? errno : 0;
}

struct loop_result {
	int calls;
	int failures;
	int first_err;
	long nvcsw;		/* voluntary context switches during the loop */
};

static void sleep_loop(const struct sleep_case *c, clockid_t clk, int calls,
		       struct loop_result *r)
{
	long nvcsw0 = zs_nvcsw();
	int i, err;

	memset(r, 0, sizeof(*r));
	for (i = 0; i < calls; i++) {
		err = sleep_once(c, clk, NULL, NULL);
		if (err && !r->failures++)
			r->first_err = err;
	}
	r->calls = calls;
	r->nvcsw = zs_nvcsw() - nvcsw0;
}

/*
 * For loops that must not sleep: warm up, then keep the attempt with the
 * fewest voluntary switches of three.  A page fault may switch once, but
 * not in every attempt, whereas a sleeping call switches every time.
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
		if (!attempt || tmp.nvcsw < r->nvcsw)
			*r = tmp;
	}
	r->failures = failures;
	r->first_err = first_err;
}

#define EXPECT_NO_FAILURES(r, what)					\
	do {								\
		const struct loop_result *__r = (r);			\
									\
		EXPECT_EQ(0, __r->failures)				\
			TH_LOG("%s: %d of %d calls failed, first with %s", \
			       what, __r->failures, __r->calls,	\
			       strerror(__r->first_err));		\
	} while (0)

/* ------------------------------------------------------------------------
 * The prctl interface
 */

TEST(default_policy_is_default)
{
	int policy = zs_get_policy();

	ASSERT_EQ(ZS_DEFAULT, policy)
		TH_LOG("PR_GET_TIMERSLACK_ZERO_POLICY: %d (%s)", policy,
		       policy < 0 ? strerror(errno) : "started under another policy?");
}

TEST(set_get_round_trip)
{
	static const int seq[] = {
		ZS_RETURN, ZS_RETURN, ZS_SCHEDULE, ZS_FULL_SLACK, ZS_DEFAULT, ZS_SCHEDULE, ZS_DEFAULT,
		ZS_FULL_SLACK, ZS_RETURN, ZS_DEFAULT,
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(seq); i++) {
		ASSERT_EQ(0, zs_set_policy_flags(seq[i], i & 1 ? ZS_ALL_THREADS : 0))
			TH_LOG("SET %s, flags %u: %s", zs_policy_name(seq[i]), i & 1,
			       strerror(errno));
		EXPECT_EQ(seq[i], zs_get_policy())
			TH_LOG("step %u: set %s, got %d", i, zs_policy_name(seq[i]), zs_get_policy());
	}
}

static const struct {
	unsigned long a2, a3, a4, a5;
	const char *desc;
} bad_set_args[] = {
	{ 4, 0, 0, 0, "policy 4" },
	{ -1UL, 0, 0, 0, "policy -1" },
	{ INT_MAX, 0, 0, 0, "policy INT_MAX" },
	{ (unsigned long)INT_MIN, 0, 0, 0, "policy INT_MIN" },
	{ PR_SET_TIMERSLACK_ZERO_POLICY, 0, 0, 0, "policy 0x545a5053" },
#if ULONG_MAX > 0xffffffffUL
	{ 1UL << 32, 0, 0, 0, "policy 1 << 32 (0 if truncated)" },
	{ (1UL << 32) | ZS_RETURN, 0, 0, 0, "policy (1 << 32) | 1" },
	{ (1UL << 63) | ZS_FULL_SLACK, 0, 0, 0, "policy (1 << 63) | 3" },
#endif
	{ 4, ZS_ALL_THREADS, 0, 0, "policy 4, ALL_THREADS" },
	{ ZS_RETURN, 2, 0, 0, "flags 2" },
	{ ZS_RETURN, ZS_ALL_THREADS | 2, 0, 0, "flags ALL_THREADS | 2" },
	{ ZS_RETURN, 1UL << 31, 0, 0, "flags 1 << 31" },
	{ ZS_RETURN, -1UL, 0, 0, "flags -1" },
	{ ZS_RETURN, 0, 1, 0, "arg4 = 1" },
	{ ZS_RETURN, 0, 0, 1, "arg5 = 1" },
	{ ZS_SCHEDULE, ZS_ALL_THREADS, 1, 0, "ALL_THREADS, arg4 = 1" },
	{ ZS_SCHEDULE, ZS_ALL_THREADS, 0, -1UL, "ALL_THREADS, arg5 = -1" },
	{ ZS_FULL_SLACK, 0, -1UL, 0, "arg4 = -1" },
	{ ZS_DEFAULT, 0, 0, 1UL << (sizeof(long) * 8 - 1), "arg5 = top bit" },
};

/* A failed SET changes nothing, in the caller or in another thread. */
static void *report_policy(void *arg)
{
	*(int *)arg = zs_get_policy();
	return NULL;
}

TEST(set_invalid_arguments)
{
	unsigned int i, b;
	pthread_t t;
	int ret, other;

	for (b = 0; b < ZS_NR_POLICIES; b++) {
		int base = (int)b;

		for (i = 0; i < ARRAY_SIZE(bad_set_args); i++) {
			SET_POLICY(base);
			errno = 0;
			ret = prctl(PR_SET_TIMERSLACK_ZERO_POLICY, bad_set_args[i].a2,
				    bad_set_args[i].a3, bad_set_args[i].a4, bad_set_args[i].a5);
			EXPECT_EQ(-1, ret)
				TH_LOG("SET with %s under %s was accepted",
				       bad_set_args[i].desc, zs_policy_name(base));
			EXPECT_EQ(EINVAL, errno)
				TH_LOG("SET with %s: %s instead of EINVAL",
				       bad_set_args[i].desc, strerror(errno));
			EXPECT_EQ(base, zs_get_policy())
				TH_LOG("SET with %s changed %s to %d",
				       bad_set_args[i].desc, zs_policy_name(base), zs_get_policy());
			other = -2;
			ASSERT_EQ(0, pthread_create(&t, NULL, report_policy, &other));
			ASSERT_EQ(0, pthread_join(t, NULL));
			EXPECT_EQ(base, other)
				TH_LOG("after SET with %s, a new thread has %d",
				       bad_set_args[i].desc, other);
		}
	}
}

TEST(get_invalid_arguments)
{
	static const unsigned long vals[] = { 1, 2, -1UL };
	unsigned long a[4];
	unsigned int b, pos, v;

	for (b = 0; b < ZS_NR_POLICIES; b++) {
		SET_POLICY((int)b);
		for (pos = 0; pos < 4; pos++) {
			for (v = 0; v < ARRAY_SIZE(vals); v++) {
				memset(a, 0, sizeof(a));
				a[pos] = vals[v];
				errno = 0;
				EXPECT_EQ(-1, prctl(PR_GET_TIMERSLACK_ZERO_POLICY,
						    a[0], a[1], a[2], a[3]))
					TH_LOG("GET with arg%u = %#lx succeeded", pos + 2, vals[v]);
				EXPECT_EQ(EINVAL, errno)
					TH_LOG("GET with arg%u = %#lx: %s", pos + 2, vals[v],
					       strerror(errno));
				EXPECT_EQ((int)b, zs_get_policy());
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
		if (is_root() && drop_to_nobody())
			_exit(100);
		for (i = 0; i < ZS_NR_POLICIES; i++) {
			if (zs_set_policy_flags((int)i, i & 1 ? ZS_ALL_THREADS : 0))
				_exit(101 + i);
			if (zs_get_policy() != (int)i)
				_exit(111 + i);
		}
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	/* 100: no setresuid(); 10x: SET of policy x failed; 11x: GET after it */
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST(independent_of_timerslack)
{
	SET_SLACK(12345);
	SET_POLICY(ZS_RETURN);
	EXPECT_EQ(12345, prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0));
	SET_POLICY(ZS_FULL_SLACK);
	EXPECT_EQ(12345, prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0));
	SET_SLACK(0);	/* back to the default slack */
	EXPECT_EQ(ZS_FULL_SLACK, zs_get_policy());
	EXPECT_NE(12345, prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0));
}

/* ------------------------------------------------------------------------
 * Zero-length and other sleeps, per entry point and clock
 */

FIXTURE(sleep) {
};

FIXTURE_VARIANT(sleep) {
	bool nanosleep;		/* nanosleep() sleeps on CLOCK_MONOTONIC */
	clockid_t clk;
};

FIXTURE_VARIANT_ADD(sleep, nanosleep) {
	.nanosleep = true, .clk = CLOCK_MONOTONIC,
};

FIXTURE_VARIANT_ADD(sleep, realtime) {
	.clk = CLOCK_REALTIME,
};

FIXTURE_VARIANT_ADD(sleep, monotonic) {
	.clk = CLOCK_MONOTONIC,
};

FIXTURE_VARIANT_ADD(sleep, boottime) {
	.clk = CLOCK_BOOTTIME,
};

FIXTURE_VARIANT_ADD(sleep, tai) {
	.clk = CLOCK_TAI,
};

FIXTURE_SETUP(sleep)
{
}

FIXTURE_TEARDOWN(sleep)
{
}

static const struct sleep_case *variant_cases(bool nanosleep_call, bool zero,
					      unsigned int *n)
{
	if (nanosleep_call) {
		*n = zero ? ARRAY_SIZE(ns_zero_cases) : ARRAY_SIZE(ns_nonzero_cases);
		return zero ? ns_zero_cases : ns_nonzero_cases;
	}
	*n = zero ? ARRAY_SIZE(clk_zero_cases) : ARRAY_SIZE(clk_nonzero_cases);
	return zero ? clk_zero_cases : clk_nonzero_cases;
}

/* RETURN and SCHEDULE: a zero-length sleep returns 0 and never sleeps. */
TEST_F(sleep, return_and_schedule_do_not_sleep)
{
	static const int policies[] = { ZS_RETURN, ZS_SCHEDULE };
	const struct sleep_case *cases;
	struct loop_result r;
	unsigned int i, n, p;

	cases = variant_cases(variant->nanosleep, true, &n);
	SET_SLACK(LARGE_SLACK_NS);
	for (p = 0; p < ARRAY_SIZE(policies); p++) {
		SET_POLICY(policies[p]);
		for (i = 0; i < n; i++) {
			nosleep_loop(&cases[i], variant->clk, FAST_CALLS, &r);
			EXPECT_NO_FAILURES(&r, cases[i].desc);
			EXPECT_EQ(0, r.nvcsw)
				TH_LOG("%s, %s: %ld voluntary switches in %d calls",
				       zs_policy_name(policies[p]), cases[i].desc, r.nvcsw, r.calls);
		}
	}
}

/*
 * Whether the sleep's timer goes to the CLOCK_MONOTONIC base of the CPU,
 * where the scheduler tick is queued: a relative CLOCK_REALTIME timer is
 * moved there too.
 */
static bool tick_base(clockid_t clk, const struct sleep_case *c)
{
	return clk == CLOCK_MONOTONIC || (clk == CLOCK_REALTIME && c->kind == CLK_REL);
}

/*
 * FULL_SLACK and DEFAULT: a zero-length sleep sleeps at a 10 ms slack, and
 * so does DEFAULT on a kernel without the early return of Linux 7.2.  With
 * it, DEFAULT returns without sleeping when its timer would be the first
 * of its clock base and expire before anything else on the CPU.  At a
 * 10 ms slack that depends on the base: on CLOCK_MONOTONIC's, the tick
 * comes first and the task sleeps; the others are usually empty, and the
 * task returns.  The first is judged, but not on PREEMPT_RT, where the
 * sleeper goes to the soft base, which the tick does not use
 * (zs_monotonic_waits()); so is CLOCK_TAI's, whose emptiness the probe of
 * the early return relies on: there DEFAULT may sleep in a quarter of the
 * calls at most.  At the default 50 us slack, a kernel with the early
 * return mostly returns from DEFAULT without a switch.  Whether
 * FULL_SLACK, or DEFAULT without the early return, switches at 50 us is
 * not judged: on a slow kernel (KASAN under
 * emulation) the slack may have run out by the time the timer would be
 * armed, and then FULL_SLACK returns at once, arming nothing, and a timer
 * armed by DEFAULT fires before the task has gone to sleep.  That
 * FULL_SLACK sleeps where DEFAULT returns is judged at 10 ms, on the bases
 * other than CLOCK_MONOTONIC's.
 */
TEST_F(sleep, full_slack_and_default_sleep)
{
	static const int64_t slacks[] = { LARGE_SLACK_NS, DEFAULT_SLACK_NS };
	const struct sleep_case *cases;
	struct loop_result full, def;
	unsigned int i, n, s;
	bool skips;

	ZS_ASSERT_PROBED();
	skips = zs_kernel_returns_early();
	cases = variant_cases(variant->nanosleep, true, &n);
	for (s = 0; s < ARRAY_SIZE(slacks); s++) {
		SET_SLACK(slacks[s]);
		for (i = 0; i < n; i++) {
			if (!slack_bound(&cases[i], slacks[s]))
				continue;
			SET_POLICY(ZS_FULL_SLACK);
			sleep_loop(&cases[i], variant->clk, SLEEP_CALLS, &full);
			SET_POLICY(ZS_DEFAULT);
			sleep_loop(&cases[i], variant->clk, SLEEP_CALLS, &def);
			ksft_print_msg("%s, %lld us slack: FULL_SLACK %ld/%d, DEFAULT %ld/%d\n",
				       cases[i].desc, (long long)(slacks[s] / NSEC_PER_USEC),
				       full.nvcsw, full.calls, def.nvcsw, def.calls);
			EXPECT_NO_FAILURES(&full, cases[i].desc);
			EXPECT_NO_FAILURES(&def, cases[i].desc);
			if (slacks[s] == LARGE_SLACK_NS) {
				EXPECT_GE(full.nvcsw, full.calls / 2)
					TH_LOG("FULL_SLACK, %s: did not sleep",
					       cases[i].desc);
				/* The base that the probe relies on (probe.h). */
				if (skips && variant->clk == CLOCK_TAI)
					EXPECT_GE(def.calls / 4, def.nvcsw)
						TH_LOG("DEFAULT, %s: slept on CLOCK_TAI's base",
						       cases[i].desc);
				if (skips && !(tick_base(variant->clk, &cases[i]) &&
					       zs_monotonic_waits()))
					continue;
				EXPECT_GE(def.nvcsw, def.calls / 2)
					TH_LOG("DEFAULT, %s: did not sleep", cases[i].desc);
			} else if (skips) {
				EXPECT_LT(def.nvcsw, def.calls / 2)
					TH_LOG("DEFAULT, %s: slept on a kernel that skips it",
					       cases[i].desc);
			}
		}
	}
}

/*
 * A sleep that is not zero-length is left to the kernel under every policy:
 * it never returns before its deadline, and it sleeps.  On a kernel with
 * the early return of Linux 7.2 a 1 ns relative sleep has often expired by
 * the time its timer is armed, and then returns without sleeping when the
 * timer would expire first; there each policy must do what DEFAULT does,
 * and not what it does to a zero-length sleep (FULL_SLACK would sleep
 * every time).  Whether the timer would expire first depends on what else
 * runs: the policies take turns call by call, so that a while in which
 * another task keeps a timer there weighs on all of them alike.
 */
TEST_F(sleep, nonzero_sleeps_under_every_policy)
{
	const struct sleep_case *cases;
	long slept[ZS_NR_POLICIES], early[ZS_NR_POLICIES], failures[ZS_NR_POLICIES];
	unsigned int i, n, p;
	int64_t deadline;
	long nvcsw0;
	bool skips;
	int c;

	ZS_ASSERT_PROBED();
	skips = zs_kernel_returns_early();
	cases = variant_cases(variant->nanosleep, false, &n);
	SET_SLACK(NSEC_PER_MSEC);
	for (i = 0; i < n; i++) {
		bool may_expire = skips && cases[i].ns < NSEC_PER_USEC;

		memset(slept, 0, sizeof(slept));
		memset(early, 0, sizeof(early));
		memset(failures, 0, sizeof(failures));
		for (c = 0; c < SLEEP_CALLS / 2; c++) {
			for (p = 0; p < ZS_NR_POLICIES; p++) {
				SET_POLICY((int)p);
				deadline = -1;
				nvcsw0 = zs_nvcsw();
				failures[p] += !!sleep_once(&cases[i], variant->clk, NULL, &deadline);
				early[p] += deadline >= 0 && zs_now(variant->clk) < deadline;
				slept[p] += zs_nvcsw() - nvcsw0;
			}
		}
		for (p = 0; p < ZS_NR_POLICIES; p++) {
			EXPECT_EQ(0, failures[p]);
			EXPECT_EQ(0, early[p])
				TH_LOG("%s, %s: %ld calls returned before their deadline",
				       zs_policy_name((int)p), cases[i].desc, early[p]);
			if (may_expire)
				continue;
			EXPECT_GE(slept[p], SLEEP_CALLS / 4)
				TH_LOG("%s, %s: did not sleep", zs_policy_name((int)p),
				       cases[i].desc);
		}
		ksft_print_msg("%s: slept %ld, %ld, %ld, %ld of %d times (policies 0 to 3)\n",
			       cases[i].desc, slept[0], slept[1], slept[2], slept[3],
			       SLEEP_CALLS / 2);
		if (!may_expire)
			continue;
		for (p = 1; p < ZS_NR_POLICIES; p++) {
			EXPECT_GE(SLEEP_CALLS / 4, labs(slept[p] - slept[0]))
				TH_LOG("%s, %s: slept %ld times, DEFAULT %ld",
				       zs_policy_name((int)p), cases[i].desc,
				       slept[p], slept[0]);
		}
	}
}

/* Argument validation comes first and is the same under every policy. */
TEST_F(sleep, invalid_arguments)
{
	static const struct timespec bad[] = {
		{ 0, -1 }, { 0, NSEC_PER_SEC }, { -1, 0 }, { -1, 999999999 },
	};
	struct timespec ts;
	unsigned int p, m, i;
	long ret;

	for (p = 0; p < ZS_NR_POLICIES; p++) {
		SET_POLICY((int)p);
		for (m = 0; m < (variant->nanosleep ? 1 : 2); m++) {
			for (i = 0; i <= ARRAY_SIZE(bad); i++) {
				const void *req = i < ARRAY_SIZE(bad) ? &bad[i] : NULL;
				int want = req ? EINVAL : EFAULT;

				if (req)
					ts = bad[i];
				errno = 0;
				ret = variant->nanosleep ? sys_nanosleep(req ? &ts : NULL, NULL) :
					sys_clock_nanosleep(variant->clk, m ? TIMER_ABSTIME : 0,
							    req ? &ts : NULL, NULL);
				EXPECT_EQ(-1, ret);
				EXPECT_EQ(want, errno)
					TH_LOG("%s, %s, request %u: %s",
					       zs_policy_name((int)p),
					       m ? "absolute" : "relative", i, strerror(errno));
			}
		}
	}
}

/* A successful zero-length sleep does not write *rmtp, under every policy. */
TEST_F(sleep, rmtp_not_written)
{
	const struct sleep_case *cases;
	unsigned char rem[sizeof(struct timespec) + 16], pattern[sizeof(rem)];
	unsigned int p, i, n;
	int err;

	cases = variant_cases(variant->nanosleep, true, &n);
	memset(pattern, 0x5a, sizeof(pattern));
	for (p = 0; p < ZS_NR_POLICIES; p++) {
		SET_POLICY((int)p);
		for (i = 0; i < n; i++) {
			memcpy(rem, pattern, sizeof(rem));
			err = sleep_once(&cases[i], variant->clk, rem, NULL);
			EXPECT_EQ(0, err)
				TH_LOG("%s, %s: %s", zs_policy_name((int)p), cases[i].desc,
				       strerror(err));
			EXPECT_EQ(0, memcmp(rem, pattern, sizeof(rem)))
				TH_LOG("%s, %s: rmtp was written", zs_policy_name((int)p),
				       cases[i].desc);
		}
	}
}

/*
 * sleep(0), usleep(0) and libc's nanosleep() reach the same code.  They make
 * relative CLOCK_REALTIME sleeps, on CLOCK_MONOTONIC's base: DEFAULT's wait
 * there unless the kernel is PREEMPT_RT with the early return.
 */
TEST(libc_entry_points)
{
	struct timespec zero = { 0, 0 };
	unsigned int p, k;
	long nvcsw0, slept;
	int i, calls, failures;

	ZS_ASSERT_PROBED();
	/* A slack that even a slow kernel cannot overrun while arming. */
	SET_SLACK(LARGE_SLACK_NS);
	for (p = 0; p < ZS_NR_POLICIES; p++) {
		int policy = (int)p;
		bool sleeps = policy == ZS_FULL_SLACK ||
			      (policy == ZS_DEFAULT && zs_monotonic_waits());

		SET_POLICY(policy);
		calls = sleeps ? SLEEP_CALLS : FAST_CALLS;
		for (k = 0; k < 3; k++) {
			failures = 0;
			nvcsw0 = zs_nvcsw();
			for (i = 0; i < calls; i++) {
				if (k == 0)
					failures += sleep(0) != 0;
				else if (k == 1)
					failures += usleep(0) != 0;
				else
					failures += nanosleep(&zero, NULL) != 0;
			}
			slept = zs_nvcsw() - nvcsw0;
			EXPECT_EQ(0, failures);
			if (sleeps) {
				EXPECT_GE(slept, calls / 2)
					TH_LOG("%s, call %u: did not sleep",
					       zs_policy_name(policy), k);
			} else if (policy != ZS_DEFAULT) {
				/* One switch for a page fault of the first calls. */
				EXPECT_GE(1, slept)
					TH_LOG("%s, call %u: %ld voluntary switches",
					       zs_policy_name(policy), k, slept);
			}
		}
	}
}

/*
 * CPU-time and alarm clocks are not covered.  Their zero-length sleeps give
 * the same result under every policy as under DEFAULT, and a CPU-time sleep
 * whose absolute deadline lies far in the past of CLOCK_MONOTONIC but in
 * the future of the CPU clock still sleeps until that clock reaches it.
 */
static unsigned long spin_stop;

static void *spinner(void *arg)
{
	int64_t end = zs_now(CLOCK_MONOTONIC) + 120 * NSEC_PER_SEC;

	(void)arg;
	while (!__atomic_load_n(&spin_stop, __ATOMIC_RELAXED) && zs_now(CLOCK_MONOTONIC) < end)
		;
	return NULL;
}

TEST(other_clocks_unchanged)
{
	static const struct {
		clockid_t clk;
		int flags;
		bool now;	/* the deadline is the clock's current time */
		const char *desc;
	} other[] = {
		{ CLOCK_PROCESS_CPUTIME_ID, 0, false, "PROCESS_CPUTIME relative {0, 0}" },
		{ CLOCK_PROCESS_CPUTIME_ID, TIMER_ABSTIME, true, "PROCESS_CPUTIME absolute now" },
		{ CLOCK_PROCESS_CPUTIME_ID, TIMER_ABSTIME, false,
		  "PROCESS_CPUTIME absolute {0, 0}" },
		{ CLOCK_THREAD_CPUTIME_ID, 0, false, "THREAD_CPUTIME relative {0, 0}" },
		{ CLOCK_THREAD_CPUTIME_ID, TIMER_ABSTIME, true, "THREAD_CPUTIME absolute now" },
		{ CLOCK_REALTIME_ALARM, 0, false, "REALTIME_ALARM relative {0, 0}" },
		{ CLOCK_REALTIME_ALARM, TIMER_ABSTIME, true, "REALTIME_ALARM absolute now" },
		{ CLOCK_BOOTTIME_ALARM, 0, false, "BOOTTIME_ALARM relative {0, 0}" },
		{ CLOCK_BOOTTIME_ALARM, TIMER_ABSTIME, true, "BOOTTIME_ALARM absolute now" },
		{ CLOCK_MONOTONIC_RAW, 0, false, "MONOTONIC_RAW relative {0, 0}" },
	};
	int expect[ARRAY_SIZE(other)];
	struct timespec ts;
	unsigned int p, c;
	int64_t deadline, after;
	long nvcsw0, slept;
	pthread_t t;
	int err, tries;

	/* Another thread burns CPU, so that the process CPU clock advances. */
	ASSERT_EQ(0, pthread_create(&t, NULL, spinner, NULL));
	for (p = 0; p < ZS_NR_POLICIES; p++) {
		SET_POLICY((int)p);
		for (c = 0; c < ARRAY_SIZE(other); c++) {
			deadline = 0;
			if (other[c].now)
				deadline = zs_now(other[c].clk);
			ts = zs_ns_ts(deadline < 0 ? 0 : deadline);
			err = 0;
			if (sys_clock_nanosleep(other[c].clk, other[c].flags, &ts, NULL))
				err = errno;
			if ((int)p == ZS_DEFAULT) {
				expect[c] = err;
				ksft_print_msg("%s: %s\n", other[c].desc,
					       err ? strerror(err) : "0");
				continue;
			}
			EXPECT_EQ(expect[c], err)
				TH_LOG("%s, %s: %s, but %s under DEFAULT",
				       zs_policy_name((int)p), other[c].desc,
				       strerror(err), strerror(expect[c]));
		}
		/*
		 * 50 ms of process CPU time from now.  The spinner runs on while
		 * this thread computes the deadline; if the host stops this
		 * thread's vCPU long enough, the deadline has passed before the
		 * call and the sleep rightly returns without sleeping.  A sleep
		 * that a policy cut short does so every time: try again, up to
		 * three times, and judge the last try.
		 */
		for (tries = 0; tries < 3; tries++) {
			nvcsw0 = zs_nvcsw();
			deadline = zs_now(CLOCK_PROCESS_CPUTIME_ID) + 50 * NSEC_PER_MSEC;
			ASSERT_LT(deadline, zs_now(CLOCK_MONOTONIC));
			ts = zs_ns_ts(deadline);
			err = sys_clock_nanosleep(CLOCK_PROCESS_CPUTIME_ID, TIMER_ABSTIME,
						  &ts, NULL) ? errno : 0;
			after = zs_now(CLOCK_PROCESS_CPUTIME_ID);
			slept = zs_nvcsw() - nvcsw0;
			if (err || after < deadline || slept >= 1)
				break;
			ksft_print_msg("%s: the CPU clock passed the deadline before the call; again\n",
				       zs_policy_name((int)p));
		}
		EXPECT_EQ(0, err)
			TH_LOG("%s, CPU-time sleep: %s", zs_policy_name((int)p),
			       strerror(err));
		EXPECT_LE(deadline, after)
			TH_LOG("%s: a CPU-time sleep returned %lld us early",
			       zs_policy_name((int)p),
			       (long long)((deadline - after) / NSEC_PER_USEC));
		EXPECT_LE(1, slept)
			TH_LOG("%s: a CPU-time sleep did not sleep",
			       zs_policy_name((int)p));
	}
	__atomic_store_n(&spin_stop, 1, __ATOMIC_RELAXED);
	pthread_join(t, NULL);
}

/* ------------------------------------------------------------------------
 * Signals
 */

/*
 * A signal is already pending when a zero-length sleep starts: a tracer
 * stops the tracee at the entry of the system call, queues the signal and
 * lets it go.  RETURN and SCHEDULE return 0 and leave rmtp alone; a sleep
 * that waits for its 1 s slack (DEFAULT and FULL_SLACK, on every kernel at
 * that slack) is interrupted: EINTR, and a relative one writes rmtp.
 */
#ifndef PTRACE_GET_SYSCALL_INFO
# define PTRACE_GET_SYSCALL_INFO	0x420e
#endif
#define SYSCALL_INFO_ENTRY		1

struct syscall_entry_info {
	uint8_t op;
	uint8_t pad[3];
	uint32_t arch;
	uint64_t instruction_pointer;
	uint64_t stack_pointer;
	uint64_t nr;
	uint64_t args[6];
};

/*
 * The slack is large so that the timer of an absolute deadline read just
 * before the call is still pending when the call starts, even on a
 * machine that stalls for a while.
 */
#define EINTR_SLACK_NS		NSEC_PER_SEC

struct eintr_result {
	long ret;
	int err;
	int handled;
	struct timespec rem;
};

static atomic_int usr1_seen;

static void on_usr1(int sig)
{
	(void)sig;
	usr1_seen++;
}

static void eintr_child(struct eintr_result *r, int policy, bool absolute)
{
	struct sigaction sa = { .sa_handler = on_usr1 };	/* no SA_RESTART */
	struct timespec req = { 0, 0 };

	if (sigaction(SIGUSR1, &sa, NULL) ||
	    prctl(PR_SET_TIMERSLACK, EINTR_SLACK_NS, 0UL, 0UL, 0UL) || zs_set_policy(policy))
		_exit(10);
	memset(&r->rem, 0x5a, sizeof(r->rem));
	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) || raise(SIGSTOP))
		_exit(11);
	if (absolute) {
		clock_gettime(CLOCK_MONOTONIC, &req);
		r->ret = syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, TIMER_ABSTIME,
				 &req, &r->rem);
	} else {
		r->ret = syscall(SYS_nanosleep, &req, &r->rem);
	}
	r->err = errno;
	r->handled = usr1_seen;
	_exit(0);
}

/* Runs the tracee to the entry of system call @nr, signals it, detaches. */
static int signal_at_entry(pid_t pid, long nr, int *wstatus)
{
	struct syscall_entry_info info;
	int status, i, sig = 0;

	if (waitpid(pid, wstatus, 0) != pid || !WIFSTOPPED(*wstatus) ||
	    ptrace(PTRACE_SETOPTIONS, pid, NULL,
		   (void *)(long)(PTRACE_O_TRACESYSGOOD | PTRACE_O_EXITKILL)))
		return 1;
	for (i = 0; i < 100; i++) {
		if (ptrace(PTRACE_SYSCALL, pid, NULL, (void *)(long)sig) ||
		    waitpid(pid, wstatus, 0) != pid || !WIFSTOPPED(*wstatus))
			return 2;
		status = *wstatus;
		sig = 0;
		if (WSTOPSIG(status) != (SIGTRAP | 0x80)) {
			sig = WSTOPSIG(status) == SIGSTOP ? 0 : WSTOPSIG(status);
			continue;
		}
		memset(&info, 0, sizeof(info));
		if (ptrace(PTRACE_GET_SYSCALL_INFO, pid, (void *)sizeof(info), &info) <= 0)
			return 3;
		if (info.op == SYSCALL_INFO_ENTRY && info.nr == (uint64_t)nr) {
			if (syscall(SYS_tgkill, pid, pid, SIGUSR1) ||
			    ptrace(PTRACE_DETACH, pid, NULL, NULL))
				return 4;
			return 0;
		}
	}
	return 5;
}

TEST(signal_pending_at_entry)
{
	struct timespec poison;
	struct eintr_result *r;
	unsigned int p, a;
	int status, setup;
	pid_t pid;

	ZS_ASSERT_PROBED();
	r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, r);
	memset(&poison, 0x5a, sizeof(poison));
	for (p = 0; p < ZS_NR_POLICIES; p++) {
		int policy = (int)p;
		/* Both sleeps are on CLOCK_MONOTONIC's base. */
		bool sleeps = policy == ZS_FULL_SLACK ||
			      (policy == ZS_DEFAULT && zs_monotonic_waits());

		for (a = 0; a < 2; a++) {
			const char *desc = a ? "absolute, deadline = now" : "nanosleep {0, 0}";

			memset(r, 0, sizeof(*r));
			pid = fork();
			ASSERT_LE(0, pid);
			if (pid == 0)
				eintr_child(r, policy, a);
			setup = signal_at_entry(pid, a ? SYS_clock_nanosleep : SYS_nanosleep,
						&status);
			if (setup && WIFSTOPPED(status))
				kill(pid, SIGKILL);
			if (!setup || WIFSTOPPED(status))
				waitpid(pid, &status, 0);
			/* 10: the child could not set its policy or slack */
			ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
				TH_LOG("%s, %s: tracing step %d, child status %#x",
				       zs_policy_name(policy), desc, setup, status);
			ksft_print_msg("%s, %s, signal: returned %ld (%s), rmtp {%lld, %ld}\n",
				       zs_policy_name(policy), desc, r->ret,
				       r->ret ? strerror(r->err) : "success",
				       (long long)r->rem.tv_sec, (long)r->rem.tv_nsec);
			EXPECT_EQ(1, r->handled);
			if (!sleeps) {
				EXPECT_EQ(0, r->ret)
					TH_LOG("%s, %s: %s", zs_policy_name(policy), desc,
					       strerror(r->err));
				EXPECT_EQ(0, memcmp(&poison, &r->rem, sizeof(poison)))
					TH_LOG("%s, %s: rmtp written", zs_policy_name(policy), desc);
				continue;
			}
			EXPECT_EQ(-1, r->ret);
			EXPECT_EQ(EINTR, r->err)
				TH_LOG("%s, %s: %s", zs_policy_name(policy), desc, strerror(r->err));
			if (a) {
				/* An absolute sleep never writes rmtp. */
				EXPECT_EQ(0, memcmp(&poison, &r->rem, sizeof(poison)));
			} else {
				EXPECT_LT(0, zs_ts_ns(&r->rem));
				EXPECT_GE(EINTR_SLACK_NS, zs_ts_ns(&r->rem));
			}
		}
	}
	munmap(r, sizeof(*r));
}

/*
 * A relative sleep of 200 ms, stopped by SIGSTOP after 50 ms and continued
 * by SIGCONT before or after its expiry, is restarted by the kernel: under
 * every policy it returns 0, and not before 200 ms have passed.
 */
#define RESTART_SLEEP_NS	(200 * NSEC_PER_MSEC)

struct restart_result {
	unsigned long started;
	int64_t t0, t1;
	long ret;
	int err;
};

TEST(restarted_relative_sleep)
{
	static const int64_t cont_at[] = { 100 * NSEC_PER_MSEC, 350 * NSEC_PER_MSEC };
	struct restart_result *r;
	unsigned int p, c;
	int status, i;
	pid_t pid;

	r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, r);
	for (p = 0; p < ZS_NR_POLICIES; p++) {
		for (c = 0; c < ARRAY_SIZE(cont_at); c++) {
			memset(r, 0, sizeof(*r));
			pid = fork();
			ASSERT_LE(0, pid);
			if (pid == 0) {
				struct timespec req = zs_ns_ts(RESTART_SLEEP_NS);

				if (zs_set_policy((int)p))
					_exit(10);
				r->t0 = zs_now(CLOCK_MONOTONIC);
				__atomic_store_n(&r->started, 1, __ATOMIC_SEQ_CST);
				r->ret = sys_nanosleep(&req, NULL);
				r->t1 = zs_now(CLOCK_MONOTONIC);
				r->err = errno;
				_exit(0);
			}
			for (i = 0; i < 5000; i++) {
				if (__atomic_load_n(&r->started, __ATOMIC_SEQ_CST))
					break;
				usleep(1000);
			}
			zs_sleep_ns(r->t0 + 50 * NSEC_PER_MSEC - zs_now(CLOCK_MONOTONIC));
			ASSERT_EQ(0, kill(pid, SIGSTOP));
			ASSERT_EQ(pid, waitpid(pid, &status, WUNTRACED));
			ASSERT_TRUE(WIFSTOPPED(status));
			zs_sleep_ns(r->t0 + cont_at[c] - zs_now(CLOCK_MONOTONIC));
			ASSERT_EQ(0, kill(pid, SIGCONT));
			ASSERT_EQ(pid, waitpid(pid, &status, 0));
			ASSERT_TRUE(WIFEXITED(status));
			ASSERT_EQ(0, WEXITSTATUS(status));
			ksft_print_msg("%s, SIGCONT at %lld ms: returned %ld after %lld ms\n",
				       zs_policy_name((int)p),
				       (long long)(cont_at[c] / NSEC_PER_MSEC), r->ret,
				       (long long)((r->t1 - r->t0) / NSEC_PER_MSEC));
			EXPECT_EQ(0, r->ret)
				TH_LOG("%s: %s", zs_policy_name((int)p), strerror(r->err));
			EXPECT_LE(RESTART_SLEEP_NS, r->t1 - r->t0)
				TH_LOG("%s: the restarted sleep returned early",
				       zs_policy_name((int)p));
		}
	}
	munmap(r, sizeof(*r));
}

/* ------------------------------------------------------------------------
 * Scope: per thread, inherited, kept across execve()
 */

TEST(inherited_by_new_threads)
{
	unsigned int i;
	pthread_t t;
	int got;

	for (i = 0; i < ZS_NR_POLICIES; i++) {
		SET_POLICY((int)i);
		got = -2;
		ASSERT_EQ(0, pthread_create(&t, NULL, report_policy, &got));
		ASSERT_EQ(0, pthread_join(t, NULL));
		EXPECT_EQ((int)i, got);
	}
}

struct indep {
	pthread_barrier_t step;
	int t1_after_main, t2_of_t1;
};

static void *indep_t1(void *arg)
{
	struct indep *s = arg;
	pthread_t t2;

	zs_set_policy(ZS_RETURN);
	/* A thread inherits from the thread that creates it. */
	if (!pthread_create(&t2, NULL, report_policy, &s->t2_of_t1))
		pthread_join(t2, NULL);
	pthread_barrier_wait(&s->step);	/* 1: T1 has set RETURN */
	pthread_barrier_wait(&s->step);	/* 2: main has set FULL_SLACK */
	s->t1_after_main = zs_get_policy();
	return NULL;
}

/* Without ALL_THREADS, a SET changes the calling thread only. */
TEST(threads_are_independent)
{
	struct indep s = { .t2_of_t1 = -2, .t1_after_main = -2 };
	pthread_t t1;

	ASSERT_EQ(0, pthread_barrier_init(&s.step, NULL, 2));
	SET_POLICY(ZS_SCHEDULE);
	ASSERT_EQ(0, pthread_create(&t1, NULL, indep_t1, &s));
	pthread_barrier_wait(&s.step);
	EXPECT_EQ(ZS_SCHEDULE, zs_get_policy());
	SET_POLICY(ZS_FULL_SLACK);
	pthread_barrier_wait(&s.step);
	ASSERT_EQ(0, pthread_join(t1, NULL));
	pthread_barrier_destroy(&s.step);
	EXPECT_EQ(ZS_RETURN, s.t2_of_t1);
	EXPECT_EQ(ZS_RETURN, s.t1_after_main);
	EXPECT_EQ(ZS_FULL_SLACK, zs_get_policy());
}

static int child_exit_status(struct __test_metadata *_metadata, pid_t pid)
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

	for (i = 0; i < ZS_NR_POLICIES; i++) {
		SET_POLICY((int)i);
		pid = fork();
		if (pid == 0)
			_exit(zs_get_policy() & 0xff);
		EXPECT_EQ((int)i, child_exit_status(_metadata, pid));
		pid = vfork();
		if (pid == 0)
			_exit(zs_get_policy() & 0xff);
		EXPECT_EQ((int)i, child_exit_status(_metadata, pid));
		/* The child's own change does not reach the parent. */
		pid = fork();
		if (pid == 0) {
			zs_set_policy(((int)i + 1) % ZS_NR_POLICIES);
			_exit(zs_get_policy() & 0xff);
		}
		EXPECT_EQ(((int)i + 1) % ZS_NR_POLICIES, child_exit_status(_metadata, pid));
		EXPECT_EQ((int)i, zs_get_policy());
	}
}

/*
 * Runs @path with PRINT_POLICY_ARG, stdout to a pipe, from a child that
 * first drops to nobody if asked; returns what it printed: its policy and
 * its effective uid.
 */
static int exec_and_read_policy(const char *path, bool use_vfork, bool as_nobody,
				int *euid)
{
	char *const argv[] = { (char *)path, PRINT_POLICY_ARG, NULL };
	char *const envp[] = { NULL };
	char buf[64];
	int fds[2], status, n, policy = -1;
	pid_t pid;

	if (pipe(fds))
		return -1;
	pid = use_vfork ? vfork() : fork();
	if (pid == 0) {
		if (dup2(fds[1], STDOUT_FILENO) < 0 || (as_nobody && drop_to_nobody()))
			_exit(127);
		execve(path, argv, envp);
		_exit(127);
	}
	close(fds[1]);
	n = pid < 0 ? -1 : read(fds[0], buf, sizeof(buf) - 1);
	close(fds[0]);
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) || n < 2)
		return -1;
	buf[n] = '\0';
	if (sscanf(buf, "%d %d", &policy, euid) != 2)
		return -1;
	return policy;
}

static char self_exe[PATH_MAX];

static void find_self(struct __test_metadata *_metadata)
{
	ssize_t n = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);

	ASSERT_LT(0, n);
	self_exe[n] = '\0';
}

TEST(kept_across_execve)
{
	unsigned int i;
	int euid;

	find_self(_metadata);
	for (i = 0; i < ZS_NR_POLICIES; i++) {
		SET_POLICY((int)i);
		EXPECT_EQ((int)i, exec_and_read_policy(self_exe, false, false, &euid))
			TH_LOG("fork + execve under %s", zs_policy_name((int)i));
		EXPECT_EQ((int)i, exec_and_read_policy(self_exe, true, false, &euid))
			TH_LOG("vfork + execve under %s", zs_policy_name((int)i));
	}
}

/*
 * A set-user-ID execve() keeps the policy too: it only changes how the task
 * itself sleeps, like the timer slack, so the caller gains nothing by it.
 */
TEST(kept_across_setuid_execve)
{
	char dir[] = "/tmp/zerosleep-XXXXXX", path[sizeof(dir) + 16], buf[65536];
	unsigned int i;
	int in, out, euid = -1, policy;
	ssize_t n;

	if (!is_root())
		SKIP(return, "needs root to make a set-user-ID-root program");
	find_self(_metadata);
	ASSERT_NE(NULL, mkdtemp(dir));
	ASSERT_EQ(0, chmod(dir, 0755));
	snprintf(path, sizeof(path), "%s/print", dir);
	in = open(self_exe, O_RDONLY);
	out = open(path, O_WRONLY | O_CREAT | O_EXCL, 0700);
	ASSERT_LE(0, in);
	ASSERT_LE(0, out);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		ASSERT_EQ(n, write(out, buf, n));
	ASSERT_EQ(0, n);
	close(in);
	ASSERT_EQ(0, fchown(out, 0, 0));
	ASSERT_EQ(0, fchmod(out, 04755));
	ASSERT_EQ(0, close(out));

	for (i = 0; i < ZS_NR_POLICIES; i++) {
		SET_POLICY((int)i);
		policy = exec_and_read_policy(path, false, true, &euid);
		EXPECT_EQ(0, euid)
			TH_LOG("%s did not run as root (a nosuid mount?)", path);
		EXPECT_EQ((int)i, policy)
			TH_LOG("nobody ran set-user-ID %s under %s: it started with %d", path,
			       zs_policy_name((int)i), policy);
	}
	unlink(path);
	rmdir(dir);
}

static void *exec_from_thread(void *arg)
{
	char *const argv[] = { self_exe, PRINT_POLICY_ARG, NULL };
	char *const envp[] = { NULL };

	(void)arg;
	if (zs_set_policy(ZS_RETURN))
		_exit(126);
	execve(self_exe, argv, envp);
	_exit(127);
}

/* execve() from a thread other than the leader keeps that thread's policy. */
TEST(kept_across_execve_from_thread)
{
	char buf[32];
	int fds[2], n;
	pthread_t t;
	pid_t pid;

	find_self(_metadata);
	ASSERT_EQ(0, pipe(fds));
	pid = fork();
	if (pid == 0) {
		if (zs_set_policy(ZS_SCHEDULE) || dup2(fds[1], STDOUT_FILENO) < 0 ||
		    pthread_create(&t, NULL, exec_from_thread, NULL))
			_exit(125);
		pthread_join(t, NULL);	/* never returns: execve() ends this thread */
		_exit(124);
	}
	close(fds[1]);
	n = read(fds[0], buf, sizeof(buf) - 1);
	close(fds[0]);
	ASSERT_EQ(0, child_exit_status(_metadata, pid));
	ASSERT_LT(1, n);
	buf[n] = '\0';
	EXPECT_EQ(ZS_RETURN, atoi(buf))
		TH_LOG("program run by a RETURN thread of a SCHEDULE process: %s", buf);
}

/* ------------------------------------------------------------------------
 * PR_TIMERSLACK_ZERO_ALL_THREADS
 */

/*
 * Threads in different states, each with its own policy, all get the new
 * one: a spinning thread, one blocked in nanosleep() and one waiting on a
 * barrier.
 */
#define KINDS			3
#define THREADS_PER_KIND	2

struct all_threads {
	pthread_barrier_t ready, go;
	unsigned long stop;
	pid_t tid[KINDS * THREADS_PER_KIND];
	int seen[KINDS * THREADS_PER_KIND];
	int set_err;
};

struct all_thread_arg {
	struct all_threads *s;
	int i;
};

static void *all_thread_fn(void *arg)
{
	struct all_thread_arg *a = arg;
	struct all_threads *s = a->s;
	struct timespec nap = { 0, 200 * NSEC_PER_MSEC };

	s->tid[a->i] = sys_gettid();
	if (zs_set_policy((a->i + a->i / KINDS) % 3))
		s->set_err = errno;
	pthread_barrier_wait(&s->ready);
	switch (a->i % KINDS) {
	case 0:
		while (!__atomic_load_n(&s->stop, __ATOMIC_SEQ_CST))
			;
		break;
	case 1:
		while (!__atomic_load_n(&s->stop, __ATOMIC_SEQ_CST))
			nanosleep(&nap, NULL);	/* cut short by SIGUSR1 */
		break;
	default:
		pthread_barrier_wait(&s->go);
		break;
	}
	s->seen[a->i] = zs_get_policy();
	return NULL;
}

static int read_thread_policy(pid_t tid)
{
	char path[PROC_PATH_LEN], buf[8] = "";
	int fd, n;

	policy_path(path, sizeof(path), getpid(), tid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n == 2 ? buf[0] - '0' : -1;
}

TEST(all_threads_sets_every_thread)
{
	struct sigaction sa = { .sa_handler = on_usr1 };	/* no SA_RESTART */
	struct all_thread_arg args[KINDS * THREADS_PER_KIND];
	pthread_t t[KINDS * THREADS_PER_KIND];
	struct all_threads s;
	unsigned int i, n = ARRAY_SIZE(t);

	memset(&s, 0, sizeof(s));
	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
	ASSERT_EQ(0, pthread_barrier_init(&s.ready, NULL, n + 1));
	ASSERT_EQ(0, pthread_barrier_init(&s.go, NULL, THREADS_PER_KIND + 1));
	for (i = 0; i < n; i++) {
		args[i].s = &s;
		args[i].i = i;
		ASSERT_EQ(0, pthread_create(&t[i], NULL, all_thread_fn, &args[i]));
	}
	pthread_barrier_wait(&s.ready);
	ASSERT_EQ(0, s.set_err);
	usleep(20000);	/* let the sleepers reach their sleep */

	/* A failed call changes no thread. */
	EXPECT_EQ(-1, zs_set_policy_flags(ZS_NR_POLICIES, ZS_ALL_THREADS));
	for (i = 0; i < n; i++) {
		EXPECT_EQ((int)((i + i / KINDS) % 3), read_thread_policy(s.tid[i]))
			TH_LOG("thread %u: a failed ALL_THREADS call changed it", i);
	}

	SET_POLICY(ZS_DEFAULT);
	ASSERT_EQ(0, zs_set_policy_flags(ZS_SCHEDULE, ZS_ALL_THREADS))
		TH_LOG("SET with ALL_THREADS: %s", strerror(errno));
	EXPECT_EQ(ZS_SCHEDULE, zs_get_policy());
	for (i = 0; i < n; i++) {
		EXPECT_EQ(ZS_SCHEDULE, read_thread_policy(s.tid[i]))
			TH_LOG("thread %u (kind %u): /proc shows %d", i, i % KINDS,
			       read_thread_policy(s.tid[i]));
	}

	__atomic_store_n(&s.stop, 1, __ATOMIC_SEQ_CST);
	for (i = 0; i < n; i++)
		if (i % KINDS == 1)
			pthread_kill(t[i], SIGUSR1);
	pthread_barrier_wait(&s.go);
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, pthread_join(t[i], NULL));
		EXPECT_EQ(ZS_SCHEDULE, s.seen[i])
			TH_LOG("thread %u (kind %u) has %d", i, i % KINDS, s.seen[i]);
	}
	pthread_barrier_destroy(&s.ready);
	pthread_barrier_destroy(&s.go);
}

/*
 * ALL_THREADS against clone(): spawner threads create short-lived threads
 * without pause while the main thread sets a new policy for all threads
 * round after round.  Each round is announced before the call ("started")
 * and published after it returns.  Every thread reads its policy between
 * rounds: if the same round was published before and still the last one
 * started after its read, it must have that round's policy, whether it was
 * there when the call came, was created while it ran, or after.
 */
#define RACE_SPAWNERS		3
#define RACE_MIN_ROUNDS		200
#define RACE_NS			(2 * NSEC_PER_SEC)

struct race {
	unsigned long started, published, stop;
	unsigned long checked, wrong;
	int first_wrong_round, first_wrong_policy;
};

static int round_policy(unsigned long round)
{
	return (round + 1) % ZS_NR_POLICIES;
}

/* Checks the caller's policy once, between two rounds. */
static void race_check(struct race *r)
{
	unsigned long a, b;
	int i, policy;

	for (i = 0; i < 1000; i++) {
		a = __atomic_load_n(&r->published, __ATOMIC_SEQ_CST);
		policy = zs_get_policy();
		b = __atomic_load_n(&r->started, __ATOMIC_SEQ_CST);
		if (a == b)
			break;
		sched_yield();
	}
	if (a != b)
		return;
	__atomic_fetch_add(&r->checked, 1, __ATOMIC_RELAXED);
	if (policy != round_policy(a) &&
	    !__atomic_fetch_add(&r->wrong, 1, __ATOMIC_RELAXED)) {
		r->first_wrong_round = a;
		r->first_wrong_policy = policy;
	}
}

static void *race_short(void *arg)
{
	race_check(arg);
	return NULL;
}

static void *race_spawner(void *arg)
{
	struct race *r = arg;
	pthread_t t;

	while (!__atomic_load_n(&r->stop, __ATOMIC_SEQ_CST)) {
		if (pthread_create(&t, NULL, race_short, r))
			break;
		race_check(r);
		pthread_join(t, NULL);
	}
	return NULL;
}

TEST(all_threads_races_with_thread_creation)
{
	pthread_t spawners[RACE_SPAWNERS];
	struct race r = { 0 };
	unsigned long round;
	int64_t end;
	int i, err = 0;

	SET_POLICY(round_policy(0));
	for (i = 0; i < RACE_SPAWNERS; i++)
		ASSERT_EQ(0, pthread_create(&spawners[i], NULL, race_spawner, &r));
	end = zs_now(CLOCK_MONOTONIC) + RACE_NS;
	for (round = 1; round < RACE_MIN_ROUNDS || zs_now(CLOCK_MONOTONIC) < end; round++) {
		__atomic_store_n(&r.started, round, __ATOMIC_SEQ_CST);
		if (zs_set_policy_flags(round_policy(round), ZS_ALL_THREADS)) {
			err = errno;
			break;
		}
		__atomic_store_n(&r.published, round, __ATOMIC_SEQ_CST);
		usleep(500);
	}
	__atomic_store_n(&r.stop, 1, __ATOMIC_SEQ_CST);
	for (i = 0; i < RACE_SPAWNERS; i++)
		pthread_join(spawners[i], NULL);
	ksft_print_msg("%lu rounds, %lu checks, %lu wrong\n", round - 1, r.checked, r.wrong);
	ASSERT_EQ(0, err)
		TH_LOG("SET with ALL_THREADS: %s", strerror(err));
	EXPECT_LE((unsigned long)RACE_MIN_ROUNDS, r.checked);
	EXPECT_EQ(0UL, r.wrong)
		TH_LOG("first: a thread had %d after round %d set %d",
		       r.first_wrong_policy, r.first_wrong_round,
		       round_policy(r.first_wrong_round));
}

static int print_policy(void)
{
	int policy = zs_get_policy();

	if (policy < 0) {
		fprintf(stderr, "PR_GET_TIMERSLACK_ZERO_POLICY: %s\n", strerror(errno));
		return 1;
	}
	printf("%d %d\n", policy, (int)geteuid());
	return 0;
}

int main(int argc, char **argv)
{
	/* Run again by the execve tests. */
	if (argc == 2 && !strcmp(argv[1], PRINT_POLICY_ARG))
		return print_policy();
	return test_harness_run(argc, argv);
}
