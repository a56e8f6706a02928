#!/usr/bin/env python3
"""check_exports.py CC PREFIX: the dynamic symbols each installed shared object defines
(nm -D --defined-only) are exactly its interface:
  libhwrt.so      the functions the installed headers declare (<hwrt.h>, preprocessed);
  libhwrt_mpi.so  its one entry point, hwrt_mpi_plugin;
  the Python module  PyInit_hwrt.
Prints every difference; exits 1 on any."""
import glob
import os
import re
import subprocess
import sys

cc, prefix = sys.argv[1], sys.argv[2]
inc = os.path.join(prefix, "include")
pre = subprocess.run([cc, "-E", "-P", "-I", inc, os.path.join(inc, "hwrt.h")],
                     check=True, capture_output=True, text=True).stdout
# statements at any nesting level, split at ; { }; in each non-typedef one, a name
# followed by "(" that is not "(*" (a function pointer member or parameter)
declared = set()
for stmt in re.split(r"[;{}]", pre):
    stmt = re.sub(r"__attribute__\s*\(\(.*?\)\)", "", " ".join(stmt.split()))
    if not stmt or stmt.startswith("typedef"):
        continue
    m = re.search(r"\b([A-Za-z_]\w*)\s*\((?!\s*\*)", stmt)
    if m and m.group(1) != "sizeof":
        declared.add(m.group(1))


def exported(path):
    out = subprocess.run(["nm", "-D", "--defined-only", path], check=True,
                         capture_output=True, text=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


def compare(path, want):
    have = exported(path)
    bad = 0
    for s in sorted(have - want):
        print(f"{path}: exports {s}, which is not part of its interface "
              f"(mark it static, or declare it in include/ with HWRT_API)")
        bad = 1
    for s in sorted(want - have):
        print(f"{path}: does not export {s}, which its interface declares "
              f"(missing HWRT_API, or not implemented)")
        bad = 1
    print(f"{os.path.basename(path)}: {len(have)} exported, {len(want)} declared")
    return bad


libdir = os.path.dirname(glob.glob(os.path.join(prefix, "lib*", "**", "libhwrt.so"),
                                   recursive=True)[0])
if len(declared) < 50:
    sys.exit(f"only {len(declared)} functions found in the headers: the parser is broken")
rc = compare(os.path.join(libdir, "libhwrt.so"), declared)
plugin = os.path.join(libdir, "libhwrt_mpi.so")
if os.path.exists(plugin):
    rc |= compare(plugin, {"hwrt_mpi_plugin"})
for mod in glob.glob(os.path.join(prefix, "**", "hwrt*.cpython-*.so"), recursive=True) + \
        glob.glob(os.path.join(prefix, "**", "hwrt", "__init__.cpython-*.so"), recursive=True):
    rc |= compare(mod, {"PyInit_hwrt"})
sys.exit(rc)
