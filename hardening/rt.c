// SPDX-License-Identifier: GPL-2.0
/*
 * Zero-length sleeps of real-time threads.
 *
 * A SCHED_FIFO or SCHED_RR thread A makes zero-length sleeps (relative
 * {0, 0} and absolute "now", through nanosleep() and clock_nanosleep() on
 * every hrtimer clock) on CPU 1, next to either
 *
 * - a peer B of the same class and priority on the same CPU, which counts
 *   and yields, or
 * - a SCHED_OTHER thread C on the same CPU, which only counts.
 *
 * After each of A's sleeps we note whether the other thread's counter
 * moved, and count A's context switches:
 *
 *   policy      peer B runs          SCHED_OTHER C runs   A's switches
 *   DEFAULT     in some sleeps without the early return of Linux 7.2
 *               (voluntary switches, some); with it, in at most 1 % of them
 *   FULL_SLACK  never                never                none
 *   RETURN      never                never                none
 *   SCHEDULE    (nearly) every sleep never: a yield      no voluntary ones;
 *                                    stays in the class   involuntary with B
 *
 * FULL_SLACK sleeps until the end of the slack, and an RT thread's slack
 * is 0: the end of the slack has passed when the call is made, so there is
 * nothing to sleep for and no timer is armed (SPEC 3.3).  It behaves as
 * RETURN does.  DEFAULT is the vanilla kernel's behaviour: without the
 * early return, the sleep path: a timer is armed for a time that has
 * passed and the thread goes to sleep, which is how B and C get the CPU.
 * The timer's interrupt often comes before the thread has switched out
 * (then it does not sleep), so that is told from RETURN by any sleep at
 * all in RT_CALLS calls, where RETURN has none.  From Linux 7.2 on (commits
 * bd5956166d20 "hrtimer: Provide hrtimer_start_range_ns_user()" and
 * b40c927345a9 "hrtimer: Use hrtimer_start_expires_user() for hrtimer
 * sleepers"), an expired sleeper returns at once when its timer is the
 * first of its clock base and due before anything else on the CPU.  Which
 * of the two the kernel does is probed (zs_probe_early_return()), not read
 * from its version.  An RT thread has no slack, so its zero-length timer,
 * due "now", is nearly always that: DEFAULT then almost never sleeps nor
 * lets the peer run (the yield that 7.2 took away).  A round showed 0 or 1
 * such sleeps in 500, where 6.12's DEFAULT had 281 to 466.
 *
 * Also: PR_SET_TIMERSLACK stays ignored for an RT thread as in vanilla
 * (PR_GET_TIMERSLACK and /proc/self/timerslack_ns give 0, writes are
 * ignored), and the zero-length sleep policy is independent of it: it can
 * be set on a FIFO thread, by prctl and through /proc, and survives moves
 * in and out of the RT class.
 *
 * Every RT phase is short (well under the RT throttling limit), on CPU 1;
 * the main thread waits on CPU 0.  Needs root and two CPUs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "common.h"
#include "harness.h"

#define RT_PRIO			10
#define RT_CALLS		500
#define ROUNDS			3
#define OTHER_LIMIT_NS		(3 * NSEC_PER_SEC)
#define SLACK_5MS		(5 * NSEC_PER_MSEC)

static int rt_cpu = 1, main_cpu;

static bool pick_cpus(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set))
		return false;
	if (!CPU_ISSET(1, &set) || !CPU_ISSET(0, &set))
		return false;
	rt_cpu = 1;
	main_cpu = 0;
	return true;
}

struct round {
	int sched;		/* SCHED_FIFO or SCHED_RR for A (and B) */
	int policy;
	bool peer;		/* B (same class) or C (SCHED_OTHER) */
	unsigned long counter;	/* the other thread's iterations */
	unsigned long done;
	int errors, first_err, calls;
	int moved;		/* A's sleeps during which the counter moved */
	long nvcsw, nivcsw;	/* A's, during its loop */
	int setup_err;
};

static void *thread_a(void *arg)
{
	struct round *r = arg;
	unsigned long before, after;
	long nv0, niv0, nv1, niv1;
	int i, err;

	if (zs_set_policy(r->policy)) {
		r->setup_err = errno;
		goto out;
	}
	/* Warm up: fault in everything the loop uses. */
	zs_zero_sleep(0);
	zs_switches(&nv0, &niv0);
	for (i = 0; i < RT_CALLS; i++) {
		before = zs_load(&r->counter);
		err = zs_zero_sleep((unsigned int)i);
		after = zs_load(&r->counter);
		if (err && !r->errors++)
			r->first_err = err;
		r->moved += after != before;
		r->calls++;
	}
	zs_switches(&nv1, &niv1);
	r->nvcsw = nv1 - nv0;
	r->nivcsw = niv1 - niv0;
out:
	zs_store(&r->done, 1);
	return NULL;
}

/* B yields after every step; C never does. */
static void *thread_other(void *arg)
{
	struct round *r = arg;
	int64_t end = zs_now(CLOCK_MONOTONIC) + OTHER_LIMIT_NS;
	unsigned long i;

	for (i = 1; !zs_load(&r->done); i++) {
		zs_store(&r->counter, i);
		if (r->peer)
			sched_yield();
		if (!(i & 1023) && zs_now(CLOCK_MONOTONIC) > end)
			break;
	}
	return NULL;
}

/* One round: the other thread first, then A behind it. */
static int run_round(struct round *r)
{
	pthread_t a, o;
	int i, ret;

	ret = zs_start_thread(&o, thread_other, r, rt_cpu,
			      r->peer ? r->sched : SCHED_OTHER, r->peer ? RT_PRIO : 0);
	if (ret)
		return ret;
	for (i = 0; i < 2000 && !zs_load(&r->counter); i++)
		usleep(1000);
	ret = zs_start_thread(&a, thread_a, r, rt_cpu, r->sched, RT_PRIO);
	if (ret) {
		zs_store(&r->done, 1);
		pthread_join(o, NULL);
		return ret;
	}
	pthread_join(a, NULL);
	pthread_join(o, NULL);
	return 0;
}

static const char *sched_name(int sched)
{
	return sched == SCHED_FIFO ? "SCHED_FIFO" : "SCHED_RR";
}

/* Whether a round came out as the policy requires (see the table above). */
static bool round_ok(const struct round *r)
{
	int n = r->calls;

	if (r->errors || n != RT_CALLS)
		return false;
	switch (r->policy) {
	case ZS_DEFAULT:	/* the sleep path, or nearly RETURN with the early return */
		if (zs_kernel_returns_early())
			return r->moved <= n / 100 && r->nvcsw <= n / 100;
		return r->moved > 0 && r->nvcsw > 0;
	case ZS_FULL_SLACK:	/* a slack of 0 has run out: as RETURN */
	case ZS_RETURN:
		return r->moved == 0 && r->nvcsw == 0;
	case ZS_SCHEDULE:
		if (r->peer)
			return r->moved >= n * 9 / 10 && r->nvcsw == 0 &&
				r->nivcsw >= n * 9 / 10;
		return r->moved == 0 && r->nvcsw == 0;
	}
	return false;
}

FIXTURE(rt) {};
FIXTURE_VARIANT(rt) {
	int sched;
	int policy;
};

FIXTURE_VARIANT_ADD(rt, fifo_default) { .sched = SCHED_FIFO, .policy = ZS_DEFAULT };
FIXTURE_VARIANT_ADD(rt, fifo_full_slack) { .sched = SCHED_FIFO, .policy = ZS_FULL_SLACK };
FIXTURE_VARIANT_ADD(rt, fifo_return) { .sched = SCHED_FIFO, .policy = ZS_RETURN };
FIXTURE_VARIANT_ADD(rt, fifo_schedule) { .sched = SCHED_FIFO, .policy = ZS_SCHEDULE };
FIXTURE_VARIANT_ADD(rt, rr_default) { .sched = SCHED_RR, .policy = ZS_DEFAULT };
FIXTURE_VARIANT_ADD(rt, rr_full_slack) { .sched = SCHED_RR, .policy = ZS_FULL_SLACK };
FIXTURE_VARIANT_ADD(rt, rr_return) { .sched = SCHED_RR, .policy = ZS_RETURN };
FIXTURE_VARIANT_ADD(rt, rr_schedule) { .sched = SCHED_RR, .policy = ZS_SCHEDULE };

FIXTURE_SETUP(rt)
{
	if (geteuid() != 0)
		SKIP(return, "real-time scheduling needs CAP_SYS_NICE (run as root)");
	if (!pick_cpus())
		SKIP(return, "needs CPUs 0 and 1");
	ASSERT_EQ(0, zs_pin_self(main_cpu));
	/* No page fault may block thread A. */
	ASSERT_EQ(0, zs_lock_memory());
}

FIXTURE_TEARDOWN(rt) {}

static void run_variant(struct __test_metadata *_metadata, int sched, int policy, bool peer)
{
	struct round r;
	int attempt, ret;
	bool ok = false;

	if (policy == ZS_DEFAULT)
		ZS_ASSERT_PROBED();	/* on this SCHED_OTHER thread */
	for (attempt = 1; attempt <= ROUNDS && !ok; attempt++) {
		memset(&r, 0, sizeof(r));
		r.sched = sched;
		r.policy = policy;
		r.peer = peer;
		ret = run_round(&r);
		ASSERT_EQ(0, ret)
			TH_LOG("starting the threads: %s", strerror(ret));
		ASSERT_EQ(0, r.setup_err)
			TH_LOG("PR_SET_TIMERSLACK_ZERO_POLICY: %s", strerror(r.setup_err));
		ksft_print_msg("%s %s, with %s: round %d: %d calls, %d errors, the other thread ran in %d, A's switches: %ld voluntary, %ld involuntary\n",
			       sched_name(sched), zs_policy_name(policy),
			       peer ? "an equal RT peer" : "a SCHED_OTHER thread", attempt,
			       r.calls, r.errors, r.moved, r.nvcsw, r.nivcsw);
		/* Errors are never a matter of chance. */
		ASSERT_EQ(0, r.errors)
			TH_LOG("first error: %s", strerror(r.first_err));
		ok = round_ok(&r);
	}
	EXPECT_TRUE(ok)
		TH_LOG("%s %s with %s: not as required in %d rounds", sched_name(sched),
		       zs_policy_name(policy), peer ? "a peer" : "a SCHED_OTHER thread", ROUNDS);
}

TEST_F_TIMEOUT(rt, with_equal_peer, 120)
{
	run_variant(_metadata, variant->sched, variant->policy, true);
}

TEST_F_TIMEOUT(rt, with_sched_other_thread, 120)
{
	run_variant(_metadata, variant->sched, variant->policy, false);
}

static long read_proc_long(const char *path)
{
	char buf[32];
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	return strtol(buf, NULL, 10);
}

static ssize_t write_proc(const char *path, const char *s)
{
	ssize_t n;
	int fd;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = write(fd, s, strlen(s));
	close(fd);
	return n;
}

#define SLACK_FILE	"/proc/self/timerslack_ns"
#define POLICY_FILE	"/proc/self/timerslack_zero_policy"

/* Plain TEST() trips -Wunused-parameter in the harness: use a fixture. */
FIXTURE(slack) {};
FIXTURE_SETUP(slack) {}
FIXTURE_TEARDOWN(slack) {}

/* The test process is single-threaded here, so /proc/self is this thread. */
TEST_F(slack, ignored_for_fifo_and_policy_independent)
{
	struct sched_param fifo = { .sched_priority = RT_PRIO }, other = { 0 };
	long slack0, nv0, nv1;
	int i, errors = 0;

	if (geteuid() != 0)
		SKIP(return, "real-time scheduling needs CAP_SYS_NICE (run as root)");
	if (!pick_cpus())
		SKIP(return, "needs CPUs 0 and 1");
	ASSERT_EQ(0, zs_lock_memory());
	ASSERT_EQ(0, zs_pin_self(rt_cpu));

	slack0 = (long)zs_prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
	ASSERT_LT(0, slack0);
	ASSERT_EQ(slack0, read_proc_long(SLACK_FILE));
	/* A policy chosen before becoming RT is kept. */
	ASSERT_EQ(0, zs_set_policy(ZS_SCHEDULE));

	ASSERT_EQ(0, sched_setscheduler(0, SCHED_FIFO, &fifo));
	EXPECT_EQ(ZS_SCHEDULE, zs_get_policy());
	/* RT threads have no slack, and PR_SET_TIMERSLACK is ignored. */
	EXPECT_EQ(0, zs_prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0));
	EXPECT_EQ(0, zs_set_slack(SLACK_5MS));
	EXPECT_EQ(0, zs_prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0));
	EXPECT_EQ(0, read_proc_long(SLACK_FILE));
	EXPECT_EQ(7, write_proc(SLACK_FILE, "5000000"));
	EXPECT_EQ(0, read_proc_long(SLACK_FILE));
	EXPECT_EQ(0, zs_prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0));
	/* The zero-length sleep policy is not: prctl and /proc both work. */
	EXPECT_EQ(0, zs_set_policy(ZS_RETURN));
	EXPECT_EQ(ZS_RETURN, zs_get_policy());
	EXPECT_EQ(ZS_RETURN, read_proc_long(POLICY_FILE));
	nv0 = zs_nvcsw();
	for (i = 0; i < RT_CALLS; i++)
		errors += !!zs_zero_sleep((unsigned int)i);
	nv1 = zs_nvcsw();
	ksft_print_msg("SCHED_FIFO, RETURN: %d zero-length sleeps, %d errors, %ld voluntary switches\n",
		       RT_CALLS, errors, nv1 - nv0);
	EXPECT_EQ(0, errors);
	EXPECT_EQ(0, nv1 - nv0);
	EXPECT_EQ(2, write_proc(POLICY_FILE, "3\n"));
	EXPECT_EQ(ZS_FULL_SLACK, zs_get_policy());
	EXPECT_EQ(2, write_proc(POLICY_FILE, "2\n"));
	EXPECT_EQ(ZS_SCHEDULE, zs_get_policy());
	EXPECT_EQ(0, zs_prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0));

	/* Back to SCHED_OTHER: the slack comes back, the policy stays. */
	ASSERT_EQ(0, sched_setscheduler(0, SCHED_OTHER, &other));
	EXPECT_EQ(slack0, zs_prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0));
	EXPECT_EQ(slack0, read_proc_long(SLACK_FILE));
	EXPECT_EQ(ZS_SCHEDULE, zs_get_policy());
	/* And PR_SET_TIMERSLACK works again, without touching the policy. */
	EXPECT_EQ(0, zs_set_slack(SLACK_5MS));
	EXPECT_EQ(SLACK_5MS, zs_prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0));
	EXPECT_EQ(ZS_SCHEDULE, zs_get_policy());
	EXPECT_EQ(0, zs_set_policy(ZS_DEFAULT));
}

TEST_HARNESS_MAIN
