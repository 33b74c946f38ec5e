// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Tests of libzerosleep through its public API, TAP on stdout.
 *
 * The same binary runs on a kernel without the feature (the build host) and
 * on one with it (the QEMU guest).  The caller states which one it expects
 * in ZEROSLEEP_EXPECT=supported|unsupported; the library's probe and a
 * direct prctl() must agree with it, so that a broken probe cannot make the
 * test quietly pick the easier half.
 *
 * Guest mode must run as root: it forks a child that drops to uid 65534 to
 * check EPERM.
 *
 * In both modes the program also runs itself again under
 * libzerosleep-preload.so (from $O), as "test-lib fallback", and relays that
 * run's results: on a kernel without the feature the library must then
 * read and set the policy that the preload applies, and show it by the
 * sleeps that follow; on one with it, the kernel still wins.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <zerosleep.h>

#include "tap.h"

#define NOBODY		65534
#define NTHREADS	8

static const char *const canonical[] = {
	"default", "return-immediately", "schedule-once", "full-slack",
};

static const int bad_policies[] = { -1, 4, INT_MAX, INT_MIN };

/* The calling thread's policy straight from the kernel, or -1. */
static int kernel_policy(void)
{
	return prctl(PR_GET_TIMERSLACK_ZERO_POLICY, 0UL, 0UL, 0UL, 0UL);
}

/* A thread's policy read straight from /proc (without the library), or -1. */
static int proc_policy(pid_t tid)
{
	char path[64], buf[16];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/timerslack_zero_policy",
		 (int)tid, (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n != 2 || buf[1] != '\n' || buf[0] < '0' || buf[0] > '9')
		return -1;
	return buf[0] - '0';
}

/* ---- the probe, from several threads at once ---------------------------- */

struct probe_arg {
	pthread_barrier_t *barrier;
	int result;
	int errno_kept;
};

static void *probe_thread(void *p)
{
	struct probe_arg *arg = p;

	pthread_barrier_wait(arg->barrier);
	errno = 4242;
	arg->result = zerosleep_is_supported();
	arg->errno_kept = errno == 4242;
	return NULL;
}

/* Must run first, so that the threads race for the first probe. */
static void test_probe(int expect)
{
	struct probe_arg args[NTHREADS];
	pthread_t threads[NTHREADS];
	pthread_barrier_t barrier;
	int i, started = 0, agree = 1, kept = 1, direct;

	pthread_barrier_init(&barrier, NULL, NTHREADS);
	for (i = 0; i < NTHREADS; i++) {
		args[i].barrier = &barrier;
		args[i].result = -1;
		if (pthread_create(&threads[i], NULL, probe_thread, &args[i]) == 0)
			started++;
	}
	ok(started == NTHREADS, "start %d threads that probe at the same time",
	   NTHREADS);
	if (started != NTHREADS)
		exit(tap_done() | 1);	/* the barrier would never open */
	for (i = 0; i < NTHREADS; i++) {
		pthread_join(threads[i], NULL);
		agree &= args[i].result == expect;
		kept &= args[i].errno_kept;
	}
	pthread_barrier_destroy(&barrier);
	ok(agree, "every thread's zerosleep_is_supported() is %d, as "
	   "ZEROSLEEP_EXPECT says", expect);
	for (i = 0; !agree && i < NTHREADS; i++)
		diag("thread %d: %d", i, args[i].result);
	ok(kept, "zerosleep_is_supported() leaves errno alone in every thread");

	errno = 4242;
	ok(zerosleep_is_supported() == expect && errno == 4242,
	   "zerosleep_is_supported() is %d again later, errno untouched", expect);

	errno = 0;
	direct = kernel_policy();
	if (!ok(expect ? direct >= 0 && direct <= 3 : direct == -1 && errno == EINVAL,
		"a direct PR_GET_TIMERSLACK_ZERO_POLICY %s",
		expect ? "returns a policy" : "fails with EINVAL"))
		diag("direct prctl: %d, errno %d", direct, errno);
}

/* ---- name <-> value: the same on every kernel --------------------------- */

/* @word as a C string literal, so that a test line stays on one line. */
static const char *quoted(const char *word, char *buf, size_t size)
{
	size_t n = 0;

	buf[n++] = '"';
	for (; *word && n + 6 < size; word++) {
		if (*word == '\n') {
			buf[n++] = '\\';
			buf[n++] = 'n';
		} else if ((unsigned char)*word < 0x20 || *word == '"' || *word == '\\') {
			n += (size_t)snprintf(buf + n, size - n, "\\x%02x",
					      (unsigned char)*word);
		} else {
			buf[n++] = *word;
		}
	}
	buf[n++] = '"';
	buf[n] = '\0';
	return buf;
}

static void test_names(void)
{
	static const struct {
		const char *name;
		int policy;
	} good[] = {
		{ "default", 0 }, { "0", 0 },
		{ "return-immediately", 1 }, { "return", 1 }, { "1", 1 },
		{ "schedule-once", 2 }, { "schedule", 2 }, { "2", 2 },
		{ "full-slack", 3 }, { "full", 3 }, { "3", 3 },
	};
	static const char *const bad[] = {
		"", "4", "-1", "Default", "def", "DEFAULT", "FULL", "Return", "return-", "full-slack ",
		" full", "full-slack\n", "01", "+1", "0x1", "1 ", "fullslack",
		"return-immediately-", "schedule-", "none",
	};
	const char *name;
	char buf[64];
	size_t i;
	int policy;

	ok(ZEROSLEEP_DEFAULT == 0 && ZEROSLEEP_RETURN == 1 &&
	   ZEROSLEEP_SCHEDULE == 2 && ZEROSLEEP_FULL_SLACK == 3,
	   "the header's policy values are 0, 1, 2, 3");
	ok(PR_TIMERSLACK_ZERO_DEFAULT == 0 && PR_TIMERSLACK_ZERO_RETURN == 1 &&
	   PR_TIMERSLACK_ZERO_SCHEDULE == 2 && PR_TIMERSLACK_ZERO_FULL_SLACK == 3 &&
	   PR_TIMERSLACK_ZERO_ALL_THREADS == 1 &&
	   PR_SET_TIMERSLACK_ZERO_POLICY == 0x545a5053 &&
	   PR_GET_TIMERSLACK_ZERO_POLICY == 0x545a5047,
	   "the header carries the kernel's option and policy numbers");
	ok(ZEROSLEEP_CHECK_VERSION(2, 2) && ZEROSLEEP_CHECK_VERSION(2, 1) &&
	   ZEROSLEEP_CHECK_VERSION(2, 0) && !ZEROSLEEP_CHECK_VERSION(2, 3) &&
	   !ZEROSLEEP_CHECK_VERSION(3, 0),
	   "ZEROSLEEP_CHECK_VERSION() against version %d.%d.%d",
	   ZEROSLEEP_VERSION_MAJOR, ZEROSLEEP_VERSION_MINOR,
	   ZEROSLEEP_VERSION_PATCH);

	for (policy = 0; policy <= 3; policy++) {
		name = zerosleep_policy_name(policy);
		ok(name && strcmp(name, canonical[policy]) == 0,
		   "zerosleep_policy_name(%d) is \"%s\"", policy, canonical[policy]);
		ok(name && zerosleep_policy_from_name(name) == policy,
		   "zerosleep_policy_from_name(zerosleep_policy_name(%d)) is %d",
		   policy, policy);
	}
	for (i = 0; i < sizeof(bad_policies) / sizeof(bad_policies[0]); i++) {
		errno = 0;
		name = zerosleep_policy_name(bad_policies[i]);
		ok(name == NULL && errno == EINVAL,
		   "zerosleep_policy_name(%d): NULL with EINVAL", bad_policies[i]);
	}

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		errno = 0;
		policy = zerosleep_policy_from_name(good[i].name);
		ok(policy == good[i].policy && errno == 0,
		   "zerosleep_policy_from_name(\"%s\") is %d", good[i].name,
		   good[i].policy);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		policy = zerosleep_policy_from_name(bad[i]);
		ok_fail(policy, errno, EINVAL, "zerosleep_policy_from_name(%s)",
			quoted(bad[i], buf, sizeof(buf)));
	}
	errno = 0;
	policy = zerosleep_policy_from_name(NULL);
	ok_fail(policy, errno, EINVAL, "zerosleep_policy_from_name(NULL)");
}

/* ---- bad arguments: EINVAL on every kernel, and nothing changes --------- */

/*
 * With @expect, the calling thread's policy is first set to SCHEDULE, and
 * it must still be SCHEDULE after each rejected call.
 */
static void check_unchanged(int expect, const char *what)
{
	int lib, direct;

	if (!expect)
		return;
	lib = zerosleep_get_policy();
	direct = kernel_policy();
	if (!ok(lib == ZEROSLEEP_SCHEDULE && direct == ZEROSLEEP_SCHEDULE,
		"after %s the policy is still schedule-once", what))
		diag("library says %d, prctl says %d", lib, direct);
}

static void test_bad_arguments(int expect)
{
	static const pid_t bad_tids[] = { 0, -1, INT_MIN };
	char what[128];
	pid_t self = gettid();
	size_t i;
	int ret;

	if (expect)
		ok(zerosleep_set_policy(ZEROSLEEP_SCHEDULE) == 0,
		   "set schedule-once before the bad calls");

	for (i = 0; i < sizeof(bad_policies) / sizeof(bad_policies[0]); i++) {
		errno = 0;
		ret = zerosleep_set_policy(bad_policies[i]);
		snprintf(what, sizeof(what), "zerosleep_set_policy(%d)",
			 bad_policies[i]);
		ok_fail(ret, errno, EINVAL, "%s", what);
		check_unchanged(expect, what);

		errno = 0;
		ret = zerosleep_set_process_policy(bad_policies[i]);
		snprintf(what, sizeof(what), "zerosleep_set_process_policy(%d)",
			 bad_policies[i]);
		ok_fail(ret, errno, EINVAL, "%s", what);
		check_unchanged(expect, what);

		errno = 0;
		ret = zerosleep_set_tid_policy(self, bad_policies[i]);
		snprintf(what, sizeof(what), "zerosleep_set_tid_policy(self, %d)",
			 bad_policies[i]);
		ok_fail(ret, errno, EINVAL, "%s", what);
		check_unchanged(expect, what);
	}
	for (i = 0; i < sizeof(bad_tids) / sizeof(bad_tids[0]); i++) {
		errno = 0;
		ret = zerosleep_set_tid_policy(bad_tids[i], ZEROSLEEP_RETURN);
		snprintf(what, sizeof(what),
			 "zerosleep_set_tid_policy(%d, ZEROSLEEP_RETURN)",
			 (int)bad_tids[i]);
		ok_fail(ret, errno, EINVAL, "%s", what);
		check_unchanged(expect, what);

		errno = 0;
		ret = zerosleep_get_tid_policy(bad_tids[i]);
		ok_fail(ret, errno, EINVAL, "zerosleep_get_tid_policy(%d)",
			(int)bad_tids[i]);
	}

	if (expect)
		ok(zerosleep_set_policy(ZEROSLEEP_DEFAULT) == 0 &&
		   kernel_policy() == ZEROSLEEP_DEFAULT,
		   "back to default after the bad calls");
}

/* ---- host mode: a kernel without the feature ---------------------------- */

static void test_unsupported(void)
{
	/* Past the largest pid_max (2^22): never a live thread. */
	const pid_t absent = INT_MAX;
	pid_t self = gettid();
	int policy, ret;

	errno = 0;
	ret = zerosleep_get_policy();
	ok_fail(ret, errno, ENOTSUP, "zerosleep_get_policy()");
	for (policy = 0; policy <= 3; policy++) {
		errno = 0;
		ret = zerosleep_set_policy(policy);
		ok_fail(ret, errno, ENOTSUP, "zerosleep_set_policy(%d)", policy);
		errno = 0;
		ret = zerosleep_set_process_policy(policy);
		ok_fail(ret, errno, ENOTSUP, "zerosleep_set_process_policy(%d)",
			policy);
		errno = 0;
		ret = zerosleep_set_tid_policy(self, policy);
		ok_fail(ret, errno, ENOTSUP, "zerosleep_set_tid_policy(self, %d)",
			policy);
		errno = 0;
		ret = zerosleep_set_tid_policy(getppid(), policy);
		ok_fail(ret, errno, ENOTSUP, "zerosleep_set_tid_policy(parent, %d)",
			policy);
	}
	errno = 0;
	ret = zerosleep_get_tid_policy(self);
	ok_fail(ret, errno, ENOTSUP, "zerosleep_get_tid_policy(self)");
	errno = 0;
	ret = zerosleep_get_tid_policy(getpid());
	ok_fail(ret, errno, ENOTSUP, "zerosleep_get_tid_policy(getpid())");
	errno = 0;
	ret = zerosleep_get_tid_policy(absent);
	ok_fail(ret, errno, ENOTSUP, "zerosleep_get_tid_policy(a tid that "
		"cannot exist)");
	errno = 0;
	ret = zerosleep_set_tid_policy(absent, ZEROSLEEP_RETURN);
	ok_fail(ret, errno, ENOTSUP, "zerosleep_set_tid_policy(a tid that "
		"cannot exist, ZEROSLEEP_RETURN)");

	ok(access("/proc/self/timerslack_zero_policy", F_OK) < 0 && errno == ENOENT,
	   "this kernel has no /proc/self/timerslack_zero_policy either");
}

/* ---- guest mode: the patched kernel ------------------------------------- */

static void test_self(void)
{
	static const int order[] = { 1, 2, 3, 0, 3, 2, 1, 0 };
	pid_t self = gettid();
	size_t i;
	int p, got;

	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		p = order[i];
		ok(zerosleep_set_policy(p) == 0, "zerosleep_set_policy(%d)", p);
		got = zerosleep_get_policy();
		ok(got == p && kernel_policy() == p && proc_policy(self) == p,
		   "zerosleep_get_policy(), prctl and /proc all say %d", p);
		got = zerosleep_get_tid_policy(self);
		ok(got == p, "zerosleep_get_tid_policy(gettid()) is %d", p);
	}
	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		p = order[i];
		ok(zerosleep_set_tid_policy(self, p) == 0,
		   "zerosleep_set_tid_policy(gettid(), %d)", p);
		ok(kernel_policy() == p && zerosleep_get_policy() == p,
		   "the calling thread's policy is now %d", p);
	}
	/* In the main thread, the pid is the tid. */
	ok(getpid() == self, "the tests run in the main thread");
	ok(zerosleep_set_tid_policy(getpid(), 2) == 0 &&
	   zerosleep_get_tid_policy(getpid()) == 2 && kernel_policy() == 2,
	   "set and get through getpid()");
	ok(zerosleep_set_policy(0) == 0, "back to default");
}

struct peer {
	pthread_barrier_t barrier;
	pid_t tid;
	int inherited, after;
};

static void *peer_thread(void *p)
{
	struct peer *peer = p;

	peer->tid = gettid();
	peer->inherited = zerosleep_get_policy();
	zerosleep_set_policy(ZEROSLEEP_SCHEDULE);
	pthread_barrier_wait(&peer->barrier);	/* main looks and changes */
	pthread_barrier_wait(&peer->barrier);
	peer->after = zerosleep_get_policy();
	return NULL;
}

static void test_other_thread(void)
{
	struct peer peer = { .inherited = -1, .after = -1 };
	pthread_t thread;
	int ret;

	ok(zerosleep_set_policy(ZEROSLEEP_RETURN) == 0,
	   "main thread: set return-immediately");
	pthread_barrier_init(&peer.barrier, NULL, 2);
	if (!ok(pthread_create(&thread, NULL, peer_thread, &peer) == 0,
		"start a second thread"))
		return;
	pthread_barrier_wait(&peer.barrier);

	ok(peer.inherited == ZEROSLEEP_RETURN,
	   "the new thread inherited return-immediately");
	ret = zerosleep_get_tid_policy(peer.tid);
	ok(ret == ZEROSLEEP_SCHEDULE && proc_policy(peer.tid) == ZEROSLEEP_SCHEDULE,
	   "zerosleep_get_tid_policy() sees the thread's schedule-once");
	ok(zerosleep_set_tid_policy(peer.tid, ZEROSLEEP_FULL_SLACK) == 0,
	   "zerosleep_set_tid_policy(thread, full-slack)");
	ok(zerosleep_get_tid_policy(peer.tid) == ZEROSLEEP_FULL_SLACK,
	   "zerosleep_get_tid_policy() sees the change");
	ok(zerosleep_get_policy() == ZEROSLEEP_RETURN,
	   "the main thread kept return-immediately");

	pthread_barrier_wait(&peer.barrier);
	pthread_join(thread, NULL);
	pthread_barrier_destroy(&peer.barrier);
	ok(peer.after == ZEROSLEEP_FULL_SLACK,
	   "the thread itself sees full-slack");
	ok(zerosleep_set_policy(0) == 0, "back to default");
}

struct waiter {
	pthread_barrier_t barrier;
	pid_t tid;
	int after;
};

static void *waiter_thread(void *p)
{
	struct waiter *w = p;

	w->tid = gettid();
	pthread_barrier_wait(&w->barrier);	/* main sets the process */
	pthread_barrier_wait(&w->barrier);
	w->after = zerosleep_get_policy();
	return NULL;
}

static void test_process(void)
{
	struct waiter w[NTHREADS];
	pthread_t threads[NTHREADS];
	pthread_barrier_t *b;
	int i, started = 0, all = 1, seen = 1;

	ok(zerosleep_set_policy(ZEROSLEEP_DEFAULT) == 0,
	   "main thread: default before starting threads");
	for (i = 0; i < NTHREADS; i++) {
		w[i].after = -1;
		pthread_barrier_init(&w[i].barrier, NULL, 2);
		if (pthread_create(&threads[i], NULL, waiter_thread, &w[i]))
			break;
		started++;
		pthread_barrier_wait(&w[i].barrier);
	}
	if (!ok(started == NTHREADS, "start %d threads", NTHREADS))
		exit(tap_done() | 1);
	ok(zerosleep_set_process_policy(ZEROSLEEP_SCHEDULE) == 0,
	   "zerosleep_set_process_policy(ZEROSLEEP_SCHEDULE)");
	ok(kernel_policy() == ZEROSLEEP_SCHEDULE,
	   "the calling thread has schedule-once");
	for (i = 0; i < NTHREADS; i++)
		all &= proc_policy(w[i].tid) == ZEROSLEEP_SCHEDULE;
	ok(all, "/proc shows schedule-once for all %d other threads", NTHREADS);
	for (i = 0; i < NTHREADS; i++) {
		b = &w[i].barrier;
		pthread_barrier_wait(b);
		pthread_join(threads[i], NULL);
		pthread_barrier_destroy(b);
		seen &= w[i].after == ZEROSLEEP_SCHEDULE;
	}
	ok(seen, "each thread sees schedule-once itself");
	ok(zerosleep_set_process_policy(ZEROSLEEP_DEFAULT) == 0 &&
	   kernel_policy() == ZEROSLEEP_DEFAULT, "back to default");
}

/* Read exactly @len bytes, or fail. */
static int read_all(int fd, void *buf, size_t len)
{
	ssize_t n;
	size_t done = 0;

	while (done < len) {
		n = read(fd, (char *)buf + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		done += (size_t)n;
	}
	return 0;
}

static void test_child(void)
{
	int to_parent[2], to_child[2], status = -1, ret;
	char c = 0;
	pid_t pid;

	ok(zerosleep_set_policy(ZEROSLEEP_SCHEDULE) == 0,
	   "parent: set schedule-once");
	if (pipe2(to_parent, O_CLOEXEC) || pipe2(to_child, O_CLOEXEC)) {
		ok(0, "make pipes: %s", strerror(errno));
		return;
	}
	pid = fork();
	if (pid == 0) {
		/* Report the inherited policy, switch, wait, report again. */
		c = (char)('0' + zerosleep_get_policy());
		if (write(to_parent[1], &c, 1) != 1 ||
		    zerosleep_set_policy(ZEROSLEEP_RETURN) < 0 ||
		    write(to_parent[1], &c, 1) != 1 || read_all(to_child[0], &c, 1))
			_exit(100);
		_exit(zerosleep_get_policy());
	}
	close(to_parent[1]);
	close(to_child[0]);
	if (!ok(pid > 0, "fork a child"))
		return;
	ret = read_all(to_parent[0], &c, 1);
	ok(ret == 0 && c == '2', "the child inherited schedule-once");
	ret = read_all(to_parent[0], &c, 1);
	ok(ret == 0, "the child set return-immediately");

	ok(zerosleep_get_tid_policy(pid) == ZEROSLEEP_RETURN,
	   "zerosleep_get_tid_policy(child) is return-immediately");
	ok(zerosleep_set_tid_policy(pid, ZEROSLEEP_FULL_SLACK) == 0,
	   "zerosleep_set_tid_policy(child, full-slack)");
	ok(zerosleep_get_tid_policy(pid) == ZEROSLEEP_FULL_SLACK &&
	   proc_policy(pid) == ZEROSLEEP_FULL_SLACK,
	   "the child's policy is now full-slack");
	ok(zerosleep_get_policy() == ZEROSLEEP_SCHEDULE,
	   "the parent kept schedule-once");

	c = 'x';
	ret = (int)write(to_child[1], &c, 1);
	close(to_child[1]);
	close(to_parent[0]);
	waitpid(pid, &status, 0);
	if (!ok(ret == 1 && WIFEXITED(status) &&
		WEXITSTATUS(status) == ZEROSLEEP_FULL_SLACK,
		"the child itself sees full-slack"))
		diag("child status 0x%x", status);

	/* The child has been reaped: its pid no longer names a task. */
	errno = 0;
	ret = zerosleep_get_tid_policy(pid);
	ok_fail(ret, errno, ESRCH, "zerosleep_get_tid_policy(reaped child)");
	errno = 0;
	ret = zerosleep_set_tid_policy(pid, ZEROSLEEP_RETURN);
	ok_fail(ret, errno, ESRCH, "zerosleep_set_tid_policy(reaped child, 1)");
	ok(zerosleep_get_policy() == ZEROSLEEP_SCHEDULE,
	   "the parent still has schedule-once");
	ok(zerosleep_set_policy(0) == 0, "back to default");
}

/* What the unprivileged child saw; see test_eperm(). */
struct eperm_report {
	int dropped;
	int set_parent, set_parent_errno;
	int set_sibling, set_sibling_errno;
	int get_parent, get_parent_errno;
	int set_self_tid, get_self;
	int set_self;
};

static void unprivileged_child(pid_t parent, pid_t sibling, int fd)
{
	struct eperm_report r;

	memset(&r, 0, sizeof(r));
	r.dropped = setgroups(0, NULL) == 0 &&
		    setresgid(NOBODY, NOBODY, NOBODY) == 0 &&
		    setresuid(NOBODY, NOBODY, NOBODY) == 0 &&
		    geteuid() == NOBODY &&
		    /* An ordinary process of that user, as after a login. */
		    prctl(PR_SET_DUMPABLE, 1UL, 0UL, 0UL, 0UL) == 0;
	if (r.dropped) {
		errno = 0;
		r.set_parent = zerosleep_set_tid_policy(parent, ZEROSLEEP_FULL_SLACK);
		r.set_parent_errno = errno;
		errno = 0;
		r.set_sibling = zerosleep_set_tid_policy(sibling, ZEROSLEEP_FULL_SLACK);
		r.set_sibling_errno = errno;
		errno = 0;
		r.get_parent = zerosleep_get_tid_policy(parent);
		r.get_parent_errno = errno;
		/* Its own thread needs no privilege, through /proc or prctl. */
		r.set_self_tid = zerosleep_set_tid_policy(gettid(), ZEROSLEEP_RETURN);
		r.get_self = zerosleep_get_policy();
		r.set_self = zerosleep_set_policy(ZEROSLEEP_SCHEDULE);
	}
	_exit(write(fd, &r, sizeof(r)) == (ssize_t)sizeof(r) ? 0 : 1);
}

static void test_eperm(void)
{
	struct eperm_report r;
	int to_parent[2], hold[2], status, ret;
	pid_t sibling, child;
	char c;

	if (!ok(geteuid() == 0, "guest mode runs as root"))
		return;
	ok(zerosleep_set_policy(ZEROSLEEP_SCHEDULE) == 0,
	   "parent: set schedule-once");
	if (pipe2(to_parent, O_CLOEXEC) || pipe2(hold, O_CLOEXEC)) {
		ok(0, "make pipes: %s", strerror(errno));
		return;
	}

	/* A root-owned sibling with its own policy, waiting for us. */
	sibling = fork();
	if (sibling == 0) {
		if (zerosleep_set_policy(ZEROSLEEP_RETURN) < 0 ||
		    write(to_parent[1], "r", 1) != 1)
			_exit(1);
		close(hold[1]);
		_exit(read(hold[0], &c, 1) < 0);
	}
	close(hold[0]);
	ok(sibling > 0 && read_all(to_parent[0], &c, 1) == 0,
	   "a root-owned sibling with return-immediately is running");

	child = fork();
	if (child == 0)
		unprivileged_child(getppid(), sibling, to_parent[1]);
	close(to_parent[1]);
	memset(&r, 0, sizeof(r));
	ret = read_all(to_parent[0], &r, sizeof(r));
	close(to_parent[0]);
	status = -1;
	waitpid(child, &status, 0);
	ok(ret == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 && r.dropped,
	   "a child dropped to uid %d without capabilities", NOBODY);

	ok_fail(r.set_parent, r.set_parent_errno, EPERM,
		"unprivileged zerosleep_set_tid_policy(root parent, 0)");
	ok_fail(r.set_sibling, r.set_sibling_errno, EPERM,
		"unprivileged zerosleep_set_tid_policy(root sibling, 0)");
	ok_fail(r.get_parent, r.get_parent_errno, EPERM,
		"unprivileged zerosleep_get_tid_policy(root parent)");
	ok(r.set_self_tid == 0 && r.get_self == ZEROSLEEP_RETURN,
	   "unprivileged zerosleep_set_tid_policy(own tid, 1) works");
	ok(r.set_self == 0, "unprivileged zerosleep_set_policy(2) works");

	ok(zerosleep_get_policy() == ZEROSLEEP_SCHEDULE &&
	   kernel_policy() == ZEROSLEEP_SCHEDULE,
	   "the parent's policy is unchanged (schedule-once)");
	ok(zerosleep_get_tid_policy(sibling) == ZEROSLEEP_RETURN &&
	   proc_policy(sibling) == ZEROSLEEP_RETURN,
	   "the sibling's policy is unchanged (return-immediately)");

	close(hold[1]);		/* lets the sibling go */
	status = -1;
	waitpid(sibling, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the sibling exited");
	ok(zerosleep_set_policy(0) == 0, "back to default");
}

/* ---- under the preload fallback ----------------------------------------- */

#define SLACK_NS	10000000UL	/* 10 ms: a zero-length sleep blocks */
#define SLEEPS		10

static long thread_nvcsw(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_nvcsw;
}

/*
 * How many of SLEEPS relative {0, 0} CLOCK_MONOTONIC sleeps block, at a
 * 10 ms slack.  That clock base holds the scheduler tick, so a kernel
 * without a policy blocks in each of them, with or without Linux 7.2's
 * early return; the preload's return-immediately in none.
 */
static int blocking_sleeps(void)
{
	struct timespec zero = { 0, 0 };
	long before;
	int i, n = 0;

	for (i = 0; i < SLEEPS; i++) {
		before = thread_nvcsw();
		clock_nanosleep(CLOCK_MONOTONIC, 0, &zero, NULL);
		n += thread_nvcsw() > before;
	}
	return n;
}

static void *get_thread(void *p)
{
	int *policy = p;

	*policy = zerosleep_get_policy();
	return NULL;
}

static void *set_thread(void *p)
{
	int *result = p;

	*result = zerosleep_set_policy(ZEROSLEEP_FULL_SLACK);
	return NULL;
}

/* zerosleep_get_policy() in a new thread, or -2 if none started. */
static int policy_in_thread(void)
{
	pthread_t thread;
	int policy = -2;

	if (pthread_create(&thread, NULL, get_thread, &policy))
		return -2;
	pthread_join(thread, NULL);
	return policy;
}

/* The worker: runs under the preload, with ZEROSLEEP_POLICY=return. */
static int fallback_worker(int expect)
{
	pthread_t thread;
	pid_t child;
	int ret, status, n, result = -2;

	if (prctl(PR_SET_TIMERSLACK, SLACK_NS, 0UL, 0UL, 0UL))
		ok(0, "set a 10 ms timer slack");
	if (expect) {
		/* A kernel with the feature wins over the preload. */
		ok(zerosleep_backend() == ZEROSLEEP_BACKEND_KERNEL &&
		   zerosleep_is_supported() == 1,
		   "zerosleep_backend() is ZEROSLEEP_BACKEND_KERNEL, "
		   "zerosleep_is_supported() 1");
		ok(zerosleep_get_policy() == ZEROSLEEP_DEFAULT &&
		   kernel_policy() == ZEROSLEEP_DEFAULT,
		   "zerosleep_get_policy() reads the kernel's policy (default), "
		   "not the preload's");
		ok(zerosleep_set_policy(ZEROSLEEP_SCHEDULE) == 0 &&
		   kernel_policy() == ZEROSLEEP_SCHEDULE &&
		   zerosleep_get_policy() == ZEROSLEEP_SCHEDULE,
		   "zerosleep_set_policy() sets the kernel's");
		ok(zerosleep_set_policy(ZEROSLEEP_DEFAULT) == 0 &&
		   kernel_policy() == ZEROSLEEP_DEFAULT, "back to default");
		return tap_done();
	}

	ok(zerosleep_backend() == ZEROSLEEP_BACKEND_PRELOAD,
	   "zerosleep_backend() is ZEROSLEEP_BACKEND_PRELOAD");
	errno = 4242;
	ok(zerosleep_is_supported() == 0 && errno == 4242,
	   "zerosleep_is_supported() still says the kernel lacks it (0), "
	   "errno untouched");
	ret = zerosleep_get_policy();
	if (!ok(ret == ZEROSLEEP_RETURN, "zerosleep_get_policy() is the policy "
		"in force, return-immediately from ZEROSLEEP_POLICY"))
		diag("got %d, errno %d", ret, errno);
	n = blocking_sleeps();
	ok(n <= SLEEPS / 5, "and zero-length sleeps return at once (%d of %d "
	   "blocked)", n, SLEEPS);

	ok(zerosleep_set_policy(ZEROSLEEP_DEFAULT) == 0 &&
	   zerosleep_get_policy() == ZEROSLEEP_DEFAULT,
	   "zerosleep_set_policy(ZEROSLEEP_DEFAULT): 0, and get says default");
	n = blocking_sleeps();
	ok(n >= SLEEPS / 2, "the preload applies it: zero-length sleeps block "
	   "again (%d of %d)", n, SLEEPS);
	ok(zerosleep_set_policy(ZEROSLEEP_RETURN) == 0 &&
	   zerosleep_get_policy() == ZEROSLEEP_RETURN,
	   "zerosleep_set_policy(ZEROSLEEP_RETURN): 0, and get says return");
	n = blocking_sleeps();
	ok(n <= SLEEPS / 5, "and they return at once again (%d of %d blocked)",
	   n, SLEEPS);

	errno = 0;
	ret = zerosleep_set_policy(4);
	ok_fail(ret, errno, EINVAL, "zerosleep_set_policy(4)");
	errno = 0;
	ret = zerosleep_set_process_policy(-1);
	ok_fail(ret, errno, EINVAL, "zerosleep_set_process_policy(-1)");
	ok(zerosleep_get_policy() == ZEROSLEEP_RETURN,
	   "after the bad calls the policy is still return-immediately");

	errno = 0;
	ret = zerosleep_get_tid_policy(gettid());
	ok_fail(ret, errno, ENOTSUP, "zerosleep_get_tid_policy(gettid())");
	errno = 0;
	ret = zerosleep_set_tid_policy(gettid(), ZEROSLEEP_SCHEDULE);
	ok_fail(ret, errno, ENOTSUP, "zerosleep_set_tid_policy(gettid(), 2)");
	ok(zerosleep_get_policy() == ZEROSLEEP_RETURN,
	   "and the policy is still return-immediately");

	/* Process-wide: every thread, whichever thread sets it. */
	ok(zerosleep_set_process_policy(ZEROSLEEP_SCHEDULE) == 0 &&
	   zerosleep_get_policy() == ZEROSLEEP_SCHEDULE,
	   "zerosleep_set_process_policy(ZEROSLEEP_SCHEDULE)");
	ret = policy_in_thread();
	ok(ret == ZEROSLEEP_SCHEDULE, "a new thread sees schedule-once (%d)", ret);
	if (pthread_create(&thread, NULL, set_thread, &result) == 0)
		pthread_join(thread, NULL);
	ok(result == 0 && zerosleep_get_policy() == ZEROSLEEP_FULL_SLACK,
	   "zerosleep_set_policy(ZEROSLEEP_FULL_SLACK) in another thread: the "
	   "main thread has full-slack too (the fallback's policy is the "
	   "process's)");

	fflush(stdout);
	child = fork();
	if (child == 0)
		_exit(zerosleep_get_policy() == ZEROSLEEP_FULL_SLACK ? 0 : 1);
	status = -1;
	if (child > 0)
		waitpid(child, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	   "a child made by fork() keeps full-slack");
	return tap_done();
}

/* Run this program under the preload and relay its results. */
static void test_fallback(void)
{
	char self[PATH_MAX], preload[PATH_MAX], line[1024];
	const char *o = getenv("O");
	int fds[2], status = -1, count = 0, plan = -1, n;
	ssize_t len;
	FILE *in;
	pid_t pid;

	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	snprintf(preload, sizeof(preload), "%s/libzerosleep-preload.so",
		 o && *o ? o : ".");
	if (!ok(len > 0 && access(preload, R_OK) == 0 && pipe(fds) == 0,
		"under the preload: %s is there", preload))
		return;
	self[len] = '\0';
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		close(fds[0]);
		close(fds[1]);
		setenv("LD_PRELOAD", preload, 1);
		setenv("ZEROSLEEP_POLICY", "return", 1);
		execl(self, self, "fallback", (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	in = fdopen(fds[0], "r");
	while (in && fgets(line, sizeof(line), in)) {
		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(line, "ok ", 3) || !strncmp(line, "not ok ", 7)) {
			count++;
			ok(line[0] == 'o', "under the preload: %s",
			   strstr(line, " - ") ? strstr(line, " - ") + 3 : line);
		} else if (sscanf(line, "1..%d", &n) == 1) {
			plan = n;
		} else {
			diag("under the preload: %s", line);
		}
	}
	if (in)
		fclose(in);
	else
		close(fds[0]);
	if (pid > 0)
		waitpid(pid, &status, 0);
	ok(pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
	   plan == count && count > 0,
	   "under the preload: the run exited with 0, %d of %d tests", count, plan);
}

/* zerosleep_version(): the library's version, the header's here. */
static void test_version(void)
{
	const struct zerosleep_version *v = zerosleep_version();

	ok(v && v == zerosleep_version() &&
	   v->major == ZEROSLEEP_VERSION_MAJOR &&
	   v->minor == ZEROSLEEP_VERSION_MINOR &&
	   v->patch == ZEROSLEEP_VERSION_PATCH,
	   "zerosleep_version() is the header's %d.%d.%d (%u.%u.%u), the same "
	   "static structure every call", ZEROSLEEP_VERSION_MAJOR,
	   ZEROSLEEP_VERSION_MINOR, ZEROSLEEP_VERSION_PATCH,
	   v ? v->major : 0, v ? v->minor : 0, v ? v->patch : 0);
}

int main(int argc, char **argv)
{
	const char *expect_word = getenv("ZEROSLEEP_EXPECT");
	int expect;

	if (expect_word && strcmp(expect_word, "supported") == 0) {
		expect = 1;
	} else if (expect_word && strcmp(expect_word, "unsupported") == 0) {
		expect = 0;
	} else {
		ok(0, "ZEROSLEEP_EXPECT is \"supported\" or \"unsupported\"");
		diag("ZEROSLEEP_EXPECT=%s", expect_word ? expect_word : "(unset)");
		return tap_done();
	}
	if (argc > 1 && strcmp(argv[1], "fallback") == 0)
		return fallback_worker(expect);
	diag("expecting a kernel %s zero-length sleep policies",
	     expect ? "with" : "without");

	test_probe(expect);
	test_version();
	ok(zerosleep_backend() == (expect ? ZEROSLEEP_BACKEND_KERNEL :
				   ZEROSLEEP_BACKEND_NONE),
	   "without the preload, zerosleep_backend() is %s",
	   expect ? "ZEROSLEEP_BACKEND_KERNEL" : "ZEROSLEEP_BACKEND_NONE");
	test_names();
	test_bad_arguments(expect);
	if (expect) {
		test_self();
		test_other_thread();
		test_process();
		test_child();
		test_eperm();
	} else {
		test_unsupported();
	}
	test_fallback();
	return tap_done();
}
