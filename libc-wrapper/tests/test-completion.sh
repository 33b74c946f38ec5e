#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Tests of the launcher's bash completion (bash-completion/zerosleep), TAP
# on stdout, in a bash without bash-completion loaded: --fallback's values,
# in the forms that bash splits at '=' and not; no space after an option
# that ends with '='; an option's value is not taken for POLICY; the list
# used when --help fails has every option that --help names.
#
# Environment: O, the build directory (default ../../build/libc-wrapper
# from here), whose zerosleep --help the completion reads; COMPLETION,
# the completion script to test (default ../bash-completion/zerosleep).
# shellcheck disable=SC2016
set -u

here=$(cd "$(dirname "$0")" && pwd)
B=${O:-$here/../../build/libc-wrapper}
comp=${COMPLETION:-$here/../bash-completion/zerosleep}
# shellcheck source=scripts/tap.sh
. "$here/../../scripts/tap.sh"

# complete_words WORD...: what the completion offers for the last WORD, the
# words as bash splits them (COMP_WORDS), with $B first in PATH; the
# options passed to compopt go to the file $opts.
opts=$(mktemp "${TMPDIR:-/tmp}/zerosleep-comp.XXXXXX") || exit 1
trap 'rm -f "$opts"' EXIT
complete_words() {
	: >"$opts"
	bash -c 'source "$1"; PATH=$2:$PATH; opts=$3; shift 3
		compopt() { echo "$*" >>"$opts"; }
		COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _zerosleep
		echo "${COMPREPLY[*]}"' bash "$comp" "$B" "$opts" "$@"
}

out=$(complete_words zerosleep --fallback = "")
check "--fallback= (split at '='): preload supervisor: '${out:0:80}'" \
	eval '[[ $out == "preload supervisor" ]]'
out=$(complete_words zerosleep --fallback = su)
check "--fallback=su (split at '='): supervisor: '${out:0:80}'" \
	eval '[[ $out == supervisor ]]'
out=$(complete_words zerosleep --fallback=p)
check "--fallback=p (one word): --fallback=preload: '${out:0:80}'" \
	eval '[[ $out == --fallback=preload ]]'
out=$(complete_words zerosleep --fallback "")
check "--fallback VALUE: preload supervisor: '${out:0:80}'" \
	eval '[[ $out == "preload supervisor" ]]'
out=$(complete_words zerosleep --fall)
check "--fall: --fallback=, without a trailing space: '${out:0:80}' (compopt $(<"$opts"))" \
	eval '[[ $out == --fallback= && $(<"$opts") == "-o nospace" ]]'
out=$(complete_words zerosleep --ex)
check "--ex: --explain, with its space: '${out:0:80}'" \
	eval '[[ $out == --explain && ! -s $opts ]]'
out=$(complete_words zerosleep --fallback supervisor "")
check "--fallback supervisor: the word after it is POLICY: '${out:0:80}'" \
	eval '[[ $out == "default return-immediately schedule-once full-slack return schedule full" ]]'
out=$(complete_words zerosleep --fallback supervisor return zerosle)
check "--fallback supervisor POLICY: then COMMAND: '${out:0:80}'" \
	eval '[[ " $out " == *" zerosleep "* && " $out " != *" default "* ]]'
out=$(complete_words zerosleep --fallback = preload sch)
check "--fallback=preload (split at '='): the word after it is POLICY: '${out:0:80}'" \
	eval '[[ $out == "schedule-once schedule" ]]'

# The options that --help names, and the built-in list, used when the
# launcher cannot be run (words[0] names no program).
from_help=$(complete_words zerosleep -)
builtin=$(complete_words /nonexistent/zerosleep -)
check "--help names options: '$from_help'" \
	eval '[[ " $from_help " == *" --explain "* && " $from_help " == *" --fallback= "* && " $from_help " == *" -V "* ]]'
check "the built-in list is the one --help gives: '$builtin'" \
	eval '[[ $(tr " " "\n" <<<"$builtin" | sort) == $(tr " " "\n" <<<"$from_help" | sort) ]]'

tap_end
