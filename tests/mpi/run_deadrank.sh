#!/bin/sh
# run_deadrank.sh MPIRUN NP PROGRAM HOOK: the last of NP ranks dies; every survivor must
# report DEADRANK-OK (it got HWRT_ERROR_DIST within dist_timeout) and pass its checks.
# HOOK=0 makes hwrt use its communication-thread deadline instead of the progress hook.
mpirun=$1; np=$2; prog=$3; hook=${4:-1}
out=$("$mpirun" --allow-run-as-root --oversubscribe --enable-recovery -np "$np" \
      -x HWRT_SIM_DEVICES="$np" -x HWRT_MPI_PROGRESS_HOOK="$hook" "$prog" deadrank 2>&1)
echo "$out"
ok=$(printf '%s\n' "$out" | grep -c '^DEADRANK-OK')
clean=$(printf '%s\n' "$out" | grep -c ' passed, 0 failed')
want=$((np - 1))
if [ "$ok" -eq "$want" ] && [ "$clean" -eq "$want" ]; then
    echo "dead-rank test: $ok of $want survivors returned HWRT_ERROR_DIST"
    exit 0
fi
echo "dead-rank test FAILED: $ok DEADRANK-OK and $clean clean reports, want $want" >&2
exit 1
