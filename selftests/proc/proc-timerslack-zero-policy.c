// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/<pid>/timerslack_zero_policy and /proc/<pid>/timerslack_ns: a read
 * gives the value and a newline, a valid value written with or without a
 * newline sets it, anything else fails with EINVAL and changes nothing, and
 * a task that has gone gives ESRCH.  The target (whose file it is) may use
 * its own file (timerslack_zero_policy: those of its thread group) through
 * a descriptor that it opened itself.  Any other use needs CAP_SYS_NICE of
 * the opener, and of the user unless that is the target: a descriptor
 * passed on, even to or from the target, carries no more than its opener's.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "../kselftest_harness.h"

#ifndef PR_GET_TIMERSLACK_ZERO_POLICY	/* tools/include's <linux/prctl.h> is older */
#define PR_GET_TIMERSLACK_ZERO_POLICY	0x545a5047
#endif
#define NOBODY		65534
#define STRANGER	65533

FIXTURE(file) {
};

FIXTURE_VARIANT(file) {
	const char *name, *value[2], *want[2], *bad[4];
	int get;		/* the prctl that reads the value */
	int thread;		/* a thread's use of its leader's file */
};

FIXTURE_VARIANT_ADD(file, timerslack_zero_policy) {
	.name = "timerslack_zero_policy", .get = PR_GET_TIMERSLACK_ZERO_POLICY,
	.value = { "1", "3\n" }, .want = { "1\n", "3\n" }, .thread = 0,
	.bad = { "4", "-1", "1x", "" },
};

FIXTURE_VARIANT_ADD(file, timerslack_ns) {
	.name = "timerslack_ns", .get = PR_GET_TIMERSLACK,
	.value = { "123456", "654321\n" }, .want = { "123456\n", "654321\n" },
	.thread = EPERM, .bad = { "-1", "1x", "x", "" },
};

FIXTURE_SETUP(file)
{
}

FIXTURE_TEARDOWN(file)
{
}

static int proc_open(pid_t pid, const char *name)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/%s", pid, name);
	return open(path, O_RDWR);
}

static char got[16];	/* what the last read gave */

/* Writes @s unless it is NULL, then reads: their common error, or -1. */
static int use(int fd, const char *s)
{
	ssize_t n;
	int w = 0;

	if (s && write(fd, s, strlen(s)) < 0)
		w = errno;
	n = pread(fd, got, sizeof(got) - 1, 0);
	got[n > 0 ? n : 0] = '\0';
	if (n < 0)
		return !s || w == errno ? errno : -1;
	return w ? -1 : 0;
}

/* use() of @pid's file @name, through a descriptor opened for it. */
static int use_file(pid_t pid, const char *name, const char *s)
{
	int fd = proc_open(pid, name), err = fd < 0 ? errno : use(fd, s);

	close(fd);
	return err;
}

/* The contents of @pid's file, or "?". */
static const char *get(pid_t pid, const char *name)
{
	return use_file(pid, name, NULL) ? "?" : got;
}

TEST_F(file, read_and_write)
{
	pid_t me = getpid();
	unsigned int i;
	int fd;

	for (i = 0; i < 2; i++) {
		EXPECT_EQ(0, use_file(me, variant->name, variant->value[i]));
		EXPECT_STREQ(variant->want[i], got);
		EXPECT_EQ(atoi(got), prctl(variant->get, 0UL, 0UL, 0UL, 0UL));
	}
	fd = proc_open(me, variant->name);
	for (i = 0; i < ARRAY_SIZE(variant->bad); i++) {
		EXPECT_EQ(-1, write(fd, variant->bad[i], strlen(variant->bad[i])));
		EXPECT_EQ(EINVAL, errno) TH_LOG("\"%s\"", variant->bad[i]);
		EXPECT_STREQ(variant->want[1], get(me, variant->name));
	}
	close(fd);
}

/* fork(); the child becomes @uid, without capabilities, and dies with us. */
static pid_t fork_as(uid_t uid)
{
	pid_t pid = fork();

	if (pid == 0 && (setgroups(0, NULL) || setresgid(uid, uid, uid) ||
			 setresuid(uid, uid, uid) ||
			 prctl(PR_SET_DUMPABLE, 1UL, 0UL, 0UL, 0UL) ||
			 prctl(PR_SET_PDEATHSIG, SIGKILL, 0UL, 0UL, 0UL)))
		_exit(100);
	return pid;
}

/* Descriptor @fd of process @pid, taken with pidfd_getfd(). */
static int take(pid_t pid, int fd)
{
	int pidfd = syscall(__NR_pidfd_open, pid, 0), ret;

	ret = syscall(__NR_pidfd_getfd, pidfd, fd, 0);
	close(pidfd);
	return ret;
}

static void *thread(void *name)
{
	return (void *)(long)use_file(getpid(), name, "2");
}

/*
 * Two targets, this process (root) and a process of nobody's: each uses
 * its own file and the other's, and opens both.  This process takes
 * nobody's descriptors, and passes its own on to a child of another user.
 */
TEST_F(file, permissions)
{
	const char *v = variant->value[0], *name = variant->name;
	pid_t me = getpid(), target, pid;
	int *res, status, fd[3];
	pthread_t t;
	void *ret;

	if (geteuid())
		SKIP(return, "needs root, to act as other users");
	res = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(res != MAP_FAILED);
	ASSERT_EQ(0, use_file(me, name, variant->value[1]));
	target = fork_as(NOBODY);
	if (target == 0) {
		res[0] = use_file(me, name, v);
		res[1] = use_file(getpid(), name, v);
		res[2] = pthread_create(&t, NULL, thread, (void *)name) ?:
			 pthread_join(t, &ret) ?: (long)ret;
		use_file(getpid(), name, v);
		res[3] = proc_open(me, name);
		res[4] = proc_open(getpid(), name);
		raise(SIGSTOP);
		_exit(0);
	}
	ASSERT_EQ(target, waitpid(target, &status, WUNTRACED));
	EXPECT_EQ(EPERM, res[0]) TH_LOG("nobody used root's file");
	EXPECT_EQ(0, res[1]) TH_LOG("nobody could not use its own");
	EXPECT_EQ(variant->thread, res[2]) TH_LOG("a thread used its leader's file");

	fd[0] = take(target, res[3]);
	fd[1] = take(target, res[4]);
	fd[2] = proc_open(target, name);
	ASSERT_TRUE(fd[0] >= 0 && fd[1] >= 0 && fd[2] >= 0);
	EXPECT_EQ(EPERM, use(fd[0], v)) TH_LOG("root used its file through nobody's descriptor");
	EXPECT_EQ(EPERM, use(fd[1], v)) TH_LOG("root used the target's own descriptor");
	EXPECT_STREQ(variant->want[1], get(me, name));
	pid = fork_as(STRANGER);
	if (pid == 0)
		_exit(use(fd[2], variant->value[1]));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(EPERM, WEXITSTATUS(status)) TH_LOG("another user used root's descriptor");
	EXPECT_STREQ(variant->want[0], get(target, name));
	EXPECT_EQ(0, use(fd[2], variant->value[1])) TH_LOG("root used nobody's file");
	EXPECT_STREQ(variant->want[1], got);
	kill(target, SIGKILL);
	waitpid(target, NULL, 0);
	EXPECT_EQ(ESRCH, use(fd[2], v)) TH_LOG("the file of a task that has gone");
}

TEST_HARNESS_MAIN
