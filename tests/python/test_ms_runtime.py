"""MindSpore's runtime functions (issue 23, item 3), on the simulated Atlas 800I A2 model."""
import os

os.environ["HWRT_SIMULATE"] = "Ascend"

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import hwrt as ms  # noqa: E402
from checklib import python_ok  # noqa: E402

MB = 1 << 20
GB = 1 << 30


@pytest.fixture(autouse=True)
def ascend():
    ms.set_device("Ascend", 0)


def run(code):
    env = dict(os.environ, HWRT_SIMULATE="1")
    return python_ok(["-c", "import hwrt as ms\n" + code], env).stdout


# mindspore/python/mindspore/runtime/memory.py: memory_stats keys; memory_py.cc spells
# the common pool's dict "commom_mem_pool_stats"
def test_memory_stats_has_mindsporess_keys_and_spelling():
    t = ms.Tensor(np.ones((256, 256), np.float32))
    s = ms.runtime.memory_stats()
    for k in ("total_reserved_memory", "total_allocated_memory", "total_idle_memory",
              "total_eager_free_memory", "max_reserved_memory", "max_allocated_memory"):
        assert isinstance(s[k], int), k
    assert s["total_allocated_memory"] >= t.nbytes
    assert s["total_idle_memory"] == s["total_reserved_memory"] - s["total_allocated_memory"]
    for pool in ("commom_mem_pool_stats", "persistent_mem_pool_stats"):
        assert set(s[pool]) == {"block_unit_size", "block_counts", "blocks_info"}
    assert s["commom_mem_pool_stats"]["block_counts"] >= 1
    assert s["total_allocated_memory"] == ms.runtime.memory_allocated()
    assert s["total_reserved_memory"] == ms.runtime.memory_reserved()
    assert isinstance(ms.runtime.memory_summary(), str)


# memory.py: reset_max_memory_allocated / reset_max_memory_reserved reset only their own
# peak (memory_py.cc: ResetMaxMemoryAllocated / ResetMaxMemoryReserved)
def test_each_reset_resets_only_its_own_peak():
    ms.runtime.reset_peak_memory_stats()
    big = ms.Tensor(shape=(8 * MB,), dtype=ms.uint8)
    del big
    ms.runtime.empty_cache()                      # reserved drops, its peak stays
    peak_reserved = ms.runtime.max_memory_reserved()
    peak_allocated = ms.runtime.max_memory_allocated()
    assert peak_allocated >= 8 * MB and peak_reserved >= 8 * MB
    ms.runtime.reset_max_memory_allocated()
    assert ms.runtime.max_memory_allocated() == ms.runtime.memory_allocated()
    assert ms.runtime.max_memory_reserved() == peak_reserved        # untouched
    assert ms.runtime.memory_stats()["max_reserved_memory"] == peak_reserved
    ms.runtime.reset_max_memory_reserved()
    assert ms.runtime.max_memory_reserved() == ms.runtime.memory_reserved()
    # and the other way round
    big = ms.Tensor(shape=(4 * MB,), dtype=ms.uint8)
    del big
    ms.runtime.empty_cache()
    peak_allocated = ms.runtime.max_memory_allocated()
    ms.runtime.reset_max_memory_reserved()
    assert ms.runtime.max_memory_allocated() == peak_allocated
    assert ms.runtime.get_memory_info()["peak_allocated"] == peak_allocated
    ms.runtime.reset_peak_memory_stats()
    assert ms.runtime.max_memory_allocated() == ms.runtime.memory_allocated()
    assert ms.runtime.max_memory_reserved() == ms.runtime.memory_reserved()


# memory.py: empty_cache() takes no argument; the seed calls empty_cache(device_id=0)
def test_empty_cache_both_signatures():
    t = ms.Tensor(shape=(2 * MB,), dtype=ms.uint8)
    del t
    assert ms.runtime.empty_cache() is None
    t = ms.Tensor(shape=(2 * MB,), dtype=ms.uint8)
    del t
    before = ms.runtime.memory_reserved()
    ms.runtime.empty_cache(device_id=0)
    assert ms.runtime.memory_reserved() < before


# memory.py: memory_replay(file_path); memory_py.cc reads the block CSV
def test_memory_replay_runs_the_trace_through_the_pool(tmp_path):
    f = tmp_path / "memory_block.csv"
    rows = [(1, 5, 1 * MB), (2, 3, 2 * MB), (4, 6, 4 * MB)]      # peak: 1 + 4 MB live at t=4
    f.write_text("start,end,a,stream,b,size,peak,c,d,type,e\n" +
                 "".join(f"{s},{e},0,0,0,{n},1,0,0,Activation,0\n" for s, e, n in rows))
    base = ms.runtime.memory_allocated()
    ms.runtime.reset_peak_memory_stats()
    assert ms.runtime.memory_replay(str(f)) is None
    assert ms.runtime.max_memory_allocated() == base + 5 * MB
    assert ms.runtime.memory_allocated() == base
    f.write_text("title\n1,2,3\n")
    with pytest.raises(ValueError, match="line no : 2"):
        ms.runtime.memory_replay(str(f))
    with pytest.raises(RuntimeError, match="Failed to open file"):
        ms.runtime.memory_replay(str(tmp_path / "missing.csv"))


# memory.py set_memory: "xxGB" strings, O0/O1, once
def test_set_memory_reserves_init_size_and_caps_the_pool():
    out = run("""
for kw in ({"init_size": 2}, {"max_size": True}):
    try:
        ms.runtime.set_memory(**kw)
    except TypeError:
        print("TypeError")
for kw in ({"init_size": "0GB"}, {"increase_size": "2G"}, {"optimize_level": "O2"},
           {"huge_page_reserve_size": "x"}):
    try:
        ms.runtime.set_memory(**kw)
    except ValueError:
        print("ValueError")
ms.set_device("Ascend", 0)
ms.runtime.set_memory(init_size="0.5GB", max_size="3GB", optimize_level="O1")
print(ms.runtime.memory_reserved() >= (1 << 29), ms.get_context("max_device_memory"))
try:
    ms.Tensor(shape=(4 << 30,), dtype=ms.uint8)
except ms.OutOfMemoryError:
    print("capped")
try:
    ms.runtime.set_memory()
except RuntimeError as e:
    print("again:", e)
""")
    assert out.splitlines() == ["TypeError"] * 2 + ["ValueError"] * 4 + [
        "True 3.0", "capped", "again: The 'set_memory' can not be set repeatedly."]


def test_set_memory_before_set_device_reserves_when_the_device_is_set():
    out = run("""
ms.runtime.set_memory(init_size="0.25GB")
ms.set_device("Ascend")
print(ms.runtime.memory_reserved() >= (1 << 28))
""")
    assert out.strip() == "True"


# executor.py: dispatch_threads_num, set_kernel_launch_group, set_kernel_launch_capture
def test_executor_settings_validate_as_mindspore():
    out = run("""
for call in (lambda: ms.runtime.dispatch_threads_num("4"),
             lambda: ms.runtime.set_kernel_launch_group(thread_num="2"),
             lambda: ms.runtime.set_kernel_launch_capture(1)):
    try:
        call()
    except TypeError:
        print("TypeError")
for call in (lambda: ms.runtime.dispatch_threads_num(0),
             lambda: ms.runtime.set_kernel_launch_group(0, 8),
             lambda: ms.runtime.set_kernel_launch_group(2, 0),
             lambda: ms.runtime.set_kernel_launch_group(3, 8)):
    try:
        call()
    except ValueError:
        print("ValueError")
ms.runtime.dispatch_threads_num(6)
ms.runtime.set_kernel_launch_group(thread_num=2, kernel_group_num=8)
print(ms.runtime._kernel_launch_config())
for call in (lambda: ms.runtime.dispatch_threads_num(6),
             lambda: ms.runtime.set_kernel_launch_group(),
             lambda: ms.runtime.set_kernel_launch_capture(True)):
    try:
        call()
    except RuntimeError as e:
        print("RuntimeError")
""")
    lines = out.splitlines()
    assert lines[:3] == ["TypeError"] * 3 and lines[3:7] == ["ValueError"] * 4
    assert "'dispatch_threads_num': 6" in lines[7] and "'kernel_group_num': 8" in lines[7]
    assert lines[8:] == ["RuntimeError"] * 3


# executor.py set_cpu_affinity: binds the main thread; thread_bind_core.py validates
def test_set_cpu_affinity_binds_the_calling_thread():
    cpus = sorted(os.sched_getaffinity(0))
    first = cpus[0]
    out = run(f"""
import os
for args in (("yes",), (True, "0-1"), (True, None, [1])):
    try:
        ms.runtime.set_cpu_affinity(*args)
    except TypeError:
        print("TypeError")
for args in ((True, ["0:1"]), (True, [3]), (True, None, {{"main": [-1]}}),
             (True, None, {{"main": [True]}})):
    try:
        ms.runtime.set_cpu_affinity(*args)
    except ValueError:
        print("ValueError")
ms.runtime.set_cpu_affinity(True, ["{first}-{first}"])
print(sorted(os.sched_getaffinity(0)))
try:
    ms.runtime.set_cpu_affinity(True)
except RuntimeError:
    print("RuntimeError")
""")
    assert out.splitlines() == ["TypeError"] * 3 + ["ValueError"] * 4 + [
        str([first]), "RuntimeError"]
    out = run(f"""
import os
try:
    ms.runtime.set_cpu_affinity(True, ["{cpus[-1] + 1000}-{cpus[-1] + 1000}"])
except RuntimeError as e:
    print("unavailable", "not available" in str(e))
""")
    assert out.strip() == "unavailable True"
    if len(cpus) >= 2:
        out = run(f"""
import os
ms.runtime.set_cpu_affinity(True, None, {{"main": [1], "runtime": [0]}})
print(sorted(os.sched_getaffinity(0)))
""")
        assert out.strip() == str([cpus[1]])


# stream.py communication_stream: one stream for communication
def test_communication_stream_is_one_stream():
    s = ms.runtime.communication_stream()
    assert isinstance(s, ms.runtime.Stream)
    assert ms.runtime.communication_stream() == s
    assert s != ms.runtime.default_stream()
    s.synchronize()
