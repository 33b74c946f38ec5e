// SPDX-License-Identifier: GPL-2.0
/*
 * Zero-length sleep policies and the scheduler: who runs when a zero-length
 * sleep passes through the scheduler, real-time and deadline tasks, the
 * IA-32 entry points and time namespaces.  These came from the selftests
 * and stay outside the series, next to rt, compat32 and timens.
 *
 * Judged by whether another thread made progress, by context switches and
 * by large ratios, not by absolute durations, except where a duration of
 * seconds is the failure.  Most tests need root (CAP_SYS_NICE for the
 * real-time classes, CAP_SYS_ADMIN for time namespaces).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "common.h"
#include "harness.h"

#ifndef SCHED_DEADLINE
# define SCHED_DEADLINE		6
#endif
#ifndef CLONE_NEWTIME
# define CLONE_NEWTIME		0x00000080
#endif

#define LARGE_SLACK_NS		(10 * NSEC_PER_MSEC)
#define FAST_CALLS		200
#define SLOW_CALLS		20

/* Zero-length sleeps: nanosleep {0, 0}, or an absolute deadline at "now". */
static int zero_sleep(clockid_t clk, bool absolute)
{
	struct timespec ts = { 0, 0 };

	if (absolute) {
		clock_gettime(clk, &ts);
		return sys_clock_nanosleep(clk, TIMER_ABSTIME, &ts, NULL) ? errno : 0;
	}
	return sys_nanosleep(&ts, NULL) ? errno : 0;
}

struct loop_result {
	int calls, failures;
	long nvcsw;
	int64_t ns;
};

static void zero_loop(clockid_t clk, bool absolute, int calls, struct loop_result *r)
{
	long nvcsw0 = zs_nvcsw();
	int64_t t0 = zs_now(CLOCK_MONOTONIC);
	int i;

	memset(r, 0, sizeof(*r));
	for (i = 0; i < calls; i++)
		r->failures += !!zero_sleep(clk, absolute);
	r->ns = zs_now(CLOCK_MONOTONIC) - t0;
	r->nvcsw = zs_nvcsw() - nvcsw0;
	r->calls = calls;
}

/* Best of three after a warm-up: the fewest voluntary switches, then the fastest. */
static void nosleep_loop(clockid_t clk, bool absolute, int calls, struct loop_result *r)
{
	struct loop_result tmp;
	int attempt, failures = 0;

	zero_loop(clk, absolute, 10, &tmp);
	for (attempt = 0; attempt < 3; attempt++) {
		zero_loop(clk, absolute, calls, &tmp);
		failures += tmp.failures;
		if (!attempt || tmp.nvcsw < r->nvcsw ||
		    (tmp.nvcsw == r->nvcsw && tmp.ns < r->ns))
			*r = tmp;
	}
	r->failures = failures;
}

static double per_call(const struct loop_result *r)
{
	return r->calls ? (double)(r->ns ?: 1) / r->calls : 1;
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

/* ------------------------------------------------------------------------
 * Who runs after a zero-length sleep
 */

/*
 * A peer on the same CPU counts and yields, without end.  The thread under
 * test loops on zero-length sleeps and notes, after each, whether the
 * peer's counter moved: whether the peer ran during that sleep.
 *
 * Under SCHEDULE each sleep hands the CPU to the peer whenever the
 * scheduler finds it eligible, so the peer runs during a large share of
 * the sleeps.  Under RETURN the peer runs only when a tick preempts the
 * thread under test, once in hundreds or thousands of sleeps.  The same
 * design for SCHED_FIFO (peers of equal priority) and SCHED_OTHER.
 */
#define PEER_LIMIT_NS		(20 * NSEC_PER_SEC)

struct peer {
	unsigned long counter;
	unsigned long stop;
};

static void *peer_fn(void *arg)
{
	struct peer *p = arg;
	int64_t end = zs_now(CLOCK_MONOTONIC) + PEER_LIMIT_NS;
	unsigned long i;

	for (i = 1; !zs_load(&p->stop); i++) {
		zs_store(&p->counter, i);
		sched_yield();
		if (!(i & 255) && zs_now(CLOCK_MONOTONIC) > end)
			break;
	}
	return NULL;
}

struct observed {
	long calls, advanced, failures;
};

/* Zero-length sleeps under @policy for @ns, or @calls of them. */
static void observe(struct peer *p, int policy, int64_t ns, long calls, struct observed *o)
{
	struct timespec zero = { 0, 0 };
	unsigned long prev, cur;
	int64_t t0 = zs_now(CLOCK_MONOTONIC);

	if (zs_set_policy(policy))
		o->failures++;
	prev = zs_load(&p->counter);
	do {
		if (sys_nanosleep(&zero, NULL))
			o->failures++;
		cur = zs_load(&p->counter);
		o->advanced += cur != prev;
		prev = cur;
		o->calls++;
	} while (calls ? o->calls < calls : zs_now(CLOCK_MONOTONIC) - t0 < ns);
}

static double share(const struct observed *o)
{
	return o->calls ? (double)o->advanced / o->calls : 0;
}

/*
 * SCHED_OTHER: many short phases, RETURN and SCHEDULE in turn.  The peer
 * ran during at least MIN_SCHED_SHARE of the SCHEDULE sleeps, and during
 * SHARE_RATIO times fewer of the RETURN ones.
 */
#define OTHER_PHASE_NS		(50 * NSEC_PER_MSEC)
#define OTHER_PHASES		10
#define MIN_SCHED_SHARE		0.2
#define SHARE_RATIO		20

TEST(schedule_gives_cpu_to_other_task)
{
	struct observed ret = { 0 }, sched = { 0 };
	struct peer p = { 0 };
	int busy, spare, i;
	pthread_t t;

	if (!pick_cpus(&busy, &spare))
		busy = spare;
	ASSERT_EQ(0, zs_pin_self(busy));
	ASSERT_EQ(0, zs_start_thread(&t, peer_fn, &p, busy, SCHED_OTHER, 0));
	for (i = 0; i < OTHER_PHASES; i++) {
		observe(&p, ZS_RETURN, OTHER_PHASE_NS, 0, &ret);
		observe(&p, ZS_SCHEDULE, OTHER_PHASE_NS, 0, &sched);
	}
	zs_store(&p.stop, 1);
	pthread_join(t, NULL);

	ksft_print_msg("peer ran in %ld/%ld RETURN (%.3f%%), %ld/%ld SCHEDULE sleeps (%.1f%%)\n",
		       ret.advanced, ret.calls, 100 * share(&ret), sched.advanced, sched.calls,
		       100 * share(&sched));
	EXPECT_EQ(0, ret.failures + sched.failures);
	EXPECT_LE(MIN_SCHED_SHARE, share(&sched))
		TH_LOG("SCHEDULE: the peer ran during only %.1f%% of the sleeps",
		       100 * share(&sched));
	EXPECT_GE(share(&sched), SHARE_RATIO * share(&ret))
		TH_LOG("the peer ran during %.2f%% of RETURN and %.2f%% of SCHEDULE sleeps",
		       100 * share(&ret), 100 * share(&sched));
}

/*
 * SCHED_FIFO: threads of equal priority run until they block or yield, so
 * under SCHEDULE nearly every sleep hands the CPU to the peer, and under
 * RETURN the peer does not run at all.  Another CPU stays free.
 */
#define FIFO_PRIO		10
#define FIFO_CALLS		1000

struct fifo_round {
	struct peer p;
	struct observed o;
	int policy;
};

static void *fifo_sleeper(void *arg)
{
	struct fifo_round *r = arg;

	observe(&r->p, r->policy, 0, FIFO_CALLS, &r->o);
	zs_store(&r->p.stop, 1);
	return NULL;
}

static void fifo_test(struct __test_metadata *_metadata, int policy)
{
	struct fifo_round r;
	int busy, spare, attempt, ret, i;
	bool ok = false;
	pthread_t a, b;

	if (!pick_cpus(&busy, &spare))
		SKIP(return, "needs two CPUs");
	ASSERT_EQ(0, zs_pin_self(spare));
	/* No page fault may block the sleeper. */
	mlockall(MCL_CURRENT | MCL_FUTURE);
	for (attempt = 1; attempt <= 3 && !ok; attempt++) {
		memset(&r, 0, sizeof(r));
		r.policy = policy;
		ret = zs_start_thread(&b, peer_fn, &r.p, busy, SCHED_FIFO, FIFO_PRIO);
		if (ret == EPERM && !is_root())
			SKIP(return, "SCHED_FIFO needs CAP_SYS_NICE");
		ASSERT_EQ(0, ret);
		/* Let the peer spin first, so that the sleeper queues up behind it. */
		for (i = 0; i < 2000 && !zs_load(&r.p.counter); i++)
			usleep(1000);
		ASSERT_EQ(0, zs_start_thread(&a, fifo_sleeper, &r, busy, SCHED_FIFO, FIFO_PRIO));
		pthread_join(a, NULL);
		pthread_join(b, NULL);
		ASSERT_EQ(0, r.o.failures);
		ksft_print_msg("%s, round %d: the FIFO peer ran during %ld of %ld sleeps\n",
			       zs_policy_name(policy), attempt, r.o.advanced, r.o.calls);
		ok = policy == ZS_SCHEDULE ? r.o.advanced >= r.o.calls * 9 / 10 : !r.o.advanced;
	}
	EXPECT_TRUE(ok)
		TH_LOG("%s: the FIFO peer ran during %ld of %ld sleeps", zs_policy_name(policy),
		       r.o.advanced, r.o.calls);
}

TEST(schedule_lets_equal_fifo_thread_run)
{
	fifo_test(_metadata, ZS_SCHEDULE);
}

TEST(return_keeps_cpu_from_equal_fifo_thread)
{
	fifo_test(_metadata, ZS_RETURN);
}

/*
 * On every clock and through nanosleep(), with a thread that only yields on
 * the same CPU: a zero-length sleep (relative 0, absolute now or 1 s ago)
 * neither sleeps nor yields under RETURN, and yields to that thread (an
 * involuntary switch) under SCHEDULE as sched_yield() would.  A yield
 * switches only when the scheduler finds the peer eligible, which for a
 * while after the host stopped the guest's CPU it may not be: SCHEDULE and
 * sched_yield() take turns call by call, and SCHEDULE's yields are counted
 * against sched_yield()'s in the same turns, until sched_yield() has
 * switched YIELD_CALLS times (for up to YIELD_MAX_NS).  On PREEMPT_RT one
 * call may switch more than once: the calls that switched are counted.
 * From the selftests, which keep only what is certain.
 */
#define YIELD_CALLS		20
#define YIELD_MAX_NS		(5 * NSEC_PER_SEC)

FIXTURE(yield) {
	struct peer p;
	pthread_t t;
};

FIXTURE_VARIANT(yield) {
	clockid_t clk;
	bool nanosleep;		/* nanosleep(), on CLOCK_MONOTONIC */
};

FIXTURE_VARIANT_ADD(yield, nanosleep) { .clk = CLOCK_MONOTONIC, .nanosleep = true };
FIXTURE_VARIANT_ADD(yield, realtime) { .clk = CLOCK_REALTIME };
FIXTURE_VARIANT_ADD(yield, monotonic) { .clk = CLOCK_MONOTONIC };
FIXTURE_VARIANT_ADD(yield, boottime) { .clk = CLOCK_BOOTTIME };
FIXTURE_VARIANT_ADD(yield, tai) { .clk = CLOCK_TAI };

FIXTURE_SETUP(yield)
{
	int cpu = zs_last_cpu();

	memset(&self->p, 0, sizeof(self->p));
	ASSERT_LE(0, cpu);
	ASSERT_EQ(0, zs_pin_self(cpu));
	SET_SLACK(LARGE_SLACK_NS);
	ASSERT_EQ(0, zs_start_thread(&self->t, peer_fn, &self->p, cpu, SCHED_OTHER, 0));
}

FIXTURE_TEARDOWN(yield)
{
	zs_store(&self->p.stop, 1);
	pthread_join(self->t, NULL);
}

/*
 * Zero-length sleep @kind on @clk (relative 0, absolute now, 1 s ago; -1:
 * sched_yield() instead); counts whether it switched, and how.
 */
static int yield_call(clockid_t clk, bool nanosleep_call, int kind, long *nv, long *niv)
{
	struct timespec ts = zs_ns_ts(kind > 0 ? zs_now(clk) - (kind - 1) * NSEC_PER_SEC : 0);
	long nv0, niv0, nv1, niv1, ret;

	zs_switches(&nv0, &niv0);
	if (kind < 0)
		ret = sched_yield();
	else if (nanosleep_call)
		ret = sys_nanosleep(&ts, NULL);
	else
		ret = sys_clock_nanosleep(clk, kind ? TIMER_ABSTIME : 0, &ts, NULL);
	zs_switches(&nv1, &niv1);
	*nv += nv1 > nv0;
	*niv += niv1 > niv0;
	return ret ? errno : 0;
}

TEST_F(yield, schedule_yields_as_sched_yield)
{
	long nv, niv, yielded, scheduled, unused;
	int kind, i;
	int64_t end;

	for (kind = 0; kind < (variant->nanosleep ? 1 : 3); kind++) {
		SET_POLICY(ZS_RETURN);
		nv = niv = 0;
		for (i = -1; i < YIELD_CALLS; i++) {	/* -1: a warm-up */
			ASSERT_EQ(0, yield_call(variant->clk, variant->nanosleep, kind, &nv, &niv));
			if (i < 0)
				nv = niv = 0;
		}
		SET_POLICY(ZS_SCHEDULE);
		yielded = scheduled = unused = 0;
		end = zs_now(CLOCK_MONOTONIC) + YIELD_MAX_NS;
		for (i = 0; yielded < YIELD_CALLS && zs_now(CLOCK_MONOTONIC) < end; i++) {
			/* Turn about, so that either goes first as often. */
			ASSERT_EQ(0, yield_call(variant->clk, variant->nanosleep, i % 2 ? kind : -1,
						&unused, i % 2 ? &scheduled : &yielded));
			ASSERT_EQ(0, yield_call(variant->clk, variant->nanosleep, i % 2 ? -1 : kind,
						&unused, i % 2 ? &yielded : &scheduled));
		}
		ksft_print_msg("request %d: RETURN slept %ld and yielded %ld times in %d calls\n",
			       kind, nv, niv, YIELD_CALLS);
		ksft_print_msg("request %d: in %d turns, yields: sched_yield() %ld, SCHEDULE %ld\n",
			       kind, i, yielded, scheduled);
		EXPECT_TRUE(nv <= YIELD_CALLS / 10 && niv <= YIELD_CALLS / 10)
			TH_LOG("request %d: RETURN slept or yielded", kind);
		ASSERT_LE(YIELD_CALLS, yielded) TH_LOG("the peer never became eligible");
		EXPECT_LE(yielded / 2, scheduled) TH_LOG("request %d: SCHEDULE yielded", kind);
	}
}

/*
 * A SCHED_FIFO thread alone on its CPU (its slack is 0): RETURN and
 * SCHEDULE never sleep, and neither does FULL_SLACK: the end of a slack of
 * 0 has passed when the call is made, so there is nothing to sleep for and
 * no timer to arm.
 */

struct fifo_alone {
	struct loop_result r[ZS_NR_POLICIES];
	int err;
};

static void *fifo_alone_fn(void *arg)
{
	struct fifo_alone *f = arg;
	unsigned int p;

	for (p = 0; p < ZS_NR_POLICIES; p++) {
		if (zs_set_policy((int)p))
			f->err = errno;
		nosleep_loop(CLOCK_MONOTONIC, true, FAST_CALLS, &f->r[p]);
	}
	return NULL;
}

TEST(fifo_task_follows_policy)
{
	struct fifo_alone f;
	int busy, spare, ret;
	unsigned int p;
	pthread_t t;

	if (!pick_cpus(&busy, &spare))
		SKIP(return, "needs two CPUs");
	ASSERT_EQ(0, zs_pin_self(spare));
	memset(&f, 0, sizeof(f));
	ret = zs_start_thread(&t, fifo_alone_fn, &f, busy, SCHED_FIFO, FIFO_PRIO);
	if (ret == EPERM && !is_root())
		SKIP(return, "SCHED_FIFO needs CAP_SYS_NICE");
	ASSERT_EQ(0, ret);
	pthread_join(t, NULL);
	ASSERT_EQ(0, f.err);
	for (p = 0; p < ZS_NR_POLICIES; p++) {
		ksft_print_msg("SCHED_FIFO, %s: %ld voluntary switches in %d calls, %.1f us/call\n",
			       zs_policy_name((int)p), f.r[p].nvcsw, f.r[p].calls,
			       per_call(&f.r[p]) / NSEC_PER_USEC);
		EXPECT_EQ(0, f.r[p].failures);
		if ((int)p != ZS_DEFAULT) {
			EXPECT_EQ(0, f.r[p].nvcsw)
				TH_LOG("SCHED_FIFO, %s: slept", zs_policy_name((int)p));
		}
	}
}

/*
 * A SCHED_DEADLINE task is never throttled by a zero-length sleep: under
 * SCHEDULE it calls the scheduler only when a reschedule is pending, so
 * five sleeps take a tiny fraction of its 500 ms period, instead of a
 * period each (which sched_yield() would cost).
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

#define DL_RUNTIME_NS		(50 * NSEC_PER_MSEC)
#define DL_PERIOD_NS		(500 * NSEC_PER_MSEC)
#define DL_CALLS		5
#define DL_MAX_NS		(100 * NSEC_PER_MSEC)

struct dl_result {
	int setattr_err, policy_err;
	struct loop_result r[ZS_NR_POLICIES];
};

static void *dl_thread(void *arg)
{
	struct dl_result *r = arg;
	struct dl_attr attr = {
		.size = sizeof(attr),
		.sched_policy = SCHED_DEADLINE,
		.sched_runtime = DL_RUNTIME_NS,
		.sched_deadline = DL_PERIOD_NS,
		.sched_period = DL_PERIOD_NS,
	};
	unsigned int p;

	if (syscall(SYS_sched_setattr, 0, &attr, 0)) {
		r->setattr_err = errno;
		return NULL;
	}
	for (p = 0; p < ZS_NR_POLICIES; p++) {
		if (zs_set_policy((int)p))
			r->policy_err = errno;
		/* Start at the beginning of a period, with the full runtime. */
		sched_yield();
		zero_loop(CLOCK_MONOTONIC, false, DL_CALLS, &r->r[p]);
	}
	return NULL;
}

TEST(deadline_task_follows_policy)
{
	struct dl_result r;
	unsigned int p;
	pthread_t t;

	memset(&r, 0, sizeof(r));
	ASSERT_EQ(0, zs_start_thread(&t, dl_thread, &r, -1, SCHED_OTHER, 0));
	pthread_join(t, NULL);
	if (r.setattr_err == EPERM && !is_root())
		SKIP(return, "SCHED_DEADLINE needs CAP_SYS_NICE");
	ASSERT_EQ(0, r.setattr_err)
		TH_LOG("sched_setattr(SCHED_DEADLINE): %s", strerror(r.setattr_err));
	for (p = 0; p < ZS_NR_POLICIES; p++) {
		ksft_print_msg("SCHED_DEADLINE, %s: %d zero sleeps in %.3f ms, %ld switches\n",
			       zs_policy_name((int)p), r.r[p].calls,
			       (double)r.r[p].ns / NSEC_PER_MSEC, r.r[p].nvcsw);
		EXPECT_EQ(0, r.r[p].failures);
	}
	EXPECT_EQ(0, r.policy_err)
		TH_LOG("PR_SET_TIMERSLACK_ZERO_POLICY: %s", strerror(r.policy_err));
	EXPECT_EQ(0, r.r[ZS_RETURN].nvcsw);
	EXPECT_EQ(0, r.r[ZS_SCHEDULE].nvcsw);
	EXPECT_GT(DL_MAX_NS, r.r[ZS_RETURN].ns);
	EXPECT_GT(DL_MAX_NS, r.r[ZS_SCHEDULE].ns)
		TH_LOG("SCHEDULE: %d zero sleeps, deadline task, %lld ms period: %lld ms",
		       DL_CALLS, DL_PERIOD_NS / NSEC_PER_MSEC,
		       (long long)(r.r[ZS_SCHEDULE].ns / NSEC_PER_MSEC));
}

/* ------------------------------------------------------------------------
 * RETURN and SCHEDULE against FULL_SLACK: a large ratio of the time per call
 */
#define MIN_SPEEDUP		20

TEST(return_and_schedule_faster_than_full_slack)
{
	struct loop_result r[ZS_NR_POLICIES];
	unsigned int a, p;
	double ratio;

	SET_SLACK(LARGE_SLACK_NS);
	for (a = 0; a < 2; a++) {
		for (p = 0; p < ZS_NR_POLICIES; p++) {
			SET_POLICY((int)p);
			if ((int)p == ZS_RETURN || (int)p == ZS_SCHEDULE)
				nosleep_loop(CLOCK_MONOTONIC, a, FAST_CALLS, &r[p]);
			else
				zero_loop(CLOCK_MONOTONIC, a, SLOW_CALLS, &r[p]);
			EXPECT_EQ(0, r[p].failures);
			ksft_print_msg("%s, %s: %.1f us/call\n",
				       a ? "absolute" : "relative",
				       zs_policy_name((int)p),
				       per_call(&r[p]) / NSEC_PER_USEC);
		}
		ratio = per_call(&r[ZS_FULL_SLACK]) / per_call(&r[ZS_RETURN]);
		EXPECT_LE(MIN_SPEEDUP, ratio)
			TH_LOG("RETURN only %.1f times faster than FULL_SLACK", ratio);
		ratio = per_call(&r[ZS_FULL_SLACK]) / per_call(&r[ZS_SCHEDULE]);
		EXPECT_LE(MIN_SPEEDUP, ratio)
			TH_LOG("SCHEDULE only %.1f times faster than FULL_SLACK", ratio);
	}
}

/* ------------------------------------------------------------------------
 * The IA-32 entry points: nanosleep and clock_nanosleep with time32, and
 * clock_nanosleep_time64, entered with int $0x80.
 */
#ifdef __x86_64__
#define NR32_getpid			20
#define NR32_nanosleep			162
#define NR32_clock_nanosleep		267
#define NR32_clock_nanosleep_time64	407

struct timespec32 {
	int32_t tv_sec;
	int32_t tv_nsec;
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

enum compat_call { C32_NS_REL, C32_CLK_REL, C32_CLK_ABS, C64_CLK_REL, C64_CLK_ABS };

static const char * const compat_names[] = {
	"nanosleep {0, 0}", "clock_nanosleep relative {0, 0}",
	"clock_nanosleep absolute now", "clock_nanosleep_time64 relative {0, 0}",
	"clock_nanosleep_time64 absolute now",
};

/* Returns 0 or the error number. */
static int compat_sleep(enum compat_call call, int64_t ns)
{
	struct timespec32 *ts32 = compat_buf;
	struct timespec *ts64 = (struct timespec *)((char *)compat_buf + 64);
	long a32 = (long)(uintptr_t)ts32, a64 = (long)(uintptr_t)ts64;
	int flags = 0, ret;
	int64_t t = ns;

	if (call == C32_CLK_ABS || call == C64_CLK_ABS) {
		flags = TIMER_ABSTIME;
		t += zs_now(CLOCK_MONOTONIC);
	}
	ts32->tv_sec = t / NSEC_PER_SEC;
	ts32->tv_nsec = t % NSEC_PER_SEC;
	*ts64 = zs_ns_ts(t);
	if (call == C32_NS_REL)
		ret = int80(NR32_nanosleep, a32, 0, 0, 0);
	else if (call <= C32_CLK_ABS)
		ret = int80(NR32_clock_nanosleep, CLOCK_MONOTONIC, flags, a32, 0);
	else
		ret = int80(NR32_clock_nanosleep_time64, CLOCK_MONOTONIC, flags, a64, 0);
	return ret < 0 ? -ret : ret;
}

TEST(compat_entry_points)
{
	unsigned int p, c;
	long nvcsw0, slept;
	int status, i, n, failures;
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

	ZS_ASSERT_PROBED();
	SET_SLACK(LARGE_SLACK_NS);
	for (p = 0; p < ZS_NR_POLICIES; p++) {
		/* Every call sleeps on CLOCK_MONOTONIC. */
		bool sleeps = (int)p == ZS_FULL_SLACK ||
			      ((int)p == ZS_DEFAULT && zs_monotonic_waits());

		SET_POLICY((int)p);
		for (c = 0; c < ARRAY_SIZE(compat_names); c++) {
			n = sleeps ? SLOW_CALLS : FAST_CALLS;
			compat_sleep(c, 0);	/* warm-up */
			failures = 0;
			nvcsw0 = zs_nvcsw();
			for (i = 0; i < n; i++)
				failures += !!compat_sleep(c, 0);
			slept = zs_nvcsw() - nvcsw0;
			EXPECT_EQ(0, failures)
				TH_LOG("%s, ia32 %s", zs_policy_name((int)p),
				       compat_names[c]);
			if (sleeps) {
				EXPECT_LE(n / 2, slept)
					TH_LOG("%s, ia32 %s: did not sleep",
					       zs_policy_name((int)p), compat_names[c]);
			} else if ((int)p != ZS_DEFAULT) {
				/* DEFAULT's are the kernel's own: not judged. */
				EXPECT_GE(1, slept)
					TH_LOG("%s, ia32 %s: slept %ld times",
					       zs_policy_name((int)p),
					       compat_names[c], slept);
			}
			if (c == C32_CLK_ABS || c == C64_CLK_ABS)
				continue;
			EXPECT_EQ(EINVAL, compat_sleep(c, -1))
				TH_LOG("%s, ia32 %s with tv_nsec -1",
				       zs_policy_name((int)p), compat_names[c]);
		}
	}
	munmap(compat_buf, 4096);
}
#endif

/* ------------------------------------------------------------------------
 * In a time namespace, an absolute deadline is compared with the clock as
 * the namespace sees it: a deadline at its "now" is a zero-length sleep,
 * one after it is not, whichever way the offset goes.
 */
static int timens_check(int64_t offset_ns, int64_t host_mono)
{
	static const clockid_t clocks[] = { CLOCK_MONOTONIC, CLOCK_BOOTTIME };
	static const int policies[] = { ZS_RETURN, ZS_SCHEDULE };
	struct loop_result r;
	struct timespec ts;
	int64_t mono, deadline;
	unsigned int c, p;
	int i, fails = 0;
	long nvcsw0;

	alarm(10);	/* a deadline misread by the offset would sleep for long */
	mono = zs_now(CLOCK_MONOTONIC);
	if (mono - host_mono < offset_ns || mono - host_mono > offset_ns + 30 * NSEC_PER_SEC)
		return 1;
	for (p = 0; p < ARRAY_SIZE(policies); p++) {
		if (zs_set_policy(policies[p]))
			return 2;
		for (c = 0; c < ARRAY_SIZE(clocks); c++) {
			nosleep_loop(clocks[c], true, FAST_CALLS, &r);
			if (r.failures || r.nvcsw) {
				ksft_print_msg("timens %+llds %s clk %d now: %d bad %ld/%d slept\n",
					       (long long)(offset_ns / NSEC_PER_SEC),
					       zs_policy_name(policies[p]), clocks[c], r.failures,
					       r.nvcsw, r.calls);
				fails++;
			}
			nvcsw0 = zs_nvcsw();
			for (i = 0; i < SLOW_CALLS / 2; i++) {
				deadline = zs_now(clocks[c]) + NSEC_PER_MSEC;
				ts = zs_ns_ts(deadline);
				if (sys_clock_nanosleep(clocks[c], TIMER_ABSTIME, &ts, NULL) ||
				    zs_now(clocks[c]) < deadline)
					fails++;
			}
			if (zs_nvcsw() - nvcsw0 < SLOW_CALLS / 4) {
				ksft_print_msg("timens %+llds %s clock %d: now + 1 ms: no sleep\n",
					       (long long)(offset_ns / NSEC_PER_SEC),
					       zs_policy_name(policies[p]), clocks[c]);
				fails++;
			}
		}
	}
	return fails ? 3 : 0;
}

TEST(time_namespace)
{
	int64_t offsets[2], host_mono;
	unsigned int i;
	int status;
	pid_t pid;

	if (access("/proc/self/ns/time", F_OK))
		SKIP(return, "no time namespaces (CONFIG_TIME_NS)");
	if (!is_root())
		SKIP(return, "time namespaces need CAP_SYS_ADMIN");
	/* The negative offset must keep the namespace's clocks positive. */
	if (zs_now(CLOCK_MONOTONIC) < 3 * NSEC_PER_SEC)
		zs_sleep_ns(3 * NSEC_PER_SEC - zs_now(CLOCK_MONOTONIC));
	offsets[0] = 1000 * NSEC_PER_SEC;
	offsets[1] = -(zs_now(CLOCK_MONOTONIC) / NSEC_PER_SEC - 1) * NSEC_PER_SEC;

	for (i = 0; i < ARRAY_SIZE(offsets); i++) {
		pid = fork();
		ASSERT_LE(0, pid);
		if (pid == 0) {
			long long off = offsets[i] / NSEC_PER_SEC;
			char buf[128];
			pid_t gc;
			int fd, len;

			if (unshare(CLONE_NEWTIME))
				_exit(10);
			len = snprintf(buf, sizeof(buf), "%d %lld 0\n%d %lld 0\n",
				       CLOCK_MONOTONIC, off, CLOCK_BOOTTIME, off);
			fd = open("/proc/self/timens_offsets", O_WRONLY);
			if (fd < 0 || write(fd, buf, len) != len)
				_exit(11);
			close(fd);
			host_mono = zs_now(CLOCK_MONOTONIC);
			gc = fork();
			if (gc == 0)
				_exit(timens_check(offsets[i], host_mono));
			if (gc < 0 || waitpid(gc, &status, 0) != gc)
				_exit(12);
			_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 13);
		}
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_TRUE(WIFEXITED(status));
		/*
		 * 1: offset not applied, 2: prctl failed, 3: a sleep misbehaved,
		 * 10, 11: no time namespace, 13: a sleep hung
		 */
		EXPECT_EQ(0, WEXITSTATUS(status))
			TH_LOG("offset %+lld s: exit %d", (long long)(offsets[i] / NSEC_PER_SEC),
			       WEXITSTATUS(status));
	}
}

TEST_HARNESS_MAIN
