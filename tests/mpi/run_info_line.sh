#!/bin/sh
# run_info_line.sh MPIRUN PROGRAM NP: NP ranks on this one host join with HWRT_LOG_LEVEL=info;
# every rank's "dist:" line must name its own rank, local rank = rank, and exactly 1 host
# (the host count is computed from the ranks' host names: 3 or more ranks on one host is
# where a count of ranks minus hosts or of repeated names would show).
mpirun=$1; prog=$2; np=$3
out=$("$mpirun" --allow-run-as-root --oversubscribe -np "$np" -x HWRT_LOG_LEVEL=info \
      -x HWRT_SIM_DEVICES=2 "$prog" joined 2>&1)
rc=$?
echo "$out"
bad=0
r=0
while [ "$r" -lt "$np" ]; do
    n=$(printf '%s\n' "$out" | grep -c "dist: rank $r of $np (local rank $r of $np, 1 host), ")
    [ "$n" -eq 1 ] || { echo "rank $r: $n info lines naming local rank $r of $np on 1 host, want 1" >&2; bad=1; }
    r=$((r + 1))
done
clean=$(printf '%s\n' "$out" | grep -c ' passed, 0 failed')
[ "$clean" -eq "$np" ] || { echo "$clean clean reports, want $np" >&2; bad=1; }
[ "$rc" -eq 0 ] || { echo "mpirun exited $rc" >&2; bad=1; }
[ "$bad" -eq 0 ] && echo "info line: $np ranks on 1 host, each its own local rank"
exit "$bad"
