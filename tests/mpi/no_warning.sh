#!/bin/sh
# no_warning.sh [--want] PATTERN COMMAND...: the command (an mpirun line) succeeds and prints
# no line matching PATTERN (a setting it was given must be taken, not warned about and
# replaced); with --want, it succeeds and prints such a line (a bad setting is warned about).
want=0
if [ "$1" = --want ]; then want=1; shift; fi
pat=$1; shift
out=$("$@" 2>&1) || { printf '%s\n' "$out"; echo "FAILED: the run failed" >&2; exit 1; }
if printf '%s\n' "$out" | grep -a -- "$pat"; then
    [ "$want" = 1 ] && { echo "ok: the line above matches '$pat'"; exit 0; }
    echo "FAILED: a line above matches '$pat'" >&2
    exit 1
fi
[ "$want" = 1 ] && { printf '%s\n' "$out"; echo "FAILED: no line matches '$pat'" >&2; exit 1; }
echo "ok: no line matches '$pat'"
