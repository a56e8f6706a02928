"""Reference counting: a million tensors created and dropped leave no trace — not in
host memory (RSS), not in hwrt's handles or pool, not in live Python objects."""
import gc
import os
import time

import numpy as np

# This file measures the module's reference counting, not the simulator's cross-process
# registry (hwrt-smi), which costs tens of microseconds per device allocation; leave it
# out of this process (read when the device opens, below).
os.environ["HWRT_SIM_REGISTRY"] = "off"

import hwrt  # noqa: E402

N = 1_000_000


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def state():
    gc.collect()
    return (hwrt._live_tensors(), hwrt.runtime.memory_allocated(), rss_bytes(),
            len(gc.get_objects()))


def churn(n, make):
    for _ in range(n):
        t = make()
        del t


def test_a_million_tensors_do_not_grow_memory():
    hwrt.set_device("sim", 0)
    make = lambda: hwrt.Tensor(shape=(4,), dtype=hwrt.float32)  # noqa: E731
    churn(20_000, make)                      # warm up allocators and caches
    live0, alloc0, rss0, objs0 = state()
    t0 = time.monotonic()
    churn(N, make)
    elapsed = time.monotonic() - t0
    live1, alloc1, rss1, objs1 = state()
    assert live1 == live0
    assert alloc1 == alloc0
    # one leaked tensor per iteration would cost >= 100 MB here
    assert rss1 - rss0 < 16 << 20, f"RSS grew by {(rss1 - rss0) >> 20} MiB"
    assert objs1 - objs0 < 1000
    print(f"{N} tensors in {elapsed:.1f} s ({elapsed / N * 1e6:.2f} us each)")


def test_tensors_with_data_and_ops_do_not_leak():
    """64 KiB per tensor and per host copy: a leak of either shows in RSS at once."""
    hwrt.set_device("sim", 0)
    host = np.arange(16384, dtype=np.float32)

    def make():
        a = hwrt.Tensor(host)
        return (a + a).asnumpy()

    churn(200, make)
    live0, alloc0, rss0, _ = state()
    churn(1_000, make)                       # a leak would hold >= 62 MiB
    live1, alloc1, rss1, _ = state()
    assert live1 == live0 and alloc1 == alloc0
    assert rss1 - rss0 < 16 << 20, f"RSS grew by {(rss1 - rss0) >> 20} MiB"


def test_dropped_streams_events_and_exports_do_not_leak():
    hwrt.set_device("sim", 0)
    t = hwrt.zeros((8,))

    def make():
        s = hwrt.runtime.Stream()
        e = hwrt.runtime.Event()
        e.record(s)
        cap = t.__dlpack__()
        u = hwrt.from_dlpack(t.__dlpack__(max_version=(1, 0)))
        return s, e, cap, u

    churn(300, make)
    live0, alloc0, rss0, _ = state()
    churn(3_000, make)
    live1, alloc1, rss1, _ = state()
    assert live1 == live0 and alloc1 == alloc0
    assert rss1 - rss0 < 16 << 20
