#!/usr/bin/python3
"""hwrt-smi --backend ascend across processes, without an NPU: DCMI is the stand-in
libdcmi.so (tests/ascend_dcmi/fake_dcmi.c) through HWRT_DCMI_LIBRARY, the hwrt process is
a real process (a `sleep`) whose pool figures sit in the ascend usage board as the
backend's report_usage writes them (asc_dcmi_publish_usage). Checks what npu-smi shows
(driver, chip name, health, Bus-Id, HBM, AICore), CSV, JSON and --explain's
reconciliation (DCMI's 1500 MiB = 476 MiB overhead + 1024 MiB reserved, of which 600
allocated). The ascend backend and its monitor slot are always built (no SDK needed), so
their absence is a failure, not a skip."""
import json, os, subprocess, sys

SMI, FAKE = sys.argv[1], sys.argv[2]
MIB = 1 << 20
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, os.path.join(HERE, "..", "smi"))
from checklib import check, summary  # noqa: E402  (the shared helpers)
from smi_holder import Holder, csv_rows  # noqa: E402

holder = Holder("hwrt-smi-ascend-")
ENV = dict(os.environ, HWRT_DCMI_LIBRARY=FAKE, HWRT_ASCEND_USAGE_DIR=holder.board,
           FAKE_DCMI_PID=str(holder.pid))

def smi(*args):
    return subprocess.run([SMI, "--backend", "ascend", "--sample-ms", "0", *args], env=ENV,
                          capture_output=True, text=True, timeout=30)

try:
    out = smi()
    if ("not compiled into this hwrt build" in out.stderr or
            "offers no device-wide process view" in out.stderr):
        print("FAIL: the ascend backend's monitor is not in this build:", out.stderr.strip())
        sys.exit(1)
    holder.publish("npu0", "hwrt-ascend-usage", 1024 * MIB, 600 * MIB)

    out = smi()
    check(out.returncode == 0, "table: %s" % out.stderr)
    t = out.stdout
    check("Ascend driver 25.2.0, DCMI 7.0.0" in t, "driver line: %s" % t)
    check("Ascend910B3" in t and "| ascend  | OK     |    3400MiB /   65536MiB |  37.0% |" in t,
          "device row: %s" % t)
    check("| ascend  | Alarm  |    1200MiB /   65536MiB |   0.0% |" in t, "second device: %s" % t)
    check("device 0: Bus-Id 0000:C1:00.0" in t, "bus id: %s" % t)
    check(("    0 %8d  sleep" % holder.pid) in t and "1500MiB     476MiB        1024MiB      600MiB" in t,
          "process row: %s" % t)

    # sampled (the default 100 ms window): DCMI's utilisation stays the driver's figure
    out = subprocess.run([SMI, "--backend", "ascend", "--query=index,utilization,health",
                          "--format=csv,noheader,nounits"], env=ENV, capture_output=True,
                         text=True, timeout=30)
    check(out.stdout.splitlines()[:2] == ["0, 37.0, OK", "1, 0.0, Alarm"],
          "sampled utilisation: %r" % out.stdout)

    out = smi("--query-processes=pid,device,used_memory,overhead,reserved,allocated",
              "--format=csv,noheader,nounits")
    rows = csv_rows(out.stdout)
    check([str(holder.pid), "0", "1500", "476", "1024", "600"] in rows, "csv: %s" % rows)
    check(["1", "0", "200", "0", "0", "0"] in rows, "csv, a process without hwrt: %s" % rows)
    check(len(rows) == 66, "66 processes (2 + 64): %d" % len(rows))

    out = smi("-i", "1", "--query-processes=pid,device", "--format=csv,noheader")
    check(len(out.stdout.strip().splitlines()) == 64, "-i 1: %d rows" % len(out.stdout.splitlines()))

    j = json.loads(smi("--json").stdout)
    check(j["driver"] == "Ascend driver 25.2.0, DCMI 7.0.0", "json driver")
    check(j["devices"][0]["bus_id"] == "0000:C1:00.0" and j["devices"][0]["name"] == "Ascend910B3",
          "json device")
    me = [p for p in j["processes"] if p["pid"] == holder.pid and p["device"] == 0]
    check(len(me) == 1 and me[0]["reserved"] == 1024 * MIB and me[0]["overhead"] == 476 * MIB,
          "json process: %s" % me)

    e = smi("--explain", "--pid", str(holder.pid)).stdout
    check("on device 0 uses 1500.0 MiB" in e and "476.0 MiB  context / driver overhead" in e and
          "1024.0 MiB  pool reserved" in e and "424.0 MiB    + cached" in e, "explain: %s" % e)

    # a forged file (allocated > reserved) is refused and named; the figures are DCMI's
    holder.publish("npu0", "hwrt-ascend-usage", MIB, 2 * MIB)
    out = smi("--query-processes=pid,reserved", "--format=csv,noheader,nounits")
    check("%d, 0" % holder.pid in out.stdout and "failed validation" in out.stderr,
          "forged file refused: %s / %s" % (out.stdout, out.stderr))

    # DCMI absent: a clear reason
    out = subprocess.run([SMI, "--backend", "ascend"], capture_output=True, text=True, timeout=30,
                         env=dict(ENV, HWRT_DCMI_LIBRARY="/nonexistent/libdcmi.so"))
    check(out.returncode == 1 and "DCMI could not be loaded" in out.stderr and
          "/nonexistent/libdcmi.so" in out.stderr, "absent: %s" % out.stderr)
finally:
    holder.close()

sys.exit(summary())
