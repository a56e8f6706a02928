#!/bin/sh
# run_install.sh SOURCE_DIR BUILD_DIR SCRATCH CC PYTHON: install the build to a temporary
# prefix, move it, and use it from there only, as a user would:
#  1. no path of the source or build tree in any installed file (RUNPATHs, debug info);
#  2. every installed shared object has a SONAME; each exports exactly its interface;
#  3. an outside CMake project (find_package(hwrt 0.1), hwrt::hwrt and hwrt::hwrt_static)
#     and a pkg-config Makefile (shared and --static) build README.md's C example, which
#     runs and prints the right values; find_package(hwrt 1.0) is refused;
#  4. every installed tool runs (tools.txt) with LD_LIBRARY_PATH unset;
#  5. the installed Python module imports from the moved prefix.
set -eu
src=$1 build=$2 scratch=$3 cc=$4 py=$5
here=$src/tests/install
fail() { echo "FAIL: $*" >&2; exit 1; }

rm -rf "$scratch" && mkdir -p "$scratch"
cmake --install "$build" --prefix "$scratch/staged" >/dev/null
mv "$scratch/staged" "$scratch/prefix"            # relocatable: used only after a move
prefix=$scratch/prefix
unset LD_LIBRARY_PATH
libdir=$(dirname "$(find "$prefix" -name libhwrt.so -print -quit)")
[ -n "$libdir" ] || fail "no libhwrt.so installed"
for f in "$libdir/libhwrt.so" "$libdir/libhwrt.a" "$libdir/pkgconfig/hwrt.pc" \
         "$libdir/cmake/hwrt/hwrtConfig.cmake" "$libdir/cmake/hwrt/hwrtConfigVersion.cmake" \
         "$prefix/include/hwrt.h" "$prefix/include/hwrt/hwrt_version.h"; do
    [ -e "$f" ] || fail "not installed: ${f#$prefix/}"
done

# 1. build paths
for p in "$src" "$build" "$scratch/staged"; do
    hits=$(grep -rlF "$p" "$prefix" || true)
    [ -z "$hits" ] || fail "installed files contain the path $p: $hits"
done
echo "ok: no source, build or staging path in $(find "$prefix" -type f | wc -l) installed files"

# 2. SONAMEs and exported symbols
for so in $(find "$prefix" -name '*.so*' -type f); do
    readelf -d "$so" | grep -q '(SONAME)' || fail "${so#$prefix/} has no SONAME"
done
echo "ok: SONAME on every installed shared object"
"$py" "$here/check_exports.py" "$cc" "$prefix"

# 3. outside projects, built from README.md's example
work=$scratch/consumer
cp -r "$here/consumer" "$work"
"$py" "$here/readme_example.py" "$src/README.md" c > "$work/readme_example.c"
expect='1 0 3 0'
cmake -S "$work" -B "$work/b" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" >/dev/null
cmake --build "$work/b" >/dev/null
for exe in readme_shared readme_static; do
    out=$("$work/b/$exe")
    echo "$exe: $out"
    echo "$out" | grep -q "^$expect" || fail "$exe printed '$out', not '$expect...'"
done
readelf -d "$work/b/readme_static" | grep -q 'libhwrt\.so' && fail "readme_static links libhwrt.so"
"$work/b/version_check"
if cmake -S "$work" -B "$work/b10" -DCMAKE_PREFIX_PATH="$prefix" -DHWRT_WANT=1.0 \
        >"$work/b10.log" 2>&1; then
    fail "find_package(hwrt 1.0) accepted version $(cat "$prefix"/lib*/cmake/hwrt/hwrtConfigVersion.cmake | grep -m1 PACKAGE_VERSION)"
fi
grep -q "requested version \"1.0\"" "$work/b10.log" || fail "find_package(hwrt 1.0) failed for another reason: $(cat "$work/b10.log")"
echo "ok: find_package(hwrt 0.1) works, find_package(hwrt 1.0) is refused by the version file"
PKG_CONFIG_PATH="$libdir/pkgconfig" make -s -C "$work" CC="$cc" >/dev/null
for exe in readme_pc readme_pc_static; do
    out=$("$work/$exe")
    echo "$exe: $out"
    echo "$out" | grep -q "^$expect" || fail "$exe printed '$out', not '$expect...'"
done

# 4. every installed tool
cd "$scratch"
n=0
for tool in "$prefix"/bin/*; do
    name=$(basename "$tool")
    grep -q "^$name\( \|$\)" "$here/tools.txt" || fail "$name is installed but tools.txt has no line for it"
    lib=$(ldd "$tool" | awk '/libhwrt\.so/ {print $3}')
    [ -z "$lib" ] || [ "$lib" = not ] || lib=$(realpath "$lib")
    case $lib in ''|"$(realpath "$libdir")"/*) ;; *) fail "$name loads $lib, not the installed $libdir/libhwrt.so.0" ;; esac
done
while read -r name args; do
    case $name in ''|'#'*) continue ;; esac
    [ -x "$prefix/bin/$name" ] || continue        # not built here (e.g. no MPI)
    # shellcheck disable=SC2086
    if ! timeout 120 "$prefix/bin/$name" $args >"$scratch/tool.out" 2>"$scratch/tool.err"; then
        cat "$scratch/tool.out" "$scratch/tool.err" >&2
        fail "$name $args exited with an error"
    fi
    case " $args " in
    *" --json "*)         # the document on stdout parses
        "$py" -m json.tool "$scratch/tool.out" >/dev/null ||
            fail "$name $args: stdout is not valid JSON: $(head -c 300 "$scratch/tool.out")" ;;
    esac
    n=$((n + 1))
    case "$name $args" in
    "hwrt-bench pool"*)   # sibling found in bindir, traces found in <datadir>/hwrt
        grep -q transformer_train "$scratch/tool.out" && grep -q llm_serving "$scratch/tool.out" ||
            fail "hwrt-bench pool replayed no shipped trace: $(cat "$scratch/tool.out")" ;;
    esac
done < "$here/tools.txt"
echo "ok: $n tool runs from the moved prefix, LD_LIBRARY_PATH unset"

# 5. the Python module
site=$(find "$prefix" -name 'hwrt*.cpython-*.so' -o -name '__init__.cpython-*.so' | head -1)
if [ -n "$site" ]; then
    site=$(dirname "$site"); case $site in */hwrt) site=$(dirname "$site") ;; esac
    PYTHONPATH=$site "$py" -c "import hwrt; hwrt.set_device('sim', 0); assert hwrt.ones(2).asnumpy().tolist() == [1, 1]; print('python: hwrt', hwrt.__version__, 'from', hwrt.__file__)"
    # the stubs beside it, those of dotted submodules (device_context/ascend.pyi) too
    for f in $(cd "$src/python/hwrt" && find . -name '*.pyi' -o -name py.typed); do
        [ -f "$site/hwrt/$f" ] || fail "not installed: hwrt/$f"
    done
    echo "ok: python stubs installed"
fi
echo "install: all checks passed"
