#!/bin/sh
# no_warning.sh PATTERN COMMAND...: the command (an mpirun line) succeeds and prints no line
# matching PATTERN (a setting it was given must be taken, not warned about and replaced).
pat=$1; shift
out=$("$@" 2>&1) || { printf '%s\n' "$out"; echo "FAILED: the run failed" >&2; exit 1; }
if printf '%s\n' "$out" | grep -a -- "$pat"; then
    echo "FAILED: a line above matches '$pat'" >&2
    exit 1
fi
echo "ok: no line matches '$pat'"
