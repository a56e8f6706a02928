#!/bin/sh
# run_pip.sh SOURCE_DIR SCRATCH PYTHON: the Python package as a user installs it, offline:
#   python3 -m venv --system-site-packages venv && venv/bin/pip install --no-build-isolation .
# from a clean copy of the source tree (no build tree, nothing prebuilt), then from outside
# the tree: README.md's Python example runs and prints the right values; the module holds
# libhwrt itself (no libhwrt.so loaded) and exports only PyInit_hwrt; py.typed and the
# stubs are installed and mypy uses them; under mpirun the bundled MPI plugin is the one
# loaded; pip uninstall removes it.
set -eu
src=$1 scratch=$2 py=$3
here=$src/tests/install
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$scratch" && mkdir -p "$scratch/src" "$scratch/run"
(cd "$src" && tar --exclude='./build' --exclude='./build-*' --exclude='./.git' \
    --exclude='./prof_*' --exclude='__pycache__' -cf - .) | tar -xf - -C "$scratch/src"

"$py" -m venv --system-site-packages "$scratch/venv"
vpy=$scratch/venv/bin/python
CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2} \
    "$vpy" -m pip install --no-build-isolation --no-index --no-cache-dir "$scratch/src" \
    >"$scratch/pip.log" 2>&1 || { tail -40 "$scratch/pip.log" >&2; fail "pip install failed"; }
echo "ok: pip install --no-build-isolation --no-index . ($(grep -o 'Successfully installed.*' "$scratch/pip.log"))"

cd "$scratch/run"
pkg=$("$vpy" -c "import hwrt, os; print(os.path.dirname(hwrt.__file__))")
case $pkg in "$scratch/venv/"*) ;; *) fail "hwrt imported from $pkg, not the venv" ;; esac
# every stub of the source tree, those of dotted submodules (device_context/ascend.pyi) too
stubs=$(cd "$src/python/hwrt" && find . -name '*.pyi' -o -name py.typed | sort)
for f in $stubs; do
    [ -f "$pkg/$f" ] || fail "not installed: hwrt/$f"
done
echo "$stubs" | grep -q '^./device_context/ascend.pyi$' || fail "no stub of hwrt.device_context.ascend"
mod=$(ls "$pkg"/__init__.cpython-*.so)
syms=$(nm -D --defined-only "$mod" | awk '{print $3}' | tr '\n' ' ')
[ "$syms" = "PyInit_hwrt " ] || fail "the module exports more than PyInit_hwrt: $syms"
for so in "$mod" "$pkg"/*.so; do
    [ -e "$so" ] || continue
    readelf -d "$so" | grep -q '(SONAME)' || fail "$so has no SONAME"
done

"$py" "$here/readme_example.py" "$src/README.md" python > readme_example.py
out=$("$vpy" readme_example.py)
echo "README example: $out"
echo "$out" | grep -q '^\[1\. 0\. 3\. 0\.\] [0-9]' || fail "README's Python example printed '$out'"
"$vpy" - <<'PY'
import hwrt
libs = {l.split()[-1] for l in open("/proc/self/maps") if "libhwrt" in l}
assert not any("libhwrt.so" in l for l in libs), f"a libhwrt.so was loaded: {libs}"
print("ok: self-contained module", hwrt.__version__)
PY

# the stubs are found and used by a type checker
cat > typed_ok.py <<'PY'
import hwrt
import hwrt.runtime
t: hwrt.Tensor = hwrt.relu(hwrt.ones((2, 3)), stream=hwrt.runtime.current_stream())
n: int = hwrt.runtime.memory_allocated(device_id=0)
s: str = hwrt.runtime.memory_summary()
import hwrt.device_context.ascend
b: bool = hwrt.device_context.ascend.is_available()
PY
cat > typed_bad.py <<'PY'
import hwrt.runtime
n: str = hwrt.runtime.memory_allocated()
PY
"$vpy" -m mypy --no-incremental --cache-dir=/dev/null typed_ok.py ||
    fail "mypy rejects a correct use of hwrt (stubs wrong or not found)"
if "$vpy" -m mypy --no-incremental --cache-dir=/dev/null typed_bad.py > bad.log; then
    fail "mypy accepted assigning memory_allocated() (an int) to a str: stubs not used"
fi
grep -qi 'incompatible types in assignment' bad.log || fail "mypy: $(cat bad.log)"
echo "ok: mypy uses the installed stubs"

if [ -f "$pkg/libhwrt_mpi.so" ] && command -v mpirun >/dev/null; then
    # each rank writes its line to a file of its own: mpirun's forwarding of the two ranks'
    # output may interleave them mid-line ("rank 1 of rank 2" / "0 of 2" was seen)
    rm -f rank_*.txt
    out=$(timeout 120 mpirun --allow-run-as-root --oversubscribe -np 2 "$vpy" -c "
import hwrt, hwrt.communication as c
hwrt.set_device('sim', 0); c.init()
maps = [l.split()[-1] for l in open('/proc/self/maps') if 'libhwrt_mpi' in l]
assert maps and all(m.startswith('$pkg/') for m in maps), maps
r, n = c.get_rank(), c.get_group_size()
open('rank_%d.txt' % r, 'w').write('rank %d of %d' % (r, n)); c.release()" 2>&1)
    echo "$out"
    got="$(cat rank_0.txt 2>/dev/null) | $(cat rank_1.txt 2>/dev/null)"
    echo "$got"
    [ "$got" = "rank 0 of 2 | rank 1 of 2" ] || fail "two ranks through the bundled MPI plugin: '$got' $out"
fi

"$vpy" -m pip uninstall -y hwrt >/dev/null
if "$vpy" -c "import hwrt" 2>/dev/null; then fail "hwrt still importable after pip uninstall"; fi
[ ! -e "$pkg" ] || fail "pip uninstall left $pkg"
echo "pip: all checks passed"
