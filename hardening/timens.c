// SPDX-License-Identifier: GPL-2.0
/*
 * Zero-length sleeps in a time namespace: an absolute deadline
 * is zero-length when it is at or before the clock's current time as the
 * namespace sees it, after its CLOCK_MONOTONIC or CLOCK_BOOTTIME offset.
 *
 * Each variant creates a namespace with different offsets for the two
 * clocks, one of them negative, so that a kernel that applied an offset
 * wrongly fails at least one case:
 *
 *   deadline              with offset +D              with offset -D
 *   ns_now                zero-length                 zero-length
 *   ns_now - 1 s          zero-length                 zero-length; in the
 *                                                     future if -D were
 *                                                     applied twice
 *   {0, 0}                zero-length                 zero-length
 *   ns_now - D / 2        zero-length; in the future  (not used)
 *                         for the host clock, so for
 *                         a kernel that compared the
 *                         raw value or added +D
 *   ns_now + 2 ms, 20 ms  sleep; in the past if +D    sleep; in the past for
 *                         were applied twice          the host clock, so for
 *                                                     a kernel that compared
 *                                                     the raw value
 *
 * Using the other clock's offset is caught because the two offsets differ
 * in sign.  Zero-length sleeps under RETURN and SCHEDULE must return 0 with
 * no voluntary context switch; the later deadlines must sleep (a voluntary
 * switch in most calls) and return at or after the deadline.  As a
 * control, a deadline of ns_now under FULL_SLACK with a 10 ms slack sleeps;
 * so does it under DEFAULT on a kernel without the early return of Linux
 * 7.2, which is checked there too (on a kernel with it DEFAULT may return
 * at once, and only its errors are checked); which one the kernel is, is
 * probed before the namespace is made.
 * A watchdog ends a sleep that a wrong conversion made long.
 *
 * Needs root (CLONE_NEWTIME needs CAP_SYS_ADMIN) and CONFIG_TIME_NS.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "common.h"
#include "harness.h"

#define ZERO_CALLS		50	/* per attempt, best of ZERO_ATTEMPTS */
#define ZERO_ATTEMPTS		3
#define SLEEP_CALLS		10
#define LARGE_SLACK_NS		(10 * NSEC_PER_MSEC)
#define WATCHDOG_SECONDS	60
#define NEGATIVE		0	/* offset: -(uptime - 2 s), set at run time */
#define MIN_UPTIME_S		5

struct offsets {
	int64_t mono_s;
	int64_t boot_s;
};

FIXTURE(timens) {};
FIXTURE_VARIANT(timens) {
	int64_t mono_s;		/* NEGATIVE: -(uptime - 2 s) */
	int64_t boot_s;
};

FIXTURE_VARIANT_ADD(timens, mono_plus_1000s_boot_negative) {
	.mono_s = 1000,
	.boot_s = NEGATIVE,
};

FIXTURE_VARIANT_ADD(timens, mono_negative_boot_plus_2000s) {
	.mono_s = NEGATIVE,
	.boot_s = 2000,
};

FIXTURE_VARIANT_ADD(timens, mono_plus_10_years_boot_plus_7s) {
	.mono_s = 10LL * 365 * 86400,
	.boot_s = 7,
};

FIXTURE_SETUP(timens) {}
FIXTURE_TEARDOWN(timens) {}

static int fails;

#define CHECK(cond, fmt, ...) do {					\
	if (!(cond)) {							\
		fails++;						\
		ksft_print_msg("FAIL: " fmt "\n", ##__VA_ARGS__);	\
	}								\
} while (0)

static long abs_sleep(clockid_t clk, int64_t deadline, struct timespec *rmtp)
{
	struct timespec ts = zs_ns_ts(deadline);

	return syscall(SYS_clock_nanosleep, clk, TIMER_ABSTIME, &ts, rmtp);
}

enum zcase { Z_NOW, Z_MINUS_1S, Z_EPOCH, Z_HALF_OFFSET, Z_RELATIVE, NR_ZCASES };

static const char *const zcase_names[NR_ZCASES] = {
	"deadline = now", "deadline = now - 1 s", "deadline = {0, 0}",
	"deadline = now - offset/2", "relative {0, 0}",
};

/* One zero-length sleep.  Returns 0 or the error number. */
static int zero_sleep(clockid_t clk, enum zcase zc, int64_t off_ns, struct timespec *rmtp)
{
	struct timespec zero = { 0, 0 };
	long ret;

	switch (zc) {
	case Z_NOW:
		ret = abs_sleep(clk, zs_now(clk), rmtp);
		break;
	case Z_MINUS_1S:
		ret = abs_sleep(clk, zs_now(clk) - NSEC_PER_SEC, rmtp);
		break;
	case Z_EPOCH:
		ret = abs_sleep(clk, 0, rmtp);
		break;
	case Z_HALF_OFFSET:
		ret = abs_sleep(clk, zs_now(clk) - off_ns / 2, rmtp);
		break;
	default:
		ret = syscall(SYS_clock_nanosleep, clk, 0, &zero, rmtp);
		break;
	}
	return ret ? errno : 0;
}

static void check_zero(clockid_t clk, int policy, enum zcase zc, int64_t off_ns)
{
	struct timespec rem, canary;
	long best = -1, nv0, nv1;
	int attempt, i, err, errors = 0, first_err = 0, written = 0;

	memset(&canary, 0x6b, sizeof(canary));
	for (attempt = 0; attempt < ZERO_ATTEMPTS && best != 0; attempt++) {
		nv0 = zs_nvcsw();
		for (i = 0; i < ZERO_CALLS; i++) {
			rem = canary;
			err = zero_sleep(clk, zc, off_ns, &rem);
			if (err && !errors++)
				first_err = err;
			written += !!memcmp(&rem, &canary, sizeof(rem));
		}
		nv1 = zs_nvcsw();
		if (best < 0 || nv1 - nv0 < best)
			best = nv1 - nv0;
	}
	ksft_print_msg("%s %s, %s: %ld voluntary switches in %d calls (attempts: %d)\n",
		       zs_policy_name(policy), zs_clock_name(clk), zcase_names[zc], best,
		       ZERO_CALLS, attempt);
	CHECK(!errors, "%s %s, %s: %d calls failed, first with %s", zs_policy_name(policy),
	      zs_clock_name(clk), zcase_names[zc], errors, strerror(first_err));
	CHECK(!written, "%s %s, %s: *rmtp written %d times", zs_policy_name(policy),
	      zs_clock_name(clk), zcase_names[zc], written);
	CHECK(best == 0, "%s %s, %s: a zero-length sleep slept", zs_policy_name(policy),
	      zs_clock_name(clk), zcase_names[zc]);
}

/* Deadlines after the namespace's now: the thread sleeps until them. */
static void check_future(clockid_t clk, int policy, int64_t ahead_ns)
{
	int64_t deadline, after;
	long nv0, nv1;
	int i, err, errors = 0, early = 0;

	nv0 = zs_nvcsw();
	for (i = 0; i < SLEEP_CALLS; i++) {
		deadline = zs_now(clk) + ahead_ns;
		err = abs_sleep(clk, deadline, NULL) ? errno : 0;
		after = zs_now(clk);
		errors += !!err;
		early += after < deadline;
	}
	nv1 = zs_nvcsw();
	ksft_print_msg("%s %s, deadline = now + %lld ms: %ld of %d calls slept, %d early\n",
		       zs_policy_name(policy), zs_clock_name(clk),
		       (long long)(ahead_ns / NSEC_PER_MSEC), nv1 - nv0, SLEEP_CALLS, early);
	CHECK(!errors, "%s %s, now + %lld ms: %d calls failed", zs_policy_name(policy),
	      zs_clock_name(clk), (long long)(ahead_ns / NSEC_PER_MSEC), errors);
	CHECK(!early, "%s %s, now + %lld ms: %d calls returned before the deadline",
	      zs_policy_name(policy), zs_clock_name(clk), (long long)(ahead_ns / NSEC_PER_MSEC),
	      early);
	/* A vCPU stall can let a deadline pass before the call: not in most. */
	CHECK(nv1 - nv0 >= SLEEP_CALLS / 2, "%s %s, now + %lld ms: did not sleep",
	      zs_policy_name(policy), zs_clock_name(clk), (long long)(ahead_ns / NSEC_PER_MSEC));
}

/* Runs in the namespace.  Returns the number of failed checks (at most 100). */
static int check_in_namespace(const struct offsets *o, int64_t host_mono, int64_t host_boot)
{
	static const int policies[] = { ZS_RETURN, ZS_SCHEDULE };
	static const int controls[] = { ZS_FULL_SLACK, ZS_DEFAULT };
	static const clockid_t clocks[] = { CLOCK_MONOTONIC, CLOCK_BOOTTIME };
	int64_t off_ns, ns_mono, ns_boot, dm, db;
	unsigned int p, c;
	int zc;
	long nv0, nv1;
	int i;

	alarm(WATCHDOG_SECONDS);
	ns_mono = zs_now(CLOCK_MONOTONIC);
	ns_boot = zs_now(CLOCK_BOOTTIME);
	dm = ns_mono - host_mono - o->mono_s * NSEC_PER_SEC;
	db = ns_boot - host_boot - o->boot_s * NSEC_PER_SEC;
	ksft_print_msg("offsets monotonic %+lld s, boottime %+lld s; namespace now: %lld.%03lld s, %lld.%03lld s\n",
		       (long long)o->mono_s, (long long)o->boot_s,
		       (long long)(ns_mono / NSEC_PER_SEC), (long long)(ns_mono % NSEC_PER_SEC / NSEC_PER_MSEC),
		       (long long)(ns_boot / NSEC_PER_SEC), (long long)(ns_boot % NSEC_PER_SEC / NSEC_PER_MSEC));
	/* host_* were read before the fork: the namespace is at most 30 s later. */
	CHECK(dm >= 0 && dm < 30 * NSEC_PER_SEC, "monotonic offset not in effect (%lld ns off)",
	      (long long)dm);
	CHECK(db >= 0 && db < 30 * NSEC_PER_SEC, "boottime offset not in effect (%lld ns off)",
	      (long long)db);
	if (fails)
		return fails;

	for (p = 0; p < ZS_ARRAY_SIZE(policies); p++) {
		CHECK(!zs_set_policy(policies[p]), "PR_SET_TIMERSLACK_ZERO_POLICY(%d): %s",
		      policies[p], strerror(errno));
		for (c = 0; c < ZS_ARRAY_SIZE(clocks); c++) {
			off_ns = (clocks[c] == CLOCK_MONOTONIC ? o->mono_s : o->boot_s) * NSEC_PER_SEC;
			for (zc = 0; zc < NR_ZCASES; zc++) {
				if (zc == Z_HALF_OFFSET && off_ns <= 0)
					continue;
				check_zero(clocks[c], policies[p], (enum zcase)zc, off_ns);
			}
			check_future(clocks[c], policies[p], 2 * NSEC_PER_MSEC);
			check_future(clocks[c], policies[p], 20 * NSEC_PER_MSEC);
		}
	}

	/* The control: the same "now" deadline sleeps under FULL_SLACK. */
	CHECK(!zs_set_slack(LARGE_SLACK_NS), "PR_SET_TIMERSLACK: %s", strerror(errno));
	for (p = 0; p < ZS_ARRAY_SIZE(controls); p++) {
		CHECK(!zs_set_policy(controls[p]), "PR_SET_TIMERSLACK_ZERO_POLICY(%d): %s",
		      controls[p], strerror(errno));
		for (c = 0; c < ZS_ARRAY_SIZE(clocks); c++) {
			nv0 = zs_nvcsw();
			for (i = 0; i < SLEEP_CALLS; i++)
				CHECK(!zero_sleep(clocks[c], Z_NOW, 0, NULL), "%s %s: %s",
				      zs_policy_name(controls[p]), zs_clock_name(clocks[c]),
				      strerror(errno));
			nv1 = zs_nvcsw();
			ksft_print_msg("%s %s, deadline = now, 10 ms slack: %ld of %d calls slept\n",
				       zs_policy_name(controls[p]), zs_clock_name(clocks[c]),
				       nv1 - nv0, SLEEP_CALLS);
			if (zs_zero_sleep_sleeps(controls[p]))
				CHECK(nv1 - nv0 >= SLEEP_CALLS / 2, "%s %s: the control did not sleep",
				      zs_policy_name(controls[p]), zs_clock_name(clocks[c]));
		}
	}
	alarm(0);
	return fails > 100 ? 100 : fails;
}

static int64_t resolve(int64_t s, int64_t uptime_s)
{
	return s == NEGATIVE ? -(uptime_s - 2) : s;
}

TEST_F_TIMEOUT(timens, deadlines_use_the_namespace_clock, 300)
{
	struct offsets o;
	int64_t uptime_s;
	int status;
	pid_t pid;

	if (geteuid() != 0)
		SKIP(return, "CLONE_NEWTIME needs CAP_SYS_ADMIN (run as root)");
	if (access("/proc/self/timens_offsets", F_OK))
		SKIP(return, "no time namespaces (CONFIG_TIME_NS)");
	ASSERT_EQ(ZS_DEFAULT, zs_get_policy())
		TH_LOG("start the test under the default policy");
	/* The answer is kept for the processes forked below. */
	ZS_ASSERT_PROBED();

	/* A negative offset must keep the namespace's clocks at 2 s or more. */
	uptime_s = zs_now(CLOCK_MONOTONIC) / NSEC_PER_SEC;
	if (uptime_s < MIN_UPTIME_S) {
		sleep((unsigned int)(MIN_UPTIME_S - uptime_s));
		uptime_s = zs_now(CLOCK_MONOTONIC) / NSEC_PER_SEC;
	}
	o.mono_s = resolve(variant->mono_s, uptime_s);
	o.boot_s = resolve(variant->boot_s, uptime_s);

	fflush(stdout);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int64_t host_mono, host_boot;
		char buf[128];
		int fd, len, st;
		pid_t gc;

		if (unshare(CLONE_NEWTIME)) {
			ksft_print_msg("unshare(CLONE_NEWTIME): %s\n", strerror(errno));
			fflush(stdout);
			_exit(101);
		}
		len = snprintf(buf, sizeof(buf), "%d %lld 0\n%d %lld 0\n",
			       CLOCK_MONOTONIC, (long long)o.mono_s,
			       CLOCK_BOOTTIME, (long long)o.boot_s);
		fd = open("/proc/self/timens_offsets", O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, buf, (size_t)len) != len) {
			ksft_print_msg("writing timens_offsets: %s\n", strerror(errno));
			fflush(stdout);
			_exit(102);
		}
		close(fd);
		host_mono = zs_now(CLOCK_MONOTONIC);
		host_boot = zs_now(CLOCK_BOOTTIME);
		fflush(stdout);
		gc = fork();	/* the child is in the new namespace */
		if (gc < 0)
			_exit(103);
		if (gc == 0) {
			st = check_in_namespace(&o, host_mono, host_boot);
			fflush(stdout);
			_exit(st);
		}
		if (waitpid(gc, &st, 0) != gc)
			_exit(104);
		if (WIFSIGNALED(st)) {
			ksft_print_msg("the process in the namespace was killed by signal %d%s\n",
				       WTERMSIG(st), WTERMSIG(st) == SIGALRM ?
				       " (watchdog: a sleep took too long)" : "");
			fflush(stdout);
			_exit(105);
		}
		_exit(WEXITSTATUS(st));
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	/* 1-100: failed checks; 101-104: setup; 105: killed (watchdog) */
	EXPECT_EQ(0, WEXITSTATUS(status))
		TH_LOG("offsets %+lld s, %+lld s: exit status %d", (long long)o.mono_s,
		       (long long)o.boot_s, WEXITSTATUS(status));
}

TEST_HARNESS_MAIN
