#!/bin/sh
# The verdict on a copy-bound program (pageable copies in the loop), a compute-bound one
# (MatMul on device-resident data), an offload-bound one (evict/fetch every step) and a
# host-bound one (a device idle ~99% of the run, its little time mostly copies).
# usage: run_verdict.sh HWRT_PROF COPY_BOUND COMPUTE_BOUND OFFLOAD_BOUND OUTDIR HOST_BOUND
set -eu
TOOL=$1 COPY=$2 COMPUTE=$3 OFFLOAD=$4 OUT=$5 HOST=$6
rm -rf "$OUT"
fail=0
# a PCIe-like link (2 GB/s pinned, 1 GB/s pageable): copy time no longer depends on how
# busy the machine's memory and CPUs are
HWRT_SIM_LINK_GBPS=2 "$TOOL" --application="$COPY" --output="$OUT/copy"
"$TOOL" --analyze=op --output="$OUT/copy" > "$OUT/copy.txt"
cat "$OUT/copy.txt"
grep -q "^verdict: copy-bound" "$OUT/copy.txt" || { echo "FAIL: copy-bound not found"; fail=1; }
grep -q "pin host memory" "$OUT/copy.txt" || { echo "FAIL: no pin advice"; fail=1; }
grep -q "fewer copies in the loop" "$OUT/copy.txt" || { echo "FAIL: no copy advice"; fail=1; }
grep -q "compute-bound" "$OUT/copy.txt" && { echo "FAIL: copy program called compute-bound"; fail=1; }

"$TOOL" --application="$COMPUTE" --output="$OUT/compute"
"$TOOL" --analyze=op --output="$OUT/compute" > "$OUT/compute.txt"
cat "$OUT/compute.txt"
grep -q "^verdict: compute-bound" "$OUT/compute.txt" || { echo "FAIL: compute-bound not found"; fail=1; }
grep -q "pin host memory" "$OUT/compute.txt" && { echo "FAIL: pin advice on compute"; fail=1; }
grep -q "fewer copies" "$OUT/compute.txt" && { echo "FAIL: copy advice on compute"; fail=1; }

HWRT_SIM_LINK_GBPS=2 "$TOOL" --application="$OFFLOAD" --output="$OUT/offload"
"$TOOL" --export=on --output="$OUT/offload" > "$OUT/offload.txt"
cat "$OUT/offload.txt"
grep -q "^verdict: offload-bound" "$OUT/offload.txt" || { echo "FAIL: offload-bound not found"; fail=1; }
grep -q "raise offload_cpu_size and prefetch" "$OUT/offload.txt" || { echo "FAIL: no offload advice"; fail=1; }
grep -q "^offload_fetch,fetch,16,.*,134217728$" "$OUT/offload/offload_summary.csv" || { echo "FAIL: offload_summary"; fail=1; }
grep -q '"cat":"offload_evict"' "$OUT/offload/trace.json" || { echo "FAIL: no evict in trace.json"; fail=1; }
"$TOOL" --application="$HOST" --output="$OUT/host"
"$TOOL" --analyze=op --output="$OUT/host" > "$OUT/host.txt"
cat "$OUT/host.txt"
grep -q "^verdict: device mostly idle / host-bound" "$OUT/host.txt" || { echo "FAIL: host-bound not found"; fail=1; }
grep -q "copy-bound" "$OUT/host.txt" && { echo "FAIL: an idle device called copy-bound"; fail=1; }
grep -q "keep the device fed" "$OUT/host.txt" || { echo "FAIL: no idle advice"; fail=1; }
[ $fail = 0 ] && echo "verdicts: ok"
exit $fail
