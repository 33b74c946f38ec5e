#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
#   scripts/cover.sh extract COVER_LETTER
#
# Print the text of a format-patch cover letter, its subject line, a blank
# line and its body, without the generated shortlog and diffstat: the form
# that "git format-patch --cover-from-description=subject" takes back as the
# branch description.
set -euo pipefail
[ "$1" = extract ] || { echo "usage: $0 extract COVER_LETTER" >&2; exit 1; }
awk '
	!inbody && /^Subject: / {
		sub(/^Subject: (\[[^]]*\] )?/, ""); subject = $0; insubj = 1; next
	}
	!inbody && insubj && /^ / { sub(/^ /, ""); subject = subject " " $0; next }
	!inbody && /^$/ { inbody = 1; insubj = 0; print subject; print ""; skipblank = 1; next }
	inbody && /^[^ ].* \([0-9]+\):$/ { exit }
	inbody {
		if (skipblank && $0 == "") next
		skipblank = 0
		lines[++n] = $0
	}
	END {
		while (n > 0 && lines[n] == "") n--
		for (i = 1; i <= n; i++) print lines[i]
	}
' "$2"
