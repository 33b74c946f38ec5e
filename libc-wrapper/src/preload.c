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
 *   return-immediately  0 at once, without a system call;
 *   schedule-once       sched_yield(), then 0;
 *   default, full-slack the real function, unchanged.
 *
 * Every other call, including every invalid one, goes to the real function
 * (dlsym(RTLD_NEXT)), which validates it and fails as it always did.  The
 * zero-length path is still a cancellation point: it calls
 * pthread_testcancel() first.
 *
 * Not reached: statically linked programs, raw system calls (Go's runtime,
 * for instance), programs that the loader runs without LD_PRELOAD
 * (set-user-ID and set-group-ID programs), and threads that already run:
 * the policy is read once, from the environment, when the library is
 * loaded.  An unknown ZEROSLEEP_POLICY is reported on stderr, once per
 * process, and then ignored: every sleep goes to the real function.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>
#include <time.h>
#include <unistd.h>

#include <zerosleep.h>

#define ZS_EXPORT __attribute__((visibility("default")))

#define NSEC_PER_SEC 1000000000L

#ifndef CLOCK_TAI
# define CLOCK_TAI 11
#endif

/* Written once by the constructor, before main() and any thread. */
static int policy = ZEROSLEEP_DEFAULT;

__attribute__((constructor)) static void zs_preload_init(void)
{
	const char *word = getenv("ZEROSLEEP_POLICY");
	int p;

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
	policy = p;
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

/* Is @ts at or before @clock's current time? */
static int not_in_future(clockid_t clock, const struct timespec *ts)
{
	struct timespec now;
	int saved_errno = errno;

	if (clock_gettime(clock, &now) < 0) {
		errno = saved_errno;
		return 0;	/* let the real function decide */
	}
	return ts->tv_sec < now.tv_sec ||
	       (ts->tv_sec == now.tv_sec && ts->tv_nsec <= now.tv_nsec);
}

/* Is a zero-length sleep to be handled here rather than by the kernel? */
static int handled(void)
{
	return policy == ZEROSLEEP_RETURN || policy == ZEROSLEEP_SCHEDULE;
}

/* The zero-length sleep itself, under RETURN or SCHEDULE. */
static void zero_sleep(void)
{
	int saved_errno = errno;

	pthread_testcancel();
	if (policy == ZEROSLEEP_SCHEDULE)
		sched_yield();
	errno = saved_errno;
}

ZS_EXPORT unsigned int sleep(unsigned int seconds)
{
	if (seconds == 0 && handled()) {
		zero_sleep();
		return 0;
	}
	return real_sleep()(seconds);
}

ZS_EXPORT int usleep(useconds_t usec)
{
	if (usec == 0 && handled()) {
		zero_sleep();
		return 0;
	}
	return real_usleep()(usec);
}

ZS_EXPORT int nanosleep(const struct timespec *req, struct timespec *rem)
{
	if (req && handled() && valid(req) && is_zero(req)) {
		zero_sleep();
		return 0;
	}
	return real_nanosleep()(req, rem);
}

ZS_EXPORT int clock_nanosleep(clockid_t clock, int flags,
			      const struct timespec *req, struct timespec *rem)
{
	if (req && handled() && hrtimer_clock(clock) && valid(req) &&
	    ((flags & TIMER_ABSTIME) ? not_in_future(clock, req) : is_zero(req))) {
		zero_sleep();
		return 0;
	}
	return real_clock_nanosleep()(clock, flags, req, rem);
}

ZS_EXPORT int thrd_sleep(const struct timespec *duration,
			 struct timespec *remaining)
{
	if (duration && handled() && valid(duration) && is_zero(duration)) {
		zero_sleep();
		return 0;
	}
	return real_thrd_sleep()(duration, remaining);
}
