// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libzerosleep: get and set the zero-length sleep policy of a thread.
 *
 * The calling thread and its process are served by
 * prctl(PR_[GS]ET_TIMERSLACK_ZERO_POLICY), any thread by
 * /proc/<tid>/task/<tid>/timerslack_zero_policy.  Whether the kernel has the
 * feature is probed once, with PR_GET_TIMERSLACK_ZERO_POLICY, which a kernel
 * without it rejects with EINVAL; from then on every call that needs the
 * kernel fails with ENOTSUP instead, so that callers never have to tell
 * "unknown prctl option" from "bad argument".
 *
 * The fallback: on a kernel without the feature, the same probe looks for
 * libzerosleep-preload.so in the process, with dlsym(RTLD_DEFAULT) on the
 * two functions it exports for this purpose (src/preload.c):
 *
 *   int zerosleep_preload_get_policy(void);
 *   int zerosleep_preload_set_policy(int policy);  (0, or -1 and EINVAL)
 *
 * When both are there, zerosleep_get_policy(), zerosleep_set_policy() and
 * zerosleep_set_process_policy() read and set the policy that the preload
 * applies, which is one for the whole process; the /proc functions still
 * fail with ENOTSUP (the policy lives in this process's memory, and no
 * kernel file shows it).  When they are not, nothing changes: ENOTSUP.  A
 * kernel with the feature always wins: the preload is then not asked.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zerosleep.h>

_Static_assert(ZEROSLEEP_DEFAULT == PR_TIMERSLACK_ZERO_DEFAULT,
	       "ZEROSLEEP_DEFAULT differs from the kernel's value");
_Static_assert(ZEROSLEEP_FULL_SLACK == PR_TIMERSLACK_ZERO_FULL_SLACK,
	       "ZEROSLEEP_FULL_SLACK differs from the kernel's value");
_Static_assert(ZEROSLEEP_RETURN == PR_TIMERSLACK_ZERO_RETURN,
	       "ZEROSLEEP_RETURN differs from the kernel's value");
_Static_assert(ZEROSLEEP_SCHEDULE == PR_TIMERSLACK_ZERO_SCHEDULE,
	       "ZEROSLEEP_SCHEDULE differs from the kernel's value");

#define ZS_EXPORT __attribute__((visibility("default")))

/*
 * tests/test-internal.c includes this file after defining these two, to
 * run the /proc code against a fake tree and a kernel that has the feature.
 */
#ifndef ZS_PROC_ROOT
# define ZS_PROC_ROOT "/proc"
#endif
#ifndef zs_prctl
# define zs_prctl prctl
#endif
#ifndef zs_dlsym
# define zs_dlsym dlsym
#endif

#define ZS_PROC_FILE "timerslack_zero_policy"

static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static int kernel_supported;

/* The preload's interface, when the fallback is loaded (see above). */
typedef int (*preload_get_fn)(void);
typedef int (*preload_set_fn)(int);
static preload_get_fn preload_get;
static preload_set_fn preload_set;
/* The policy of the launcher's supervisor over this process, or -1. */
static int supervised_policy = -1;

/*
 * Under the zerosleep launcher's seccomp supervisor, which sets
 * ZEROSLEEP_SUPERVISED to its policy's name for the command: that policy,
 * if the thread runs under a seccomp filter too (PR_GET_SECCOMP: 2; the
 * variable alone could be inherited by a process outside it); else -1.
 */
static int probe_supervised(void)
{
	const char *word = getenv("ZEROSLEEP_SUPERVISED");
	int policy = word ? zerosleep_policy_from_name(word) : -1;

	if (policy < 0 || prctl(PR_GET_SECCOMP, 0L, 0L, 0L, 0L) != 2)
		return -1;
	return policy;
}

static void probe(void)
{
	void *get, *set;

	kernel_supported = zs_prctl(PR_GET_TIMERSLACK_ZERO_POLICY,
				    0UL, 0UL, 0UL, 0UL) >= 0;
	if (kernel_supported)
		return;
	get = zs_dlsym(RTLD_DEFAULT, "zerosleep_preload_get_policy");
	set = zs_dlsym(RTLD_DEFAULT, "zerosleep_preload_set_policy");
	if (get && set) {
		preload_get = (preload_get_fn)get;
		preload_set = (preload_set_fn)set;
		return;
	}
	supervised_policy = probe_supervised();
}

/* Probe once; leaves errno alone. */
static void probe_once_keep_errno(void)
{
	int saved_errno = errno;

	/* pthread_once() cannot fail for a valid, statically set control. */
	(void)pthread_once(&probe_once, probe);
	errno = saved_errno;
}

ZS_EXPORT int zerosleep_is_supported(void)
{
	probe_once_keep_errno();
	return kernel_supported;
}

ZS_EXPORT const struct zerosleep_version *zerosleep_version(void)
{
	static const struct zerosleep_version version = {
		ZEROSLEEP_VERSION_MAJOR, ZEROSLEEP_VERSION_MINOR,
		ZEROSLEEP_VERSION_PATCH,
	};

	return &version;
}

ZS_EXPORT int zerosleep_backend(void)
{
	probe_once_keep_errno();
	if (kernel_supported)
		return ZEROSLEEP_BACKEND_KERNEL;
	if (preload_get)
		return ZEROSLEEP_BACKEND_PRELOAD;
	return supervised_policy >= 0 ? ZEROSLEEP_BACKEND_SUPERVISOR :
					ZEROSLEEP_BACKEND_NONE;
}

static int valid_policy(int policy)
{
	return policy >= ZEROSLEEP_DEFAULT && policy <= ZEROSLEEP_FULL_SLACK;
}

static int fail(int err)
{
	errno = err;
	return -1;
}

ZS_EXPORT int zerosleep_get_policy(void)
{
	switch (zerosleep_backend()) {
	case ZEROSLEEP_BACKEND_KERNEL:
		return zs_prctl(PR_GET_TIMERSLACK_ZERO_POLICY, 0UL, 0UL, 0UL, 0UL);
	case ZEROSLEEP_BACKEND_PRELOAD:
		return preload_get();
	case ZEROSLEEP_BACKEND_SUPERVISOR:
		/* The launcher's; set cannot change it (ENOTSUP). */
		return supervised_policy;
	default:
		return fail(ENOTSUP);
	}
}

ZS_EXPORT int zerosleep_set_policy(int policy)
{
	if (!valid_policy(policy))
		return fail(EINVAL);
	switch (zerosleep_backend()) {
	case ZEROSLEEP_BACKEND_KERNEL:
		if (zs_prctl(PR_SET_TIMERSLACK_ZERO_POLICY, (unsigned long)policy,
			     0UL, 0UL, 0UL) < 0)
			return -1;
		return 0;
	case ZEROSLEEP_BACKEND_PRELOAD:
		/* The preload's policy is the process's: see the man page. */
		return preload_set(policy) < 0 ? -1 : 0;
	default:
		return fail(ENOTSUP);
	}
}

ZS_EXPORT int zerosleep_set_process_policy(int policy)
{
	if (!valid_policy(policy))
		return fail(EINVAL);
	switch (zerosleep_backend()) {
	case ZEROSLEEP_BACKEND_KERNEL:
		break;
	case ZEROSLEEP_BACKEND_PRELOAD:
		return preload_set(policy) < 0 ? -1 : 0;
	default:
		return fail(ENOTSUP);
	}
	if (zs_prctl(PR_SET_TIMERSLACK_ZERO_POLICY, (unsigned long)policy,
		     (unsigned long)PR_TIMERSLACK_ZERO_ALL_THREADS, 0UL, 0UL) < 0) {
		/* The policy is valid: EINVAL means a kernel without the flag. */
		if (errno == EINVAL)
			errno = ENOTSUP;
		return -1;
	}
	return 0;
}

/* Format "<root>/<tid>/task/<tid>[/<file>]" into @buf. */
static int tid_path(char *buf, size_t size, pid_t tid, const char *file)
{
	int n;

	n = snprintf(buf, size, "%s/%d/task/%d%s%s", ZS_PROC_ROOT, (int)tid,
		     (int)tid, file ? "/" : "", file ? file : "");
	if (n < 0 || (size_t)n >= size)
		return fail(ENAMETOOLONG);
	return 0;
}

/*
 * Open the policy file of @tid.  When it is missing, tell a thread that does
 * not exist (ESRCH) from a kernel that has the prctl but not the file
 * (ENOTSUP) and from a system without /proc (ENOENT).
 */
static int open_tid_file(pid_t tid, int flags)
{
	char path[PATH_MAX];
	struct stat st;
	int fd;

	if (tid_path(path, sizeof(path), tid, ZS_PROC_FILE) < 0)
		return -1;
	do
		fd = open(path, flags | O_CLOEXEC | O_NOCTTY);
	while (fd < 0 && errno == EINTR);
	if (fd >= 0 || errno != ENOENT)
		return fd;

	if (tid_path(path, sizeof(path), tid, NULL) < 0)
		return -1;
	if (stat(path, &st) == 0)
		return fail(ENOTSUP);
	if (errno != ENOENT)
		return -1;
	if (snprintf(path, sizeof(path), "%s/self", ZS_PROC_ROOT) >=
	    (int)sizeof(path))
		return fail(ENAMETOOLONG);
	if (lstat(path, &st) < 0)
		return fail(ENOENT);	/* /proc is not mounted */
	return fail(ESRCH);
}

static void close_keep_errno(int fd)
{
	int saved_errno = errno;

	close(fd);
	errno = saved_errno;
}

/* Parse the kernel's "N\n"; -1 if it is anything else. */
static int parse_policy(const char *buf, size_t len)
{
	long value = 0;
	size_t i;

	if (len > 0 && buf[len - 1] == '\n')
		len--;
	if (len == 0)
		return -1;
	for (i = 0; i < len; i++) {
		if (buf[i] < '0' || buf[i] > '9')
			return -1;
		value = value * 10 + (buf[i] - '0');
		if (value > INT_MAX)
			return -1;
	}
	return (int)value;
}

ZS_EXPORT int zerosleep_get_tid_policy(pid_t tid)
{
	char buf[32];
	size_t len = 0;
	ssize_t n;
	int fd, policy;

	if (tid <= 0)
		return fail(EINVAL);
	if (!zerosleep_is_supported())
		return fail(ENOTSUP);

	fd = open_tid_file(tid, O_RDONLY);
	if (fd < 0)
		return -1;
	while (len < sizeof(buf)) {
		n = read(fd, buf + len, sizeof(buf) - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			close_keep_errno(fd);
			return -1;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);

	/* A full buffer means far more than "N\n": not a policy. */
	policy = len < sizeof(buf) ? parse_policy(buf, len) : -1;
	if (policy < 0)
		return fail(EIO);
	return policy;
}

ZS_EXPORT int zerosleep_set_tid_policy(pid_t tid, int policy)
{
	char buf[4];
	ssize_t n;
	int fd, len;

	if (tid <= 0 || !valid_policy(policy))
		return fail(EINVAL);
	if (!zerosleep_is_supported())
		return fail(ENOTSUP);

	len = snprintf(buf, sizeof(buf), "%d\n", policy);
	fd = open_tid_file(tid, O_WRONLY);
	if (fd < 0)
		return -1;
	do
		n = write(fd, buf, (size_t)len);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		close_keep_errno(fd);
		return -1;
	}
	close(fd);
	if (n != len)
		return fail(EIO);
	return 0;
}

static const struct {
	const char *name;
	int policy;
} policy_names[] = {
	/* The canonical name of each policy comes first. */
	{ "default",		ZEROSLEEP_DEFAULT },
	{ "return-immediately",	ZEROSLEEP_RETURN },
	{ "schedule-once",	ZEROSLEEP_SCHEDULE },
	{ "full-slack",		ZEROSLEEP_FULL_SLACK },
	{ "return",		ZEROSLEEP_RETURN },
	{ "schedule",		ZEROSLEEP_SCHEDULE },
	{ "full",		ZEROSLEEP_FULL_SLACK },
	{ "0",			ZEROSLEEP_DEFAULT },
	{ "1",			ZEROSLEEP_RETURN },
	{ "2",			ZEROSLEEP_SCHEDULE },
	{ "3",			ZEROSLEEP_FULL_SLACK },
};

ZS_EXPORT const char *zerosleep_policy_name(int policy)
{
	size_t i;

	for (i = 0; i < sizeof(policy_names) / sizeof(policy_names[0]); i++)
		if (policy_names[i].policy == policy)
			return policy_names[i].name;
	errno = EINVAL;
	return NULL;
}

ZS_EXPORT int zerosleep_policy_from_name(const char *name)
{
	size_t i;

	if (name)
		for (i = 0; i < sizeof(policy_names) / sizeof(policy_names[0]); i++)
			if (strcmp(policy_names[i].name, name) == 0)
				return policy_names[i].policy;
	return fail(EINVAL);
}
