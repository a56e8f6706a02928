#!/bin/sh
# scripts/device-check.sh where there is neither a usable NVIDIA driver nor an Ascend
# runtime (HWRT_CUDA_LIBRARY and HWRT_ASCEND_LIBRARY name none): it says so for both, with
# the reasons, exits 3 (not 0, not 1), builds nothing. Run by tests/cuda
# (cuda_device_check_no_gpu) and tests/ascend (ascend_device_check_no_npu).
# $1: source root, $2: scratch folder.
set -u
root=$1 tmp=$2
rm -rf "$tmp"
mkdir -p "$tmp"
HWRT_CUDA_LIBRARY=$tmp/no-such-libcuda.so.1 HWRT_ASCEND_LIBRARY=$tmp/no-such-libascendcl.so \
    OUT=$tmp/out BUILD=$tmp/build "$root/scripts/device-check.sh" > "$tmp/stdout" 2>&1
rc=$?
cat "$tmp/stdout"
fail=0
[ $rc -eq 3 ] || { echo "FAIL: exit $rc, want 3"; fail=1; }
grep -q "no NVIDIA GPU here: HWRT_CUDA_LIBRARY=.* does not exist" "$tmp/out/summary.txt" ||
    { echo "FAIL: summary.txt lacks the NVIDIA reason"; fail=1; }
grep -q "no Ascend NPU here: HWRT_ASCEND_LIBRARY=.* does not exist" "$tmp/out/summary.txt" ||
    { echo "FAIL: summary.txt lacks the Ascend reason"; fail=1; }
[ ! -e "$tmp/build" ] || { echo "FAIL: a build folder was made"; fail=1; }
[ $fail -eq 0 ] && echo "device-check without a GPU or an NPU: exit 3 with both reasons, nothing built"
exit $fail
