// SPDX-License-Identifier: GPL-2.0
/*
 * Stress test for the zero-length sleep policy.
 *
 * For a bounded time (60 s by default, --seconds N), many threads flip
 * their policy among the four at random and mix zero-length and non-zero
 * sleeps, relative and absolute, on every hrtimer clock, while signals are
 * sent at them and another process rewrites their /proc policy files.
 *
 * The threads are in two groups, so that every assertion is sound:
 *
 * - "strict" threads, in the test process: only the thread itself changes
 *   its policy (prctl or its own /proc file), so it always knows which
 *   policy applies to each call.  For them: a zero-length sleep under
 *   RETURN or SCHEDULE never fails with EINTR, and one under RETURN takes
 *   no voluntary context switch (unless a signal handler ran on its way
 *   back: delivery takes a lock that sleeps when contended on PREEMPT_RT).
 *
 * - "supervised" threads, in a second process: a third process, the
 *   writer, rewrites their /proc/<pid>/task/<tid>/timerslack_zero_policy
 *   files at random and stops and continues their process (SIGSTOP and
 *   SIGCONT, which restart interrupted sleeps in the kernel).  They also
 *   set the policy of their whole process at times
 *   (PR_TIMERSLACK_ZERO_ALL_THREADS), racing with the writer and with each
 *   other.  Their policy can change during a call, so only the checks that
 *   hold under every policy apply to them.
 *
 * For every thread: no error but EINTR; an interrupted relative sleep
 * reports a remainder that is positive and at most the request plus the
 * timer slack; a successful sleep does not write *rmtp (except, in a
 * supervised thread, a relative one that was stopped, wrote such a
 * remainder and was restarted by the kernel); every non-zero sleep that
 * returns 0 lasted at least its length, measured on the clock it slept on
 * (for an absolute one: the clock read after the return is at or after the
 * deadline).  Signals come with SA_RESTART (SIGUSR1) and without (SIGUSR2);
 * sleeps are never restarted after a handler ran, so both give EINTR.
 *
 * A monitor fails the test if any thread stops making progress for
 * HANG_SECONDS, and every count is printed at the end.  Needs root (the
 * writer changes another process's threads, which needs CAP_SYS_NICE).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "common.h"
#include "harness.h"

#define NR_STRICT		8
#define NR_SUPERVISED		8
#define NR_WORKERS		(NR_STRICT + NR_SUPERVISED)
#define MIN_SECONDS		5
#define MAX_SECONDS		600
#define HANG_SECONDS		30
/* The harness's own limit, above MAX_SECONDS plus the shutdown. */
#define HARNESS_TIMEOUT		(MAX_SECONDS + 3 * HANG_SECONDS + 60)
#define MAX_MESSAGES		3
#define MESSAGE_LEN		240

static int run_seconds = 60;

enum kind { K_NANOSLEEP, K_CLOCK_REL, K_CLOCK_ABS, NR_KINDS };

static const char *const kind_names[NR_KINDS] = {
	"nanosleep", "clock_nanosleep relative", "clock_nanosleep absolute",
};

/* Per worker, in memory shared by the three processes. */
struct wstats {
	unsigned long iterations;	/* progress, read by the monitor */
	pid_t tid;
	unsigned long flips;		/* policy changes by the thread itself */
	unsigned long proc_flips;	/* ... of them through its own /proc file */
	unsigned long all_flips;	/* ... of them for every thread (ALL_THREADS) */
	/* By policy; [ZS_NR_POLICIES]: supervised, policy unknown. */
	unsigned long zero[ZS_NR_POLICIES + 1];
	unsigned long zero_return_checked;	/* RETURN, voluntary switches checked */
	unsigned long zero_return_signalled;	/* RETURN, a handler ran: not checked */
	unsigned long zero_return_signalled_switched;	/* ... and switched */
	unsigned long nonzero;
	unsigned long kinds[NR_KINDS];
	unsigned long clocks[4];
	unsigned long eintr_zero;
	unsigned long eintr_nonzero;
	unsigned long restarted;	/* stopped, remainder written, restarted */
	unsigned long signals;		/* handlers run in this thread */
	unsigned long failures;
	char messages[MAX_MESSAGES][MESSAGE_LEN];
};

struct shared {
	unsigned long stop;		/* workers and signallers end */
	unsigned long stop_writer;	/* the writer ends */
	unsigned long started;		/* workers that have published their tid */
	pid_t supervised_pid;
	struct wstats w[NR_WORKERS];
	unsigned long signals_sent[2];	/* by the test process, by the other */
	/* The writer's counts. */
	unsigned long wr_valid;
	unsigned long wr_invalid;
	unsigned long wr_reads;
	unsigned long wr_stops;
	unsigned long wr_failures;
	char wr_message[MESSAGE_LEN];
};

static struct shared *sh;

struct worker {
	struct wstats *w;
	bool strict;
	int policy;		/* strict threads: the policy in force */
	uint64_t rng;
	long slack_ns;		/* the thread's timer slack, for the remainder check */
	int self_fd;		/* its own /proc/.../timerslack_zero_policy */
	pthread_t thread;
};

static struct worker workers[NR_WORKERS];
static uint64_t base_seed;

static __thread struct wstats *tls_stats;

static void on_signal(int sig)
{
	(void)sig;
	if (tls_stats)
		zs_add(&tls_stats->signals, 1);
}

static void record(char *msgs, unsigned long *count, size_t slots, const char *fmt, ...)
{
	unsigned long n = __atomic_fetch_add(count, 1, __ATOMIC_RELAXED);
	va_list ap;

	if (n >= slots)
		return;
	va_start(ap, fmt);
	vsnprintf(msgs + n * MESSAGE_LEN, MESSAGE_LEN, fmt, ap);
	va_end(ap);
}

#define FAIL(w, fmt, ...) \
	record(&(w)->messages[0][0], &(w)->failures, MAX_MESSAGES, fmt, ##__VA_ARGS__)

static void set_own_policy(struct worker *c)
{
	struct wstats *w = c->w;
	int np = (int)zs_below(&c->rng, ZS_NR_POLICIES);
	int got;

	/* Strict threads sometimes use their own /proc file instead of prctl. */
	if (c->strict && zs_one_in(&c->rng, 4)) {
		char buf[2] = { (char)('0' + np), '\n' };
		size_t len = zs_one_in(&c->rng, 2) ? 1 : 2;
		ssize_t r;

		if (lseek(c->self_fd, 0, SEEK_SET) != 0)
			FAIL(w, "lseek on own policy file: %s", strerror(errno));
		r = write(c->self_fd, buf, len);
		if (r != (ssize_t)len)
			FAIL(w, "writing %d to own policy file: %zd (%s)", np, r,
			     strerror(errno));
		w->proc_flips++;
	} else if (!c->strict && zs_one_in(&c->rng, 3)) {
		/* Only the supervised process, whose policies are unknown anyway. */
		if (zs_set_policy_all(np))
			FAIL(w, "PR_SET_TIMERSLACK_ZERO_POLICY(%d, ALL_THREADS): %s", np,
			     strerror(errno));
		w->all_flips++;
	} else if (zs_set_policy(np)) {
		FAIL(w, "PR_SET_TIMERSLACK_ZERO_POLICY(%d): %s", np, strerror(errno));
	}
	w->flips++;
	got = zs_get_policy();
	if (c->strict) {
		c->policy = np;
		if (got != np)
			FAIL(w, "policy %d after setting %d", got, np);
	} else if (got < 0 || got >= ZS_NR_POLICIES) {
		FAIL(w, "PR_GET_TIMERSLACK_ZERO_POLICY: %d (%s)", got, strerror(errno));
	}
}

static int64_t pick_length(uint64_t *rng, bool strict)
{
	/*
	 * Supervised threads sometimes sleep longer, so that the writer's
	 * SIGSTOP often finds a relative sleep to interrupt and restart.
	 */
	if (!strict && zs_one_in(rng, 6))
		return 2 * NSEC_PER_MSEC + (int64_t)zs_below(rng, 18 * NSEC_PER_MSEC);
	switch (zs_below(rng, 4)) {
	case 0:
		return 1;
	case 1:
		return 1 + (int64_t)zs_below(rng, 1000);
	case 2:
		return 1 + (int64_t)zs_below(rng, 100 * NSEC_PER_USEC);
	default:
		return 1 + (int64_t)zs_below(rng, 2 * NSEC_PER_MSEC);
	}
}

static void one_sleep(struct worker *c)
{
	struct wstats *w = c->w;
	uint64_t *rng = &c->rng;
	enum kind kind;
	clockid_t clk;
	bool zero, check_switch, rem_ok;
	int64_t req = 0, deadline = 0, t0, t1, rem_ns;
	struct timespec ts, rem, canary;
	long ret, nv0 = 0, nv1 = 0;
	unsigned long sig0 = 0;
	int err, policy = c->strict ? c->policy : -1;

	switch (zs_below(rng, 4)) {
	case 0:
		kind = K_NANOSLEEP;
		break;
	case 1:
		kind = K_CLOCK_REL;
		break;
	default:
		kind = K_CLOCK_ABS;
		break;
	}
	clk = kind == K_NANOSLEEP ? CLOCK_MONOTONIC :
		zs_hrtimer_clocks[zs_below(rng, ZS_ARRAY_SIZE(zs_hrtimer_clocks))];
	zero = zs_below(rng, 10) < 6;

	if (zero && kind == K_CLOCK_ABS) {
		switch (zs_below(rng, 3)) {
		case 0:
			deadline = zs_now(clk);
			break;
		case 1:
			deadline = zs_now(clk) - 1 - (int64_t)zs_below(rng, NSEC_PER_SEC);
			break;
		default:
			deadline = 0;
			break;
		}
	} else if (!zero) {
		req = pick_length(rng, c->strict);
		if (kind == K_CLOCK_ABS)
			deadline = zs_now(clk) + req;
	}
	ts = zs_ns_ts(kind == K_CLOCK_ABS ? deadline : req);
	memset(&canary, 0xa5, sizeof(canary));
	rem = canary;

	check_switch = zero && policy == ZS_RETURN;
	if (check_switch) {
		sig0 = zs_load(&w->signals);
		nv0 = zs_nvcsw();
	}
	t0 = zs_now(clk);
	if (kind == K_NANOSLEEP)
		ret = syscall(SYS_nanosleep, &ts, &rem);
	else
		ret = syscall(SYS_clock_nanosleep, clk,
			      kind == K_CLOCK_ABS ? TIMER_ABSTIME : 0, &ts, &rem);
	err = ret ? errno : 0;
	t1 = zs_now(clk);
	if (check_switch)
		nv1 = zs_nvcsw();

	w->kinds[kind]++;
	w->clocks[zs_clock_index(clk)]++;
	if (err && err != EINTR) {
		FAIL(w, "%s %s, %s: unexpected error %s", kind_names[kind],
		     zs_clock_name(clk), zero ? "zero" : "non-zero", strerror(err));
		return;
	}
	rem_ns = zs_ts_ns(&rem);
	/* do_nanosleep() writes a remainder only when time is left. */
	rem_ok = rem.tv_sec >= 0 && rem.tv_nsec >= 0 && rem.tv_nsec < NSEC_PER_SEC &&
		rem_ns > 0 && rem_ns <= req + c->slack_ns;
	if (err == EINTR && kind != K_CLOCK_ABS) {
		if (!rem_ok)
			FAIL(w, "%s %s, %lld ns: EINTR with remainder {%lld, %lld}",
			     kind_names[kind], zs_clock_name(clk), (long long)req,
			     (long long)rem.tv_sec, (long long)rem.tv_nsec);
	} else if (memcmp(&rem, &canary, sizeof(rem))) {
		/*
		 * A relative sleep stopped by SIGSTOP writes its remainder, and
		 * is then restarted by the kernel and completes: only possible
		 * for the supervised threads, whose process the writer stops.
		 */
		if (!c->strict && !err && kind != K_CLOCK_ABS && rem_ok)
			w->restarted++;
		else
			FAIL(w, "%s %s, %s, %s: *rmtp written: {%lld, %lld}", kind_names[kind],
			     zs_clock_name(clk), zero ? "zero" : "non-zero",
			     err ? "EINTR" : "success", (long long)rem.tv_sec,
			     (long long)rem.tv_nsec);
	}

	if (zero) {
		w->zero[c->strict ? policy : ZS_NR_POLICIES]++;
		if (err == EINTR) {
			w->eintr_zero++;
			/* DEFAULT and FULL_SLACK sleep, and can be interrupted. */
			if (c->strict && (policy == ZS_RETURN || policy == ZS_SCHEDULE))
				FAIL(w, "%s %s: zero-length sleep under %s failed with EINTR",
				     kind_names[kind], zs_clock_name(clk), zs_policy_name(policy));
		}
		/*
		 * Not where a handler ran: delivering the signal takes the
		 * process's siglock, which the other threads' signals take
		 * too, and on PREEMPT_RT a contended spinlock_t sleeps, which
		 * counts as a voluntary switch.  That is not the sleep.
		 */
		if (check_switch && !err && zs_load(&w->signals) != sig0) {
			w->zero_return_signalled++;
			w->zero_return_signalled_switched += nv1 != nv0;
		} else if (check_switch && !err) {
			w->zero_return_checked++;
			if (nv1 != nv0)
				FAIL(w, "%s %s: zero-length sleep under RETURN took %ld voluntary switches",
				     kind_names[kind], zs_clock_name(clk), nv1 - nv0);
		}
		return;
	}

	w->nonzero++;
	if (err == EINTR) {
		w->eintr_nonzero++;
		return;
	}
	if (kind == K_CLOCK_ABS) {
		if (t1 < deadline)
			FAIL(w, "%s %s: returned %lld ns before the deadline",
			     kind_names[kind], zs_clock_name(clk), (long long)(deadline - t1));
	} else if (t1 - t0 < req) {
		FAIL(w, "%s %s: slept %lld ns of %lld", kind_names[kind],
		     zs_clock_name(clk), (long long)(t1 - t0), (long long)req);
	}
}

static void *worker_fn(void *arg)
{
	struct worker *c = arg;
	struct wstats *w = c->w;
	char path[64];

	tls_stats = w;
	w->tid = gettid();
	c->slack_ns = (long)zs_prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
	snprintf(path, sizeof(path), "/proc/thread-self/timerslack_zero_policy");
	c->self_fd = open(path, O_RDWR | O_CLOEXEC);
	if (c->self_fd < 0)
		FAIL(w, "open %s: %s", path, strerror(errno));
	c->policy = zs_get_policy();
	if (c->policy < 0 || c->policy >= ZS_NR_POLICIES)
		FAIL(w, "PR_GET_TIMERSLACK_ZERO_POLICY: %d (%s)", c->policy, strerror(errno));
	zs_add(&sh->started, 1);

	while (!zs_load(&sh->stop)) {
		if (zs_one_in(&c->rng, 8))
			set_own_policy(c);
		one_sleep(c);
		zs_add(&w->iterations, 1);
	}
	if (c->strict && zs_get_policy() != c->policy)
		FAIL(w, "final policy %d, expected %d", zs_get_policy(), c->policy);
	if (c->self_fd >= 0)
		close(c->self_fd);
	return NULL;
}

static int start_workers(int first, int count, bool strict)
{
	int i, ret;

	for (i = first; i < first + count; i++) {
		workers[i].w = &sh->w[i];
		workers[i].strict = strict;
		workers[i].rng = base_seed ^ (0x1000193ULL * (uint64_t)(i + 1));
		ret = pthread_create(&workers[i].thread, NULL, worker_fn, &workers[i]);
		if (ret)
			return ret;
	}
	return 0;
}

/* Sends SIGUSR1 or SIGUSR2 to random workers until told to stop. */
static void signal_loop(int first, int count, unsigned long *sent, uint64_t seed)
{
	uint64_t rng = seed;
	struct timespec pause;
	int i;

	while (!zs_load(&sh->stop)) {
		i = first + (int)zs_below(&rng, (uint64_t)count);
		if (!pthread_kill(workers[i].thread, zs_one_in(&rng, 2) ? SIGUSR1 : SIGUSR2))
			zs_add(sent, 1);
		pause = zs_ns_ts(100 * NSEC_PER_USEC + (int64_t)zs_below(&rng, 2 * NSEC_PER_MSEC));
		nanosleep(&pause, NULL);
	}
}

static void *signaller_fn(void *arg)
{
	(void)arg;
	signal_loop(0, NR_STRICT, &sh->signals_sent[0], base_seed ^ 0x5157ULL);
	return NULL;
}

static int install_handlers(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	if (sigaction(SIGUSR1, &sa, NULL))
		return -1;
	sa.sa_flags = 0;
	return sigaction(SIGUSR2, &sa, NULL);
}

/* The second process: the supervised threads, and its own signaller. */
static void supervised_main(void)
{
	int i;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (start_workers(NR_STRICT, NR_SUPERVISED, false))
		_exit(2);
	signal_loop(NR_STRICT, NR_SUPERVISED, &sh->signals_sent[1], base_seed ^ 0x5250ULL);
	for (i = NR_STRICT; i < NR_WORKERS; i++)
		pthread_join(workers[i].thread, NULL);
	_exit(0);
}

#define WFAIL(fmt, ...) \
	record(sh->wr_message, &sh->wr_failures, 1, fmt, ##__VA_ARGS__)

static const char *const invalid_writes[] = {
	"4", "9", "", "00", "01", "1 ", " 1", "-1", "+1", "1\n\n", "x", "\n",
	"0x1", "1\r", "10", "2\0", "\0",
};

/* The third process: rewrites the supervised threads' policy files. */
static void writer_main(void)
{
	int fds[NR_SUPERVISED + 1], i, n, fd, policy;
	uint64_t rng = base_seed ^ 0x5752ULL;
	pid_t pid = sh->supervised_pid;
	int64_t next_stop;
	char path[96], buf[8];
	struct timespec pause;
	const char *s;
	size_t len;
	ssize_t r;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* Every worker's tid must be known first. */
	for (i = 0; i < 600 && zs_load(&sh->started) < NR_WORKERS; i++)
		usleep(50000);
	for (i = 0; i <= NR_SUPERVISED; i++) {
		if (i < NR_SUPERVISED)
			snprintf(path, sizeof(path), "/proc/%d/task/%d/timerslack_zero_policy",
				 pid, sh->w[NR_STRICT + i].tid);
		else
			snprintf(path, sizeof(path), "/proc/%d/timerslack_zero_policy", pid);
		fds[i] = open(path, O_RDWR | O_CLOEXEC);
		if (fds[i] < 0) {
			WFAIL("open %s: %s", path, strerror(errno));
			_exit(1);
		}
	}

	next_stop = zs_now(CLOCK_MONOTONIC) + 100 * NSEC_PER_MSEC;
	for (n = 0; !zs_load(&sh->stop_writer); n++) {
		fd = fds[zs_below(&rng, NR_SUPERVISED + 1)];
		if (lseek(fd, 0, SEEK_SET) != 0)
			WFAIL("lseek: %s", strerror(errno));
		switch (zs_below(&rng, 10)) {
		case 0 ... 6:
			policy = (int)zs_below(&rng, ZS_NR_POLICIES);
			buf[0] = (char)('0' + policy);
			buf[1] = '\n';
			len = zs_one_in(&rng, 2) ? 1 : 2;
			r = write(fd, buf, len);
			if (r != (ssize_t)len)
				WFAIL("writing %d: %zd (%s)", policy, r, strerror(errno));
			sh->wr_valid++;
			break;
		case 7 ... 8:
			i = (int)zs_below(&rng, ZS_ARRAY_SIZE(invalid_writes));
			s = invalid_writes[i];
			/* The last two have an explicit NUL byte. */
			len = i >= (int)ZS_ARRAY_SIZE(invalid_writes) - 2 ? strlen(s) + 1 : strlen(s);
			r = write(fd, s, len);
			if (r != -1 || errno != EINVAL)
				WFAIL("writing invalid #%d: %zd (%s)", i, r,
				      r < 0 ? strerror(errno) : "accepted");
			sh->wr_invalid++;
			break;
		default:
			r = read(fd, buf, sizeof(buf));
			if (r != 2 || buf[0] < '0' || buf[0] >= '0' + ZS_NR_POLICIES ||
			    buf[1] != '\n')
				WFAIL("read: %zd (%s)", r, r < 0 ? strerror(errno) : "bad contents");
			sh->wr_reads++;
			break;
		}
		if (zs_now(CLOCK_MONOTONIC) >= next_stop) {
			/* Stopped sleeps are restarted by the kernel after SIGCONT. */
			if (kill(pid, SIGSTOP))
				WFAIL("SIGSTOP: %s", strerror(errno));
			pause = zs_ns_ts(1 + (int64_t)zs_below(&rng, 5 * NSEC_PER_MSEC));
			nanosleep(&pause, NULL);
			if (kill(pid, SIGCONT))
				WFAIL("SIGCONT: %s", strerror(errno));
			sh->wr_stops++;
			next_stop = zs_now(CLOCK_MONOTONIC) +
				(int64_t)zs_below(&rng, 200 * NSEC_PER_MSEC);
		}
		if (!(n & 7)) {
			pause = zs_ns_ts(50 * NSEC_PER_USEC);
			nanosleep(&pause, NULL);
		}
	}
	_exit(0);
}

/* Waits up to @secs for @pid; kills it after that.  Returns its status or -1. */
static int reap(pid_t pid, int secs)
{
	int status, i;

	for (i = 0; i < secs * 10; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return status;
		usleep(100000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return -1;
}

static void add_stats(struct wstats *t, const struct wstats *w)
{
	int k;

	t->iterations += w->iterations;
	t->flips += w->flips;
	t->proc_flips += w->proc_flips;
	t->all_flips += w->all_flips;
	for (k = 0; k <= ZS_NR_POLICIES; k++)
		t->zero[k] += w->zero[k];
	t->zero_return_checked += w->zero_return_checked;
	t->zero_return_signalled += w->zero_return_signalled;
	t->zero_return_signalled_switched += w->zero_return_signalled_switched;
	t->nonzero += w->nonzero;
	for (k = 0; k < NR_KINDS; k++)
		t->kinds[k] += w->kinds[k];
	for (k = 0; k < 4; k++)
		t->clocks[k] += w->clocks[k];
	t->eintr_zero += w->eintr_zero;
	t->eintr_nonzero += w->eintr_nonzero;
	t->restarted += w->restarted;
	t->signals += w->signals;
	t->failures += w->failures;
}

/* Prints every count and failure; returns the number of failures. */
static unsigned long sum_and_print(struct __test_metadata *_metadata)
{
	static const char *const group[2] = { "strict", "supervised" };
	unsigned long min_it[2] = { ULONG_MAX, ULONG_MAX };
	struct wstats tot[2];
	int g, i, m;

	memset(tot, 0, sizeof(tot));
	for (i = 0; i < NR_WORKERS; i++) {
		const struct wstats *w = &sh->w[i];

		g = i >= NR_STRICT;
		add_stats(&tot[g], w);
		if (w->iterations < min_it[g])
			min_it[g] = w->iterations;
		for (m = 0; m < MAX_MESSAGES && m < (int)w->failures; m++)
			ksft_print_msg("FAIL %s thread %d (tid %d): %s\n", group[g], i,
				       w->tid, w->messages[m]);
	}
	for (g = 0; g < 2; g++) {
		const struct wstats *t = &tot[g];

		ksft_print_msg("%s threads: %d, iterations %lu (fewest in one thread %lu)\n",
			       group[g], g ? NR_SUPERVISED : NR_STRICT, t->iterations, min_it[g]);
		ksft_print_msg("%s: own policy changes %lu (%lu through /proc, %lu for all threads)\n",
			       group[g], t->flips, t->proc_flips, t->all_flips);
		if (!g) {
			ksft_print_msg("strict: zero-length sleeps DEFAULT %lu, RETURN %lu (%lu switch-checked), SCHEDULE %lu, FULL_SLACK %lu\n",
				       t->zero[ZS_DEFAULT], t->zero[ZS_RETURN],
				       t->zero_return_checked, t->zero[ZS_SCHEDULE],
				       t->zero[ZS_FULL_SLACK]);
			ksft_print_msg("strict: RETURN with a signal handled, not switch-checked %lu, of which switched %lu\n",
				       t->zero_return_signalled,
				       t->zero_return_signalled_switched);
		} else {
			ksft_print_msg("supervised: zero-length sleeps %lu\n", t->zero[ZS_NR_POLICIES]);
		}
		ksft_print_msg("%s: non-zero sleeps %lu; nanosleep %lu, relative %lu, absolute %lu\n",
			       group[g], t->nonzero, t->kinds[K_NANOSLEEP], t->kinds[K_CLOCK_REL],
			       t->kinds[K_CLOCK_ABS]);
		ksft_print_msg("%s: REALTIME %lu, MONOTONIC %lu, BOOTTIME %lu, TAI %lu\n",
			       group[g], t->clocks[0], t->clocks[1], t->clocks[2], t->clocks[3]);
		ksft_print_msg("%s: signals handled %lu, sent %lu; EINTR zero-length %lu, non-zero %lu\n",
			       group[g], t->signals, sh->signals_sent[g], t->eintr_zero,
			       t->eintr_nonzero);
		if (g)
			ksft_print_msg("supervised: sleeps stopped, restarted and completed (remainder written) %lu\n",
				       t->restarted);
		ksft_print_msg("%s: failures %lu\n", group[g], t->failures);
	}
	ksft_print_msg("writer: valid writes %lu, invalid writes %lu, reads %lu, SIGSTOP/SIGCONT %lu, failures %lu\n",
		       sh->wr_valid, sh->wr_invalid, sh->wr_reads, sh->wr_stops, sh->wr_failures);
	if (sh->wr_failures)
		ksft_print_msg("FAIL writer: %s\n", sh->wr_message);

	/* Each part of the load must have happened, or the run proves little. */
	EXPECT_LT(0UL, min_it[0]);
	EXPECT_LT(0UL, min_it[1]);
	EXPECT_LT(0UL, tot[0].zero[ZS_DEFAULT]);
	EXPECT_LT(0UL, tot[0].zero[ZS_RETURN]);
	EXPECT_LT(0UL, tot[0].zero[ZS_SCHEDULE]);
	EXPECT_LT(0UL, tot[0].zero[ZS_FULL_SLACK]);
	EXPECT_LT(0UL, tot[0].zero_return_checked);
	EXPECT_LT(0UL, tot[0].proc_flips);
	EXPECT_LT(0UL, tot[1].all_flips);
	EXPECT_LT(0UL, tot[0].signals);
	EXPECT_LT(0UL, tot[1].signals);
	EXPECT_LT(0UL, tot[0].eintr_nonzero + tot[1].eintr_nonzero);
	EXPECT_LT(0UL, tot[1].restarted);
	EXPECT_LT(0UL, sh->wr_valid);
	EXPECT_LT(0UL, sh->wr_invalid);
	EXPECT_LT(0UL, sh->wr_stops);
	return tot[0].failures + tot[1].failures + sh->wr_failures;
}

FIXTURE(stress) {};
FIXTURE_SETUP(stress) {}
FIXTURE_TEARDOWN(stress) {}

TEST_F_TIMEOUT(stress, policies_sleeps_signals_and_proc, HARNESS_TIMEOUT)
{
	pid_t sup, wr;
	pthread_t signaller;
	unsigned long last[NR_WORKERS], failures = 0;
	int64_t changed[NR_WORKERS], now, end;
	int i, sup_status = -1, wr_status = -1, hung = -1;

	if (geteuid() != 0)
		SKIP(return, "the /proc writer needs CAP_SYS_NICE (run as root)");

	base_seed = (uint64_t)zs_now(CLOCK_REALTIME) ^ ((uint64_t)getpid() << 32);
	ksft_print_msg("seed %" PRIu64 ", %d s, %d strict and %d supervised threads\n",
		       base_seed, run_seconds, NR_STRICT, NR_SUPERVISED);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, sh);
	ASSERT_EQ(0, install_handlers());
	/* No lazy page faults that could block a strict thread on mmap_lock. */
	if (zs_lock_memory())
		ksft_print_msg("mlockall: %s (continuing)\n", strerror(errno));

	sup = fork();
	ASSERT_LE(0, sup);
	if (sup == 0)
		supervised_main();
	sh->supervised_pid = sup;
	/* Forked before any thread starts here; it waits for all the tids. */
	wr = fork();
	ASSERT_LE(0, wr) {
		kill(sup, SIGKILL);
	}
	if (wr == 0)
		writer_main();

	ASSERT_EQ(0, start_workers(0, NR_STRICT, true)) {
		kill(sup, SIGKILL);
		kill(wr, SIGKILL);
	}
	for (i = 0; i < 200 && zs_load(&sh->started) < NR_WORKERS; i++)
		usleep(50000);
	ASSERT_EQ((unsigned long)NR_WORKERS, zs_load(&sh->started)) {
		kill(sup, SIGKILL);
		kill(wr, SIGKILL);
	}
	ASSERT_EQ(0, pthread_create(&signaller, NULL, signaller_fn, NULL));

	/* The monitor. */
	now = zs_now(CLOCK_MONOTONIC);
	end = now + run_seconds * NSEC_PER_SEC;
	for (i = 0; i < NR_WORKERS; i++) {
		last[i] = zs_load(&sh->w[i].iterations);
		changed[i] = now;
	}
	while (hung < 0 && (now = zs_now(CLOCK_MONOTONIC)) < end) {
		usleep(250000);
		now = zs_now(CLOCK_MONOTONIC);
		for (i = 0; i < NR_WORKERS; i++) {
			unsigned long it = zs_load(&sh->w[i].iterations);

			if (it != last[i]) {
				last[i] = it;
				changed[i] = now;
			} else if (now - changed[i] > HANG_SECONDS * NSEC_PER_SEC) {
				hung = i;
			}
		}
		if (waitpid(sup, &sup_status, WNOHANG) == sup) {
			ksft_print_msg("the supervised process ended early\n");
			sup = 0;
			break;
		}
		if (waitpid(wr, &wr_status, WNOHANG) == wr) {
			ksft_print_msg("the writer process ended early\n");
			wr = 0;
			break;
		}
	}
	if (hung >= 0) {
		ksft_print_msg("thread %d (tid %d) made no progress for %d s: hang\n",
			       hung, sh->w[hung].tid, HANG_SECONDS);
		if (wr > 0)
			kill(wr, SIGKILL);
		if (sup > 0)
			kill(sup, SIGKILL);
		/* The hung thread cannot be joined: end the test process. */
		ASSERT_LT(hung, 0);
	}

	zs_store(&sh->stop_writer, 1);
	if (wr)
		wr_status = reap(wr, HANG_SECONDS);
	if (sup)
		kill(sup, SIGCONT);
	EXPECT_TRUE(wr_status >= 0 && WIFEXITED(wr_status) && WEXITSTATUS(wr_status) == 0)
		TH_LOG("writer: status %#x", wr_status);
	zs_store(&sh->stop, 1);
	pthread_join(signaller, NULL);
	for (i = 0; i < NR_STRICT; i++)
		pthread_join(workers[i].thread, NULL);
	if (sup)
		sup_status = reap(sup, HANG_SECONDS);
	EXPECT_TRUE(sup_status >= 0 && WIFEXITED(sup_status) && WEXITSTATUS(sup_status) == 0)
		TH_LOG("supervised process: status %#x", sup_status);

	failures = sum_and_print(_metadata);
	EXPECT_EQ(0UL, failures);
	munmap(sh, sizeof(*sh));
}

static void usage(const char *prog)
{
	fprintf(stderr, "usage: %s [--seconds N] [harness options]\n"
		"  --seconds N  run for N seconds (%d..%d, default 60)\n",
		prog, MIN_SECONDS, MAX_SECONDS);
}

int main(int argc, char **argv)
{
	char **args = calloc((size_t)argc + 1, sizeof(*args));
	int i, n = 0;
	char *end;
	long v;

	if (!args)
		return KSFT_FAIL;
	for (i = 0; i < argc; i++) {
		const char *val = NULL;

		if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			val = argv[++i];
		else if (!strncmp(argv[i], "--seconds=", 10))
			val = argv[i] + 10;
		else if (!strcmp(argv[i], "--help")) {
			usage(argv[0]);
			return 0;
		} else {
			args[n++] = argv[i];
			continue;
		}
		errno = 0;
		v = strtol(val, &end, 10);
		if (errno || end == val || *end || v < MIN_SECONDS || v > MAX_SECONDS) {
			fprintf(stderr, "%s: bad --seconds value '%s'\n", argv[0], val);
			usage(argv[0]);
			return KSFT_FAIL;
		}
		run_seconds = (int)v;
	}
	args[n] = NULL;
	return test_harness_run(n, args);
}
