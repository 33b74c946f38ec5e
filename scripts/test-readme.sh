#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# README's policy.py session, TAP on stdout: the program that README shows
# after "$ cat policy.py", run with python3 on this host (a kernel
# without the series) against the library that make lib built, must print
# what README shows after "$ python3 policy.py".  The other sessions that
# README quotes come from their own scripts: doc/loop-figures.sh (whose
# output, doc/loop-figures.txt, README and zerosleep(1) must quote),
# qemu/strace-guest.sh, scripts/test-apply-series.sh.
#
# Environment: O, the build directory of libc-wrapper (default
# build/libc-wrapper).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
B=${O:-$top/build/libc-wrapper}
T=$(mktemp -d "${TMPDIR:-/tmp}/zerosleep-readme.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT

# The lines of README's block that starts with "$ cat FILE", after it, up
# to the next "$ " line (the program), then that line's output, up to the
# closing fence.
awk '$0 == "$ cat policy.py" { at = 1; next }
     at == 1 && /^\$ python3 policy\.py/ { at = 2; next }
     at == 1 { print > "'"$T/policy.py"'" }
     at == 2 && /^```$/ { exit }
     at == 2 { print > "'"$T/want"'" }' "$top/README.md"

# shellcheck source=scripts/tap.sh
. "$top/scripts/tap.sh"
[ -s "$T/policy.py" ] && [ -s "$T/want" ]
tap_result $? "README shows policy.py ($(wc -l < "$T/policy.py") lines) and what it prints"
(cd "$T" && LD_LIBRARY_PATH=$B${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} timeout 60 python3 policy.py) >"$T/got" 2>&1
echo "# python3 policy.py printed (exit $?):"
sed 's/^/#   /' "$T/got"
cmp -s "$T/want" "$T/got"
tap_result $? "README's policy.py prints on this host, without the series, what README shows"
# The loop.py figures: README's and zerosleep(1)'s are doc/loop-figures.txt's,
# made from the code as it is.
"$top/scripts/loop-figures-docs.sh" check >"$T/figures" 2>&1
rc=$?
echo "# scripts/loop-figures-docs.sh check (exit $rc):"
sed -n 's/^# /#   /p' "$T/figures"
figures=0
while IFS= read -r line; do
	[[ $line =~ ^(not\ )?ok\ [0-9]+\ -\ (.*)$ ]] || continue
	[[ -z ${BASH_REMATCH[1]} ]]
	tap_result $? "${BASH_REMATCH[2]}"
	figures=$((figures + 1))
done <"$T/figures"
((figures > 0 || rc == 0))
tap_result $? "scripts/loop-figures-docs.sh check ran"
tap_end
