// SPDX-License-Identifier: GPL-2.0
/*
 * Sleeps, waits and timers across steps of CLOCK_REALTIME: none may end
 * or fire before its deadline, under any policy.
 *
 * A deadline that is still ahead on the clock that the caller named is
 * never zero-length (SPEC 3.2), however the clock was stepped before.  The
 * kernel keeps, per CPU, the offsets of CLOCK_REALTIME, CLOCK_BOOTTIME and
 * CLOCK_TAI to CLOCK_MONOTONIC; clock_was_set() brings them up to date on
 * every CPU when high resolution or NOHZ is active, and otherwise each CPU
 * only at its next tick.  A test of "has this expiry passed" that converts
 * the expiry to CLOCK_MONOTONIC through such an offset takes a deadline
 * that is ahead for one that has passed right after the clock was stepped
 * back.  Linux 7.2's check of user timers (hrtimer_check_user_timer())
 * did that, for every timer that it judges, until the first patch of the
 * 7.3 series: sleeps returned 0 at once, waits timed out and timers fired
 * before their time.  Relative expiries are affected too where the timer
 * stays on its own clock's base: CLOCK_TAI (whose offset moves with every
 * set of CLOCK_REALTIME) and the alarm clocks.  Relative CLOCK_REALTIME
 * hrtimers are moved to CLOCK_MONOTONIC, which has no offset.
 *
 * Every check below steps CLOCK_REALTIME back an hour right after a tick
 * (a short CLOCK_MONOTONIC sleep ends at one when there is no high
 * resolution), so that the stale offsets last for most of a tick, then at
 * once starts something 20 ms ahead and reads the clock when it ends or
 * right after it was armed: it must not end, or have fired, before its
 * deadline.  That is the POSIX guarantee, not a latency.  STEP_CALLS times
 * each.  They bite in a boot with "highres=off nohz=off"
 * (qemu/guest-tests.sh runs them there too).
 *
 * step_back.sleeps_until_deadline: clock_nanosleep() on CLOCK_REALTIME or
 *   CLOCK_TAI with TIMER_ABSTIME, under every policy.
 * step_back.relative_tai_sleeps_until_deadline: clock_nanosleep() on
 *   CLOCK_TAI, relative, under every policy.
 * step_back.futex_waits_until_deadline: FUTEX_WAIT_BITSET with
 *   FUTEX_CLOCK_REALTIME and pthread_cond_timedwait() (which uses it, as
 *   sem_timedwait() does), absolute on CLOCK_REALTIME: ETIMEDOUT before the
 *   deadline is early.  Under every policy, which must not matter.
 * step_back.hrtimeout_waits_until_deadline: the absolute CLOCK_REALTIME
 *   waits through schedule_hrtimeout_range_clock(): mq_timedreceive() on
 *   an empty POSIX message queue and mq_timedsend() on a full one, and,
 *   where /dev/ntsync exists (Linux 6.14 and later), NTSYNC_IOC_WAIT_ANY
 *   with NTSYNC_WAIT_REALTIME on a semaphore that nothing releases, in
 *   turn.  ETIMEDOUT before the deadline is early.  Under every policy.
 * timerfd_step_back: a CLOCK_REALTIME timerfd (TFD_TIMER_ABSTIME) must not
 *   have expired right after it was armed.
 * timerfd_alarm_step_back: the same for CLOCK_REALTIME_ALARM timerfds,
 *   absolute and relative: the alarm timer path, which timerfds reach
 *   without an RTC.
 * posix_timer_step_back, posix_timer_relative_tai_step_back: POSIX timers
 *   on CLOCK_REALTIME and CLOCK_TAI with TIMER_ABSTIME, and on CLOCK_TAI
 *   relative: no signal may be pending right after timer_settime().
 * alarm_step_back: POSIX timers on CLOCK_REALTIME_ALARM, absolute and
 *   relative, and absolute clock_nanosleep() on it.  These need an RTC,
 *   which the test guests have (qemu/kernel.config); on a kernel without
 *   one, the test fails and says so.
 * stress: a thread steps CLOCK_REALTIME back and forth by up to 100 ms
 *   while others sleep on absolute deadlines a little ahead, under every
 *   policy.  A sleep during which a step began or ended is not judged: a
 *   step forward ends it legitimately early.  Every other sleep must last
 *   until its deadline.  It runs for 3 s, and on until it has made 100
 *   steps and judged 100 sleeps (at most 60 s).  An early sleep that
 *   returned without blocking was ended by the sleep's own path (the
 *   policy, or the check of an expired timer); one that blocked was woken
 *   by its timer before its time, which is the timer expiry's doing (on
 *   PREEMPT_RT, the soft expiry loop's stale base time: the first patch of
 *   the 6.12 series).  Both are failures, counted apart.  On a kernel
 *   without the policy prctl, every sleep is DEFAULT's, so that the same
 *   stress judges a vanilla kernel.
 *
 * Each test puts CLOCK_REALTIME back where it was against CLOCK_MONOTONIC.
 * Needs root (CAP_SYS_TIME, CAP_WAKE_ALARM).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <signal.h>
#include <fcntl.h>
#include <mqueue.h>
#include <linux/futex.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/timerfd.h>

#include "common.h"
#include "harness.h"

#ifndef CLOCK_REALTIME_ALARM
# define CLOCK_REALTIME_ALARM	8
#endif

#define STEP_CALLS		50
#define STEP_BACK_NS		(3600 * NSEC_PER_SEC)
#define STEP_AHEAD_NS		(20 * NSEC_PER_MSEC)
#define STEP_NAP_NS		(100 * NSEC_PER_USEC)
#define STRESS_NS		(3 * NSEC_PER_SEC)
#define STRESS_MAX_NS		(60 * NSEC_PER_SEC)
#define STRESS_SLEEPERS		3
#define STRESS_MAX_STEP_NS	(100 * NSEC_PER_MSEC)
#define STRESS_MAX_AHEAD_NS	(2 * NSEC_PER_MSEC)
#define STRESS_MIN_JUDGED	100UL
#define STRESS_MIN_STEPS	100UL

/* CLOCK_REALTIME - CLOCK_MONOTONIC when the test started. */
static int64_t wall_offset(void)
{
	return zs_now(CLOCK_REALTIME) - zs_now(CLOCK_MONOTONIC);
}

/* Sets CLOCK_REALTIME to CLOCK_MONOTONIC + @offset. */
static int set_wall(int64_t offset)
{
	struct timespec ts = zs_ns_ts(zs_now(CLOCK_MONOTONIC) + offset);

	return clock_settime(CLOCK_REALTIME, &ts);
}

/* A relative sleep on CLOCK_MONOTONIC, not cut short by a signal. */
static void nap_ns(int64_t ns)
{
	struct timespec ts = zs_ns_ts(ns);

	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
		;
}

/*
 * Steps CLOCK_REALTIME back by STEP_BACK_NS from CLOCK_MONOTONIC + @offset.
 * Right after a tick where there is no high resolution: a sleep ends only
 * at a tick there, so that the CPU's offsets stay stale for most of a tick
 * after the step, instead of for what is left of the current one.
 */
static int step_back_now(int64_t offset)
{
	nap_ns(STEP_NAP_NS);
	return set_wall(offset - STEP_BACK_NS);
}

/*
 * The clock to read for a deadline on @clk: the alarm clocks are
 * CLOCK_REALTIME and CLOCK_BOOTTIME, which can be read without an RTC.
 */
static clockid_t read_clock(clockid_t clk)
{
	return clk == CLOCK_REALTIME_ALARM ? CLOCK_REALTIME : clk;
}

/* An absolute sleep until @deadline on @clk; 0 or an errno value. */
static int sleep_until(clockid_t clk, int64_t deadline)
{
	struct timespec ts = zs_ns_ts(deadline);

	return clock_nanosleep(clk, TIMER_ABSTIME, &ts, NULL);
}

/*
 * The @i-th wait of a check, which must last until its deadline: it sets
 * @clk to the clock that it waits on, reads it for @deadline, STEP_AHEAD_NS
 * ahead, waits and returns 0 when the wait ended as it should at its
 * deadline, or else an errno value.
 */
typedef int (*wait_fn)(int i, clockid_t *clk, int64_t *deadline);

/* What a wait_fn returns for a wait that ended as woken, which nothing does. */
#define WAIT_WOKEN		(-1)

/*
 * STEP_CALLS waits right after a step back: none may end before its
 * deadline, read on its own clock when it returns.
 */
static void step_back_waits(struct __test_metadata *_metadata, int64_t offset,
			    const char *what, wait_fn wait)
{
	int early = 0, errors = 0, first_err = 0, i;
	int64_t worst = 0;

	for (i = 0; i < STEP_CALLS; i++) {
		clockid_t clk;
		int64_t deadline, end;
		int err;

		ASSERT_EQ(0, step_back_now(offset));
		err = wait(i, &clk, &deadline);
		end = zs_now(read_clock(clk));
		ASSERT_EQ(0, set_wall(offset));
		if (err && !errors++)
			first_err = err;
		if (end < deadline) {
			early++;
			if (deadline - end > worst)
				worst = deadline - end;
		}
	}
	ksft_print_msg("%s: %d of %d %s ended before their deadline (at worst %lld us early)\n",
		       zs_policy_name(zs_get_policy()), early, STEP_CALLS, what,
		       (long long)(worst / NSEC_PER_USEC));
	EXPECT_EQ(0, errors) TH_LOG("first error: %s", first_err == WAIT_WOKEN ?
				    "woken, where it should time out" : strerror(first_err));
	EXPECT_EQ(0, early);
}

/* clock_nanosleep(TIMER_ABSTIME) on CLOCK_REALTIME and CLOCK_TAI in turn. */
static int wait_abs_sleep(int i, clockid_t *clk, int64_t *deadline)
{
	*clk = i % 2 ? CLOCK_TAI : CLOCK_REALTIME;
	*deadline = zs_now(*clk) + STEP_AHEAD_NS;
	return sleep_until(*clk, *deadline);
}

/*
 * A relative clock_nanosleep() on CLOCK_TAI: its timer stays on the TAI
 * base, whose offset a set of CLOCK_REALTIME moves.  The deadline is read
 * before the call, so the kernel's own is at or after it.
 */
static int wait_rel_tai_sleep(int i, clockid_t *clk, int64_t *deadline)
{
	struct timespec ts = zs_ns_ts(STEP_AHEAD_NS);

	(void)i;
	*clk = CLOCK_TAI;
	*deadline = zs_now(CLOCK_TAI) + STEP_AHEAD_NS;
	return clock_nanosleep(CLOCK_TAI, 0, &ts, NULL);
}

static pthread_mutex_t cond_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;

/*
 * An absolute wait on CLOCK_REALTIME that nothing wakes: FUTEX_WAIT_BITSET
 * with FUTEX_CLOCK_REALTIME itself and pthread_cond_timedwait() in turn.
 * Timing out is the right end; ETIMEDOUT before the deadline is early.
 */
static int wait_futex(int i, clockid_t *clk, int64_t *deadline)
{
	struct timespec ts;
	uint32_t word = 0;
	int err;

	*clk = CLOCK_REALTIME;
	*deadline = zs_now(CLOCK_REALTIME) + STEP_AHEAD_NS;
	ts = zs_ns_ts(*deadline);
	if (i % 2) {
		pthread_mutex_lock(&cond_mutex);
		err = pthread_cond_timedwait(&cond, &cond_mutex, &ts);
		pthread_mutex_unlock(&cond_mutex);
	} else {
		err = syscall(SYS_futex, &word,
			      FUTEX_WAIT_BITSET | FUTEX_CLOCK_REALTIME | FUTEX_PRIVATE_FLAG,
			      0, &ts, NULL, FUTEX_BITSET_MATCH_ANY) ? errno : 0;
	}
	if (err == ETIMEDOUT)
		return 0;
	return err ? err : WAIT_WOKEN;
}

/*
 * A POSIX message queue that holds one message of 8 bytes.  The empty one
 * makes mq_timedreceive() wait, the full one mq_timedsend(); both are
 * unlinked at once, so that nothing is left behind.
 */
static mqd_t mq_empty = (mqd_t)-1, mq_full = (mqd_t)-1;

static mqd_t mq_make(bool full)
{
	struct mq_attr attr = { .mq_maxmsg = 1, .mq_msgsize = 8 };
	char name[64];
	mqd_t q;

	snprintf(name, sizeof(name), "/zerosleep-clockstep-%d-%d", getpid(), full);
	q = mq_open(name, O_RDWR | O_CREAT | O_EXCL, 0600, &attr);
	if (q == (mqd_t)-1)
		return q;
	mq_unlink(name);
	if (full && mq_send(q, "zerosleep", 8, 0)) {
		mq_close(q);
		return (mqd_t)-1;
	}
	return q;
}

/*
 * mq_timedreceive() on the empty queue and mq_timedsend() on the full one
 * in turn, absolute on CLOCK_REALTIME, as POSIX defines them: they wait
 * through schedule_hrtimeout_range_clock(), that is
 * hrtimer_sleeper_start_expires().  Timing out is the right end.
 */
static int wait_mq(int i, clockid_t *clk, int64_t *deadline)
{
	struct timespec ts;
	char buf[8];
	int err;

	*clk = CLOCK_REALTIME;
	*deadline = zs_now(CLOCK_REALTIME) + STEP_AHEAD_NS;
	ts = zs_ns_ts(*deadline);
	if (i % 2)
		err = mq_timedsend(mq_full, "zerosleep", 8, 0, &ts) ? errno : 0;
	else
		err = mq_timedreceive(mq_empty, buf, sizeof(buf), NULL, &ts) < 0 ? errno : 0;
	if (err == ETIMEDOUT)
		return 0;
	return err ? err : WAIT_WOKEN;
}

/*
 * The ntsync driver's wait (<linux/ntsync.h>, Linux 6.14 and later), here
 * under names of its own: the C library's headers may lack it or have the
 * older form of 6.10 to 6.13.
 */
struct zs_ntsync_sem_args {
	uint32_t count;
	uint32_t max;
};

struct zs_ntsync_wait_args {
	uint64_t timeout;
	uint64_t objs;
	uint32_t count;
	uint32_t index;
	uint32_t flags;
	uint32_t owner;
	uint32_t alert;
	uint32_t pad;
};

#define ZS_NTSYNC_WAIT_REALTIME		0x1
#define ZS_NTSYNC_IOC_CREATE_SEM	_IOW('N', 0x80, struct zs_ntsync_sem_args)
#define ZS_NTSYNC_IOC_WAIT_ANY		_IOWR('N', 0x82, struct zs_ntsync_wait_args)

static int ntsync_dev = -1, ntsync_sem = -1;

/*
 * NTSYNC_IOC_WAIT_ANY on a semaphore whose count is 0, with an absolute
 * CLOCK_REALTIME timeout (NTSYNC_WAIT_REALTIME): it waits through
 * schedule_hrtimeout_range_clock() and fails with ETIMEDOUT at the
 * deadline.
 */
static int wait_ntsync(int i, clockid_t *clk, int64_t *deadline)
{
	struct zs_ntsync_wait_args args = {
		.objs = (uintptr_t)&ntsync_sem,
		.count = 1,
		.flags = ZS_NTSYNC_WAIT_REALTIME,
		.owner = 1,	/* any owner but 0, which the driver refuses */
	};
	int err;

	(void)i;
	*clk = CLOCK_REALTIME;
	*deadline = zs_now(CLOCK_REALTIME) + STEP_AHEAD_NS;
	args.timeout = *deadline;
	err = ioctl(ntsync_dev, ZS_NTSYNC_IOC_WAIT_ANY, &args) ? errno : 0;
	if (err == ETIMEDOUT)
		return 0;
	return err ? err : WAIT_WOKEN;
}

FIXTURE(step_back) {
	int64_t offset;
};

FIXTURE_VARIANT(step_back) {
	int policy;
};

FIXTURE_VARIANT_ADD(step_back, default) { .policy = ZS_DEFAULT };
FIXTURE_VARIANT_ADD(step_back, return) { .policy = ZS_RETURN };
FIXTURE_VARIANT_ADD(step_back, schedule) { .policy = ZS_SCHEDULE };
FIXTURE_VARIANT_ADD(step_back, full_slack) { .policy = ZS_FULL_SLACK };

FIXTURE_SETUP(step_back)
{
	self->offset = wall_offset();
	ASSERT_EQ(0, zs_set_policy(variant->policy));
}

FIXTURE_TEARDOWN(step_back)
{
	EXPECT_EQ(0, set_wall(self->offset));
}

TEST_F(step_back, sleeps_until_deadline)
{
	step_back_waits(_metadata, self->offset, "absolute sleeps", wait_abs_sleep);
}

TEST_F(step_back, relative_tai_sleeps_until_deadline)
{
	step_back_waits(_metadata, self->offset, "relative CLOCK_TAI sleeps",
			wait_rel_tai_sleep);
}

TEST_F(step_back, futex_waits_until_deadline)
{
	step_back_waits(_metadata, self->offset, "absolute CLOCK_REALTIME futex waits",
			wait_futex);
}

/*
 * The waits through schedule_hrtimeout_range_clock(): message queues, and
 * ntsync where /dev/ntsync exists (CONFIG_NTSYNC, Linux 6.14 and later;
 * 7.3's guest has it, 6.12's driver depends on BROKEN).
 */
static int wait_hrtimeout(int i, clockid_t *clk, int64_t *deadline)
{
	if (ntsync_dev >= 0 && i % 3 == 2)
		return wait_ntsync(i, clk, deadline);
	return wait_mq(i, clk, deadline);
}

TEST_F(step_back, hrtimeout_waits_until_deadline)
{
	struct zs_ntsync_sem_args sem = { .count = 0, .max = 1 };

	mq_empty = mq_make(false);
	ASSERT_NE((mqd_t)-1, mq_empty) TH_LOG("mq_open: %s", strerror(errno));
	mq_full = mq_make(true);
	ASSERT_NE((mqd_t)-1, mq_full) TH_LOG("mq_open or mq_send: %s", strerror(errno));
	ntsync_dev = open("/dev/ntsync", O_RDWR | O_CLOEXEC);
	if (ntsync_dev >= 0) {
		ntsync_sem = ioctl(ntsync_dev, ZS_NTSYNC_IOC_CREATE_SEM, &sem);
		ASSERT_LE(0, ntsync_sem) TH_LOG("NTSYNC_IOC_CREATE_SEM: %s", strerror(errno));
	} else {
		ASSERT_EQ(ENOENT, errno) TH_LOG("/dev/ntsync: %s", strerror(errno));
	}
	step_back_waits(_metadata, self->offset, ntsync_dev >= 0 ?
			"absolute CLOCK_REALTIME message queue and ntsync waits" :
			"absolute CLOCK_REALTIME message queue waits (no /dev/ntsync)",
			wait_hrtimeout);
	if (ntsync_dev >= 0) {
		close(ntsync_sem);
		close(ntsync_dev);
		ntsync_dev = -1;
	}
	mq_close(mq_empty);
	mq_close(mq_full);
}

/* A timer of a check: its clock, and whether it is armed relative. */
struct timer_case {
	clockid_t clk;
	bool relative;
};

/*
 * Arms a timer on @clk, at @value (absolute, or relative if @relative),
 * and says whether it has fired already (1), not (0), or failed (-1).
 */
typedef int (*arm_fn)(clockid_t clk, bool relative, int64_t value, void *arg);

/*
 * Arms STEP_CALLS timers STEP_AHEAD_NS ahead right after a step back,
 * going round @cases, and checks that none had fired before its time.
 */
static void step_back_timer(struct __test_metadata *_metadata, int64_t offset,
			    arm_fn arm, void *arg, const struct timer_case *cases,
			    int nr_cases)
{
	int early = 0, errors = 0, i;

	for (i = 0; i < STEP_CALLS; i++) {
		const struct timer_case *c = &cases[i % nr_cases];
		clockid_t rclk = read_clock(c->clk);
		int64_t deadline, now;
		int fired;

		ASSERT_EQ(0, step_back_now(offset));
		deadline = zs_now(rclk) + STEP_AHEAD_NS;
		fired = arm(c->clk, c->relative, c->relative ? STEP_AHEAD_NS : deadline, arg);
		now = zs_now(rclk);
		ASSERT_EQ(0, set_wall(offset));
		if (fired < 0)
			errors++;
		else if (fired && now < deadline)
			early++;
	}
	ksft_print_msg("%d of %d timers fired before their deadline\n", early, STEP_CALLS);
	EXPECT_EQ(0, errors);
	EXPECT_EQ(0, early);
}

static int arm_timerfd(clockid_t clk, bool relative, int64_t value, void *arg)
{
	struct itimerspec its = { .it_value = zs_ns_ts(value) };
	uint64_t ticks;
	int fd, fired;

	(void)arg;
	fd = timerfd_create(clk, TFD_NONBLOCK | TFD_CLOEXEC);
	if (fd < 0)
		return -1;
	if (timerfd_settime(fd, relative ? 0 : TFD_TIMER_ABSTIME, &its, NULL)) {
		close(fd);
		return -1;
	}
	if (read(fd, &ticks, sizeof(ticks)) == sizeof(ticks))
		fired = 1;
	else
		fired = errno == EAGAIN ? 0 : -1;
	close(fd);
	return fired;
}

static int arm_posix_timer(clockid_t clk, bool relative, int64_t value, void *arg)
{
	struct itimerspec its = { .it_value = zs_ns_ts(value) };
	struct sigevent sev = {
		.sigev_notify = SIGEV_SIGNAL,
		.sigev_signo = SIGUSR1,
	};
	struct timespec zero = { 0, 0 };
	sigset_t *set = arg, pending;
	timer_t t;
	int fired;

	if (timer_create(clk, &sev, &t))
		return -1;
	if (timer_settime(t, relative ? 0 : TIMER_ABSTIME, &its, NULL)) {
		timer_delete(t);
		return -1;
	}
	if (sigpending(&pending))
		fired = -1;
	else
		fired = sigismember(&pending, SIGUSR1);
	timer_delete(t);
	/* Drop a signal that is pending, whenever it came. */
	sigtimedwait(set, NULL, &zero);
	return fired;
}

/* Blocks SIGUSR1, the signal of the POSIX timers, into @set. */
static int block_timer_signal(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGUSR1);
	return sigprocmask(SIG_BLOCK, set, NULL);
}

TEST(timerfd_step_back)
{
	static const struct timer_case cases[] = { { CLOCK_REALTIME, false } };
	int64_t offset = wall_offset();

	step_back_timer(_metadata, offset, arm_timerfd, NULL, cases, ZS_ARRAY_SIZE(cases));
	EXPECT_EQ(0, set_wall(offset));
}

TEST(timerfd_alarm_step_back)
{
	static const struct timer_case cases[] = {
		{ CLOCK_REALTIME_ALARM, false }, { CLOCK_REALTIME_ALARM, true },
	};
	int64_t offset = wall_offset();

	step_back_timer(_metadata, offset, arm_timerfd, NULL, cases, ZS_ARRAY_SIZE(cases));
	EXPECT_EQ(0, set_wall(offset));
}

TEST(posix_timer_step_back)
{
	static const struct timer_case cases[] = {
		{ CLOCK_REALTIME, false }, { CLOCK_TAI, false },
	};
	int64_t offset = wall_offset();
	sigset_t set;

	ASSERT_EQ(0, block_timer_signal(&set));
	step_back_timer(_metadata, offset, arm_posix_timer, &set, cases, ZS_ARRAY_SIZE(cases));
	EXPECT_EQ(0, set_wall(offset));
}

TEST(posix_timer_relative_tai_step_back)
{
	static const struct timer_case cases[] = { { CLOCK_TAI, true } };
	int64_t offset = wall_offset();
	sigset_t set;

	ASSERT_EQ(0, block_timer_signal(&set));
	step_back_timer(_metadata, offset, arm_posix_timer, &set, cases, ZS_ARRAY_SIZE(cases));
	EXPECT_EQ(0, set_wall(offset));
}

/* clock_nanosleep(TIMER_ABSTIME) on CLOCK_REALTIME_ALARM. */
static int wait_alarm_sleep(int i, clockid_t *clk, int64_t *deadline)
{
	(void)i;
	*clk = CLOCK_REALTIME_ALARM;
	*deadline = zs_now(CLOCK_REALTIME) + STEP_AHEAD_NS;
	return sleep_until(CLOCK_REALTIME_ALARM, *deadline);
}

TEST(alarm_step_back)
{
	static const struct timer_case cases[] = {
		{ CLOCK_REALTIME_ALARM, false }, { CLOCK_REALTIME_ALARM, true },
	};
	struct sigevent sev = { .sigev_notify = SIGEV_NONE };
	int64_t offset = wall_offset();
	sigset_t set;
	timer_t t;

	/*
	 * Alarm POSIX timers and sleeps need an RTC (the guests have one);
	 * alarm timerfds do not.  Without one, this fails, with a reason.
	 */
	ASSERT_EQ(0, timer_create(CLOCK_REALTIME_ALARM, &sev, &t))
		TH_LOG("timer_create(CLOCK_REALTIME_ALARM): %s%s", strerror(errno),
		       errno == EOPNOTSUPP ? " (the kernel has no RTC)" : "");
	timer_delete(t);
	ASSERT_EQ(0, block_timer_signal(&set));
	step_back_timer(_metadata, offset, arm_posix_timer, &set, cases, ZS_ARRAY_SIZE(cases));
	step_back_waits(_metadata, offset, "absolute CLOCK_REALTIME_ALARM sleeps", wait_alarm_sleep);
	EXPECT_EQ(0, set_wall(offset));
}

struct stress {
	int64_t offset;
	int64_t end;			/* on CLOCK_MONOTONIC */
	int64_t deadline;		/* the same, however few the steps */
	unsigned long seq;		/* odd while the clock is being stepped */
	unsigned long stop;
	unsigned long steps;
	unsigned long judged;		/* by every sleeper */
	unsigned long step_errors;
};

/*
 * The stress runs for STRESS_NS, and on until it has made enough steps
 * and judged enough sleeps to mean something: on a loaded host a TCG
 * guest's stepper managed 92 steps in 3 s, where an idle one makes about
 * 380.  STRESS_MAX_NS bounds it; the counts are checked afterwards.
 */
static bool stress_goes_on(struct stress *s)
{
	int64_t now = zs_now(CLOCK_MONOTONIC);

	if (zs_load(&s->stop) || now >= s->deadline)
		return false;
	return now < s->end || zs_load(&s->steps) < STRESS_MIN_STEPS ||
	       zs_load(&s->judged) < STRESS_MIN_JUDGED;
}

/*
 * How long the stress runs at least: STRESS_NS, or CLOCKSTEP_STRESS_SECONDS
 * (1 to 3600) when it is set, for a long hunt by hand (doc/testing.md).
 */
static int64_t stress_ns(void)
{
	const char *env = getenv("CLOCKSTEP_STRESS_SECONDS");
	char *end;
	long sec;

	if (!env)
		return STRESS_NS;
	errno = 0;
	sec = strtol(env, &end, 10);
	if (errno || end == env || *end || sec < 1 || sec > 3600) {
		fprintf(stderr, "clockstep: CLOCKSTEP_STRESS_SECONDS=%s: not a number of seconds from 1 to 3600\n",
			env);
		exit(KSFT_FAIL);
	}
	return sec * NSEC_PER_SEC;
}

struct sleeper {
	struct stress *s;
	bool policies;		/* the kernel has the policy prctl */
	uint64_t rand;
	unsigned long judged, skipped, early, errors;
	/* Early sleeps by policy, and those on CLOCK_TAI. */
	unsigned long early_policy[ZS_NR_POLICIES], early_tai;
	unsigned long early_blocked;	/* early, after blocking on the timer */
	int64_t worst;
	int setup_err;
};

static void *stepper(void *arg)
{
	struct stress *s = arg;
	uint64_t rand = 1;

	while (stress_goes_on(s)) {
		int64_t delta = (int64_t)zs_below(&rand, 2 * STRESS_MAX_STEP_NS + 1) -
				STRESS_MAX_STEP_NS;

		zs_add(&s->seq, 1);
		if (set_wall(s->offset + delta))
			zs_add(&s->step_errors, 1);
		zs_add(&s->seq, 1);
		zs_add(&s->steps, 1);
		nap_ns((int64_t)zs_below(&rand, 10 * NSEC_PER_MSEC));
	}
	return NULL;
}

static void *sleeper(void *arg)
{
	struct sleeper *sl = arg;
	struct stress *s = sl->s;

	if (zs_set_slack(50 * NSEC_PER_USEC)) {
		sl->setup_err = errno;
		return NULL;
	}
	while (stress_goes_on(s)) {
		clockid_t clk = zs_one_in(&sl->rand, 2) ? CLOCK_TAI : CLOCK_REALTIME;
		int policy = sl->policies ? (int)zs_below(&sl->rand, ZS_NR_POLICIES) : 0;
		unsigned long seq0, seq1;
		int64_t deadline, end;
		long nv0, nv1;

		if (sl->policies && zs_set_policy(policy)) {
			sl->setup_err = errno;
			return NULL;
		}
		seq0 = zs_load(&s->seq);
		deadline = zs_now(clk) + (int64_t)zs_below(&sl->rand, STRESS_MAX_AHEAD_NS);
		nv0 = zs_nvcsw();
		if (sleep_until(clk, deadline))
			sl->errors++;
		end = zs_now(clk);
		nv1 = zs_nvcsw();
		seq1 = zs_load(&s->seq);
		if ((seq0 & 1) || seq0 != seq1) {
			sl->skipped++;
			continue;
		}
		sl->judged++;
		zs_add(&s->judged, 1);
		if (end < deadline) {
			sl->early++;
			sl->early_policy[policy]++;
			sl->early_tai += clk == CLOCK_TAI;
			sl->early_blocked += nv1 > nv0;
			if (deadline - end > sl->worst)
				sl->worst = deadline - end;
		}
	}
	return NULL;
}

TEST(stress)
{
	struct sleeper sl[STRESS_SLEEPERS] = { 0 };
	pthread_t st, t[STRESS_SLEEPERS];
	unsigned long judged = 0, skipped = 0, early = 0, errors = 0;
	unsigned long early_policy[ZS_NR_POLICIES] = { 0 }, early_tai = 0, early_blocked = 0;
	struct stress s = { 0 };
	bool policies = zs_get_policy() >= 0;
	int64_t worst = 0;
	int i, p;

	if (!policies)
		ksft_print_msg("no policy prctl (%s): DEFAULT sleeps only\n", strerror(errno));
	s.offset = wall_offset();
	s.end = zs_now(CLOCK_MONOTONIC) + stress_ns();
	s.deadline = s.end + STRESS_MAX_NS - STRESS_NS;
	for (i = 0; i < STRESS_SLEEPERS; i++) {
		sl[i].s = &s;
		sl[i].policies = policies;
		sl[i].rand = (uint64_t)i + 1;
		ASSERT_EQ(0, pthread_create(&t[i], NULL, sleeper, &sl[i]));
	}
	ASSERT_EQ(0, pthread_create(&st, NULL, stepper, &s));
	for (i = 0; i < STRESS_SLEEPERS; i++)
		pthread_join(t[i], NULL);
	zs_store(&s.stop, 1);
	pthread_join(st, NULL);
	EXPECT_EQ(0, set_wall(s.offset));

	for (i = 0; i < STRESS_SLEEPERS; i++) {
		EXPECT_EQ(0, sl[i].setup_err) TH_LOG("sleeper %d: %s", i, strerror(sl[i].setup_err));
		judged += sl[i].judged;
		skipped += sl[i].skipped;
		early += sl[i].early;
		errors += sl[i].errors;
		for (p = 0; p < ZS_NR_POLICIES; p++)
			early_policy[p] += sl[i].early_policy[p];
		early_tai += sl[i].early_tai;
		early_blocked += sl[i].early_blocked;
		if (sl[i].worst > worst)
			worst = sl[i].worst;
	}
	ksft_print_msg("%lu steps; %lu sleeps judged, %lu during a step; %lu ended early (at worst %lld us)\n",
		       s.steps, judged, skipped, early, (long long)(worst / NSEC_PER_USEC));
	/* Where early sleeps come from: DEFAULT's are the kernel's alone. */
	if (early) {
		for (p = 0; p < ZS_NR_POLICIES; p++)
			ksft_print_msg("  early under %s: %lu\n", zs_policy_name(p), early_policy[p]);
		ksft_print_msg("  early on CLOCK_TAI: %lu, on CLOCK_REALTIME: %lu\n",
			       early_tai, early - early_tai);
		ksft_print_msg("  early after blocking: %lu, without: %lu\n",
			       early_blocked, early - early_blocked);
	}
	EXPECT_EQ(0UL, s.step_errors);
	EXPECT_EQ(0UL, errors);
	/* Enough sleeps judged, and enough steps, for the test to mean something. */
	EXPECT_LE(STRESS_MIN_JUDGED, judged);
	EXPECT_LE(STRESS_MIN_STEPS, s.steps);
	EXPECT_EQ(0UL, early - early_blocked);
	EXPECT_EQ(0UL, early_blocked);
}

TEST_HARNESS_MAIN
