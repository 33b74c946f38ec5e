// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * zerosleep - run a command with a zero-length sleep policy, or show or
 * change the policy of a running process, in the manner of chrt(1).
 *
 *   zerosleep POLICY [--] COMMAND [ARG...]
 *   zerosleep [-a] -p PID [POLICY]
 *
 * Exit status: 0 success; 1 bad usage or bad policy, or a failed -p
 * operation; 2 the kernel lacks the feature; 126 COMMAND cannot be run;
 * 127 COMMAND not found; otherwise COMMAND's own status.
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
# define ZEROSLEEP_VERSION "1.0"
#endif

#define PROG "zerosleep"

enum {
	EXIT_USAGE = 1,		/* bad usage or bad policy */
	EXIT_FAIL = 1,		/* -p could not be carried out */
	EXIT_UNSUPPORTED = 2,	/* the kernel lacks the feature */
	EXIT_CANNOT_INVOKE = 126,
	EXIT_ENOENT = 127,
};

static void usage(void)
{
	fputs(
"Usage:\n"
" " PROG " [options] POLICY [--] COMMAND [ARG...]\n"
" " PROG " [options] -p PID [POLICY]\n"
"\n"
"Run COMMAND with the given zero-length sleep policy, or show or change\n"
"the policy of an existing process.\n"
"\n"
"A zero-length sleep is a nanosleep() or clock_nanosleep() that asks to\n"
"sleep until a time that is not in the future, such as sleep(0), usleep(0)\n"
"or Python's time.sleep(0).  The policy is per thread, inherited by new\n"
"threads and child processes, and kept across execve().\n"
"\n"
"Policies:\n"
" full-slack, full, 0              sleep for the thread's timer slack (default)\n"
" return-immediately, return, 1    return at once\n"
" schedule-once, schedule, 2       give up the CPU once, then return\n"
"\n"
"Options:\n"
" -a, --all-tasks   show or change every thread of PID, not only PID itself\n"
" -p, --pid PID     show or change the process PID instead of running COMMAND\n"
" -h, --help        display this help and exit\n"
" -V, --version     display version information and exit\n"
"\n"
"Showing or changing a process other than itself needs CAP_SYS_NICE.\n"
"\n"
"Exit status: 0 on success, 1 for bad usage or a failed change, 2 if the\n"
"kernel lacks zero-length sleep policies, 126 if COMMAND cannot be run,\n"
"127 if it is not found; otherwise the exit status of COMMAND.\n",
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

/* Print a one-line usage error and exit with status 1. */
static void __attribute__((noreturn, format(printf, 1, 2)))
usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs(PROG ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(" (try '" PROG " --help')\n", stderr);
	exit(EXIT_USAGE);
}

static void __attribute__((noreturn)) unsupported(void)
{
	fputs(PROG ": this kernel lacks zero-length sleep policies "
	      "(PR_SET_TIMERSLACK_ZERO_POLICY is not supported)\n", stderr);
	exit(EXIT_UNSUPPORTED);
}

static int parse_policy(const char *word)
{
	int policy = zerosleep_policy_from_name(word);

	if (policy < 0) {
		fprintf(stderr, PROG ": unknown policy '%s' (expected full-slack, "
			"return-immediately or schedule-once)\n", word);
		exit(EXIT_USAGE);
	}
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
		unsupported();
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

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "all-tasks",	no_argument,		NULL, 'a' },
		{ "pid",	required_argument,	NULL, 'p' },
		{ "help",	no_argument,		NULL, 'h' },
		{ "version",	no_argument,		NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *pid_word = NULL;
	int all = 0, c, policy, status;
	char optname[3] = "-?";
	pid_t pid;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:ap:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'a':
			all = 1;
			break;
		case 'p':
			pid_word = optarg;
			break;
		case 'h':
			usage();
			return close_stdout();
		case 'V':
			printf(PROG " (zerosleep) " ZEROSLEEP_VERSION "\n");
			return close_stdout();
		case ':':
			usage_error("option '%s' needs a PID", argv[optind - 1]);
		default:
			if (optopt) {
				optname[1] = (char)optopt;
				usage_error("unknown option '%s'", optname);
			}
			usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}

	if (pid_word) {
		pid = parse_pid(pid_word);
		if (argc - optind > 1)
			usage_error("too many arguments, starting at '%s'",
				    argv[optind + 1]);
		policy = optind < argc ? parse_policy(argv[optind]) : -1;
		if (!zerosleep_is_supported())
			unsupported();
		if (all)
			status = all_tasks(pid, policy);
		else if (policy < 0)
			status = show("pid", pid, 0);
		else if (zerosleep_set_tid_policy(pid, policy) < 0)
			status = report("set", "pid", pid, errno);
		else
			status = EXIT_SUCCESS;
		if (close_stdout() != EXIT_SUCCESS && status == EXIT_SUCCESS)
			status = EXIT_FAIL;
		return status;
	}

	if (all)
		usage_error("option '%s' needs -p PID", "-a");
	if (optind >= argc)
		usage_error("no policy given");
	policy = parse_policy(argv[optind++]);
	if (optind < argc && strcmp(argv[optind], "--") == 0)
		optind++;
	if (optind >= argc)
		usage_error("no command given");
	if (!zerosleep_is_supported())
		unsupported();
	if (zerosleep_set_policy(policy) < 0) {
		if (errno == ENOTSUP)
			unsupported();
		fprintf(stderr, PROG ": cannot set the policy: %s\n", strerror(errno));
		return EXIT_FAIL;
	}

	execvp(argv[optind], argv + optind);
	status = errno == ENOENT ? EXIT_ENOENT : EXIT_CANNOT_INVOKE;
	fprintf(stderr, PROG ": failed to execute '%s': %s\n", argv[optind],
		strerror(errno));
	return status;
}
