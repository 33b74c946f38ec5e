// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Tests of libzerosleep-preload.so, TAP on stdout.
 *
 * Without arguments this program is the judge: it runs itself again, as a
 * worker (one argument: what to measure), with LD_PRELOAD and
 * ZEROSLEEP_POLICY set as zerosleep(1) sets them, reads the worker's
 * figures and decides.  Every measurement is judged by counts that do not
 * depend on the machine's speed: voluntary context switches (a sleep that
 * reaches the kernel's timer blocks, one that returns in user space does
 * not), how often two threads pinned to one CPU take turns, and lower
 * bounds on the length of non-zero sleeps.  Each figure under the preload
 * is compared with the same worker run without it, so that a test that
 * cannot tell the difference fails.
 *
 * Environment: O, the build directory holding libzerosleep-preload.so;
 * PRELOAD_WRAPPER, a command (such as valgrind) to run the workers under.
 * Works on any kernel: it does not use the kernel's policies.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <threads.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"
/* Clock and switch readings and the probes, shared with the hardening tests. */
#include "../../hardening/probe.h"

#define CALLS		20
#define SLACK_NS	10000000UL	/* 10 ms: a zero-length sleep blocks */
#define TURNS		1000

/* ---- the worker --------------------------------------------------------- */

static long nvcsw(void)
{
	long n;

	zs_switches(&n, NULL);
	return n;
}

enum call {
	C_SLEEP, C_USLEEP, C_NANOSLEEP, C_THRD_SLEEP,
	C_REL_MONO, C_REL_REAL, C_REL_BOOT, C_REL_TAI,
	C_ABS_MONO, C_ABS_REAL, C_ABS_BOOT, C_ABS_TAI, C_ABS_PAST,
	C_NR
};

static const char *const call_name[C_NR] = {
	"sleep(0)", "usleep(0)", "nanosleep({0,0})", "thrd_sleep({0,0})",
	"clock_nanosleep(MONOTONIC, rel 0)", "clock_nanosleep(REALTIME, rel 0)",
	"clock_nanosleep(BOOTTIME, rel 0)", "clock_nanosleep(TAI, rel 0)",
	"clock_nanosleep(MONOTONIC, ABS now)", "clock_nanosleep(REALTIME, ABS now)",
	"clock_nanosleep(BOOTTIME, ABS now)", "clock_nanosleep(TAI, ABS now)",
	"clock_nanosleep(MONOTONIC, ABS 1 s ago)",
};

/*
 * Since Linux 7.2, commits bd5956166d20 ("hrtimer: Provide
 * hrtimer_start_range_ns_user()") and b40c927345a9 ("hrtimer: Use
 * hrtimer_start_expires_user() for hrtimer sleepers"), the kernel itself
 * returns from an expired sleep when its timer would be the first of its
 * clock base and expire before anything else on the CPU.  At a 10 ms slack
 * that holds for the bases that are usually empty (CLOCK_BOOTTIME,
 * CLOCK_TAI, absolute CLOCK_REALTIME), not for CLOCK_MONOTONIC's, where the
 * scheduler tick is queued: relative CLOCK_REALTIME sleeps, and with them
 * every C library entry point, go there too.  On such a kernel only those
 * are sure to block, and only if it is not PREEMPT_RT, where the sleeper of
 * a task that is not real-time goes to the base's soft twin, which the tick
 * does not use (../../hardening/probe.h).
 */
static int on_tick_base(enum call c)
{
	return c <= C_REL_REAL || c == C_ABS_MONO;
}

/*
 * Whether the kernel has that early return: probed, not read from its
 * version, since a distribution kernel may carry it before 7.2
 * (zs_probe_early_return()).  1: early return, 0: none, -1: the probe
 * cannot tell.  The probe runs in the judge, under DEFAULT where the
 * kernel has the policies, as the workers that run without the preload do:
 * it sees what they see.  The judge's slack and policy are left as they
 * were.  So is kernel_mono, whether expired CLOCK_MONOTONIC sleeps wait
 * (zs_probe_monotonic()).
 */
static int kernel_early = ZS_EARLY_UNKNOWN;
static int kernel_mono = ZS_MONO_UNKNOWN;

static void probe_early_return(void)
{
	kernel_early = zs_probe_early_return();
	kernel_mono = zs_probe_monotonic();
}

/* Whether the probes told; a test that needs the answers fails if not. */
static int early_known(void)
{
	if (kernel_early < 0)
		diag("cannot judge: the kernel's early return is unknown (see the probe)");
	if (kernel_mono < 0)
		diag("cannot judge: whether expired CLOCK_MONOTONIC sleeps wait is unknown (see the probe)");
	return kernel_early >= 0 && kernel_mono >= 0;
}

/*
 * Whether the kernel, left alone, must block in this call at 10 ms slack.
 * Only asked where early_known().
 */
static int must_block(enum call c)
{
	return c != C_ABS_PAST &&
	       ((on_tick_base(c) && kernel_mono == ZS_MONO_WAITS) || kernel_early == 0);
}

/* One zero-length sleep; 0 on success. */
static int zero_call(enum call c)
{
	static const clockid_t clocks[] = {
		CLOCK_MONOTONIC, CLOCK_REALTIME, CLOCK_BOOTTIME, CLOCK_TAI,
	};
	struct timespec ts = { 0, 0 };

	switch (c) {
	case C_SLEEP:
		return (int)sleep(0);
	case C_USLEEP:
		return usleep(0);
	case C_NANOSLEEP:
		return nanosleep(&ts, NULL);
	case C_THRD_SLEEP:
		return thrd_sleep(&ts, NULL);
	case C_REL_MONO: case C_REL_REAL: case C_REL_BOOT: case C_REL_TAI:
		return clock_nanosleep(clocks[c - C_REL_MONO], 0, &ts, NULL);
	case C_ABS_MONO: case C_ABS_REAL: case C_ABS_BOOT: case C_ABS_TAI:
		clock_gettime(clocks[c - C_ABS_MONO], &ts);
		return clock_nanosleep(clocks[c - C_ABS_MONO], TIMER_ABSTIME,
				       &ts, NULL);
	case C_ABS_PAST:
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec--;
		return clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	default:
		return -1;
	}
}

/*
 * "NAME-INDEX SWITCHES FAILURES ERRNO-KEPT ELAPSED-NS" per kind of call, at
 * a timer slack of @slack ns.
 */
static int work_zero(unsigned long slack)
{
	long long t0;
	long before;
	int c, i, failures, kept;

	if (prctl(PR_SET_TIMERSLACK, slack, 0UL, 0UL, 0UL) ||
	    prctl(PR_GET_TIMERSLACK, 0UL, 0UL, 0UL, 0UL) != (int)slack)
		return 1;
	for (c = 0; c < C_NR; c++) {
		failures = 0;
		kept = 1;
		before = nvcsw();
		t0 = zs_now(CLOCK_MONOTONIC);
		for (i = 0; i < CALLS; i++) {
			errno = 4242;
			failures += zero_call((enum call)c) != 0;
			kept &= errno == 4242;
		}
		printf("%d %ld %d %d %lld\n", c, nvcsw() - before, failures, kept,
		       zs_now(CLOCK_MONOTONIC) - t0);
	}
	return 0;
}

/*
 * "NAME ELAPSED-NS SWITCHES RESULT" for sleeps that are not zero-length.
 * The 1 ns sleeps are made 5 times each: the shortest time, the most
 * switches and the first non-zero result are printed.
 */
static int work_nonzero(void)
{
	struct timespec ts;
	long long t0, ns;
	long before, sw;
	int ret, i;

	if (prctl(PR_SET_TIMERSLACK, SLACK_NS, 0UL, 0UL, 0UL))
		return 1;
#define MEASURE(name, call)						\
	do {								\
		before = nvcsw();					\
		t0 = zs_now(CLOCK_MONOTONIC);				\
		ret = (call);						\
		printf("%s %lld %ld %d\n", name,			\
		       zs_now(CLOCK_MONOTONIC) - t0, nvcsw() - before, ret); \
	} while (0)
#define MEASURE5(name, call)						\
	do {								\
		ns = LLONG_MAX;						\
		sw = 0;							\
		ret = 0;						\
		for (i = 0; i < 5; i++) {				\
			ts = (struct timespec){ 0, 1 };			\
			before = nvcsw();				\
			t0 = zs_now(CLOCK_MONOTONIC);			\
			ret = ret ? ret : (call);			\
			t0 = zs_now(CLOCK_MONOTONIC) - t0;		\
			ns = t0 < ns ? t0 : ns;				\
			before = nvcsw() - before;			\
			sw = before > sw ? before : sw;			\
		}							\
		printf("%s %lld %ld %d\n", name, ns, sw, ret);		\
	} while (0)
	MEASURE5("nanosleep-1ns", nanosleep(&ts, NULL));
	MEASURE5("rel-1ns", clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL));
	prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
	ts = (struct timespec){ 0, 20000000 };
	MEASURE("nanosleep-20ms", nanosleep(&ts, NULL));
	MEASURE("usleep-20ms", usleep(20000));
	ts = (struct timespec){ 0, 20000000 };
	MEASURE("thrd_sleep-20ms", thrd_sleep(&ts, NULL));
	MEASURE("sleep-1s", (int)sleep(1));
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_nsec += 20000000;
	if (ts.tv_nsec >= NSEC_PER_SEC) {
		ts.tv_sec++;
		ts.tv_nsec -= NSEC_PER_SEC;
	}
	MEASURE("abs-20ms", clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL));
	return 0;
}

/*
 * Invalid requests: every one that the C library rejects, per function.
 * "FUNCTION CASE RESULT ERRNO" per line, one line at a time so that a crash
 * leaves the lines before it.  work_invalid() has the bad values (it may
 * run under valgrind); work_badptr() the bad pointers (never under
 * valgrind, which would report the C library's own EFAULT calls).
 */
enum fn { F_NANOSLEEP, F_REL, F_ABS, F_REL_TAI, F_ABS_REAL, F_THRD_SLEEP, F_NR };

static const char *const fn_name[F_NR] = {
	"nanosleep", "clock_nanosleep(MONOTONIC,rel)",
	"clock_nanosleep(MONOTONIC,TIMER_ABSTIME)", "clock_nanosleep(TAI,rel)",
	"clock_nanosleep(REALTIME,TIMER_ABSTIME)", "thrd_sleep",
};

/* Call @f with @req (and @rem); print its result and errno. */
static void try_call(enum fn f, const char *name, const struct timespec *req,
		     struct timespec *rem)
{
	int ret;

	errno = 0;
	switch (f) {
	case F_NANOSLEEP:
		ret = nanosleep(req, rem);
		break;
	case F_REL:
		ret = clock_nanosleep(CLOCK_MONOTONIC, 0, req, rem);
		break;
	case F_ABS:
		ret = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, req, rem);
		break;
	case F_REL_TAI:
		ret = clock_nanosleep(CLOCK_TAI, 0, req, rem);
		break;
	case F_ABS_REAL:
		ret = clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, req, rem);
		break;
	default:
		ret = thrd_sleep(req, rem);
		break;
	}
	printf("%d %s %d %d\n", (int)f, name, ret, errno);
	fflush(stdout);
}

static int work_invalid(void)
{
	static const struct {
		const char *name;
		struct timespec ts;
	} values[] = {
		{ "tv_nsec=-1", { 0, -1 } },
		{ "tv_nsec=1e9", { 0, NSEC_PER_SEC } },
		{ "tv_nsec=LONG_MIN", { 0, LONG_MIN } },
		{ "tv_sec=-1", { -1, 0 } },
		{ "tv_sec=-1,tv_nsec=-1", { -1, -1 } },
		{ "tv_sec=LONG_MIN", { LONG_MIN, 0 } },
	};
	static const struct {
		const char *name;
		clockid_t clock;
	} clocks[] = {
		{ "clock=1234", (clockid_t)1234 },
		{ "clock=-1", (clockid_t)-1 },
		{ "clock=THREAD_CPUTIME", CLOCK_THREAD_CPUTIME_ID },
		{ "clock=MONOTONIC_RAW", CLOCK_MONOTONIC_RAW },
		{ "clock=MONOTONIC_COARSE", CLOCK_MONOTONIC_COARSE },
	};
	struct timespec zero = { 0, 0 };
	char name[64];
	size_t i;
	int f, flags, ret;

	for (f = 0; f < F_NR; f++)
		for (i = 0; i < sizeof(values) / sizeof(values[0]); i++)
			try_call((enum fn)f, values[i].name, &values[i].ts, NULL);
	/* Unknown clocks and clocks without nsleep, zero-length requests. */
	for (flags = 0; flags <= TIMER_ABSTIME; flags += TIMER_ABSTIME)
		for (i = 0; i < sizeof(clocks) / sizeof(clocks[0]); i++) {
			snprintf(name, sizeof(name), "%s,%s", clocks[i].name,
				 flags ? "abs" : "rel");
			errno = 0;
			ret = clock_nanosleep(clocks[i].clock, flags, &zero, NULL);
			printf("%d %s %d %d\n", F_NR, name, ret, errno);
			fflush(stdout);
		}
	return 0;
}

static int work_badptr(void)
{
	long page = sysconf(_SC_PAGESIZE);
	struct timespec zero = { 0, 0 };
	char *map;
	int f;

	/* Three pages: readable, PROT_NONE, unmapped. */
	map = mmap(NULL, 3 * (size_t)page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED || mprotect(map + page, (size_t)page, PROT_NONE) ||
	    munmap(map + 2 * page, (size_t)page))
		return 1;
	memset(map, 0, (size_t)page);
	for (f = 0; f < F_NR; f++) {
		try_call((enum fn)f, "req=NULL", NULL, NULL);
		try_call((enum fn)f, "req=8", (const struct timespec *)8, NULL);
		try_call((enum fn)f, "req=-1", (const struct timespec *)-1L, NULL);
		try_call((enum fn)f, "req=PROT_NONE",
			 (const struct timespec *)(map + page), NULL);
		try_call((enum fn)f, "req=unmapped",
			 (const struct timespec *)(map + 2 * page), NULL);
		/* tv_sec readable (0), tv_nsec on the PROT_NONE page. */
		try_call((enum fn)f, "req=straddling",
			 (const struct timespec *)(map + page - sizeof(time_t)), NULL);
		/* Valid zero-length requests: rem is never written. */
		try_call((enum fn)f, "req=0,rem=8", &zero, (struct timespec *)8);
		try_call((enum fn)f, "req=0,rem=PROT_NONE", &zero,
			 (struct timespec *)(map + page));
	}
	munmap(map, 2 * (size_t)page);
	return 0;
}

/*
 * System calls per zero-length sleep, under strace: a getppid() marks the
 * start of each kind, SYSCALL_CALLS calls of it follow, and a last
 * getppid() ends them.  The requests are in static storage, which the
 * preload must validate with a system call, except the last kind, a local.
 */
#define SYSCALL_CALLS	50
#define SYSCALL_KINDS	7

static const char *const syscall_kind[SYSCALL_KINDS] = {
	"sleep(0)", "usleep(0)", "nanosleep(static {0,0})",
	"clock_nanosleep(MONOTONIC, static {0,0})",
	"clock_nanosleep(MONOTONIC, ABSTIME, static deadline 1 s ago)",
	"thrd_sleep(static {0,0})", "nanosleep(local {0,0})",
};

static struct timespec static_zero = { 0, 0 }, static_past;

static int work_syscalls(void)
{
	struct timespec local = { 0, 0 };
	int k, i, failed = 0;

	clock_gettime(CLOCK_MONOTONIC, &static_past);
	static_past.tv_sec--;
	for (k = 0; k < SYSCALL_KINDS; k++) {
		syscall(SYS_getppid);
		for (i = 0; i < SYSCALL_CALLS; i++) {
			switch (k) {
			case 0:
				failed |= sleep(0) != 0;
				break;
			case 1:
				failed |= usleep(0);
				break;
			case 2:
				failed |= nanosleep(&static_zero, NULL);
				break;
			case 3:
				failed |= clock_nanosleep(CLOCK_MONOTONIC, 0,
							  &static_zero, NULL);
				break;
			case 4:
				failed |= clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME,
							  &static_past, NULL);
				break;
			case 5:
				failed |= thrd_sleep(&static_zero, NULL);
				break;
			default:
				failed |= nanosleep(&local, NULL);
				break;
			}
		}
	}
	syscall(SYS_getppid);
	printf("failed %d\n", failed);
	return 0;
}

/*
 * After fork() and _Fork(), the preload reads the child's memory, not its
 * parent's: the child's static request is invalid ({0, -1}) while the
 * parent's, at the same address, is a valid zero-length one, so a read of
 * the parent's gives 0 where the child must get EINVAL.  "HOW RESULT ERRNO"
 * per line.  The parent waits, alive, until the child is done.
 */
static struct timespec fork_req = { 0, 0 };

static int work_fork(void)
{
	static const char *const how[] = { "fork", "_Fork" };
	int i, status, ret;
	pid_t pid;

	for (i = 0; i < 2; i++) {
		fflush(stdout);
		pid = i ? _Fork() : fork();
		if (pid < 0)
			return 1;
		if (pid == 0) {
			fork_req.tv_nsec = -1;
			errno = 0;
			ret = nanosleep(&fork_req, NULL);
			printf("%s %d %d\n", how[i], ret, errno);
			fflush(stdout);
			_exit(0);
		}
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			return 1;
	}
	return 0;
}

/* Two threads pinned to one CPU, each TURNS times: note who ran, sleep(0). */
static int turns_log[2 * TURNS];
static int turns_pos;
static pthread_barrier_t turns_barrier;

static void *turns_thread(void *arg)
{
	int id = (int)(intptr_t)arg, i, pos;

	pthread_barrier_wait(&turns_barrier);
	for (i = 0; i < TURNS; i++) {
		pos = __atomic_fetch_add(&turns_pos, 1, __ATOMIC_RELAXED);
		turns_log[pos] = id;
		sleep(0);
	}
	return NULL;
}

/* "TRANSITIONS": how often the log changes from one thread to the other. */
static int work_turns(void)
{
	pthread_t threads[2];
	cpu_set_t set;
	int cpu, i, transitions = 0;

	/* The first CPU this process may use. */
	if (sched_getaffinity(0, sizeof(set), &set))
		return 1;
	for (cpu = 0; cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &set); cpu++)
		;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		return 1;
	pthread_barrier_init(&turns_barrier, NULL, 2);
	for (i = 0; i < 2; i++)
		if (pthread_create(&threads[i], NULL, turns_thread, (void *)(intptr_t)i))
			return 1;
	for (i = 0; i < 2; i++)
		pthread_join(threads[i], NULL);
	for (i = 1; i < 2 * TURNS; i++)
		transitions += turns_log[i] != turns_log[i - 1];
	printf("%d\n", transitions);
	return 0;
}

/* Threads to cancel: one blocked in a long sleep, others looping. */
static void *blocked_thread(void *arg)
{
	struct timespec ts = { 30, 0 };

	(void)arg;
	nanosleep(&ts, NULL);
	return NULL;
}

static void *sleep0_thread(void *arg)
{
	(void)arg;
	for (;;)
		sleep(0);
	return NULL;
}

static void *abs_now_thread(void *arg)
{
	struct timespec ts;

	(void)arg;
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
	return NULL;
}

static void *usleep0_thread(void *arg)
{
	(void)arg;
	for (;;)
		usleep(0);
	return NULL;
}

/* "NAME CANCELLED" per thread; a thread that is not cancelled in 10 s is not. */
static int work_cancel(void)
{
	static const struct {
		const char *name;
		void *(*fn)(void *);
	} kinds[] = {
		{ "blocked-in-nanosleep", blocked_thread },
		{ "looping-on-sleep0", sleep0_thread },
		{ "looping-on-usleep0", usleep0_thread },
		{ "looping-on-abs-now", abs_now_thread },
	};
	struct timespec deadline;
	pthread_t thread;
	void *result;
	size_t i;
	int ret;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (pthread_create(&thread, NULL, kinds[i].fn, NULL))
			return 1;
		usleep(20000);	/* into its sleep or loop */
		pthread_cancel(thread);
		clock_gettime(CLOCK_REALTIME, &deadline);
		deadline.tv_sec += 10;
		ret = pthread_timedjoin_np(thread, &result, &deadline);
		printf("%s %d\n", kinds[i].name, ret == 0 && result == PTHREAD_CANCELED);
		fflush(stdout);
		if (ret)
			_exit(0);	/* cannot join it; end the worker */
	}
	return 0;
}

static int worker(const char *what)
{
	int ret = 2;

	if (!strcmp(what, "zero"))
		ret = work_zero(SLACK_NS);
	else if (!strcmp(what, "zero-1ns"))
		ret = work_zero(1);
	else if (!strcmp(what, "nonzero"))
		ret = work_nonzero();
	else if (!strcmp(what, "invalid"))
		ret = work_invalid();
	else if (!strcmp(what, "badptr"))
		ret = work_badptr();
	else if (!strcmp(what, "syscalls"))
		ret = work_syscalls();
	else if (!strcmp(what, "fork"))
		ret = work_fork();

	else if (!strcmp(what, "turns"))
		ret = work_turns();
	else if (!strcmp(what, "cancel"))
		ret = work_cancel();
	fflush(stdout);
	return ret;
}

/* ---- the judge ---------------------------------------------------------- */

static char preload[PATH_MAX];
static char self[PATH_MAX];
static char out[16384], err[2048];
/* Set to run a worker without PRELOAD_WRAPPER. */
static int no_wrapper;
/*
 * Set to run a worker where process_vm_readv() fails with ENOSYS, as on a
 * kernel built without CONFIG_CROSS_MEMORY_ATTACH (the test guests'): the
 * preload must then read requests another way.
 */
static int no_vm_readv;

/* In the worker's child, before exec: process_vm_readv() gives ENOSYS. */
static int refuse_vm_readv(void)
{
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_readv, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(filter) / sizeof(filter[0]), filter };
	struct timespec ts = { 0, 0 }, copy;
	struct iovec local = { &copy, sizeof(copy) }, remote = { &ts, sizeof(ts) };

	/* Already so (the test guests' kernels): no filter needed, or possible. */
	if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) < 0 &&
	    errno == ENOSYS)
		return 0;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1UL, 0UL, 0UL, 0UL))
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0UL, 0UL);
}

/*
 * Run the worker @what with @policy (NULL: without the preload) and keep
 * its stdout and stderr in out[] and err[].  Returns its exit status.
 */
static int run(const char *what, const char *policy)
{
	char tmpl_out[] = "/tmp/zs-preload-out.XXXXXX";
	char tmpl_err[] = "/tmp/zs-preload-err.XXXXXX";
	const char *wrapper = getenv("PRELOAD_WRAPPER");
	int fd_out, fd_err, status = -1;
	ssize_t n;
	pid_t pid;

	fd_out = mkstemp(tmpl_out);
	fd_err = mkstemp(tmpl_err);
	if (fd_out < 0 || fd_err < 0)
		return -1;
	unlink(tmpl_out);
	unlink(tmpl_err);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		dup2(fd_out, 1);
		dup2(fd_err, 2);
		unsetenv("LD_PRELOAD");
		unsetenv("ZEROSLEEP_POLICY");
		if (policy) {
			setenv("LD_PRELOAD", preload, 1);
			setenv("ZEROSLEEP_POLICY", policy, 1);
		}
		if (no_vm_readv && refuse_vm_readv())
			_exit(126);
		if (wrapper && *wrapper && !no_wrapper)
			execl("/bin/sh", "sh", "-c", "exec $PRELOAD_WRAPPER \"$0\" \"$1\"",
			      self, what, (char *)NULL);
		else
			execl(self, self, what, (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		waitpid(pid, &status, 0);
	n = pread(fd_out, out, sizeof(out) - 1, 0);
	out[n > 0 ? n : 0] = '\0';
	n = pread(fd_err, err, sizeof(err) - 1, 0);
	err[n > 0 ? n : 0] = '\0';
	close(fd_out);
	close(fd_err);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Show the worker's output as diagnostics. */
static void show_output(void)
{
	char *line, *save = NULL;

	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		diag("  %s", line);
	if (*err)
		diag("  stderr: %s", err);
}

struct zero_result {
	long switches[C_NR];
	int failures[C_NR], kept[C_NR];
	long long elapsed[C_NR];
};

static int parse_zero(struct zero_result *r)
{
	char *p = out;
	int c, i, n;
	long sw;
	long long ns;
	int fail, kept;

	for (i = 0; i < C_NR; i++) {
		if (sscanf(p, "%d %ld %d %d %lld%n", &c, &sw, &fail, &kept, &ns,
			   &n) != 5 || c != i)
			return -1;
		r->switches[i] = sw;
		r->elapsed[i] = ns;
		r->failures[i] = fail;
		r->kept[i] = kept;
		p += n;
	}
	return 0;
}

static void test_zero(void)
{
	static const char *const policies[] = { "return", "schedule-once", "1", "2" };
	struct zero_result base, r;
	size_t p;
	int c, status, all;

	status = run("zero", NULL);
	if (!ok(status == 0 && parse_zero(&base) == 0,
		"without the preload: the zero-length sleep worker ran"))
		show_output();
	/*
	 * The control: the kernel sleeps for the 10 ms slack, in every call
	 * without the early return of Linux 7.2 and in those on the tick's
	 * clock base with it.
	 */
	all = early_known();
	for (c = 0; c < C_ABS_PAST; c++)
		all &= base.failures[c] == 0 &&
		       (!must_block((enum call)c) || base.switches[c] >= CALLS / 2);
	if (!ok(all, "without the preload each kind of zero-length sleep that "
		"the kernel makes wait blocks (>= %d of %d calls switch context at "
		"10 ms slack)", CALLS / 2, CALLS))
		show_output();
	/*
	 * A deadline long past: whether the kernel still schedules once
	 * depends on the kernel (6.18 does not, 6.12 sometimes does), so it is
	 * only reported.
	 */
	ok(base.failures[C_ABS_PAST] == 0,
	   "without the preload a deadline 1 s ago returns 0 (%ld switches in %d calls)",
	   base.switches[C_ABS_PAST], CALLS);

	for (p = 0; p < sizeof(policies) / sizeof(policies[0]); p++) {
		status = run("zero", policies[p]);
		if (!ok(status == 0 && parse_zero(&r) == 0 && !*err,
			"ZEROSLEEP_POLICY=%s: the worker ran, nothing on stderr",
			policies[p])) {
			show_output();
			continue;
		}
		for (c = 0; c < C_NR; c++)
			if (!ok(r.failures[c] == 0 && r.kept[c] &&
				r.switches[c] < CALLS / 4,
				"ZEROSLEEP_POLICY=%s: %s returns 0 without "
				"blocking, errno kept (%ld switches in %d calls)",
				policies[p], call_name[c], r.switches[c], CALLS))
				diag("failures %d, errno kept %d", r.failures[c],
				     r.kept[c]);
	}

	/* Passed through: default leaves it to the kernel. */
	static const char *const through[] = { "default", "" };
	for (p = 0; p < sizeof(through) / sizeof(through[0]); p++) {
		status = run("zero", through[p]);
		all = early_known() && status == 0 && parse_zero(&r) == 0 && !*err;
		for (c = 0; all && c < C_ABS_PAST; c++)
			all &= must_block((enum call)c) ?
			       r.switches[c] >= CALLS / 2 :
			       labs(r.switches[c] - base.switches[c]) <= CALLS / 4;
		if (!ok(all, "ZEROSLEEP_POLICY='%s': every call reaches the "
			"kernel and blocks as without the preload, nothing on "
			"stderr", through[p]))
			show_output();
	}
}

/*
 * Is stderr one line that starts with @want?  Under a wrapper, the shell
 * and the wrapper's own launcher load the preload too, and each says it
 * once: there every line must be that line.
 */
static int one_warning(const char *want)
{
	const char *wrapper = getenv("PRELOAD_WRAPPER");
	const char *line = err, *nl;

	if (!*err)
		return 0;
	for (; *line; line = nl + 1) {
		nl = strchr(line, '\n');
		if (!nl || strncmp(line, want, strlen(want)) ||
		    (nl - line != (long)strcspn(err, "\n")))
			return 0;
		if (!(wrapper && *wrapper) && nl[1])
			return 0;
	}
	return 1;
}

static void test_bogus(void)
{
	static const char *const bogus[] = { "bogus", "RETURN", "4", "return " };
	struct zero_result r;
	char want[256];
	size_t i;
	int status, all, c;

	for (i = 0; i < sizeof(bogus) / sizeof(bogus[0]); i++) {
		status = run("zero", bogus[i]);
		all = early_known() && status == 0 && parse_zero(&r) == 0;
		for (c = 0; all && c < C_ABS_PAST; c++)
			all &= !must_block((enum call)c) || r.switches[c] >= CALLS / 2;
		snprintf(want, sizeof(want), "libzerosleep-preload.so: ignoring "
			 "unknown ZEROSLEEP_POLICY '%s'", bogus[i]);
		if (!ok(all && one_warning(want),
			"ZEROSLEEP_POLICY='%s': one line on stderr naming it, "
			"then every sleep is left to the kernel", bogus[i]))
			show_output();
	}
}

static int field(const char *name, long long *a, long long *b, long long *c)
{
	char key[64];
	const char *p = out;
	int n;

	while (sscanf(p, "%63s %lld %lld %lld%n", key, a, b, c, &n) == 4) {
		if (!strcmp(key, name))
			return 0;
		p += n;
	}
	return -1;
}

static void test_nonzero(void)
{
	static const struct {
		const char *name;
		long long min_ns;
	} sleeps[] = {
		{ "nanosleep-20ms", 20000000 }, { "usleep-20ms", 20000000 },
		{ "thrd_sleep-20ms", 20000000 }, { "sleep-1s", 1000000000 },
		{ "abs-20ms", 15000000 },
	};
	long long ns = 0, sw = 0, ret = 0;
	size_t i;
	int status, found;

	status = run("nonzero", "return");
	if (!ok(status == 0, "ZEROSLEEP_POLICY=return: the non-zero sleep worker ran"))
		show_output();
	for (i = 0; i < sizeof(sleeps) / sizeof(sleeps[0]); i++) {
		found = field(sleeps[i].name, &ns, &sw, &ret) == 0;
		if (!ok(found && ret == 0 && ns >= sleeps[i].min_ns,
			"ZEROSLEEP_POLICY=return: %s still sleeps (%lld ns)",
			sleeps[i].name, ns))
			show_output();
	}
	/*
	 * 1 ns is not zero-length: the kernel decides.  Where its expired
	 * CLOCK_MONOTONIC sleeps wait, they block under "return" (at least
	 * one of 5).  Where they return at once (PREEMPT_RT), "return" cannot
	 * tell, but "full-slack" can: a zero-length sleep would wait for the
	 * slack every time.
	 */
	if (!early_known())
		return;
	if (kernel_mono == ZS_MONO_WAITS) {
		found = field("nanosleep-1ns", &ns, &sw, &ret) == 0;
		if (!ok(found && ret == 0 && sw >= 1,
			"ZEROSLEEP_POLICY=return: nanosleep({0, 1}) is not "
			"zero-length: it blocks for the slack (%lld of 5 switch)", sw))
			show_output();
		found = field("rel-1ns", &ns, &sw, &ret) == 0;
		if (!ok(found && ret == 0 && sw >= 1,
			"ZEROSLEEP_POLICY=return: clock_nanosleep(rel 1 ns) blocks "
			"(%lld of 5 switch)", sw))
			show_output();
		return;
	}
	status = run("nonzero", "full-slack");
	found = status == 0 && field("nanosleep-1ns", &ns, &sw, &ret) == 0;
	if (!ok(found && ret == 0 && ns < (long long)SLACK_NS / 2,
		"ZEROSLEEP_POLICY=full-slack: nanosleep({0, 1}) is not "
		"zero-length: it returns as the kernel's expired sleeps do, "
		"before the slack (shortest of 5: %lld ns)", ns))
		show_output();
	found = status == 0 && field("rel-1ns", &ns, &sw, &ret) == 0;
	if (!ok(found && ret == 0 && ns < (long long)SLACK_NS / 2,
		"ZEROSLEEP_POLICY=full-slack: clock_nanosleep(rel 1 ns) returns "
		"before the slack (shortest of 5: %lld ns)", ns))
		show_output();
}

/* One line of work_invalid() or work_badptr(). */
struct inv {
	int fn;
	char name[48];
	int ret, err;
};

#define INV_MAX 128

/* Parse out[] into @v; the number of lines. */
static int parse_inv(struct inv *v)
{
	const char *p = out;
	int n = 0, len;

	while (n < INV_MAX && sscanf(p, "%d %47s %d %d%n", &v[n].fn, v[n].name,
				     &v[n].ret, &v[n].err, &len) == 4) {
		p += len;
		n++;
	}
	return n;
}

static const char *fn_label(int fn)
{
	return fn >= 0 && fn < F_NR ? fn_name[fn] : "clock_nanosleep";
}

/* What the C library must answer without the preload, so that the comparison means something. */
static int expected(const struct inv *v)
{
	int efault = !strncmp(v->name, "req=", 4) && strncmp(v->name, "req=0,", 6);
	int success = !strncmp(v->name, "req=0,", 6);

	if (success)
		return v->ret == 0;
	if (v->fn == F_THRD_SLEEP)	/* a negative value other than -1 */
		return v->ret < -1;
	if (v->fn == F_NANOSLEEP)
		return v->ret == -1 && (efault ? v->err == EFAULT : v->err == EINVAL);
	/* clock_nanosleep() returns the error. */
	return efault ? v->ret == EFAULT : v->ret == EINVAL || v->ret == ENOTSUP;
}

static void describe(const struct inv *v, char *buf, size_t size)
{
	if (v->fn == F_NANOSLEEP)
		snprintf(buf, size, "%d, errno %s", v->ret,
			 v->err ? strerrorname_np(v->err) : "0");
	else if (v->fn == F_THRD_SLEEP)
		snprintf(buf, size, "%d", v->ret);
	else
		snprintf(buf, size, "%s", v->ret ? strerrorname_np(v->ret) : "0");
}

/*
 * Every argument that the real functions reject: each (function, case)
 * is run without the preload and under each policy, and must give the
 * same answer, which must be the C library's error.
 */
static void check_invalid(const char *what, int unwrapped)
{
	static const char *const policies[] = {
		"return", "schedule", "full-slack", "default",
	};
	enum { NPOL = sizeof(policies) / sizeof(policies[0]) };
	static struct inv base[INV_MAX], got[NPOL][INV_MAX];
	int nbase, ngot[NPOL], status[NPOL], st, i, p, same;
	char desc[64], gdesc[64];

	no_wrapper = unwrapped;
	st = run(what, NULL);
	nbase = parse_inv(base);
	if (!ok(st == 0 && nbase > 0, "%s%s: without the preload the worker ran "
		"(%d calls)", what, no_vm_readv ? " (no process_vm_readv)" : "",
		nbase))
		show_output();
	for (p = 0; p < NPOL; p++) {
		status[p] = run(what, policies[p]);
		ngot[p] = parse_inv(got[p]);
		if (!ok(status[p] == 0 && ngot[p] == nbase && !*err,
			"%s%s: ZEROSLEEP_POLICY=%s: the worker ran every call, "
			"no crash (status %d, %d of %d calls)", what,
			no_vm_readv ? " (no process_vm_readv)" : "", policies[p],
			status[p], ngot[p], nbase))
			show_output();
	}
	no_wrapper = 0;

	for (i = 0; i < nbase; i++) {
		describe(&base[i], desc, sizeof(desc));
		same = 1;
		for (p = 0; p < NPOL; p++)
			same &= i < ngot[p] && got[p][i].fn == base[i].fn &&
				!strcmp(got[p][i].name, base[i].name) &&
				got[p][i].ret == base[i].ret &&
				got[p][i].err == base[i].err;
		if (!ok(expected(&base[i]) && same, "%s(%s): %s, with the preload "
			"under every policy as without it%s", fn_label(base[i].fn),
			base[i].name, desc,
			no_vm_readv ? " (no process_vm_readv)" : ""))
			for (p = 0; p < NPOL; p++) {
				if (i >= ngot[p]) {
					diag("  %s: no answer (status %d)",
					     policies[p], status[p]);
					continue;
				}
				describe(&got[p][i], gdesc, sizeof(gdesc));
				diag("  %s: %s(%s): %s", policies[p],
				     fn_label(got[p][i].fn), got[p][i].name, gdesc);
			}
	}
}

static void test_invalid(void)
{
	check_invalid("invalid", 0);
	/* valgrind reports the C library's own EFAULT calls: without it. */
	check_invalid("badptr", 1);
	no_vm_readv = 1;
	check_invalid("badptr", 1);
	no_vm_readv = 0;
}

/*
 * A zero-length sleep under the preload costs at most one system call (the
 * validation of a request that is not on the caller's stack page), and
 * sleep(0) and usleep(0) none: the worker runs under strace, and the calls
 * between its getppid() markers are counted.
 */
static void check_syscalls(void)
{
	char trace[] = "/tmp/zs-preload-strace.XXXXXX", wrapper[128], line[512];
	const char *old = getenv("PRELOAD_WRAPPER");
	char *saved = old ? strdup(old) : NULL, *saved_asan, asan_opts[512];
	const char *asan;
	int counts[SYSCALL_KINDS + 1] = { 0 }, k = -1, fd, status, i, failed = -1;
	FILE *f;

	fd = mkstemp(trace);
	if (fd < 0) {
		ok(0, "a file for strace's output: %s", strerror(errno));
		free(saved);
		return;
	}
	close(fd);
	snprintf(wrapper, sizeof(wrapper), "strace -qq -o %s", trace);
	setenv("PRELOAD_WRAPPER", wrapper, 1);
	/* LeakSanitizer cannot run under ptrace (check-sanitize). */
	asan = getenv("ASAN_OPTIONS");
	saved_asan = asan ? strdup(asan) : NULL;
	if (asan) {
		snprintf(asan_opts, sizeof(asan_opts), "%s:detect_leaks=0", asan);
		setenv("ASAN_OPTIONS", asan_opts, 1);
	}
	status = run("syscalls", "return");
	if (saved)
		setenv("PRELOAD_WRAPPER", saved, 1);
	else
		unsetenv("PRELOAD_WRAPPER");
	if (saved_asan)
		setenv("ASAN_OPTIONS", saved_asan, 1);
	free(saved);
	free(saved_asan);
	f = fopen(trace, "r");
	while (f && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "getppid(", 8)) {
			if (k < SYSCALL_KINDS)
				k++;
		} else if (k >= 0 && k < SYSCALL_KINDS && strchr(line, '(') &&
			   /*
			    * An absolute request is judged against the clock,
			    * read through the vDSO, which falls back to the
			    * system call where the clocksource has no vDSO
			    * access (the TCG guests): not the validation that
			    * is counted here.
			    */
			   strncmp(line, "clock_gettime(", 14) &&
			   strncmp(line, "clock_gettime64(", 16)) {
			counts[k]++;
		}
	}
	if (f)
		fclose(f);
	unlink(trace);
	sscanf(out, "failed %d", &failed);
	if (!ok(status == 0 && failed == 0 && k == SYSCALL_KINDS,
		"ZEROSLEEP_POLICY=return under strace%s: the worker ran every "
		"call, each returned 0 (status %d, %d markers)",
		no_vm_readv ? ", no process_vm_readv" : "", status, k + 1))
		show_output();
	for (i = 0; i < SYSCALL_KINDS; i++)
		ok(k == SYSCALL_KINDS &&
		   counts[i] <= (i < 2 ? 0 : SYSCALL_CALLS),
		   "ZEROSLEEP_POLICY=return%s: %d %s make %d system calls "
		   "(at most %d)", no_vm_readv ? ", no process_vm_readv" : "",
		   SYSCALL_CALLS, syscall_kind[i], counts[i],
		   i < 2 ? 0 : SYSCALL_CALLS);
}

/* Also where process_vm_readv() is refused, as on the test guests'. */
static void test_syscalls(void)
{
	check_syscalls();
	no_vm_readv = 1;
	check_syscalls();
	no_vm_readv = 0;
}

/*
 * After fork() and _Fork(), the preload validates the child's request, in
 * the child's memory, not in its parent's.
 */
static void test_fork(void)
{
	static const char *const how[] = { "fork", "_Fork" };
	char name[16];
	int status, i, ret, e, found;
	const char *p;

	status = run("fork", "return");
	for (i = 0; i < 2; i++) {
		p = strstr(out, how[i]);
		found = 0;
		if (p && sscanf(p, "%15s %d %d", name, &ret, &e) == 3 &&
		    !strcmp(name, how[i]))
			found = 1;
		if (!ok(status == 0 && found && ret == -1 && e == EINVAL,
			"ZEROSLEEP_POLICY=return: in a child of %s(), nanosleep() "
			"of the child's invalid request fails with EINVAL, though "
			"the parent's at that address is {0, 0}", how[i]))
			show_output();
	}
}

/* Without process_vm_readv(), the policies still apply to every call. */
static void test_no_vm_readv(void)
{
	struct zero_result r;
	int status, c, all;

	no_vm_readv = 1;
	status = run("zero", "return");
	no_vm_readv = 0;
	all = status == 0 && parse_zero(&r) == 0 && !*err;
	for (c = 0; all && c < C_NR; c++)
		all &= r.failures[c] == 0 && r.kept[c] && r.switches[c] < CALLS / 4;
	if (!ok(all, "ZEROSLEEP_POLICY=return, process_vm_readv() refused "
		"(ENOSYS): every kind of zero-length sleep still returns at once"))
		show_output();
}

/*
 * full-slack: a zero-length sleep sleeps for the slack on every kernel:
 * the kernel's own sleep where it does not return early, the preload's
 * where it does (the preload probes which).  With the slack run out, it
 * returns at once.
 */
static void test_fullslack(void)
{
	struct zero_result base, r;
	int status, c, all;

	status = run("zero", NULL);
	if (!ok(status == 0 && parse_zero(&base) == 0,
		"without the preload: the zero-length sleep worker ran"))
		show_output();
	status = run("zero", "full-slack");
	if (!ok(status == 0 && parse_zero(&r) == 0 && !*err,
		"ZEROSLEEP_POLICY=full-slack: the worker ran, nothing on stderr")) {
		show_output();
		return;
	}
	for (c = 0; c < C_ABS_PAST; c++) {
		diag("%s: %ld switches, %.2f ms a call; without the preload "
		     "%ld switches, %.2f ms", call_name[c], r.switches[c],
		     r.elapsed[c] / 1e6 / CALLS, base.switches[c],
		     base.elapsed[c] / 1e6 / CALLS);
		if (!ok(r.failures[c] == 0 && r.kept[c] && r.switches[c] >= CALLS / 2,
			"ZEROSLEEP_POLICY=full-slack, 10 ms slack: %s sleeps "
			"(%ld of %d calls switch context; %ld without the "
			"preload, kernel: %s)", call_name[c], r.switches[c], CALLS,
			base.switches[c], kernel_early > 0 ? "early return" :
			kernel_early == 0 ? "no early return" : "unknown"))
			diag("failures %d, errno kept %d", r.failures[c], r.kept[c]);
	}
	if (!ok(r.failures[C_ABS_PAST] == 0 && r.switches[C_ABS_PAST] < CALLS / 4,
		"ZEROSLEEP_POLICY=full-slack: a deadline 1 s ago, past the "
		"10 ms slack too, returns at once (%ld switches in %d calls)",
		r.switches[C_ABS_PAST], CALLS))
		show_output();

	status = run("zero-1ns", "full-slack");
	all = status == 0 && parse_zero(&r) == 0 && !*err;
	for (c = 0; all && c < C_NR; c++)
		all &= r.failures[c] == 0 && r.kept[c] && r.switches[c] < CALLS / 4;
	if (!ok(all, "ZEROSLEEP_POLICY=full-slack, 1 ns slack: nothing left to "
		"sleep for, every kind of zero-length sleep returns at once"))
		show_output();
}

static void test_turns(void)
{
	int status, ret_t = -1, sched_t = -1;

	status = run("turns", "return");
	if (!ok(status == 0 && sscanf(out, "%d", &ret_t) == 1,
		"ZEROSLEEP_POLICY=return: two threads on one CPU ran"))
		show_output();
	status = run("turns", "schedule");
	if (!ok(status == 0 && sscanf(out, "%d", &sched_t) == 1,
		"ZEROSLEEP_POLICY=schedule: two threads on one CPU ran"))
		show_output();
	diag("turns taken in 2 x %d sleep(0): return %d, schedule %d",
	     TURNS, ret_t, sched_t);
	ok(sched_t >= TURNS / 2,
	   "schedule-once: sleep(0) yields, the threads take turns (%d >= %d)",
	   sched_t, TURNS / 2);
	ok(ret_t >= 0 && ret_t < TURNS / 10,
	   "return-immediately: sleep(0) does not yield (%d < %d turns)",
	   ret_t, TURNS / 10);
}

static void test_cancel(void)
{
	static const char *const names[] = {
		"blocked-in-nanosleep", "looping-on-sleep0", "looping-on-usleep0",
		"looping-on-abs-now",
	};
	static const char *const policies[] = { "return", "schedule" };
	char want[64];
	size_t i, p;
	int status;

	for (p = 0; p < 2; p++) {
		status = run("cancel", policies[p]);
		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			snprintf(want, sizeof(want), "%s 1\n", names[i]);
			if (!ok(status == 0 && strstr(out, want),
				"ZEROSLEEP_POLICY=%s: pthread_cancel() ends a thread %s",
				policies[p], names[i]))
				show_output();
		}
	}
}

int main(int argc, char **argv)
{
	const char *o = getenv("O");
	ssize_t n;

	if (argc > 1)
		return worker(argv[1]);

	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0) {
		ok(0, "find this program: %s", strerror(errno));
		return tap_done();
	}
	self[n] = '\0';
	snprintf(preload, sizeof(preload), "%s/libzerosleep-preload.so",
		 o && *o ? o : ".");
	if (!ok(access(preload, R_OK) == 0, "%s exists", preload))
		return tap_done();

	probe_early_return();
	test_zero();
	test_bogus();
	test_nonzero();
	test_invalid();
	test_no_vm_readv();
	test_syscalls();
	test_fork();
	test_fullslack();
	test_turns();
	test_cancel();
	return tap_done();
}
