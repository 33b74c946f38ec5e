// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * zerosleep - run a command with a zero-length sleep policy, or show or
 * change the policy of a running process, in the manner of chrt(1).
 *
 *   zerosleep [-q] [--kernel-only|--fallback=WHICH] [--run-anyway]
 *             [--explain] POLICY [--] COMMAND [ARG...]
 *   zerosleep [-a] -p [POLICY] PID
 *
 * With the kernel series, the policy is set with prctl() and kept across
 * execve().  Without it, a dynamically linked COMMAND runs with
 * libzerosleep-preload.so in LD_PRELOAD and the policy in ZEROSLEEP_POLICY
 * (nothing is preloaded for default, the kernel's own behaviour); any other
 * runs under the supervisor (src/supervisor.c), which answers its sleeps
 * through seccomp.  --fallback=preload|supervisor chooses one.
 *
 * Neither reaches a set-user-ID or set-group-ID program, unless the
 * launcher holds CAP_SYS_ADMIN (the supervisor then), and the preload
 * reaches no statically linked program nor one of another architecture:
 * the launcher looks at COMMAND first and refuses to run it (unless
 * --run-anyway) rather than run it without the policy.
 *
 * Exit status, as env(1): 125 for the launcher's own failures, 126 when
 * COMMAND cannot be run, 127 when it is not found, otherwise COMMAND's.
 */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <zerosleep.h>
#include "supervisor.h"

#ifndef ZEROSLEEP_VERSION
# define ZEROSLEEP_VERSION "2.2.0"
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

/* Which fallback, on a kernel without the series. */
enum { FALLBACK_AUTO, FALLBACK_PRELOAD, FALLBACK_SUPERVISOR };

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
" -q, --quiet       no notice when a fallback is used\n"
"     --kernel-only fail instead of using a fallback\n"
"     --fallback=preload|supervisor\n"
"                   on a kernel without the policies, the fallback to use\n"
"                   (default: preload for dynamically linked programs,\n"
"                   with the seccomp supervisor behind it for those that\n"
"                   import syscall(); the supervisor for the rest)\n"
"     --run-anyway  run COMMAND without the policy when the fallback cannot\n"
"                   reach it (set-user-ID; static with --fallback=preload);\n"
"                   otherwise exit 125\n"
"     --explain     print which mechanism COMMAND would get and why\n"
"                   (kernel, preload, supervisor, refused), and exit\n"
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

/* --explain: say which mechanism COMMAND would get, and why, and exit. */
static int explain;

/* What notices end with: nothing under --explain, which -q does not silence. */
static const char *qs(void)
{
	return explain ? "" : " (-q silences this)";
}

/*
 * Say which mechanism COMMAND gets: a one-line notice on stderr (unless
 * -q), or under --explain the line "MECHANISM: ..." on stdout, and exit.
 */
static void __attribute__((format(printf, 2, 3)))
notice(const char *mechanism, const char *fmt, ...)
{
	va_list ap;

	if (quiet && !explain)
		return;
	va_start(ap, fmt);
	if (explain) {
		printf("%s: ", mechanism);
		vprintf(fmt, ap);
		putchar('\n');
	} else {
		fputs(PROG ": ", stderr);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	}
	va_end(ap);
	if (explain)
		exit(close_stdout());
}

/*
 * Refuse to run COMMAND: a one-line message on stderr and exit 125, or
 * under --explain "refused: ..." on stdout and exit 0.
 */
static void __attribute__((noreturn, format(printf, 1, 2)))
refuse(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (explain) {
		fputs("refused: ", stdout);
		vprintf(fmt, ap);
		putchar('\n');
		va_end(ap);
		exit(close_stdout());
	}
	fputs(PROG ": ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
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
	/*
	 * The kernel's rule, unlike sched_getscheduler()'s: the threads of a
	 * process may use each other's policy files; any other task, even one
	 * of the same user, needs CAP_SYS_NICE over the target, to read too.
	 */
	if (err == EPERM)
		fprintf(stderr, PROG ": cannot %s the policy of %s %d: %s "
			"(%s the policy of another process needs CAP_SYS_NICE, "
			"even for its owner, and the consent of any security "
			"module)\n", what, kind, (int)tid,
			strerror(err), what[0] == 'g' ? "reading" : "changing");
	else
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
 * Show the policy of every thread of @pid, in one pass, as chrt -a -p
 * does.  Threads that exit meanwhile are skipped.
 */
static int show_all_tasks(pid_t pid)
{
	pid_t *tids = NULL;
	int i, n, shown = 0, status = EXIT_SUCCESS;

	n = list_tasks(pid, &tids);
	if (n < 0)
		return report("get", "pid", pid, errno == ENOENT ? ESRCH : errno);
	for (i = 0; i < n && status == EXIT_SUCCESS; i++) {
		status = show("tid", tids[i], 1);
		if (status < 0)
			status = EXIT_SUCCESS;	/* gone meanwhile */
		else
			shown++;
	}
	free(tids);
	if (status == EXIT_SUCCESS && shown == 0)
		return report("get", "pid", pid, ESRCH);
	return status;
}

/*
 * The most passes that -a makes over the threads of a process.  A thread
 * can start with another policy only if the thread that starts it has
 * another policy, and every pass sets every thread that it sees, so a
 * program whose threads are started by long-lived threads (a pool, a
 * dispatcher, main()) takes two or three passes however fast it starts
 * them.  What can keep every pass busy is a chain of threads that each
 * start the next and exit before a pass reaches them, or a program that
 * keeps changing its own policy back; for them the launcher gives up
 * rather than run for as long as the process does.  100 passes give such
 * a chain many chances to be caught, and bound the work at 100 times a
 * pass, which costs three system calls or so for each thread.
 */
#define ALL_TASKS_MAX_PASSES 100

/* A sorted set of thread IDs. */
struct tid_set {
	pid_t *tids;
	size_t n, size;
};

static int tid_set_has(const struct tid_set *set, pid_t tid)
{
	return set->n && bsearch(&tid, set->tids, set->n, sizeof(tid),
				 compare_tids);
}

/* Add @tid, which is not in @set yet; -1 with errno ENOMEM on failure. */
static int tid_set_add(struct tid_set *set, pid_t tid)
{
	size_t i, size;
	pid_t *bigger;

	if (set->n == set->size) {
		size = set->size ? 2 * set->size : 16;
		bigger = realloc(set->tids, size * sizeof(*bigger));
		if (!bigger)
			return -1;
		set->tids = bigger;
		set->size = size;
	}
	for (i = set->n; i > 0 && set->tids[i - 1] > tid; i--)
		set->tids[i] = set->tids[i - 1];
	set->tids[i] = tid;
	set->n++;
	return 0;
}

/*
 * Set the policy of every thread of @pid, as chrt -a and taskset -a do,
 * but until it holds: the /proc file changes one thread, and a thread that
 * the process starts meanwhile takes the policy of the thread that starts
 * it, which may not have been set yet.  So walk /proc/PID/task again until
 * a whole pass finds every thread with the policy already.  Then every
 * thread that the pass listed had it, and a thread that joined the process
 * later took it from its creator (copy_process() copies it as the thread
 * joins the list that /proc walks, which ends with the newest).
 *
 * Each thread's policy is read before it is written, which is what ends
 * the walk: a thread that was started with the policy, by a thread already
 * set, is no new work; otherwise a process that keeps starting threads
 * would never give a pass without a write.  The same read sets a thread
 * again when its ID comes back, reused by a new thread with another
 * policy.  The threads written without being read back (their file could
 * not be read: a security module may let a supervisor change a policy and
 * not read it) are remembered, and count as new work the first time only.
 *
 * A thread that exits meanwhile (ESRCH) is skipped; any other failure to
 * set a thread ends the walk with the launcher's status 125.
 */
static int set_all_tasks(pid_t pid, int policy)
{
	struct tid_set unread = { NULL, 0, 0 };
	pid_t *tids, tid;
	int i, n, pass, old, changed, seen = 0, status = EXIT_SUCCESS;

	for (pass = 1; status == EXIT_SUCCESS; pass++) {
		n = list_tasks(pid, &tids);
		if (n < 0) {
			/* The process ended after a pass: nothing to set. */
			if (seen && (errno == ENOENT || errno == ESRCH))
				break;
			status = report("set", "pid", pid,
					errno == ENOENT ? ESRCH : errno);
			break;
		}
		changed = 0;
		for (i = 0; i < n && status == EXIT_SUCCESS; i++) {
			tid = tids[i];
			old = zerosleep_get_tid_policy(tid);
			if (old < 0 && errno == ESRCH)
				continue;
			seen = 1;
			if (old == policy ||
			    (old < 0 && tid_set_has(&unread, tid)))
				continue;
			if (zerosleep_set_tid_policy(tid, policy) < 0) {
				if (errno != ESRCH)
					status = report("set", "tid", tid,
							errno);
				continue;
			}
			changed++;
			if (old < 0 && tid_set_add(&unread, tid) < 0)
				status = report("set", "pid", pid, errno);
		}
		free(tids);
		if (status != EXIT_SUCCESS || changed == 0)
			break;
		if (pass == ALL_TASKS_MAX_PASSES) {
			fprintf(stderr, PROG ": gave up on pid %d after %d "
				"passes over its threads: each found threads "
				"without the policy (%d in the last), started "
				"or changed back faster than they can be set\n",
				(int)pid, pass, changed);
			status = EXIT_FAIL;
		}
	}
	free(unread.tids);
	if (status == EXIT_SUCCESS && !seen)
		return report("set", "pid", pid, ESRCH);
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
	if (all && policy < 0)
		status = show_all_tasks(pid);
	else if (all)
		status = set_all_tasks(pid, policy);
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

/* Report that COMMAND could not be executed; return the exit status. */
static int exec_failed(const char *command, int err)
{
	fprintf(stderr, PROG ": failed to execute '%s': %s\n", command,
		strerror(err));
	return err == ENOENT ? EXIT_ENOENT : EXIT_CANNOT_INVOKE;
}

/* @file exists, is a regular file and may be executed; else errno is set. */
static int executable(const char *file)
{
	struct stat st;

	if (stat(file, &st) < 0)
		return 0;
	if (!S_ISREG(st.st_mode)) {
		errno = EACCES;
		return 0;
	}
	return faccessat(AT_FDCWD, file, X_OK, AT_EACCESS) == 0;
}

/*
 * Find @command as execvp() will: a name with a slash as it is, any other
 * in each directory of PATH (the C library's default when PATH is unset).
 * Returns the file, or NULL with errno set: EACCES when a match cannot be
 * executed, ENOENT when there is none.
 */
static const char *find_command(const char *command, char *buf, size_t size)
{
	size_t len = strlen(command), dlen;
	const char *dir, *end;
	int eacces = 0;

	if (!*command) {
		errno = ENOENT;
		return NULL;
	}
	if (strchr(command, '/'))
		return executable(command) ? command : NULL;
	dir = getenv("PATH");
	if (!dir)
		dir = "/bin:/usr/bin";
	for (;; dir = end + 1) {
		end = strchr(dir, ':');
		if (!end)
			end = dir + strlen(dir);
		dlen = (size_t)(end - dir);
		if (dlen + 1 + len + 1 <= size) {
			/* An empty entry is the current directory. */
			memcpy(buf, dir, dlen);
			if (dlen)
				buf[dlen++] = '/';
			memcpy(buf + dlen, command, len + 1);
			if (executable(buf))
				return buf;
			if (errno == EACCES)
				eacces = 1;
			else if (errno != ENOENT && errno != ENOTDIR &&
				 errno != ESTALE && errno != ENODEV &&
				 errno != ETIMEDOUT)
				return NULL;
		}
		if (!*end)
			break;
	}
	errno = eacces ? EACCES : ENOENT;
	return NULL;
}

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
# define ELFDATA_NATIVE ELFDATA2LSB
#else
# define ELFDATA_NATIVE ELFDATA2MSB
#endif

/* What the dynamic linker needs to know about an executable. */
struct elf_info {
	unsigned char class, data;	/* EI_CLASS, EI_DATA */
	unsigned int machine;		/* e_machine, if data is native */
	int interp;			/* has PT_INTERP: dynamically linked */
};

enum file_kind { FILE_OTHER, FILE_ELF, FILE_SCRIPT };

#define READ_ELF_PHDRS(Ehdr, Phdr)					\
	do {								\
		Ehdr eh;						\
		Phdr ph;						\
		unsigned int i;						\
									\
		if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh)) \
			break;						\
		info->machine = eh.e_machine;				\
		for (i = 0; i < eh.e_phnum && i < 4096; i++) {		\
			if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + \
			    (off_t)i * eh.e_phentsize)) != (ssize_t)sizeof(ph)) \
				break;					\
			if (ph.p_type == PT_INTERP)			\
				info->interp = 1;			\
		}							\
	} while (0)

/*
 * Look at the start of @file: an ELF file (@info filled in), a script
 * (its interpreter copied to @interp), or anything else, which execvp()
 * runs with /bin/sh.  A file that cannot be read counts as anything else.
 */
static enum file_kind read_file_kind(const char *file, struct elf_info *info,
				     char *interp, size_t size)
{
	unsigned char head[256];
	enum file_kind kind = FILE_OTHER;
	ssize_t n;
	size_t len;
	char *p;
	int fd;

	memset(info, 0, sizeof(*info));
	fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return FILE_OTHER;
	n = pread(fd, head, sizeof(head) - 1, 0);
	if (n >= EI_NIDENT && memcmp(head, ELFMAG, SELFMAG) == 0) {
		kind = FILE_ELF;
		info->class = head[EI_CLASS];
		info->data = head[EI_DATA];
		if (info->data == ELFDATA_NATIVE && info->class == ELFCLASS64)
			READ_ELF_PHDRS(Elf64_Ehdr, Elf64_Phdr);
		else if (info->data == ELFDATA_NATIVE &&
			 info->class == ELFCLASS32)
			READ_ELF_PHDRS(Elf32_Ehdr, Elf32_Phdr);
	} else if (n > 2 && head[0] == '#' && head[1] == '!') {
		head[n] = '\0';
		p = (char *)head + 2;
		p += strspn(p, " \t");
		len = strcspn(p, " \t\n");
		if (len > 0 && len < size && p[len] != '\0') {
			memcpy(interp, p, len);
			interp[len] = '\0';
			kind = FILE_SCRIPT;
		}
	}
	close(fd);
	return kind;
}

/* The section that marks this program as a zerosleep launcher (raw_calls()). */
#define LAUNCHER_SECTION ".zerosleep_launcher"
static const char launcher_mark[] __attribute__((section(LAUNCHER_SECTION), used)) =
	"zerosleep launcher";

/* Read @size bytes at @off of @fd into a new buffer (at most 64 MiB). */
static void *read_at(int fd, off_t off, size_t size)
{
	char *buf;

	if (size == 0 || size > (64u << 20))
		return NULL;
	buf = malloc(size + 1);
	if (buf && pread(fd, buf, size, off) != (ssize_t)size) {
		free(buf);
		return NULL;
	}
	if (buf)
		buf[size] = '\0';
	return buf;
}

/*
 * The section headers of a native ELF file: the dynamic symbol table, for
 * an undefined "syscall", and the section names, for Go's ".go.buildinfo".
 */
#define RAW_CALLS(Ehdr, Shdr, Sym)					\
	do {								\
		Ehdr eh;						\
		Shdr *sh = NULL;					\
		Sym *sym = NULL;					\
		char *names = NULL, *str = NULL;			\
		size_t i, j, n;						\
									\
		if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) || \
		    eh.e_shentsize != sizeof(Shdr) || eh.e_shnum == 0 ||	\
		    eh.e_shstrndx >= eh.e_shnum)			\
			break;						\
		sh = read_at(fd, (off_t)eh.e_shoff,			\
			     (size_t)eh.e_shnum * sizeof(Shdr));	\
		if (!sh)						\
			break;						\
		names = read_at(fd, (off_t)sh[eh.e_shstrndx].sh_offset,	\
				sh[eh.e_shstrndx].sh_size);		\
		for (i = 0; i < eh.e_shnum && !launcher; i++) {	\
			if (names && sh[i].sh_name < sh[eh.e_shstrndx].sh_size && \
			    strcmp(names + sh[i].sh_name, LAUNCHER_SECTION) == 0) \
				launcher = 1;				\
			if (names && sh[i].sh_name < sh[eh.e_shstrndx].sh_size && \
			    strcmp(names + sh[i].sh_name, ".go.buildinfo") == 0) \
				what = "is a Go program, whose runtime makes " \
				       "its system calls itself";	\
			if (sh[i].sh_type != SHT_DYNSYM ||		\
			    sh[i].sh_link >= eh.e_shnum)		\
				continue;				\
			sym = read_at(fd, (off_t)sh[i].sh_offset, sh[i].sh_size); \
			str = read_at(fd, (off_t)sh[sh[i].sh_link].sh_offset, \
				      sh[sh[i].sh_link].sh_size);	\
			n = sh[i].sh_size / sizeof(Sym);		\
			for (j = 1; sym && str && j < n && !what; j++)	\
				if (sym[j].st_shndx == SHN_UNDEF &&	\
				    sym[j].st_name < sh[sh[i].sh_link].sh_size && \
				    strcmp(str + sym[j].st_name, "syscall") == 0) { \
					what = "imports syscall(), whose " \
					       "sleeps the preload does not see"; \
					break;				\
				}					\
			free(sym);					\
			free(str);					\
			sym = NULL;					\
			str = NULL;					\
		}							\
		free(names);						\
		free(sh);						\
	} while (0)

/*
 * Why the dynamically linked program @file may make system calls that the
 * preload cannot see (it imports syscall(), or is a Go program), or NULL.
 * Only @file itself is read, not the libraries it loads.  A zerosleep
 * launcher (it has LAUNCHER_SECTION) is left alone: it chooses a fallback
 * for its own command, and could not supervise it under another
 * supervisor.
 */
static const char *raw_calls(const char *file)
{
	unsigned char head[EI_NIDENT];
	const char *what = NULL;
	int fd, launcher = 0;

	fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return NULL;
	if (pread(fd, head, sizeof(head), 0) == (ssize_t)sizeof(head) &&
	    memcmp(head, ELFMAG, SELFMAG) == 0 && head[EI_DATA] == ELFDATA_NATIVE) {
		if (head[EI_CLASS] == ELFCLASS64)
			RAW_CALLS(Elf64_Ehdr, Elf64_Shdr, Elf64_Sym);
		else if (head[EI_CLASS] == ELFCLASS32)
			RAW_CALLS(Elf32_Ehdr, Elf32_Shdr, Elf32_Sym);
	}
	close(fd);
	return launcher ? NULL : what;
}

/*
 * The #! interpreter of @file, or of its interpreter and so on, that does
 * not exist, so that execve() fails with ENOENT; NULL when there is none.
 */
static const char *missing_interpreter(const char *file)
{
	static char interp[2][256];
	struct elf_info info;
	const char *cur = file;
	int depth;

	for (depth = 0; depth < 5; depth++) {
		if (read_file_kind(cur, &info, interp[depth % 2],
				   sizeof(interp[0])) != FILE_SCRIPT)
			return NULL;
		cur = interp[depth % 2];
		if (access(cur, F_OK) < 0 && errno == ENOENT)
			return cur;
	}
	return NULL;
}

/*
 * Report that COMMAND, found at @file, could not be executed because of
 * @err; return the exit status.  ENOENT for a file that exists is its
 * interpreter's: named.
 */
static int exec_failed_file(const char *command, const char *file, int err)
{
	const char *interp = err == ENOENT && file ? missing_interpreter(file) : NULL;

	if (!interp)
		return exec_failed(command, err);
	fprintf(stderr, PROG ": failed to execute '%s': its interpreter, %s, "
		"was not found\n", command, interp);
	return EXIT_ENOENT;
}

/*
 * Whether executing @file gives the program other credentials than ours,
 * so that the dynamic linker runs in secure mode and ignores LD_PRELOAD.
 * Returns why, or NULL.
 */
static const char *secure_exec(const char *file)
{
	int ignored = prctl(PR_GET_NO_NEW_PRIVS, 0L, 0L, 0L, 0L) == 1;
	struct statvfs sv;
	struct stat st;

	if (geteuid() != getuid() || getegid() != getgid())
		return "would run with an effective user or group ID other "
		       "than the real one, and the dynamic linker ignores "
		       "LD_PRELOAD then";
	if (stat(file, &st) < 0)
		return NULL;
	/* The kernel ignores the bits on a nosuid mount, or after no_new_privs. */
	if (ignored || (statvfs(file, &sv) == 0 && (sv.f_flag & ST_NOSUID)))
		return NULL;
	if ((st.st_mode & S_ISUID) && st.st_uid != getuid())
		return "is set-user-ID, and the dynamic linker ignores "
		       "LD_PRELOAD for such programs";
	if ((st.st_mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP) &&
	    st.st_gid != getgid())
		return "is set-group-ID, and the dynamic linker ignores "
		       "LD_PRELOAD for such programs";
	if (getuid() != 0 && getxattr(file, "security.capability", NULL, 0) > 0)
		return "has file capabilities, and the dynamic linker ignores "
		       "LD_PRELOAD for such programs";
	return NULL;
}

/*
 * Why the preload library @preload cannot reach the program that executing
 * @file runs, following #! interpreters: a description into @why, and 1;
 * 0 when it can, or when that cannot be told.  *@elf is the ELF file that
 * runs (@file or its interpreter), or NULL.
 */
static int unreachable(const char *file, const char *preload, char *why,
		       size_t size, int *secure, const char **elf)
{
	static char interp[2][256];
	struct elf_info info, lib;
	const char *cur = file, *what = NULL;
	int depth;

	*secure = 0;
	*elf = NULL;

	for (depth = 0; depth < 5; depth++) {
		switch (read_file_kind(cur, &info, interp[depth % 2],
				       sizeof(interp[0]))) {
		case FILE_SCRIPT:
			cur = interp[depth % 2];
			continue;
		case FILE_OTHER:
			/* execvp() runs a file of another format with the shell. */
			if (depth == 0 && access(cur, R_OK) == 0) {
				cur = "/bin/sh";
				continue;
			}
			/* Unreadable (execute-only), say: its mode still tells. */
			what = secure_exec(cur);
			*secure = what != NULL;
			break;
		case FILE_ELF:
			*elf = cur;
			if (read_file_kind(preload, &lib, NULL, 0) == FILE_ELF &&
			    (info.class != lib.class || info.data != lib.data ||
			     info.machine != lib.machine))
				what = info.class == ELFCLASS32 &&
				       lib.class == ELFCLASS64 ?
				       "is a 32-bit program, and " PRELOAD_NAME
				       " is 64-bit" :
				       "is built for another architecture than "
				       PRELOAD_NAME;
			else if ((what = secure_exec(cur)))
				*secure = 1;
			else if (!info.interp)
				what = "is statically linked";
			break;
		}
		break;
	}
	/* Too many interpreters make execve() fail: nothing to say here. */
	if (depth == 5 || !what)
		return 0;
	if (cur == file)
		snprintf(why, size, "it %s", what);
	else
		snprintf(why, size, "its interpreter, %s, %s", cur, what);
	return 1;
}

/* Whether an entry of LD_PRELOAD is a libzerosleep-preload.so. */
static int preload_loaded(void)
{
	const char *p = getenv("LD_PRELOAD");
	size_t len, nlen = strlen(PRELOAD_NAME);

	for (; p && *p; p += len) {
		p += strspn(p, " :");
		len = strcspn(p, " :");
		if (len >= nlen && strncmp(p + len - nlen, PRELOAD_NAME, nlen) == 0 &&
		    (len == nlen || p[len - nlen - 1] == '/'))
			return 1;
	}
	return 0;
}

/*
 * Why the preload alone serves a program that makes system calls it does
 * not see (the supervisor cannot read other processes' memory here), for
 * fallback()'s notice; empty otherwise.
 */
static char uncovered[PATH_MAX + 320];

/* Give COMMAND the preload at @path and @policy, or exit. */
static void set_preload_env(int policy, const char *path)
{
	if (setenv("ZEROSLEEP_POLICY", zerosleep_policy_name(policy), 1) < 0 ||
	    add_preload(path) < 0) {
		fprintf(stderr, PROG ": cannot set the environment: %s\n",
			strerror(errno));
		exit(EXIT_FAIL);
	}
}

/*
 * On a kernel without the series: set up the preload fallback for
 * @command (found at @file), or leave it alone when it would do nothing.
 * Exits on failure.
 */
static void fallback(int policy, const char *command, const char *file,
		     int run_anyway)
{
	char buf[PATH_MAX], why[PATH_MAX + 160];
	const char *path, *elf;
	int secure;

	/*
	 * default is the kernel's own behaviour: nothing to preload.  Only a
	 * preload that COMMAND inherits (a launcher that runs a launcher)
	 * must be told.
	 */
	if (policy == ZEROSLEEP_DEFAULT) {
		if (explain)
			notice("none", "this kernel lacks zero-length sleep "
			       "policies, and default is what it does by itself: "
			       "'%s' would run with nothing preloaded and no "
			       "supervisor", command);
		if (preload_loaded() &&
		    setenv("ZEROSLEEP_POLICY", zerosleep_policy_name(policy), 1) < 0) {
			fprintf(stderr, PROG ": cannot set the environment: "
				"%s\n", strerror(errno));
			exit(EXIT_FAIL);
		}
		return;
	}
	path = find_preload(buf, sizeof(buf));
	if (!path)
		refuse("this kernel lacks zero-length sleep policies and "
		       PRELOAD_NAME " is not installed (looked next to " PROG
		       " and in " ZEROSLEEP_PRELOAD ")");
	if (path[strcspn(path, " :")])
		refuse("cannot preload '%s': LD_PRELOAD cannot name a path "
		       "with a space or colon", path);
	if (unreachable(file, path, why, sizeof(why), &secure, &elf)) {
		if (!run_anyway)
			refuse("this kernel lacks zero-length sleep policies, "
			       "and " PRELOAD_NAME " cannot reach '%s': %s "
			       "(--run-anyway runs it without the policy)",
			       command, why);
		notice("none", "this kernel lacks zero-length sleep policies, "
		       "and " PRELOAD_NAME " cannot reach '%s': %s; running it "
		       "without the policy (--run-anyway)", command, why);
	} else if (uncovered[0]) {
		notice("preload", "this kernel lacks zero-length sleep "
		       "policies; using " PRELOAD_NAME " for the C library's "
		       "sleep functions only: %s%s", uncovered, qs());
	} else {
		notice("preload", "this kernel lacks zero-length sleep "
		       "policies; using " PRELOAD_NAME " for the C library's "
		       "sleep functions%s", qs());
	}
	set_preload_env(policy, path);
}

/* What use_supervisor() chose. */
enum run_with {
	RUN_PRELOAD,		/* fallback(): the preload, or nothing */
	RUN_SUPERVISOR,		/* the supervisor */
	RUN_BOTH,		/* the supervisor, with the preload in front */
};

/*
 * On a kernel without the series, under a policy other than default:
 * whether @command (found at @file) runs under the supervisor, alone or
 * behind the preload (whose path is then in @preload), or goes to
 * fallback().  Exits when the supervisor is the only way and cannot reach
 * it, unless --run-anyway (then fallback() says so).
 *
 * A dynamically linked program gets the preload, which answers its C
 * library's sleeps in its own process; when the program may also sleep
 * with system calls of its own (it imports syscall(), or is a Go program:
 * raw_calls()), the supervisor too, which answers those and lets every
 * other sleep continue, at the cost of a round trip to the launcher for
 * each non-zero sleep.
 */
static enum run_with use_supervisor(int which, const char *command,
				    const char *file, int run_anyway,
				    char *preload, size_t preload_size)
{
	char why[PATH_MAX + 160];
	const char *path, *problem, *elf, *raw = NULL;
	int secure;

	if (which == FALLBACK_PRELOAD)
		return RUN_PRELOAD;
	path = find_preload(preload, preload_size);
	if (!unreachable(file, path ? path : "", why, sizeof(why), &secure,
			 &elf)) {
		/*
		 * The preload reaches it: unless the supervisor is asked for,
		 * or needed behind it.  (fallback() says so if the preload is
		 * not installed.)
		 */
		if (which == FALLBACK_AUTO && (!path || !elf ||
		    !(raw = raw_calls(elf))))
			return RUN_PRELOAD;
		why[0] = '\0';
		/* With raw: what the notices say after "as". */
		if (raw && elf == file)
			snprintf(why, sizeof(why), "'%s' %s", command, raw);
		else if (raw)
			snprintf(why, sizeof(why), "the interpreter of '%s', "
				 "%s, %s", command, elf, raw);
	}
	if (secure && !zs_supervisor_privileged()) {
		if (run_anyway)
			return RUN_PRELOAD;
		refuse("this kernel lacks zero-length sleep policies, and "
		       PRELOAD_NAME " cannot reach '%s': %s; nor can the "
		       "supervisor without CAP_SYS_ADMIN, as its filter would "
		       "drop the program's privileges (--run-anyway runs it "
		       "without the policy)", command, why);
	}
	problem = zs_supervisor_unusable();
	if (problem && raw) {
		/* The preload still serves the C library's sleeps. */
		snprintf(uncovered, sizeof(uncovered), "%s, and the "
			 "supervisor cannot serve it: %s", why, problem);
		return RUN_PRELOAD;
	}
	if (problem) {
		if (run_anyway)
			return RUN_PRELOAD;
		refuse("this kernel lacks zero-length sleep policies, and the "
		       "supervisor cannot read the requests of '%s': %s "
		       "(%s--run-anyway runs it without the policy)", command,
		       problem, why[0] && !secure ? "" :
		       "--fallback=preload, or ");
	}
	if (raw)
		notice("preload and supervisor", "this kernel lacks zero-length "
		       "sleep policies; using " PRELOAD_NAME " for the C "
		       "library's sleep functions and the seccomp supervisor "
		       "for the rest, as %s%s", why, qs());
	else if (why[0])
		notice("supervisor", "this kernel lacks zero-length sleep "
		       "policies; running '%s' under the seccomp supervisor, as "
		       PRELOAD_NAME " cannot reach it: %s%s", command, why, qs());
	else
		notice("supervisor", "this kernel lacks zero-length sleep "
		       "policies; running '%s' under the seccomp supervisor, "
		       "as --fallback=supervisor asks%s", command, qs());
	return raw ? RUN_BOTH : RUN_SUPERVISOR;
}

/*
 * Report a bad option and exit: @word is the command-line word that
 * getopt_long() was looking at, @optopt its failing short option.
 */
static void __attribute__((noreturn))
bad_option(const struct option *longopts, const char *word, int short_opt)
{
	const struct option *o, *match = NULL;
	size_t len;
	int matches = 0;

	if (strncmp(word, "--", 2) != 0) {
		char name[3] = { '-', (char)short_opt, '\0' };

		usage_error("unknown option '%s'", name);
	}
	/* A long option, maybe abbreviated, maybe with "=VALUE". */
	len = strcspn(word + 2, "=");
	for (o = longopts; o->name; o++) {
		if (strncmp(o->name, word + 2, len) != 0)
			continue;
		if (strlen(o->name) == len) {
			match = o;
			matches = 1;
			break;
		}
		match = o;
		matches++;
	}
	if (matches > 1)
		usage_error("ambiguous option '%s'", word);
	if (matches == 1 && match->has_arg == required_argument)
		usage_error("option '--%s' needs an argument", match->name);
	if (matches == 1 && word[2 + len] == '=')
		usage_error("invalid option '%s': --%s takes no argument", word,
			    match->name);
	usage_error("unknown option '%s'", word);
}

int main(int argc, char **argv)
{
	enum { OPT_KERNEL_ONLY = 256, OPT_RUN_ANYWAY, OPT_FALLBACK, OPT_EXPLAIN };
	static const struct option longopts[] = {
		{ "all-tasks",	 no_argument, NULL, 'a' },
		{ "pid",	 no_argument, NULL, 'p' },
		{ "quiet",	 no_argument, NULL, 'q' },
		{ "kernel-only", no_argument, NULL, OPT_KERNEL_ONLY },
		{ "run-anyway",	 no_argument, NULL, OPT_RUN_ANYWAY },
		{ "fallback",	 required_argument, NULL, OPT_FALLBACK },
		{ "explain",	 no_argument, NULL, OPT_EXPLAIN },
		{ "help",	 no_argument, NULL, 'h' },
		{ "version",	 no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int all = 0, pid_mode = 0, kernel_only = 0, run_anyway = 0;
	int which = FALLBACK_AUTO;
	int c, policy, word, err;
	enum run_with how;
	char buf[PATH_MAX], preload[PATH_MAX];
	const char *file;

	opterr = 0;
	for (;;) {
		/* The word that getopt_long() looks at, for the messages. */
		word = optind;
		c = getopt_long(argc, argv, "+apqhV", longopts, NULL);
		if (c == -1)
			break;
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
		case OPT_RUN_ANYWAY:
			run_anyway = 1;
			break;
		case OPT_EXPLAIN:
			explain = 1;
			break;
		case OPT_FALLBACK:
			if (strcmp(optarg, "preload") == 0)
				which = FALLBACK_PRELOAD;
			else if (strcmp(optarg, "supervisor") == 0)
				which = FALLBACK_SUPERVISOR;
			else
				usage_error("unknown fallback '%s' (expected "
					    "preload or supervisor)", optarg);
			break;
		case 'h':
			usage();
			return close_stdout();
		case 'V':
			printf(PROG " (zerosleep) " ZEROSLEEP_VERSION "\n");
			return close_stdout();
		default:
			bad_option(longopts, word < argc ? argv[word] : "",
				   optopt);
		}
	}

	if (pid_mode) {
		/* --kernel-only goes without saying there. */
		if (run_anyway)
			usage_error("option '%s' is for running a command, not "
				    "for -p", "--run-anyway");
		if (which != FALLBACK_AUTO)
			usage_error("option '%s' is for running a command, not "
				    "for -p", "--fallback");
		if (explain)
			usage_error("option '%s' is for running a command, not "
				    "for -p", "--explain");
		return do_pid(argc - optind, argv + optind, all);
	}

	if (all)
		usage_error("option '%s' needs -p", "-a");
	if (kernel_only && which != FALLBACK_AUTO)
		usage_error("options '--kernel-only' and '--fallback' exclude "
			    "each other");
	if (optind >= argc)
		usage_error("no policy given");
	policy = parse_policy(argv[optind++]);
	if (optind < argc && strcmp(argv[optind], "--") == 0)
		optind++;
	if (optind >= argc)
		usage_error("no command given");

	if (zerosleep_is_supported()) {
		/*
		 * Nothing is said before COMMAND runs, so a command that
		 * cannot run is told after execvp() fails, below; only
		 * --explain, which runs nothing, looks for it here.
		 */
		if (explain) {
			file = find_command(argv[optind], buf, sizeof(buf));
			if (!file)
				return exec_failed(argv[optind], errno);
			if (missing_interpreter(file))
				return exec_failed_file(argv[optind], file, ENOENT);
			notice("kernel", "this kernel has zero-length sleep "
			       "policies: '%s' would run with %s, set with "
			       "prctl() and kept across execve(), in every "
			       "thread and child", argv[optind],
			       zerosleep_policy_name(policy));
		}
		if (zerosleep_set_policy(policy) < 0) {
			fprintf(stderr, PROG ": cannot set the policy: %s\n",
				strerror(errno));
			return EXIT_FAIL;
		}
	} else {
		if (kernel_only)
			refuse("this kernel lacks zero-length sleep policies "
			       "and --kernel-only was given%s",
			       policy == ZEROSLEEP_DEFAULT ? "" : " (without "
			       "it, a fallback would be used)");
		/* A command that cannot run gets its own message, and only it. */
		file = find_command(argv[optind], buf, sizeof(buf));
		if (!file)
			return exec_failed(argv[optind], errno);
		if (missing_interpreter(file))
			return exec_failed_file(argv[optind], file, ENOENT);
		how = policy == ZEROSLEEP_DEFAULT ? RUN_PRELOAD :
		      use_supervisor(which, argv[optind], file, run_anyway,
				     preload, sizeof(preload));
		if (how == RUN_BOTH)
			set_preload_env(policy, preload);
		if (how != RUN_PRELOAD) {
			/*
			 * The policy in force, for libzerosleep in COMMAND
			 * (zerosleep_backend(3)); and a preload inherited from
			 * an outer launcher: told too.
			 */
			if (setenv("ZEROSLEEP_SUPERVISED",
				   zerosleep_policy_name(policy), 1) < 0 ||
			    (preload_loaded() &&
			     setenv("ZEROSLEEP_POLICY",
				    zerosleep_policy_name(policy), 1) < 0)) {
				fprintf(stderr, PROG ": cannot set the "
					"environment: %s\n", strerror(errno));
				return EXIT_FAIL;
			}
			return zs_supervise(policy, argv + optind,
					    zs_supervisor_privileged() ?
					    ZS_SUP_PRIVILEGED : 0);
		}
		fallback(policy, argv[optind], file, run_anyway);
	}

	execvp(argv[optind], argv + optind);
	/* ENOENT for a command that exists: its #! interpreter's, named. */
	err = errno;
	file = err == ENOENT ? find_command(argv[optind], buf, sizeof(buf)) : NULL;
	return exec_failed_file(argv[optind], file, err);
}
