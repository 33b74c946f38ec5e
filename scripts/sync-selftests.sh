#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Copy selftests/ (the source of truth) into the kernel tree as
# tools/testing/selftests/zerosleep/ and list it in the selftests Makefile.
# Files are copied only when they differ, so mtimes stay meaningful.
#
#   scripts/sync-selftests.sh TREE SELFTESTS_DIR
set -euo pipefail
tree=$1
src=$2
dst=$tree/tools/testing/selftests/zerosleep

mkdir -p "$dst"
# Remove files that are no longer in the source.
for f in "$dst"/* "$dst"/.gitignore; do
	[ -e "$f" ] || continue
	[ -e "$src/$(basename "$f")" ] || rm -f "$f"
done
for f in "$src"/* "$src"/.gitignore; do
	[ -f "$f" ] || continue
	cmp -s "$f" "$dst/$(basename "$f")" || cp -p "$f" "$dst/"
done

mk=$tree/tools/testing/selftests/Makefile
if ! grep -qx 'TARGETS += zerosleep' "$mk"; then
	sed -i 's/^TARGETS += zram$/TARGETS += zerosleep\n&/' "$mk"
	grep -qx 'TARGETS += zerosleep' "$mk"
fi

# The tests belong with the timers, next to their selftests.
mnt=$tree/MAINTAINERS
if ! grep -qxF "F:	tools/testing/selftests/zerosleep/" "$mnt"; then
	sed -i 's|^F:\ttools/testing/selftests/timers/$|&\nF:\ttools/testing/selftests/zerosleep/|' "$mnt"
	grep -qxF "F:	tools/testing/selftests/zerosleep/" "$mnt"
fi
