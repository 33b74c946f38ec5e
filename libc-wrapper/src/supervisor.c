// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The supervised fallback of the zerosleep launcher, for what the preload
 * library cannot reach on a kernel without the series: statically linked
 * programs, raw syscall() callers, children started with a cleaned
 * environment, programs of the other word size.
 *
 * The launcher forks; the child installs a seccomp filter that sends only
 * nanosleep() and clock_nanosleep() (every entry point of x86-64, x32,
 * i386, arm64 and its AArch32, riscv64 and loongarch64, time32 and time64:
 * the table abi_calls[]) to a listener, hands the listener to the
 * launcher over a socket and executes the command.  The filter is inherited
 * by every thread and child and kept across execve().  The launcher serves
 * the listener: it reads the request from the caller's memory, and answers
 * a zero-length one (SPEC 3.2: relative 0 s 0 ns; absolute at or before the
 * caller's clock, on REALTIME, MONOTONIC, BOOTTIME and TAI) as the policy
 * says; every other call continues (SECCOMP_USER_NOTIF_FLAG_CONTINUE), so
 * the kernel itself gives EFAULT, EINVAL, EINTR and restarts, and sleeps.
 *
 *   return      0 at once.  The listener asks for the synchronous wake-up
 *               (Linux 6.6), so the round trip stays on one CPU.
 *   schedule    0 at once, without the synchronous wake-up: waiting for
 *               the answer, the caller has left the CPU (it blocks in the
 *               kernel, a voluntary context switch), and its wake-up is an
 *               ordinary one, so other runnable tasks get their turn.
 *   full-slack  on a kernel whose own zero-length sleep sleeps for the
 *               slack (before 7.2), the call continues.  On one that
 *               returns early (probed at start, as the preload does), 0
 *               when the caller's slack has passed: a timerfd in the
 *               serving loop, so no other call waits for it.
 *
 * Meanwhile the launcher stands in for the command: it forwards the
 * signals that others send it, stops when the command stops (so that the
 * shell's job control sees it), and ends as the command ended, with its
 * status or its signal.  The command stays in the launcher's process
 * group, so the terminal treats both as one job.  The launcher is a child
 * subreaper, so that orphaned descendants stay its descendants (Yama's
 * ptrace_scope 1 lets it read their memory).  When the command ends while
 * descendants still use the filter, a background server, forked from the
 * launcher, serves them until the last one is gone.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#include <zerosleep.h>
#include "supervisor.h"

#define PROG "zerosleep"
#define NSEC_PER_SEC 1000000000LL

/* Older uapi headers (Linux 6.1's, Debian 12's) lack these. */
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
# define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
# define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif
#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
# define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif
#ifndef CLOCK_TAI
# define CLOCK_TAI 11
#endif

enum call { CALL_OTHER, CALL_NANOSLEEP, CALL_CLOCK_NANOSLEEP, CALL_SECCOMP };
/* How the request's struct timespec is laid out. */
enum layout {
	TS64,		/* 64-bit seconds and nanoseconds */
	TS64_COMPAT,	/* the same, upper half of tv_nsec ignored (x32, time64) */
	TS32,		/* the old 32-bit timespec of i386 and AArch32 */
};

#define EXIT_FAIL 125

/* Older uapi headers (Linux 6.1's, Debian 12's) lack this one. */
#ifndef AUDIT_ARCH_LOONGARCH64
# define AUDIT_ARCH_LOONGARCH64	(258 | __AUDIT_ARCH_64BIT | __AUDIT_ARCH_LE)
#endif

/* x32's system calls are x86-64's (AUDIT_ARCH_X86_64) with this bit set. */
#define X32_BIT			0x40000000U

/*
 * The system call ABIs that the filter and decode() know: per ABI, its
 * nanosleep and clock_nanosleep (every time32 and time64 entry point), and
 * seccomp(), which the filter watches for a listener of the command's own.
 * Rows of one AUDIT_ARCH_* value stay together.  A kernel runs the ABIs of
 * its own machine only, so the rows of every machine are in every build:
 * those of another machine never match.  AArch64, riscv64 and loongarch64
 * use the generic numbers (asm-generic/unistd.h) and have no time32
 * calls; AArch32 (arm64's CONFIG_COMPAT) has arm's.  Every ABI here is
 * little-endian: the filter reads an argument's low word at its offset.
 */
static const struct abi_call {
	__u32 arch;		/* AUDIT_ARCH_* */
	__u32 nr;
	enum call call;
	enum layout layout;	/* of its struct timespec */
	int x32;		/* served only if the kernel runs x32 */
} abi_calls[] = {
	{ AUDIT_ARCH_X86_64, 35, CALL_NANOSLEEP, TS64, 0 },
	{ AUDIT_ARCH_X86_64, 230, CALL_CLOCK_NANOSLEEP, TS64, 0 },
	{ AUDIT_ARCH_X86_64, X32_BIT | 35, CALL_NANOSLEEP, TS64_COMPAT, 1 },
	{ AUDIT_ARCH_X86_64, X32_BIT | 230, CALL_CLOCK_NANOSLEEP, TS64_COMPAT, 1 },
	{ AUDIT_ARCH_X86_64, 317, CALL_SECCOMP, TS64, 0 },
	{ AUDIT_ARCH_X86_64, X32_BIT | 317, CALL_SECCOMP, TS64, 1 },
	{ AUDIT_ARCH_I386, 162, CALL_NANOSLEEP, TS32, 0 },
	{ AUDIT_ARCH_I386, 267, CALL_CLOCK_NANOSLEEP, TS32, 0 },
	{ AUDIT_ARCH_I386, 407, CALL_CLOCK_NANOSLEEP, TS64_COMPAT, 0 },
	{ AUDIT_ARCH_I386, 354, CALL_SECCOMP, TS32, 0 },
	{ AUDIT_ARCH_AARCH64, 101, CALL_NANOSLEEP, TS64, 0 },
	{ AUDIT_ARCH_AARCH64, 115, CALL_CLOCK_NANOSLEEP, TS64, 0 },
	{ AUDIT_ARCH_AARCH64, 277, CALL_SECCOMP, TS64, 0 },
	{ AUDIT_ARCH_ARM, 162, CALL_NANOSLEEP, TS32, 0 },
	{ AUDIT_ARCH_ARM, 265, CALL_CLOCK_NANOSLEEP, TS32, 0 },
	{ AUDIT_ARCH_ARM, 407, CALL_CLOCK_NANOSLEEP, TS64_COMPAT, 0 },
	{ AUDIT_ARCH_ARM, 383, CALL_SECCOMP, TS32, 0 },
	{ AUDIT_ARCH_RISCV64, 101, CALL_NANOSLEEP, TS64, 0 },
	{ AUDIT_ARCH_RISCV64, 115, CALL_CLOCK_NANOSLEEP, TS64, 0 },
	{ AUDIT_ARCH_RISCV64, 277, CALL_SECCOMP, TS64, 0 },
	{ AUDIT_ARCH_LOONGARCH64, 101, CALL_NANOSLEEP, TS64, 0 },
	{ AUDIT_ARCH_LOONGARCH64, 115, CALL_CLOCK_NANOSLEEP, TS64, 0 },
	{ AUDIT_ARCH_LOONGARCH64, 277, CALL_SECCOMP, TS64, 0 },
};
#define N_ABI_CALLS	(sizeof(abi_calls) / sizeof(abi_calls[0]))

/*
 * The machine the launcher is built for, by its native ABI, and its name
 * in the refusal.  On any other machine the filter would match no call,
 * and the command would run unsupervised while the launcher said it
 * supervised it: there the supervisor refuses instead (arch_unknown()).
 * -DZS_ARCH_KNOWN=0 tries the refusal on a known machine.
 */
#if defined(__x86_64__) && defined(__ILP32__)
# define ZS_NATIVE_ARCH	AUDIT_ARCH_X86_64	/* x32 */
#elif defined(__x86_64__)
# define ZS_NATIVE_ARCH	AUDIT_ARCH_X86_64
#elif defined(__i386__)
# define ZS_NATIVE_ARCH	AUDIT_ARCH_I386
#elif defined(__aarch64__) && !defined(__AARCH64EB__)
# define ZS_NATIVE_ARCH	AUDIT_ARCH_AARCH64
#elif defined(__riscv) && __riscv_xlen == 64
# define ZS_NATIVE_ARCH	AUDIT_ARCH_RISCV64
#elif defined(__loongarch64)
# define ZS_NATIVE_ARCH	AUDIT_ARCH_LOONGARCH64
#endif
#ifndef ZS_ARCH_KNOWN
# ifdef ZS_NATIVE_ARCH
#  define ZS_ARCH_KNOWN	1
# else
#  define ZS_ARCH_KNOWN	0
# endif
#endif
#define ZS_ARCHES	"x86-64, x32, i386, arm64 (and its AArch32), " \
			"riscv64 and loongarch64"

/* A full-slack answer that waits for the end of the caller's slack. */
struct pending {
	__u64 id;
	long long due;		/* CLOCK_MONOTONIC, ns */
};

struct supervisor {
	int policy;
	int listener, sigfd, timerfd;
	pid_t child;
	int status, done;	/* the command's wait status, once it ended */
	int early;		/* the kernel's own zero-length sleep returns early */
	int x32;		/* the kernel runs x32 system calls */
	long slack;		/* the command's starting slack, when /proc hides it */
	struct stat timens;	/* our time namespace (st_ino 0: unknown) */
	struct pending *queue;
	size_t queued, size;
};

static long long ns_of(const struct timespec *ts)
{
	return (long long)ts->tv_sec * NSEC_PER_SEC + ts->tv_nsec;
}

static long long mono_now(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return ns_of(&now);
}

int zs_supervisor_privileged(void)
{
	/* CAP_SYS_ADMIN is bit 21 of CapEff in /proc/self/status. */
	char line[256];
	unsigned long long eff;
	int ret = 0;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1) {
			ret = (eff >> 21) & 1;
			break;
		}
	fclose(f);
	return ret;
}

/* Why the filter cannot serve this machine's architecture, or NULL. */
static const char *arch_unknown(void)
{
	static char why[200];
	struct utsname u;

	if (ZS_ARCH_KNOWN)
		return NULL;
	if (uname(&u) < 0)
		strcpy(u.machine, "unknown");
	snprintf(why, sizeof(why), "it knows the system call numbers of "
		 ZS_ARCHES " only, not of this machine (%s)", u.machine);
	return why;
}

const char *zs_supervisor_unusable(void)
{
	char line[256];
	unsigned long long eff = 0;
	int scope = 0;
	const char *arch = arch_unknown();
	FILE *f;

	if (arch)
		return arch;
	f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
	if (!f)
		return NULL;
	if (fscanf(f, "%d", &scope) != 1)
		scope = 0;
	fclose(f);
	if (scope == 3)
		return "Yama's ptrace_scope is 3 (no process may read another's "
		       "memory)";
	if (scope != 2)
		return NULL;
	f = fopen("/proc/self/status", "re");
	if (f) {
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "CapEff: %llx", &eff) == 1)
				break;
		fclose(f);
	}
	/* CAP_SYS_PTRACE is bit 19. */
	if ((eff >> 19) & 1)
		return NULL;
	return "Yama's ptrace_scope is 2 (reading another process's memory "
	       "needs CAP_SYS_PTRACE)";
}

/*
 * The filter, made from abi_calls[]: nanosleep and clock_nanosleep of each
 * ABI to the listener, and seccomp(SECCOMP_SET_MODE_FILTER) with a
 * listener of its own, so that the supervisor can say why it fails;
 * everything else is allowed.  Per AUDIT_ARCH_* value, a block:
 *
 *	if (arch != ARCH) skip the block
 *	load nr; nr == each of its calls? to NOTIFY (or SECCOMP); ALLOW
 *
 * then ALLOW (no known ABI), NOTIFY, and SECCOMP: the operation, then the
 * flags.  Jumps only go forward, at most 255 instructions each: about
 * 40 in all.
 */
#define MAX_FILTER	(2 * N_ABI_CALLS + 8)

static size_t make_filter(struct sock_filter *f)
{
	size_t n = 0, i, j, end, fix[N_ABI_CALLS], nfix = 0, notify, sec;
	__u32 arch;

	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		offsetof(struct seccomp_data, arch));
	for (i = 0; i < N_ABI_CALLS; i = end) {
		arch = abi_calls[i].arch;
		for (end = i; end < N_ABI_CALLS && abi_calls[end].arch == arch; end++)
			;
		/* The block: this jump, the load, a test per call, ALLOW. */
		f[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
			arch, 0, (__u8)(end - i + 2));
		n++;
		f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			offsetof(struct seccomp_data, nr));
		for (j = i; j < end; j++) {
			f[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ |
				BPF_K, abi_calls[j].nr, 0, 0);
			fix[nfix++] = n++;	/* jt: filled in below */
		}
		f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
			SECCOMP_RET_ALLOW);
	}
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	notify = n;
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF);
	sec = n;
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		offsetof(struct seccomp_data, args));
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
		SECCOMP_SET_MODE_FILTER, 0, 3);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		offsetof(struct seccomp_data, args) + 8);
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K,
		SECCOMP_FILTER_FLAG_NEW_LISTENER, 0, 1);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	for (i = 0; i < nfix; i++)
		f[fix[i]].jt = (__u8)((abi_calls[i].call == CALL_SECCOMP ?
				       sec : notify) - fix[i] - 1);
	return n;
}
_Static_assert(2 * (sizeof(abi_calls) / sizeof(abi_calls[0])) + 8 < 255,
	       "every jump of the filter fits in 8 bits");

/* What the notification @d is: the call, and how its timespec is laid out. */
static enum call decode(const struct supervisor *s,
			const struct seccomp_data *d, enum layout *layout)
{
	size_t i;

	for (i = 0; i < N_ABI_CALLS; i++) {
		if (abi_calls[i].arch != d->arch ||
		    abi_calls[i].nr != (__u32)d->nr)
			continue;
		/* Without x32 the kernel fails the call with ENOSYS. */
		if (abi_calls[i].x32 && !s->x32)
			return CALL_OTHER;
		*layout = abi_calls[i].layout;
		return abi_calls[i].call;
	}
	return CALL_OTHER;
}

/*
 * Read the timespec at @addr in task @pid as the kernel would: 0 and *@ts
 * set when it is readable and valid, -1 otherwise (the kernel then fails
 * the call itself, with EFAULT or EINVAL).
 */
static int read_request(pid_t pid, __u64 addr, enum layout layout,
			struct timespec *ts)
{
	int64_t wide[2];
	int32_t narrow[2];
	struct iovec local, remote;
	long long sec, nsec;

	if (layout == TS32) {
		local.iov_base = narrow;
		local.iov_len = sizeof(narrow);
		addr &= 0xffffffffU;
	} else {
		local.iov_base = wide;
		local.iov_len = sizeof(wide);
	}
	remote.iov_base = (void *)(uintptr_t)addr;
	remote.iov_len = local.iov_len;
	if (process_vm_readv(pid, &local, 1, &remote, 1, 0) !=
	    (ssize_t)local.iov_len)
		return -1;
	if (layout == TS32) {
		sec = narrow[0];
		nsec = narrow[1];
	} else {
		sec = wide[0];
		nsec = wide[1];
		/* In compat mode the kernel drops tv_nsec's padding. */
		if (layout == TS64_COMPAT)
			nsec = (uint32_t)wide[1];
	}
	if (sec < 0 || nsec < 0 || nsec >= NSEC_PER_SEC)
		return -1;
	ts->tv_sec = (time_t)sec;
	ts->tv_nsec = (long)nsec;
	return 0;
}

/*
 * Whether task @pid reads CLOCK_MONOTONIC and CLOCK_BOOTTIME as we do: in
 * our time namespace (or in none, on a kernel without them).
 */
static int same_timens(struct supervisor *s, pid_t pid)
{
	char path[64];
	struct stat st;

	if (!s->timens.st_ino)
		return errno = 0, stat("/proc/self/ns/time", &st) < 0 &&
		       errno == ENOENT;
	snprintf(path, sizeof(path), "/proc/%d/ns/time", (int)pid);
	return stat(path, &st) == 0 && st.st_ino == s->timens.st_ino &&
	       st.st_dev == s->timens.st_dev;
}

/*
 * How long ago, in ns, the requested expiry of @d (in task @pid) passed:
 * 0 for a relative zero-length sleep; -1 when it is not a zero-length
 * sleep, or when that cannot be told (then the kernel decides).
 */
static long long zero_length(struct supervisor *s, const struct seccomp_data *d,
			     enum call call, enum layout layout, pid_t pid)
{
	struct timespec req, now;
	clockid_t clock = CLOCK_MONOTONIC;
	int absolute = 0;
	__u64 addr = d->args[0];
	long long late;

	if (call == CALL_CLOCK_NANOSLEEP) {
		clock = (clockid_t)(int32_t)d->args[0];
		absolute = ((int32_t)d->args[1] & TIMER_ABSTIME) != 0;
		addr = d->args[2];
		if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC &&
		    clock != CLOCK_BOOTTIME && clock != CLOCK_TAI)
			return -1;
	}
	if (pid <= 0 || read_request(pid, addr, layout, &req) < 0)
		return -1;
	if (!absolute)
		return req.tv_sec == 0 && req.tv_nsec == 0 ? 0 : -1;
	if (clock_gettime(clock, &now) < 0)
		return -1;
	if (req.tv_sec > now.tv_sec ||
	    (req.tv_sec == now.tv_sec && req.tv_nsec > now.tv_nsec))
		return -1;
	/* A caller in another time namespace has another monotonic clock. */
	if ((clock == CLOCK_MONOTONIC || clock == CLOCK_BOOTTIME) &&
	    !same_timens(s, pid))
		return -1;
	if (now.tv_sec - req.tv_sec > 1000000)
		return LLONG_MAX / 2;
	late = ns_of(&now) - ns_of(&req);
	return late;
}

static void respond(struct supervisor *s, __u64 id, int cont)
{
	struct seccomp_notif_resp resp;

	memset(&resp, 0, sizeof(resp));
	resp.id = id;
	if (cont)
		resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	/* ENOENT: the caller is gone, or a signal took it away meanwhile. */
	ioctl(s->listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
}

/* The timer slack of thread @tid, in ns. */
static long slack_of(struct supervisor *s, pid_t tid)
{
	char path[64], buf[32];
	ssize_t n;
	long slack;
	int fd;

	/* Another process's slack needs CAP_SYS_NICE: else the starting one. */
	snprintf(path, sizeof(path), "/proc/%d/timerslack_ns", (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return s->slack;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return s->slack;
	buf[n] = '\0';
	slack = strtol(buf, NULL, 10);
	return slack >= 0 ? slack : s->slack;
}

static void arm_timer(struct supervisor *s)
{
	struct itimerspec it;
	long long due;
	size_t i;

	memset(&it, 0, sizeof(it));
	if (s->queued) {
		due = s->queue[0].due;
		for (i = 1; i < s->queued; i++)
			if (s->queue[i].due < due)
				due = s->queue[i].due;
		it.it_value.tv_sec = (time_t)(due / NSEC_PER_SEC);
		it.it_value.tv_nsec = (long)(due % NSEC_PER_SEC);
		if (!it.it_value.tv_sec && !it.it_value.tv_nsec)
			it.it_value.tv_nsec = 1;
	}
	timerfd_settime(s->timerfd, TFD_TIMER_ABSTIME, &it, NULL);
}

/* Answer 0 to every full-slack sleep whose slack has passed. */
static void answer_due(struct supervisor *s)
{
	long long now = mono_now();
	size_t i = 0;
	uint64_t ticks;

	if (read(s->timerfd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
		return;
	while (i < s->queued) {
		if (s->queue[i].due <= now) {
			respond(s, s->queue[i].id, 0);
			s->queue[i] = s->queue[--s->queued];
		} else {
			i++;
		}
	}
	arm_timer(s);
}

/* Queue a 0 for @id at @due; 0 at once when memory runs out. */
static void answer_later(struct supervisor *s, __u64 id, long long due)
{
	struct pending *bigger;
	size_t size;

	if (s->queued == s->size) {
		size = s->size ? 2 * s->size : 16;
		bigger = realloc(s->queue, size * sizeof(*bigger));
		if (!bigger) {
			respond(s, id, 0);
			return;
		}
		s->queue = bigger;
		s->size = size;
	}
	s->queue[s->queued].id = id;
	s->queue[s->queued].due = due;
	s->queued++;
	arm_timer(s);
}

static void handle(struct supervisor *s)
{
	struct seccomp_notif req;
	enum layout layout = TS64;
	enum call call;
	long long late;
	long slack;

	memset(&req, 0, sizeof(req));
	if (ioctl(s->listener, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
		return;		/* ENOENT: the caller went away */
	call = decode(s, &req.data, &layout);
	if (call == CALL_SECCOMP) {
		fprintf(stderr, PROG ": process %d installs a seccomp filter "
			"with a listener of its own, which cannot work under "
			"the launcher's: it gets EBUSY (run it on a kernel with "
			"zero-length sleep policies, or with --fallback=preload "
			"if it is dynamically linked)\n", (int)req.pid);
		respond(s, req.id, 1);
		return;
	}
	/*
	 * No SECCOMP_IOCTL_NOTIF_ID_VALID after reading the caller's memory:
	 * what was read only decides the answer to this notification.  While
	 * the caller waits for it, its pid cannot be reused, so the memory
	 * was its own; once it has gone (killed, or a signal took it out of
	 * the call, which then makes a new notification), the answer fails
	 * with ENOENT, and reading another task's memory changed nothing.
	 */
	late = call == CALL_OTHER ? -1 :
	       zero_length(s, &req.data, call, layout, (pid_t)req.pid);
	if (late < 0) {
		respond(s, req.id, 1);
		return;
	}
	switch (s->policy) {
	case ZEROSLEEP_RETURN:
	case ZEROSLEEP_SCHEDULE:
		respond(s, req.id, 0);
		break;
	case ZEROSLEEP_FULL_SLACK:
		slack = slack_of(s, (pid_t)req.pid);
		/* The end of the slack has passed: nothing to sleep for. */
		if (slack <= 1 || late >= slack)
			respond(s, req.id, 0);
		else if (!s->early)
			respond(s, req.id, 1);	/* the kernel sleeps for it */
		else
			answer_later(s, req.id, mono_now() + (slack - late));
		break;
	default:
		respond(s, req.id, 1);
	}
}

/*
 * Does the kernel's own zero-length sleep return early (Linux 7.2)?  Ten
 * relative {0, 0} sleeps on CLOCK_TAI at 1 ms slack: if at least three in
 * four block (a voluntary context switch), the kernel sleeps for the slack
 * itself.  Our slack is restored afterwards.
 */
static int kernel_returns_early(void)
{
#ifdef ZS_SUPERVISOR_TEST_EARLY
	/* The test build: the timer path, on any kernel. */
	return 1;
#else
	struct timespec zero = { 0, 0 };
	struct rusage before, after;
	int i, slept = 0, calls = 0;
	long slack = prctl(PR_GET_TIMERSLACK, 0L, 0L, 0L, 0L);

	if (slack <= 0 || prctl(PR_SET_TIMERSLACK, 1000000L, 0L, 0L, 0L) < 0)
		return 1;
	for (i = 0; i < 8; i++) {
		if (getrusage(RUSAGE_THREAD, &before) < 0 ||
		    syscall(SYS_clock_nanosleep, CLOCK_TAI, 0, &zero, NULL) != 0 ||
		    getrusage(RUSAGE_THREAD, &after) < 0)
			break;
		slept += after.ru_nvcsw > before.ru_nvcsw;
		calls++;
	}
	prctl(PR_SET_TIMERSLACK, slack, 0L, 0L, 0L);
	return !(calls == 8 && 4 * slept >= 3 * calls);
#endif
}

/*
 * Does the kernel run x32 system calls?  Asked in a child of its own, in
 * case a filter that we run under kills the caller of a foreign ABI.
 */
static int kernel_runs_x32(void)
{
#if defined(__x86_64__) || defined(__i386__)
	int status;
	pid_t pid = fork();

	if (pid == 0)
		_exit(syscall(X32_BIT | SYS_getpid) == getpid() ? 0 : 1);
	if (pid < 0)
		return 1;	/* assume so: its zero-length sleeps are answered */
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return 1;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
#else
	return 0;	/* x32 is x86-64's */
#endif
}

/* The signals that the launcher forwards (and SIGCHLD), kept blocked. */
static void forwarded(sigset_t *set)
{
	static const int sync_sigs[] = {
		SIGKILL, SIGSTOP, SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP,
		SIGSYS,
	};
	size_t i;

	sigfillset(set);
	for (i = 0; i < sizeof(sync_sigs) / sizeof(sync_sigs[0]); i++)
		sigdelset(set, sync_sigs[i]);
}

/* Stop as the command stopped, so that the shell sees the job stop. */
static void stop_like(int sig)
{
	sigset_t one;

	if (sig != SIGTSTP && sig != SIGTTIN && sig != SIGTTOU) {
		kill(getpid(), SIGSTOP);
		return;
	}
	sigemptyset(&one);
	sigaddset(&one, sig);
	signal(sig, SIG_DFL);
	raise(sig);
	sigprocmask(SIG_UNBLOCK, &one, NULL);
	sigprocmask(SIG_BLOCK, &one, NULL);
}

/* End as the command ended: killed by @sig. */
static void __attribute__((noreturn)) die_like(int sig)
{
	struct rlimit none = { 0, 0 };
	sigset_t one;

	/* The command dumped its core if it was to: not the launcher too. */
	setrlimit(RLIMIT_CORE, &none);
	signal(sig, SIG_DFL);
	sigemptyset(&one);
	sigaddset(&one, sig);
	kill(getpid(), sig);
	sigprocmask(SIG_UNBLOCK, &one, NULL);
	_exit(128 + sig);
}

/* Reap what has ended: the command (its status kept) and adopted orphans. */
static void reap(struct supervisor *s)
{
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG | WUNTRACED)) > 0) {
		if (pid != s->child)
			continue;
		if (WIFSTOPPED(status)) {
			stop_like(WSTOPSIG(status));
		} else {
			s->status = status;
			s->done = 1;
		}
	}
}

static void on_signal(struct supervisor *s)
{
	struct signalfd_siginfo si;
	pid_t sender;

	while (read(s->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGCHLD) {
			reap(s);
			continue;
		}
		/*
		 * The terminal's signals (SI_KERNEL) reached the command too:
		 * it is in our process group.  (A signal that another process
		 * sends to the whole group reaches it twice: from the sender
		 * and from us; kill(1) cannot tell us which it was.)
		 */
		if (si.ssi_code > 0 || s->done)
			continue;
		sender = (pid_t)si.ssi_pid;
		if (sender == getpid() || sender == s->child)
			continue;
		if (si.ssi_code == SI_QUEUE) {
			union sigval v;

			v.sival_ptr = (void *)(uintptr_t)si.ssi_ptr;
			sigqueue(s->child, (int)si.ssi_signo, v);
		} else {
			kill(s->child, (int)si.ssi_signo);
		}
	}
}

/* Serve the listener until the command ends (@launcher) or no one uses it. */
static void serve(struct supervisor *s, int launcher)
{
	struct pollfd fds[3];
	int nfds;

	for (;;) {
		if (launcher && s->done)
			return;
		fds[0].fd = s->listener;
		fds[0].events = POLLIN;
		fds[1].fd = s->timerfd;
		fds[1].events = POLLIN;
		fds[2].fd = s->sigfd;
		fds[2].events = POLLIN;
		nfds = launcher ? 3 : 2;
		if (poll(fds, (nfds_t)nfds, -1) < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		if (fds[0].revents & POLLIN)
			handle(s);
		if (fds[1].revents & POLLIN)
			answer_due(s);
		if (launcher && (fds[2].revents & POLLIN))
			on_signal(s);
		/* No task uses the filter any more. */
		if (!launcher && (fds[0].revents & (POLLHUP | POLLERR | POLLNVAL)) &&
		    !s->queued)
			return;
	}
}

/*
 * The command has ended.  If its descendants still use the filter, serve
 * them from a background process, outside the terminal's job.
 */
static void hand_over(struct supervisor *s)
{
	struct pollfd pfd = { .fd = s->listener, .events = POLLIN };
	sigset_t none;
	pid_t pid;
	int fd;

	if (poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLHUP) && !s->queued)
		return;
	pid = fork();
	if (pid != 0)
		return;		/* a failed fork leaves them to the kernel */
	setsid();
	close(s->sigfd);
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		dup2(fd, STDIN_FILENO);
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		if (fd > STDERR_FILENO)
			close(fd);
	}
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	prctl(PR_SET_PDEATHSIG, 0L, 0L, 0L, 0L);
	serve(s, 0);
	free(s->queue);
	_exit(0);
}

/* Send @fd over @sock. */
static int send_fd(int sock, int fd)
{
	char byte = 0, ctl[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg;
	struct cmsghdr *cmsg;

	memset(&msg, 0, sizeof(msg));
	memset(ctl, 0, sizeof(ctl));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = ctl;
	msg.msg_controllen = sizeof(ctl);
	cmsg = CMSG_FIRSTHDR(&msg);
	cmsg->cmsg_level = SOL_SOCKET;
	cmsg->cmsg_type = SCM_RIGHTS;
	cmsg->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cmsg), &fd, sizeof(int));
	return sendmsg(sock, &msg, MSG_NOSIGNAL) == 1 ? 0 : -1;
}

/* Receive a descriptor from @sock: it, or -1 (*@err: the child's errno). */
static int recv_fd(int sock, int *err)
{
	char ctl[CMSG_SPACE(sizeof(int))];
	int value = 0, fd = -1;
	struct iovec iov = { .iov_base = &value, .iov_len = sizeof(value) };
	struct msghdr msg;
	struct cmsghdr *cmsg;
	ssize_t n;

	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = ctl;
	msg.msg_controllen = sizeof(ctl);
	do
		n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	cmsg = n > 0 ? CMSG_FIRSTHDR(&msg) : NULL;
	if (cmsg && cmsg->cmsg_level == SOL_SOCKET &&
	    cmsg->cmsg_type == SCM_RIGHTS)
		memcpy(&fd, CMSG_DATA(cmsg), sizeof(int));
	*err = n == (ssize_t)sizeof(value) ? value : 0;
	return fd;
}

/* In the child: install the filter, hand over its listener, run argv. */
static void __attribute__((noreturn))
child(int sock, const sigset_t *mask, int policy, char *const argv[],
      unsigned int flags)
{
	struct sock_filter filter[MAX_FILTER];
	struct sock_fprog prog = { .filter = filter };
	unsigned long fflags = SECCOMP_FILTER_FLAG_NEW_LISTENER;
	int fd, err;

	prog.len = (unsigned short)make_filter(filter);
	/*
	 * A signal that interrupts a sleep before the supervisor has taken
	 * it restarts it, or fails it with EINTR, as the kernel's own sleep;
	 * once taken, return and schedule answer at once, so only a fatal
	 * signal interrupts.  full-slack may wait: any signal interrupts.
	 */
	if (policy != ZEROSLEEP_FULL_SLACK)
		fflags |= SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
	if (!(flags & ZS_SUP_PRIVILEGED) &&
	    prctl(PR_SET_NO_NEW_PRIVS, 1L, 0L, 0L, 0L) < 0)
		goto fail;
	fd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, fflags, &prog);
	if (fd < 0 && errno == EINVAL &&
	    (fflags & SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV)) {
		/* Before Linux 5.19. */
		fflags &= ~SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
		fd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, fflags,
				  &prog);
	}
	if (fd < 0 || send_fd(sock, fd) < 0)
		goto fail;
	close(fd);
	sigprocmask(SIG_SETMASK, mask, NULL);
	execvp(argv[0], argv);
	fprintf(stderr, PROG ": failed to execute '%s': %s\n", argv[0],
		strerror(errno));
	_exit(errno == ENOENT ? 127 : 126);
fail:
	err = errno;
	if (write(sock, &err, sizeof(err)) < 0)
		_exit(EXIT_FAIL);
	_exit(EXIT_FAIL);
}

int zs_supervise(int policy, char *const argv[], unsigned int flags)
{
	struct supervisor s;
	sigset_t set, old;
	int sv[2], err = 0, status;
	struct stat st;
	const char *arch = arch_unknown();

	if (arch) {
		fprintf(stderr, PROG ": the supervisor cannot run '%s': %s\n",
			argv[0], arch);
		return EXIT_FAIL;
	}
	memset(&s, 0, sizeof(s));
	s.policy = policy;
	s.listener = s.sigfd = s.timerfd = -1;
	s.slack = prctl(PR_GET_TIMERSLACK, 0L, 0L, 0L, 0L);
	if (policy == ZEROSLEEP_FULL_SLACK)
		s.early = kernel_returns_early();
	if (stat("/proc/self/ns/time", &st) == 0)
		s.timens = st;
	s.x32 = kernel_runs_x32();

	forwarded(&set);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		fprintf(stderr, PROG ": cannot start the supervisor: %s\n",
			strerror(errno));
		return EXIT_FAIL;
	}
	s.timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	sigprocmask(SIG_BLOCK, &set, &old);
	s.sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	/* Orphaned descendants stay ours: we may read their memory. */
	prctl(PR_SET_CHILD_SUBREAPER, 1L, 0L, 0L, 0L);
	if (s.timerfd < 0 || s.sigfd < 0 || (s.child = fork()) < 0) {
		fprintf(stderr, PROG ": cannot start the supervisor: %s\n",
			strerror(errno));
		return EXIT_FAIL;
	}
	if (s.child == 0) {
		close(sv[0]);
		close(s.sigfd);
		close(s.timerfd);
		child(sv[1], &old, policy, argv, flags);
	}
	close(sv[1]);
	s.listener = recv_fd(sv[0], &err);
	close(sv[0]);
	if (s.listener < 0) {
		if (err == EBUSY)
			fprintf(stderr, PROG ": cannot install the supervisor's "
				"seccomp filter: %s (a seccomp listener is "
				"installed already: is " PROG " running under "
				"another supervisor?)\n", strerror(err));
		else if (err)
			fprintf(stderr, PROG ": cannot install the supervisor's "
				"seccomp filter: %s\n", strerror(err));
		else
			fprintf(stderr, PROG ": the supervisor's child ended "
				"before it installed the seccomp filter\n");
		while (waitpid(s.child, &status, 0) < 0 && errno == EINTR)
			;
		return EXIT_FAIL;
	}
	/*
	 * The synchronous wake-up (Linux 6.6) keeps return's round trip on
	 * one CPU.  Not for schedule: its caller must make way for others.
	 */
	if (policy == ZEROSLEEP_RETURN)
		ioctl(s.listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS,
		      (__u64)SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP);
	/* Our own timers, the full-slack answers, fire on time. */
	prctl(PR_SET_TIMERSLACK, 1L, 0L, 0L, 0L);

	serve(&s, 1);
	reap(&s);
	hand_over(&s);
	close(s.listener);
	close(s.timerfd);
	close(s.sigfd);
	free(s.queue);
	if (WIFSIGNALED(s.status))
		die_like(WTERMSIG(s.status));
	return WEXITSTATUS(s.status);
}
