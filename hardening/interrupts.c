// SPDX-License-Identifier: GPL-2.0
/*
 * FULL_SLACK arms no timer whose slack has already run out.
 *
 * Under PR_TIMERSLACK_ZERO_FULL_SLACK a zero-length sleep lasts until the
 * end of the thread's timer slack.  When that end has passed too (a slack
 * of 1 ns, or the slack of 0 of every SCHED_FIFO, SCHED_RR and
 * SCHED_DEADLINE thread) there is nothing left to sleep for: the call
 * returns at once and arms no timer (SPEC 3.3).  Arming it anyway costs a
 * timer interrupt for nothing on every call, in a loop that the thread
 * controls: the cost that Linux 7.2's hrtimer_start_expires_user() removed
 * for the default policy.
 *
 * The tests count the local timer interrupts of the CPU they run on ("LOC"
 * in /proc/interrupts) over many zero-length sleeps.  The CPU's own tick
 * runs on meanwhile, so the bound is the ticks measured in a busy loop of
 * the same length plus 5 % of the calls; a timer armed per call costs one
 * interrupt per call.  A control (a 20 us sleep per call, which must fire)
 * shows that the count sees armed timers.  With a slack that is clearly
 * ahead (10 ms) FULL_SLACK still sleeps: a voluntary context switch per
 * call, and far longer calls than under RETURN.
 *
 * Pinned to the last CPU; needs root for SCHED_FIFO.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "common.h"
#include "harness.h"

#define CALLS			4000
#define CONTROL_CALLS		500
#define CONTROL_NS		(20 * NSEC_PER_USEC)
#define AHEAD_CALLS		20
#define AHEAD_SLACK_NS		(10 * NSEC_PER_MSEC)
#define RT_PRIO			10

/* The local timer interrupts that @cpu has taken so far, or -1. */
static long long local_timer_interrupts(int cpu)
{
	char line[4096];
	long long n = -1;
	FILE *f;

	f = fopen("/proc/interrupts", "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *p = line, *end;
		int col;

		while (*p == ' ')
			p++;
		if (strncmp(p, "LOC:", 4))
			continue;
		p += 4;
		/* One column per online CPU, in order; the guest has all online. */
		for (col = 0; col <= cpu; col++) {
			n = strtoll(p, &end, 10);
			if (end == p) {
				n = -1;
				break;
			}
			p = end;
		}
		break;
	}
	fclose(f);
	return n;
}

static int control_sleep(unsigned int i)
{
	struct timespec ts = zs_ns_ts(CONTROL_NS);

	(void)i;
	return syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &ts, NULL) ? errno : 0;
}

static int busy(unsigned int i)
{
	(void)i;
	return 0;
}

struct count {
	long long interrupts;
	int64_t elapsed_ns;
	long nvcsw;
	int errors;
};

/* Runs @calls calls of @fn (or spins for @spin_ns) and counts. */
static struct count measure(int cpu, int (*fn)(unsigned int), unsigned int calls,
			    int64_t spin_ns)
{
	struct count c = { 0 };
	long long loc0, loc1;
	long nv0, nv1;
	int64_t t0;
	unsigned int i;

	fn(0);				/* fault in the path */
	nv0 = zs_nvcsw();
	loc0 = local_timer_interrupts(cpu);
	t0 = zs_now(CLOCK_MONOTONIC);
	if (spin_ns)
		while (zs_now(CLOCK_MONOTONIC) - t0 < spin_ns)
			;
	for (i = 0; i < calls; i++)
		c.errors += fn(i) != 0;
	c.elapsed_ns = zs_now(CLOCK_MONOTONIC) - t0;
	loc1 = local_timer_interrupts(cpu);
	nv1 = zs_nvcsw();
	c.interrupts = loc0 < 0 || loc1 < 0 ? -1 : loc1 - loc0;
	c.nvcsw = nv1 - nv0;
	return c;
}

FIXTURE(loc) {
	int cpu;
};

FIXTURE_VARIANT(loc) {
	int sched;		/* SCHED_OTHER with a 1 ns slack, or SCHED_FIFO */
};

FIXTURE_VARIANT_ADD(loc, slack_1ns) { .sched = SCHED_OTHER };
FIXTURE_VARIANT_ADD(loc, fifo) { .sched = SCHED_FIFO };

FIXTURE_SETUP(loc)
{
	self->cpu = zs_last_cpu();
	ASSERT_LE(0, self->cpu);
	ASSERT_EQ(0, zs_pin_self(self->cpu));
	ASSERT_LE(0, local_timer_interrupts(self->cpu)) TH_LOG("no LOC line in /proc/interrupts");
	if (variant->sched == SCHED_FIFO) {
		struct sched_param sp = { .sched_priority = RT_PRIO };

		ASSERT_EQ(0, sched_setscheduler(0, SCHED_FIFO, &sp));
		/* An RT thread's slack is 0, whatever it asks for. */
		ASSERT_EQ(0, prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0));
	} else {
		ASSERT_EQ(0, zs_set_slack(1));
	}
}

FIXTURE_TEARDOWN(loc)
{
}

/* The control: a timer that is armed in every call shows in the count. */
TEST_F(loc, control_counts_armed_timers)
{
	struct count c;

	ASSERT_EQ(0, zs_set_policy(ZS_FULL_SLACK));
	c = measure(self->cpu, control_sleep, CONTROL_CALLS, 0);
	ksft_print_msg("%d sleeps of 20 us: %lld local timer interrupts in %lld ms\n",
		       CONTROL_CALLS, c.interrupts, (long long)(c.elapsed_ns / NSEC_PER_MSEC));
	EXPECT_EQ(0, c.errors);
	EXPECT_LE(CONTROL_CALLS / 2, c.interrupts);
}

TEST_F(loc, full_slack_arms_no_expired_timer)
{
	struct count c, tick;
	long long bound;

	ASSERT_EQ(0, zs_set_policy(ZS_FULL_SLACK));
	c = measure(self->cpu, zs_zero_sleep, CALLS, 0);
	/* The tick alone, over as long a busy loop. */
	tick = measure(self->cpu, busy, 0, c.elapsed_ns);
	bound = tick.interrupts + CALLS / 20;
	ksft_print_msg("%d zero-length sleeps: %lld local timer interrupts in %lld ms (a busy loop as long: %lld; bound %lld)\n",
		       CALLS, c.interrupts, (long long)(c.elapsed_ns / NSEC_PER_MSEC),
		       tick.interrupts, bound);
	EXPECT_EQ(0, c.errors);
	ASSERT_LE(0, tick.interrupts);
	EXPECT_GE(bound, c.interrupts);
}

/* With a slack that is clearly ahead, FULL_SLACK still sleeps. */
TEST(full_slack_sleeps_when_slack_ahead)
{
	struct count full, ret;

	ASSERT_EQ(0, zs_pin_self(zs_last_cpu()));
	ASSERT_EQ(0, zs_set_slack(AHEAD_SLACK_NS));
	ASSERT_EQ(0, zs_set_policy(ZS_RETURN));
	ret = measure(zs_last_cpu(), zs_zero_sleep, AHEAD_CALLS, 0);
	ASSERT_EQ(0, zs_set_policy(ZS_FULL_SLACK));
	full = measure(zs_last_cpu(), zs_zero_sleep, AHEAD_CALLS, 0);
	ksft_print_msg("10 ms slack, %d calls: FULL_SLACK %lld us and %ld voluntary switches, RETURN %lld us and %ld\n",
		       AHEAD_CALLS, (long long)(full.elapsed_ns / NSEC_PER_USEC), full.nvcsw,
		       (long long)(ret.elapsed_ns / NSEC_PER_USEC), ret.nvcsw);
	EXPECT_EQ(0, full.errors);
	EXPECT_EQ(0, ret.errors);
	EXPECT_LE(AHEAD_CALLS * 3 / 4, full.nvcsw);
	EXPECT_EQ(0, ret.nvcsw);
	EXPECT_LE(ret.elapsed_ns * 20, full.elapsed_ns);
}

TEST_HARNESS_MAIN
