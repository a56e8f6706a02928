#!/bin/sh
# scripts/deps.sh [build|bench|test|coverage]: make sure the Debian packages one use of hwrt needs
# are installed.
#   build  compiler, CMake, pkg-config, OpenBLAS, OpenCL headers (types only: the backend
#          loads the driver at run time), python3-dev: what `make run` (build the
#          library, tools, Python module and run the demo) needs.
#   bench  build + the allocators hwrt-bench pool measures against (`make bench`).
#   test   bench + the test toolchain (`make test`): numpy, pytest and mypy (stubtest) for
#          the Python suite, torch (a real DLPack consumer: tests/python/test_dlpack.py),
#          pip/venv/setuptools for the packaging test, Open MPI, PoCL and the OpenCL
#          ICD loader, clang and its runtime (libFuzzer), Chromium (profiler report), hyperfine.
#   coverage  test + gcovr (`make coverage`, scripts/coverage.sh).
# As root, installs what is missing (apt-get); otherwise names the missing packages and
# fails, so no test suite is ever skipped silently for want of a tool.
set -eu
what=${1:-test}
BUILD="build-essential cmake pkg-config libopenblas-dev opencl-headers python3-dev"
BENCH="$BUILD libmimalloc-dev libjemalloc-dev"
TEST="$BENCH python3-numpy python3-pytest python3-mypy python3-pip python3-venv python3-setuptools python3-torch
libopenmpi-dev openmpi-bin iproute2 util-linux pocl-opencl-icd ocl-icd-opencl-dev clinfo
clang libclang-rt-14-dev chromium hyperfine"
case $what in
build) PKGS=$BUILD ;;
bench) PKGS=$BENCH ;;
test)  PKGS=$TEST ;;
coverage) PKGS="$TEST gcovr" ;;
*) echo "usage: scripts/deps.sh [build|bench|test|coverage]" >&2; exit 2 ;;
esac
missing=""
for p in $PKGS; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "hwrt: installing missing Debian packages ($what):$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # shellcheck disable=SC2086
    apt-get install -y -qq --no-install-recommends $missing >/dev/null
    exit 0
fi
echo "hwrt: missing Debian packages ($what):$missing" >&2
echo "hwrt: install them with: sudo apt-get install$missing" >&2
exit 1
