#!/bin/sh
# Make sure the Debian packages hwrt's build and tests need are installed.
# As root, installs what is missing (apt-get); otherwise names the missing packages and
# fails, so no test suite is ever skipped silently for want of a tool.
set -eu
PKGS="build-essential cmake pkg-config libopenblas-dev python3-dev python3-numpy python3-pytest
libopenmpi-dev openmpi-bin iproute2 util-linux pocl-opencl-icd ocl-icd-opencl-dev opencl-headers clinfo
clang libclang-rt-14-dev libmimalloc-dev libjemalloc-dev chromium hyperfine"
missing=""
for p in $PKGS; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "hwrt: installing missing Debian packages:$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # shellcheck disable=SC2086
    apt-get install -y -qq --no-install-recommends $missing >/dev/null
    exit 0
fi
echo "hwrt: missing Debian packages:$missing" >&2
echo "hwrt: install them with: sudo apt-get install$missing" >&2
exit 1
