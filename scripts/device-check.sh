#!/bin/bash
# scripts/device-check.sh: the one prepared check of the hardware backends, for any machine
# with an NVIDIA GPU (issue 22 item 7; docs/cuda.md) or an Ascend NPU (issue 24 item 7;
# docs/ascend.md), or both. From the source root:
#
#   OUT=/some/dir scripts/device-check.sh
#
# It builds hwrt (Release, in $BUILD), then runs, where there is a GPU: the conformance suite on cuda (and on
# opencl when NVIDIA's OpenCL driver is registered), the cuda-labelled tests, the
# async-semantics test on cuda, the demos, the NCCL path with two ranks when a test for
# it is built and there are two GPUs, and hwrt-bench copy/launch/pool on cuda next to the
# raw driver baselines of the same run (hwrt-cuda-baseline); where there is an NPU: the
# conformance suite on ascend, the ascend-labelled tests, the async-semantics test and the
# op demo on ascend, the offload demo, HCCL with two ranks (one rank with one NPU), and
# hwrt-bench copy/launch/pool on ascend next to raw aclrtMemcpyAsync, aclnn launch +
# aclrtSynchronizeStream and aclrtMalloc/aclrtFree of the same run (hwrt-ascend-baseline).
# Every step's output is in $OUT/<step>.log, the verdicts and the comparison in
# $OUT/summary.txt.
#
# Exit status: 0 every step passed (or was skipped, with the reason); 1 a step failed;
# 3 neither an NVIDIA GPU with its driver nor an Ascend NPU with CANN here (said so for
# both; nothing was built or run).
# Performance goals are reported (met / missed), never a failure: timings are not
# pass/fail.
#
# Env: OUT (default ./device-check-out), BUILD (default build-device), JOBS (default
# nproc), HWRT_CUDA_LIBRARY (the driver, default libcuda.so.1 on the loader path),
# HWRT_ASCEND_LIBRARY (CANN's runtime, default libascendcl.so on the loader path; CANN's
# set_env.sh is sourced when ASCEND_TOOLKIT_HOME is unset and it is installed).
# Budget: under 8 minutes on a 16-core H200 machine (each step has its own timeout).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$PWD/device-check-out}
BUILD=${BUILD:-$root/build-device}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 4)}
mkdir -p "$OUT"
summary=$OUT/summary.txt
: > "$summary"
say() { echo "$*" | tee -a "$summary"; }
t_start=$(date +%s)
failed=""

# ---- 1. an NVIDIA GPU and its driver, before anything is built ----
no_gpu=""
lib=${HWRT_CUDA_LIBRARY:-}
if [ -n "$lib" ]; then
    [ -e "$lib" ] || no_gpu="HWRT_CUDA_LIBRARY=$lib does not exist"
elif ! { ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; } &&
     ! ls /usr/lib/x86_64-linux-gnu/libcuda.so.1 /usr/lib64/libcuda.so.1 \
          /usr/local/nvidia/lib64/libcuda.so.1 >/dev/null 2>&1; then
    no_gpu="no libcuda.so.1 (the NVIDIA driver) on the loader path"
fi
if [ -z "$no_gpu" ] && ! ls /dev/nvidia[0-9]* >/dev/null 2>&1 &&
   ! { nvidia-smi -L 2>/dev/null | grep -q '^GPU'; }; then
    no_gpu="no /dev/nvidia<N> device and nvidia-smi lists no GPU"
fi

# ---- 1b. an Ascend NPU and CANN's runtime ----
no_npu=""
if [ -z "${ASCEND_TOOLKIT_HOME:-}" ] && [ -z "${HWRT_ASCEND_LIBRARY:-}" ]; then
    for env in /usr/local/Ascend/ascend-toolkit/set_env.sh /usr/local/Ascend/cann/set_env.sh; do
        # shellcheck disable=SC1090
        [ -f "$env" ] && { . "$env" >/dev/null 2>&1; break; }
    done
fi
alib=${HWRT_ASCEND_LIBRARY:-}
if [ -n "$alib" ]; then
    [ -e "$alib" ] || no_npu="HWRT_ASCEND_LIBRARY=$alib does not exist"
elif ! { ldconfig -p 2>/dev/null | grep -q 'libascendcl\.so '; } &&
     ! ls "${ASCEND_TOOLKIT_HOME:-/nonexistent}/lib64/libascendcl.so" >/dev/null 2>&1 &&
     ! { echo "${LD_LIBRARY_PATH:-}" | tr ':' '\n' | while read -r d; do
             [ -n "$d" ] && [ -e "$d/libascendcl.so" ] && echo found; done | grep -q found; }; then
    no_npu="no libascendcl.so (CANN's runtime) on the loader path or in ASCEND_TOOLKIT_HOME"
fi
if [ -z "$no_npu" ] && ! ls /dev/davinci[0-9]* >/dev/null 2>&1 &&
   ! { npu-smi info 2>/dev/null | grep -qi 'ascend\|910\|310'; }; then
    no_npu="no /dev/davinci<N> device and npu-smi lists no NPU"
fi

if [ -n "$no_gpu" ] && [ -n "$no_npu" ]; then
    say "device-check: no NVIDIA GPU here: $no_gpu"
    say "device-check: no Ascend NPU here: $no_npu"
    say "device-check: nothing was built or run (exit 3)"
    exit 3
fi
ngpu=0
if [ -z "$no_gpu" ]; then
    ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
    [ "${ngpu:-0}" -gt 0 ] || ngpu=1
fi
nnpu=0
if [ -z "$no_npu" ]; then
    nnpu=$(ls -d /dev/davinci[0-9]* 2>/dev/null | wc -l)
    [ "${nnpu:-0}" -gt 0 ] || nnpu=1
fi
{
    date -u
    uname -a
    nvidia-smi 2>&1 || echo "nvidia-smi: not available"
    npu-smi info 2>&1 || echo "npu-smi: not available"
    echo "ASCEND_TOOLKIT_HOME=${ASCEND_TOOLKIT_HOME:-}"
    cat "${ASCEND_TOOLKIT_HOME:-/nonexistent}"/*/ascend_toolkit_install.info 2>/dev/null
    nproc
    cmake --version 2>&1 | head -1
    cc --version 2>&1 | head -1
} > "$OUT/env.txt" 2>&1
[ -z "$no_gpu" ] || say "device-check: no NVIDIA GPU here ($no_gpu): the cuda steps are skipped"
[ -z "$no_npu" ] || say "device-check: no Ascend NPU here ($no_npu): the ascend steps are skipped"
say "device-check: $ngpu GPU(s), $nnpu NPU(s); results in $OUT"

# step NAME TIMEOUT_S CMD...: runs CMD with its output in $OUT/NAME.log; records the verdict.
# Every step's timeout is cut to what is left of the whole run's budget (BUDGET_S, 470 s:
# under 8 minutes with the detection and the summary).
BUDGET_S=${BUDGET_S:-470}
step() {
    local name=$1 limit=$2
    shift 2
    local t0 rc left
    left=$((BUDGET_S - ($(date +%s) - t_start)))
    if [ "$left" -lt 10 ]; then
        say "FAIL  $name: not run, the ${BUDGET_S}s budget is spent"
        failed="$failed $name"
        return 1
    fi
    [ "$limit" -le "$left" ] || limit=$left
    t0=$(date +%s)
    timeout --kill-after=10 "$limit" "$@" > "$OUT/$name.log" 2>&1
    rc=$?
    local dt=$(($(date +%s) - t0))
    if [ $rc -eq 0 ]; then
        say "PASS  $name (${dt}s)"
    else
        [ $rc -eq 124 ] && echo "device-check: timed out after ${limit}s" >> "$OUT/$name.log"
        say "FAIL  $name (exit $rc, ${dt}s): see $name.log"
        tail -n 15 "$OUT/$name.log" | sed 's/^/      | /' | tee -a "$summary"
        failed="$failed $name"
    fi
    return $rc
}
skip() { say "SKIP  $1: $2"; }

# collective_steps NAME EXE NDEV ONE_S TWO_S: a collective engine's device test (EXE:
# tests/mpi/<name>_allreduce, the engine forced, results checked; its exit 77, no device,
# is a failure here): two ranks under mpirun on NDEV >= 2 devices (TWO_S seconds), else
# one rank alone (ONE_S), also when mpirun is missing (said so).
collective_steps() {
    local name=$1 exe=$2 ndev=$3 one_s=$4 two_s=$5
    if [ ! -x "$exe" ]; then
        skip "$name" "$exe is not built in this tree"
    elif [ "$ndev" -lt 2 ] || ! command -v mpirun >/dev/null 2>&1; then
        [ "$ndev" -lt 2 ] || skip "${name}_two_ranks" "mpirun (Open MPI) is not installed"
        step "${name}_one_rank" "$one_s" "$exe"
    else
        step "${name}_two_ranks" "$two_s" mpirun --allow-run-as-root --oversubscribe -np 2 "$exe"
    fi
}

# ---- 2. build ----
if ! step build 300 sh -c "cmake -S '$root' -B '$BUILD' -DCMAKE_BUILD_TYPE=Release && \
                           cmake --build '$BUILD' -j '$JOBS'"; then
    say "device-check: the build failed; nothing else can run"
    exit 1
fi
bin=$BUILD/bin
conf=$BUILD/tests/conformance/hwrt-conformance

# the offload demo sizes a simulated device itself (examples/offload_mlp.h): it runs on sim
step offload_demo 120 "$BUILD/examples/offload_demo"

# ---- 3. correctness on the GPU ----
# exit 77 (backend unavailable) is a failure here: this machine has a GPU
if [ -z "$no_gpu" ]; then
step conformance_cuda 240 "$conf" --backend cuda
if ls /etc/OpenCL/vendors/*.icd >/dev/null 2>&1 && grep -qil nvidia /etc/OpenCL/vendors/*.icd; then
    step conformance_opencl 240 "$conf" --backend opencl
else
    skip conformance_opencl "NVIDIA's OpenCL driver is not registered in /etc/OpenCL/vendors"
fi
step async_semantics_cuda 120 "$BUILD/tests/unit/test_async_semantics" cuda
step ctest_cuda 120 sh -c "cd '$BUILD' && ctest -L cuda -LE conformance --output-on-failure"
step hardware_op_demo_cuda 60 env HWRT_DEMO_BACKEND=cuda "$BUILD/examples/hardware_op_demo"
# the profiler on cuda (CUPTI activity records when libcupti loads, events otherwise)
step prof_cuda 90 sh -c "HWRT_DEMO_BACKEND=cuda '$bin/hwrt-prof' --application='$BUILD/examples/hardware_op_demo' \
    --output='$OUT/prof' && '$bin/hwrt-prof' --export=on --output='$OUT/prof' && \
    '$bin/hwrt-prof' --analyze=op --output='$OUT/prof'"

# NCCL: two ranks with two GPUs, one NCCL rank alone with one GPU
collective_steps nccl "$BUILD/tests/mpi/nccl_allreduce" "$ngpu" 60 120

# ---- 4. performance next to the raw driver, same run ----
export HWRT_BACKEND=cuda
step bench_copy 120 sh -c "'$bin/hwrt-bench' copy --json --backend cuda > '$OUT/bench_copy.json'"
step bench_launch 60 sh -c "'$bin/hwrt-bench' launch --json --backend cuda > '$OUT/bench_launch.json'"
step bench_pool 120 sh -c "'$bin/hwrt-bench-pool' --reps 5 --json > '$OUT/bench_pool.json'"
step baseline 120 sh -c "'$bin/hwrt-cuda-baseline' > '$OUT/baseline.json'"
unset HWRT_BACKEND

if command -v python3 >/dev/null 2>&1; then
    python3 - "$OUT" >> "$summary" 2>&1 <<'PY' || say "FAIL  compare: see summary.txt"
import json, os, sys
out = sys.argv[1]
def load(n):
    try:
        with open(os.path.join(out, n)) as f: return json.load(f)
    except Exception as e:
        print(f"compare: {n}: {e}"); return None
copy, launch, pool, base = (load(n) for n in
    ("bench_copy.json", "bench_launch.json", "bench_pool.json", "baseline.json"))
def goal(ok): return "met" if ok else "MISSED"
print("\nhwrt on cuda vs raw driver, same run (medians; goals of issue 22, reported only)")
if copy and base:
    raw = {(r["kind"], r["host"], r["bytes"]): r["gbps_median"] for r in base["copy"]}
    print(f"  {'copy':<16}{'bytes':>12}{'hwrt GB/s':>11}{'raw GB/s':>10}{'ratio':>7}")
    for r in copy["rows"]:
        k = (r["kind"], r["host"], r["bytes"])
        if k not in raw: continue
        ratio = r["gbps_median"] / raw[k] if raw[k] else 0
        g = goal(ratio >= 0.97) if r["host"] == "pinned" and r["bytes"] >= 64 << 20 else ""
        print(f"  {r['kind'] + ' ' + r['host']:<16}{r['bytes']:>12}{r['gbps_median']:>11.2f}"
              f"{raw[k]:>10.2f}{ratio:>7.3f} {g}")
if launch and base:
    ratio = launch["op_sync_roundtrip_us_median"] / base["launch_sync_us_median"]
    print(f"  op+sync {launch['op_sync_roundtrip_us_median']:.2f} us vs raw cuLaunchKernel+"
          f"cuStreamSynchronize {base['launch_sync_us_median']:.2f} us: {ratio:.3f}x "
          f"(goal <= 1.1: {goal(ratio <= 1.1)})")
if pool and base:
    if pool["latency"].get("backend") != "cuda":
        print(f"  pool: the latency rows ran on {pool['latency'].get('backend', 'sim')}, not cuda")
    hw = {r["size"]: r["hwrt_ns"] for r in pool["latency"]["rows"]}
    for r in base["alloc"]:
        if r["size"] not in hw: continue
        h = hw[r["size"]]
        print(f"  pool {r['size']:>6}: hwrt {h:.1f} ns, cuMemAlloc+Free {r['cuMemAlloc_free_ns']:.1f}"
              f" ns ({r['cuMemAlloc_free_ns'] / h:.1f}x faster, goal >= 10: "
              f"{goal(r['cuMemAlloc_free_ns'] / h >= 10)}), cuMemAllocAsync+FreeAsync "
              f"{r['cuMemAllocAsync_free_ns']:.1f} ns (hwrt/async {h / r['cuMemAllocAsync_free_ns']:.2f}, "
              f"goal <= 1.2: {goal(h / r['cuMemAllocAsync_free_ns'] <= 1.2)})")
PY
else
    skip compare "python3 is not installed: the raw figures are in $OUT/*.json"
fi
fi   # the GPU

# ---- 5. the Ascend NPU: correctness, then performance next to raw AscendCL ----
# exit 77 (backend unavailable) is a failure here: this machine has an NPU
if [ -z "$no_npu" ]; then
step conformance_ascend 240 "$conf" --backend ascend
step async_semantics_ascend 120 "$BUILD/tests/unit/test_async_semantics" ascend
step ctest_ascend 120 sh -c "cd '$BUILD' && ctest -L ascend -LE conformance --output-on-failure"
step hardware_op_demo_ascend 60 env HWRT_DEMO_BACKEND=ascend "$BUILD/examples/hardware_op_demo"

# HCCL (issue 24 item 6; its test checks the refusals too), only where an Ascend NPU is
# present (/dev/davinci<N>): two ranks with two NPUs, one HCCL rank alone with one NPU
ndav=$(ls -d /dev/davinci[0-9]* 2>/dev/null | wc -l)
if [ "$ndav" -eq 0 ]; then
    skip hccl "no Ascend NPU here (no /dev/davinci<N>)"
else
    collective_steps hccl "$BUILD/tests/mpi/hccl_allreduce" "$ndav" 90 180
fi


export HWRT_BACKEND=ascend
step bench_copy_ascend 120 sh -c "'$bin/hwrt-bench' copy --json --backend ascend > '$OUT/bench_copy_ascend.json'"
step bench_launch_ascend 60 sh -c "'$bin/hwrt-bench' launch --json --backend ascend > '$OUT/bench_launch_ascend.json'"
step bench_pool_ascend 120 sh -c "'$bin/hwrt-bench-pool' --reps 5 --json > '$OUT/bench_pool_ascend.json'"
step baseline_ascend 120 sh -c "'$bin/hwrt-ascend-baseline' > '$OUT/baseline_ascend.json'"
unset HWRT_BACKEND

if command -v python3 >/dev/null 2>&1; then
    python3 - "$OUT" >> "$summary" 2>&1 <<'PY' || say "FAIL  compare_ascend: see summary.txt"
import json, os, sys
out = sys.argv[1]
def load(n):
    try:
        with open(os.path.join(out, n)) as f: return json.load(f)
    except Exception as e:
        print(f"compare: {n}: {e}"); return None
copy, launch, pool, base = (load(n) for n in
    ("bench_copy_ascend.json", "bench_launch_ascend.json", "bench_pool_ascend.json",
     "baseline_ascend.json"))
print("\nhwrt on ascend vs raw AscendCL, same run (medians; ratios reported, not pass/fail)")
if copy and base:
    raw = {(r["kind"], r["host"], r["bytes"]): r["gbps_median"] for r in base["copy"]}
    print(f"  {'copy':<16}{'bytes':>12}{'hwrt GB/s':>11}{'raw GB/s':>10}{'ratio':>7}")
    for r in copy["rows"]:
        k = (r["kind"], r["host"], r["bytes"])
        if k not in raw: continue
        ratio = r["gbps_median"] / raw[k] if raw[k] else 0
        print(f"  {r['kind'] + ' ' + r['host']:<16}{r['bytes']:>12}{r['gbps_median']:>11.2f}"
              f"{raw[k]:>10.2f}{ratio:>7.3f}")
    print("  (raw pageable = aclrtMemcpy, synchronous; raw pinned = aclrtMemcpyAsync + sync)")
if launch and base:
    ratio = launch["op_sync_roundtrip_us_median"] / base["launch_sync_us_median"]
    print(f"  op+sync {launch['op_sync_roundtrip_us_median']:.2f} us vs raw aclnnInplaceFillScalar"
          f" (both phases) + aclrtSynchronizeStream {base['launch_sync_us_median']:.2f} us: {ratio:.3f}x")
if pool and base:
    if pool["latency"].get("backend") != "ascend":
        print(f"  pool: the latency rows ran on {pool['latency'].get('backend', 'sim')}, not ascend")
    hw = {r["size"]: r["hwrt_ns"] for r in pool["latency"]["rows"]}
    for r in base["alloc"]:
        if r["size"] not in hw: continue
        h = hw[r["size"]]
        print(f"  pool {r['size']:>6}: hwrt {h:.1f} ns, aclrtMalloc+aclrtFree "
              f"{r['aclrtMalloc_free_ns']:.1f} ns ({r['aclrtMalloc_free_ns'] / h:.1f}x faster)")
PY
else
    skip compare_ascend "python3 is not installed: the raw figures are in $OUT/*.json"
fi
fi   # the NPU

say "device-check: $(($(date +%s) - t_start))s in all"
if [ -n "$failed" ]; then
    say "device-check: FAILED:$failed"
    exit 1
fi
say "device-check: all steps passed"
exit 0
