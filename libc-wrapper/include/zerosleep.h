/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * zerosleep.h - choose what a zero-length sleep does for a thread
 *
 * A zero-length sleep is a nanosleep() or clock_nanosleep() whose requested
 * expiry is not in the future: a relative {0, 0}, or an absolute deadline at
 * or before the clock's current time.  A kernel with the zerosleep series
 * lets each thread pick a policy for such sleeps, through
 * prctl(PR_SET_TIMERSLACK_ZERO_POLICY) for itself or its whole process and
 * through /proc/<pid>/task/<tid>/timerslack_zero_policy for other threads.
 * The policy is inherited by new threads and children and kept across
 * execve().  On a kernel without the series, libzerosleep-preload.so gives
 * dynamically linked programs the same choice in user space; see
 * zerosleep(1).  While it is loaded, zerosleep_get_policy(),
 * zerosleep_set_policy() and zerosleep_set_process_policy() read and set
 * the policy it applies, which is one for the whole process;
 * zerosleep_backend() tells which of the two a program has.
 *
 * Every function returns -1 and sets errno on failure.  Functions that need
 * the kernel (or, for the three above, the preload) fail with ENOTSUP when
 * neither offers the feature; the name <-> value conversions work
 * everywhere.  Arguments are checked before the kernel is
 * asked, so a bad argument gives EINVAL on every kernel and changes nothing.
 */
#ifndef ZEROSLEEP_H
#define ZEROSLEEP_H

#include <sys/types.h>

#define ZEROSLEEP_VERSION_MAJOR	2
#define ZEROSLEEP_VERSION_MINOR	2
#define ZEROSLEEP_VERSION_PATCH	0
/* True if this header is version @major.@minor or newer. */
#define ZEROSLEEP_CHECK_VERSION(major, minor)				\
	((major) < ZEROSLEEP_VERSION_MAJOR ||				\
	 ((major) == ZEROSLEEP_VERSION_MAJOR &&				\
	  (minor) <= ZEROSLEEP_VERSION_MINOR))

/*
 * The kernel's numbers, for programs built against kernel headers that
 * predate the series.  They are the same on every kernel that has it.
 */
#ifndef PR_SET_TIMERSLACK_ZERO_POLICY
# define PR_SET_TIMERSLACK_ZERO_POLICY	0x545a5053	/* "TZPS" */
#endif
#ifndef PR_GET_TIMERSLACK_ZERO_POLICY
# define PR_GET_TIMERSLACK_ZERO_POLICY	0x545a5047	/* "TZPG" */
#endif
#ifndef PR_TIMERSLACK_ZERO_DEFAULT
# define PR_TIMERSLACK_ZERO_DEFAULT	0
#endif
#ifndef PR_TIMERSLACK_ZERO_RETURN
# define PR_TIMERSLACK_ZERO_RETURN	1
#endif
#ifndef PR_TIMERSLACK_ZERO_SCHEDULE
# define PR_TIMERSLACK_ZERO_SCHEDULE	2
#endif
#ifndef PR_TIMERSLACK_ZERO_FULL_SLACK
# define PR_TIMERSLACK_ZERO_FULL_SLACK	3
#endif
#ifndef PR_TIMERSLACK_ZERO_ALL_THREADS
# define PR_TIMERSLACK_ZERO_ALL_THREADS	1
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* What the kernel does by itself (the default of every thread). */
#define ZEROSLEEP_DEFAULT	0
/* Return at once: no timer is armed and the scheduler is not entered. */
#define ZEROSLEEP_RETURN	1
/* Give up the CPU once, as sched_yield() would, then return. */
#define ZEROSLEEP_SCHEDULE	2
/* Sleep for the thread's timer slack, as Linux 6.12 does, on every kernel. */
#define ZEROSLEEP_FULL_SLACK	3

/**
 * zerosleep_is_supported() - does the running kernel offer the policies?
 *
 * Probes PR_GET_TIMERSLACK_ZERO_POLICY on the first call and caches the
 * answer for the life of the process; safe to call from several threads at
 * once.  Does not change errno.
 *
 * Return: 1 if the kernel supports zero-length sleep policies, 0 if not.
 */
int zerosleep_is_supported(void);

/* What zerosleep_version() returns. */
struct zerosleep_version {
	unsigned int major;
	unsigned int minor;
	unsigned int patch;
};

/**
 * zerosleep_version() - the version of the library that runs
 *
 * The header's ZEROSLEEP_VERSION_* say which version a program was built
 * against; this says which shared library it runs with, as
 * seccomp_version() does for libseccomp.  Since 2.2.
 *
 * Return: a pointer to a static structure, never NULL.
 */
const struct zerosleep_version *zerosleep_version(void);

/* What zerosleep_backend() returns. */
#define ZEROSLEEP_BACKEND_NONE		0	/* neither: ENOTSUP */
#define ZEROSLEEP_BACKEND_KERNEL	1	/* the kernel series */
#define ZEROSLEEP_BACKEND_PRELOAD	2	/* libzerosleep-preload.so */
#define ZEROSLEEP_BACKEND_SUPERVISOR	3	/* zerosleep(1)'s supervisor: get only */

/**
 * zerosleep_backend() - what applies the policies to this process
 *
 * Like zerosleep_is_supported(), probes once and caches the answer; safe
 * from several threads at once; does not change errno.  A kernel with the
 * feature wins over a loaded preload library.
 *
 * Return: ZEROSLEEP_BACKEND_KERNEL, ZEROSLEEP_BACKEND_PRELOAD (the kernel
 * lacks the feature, and libzerosleep-preload.so is loaded: get and set
 * work, with a process-wide policy; the tid functions fail with ENOTSUP),
 * ZEROSLEEP_BACKEND_SUPERVISOR (neither, but the process runs under the
 * zerosleep launcher's seccomp supervisor: zerosleep_get_policy() returns
 * its policy, which nothing in the process can change; since 2.2), or
 * ZEROSLEEP_BACKEND_NONE.  Since 2.1.
 */
int zerosleep_backend(void);

/**
 * zerosleep_get_policy() - the calling thread's zero-length sleep policy
 *
 * Under the preload fallback: the policy that it applies to the process.
 *
 * Return: the policy, ZEROSLEEP_DEFAULT to ZEROSLEEP_FULL_SLACK (a newer
 * kernel may return a value this header does not name); -1 with errno
 * ENOTSUP if neither the kernel nor the preload offers the feature.
 */
int zerosleep_get_policy(void);

/**
 * zerosleep_set_policy() - set the calling thread's zero-length sleep policy
 * @policy: ZEROSLEEP_DEFAULT, ZEROSLEEP_RETURN, ZEROSLEEP_SCHEDULE or
 *          ZEROSLEEP_FULL_SLACK
 *
 * Only the calling thread changes; threads and processes created afterwards
 * by this thread inherit the policy, and it is kept across execve().  No
 * privilege is needed.  Under the preload fallback the policy is the whole
 * process's: every thread changes, children made by fork() keep it, and a
 * program run by execve() starts from ZEROSLEEP_POLICY again.
 *
 * Return: 0; -1 with errno EINVAL if @policy is not one of the four
 * (nothing is changed), or ENOTSUP if neither the kernel nor the preload
 * offers the feature.
 */
int zerosleep_set_policy(int policy);

/**
 * zerosleep_set_process_policy() - set the policy of every thread of the process
 * @policy: as for zerosleep_set_policy()
 *
 * Uses PR_TIMERSLACK_ZERO_ALL_THREADS: every thread of the calling process,
 * including threads being created at the same time, gets @policy.  For
 * libraries and runtimes that are loaded after threads exist.  No privilege
 * is needed.  Under the preload fallback: the same as
 * zerosleep_set_policy(), whose policy is the process's there.
 *
 * Return: 0; -1 with errno EINVAL if @policy is not valid (nothing is
 * changed), or ENOTSUP if neither the kernel nor the preload offers the
 * feature, or the kernel predates PR_TIMERSLACK_ZERO_ALL_THREADS.
 */
int zerosleep_set_process_policy(int policy);

/**
 * zerosleep_get_tid_policy() - the zero-length sleep policy of any thread
 * @tid: a thread ID (as returned by gettid()); a process ID names the
 *       process's main thread.  It must be positive: 0 does not mean the
 *       calling thread, use zerosleep_get_policy() or gettid() for that.
 *
 * Reads /proc/<tid>/task/<tid>/timerslack_zero_policy.  A thread may always
 * read the threads of its own process; reading another process's needs
 * CAP_SYS_NICE in its user namespace.
 *
 * Return: the policy; -1 with errno EINVAL if @tid <= 0, ENOTSUP if the
 * kernel lacks the feature (also under the preload fallback, whose policy
 * no /proc file shows), ESRCH if there is no such thread, EPERM without
 * the privilege, EIO if the kernel's answer cannot be parsed, or another
 * errno from open(2) or read(2).
 */
int zerosleep_get_tid_policy(pid_t tid);

/**
 * zerosleep_set_tid_policy() - set the zero-length sleep policy of any thread
 * @tid:    a positive thread ID, as for zerosleep_get_tid_policy()
 * @policy: as for zerosleep_set_policy()
 *
 * Writes /proc/<tid>/task/<tid>/timerslack_zero_policy.  Only that one
 * thread changes; to change a whole process, call this for every entry of
 * /proc/<pid>/task.  Changing another thread needs CAP_SYS_NICE in its
 * user namespace.
 *
 * Return: 0; -1 with errno EINVAL if @tid <= 0 or @policy is not valid
 * (nothing is changed), ENOTSUP if the kernel lacks the feature (also
 * under the preload fallback), ESRCH if there is no such thread, EPERM without the privilege, or another errno
 * from open(2) or write(2).
 */
int zerosleep_set_tid_policy(pid_t tid, int policy);

/**
 * zerosleep_policy_name() - the canonical name of a policy
 * @policy: a policy value
 *
 * Return: "default", "return-immediately", "schedule-once" or "full-slack",
 * a static string; NULL with errno EINVAL for any other value (for example
 * one that a newer kernel returns: callers must handle NULL).
 */
const char *zerosleep_policy_name(int policy);

/**
 * zerosleep_policy_from_name() - parse a policy name
 * @name: a canonical name ("default", "return-immediately",
 *        "schedule-once", "full-slack"), a short alias ("return",
 *        "schedule", "full") or a number ("0" to "3").  Matching is exact
 *        and case-sensitive.
 *
 * Return: the policy; -1 with errno EINVAL if @name is NULL or not one of
 * the words above.
 */
int zerosleep_policy_from_name(const char *name);

#ifdef __cplusplus
}
#endif

#endif /* ZEROSLEEP_H */
