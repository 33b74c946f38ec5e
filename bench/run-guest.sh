#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the benchmark in the booted guest (qemu/run.sh).
#
#   bench/run-guest.sh [--kernel NAME] [--short] [--sleeps-only]
#
# Writes $ZEROSLEEP_OUT/bench-NAME.csv and prints one line per measurement.
# NAME (default "guest") gets the running kernel's version, as in
# "zerosleep-6.12", unless it has one.
# With --short (used by "make test") every measurement runs with a few
# iterations only, and the output is TAP: one test per measurement, which
# passes when the numbers are sane (iterations > 0; p50 > 0 and p99 >= p50
# for a latency; for the hog's share beside a competitor, a value of 0 or
# more, since in a short window on a busy host the hog may get no CPU
# beside a loop that never yields; a positive value otherwise).  No threshold is checked
# there: thresholds are for "make bench", on a full run.  On a kernel named
# zerosleep-*, one more test checks that all four policies were measured.  --sleeps-only
# measures only the sleeps that do sleep, for the repeated boots of
# "make bench".
#
# Exit status: 0 when everything ran (and, with --short, every test passed).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
zsbench=${ZSBENCH:-$top/build/bench/zsbench}
name=guest
short=
only=
while [ $# -gt 0 ]; do
	case $1 in
	--kernel)
		[ $# -ge 2 ] || { echo "run-guest.sh: --kernel needs a NAME" >&2; exit 2; }
		name=$2
		shift 2
		;;
	--kernel=*) name=${1#--kernel=}; shift ;;
	--short) short=--short; shift ;;
	--sleeps-only) only=--sleeps-only; shift ;;
	-h|--help) sed -n '4,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "run-guest.sh: unknown argument '$1'" >&2; exit 2 ;;
	esac
done
case $name in
''|*[!A-Za-z0-9._-]*) echo "run-guest.sh: bad kernel name '$name'" >&2; exit 2 ;;
esac
# A name without a version, such as "zerosleep" from "make test", gets the
# running kernel's: "zerosleep-7.3".
case $name in
*-[0-9]*) ;;
*) name=$name-$(uname -r | cut -d. -f1,2) ;;
esac

out=${ZEROSLEEP_OUT:-}
if [ -z "$out" ]; then
	echo "run-guest.sh: ZEROSLEEP_OUT is not set (run it through qemu/run.sh)" >&2
	exit 2
fi
csv=$out/bench-$name.csv
log=$out/bench-$name.log

if [ -z "$short" ]; then
	[ -x "$zsbench" ] || { echo "run-guest.sh: $zsbench is missing: run 'make -C bench'" >&2; exit 2; }
	"$zsbench" $only --kernel "$name" --csv "$csv" 2>&1 | tee "$log"
	exit "${PIPESTATUS[0]}"
fi

# --short: TAP.
if [ ! -x "$zsbench" ]; then
	echo "1..1"
	echo "not ok 1 - bench: $zsbench is built (make -C bench)"
	exit 1
fi
"$zsbench" --short $only --kernel "$name" --csv "$csv" > "$log" 2>&1
rc=$?
sed 's/^/# /' "$log"
if [ ! -s "$csv" ]; then
	echo "1..1"
	echo "not ok 1 - bench: zsbench --short wrote $csv (status $rc)"
	exit 1
fi
exec awk -F, -v rc="$rc" -v name="$name" '
	NR == 1 { next }
	{
		seen[$2] = 1
		n++
		desc = sprintf("bench %s: %s, policy %s, slack %s ns", $1, $4, $2, $3)
		lat = ($6 != "")
		# A pinned hog beside a loop that never yields may get none of
		# a short window: its share is sane from 0 up.
		if (lat)
			good = ($5 > 0 && $6 > 0 && $7 >= $6)
		else if ($4 ~ /^hog_vs_/)
			good = ($5 > 0 && $10 != "" && $10 >= 0)
		else
			good = ($5 > 0 && $10 > 0)
		line[n] = sprintf("%s %d - %s", good ? "ok" : "not ok", n, desc)
		if (!good) {
			bad++
			line[n] = line[n] sprintf("\n#   iterations %s p50 %s p99 %s value %s", $5, $6, $7, $10)
		}
	}
	END {
		if (name ~ /^zerosleep-/) {
			n++
			miss = ""
			split("default return schedule full-slack", want, " ")
			for (i = 1; i <= 4; i++)
				if (!(want[i] in seen))
					miss = miss " " want[i]
			line[n] = sprintf("%s %d - bench %s: measured under the four policies%s",
					  miss == "" ? "ok" : "not ok", n, name,
					  miss == "" ? "" : " (missing:" miss ")")
			if (miss != "") bad++
		}
		n++
		line[n] = sprintf("%s %d - bench: zsbench --short exited with status 0 (status %d)",
				  rc == 0 ? "ok" : "not ok", n, rc)
		if (rc != 0) bad++
		if (n < 2) {
			# Nothing measured at all: that is a failure too.
			n++
			line[n] = sprintf("not ok %d - bench: zsbench produced measurements", n)
			bad++
		}
		printf "1..%d\n", n
		for (i = 1; i <= n; i++) print line[i]
		exit bad > 0
	}' "$csv"
