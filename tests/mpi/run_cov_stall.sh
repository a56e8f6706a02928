#!/bin/sh
# run_cov_stall.sh MPIRUN PROGRAM SCENARIO HOOK: test_cov_mpi.c's stalled-peer scenarios on
# 2 ranks. Rank 1 stays alive but silent; rank 0 must report STALL-OK and both ranks a
# clean report. Neither rank finalizes MPI (rank 0 gave up on it), so mpirun's own exit
# status is not the verdict (--enable-recovery: it must not kill rank 1 when rank 0 ends).
# HOOK=0: the communication thread's deadline instead of the progress hook.
mpirun=$1; prog=$2; scenario=$3; hook=${4:-1}
out=$("$mpirun" --allow-run-as-root --oversubscribe --enable-recovery -np 2 \
      -x HWRT_SIM_DEVICES=2 -x HWRT_MPI_PROGRESS_HOOK="$hook" -x HWRT_MPI_RING_BYTES=4 \
      "$prog" "$scenario" 2>&1)
echo "$out"
ok=$(printf '%s\n' "$out" | grep -c '^STALL-OK rank 0')
clean=$(printf '%s\n' "$out" | grep -c ' passed, 0 failed')
if [ "$ok" -eq 1 ] && [ "$clean" -eq 2 ]; then
    echo "stall test ($scenario, hook $hook): rank 0 gave up and refused the rest"
    exit 0
fi
echo "stall test ($scenario, hook $hook) FAILED: $ok STALL-OK and $clean clean reports, want 1 and 2" >&2
exit 1
