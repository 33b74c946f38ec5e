#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The figures of README's "On your own machine, today", on this machine:
# runs README's loop.py (100,000 calls of time.sleep(0)) as is, under
# "zerosleep return" and under "zerosleep -q schedule", and prints the
# session as README quotes it, after two lines that name the machine and
# the date.  Builds no kernel and needs no root: on a kernel without the
# series (every distribution kernel) the launcher uses the preload
# fallback, as it does for a user.
#
#   doc/loop-figures.sh [DIR]        or: make loop-figures
#   doc/loop-figures.sh --hash       the hash of the code it measures
#
# make loop-figures writes the session to doc/loop-figures.txt, which
# README.md and zerosleep(1) quote (scripts/loop-figures-docs.sh); its
# "# measured code:" line is the hash of the sources of the launcher, the
# library and the preload (MEASURED below), so that test-readme.sh sees
# figures made by other code.  The supervisor (supervisor.c), which
# python3 gets behind the preload as it imports syscall(), is left out:
# loop.py's zero-length sleeps never reach it.
#
# DIR holds the zerosleep launcher and libzerosleep-preload.so (default:
# build/libc-wrapper, where `make lib` puts them; `make loop-figures`
# builds them first).  PYTHON names the interpreter (default: python3 from
# PATH, as README has it).  The timings vary from run to run by some
# percent, and with the machine's load: run it on an idle machine.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
MEASURED="libc-wrapper/src/preload.c libc-wrapper/src/zerosleep.c
	  libc-wrapper/src/zerosleep-cli.c libc-wrapper/include/zerosleep.h"
if [ "${1:-}" = --hash ]; then
	# Outside a source tree (run from /usr/share/doc/zerosleep/examples):
	# no code to name.
	# shellcheck disable=SC2086
	if (cd "$top" && cat $MEASURED >/dev/null 2>&1); then
		(cd "$top" && cat $MEASURED) | sha256sum | cut -c1-16
	else
		echo "none (no source tree at $top)"
	fi
	exit 0
fi
dir=${1:-$top/build/libc-wrapper}
if [ ! -x "$dir/zerosleep" ]; then
	echo "loop-figures.sh: no launcher at $dir/zerosleep; run 'make lib' first" >&2
	exit 1
fi
dir=$(cd "$dir" && pwd)
python=${PYTHON:-python3}
command -v "$python" >/dev/null || { echo "loop-figures.sh: no $python" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/loop-figures.XXXXXX")
trap 'rm -rf "$work"' EXIT
# README's program, byte for byte.
cat >"$work/loop.py" <<'EOF'
import time
t = time.perf_counter()
for i in range(100000):
    time.sleep(0)
print(f"{time.perf_counter() - t:.2f} s")
EOF

# The machine, as README names it.
# shellcheck disable=SC1091
os=$(. /etc/os-release 2>/dev/null && echo "${PRETTY_NAME:-}")
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
if [ -e /proc/self/timerslack_zero_policy ]; then
	kernel="with the zerosleep series"
else
	kernel="without the zerosleep series, so through a fallback"
fi
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'): ${os:-unknown system}, Linux $(uname -r) $(uname -m), $(nproc) CPUs (${cpu:-unknown CPU})"
echo "# $("$python" -c 'import platform, sys; print("Python", platform.python_version(), "(" + sys.executable + ")")'), timer slack $(cat /proc/self/timerslack_ns) ns, kernel $kernel; load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# zerosleep --explain return $python: $(PATH=$dir:$PATH zerosleep --explain return "$python" | cut -d: -f1)"
echo "# measured code: $("$0" --hash)"

# show COMMAND...: print "$ COMMAND" and run it, in README's form: the
# launcher is found through PATH, loop.py in the current directory.
show() {
	echo "\$ $*"
	(cd "$work" && PATH=$dir:$PATH "$@" 2>&1)
}
show cat loop.py
show "$python" loop.py
show zerosleep return "$python" loop.py
show zerosleep -q schedule "$python" loop.py
