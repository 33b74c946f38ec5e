// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libzerosleep-preload.so: zero-length sleep policies in user space, for a
 * kernel without the zerosleep series.
 *
 *   LD_PRELOAD=/path/to/libzerosleep-preload.so ZEROSLEEP_POLICY=return CMD
 *
 * (zerosleep(1) does this when the kernel lacks the series.)  The C
 * library's sleep functions are interposed: sleep(), usleep(), nanosleep(),
 * clock_nanosleep() and thrd_sleep().  glibc calls its own internal entry
 * points between them, so each is interposed by itself.  A zero-length
 * request, with the kernel's boundary (relative: exactly 0; absolute: at or
 * before the clock's current time, read through the vDSO; hrtimer clocks
 * only), gets:
 *
 *   return-immediately  0 at once;
 *   schedule-once       sched_yield(), then 0;
 *   full-slack          a sleep until the end of the thread's timer slack
 *                       on a kernel whose own zero-length sleep may return
 *                       early (Linux 7.2 and later); 0 at once when the
 *                       slack has run out too (slack 0 or 1 ns, or an
 *                       absolute deadline older than the slack); on other
 *                       kernels the real function, which sleeps for it;
 *   default             the real function, unchanged.
 *
 * Bad input: the request is read directly only where it cannot fault (on
 * the page of the interposed function's own stack frame); otherwise it is
 * copied with process_vm_readv() on this process (copy_timespec()), so that
 * a bad pointer is a failed system call, not a SIGSEGV.  Whenever the copy
 * fails, or the copy is not a valid zero-length request, the call goes to
 * the real function (dlsym(RTLD_NEXT)), which validates it and fails
 * exactly as it always did (EFAULT, EINVAL, thrd_sleep()'s negative
 * value...).  A zero-length sleep thus costs no system call or one.  The
 * zero-length path is still a cancellation point: it calls
 * pthread_testcancel() first, or the real function.
 *
 * The policy is one for the whole process: read from ZEROSLEEP_POLICY when
 * the library is loaded, and changed by libzerosleep's zerosleep_set_policy()
 * and zerosleep_set_process_policy(), which find it through the two
 * functions that this library exports besides the sleeps:
 * zerosleep_preload_get_policy() and zerosleep_preload_set_policy() (looked
 * up with dlsym(RTLD_DEFAULT) by src/zerosleep.c; keep their names and
 * types).  It is kept across fork(); across execve() the new program starts
 * from ZEROSLEEP_POLICY again.
 *
 * Not reached: statically linked programs, raw system calls (Go's runtime,
 * for instance), programs that the loader runs without LD_PRELOAD
 * (set-user-ID and set-group-ID programs), children started with a cleaned
 * environment, and threads that already run.  An unknown ZEROSLEEP_POLICY
 * is reported on stderr, once per process, and then ignored: every sleep
 * goes to the real function.
 */
#include <dlfcn.h>
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <threads.h>
#include <time.h>
#include <unistd.h>

#include <zerosleep.h>

#define ZS_EXPORT __attribute__((visibility("default")))

/*
 * For the interposed functions, whose frames hold a timespec while they
 * call the real function, a cancellation point: AddressSanitizer poisons
 * such locals and unpoisons them on return, but not when pthread_cancel()
 * unwinds the frame, and it then trips on the stale poison when the
 * thread's stack is reused.  Their own code reads nothing but their locals.
 */
#define ZS_SLEEP_FN ZS_EXPORT __attribute__((no_sanitize_address))

#define NSEC_PER_SEC	1000000000L
#define NSEC_PER_USEC	1000L

#ifndef CLOCK_TAI
# define CLOCK_TAI 11
#endif

/*
 * The policy of the process.  Set by the constructor, before main(), then
 * by zerosleep_preload_set_policy() from any thread: every access is an
 * atomic one, relaxed (it orders nothing else).
 */
static int policy = ZEROSLEEP_DEFAULT;

static int get_policy(void)
{
	return __atomic_load_n(&policy, __ATOMIC_RELAXED);
}

static void init_self_pid(void);

__attribute__((constructor)) static void zs_preload_init(void)
{
	const char *word = getenv("ZEROSLEEP_POLICY");
	int p;

	init_self_pid();
	if (!word || !*word)
		return;
	p = zerosleep_policy_from_name(word);
	if (p < 0) {
		fprintf(stderr, "libzerosleep-preload.so: ignoring unknown "
			"ZEROSLEEP_POLICY '%s' (expected default, "
			"return-immediately, schedule-once or full-slack)\n",
			word);
		errno = 0;
		return;
	}
	__atomic_store_n(&policy, p, __ATOMIC_RELAXED);
}

/*
 * The interface to libzerosleep (src/zerosleep.c looks both up with
 * dlsym(RTLD_DEFAULT); their names and types are fixed).  Async-signal-safe.
 */
ZS_EXPORT int zerosleep_preload_get_policy(void);
ZS_EXPORT int zerosleep_preload_set_policy(int new_policy);

ZS_EXPORT int zerosleep_preload_get_policy(void)
{
	return get_policy();
}

/* 0, or -1 with errno EINVAL for an unknown policy (nothing changes). */
ZS_EXPORT int zerosleep_preload_set_policy(int new_policy)
{
	if (new_policy < ZEROSLEEP_DEFAULT || new_policy > ZEROSLEEP_FULL_SLACK) {
		errno = EINVAL;
		return -1;
	}
	__atomic_store_n(&policy, new_policy, __ATOMIC_RELAXED);
	return 0;
}

/*
 * The real function: looked up on first use, so that a call made before
 * the constructor ran (from another library's constructor) still works.
 * The pointer is the same whichever thread stores it.
 */
#define REAL(name, type)						\
	static type real_##name(void)					\
	{								\
		static type fn;						\
		type f = __atomic_load_n(&fn, __ATOMIC_RELAXED);	\
									\
		if (!f) {						\
			f = (type)dlsym(RTLD_NEXT, #name);		\
			__atomic_store_n(&fn, f, __ATOMIC_RELAXED);	\
		}							\
		return f;						\
	}

typedef unsigned int (*sleep_fn)(unsigned int);
typedef int (*usleep_fn)(useconds_t);
typedef int (*nanosleep_fn)(const struct timespec *, struct timespec *);
typedef int (*clock_nanosleep_fn)(clockid_t, int, const struct timespec *,
				  struct timespec *);
typedef int (*thrd_sleep_fn)(const struct timespec *, struct timespec *);

REAL(sleep, sleep_fn)
REAL(usleep, usleep_fn)
REAL(nanosleep, nanosleep_fn)
REAL(clock_nanosleep, clock_nanosleep_fn)
REAL(thrd_sleep, thrd_sleep_fn)

/*
 * This process's pid, for process_vm_readv(), without a getpid() per call.
 * It lives alone in a page marked MADV_WIPEONFORK, so that every child that
 * gets a copy of the memory (fork(), and also _Fork() and raw clone() or
 * fork system calls, which run no atfork handler) finds 0 there instead of
 * its parent's pid, and asks getpid() each time; fork()'s children get
 * their own pid back from the atfork handler.  A vfork() child shares the
 * page and keeps its parent's pid, which names the same memory.  Nothing
 * but init_self_pid() and the atfork handler writes it: a vfork() child
 * that stored its own pid would leave it to its parent after execve(),
 * where it names another program.  NULL (the constructor has not run, or
 * the kernel predates MADV_WIPEONFORK, Linux 4.14): getpid() each time.
 */
static pid_t *self_pid;
static int no_vm_readv;

static void refresh_self_pid(void)
{
	pid_t *p = __atomic_load_n(&self_pid, __ATOMIC_RELAXED);

	if (p)
		__atomic_store_n(p, getpid(), __ATOMIC_RELAXED);
}

/*
 * Also asks once whether process_vm_readv() works here (kernels built
 * without CONFIG_CROSS_MEMORY_ATTACH, such as the test guests', and
 * seccomp filters refuse it), so that no sleep pays for finding out.
 */
static void init_self_pid(void)
{
	int saved_errno = errno;
	long page = sysconf(_SC_PAGESIZE);
	struct timespec probe = { 0, 0 }, copy;
	struct iovec local = { &copy, sizeof(copy) };
	struct iovec remote = { &probe, sizeof(probe) };
	void *p;

	if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) < 0 &&
	    (errno == ENOSYS || errno == EPERM))
		__atomic_store_n(&no_vm_readv, 1, __ATOMIC_RELAXED);

	p = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p != MAP_FAILED && madvise(p, (size_t)page, MADV_WIPEONFORK) == 0 &&
	    pthread_atfork(NULL, NULL, refresh_self_pid) == 0) {
		*(pid_t *)p = getpid();
		__atomic_store_n(&self_pid, (pid_t *)p, __ATOMIC_RELAXED);
	} else if (p != MAP_FAILED) {
		munmap(p, (size_t)page);
	}
	errno = saved_errno;
}

/* The cached pid, or 0 if there is none (ask getpid()). */
static pid_t cached_pid(void)
{
	pid_t *p = __atomic_load_n(&self_pid, __ATOMIC_RELAXED);

	return p ? __atomic_load_n(p, __ATOMIC_RELAXED) : 0;
}

/*
 * Does [@user, @user + 1) lie within the page of @frame, an address in the
 * caller's own live stack frame, and is it aligned?  Pages are mapped and
 * protected whole, and that page is mapped read-write (the frame is in
 * use), so the request can be read there without a fault.  4096 is the
 * smallest page size Linux has; a larger page holds whole 4 KiB blocks.
 * Whether a caller's local lies there depends on where its stack frame
 * falls: usually it does, being a few dozen bytes above @frame.
 */
#define SAFE_BLOCK	4096UL

static int on_frame_page(const struct timespec *user, const void *frame)
{
	uintptr_t u = (uintptr_t)user, f = (uintptr_t)frame;

	return (u & ~(SAFE_BLOCK - 1)) == (f & ~(SAFE_BLOCK - 1)) &&
	       (u & (SAFE_BLOCK - 1)) <= SAFE_BLOCK - sizeof(*user) &&
	       (u & (_Alignof(struct timespec) - 1)) == 0;
}

/*
 * Copy the caller's *@user into *@ts without faulting on a bad pointer,
 * with at most one system call.  @frame is the interposed function's
 * __builtin_frame_address(0).  Async-signal-safe: system calls and plain
 * loads only.
 *
 * No system call: a request on the page of @frame (on_frame_page()), such
 * as a local of the function that called the sleep, in most frames, is
 * read directly.
 *
 * Otherwise the kernel copies it, with process_vm_readv() on this very
 * process, and reports a bad pointer (unmapped, unreadable, or a timespec
 * that runs into such a page) as EFAULT or a short copy.  Reading one's own
 * process needs no privilege and passes every ptrace restriction (the
 * kernel exempts the caller's own thread group).  The pid comes from
 * cached_pid(); if the call fails with ESRCH or EPERM (a stale pid: a
 * raw clone(CLONE_VM) child whose creator went away; or a seccomp filter
 * installed since the library was loaded), it is asked once more with
 * getpid().
 *
 * Kernels built without CONFIG_CROSS_MEMORY_ATTACH (ENOSYS), and seccomp
 * filters (EPERM), refuse it; that is found out when the library is
 * loaded (init_self_pid()) or at the first refusal, and from then on the
 * kernel validates the pointer instead, through a FUTEX_WAIT that cannot
 * wait: the futex word is a local that never holds the expected value,
 * and the kernel copies and checks the timeout (EFAULT, EINVAL) before it
 * looks at the word (EAGAIN).  Only after EAGAIN is *@user read, directly;
 * a thread that unmaps that memory in the few instructions between the two
 * could still make that read fault, where the C library would return
 * EFAULT.  (64-bit only: SYS_futex takes this struct timespec there.)
 *
 * Returns 0, or -1 (errno kept) if the request could not be read: then the
 * caller hands it to the real function, which judges it as the C library
 * does.
 */
__attribute__((always_inline, no_sanitize_address))
static inline int copy_timespec(const struct timespec *user,
				struct timespec *ts, const void *frame)
{
	struct iovec local = { ts, sizeof(*ts) };
	struct iovec remote = { (void *)user, sizeof(*ts) };
	int saved_errno = errno, word = 0, ret = -1;
	pid_t pid;
	ssize_t n;

	if (!user)
		return -1;
	if (on_frame_page(user, frame)) {
		*ts = *user;
		return 0;
	}
	if (!__atomic_load_n(&no_vm_readv, __ATOMIC_RELAXED)) {
		pid = cached_pid();
		n = pid > 0 ? process_vm_readv(pid, &local, 1, &remote, 1, 0) : -1;
		if (n < 0 && (pid <= 0 || errno == ESRCH || errno == EPERM))
			n = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
		if (n == (ssize_t)sizeof(*ts))
			ret = 0;
		else if (n < 0 && (errno == ENOSYS || errno == EPERM))
			__atomic_store_n(&no_vm_readv, 1, __ATOMIC_RELAXED);
	}
#ifdef __LP64__
	if (__atomic_load_n(&no_vm_readv, __ATOMIC_RELAXED) &&
	    syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 1, user, NULL, 0) < 0 &&
	    errno == EAGAIN) {
		*ts = *user;
		ret = 0;
	}
#endif
	errno = saved_errno;
	return ret;
}

/* A timespec the kernel would accept. */
static int valid(const struct timespec *ts)
{
	return ts->tv_sec >= 0 && ts->tv_nsec >= 0 && ts->tv_nsec < NSEC_PER_SEC;
}

static int is_zero(const struct timespec *ts)
{
	return ts->tv_sec == 0 && ts->tv_nsec == 0;
}

/* A clock on which the kernel's sleeps have a timer slack. */
static int hrtimer_clock(clockid_t clock)
{
	return clock == CLOCK_REALTIME || clock == CLOCK_MONOTONIC ||
	       clock == CLOCK_BOOTTIME || clock == CLOCK_TAI;
}

/*
 * How far @ts is behind @clock's current time, in ns (0: it is now, or
 * not readable), or -1 if it is in the future.  Saturates at LLONG_MAX/2.
 */
static long long behind(clockid_t clock, const struct timespec *ts)
{
	struct timespec now;
	int saved_errno = errno;
	long long sec;

	if (clock_gettime(clock, &now) < 0) {
		errno = saved_errno;
		return -1;	/* let the real function decide */
	}
	if (ts->tv_sec > now.tv_sec ||
	    (ts->tv_sec == now.tv_sec && ts->tv_nsec > now.tv_nsec))
		return -1;
	sec = (long long)now.tv_sec - ts->tv_sec;
	if (sec > 1000000000LL)
		return 4000000000000000000LL;
	return sec * NSEC_PER_SEC + (now.tv_nsec - ts->tv_nsec);
}

/* The calling thread's timer slack in ns (0 if it cannot be read). */
static long timer_slack(void)
{
	int saved_errno = errno;
	long slack = syscall(SYS_prctl, PR_GET_TIMERSLACK, 0UL, 0UL, 0UL, 0UL);

	errno = saved_errno;
	return slack > 0 ? slack : 0;
}

/*
 * Does the kernel's own zero-length sleep return early (Linux 7.2's
 * hrtimer_start_expires_user(), or a kernel policy of this thread that does
 * not sleep)?  Probed, not read from the version: a distribution kernel may
 * carry the change before 7.2, and what counts is what this thread gets.
 *
 * The probe, done once per process, lazily, by the first thread that makes
 * a zero-length sleep under full-slack: the thread's timer slack is set to
 * 1 ms for the probe and then restored; PROBE_CALLS raw relative {0, 0}
 * clock_nanosleep(CLOCK_TAI) calls (raw, so that this library does not
 * take them; CLOCK_TAI because its clock base is nearly always empty, and
 * the early return applies to a timer that would be the first to expire)
 * are counted as blocking when the thread's voluntary context switches
 * (getrusage(RUSAGE_THREAD)) grew.  If at least 3 in 4 blocked, the kernel
 * sleeps by itself: every later zero-length sleep goes to the real
 * function.  Otherwise, and if the probe cannot run (the slack cannot be
 * set, a call fails), the sleep is done here: sleeping is what full-slack
 * promises.  It costs at most PROBE_CALLS + 1 sleeps of 1 ms, once.
 *
 * No lock: the state moves UNPROBED -> PROBING (one winner, by
 * compare-and-swap) -> NO or YES.  A thread, or a signal handler, that
 * finds PROBING sleeps here, as after an inconclusive probe.  A signal
 * handler that runs during the probe sees the 1 ms slack.
 */
#define PROBE_CALLS	8
#define PROBE_SLACK_NS	1000000UL

enum { EARLY_UNPROBED, EARLY_PROBING, EARLY_NO, EARLY_YES };
static int early_state = EARLY_UNPROBED;

static long thread_nvcsw(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru) < 0)
		return -1;
	return ru.ru_nvcsw;
}

static int probe_early_return(long slack)
{
	struct timespec zero = { 0, 0 };
	int i, calls = 0, slept = 0;
	long before;

	if (syscall(SYS_prctl, PR_SET_TIMERSLACK, PROBE_SLACK_NS, 0UL, 0UL, 0UL) ||
	    syscall(SYS_prctl, PR_GET_TIMERSLACK, 0UL, 0UL, 0UL, 0UL) !=
	    (long)PROBE_SLACK_NS) {
		calls = -1;
	} else {
		syscall(SYS_clock_nanosleep, CLOCK_TAI, 0, &zero, NULL);	/* warm-up */
		for (i = 0; i < PROBE_CALLS; i++) {
			before = thread_nvcsw();
			if (before < 0 ||
			    syscall(SYS_clock_nanosleep, CLOCK_TAI, 0, &zero, NULL))
				break;
			slept += thread_nvcsw() > before;
			calls++;
		}
	}
	/* slack > 1 here: 0 would mean "the default slack" to the kernel. */
	syscall(SYS_prctl, PR_SET_TIMERSLACK, (unsigned long)slack, 0UL, 0UL, 0UL);
	return calls == PROBE_CALLS && 4 * slept >= 3 * PROBE_CALLS ?
	       EARLY_NO : EARLY_YES;
}

/* Whether full-slack must sleep here; @slack > 1 is the thread's slack. */
static int kernel_returns_early(long slack)
{
	int state = __atomic_load_n(&early_state, __ATOMIC_ACQUIRE);
	int saved_errno;

	if (state == EARLY_UNPROBED &&
	    __atomic_compare_exchange_n(&early_state, &state, EARLY_PROBING, 0,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		saved_errno = errno;
		state = probe_early_return(slack);
		errno = saved_errno;
		__atomic_store_n(&early_state, state, __ATOMIC_RELEASE);
	}
	return state != EARLY_NO;
}

/* What to do with a valid zero-length sleep. */
enum action {
	A_REAL,		/* the real function: default, or the kernel sleeps */
	A_RETURN,	/* return 0 at once */
	A_SCHEDULE,	/* sched_yield(), then return 0 */
	A_SLEEP,	/* sleep here until the end of the slack */
};

/*
 * The action for a zero-length sleep whose deadline passed @late ns ago (0
 * for a relative one).  Under full-slack, *@nap is set to the sleep to take:
 * min(slack / 2, 50 us).  A timer of that length, plus the thread's slack,
 * is still in the future when the kernel arms it, so that it blocks even
 * on a kernel with the early return, and ends like the kernel series' own
 * full-slack sleep: at the next timer interrupt at most one slack later
 * (with nap added).
 */
static enum action zero_action(long long late, struct timespec *nap)
{
	long slack;

	switch (get_policy()) {
	case ZEROSLEEP_RETURN:
		return A_RETURN;
	case ZEROSLEEP_SCHEDULE:
		return A_SCHEDULE;
	case ZEROSLEEP_FULL_SLACK:
		slack = timer_slack();
		/* The end of the slack has passed: nothing to sleep for. */
		if (slack <= 1 || late >= slack)
			return A_RETURN;
		if (!kernel_returns_early(slack))
			return A_REAL;
		nap->tv_sec = 0;
		nap->tv_nsec = slack / 2 < 50 * NSEC_PER_USEC ? slack / 2 :
			       50 * NSEC_PER_USEC;
		return A_SLEEP;
	default:
		return A_REAL;
	}
}

/* The zero-length sleep itself, under A_RETURN or A_SCHEDULE. */
static void zero_sleep(enum action action)
{
	int saved_errno = errno;

	pthread_testcancel();
	if (action == A_SCHEDULE)
		sched_yield();
	errno = saved_errno;
}

ZS_SLEEP_FN unsigned int sleep(unsigned int seconds)
{
	struct timespec nap;
	enum action action;

	if (seconds != 0 || get_policy() == ZEROSLEEP_DEFAULT)
		return real_sleep()(seconds);
	action = zero_action(0, &nap);
	if (action == A_REAL)
		return real_sleep()(seconds);
	if (action == A_SLEEP)
		real_nanosleep()(&nap, NULL);	/* interrupted: 0 s were left */
	else
		zero_sleep(action);
	return 0;
}

ZS_SLEEP_FN int usleep(useconds_t usec)
{
	struct timespec nap;
	enum action action;

	if (usec != 0 || get_policy() == ZEROSLEEP_DEFAULT)
		return real_usleep()(usec);
	action = zero_action(0, &nap);
	if (action == A_REAL)
		return real_usleep()(usec);
	if (action == A_SLEEP)
		return real_nanosleep()(&nap, NULL);
	zero_sleep(action);
	return 0;
}

ZS_SLEEP_FN int nanosleep(const struct timespec *req, struct timespec *rem)
{
	struct timespec ts, nap;
	enum action action;

	if (get_policy() == ZEROSLEEP_DEFAULT ||
	    copy_timespec(req, &ts, __builtin_frame_address(0)) ||
	    !valid(&ts) || !is_zero(&ts))
		return real_nanosleep()(req, rem);
	action = zero_action(0, &nap);
	if (action == A_REAL)
		return real_nanosleep()(req, rem);
	if (action == A_SLEEP)
		return real_nanosleep()(&nap, rem);
	zero_sleep(action);
	return 0;
}

ZS_SLEEP_FN int clock_nanosleep(clockid_t clock, int flags,
			      const struct timespec *req, struct timespec *rem)
{
	struct timespec ts, nap;
	enum action action;
	long long late = 0;

	if (get_policy() == ZEROSLEEP_DEFAULT || !hrtimer_clock(clock) ||
	    copy_timespec(req, &ts, __builtin_frame_address(0)) || !valid(&ts))
		return real_clock_nanosleep()(clock, flags, req, rem);
	if (flags & TIMER_ABSTIME)
		late = behind(clock, &ts);
	else if (!is_zero(&ts))
		late = -1;
	if (late < 0)
		return real_clock_nanosleep()(clock, flags, req, rem);
	action = zero_action(late, &nap);
	if (action == A_REAL)
		return real_clock_nanosleep()(clock, flags, req, rem);
	/* An absolute sleep never writes @rem; a relative one, as the kernel. */
	if (action == A_SLEEP)
		return real_clock_nanosleep()(clock, 0, &nap,
					      (flags & TIMER_ABSTIME) ? NULL : rem);
	zero_sleep(action);
	return 0;
}

ZS_SLEEP_FN int thrd_sleep(const struct timespec *duration,
			 struct timespec *remaining)
{
	struct timespec ts, nap;
	enum action action;

	if (get_policy() == ZEROSLEEP_DEFAULT ||
	    copy_timespec(duration, &ts, __builtin_frame_address(0)) ||
	    !valid(&ts) || !is_zero(&ts))
		return real_thrd_sleep()(duration, remaining);
	action = zero_action(0, &nap);
	if (action == A_REAL)
		return real_thrd_sleep()(duration, remaining);
	if (action == A_SLEEP)
		return real_thrd_sleep()(&nap, remaining);
	zero_sleep(action);
	return 0;
}
