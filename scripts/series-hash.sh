#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Print a hash of series/: the order file, the cover letter and the patches.
set -euo pipefail
cd "$1"
cat series $(ls 0000-cover-letter.patch 2>/dev/null) $(cat series) | sha256sum | cut -d' ' -f1
