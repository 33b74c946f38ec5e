# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Sourced by the guest halves of the tests, qemu/guest-tests.sh (x86-64)
# and qemu/guest-tests-arm64.sh, after they set $out, the directory for
# their TAP files.
#
#   group NAME LIMIT COMMAND...
#       run COMMAND for at most LIMIT seconds into $out/NAME.tap, copy it
#       to stdout, and add one line of its own for its exit status, so that
#       a crash after some passing lines still counts as a failure
#   clock_ok
#       true when the guest runs high-resolution timers; sets $cs (the
#       clocksource) and $res (the timer resolution, ns)
#   wait_for_highres
#       wait up to 20 s for clock_ok: high resolution starts once a
#       clocksource that allows it is up, a second or two after boot

# shellcheck disable=SC2154 # $out: the sourcing script's
group() {
	local name=$1 limit=$2
	shift 2
	local t0=$SECONDS rc
	echo "# ---- $name: $*"
	timeout -k 5 "$limit" "$@" > "$out/$name.tap" 2>&1
	rc=$?
	cat "$out/$name.tap"
	echo "# ---- $name: $((SECONDS - t0)) s"
	if [ $rc -eq 0 ]; then
		echo "ok - $name: exit status 0" | tee -a "$out/$name.tap"
	else
		[ $rc -eq 124 ] && rc="$rc (timed out after ${limit}s)"
		echo "not ok - $name: exit status $rc" | tee -a "$out/$name.tap"
	fi
}

# shellcheck disable=SC2034 # $cs: for the sourcing script's messages
clock_ok() {
	cs=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2> /dev/null)
	res=$(awk '/resolution:/ { print $2; exit }' /proc/timer_list 2> /dev/null)
	[ "$res" = 1 ]
}

wait_for_highres() {
	for _ in $(seq 100); do
		clock_ok && return 0
		sleep 0.2
	done
	return 1
}
