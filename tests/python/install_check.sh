#!/bin/sh
# install_check.sh SCRATCH BUILD_DIR PYTHON: `cmake --install` the build into SCRATCH/inst,
# then import hwrt from there alone (its runpath must find the installed libhwrt).
set -eu
scratch=$1 build=$2 py=$3
rm -rf "$scratch/inst"
cmake --install "$build" --prefix "$scratch/inst" >/dev/null
site=$(ls -d "$scratch"/inst/lib/python3*/*-packages)
cd "$scratch"
PYTHONPATH=$site "$py" - "$scratch/inst" <<'PY'
import sys
import hwrt
assert hwrt.__file__.startswith(sys.argv[1]), hwrt.__file__
libs = [l.split()[-1] for l in open("/proc/self/maps") if "libhwrt.so" in l]
assert libs and all(l.startswith(sys.argv[1]) for l in libs), libs
hwrt.set_device("sim", 0)
assert hwrt.ones(3).asnumpy().tolist() == [1, 1, 1]
print("installed module OK:", hwrt.__file__, "with", libs[0])
PY
