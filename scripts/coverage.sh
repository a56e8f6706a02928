#!/bin/bash
# Line and branch coverage of src/ by the plain CTest suites (make coverage; issue 25 item 3).
#
#   scripts/coverage.sh                 build build-cov, zero the counters, run every plain
#                                       suite, print the per-file table and the totals
#   scripts/coverage.sh -R pool         the same, running only the tests ctest -R selects
#                                       (any ctest arguments; the report covers what ran)
#   COVERAGE_REPORT_ONLY=1 scripts/coverage.sh
#                                       report the counters already in build-cov (no build,
#                                       no reset, no test run)
#
# build-cov is a -DHWRT_COVERAGE=ON build (--coverage -O0: one gcov branch per source branch).
# Counting: gcov's -b counts, as gcovr reads them: every outcome of every conditional jump
# (an `if (a && b)` is 4 outcomes, a switch one per case label); a branch counts as covered
# when taken at least once. Nothing in src/ is excluded by pragma. The totals are printed
# twice: over all of src/ (src/plugins/mpi included), and over the code that can run on this
# machine: without src/backends/cuda and src/backends/ascend, whose device paths need an NVIDIA
# or Ascend driver (the CUDA tests here run against no driver, and only the "no driver" paths);
# a third time without the NCCL engine as well (src/distributed/nccl_engine.c, nccl_api.c:
# collectives on CUDA device memory through libnccl.so.2, absent here); and a fourth time
# without the HCCL engine too (hccl_engine.c, hccl_api.c: collectives on Ascend device
# memory through CANN's libhccl.so, absent here; the tests reach only its loader, through
# a stand-in library). The NCCL and HCCL engines are the hardware-only group.
# Left out of the run: install_prefix and install_pip, which install a separate copy of the
# library (pip builds its own, uninstrumented) and check that no build path is in what is
# installed, which an instrumented binary (it names its .gcda files) cannot pass by design.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bdir=${COVERAGE_BUILD:-$root/build-cov}
jobs=${NPROC:-2}
cd "$root"
command -v gcovr >/dev/null || { echo "coverage: gcovr is needed (apt-get install gcovr)" >&2; exit 2; }

if [ -z "${COVERAGE_REPORT_ONLY:-}" ]; then
    cmake -S . -B "$bdir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHWRT_COVERAGE=ON >/dev/null
    cmake --build "$bdir" -j"$jobs"
    find "$bdir" -name '*.gcda' -delete
    # A failing suite still leaves its counters: report them, then fail.
    rc=0
    (cd "$bdir" && ctest --output-on-failure -j"$jobs" --timeout 900 \
        -E '^install_(prefix|pip)$' "$@") || rc=$?
else
    rc=0
fi

json=$bdir/coverage.json
gcovr -r "$root" --object-directory "$bdir" -f "$root/src/" -j"$jobs" \
      --json-summary-pretty -o "$json" "$bdir" 2>"$bdir/gcovr.log" || {
    cat "$bdir/gcovr.log" >&2; exit 2; }
/usr/bin/python3 - "$json" <<'EOF'
import json, sys
files = json.load(open(sys.argv[1]))["files"]
def pct(c, t):
    return 100.0 * c / t if t else 100.0
rows = sorted(files, key=lambda f: (-(f["branch_total"] - f["branch_covered"]), f["filename"]))
print(f"{'file':42} {'lines':>13} {'%':>6} {'branches':>13} {'%':>6} {'missed':>6}")
for f in rows:
    print(f"{f['filename']:42} {f['line_covered']:>6}/{f['line_total']:<6} "
          f"{pct(f['line_covered'], f['line_total']):6.1f} "
          f"{f['branch_covered']:>6}/{f['branch_total']:<6} "
          f"{pct(f['branch_covered'], f['branch_total']):6.1f} "
          f"{f['branch_total'] - f['branch_covered']:>6}")
def total(name, sel):
    lc = sum(f["line_covered"] for f in sel); lt = sum(f["line_total"] for f in sel)
    bc = sum(f["branch_covered"] for f in sel); bt = sum(f["branch_total"] for f in sel)
    print(f"TOTAL {name:36} lines {lc}/{lt} {pct(lc, lt):.1f}%  branches {bc}/{bt} {pct(bc, bt):.1f}%")
print()
total("src/ (all)", files)
runnable = [f for f in files if not f["filename"].startswith(("src/backends/cuda/", "src/backends/ascend/"))]
total("src/ without backends/cuda, ascend", runnable)
nccl = ("src/distributed/nccl_engine.c", "src/distributed/nccl_api.c")
hccl = ("src/distributed/hccl_engine.c", "src/distributed/hccl_api.c")
total("... and without the NCCL engine", [f for f in runnable if f["filename"] not in nccl])
total("... without NCCL and HCCL (hw-only)",
      [f for f in runnable if f["filename"] not in nccl + hccl])
EOF
exit $rc
