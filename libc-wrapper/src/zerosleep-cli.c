// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * zerosleep - run a command with a zero-length sleep policy, or show or
 * change the policy of a running process, in the manner of chrt(1).
 *
 *   zerosleep [-q] [--kernel-only] POLICY [--] COMMAND [ARG...]
 *   zerosleep [-a] -p [POLICY] PID
 *
 * With the kernel series, the policy is set with prctl() and kept across
 * execve().  Without it, COMMAND runs with libzerosleep-preload.so in
 * LD_PRELOAD and the policy in ZEROSLEEP_POLICY.
 *
 * Exit status, as env(1): 125 for the launcher's own failures, 126 when
 * COMMAND cannot be run, 127 when it is not found, otherwise COMMAND's.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include <zerosleep.h>

#ifndef ZEROSLEEP_VERSION
# define ZEROSLEEP_VERSION "2.0.0"
#endif
#ifndef ZEROSLEEP_PRELOAD
# define ZEROSLEEP_PRELOAD "/usr/local/lib/zerosleep/libzerosleep-preload.so"
#endif

#define PROG "zerosleep"
#define PRELOAD_NAME "libzerosleep-preload.so"

enum {
	EXIT_FAIL = 125,	/* the launcher's own failure */
	EXIT_CANNOT_INVOKE = 126,
	EXIT_ENOENT = 127,
};

static int quiet;

static void usage(void)
{
	fputs(
"Usage:\n"
" " PROG " [options] POLICY [--] COMMAND [ARG...]\n"
" " PROG " [options] -p [POLICY] PID\n"
"\n"
"Run COMMAND with a zero-length sleep policy, or show or change the policy\n"
"of an existing process.\n"
"\n"
"Policies:\n"
" default, 0                       what the kernel does by itself\n"
" return-immediately, return, 1    return at once\n"
" schedule-once, schedule, 2       give up the CPU once, then return\n"
" full-slack, full, 3              sleep for the timer slack, as Linux 6.12\n"
"\n"
"Options:\n"
" -a, --all-tasks   with -p: every thread of PID, not only PID itself\n"
" -p, --pid         show or change the process PID instead of running COMMAND\n"
" -q, --quiet       no notice when the preload fallback is used\n"
"     --kernel-only fail instead of using the preload fallback\n"
" -h, --help        display this help\n"
" -V, --version     display version\n"
"\n"
"Examples:\n"
" " PROG " return -- python3 game.py\n"
" " PROG " -a -p schedule 1234\n"
"\n"
"For more details see zerosleep(1).\n",
	      stdout);
}

/* Report a failed write to stdout (for example to a full disk). */
static int close_stdout(void)
{
	if (ferror(stdout) | (fclose(stdout) != 0)) {
		fprintf(stderr, PROG ": write error: %s\n", strerror(errno));
		return EXIT_FAIL;
	}
	return EXIT_SUCCESS;
}

/* Print a one-line usage error and exit with status 125. */
static void __attribute__((noreturn, format(printf, 1, 2)))
usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs(PROG ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(" (try '" PROG " --help')\n", stderr);
	exit(EXIT_FAIL);
}

static void __attribute__((noreturn)) no_kernel_support(const char *what)
{
	fprintf(stderr, PROG ": %s needs a kernel with zero-length sleep "
		"policies, which this one lacks; start the program with '"
		PROG " POLICY COMMAND' instead\n", what);
	exit(EXIT_FAIL);
}

static int is_number(const char *word)
{
	const char *p = word;

	while (*p >= '0' && *p <= '9')
		p++;
	return p != word && !*p;
}

static int parse_policy(const char *word)
{
	int policy = zerosleep_policy_from_name(word);

	if (policy < 0)
		usage_error("unknown policy '%s' (expected default, "
			    "return-immediately, schedule-once or full-slack)",
			    word);
	return policy;
}

static pid_t parse_pid(const char *word)
{
	long value = 0;
	const char *p;

	for (p = word; *p; p++) {
		if (*p < '0' || *p > '9' || value > (INT_MAX - 9) / 10)
			break;
		value = value * 10 + (*p - '0');
	}
	if (p == word || *p || value <= 0)
		usage_error("invalid PID '%s'", word);
	return (pid_t)value;
}

/* Report a failed -p operation and return the exit status to use. */
static int report(const char *what, const char *kind, pid_t tid, int err)
{
	if (err == ENOTSUP)
		no_kernel_support("-p");
	fprintf(stderr, PROG ": cannot %s the policy of %s %d: %s\n",
		what, kind, (int)tid, strerror(err));
	return EXIT_FAIL;
}

/* Print the policy of @tid; a thread that is gone is skipped if @skip_gone. */
static int show(const char *kind, pid_t tid, int skip_gone)
{
	const char *name;
	int policy;

	policy = zerosleep_get_tid_policy(tid);
	if (policy < 0 && skip_gone && errno == ESRCH)
		return -1;
	if (policy < 0)
		return report("get", kind, tid, errno);
	name = zerosleep_policy_name(policy);
	if (name)
		printf("%s %d's zero-length sleep policy: %s\n", kind, (int)tid, name);
	else
		printf("%s %d's zero-length sleep policy: unknown (%d)\n",
		       kind, (int)tid, policy);
	return EXIT_SUCCESS;
}

static int compare_tids(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

/*
 * List the threads of @pid, in increasing order.  Returns their number, or
 * -1 with errno set.  The caller frees *tids.
 */
static int list_tasks(pid_t pid, pid_t **tids)
{
	char path[64];
	struct dirent *d;
	pid_t *list = NULL, *bigger;
	size_t n = 0, size = 0;
	DIR *dir;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return -1;
	for (;;) {
		errno = 0;
		d = readdir(dir);
		if (!d)
			break;
		if (d->d_name[0] < '1' || d->d_name[0] > '9')
			continue;
		if (n == size) {
			size = size ? 2 * size : 16;
			bigger = realloc(list, size * sizeof(*list));
			if (!bigger) {
				errno = ENOMEM;
				break;
			}
			list = bigger;
		}
		list[n++] = (pid_t)strtol(d->d_name, NULL, 10);
	}
	err = errno;
	closedir(dir);
	if (err) {
		free(list);
		errno = err;
		return -1;
	}
	if (n)
		qsort(list, n, sizeof(*list), compare_tids);
	*tids = list;
	return (int)n;
}

/*
 * Show (policy < 0) or set the policy of every thread of @pid.  Threads
 * that exit meanwhile are skipped; threads that start meanwhile inherit the
 * policy of their creator.
 */
static int all_tasks(pid_t pid, int policy)
{
	const char *what = policy < 0 ? "get" : "set";
	pid_t *tids = NULL;
	int i, n, done = 0, status = EXIT_SUCCESS;

	n = list_tasks(pid, &tids);
	if (n < 0)
		return report(what, "pid", pid, errno == ENOENT ? ESRCH : errno);
	for (i = 0; i < n && status == EXIT_SUCCESS; i++) {
		if (policy < 0) {
			status = show("tid", tids[i], 1);
			if (status < 0) {
				status = EXIT_SUCCESS;
				continue;
			}
		} else if (zerosleep_set_tid_policy(tids[i], policy) < 0) {
			if (errno == ESRCH)
				continue;
			status = report(what, "tid", tids[i], errno);
		}
		done++;
	}
	free(tids);
	if (status == EXIT_SUCCESS && done == 0)
		return report(what, "pid", pid, ESRCH);
	return status;
}

/* Set one thread; say so when the process has others (-a sets them all). */
static int set_one(pid_t pid, int policy)
{
	pid_t *tids = NULL;
	int n;

	if (zerosleep_set_tid_policy(pid, policy) < 0)
		return report("set", "pid", pid, errno);
	n = list_tasks(pid, &tids);
	free(tids);
	if (n > 1 && !quiet)
		fprintf(stderr, PROG ": changed thread %d only; the other %d "
			"threads of its process keep their policy (-a changes "
			"them all)\n", (int)pid, n - 1);
	return EXIT_SUCCESS;
}

static int do_pid(int argc, char **argv, int all)
{
	int policy = -1, status;
	pid_t pid;

	if (argc < 1)
		usage_error("option '-p' needs a PID");
	if (argc > 2)
		usage_error("too many arguments, starting at '%s'", argv[2]);
	/* The order of v1 and of habit elsewhere: -p PID POLICY. */
	if (argc == 2 && is_number(argv[0]) && !is_number(argv[1]) &&
	    zerosleep_policy_from_name(argv[1]) >= 0)
		usage_error("invalid PID '%s': the order is -p POLICY PID, as "
			    "with chrt", argv[1]);
	if (argc == 2)
		policy = parse_policy(argv[0]);
	pid = parse_pid(argv[argc - 1]);
	if (!zerosleep_is_supported())
		no_kernel_support("-p");
	if (all)
		status = all_tasks(pid, policy);
	else if (policy < 0)
		status = show("pid", pid, 0);
	else
		status = set_one(pid, policy);
	if (close_stdout() != EXIT_SUCCESS && status == EXIT_SUCCESS)
		status = EXIT_FAIL;
	return status;
}

/* The preload library: next to this program (a build tree), or installed. */
static const char *find_preload(char *buf, size_t size)
{
	ssize_t n;
	char *slash;

	n = readlink("/proc/self/exe", buf, size - sizeof(PRELOAD_NAME) - 1);
	if (n > 0) {
		buf[n] = '\0';
		slash = strrchr(buf, '/');
		if (slash) {
			strcpy(slash + 1, PRELOAD_NAME);
			if (access(buf, R_OK) == 0)
				return buf;
		}
	}
	if (access(ZEROSLEEP_PRELOAD, R_OK) == 0)
		return ZEROSLEEP_PRELOAD;
	return NULL;
}

/* Put @path first in LD_PRELOAD, unless it is there already. */
static int add_preload(const char *path)
{
	const char *old = getenv("LD_PRELOAD");
	size_t len = strlen(path);
	const char *p;
	char *list;
	int ret;

	for (p = old; p && *p; p += strcspn(p, " :")) {
		p += strspn(p, " :");
		if (strncmp(p, path, len) == 0 && (p[len] == '\0' ||
		    p[len] == ' ' || p[len] == ':'))
			return 0;
	}
	if (!old || !*old)
		return setenv("LD_PRELOAD", path, 1);
	list = malloc(len + 1 + strlen(old) + 1);
	if (!list)
		return -1;
	sprintf(list, "%s:%s", path, old);
	ret = setenv("LD_PRELOAD", list, 1);
	free(list);
	return ret;
}

static void fallback(int policy, int kernel_only)
{
	char buf[PATH_MAX];
	const char *path;

	if (kernel_only) {
		fprintf(stderr, PROG ": this kernel lacks zero-length sleep "
			"policies and --kernel-only was given (without it, "
			PRELOAD_NAME " would be used)\n");
		exit(EXIT_FAIL);
	}
	path = find_preload(buf, sizeof(buf));
	if (!path) {
		fprintf(stderr, PROG ": this kernel lacks zero-length sleep "
			"policies and " PRELOAD_NAME " is not installed (looked "
			"next to " PROG " and in " ZEROSLEEP_PRELOAD ")\n");
		exit(EXIT_FAIL);
	}
	if (path[strcspn(path, " :")]) {
		fprintf(stderr, PROG ": cannot preload '%s': LD_PRELOAD cannot "
			"name a path with a space or colon\n", path);
		exit(EXIT_FAIL);
	}
	if (setenv("ZEROSLEEP_POLICY", zerosleep_policy_name(policy), 1) < 0 ||
	    add_preload(path) < 0) {
		fprintf(stderr, PROG ": cannot set the environment: %s\n",
			strerror(errno));
		exit(EXIT_FAIL);
	}
	if (!quiet)
		fprintf(stderr, PROG ": this kernel lacks zero-length sleep "
			"policies; using " PRELOAD_NAME " (dynamically linked "
			"programs only; -q silences this)\n");
}

int main(int argc, char **argv)
{
	enum { OPT_KERNEL_ONLY = 256 };
	static const struct option longopts[] = {
		{ "all-tasks",	 no_argument, NULL, 'a' },
		{ "pid",	 no_argument, NULL, 'p' },
		{ "quiet",	 no_argument, NULL, 'q' },
		{ "kernel-only", no_argument, NULL, OPT_KERNEL_ONLY },
		{ "help",	 no_argument, NULL, 'h' },
		{ "version",	 no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int all = 0, pid_mode = 0, kernel_only = 0, c, policy, err;
	char optname[3] = "-?";

	opterr = 0;
	while ((c = getopt_long(argc, argv, "+apqhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'a':
			all = 1;
			break;
		case 'p':
			pid_mode = 1;
			break;
		case 'q':
			quiet = 1;
			break;
		case OPT_KERNEL_ONLY:
			kernel_only = 1;
			break;
		case 'h':
			usage();
			return close_stdout();
		case 'V':
			printf(PROG " (zerosleep) " ZEROSLEEP_VERSION "\n");
			return close_stdout();
		default:
			if (optopt) {
				optname[1] = (char)optopt;
				usage_error("unknown option '%s'", optname);
			}
			usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}

	if (pid_mode)
		return do_pid(argc - optind, argv + optind, all);

	if (all)
		usage_error("option '%s' needs -p", "-a");
	if (optind >= argc)
		usage_error("no policy given");
	policy = parse_policy(argv[optind++]);
	if (optind < argc && strcmp(argv[optind], "--") == 0)
		optind++;
	if (optind >= argc)
		usage_error("no command given");

	if (!zerosleep_is_supported()) {
		fallback(policy, kernel_only);
	} else if (zerosleep_set_policy(policy) < 0) {
		fprintf(stderr, PROG ": cannot set the policy: %s\n",
			strerror(errno));
		return EXIT_FAIL;
	}

	execvp(argv[optind], argv + optind);
	err = errno;
	fprintf(stderr, PROG ": failed to execute '%s': %s\n", argv[optind],
		strerror(err));
	return err == ENOENT ? EXIT_ENOENT : EXIT_CANNOT_INVOKE;
}
