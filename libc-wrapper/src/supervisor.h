/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The launcher's supervised fallback (src/supervisor.c): COMMAND runs under
 * a seccomp filter that sends its nanosleep() and clock_nanosleep() calls
 * to the launcher, which answers the zero-length ones as the policy says.
 */
#ifndef ZEROSLEEP_SUPERVISOR_H
#define ZEROSLEEP_SUPERVISOR_H

/* zs_supervise() flags. */
enum {
	ZS_SUP_PRIVILEGED = 1,	/* no no_new_privs: the launcher has CAP_SYS_ADMIN */
};

/*
 * Whether the calling process can install a filter without no_new_privs
 * (it holds CAP_SYS_ADMIN), so that set-user-ID programs keep their
 * privileges under the supervisor.
 */
int zs_supervisor_privileged(void);

/*
 * Why the supervisor cannot read other processes' memory here (Yama's
 * ptrace_scope 2 or 3 without CAP_SYS_PTRACE), or NULL when it can.
 */
const char *zs_supervisor_unusable(void);

/*
 * Run argv[0] (found with PATH, as execvp() does) under the supervisor with
 * @policy (not ZEROSLEEP_DEFAULT).  Returns the exit status for the
 * launcher: the command's own, 125 for the supervisor's failures (said on
 * stderr), 126 or 127 when the command cannot be run.  When the command is
 * killed by a signal, the launcher kills itself with it and does not return.
 */
int zs_supervise(int policy, char *const argv[], unsigned int flags);

#endif
