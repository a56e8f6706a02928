#!/bin/bash
# run_hosts.sh SCENARIO PROGRAM: one multi-host test on namespace hosts (hosts.sh), Open MPI
# over TCP across them with a hostfile, mpirun's remote launcher replaced by rsh_agent.sh.
# mpirun runs on node0, as on the first node of an allocation. Scenarios:
#   demo         3 hosts x 2 ranks: PROGRAM = dist_demo; every rank bound to its host's
#                device (= local rank), allreduce right
#   torchvars    2 hosts x 2 ranks: dist_demo with torchrun-style variables derived from
#                Open MPI's in each rank's shell (docs/distributed.md's command)
#   collectives  2 hosts x 2 ranks: PROGRAM = test_dist_mpi, every collective x op x dtype
#                against the host reference, the allreduce ring from 64 KiB (across hosts)
#   bind         2 hosts x 2 devices, exclusive mode, mpirun inside a (modelled) Slurm
#                allocation: every rank on its own host's device
#   hostrange    node0 2 ranks, node1 3 ranks, 2 devices each: node1 named on every rank
#   duplicate    2 hosts x 2 ranks, everyone on device 0: node0's ranks named, then fixed
#   global       2 hosts x 2 ranks, device = global rank: rank 2 on node1 called out
#   samename     2 hosts x 2 ranks, node1 renamed node0: init fails on every rank naming
#                the shared host name (Open MPI's local ranks disagree with the names)
#   deadhost     3 hosts x 2 ranks; node1's processes are SIGKILLed mid-allreduce: the 4
#                others get HWRT_ERROR_DIST within dist_timeout (3 s), or sooner with MPI's
#                error where a write saw the reset (and none dies of that write's SIGPIPE)
#   deadhost-cable  the same with node1's cable pulled first (silence, no FIN)
#   bench        2 hosts x 1 rank: PROGRAM = hwrt-bench, "hwrt-bench dist" (figures only)
#   harness      the harness itself (PROGRAM = any executable): as another user it fails
#                saying why; its namespaces are gone after a normal exit, SIGTERM and SIGKILL
#   hold         (for harness) bring 2 hosts up, print their holders, wait
# Exit 0 only when every rank passed; it needs root and FAILS (never skips) without it.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/hosts.sh"
scenario=$1 prog=$(realpath -e "$2" 2>/dev/null)
shift 2
[ -n "$prog" ] && [ -x "$prog" ] || { echo "FAILED: usage: run_hosts.sh SCENARIO PROGRAM" >&2; exit 2; }
hosts_require_root

LIMIT=${HWRT_HOSTS_LIMIT:-240}      # seconds for one mpirun, far above a normal run
mpirun_on_hosts() {
    host_exec 0 timeout -k 5 "$LIMIT" mpirun --allow-run-as-root --oversubscribe \
        --hostfile "$HOSTS_DIR/hostfile" \
        --mca plm_rsh_agent "$here/rsh_agent.sh" --mca plm_rsh_no_tree_spawn 1 \
        --mca oob_tcp_if_include "$HOSTS_NET.0/24" --mca btl_tcp_if_include "$HOSTS_NET.0/24" \
        --mca btl self,vader,tcp "$@"
}

# count LINE-PATTERN WANT FILE: the number of lines matching, checked
count() {
    local n
    n=$(grep -c -- "$1" "$3")
    if [ "$n" -ne "$2" ]; then
        echo "FAILED: $n lines match '$1', want $2" >&2
        return 1
    fi
}

# The harness's own checks. Gone means: no holder process, no process left in any of
# their network namespaces, no state directory.
gone() {
    local dir=$1 p; shift
    [ -e "$dir" ] && { echo "FAILED: $dir is still there" >&2; return 1; }
    for p in "$@"; do
        kill -0 "$p" 2>/dev/null && { echo "FAILED: namespace holder $p still runs" >&2; return 1; }
    done
    return 0
}
# hold_then SIGNAL: start "hold", end it with SIGNAL (or let it exit: "exit"), check gone
hold_then() {
    local sig=$1 log pid line t=0 nslist p
    log=$(mktemp /tmp/hwrt-hosts-hold.XXXXXX)
    # default signal dispositions: a background job of a script starts with SIGINT ignored
    env --default-signal "$here/run_hosts.sh" hold "$prog" $([ "$sig" = exit ] && echo exit) \
        > "$log" 2>&1 &
    pid=$!
    until line=$(grep '^HOLD ' "$log"); do
        kill -0 $pid 2>/dev/null && [ $t -lt 300 ] || { cat "$log"; rm -f "$log"; return 1; }
        sleep 0.1; t=$((t + 1))
    done
    set -- $line
    local dir=$2; shift 2
    nslist=$(for p in "$@"; do readlink "/proc/$p/ns/net"; done)
    [ "$sig" = exit ] || kill -"$sig" $pid
    wait $pid 2>/dev/null
    t=0                  # the trap has run by now; after SIGKILL the holders notice (1-2 s)
    [ "$sig" = KILL ] && until gone "$dir" "$@" 2>/dev/null || [ $t -ge 100 ]; do
        sleep 0.1; t=$((t + 1))
    done
    rm -f "$log"
    gone "$dir" "$@" || return 1
    # the processes the teardown killed leave /proc when they have exited, which under load
    # can take a moment after the holders are gone: wait up to 10 s for each namespace
    t=0
    for p in $nslist; do
        while [ -n "$(_pids_in_ns "$p")" ] && [ $t -lt 100 ]; do sleep 0.1; t=$((t + 1)); done
        if [ -n "$(_pids_in_ns "$p")" ]; then
            echo "FAILED: processes $(_pids_in_ns "$p" | tr '\n' ' ')still run in $p" >&2; return 1
        fi
    done
    echo "harness: after $sig, its ${#} namespace holders, their processes and $dir are gone"
}
harness_selftest() {
    local tmp ok=0
    # another user: a copy of the scripts that user can read, run as nobody
    tmp=$(mktemp -d /tmp/hwrt-hosts-user.XXXXXX)
    cp "$here"/*.sh "$tmp"/ && chmod -R a+rX "$tmp"
    local msg
    msg=$(setpriv --reuid=65534 --regid=65534 --clear-groups bash "$tmp/run_hosts.sh" demo /bin/true 2>&1)
    local st=$?
    rm -rf "$tmp"
    if [ $st -ne 0 ] && printf '%s' "$msg" | grep -q 'FAILED: the multi-host tests need root'; then
        echo "harness: as uid 65534 it fails (exit $st): $msg"
    else
        echo "FAILED: as uid 65534 it said (exit $st): $msg" >&2; ok=1
    fi
    hold_then exit || ok=1
    hold_then TERM || ok=1
    hold_then INT || ok=1
    hold_then KILL || ok=1
    return $ok
}

rc=0
case $scenario in
demo)
    hosts_up 3 "HWRT_SIM_DEVICES=2" "HWRT_SIM_DEVICES=2" "HWRT_SIM_DEVICES=2"
    out=$HOSTS_DIR/mpirun.out
    mpirun_on_hosts -np 6 "$prog" 2>&1 | tee "$out"
    for r in 0 1 2 3 4 5; do
        count "^rank:$r host:node$((r / 2)) device:$((r % 2)) local_rank:$((r % 2)) allreduce ok" 1 "$out" || rc=1
    done ;;
torchvars)
    hosts_up 2 "HWRT_SIM_DEVICES=2" "HWRT_SIM_DEVICES=2"
    out=$HOSTS_DIR/mpirun.out
    # shellcheck disable=SC2016
    mpirun_on_hosts -np 4 --map-by ppr:2:node -x MASTER_ADDR=node0 -x MASTER_PORT=29500 \
        sh -c 'export RANK=$OMPI_COMM_WORLD_RANK WORLD_SIZE=$OMPI_COMM_WORLD_SIZE \
               LOCAL_RANK=$OMPI_COMM_WORLD_LOCAL_RANK LOCAL_WORLD_SIZE=$OMPI_COMM_WORLD_LOCAL_SIZE \
               GROUP_RANK=$((OMPI_COMM_WORLD_RANK / OMPI_COMM_WORLD_LOCAL_SIZE)); exec "$0"' \
        "$prog" 2>&1 | tee "$out"
    for r in 0 1 2 3; do
        count "^rank:$r host:node$((r / 2)) device:$((r % 2)) local_rank:$((r % 2)) allreduce ok" 1 "$out" || rc=1
    done ;;
collectives)
    hosts_up 2 "HWRT_SIM_DEVICES=2" "HWRT_SIM_DEVICES=2"
    out=$HOSTS_DIR/mpirun.out
    mpirun_on_hosts -np 4 -x HWRT_MPI_RING_BYTES=65536 "$prog" collectives 2>&1 | tee "$out"
    count ' passed, 0 failed' 4 "$out" || rc=1 ;;
bind)
    # mpirun inside an sbatch allocation: the daemons (started by srun there) and so every
    # rank inherit the node's SLURM_* variables; Open MPI's own must win
    # (srun starts one daemon per node: task id = node id, local id 0)
    e="HWRT_SIM_DEVICES=2 HWRT_SIM_EXCLUSIVE=1 HWRT_TEST_HOSTS=2 SLURM_NTASKS=2 SLURM_LOCALID=0"
    hosts_up 2 "$e SLURM_NODEID=0 SLURM_PROCID=0" "$e SLURM_NODEID=1 SLURM_PROCID=1"
    out=$HOSTS_DIR/mpirun.out
    mpirun_on_hosts -np 4 "$prog" hosts 2>&1 | tee "$out"
    count '^HOSTS rank .* device [01] of 2 (2 hosts)' 4 "$out" || rc=1
    count ' passed, 0 failed' 4 "$out" || rc=1 ;;
hostrange)
    hosts_up 2 "HWRT_SIM_DEVICES=2" "HWRT_SIM_DEVICES=2"
    out=$HOSTS_DIR/mpirun.out
    mpirun_on_hosts -np 5 --host node0:2,node1:3 "$prog" hostrange 2>&1 | tee "$out"
    count '^HOSTRANGE rank .*host node1' 5 "$out" || rc=1
    count ' passed, 0 failed' 5 "$out" || rc=1 ;;
duplicate)
    hosts_up 2 "HWRT_SIM_DEVICES=2" "HWRT_SIM_DEVICES=2"
    out=$HOSTS_DIR/mpirun.out
    mpirun_on_hosts -np 4 -x "HWRT_TEST_EXPECT=ranks 0, 1 on host node0" "$prog" duplicate 2>&1 | tee "$out"
    count ' passed, 0 failed' 4 "$out" || rc=1 ;;
global)
    hosts_up 2 "HWRT_SIM_DEVICES=4" "HWRT_SIM_DEVICES=4"
    out=$HOSTS_DIR/mpirun.out
    mpirun_on_hosts -np 4 -x "HWRT_TEST_EXPECT=rank 2 on host node1" "$prog" global 2>&1 | tee "$out"
    count ' passed, 0 failed' 4 "$out" || rc=1 ;;
samename)
    hosts_up 2 "HWRT_SIM_DEVICES=2" "HWRT_SIM_DEVICES=2"
    out=$HOSTS_DIR/mpirun.out
    host_rename 1 node0
    mpirun_on_hosts -np 4 "$prog" samename 2>&1 | tee "$out"
    count '^SAMENAME rank' 4 "$out" || rc=1
    count ' passed, 0 failed' 4 "$out" || rc=1 ;;
deadhost|deadhost-cable)
    e="HWRT_SIM_DEVICES=2 HWRT_DIST_TIMEOUT=3"
    hosts_up 3 "$e" "$e" "$e"
    out=$HOSTS_DIR/mpirun.out
    # --enable-recovery: mpirun must not end the survivors for us when node1's ranks go
    mpirun_on_hosts --enable-recovery -np 6 "$prog" deadhost > "$out" 2>&1 &
    job=$!
    t=0
    until [ "$(grep -c '^DEADHOST-READY' "$out")" -eq 6 ]; do
        if ! kill -0 $job 2>/dev/null || [ $t -ge 1200 ]; then
            cat "$out"; echo "FAILED: the 6 ranks did not all start" >&2; exit 1
        fi
        sleep 0.1; t=$((t + 1))
    done
    sleep 0.5                          # the ranks are in their allreduce loop now
    if [ "$scenario" = deadhost-cable ]; then
        echo "run_hosts: node1 dies: cable pulled, every process on it SIGKILLed"
        host_kill 1 cable
    else
        echo "run_hosts: node1 dies: every process on it SIGKILLed"
        host_kill 1
    fi
    # mpirun itself waits for node1's daemon for as long as TCP does: the verdict is the
    # survivors' reports, and hosts_down ends mpirun afterwards
    t=0
    until [ "$(grep -c '^DEADHOST-OK' "$out")" -ge 4 ] || [ $t -ge 600 ]; do
        sleep 0.1; t=$((t + 1))
    done
    sleep 0.5
    cat "$out"
    count '^DEADHOST-OK rank [0145] host node[02] ' 4 "$out" || rc=1
    count ' passed, 0 failed' 4 "$out" || rc=1 ;;
bench)
    hosts_up 2 "HWRT_SIM_DEVICES=1" "HWRT_SIM_DEVICES=1"
    out=$HOSTS_DIR/mpirun.out
    mpirun_on_hosts -np 2 --map-by ppr:1:node "$prog" dist "$@" 2>&1 | tee "$out"
    grep -q 'ratio hwrt_allreduce' "$out" || rc=1 ;;
hold)
    hosts_up 2
    out=$HOSTS_DIR/mpirun.out
    echo "HOLD $HOSTS_DIR $(cat "$HOSTS_DIR"/*.pid | tr '\n' ' ')"
    [ "${1:-}" = exit ] && exit 0
    sleep 600 & wait ;;
harness)
    harness_selftest "$prog" || rc=1 ;;
*)
    echo "FAILED: unknown scenario $scenario" >&2; exit 2 ;;
esac
[ $rc -eq 0 ] && echo "run_hosts $scenario: passed" || echo "run_hosts $scenario: FAILED" >&2
exit $rc
