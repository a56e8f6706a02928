#!/usr/bin/python3
"""The raw-driver baselines (hwrt-cuda-baseline, hwrt-ascend-baseline: tools/common/
baseline.h) without a GPU or an NPU:
- no usable driver (a path that does not exist; the CUDA toolkit's stub library, whose
  cuInit fails; the double with no device): exit 3, the sentence names the library, the
  call or the count, nothing on stdout;
- hwrt-ascend-baseline --quick against the test double of libascendcl (one fake device,
  its aclnn on host memory; the op libraries named by HWRT_ASCEND_OPAPI_LIBRARY and
  HWRT_ASCEND_NNOPBASE_LIBRARY, as for the backend): exit 0 and one JSON document with
  every row: 5 copy sizes x H2D/D2H x pinned/pageable with their repeats, the launch
  median, 3 allocation sizes; every figure positive.
The double's figures are host memcpy and a loop: they only show that each row is made.
usage: tools_baselines.py BINDIR ACL_DOUBLE [CUDA_STUB]"""
import json, os, subprocess, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from checklib import check, summary  # noqa: E402  (the shared helpers)

BIN, DOUBLE = sys.argv[1], sys.argv[2]
STUB = sys.argv[3] if len(sys.argv) > 3 and sys.argv[3] else None


def run(tool, env, *args):
    e = dict(os.environ, **env)
    return subprocess.run([os.path.join(BIN, tool), *args], env=e, capture_output=True,
                          text=True, timeout=300)


def no_driver(tool, env, want):
    r = run(tool, env)
    check(r.returncode == 3, "%s %s: exit %d, want 3 (%s)" % (tool, env, r.returncode,
                                                            r.stderr.strip()))
    check(r.stdout == "", "%s %s: nothing on stdout (%r)" % (tool, env, r.stdout[:80]))
    check(r.stderr.startswith(tool + ": ") and want in r.stderr,
          "%s %s: the sentence names %r: %r" % (tool, env, want, r.stderr.strip()))


no_driver("hwrt-cuda-baseline", {"HWRT_CUDA_LIBRARY": "/nonexistent/libcuda.so.1"},
          "/nonexistent/libcuda.so.1")
if STUB:
    no_driver("hwrt-cuda-baseline", {"HWRT_CUDA_LIBRARY": STUB}, "cuInit failed")
no_driver("hwrt-ascend-baseline", {"HWRT_ASCEND_LIBRARY": "/nonexistent/libascendcl.so"},
          "/nonexistent/libascendcl.so")
OPS = {"HWRT_ASCEND_OPAPI_LIBRARY": DOUBLE, "HWRT_ASCEND_NNOPBASE_LIBRARY": DOUBLE}
no_driver("hwrt-ascend-baseline", dict(OPS, HWRT_ASCEND_LIBRARY=DOUBLE, HWRT_ASCEND_DOUBLE="repeat"),
          "0 device(s)")

r = run("hwrt-ascend-baseline", dict(OPS, HWRT_ASCEND_LIBRARY=DOUBLE, HWRT_ASCEND_DOUBLE="device"),
        "--quick")
check(r.returncode == 0, "hwrt-ascend-baseline --quick on the double: exit %d (%s)"
      % (r.returncode, r.stderr.strip()))
doc = {}
try:
    doc = json.loads(r.stdout)
except ValueError as e:
    check(False, "the document parses: %s: %r" % (e, r.stdout[:200]))
if doc:
    check(isinstance(doc.get("device"), str) and doc["device"], "device named: %r" % doc.get("device"))
    sizes = [4096, 65536, 1 << 20, 16 << 20, 64 << 20]
    want = [(n, k, h) for n in sizes for k in ("H2D", "D2H") for h in ("pinned", "pageable")]
    got = [(c.get("bytes"), c.get("kind"), c.get("host")) for c in doc.get("copy", [])]
    check(got == want, "copy rows: %s" % got)
    for c in doc.get("copy", []):
        check(c.get("repeats") == 21 and c.get("gbps_median", 0) > 0, "copy row %s" % c)
    check(doc.get("launch_sync_us_median", 0) > 0, "launch median: %r" % doc.get("launch_sync_us_median"))
    alloc = doc.get("alloc", [])
    check([a.get("size") for a in alloc] == ["512B", "1MiB", "16MiB"], "alloc sizes: %s" % alloc)
    for a in alloc:
        check(a.get("aclrtMalloc_free_ns", 0) > 0, "alloc row %s" % a)
sys.exit(summary())
