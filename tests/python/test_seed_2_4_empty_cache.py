"""Seed 2.4 and problem 2: dropping a tensor frees its bytes in the pool; empty_cache
hands the pool's cached memory back to the device (device-wide `used` drops)."""
import numpy as np

import hwrt
import seed_blocks as seed

BIG = 64 << 20          # 64 MiB: its own segment in any pool


def test_2_4_drop_then_empty_cache(capsys):
    hwrt.set_device("sim", 0)
    rt = hwrt.runtime
    base = rt.get_memory_info(0)
    ns = {"dev_tensor": hwrt.Tensor(shape=(BIG,), dtype=hwrt.uint8)}
    held = rt.get_memory_info(0)
    assert held["allocated"] - base["allocated"] >= BIG
    assert held["used"] - base["used"] >= BIG            # the device sees it too
    seed.run(seed.S2_4_EMPTY_CACHE, ns)
    after = ns["mem_after"]
    assert after == rt.get_memory_info(0) or after["allocated"] == rt.memory_allocated()
    # the tensor's bytes left `allocated`, the pool gave its memory back to the device
    assert after["allocated"] == base["allocated"]
    assert after["reserved"] <= held["reserved"] - BIG
    assert after["used"] <= held["used"] - BIG
    assert after["peak_allocated"] >= held["allocated"]  # peaks remember
    mb = after["allocated"] / 1024 / 1024
    assert f"empty_cache后已占用：{mb:.2f} MB" in capsys.readouterr().out


def test_problem_2_del_keeps_pool_until_empty_cache():
    """npu-smi (device-wide `used`) only drops once the pool lets go, which empty_cache
    forces; `allocated` drops at del."""
    hwrt.set_device("sim", 0)
    rt = hwrt.runtime
    t = hwrt.Tensor(shape=(BIG // 4,), dtype=hwrt.float32)
    t.fill(1.0)
    held = rt.get_memory_info(0)
    del t
    dropped = rt.get_memory_info(0)
    assert dropped["allocated"] <= held["allocated"] - BIG
    assert dropped["reserved"] >= dropped["allocated"]
    rt.empty_cache(device_id=0)
    emptied = rt.get_memory_info(0)
    assert emptied["reserved"] <= dropped["reserved"]
    assert emptied["used"] <= held["used"] - BIG
    assert emptied["reserved"] == emptied["allocated"] or emptied["reserved"] < held["reserved"]


def test_empty_cache_keeps_live_tensors_intact():
    hwrt.set_device("sim", 0)
    keep = hwrt.Tensor(np.arange(4096, dtype=np.int32))
    tmp = hwrt.Tensor(shape=(BIG,), dtype=hwrt.uint8)
    del tmp
    hwrt.runtime.empty_cache()
    assert np.array_equal(keep.asnumpy(), np.arange(4096, dtype=np.int32))
    assert hwrt.runtime.memory_allocated() >= keep.nbytes
