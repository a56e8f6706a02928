"""Seed 2.5: the offload configuration is accepted, reported and reaches hwrt's config."""
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
    assert hwrt.get_context("max_device_memory") == 24 * GB
    off = hwrt.get_offload_context()
    assert off["auto_offload"] is True
    assert off["offload_cpu_size"] == 64 * GB
    assert off["enable_pinned_mem"] is True
    assert ns["offload_cfg"] == {"auto_offload": True, "offload_cpu_size": "64GB",
                                 "enable_pinned_mem": True}


def test_2_5_bad_values_change_nothing():
    seed.run(seed.S2_5_OFFLOAD)
    with pytest.raises(hwrt.InvalidArgumentError) as e:
        hwrt.set_context(memory_offload="OFF", max_device_memory="lots")
    assert "lots" in str(e.value) and "max_device_memory" in str(e.value)
    assert isinstance(e.value, ValueError)
    assert hwrt.get_context("memory_offload") == "ON"      # all or nothing
    assert hwrt.get_context("max_device_memory") == 24 * GB
    with pytest.raises(hwrt.InvalidArgumentError) as e:
        hwrt.set_offload_context(offload_config={"offload_cpu_size": "1GB", "hbm_ratio": 0.5})
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
