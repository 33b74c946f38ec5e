// SPDX-License-Identifier: GPL-2.0
/*
 * PR_SET_TIMERSLACK_ZERO_POLICY and PR_GET_TIMERSLACK_ZERO_POLICY, and what
 * the policies do with zero-length sleeps wherever that is certain: the
 * voluntary context switches of a thread grow only when it blocks, and a
 * sleep that a signal ends with EINTR lasted until the signal.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <linux/time_types.h>

#include "../kselftest_harness.h"

#define SET		PR_SET_TIMERSLACK_ZERO_POLICY
#define GET		PR_GET_TIMERSLACK_ZERO_POLICY
#define NR_POLICIES	(PR_TIMERSLACK_ZERO_FULL_SLACK + 1)
#define NSEC_PER_SEC	1000000000LL

#ifdef __NR_clock_nanosleep_time64	/* 32-bit: the entry with 64-bit time */
#define NR_clock_nanosleep	__NR_clock_nanosleep_time64
#else
#define NR_clock_nanosleep	__NR_clock_nanosleep
#endif

static int set_policy(unsigned long policy, unsigned long flags)
{
	return prctl(SET, policy, flags, 0UL, 0UL);
}

static int get_policy(void)
{
	return prctl(GET, 0UL, 0UL, 0UL, 0UL);
}

/* Unknown policies and flags, and unused arguments but 0: EINVAL, no change. */
TEST(set_and_get)
{
	static const unsigned long bad[][5] = {	/* option, arguments 2 to 5 */
		{ SET, 4 }, { SET, -1UL }, { SET, ~0UL << 8 | 1 }, { SET, 1, 2 }, { SET, 1, -1UL },
		{ SET, 1, 0, 1 }, { SET, 1, 1, 0, 1 }, { SET, 1, 0, 0, -1UL },
		{ GET, 1 }, { GET, 0, 1 }, { GET, 0, 0, 1 }, { GET, 0, 0, 0, 1 },
	};
	unsigned long i;

	ASSERT_EQ(PR_TIMERSLACK_ZERO_DEFAULT, get_policy()) TH_LOG("not started under DEFAULT");
	for (i = 0; i < 2 * NR_POLICIES; i++) {	/* without and with ALL_THREADS */
		ASSERT_EQ(0, set_policy(i % NR_POLICIES, i / NR_POLICIES));
		EXPECT_EQ((int)(i % NR_POLICIES), get_policy());
	}
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(-1, prctl(bad[i][0], bad[i][1], bad[i][2], bad[i][3], bad[i][4]));
		EXPECT_EQ(EINVAL, errno) TH_LOG("%#lx, %#lx, %#lx, %#lx, %#lx", bad[i][0],
						bad[i][1], bad[i][2], bad[i][3], bad[i][4]);
		EXPECT_EQ(PR_TIMERSLACK_ZERO_FULL_SLACK, get_policy());
	}
}

#define THREADS		64
static pthread_rwlock_t gate = PTHREAD_RWLOCK_INITIALIZER;
static atomic_int created, stop;
static int create_err, policy_of[THREADS + 1];	/* [THREADS]: the spawner's */

static void *spawnee(void *i)
{
	pthread_rwlock_rdlock(&gate);		/* until ALL_THREADS has returned */
	policy_of[(long)i] = get_policy();
	pthread_rwlock_unlock(&gate);
	return NULL;
}

static void *spawner(void *arg)
{
	pthread_t t[THREADS];
	int i, n;

	policy_of[THREADS] = get_policy();
	set_policy(PR_TIMERSLACK_ZERO_SCHEDULE, 0);	/* for this thread only */
	for (n = 0; n < THREADS && !atomic_load(&stop); atomic_store(&created, ++n)) {
		create_err = pthread_create(&t[n], NULL, spawnee, (void *)(long)n);
		if (create_err)
			break;
	}
	atomic_store(&stop, 1);
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return NULL;
}

/*
 * Per thread, inherited by new threads and children, kept across execve().
 * ALL_THREADS while a thread creates threads: those created before the call
 * or while it runs get the policy from it, those created after it from
 * their creator.
 */
TEST(threads_and_children)
{
	pthread_t thread;
	int i, status;
	pid_t pid;

	ASSERT_EQ(0, set_policy(PR_TIMERSLACK_ZERO_FULL_SLACK, 0));
	ASSERT_EQ(0, pthread_rwlock_wrlock(&gate));
	ASSERT_EQ(0, pthread_create(&thread, NULL, spawner, NULL));
	while (atomic_load(&created) < THREADS / 4 && !atomic_load(&stop))
		sched_yield();
	EXPECT_EQ(PR_TIMERSLACK_ZERO_FULL_SLACK, get_policy()) TH_LOG("set by another thread");
	ASSERT_EQ(0, set_policy(PR_TIMERSLACK_ZERO_RETURN, PR_TIMERSLACK_ZERO_ALL_THREADS));
	atomic_store(&stop, 1);
	pthread_rwlock_unlock(&gate);
	ASSERT_EQ(0, pthread_join(thread, NULL));
	ASSERT_EQ(0, create_err);
	EXPECT_EQ(PR_TIMERSLACK_ZERO_FULL_SLACK, policy_of[THREADS]) TH_LOG("in a new thread");
	for (i = 0; i < atomic_load(&created); i++)
		EXPECT_EQ(PR_TIMERSLACK_ZERO_RETURN, policy_of[i]) TH_LOG("thread %d", i);

	pid = fork();
	if (pid == 0) {
		execl("/proc/self/exe", "zero_sleep_policy", "--print-policy", NULL);
		_exit(127);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(PR_TIMERSLACK_ZERO_RETURN, WEXITSTATUS(status)) TH_LOG("fork() and execve()");
}

FIXTURE(clock) {
};

FIXTURE_VARIANT(clock) {
	clockid_t clk;
	bool nanosleep;		/* nanosleep(), on CLOCK_MONOTONIC */
};

FIXTURE_VARIANT_ADD(clock, nanosleep) { .clk = CLOCK_MONOTONIC, .nanosleep = true };
FIXTURE_VARIANT_ADD(clock, realtime) { .clk = CLOCK_REALTIME };
FIXTURE_VARIANT_ADD(clock, monotonic) { .clk = CLOCK_MONOTONIC };
FIXTURE_VARIANT_ADD(clock, boottime) { .clk = CLOCK_BOOTTIME };
FIXTURE_VARIANT_ADD(clock, tai) { .clk = CLOCK_TAI };

#define SLACK_NS	10000000	/* 10 ms */

FIXTURE_SETUP(clock)
{
	mlockall(MCL_CURRENT | MCL_FUTURE);	/* a page fault may block too */
	ASSERT_EQ(0, prctl(PR_SET_TIMERSLACK, SLACK_NS, 0UL, 0UL, 0UL));
}

FIXTURE_TEARDOWN(clock)
{
}

static void on_alarm(int sig)
{
}

/*
 * One sleep on @clk, or through nanosleep() if @use_nanosleep: relative
 * @ns, or absolute at @ns from now; with @interrupt, SIGALRM comes every
 * 10 ms meanwhile.  Returns 0 or errno; *@rem is what the kernel wrote to
 * rmtp, or -1.  The system calls, with the kernel's types: the C library
 * may make nanosleep() a clock_nanosleep().
 */
static int zsleep(clockid_t clk, bool use_nanosleep, bool abs, long long ns, bool interrupt,
		  long long *rem)
{
	struct itimerval every_10ms = { { 0, 10000 }, { 0, 10000 } }, off = { 0 };
	struct sigaction sa = { .sa_handler = on_alarm };	/* no SA_RESTART */
	struct __kernel_old_timespec ots, orem = { -1, -1 };
	struct __kernel_timespec ts, trem = { -1, -1 };
	struct timespec now;
	int err;

	clock_gettime(clk, &now);
	ns += abs ? now.tv_sec * NSEC_PER_SEC + now.tv_nsec : 0;
	ts.tv_sec = ns / NSEC_PER_SEC;
	ts.tv_nsec = ns % NSEC_PER_SEC;
	ots = (struct __kernel_old_timespec){ ts.tv_sec, ts.tv_nsec };
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, interrupt ? &every_10ms : &off, NULL);
	if (use_nanosleep) {
		err = syscall(__NR_nanosleep, &ots, &orem) ? errno : 0;
		trem = (struct __kernel_timespec){ orem.tv_sec, orem.tv_nsec };
	} else {
		err = syscall(NR_clock_nanosleep, clk, abs ? TIMER_ABSTIME : 0, &ts, &trem) ?
		      errno : 0;
	}
	setitimer(ITIMER_REAL, &off, NULL);
	*rem = trem.tv_nsec < 0 ? -1 : trem.tv_sec * NSEC_PER_SEC + trem.tv_nsec;
	return err;
}

/*
 * Under RETURN and SCHEDULE a zero-length sleep (relative 0, absolute now
 * or 1 s ago) returns 0 without blocking and leaves rmtp alone; so does
 * one under FULL_SLACK whose end of slack has passed too (1 s ago).  Under
 * any policy, a sleep of 10 s is not zero-length: a signal ends it, and
 * rmtp gets what remains until the end of the slack.
 */
TEST_F(clock, zero_or_not)
{
	static const long long zero[] = { 0, 0, -NSEC_PER_SEC };	/* relative, absolute */
	int p, i, err, warm, n = variant->nanosleep ? 1 : 3;
	struct rusage u[2];
	long long rem;

	for (p = 0; p < NR_POLICIES; p++) {
		ASSERT_EQ(0, set_policy(p, 0));
		for (i = 0; i < n && p != PR_TIMERSLACK_ZERO_DEFAULT; i++) {
			if (p == PR_TIMERSLACK_ZERO_FULL_SLACK && zero[i] > -SLACK_NS)
				continue;	/* its end of slack is ahead */
			for (warm = 0; warm < 2; warm++) {	/* the second counts */
				getrusage(RUSAGE_THREAD, &u[0]);
				err = zsleep(variant->clk, variant->nanosleep, i, zero[i], false,
					     &rem);
				getrusage(RUSAGE_THREAD, &u[1]);
			}
			EXPECT_EQ(0, err) TH_LOG("policy %d, zero %d: %s", p, i, strerror(err));
			EXPECT_EQ(u[0].ru_nvcsw, u[1].ru_nvcsw) TH_LOG("policy %d, zero %d", p, i);
			EXPECT_EQ(-1, rem) TH_LOG("policy %d, zero %d wrote rmtp", p, i);
		}
		for (i = 0; i < (n + 1) / 2; i++) {	/* relative, absolute */
			err = zsleep(variant->clk, variant->nanosleep, i, 10 * NSEC_PER_SEC,
				     true, &rem);
			EXPECT_EQ(EINTR, err) TH_LOG("policy %d, 10 s %d: %s", p, i, strerror(err));
			EXPECT_TRUE(i ? rem == -1 : rem > 0 && rem <= 10 * NSEC_PER_SEC + SLACK_NS)
				TH_LOG("policy %d, 10 s %d: rmtp %lld", p, i, rem);
		}
	}
}

/*
 * FULL_SLACK's end of slack saturates as the kernel's does: with the
 * largest slack (from /proc, where a 32-bit program can write it) a
 * zero-length sleep lasts until a signal.  Its timer's soft expiry is the
 * request: it ends the sleep when the CPU's run of the timers of its clock
 * base reaches it.  A run goes by hard expiry and stops at the first timer
 * whose soft expiry is ahead: a timer due in an hour, armed from this CPU.
 */
TEST(full_slack_saturates)
{
	struct sigevent sev = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGUSR1 };
	struct itimerspec hour = { .it_value = { 3600, 0 } };
	const char *max = "18446744073709551615";
	long long rem;
	cpu_set_t cpu;
	timer_t guard;
	int fd, abs;

	CPU_ZERO(&cpu);
	CPU_SET(sched_getcpu(), &cpu);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(cpu), &cpu));
	ASSERT_EQ(0, timer_create(CLOCK_MONOTONIC, &sev, &guard));
	ASSERT_EQ(0, timer_settime(guard, 0, &hour, NULL));
	fd = open("/proc/self/timerslack_ns", O_WRONLY);
	ASSERT_EQ((ssize_t)strlen(max), write(fd, max, strlen(max)));
	close(fd);
	ASSERT_EQ(0, set_policy(PR_TIMERSLACK_ZERO_FULL_SLACK, 0));
	for (abs = 0; abs < 2; abs++)	/* nanosleep({0, 0}), absolute now */
		EXPECT_EQ(EINTR, zsleep(CLOCK_MONOTONIC, !abs, abs, 0, true, &rem))
			TH_LOG("absolute %d", abs);
	timer_delete(guard);
}

int main(int argc, char **argv)
{
	/* Run again by threads_and_children. */
	if (argc == 2 && !strcmp(argv[1], "--print-policy"))
		return get_policy();
	return test_harness_run(argc, argv);
}
