"""Seed 2.5: the offload configuration is accepted, reported and reaches hwrt's config."""
import numpy as np
import pytest

import hwrt
import seed_blocks as seed

GB = 1 << 30


def test_2_5_config_accepted_and_reported():
    ns = seed.run(seed.S2_5_OFFLOAD)
    assert hwrt.current_backend() == "sim"             # device_target="sim"
    assert hwrt.get_context("device_target") == "sim"
    assert hwrt.get_context("mode") == hwrt.GRAPH_MODE
    assert hwrt.get_context("memory_offload") == "ON"
    assert hwrt.get_context("max_device_memory") == 24.0      # MindSpore: float GB
    off = hwrt.get_offload_context()
    assert off["auto_offload"] is True
    assert off["offload_cpu_size"] == 64 * GB
    assert off["enable_pinned_mem"] is True
    assert ns["offload_cfg"] == {"auto_offload": True, "offload_cpu_size": "64GB",
                                 "enable_pinned_mem": True}


def test_2_5_bad_values_change_nothing():
    seed.run(seed.S2_5_OFFLOAD)
    with pytest.raises(ValueError) as e:
        hwrt.set_context(memory_offload="OFF", max_device_memory="lots")
    assert "lots" in str(e.value) and "max_device_memory" in str(e.value)
    assert hwrt.get_context("memory_offload") == "ON"      # all or nothing
    assert hwrt.get_context("max_device_memory") == 24.0
    with pytest.raises(ValueError) as e:
        hwrt.set_offload_context(offload_config={"offload_cpu_size": "1GB", "hbm_ratio": 1.5})
    assert "hbm_ratio" in str(e.value)
    assert hwrt.get_offload_context()["offload_cpu_size"] == 64 * GB
    with pytest.raises(ValueError):
        hwrt.set_context(mode=7)
    with pytest.raises(TypeError):
        hwrt.set_offload_context(offload_config=["auto_offload"])
    with pytest.raises(TypeError):
        hwrt.set_context(max_device_memory=object())


def test_2_5_modes():
    """PYNATIVE_MODE is the seed's 'the framework synchronizes': launch_blocking."""
    hwrt.set_context(mode=hwrt.PYNATIVE_MODE)
    assert hwrt.get_context("mode") == hwrt.PYNATIVE_MODE
    assert hwrt.get_context("launch_blocking") is True
    hwrt.set_context(mode=hwrt.GRAPH_MODE)
    assert hwrt.get_context("launch_blocking") is False
    hwrt.runtime.launch_blocking()
    assert hwrt.get_context("mode") == hwrt.PYNATIVE_MODE
    hwrt.set_context(mode=hwrt.GRAPH_MODE)


def test_2_5_offload_runs_a_model_larger_than_the_device_budget():
    """The seed's point of 2.5: with memory_offload ON the model's weights need not fit.
    8 layers of 4 MiB weights (32 MiB) run under an 8 MiB device budget, twice (the
    second step with auto_offload's learned order), and match numpy."""
    if not hwrt._features["offload"]:
        pytest.skip("this hwrt has no offload part (hwrt_offload.h)")
    seed.run(seed.S2_5_OFFLOAD)
    budget = 8 << 20
    hwrt.set_context(max_device_memory=f"{budget / GB}GB")      # MindSpore: "xxGB" only
    hwrt.set_offload_context(offload_config={"offload_cpu_size": "0.25GB"})
    rng = np.random.default_rng(0)
    ws = [(rng.standard_normal((1024, 1024)) / 32).astype(np.float32) for _ in range(8)]
    x = rng.standard_normal((32, 1024)).astype(np.float32)
    ref = x
    for w in ws:
        ref = np.maximum(ref @ w, 0)
    hwrt.offload.reset_stats()
    weights = [hwrt.Tensor(w).set_offloadable() for w in ws]
    assert sum(t.nbytes for t in weights) == 4 * budget
    assert "host" in [t.location for t in weights]          # they cannot all be resident
    for _ in range(2):
        h = hwrt.Tensor(x)
        for w in weights:
            h = hwrt.relu(h @ w)
        out = h.asnumpy()
        hwrt.offload.step()
        assert np.allclose(out, ref, rtol=1e-4, atol=1e-4)
    st = hwrt.offload.stats()
    assert st["device_budget"] == budget
    assert st["evictions_to_host"] > 0 and st["fetches_from_host"] > 0
    assert st["bytes_from_host"] >= 3 * budget             # most weights came back
    assert st["device_bytes"] <= budget
    assert isinstance(st["victim_waits"], int)              # the key is there (a count)
    assert st["fetches_exposed"] <= st["fetches_after_victim"]
    hwrt.set_context(memory_offload="OFF", max_device_memory="1024GB")


def test_2_5_bad_device_target_rolls_the_keys_back():
    seed.run(seed.S2_5_OFFLOAD)
    with pytest.raises(hwrt.HwrtError):
        hwrt.set_context(memory_offload="OFF", max_device_memory="1GB", device_target="nope")
    assert hwrt.get_context("memory_offload") == "ON"
    assert hwrt.get_context("max_device_memory") == 24.0
