#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The libzerosleep and launcher tests on a kernel WITH zero-length sleep
# policies (the QEMU guest), as root.  Runs the programs that `make all
# tests` built on the host; reads only the source and build trees and
# writes only under /tmp.  TAP on stdout; non-zero exit on any failure.
TMPDIR=/tmp exec "$(dirname "$0")/run-tests.sh" supported
