// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzzer for the zero-length sleep policy interfaces.
 *
 * At least 100,000 calls (--calls N), each one of:
 *
 * - prctl(PR_SET_TIMERSLACK_ZERO_POLICY or PR_GET_TIMERSLACK_ZERO_POLICY,
 *   or an unused neighbouring option number) with random 64-bit arguments,
 *   biased towards edge values, the four policies and, in SET's arg3,
 *   PR_TIMERSLACK_ZERO_ALL_THREADS;
 * - a write of random bytes, 0 to 8192 of them, from a good or bad buffer,
 *   at offset 0 or not, to the thread's own policy file under
 *   /proc/self/task/<tid>/, /proc/self/ or /proc/thread-self/;
 * - nanosleep() or clock_nanosleep() with random clock ids (valid and not),
 *   random flags and random timespecs, through good and bad pointers for
 *   both the request (NULL, (void *)1, a low unmapped address, a PROT_NONE
 *   page, a timespec that runs into a PROT_NONE page, a kernel address) and
 *   the remainder (also a read-only page).
 *
 * A model predicts each result from the documented rules, and the call
 * must match it exactly: prctl fails only with EINVAL (SET takes a policy
 * of 0 to 3 and, in arg3, no flag but ALL_THREADS; with ALL_THREADS it sets
 * every thread's policy, which in this single-threaded process is the
 * caller's); a /proc write (of 0 to 3) only
 * with EINVAL or EFAULT; nanosleep() only with EFAULT or EINVAL;
 * clock_nanosleep() with EINVAL, EOPNOTSUPP or EFAULT according to the
 * clock.  After every call the policy is read back and compared with the
 * model, so that it changes only on valid input, and every 64 calls it is
 * also read through the three /proc files.
 *
 * Valid sleeps are kept short: relative ones to at most 1 ms, and absolute
 * ones to the past or at most 1 ms ahead (the timer slack is 1 ns).  On an
 * hrtimer clock a successful sleep must not write *rmtp, a zero-length one
 * under RETURN must take no voluntary context switch, and a non-zero one
 * must last at least its length.  CPU-time clocks of this process are only
 * given invalid requests, since a valid one could sleep for ever.
 *
 * The seed is printed ("# seed: N"); --seed N replays a run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "common.h"
#include "harness.h"

#define MIN_CALLS		100000L
#define MAX_REPORTS		20
#define PAGE			4096
#define BUF_PAGES		3	/* room for an 8192-byte write anywhere */
#define MAX_WRITE		8192
#define MAX_SLEEP_NS		NSEC_PER_MSEC
#define KTIME_SEC_MAX		(INT64_MAX / NSEC_PER_SEC)

#ifndef CLOCK_REALTIME_ALARM
# define CLOCK_REALTIME_ALARM	8
# define CLOCK_BOOTTIME_ALARM	9
#endif

static uint64_t opt_seed;
static bool opt_seed_given;
static long opt_calls = MIN_CALLS;

/* How the kernel treats a clock id in clock_nanosleep(). */
enum clock_class {
	C_HRTIMER,		/* the four hrtimer clocks of zs_hrtimer_clocks[] */
	C_NO_NSLEEP,		/* known clock without nsleep: EOPNOTSUPP */
	C_INVALID,		/* no such clock: EINVAL */
	C_ALARM,		/* alarm clocks: depend on an RTC and CAP_WAKE_ALARM */
	C_CPU_OWN_PROCESS,	/* would sleep on our own CPU time: invalid input only */
	C_CPU_EINVAL,		/* CPU clock that nsleep rejects: EINVAL */
};

struct clock_case {
	clockid_t id;
	enum clock_class cls;
};

/* A pid that cannot exist (above PID_MAX_LIMIT). */
#define NO_PID			0x0fffffff
#define CPUCLOCK(pid, which)	((clockid_t)(~(unsigned int)(pid) << 3) | (which))
#define FDCLOCK(fd)		((clockid_t)(~(unsigned int)(fd) << 3) | 3)

static const struct clock_case other_clocks[] = {
	{ CLOCK_PROCESS_CPUTIME_ID, C_CPU_OWN_PROCESS },
	{ CLOCK_THREAD_CPUTIME_ID, C_NO_NSLEEP },
	{ CLOCK_MONOTONIC_RAW, C_NO_NSLEEP },
	{ CLOCK_REALTIME_COARSE, C_NO_NSLEEP },
	{ CLOCK_MONOTONIC_COARSE, C_NO_NSLEEP },
	{ CLOCK_REALTIME_ALARM, C_ALARM },
	{ CLOCK_BOOTTIME_ALARM, C_ALARM },
	{ 10, C_INVALID },				/* CLOCK_SGI_CYCLE, gone */
	{ 12, C_INVALID }, { 13, C_INVALID }, { 14, C_INVALID }, { 15, C_INVALID },
	{ 16, C_INVALID }, { 17, C_INVALID }, { 64, C_INVALID }, { 1000, C_INVALID },
	{ INT_MAX, C_INVALID },
	{ -1, C_CPU_EINVAL },		/* per-thread, pid 0, CPUCLOCK_MAX */
	{ CPUCLOCK(NO_PID, 0), C_CPU_EINVAL },
	{ CPUCLOCK(NO_PID, 1), C_CPU_EINVAL },
	{ CPUCLOCK(NO_PID, 2), C_CPU_EINVAL },
	{ CPUCLOCK(NO_PID, 6), C_CPU_EINVAL },	/* per-thread */
	{ CPUCLOCK(0, 4), C_CPU_EINVAL },	/* own thread, per-thread PROF */
	{ FDCLOCK(0), C_NO_NSLEEP },		/* dynamic (fd) clocks have no nsleep */
	{ FDCLOCK(1000), C_NO_NSLEEP },
	{ INT_MIN | 3, C_NO_NSLEEP },
};

/* Option numbers next to ours that nothing uses. */
static const unsigned long neighbour_options[] = {
	0x545a5046, 0x545a5048, 0x545a5052, 0x545a5054, 0x545a5073, 0x545a5067,
	0x745a5053, 0x545b5053,
};

enum ptr_kind {
	P_GOOD,		/* fully readable and writable */
	P_RO,		/* readable, read-only page */
	P_NULL,
	P_ONE,		/* (void *)1 */
	P_LOW,		/* below mmap_min_addr, never mapped */
	P_GUARD,	/* a PROT_NONE page */
	P_STRADDLE,	/* runs from a good page into the PROT_NONE page */
	P_KERNEL,	/* a kernel address: access_ok() fails */
	NR_PTR_KINDS,
};

static const char *const ptr_names[NR_PTR_KINDS] = {
	"good", "read-only", "NULL", "(void *)1", "low", "PROT_NONE", "straddling", "kernel",
};

struct fuzz {
	uint64_t rng;
	int model;		/* the policy the thread must have */
	char *buf;		/* BUF_PAGES read-write pages ... */
	char *guard;		/* ... then one PROT_NONE page ... */
	char *ro;		/* ... then one read-only page */
	int wfd[3];		/* policy file: task/<tid>, self, thread-self */
	int rfd[3];		/* the same, for reading back */
	int alarm_result;	/* result of a valid alarm-clock sleep */
	long calls;
	unsigned long n_prctl[3], n_write, n_write_off, n_ns, n_cns;
	unsigned long n_ok, n_einval, n_efault, n_eopnotsupp, n_eperm;
	unsigned long n_sleeps, n_zero, n_zero_return, n_nonzero, n_model_changes;
	unsigned long n_set_all;		/* successful SETs with ALL_THREADS */
	unsigned long n_became[ZS_NR_POLICIES];	/* valid changes to each policy */
	unsigned long failures;
};

static const char *const wpaths[3] = { "task/<tid>", "self", "thread-self" };

static void fail(struct fuzz *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void fail(struct fuzz *f, const char *fmt, ...)
{
	va_list ap;

	if (f->failures++ >= MAX_REPORTS)
		return;
	va_start(ap, fmt);
	printf("# FAIL call %ld: ", f->calls);
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	fflush(stdout);
}

static void count_result(struct fuzz *f, int err)
{
	switch (err) {
	case 0:
		f->n_ok++;
		break;
	case EINVAL:
		f->n_einval++;
		break;
	case EFAULT:
		f->n_efault++;
		break;
	case EOPNOTSUPP:
		f->n_eopnotsupp++;
		break;
	case EPERM:
		f->n_eperm++;
		break;
	}
}

static const char *errname(int err)
{
	static char other[32];

	switch (err) {
	case 0:
		return "success";
	case EINVAL:
		return "EINVAL";
	case EFAULT:
		return "EFAULT";
	case EOPNOTSUPP:
		return "EOPNOTSUPP";
	case EPERM:
		return "EPERM";
	case EINTR:
		return "EINTR";
	}
	snprintf(other, sizeof(other), "errno %d", err);
	return other;
}

/* A random 64-bit value, mostly an edge value. */
static uint64_t edge64(uint64_t *rng)
{
	static const uint64_t edges[] = {
		0, 1, 2, 3, 4, 0x7f, 0x80, 0xff, 0x100, 0x101, 0x102, 0x7fffffff,
		0x80000000, 0x80000001, 0x80000002, 0xffffffff, 0xfffffffe,
		0x100000000ULL, 0x100000001ULL, 0x100000002ULL,
		0x7fffffffffffffffULL, 0x8000000000000000ULL, 0x8000000000000001ULL,
		~0ULL, ~0ULL - 1, ~0ULL - 2,
	};
	unsigned int k;

	switch (zs_below(rng, 4)) {
	case 0:
	case 1:
		return edges[zs_below(rng, ZS_ARRAY_SIZE(edges))];
	case 2:
		k = (unsigned int)zs_below(rng, 64);
		return (1ULL << k) + zs_below(rng, 3) - 1;
	default:
		return zs_rand(rng);
	}
}

/* An argument that is zero half of the time. */
static unsigned long fuzz_arg(uint64_t *rng)
{
	return zs_one_in(rng, 2) ? 0 : (unsigned long)edge64(rng);
}

static void check_policy(struct fuzz *f, const char *after)
{
	int got = zs_get_policy();

	if (got != f->model)
		fail(f, "after %s: policy %d (%s), model %d", after, got,
		     got < 0 ? strerror(errno) : "", f->model);
}

static void check_proc_policy(struct fuzz *f)
{
	char buf[16];
	ssize_t r;
	int i;

	for (i = 0; i < 3; i++) {
		if (lseek(f->rfd[i], 0, SEEK_SET) != 0) {
			fail(f, "lseek %s: %s", wpaths[i], strerror(errno));
			continue;
		}
		r = read(f->rfd[i], buf, sizeof(buf));
		if (r != 2 || buf[0] != '0' + f->model || buf[1] != '\n')
			fail(f, "reading %s: %zd bytes, \"%.*s\", model %d", wpaths[i], r,
			     r > 0 ? (int)r : 0, buf, f->model);
	}
}

/* ------------------------------------------------------------------ prctl */

static void fuzz_prctl(struct fuzz *f)
{
	uint64_t *rng = &f->rng;
	unsigned long opt, a2, a3, a4, a5;
	int which = (int)zs_below(rng, 20);
	long ret, expect;
	int err, expect_err;

	a2 = fuzz_arg(rng);
	a3 = fuzz_arg(rng);
	a4 = fuzz_arg(rng);
	a5 = fuzz_arg(rng);
	if (which < 9) {
		opt = PR_SET_TIMERSLACK_ZERO_POLICY;
		if (zs_below(rng, 10) < 6)
			a2 = zs_below(rng, ZS_NR_POLICIES + 1);
		if (zs_one_in(rng, 3))
			a3 = ZS_ALL_THREADS;
		f->n_prctl[0]++;
		if (!(a3 & ~(unsigned long)ZS_ALL_THREADS) && !(a4 | a5) && a2 < ZS_NR_POLICIES) {
			expect = 0;
			expect_err = 0;
		} else {
			expect = -1;
			expect_err = EINVAL;
		}
	} else if (which < 18) {
		opt = PR_GET_TIMERSLACK_ZERO_POLICY;
		f->n_prctl[1]++;
		if (!(a2 | a3 | a4 | a5)) {
			expect = f->model;
			expect_err = 0;
		} else {
			expect = -1;
			expect_err = EINVAL;
		}
	} else {
		opt = neighbour_options[zs_below(rng, ZS_ARRAY_SIZE(neighbour_options))];
		f->n_prctl[2]++;
		expect = -1;
		expect_err = EINVAL;
	}

	errno = 0;
	ret = zs_prctl(opt, a2, a3, a4, a5);
	err = ret < 0 ? errno : 0;
	count_result(f, err);
	if (ret != expect || err != expect_err)
		fail(f, "prctl(%#lx, %#lx, %#lx, %#lx, %#lx) = %ld (%s), expected %ld (%s)",
		     opt, a2, a3, a4, a5, ret, errname(err), expect, errname(expect_err));
	if (opt == PR_SET_TIMERSLACK_ZERO_POLICY && !expect_err) {
		f->n_model_changes += f->model != (int)a2;
		f->n_became[a2]++;
		f->n_set_all += a3 == ZS_ALL_THREADS;
		f->model = (int)a2;
	}
	check_policy(f, "prctl");
}

/* ------------------------------------------------------------- /proc write */

/* A pointer of the given kind with @len bytes behind it, and how many are readable. */
static char *pick_ptr(struct fuzz *f, enum ptr_kind kind, size_t len, size_t *readable)
{
	uint64_t *rng = &f->rng;
	size_t room;

	switch (kind) {
	case P_GOOD:
		room = BUF_PAGES * PAGE - len;
		*readable = len;
		return f->buf + zs_below(rng, room + 1);
	case P_RO:
		if (len > PAGE)
			len = PAGE;
		*readable = len;
		return f->ro + zs_below(rng, PAGE - len + 1);
	case P_STRADDLE:
		/* 1 to 8 readable bytes, then the guard page. */
		*readable = 1 + zs_below(rng, 8);
		return f->guard - *readable;
	case P_NULL:
		*readable = 0;
		return NULL;
	case P_ONE:
		*readable = 0;
		return (char *)1;
	case P_LOW:
		*readable = 0;
		return (char *)0x1000;
	case P_GUARD:
		*readable = 0;
		return f->guard + zs_below(rng, PAGE);
	default:
		*readable = 0;
		return (char *)0xffffffff81000000UL;
	}
}

static enum ptr_kind pick_kind(uint64_t *rng, unsigned int bad_in_16)
{
	if (zs_below(rng, 16) >= bad_in_16)
		return zs_one_in(rng, 8) ? P_RO : P_GOOD;
	return (enum ptr_kind)(P_NULL + zs_below(rng, NR_PTR_KINDS - P_NULL));
}

static void fill_bytes(uint64_t *rng, char *p, size_t len)
{
	static const char alphabet[] = "0123\n \t+-x\0";
	size_t i;
	bool small = zs_one_in(rng, 2);

	for (i = 0; i < len; i++)
		p[i] = small ? alphabet[zs_below(rng, sizeof(alphabet))] : (char)zs_rand(rng);
}

static void fuzz_write(struct fuzz *f)
{
	static const off_t offsets[] = { 1, 2, 3, 7, 4096, 65536, 1 << 20 };
	uint64_t *rng = &f->rng;
	int which = (int)zs_below(rng, 3), fd = f->wfd[which];
	enum ptr_kind kind = pick_kind(rng, 3);
	size_t len, readable;
	off_t off = 0;
	char *p, copy[2];
	ssize_t ret, expect;
	int err, expect_err, np = -1;

	switch (zs_below(rng, 4)) {
	case 0:		/* well formed, or nearly */
		len = 1 + zs_below(rng, 2);
		break;
	case 1:
		len = zs_below(rng, 4);
		break;
	default:	/* anything up to 8192, mostly short */
		len = zs_below(rng, 1 + zs_below(rng, MAX_WRITE + 1));
		break;
	}
	if (kind == P_RO && len > PAGE)
		kind = P_GOOD;
	p = pick_ptr(f, kind, len, &readable);
	if (kind == P_GOOD) {
		fill_bytes(rng, p, len);
		if (len && zs_below(rng, 3))
			p[0] = (char)('0' + zs_below(rng, ZS_NR_POLICIES + 1));
		if (len == 2 && zs_below(rng, 3))
			p[1] = '\n';
	}
	if (zs_one_in(rng, 8)) {
		off = offsets[zs_below(rng, ZS_ARRAY_SIZE(offsets))];
		f->n_write_off++;
	}

	/* The model, in the order of vfs_write() and the kernel's handler. */
	if (kind == P_KERNEL) {
		expect_err = EFAULT;		/* access_ok() */
	} else if (len == 0 || len > 2) {	/* the offset does not matter */
		expect_err = EINVAL;
	} else if (readable < len) {
		expect_err = EFAULT;
	} else {
		memcpy(copy, p, len);
		if (copy[0] < '0' || copy[0] >= '0' + ZS_NR_POLICIES ||
		    (len == 2 && copy[1] != '\n')) {
			expect_err = EINVAL;
		} else {
			expect_err = 0;
			np = copy[0] - '0';
		}
	}
	expect = expect_err ? -1 : (ssize_t)len;

	if (lseek(fd, off, SEEK_SET) != off) {
		fail(f, "lseek(%s, %lld): %s", wpaths[which], (long long)off, strerror(errno));
		return;
	}
	errno = 0;
	ret = write(fd, p, len);
	err = ret < 0 ? errno : 0;
	f->n_write++;
	count_result(f, err);
	if (ret != expect || err != expect_err)
		fail(f, "write(%s, %s %p, %zu) at %lld = %zd (%s), expected %zd (%s)",
		     wpaths[which], ptr_names[kind], (void *)p, len, (long long)off, ret,
		     errname(err), expect, errname(expect_err));
	if (np >= 0) {
		f->n_model_changes += f->model != np;
		f->n_became[np]++;
		f->model = np;
	}
	check_policy(f, "write");
}

/* ------------------------------------------------------------------ sleeps */

static int64_t edge_sec(uint64_t *rng, int64_t now_sec)
{
	static const int64_t edges[] = {
		1, -1, INT32_MAX, INT32_MIN, (int64_t)UINT32_MAX, INT64_MAX, INT64_MIN,
		KTIME_SEC_MAX, KTIME_SEC_MAX + 1, KTIME_SEC_MAX / 2,
	};

	switch (zs_below(rng, 6)) {
	case 0:
	case 1:
		return 0;
	case 2:
		return edges[zs_below(rng, ZS_ARRAY_SIZE(edges))];
	case 3:
		return now_sec + (int64_t)zs_below(rng, 3) - 1;
	case 4:
		return (int64_t)zs_below(rng, 100000);
	default:
		return (int64_t)zs_rand(rng);
	}
}

static long edge_nsec(uint64_t *rng)
{
	static const long edges[] = {
		1, 999999999, 1000000000, 1000000001, -1, LONG_MAX, LONG_MIN,
		0x100000000L, 0x100000001L, 0xffffffffL,
	};

	switch (zs_below(rng, 5)) {
	case 0:
	case 1:
		return 0;
	case 2:
		return edges[zs_below(rng, ZS_ARRAY_SIZE(edges))];
	case 3:
		return (long)zs_below(rng, NSEC_PER_SEC);
	default:
		return (long)zs_rand(rng);
	}
}

static bool ts_valid(const struct timespec *ts)
{
	return ts->tv_sec >= 0 && (unsigned long)ts->tv_nsec < NSEC_PER_SEC;
}

/* The base clock whose "now" an absolute deadline on @clk is compared with. */
static clockid_t base_clock(clockid_t clk)
{
	if (clk == CLOCK_REALTIME_ALARM)
		return CLOCK_REALTIME;
	if (clk == CLOCK_BOOTTIME_ALARM)
		return CLOCK_BOOTTIME;
	return clk;
}

/*
 * Keeps a valid request short: a relative one at most 1 ms, an absolute one
 * in the past or at most 1 ms ahead.
 */
static void clamp_request(uint64_t *rng, struct timespec *ts, bool abs, clockid_t base)
{
	/* Drawn whether used or not, so that a replay makes the same calls. */
	bool past = zs_one_in(rng, 2);
	int64_t back = (int64_t)zs_below(rng, 2 * NSEC_PER_SEC);
	int64_t ahead = (int64_t)zs_below(rng, MAX_SLEEP_NS);
	int64_t now, deadline;

	if (!abs) {
		if (ts->tv_sec || ts->tv_nsec > MAX_SLEEP_NS) {
			ts->tv_sec = 0;
			ts->tv_nsec %= MAX_SLEEP_NS + 1;
		}
		return;
	}
	now = zs_now(base);
	deadline = ts->tv_sec >= KTIME_SEC_MAX ? INT64_MAX : zs_ts_ns(ts);
	if (deadline <= now + MAX_SLEEP_NS)
		return;
	*ts = zs_ns_ts(past ? now - back : now + ahead);
}

/*
 * A timespec pointer of the given kind.  Good ones are aligned slots, the
 * request (@slot 0) and the remainder (@slot 1) in different pages, so that
 * they never overlap.
 */
static struct timespec *ts_ptr(struct fuzz *f, enum ptr_kind kind, int slot)
{
	uint64_t *rng = &f->rng;
	size_t n = PAGE / sizeof(struct timespec), readable;

	switch (kind) {
	case P_GOOD:
		return (struct timespec *)(f->buf + slot * PAGE) + zs_below(rng, n);
	case P_RO:
		return (struct timespec *)f->ro + zs_below(rng, n);
	case P_STRADDLE:
		/* 1 to 8 bytes readable: never a whole timespec. */
		return (struct timespec *)(f->guard - 1 - zs_below(rng, 8));
	default:
		return (struct timespec *)pick_ptr(f, kind, sizeof(struct timespec), &readable);
	}
}

static void fuzz_sleep(struct fuzz *f)
{
	uint64_t *rng = &f->rng;
	bool is_ns = zs_below(rng, 3) == 0;
	struct clock_case cc = { CLOCK_MONOTONIC, C_HRTIMER };
	enum ptr_kind rq_kind, rm_kind;
	struct timespec ts, canary, *rq, *rm;
	int flags = 0, err, expect_err;
	bool abs = false, valid, zero = false, check_switch;
	int64_t t0, t1, deadline = 0, req_ns = 0;
	long ret, nv0 = 0, nv1 = 0;

	if (!is_ns) {
		if (zs_below(rng, 20) < 11)
			cc.id = zs_hrtimer_clocks[zs_below(rng, ZS_ARRAY_SIZE(zs_hrtimer_clocks))];
		else
			cc = other_clocks[zs_below(rng, ZS_ARRAY_SIZE(other_clocks))];
		switch (zs_below(rng, 10)) {
		case 0 ... 3:
			flags = 0;
			break;
		case 4 ... 7:
			flags = TIMER_ABSTIME;
			break;
		default:
			flags = (int)edge64(rng);
			break;
		}
		abs = flags & TIMER_ABSTIME;
	}

	/* The request. */
	switch (zs_below(rng, 5)) {
	case 0:
		ts.tv_sec = 0;
		ts.tv_nsec = 0;
		break;
	case 1:
		/* Absolute "now" (relative: 1 ns to 1 ms). */
		if (abs && cc.cls == C_HRTIMER)
			ts = zs_ns_ts(zs_now(cc.id));
		else
			ts = zs_ns_ts(1 + (int64_t)zs_below(rng, MAX_SLEEP_NS));
		break;
	default:
		ts.tv_sec = (time_t)edge_sec(rng, cc.cls == C_HRTIMER ? zs_now(cc.id) / NSEC_PER_SEC : 0);
		ts.tv_nsec = edge_nsec(rng);
		break;
	}
	valid = ts_valid(&ts);
	if (valid && (cc.cls == C_HRTIMER || cc.cls == C_ALARM))
		clamp_request(rng, &ts, abs, base_clock(cc.id));
	if (valid && cc.cls == C_CPU_OWN_PROCESS) {
		ts.tv_nsec = -1;	/* never sleep on our own CPU time */
		valid = false;
	}

	rq_kind = pick_kind(rng, 3);
	rq = ts_ptr(f, rq_kind, 0);
	if (rq_kind == P_GOOD) {
		*rq = ts;
	} else if (rq_kind == P_RO) {
		/* The read-only page holds harmless timespecs made at setup. */
		ts = *rq;
		valid = ts_valid(&ts);
		if (valid && cc.cls == C_CPU_OWN_PROCESS) {
			rq_kind = P_NULL;
			rq = NULL;
		}
	}

	rm_kind = pick_kind(rng, 6);
	memset(&canary, 0x5a, sizeof(canary));
	rm = ts_ptr(f, rm_kind, 1);
	if (rm_kind == P_GOOD)
		*rm = canary;

	/* The model. */
	if (is_ns) {
		if (rq_kind >= P_NULL)
			expect_err = EFAULT;
		else if (!valid)
			expect_err = EINVAL;
		else
			expect_err = 0;
	} else if (cc.cls == C_INVALID) {
		expect_err = EINVAL;
	} else if (cc.cls == C_NO_NSLEEP) {
		expect_err = EOPNOTSUPP;
	} else if (rq_kind >= P_NULL) {
		expect_err = EFAULT;
	} else if (!valid) {
		expect_err = EINVAL;
	} else if (cc.cls == C_HRTIMER) {
		expect_err = 0;
	} else if (cc.cls == C_ALARM) {
		if (f->alarm_result == EOPNOTSUPP)
			expect_err = EOPNOTSUPP;
		else if (flags & ~TIMER_ABSTIME)
			expect_err = EINVAL;
		else
			expect_err = f->alarm_result;
	} else {
		expect_err = EINVAL;		/* C_CPU_EINVAL */
	}

	/* What a successful hrtimer sleep must look like. */
	if (!expect_err && (is_ns || cc.cls == C_HRTIMER)) {
		if (abs) {
			deadline = zs_ts_ns(&ts);
			zero = deadline <= zs_now(cc.id);
		} else {
			req_ns = zs_ts_ns(&ts);
			zero = req_ns == 0;
		}
	}
	check_switch = !expect_err && zero && f->model == ZS_RETURN;
	if (check_switch)
		nv0 = zs_nvcsw();
	t0 = zs_now(cc.cls == C_HRTIMER ? cc.id : CLOCK_MONOTONIC);
	errno = 0;
	if (is_ns)
		ret = syscall(SYS_nanosleep, rq, rm);
	else
		ret = syscall(SYS_clock_nanosleep, cc.id, flags, rq, rm);
	err = ret ? errno : 0;
	t1 = zs_now(cc.cls == C_HRTIMER ? cc.id : CLOCK_MONOTONIC);
	if (check_switch)
		nv1 = zs_nvcsw();

	if (is_ns)
		f->n_ns++;
	else
		f->n_cns++;
	count_result(f, err);
	if (err != expect_err || (ret != 0 && ret != -1)) {
		fail(f, "%s(clock %d, flags %#x, %s {%lld, %ld}, rmtp %s) = %ld (%s), expected %s",
		     is_ns ? "nanosleep" : "clock_nanosleep", is_ns ? -1 : cc.id, flags,
		     ptr_names[rq_kind], (long long)ts.tv_sec, ts.tv_nsec, ptr_names[rm_kind],
		     ret, errname(err), errname(expect_err));
	} else if (!expect_err && (is_ns || cc.cls == C_HRTIMER)) {
		f->n_sleeps++;
		if (zero) {
			f->n_zero++;
			if (check_switch) {
				f->n_zero_return++;
				if (nv1 != nv0)
					fail(f, "zero-length %s sleep on clock %d under RETURN: %ld voluntary switches",
					     abs ? "absolute" : "relative", cc.id, nv1 - nv0);
			}
		} else {
			f->n_nonzero++;
			if (abs ? t1 < deadline : t1 - t0 < req_ns)
				fail(f, "%s sleep of {%lld, %ld} on clock %d returned early (%lld ns)",
				     abs ? "absolute" : "relative", (long long)ts.tv_sec, ts.tv_nsec,
				     cc.id, (long long)(abs ? t1 - deadline : t1 - t0 - req_ns));
		}
	}
	if (rm_kind == P_GOOD && memcmp(rm, &canary, sizeof(canary)))
		fail(f, "*rmtp written (%s, result %s)", is_ns ? "nanosleep" : "clock_nanosleep",
		     errname(err));
	check_policy(f, "sleep");
}

/* ------------------------------------------------------------------- setup */

static int open_policy_files(struct fuzz *f)
{
	char path[3][80];
	int i;

	snprintf(path[0], sizeof(path[0]), "/proc/self/task/%d/timerslack_zero_policy", gettid());
	snprintf(path[1], sizeof(path[1]), "/proc/self/timerslack_zero_policy");
	snprintf(path[2], sizeof(path[2]), "/proc/thread-self/timerslack_zero_policy");
	for (i = 0; i < 3; i++) {
		f->wfd[i] = open(path[i], O_WRONLY | O_CLOEXEC);
		f->rfd[i] = open(path[i], O_RDONLY | O_CLOEXEC);
		if (f->wfd[i] < 0 || f->rfd[i] < 0)
			return -1;
	}
	return 0;
}

FIXTURE(fuzz) {};
FIXTURE_SETUP(fuzz) {}
FIXTURE_TEARDOWN(fuzz) {}

TEST_F_TIMEOUT(fuzz, interfaces, 1200)
{
	struct timespec zero_abs = { 0, 0 };
	struct fuzz f;
	char *map;
	int i, ops[4] = { 0 };

	memset(&f, 0, sizeof(f));
	f.rng = opt_seed;
	ksft_print_msg("seed: %" PRIu64 "\n", opt_seed);
	ksft_print_msg("calls: %ld (replay: --seed %" PRIu64 " --calls %ld)\n",
		       opt_calls, opt_seed, opt_calls);

	/* Buffers, a PROT_NONE guard, and a read-only page of edge timespecs. */
	map = mmap(NULL, (BUF_PAGES + 2) * PAGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, map);
	f.buf = map;
	f.guard = map + BUF_PAGES * PAGE;
	f.ro = f.guard + PAGE;
	for (i = 0; i < (int)(PAGE / sizeof(struct timespec)); i++) {
		struct timespec *t = (struct timespec *)f.ro + i;

		/* Zero requests, past deadlines, invalid ones: nothing long. */
		t->tv_sec = zs_one_in(&f.rng, 2) ? 0 : -(time_t)zs_below(&f.rng, 3);
		t->tv_nsec = zs_one_in(&f.rng, 2) ? 0 : edge_nsec(&f.rng);
		if (t->tv_sec == 0 && t->tv_nsec > 0 && t->tv_nsec < (long)NSEC_PER_SEC)
			t->tv_nsec %= MAX_SLEEP_NS;
	}
	ASSERT_EQ(0, mprotect(f.guard, PAGE, PROT_NONE));
	ASSERT_EQ(0, mprotect(f.ro, PAGE, PROT_READ));
	/* No page fault may block during a zero-length sleep under RETURN. */
	if (zs_lock_memory())
		ksft_print_msg("mlockall: %s (continuing)\n", strerror(errno));
	ASSERT_EQ(0, open_policy_files(&f))
		TH_LOG("opening the policy files: %s", strerror(errno));

	/*
	 * Start from the default, with a tiny slack so that DEFAULT and
	 * FULL_SLACK are quick.
	 */
	ASSERT_EQ(ZS_DEFAULT, zs_get_policy())
		TH_LOG("start the test under the default policy");
	ASSERT_EQ(0, zs_set_slack(1));
	f.model = ZS_DEFAULT;

	/* Alarm clocks sleep only with an RTC and CAP_WAKE_ALARM. */
	f.alarm_result = syscall(SYS_clock_nanosleep, CLOCK_REALTIME_ALARM, TIMER_ABSTIME,
				 &zero_abs, NULL) ? errno : 0;
	ksft_print_msg("alarm clocks: a valid sleep gives %s\n", errname(f.alarm_result));
	ASSERT_TRUE(f.alarm_result == 0 || f.alarm_result == EOPNOTSUPP ||
		    f.alarm_result == EPERM);

	for (f.calls = 1; f.calls <= opt_calls; f.calls++) {
		int op = (int)zs_below(&f.rng, 20);

		if (op < 6) {
			fuzz_prctl(&f);
			ops[0]++;
		} else if (op < 11) {
			fuzz_write(&f);
			ops[1]++;
		} else {
			fuzz_sleep(&f);
			ops[2]++;
		}
		if (!(f.calls % 64))
			check_proc_policy(&f);
		if (f.failures > 1000)
			break;
	}
	f.calls--;

	ksft_print_msg("calls: %ld: prctl %d (SET %lu, GET %lu, other options %lu), /proc writes %lu (%lu at an offset), nanosleep %lu, clock_nanosleep %lu\n",
		       f.calls, ops[0], f.n_prctl[0], f.n_prctl[1], f.n_prctl[2], f.n_write,
		       f.n_write_off, f.n_ns, f.n_cns);
	ksft_print_msg("results: success %lu, EINVAL %lu, EFAULT %lu, EOPNOTSUPP %lu, EPERM %lu\n",
		       f.n_ok, f.n_einval, f.n_efault, f.n_eopnotsupp, f.n_eperm);
	ksft_print_msg("hrtimer sleeps that ran: %lu (zero-length %lu, of them under RETURN %lu; non-zero %lu); policy changes %lu\n",
		       f.n_sleeps, f.n_zero, f.n_zero_return, f.n_nonzero, f.n_model_changes);
	ksft_print_msg("valid sets: DEFAULT %lu, RETURN %lu, SCHEDULE %lu, FULL_SLACK %lu; with ALL_THREADS %lu\n",
		       f.n_became[ZS_DEFAULT], f.n_became[ZS_RETURN], f.n_became[ZS_SCHEDULE],
		       f.n_became[ZS_FULL_SLACK], f.n_set_all);
	ksft_print_msg("failures: %lu\n", f.failures);
	EXPECT_EQ(0UL, f.failures);
	EXPECT_LE(MIN_CALLS, f.calls);
	/* Every path was taken. */
	EXPECT_LT(0UL, f.n_model_changes);
	for (i = 0; i < ZS_NR_POLICIES; i++)
		EXPECT_LT(0UL, f.n_became[i]) TH_LOG("policy %d never set", i);
	EXPECT_LT(0UL, f.n_set_all);
	EXPECT_LT(0UL, f.n_zero_return);
	EXPECT_LT(0UL, f.n_nonzero);
	EXPECT_LT(0UL, f.n_efault);
	EXPECT_LT(0UL, f.n_eopnotsupp);
	zs_set_policy(ZS_DEFAULT);
	munmap(map, (BUF_PAGES + 2) * PAGE);
}

static void usage(const char *prog)
{
	fprintf(stderr, "usage: %s [--seed N] [--calls N] [harness options]\n"
		"  --seed N   replay the run with seed N (default: from the clock)\n"
		"  --calls N  number of calls, at least %ld (default %ld)\n",
		prog, MIN_CALLS, MIN_CALLS);
}

int main(int argc, char **argv)
{
	char **args = calloc((size_t)argc + 1, sizeof(*args));
	int i, n = 0;
	char *end;

	if (!args)
		return KSFT_FAIL;
	for (i = 0; i < argc; i++) {
		const char *name = argv[i], *val = NULL;
		unsigned long long v;

		if ((!strcmp(name, "--seed") || !strcmp(name, "--calls")) && i + 1 < argc) {
			val = argv[++i];
		} else if (!strncmp(name, "--seed=", 7) || !strncmp(name, "--calls=", 8)) {
			val = strchr(name, '=') + 1;
		} else if (!strcmp(name, "--help")) {
			usage(argv[0]);
			return 0;
		} else {
			args[n++] = argv[i];
			continue;
		}
		errno = 0;
		v = strtoull(val, &end, 10);
		if (errno || end == val || *end || *val == '-') {
			fprintf(stderr, "%s: bad value '%s' for %.7s\n", argv[0], val, name);
			usage(argv[0]);
			return KSFT_FAIL;
		}
		if (!strncmp(name, "--seed", 6)) {
			opt_seed = v;
			opt_seed_given = true;
		} else if (v < (unsigned long long)MIN_CALLS || v > LONG_MAX) {
			fprintf(stderr, "%s: --calls must be at least %ld\n", argv[0], MIN_CALLS);
			return KSFT_FAIL;
		} else {
			opt_calls = (long)v;
		}
	}
	args[n] = NULL;
	if (!opt_seed_given) {
		struct timespec now;

		clock_gettime(CLOCK_REALTIME, &now);
		opt_seed = (uint64_t)now.tv_sec * NSEC_PER_SEC + (uint64_t)now.tv_nsec;
		opt_seed ^= (uint64_t)getpid() << 40;
	}
	return test_harness_run(n, args);
}
