// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Tests of libzerosleep's /proc code and errno mapping, TAP on stdout.
 *
 * The library source is compiled into this program with its two hooks
 * pointed at a fake kernel that has the feature (a prctl() stand-in) and at
 * a fake /proc tree under $TMPDIR.  That reaches paths the real kernels
 * cannot show: a kernel with the prctl but without the /proc file, /proc not
 * mounted, an answer that is not "N\n", and it counts how often the kernel
 * is asked.  It needs no particular kernel and runs the same everywhere.
 */
#include <limits.h>
#include <stdarg.h>

static char fake_root[PATH_MAX];
static int fake_policy, fake_get_calls, fake_set_calls;
/* Set to act as a kernel whose SET takes no flags (the series' v1). */
static int fake_no_flags, fake_all_threads;

static int fake_prctl(int option, unsigned long arg2, unsigned long arg3,
		      unsigned long arg4, unsigned long arg5);

#define ZS_PROC_ROOT	fake_root
#define zs_prctl	fake_prctl
#include "../src/zerosleep.c"

#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "tap.h"

/* Behaves as the patched kernel's prctl() does for these two options. */
static int fake_prctl(int option, unsigned long arg2, unsigned long arg3,
		      unsigned long arg4, unsigned long arg5)
{
	if (option == PR_GET_TIMERSLACK_ZERO_POLICY) {
		fake_get_calls++;
		if (arg2 || arg3 || arg4 || arg5)
			return fail(EINVAL);
		return fake_policy;
	}
	if (option == PR_SET_TIMERSLACK_ZERO_POLICY) {
		fake_set_calls++;
		if (arg2 > 3 || arg4 || arg5)
			return fail(EINVAL);
		if (arg3 & ~(unsigned long)PR_TIMERSLACK_ZERO_ALL_THREADS ||
		    (arg3 && fake_no_flags))
			return fail(EINVAL);
		fake_policy = (int)arg2;
		fake_all_threads = arg3 != 0;
		return 0;
	}
	return fail(EINVAL);
}

static char base[PATH_MAX];

static void __attribute__((format(printf, 2, 3)))
make_path(char *buf, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(buf, PATH_MAX, "%s/", base);
	va_start(ap, fmt);
	vsnprintf(buf + n, (size_t)(PATH_MAX - n), fmt, ap);
	va_end(ap);
}

static int make_dir(const char *rel)
{
	char path[PATH_MAX], *p;

	make_path(path, "%s", rel);
	for (p = path + strlen(base) + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0755) && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(path, 0755) && errno != EEXIST ? -1 : 0;
}

/* Put @len bytes of @content into <base>/proc/<tid>/task/<tid>/<file>. */
static int put_file(pid_t tid, const char *content, size_t len)
{
	char dir[PATH_MAX], path[PATH_MAX];
	ssize_t n;
	int fd;

	snprintf(dir, sizeof(dir), "proc/%d/task/%d", (int)tid, (int)tid);
	if (make_dir(dir))
		return -1;
	make_path(path, "%s/" ZS_PROC_FILE, dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	n = write(fd, content, len);
	close(fd);
	return n == (ssize_t)len ? 0 : -1;
}

/* The content of a tid's fake file, or "" if there is none. */
static const char *file_content(pid_t tid)
{
	static char buf[64];
	char path[PATH_MAX];
	ssize_t n;
	int fd;

	make_path(path, "proc/%d/task/%d/" ZS_PROC_FILE, (int)tid, (int)tid);
	buf[0] = '\0';
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return buf;
	n = read(fd, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	close(fd);
	return buf;
}

static int remove_tree(const char *path)
{
	char child[PATH_MAX];
	struct dirent *d;
	struct stat st;
	DIR *dir;

	if (lstat(path, &st))
		return -1;
	if (!S_ISDIR(st.st_mode))
		return unlink(path);
	dir = opendir(path);
	if (!dir)
		return -1;
	while ((d = readdir(dir))) {
		if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
			continue;
		snprintf(child, sizeof(child), "%s/%s", path, d->d_name);
		remove_tree(child);
	}
	closedir(dir);
	return rmdir(path);
}

static void test_probe_once(void)
{
	int i, ret, calls;

	for (i = 0; i < 5; i++)
		ret = zerosleep_is_supported();
	ok(ret == 1 && fake_get_calls == 1,
	   "the probe asks the kernel once and caches a yes");
	ok(zerosleep_set_policy(ZEROSLEEP_RETURN) == 0 && fake_policy == 1 &&
	   zerosleep_get_policy() == 1,
	   "set and get go to PR_[GS]ET_TIMERSLACK_ZERO_POLICY");
	ok(zerosleep_set_policy(ZEROSLEEP_FULL_SLACK) == 0 && fake_policy == 3 &&
	   !fake_all_threads && zerosleep_get_policy() == 3,
	   "zerosleep_set_policy(ZEROSLEEP_FULL_SLACK) passes 3, no flag");
	calls = fake_set_calls;
	errno = 0;
	ret = zerosleep_set_policy(4);
	ok_fail(ret, errno, EINVAL, "zerosleep_set_policy(4)");
	errno = 0;
	ret = zerosleep_set_policy(-1);
	ok_fail(ret, errno, EINVAL, "zerosleep_set_policy(-1)");
	ok(fake_set_calls == calls && fake_policy == 3,
	   "a bad policy never reaches the kernel");
}

static void test_process_policy(void)
{
	int calls, ret;

	ok(zerosleep_set_process_policy(ZEROSLEEP_SCHEDULE) == 0 &&
	   fake_policy == 2 && fake_all_threads,
	   "zerosleep_set_process_policy(2) passes PR_TIMERSLACK_ZERO_ALL_THREADS");
	ok(zerosleep_set_process_policy(ZEROSLEEP_DEFAULT) == 0 &&
	   fake_policy == 0 && fake_all_threads,
	   "zerosleep_set_process_policy(0) as well");
	calls = fake_set_calls;
	errno = 0;
	ret = zerosleep_set_process_policy(4);
	ok_fail(ret, errno, EINVAL, "zerosleep_set_process_policy(4)");
	ok(fake_set_calls == calls, "and the kernel was not asked");

	fake_no_flags = 1;
	errno = 0;
	ret = zerosleep_set_process_policy(ZEROSLEEP_RETURN);
	ok_fail(ret, errno, ENOTSUP,
		"zerosleep_set_process_policy() on a kernel without the flag");
	ok(fake_policy == 0, "and nothing changed");
	fake_no_flags = 0;
}

static void test_read(void)
{
	static const struct {
		const char *content;
		int want;	/* the policy, or -errno */
	} cases[] = {
		{ "0\n", 0 }, { "1\n", 1 }, { "2\n", 2 }, { "3\n", 3 },
		{ "2", 2 },		/* no newline */
		{ "7\n", 7 },		/* a later kernel's policy passes through */
		{ "2147483647\n", INT_MAX },
		{ "", -EIO }, { "\n", -EIO }, { "x\n", -EIO }, { "1x\n", -EIO },
		{ " 1\n", -EIO }, { "-1\n", -EIO }, { "1\n\n", -EIO },
		{ "0x1\n", -EIO }, { "2147483648\n", -EIO },
		{ "99999999999999999999\n", -EIO },
		{ "0000000000000000000000000000001\n", -EIO },	/* 32 bytes */
	};
	char esc[64];
	size_t i, j, n;
	int ret;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		/* Describe the content on one line. */
		for (j = n = 0; cases[i].content[j] && n < sizeof(esc) - 3; j++) {
			if (cases[i].content[j] == '\n') {
				esc[n++] = '\\';
				esc[n++] = 'n';
			} else {
				esc[n++] = cases[i].content[j];
			}
		}
		esc[n] = '\0';

		if (put_file(100, cases[i].content, strlen(cases[i].content))) {
			ok(0, "write the fake file: %s", strerror(errno));
			continue;
		}
		errno = 0;
		ret = zerosleep_get_tid_policy(100);
		if (cases[i].want >= 0)
			ok(ret == cases[i].want, "\"%s\" reads as %d", esc,
			   cases[i].want);
		else
			ok_fail(ret, errno, -cases[i].want, "\"%s\"", esc);
	}
}

static void test_write(void)
{
	int policy, ret;

	for (policy = 3; policy >= 0; policy--) {
		put_file(100, "1\n", 2);
		ok(zerosleep_set_tid_policy(100, policy) == 0 &&
		   file_content(100)[0] == '0' + policy &&
		   strcmp(file_content(100) + 1, "\n") == 0,
		   "zerosleep_set_tid_policy(100, %d) writes \"%d\\n\"", policy,
		   policy);
	}
	put_file(100, "1\n", 2);
	errno = 0;
	ret = zerosleep_set_tid_policy(100, 4);
	ok_fail(ret, errno, EINVAL, "zerosleep_set_tid_policy(100, 4)");
	ok(strcmp(file_content(100), "1\n") == 0, "and the file is untouched");
}

static void test_missing(void)
{
	char path[PATH_MAX];
	int ret;

	/* The task exists, the file does not: the kernel lacks it. */
	make_dir("proc/101/task/101");
	errno = 0;
	ret = zerosleep_get_tid_policy(101);
	ok_fail(ret, errno, ENOTSUP, "get, task without the file");
	errno = 0;
	ret = zerosleep_set_tid_policy(101, 1);
	ok_fail(ret, errno, ENOTSUP, "set, task without the file");

	/* No such task. */
	errno = 0;
	ret = zerosleep_get_tid_policy(102);
	ok_fail(ret, errno, ESRCH, "get, no such task");
	errno = 0;
	ret = zerosleep_set_tid_policy(102, 1);
	ok_fail(ret, errno, ESRCH, "set, no such task");

	/* The process exists but has no such thread. */
	make_dir("proc/103/task/104");
	errno = 0;
	ret = zerosleep_get_tid_policy(103);
	ok_fail(ret, errno, ESRCH, "get, a process without that thread");

	/* Errors of open() and read() pass through. */
	make_dir("proc/105/task/105/" ZS_PROC_FILE);
	errno = 0;
	ret = zerosleep_get_tid_policy(105);
	ok_fail(ret, errno, EISDIR, "get, the file is a directory");
	errno = 0;
	ret = zerosleep_set_tid_policy(105, 1);
	ok_fail(ret, errno, EISDIR, "set, the file is a directory");

	/* /proc is not mounted: no "self" in it. */
	make_path(path, "proc/self");
	unlink(path);
	errno = 0;
	ret = zerosleep_get_tid_policy(102);
	ok_fail(ret, errno, ENOENT, "get, /proc not mounted");
	errno = 0;
	ret = zerosleep_get_tid_policy(100);
	ok(ret == 1, "a present file is still read without \"self\"");

	/* A root too long for a path. */
	memset(fake_root, 'x', sizeof(fake_root) - 1);
	fake_root[0] = '/';
	fake_root[sizeof(fake_root) - 1] = '\0';
	errno = 0;
	ret = zerosleep_get_tid_policy(100);
	ok_fail(ret, errno, ENAMETOOLONG, "get, /proc path too long");
	errno = 0;
	ret = zerosleep_set_tid_policy(100, 1);
	ok_fail(ret, errno, ENAMETOOLONG, "set, /proc path too long");
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");
	char path[PATH_MAX];

	snprintf(base, sizeof(base), "%s/zerosleep-internal.XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(base)) {
		ok(0, "make a temporary directory: %s", strerror(errno));
		return tap_done();
	}
	make_path(fake_root, "proc");
	make_dir("proc");
	make_path(path, "proc/self");
	ok(symlink("100", path) == 0, "make a fake /proc under %s", base);
	put_file(100, "1\n", 2);

	test_probe_once();
	test_process_policy();
	test_read();
	test_write();
	test_missing();

	ok(fake_get_calls == 3, "the kernel was probed once in all "
	   "(and asked twice by zerosleep_get_policy())");
	ok(remove_tree(base) == 0, "remove the fake /proc");
	return tap_done();
}
