// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * spawn-threads: a process for the launcher's -a to walk while it keeps
 * starting threads.  tests/test-cli.sh runs it on a kernel with the series.
 *
 *   spawn-threads READY POLICY
 *	Start threads at a high rate, create the file READY, and go on
 *	until SIGUSR1 (sent once "zerosleep -a -p POLICY PID" has returned);
 *	then check that every long-lived thread has POLICY (0 to 3).
 *   spawn-threads --reset READY
 *	Start two threads on each CPU that set their own policy back to the
 *	one they started with, again and again, then 256 idle threads, and
 *	create READY.  With two on every CPU, the launcher's included, and
 *	passes longer than a scheduler tick, one of them runs between two
 *	passes, as good as always.  (Left to the scheduler, they all sat on
 *	one CPU at first, which the busy host running QEMU held up for whole
 *	passes of a short walk.)  On SIGUSR1, say how many times at most
 *	one of them found its policy changed, which is at most the number
 *	of passes of the walk, and exit.
 *
 * The first: main() starts a watcher, 256 idle threads and 4 spawners, in
 * that order, so that a walk in increasing thread ID order has much to do
 * before it reaches the spawners.  The spawners start workers that live
 * 2 ms, at most 16 at a time, as fast as they can.  A worker that started
 * with the old policy and finds at the end of its 2 ms that the walk has
 * begun (the watcher saw main()'s policy change, or a spawner its own)
 * stays alive until the end instead: it was started by a spawner that the
 * walk had not set yet, maybe after a pass had listed the threads, and
 * only a later pass can find it.  After SIGUSR1 the spawners stop, the
 * short-lived workers are waited for, and every thread left (main, the
 * watcher, the idle threads, the spawners and the kept workers) must have
 * POLICY in /proc/self/task/TID/timerslack_zero_policy.
 *
 * One line on stdout says what was seen.  Exit status 0 if every thread
 * had POLICY, 1 if not, 2 on bad usage or any other failure.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <zerosleep.h>

#define IDLE_THREADS	256
#define SPAWNERS	4
#define MAX_SHORT	16		/* short-lived workers alive at once */
#define SHORT_LIFE_NS	2000000L	/* 2 ms */
#define MAX_KEPT	2048
#define TIMEOUT_S	3600
#define RESETTERS_PER_CPU 2
#define MAX_RESETTERS	256

static int old_policy, new_policy;
static atomic_int walking, stopping, kept, born_old, born_new, dropped;
static atomic_long started;

/* The short-lived workers alive, under @lock; @cond when it changes. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int live_short;

/* The threads that live until the end, which the check reads. */
#define N_LONG (2 + IDLE_THREADS + SPAWNERS)
static pid_t long_tids[N_LONG];
static atomic_int n_long, n_noted;
static pid_t kept_tids[MAX_KEPT];

/* How many times each resetter found its policy changed. */
static atomic_int changes[MAX_RESETTERS];

static void __attribute__((noreturn, format(printf, 1, 2)))
fail(const char *fmt, ...)
{
	va_list ap;

	fputs("spawn-threads: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static int own_policy(void)
{
	return prctl(PR_GET_TIMERSLACK_ZERO_POLICY, 0L, 0L, 0L, 0L);
}

static void sleep_ns(long ns)
{
	struct timespec ts = { ns / 1000000000L, ns % 1000000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void note_long(void)
{
	long_tids[atomic_fetch_add(&n_long, 1)] = gettid();
	atomic_fetch_add(&n_noted, 1);
}

/* Live until the process exits: every signal is blocked. */
static void __attribute__((noreturn)) stay(void)
{
	for (;;)
		pause();
}

static void *idle(void *arg)
{
	(void)arg;
	note_long();
	stay();
}

static void short_done(void)
{
	pthread_mutex_lock(&lock);
	live_short--;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
}

static void *worker(void *arg)
{
	int policy = own_policy(), i;

	(void)arg;
	atomic_fetch_add(policy == old_policy ? &born_old : &born_new, 1);
	sleep_ns(SHORT_LIFE_NS);
	/*
	 * Started with the old policy, and the walk has begun: maybe after
	 * a pass had listed the threads, so only a later pass can find it.
	 * (Looked at after its short life, so that the watcher's lag
	 * does not matter.)
	 */
	if (policy == old_policy && atomic_load(&walking)) {
		i = atomic_fetch_add(&kept, 1);
		if (i < MAX_KEPT) {
			kept_tids[i] = gettid();
			short_done();
			stay();
		}
		atomic_fetch_add(&dropped, 1);
	}
	short_done();
	return NULL;
}

static void *spawner(void *arg)
{
	pthread_attr_t *attr = arg;
	pthread_t thread;

	note_long();
	for (;;) {
		if (own_policy() != old_policy)
			atomic_store(&walking, 1);
		pthread_mutex_lock(&lock);
		while (live_short >= MAX_SHORT && !atomic_load(&stopping))
			pthread_cond_wait(&cond, &lock);
		if (atomic_load(&stopping)) {
			pthread_mutex_unlock(&lock);
			break;
		}
		live_short++;
		pthread_mutex_unlock(&lock);
		if (pthread_create(&thread, attr, worker, NULL) != 0) {
			short_done();
			sleep_ns(1000000);	/* out of threads for now */
			continue;
		}
		atomic_fetch_add(&started, 1);
	}
	stay();
}

/* Until the walk begins: watch main()'s policy, which it sets first. */
static void *watcher(void *arg)
{
	(void)arg;
	note_long();
	while (!atomic_load(&walking) && !atomic_load(&stopping)) {
		if (zerosleep_get_tid_policy(getpid()) != old_policy ||
		    own_policy() != old_policy)
			atomic_store(&walking, 1);
		sleep_ns(100000);
	}
	stay();
}

/* @arg: the resetter's number, times CPU_SETSIZE, plus its CPU. */
static void *resetter(void *arg)
{
	long cpu = (long)arg % CPU_SETSIZE, n = (long)arg / CPU_SETSIZE;
	cpu_set_t cpus;

	CPU_ZERO(&cpus);
	CPU_SET(cpu, &cpus);
	sched_setaffinity(0, sizeof(cpus), &cpus);
	for (;;) {
		if (own_policy() != old_policy)
			atomic_fetch_add(&changes[n], 1);
		prctl(PR_SET_TIMERSLACK_ZERO_POLICY, (long)old_policy,
		      0L, 0L, 0L);
	}
	return NULL;
}

static void start(pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	pthread_t thread;
	int err = pthread_create(&thread, attr, fn, arg);

	if (err)
		fail("pthread_create: %s", strerror(err));
}

static void make_ready(const char *file)
{
	int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0)
		fail("%s: %s", file, strerror(errno));
	close(fd);
}

/* Check one thread: 1 if it has the new policy; says why not on @out. */
static int check(pid_t tid, const char *kind, char *out, size_t size)
{
	int policy = zerosleep_get_tid_policy(tid);
	size_t len = strlen(out);

	if (policy == new_policy)
		return 1;
	if (len + 1 < size)
		snprintf(out + len, size - len, " %s %d has %d%s", kind,
			 (int)tid, policy, policy < 0 ? " (gone)" : "");
	return 0;
}

int main(int argc, char **argv)
{
	struct timespec timeout = { TIMEOUT_S, 0 };
	int i, j, n, good = 0, checked = 0, most = 0;
	char bad[512] = "";
	pthread_attr_t attr;
	cpu_set_t cpus;
	sigset_t set;

	if (argc != 3 || (strcmp(argv[1], "--reset") != 0 &&
			  (strlen(argv[2]) != 1 || argv[2][0] < '0' ||
			   argv[2][0] > '0' + ZEROSLEEP_FULL_SLACK)))
		fail("usage: spawn-threads READY POLICY(0-3) | --reset READY");
	old_policy = own_policy();
	if (old_policy < 0)
		fail("PR_GET_TIMERSLACK_ZERO_POLICY: %s", strerror(errno));

	/* Every thread blocks them; main() waits for them. */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 64 * 1024);

	if (strcmp(argv[1], "--reset") == 0) {
		if (sched_getaffinity(0, sizeof(cpus), &cpus) < 0)
			fail("sched_getaffinity: %s", strerror(errno));
		n = 0;
		for (i = 0; i < CPU_SETSIZE; i++)
			for (j = 0; CPU_ISSET(i, &cpus) &&
				    j < RESETTERS_PER_CPU && n < MAX_RESETTERS;
			     j++, n++)
				start(&attr, resetter,
				      (void *)((long)n * CPU_SETSIZE + i));
		for (i = 0; i < IDLE_THREADS; i++)
			start(&attr, idle, NULL);
		make_ready(argv[2]);
		if (sigtimedwait(&set, NULL, &timeout) < 0)
			fail("no signal within %d s", TIMEOUT_S);
		for (i = 0; i < n; i++)
			if (atomic_load(&changes[i]) > most)
				most = atomic_load(&changes[i]);
		printf("%d resetters; one found its policy changed %d times "
		       "at most\n", n, most);
		return 0;
	}

	new_policy = argv[2][0] - '0';
	if (new_policy == old_policy)
		fail("already has policy %d", new_policy);
	note_long();
	start(&attr, watcher, NULL);
	for (i = 0; i < IDLE_THREADS; i++)
		start(&attr, idle, NULL);
	for (i = 0; i < SPAWNERS; i++)
		start(&attr, spawner, &attr);
	/* Ready once every thread is known and the spawners are at work. */
	while (atomic_load(&n_noted) < N_LONG || atomic_load(&started) < 100)
		sleep_ns(1000000);
	make_ready(argv[1]);

	if (sigtimedwait(&set, NULL, &timeout) < 0)
		fail("no signal within %d s", TIMEOUT_S);
	pthread_mutex_lock(&lock);
	atomic_store(&stopping, 1);
	pthread_cond_broadcast(&cond);
	while (live_short > 0)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);

	for (i = 0; i < N_LONG; i++, checked++)
		good += check(long_tids[i], i == 0 ? "main" : "thread", bad,
			      sizeof(bad));
	n = atomic_load(&kept);
	for (i = 0; i < n && i < MAX_KEPT; i++, checked++)
		good += check(kept_tids[i], "worker", bad, sizeof(bad));
	printf("%ld workers started, %d with policy %d, %d with %d; kept %d "
	       "that started with %d and lived until the walk began (%d more "
	       "not kept); %d long-lived threads checked, %d without policy "
	       "%d%s%s\n", atomic_load(&started), atomic_load(&born_old),
	       old_policy, atomic_load(&born_new), new_policy,
	       n < MAX_KEPT ? n : MAX_KEPT, old_policy, atomic_load(&dropped),
	       checked, checked - good, new_policy, bad[0] ? ":" : "", bad);
	return good == checked ? 0 : 1;
}
