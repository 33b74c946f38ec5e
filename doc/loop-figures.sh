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
#
# DIR holds the zerosleep launcher and libzerosleep-preload.so (default:
# build/libc-wrapper, where `make lib` puts them; `make loop-figures`
# builds them first).  PYTHON names the interpreter (default: python3 from
# PATH, as README has it).  The timings vary from run to run by some
# percent, and with the machine's load: run it on an idle machine.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
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
	kernel="without the zerosleep series, so through the preload fallback"
fi
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'): ${os:-unknown system}, Linux $(uname -r) $(uname -m), $(nproc) CPUs (${cpu:-unknown CPU})"
echo "# $("$python" -c 'import platform; print("Python", platform.python_version())'), timer slack $(cat /proc/self/timerslack_ns) ns, kernel $kernel; load average $(cut -d' ' -f1-3 /proc/loadavg)"

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
