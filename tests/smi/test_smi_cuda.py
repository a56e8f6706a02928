#!/usr/bin/python3
"""hwrt-smi --backend cuda across processes, without a GPU: NVML is the fake
libnvidia-ml.so (tests/smi/fake_nvml.c) through HWRT_NVML_LIBRARY, the hwrt process is a
real process (a `sleep`) whose pool figures sit in the usage board as the cuda backend's
report_usage writes them (src/backends/cuda/cuda_usage.c). Checks the table (driver, bus
id, figures), CSV, JSON and --explain's reconciliation (NVML's 1500 MiB = 476 MiB overhead
+ 1024 MiB reserved, of which 600 allocated). Exit 77 while the cuda backend is not
compiled into the build (its ops table carries the monitor slot)."""
import json, os, subprocess, sys

SMI, FAKE = sys.argv[1], sys.argv[2]
MIB = 1 << 20
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from checklib import check, summary  # noqa: E402  (the shared helpers)
from smi_holder import Holder, csv_rows  # noqa: E402

holder = Holder("hwrt-smi-cuda-")
ENV = dict(os.environ, HWRT_NVML_LIBRARY=FAKE, HWRT_CUDA_USAGE_DIR=holder.board,
           FAKE_NVML_PID=str(holder.pid))

def smi(*args):
    return subprocess.run([SMI, "--backend", "cuda", "--sample-ms", "0", *args], env=ENV,
                          capture_output=True, text=True, timeout=30)

try:
    out = smi()
    if "not compiled into this hwrt build" in out.stderr:
        print("SKIP: the cuda backend is not compiled into this build:", out.stderr.strip())
        sys.exit(77)
    holder.publish("0000_1b_00", "hwrt-cuda-usage", 1024 * MIB, 600 * MIB)

    out = smi()
    check(out.returncode == 0, "table: %s" % out.stderr)
    t = out.stdout
    check("NVIDIA driver 580.65.06, CUDA 13.0" in t, "driver line: %s" % t)
    check("NVIDIA H200 (fake)" in t and "   3771MiB /  143771MiB |  37.0% |" in t, "device row: %s" % t)
    check("device 0: Bus-Id 00000000:1B:00.0" in t, "bus id: %s" % t)
    check(("    0 %8d  sleep" % holder.pid) in t and "1500MiB     476MiB        1024MiB      600MiB" in t,
          "process row: %s" % t)

    # sampled (hwrt-smi's default 100 ms window): NVML's utilisation stays the driver's own
    # figure (no process reports busy time to sample), not 0
    out = subprocess.run([SMI, "--backend", "cuda", "--query=index,utilization",
                          "--format=csv,noheader,nounits"], env=ENV, capture_output=True,
                         text=True, timeout=30)
    check(out.stdout.splitlines()[:2] == ["0, 37.0", "1, 0.0"], "sampled utilisation: %r" % out.stdout)

    out = smi("--query-processes=pid,device,used_memory,overhead,reserved,allocated",
              "--format=csv,noheader,nounits")
    rows = csv_rows(out.stdout)
    check([str(holder.pid), "0", "1500", "476", "1024", "600"] in rows, "csv: %s" % rows)
    check(["1", "0", "200", "0", "0", "0"] in rows, "csv, a process without hwrt: %s" % rows)
    check(len(rows) == 82, "82 processes (2 + 80): %d" % len(rows))

    j = json.loads(smi("--json").stdout)
    check(j["driver"] == "NVIDIA driver 580.65.06, CUDA 13.0", "json driver")
    check(j["devices"][0]["bus_id"] == "00000000:1B:00.0" and j["devices"][0]["utilization"] == 37.0,
          "json device")
    me = [p for p in j["processes"] if p["pid"] == holder.pid]
    check(len(me) == 1 and me[0]["reserved"] == 1024 * MIB and me[0]["overhead"] == 476 * MIB,
          "json process: %s" % me)

    out = smi("--explain", "--pid", str(holder.pid))
    e = out.stdout
    check("uses 1500.0 MiB" in e and "476.0 MiB  context / driver overhead" in e and
          "1024.0 MiB  pool reserved" in e and "600.0 MiB      allocated" in e and
          "424.0 MiB    + cached" in e, "explain: %s" % e)

    # a forged file (allocated > reserved) is refused and named; the figures are NVML's
    holder.publish("0000_1b_00", "hwrt-cuda-usage", MIB, 2 * MIB)
    out = smi("--query-processes=pid,reserved", "--format=csv,noheader,nounits")
    check("%d, 0" % holder.pid in out.stdout and "failed validation" in out.stderr,
          "forged file refused: %s / %s" % (out.stdout, out.stderr))

    # NVML absent: a clear reason
    out = subprocess.run([SMI, "--backend", "cuda"], capture_output=True, text=True, timeout=30,
                         env=dict(ENV, HWRT_NVML_LIBRARY="/nonexistent/libnvidia-ml.so.1"))
    check(out.returncode == 1 and "NVML could not be loaded" in out.stderr and
          "/nonexistent/libnvidia-ml.so.1" in out.stderr, "absent: %s" % out.stderr)
finally:
    holder.close()

sys.exit(summary())
