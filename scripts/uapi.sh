#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# uapi/linux/prctl.h is the exported <linux/prctl.h> of the patched 6.12
# kernel, from which userspace takes the zerosleep numbers.  The 7.3
# series must export the very same zerosleep block (one ABI, two kernels).
#
#   scripts/uapi.sh update 6.12 HEADER    copy HEADER to uapi/linux/prctl.h
#   scripts/uapi.sh check  6.12 HEADER    uapi/ is HEADER, byte for byte
#   scripts/uapi.sh check  7.3  HEADER    HEADER's zerosleep block is uapi/'s
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
ours=$top/uapi/linux/prctl.h
action=$1 kernel=$2 header=$3

# The block the series adds: its comment line up to PR_GET_...
block() { sed -n '/^\/\* What a zero-length nanosleep/,/^#define PR_GET_TIMERSLACK_ZERO_POLICY/p' "$1"; }

case $action/$kernel in
update/6.12)
	cp "$header" "$ours"
	;;
update/*)
	echo "uapi.sh: uapi/ is 6.12's header; run 'make uapi KERNEL=6.12'" >&2
	exit 1
	;;
check/6.12)
	diff -u "$ours" "$header" || { echo "uapi/ is stale: run 'make uapi'" >&2; exit 1; }
	;;
check/*)
	if [ -z "$(block "$header")" ]; then
		echo "uapi.sh: $header has no zerosleep block" >&2
		exit 1
	fi
	diff -u <(block "$ours") <(block "$header") ||
		{ echo "uapi.sh: the $kernel series exports other zerosleep numbers than uapi/ (6.12)" >&2; exit 1; }
	;;
*)
	echo "uapi.sh: unknown action '$action'" >&2
	exit 2
	;;
esac
