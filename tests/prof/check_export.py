#!/usr/bin/env python3
"""Check hwrt-prof's exported files against the known workload (prof_workload.c).

usage: check_export.py DIR          (after hwrt-prof --export=on --output=DIR)

Checks counts, bytes and order in trace.json (which must be valid JSON), op_summary.csv,
op_statistic.csv, memcpy_summary.csv and memory_record.csv. Prints one line per failed
check and "N passed, N failed"; exits nonzero on any failure."""
import csv
import json
import os
import sys

MiB, KiB = 1 << 20, 1 << 10
# What prof_workload.c launches (name -> count, bytes per launch or None).
LAUNCHES = {
    "MemcpyHtoD": (5, MiB), "Memset": (2, None), "MemcpyDtoD": (1, 256 * KiB),
    "Fill": (2, None), "MatMul": (2, None), "Add": (1, None), "EventRecord": (1, None),
    "EventWait": (1, None), "MemcpyDtoH": (2, MiB),
}
DEVICE_OPS = {k: v for k, v in LAUNCHES.items() if k != "EventRecord"}   # no device span
SYNCS = {"hwrt_stream_synchronize": 2, "hwrt_memcpy": 1, "hwrt_device_synchronize": 1}
COPIES = {("HtoD", "pinned"): (3, 3 * MiB), ("HtoD", "pageable"): (2, 2 * MiB),
          ("DtoH", "pinned"): (1, MiB), ("DtoH", "pageable"): (1, MiB),
          ("DtoD", "device"): (1, 256 * KiB)}
ALLOCS = [MiB, MiB, 256 * KiB, 256 * KiB, 256 * KiB]
# default-stream device order = submission order
STREAM1_ORDER = ["MemcpyHtoD"] * 5 + ["Memset", "MemcpyDtoD", "Fill", "Fill", "MatMul",
                                      "MatMul", "Add", "MemcpyDtoH", "MemcpyDtoH"]

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from checklib import check as expect, summary  # noqa: E402  (the shared helpers)


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def check_trace(d):
    with open(os.path.join(d, "trace.json")) as f:
        trace = json.load(f)                    # valid JSON or an exception
    ev = trace["traceEvents"]
    x = [e for e in ev if e.get("ph") == "X"]
    for e in x:
        expect(e["dur"] >= 0 and isinstance(e["ts"], (int, float)), "X event times %r" % e)
    dev = [e for e in x if e["cat"] in ("copy", "memset", "kernel", "wait", "hostfn")]
    names = {}
    for e in dev:
        names[e["name"]] = names.get(e["name"], 0) + 1
    expect(names == {k: v[0] for k, v in DEVICE_OPS.items()},
           "device ops in trace.json: %r" % names)
    launches = [e for e in x if e["cat"] == "launch"]
    expect(len(launches) == sum(v[0] for v in LAUNCHES.values()),
           "launch spans: %d" % len(launches))
    syncs = {}
    for e in x:
        if e["cat"] == "sync":
            syncs[e["name"]] = syncs.get(e["name"], 0) + 1
    expect(syncs == SYNCS, "sync spans: %r" % syncs)
    for e in dev:
        want = DEVICE_OPS[e["name"]][1]
        if want:
            expect(e["args"]["bytes"] == want, "%s bytes %r" % (e["name"], e["args"]))
        if e["cat"] == "copy":
            gbps = e["args"]["bytes"] / (e["dur"] * 1e3) if e["dur"] > 0 else 0
            expect(abs(gbps - e["args"]["GB/s"]) <= 0.01 * max(gbps, 1e-9) + 1e-3,
                   "GB/s of %r" % e)
        # a device span never ends before its launch began
        expect(e["ts"] + e["dur"] >= e["args"]["host_launch_us"] - 1e-3, "end before launch %r" % e)
    starts = [e for e in ev if e.get("ph") == "s"]
    ends = [e for e in ev if e.get("ph") == "f"]
    expect(len(starts) == len(dev) and sorted(e["id"] for e in starts) ==
           sorted(e["id"] for e in ends), "flows %d/%d for %d device ops" %
           (len(starts), len(ends), len(dev)))
    counters = [e for e in ev if e.get("ph") == "C"]
    expect(len(counters) == 2 * len(ALLOCS), "memory counters: %d" % len(counters))
    meta = [e for e in ev if e.get("ph") == "M" and e["name"] == "thread_name"]
    lanes = sorted(e["args"]["name"] for e in meta if "stream" in e["args"]["name"])
    for want in ("compute \u00b7 stream 1 (default)", "copy H2D \u00b7 stream 1 (default)",
                 "copy D2H \u00b7 stream 1 (default)", "compute \u00b7 stream 2",
                 "stream wait \u00b7 stream 2"):
        expect(want in lanes, "lane %r in %r" % (want, lanes))
    # per-lane spans must not overlap (one engine, one in-order stream)
    by_lane = {}
    for e in dev:
        by_lane.setdefault((e["pid"], e["tid"]), []).append(e)
    for lane in by_lane.values():
        lane.sort(key=lambda e: e["ts"])
        for a, b in zip(lane, lane[1:]):
            expect(b["ts"] >= a["ts"] + a["dur"] - 1e-3, "overlap %s / %s" % (a["name"], b["name"]))


def check_op_summary(d):
    r = rows(os.path.join(d, "op_summary.csv"))
    expect(len(r) == sum(v[0] for v in DEVICE_OPS.values()), "op_summary rows %d" % len(r))
    s1 = [x for x in r if x["Stream ID"] == "1"]
    s1.sort(key=lambda x: int(x["Task ID"]))
    expect([x["Op Name"] for x in s1] == STREAM1_ORDER,
           "stream 1 order %r" % [x["Op Name"] for x in s1])
    starts = [float(x["Task Start Time(us)"]) for x in s1]
    ends = [float(x["Task Start Time(us)"]) + float(x["Task Duration(us)"]) for x in s1]
    expect(all(b >= a - 1e-3 for a, b in zip(ends, starts[1:])), "stream 1 spans overlap")
    launches = [float(x["Host Launch Time(us)"]) for x in s1]
    expect(launches == sorted(launches), "stream 1 launch order")
    s2 = [x for x in r if x["Stream ID"] == "2"]
    s2.sort(key=lambda x: int(x["Task ID"]))
    expect([x["Op Name"] for x in s2] == ["EventWait", "Memset"], "stream 2 %r" % s2)
    for x in r:
        if x["Op Name"].startswith("Memcpy"):
            expect(x["Memory Type"] in ("pinned", "pageable", "device") and int(x["Size(B)"]) > 0,
                   "copy row %r" % x)
    mm = [x for x in r if x["Op Name"] == "MatMul"]
    expect(all(x["Input Shapes"] == "256,256;256,256" for x in mm), "MatMul shapes %r" % mm)


def check_statistic(d):
    r = rows(os.path.join(d, "op_statistic.csv"))
    got = {x["OP Type"]: int(x["Count"]) for x in r}
    expect(got == {k: v[0] for k, v in DEVICE_OPS.items()}, "op_statistic counts %r" % got)
    ratio = sum(float(x["Ratio(%)"]) for x in r)
    expect(abs(ratio - 100.0) < 0.1, "ratios sum to %.2f" % ratio)
    for x in r:
        mn, av, mx = (float(x[k]) for k in ("Min Time(us)", "Avg Time(us)", "Max Time(us)"))
        expect(mn <= av + 1e-3 and av <= mx + 1e-3, "min/avg/max %r" % x)


def check_memcpy(d):
    r = rows(os.path.join(d, "memcpy_summary.csv"))
    got = {(x["Direction"], x["Memory Type"]): (int(x["Count"]), int(x["Total Size(B)"]))
           for x in r}
    expect(got == COPIES, "memcpy summary %r" % got)


def check_memory(d):
    r = rows(os.path.join(d, "memory_record.csv"))
    allocs = sorted(int(x["Size(B)"]) for x in r if x["Event"] == "alloc")
    frees = sorted(int(x["Size(B)"]) for x in r if x["Event"] == "free")
    expect(allocs == sorted(ALLOCS) and frees == sorted(ALLOCS), "allocs %r frees %r" % (allocs, frees))
    total, peak, prev_t = 0, 0, -1e18
    for x in r:
        total += int(x["Size(B)"]) * (1 if x["Event"] == "alloc" else -1)
        peak = max(peak, total)
        expect(abs(float(x["Total Allocated(KB)"]) * 1024 - total) < 1, "running total %r" % x)
        t = float(x["Timestamp(us)"])
        expect(t >= prev_t, "memory records in time order")
        prev_t = t
    expect(peak == sum(ALLOCS) and total == 0, "peak %d end %d" % (peak, total))


def main():
    d = sys.argv[1]
    for check in (check_trace, check_op_summary, check_statistic, check_memcpy, check_memory):
        try:
            check(d)
        except Exception as e:       # a missing file or column is a failure, not a crash
            expect(False, "%s raised %r" % (check.__name__, e))
    return summary()


if __name__ == "__main__":
    sys.exit(main())
