#!/bin/bash
# The test command of a mutation run (scripts/mutation-run.sh passes it to
# ../shared/tools/mutants.py --test): the plain CTest suites of `make test-main`, in the
# RelWithDebInfo build BUILD, ordered so that a planted bug costs little to notice.
#
#   scripts/mutation-test.sh BUILD LOGDIR
#
# The mutated file is the one `git diff HEAD -- src` names (mutants.py writes the mutant into
# the tree; mutation-run.sh starts only from a clean src/). Phase 1 runs the suites of that
# file's directory (the regex below), phase 2 every other test; both stop at the first failing
# test (one failure kills a mutant; tests running beside it are stopped, not waited for). Exit 0 only when both phases passed: then the mutant ran
# against the whole plain suite, phase 1 and phase 2 together being every test of `ctest -N`.
# On an unmutated tree it runs the whole suite once per tree state and remembers the pass
# (BUILD/mutation-baseline.ok, keyed by the src/ and tests/ trees), so that mutants.py's check of the unmutated tree,
# made once per directory, does not rerun the suite.
# Each mutant's diff, phase and failing test go to LOGDIR/NNN.log.
set -u
BUILD=${1:?build dir}
LOGDIR=${2:?log dir}
ROOT=$(git rev-parse --show-toplevel)
cd "$ROOT" || exit 2
mkdir -p "$LOGDIR"
# The suites mostly wait (sleeps, subprocesses, mpirun): the whole suite takes ~2 min of CPU
# in ~5 min at -j2 on a loaded machine, so phase 2 runs 4 at a time.
CTEST_ARGS=(--timeout 300 --stop-on-failure)

files=$(git diff --name-only HEAD -- src)
if [ -z "$files" ]; then
  key=$(git rev-parse HEAD:src HEAD:tests | tr '\n' ' ')
  if [ "$(cat "$BUILD/mutation-baseline.ok" 2>/dev/null)" = "$key" ]; then
    exit 0
  fi
  (cd "$BUILD" && ctest -j2 --timeout 600 --output-on-failure) > "$LOGDIR/baseline.log" 2>&1 || exit 1
  echo "$key" > "$BUILD/mutation-baseline.ok"
  exit 0
fi

f=$files
case "$f" in
  src/base/*)             re='unit_test_(escape|json|log|env|op_table|dynlib|bad_inputs)|conformance_sim$|structure_status|tools_cli' ;;
  src/backends/sim/*)     re='conformance_sim|unit_test_sim|unit_whitebox_sim|unit_test_(async|faults|stress|device_sync)' ;;
  src/backends/opencl/*)  re='opencl|unit_test_two_backends' ;;
  src/backends/cuda/*)    re='cuda|smi' ;;
  src/backends/*)         re='conformance_(sim|opencl)$|unit_whitebox_(sim_mem|range_alloc)|unit_test_sim_pages|opencl' ;;
  src/runtime/*)          re='conformance_sim$|unit_test_(handle|registry|guards|device|two|bad_inputs)|smi' ;;
  src/mem/*)              re='unit_test_pool|unit_whitebox_pool|unit_test_(alloc|mutants)|conformance_sim$|prof_empty' ;;
  src/exec/*)             re='conformance_sim$|unit_test_(async|device_sync|stress|guards)|diag' ;;
  src/tensor/*)           re='conformance_sim$|unit_test_(dlpack|bad_inputs)|python_test_(dlpack|kernel_ops)' ;;
  src/offload/*)          re='unit_test_offload|python_test_seed_2_5' ;;
  src/prof/*)             re='prof' ;;
  src/diag/*)             re='diag' ;;
  src/distributed/*)      re='mpi|coll_engine|nccl' ;;
  src/plugins/*)          re='mpi|coll_engine' ;;
  *)                      re='conformance_sim$' ;;
esac

n=$(ls "$LOGDIR" | grep -c '^[0-9]*\.log$')
log=$LOGDIR/$(printf %03d $((n + 1))).log
{ git diff HEAD -- src; echo "phase 1: -R '$re'"; } > "$log"
# One phase: ctest in its own process group, stopped as soon as one test has failed (the
# tests still running in parallel are not waited for: one failure decides).
phase() {
  (cd "$BUILD" && exec setsid ctest "$@") > "$log.ctest" 2>&1 &
  local pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    if grep -qE '\*\*\*(Failed|Timeout|Exception|Not Run)' "$log.ctest"; then
      kill -TERM -- -"$pid" 2>/dev/null
      wait "$pid"
      return 1
    fi
    sleep 1
  done
  wait "$pid"
}
start=$SECONDS
phase -j2 "${CTEST_ARGS[@]}" -R "$re"
rc=$?
phase=1
if [ $rc -eq 0 ]; then
  phase=2
  phase -j4 "${CTEST_ARGS[@]}" -E "$re"
  rc=$?
fi
{
  grep -E "tests passed|\*\*\*|Failed|Timeout|Exception|Not Run" "$log.ctest" | grep -v "^ *[0-9]*/[0-9]* Test *#[0-9]*: .*Passed" | tail -8
  echo "verdict: $([ $rc -eq 0 ] && echo survived || echo "killed in phase $phase") after $((SECONDS - start)) s"
} >> "$log"
rm -f "$log.ctest"
exit $rc
