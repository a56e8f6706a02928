"""HWRT_ALLOC_TRACE from Python: a script's tensors are recorded (the file is complete
even though the interpreter exits without hwrt_shutdown), and the rows balance."""
import csv
import os
import subprocess
import sys
import textwrap


def test_python_workload_recorded(tmp_path):
    trace = tmp_path / "py_trace.csv"
    script = textwrap.dedent("""
        import hwrt
        hwrt.set_device("sim", 0)
        keep = hwrt.zeros((1024, 1024))          # 4 MiB, float32, live at exit
        for n in (1000, 3000, 200000):
            t = hwrt.zeros((n,))
            del t
    """)
    env = dict(os.environ, HWRT_ALLOC_TRACE=str(trace))
    subprocess.run([sys.executable, "-c", script], env=env, check=True, timeout=120)
    with open(trace, newline="") as f:
        rows = list(csv.DictReader(f))
    assert rows and set(rows[0]) == {"action", "id", "size", "stream", "tag", "time_ns", "device"}
    allocs = [r for r in rows if r["action"] == "alloc"]
    sizes = [int(r["size"]) for r in allocs]
    assert 4 << 20 in sizes and 4000 in sizes and 800000 in sizes
    live = {}
    for r in rows:                              # each free names a live allocation
        if r["action"] == "alloc":
            assert r["id"] not in live
            live[r["id"]] = int(r["size"])
        elif r["action"] == "free":
            assert live.pop(r["id"], None) is not None
    assert sorted(live.values()) in ([], [4 << 20])   # `keep`, unless the exit released it
    times = [int(r["time_ns"]) for r in rows]
    assert times == sorted(times)
