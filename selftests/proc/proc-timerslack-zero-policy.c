// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/<pid>/timerslack_zero_policy and /proc/<pid>/timerslack_ns: a read
 * gives the value and a newline, a valid value written with or without a
 * newline sets it, anything else fails with EINVAL, and a task that has gone
 * gives ESRCH.  A task may use its own file (timerslack_zero_policy: those of
 * its thread group) through a descriptor that it opened itself.  Any other use
 * needs CAP_SYS_NICE of the descriptor's opener, and of its user unless that is
 * the target: a descriptor passed on, even to or from the target, carries no
 * more than its opener's rights.  The permission tests need root, to act as
 * other users.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>

#include "../kselftest_harness.h"
#include "../timers/zero_sleep_policy.h"

FIXTURE(file) {
	int *res;		/* shared with child processes */
};

FIXTURE_VARIANT(file) {
	const char *name, *value[2], *want[2], *bad[4];
	int get;		/* the prctl that reads the value */
	bool thread_group;	/* a thread may use its siblings' files */
};

FIXTURE_VARIANT_ADD(file, timerslack_zero_policy) {
	.name = "timerslack_zero_policy", .get = PR_GET_TIMERSLACK_ZERO_POLICY,
	.value = { "1", "3\n" }, .want = { "1\n", "3\n" }, .thread_group = true,
	.bad = { "4", "-1", "1x", "" },
};

FIXTURE_VARIANT_ADD(file, timerslack_ns) {
	.name = "timerslack_ns", .get = PR_GET_TIMERSLACK,
	.value = { "123456", "654321\n" }, .want = { "123456\n", "654321\n" },
	.bad = { "-1", "1x", "x", "" },
};

FIXTURE_SETUP(file)
{
	self->res = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->res);
}

FIXTURE_TEARDOWN(file)
{
}

static int proc_open(pid_t pid, const char *name, int flags)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/%s", pid, name);
	return open(path, flags);
}

/* Writes @s at offset 0 or, if it is NULL, reads into @buf: 0 or an errno. */
static int rw(int fd, const char *s, char *buf)
{
	ssize_t n;

	lseek(fd, 0, SEEK_SET);
	n = s ? write(fd, s, strlen(s)) : read(fd, buf, 15);
	if (n >= 0 && !s)
		buf[n] = '\0';
	return n < 0 ? errno : s && n != (ssize_t)strlen(s) ? EIO : 0;
}

static int put(pid_t pid, const char *name, const char *s)
{
	int fd = proc_open(pid, name, O_WRONLY), err;

	if (fd < 0)
		return errno;
	err = rw(fd, s, NULL);
	close(fd);
	return err;
}

/* The contents of @pid's file, or the error of reading it. */
static const char *get(pid_t pid, const char *name, char *buf)
{
	int fd = proc_open(pid, name, O_RDONLY), err;

	err = fd < 0 ? errno : rw(fd, NULL, buf);
	if (fd >= 0)
		close(fd);
	return err ? strerror(err) : buf;
}

#define NOBODY		65534
#define STRANGER	65533

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

static int exit_status(pid_t pid)
{
	int status;

	if (pid <= 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

TEST_F(file, read_and_write)
{
	pid_t me = getpid(), pid;
	unsigned int i;
	char buf[16];
	int rfd, wfd;

	for (i = 0; i < 2; i++) {
		EXPECT_EQ(0, put(me, variant->name, variant->value[i]));
		EXPECT_STREQ(variant->want[i], get(me, variant->name, buf));
		EXPECT_EQ(atoi(variant->want[i]), prctl(variant->get, 0UL, 0UL, 0UL, 0UL));
	}
	for (i = 0; i < ARRAY_SIZE(variant->bad); i++) {
		EXPECT_EQ(EINVAL, put(me, variant->name, variant->bad[i]))
			TH_LOG("write \"%s\"", variant->bad[i]);
		EXPECT_STREQ(variant->want[1], get(me, variant->name, buf));
	}
	/* As for timerslack_ns, the file offset of a write does not matter. */
	wfd = proc_open(me, variant->name, O_WRONLY);
	ASSERT_LE(0, wfd);
	ASSERT_EQ(5, lseek(wfd, 5, SEEK_SET));
	EXPECT_EQ((ssize_t)strlen(variant->value[0]),
		  write(wfd, variant->value[0], strlen(variant->value[0])));
	EXPECT_STREQ(variant->want[0], get(me, variant->name, buf));
	close(wfd);

	/* The files of a task that has gone. */
	pid = fork();
	if (pid == 0)
		for (;;)
			pause();
	rfd = proc_open(pid, variant->name, O_RDONLY);
	wfd = proc_open(pid, variant->name, O_WRONLY);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	EXPECT_EQ(ESRCH, rw(rfd, NULL, buf));
	EXPECT_EQ(ESRCH, rw(wfd, variant->value[0], NULL));
}

static void *sibling(void *res)
{
	char task[64];

	snprintf(task, sizeof(task), "task/%d/timerslack_zero_policy", gettid());
	((int *)res)[0] = put(getpid(), "timerslack_zero_policy", "2");	/* its leader's */
	((int *)res)[1] = put(getpid(), task, "3");				/* its own */
	return NULL;
}

/*
 * Without CAP_SYS_NICE, a task may use its own file but not that of another
 * process, even of the same user; with CAP_SYS_NICE, that of any.
 */
TEST_F(file, permissions)
{
	pid_t me = getpid(), other, pid;
	int *res = self->res, fd;
	pthread_t thread;
	char buf[16];

	if (geteuid())
		SKIP(return, "needs root, to act as nobody");
	ASSERT_EQ(0, put(me, variant->name, variant->value[0]));
	other = fork_as(NOBODY);
	if (other == 0)
		for (;;)
			pause();
	pid = fork_as(NOBODY);
	if (pid == 0) {
		res[0] = put(me, variant->name, variant->value[1]);
		fd = proc_open(me, variant->name, O_RDONLY);
		res[1] = fd < 0 ? errno : rw(fd, NULL, buf);
		res[2] = put(other, variant->name, variant->value[1]);
		res[3] = put(getpid(), variant->name, variant->value[1]);
		if (variant->thread_group && !pthread_create(&thread, NULL, sibling, &res[4]))
			pthread_join(thread, NULL);
		_exit(zs_get_policy());
	}
	EXPECT_EQ(variant->thread_group ? 2 : 0, exit_status(pid)) TH_LOG("nobody's policy");
	EXPECT_EQ(EPERM, res[0]) TH_LOG("nobody wrote root's file");
	EXPECT_EQ(EPERM, res[1]) TH_LOG("nobody read root's file");
	EXPECT_EQ(EPERM, res[2]) TH_LOG("nobody wrote another process's");
	EXPECT_EQ(0, res[3]) TH_LOG("nobody could not write its own");
	EXPECT_STREQ(variant->want[0], get(me, variant->name, buf));
	if (variant->thread_group) {
		EXPECT_EQ(0, res[4]) TH_LOG("a thread could not write its leader's file");
		EXPECT_EQ(0, res[5]) TH_LOG("a thread could not write its own task file");
	}
	EXPECT_EQ(0, put(other, variant->name, variant->value[1]));
	EXPECT_STREQ(variant->want[1], get(other, variant->name, buf));
	kill(other, SIGKILL);
}

/* Sends @fd over @sock, or if it is -1 receives one. */
static int pass_fd(int sock, int fd)
{
	char c = 0, buf[CMSG_SPACE(sizeof(int))] = "";
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1, .msg_control = buf, .msg_controllen = sizeof(buf),
	};
	struct cmsghdr *cmsg = CMSG_FIRSTHDR(&msg);

	if (fd < 0)
		return recvmsg(sock, &msg, 0) == 1 && cmsg->cmsg_type == SCM_RIGHTS ?
		       *(int *)CMSG_DATA(cmsg) : -1;
	cmsg->cmsg_level = SOL_SOCKET;
	cmsg->cmsg_type = SCM_RIGHTS;
	cmsg->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cmsg), &fd, sizeof(int));
	return sendmsg(sock, &msg, 0) == 1 ? 0 : -1;
}

/*
 * A process of nobody's, the target, opens its own file and this process's,
 * and passes both descriptors here.  Through the first, this process, the
 * target of it, may neither read nor write.  The second may be used by its
 * opener only: not by a process of another user, nor by this one, which has
 * CAP_SYS_NICE but got the descriptor from a process without it.  A
 * descriptor that this process opens on the target's file works in a child
 * of root's, but not in one of another user's, which lacks CAP_SYS_NICE.
 */
TEST_F(file, passed_descriptors)
{
	pid_t me = getpid(), target, pid;
	int *res = self->res, sv[2], fd[3];	/* nobody's of our file, of its own; ours of its */
	char buf[16];
	int i;

	if (geteuid())
		SKIP(return, "needs root, to act as other users");
	ASSERT_EQ(0, put(me, variant->name, variant->value[0]));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	target = fork_as(NOBODY);
	if (target == 0) {
		fd[0] = proc_open(me, variant->name, O_RDWR);
		fd[1] = proc_open(getpid(), variant->name, O_RDWR);
		if (fd[0] < 0 || fd[1] < 0 || pass_fd(sv[1], fd[0]) || pass_fd(sv[1], fd[1]))
			_exit(1);
		/* When told to, use its own descriptor. */
		if (read(sv[1], buf, 1) != 1)
			_exit(2);
		_exit(rw(fd[1], variant->value[1], NULL) ?: rw(fd[1], NULL, buf) ?:
		      strcmp(buf, variant->want[1]) ? 3 : 0);
	}
	close(sv[1]);
	fd[0] = pass_fd(sv[0], -1);
	fd[1] = pass_fd(sv[0], -1);
	fd[2] = proc_open(target, variant->name, O_RDWR);
	ASSERT_TRUE(fd[0] >= 0 && fd[1] >= 0 && fd[2] >= 0);
	ASSERT_EQ(0, rw(fd[2], variant->value[0], NULL));

	EXPECT_EQ(EPERM, rw(fd[0], variant->value[1], NULL)) TH_LOG("wrote through nobody's");
	EXPECT_EQ(EPERM, rw(fd[0], NULL, buf)) TH_LOG("read through nobody's descriptor");
	EXPECT_STREQ(variant->want[0], get(me, variant->name, buf));

	memset(res, 0, 4 * sizeof(*res));
	pid = fork_as(STRANGER);
	if (pid == 0) {
		res[0] = rw(fd[1], variant->value[1], NULL);
		res[1] = rw(fd[1], NULL, buf);
		res[2] = rw(fd[2], variant->value[1], NULL);
		res[3] = rw(fd[2], NULL, buf);
		_exit(0);
	}
	EXPECT_EQ(0, exit_status(pid));
	EXPECT_EQ(EPERM, res[0]) TH_LOG("a stranger wrote through the target's own descriptor");
	EXPECT_EQ(EPERM, res[1]) TH_LOG("a stranger read through the target's own descriptor");
	EXPECT_EQ(EPERM, res[2]) TH_LOG("a stranger wrote through root's descriptor");
	EXPECT_EQ(EPERM, res[3]) TH_LOG("a stranger read through root's descriptor");
	EXPECT_EQ(EPERM, rw(fd[1], variant->value[1], NULL)) TH_LOG("root wrote through it");
	EXPECT_EQ(EPERM, rw(fd[1], NULL, buf)) TH_LOG("root read through the target's own");
	EXPECT_STREQ(variant->want[0], get(target, variant->name, buf));

	pid = fork();
	if (pid == 0)
		_exit(rw(fd[2], variant->value[1], NULL) ?: rw(fd[2], NULL, buf));
	EXPECT_EQ(0, exit_status(pid)) TH_LOG("root's child through root's descriptor");
	EXPECT_STREQ(variant->want[1], get(target, variant->name, buf));
	ASSERT_EQ(0, rw(fd[2], variant->value[0], NULL));

	/* The target still uses its own. */
	ASSERT_EQ(1, write(sv[0], "", 1));
	EXPECT_EQ(0, exit_status(target)) TH_LOG("the target through its own descriptor");
	for (i = 0; i < 3; i++)
		close(fd[i]);
	close(sv[0]);
}

TEST_HARNESS_MAIN
