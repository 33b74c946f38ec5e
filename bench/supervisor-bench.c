// SPDX-License-Identifier: GPL-2.0
/*
 * The cost of a sleep in a statically linked program, for make
 * bench-supervisor (bench/supervisor.sh), which runs it plain and under
 * the launcher's supervised fallback.
 *
 *   supervisor-bench SLACK_NS NS CALLS
 *
 * Sets the thread's timer slack to SLACK_NS, makes CALLS nanosleep() calls
 * of NS ns (0: zero-length) and prints the median and the mean time per
 * call, in ns, on one line.
 *
 *   supervisor-bench --floor CALLS
 *
 * The floor of any seccomp supervisor on this machine: a child installs a
 * filter that sends nanosleep() and clock_nanosleep() to a listener, which
 * this process answers with SECCOMP_IOCTL_NOTIF_RECV and _SEND alone (0,
 * at once, with the synchronous wake-up where the kernel has it: Linux
 * 6.6), without reading the request.  The child's CALLS zero-length
 * nanosleep() calls are timed as above.
 *
 *   supervisor-bench --syscall CALLS
 *
 * The cost of one system call here, getppid(): the median and the mean.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/time.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
# define SECCOMP_IOCTL_NOTIF_SET_FLAGS	SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
# define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP	(1UL << 0)
#endif

static long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int compare(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return (x > y) - (x < y);
}

/* Times @calls calls of nanosleep(@ts) or getppid(); prints median, mean. */
static int time_calls(const struct timespec *ts, long calls)
{
	long long *t, start, first;
	long i;

	t = malloc(calls * sizeof(*t));
	if (!t) {
		perror("supervisor-bench");
		return 1;
	}
	if (ts)
		nanosleep(ts, NULL);	/* warm-up */
	first = now_ns();
	for (i = 0; i < calls; i++) {
		start = now_ns();
		if (ts)
			nanosleep(ts, NULL);
		else
			syscall(SYS_getppid);
		t[i] = now_ns() - start;
	}
	start = now_ns() - first;
	qsort(t, calls, sizeof(*t), compare);
	printf("%lld %lld\n", t[calls / 2], start / calls);
	fflush(stdout);
	free(t);
	return 0;
}

/* The child of --floor: filter, listener to the parent over @sock, calls. */
static void floor_child(int sock, long calls)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_nanosleep, 1, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clock_nanosleep, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(code) / sizeof(code[0]), code };
	struct timespec zero = { 0, 0 };
	char cbuf[CMSG_SPACE(sizeof(int))], go;
	struct iovec iov = { &go, 1 };
	struct msghdr msg = { 0 };
	struct cmsghdr *cmsg;
	int fd;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1L, 0L, 0L, 0L))
		_exit(1);
	fd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			  SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
	if (fd < 0)
		_exit(1);
	memset(cbuf, 0, sizeof(cbuf));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cbuf;
	msg.msg_controllen = sizeof(cbuf);
	cmsg = CMSG_FIRSTHDR(&msg);
	cmsg->cmsg_level = SOL_SOCKET;
	cmsg->cmsg_type = SCM_RIGHTS;
	cmsg->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cmsg), &fd, sizeof(int));
	if (sendmsg(sock, &msg, 0) != 1 || read(sock, &go, 1) != 1)
		_exit(1);
	close(fd);
	_exit(time_calls(&zero, calls));
}

static void on_alarm(int sig)
{
	(void)sig;
}

static int floor_bench(long calls)
{
	char cbuf[CMSG_SPACE(sizeof(int))], go = 0;
	struct iovec iov = { &go, 1 };
	struct msghdr msg = { 0 };
	struct seccomp_notif req;
	struct seccomp_notif_resp resp;
	struct cmsghdr *cmsg;
	struct sigaction sa = { .sa_handler = on_alarm };
	struct itimerval it = { { 0, 100000 }, { 0, 100000 } };
	int sv[2], fd, status;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return 1;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		close(sv[0]);
		floor_child(sv[1], calls);
	}
	close(sv[1]);
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cbuf;
	msg.msg_controllen = sizeof(cbuf);
	cmsg = recvmsg(sv[0], &msg, 0) == 1 ? CMSG_FIRSTHDR(&msg) : NULL;
	if (!cmsg || cmsg->cmsg_type != SCM_RIGHTS) {
		fprintf(stderr, "supervisor-bench: no listener from the child\n");
		waitpid(pid, &status, 0);
		return 1;
	}
	memcpy(&fd, CMSG_DATA(cmsg), sizeof(int));
	ioctl(fd, SECCOMP_IOCTL_NOTIF_SET_FLAGS, (__u64)SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP);
	/*
	 * SECCOMP_IOCTL_NOTIF_RECV may keep waiting when the child has gone:
	 * a timer interrupts it every 100 ms (no SA_RESTART) to look.
	 */
	if (sigaction(SIGALRM, &sa, NULL) || setitimer(ITIMER_REAL, &it, NULL) ||
	    write(sv[0], &go, 1) != 1) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		return 1;
	}
	for (;;) {
		memset(&req, 0, sizeof(req));
		if (ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0) {
			/* ENOENT: the caller left, or (Linux 6.x) the filter has no users. */
			if ((errno == EINTR || errno == ENOENT) &&
			    waitpid(pid, &status, WNOHANG) == pid)
				break;
			if (errno == EINTR || errno == ENOENT)
				continue;
			perror("supervisor-bench: SECCOMP_IOCTL_NOTIF_RECV");
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			return 1;
		}
		memset(&resp, 0, sizeof(resp));
		resp.id = req.id;
		ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int main(int argc, char **argv)
{
	struct timespec ts = { 0, 0 };
	long long *t, start, first;
	long calls, i;

	if (argc == 3 && !strcmp(argv[1], "--syscall") && (calls = atol(argv[2])) > 0)
		return time_calls(NULL, calls);
	if (argc == 3 && !strcmp(argv[1], "--floor") && (calls = atol(argv[2])) > 0)
		return floor_bench(calls);
	if (argc != 4 || (calls = atol(argv[3])) <= 0 || atol(argv[2]) < 0 ||
	    atol(argv[2]) >= 1000000000L || atol(argv[1]) <= 0) {
		fprintf(stderr, "usage: %s SLACK_NS NS CALLS\n", argv[0]);
		return 2;
	}
	ts.tv_nsec = atol(argv[2]);
	t = malloc(calls * sizeof(*t));
	if (!t || prctl(PR_SET_TIMERSLACK, atol(argv[1]), 0L, 0L, 0L)) {
		perror("supervisor-bench");
		return 1;
	}
	nanosleep(&ts, NULL);	/* warm-up */
	first = now_ns();
	for (i = 0; i < calls; i++) {
		start = now_ns();
		nanosleep(&ts, NULL);
		t[i] = now_ns() - start;
	}
	start = now_ns() - first;
	qsort(t, calls, sizeof(*t), compare);
	printf("%lld %lld\n", t[calls / 2], start / calls);
	free(t);
	return 0;
}
