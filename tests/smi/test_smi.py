#!/usr/bin/python3
"""hwrt-smi across processes: several holders on devices at once, CSV and JSON parsed,
a killed process disappears, a corrupted registry entry is reported and not trusted,
exclusive mode refuses a second opener naming the holder."""
import json, mmap, os, signal, subprocess, sys, time

SMI, HOLDER = sys.argv[1], sys.argv[2]
REG = "hwrt-smi-test-%d" % os.getpid()
ENV = dict(os.environ, HWRT_SIM_REGISTRY=REG, HWRT_SIM_DEVICES="2", HWRT_SIM_MEMORY="4GB",
           HWRT_SIM_OVERHEAD="100MB")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from checklib import check, summary  # noqa: E402  (the shared helpers)

def holder(dev, mb, **extra):
    p = subprocess.Popen([HOLDER, str(dev), str(mb)], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, env=dict(ENV, **extra), text=True)
    line = p.stdout.readline().split()
    return p, line

def smi(*args):
    out = subprocess.run([SMI, "--sample-ms", "0", *args], env=ENV, capture_output=True,
                         text=True, timeout=30)
    return out

try:
    procs = [holder(0, 64), holder(0, 128), holder(1, 32)]
    pids = [int(l[1]) for _, l in procs]
    check(all(l[0] == "ready" for _, l in procs), "holders started")

    # CSV: processes
    out = smi("--query-processes=pid,device,used_memory,reserved,overhead",
              "--format=csv,noheader,nounits")
    rows = [[x.strip() for x in r.split(",")] for r in out.stdout.strip().splitlines()]
    by_pid = {int(r[0]): r for r in rows}
    check(set(pids) <= set(by_pid), "every holder listed in CSV: %s" % out.stdout)
    check(int(by_pid[pids[1]][1]) == 0 and int(by_pid[pids[2]][1]) == 1, "devices in CSV")
    check(float(by_pid[pids[1]][3]) >= 128, "reserved covers the 128 MiB allocation")
    check(float(by_pid[pids[0]][4]) == 100, "overhead is the context overhead")
    # CSV: devices with header and units
    out = smi("--query=index,memory.used,memory.total,processes", "--format=csv")
    lines = out.stdout.strip().splitlines()
    check(lines[0] == "index, memory.used [MiB], memory.total [MiB], processes", "CSV header")
    dev0 = [x.strip() for x in lines[1].split(",")]
    check(dev0[2] == "4096 MiB" and dev0[3] == "2", "device 0 total and process count: %s" % lines)
    used0 = float(dev0[1].split()[0])
    check(used0 >= 100 + 64 + 100 + 128, "device-wide used sums both processes: %s" % used0)
    # JSON
    out = smi("--json")
    doc = json.loads(out.stdout)
    check(len(doc["devices"]) == 2 and doc["devices"][0]["simulated"] is True, "JSON devices")
    check({p["pid"] for p in doc["processes"]} >= set(pids), "JSON processes")
    # unknown field is an error, not garbage
    out = smi("--query=index,bogus", "--format=csv")
    check(out.returncode == 2 and "bogus" in out.stderr, "unknown field refused")
    # explain
    out = smi("--explain", "--pid", str(pids[1]))
    check("context / driver overhead" in out.stdout and "cached in the pool" in out.stdout,
          "explain breakdown")

    # a process on a device this view does not have (it runs with three sim devices, the
    # view with two) is left out of the processes and of every device's figures (the
    # mutant `s.device >= ndevices` made `>` in sim_registry_monitor listed it)
    third, line = holder(2, 16, HWRT_SIM_DEVICES="3")
    procs.append((third, line))
    check(line and line[0] == "ready", "a holder on device 2 of three starts: %s" % line)
    doc = json.loads(smi("--json").stdout)
    check(int(line[1]) not in {p["pid"] for p in doc["processes"]} and
          all(p["device"] < 2 for p in doc["processes"]) and len(doc["devices"]) == 2,
          "a process on a device outside the view is not listed: %s" % doc["processes"])
    third.stdin.close()
    third.wait(timeout=30)

    # killed process disappears
    os.kill(pids[0], signal.SIGKILL)
    procs[0][0].wait()
    out = smi("--query-processes=pid", "--format=csv,noheader")
    listed = {int(x) for x in out.stdout.split()}
    check(pids[0] not in listed and pids[1] in listed, "killed process reaped: %s" % listed)

    # corrupt the entry of holder 2: reported, not trusted
    with open("/dev/shm/" + REG + "-v3", "r+b") as f:
        m = mmap.mmap(f.fileno(), 0)
        pid_bytes = pids[2].to_bytes(4, "little")
        off = m.find(pid_bytes, 16)
        m[off + 40:off + 48] = b"\xff" * 8          # scribble over the figures
        m.close()
    out = smi("--json")
    doc = json.loads(out.stdout)
    check(pids[2] not in {p["pid"] for p in doc["processes"]}, "corrupt entry ignored")
    check("failed validation" in doc["warnings"], "corrupt entry reported: %r" % doc["warnings"])

    # exclusive mode: a second opener of a held device is refused, naming the holder
    refused, line = holder(0, 0, HWRT_SIM_EXCLUSIVE="1")
    refused.wait(timeout=30)
    check(line[:2] == ["error", "HWRT_ERROR_DEVICE_BUSY:"] and str(pids[1]) in " ".join(line),
          "exclusive opener refused naming holder %d: %s" % (pids[1], line))
    procs[1][0].stdin.close()
    procs[1][0].wait(timeout=30)
    excl, line = holder(0, 0, HWRT_SIM_EXCLUSIVE="1")
    check(line and line[0] == "ready", "exclusive holder starts on a free device")
    second, line = holder(0, 0)
    second.wait(timeout=30)
    check(line[:2] == ["error", "HWRT_ERROR_DEVICE_BUSY:"] and str(excl.pid) in " ".join(line),
          "plain opener refused by the exclusive holder %d: %s" % (excl.pid, line))
finally:
    for p, _ in locals().get("procs", []):
        if p.poll() is None:
            p.stdin.close(); p.wait(timeout=30)
    if "excl" in locals() and excl.poll() is None:
        excl.stdin.close(); excl.wait(timeout=30)
    try:
        os.unlink("/dev/shm/" + REG + "-v3")
    except OSError:
        pass

sys.exit(summary())
