// SPDX-License-Identifier: GPL-2.0
/*
 * Tests for /proc/<pid>/timerslack_zero_policy and
 * /proc/<pid>/task/<tid>/timerslack_zero_policy, the supervisor's view of a
 * thread's zero-length sleep policy (PR_SET_TIMERSLACK_ZERO_POLICY).
 *
 * Read: the policy in decimal and a newline.  Write: "0" to "3", with an
 * optional trailing newline, at any file offset, as for timerslack_ns;
 * anything else is EINVAL and changes nothing.  A task may always read and write the files of its own
 * thread group; another task's need CAP_SYS_NICE in that task's user
 * namespace, held by whoever opened the file (EPERM otherwise).  A task that
 * is gone gives ESRCH.  timerslack_ns follows the same opener rule.
 *
 * The series carries the contract of both files
 * (selftests/proc/proc-timerslack-zero-policy.c); this is the exhaustive
 * version, outside the series: every path, offsets, junk and faulting
 * writes, user namespaces, capabilities one by one, writes racing with
 * sleeping threads, threads that exit.
 *
 * Tests that act on other users' tasks or drop privileges need root.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <linux/capability.h>

#include "common.h"
#include "harness.h"

/*
 * The result of an access: 0 for success, an error number from read() or
 * write(), OPEN_FAILED + the error number from open(), or SHORT_WRITE.
 */
#define OPEN_FAILED		1000
#define SHORT_WRITE		-1

static const char *access_str(int res)
{
	static __thread char buf[64];

	if (res == SHORT_WRITE)
		snprintf(buf, sizeof(buf), "short write");
	else if (res >= OPEN_FAILED)
		snprintf(buf, sizeof(buf), "open failed: %s", strerror(res - OPEN_FAILED));
	else
		snprintf(buf, sizeof(buf), "%s", res ? strerror(res) : "success");
	return buf;
}

/*
 * Reads a policy file.  Returns the policy, -1 with *err set for an error,
 * or -2 when the contents are not exactly one digit and a newline.
 */
static int read_policy(const char *path, int *err)
{
	char buf[64];
	ssize_t n;
	int fd;

	*err = 0;
	fd = open(path, O_RDONLY);
	if (fd < 0) {
		*err = OPEN_FAILED + errno;
		return -1;
	}
	n = read(fd, buf, sizeof(buf));
	if (n < 0)
		*err = errno;
	close(fd);
	if (n < 0)
		return -1;
	if (n != 2 || buf[0] < '0' || buf[0] > '9' || buf[1] != '\n')
		return -2;
	return buf[0] - '0';
}

/* Writes @len bytes at @off.  Returns 0 for a full write or an access result. */
/*
 * Writes @len bytes at @off: after lseek(), or with pwrite() when @off is
 * negative (at -@off).  Returns 0 for a full write or an access result.
 */
static int write_policy_at(const char *path, const void *data, size_t len, off_t off,
			   ssize_t *written)
{
	ssize_t n = -1;
	int fd, err = 0;

	*written = -1;
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return OPEN_FAILED + errno;
	if (off < 0)
		n = pwrite(fd, data, len, -off);
	else if (!off || lseek(fd, off, SEEK_SET) == off)
		n = write(fd, data, len);
	if (n < 0)
		err = errno;
	*written = n;
	close(fd);
	return err;
}

static int write_policy(const char *path, const char *s)
{
	ssize_t n;
	int err = write_policy_at(path, s, strlen(s), 0, &n);

	if (!err && n != (ssize_t)strlen(s))
		return SHORT_WRITE;
	return err;
}

static void expect_read(struct __test_metadata *_metadata, const char *path, int want)
{
	int err, got = read_policy(path, &err);

	EXPECT_EQ(want, got)
		TH_LOG("%s: read %d (%s; -2: not \"N\\n\"), expected %d", path,
		       got, access_str(err), want);
}

#define EXPECT_READ(path, want)	expect_read(_metadata, path, want)

/* ------------------------------------------------------------------------
 * The calling task's own files
 */

static void check_format(struct __test_metadata *_metadata, const char *path, int policy)
{
	char buf[64];
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY);
	ASSERT_LE(0, fd)
		TH_LOG("open %s: %s", path, strerror(errno));
	n = read(fd, buf, sizeof(buf));
	ASSERT_EQ(2, n)
		TH_LOG("%s: read returned %zd (%s)", path, n, strerror(errno));
	EXPECT_EQ('0' + policy, buf[0]);
	EXPECT_EQ('\n', buf[1]);
	EXPECT_EQ(0, read(fd, buf, sizeof(buf)))
		TH_LOG("%s: no end of file after \"N\\n\"", path);
	/* Byte by byte, after a rewind. */
	ASSERT_EQ(0, lseek(fd, 0, SEEK_SET));
	EXPECT_EQ(1, read(fd, buf, 1));
	EXPECT_EQ('0' + policy, buf[0]);
	EXPECT_EQ(1, read(fd, buf, 1));
	EXPECT_EQ('\n', buf[0]);
	EXPECT_EQ(0, read(fd, buf, 1));
	close(fd);
}

TEST(read_format)
{
	char path[PROC_PATH_LEN];
	unsigned int p;

	for (p = 0; p < ZS_NR_POLICIES; p++) {
		SET_POLICY((int)p);
		check_format(_metadata, "/proc/self/timerslack_zero_policy", (int)p);
		check_format(_metadata, "/proc/thread-self/timerslack_zero_policy",
			     (int)p);
		policy_path(path, sizeof(path), getpid(), sys_gettid());
		check_format(_metadata, path, (int)p);
	}
}

/* Writes through the /proc file are seen by prctl, and prctl's by reads. */
static void check_own_file(struct __test_metadata *_metadata, const char *path)
{
	static const char * const writes[] = { "1", "2\n", "3", "0", "2", "3\n", "1\n", "0\n" };
	unsigned int i, p;

	for (p = 0; p < ZS_NR_POLICIES; p++) {
		SET_POLICY((int)p);
		EXPECT_READ(path, (int)p);
	}
	for (i = 0; i < ARRAY_SIZE(writes); i++) {
		int want = writes[i][0] - '0', err;

		err = write_policy(path, writes[i]);
		EXPECT_EQ(0, err)
			TH_LOG("%s: write \"%s\": %s", path, writes[i], access_str(err));
		EXPECT_EQ(want, zs_get_policy())
			TH_LOG("%s: after write \"%s\" prctl reads %d", path, writes[i],
			       zs_get_policy());
		EXPECT_READ(path, want);
	}
}

TEST(own_process_file)
{
	char path[PROC_PATH_LEN];

	check_own_file(_metadata, "/proc/self/timerslack_zero_policy");
	policy_path(path, sizeof(path), getpid(), 0);
	check_own_file(_metadata, path);
}

TEST(own_thread_file)
{
	char path[PROC_PATH_LEN];

	policy_path(path, sizeof(path), getpid(), sys_gettid());
	check_own_file(_metadata, path);
	check_own_file(_metadata, "/proc/thread-self/timerslack_zero_policy");
}

/*
 * A thread other than the leader uses its own task file; /proc/<pid>/ is
 * the leader's, and neither changes the other.
 */
struct thread_check {
	char msg[256];
};

static void *own_thread_fn(void *arg)
{
	struct thread_check *c = arg;
	char path[PROC_PATH_LEN], leader[PROC_PATH_LEN];
	int err, got;

	policy_path(path, sizeof(path), getpid(), sys_gettid());
	policy_path(leader, sizeof(leader), getpid(), 0);
	if (zs_set_policy(ZS_RETURN)) {
		snprintf(c->msg, sizeof(c->msg), "prctl: %s", strerror(errno));
		return NULL;
	}
	got = read_policy(path, &err);
	if (got != ZS_RETURN) {
		snprintf(c->msg, sizeof(c->msg), "%s: read %d (%s) after prctl RETURN",
			 path, got, access_str(err));
		return NULL;
	}
	err = write_policy(path, "2\n");
	if (err || zs_get_policy() != ZS_SCHEDULE) {
		snprintf(c->msg, sizeof(c->msg), "%s: write \"2\\n\": %s, prctl reads %d",
			 path, access_str(err), zs_get_policy());
		return NULL;
	}
	got = read_policy(leader, &err);
	if (got != ZS_FULL_SLACK)
		snprintf(c->msg, sizeof(c->msg), "%s: leader's file reads %d (%s), not 3",
			 leader, got, access_str(err));
	return NULL;
}

TEST(non_leader_thread_file)
{
	struct thread_check c = { "" };
	pthread_t t;

	SET_POLICY(ZS_FULL_SLACK);
	ASSERT_EQ(0, pthread_create(&t, NULL, own_thread_fn, &c));
	ASSERT_EQ(0, pthread_join(t, NULL));
	EXPECT_STREQ("", c.msg);
	EXPECT_EQ(ZS_FULL_SLACK, zs_get_policy())
		TH_LOG("a thread's write to its own file changed the leader");
}

/* ------------------------------------------------------------------------
 * Invalid and valid writes
 */

static const struct {
	const char *data;
	size_t len;
	const char *desc;
} bad_writes[] = {
	{ "", 0, "empty" },
	{ "4", 1, "\"4\"" },
	{ "9", 1, "\"9\"" },
	{ "-1", 2, "\"-1\"" },
	{ "-0", 2, "\"-0\"" },
	{ "+1", 2, "\"+1\"" },
	{ "01", 2, "\"01\"" },
	{ "12", 2, "\"12\"" },
	{ "1x", 2, "\"1x\"" },
	{ "1 ", 2, "\"1 \"" },
	{ " 1", 2, "\" 1\"" },
	{ "\t1", 2, "\"\\t1\"" },
	{ "0x1", 3, "\"0x1\"" },
	{ "1\n\n", 3, "\"1\\n\\n\"" },
	{ "1\r\n", 3, "\"1\\r\\n\"" },
	{ "\n", 1, "\"\\n\"" },
	{ "1\0", 2, "\"1\\0\"" },
	{ "4294967297", 10, "\"4294967297\" (2^32 + 1)" },
	{ "18446744073709551616", 20, "\"18446744073709551616\" (2^64)" },
	{ "18446744073709551617", 20, "\"18446744073709551617\" (2^64 + 1)" },
};

static const struct offset_write {
	const char *data, *desc;
	off_t off;		/* < 0: with pwrite() at -off */
	int policy;
} offset_writes[] = {
	{ "1", "\"1\" at offset 1", 1, ZS_RETURN },
	{ "2\n", "\"2\\n\" at offset 4096", 4096, ZS_SCHEDULE },
	{ "0", "\"0\" at offset 2", 2, ZS_DEFAULT },
	{ "1", "\"1\" with pwrite() at offset 1", -1, ZS_RETURN },
};

static void check_bad_writes(struct __test_metadata *_metadata, const char *path)
{
	static const int bases[] = { ZS_FULL_SLACK, ZS_SCHEDULE };
	char junk[4096], zeros[4097];
	unsigned int b, i;
	ssize_t n;
	int err;

	memset(junk, 'z', sizeof(junk));
	memset(zeros, '0', sizeof(zeros));
	zeros[sizeof(zeros) - 1] = '1';	/* "000...0001": 1 after 4096 zeros */

	for (b = 0; b < ARRAY_SIZE(bases); b++) {
		for (i = 0; i < ARRAY_SIZE(bad_writes) + 2; i++) {
			const char *data, *desc;
			size_t len;

			if (i < ARRAY_SIZE(bad_writes)) {
				data = bad_writes[i].data;
				len = bad_writes[i].len;
				desc = bad_writes[i].desc;
			} else if (i == ARRAY_SIZE(bad_writes)) {
				data = junk;
				len = sizeof(junk);
				desc = "4 KiB of junk";
			} else {
				data = zeros;
				len = sizeof(zeros);
				desc = "4096 zeros and \"1\"";
			}
			SET_POLICY(bases[b]);
			err = write_policy_at(path, data, len, 0, &n);
			EXPECT_EQ(EINVAL, err)
				TH_LOG("%s: write %s: %s (returned %zd), expected EINVAL", path,
				       desc, access_str(err), n);
			EXPECT_EQ(bases[b], zs_get_policy())
				TH_LOG("%s: write %s changed the policy from %d to %d", path, desc,
				       bases[b], zs_get_policy());
			EXPECT_READ(path, bases[b]);
		}
		/*
		 * As with timerslack_ns, the file offset of a write does not
		 * matter; seq_file refuses pwrite() with ESPIPE.
		 */
		for (i = 0; i < ARRAY_SIZE(offset_writes); i++) {
			const struct offset_write *w = &offset_writes[i];

			SET_POLICY(bases[b]);
			err = write_policy_at(path, w->data, strlen(w->data), w->off, &n);
			EXPECT_EQ(w->off < 0 ? ESPIPE : 0, err)
				TH_LOG("%s: write %s: %s (returned %zd)", path, w->desc,
				       access_str(err), n);
			EXPECT_EQ(w->off < 0 ? bases[b] : w->policy, zs_get_policy())
				TH_LOG("%s: write %s", path, w->desc);
		}
		/* A bad buffer faults, and changes nothing either. */
		SET_POLICY(bases[b]);
		err = write_policy_at(path, (void *)1, 1, 0, &n);
		EXPECT_EQ(EFAULT, err)
			TH_LOG("%s: write from (void *)1: %s", path, access_str(err));
		EXPECT_EQ(bases[b], zs_get_policy());
	}
}

TEST(bad_writes_process_file)
{
	char path[PROC_PATH_LEN];

	policy_path(path, sizeof(path), getpid(), 0);
	check_bad_writes(_metadata, path);
}

TEST(bad_writes_thread_file)
{
	char path[PROC_PATH_LEN];

	policy_path(path, sizeof(path), getpid(), sys_gettid());
	check_bad_writes(_metadata, path);
}

TEST(valid_writes_return_full_count)
{
	static const char * const writes[] = { "0", "1\n", "2", "3", "0\n", "1", "2\n", "3\n" };
	char path[PROC_PATH_LEN];
	unsigned int i, t;
	ssize_t n;
	int err;

	for (t = 0; t < 2; t++) {
		policy_path(path, sizeof(path), getpid(), t ? sys_gettid() : 0);
		for (i = 0; i < ARRAY_SIZE(writes); i++) {
			err = write_policy_at(path, writes[i], strlen(writes[i]), 0, &n);
			EXPECT_EQ(0, err)
				TH_LOG("%s: write \"%s\": %s", path, writes[i], access_str(err));
			EXPECT_EQ((ssize_t)strlen(writes[i]), n)
				TH_LOG("%s: write \"%s\" returned %zd", path, writes[i], n);
			EXPECT_EQ(writes[i][0] - '0', zs_get_policy());
		}
	}
}

/* ------------------------------------------------------------------------
 * Other tasks
 */

/*
 * A child that runs commands from a pipe: 'g' reports its policy, '0' to
 * '3' set it with prctl, 'q' (or end of file) exits.
 */
struct peer {
	pid_t pid;
	int cmd, reply;
};

static int peer_start(struct peer *p, bool drop_to_nobody)
{
	int to[2], from[2];
	char c, r;

	if (pipe(to) || pipe(from))
		return -1;
	p->pid = fork();
	if (p->pid < 0)
		return -1;
	if (p->pid == 0) {
		close(to[1]);
		close(from[0]);
		if (drop_to_nobody &&
		    (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
		     setresuid(NOBODY, NOBODY, NOBODY)))
			_exit(1);
		while (read(to[0], &c, 1) == 1 && c != 'q') {
			if (c == 'g')
				r = '0' + zs_get_policy();
			else
				r = zs_set_policy(c - '0') ? 'E' : 'k';
			if (write(from[1], &r, 1) != 1)
				_exit(1);
		}
		_exit(0);
	}
	close(to[0]);
	close(from[1]);
	p->cmd = to[1];
	p->reply = from[0];
	return 0;
}

static char peer_cmd(struct peer *p, char c)
{
	char r = '?';

	if (write(p->cmd, &c, 1) != 1 || read(p->reply, &r, 1) != 1)
		return '?';
	return r;
}

/* Ends the child and reaps it; returns its exit status. */
static int peer_stop(struct peer *p)
{
	int status;

	close(p->cmd);
	close(p->reply);
	if (waitpid(p->pid, &status, 0) != p->pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* With CAP_SYS_NICE, another user's process can be read and written. */
TEST(other_process_with_cap_sys_nice)
{
	char path[PROC_PATH_LEN], tpath[PROC_PATH_LEN];
	struct peer p;
	int err;

	if (!is_root())
		SKIP(return, "needs CAP_SYS_NICE (root)");
	ASSERT_EQ(0, peer_start(&p, true));
	ASSERT_EQ('0', peer_cmd(&p, 'g'))
		TH_LOG("the child could not start as nobody with the default policy");
	policy_path(path, sizeof(path), p.pid, 0);
	policy_path(tpath, sizeof(tpath), p.pid, p.pid);

	err = write_policy(path, "1");
	EXPECT_EQ(0, err)
		TH_LOG("%s: write \"1\": %s", path, access_str(err));
	EXPECT_EQ('1', peer_cmd(&p, 'g'));
	EXPECT_READ(tpath, ZS_RETURN);

	err = write_policy(tpath, "2\n");
	EXPECT_EQ(0, err)
		TH_LOG("%s: write \"2\\n\": %s", tpath, access_str(err));
	EXPECT_EQ('2', peer_cmd(&p, 'g'));
	EXPECT_READ(path, ZS_SCHEDULE);

	err = write_policy(tpath, "3");
	EXPECT_EQ(0, err);
	EXPECT_EQ('3', peer_cmd(&p, 'g'));

	/* The child's own prctl shows through both files. */
	EXPECT_EQ('k', peer_cmd(&p, '0'));
	EXPECT_READ(path, ZS_DEFAULT);
	EXPECT_READ(tpath, ZS_DEFAULT);

	EXPECT_EQ(ZS_DEFAULT, zs_get_policy())
		TH_LOG("writing another process's file changed the writer");
	EXPECT_EQ(0, peer_stop(&p));
}

/*
 * Without CAP_SYS_NICE another task's file can be neither read nor written,
 * and nothing changes; the task's own file still can.
 */
enum unpriv_mode {
	DROP_TO_NOBODY,		/* another uid, no capabilities */
	DROP_CAP_SYS_NICE,	/* still uid 0, every capability but CAP_SYS_NICE */
	NOBODY_WITH_CAP,	/* another uid with CAP_SYS_NICE only: allowed */
};

struct unpriv_result {
	int setup_err;
	int read_proc, write_proc;	/* the target's /proc/<pid> file */
	int read_task, write_task;	/* its /proc/<pid>/task/<tid> file */
	int read_own, write_own, own_after;
	int read_peer, write_peer;	/* a task of the same uid (DROP_TO_NOBODY) */
};

/* Keeps only @cap, in the permitted and effective sets. */
static int capset_only(int cap)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
	int i;

	if (syscall(SYS_capget, &hdr, data))
		return -1;
	for (i = 0; i < _LINUX_CAPABILITY_U32S_3; i++) {
		__u32 mask = CAP_TO_INDEX(cap) == i ? CAP_TO_MASK(cap) : 0;

		data[i].effective = data[i].permitted & mask;
		data[i].permitted &= mask;
		data[i].inheritable &= mask;
	}
	return syscall(SYS_capset, &hdr, data);
}

static int drop_one_cap(int cap)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

	if (syscall(SYS_capget, &hdr, data))
		return -1;
	data[CAP_TO_INDEX(cap)].effective &= ~CAP_TO_MASK(cap);
	data[CAP_TO_INDEX(cap)].permitted &= ~CAP_TO_MASK(cap);
	data[CAP_TO_INDEX(cap)].inheritable &= ~CAP_TO_MASK(cap);
	return syscall(SYS_capset, &hdr, data);
}

static int try_read(const char *path)
{
	int err;

	return read_policy(path, &err) >= 0 ? 0 : err ?: EPROTO;
}

static int try_write(const char *path, const char *s)
{
	return write_policy(path, s);
}

static void unpriv_child(enum unpriv_mode mode, pid_t target, struct unpriv_result *r)
{
	char path[PROC_PATH_LEN], tpath[PROC_PATH_LEN], own[PROC_PATH_LEN];
	struct peer peer;

	switch (mode) {
	case DROP_TO_NOBODY:
		if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
		    setresuid(NOBODY, NOBODY, NOBODY))
			r->setup_err = errno;
		break;
	case DROP_CAP_SYS_NICE:
		if (drop_one_cap(CAP_SYS_NICE))
			r->setup_err = errno;
		break;
	case NOBODY_WITH_CAP:
		if (prctl(PR_SET_KEEPCAPS, 1UL, 0UL, 0UL, 0UL) || setgroups(0, NULL) ||
		    setresgid(NOBODY, NOBODY, NOBODY) || setresuid(NOBODY, NOBODY, NOBODY) ||
		    capset_only(CAP_SYS_NICE))
			r->setup_err = errno;
		break;
	}
	if (r->setup_err)
		return;

	policy_path(path, sizeof(path), target, 0);
	policy_path(tpath, sizeof(tpath), target, target);
	policy_path(own, sizeof(own), getpid(), 0);
	r->read_proc = try_read(path);
	r->write_proc = try_write(path, "1");
	r->read_task = try_read(tpath);
	r->write_task = try_write(tpath, "1\n");
	r->read_own = try_read(own);
	r->write_own = try_write(own, "0");
	r->own_after = zs_get_policy();

	if (mode == DROP_TO_NOBODY) {
		/* CAP_SYS_NICE is needed even for a task of the same uid. */
		if (peer_start(&peer, false) || peer_cmd(&peer, 'g') != '0') {
			r->setup_err = EIO;
			return;
		}
		policy_path(path, sizeof(path), peer.pid, 0);
		r->read_peer = try_read(path);
		r->write_peer = try_write(path, "2");
		if (peer_cmd(&peer, 'g') != '0')
			r->write_peer = -1;	/* changed after all */
		peer_stop(&peer);
	}
}

static void unpriv_test(struct __test_metadata *_metadata, enum unpriv_mode mode)
{
	struct unpriv_result *r;
	int status, want;
	pid_t pid;

	if (!is_root())
		SKIP(return, "needs root to drop privileges");
	r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, r);
	SET_POLICY(ZS_SCHEDULE);

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		unpriv_child(mode, getppid(), r);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, r->setup_err)
		TH_LOG("setting up the child: %s", strerror(r->setup_err));

	want = mode == NOBODY_WITH_CAP ? 0 : EPERM;
	EXPECT_EQ(want, r->read_proc)
		TH_LOG("read of /proc/<pid>: %s", access_str(r->read_proc));
	EXPECT_EQ(want, r->write_proc)
		TH_LOG("write of /proc/<pid>: %s", access_str(r->write_proc));
	EXPECT_EQ(want, r->read_task)
		TH_LOG("read of /proc/<pid>/task/<tid>: %s", access_str(r->read_task));
	EXPECT_EQ(want, r->write_task)
		TH_LOG("write of /proc/<pid>/task/<tid>: %s", access_str(r->write_task));
	EXPECT_EQ(mode == NOBODY_WITH_CAP ? ZS_RETURN : ZS_SCHEDULE, zs_get_policy())
		TH_LOG("the target's policy is %d after the child's writes", zs_get_policy());

	/* A task may always read and write its own file. */
	EXPECT_EQ(0, r->read_own)
		TH_LOG("read own file: %s", access_str(r->read_own));
	EXPECT_EQ(0, r->write_own)
		TH_LOG("write own file: %s", access_str(r->write_own));
	EXPECT_EQ(ZS_DEFAULT, r->own_after)
		TH_LOG("own policy after writing \"0\": %d", r->own_after);

	if (mode == DROP_TO_NOBODY) {
		EXPECT_EQ(EPERM, r->read_peer)
			TH_LOG("read of a same-uid task: %s", access_str(r->read_peer));
		EXPECT_EQ(EPERM, r->write_peer)
			TH_LOG("write of a same-uid task: %s", r->write_peer < 0 ?
			       "policy changed" : access_str(r->write_peer));
	}
	munmap(r, sizeof(*r));
}

TEST(other_process_as_nobody)
{
	unpriv_test(_metadata, DROP_TO_NOBODY);
}

TEST(other_process_without_cap_sys_nice)
{
	unpriv_test(_metadata, DROP_CAP_SYS_NICE);
}

TEST(other_process_as_nobody_with_cap_sys_nice)
{
	unpriv_test(_metadata, NOBODY_WITH_CAP);
}

/*
 * The files of the threads of one's own process can be read and written
 * without privilege, and each holds one thread's policy: the leader writes
 * a sibling's, the sibling writes the leader's.
 */
struct sibling {
	pthread_barrier_t b;
	pid_t tid;
	int seen_before, seen_after;	/* the sibling's policy */
	int write_leader, read_leader;	/* its access to the leader's file */
};

static void *sibling_fn(void *arg)
{
	struct sibling *s = arg;
	char leader[PROC_PATH_LEN];
	int err;

	s->tid = sys_gettid();
	pthread_barrier_wait(&s->b);	/* 1: started */
	pthread_barrier_wait(&s->b);	/* 2: the leader has written our file */
	s->seen_before = zs_get_policy();
	policy_path(leader, sizeof(leader), getpid(), 0);
	s->write_leader = write_policy(leader, "2\n");
	if (read_policy(leader, &err) != ZS_SCHEDULE)
		s->read_leader = err ?: EPROTO;
	s->seen_after = zs_get_policy();
	return NULL;
}

FIXTURE(sibling) {
};

FIXTURE_VARIANT(sibling) {
	enum unpriv_mode mode;
	bool as_is;
};

FIXTURE_VARIANT_ADD(sibling, as_is) {
	.as_is = true,
};

FIXTURE_VARIANT_ADD(sibling, nobody) {
	.mode = DROP_TO_NOBODY,
};

FIXTURE_VARIANT_ADD(sibling, without_cap_sys_nice) {
	.mode = DROP_CAP_SYS_NICE,
};

FIXTURE_SETUP(sibling)
{
}

FIXTURE_TEARDOWN(sibling)
{
}

TEST_F(sibling, thread_files)
{
	struct sibling s = { .seen_before = -1, .seen_after = -1 };
	char tpath[PROC_PATH_LEN], path[PROC_PATH_LEN];
	pthread_t t;
	int err;

	if (!variant->as_is) {
		if (!is_root())
			SKIP(return, "needs root to drop privileges");
		err = variant->mode == DROP_TO_NOBODY ? drop_to_nobody() :
			drop_one_cap(CAP_SYS_NICE);
		ASSERT_EQ(0, err);
	}
	SET_POLICY(ZS_DEFAULT);
	ASSERT_EQ(0, pthread_barrier_init(&s.b, NULL, 2));
	ASSERT_EQ(0, pthread_create(&t, NULL, sibling_fn, &s));
	pthread_barrier_wait(&s.b);
	policy_path(tpath, sizeof(tpath), getpid(), s.tid);
	policy_path(path, sizeof(path), getpid(), 0);

	EXPECT_READ(tpath, ZS_DEFAULT);
	err = write_policy(tpath, "1");
	EXPECT_EQ(0, err)
		TH_LOG("%s: %s", tpath, access_str(err));
	EXPECT_READ(tpath, ZS_RETURN);
	EXPECT_EQ(ZS_DEFAULT, zs_get_policy())
		TH_LOG("writing a sibling's file changed the writer");
	pthread_barrier_wait(&s.b);
	ASSERT_EQ(0, pthread_join(t, NULL));
	pthread_barrier_destroy(&s.b);

	EXPECT_EQ(ZS_RETURN, s.seen_before);
	EXPECT_EQ(0, s.write_leader)
		TH_LOG("a thread's write of its leader's file: %s", access_str(s.write_leader));
	EXPECT_EQ(0, s.read_leader)
		TH_LOG("a thread's read of its leader's file: %s", access_str(s.read_leader));
	EXPECT_EQ(ZS_SCHEDULE, zs_get_policy());
	EXPECT_EQ(ZS_RETURN, s.seen_after)
		TH_LOG("writing the leader's /proc/<pid> file changed another thread");
}

/* ------------------------------------------------------------------------
 * Credentials: whose, and in which user namespace
 */

/*
 * CAP_SYS_NICE in a user namespace covers the tasks in it, not those
 * outside: a process that made its own user namespace may change a child
 * of its own, not its parent.
 */
struct userns_result {
	int setup_err;
	int write_inside, child_after;
	int write_outside, read_outside;
};

static void userns_child(struct userns_result *r)
{
	char path[PROC_PATH_LEN];
	struct peer inside;

	if (unshare(CLONE_NEWUSER)) {
		r->setup_err = errno;
		return;
	}
	if (peer_start(&inside, false) || peer_cmd(&inside, 'g') != '0' + ZS_SCHEDULE) {
		r->setup_err = EIO;
		return;
	}
	policy_path(path, sizeof(path), inside.pid, 0);
	r->write_inside = try_write(path, "1");
	r->child_after = peer_cmd(&inside, 'g') - '0';
	peer_stop(&inside);

	policy_path(path, sizeof(path), getppid(), 0);
	r->write_outside = try_write(path, "1");
	r->read_outside = try_read(path);
}

TEST(user_namespace)
{
	struct userns_result *r;
	int status;
	pid_t pid;

	if (access("/proc/self/ns/user", F_OK))
		SKIP(return, "no user namespaces (CONFIG_USER_NS)");
	r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, r);
	SET_POLICY(ZS_SCHEDULE);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		userns_child(r);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, r->setup_err)
		TH_LOG("unshare(CLONE_NEWUSER) and a child in it: %s", strerror(r->setup_err));
	EXPECT_EQ(0, r->write_inside)
		TH_LOG("write of a task inside the namespace: %s", access_str(r->write_inside));
	EXPECT_EQ(ZS_RETURN, r->child_after);
	EXPECT_EQ(EPERM, r->write_outside)
		TH_LOG("write of the parent, outside: %s", access_str(r->write_outside));
	EXPECT_EQ(EPERM, r->read_outside)
		TH_LOG("read of the parent, outside: %s", access_str(r->read_outside));
	EXPECT_EQ(ZS_SCHEDULE, zs_get_policy())
		TH_LOG("a task in a child user namespace changed its parent");
	munmap(r, sizeof(*r));
}

/*
 * A descriptor opened without privilege grants nothing: nobody opens the
 * file of a root process and passes the descriptor over a unix socket to a
 * root process, whose write fails with EPERM and changes nothing.  Both for
 * timerslack_zero_policy and timerslack_ns.
 */
static int send_fd(int sock, int fd, int err)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = &err, .iov_len = sizeof(err) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cmsg;

	if (fd >= 0) {
		msg.msg_control = cbuf;
		msg.msg_controllen = sizeof(cbuf);
		cmsg = CMSG_FIRSTHDR(&msg);
		cmsg->cmsg_level = SOL_SOCKET;
		cmsg->cmsg_type = SCM_RIGHTS;
		cmsg->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cmsg), &fd, sizeof(int));
	}
	return sendmsg(sock, &msg, 0) == sizeof(err) ? 0 : -1;
}

/* Returns the descriptor, or -1 with *err the opener's error number. */
static int recv_fd(int sock, int *err)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = err, .iov_len = sizeof(*err) };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cmsg;
	int fd = -1;

	*err = EIO;
	if (recvmsg(sock, &msg, 0) != sizeof(*err))
		return -1;
	cmsg = CMSG_FIRSTHDR(&msg);
	if (cmsg && cmsg->cmsg_level == SOL_SOCKET && cmsg->cmsg_type == SCM_RIGHTS)
		memcpy(&fd, CMSG_DATA(cmsg), sizeof(int));
	return fd;
}

static long read_long(const char *path)
{
	char buf[32] = "";
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	return n > 0 ? strtol(buf, NULL, 10) : -1;
}

static void passed_fd_test(struct __test_metadata *_metadata, const char *file,
			   const char *value)
{
	char path[PROC_PATH_LEN + 16];
	int sv[2], fd, err, status;
	long before;
	struct peer target;
	pid_t opener;
	ssize_t n;

	if (!is_root())
		SKIP(return, "needs root to run a process as nobody");
	ASSERT_EQ(0, peer_start(&target, false));
	ASSERT_EQ('0', peer_cmd(&target, 'g'));
	snprintf(path, sizeof(path), "/proc/%d/%s", target.pid, file);
	before = read_long(path);
	ASSERT_LE(0, before);
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));

	opener = fork();
	ASSERT_LE(0, opener);
	if (opener == 0) {
		close(sv[0]);
		if (drop_to_nobody())
			_exit(1);
		fd = open(path, O_WRONLY);
		_exit(send_fd(sv[1], fd, fd < 0 ? errno : 0) ? 2 : 0);
	}
	close(sv[1]);
	fd = recv_fd(sv[0], &err);
	close(sv[0]);
	ASSERT_EQ(opener, waitpid(opener, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	if (fd < 0) {
		/* Refused at open(): the descriptor does not exist to be passed. */
		ksft_print_msg("%s: nobody's open() failed: %s\n", file, strerror(err));
		EXPECT_TRUE(err == EPERM || err == EACCES);
	} else {
		errno = 0;
		n = write(fd, value, strlen(value));
		EXPECT_EQ(-1, n)
			TH_LOG("%s: root's write through nobody's descriptor succeeded", file);
		EXPECT_EQ(EPERM, errno)
			TH_LOG("%s: root's write through nobody's descriptor: %s", file,
			       strerror(errno));
		close(fd);
	}
	EXPECT_EQ(before, read_long(path))
		TH_LOG("%s changed from %ld to %ld", file, before, read_long(path));
	EXPECT_EQ('0', peer_cmd(&target, 'g'));

	/* The same write through root's own descriptor does change it. */
	fd = open(path, O_WRONLY);
	ASSERT_LE(0, fd);
	EXPECT_EQ((ssize_t)strlen(value), write(fd, value, strlen(value)))
		TH_LOG("%s: root's own write: %s", file, strerror(errno));
	close(fd);
	EXPECT_NE(before, read_long(path));
	EXPECT_EQ(0, peer_stop(&target));
}

TEST(passed_descriptor_policy)
{
	passed_fd_test(_metadata, "timerslack_zero_policy", "1");
}

TEST(passed_descriptor_timerslack_ns)
{
	passed_fd_test(_metadata, "timerslack_ns", "123456");
}

/* ------------------------------------------------------------------------
 * Writes racing with sleeps
 */

/*
 * Another process writes the files of a process whose two threads loop on
 * sleep(0) and read their policy after each: they only ever see 0 to 3,
 * and at the end each has the last value written to its file.
 */
#define RACE_WRITES		3000
#define RACE_NS			(2 * NSEC_PER_SEC)

struct race_target {
	pid_t tid[2];
	unsigned long ready, stop;
	long loops[2], bad[2];
	int final[2];
};

static void race_loop(struct race_target *r, int i)
{
	long loops = 0, bad = 0;
	int p;

	r->tid[i] = sys_gettid();
	__atomic_add_fetch(&r->ready, 1, __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&r->stop, __ATOMIC_SEQ_CST)) {
		sleep(0);
		p = zs_get_policy();
		bad += p < 0 || p >= ZS_NR_POLICIES;
		loops++;
	}
	r->loops[i] = loops;
	r->bad[i] = bad;
	r->final[i] = zs_get_policy();
}

static void *race_thread(void *arg)
{
	race_loop(arg, 1);
	return NULL;
}

TEST(writes_race_with_sleep_loop)
{
	struct race_target *r;
	char path[2][PROC_PATH_LEN];
	int last[2] = { 0, 0 }, i, t, err = 0, status;
	int64_t end;
	pthread_t th;
	pid_t pid;

	if (!is_root())
		SKIP(return, "needs CAP_SYS_NICE (root)");
	r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, r);
	memset(r, 0, sizeof(*r));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (pthread_create(&th, NULL, race_thread, r))
			_exit(1);
		race_loop(r, 0);
		pthread_join(th, NULL);
		_exit(0);
	}
	for (i = 0; i < 5000 && __atomic_load_n(&r->ready, __ATOMIC_SEQ_CST) < 2; i++)
		usleep(1000);
	ASSERT_EQ(2UL, r->ready);
	policy_path(path[0], sizeof(path[0]), pid, 0);
	policy_path(path[1], sizeof(path[1]), pid, r->tid[1]);
	end = zs_now(CLOCK_MONOTONIC) + RACE_NS;
	for (i = 0; i < RACE_WRITES && zs_now(CLOCK_MONOTONIC) < end && !err; i++) {
		char v[3] = { '0' + (i * 7 + 1) % ZS_NR_POLICIES, '\n', '\0' };

		t = i & 1;
		if (i % 5 == 0)
			v[1] = '\0';
		err = write_policy(path[t], v);
		last[t] = v[0] - '0';
	}
	__atomic_store_n(&r->stop, 1, __ATOMIC_SEQ_CST);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ksft_print_msg("%d writes; the threads slept %ld and %ld times\n", i,
		       r->loops[0], r->loops[1]);
	EXPECT_EQ(0, err)
		TH_LOG("write %d: %s", i, access_str(err));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	for (t = 0; t < 2; t++) {
		EXPECT_EQ(0, r->bad[t])
			TH_LOG("thread %d read a policy out of range %ld times", t, r->bad[t]);
		EXPECT_EQ(last[t], r->final[t])
			TH_LOG("thread %d: last written %d, has %d", t, last[t], r->final[t]);
	}
	munmap(r, sizeof(*r));
}

/* ------------------------------------------------------------------------
 * Tasks that are gone
 */

static void expect_esrch(struct __test_metadata *_metadata, int rfd, int rfd_used,
			 int wfd, const char *what)
{
	char buf[16];

	errno = 0;
	EXPECT_EQ(-1, read(rfd, buf, sizeof(buf)))
		TH_LOG("%s: read after exit succeeded", what);
	EXPECT_EQ(ESRCH, errno)
		TH_LOG("%s: read after exit: %s", what, strerror(errno));
	ASSERT_EQ(0, lseek(rfd_used, 0, SEEK_SET));
	errno = 0;
	EXPECT_EQ(-1, read(rfd_used, buf, sizeof(buf)))
		TH_LOG("%s: read (again) after exit succeeded", what);
	EXPECT_EQ(ESRCH, errno)
		TH_LOG("%s: read (again) after exit: %s", what, strerror(errno));
	errno = 0;
	EXPECT_EQ(-1, write(wfd, "1", 1))
		TH_LOG("%s: write after exit succeeded", what);
	EXPECT_EQ(ESRCH, errno)
		TH_LOG("%s: write after exit: %s", what, strerror(errno));
}

TEST(esrch_after_process_exit)
{
	char path[PROC_PATH_LEN], buf[16];
	int rfd[2], used[2], wfd[2], i;
	struct peer p;

	ASSERT_EQ(0, peer_start(&p, false));
	ASSERT_EQ('k', peer_cmd(&p, '1'));
	for (i = 0; i < 2; i++) {
		policy_path(path, sizeof(path), p.pid, i ? p.pid : 0);
		rfd[i] = open(path, O_RDONLY);
		used[i] = open(path, O_RDONLY);
		wfd[i] = open(path, O_WRONLY);
		ASSERT_LE(0, rfd[i]);
		ASSERT_LE(0, used[i]);
		ASSERT_LE(0, wfd[i]);
		ASSERT_EQ(2, read(used[i], buf, sizeof(buf)));
		EXPECT_EQ('1', buf[0]);
	}
	/* Exit and reap: the pid is released. */
	ASSERT_EQ(0, peer_stop(&p));

	for (i = 0; i < 2; i++) {
		expect_esrch(_metadata, rfd[i], used[i], wfd[i],
			     i ? "/proc/<pid>/task/<tid>" : "/proc/<pid>");
		close(rfd[i]);
		close(used[i]);
		close(wfd[i]);
	}
	policy_path(path, sizeof(path), p.pid, 0);
	EXPECT_EQ(-1, open(path, O_RDONLY));
	EXPECT_EQ(ENOENT, errno);
}

static void *exiting_thread(void *arg)
{
	*(pid_t *)arg = sys_gettid();
	return NULL;
}

struct exit_wait {
	pid_t tid;
	pthread_barrier_t b;
};

static void *waiting_thread(void *arg)
{
	struct exit_wait *w = arg;

	w->tid = sys_gettid();
	pthread_barrier_wait(&w->b);	/* 1: main may open our files */
	pthread_barrier_wait(&w->b);	/* 2: main has opened them */
	return NULL;
}

TEST(esrch_after_thread_exit)
{
	struct exit_wait w = { 0 };
	char path[PROC_PATH_LEN], dir[PROC_PATH_LEN], buf[16];
	int rfd, used, wfd, i;
	ssize_t n;
	struct stat st;
	pthread_t t;

	ASSERT_EQ(0, pthread_barrier_init(&w.b, NULL, 2));
	ASSERT_EQ(0, pthread_create(&t, NULL, waiting_thread, &w));
	pthread_barrier_wait(&w.b);
	policy_path(path, sizeof(path), getpid(), w.tid);
	rfd = open(path, O_RDONLY);
	used = open(path, O_RDONLY);
	wfd = open(path, O_WRONLY);
	n = read(used, buf, sizeof(buf));	/* while the thread is alive */
	pthread_barrier_wait(&w.b);
	ASSERT_LE(0, rfd);
	ASSERT_LE(0, used);
	ASSERT_LE(0, wfd);
	ASSERT_EQ(2, n)
		TH_LOG("%s: read while alive: %s", path, strerror(errno));
	ASSERT_EQ(0, pthread_join(t, NULL));
	pthread_barrier_destroy(&w.b);

	/* The kernel releases the thread shortly after pthread_join() returns. */
	snprintf(dir, sizeof(dir), "/proc/%d/task/%d", getpid(), w.tid);
	for (i = 0; i < 2000 && !stat(dir, &st); i++)
		usleep(1000);
	ASSERT_NE(0, stat(dir, &st))
		TH_LOG("%s still exists 2 s after the thread exited", dir);

	expect_esrch(_metadata, rfd, used, wfd, "/proc/<pid>/task/<tid>");
	close(rfd);
	close(used);
	close(wfd);

	/* A thread that has already gone cannot be opened. */
	{
		pid_t gone = 0;

		ASSERT_EQ(0, pthread_create(&t, NULL, exiting_thread, &gone));
		ASSERT_EQ(0, pthread_join(t, NULL));
		snprintf(dir, sizeof(dir), "/proc/%d/task/%d", getpid(), gone);
		for (i = 0; i < 2000 && !stat(dir, &st); i++)
			usleep(1000);
		policy_path(path, sizeof(path), getpid(), gone);
		EXPECT_EQ(-1, open(path, O_RDONLY));
		EXPECT_EQ(ENOENT, errno);
	}
}

TEST_HARNESS_MAIN
