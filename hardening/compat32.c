// SPDX-License-Identifier: GPL-2.0
/*
 * The zero-length sleep policy through the IA-32 entry points: built with
 * -m32 -static and run on the x86_64 kernel, it calls
 *
 *   nanosleep              (old_timespec32: nanosleep_time32)
 *   clock_nanosleep        (old_timespec32: clock_nanosleep_time32)
 *   clock_nanosleep_time64 (__kernel_timespec, through the compat path)
 *
 * explicitly with syscall(2), since 32-bit glibc would route nanosleep()
 * to clock_nanosleep_time64, and the prctl options and /proc file with
 * 32-bit arguments.  The results must be those of 64-bit: a zero-length
 * sleep under RETURN or SCHEDULE returns 0 without a voluntary switch and
 * never fails with EINTR, one under FULL_SLACK sleeps (and under DEFAULT
 * too, on a kernel without the early return of Linux 7.2, which
 * zs_probe_early_return() finds out), a 1 ns sleep sleeps, EINVAL and
 * EFAULT are unchanged, and *rmtp is not written unless a sleep was
 * interrupted.
 *
 * Particular to the compat path: clock_nanosleep_time64 ignores the upper
 * 32 bits of tv_nsec, so {0, 0xffffffff00000000} is a zero-length request
 * and {0, 0x100000001} a 1 ns one.
 */
#define _GNU_SOURCE
#define _FILE_OFFSET_BITS 64
#define _TIME_BITS 64		/* 64-bit time_t for the clock readings */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>

#include "common.h"
#include "harness.h"

#if !defined(__i386__)
# error "compat32.c tests the IA-32 entry points: build it with -m32"
#endif

#define FAST_CALLS		100
#define ATTEMPTS		3
#define SLEEP_CALLS		20
#define LARGE_SLACK_NS		(10 * NSEC_PER_MSEC)
#define EINTR_SIGNALS		100
#define EINTR_MIN_CALLS		1000
#define EINTR_LIMIT_NS		(20 * NSEC_PER_SEC)

struct ts32 {
	int32_t tv_sec;
	int32_t tv_nsec;
};

struct ts64 {
	int64_t tv_sec;
	int64_t tv_nsec;
} __attribute__((packed, aligned(4)));	/* i386 layout of __kernel_timespec */

enum entry { NS32, CNS32, CNS64 };

static const char *const entry_names[] = {
	"nanosleep (time32)", "clock_nanosleep (time32)", "clock_nanosleep_time64",
};

/* Raw request and remainder, in the entry point's layout. */
union req {
	struct ts32 t32;
	struct ts64 t64;
};

static void make_req(enum entry e, union req *r, int64_t sec, int64_t nsec)
{
	memset(r, 0, sizeof(*r));
	if (e == CNS64) {
		r->t64.tv_sec = sec;
		r->t64.tv_nsec = nsec;
	} else {
		r->t32.tv_sec = (int32_t)sec;
		r->t32.tv_nsec = (int32_t)nsec;
	}
}

/* The call itself.  Returns 0 or the error number. */
static int call(enum entry e, clockid_t clk, int flags, const void *req, void *rem)
{
	long ret;

	switch (e) {
	case NS32:
		ret = syscall(SYS_nanosleep, req, rem);
		break;
	case CNS32:
		ret = syscall(SYS_clock_nanosleep, clk, flags, req, rem);
		break;
	default:
		ret = syscall(SYS_clock_nanosleep_time64, clk, flags, req, rem);
		break;
	}
	return ret ? errno : 0;
}

/* A sleep of @ns, relative, or absolute at the clock's now + @ns. */
static int sleep_ns(enum entry e, clockid_t clk, bool abs, int64_t ns, void *rem,
		    int64_t *deadline)
{
	union req r;
	int64_t t = ns;

	if (abs) {
		t += zs_now(clk);
		if (t < 0)
			t = 0;
		if (deadline)
			*deadline = t;
	}
	make_req(e, &r, t / NSEC_PER_SEC, t % NSEC_PER_SEC);
	return call(e, clk, abs ? TIMER_ABSTIME : 0, &r, rem);
}

struct zcase {
	bool abs;
	int64_t ns;		/* relative length, or offset from now */
	bool epoch;		/* absolute {0, 0} */
	const char *desc;
};

static const struct zcase zero_cases[] = {
	{ false, 0, false, "relative {0, 0}" },
	{ true, 0, false, "absolute, deadline = now" },
	{ true, -NSEC_PER_SEC, false, "absolute, deadline = now - 1 s" },
	{ true, 0, true, "absolute, deadline = {0, 0}" },
};

static int zero_sleep(enum entry e, clockid_t clk, const struct zcase *z, void *rem)
{
	union req r;

	if (z->epoch) {
		make_req(e, &r, 0, 0);
		return call(e, clk, TIMER_ABSTIME, &r, rem);
	}
	return sleep_ns(e, clk, z->abs, z->ns, rem, NULL);
}

static void canary(union req *rem)
{
	memset(rem, 0xa5, sizeof(*rem));
}

static bool canary_intact(const union req *rem)
{
	union req c;

	canary(&c);
	return !memcmp(rem, &c, sizeof(c));
}

FIXTURE(compat) {
	char *guard;		/* a PROT_NONE page after a read-write one */
};

FIXTURE_VARIANT(compat) {
	enum entry e;
};

FIXTURE_VARIANT_ADD(compat, nanosleep_time32) { .e = NS32 };
FIXTURE_VARIANT_ADD(compat, clock_nanosleep_time32) { .e = CNS32 };
FIXTURE_VARIANT_ADD(compat, clock_nanosleep_time64) { .e = CNS64 };

FIXTURE_SETUP(compat)
{
	char *map = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_TRUE(map != MAP_FAILED);
	ASSERT_EQ(0, mprotect(map + 4096, 4096, PROT_NONE));
	self->guard = map + 4096;
	ASSERT_EQ(0, zs_lock_memory());
	ASSERT_EQ(ZS_DEFAULT, zs_get_policy())
		TH_LOG("start the test under the default policy");
}

FIXTURE_TEARDOWN(compat)
{
	munmap(self->guard - 4096, 2 * 4096);
}

/* The clocks to try: nanosleep has only CLOCK_MONOTONIC. */
static unsigned int nr_clocks(enum entry e)
{
	return e == NS32 ? 1 : ZS_ARRAY_SIZE(zs_hrtimer_clocks);
}

static clockid_t clock_at(enum entry e, unsigned int i)
{
	return e == NS32 ? CLOCK_MONOTONIC : zs_hrtimer_clocks[i];
}

TEST_F(compat, zero_length_returns_without_sleeping)
{
	static const int policies[] = { ZS_RETURN, ZS_SCHEDULE };
	unsigned int p, c, z;
	int attempt, i, errors, first_err, written;
	long best, nv0, nv1;
	union req rem;

	for (p = 0; p < ZS_ARRAY_SIZE(policies); p++) {
		ASSERT_EQ(0, zs_set_policy(policies[p]));
		for (c = 0; c < nr_clocks(variant->e); c++) {
			clockid_t clk = clock_at(variant->e, c);

			for (z = 0; z < ZS_ARRAY_SIZE(zero_cases); z++) {
				if (variant->e == NS32 && zero_cases[z].abs)
					continue;
				errors = 0;
				first_err = 0;
				written = 0;
				best = -1;
				for (attempt = 0; attempt < ATTEMPTS && best; attempt++) {
					nv0 = zs_nvcsw();
					for (i = 0; i < FAST_CALLS; i++) {
						int err;

						canary(&rem);
						err = zero_sleep(variant->e, clk, &zero_cases[z], &rem);
						if (err && !errors++)
							first_err = err;
						written += !canary_intact(&rem);
					}
					nv1 = zs_nvcsw();
					if (best < 0 || nv1 - nv0 < best)
						best = nv1 - nv0;
				}
				ksft_print_msg("%s, %s %s, %s: %ld voluntary switches in %d calls\n",
					       entry_names[variant->e], zs_policy_name(policies[p]),
					       zs_clock_name(clk), zero_cases[z].desc, best, FAST_CALLS);
				EXPECT_EQ(0, errors)
					TH_LOG("%s: first error %s", zero_cases[z].desc,
					       strerror(first_err));
				EXPECT_EQ(0, written)
					TH_LOG("%s: *rmtp written", zero_cases[z].desc);
				EXPECT_EQ(0, best)
					TH_LOG("%s %s, %s: slept", zs_policy_name(policies[p]),
					       zs_clock_name(clk), zero_cases[z].desc);
			}
		}
	}
	EXPECT_EQ(0, zs_set_policy(ZS_DEFAULT));
}

/*
 * The control: under FULL_SLACK the same calls sleep for the slack.  So do
 * they under DEFAULT on a kernel without the early return of Linux 7.2; on
 * a kernel with it DEFAULT may return at once, and only its errors and
 * *rmtp are checked.
 */
TEST_F(compat, full_slack_sleeps)
{
	static const int policies[] = { ZS_FULL_SLACK, ZS_DEFAULT };
	unsigned int p, c, z;
	long nv0, nv1;
	int i, errors;
	union req rem;

	ZS_ASSERT_PROBED();
	ASSERT_EQ(0, zs_set_slack(LARGE_SLACK_NS));
	for (p = 0; p < ZS_ARRAY_SIZE(policies); p++) {
		ASSERT_EQ(0, zs_set_policy(policies[p]));
		for (c = 0; c < nr_clocks(variant->e); c++) {
			clockid_t clk = clock_at(variant->e, c);

			/* Only the deadlines that the slack keeps in the future. */
			for (z = 0; z < 2; z++) {
				if (variant->e == NS32 && zero_cases[z].abs)
					continue;
				errors = 0;
				nv0 = zs_nvcsw();
				for (i = 0; i < SLEEP_CALLS / 2; i++) {
					canary(&rem);
					errors += !!zero_sleep(variant->e, clk, &zero_cases[z], &rem);
					EXPECT_TRUE(canary_intact(&rem));
				}
				nv1 = zs_nvcsw();
				ksft_print_msg("%s, %s %s, %s: %ld of %d calls slept\n",
					       entry_names[variant->e], zs_policy_name(policies[p]),
					       zs_clock_name(clk), zero_cases[z].desc, nv1 - nv0,
					       SLEEP_CALLS / 2);
				EXPECT_EQ(0, errors);
				if (zs_zero_sleep_sleeps(policies[p]))
					EXPECT_LE(SLEEP_CALLS / 4, nv1 - nv0)
						TH_LOG("%s %s, %s: did not sleep",
						       zs_policy_name(policies[p]),
						       zs_clock_name(clk), zero_cases[z].desc);
			}
		}
	}
	EXPECT_EQ(0, zs_set_policy(ZS_DEFAULT));
}

/*
 * A request of 1 ns is not zero-length: it sleeps under every policy.  The
 * large slack keeps the timer from firing before the thread sleeps, which
 * on a slow emulator the default 50 us may not.  With the early return of
 * Linux 7.2 a 1 ns sleep has expired by the time its timer is armed and
 * returns at once when its clock base is otherwise empty (CLOCK_BOOTTIME,
 * CLOCK_TAI, and on PREEMPT_RT every clock: zs_monotonic_waits()); it must
 * then do under every policy what it does under DEFAULT.  Whether the base is empty depends on what else runs: the
 * policies take turns call by call, so that a while in which some other
 * task keeps a timer there weighs on all of them alike.  (Run one policy
 * after the other, a 7.3 guest once slept 8 of 20 times under SCHEDULE on
 * CLOCK_TAI and 0 under DEFAULT.)
 */
TEST_F(compat, one_ns_sleeps_under_every_policy)
{
	unsigned int p, c;
	int64_t t0, t1, deadline;
	long nv0, nv1;
	int i, errors, early;
	union req rem;

	ZS_ASSERT_PROBED();
	ASSERT_EQ(0, zs_set_slack(LARGE_SLACK_NS));
	for (c = 0; c < nr_clocks(variant->e); c++) {
		clockid_t clk = clock_at(variant->e, c);
		bool may_expire = zs_kernel_returns_early() &&
				  (clk == CLOCK_BOOTTIME || clk == CLOCK_TAI ||
				   !zs_monotonic_waits());
		long slept[ZS_NR_POLICIES] = { 0 };
		int errs[ZS_NR_POLICIES] = { 0 }, earlies[ZS_NR_POLICIES] = { 0 };

		for (i = 0; i < SLEEP_CALLS; i++) {
			for (p = 0; p < ZS_NR_POLICIES; p++) {
				ASSERT_EQ(0, zs_set_policy((int)p));
				canary(&rem);
				nv0 = zs_nvcsw();
				t0 = zs_now(clk);
				errs[p] += !!sleep_ns(variant->e, clk, false, 1, &rem, NULL);
				t1 = zs_now(clk);
				slept[p] += zs_nvcsw() - nv0;
				earlies[p] += t1 - t0 < 1;
				EXPECT_TRUE(canary_intact(&rem));
			}
		}
		for (p = 0; p < ZS_NR_POLICIES; p++) {
			ksft_print_msg("%s, %s %s, relative {0, 1}: %ld of %d calls slept\n",
				       entry_names[variant->e], zs_policy_name((int)p),
				       zs_clock_name(clk), slept[p], SLEEP_CALLS);
			EXPECT_EQ(0, errs[p]);
			EXPECT_EQ(0, earlies[p]);
			if (!may_expire) {
				EXPECT_LE(SLEEP_CALLS / 2, slept[p]);
			} else {
				EXPECT_GE(SLEEP_CALLS / 4, labs(slept[p] - slept[ZS_DEFAULT]))
					TH_LOG("%s %s: 1 ns slept %ld times, under DEFAULT %ld",
					       zs_policy_name((int)p), zs_clock_name(clk),
					       slept[p], slept[ZS_DEFAULT]);
			}
		}

		if (variant->e == NS32)
			continue;
		for (p = 0; p < ZS_NR_POLICIES; p++) {
			ASSERT_EQ(0, zs_set_policy((int)p));
			errors = 0;
			early = 0;
			nv0 = zs_nvcsw();
			for (i = 0; i < SLEEP_CALLS / 2; i++) {
				errors += !!sleep_ns(variant->e, clk, true, NSEC_PER_MSEC, NULL,
						     &deadline);
				early += zs_now(clk) < deadline;
			}
			nv1 = zs_nvcsw();
			ksft_print_msg("%s, %s %s, deadline = now + 1 ms: %ld of %d calls slept\n",
				       entry_names[variant->e], zs_policy_name((int)p),
				       zs_clock_name(clk), nv1 - nv0, SLEEP_CALLS / 2);
			EXPECT_EQ(0, errors);
			EXPECT_EQ(0, early);
			EXPECT_LE(SLEEP_CALLS / 4, nv1 - nv0);
		}
	}
	EXPECT_EQ(0, zs_set_policy(ZS_DEFAULT));
}

/* Argument validation comes first, and is the same under every policy. */
TEST_F(compat, invalid_arguments)
{
	static const int64_t bad[][2] = {
		{ 0, -1 }, { 0, 1000000000 }, { -1, 0 }, { INT32_MIN, 0 }, { 0, INT32_MIN },
		{ -1, -1 },
	};
	union req r, rem;
	void *ptrs[4];
	unsigned int p, i, j, flags;
	int err;

	ptrs[0] = NULL;
	ptrs[1] = (void *)1;
	ptrs[2] = self->guard;
	ptrs[3] = self->guard - 4;	/* tv_sec readable, tv_nsec not */

	for (p = 0; p < ZS_NR_POLICIES; p++) {
		ASSERT_EQ(0, zs_set_policy((int)p));
		for (flags = 0; flags <= TIMER_ABSTIME; flags += TIMER_ABSTIME) {
			if (variant->e == NS32 && flags)
				continue;
			for (i = 0; i < ZS_ARRAY_SIZE(bad); i++) {
				make_req(variant->e, &r, bad[i][0], bad[i][1]);
				canary(&rem);
				err = call(variant->e, CLOCK_MONOTONIC, (int)flags, &r, &rem);
				EXPECT_EQ(EINVAL, err)
					TH_LOG("%s, %s, flags %u, {%lld, %lld}: %s",
					       entry_names[variant->e], zs_policy_name((int)p), flags,
					       (long long)bad[i][0], (long long)bad[i][1], strerror(err));
				EXPECT_TRUE(canary_intact(&rem));
			}
			for (j = 0; j < ZS_ARRAY_SIZE(ptrs); j++) {
				canary(&rem);
				err = call(variant->e, CLOCK_MONOTONIC, (int)flags, ptrs[j], &rem);
				EXPECT_EQ(EFAULT, err)
					TH_LOG("%s, %s, flags %u, pointer %p: %s",
					       entry_names[variant->e], zs_policy_name((int)p), flags,
					       ptrs[j], strerror(err));
				EXPECT_TRUE(canary_intact(&rem));
			}
			if (variant->e == NS32)
				continue;
			/* The clock is checked before the request is read. */
			make_req(variant->e, &r, 0, 0);
			EXPECT_EQ(EINVAL, call(variant->e, 16, (int)flags, &r, NULL));
			EXPECT_EQ(EINVAL, call(variant->e, 16, (int)flags, NULL, NULL));
			EXPECT_EQ(EOPNOTSUPP, call(variant->e, CLOCK_MONOTONIC_RAW, (int)flags, &r, NULL));
			EXPECT_EQ(EOPNOTSUPP, call(variant->e, CLOCK_MONOTONIC_RAW, (int)flags, NULL, NULL));
			EXPECT_EQ(EOPNOTSUPP, call(variant->e, CLOCK_THREAD_CPUTIME_ID, (int)flags, &r, NULL));
			EXPECT_EQ(EINVAL, call(variant->e, -1, (int)flags, &r, NULL));
		}
		/* A failed call changes nothing. */
		EXPECT_EQ((int)p, zs_get_policy());
	}
	EXPECT_EQ(0, zs_set_policy(ZS_DEFAULT));
}

static unsigned long alarms;

static void on_alarm(int sig)
{
	(void)sig;
	zs_add(&alarms, 1);
}

/*
 * With SIGALRM every 0.5 ms: under FULL_SLACK with a 10 ms slack, zero
 * sleeps are interrupted and report their remainder in the entry point's
 * layout; under RETURN and SCHEDULE they never fail with EINTR.  DEFAULT,
 * also with a 10 ms slack, behaves as FULL_SLACK on a kernel without the
 * early return of Linux 7.2; with it, an interrupted sleep must still
 * report its remainder.
 */
TEST_F_TIMEOUT(compat, eintr_and_remainder, 120)
{
	struct itimerval it = { { 0, 500 }, { 0, 500 } }, off = { { 0, 0 }, { 0, 0 } };
	struct sigaction sa;
	unsigned int p;
	long calls, eintr, bad_rem, other, unwritten;
	int64_t t0, rem_ns;
	union req rem;
	int err;

	ZS_ASSERT_PROBED();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;	/* no SA_RESTART */
	ASSERT_EQ(0, sigaction(SIGALRM, &sa, NULL));
	for (p = 0; p < ZS_NR_POLICIES; p++) {
		bool sleeps = zs_zero_sleep_sleeps((int)p);
		bool fast = p == ZS_RETURN || p == ZS_SCHEDULE;

		ASSERT_EQ(0, zs_set_slack(fast ? 0 : LARGE_SLACK_NS));
		ASSERT_EQ(0, zs_set_policy((int)p));
		calls = eintr = bad_rem = other = unwritten = 0;
		zs_store(&alarms, 0);
		ASSERT_EQ(0, setitimer(ITIMER_REAL, &it, NULL));
		t0 = zs_now(CLOCK_MONOTONIC);
		do {
			canary(&rem);
			err = sleep_ns(variant->e, CLOCK_MONOTONIC, false, 0, &rem, NULL);
			calls++;
			if (err == EINTR) {
				eintr++;
				if (canary_intact(&rem)) {
					unwritten++;
					continue;
				}
				if (variant->e == CNS64)
					rem_ns = rem.t64.tv_sec * NSEC_PER_SEC + rem.t64.tv_nsec;
				else
					rem_ns = (int64_t)rem.t32.tv_sec * NSEC_PER_SEC + rem.t32.tv_nsec;
				bad_rem += rem_ns <= 0 || rem_ns > LARGE_SLACK_NS;
			} else if (err) {
				other++;
			} else if (!canary_intact(&rem)) {
				other++;
			}
		} while ((zs_load(&alarms) < EINTR_SIGNALS || calls < EINTR_MIN_CALLS ||
			  (sleeps && eintr < 10)) &&
			 zs_now(CLOCK_MONOTONIC) - t0 < EINTR_LIMIT_NS);
		ASSERT_EQ(0, setitimer(ITIMER_REAL, &off, NULL));
		ksft_print_msg("%s, %s: %lu signals, %ld calls, %ld EINTR (remainder bad %ld, unwritten %ld)\n",
			       entry_names[variant->e], zs_policy_name((int)p), zs_load(&alarms),
			       calls, eintr, bad_rem, unwritten);
		EXPECT_EQ(0, other);
		EXPECT_LE(EINTR_SIGNALS, (long)zs_load(&alarms));
		if (sleeps)
			EXPECT_LT(0, eintr);
		if (fast)
			EXPECT_EQ(0, eintr);
		EXPECT_EQ(0, bad_rem);
		EXPECT_EQ(0, unwritten);
	}
	EXPECT_EQ(0, zs_set_policy(ZS_DEFAULT));
	EXPECT_EQ(0, zs_set_slack(0));
}

/*
 * The compat path of clock_nanosleep_time64 drops the upper half of tv_nsec:
 * {0, 0xffffffff00000000} is zero-length, and {0, 0x100000001} is 1 ns,
 * which is not.  Where an expired CLOCK_MONOTONIC sleep waits for its
 * slack, the 1 ns sleep sleeps under RETURN.  Where it returns at once
 * (PREEMPT_RT with the early return), RETURN cannot tell the two apart,
 * but FULL_SLACK can: the zero-length sleep waits for the slack, the 1 ns
 * one returns as the kernel's own does.
 */
FIXTURE(time64_padding) {};
FIXTURE_SETUP(time64_padding)
{
	ASSERT_EQ(0, zs_lock_memory());
}
FIXTURE_TEARDOWN(time64_padding) {}

TEST_F(time64_padding, upper_half_of_tv_nsec_is_ignored)
{
	struct ts64 zero_padded = { 0, (int64_t)0xffffffff00000000ULL };
	struct ts64 one_padded = { 0, 0x0000000100000001LL };
	struct ts64 invalid = { 0, -1 };	/* low half 0xffffffff */
	long best = -1, nv0, nv1, nv2;
	int attempt, i, errors = 0;

	ZS_ASSERT_PROBED();
	ASSERT_EQ(0, zs_set_policy(ZS_RETURN));
	for (attempt = 0; attempt < ATTEMPTS && best; attempt++) {
		nv0 = zs_nvcsw();
		for (i = 0; i < FAST_CALLS; i++)
			errors += !!call(CNS64, CLOCK_MONOTONIC, 0, &zero_padded, NULL);
		nv1 = zs_nvcsw();
		if (best < 0 || nv1 - nv0 < best)
			best = nv1 - nv0;
	}
	ksft_print_msg("RETURN, {0, 0xffffffff00000000}: %ld voluntary switches in %d calls\n",
		       best, FAST_CALLS);
	EXPECT_EQ(0, errors);
	EXPECT_EQ(0, best);

	ASSERT_EQ(0, zs_set_slack(LARGE_SLACK_NS));
	if (zs_monotonic_waits()) {
		nv0 = zs_nvcsw();
		for (i = 0; i < SLEEP_CALLS; i++)
			errors += !!call(CNS64, CLOCK_MONOTONIC, 0, &one_padded, NULL);
		nv1 = zs_nvcsw();
		ksft_print_msg("RETURN, {0, 0x100000001}: %ld of %d calls slept\n",
			       nv1 - nv0, SLEEP_CALLS);
		EXPECT_EQ(0, errors);
		EXPECT_LE(SLEEP_CALLS / 2, nv1 - nv0);
	} else {
		ASSERT_EQ(0, zs_set_policy(ZS_FULL_SLACK));
		nv0 = zs_nvcsw();
		for (i = 0; i < SLEEP_CALLS; i++)
			errors += !!call(CNS64, CLOCK_MONOTONIC, 0, &zero_padded, NULL);
		nv1 = zs_nvcsw();
		for (i = 0; i < SLEEP_CALLS; i++)
			errors += !!call(CNS64, CLOCK_MONOTONIC, 0, &one_padded, NULL);
		nv2 = zs_nvcsw();
		ksft_print_msg("FULL_SLACK, {0, 0xffffffff00000000}: %ld of %d calls slept, {0, 0x100000001}: %ld\n",
			       nv1 - nv0, SLEEP_CALLS, nv2 - nv1);
		EXPECT_EQ(0, errors);
		EXPECT_LE(SLEEP_CALLS / 2, nv1 - nv0);
		EXPECT_GT(SLEEP_CALLS / 4, nv2 - nv1);
		ASSERT_EQ(0, zs_set_policy(ZS_RETURN));
	}

	EXPECT_EQ(EINVAL, call(CNS64, CLOCK_MONOTONIC, 0, &invalid, NULL));
	EXPECT_EQ(ZS_RETURN, zs_get_policy());
	EXPECT_EQ(0, zs_set_policy(ZS_DEFAULT));
}

/* The prctl options, the flag and the /proc file with 32-bit arguments. */
FIXTURE(control) {};
FIXTURE_SETUP(control) {}
FIXTURE_TEARDOWN(control) {}

TEST_F(control, prctl_round_trip_and_einval)
{
	static const unsigned long bad_policy[] = { 4, 5, 255, 256, 257, 258, 259, 0x7fffffff,
		0x80000000, 0x80000001, 0x80000003, 0xfffffffe, 0xffffffff };
	/* Flags in arg3 other than ZS_ALL_THREADS, alone or with it. */
	static const unsigned long bad_flags[] = { 2, 3, 4, 5, 0x80000000, 0x80000001,
		0xfffffffe, 0xffffffff };
	unsigned int p, i;

	for (p = 0; p < ZS_NR_POLICIES; p++) {
		EXPECT_EQ(0, zs_set_policy((int)p));
		EXPECT_EQ((int)p, zs_get_policy());
	}
	for (p = 0; p < ZS_NR_POLICIES; p++) {
		EXPECT_EQ(0, zs_set_policy_all((int)p));
		EXPECT_EQ((int)p, zs_get_policy());
	}
	ASSERT_EQ(0, zs_set_policy(ZS_RETURN));
	for (i = 0; i < ZS_ARRAY_SIZE(bad_policy); i++) {
		errno = 0;
		EXPECT_EQ(-1, zs_prctl(PR_SET_TIMERSLACK_ZERO_POLICY, bad_policy[i], 0, 0, 0));
		EXPECT_EQ(EINVAL, errno) TH_LOG("policy %#lx", bad_policy[i]);
		errno = 0;
		EXPECT_EQ(-1, zs_prctl(PR_SET_TIMERSLACK_ZERO_POLICY, bad_policy[i],
				       ZS_ALL_THREADS, 0, 0));
		EXPECT_EQ(EINVAL, errno) TH_LOG("policy %#lx, ALL_THREADS", bad_policy[i]);
	}
	for (i = 0; i < ZS_ARRAY_SIZE(bad_flags); i++) {
		errno = 0;
		EXPECT_EQ(-1, zs_prctl(PR_SET_TIMERSLACK_ZERO_POLICY, ZS_SCHEDULE, bad_flags[i], 0, 0));
		EXPECT_EQ(EINVAL, errno) TH_LOG("flags %#lx", bad_flags[i]);
	}
	for (i = 0; i < 2; i++) {
		unsigned long a[2] = { 0, 0 };

		a[i] = 1;
		errno = 0;
		EXPECT_EQ(-1, zs_prctl(PR_SET_TIMERSLACK_ZERO_POLICY, ZS_SCHEDULE, 0, a[0], a[1]));
		EXPECT_EQ(EINVAL, errno);
		errno = 0;
		EXPECT_EQ(-1, zs_prctl(PR_SET_TIMERSLACK_ZERO_POLICY, ZS_SCHEDULE, ZS_ALL_THREADS,
				       a[0], a[1]));
		EXPECT_EQ(EINVAL, errno);
		a[i] = 0xffffffff;
		errno = 0;
		EXPECT_EQ(-1, zs_prctl(PR_SET_TIMERSLACK_ZERO_POLICY, ZS_FULL_SLACK, 0, a[0], a[1]));
		EXPECT_EQ(EINVAL, errno);
	}
	for (i = 0; i < 4; i++) {
		unsigned long a[4] = { 0, 0, 0, 0 };

		a[i] = i & 1 ? 0x80000000 : 1;
		errno = 0;
		EXPECT_EQ(-1, zs_prctl(PR_GET_TIMERSLACK_ZERO_POLICY, a[0], a[1], a[2], a[3]));
		EXPECT_EQ(EINVAL, errno);
	}
	/* None of the failed calls changed the policy. */
	EXPECT_EQ(ZS_RETURN, zs_get_policy());
	EXPECT_EQ(0, zs_set_policy(ZS_DEFAULT));
}

/* A second thread that reports its policy each time it is asked to. */
struct sibling {
	unsigned long step;	/* asked for by the main thread */
	unsigned long done;	/* the last step answered */
	unsigned long policy;	/* the policy read at that step */
};

static void *sibling_fn(void *arg)
{
	struct sibling *sb = arg;
	unsigned long step = 0, want;

	while ((want = zs_load(&sb->step)) != ~0UL) {
		if (want == step) {
			usleep(100);
			continue;
		}
		step = want;
		zs_store(&sb->policy, (unsigned long)zs_get_policy());
		zs_store(&sb->done, step);
	}
	return NULL;
}

/* The policy of the sibling, read by itself after the main thread's change. */
static int sibling_policy(struct sibling *sb)
{
	unsigned long step = zs_load(&sb->step) + 1;
	int i;

	zs_store(&sb->step, step);
	for (i = 0; i < 100000 && zs_load(&sb->done) != step; i++)
		usleep(100);
	return zs_load(&sb->done) == step ? (int)zs_load(&sb->policy) : -1;
}

/* PR_TIMERSLACK_ZERO_ALL_THREADS with 32-bit arguments reaches the other thread. */
TEST_F(control, all_threads_flag)
{
	struct sibling sb = { 0, 0, 0 };
	pthread_t t;
	unsigned int p;

	ASSERT_EQ(0, pthread_create(&t, NULL, sibling_fn, &sb));
	EXPECT_EQ(ZS_DEFAULT, sibling_policy(&sb));
	/* Without the flag, only the calling thread changes. */
	EXPECT_EQ(0, zs_set_policy(ZS_RETURN));
	EXPECT_EQ(ZS_DEFAULT, sibling_policy(&sb));
	for (p = 0; p < ZS_NR_POLICIES; p++) {
		EXPECT_EQ(0, zs_set_policy_all((int)(ZS_NR_POLICIES - 1 - p)));
		EXPECT_EQ((int)(ZS_NR_POLICIES - 1 - p), zs_get_policy());
		EXPECT_EQ((int)(ZS_NR_POLICIES - 1 - p), sibling_policy(&sb));
	}
	/* A failed call changes no thread. */
	ASSERT_EQ(0, zs_set_policy_all(ZS_SCHEDULE));
	errno = 0;
	EXPECT_EQ(-1, zs_prctl(PR_SET_TIMERSLACK_ZERO_POLICY, ZS_RETURN, ZS_ALL_THREADS | 2, 0, 0));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(-1, zs_prctl(PR_SET_TIMERSLACK_ZERO_POLICY, ZS_NR_POLICIES, ZS_ALL_THREADS, 0, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(ZS_SCHEDULE, zs_get_policy());
	EXPECT_EQ(ZS_SCHEDULE, sibling_policy(&sb));
	EXPECT_EQ(0, zs_set_policy_all(ZS_DEFAULT));
	zs_store(&sb.step, ~0UL);
	pthread_join(t, NULL);
}

TEST_F(control, proc_file)
{
	const char *path = "/proc/thread-self/timerslack_zero_policy";
	char buf[8];
	int fd;

	fd = open(path, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	EXPECT_EQ(2, write(fd, "1\n", 2));
	EXPECT_EQ(ZS_RETURN, zs_get_policy());
	EXPECT_EQ(-1, write(fd, "4", 1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, syscall(SYS_write, fd, NULL, 1));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(ZS_RETURN, zs_get_policy());
	EXPECT_EQ(0, lseek(fd, 0, SEEK_SET));
	EXPECT_EQ(2, read(fd, buf, sizeof(buf)));
	EXPECT_EQ(0, memcmp(buf, "1\n", 2));
	EXPECT_EQ(0, lseek(fd, 0, SEEK_SET));
	EXPECT_EQ(2, write(fd, "3\n", 2));
	EXPECT_EQ(ZS_FULL_SLACK, zs_get_policy());
	EXPECT_EQ(0, lseek(fd, 0, SEEK_SET));
	EXPECT_EQ(2, read(fd, buf, sizeof(buf)));
	EXPECT_EQ(0, memcmp(buf, "3\n", 2));
	EXPECT_EQ(0, lseek(fd, 0, SEEK_SET));
	EXPECT_EQ(1, write(fd, "0", 1));
	EXPECT_EQ(ZS_DEFAULT, zs_get_policy());
	close(fd);
}

TEST_HARNESS_MAIN
