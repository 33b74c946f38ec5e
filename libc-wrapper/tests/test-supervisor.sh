#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Tests of the launcher's supervised fallback on a kernel without the
# series, TAP on stdout: which fallback is chosen and said, bad --fallback
# words, exit statuses and deaths by signal reproduced, signals forwarded
# (and the terminal's not twice), stops followed, the process group kept,
# descendants served after the command ends, a program's own seccomp
# listener, a nested launcher, set-user-ID programs.  What each sleep does
# under each policy is test-supervised's own TAP (run-tests.sh).
#
# Environment: O, the build directory (default ../../build/libc-wrapper
# from here); CLI_WRAPPER, a command such as valgrind to run the launcher
# under; PYTHON.
# shellcheck disable=SC2016
set -u

here=$(cd "$(dirname "$0")" && pwd)
B=${O:-$here/../../build/libc-wrapper}
ZS=$B/zerosleep
TS=$B/test-supervised
RS=$B/raw-sleep
read -ra wrapper <<<"${CLI_WRAPPER:-}"
PYTHON=${PYTHON:-$(command -v python3)}
# shellcheck source=scripts/tap.sh
. "$here/../../scripts/tap.sh"
T=$(mktemp -d "${TMPDIR:-/tmp}/zerosleep-sup.XXXXXX") || exit 1
chmod 0755 "$T"
trap 'rm -rf "$T"' EXIT

# On a failed check: the last launcher run.
last_run() {
	echo "#   last run: zerosleep ${last_args:-} (status ${rc:-})"
	sed 's/^/#   stdout: /' "$T/out" 2>/dev/null
	sed 's/^/#   stderr: /' "$T/err" 2>/dev/null
}
tap_on_fail=last_run

zs() {
	last_args="$*"
	"${wrapper[@]}" "$ZS" "$@" >"$T/out" 2>"$T/err" </dev/null
	rc=$?
}

# How the last command of a python3 run ended: "exit N" or "signal N".
ended() {
	last_args="$*"
	"$PYTHON" -c '
import subprocess, sys
r = subprocess.run(sys.argv[2:], stdout=open(sys.argv[1] + "/out", "w"),
                   stderr=open(sys.argv[1] + "/err", "w"))
print("signal %d" % -r.returncode if r.returncode < 0 else "exit %d" % r.returncode)
' "$T" "${wrapper[@]}" "$ZS" "$@"
}

status_is() { [[ $rc == "$1" ]]; }
stderr_empty() { [[ ! -s $T/err ]]; }
stdout_is() { [[ $(<"$T/out") == "$1" ]]; }
one_error_line() {
	local err word
	err=$(<"$T/err")
	[[ $err == "zerosleep: "* && $err != *$'\n'* ]] || return 1
	for word; do
		[[ $err == *"$word"* ]] || return 1
	done
}

# wait_for COMMAND...: up to 10 s for COMMAND to succeed.
wait_for() {
	local i
	for ((i = 0; i < 100; i++)); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}
state_of() { local s; s=$(<"/proc/$1/stat") && s=${s##*) } && echo "${s%% *}"; }
stopped() { [[ $(state_of "$1") == T ]]; }
gone() { [[ $(state_of "$1" 2>/dev/null) == Z || ! -e /proc/$1 ]]; }
# reap PID [CHILD]: its status in rc, once it ends; killed (with CHILD)
# when it has not ended within 10 s, so that a failure never hangs.
reap() {
	wait_for gone "$1" || kill -KILL "${2:-$1}" "$1" 2>/dev/null
	wait "$1"
	rc=$?
}

# ---- which fallback ---------------------------------------------------------

zs return "$TS" exit 7
check "a static program: the supervisor, status 7, one notice naming it and why" \
	eval 'status_is 7 && one_error_line "seccomp supervisor" "statically linked" "-q"'
zs -q schedule "$TS" exit 0
check "-q: no notice" eval 'status_is 0 && stderr_empty'
zs --fallback=supervisor full-slack /bin/sh -c 'exit 5'
check "--fallback=supervisor: a dynamically linked program too, one notice" \
	eval 'status_is 5 && one_error_line "seccomp supervisor"'
zs --fallback=preload return "$TS" exit 0
check "--fallback=preload: a static program gets 125, as before" \
	eval 'status_is 125 && one_error_line "cannot reach" "statically linked"'
# A dynamically linked program that imports syscall(): the preload for
# its C library sleeps, the supervisor behind it for its raw ones.
zs return "$RS" return
check "a dynamic program's raw syscall(SYS_nanosleep) zero-length sleeps get return under the default fallback" \
	eval 'status_is 0 && [[ $(<"$T/out") == "ok: "* ]]'
check "... with one notice naming the preload, the supervisor and syscall()" \
	one_error_line libzerosleep-preload.so "seccomp supervisor" "syscall()" "-q"
zs -q schedule "$RS" schedule
check "the same under schedule" eval 'status_is 0 && [[ $(<"$T/out") == "ok: "* ]]'
zs return /usr/bin/python3 -c 'import os; print(os.environ["LD_PRELOAD"], os.environ["ZEROSLEEP_POLICY"])'
check "/usr/bin/python3 imports syscall(): the supervisor, with the preload in LD_PRELOAD and the policy in ZEROSLEEP_POLICY" \
	eval 'status_is 0 && [[ $(<"$T/out") == *"libzerosleep-preload.so return-immediately" ]] &&
	      one_error_line "seccomp supervisor" libzerosleep-preload.so'
zs -q return "$ZS" -q schedule "$RS" schedule
check "a launcher under a launcher: the outer leaves it alone, the inner supervises its command" \
	eval 'status_is 0 && [[ $(<"$T/out") == "ok: "* ]]'
# What libzerosleep in the program says, and what it can change.
zs -q --fallback=supervisor return "$RS" backend
check "under the supervisor alone, zerosleep_backend() is SUPERVISOR, get gives return, set fails with ENOTSUP" \
	eval 'status_is 0 && stdout_is "supervisor return-immediately set:Operation not supported"'
zs -q return "$RS" backend
check "under both, the preload answers: PRELOAD, get gives return, set works (on the preload's policy)" \
	eval 'status_is 0 && stdout_is "preload return-immediately set:0"'
last_args="(ZEROSLEEP_SUPERVISED=return, no launcher) raw-sleep backend"
env ZEROSLEEP_SUPERVISED=return "$RS" backend >"$T/out" 2>"$T/err"
rc=$?
check "ZEROSLEEP_SUPERVISED without the supervisor's filter: NONE, ENOTSUP" \
	eval 'status_is 0 && stdout_is "none Operation not supported set:Operation not supported"'
zs return /bin/true
check "a dynamic program that does not import syscall(): the preload alone" \
	eval 'status_is 0 && one_error_line libzerosleep-preload.so && [[ $(<"$T/err") != *supervisor* ]]'
zs default "$TS" exit 4
check "default: no supervisor, no notice" eval 'status_is 4 && stderr_empty'
for w in --fallback=preloaded --fallback= --fallback=SUPERVISOR; do
	zs "$w" return "$TS" exit 0
	check "$w: exit 125, one line naming the word" \
		eval 'status_is 125 && one_error_line "unknown fallback" "(try"'
done
zs return --fallback
check "--fallback after the policy is COMMAND: not found, 127" eval 'status_is 127'
zs --fallback
check "--fallback without a value: exit 125, 'needs an argument'" \
	eval 'status_is 125 && one_error_line "needs an argument"'
zs --fallback=preload -p 1
check "--fallback with -p: exit 125" eval 'status_is 125 && one_error_line "--fallback"'
zs --kernel-only --fallback=supervisor return "$TS" exit 0
check "--kernel-only with --fallback: exit 125" \
	eval 'status_is 125 && one_error_line "exclude"'

# A machine whose system call numbers the filter does not know: the
# launcher built with -DZS_ARCH_KNOWN=0 must refuse in one line, 125, and
# never run the command unsupervised.
for f in "" --fallback=supervisor; do
	last_args="(built with -DZS_ARCH_KNOWN=0) $f return test-supervised exit 0"
	"${wrapper[@]}" "$B/zerosleep-noarch" $f return "$TS" exit 0 \
		>"$T/out" 2>"$T/err" </dev/null
	rc=$?
	check "an unknown architecture${f:+ ($f)}: exit 125, one line naming the machine" \
		eval 'status_is 125 && one_error_line "system call numbers" "$(uname -m)" && [[ ! -s $T/out ]]'
	sed 's/^/# refusal: /' "$T/err"
done

# ---- the program does not notice ------------------------------------------

for s in 0 1 255; do
	zs -q return "$TS" exit $s
	check "exit status $s forwarded" status_is $s
done
for sig in 15 11 6; do
	check "killed by signal $sig: the launcher dies of it too" \
		eval '[[ $(ended -q return "$TS" kill '$sig') == "signal '$sig'" ]]'
done
zs -q return "$TS" pgrp
check "the command is in the launcher's process group (the terminal's job)" \
	eval 'status_is 0 && stdout_is same'

"${wrapper[@]}" "$ZS" -q return "$TS" catch 10 "$T/usr1" &
pid=$!
wait_for test -e "$T/usr1.ready"
kill -USR1 "$pid"
reap "$pid"
check "SIGUSR1 sent to the launcher reaches the command, once" \
	eval 'status_is 0 && [[ $(<"$T/usr1") == 1 ]]'

"${wrapper[@]}" "$ZS" -q return "$TS" catch 12 "$T/none" &
pid=$!
wait_for test -e "$T/none.ready"
kill -TERM "$pid"
reap "$pid"
check "SIGTERM sent to the launcher kills the command, and the launcher of it" \
	eval 'status_is 143 && [[ ! -e $T/none ]]'

# The terminal's Ctrl-C reaches the command directly: not forwarded again.
"$PYTHON" - "$ZS" "$TS" "$T/int" <<'PY' >"$T/out" 2>"$T/err"
import os, pty, sys, time
zs, ts, out = sys.argv[1:]
pid, fd = pty.fork()
if pid == 0:
    os.execv(zs, [zs, "-q", "return", ts, "catch", "2", out])
for _ in range(100):
    if os.path.exists(out + ".ready"):
        break
    time.sleep(0.1)
for _ in range(3):
    os.write(fd, b"\x03")
    time.sleep(0.1)
try:
    while os.read(fd, 1024):
        pass
except OSError:
    pass
os.waitpid(pid, 0)
PY
check "Ctrl-C three times on the terminal: SIGINT reaches the command three times, not more" \
	eval '[[ -e $T/int && $(<"$T/int") == 3 ]]'

# Ctrl-Z and fg in an interactive shell on a pseudo-terminal.
"$PYTHON" - "$ZS" "$TS" "$T/job" <<'PY' >"$T/out" 2>"$T/err"
import os, pty, select, sys, time
zs, ts, out = sys.argv[1:]
pid, fd = pty.fork()
if pid == 0:
    os.execvpe("bash", ["bash", "--norc", "--noprofile", "-i"],
               dict(os.environ, PS1="$ "))
def until(pattern):
    seen, end = b"", time.time() + 10
    while time.time() < end and pattern not in seen:
        if select.select([fd], [], [], 0.1)[0]:
            try:
                seen += os.read(fd, 4096)
            except OSError:
                break
    return pattern in seen
until(b"$ ")
os.write(fd, ("%s -q return %s catch 12 %s\n" % (zs, ts, out)).encode())
for _ in range(100):
    if os.path.exists(out + ".ready"):
        break
    time.sleep(0.1)
os.write(fd, b"\x1a")
print("stopped" if until(b"Stopped") else "not stopped")
os.write(fd, b"fg\n")
os.write(fd, b'echo "st""atus=$?"\n')
print("status 0" if until(b"status=0") else "no status 0")
# Hang up: the shell, and any job left, end with the terminal.
os.close(fd)
os.waitpid(pid, 0)
PY
check "Ctrl-Z in an interactive shell stops the job, fg ends it normally" \
	eval '[[ $(<"$T/out") == $'"'"'stopped\nstatus 0'"'"' && $(<"$T/job") == 0 ]]'

"${wrapper[@]}" "$ZS" -q return "$TS" catch 12 "$T/stop" &
pid=$!
wait_for test -e "$T/stop.ready"
child=$(<"/proc/$pid/task/$pid/children")
child=${child%% *}
kill -STOP "$child"
check "the command stopped: the launcher stops too (the shell sees the job stop)" \
	wait_for stopped "$pid"
kill -CONT "$pid"
reap "$pid" "$child"
check "SIGCONT to the launcher continues the command, which ends normally" \
	eval 'status_is 0 && [[ $(<"$T/stop") == 0 ]]'

# A descendant that outlives the command keeps the policy.
# (It waits for $T/go, which is made once the launcher has ended: a
# launcher that waited for it would be killed by timeout, status 124.)
last_args="-q --fallback=supervisor return sh -c 'probe ... &'"
timeout 60 "${wrapper[@]}" "$ZS" -q --fallback=supervisor return /bin/sh -c \
	"$TS probe return $T/go $T/bg &" >"$T/out" 2>"$T/err" </dev/null
rc=$?
check "the launcher ends with the command, while its background child runs" \
	eval 'status_is 0 && [[ ! -e $T/bg ]]'
touch "$T/go"
check "the background child keeps the policy after the launcher ended" \
	eval 'wait_for test -s "$T/bg" && [[ $(<"$T/bg") == ok ]]'

# An outer launcher's preload, inherited, is told the inner policy.
last_args="(under an outer preload) --fallback=supervisor return sh"
LD_PRELOAD=$B/libzerosleep-preload.so ZEROSLEEP_POLICY=full-slack \
	"${wrapper[@]}" "$ZS" -q --fallback=supervisor return /bin/sh -c \
	'echo "$ZEROSLEEP_POLICY"' >"$T/out" 2>"$T/err"
rc=$?
check "a preload inherited from an outer launcher gets the supervised policy" \
	eval 'status_is 0 && stdout_is return-immediately'

# ---- what cannot run under it ---------------------------------------------

zs -q return "$TS" listener
check "a program's own seccomp listener: EBUSY, and the launcher says why" \
	eval 'status_is 0 && stdout_is EBUSY && one_error_line "listener of its own" "EBUSY"'
zs -q --fallback=supervisor return "$ZS" -q return "$TS" exit 3
check "a launcher under another: exit 125, saying a listener is installed" \
	eval 'status_is 125 && [[ $(<"$T/err") == *"another supervisor"* ]]'

mnt=$(findmnt -no OPTIONS -T "$T" 2>/dev/null)
if [[ $(id -u) == 0 && ,$mnt, != *,nosuid,* ]]; then
	cp "$TS" "$T/suid-root"
	chmod 4755 "$T/suid-root"
	cp "$ZS" "$T/zerosleep"
	chmod 0755 "$T/zerosleep"
	last_args="return suid-root exit 0 (as nobody)"
	setpriv --reuid=65534 --regid=65534 --clear-groups -- \
		"$T/zerosleep" return "$T/suid-root" exit 0 >"$T/out" 2>"$T/err"
	rc=$?
	check "set-user-ID, without CAP_SYS_ADMIN: exit 125, naming it" \
		eval 'status_is 125 && one_error_line "set-user-ID" "CAP_SYS_ADMIN" "--run-anyway"'
	cp "$TS" "$T/suid-nobody"
	chown 65534 "$T/suid-nobody"
	chmod 4755 "$T/suid-nobody"
	zs -q return "$T/suid-nobody" probe return
	check "set-user-ID, with CAP_SYS_ADMIN: supervised, the policy applies" \
		status_is 0
else
	tap_skip "set-user-ID programs" "needs root and a suid mount"
fi

tap_end
