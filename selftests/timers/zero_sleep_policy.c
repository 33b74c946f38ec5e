// SPDX-License-Identifier: GPL-2.0
/*
 * PR_SET_TIMERSLACK_ZERO_POLICY: what a thread's zero-length nanosleep() and
 * clock_nanosleep() (relative 0, or absolute not after the clock's time, on
 * CLOCK_REALTIME, _MONOTONIC, _BOOTTIME or _TAI) do: what the kernel does
 * without a policy (DEFAULT), return at once (RETURN), pass through the
 * scheduler (SCHEDULE) or sleep for the slack (FULL_SLACK).  Judged by the
 * thread's context switches per call, never by time; what DEFAULT does is
 * probed, never read from the kernel's version.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#include "../kselftest_harness.h"
#include "zero_sleep_policy.h"

#define SLACK_NS	(10 * NSEC_PER_MSEC)	/* a sleep that long switches */
#define CALLS		20

TEST(set_and_get)
{
	unsigned long flags, p;

	ASSERT_EQ(PR_TIMERSLACK_ZERO_DEFAULT, zs_get_policy()) TH_LOG("not started under DEFAULT");
	for (flags = 0; flags <= PR_TIMERSLACK_ZERO_ALL_THREADS; flags++) {
		for (p = 0; p < ZS_NR_POLICIES; p++) {
			ASSERT_EQ(0, prctl(PR_SET_TIMERSLACK_ZERO_POLICY, p, flags, 0UL, 0UL));
			EXPECT_EQ((int)p, zs_get_policy());
		}
	}
}

/* Unknown policies and flags, and unused arguments other than 0. */
TEST(bad_arguments)
{
	static const unsigned long bad[][4] = {
		{ 4 }, { -1UL }, { ~0UL << 8 | PR_TIMERSLACK_ZERO_RETURN },
		{ 1, 2 }, { 1, -1UL }, { 1, 0, 1 }, { 1, 1, 0, 1 }, { 1, 0, 0, -1UL },
	};
	unsigned long get[4];
	unsigned int i;

	ASSERT_EQ(0, zs_set_policy(PR_TIMERSLACK_ZERO_SCHEDULE));
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(-1, prctl(PR_SET_TIMERSLACK_ZERO_POLICY, bad[i][0], bad[i][1],
				    bad[i][2], bad[i][3]));
		EXPECT_EQ(EINVAL, errno) TH_LOG("SET %#lx, %#lx, %#lx, %#lx",
						bad[i][0], bad[i][1], bad[i][2], bad[i][3]);
		EXPECT_EQ(PR_TIMERSLACK_ZERO_SCHEDULE, zs_get_policy());
	}
	for (i = 0; i < ARRAY_SIZE(get); i++) {
		memset(get, 0, sizeof(get));
		get[i] = 1;
		EXPECT_EQ(-1, prctl(PR_GET_TIMERSLACK_ZERO_POLICY, get[0], get[1], get[2], get[3]));
		EXPECT_EQ(EINVAL, errno) TH_LOG("GET with argument %u = 1", i + 2);
	}
}

static pthread_barrier_t barrier;

static void *sibling(void *seen)
{
	((int *)seen)[0] = zs_get_policy();
	zs_set_policy(PR_TIMERSLACK_ZERO_RETURN);	/* for this thread only */
	pthread_barrier_wait(&barrier);
	pthread_barrier_wait(&barrier);			/* main set ALL_THREADS */
	((int *)seen)[1] = zs_get_policy();
	return NULL;
}

/* Per thread, inherited by new threads and children, kept across execve(). */
TEST(threads_and_children)
{
	int seen[2], status;
	pthread_t thread;
	pid_t pid;

	ASSERT_EQ(0, pthread_barrier_init(&barrier, NULL, 2));
	ASSERT_EQ(0, zs_set_policy(PR_TIMERSLACK_ZERO_FULL_SLACK));
	ASSERT_EQ(0, pthread_create(&thread, NULL, sibling, seen));
	pthread_barrier_wait(&barrier);
	EXPECT_EQ(PR_TIMERSLACK_ZERO_FULL_SLACK, zs_get_policy()) TH_LOG("set by another thread");
	ASSERT_EQ(0, prctl(PR_SET_TIMERSLACK_ZERO_POLICY, PR_TIMERSLACK_ZERO_SCHEDULE,
			   PR_TIMERSLACK_ZERO_ALL_THREADS, 0UL, 0UL));
	pthread_barrier_wait(&barrier);
	ASSERT_EQ(0, pthread_join(thread, NULL));
	EXPECT_EQ(PR_TIMERSLACK_ZERO_FULL_SLACK, seen[0]) TH_LOG("in a new thread");
	EXPECT_EQ(PR_TIMERSLACK_ZERO_SCHEDULE, seen[1]) TH_LOG("ALL_THREADS, in another thread");

	pid = fork();
	if (pid == 0) {
		execl("/proc/self/exe", "zero_sleep_policy", "--print-policy", NULL);
		_exit(127);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(PR_TIMERSLACK_ZERO_SCHEDULE, WEXITSTATUS(status)) TH_LOG("fork() and execve()");
}

/*
 * On each clock, with a thread that only yields on the same CPU: a zero-length
 * sleep neither sleeps nor yields under RETURN, yields to that thread (an
 * involuntary switch) as sched_yield() would but does not sleep under
 * SCHEDULE, and sleeps (a voluntary switch) under FULL_SLACK unless its slack
 * has run out.  DEFAULT sleeps as FULL_SLACK does on a kernel without 7.2's
 * early return, and on CLOCK_TAI's usually empty base returns on one with
 * it.  Any other sleep does under every policy what it does under DEFAULT.
 */
FIXTURE(sleep) {
	int early;
};

FIXTURE_VARIANT(sleep) {
	clockid_t clk;
	bool nanosleep;		/* nanosleep(), on CLOCK_MONOTONIC */
};

FIXTURE_VARIANT_ADD(sleep, nanosleep) { .clk = CLOCK_MONOTONIC, .nanosleep = true };
FIXTURE_VARIANT_ADD(sleep, realtime) { .clk = CLOCK_REALTIME };
FIXTURE_VARIANT_ADD(sleep, monotonic) { .clk = CLOCK_MONOTONIC };
FIXTURE_VARIANT_ADD(sleep, boottime) { .clk = CLOCK_BOOTTIME };
FIXTURE_VARIANT_ADD(sleep, tai) { .clk = CLOCK_TAI };

static void *yield_loop(void *arg)
{
	while (!sched_yield())
		;
	return NULL;
}

FIXTURE_SETUP(sleep)
{
	pthread_t peer;
	cpu_set_t cpu;

	self->early = zs_probe_early_return();
	ASSERT_NE(ZS_EARLY_UNKNOWN, self->early);
	ASSERT_EQ(0, zs_set_slack(SLACK_NS));
	CPU_ZERO(&cpu);
	CPU_SET(sched_getcpu(), &cpu);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(cpu), &cpu));		/* the peer's too */
	ASSERT_EQ(0, pthread_create(&peer, NULL, yield_loop, NULL));	/* ends with the test */
}

FIXTURE_TEARDOWN(sleep)
{
}

static const struct request {
	bool abs, zero;
	long long ns;		/* the length, or the deadline from now */
	const char *desc;
} requests[] = {
	{ false, true, 0, "relative 0" },
	{ false, false, 1, "relative 1 ns" },
	{ true, true, 0, "absolute now" },
	{ true, true, -NSEC_PER_SEC, "absolute 1 s ago" },
	{ true, false, NSEC_PER_MSEC, "absolute in 1 ms" },
};

/*
 * One sleep as @r asks, on @clk or through nanosleep(); whether the calling
 * thread switched voluntarily, and involuntarily, in it is added to *@nv
 * and *@niv (1 or 0: on PREEMPT_RT one sleep may switch more than once).
 * Returns 0, or errno.
 */
static int sleep_once(clockid_t clk, bool use_nanosleep, const struct request *r,
		      long *nv, long *niv)
{
	long nv0, niv0, nv1, niv1;
	struct timespec ts;
	long long t;
	int err;

	zs_switches(&nv0, &niv0);
	t = r->abs ? zs_now(clk) + r->ns : r->ns;
	ts.tv_sec = t / NSEC_PER_SEC;
	ts.tv_nsec = t % NSEC_PER_SEC;
	if (use_nanosleep)
		err = syscall(SYS_nanosleep, &ts, NULL) ? errno : 0;
	else
		err = syscall(SYS_clock_nanosleep, clk, r->abs ? TIMER_ABSTIME : 0,
			      &ts, NULL) ? errno : 0;
	zs_switches(&nv1, &niv1);
	*nv += nv1 > nv0;
	*niv += niv1 > niv0;
	return err;
}

/*
 * Whether another task gets the CPU depends on more than the policy: a 1 ns
 * sleep sleeps or not as the timers that others keep on the CPU allow, and
 * a yield switches only when the scheduler finds the peer eligible, which
 * for a while after the host stopped the guest's CPU it may not be.  So the
 * policies take their turns call by call, and SCHEDULE's yields are judged
 * against sched_yield()'s in the same turns, for as long as it takes
 * sched_yield() to switch CALLS times (up to YIELD_MAX_NS).
 */
#define YIELD_MAX_NS	(10 * NSEC_PER_SEC)

TEST_F(sleep, zero_or_not)
{
	long nv[ZS_NR_POLICIES], niv[ZS_NR_POLICIES], yielded, scheduled, unused = 0;
	long long deadline;
	const struct request *r;
	bool slack_left;
	int p, i, err;

	for (r = requests; r < requests + ARRAY_SIZE(requests); r++) {
		if (r->abs && variant->nanosleep)
			continue;
		for (i = -1; i < CALLS; i++) {			/* -1: a warm-up */
			if (i == 0) {
				memset(nv, 0, sizeof(nv));
				memset(niv, 0, sizeof(niv));
			}
			for (p = 0; p < ZS_NR_POLICIES; p++) {
				ASSERT_EQ(0, zs_set_policy(p));
				err = sleep_once(variant->clk, variant->nanosleep, r,
						 &nv[p], &niv[p]);
				ASSERT_EQ(0, err) TH_LOG("%s, policy %d: %s",
							 r->desc, p, strerror(err));
			}
		}
		ksft_print_msg("%s: slept %ld %ld %ld %ld, yielded %ld %ld %ld %ld\n", r->desc,
			       nv[0], nv[1], nv[2], nv[3], niv[0], niv[1], niv[2], niv[3]);
		for (p = 1; p < ZS_NR_POLICIES && !r->zero; p++)
			EXPECT_GE(CALLS / 4, labs(nv[p] - nv[0])) TH_LOG("policy %d", p);
		if (!r->zero)
			continue;
		slack_left = r->ns > -SLACK_NS;
		EXPECT_TRUE(nv[1] <= CALLS / 10 && niv[1] <= CALLS / 10) TH_LOG("RETURN");
		EXPECT_GE(CALLS / 10, nv[2]) TH_LOG("SCHEDULE slept");
		EXPECT_TRUE(slack_left ? nv[3] >= CALLS / 2 : nv[3] <= CALLS / 10)
			TH_LOG("FULL_SLACK");
		if (self->early == ZS_EARLY_NONE && slack_left)
			EXPECT_LE(CALLS / 2, nv[0]) TH_LOG("DEFAULT, without the early return");
		/* As zs_probe_early_return() allows: a quarter (3 of 20 seen). */
		if (self->early == ZS_EARLY_RETURN && variant->clk == CLOCK_TAI)
			EXPECT_GE(CALLS / 4, nv[0]) TH_LOG("DEFAULT, with the early return");

		/* Turn about, so that either goes first as often. */
		ASSERT_EQ(0, zs_set_policy(PR_TIMERSLACK_ZERO_SCHEDULE));
		yielded = 0;
		scheduled = 0;
		deadline = zs_now(CLOCK_MONOTONIC) + YIELD_MAX_NS;
		for (i = 0; yielded < CALLS && zs_now(CLOCK_MONOTONIC) < deadline; i++) {
			long nv0, niv0, niv1;

			if (i % 2)
				ASSERT_EQ(0, sleep_once(variant->clk, variant->nanosleep, r,
							&unused, &scheduled));
			zs_switches(&nv0, &niv0);
			ASSERT_EQ(0, sched_yield());
			zs_switches(&nv0, &niv1);
			yielded += niv1 > niv0;
			if (!(i % 2))
				ASSERT_EQ(0, sleep_once(variant->clk, variant->nanosleep, r,
							&unused, &scheduled));
		}
		ksft_print_msg("%s: in %d turns, sched_yield() switched %ld times, SCHEDULE %ld\n",
			       r->desc, i, yielded, scheduled);
		ASSERT_LE(CALLS, yielded) TH_LOG("the peer never became eligible");
		EXPECT_LE(yielded / 2, scheduled) TH_LOG("SCHEDULE yielded");
	}
}

static atomic_int alarms;

static void on_alarm(int sig)
{
	atomic_fetch_add(&alarms, 1);
}

/*
 * One zero-length sleep (relative, or absolute at the time of the call) on
 * CLOCK_MONOTONIC, with SIGALRM due 1 s later.  True if it lasted until the
 * signal: it failed with EINTR, or it returned 0 once the signal's handler
 * had run.  The second is the kernel's own: a sleep whose soft expiry has
 * passed ends when the timers of its CPU's clock bases are next run (the
 * expiry of another timer: on PREEMPT_RT, where a sleeper that is not
 * real-time and alarm()'s timer are both soft, the alarm's own), and the
 * task may see its sleep over before the signal.
 */
static bool lasts_until_signal(bool absolute)
{
	struct timespec ts = { 0, 0 };
	bool signalled;
	int before, ret, err;

	if (absolute && clock_gettime(CLOCK_MONOTONIC, &ts))
		return false;
	before = atomic_load(&alarms);
	alarm(1);
	if (absolute)
		ret = syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	else
		ret = syscall(SYS_nanosleep, &ts, NULL);
	err = ret ? errno : 0;
	alarm(0);
	signalled = atomic_load(&alarms) != before;
	ksft_print_msg("FULL_SLACK, largest slack, %s: %s, %s the signal\n",
		       absolute ? "absolute now" : "nanosleep({0, 0})",
		       ret ? strerror(err) : "returned 0", signalled ? "after" : "before");
	return signalled && (!ret || err == EINTR);
}

/*
 * FULL_SLACK sleeps until the end of the slack, which saturates as the
 * kernel's own does: with the largest slack a zero-length sleep, relative
 * or absolute, lasts until a signal ends it.  A timer of another task may
 * end it earlier (as above): up to three tries.
 */
TEST(full_slack_saturates)
{
	struct sigaction sa = { .sa_handler = on_alarm };	/* no SA_RESTART */
	int abs, try;

	ASSERT_EQ(0, sigaction(SIGALRM, &sa, NULL));
	ASSERT_EQ(0, zs_set_slack(~0UL));
	ASSERT_EQ(~0UL, (unsigned long)prctl(PR_GET_TIMERSLACK, 0UL, 0UL, 0UL, 0UL));
	ASSERT_EQ(0, zs_set_policy(PR_TIMERSLACK_ZERO_FULL_SLACK));

	for (abs = 0; abs < 2; abs++) {
		for (try = 0; try < 3 && !lasts_until_signal(abs); try++)
			;
		EXPECT_GT(3, try) TH_LOG("%s returned before the signal",
					 abs ? "an absolute deadline of now" : "nanosleep({0, 0})");
	}
}

int main(int argc, char **argv)
{
	/* Run again by threads_and_children. */
	if (argc == 2 && !strcmp(argv[1], "--print-policy"))
		return zs_get_policy();
	return test_harness_run(argc, argv);
}
