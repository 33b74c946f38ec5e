// SPDX-License-Identifier: GPL-2.0
/*
 * zsbench - measure zero-length sleeps against their neighbours
 *
 *   zsbench [--short] [--sleeps-only] [--kernel NAME] [--csv FILE] [--python PATH]
 *
 * One binary for every kernel under test.  It measures, in this order:
 *
 *   baselines        clock_gettime() alone (the cost of the measurement),
 *                    getppid() (a bare system call, the floor),
 *                    sched_yield(), and a nanosleep() and an absolute
 *                    clock_nanosleep() that fail with EINVAL (the cost of
 *                    the system call's entry and argument checks, without
 *                    any sleeping);
 *   zero sleeps      nanosleep({0, 0}) and clock_nanosleep(CLOCK_MONOTONIC,
 *                    TIMER_ABSTIME, now), with the default timer slack and
 *                    with a 10 ms slack (and, where they do not sleep, the
 *                    C library's nanosleep({0, 0}) for reference); under
 *                    the kernel's default behaviour also with a 1 ns slack,
 *                    the smallest that PR_SET_TIMERSLACK can set (0 means
 *                    "the default"): what a program can do without the
 *                    zero-sleep policy;
 *   non-zero sleeps  nanosleep() of 10 us, 100 us and 1 ms;
 *   fairness         the throughput of a CPU hog pinned to one CPU, alone
 *                    and while another thread on the same CPU loops on
 *                    nanosleep({0, 0}), sched_yield() or getppid();
 *   python           calls per second of a CPython loop of time.sleep(0).
 *
 * With --sleeps-only, only the sleeps that may sleep are measured (the zero
 * sleeps under the default behaviour and the full slack, and the non-zero
 * sleeps): bench/bench.sh repeats them in more boots, since they are
 * compared across boots.
 *
 * On a kernel with PR_GET_TIMERSLACK_ZERO_POLICY, every measurement that a
 * policy can change is made under each of the four policies ("default",
 * "return", "schedule", "full-slack"); elsewhere once, under the kernel's
 * only behaviour, also named "default".
 *
 * Latencies come from per-call clock_gettime(CLOCK_MONOTONIC) deltas after
 * a warm-up, so each includes one clock read (the clock_gettime row).  The
 * series that are compared with each other are measured in interleaved
 * blocks.  The sleeps with the default slack run while a SCHED_IDLE thread
 * keeps their CPU busy (see struct spinner); the others on an idle CPU.
 * Context switches per call come from getrusage(RUSAGE_THREAD) around the
 * timed loop.  Results go to stdout, one line per measurement, and to the
 * CSV file, whose columns are
 *
 *   kernel,policy,slack_ns,operation,iterations,p50_ns,p99_ns,
 *   vcsw_per_call,ivcsw_per_call,value
 *
 * value is calls per second for latency and python rows, hog iterations
 * per second for hog_solo and the hog's share of its solo throughput, in
 * percent, for the hog_vs_* rows, whose iterations, p50/p99 and context
 * switches are those of the competing thread.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef PR_GET_TIMERSLACK_ZERO_POLICY
#error "build with -I uapi so that <linux/prctl.h> has the zerosleep options"
#endif

#define NSEC_PER_SEC	1000000000ULL
#define BIG_SLACK_NS	10000000UL	/* 10 ms */

/* Iteration counts and durations, full run and --short run. */
struct plan {
	/* Calls per series, and per block of the interleaving. */
	size_t syscall_iters, syscall_block;	/* the calls that do not sleep */
	size_t zero_iters, zero_block;		/* zero sleeps, default slack */
	size_t zero_big_slack_iters, zero_big_slack_block; /* 10 ms slack */
	size_t sleep_iters[3], sleep_block[3];	/* 10 us, 100 us, 1 ms */
	unsigned int hog_rounds;	/* of solo and contended windows */
	double hog_solo_s;		/* each solo window */
	double hog_s;			/* each contended window */
	double python_s;
};

static const struct plan full_plan = {
	.syscall_iters = 50000, .syscall_block = 100,
	.zero_iters = 3000, .zero_block = 20,
	.zero_big_slack_iters = 40, .zero_big_slack_block = 2,
	.sleep_iters = { 2000, 1500, 300 }, .sleep_block = { 10, 10, 4 },
	.hog_rounds = 5,
	.hog_solo_s = 0.1,
	.hog_s = 0.15,
	.python_s = 0.5,
};

static const struct plan short_plan = {
	.syscall_iters = 2000, .syscall_block = 100,
	.zero_iters = 100, .zero_block = 50,
	.zero_big_slack_iters = 4, .zero_big_slack_block = 2,
	.sleep_iters = { 20, 20, 6 }, .sleep_block = { 10, 10, 3 },
	.hog_rounds = 1,
	.hog_solo_s = 0.05,
	.hog_s = 0.1,
	.python_s = 0.2,
};

static const long sleep_ns[3] = { 10000, 100000, 1000000 };
static const char *const sleep_names[3] = {
	"nanosleep_10us", "nanosleep_100us", "nanosleep_1ms"
};

static const struct plan *plan = &full_plan;
static bool sleeps_only;
static const char *kernel_name = "guest";
static const char *python = "/usr/bin/python3";
static FILE *csv;
static bool have_policy;
static int ncpus;

/*
 * Policies to measure: the four on a zerosleep kernel, else "default".  A
 * zero sleep under a policy that may sleep takes up to the slack: those are
 * measured with fewer calls, on a busy CPU, and again in more boots.
 */
struct policy {
	int value;		/* -1: the kernel has no policy */
	const char *name;
	bool may_sleep;		/* a zero sleep may arm a timer and sleep */
};

static const struct policy zs_policies[] = {
	{ PR_TIMERSLACK_ZERO_DEFAULT, "default", true },
	{ PR_TIMERSLACK_ZERO_RETURN, "return", false },
	{ PR_TIMERSLACK_ZERO_SCHEDULE, "schedule", false },
	{ PR_TIMERSLACK_ZERO_FULL_SLACK, "full-slack", true },
};
static const struct policy default_policy = { -1, "default", true };
static const struct policy no_policy = { -1, "-", false };

#define TINY_SLACK_NS	1UL	/* the smallest slack that can be set */

static const struct policy *policies;
static size_t npolicies;

static void die(const char *what)
{
	fprintf(stderr, "zsbench: %s: %s\n", what, strerror(errno));
	exit(2);
}

static void fail(const char *msg)
{
	fprintf(stderr, "zsbench: %s\n", msg);
	exit(2);
}

static inline uint64_t ts_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * NSEC_PER_SEC + (uint64_t)ts->tv_nsec;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts_ns(&ts);
}

static void pin_self(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity");
}

/* CPU for the measured threads, and one for the thread that watches. */
static int work_cpu(void)
{
	return ncpus > 1 ? 1 : 0;
}

static void set_policy(const struct policy *p)
{
	if (p->value < 0)
		return;
	if (prctl(PR_SET_TIMERSLACK_ZERO_POLICY, p->value, 0, 0, 0))
		die("prctl(PR_SET_TIMERSLACK_ZERO_POLICY)");
	if (prctl(PR_GET_TIMERSLACK_ZERO_POLICY, 0, 0, 0, 0) != p->value)
		fail("PR_GET_TIMERSLACK_ZERO_POLICY does not return the policy just set");
}

/* Set the calling thread's timer slack; 0 means the default. */
static unsigned long set_slack(unsigned long ns)
{
	int r;

	if (prctl(PR_SET_TIMERSLACK, ns, 0, 0, 0))
		die("prctl(PR_SET_TIMERSLACK)");
	r = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
	if (r < 0)
		die("prctl(PR_GET_TIMERSLACK)");
	if (ns && (unsigned long)r != ns)
		fail("PR_GET_TIMERSLACK does not return the slack just set");
	return (unsigned long)r;
}

static void csw_now(long *vol, long *invol)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru))
		die("getrusage");
	*vol = ru.ru_nvcsw;
	*invol = ru.ru_nivcsw;
}

/* ---- output ------------------------------------------------------------ */

struct result {
	const struct policy *policy;
	unsigned long slack_ns;
	const char *op;
	size_t iters;
	uint64_t p50, p99;	/* 0: not a latency row */
	double vcsw, ivcsw;
	double value;
	const char *unit;	/* of value */
};

static void report(const struct result *r)
{
	char lat[64] = "";

	if (r->p50)
		snprintf(lat, sizeof(lat), "p50 %10.2f us  p99 %10.2f us",
			 r->p50 / 1e3, r->p99 / 1e3);
	printf("%-9s %-10s slack %8lu  %-22s n %-8zu %-36s vcsw %7.3f ivcsw %7.3f  %12.1f %s\n",
	       kernel_name, r->policy->name, r->slack_ns, r->op, r->iters, lat,
	       r->vcsw, r->ivcsw, r->value, r->unit);
	fflush(stdout);
	if (r->p50)
		fprintf(csv, "%s,%s,%lu,%s,%zu,%llu,%llu,%.4f,%.4f,%.1f\n",
			kernel_name, r->policy->name, r->slack_ns, r->op, r->iters,
			(unsigned long long)r->p50, (unsigned long long)r->p99,
			r->vcsw, r->ivcsw, r->value);
	else
		fprintf(csv, "%s,%s,%lu,%s,%zu,,,%.4f,%.4f,%.1f\n",
			kernel_name, r->policy->name, r->slack_ns, r->op, r->iters,
			r->vcsw, r->ivcsw, r->value);
	fflush(csv);
}

/* ---- latency of one call ----------------------------------------------- */

enum op_kind {
	OP_CLOCK, OP_CLOCK_SYSCALL, OP_GETPPID, OP_YIELD, OP_REL, OP_ABS_NOW, OP_EINVAL,
	OP_ABS_EINVAL, OP_LIBC_REL,
};

struct op {
	enum op_kind kind;
	long ns;		/* OP_REL, OP_LIBC_REL: requested length */
};

/*
 * The system calls are made with syscall(2), as getppid() has to be (the C
 * library may cache it), so that the comparison is between system calls
 * alone: the C library wraps nanosleep() in more code than getppid().
 * OP_LIBC_REL is nanosleep() through the C library, for reference.
 *
 * @start is the clock reading taken just before the call.
 */
static inline int do_op(const struct op *op, const struct timespec *start)
{
	struct timespec ts;

	switch (op->kind) {
	case OP_CLOCK:
		return 0;
	case OP_CLOCK_SYSCALL:
		/*
		 * The clock read in the kernel, as the zero-length check of an
		 * absolute sleep makes it, plus the cost of a system call.
		 */
		return (int)syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
	case OP_GETPPID:
		return syscall(SYS_getppid) > 0 ? 0 : -1;
	case OP_YIELD:
		return (int)syscall(SYS_sched_yield);
	case OP_REL:
		ts.tv_sec = 0;
		ts.tv_nsec = op->ns;
		return (int)syscall(SYS_nanosleep, &ts, NULL);
	case OP_LIBC_REL:
		ts.tv_sec = 0;
		ts.tv_nsec = op->ns;
		return nanosleep(&ts, NULL);
	case OP_ABS_NOW:
		return (int)syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, TIMER_ABSTIME, start, NULL);
	case OP_EINVAL:
		/* Rejected by the argument check, before hrtimer_nanosleep(). */
		ts.tv_sec = 0;
		ts.tv_nsec = (long)NSEC_PER_SEC;
		if (syscall(SYS_nanosleep, &ts, NULL) == 0 || errno != EINVAL)
			return -1;
		return 0;
	case OP_ABS_EINVAL:
		ts.tv_sec = start->tv_sec;
		ts.tv_nsec = (long)NSEC_PER_SEC;
		if (syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == 0 ||
		    errno != EINVAL)
			return -1;
		return 0;
	}
	return -1;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of a sorted array. */
static uint64_t percentile(const uint64_t *v, size_t n, unsigned int pct)
{
	size_t rank = (n * pct + 99) / 100;

	return v[rank ? rank - 1 : 0];
}

/*
 * One measured series: an operation under a policy and a timer slack.
 * Series that are compared with each other are measured together, in
 * blocks that take turns, so that they share the conditions of the host
 * that runs the guest: its load changes over seconds.
 */
struct series {
	const char *name;
	struct op op;
	const struct policy *policy;
	unsigned long slack;	/* 0: the default */
	size_t want, block;
	/* results */
	size_t n;
	uint64_t *d, sum;
	long vcsw, ivcsw;
};

static unsigned long default_slack;

static void series_block(struct series *s, size_t count)
{
	struct timespec ts[2];
	long v0, i0, v1, i1;
	uint64_t t;
	size_t i;

	/* The baselines run under policies[0], the default. */
	set_policy(s->policy->value >= 0 ? s->policy : &policies[0]);
	set_slack(s->slack);
	csw_now(&v0, &i0);
	/* Each clock reading ends one call's time and starts the next one's. */
	clock_gettime(CLOCK_MONOTONIC, &ts[0]);
	t = ts_ns(&ts[0]);
	for (i = 0; i < count; i++) {
		const struct timespec *cur = &ts[i & 1];
		struct timespec *nxt = &ts[!(i & 1)];
		uint64_t next;

		if (do_op(&s->op, cur))
			die(s->name);
		clock_gettime(CLOCK_MONOTONIC, nxt);
		next = ts_ns(nxt);
		s->d[s->n++] = next - t;
		s->sum += next - t;
		t = next;
	}
	csw_now(&v1, &i1);
	s->vcsw += v1 - v0;
	s->ivcsw += i1 - i0;
}

static void series_report(struct series *s)
{
	struct result r;

	qsort(s->d, s->n, sizeof(*s->d), cmp_u64);
	r = (struct result){
		.policy = s->policy,
		.slack_ns = s->slack ? s->slack : default_slack,
		.op = s->name, .iters = s->n,
		.p50 = percentile(s->d, s->n, 50), .p99 = percentile(s->d, s->n, 99),
		.vcsw = (double)s->vcsw / (double)s->n,
		.ivcsw = (double)s->ivcsw / (double)s->n,
		.value = s->sum ? (double)s->n * 1e9 / (double)s->sum : 0,
		.unit = "calls/s",
	};
	/* A zero delta can happen only with a coarse clock: keep p50 > 0. */
	if (!r.p50)
		r.p50 = 1;
	if (r.p99 < r.p50)
		r.p99 = r.p50;
	report(&r);
}

/*
 * Background load for the sleeps that do sleep: a SCHED_IDLE thread that
 * spins on the measured CPU, so that the virtual CPU never halts.  Every
 * wakeup preempts it at once, but QEMU need not wake a halted virtual CPU,
 * which takes the host a time that changes from boot to boot by a third
 * and more: the sleeps are compared across boots.
 */
struct spinner {
	pthread_t thread;
	atomic_bool stop;
};

static void *spinner_thread(void *arg)
{
	struct spinner *sp = arg;
	struct sched_param param = { 0 };

	pin_self(work_cpu());
	if (sched_setscheduler(0, SCHED_IDLE, &param))
		die("sched_setscheduler(SCHED_IDLE)");
	while (!atomic_load_explicit(&sp->stop, memory_order_relaxed))
		__asm__ __volatile__("" ::: "memory");
	return NULL;
}

static void spinner_start(struct spinner *sp)
{
	int err;

	atomic_init(&sp->stop, false);
	err = pthread_create(&sp->thread, NULL, spinner_thread, sp);
	if (err) {
		errno = err;
		die("pthread_create");
	}
}

static void spinner_stop(struct spinner *sp)
{
	atomic_store(&sp->stop, true);
	pthread_join(sp->thread, NULL);
}

enum load { IDLE_CPU, BUSY_CPU };

/* Measure @n series, interleaved, after a warm-up of each; then report. */
static void measure(struct series *s, size_t n, enum load load)
{
	struct spinner sp;
	size_t i, r, left;

	for (i = 0; i < n; i++) {
		if (!s[i].want || !s[i].block)
			fail("internal error: empty series");
		s[i].d = calloc(s[i].want, sizeof(*s[i].d));
		if (!s[i].d)
			die("calloc");
	}
	if (load == BUSY_CPU)
		spinner_start(&sp);
	/* Warm-up: one block of each, thrown away. */
	for (i = 0; i < n; i++) {
		series_block(&s[i], s[i].block < s[i].want ? s[i].block : s[i].want);
		s[i].n = 0;
		s[i].sum = 0;
		s[i].vcsw = s[i].ivcsw = 0;
	}
	for (r = 0, left = n; left; r++) {
		left = 0;
		for (i = 0; i < n; i++) {
			struct series *x = &s[(i + r) % n];
			size_t count = x->want - x->n;

			if (!count)
				continue;
			series_block(x, count < x->block ? count : x->block);
			left += x->n < x->want;
		}
	}
	if (load == BUSY_CPU)
		spinner_stop(&sp);
	for (i = 0; i < n; i++) {
		series_report(&s[i]);
		free(s[i].d);
		s[i].d = NULL;
	}
	set_policy(&policies[0]);
	set_slack(0);
}

static void add(struct series *s, size_t *n, const char *name, struct op op,
		const struct policy *policy, unsigned long slack, size_t want, size_t block)
{
	s[(*n)++] = (struct series){
		.name = name, .op = op, .policy = policy, .slack = slack,
		.want = want, .block = block,
	};
}

static void run_latency(void)
{
	const struct op clk = { OP_CLOCK, 0 }, clk_sys = { OP_CLOCK_SYSCALL, 0 },
		ppid = { OP_GETPPID, 0 },
		yield = { OP_YIELD, 0 }, einval = { OP_EINVAL, 0 },
		abs_einval = { OP_ABS_EINVAL, 0 },
		rel0 = { OP_REL, 0 }, abs_now = { OP_ABS_NOW, 0 },
		libc_rel0 = { OP_LIBC_REL, 0 };
	const size_t fast = plan->syscall_iters, fast_block = plan->syscall_block;
	struct series s[32];
	size_t n, i, k;

	pin_self(work_cpu());
	default_slack = set_slack(0);

	/*
	 * The baselines, with every zero sleep that does not sleep (return
	 * and schedule): they are compared with each other.
	 */
	n = 0;
	if (sleeps_only)
		goto sleeps;
	add(s, &n, "clock_gettime", clk, &no_policy, 0, fast, fast_block);
	add(s, &n, "getppid", ppid, &no_policy, 0, fast, fast_block);
	add(s, &n, "clock_gettime_syscall", clk_sys, &no_policy, 0, fast, fast_block);
	add(s, &n, "sched_yield", yield, &no_policy, 0, fast, fast_block);
	add(s, &n, "nanosleep_einval", einval, &no_policy, 0, fast, fast_block);
	add(s, &n, "clock_nanosleep_einval", abs_einval, &no_policy, 0, fast, fast_block);
	for (i = 0; i < npolicies; i++) {
		if (policies[i].may_sleep)
			continue;
		add(s, &n, "nanosleep_rel0", rel0, &policies[i], 0, fast, fast_block);
		add(s, &n, "nanosleep_abs_now", abs_now, &policies[i], 0, fast, fast_block);
		add(s, &n, "nanosleep_rel0", rel0, &policies[i], BIG_SLACK_NS, fast, fast_block);
		add(s, &n, "nanosleep_abs_now", abs_now, &policies[i], BIG_SLACK_NS, fast, fast_block);
		add(s, &n, "libc_nanosleep_rel0", libc_rel0, &policies[i], 0, fast, fast_block);
	}
	measure(s, n, IDLE_CPU);

sleeps:
	/*
	 * Zero sleeps that may sleep: with the default slack and, under the
	 * kernel's default behaviour, with a 1 ns slack; then with 10 ms.  The
	 * latter on an idle CPU: a busy one keeps its tick, every 4 ms, which
	 * would end a sleep with 10 ms of slack early.  (On 7.2 and later the
	 * default behaviour returns at once when the sleeper's timer would be
	 * the first to expire on the CPU: these rows show how often it does.)
	 */
	n = 0;
	for (i = 0; i < npolicies; i++) {
		if (!policies[i].may_sleep)
			continue;
		add(s, &n, "nanosleep_rel0", rel0, &policies[i], 0,
		    plan->zero_iters, plan->zero_block);
		add(s, &n, "nanosleep_abs_now", abs_now, &policies[i], 0,
		    plan->zero_iters, plan->zero_block);
		if (policies[i].value > PR_TIMERSLACK_ZERO_DEFAULT)
			continue;	/* the full slack: a 1 ns slack is the default's question */
		add(s, &n, "nanosleep_rel0", rel0, &policies[i], TINY_SLACK_NS,
		    plan->zero_iters, plan->zero_block);
		add(s, &n, "nanosleep_abs_now", abs_now, &policies[i], TINY_SLACK_NS,
		    plan->zero_iters, plan->zero_block);
	}
	measure(s, n, BUSY_CPU);
	n = 0;
	for (i = 0; i < npolicies; i++) {
		if (!policies[i].may_sleep)
			continue;
		add(s, &n, "nanosleep_rel0", rel0, &policies[i], BIG_SLACK_NS,
		    plan->zero_big_slack_iters, plan->zero_big_slack_block);
		add(s, &n, "nanosleep_abs_now", abs_now, &policies[i], BIG_SLACK_NS,
		    plan->zero_big_slack_iters, plan->zero_big_slack_block);
	}
	measure(s, n, IDLE_CPU);

	/* Non-zero sleeps, every policy. */
	n = 0;
	for (k = 0; k < 3; k++)
		for (i = 0; i < npolicies; i++)
			add(s, &n, sleep_names[k], (struct op){ OP_REL, sleep_ns[k] },
			    &policies[i], 0, plan->sleep_iters[k], plan->sleep_block[k]);
	measure(s, n, BUSY_CPU);
}

/* ---- fairness ---------------------------------------------------------- */

/*
 * A hog thread spins on the measured CPU for the whole section.  Windows
 * alternate: the hog alone, then the hog against one competitor thread on
 * the same CPU, then alone again, and so on, for several rounds.  A
 * contended window opens once its competitor is running (wait_first_call()
 * below).  Each contended window is compared with the mean of its two
 * solo neighbours, and the median over the rounds is reported: the host
 * that runs the guest's virtual CPUs is shared, and its noise comes in
 * bursts.
 */
struct hog {
	pthread_t thread;
	clockid_t cpu_clock;
	atomic_ulong count;
	atomic_bool stop;
};

struct competitor {
	const char *name;
	const struct op *op;
	const struct policy *policy;
	/* one window */
	pthread_t thread;
	atomic_bool stop;
	atomic_bool exited;	/* competitor_thread() has returned */
	atomic_ulong calls;
	long vcsw, ivcsw;
	int error;
	/* all windows */
	double share[16];	/* hog throughput, % of solo */
	double cpu_share[16];	/* hog CPU time, % of the window */
	unsigned long total_calls;
	long total_vcsw, total_ivcsw;
};

static void competitor_init(struct competitor *c, const char *name,
			    const struct op *op, const struct policy *policy)
{
	memset(c, 0, sizeof(*c));
	c->name = name;
	c->op = op;
	c->policy = policy;
	atomic_init(&c->stop, false);
	atomic_init(&c->exited, false);
	atomic_init(&c->calls, 0);
}

static void *hog_thread(void *arg)
{
	struct hog *h = arg;

	pin_self(work_cpu());
	while (!atomic_load_explicit(&h->stop, memory_order_relaxed)) {
		for (unsigned int i = 0; i < 1000; i++)
			__asm__ __volatile__("" ::: "memory");
		atomic_fetch_add_explicit(&h->count, 1, memory_order_relaxed);
	}
	return NULL;
}

static void *competitor_thread(void *arg)
{
	struct competitor *c = arg;
	long v0, i0, v1, i1;

	pin_self(work_cpu());
	set_policy(c->policy);
	csw_now(&v0, &i0);
	while (!atomic_load_explicit(&c->stop, memory_order_relaxed)) {
		struct timespec now;

		clock_gettime(CLOCK_MONOTONIC, &now);
		if (do_op(c->op, &now)) {
			c->error = errno;
			break;
		}
		atomic_fetch_add_explicit(&c->calls, 1, memory_order_relaxed);
	}
	csw_now(&v1, &i1);
	c->vcsw = v1 - v0;
	c->ivcsw = i1 - i0;
	atomic_store(&c->exited, true);
	return NULL;
}

static void sleep_s(double s)
{
	struct timespec ts = {
		.tv_sec = (time_t)s,
		.tv_nsec = (long)((s - (double)(time_t)s) * 1e9),
	};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static uint64_t thread_cpu_ns(clockid_t clk)
{
	struct timespec ts;

	if (clock_gettime(clk, &ts))
		die("clock_gettime(thread CPU clock)");
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

/*
 * The window opens once the competitor has made its first call.  A new
 * thread that must first get onto a CPU held by the hog can wait for
 * tens of milliseconds when the host that runs the guest is loaded
 * (make test runs three guests on two cores), and a window in which it
 * never ran measures no contention at all: in one CI run the short
 * windows of SCHEDULE and FULL_SLACK ended with no call made.  If no
 * call comes within WAIT_FIRST_CALL_S, the window opens anyway and its
 * row reports what it measured, 0 calls.
 */
#define WAIT_FIRST_CALL_S	10.0

static void wait_first_call(struct competitor *c)
{
	uint64_t t0 = now_ns();

	while (!atomic_load(&c->calls) && !atomic_load(&c->exited) &&
	       (double)(now_ns() - t0) < WAIT_FIRST_CALL_S * 1e9)
		sleep_s(0.001);
}

struct window {
	double rate;		/* hog iterations per second */
	double cpu_share;	/* hog CPU time per wall time, % */
};

/* One window of @secs: the hog alone (@c NULL) or against @c. */
static struct window hog_window(struct hog *h, struct competitor *c, double secs)
{
	unsigned long h0, h1;
	uint64_t t0, t1, u0, u1;
	int err;

	if (c) {
		atomic_store(&c->stop, false);
		atomic_store(&c->calls, 0);
		c->error = 0;
		atomic_store(&c->exited, false);
		err = pthread_create(&c->thread, NULL, competitor_thread, c);
		if (err) {
			errno = err;
			die("pthread_create");
		}
		wait_first_call(c);
	}
	sleep_s(0.02);		/* let the scheduler settle */
	h0 = atomic_load(&h->count);
	u0 = thread_cpu_ns(h->cpu_clock);
	t0 = now_ns();
	sleep_s(secs);
	h1 = atomic_load(&h->count);
	u1 = thread_cpu_ns(h->cpu_clock);
	t1 = now_ns();
	if (c) {
		atomic_store(&c->stop, true);
		pthread_join(c->thread, NULL);
		if (c->error) {
			errno = c->error;
			die(c->name);
		}
		c->total_calls += atomic_load(&c->calls);
		c->total_vcsw += c->vcsw;
		c->total_ivcsw += c->ivcsw;
	}
	return (struct window){
		.rate = (double)(h1 - h0) * 1e9 / (double)(t1 - t0),
		.cpu_share = 100.0 * (double)(u1 - u0) / (double)(t1 - t0),
	};
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void run_fairness(void)
{
	static const struct op rel0 = { OP_REL, 0 }, yield = { OP_YIELD, 0 },
		ppid = { OP_GETPPID, 0 };
	static struct competitor comp[6];
	static double solo[6 * 16 + 1];
	unsigned int rounds = plan->hog_rounds, r;
	size_t n = 0, nsolo = 0, i, k;
	struct hog h;
	unsigned long dflt;
	double prev;
	int err;

	for (i = 0; i < npolicies; i++)
		competitor_init(&comp[n++], "hog_vs_nanosleep_rel0", &rel0, &policies[i]);
	competitor_init(&comp[n++], "hog_vs_sched_yield", &yield, &no_policy);
	competitor_init(&comp[n++], "hog_vs_getppid", &ppid, &no_policy);
	if (rounds > 16)
		rounds = 16;

	/* The watching thread stays off the measured CPU. */
	pin_self(0);
	dflt = set_slack(0);
	memset(&h, 0, sizeof(h));
	atomic_init(&h.count, 0);
	atomic_init(&h.stop, false);
	err = pthread_create(&h.thread, NULL, hog_thread, &h);
	if (!err)
		err = pthread_getcpuclockid(h.thread, &h.cpu_clock);
	if (err) {
		errno = err;
		die("hog thread");
	}

	prev = solo[nsolo++] = hog_window(&h, NULL, plan->hog_solo_s).rate;
	for (r = 0; r < rounds; r++) {
		for (k = 0; k < n; k++) {
			struct competitor *c = &comp[(k + r) % n];
			struct window w = hog_window(&h, c, plan->hog_s);
			double next = hog_window(&h, NULL, plan->hog_solo_s).rate;
			double ref = (prev + next) / 2;

			c->share[r] = ref > 0 ? 100.0 * w.rate / ref : 0;
			c->cpu_share[r] = w.cpu_share;
			prev = solo[nsolo++] = next;
		}
	}
	atomic_store(&h.stop, true);
	pthread_join(h.thread, NULL);

	for (i = 0; i < n; i++) {
		struct competitor *c = &comp[i];
		unsigned long calls = c->total_calls;
		struct result res = {
			.policy = c->policy, .slack_ns = dflt, .op = c->name,
			.iters = calls,
			.vcsw = calls ? (double)c->total_vcsw / (double)calls : 0,
			.ivcsw = calls ? (double)c->total_ivcsw / (double)calls : 0,
			.value = median(c->share, rounds),
			.unit = "% of solo",
		};

		report(&res);
		printf("#   hog CPU time %.1f %% of the window (median of %u)\n",
		       median(c->cpu_share, rounds), rounds);
	}
	{
		double lo = solo[0], hi = solo[0];
		struct result res = {
			.policy = &no_policy, .slack_ns = dflt, .op = "hog_solo",
			.iters = nsolo, .unit = "iterations/s",
		};

		for (i = 1; i < nsolo; i++) {
			lo = solo[i] < lo ? solo[i] : lo;
			hi = solo[i] > hi ? solo[i] : hi;
		}
		res.value = median(solo, nsolo);
		report(&res);
		printf("#   hog solo windows: min %.0f, max %.0f iterations/s\n", lo, hi);
	}
	pin_self(work_cpu());
}

/* ---- python ------------------------------------------------------------ */

static const char python_loop[] =
	"import sys, time\n"
	"sleep, clock = time.sleep, time.perf_counter\n"
	"for _ in range(100): sleep(0)\n"
	"n, t0 = 0, clock()\n"
	"end = t0 + float(sys.argv[1])\n"
	"while True:\n"
	"    for _ in range(50): sleep(0)\n"
	"    n += 50\n"
	"    t = clock()\n"
	"    if t >= end: break\n"
	"print(n, t - t0)\n";

static void run_python(const struct policy *pol)
{
	char out[256], secs[32];
	struct rusage ru;
	unsigned long calls = 0;
	double elapsed = 0;
	ssize_t got;
	size_t len = 0;
	int fds[2], status;
	pid_t pid;

	snprintf(secs, sizeof(secs), "%.3f", plan->python_s);
	if (pipe(fds))
		die("pipe");
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		/* The policy and the slack are kept across execve(). */
		set_policy(pol);
		set_slack(0);
		dup2(fds[1], STDOUT_FILENO);
		close(fds[0]);
		close(fds[1]);
		execl(python, "python3", "-I", "-S", "-c", python_loop, secs, (char *)NULL);
		fprintf(stderr, "zsbench: %s: %s\n", python, strerror(errno));
		_exit(127);
	}
	close(fds[1]);
	while (len < sizeof(out) - 1 &&
	       (got = read(fds[0], out + len, sizeof(out) - 1 - len)) != 0) {
		if (got < 0) {
			if (errno == EINTR)
				continue;
			die("read");
		}
		len += (size_t)got;
	}
	out[len] = '\0';
	close(fds[0]);
	if (wait4(pid, &status, 0, &ru) != pid)
		die("wait4");
	if (!WIFEXITED(status) || WEXITSTATUS(status) ||
	    sscanf(out, "%lu %lf", &calls, &elapsed) != 2 || !calls || elapsed <= 0) {
		fprintf(stderr, "zsbench: python loop failed (status %#x, output \"%s\")\n",
			status, out);
		exit(2);
	}
	{
		struct result r = {
			.policy = pol, .slack_ns = set_slack(0), .op = "python_sleep0",
			.iters = calls,
			.vcsw = (double)ru.ru_nvcsw / (double)calls,
			.ivcsw = (double)ru.ru_nivcsw / (double)calls,
			.value = (double)calls / elapsed, .unit = "calls/s",
		};

		report(&r);
	}
}

/* ---- main -------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: zsbench [--short] [--sleeps-only] [--kernel NAME] [--csv FILE] [--python PATH]\n"
		"Measure zero-length sleeps, their baselines and their side effects.\n"
		"  --short        few iterations: checks that every measurement works\n"
		"  --sleeps-only  only the sleeps that do sleep (for repeated boots)\n"
		"  --kernel NAME  name of the kernel under test, for the output (guest)\n"
		"  --csv FILE     write the results as CSV to FILE (default: none)\n"
		"  --python PATH  the CPython to run (default /usr/bin/python3)\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "short", no_argument, NULL, 's' },
		{ "sleeps-only", no_argument, NULL, 'S' },
		{ "kernel", required_argument, NULL, 'k' },
		{ "csv", required_argument, NULL, 'c' },
		{ "python", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *csv_path = NULL;
	char clocksource[64] = "?";
	struct utsname u;
	uint64_t t0;
	FILE *f;
	size_t i;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			plan = &short_plan;
			break;
		case 'S':
			sleeps_only = true;
			break;
		case 'k':
			kernel_name = optarg;
			if (!*kernel_name || strpbrk(kernel_name, ",\n")) {
				fprintf(stderr, "zsbench: bad kernel name '%s'\n", optarg);
				return 1;
			}
			break;
		case 'c':
			csv_path = optarg;
			break;
		case 'p':
			python = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 1;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "zsbench: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 1;
	}

	if (access(python, X_OK)) {
		fprintf(stderr, "zsbench: cannot run python '%s': %s\n", python, strerror(errno));
		return 1;
	}
	csv = fopen(csv_path ? csv_path : "/dev/null", "w");
	if (!csv)
		die(csv_path);
	fprintf(csv, "kernel,policy,slack_ns,operation,iterations,p50_ns,p99_ns,"
		"vcsw_per_call,ivcsw_per_call,value\n");

	ncpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpus < 1)
		ncpus = 1;
	have_policy = prctl(PR_GET_TIMERSLACK_ZERO_POLICY, 0, 0, 0, 0) >= 0;
	if (have_policy) {
		policies = zs_policies;
		npolicies = sizeof(zs_policies) / sizeof(zs_policies[0]);
	} else {
		policies = &default_policy;
		npolicies = 1;
	}
	uname(&u);
	f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
	if (f) {
		if (fgets(clocksource, sizeof(clocksource), f))
			clocksource[strcspn(clocksource, "\n")] = '\0';
		fclose(f);
	}
	printf("# zsbench: kernel %s (%s %s %s), %d CPUs, clocksource %s, zero-sleep policy %s, %s run%s\n",
	       kernel_name, u.sysname, u.release, u.version, ncpus, clocksource,
	       have_policy ? "supported" : "not supported",
	       plan == &short_plan ? "short" : "full",
	       sleeps_only ? " (the sleeps that sleep only)" : "");

	t0 = now_ns();
	run_latency();
	printf("# latency: %.1f s\n", (double)(now_ns() - t0) / 1e9);
	if (sleeps_only)
		goto out;
	t0 = now_ns();
	run_fairness();
	printf("# fairness: %.1f s\n", (double)(now_ns() - t0) / 1e9);
	t0 = now_ns();
	for (i = 0; i < npolicies; i++)
		run_python(&policies[i]);
	printf("# python: %.1f s\n", (double)(now_ns() - t0) / 1e9);
out:
	if (fclose(csv))
		die("csv");
	return 0;
}
