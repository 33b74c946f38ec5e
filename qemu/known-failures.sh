#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
#   qemu/known-failures.sh LIST COMMAND [ARG...]
#
# Run an upstream TAP test that already fails some checks on the unpatched
# kernel, and judge it against that baseline: each "not ok" whose name is in
# LIST is reported as "ok ... # XFAIL", any other failure stays a failure,
# and a listed check that passes is a failure too, so that the list cannot
# go stale.
#
# Some upstream tests measure CPU-time timers and warn that other load can
# make them fail ("False negative may happen ..."); a run that does not
# match the baseline is repeated, up to five runs, and every run is shown.
# Five, not three: posix_timers' "check signal distribution" gives its
# main thread 10 ms to block before a process CPU-time timer starts, and
# a guest that the host does not run for that long can send the signal to
# the main thread; a kernel that sends it there fails every run.  The
# failures seen, and a measurement under load, are in doc/testing.md.
set -u
list=$1
if [ ! -r "$list" ]; then
	echo "not ok 1 - known-failures.sh: no list of known failures at $list"
	exit 1
fi
shift
declare -A known
while IFS= read -r l; do
	case $l in ''|\#*) continue ;; esac
	known[$l]=1
done < "$list"

judge() {
	local out=$1 l name bad=0 plan results
	declare -A seen=()
	while IFS= read -r l; do
		if [[ $l =~ not\ ok\ ([0-9]+)\ (.*[^ ])\ *$ ]]; then
			name=${BASH_REMATCH[2]}
			if [ -n "${known[$name]:-}" ]; then
				seen[$name]=1
				echo "ok ${BASH_REMATCH[1]} $name # XFAIL fails on the vanilla kernel too ($(basename "$list"))"
				continue
			fi
			bad=1
			echo "not ok ${BASH_REMATCH[1]} $name"
			continue
		fi
		echo "$l"
	done < "$out"
	for name in "${!known[@]}"; do
		if [ -z "${seen[$name]:-}" ]; then
			echo "not ok - '$name' is listed in $(basename "$list") but did not fail: update the list"
			bad=1
		fi
	done
	plan=$(grep -m1 -E '^1\.\.[0-9]+$' "$out" | cut -d. -f3)
	results=$(grep -oE '(not )?ok [0-9]+ ' "$out" | wc -l)
	if [ -z "$plan" ] || [ "$results" -ne "$plan" ]; then
		echo "not ok - $(basename "$1"): $results results for a plan of ${plan:-nothing}"
		bad=1
	fi
	return $bad
}

out=$(mktemp)
judged=$(mktemp)
trap 'rm -f "$out" "$judged"' EXIT
tries=5
for attempt in $(seq $tries); do
	"$@" > "$out" 2>&1
	if judge "$out" > "$judged"; then
		[ "$attempt" -gt 1 ] && echo "# matched the baseline on run $attempt of $tries"
		cat "$judged"
		exit 0
	fi
	# Earlier runs are shown as comments, so only the last one counts.
	echo "# run $attempt of $tries did not match the baseline:"
	sed 's/^/#   /' "$judged"
done
cat "$judged"
exit 1
