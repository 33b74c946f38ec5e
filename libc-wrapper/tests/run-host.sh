#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The libzerosleep and launcher tests on a kernel WITHOUT zero-length sleep
# policies (the build host).  TAP on stdout; non-zero exit on any failure.
exec "$(dirname "$0")/run-tests.sh" unsupported
