#!/bin/bash
# The test command of a mutation run (scripts/mutation-run.sh passes it to
# ../shared/tools/mutants.py --test): the plain CTest suites of `make test-main`, in the
# RelWithDebInfo build BUILD, ordered so that a planted bug costs little to notice.
#
#   scripts/mutation-test.sh BUILD LOGDIR
#
# The mutated file and line are the ones `git diff -U0 HEAD -- src` names (mutants.py writes
# the mutant into the tree; mutation-run.sh starts only from a clean src/).
#
# Test selection by coverage: when the per-test coverage map (MAP, default BUILD/covmap.json,
# built by scripts/mutation-covmap.sh) has HEAD's key, only the tests that execute the mutated
# line run (scripts/mutation-select.py): a test that does not execute it runs the same code as
# on the unmutated tree, so it cannot notice the mutant. Phase 1 runs the covering tests of
# the file's directory (the regex below), phase 2 the other covering tests, phase 3 the map's
# unmeasured tests (those whose lines are not known: they run for every mutant); each phase
# stops at the first failing test. A mutant on a line that gcov counts but no measured test
# executes is "not covered": only phase 3 runs, and if it passes the verdict is "not covered"
# and FILE:LINE goes to LOGDIR/not-covered.txt (mutation-run.sh's summary counts it apart).
# Without a map, with a stale one (of another tree), or on a line gcov has no counter for (an
# initializer, a macro's body), everything runs, as before the map: phase 1 the suites of the
# file's directory, phase 2 every other test of `ctest -N`.
# Either way the mutant survives (exit 0) only when every test that can notice it passed; one
# failure kills it (tests running beside it are stopped, not waited for). With
# HWRT_MUTATION_CONFIRM=1 a survivor of the selection then runs every other test as well
# (phase 4: a check of the map; the log gives the time the selection took and the total).
# With HWRT_MUTATION_SAN a survivor also runs under the sanitizer stage (below).
# On an unmutated tree it runs the whole suite once per tree state and remembers the pass
# (BUILD/mutation-baseline.ok, keyed by the src/ and tests/ trees), so that mutants.py's check of the unmutated tree,
# made once per directory, does not rerun the suite.
# Each mutant's diff, phase and failing test go to LOGDIR/NNN.log.
set -u
BUILD=${1:?build dir}
LOGDIR=${2:?log dir}
MAP=${HWRT_MUTATION_MAP:-$BUILD/covmap.json}
ROOT=$(git rev-parse --show-toplevel)
cd "$ROOT" || exit 2
mkdir -p "$LOGDIR"
# The suites mostly wait (sleeps, subprocesses, mpirun): the whole suite takes ~2 min of CPU
# in ~5 min at -j2 on a loaded machine, so phase 2 runs 4 at a time.
CTEST_ARGS=(--timeout 300 --stop-on-failure --output-on-failure)
# make test-asan's environment and exclusions (Makefile ASAN_ENV, SAN_EXCLUDE)
SAN_ENV=(ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1:strict_string_checks=1
         UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 HWRT_STRESS_SCALE=0.3)
SAN_EXCLUDE=${SAN_EXCLUDE:-python|mpi|bench|gpu|install|large|sweep}

files=$(git diff --name-only HEAD -- src)
if [ -z "$files" ]; then
  # the unmutated tree: every suite passes, and with HWRT_MUTATION_SAN the sanitizer
  # stage's too (else its failures would count as kills)
  key=$(git rev-parse HEAD:src HEAD:tests | tr '\n' ' ')
  if [ "$(cat "$BUILD/mutation-baseline.ok" 2>/dev/null)" != "$key" ]; then
    (cd "$BUILD" && ctest -j2 --timeout 600 --output-on-failure) > "$LOGDIR/baseline.log" 2>&1 || exit 1
    echo "$key" > "$BUILD/mutation-baseline.ok"
  fi
  san=${HWRT_MUTATION_SAN:-}
  if [ -n "$san" ] && [ "$(cat "$san/mutation-baseline.ok" 2>/dev/null)" != "$key" ]; then
    (cd "$san" && env "${SAN_ENV[@]}" ctest -j2 --timeout 900 --output-on-failure -LE "$SAN_EXCLUDE") \
      > "$LOGDIR/baseline-san.log" 2>&1 || exit 1
    echo "$key" > "$san/mutation-baseline.ok"
  fi
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

line=$(git diff -U0 HEAD -- src | sed -n 's/^@@ -\([0-9]*\).*/\1/p' | head -1)
n=$(ls "$LOGDIR" | grep -c '^[0-9]*\.log$')
log=$LOGDIR/$(printf %03d $((n + 1))).log
git diff HEAD -- src > "$log"
sel=$(/usr/bin/python3 scripts/mutation-select.py "$MAP" "$f" "$line" "$re" "$(scripts/mutation-covmap.sh --key)")
kind=$(echo "$sel" | head -1 | cut -d' ' -f1)
echo "selection: $(echo "$sel" | head -1)" >> "$log"
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
rc=0
phase=1
: > "$log.ctest"
if [ "$kind" != covered ] && [ "$kind" != not-covered ]; then
  echo "phase 1: -R '$re'" >> "$log"
  phase -j2 "${CTEST_ARGS[@]}" -R "$re"
  rc=$?
  if [ $rc -eq 0 ]; then
    phase=2
    phase -j4 "${CTEST_ARGS[@]}" -E "$re"
    rc=$?
  fi
else
  for p in 1 2 3; do
    r=$(echo "$sel" | sed -n "$((p + 1))p")
    [ -n "$r" ] || continue
    phase=$p
    echo "phase $p: $(echo "$r" | tr '|' '\n' | wc -l) tests: $(echo "$r" | cut -c1-300)" >> "$log"
    phase -j4 "${CTEST_ARGS[@]}" -R "$r"
    rc=$?
    [ $rc -eq 0 ] || break
  done
  # HWRT_MUTATION_CONFIRM=1: a survivor of the selection also runs every other test (phase
  # 4), a check of the map (a test the map missed would kill it here, and say so)
  if [ $rc -eq 0 ] && [ "${HWRT_MUTATION_CONFIRM:-0}" = 1 ]; then
    ran=$(echo "$sel" | sed -n '2,4p' | sed 's/^\^(//; s/)\$$//' | tr '|\n' '||' | sed 's/^|*//; s/|*$//; s/||*/|/g')
    phase=4
    echo "phase 4 (confirm): every other test, after $((SECONDS - start)) s" >> "$log"
    if [ -n "$ran" ]; then phase -j4 "${CTEST_ARGS[@]}" -E "^($ran)\$"; else phase -j4 "${CTEST_ARGS[@]}"; fi
    rc=$?
  fi
fi
# HWRT_MUTATION_SAN=DIR: a survivor of the plain suites also meets make test's sanitizer
# stage: the mutant is built in DIR (an ASan+UBSan build of this tree, `make test-asan`'s
# options) and the tests it was run against that the stage runs (not labelled SAN_EXCLUDE)
# run there with the stage's environment (phase san). A mutant that stage notices is one
# `make test` notices.
if [ $rc -eq 0 ] && [ -n "${HWRT_MUTATION_SAN:-}" ]; then
  if [ "$kind" = covered ] || [ "$kind" = not-covered ]; then
    ran=$(echo "$sel" | sed -n '2,4p' | sed 's/^\^(//; s/)\$$//' | tr '|\n' '||' | sed 's/^|*//; s/|*$//; s/||*/|/g')
    san_sel=(-R "^($ran)\$")
  else
    san_sel=()
  fi
  phase=san
  echo "phase san: $HWRT_MUTATION_SAN, after $((SECONDS - start)) s" >> "$log"
  if ! cmake --build "$HWRT_MUTATION_SAN" -j2 > "$log.san" 2>&1; then
    echo "phase san: the sanitizer build failed (not counted)" >> "$log"
  elif [ "${#san_sel[@]}" -eq 0 ] || [ -n "$ran" ]; then
    (BUILD=$HWRT_MUTATION_SAN; export "${SAN_ENV[@]}"
     phase -j2 "${CTEST_ARGS[@]}" -LE "$SAN_EXCLUDE" "${san_sel[@]}")
    rc=$?
  fi
  rm -f "$log.san"
fi
verdict="killed in phase $phase"
if [ $rc -eq 0 ]; then
  verdict=survived
  if [ "$kind" = not-covered ]; then
    verdict="not covered"
    echo "$f:$line" >> "$LOGDIR/not-covered.txt"
  fi
fi
{
  grep -E "tests passed|\*\*\*|Failed|Timeout|Exception|Not Run" "$log.ctest" | grep -v "^ *[0-9]*/[0-9]* Test *#[0-9]*: .*Passed" | tail -8
  echo "verdict: $verdict after $((SECONDS - start)) s"
} >> "$log"
# a kill's evidence: the failing test's own output (the first 60 lines after its name), so
# that a kill by a test that does not reach the mutated code can be told from a real one
if [ $rc -ne 0 ]; then
  t=$(grep -E '\*\*\*(Failed|Timeout|Exception)' "$log.ctest" | head -1 | sed 's/.*Test *#[0-9]*: \([^ ]*\).*/\1/')
  [ -n "$t" ] && { echo "output of $t:"; grep -A60 -E "Test +#[0-9]+: $t " "$log.ctest" | sed -n '2,61p'; } >> "$log"
fi
rm -f "$log.ctest"
exit $rc
