#!/bin/sh
# run_dist_oom.sh MPIRUN PROGRAM FAIL_MALLOC: 2 ranks join (test_dist_mpi "joined") with the
# Nth allocation libhwrt makes failing in each rank (tests/unit/fail_malloc.c, LD_PRELOAD),
# for N = 1, 2, ... until hwrt_dist_init gets through after its host tables failed (every
# allocation it makes has then failed once: they come in a fixed order). No rank may die by a signal or hang; a
# failure inside hwrt_dist_init must be refused on every rank with a sentence. The two
# tables of the host-name exchange (dist.c learn_hosts) are among the allocations failed,
# each refused as "host out of memory" (seed 3009's dist.c:75 `||` made `&&` went on with a
# NULL table and crashed). dist_timeout 10 s: a rank whose peer stopped before a
# collective gives up instead of waiting for ever.
mpirun=$1; prog=$2; lib=$3
n=1; hosts_oom=0; bad=0
while [ "$n" -le 400 ]; do
    # --enable-recovery: a rank that fails init (exit 1) must not get the other killed
    # before it says its own sentence
    out=$(timeout 120 "$mpirun" --allow-run-as-root --oversubscribe --enable-recovery -np 2 \
          -x LD_PRELOAD="$lib" \
          -x HWRT_FAIL_MALLOC_NTH="$n" -x HWRT_DIST_TIMEOUT=10 -x HWRT_SIM_DEVICES=2 \
          "$prog" joined 2>&1)
    rc=$?
    failed=$(printf '%s\n' "$out" | grep -c 'fail_malloc: failed call')
    in_init=$(printf '%s\n' "$out" | grep -c '^hwrt_dist_init: HWRT_ERROR')
    oom=$(printf '%s\n' "$out" | grep -c '^hwrt_dist_init: HWRT_ERROR_HOST_OUT_OF_MEMORY: hwrt_dist_init: host out of memory')
    [ "$oom" -eq 2 ] && hosts_oom=$((hosts_oom + 1))
    if [ "$rc" -eq 124 ] || printf '%s\n' "$out" | grep -qiE 'signal [0-9]|segmentation|core dumped|aborted \('; then
        echo "N=$n: a rank died or hung (mpirun status $rc):"; printf '%s\n' "$out" | tail -20; bad=1
    elif [ "$in_init" -ne 0 ] && [ "$in_init" -ne 2 ]; then
        echo "N=$n: init refused on $in_init of 2 ranks:"; printf '%s\n' "$out" | tail -20; bad=1
    fi
    [ "$failed" -eq 0 ] && break              # the run made fewer than N allocations
    # init got through after both tables failed: every allocation of init has failed once
    # (a coverage build's own allocations, attributed to libhwrt, come first and pass)
    [ "$in_init" -eq 0 ] && [ "$hosts_oom" -ge 2 ] && break
    n=$((n + 1))
done
echo "dist init with libhwrt's allocation N failing: N = 1..$n (init got through at $n); $hosts_oom runs refused in the host-name exchange on both ranks"
[ "$n" -le 400 ] || { echo "more than 400 allocations: raise the bound" >&2; bad=1; }
[ "$hosts_oom" -ge 2 ] || { echo "want both tables of the host-name exchange failed and refused" >&2; bad=1; }
exit "$bad"
