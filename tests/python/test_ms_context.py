"""MindSpore's context keys and offload keys (issue 23, item 4): MindSpore's validation
(TypeError for a wrong type, ValueError for a bad value) and types from get_context."""
import os
import warnings

os.environ["HWRT_SIMULATE"] = "Ascend"

import pytest  # noqa: E402

import hwrt as ms  # noqa: E402

GB = 1 << 30


def cfg(key):
    return ms.get_context(key)


@pytest.fixture(autouse=True)
def ascend():
    ms.set_device("Ascend", 0)
    yield
    ms.set_context(memory_offload="OFF", max_device_memory="1024GB")


# context.py set_memory_offload: exactly "ON" / "OFF"
def test_memory_offload_only_on_or_off():
    for bad in ("on", True, 1, "YES"):
        with pytest.raises(ValueError, match="must be one of \\['ON', 'OFF'\\]"):
            ms.set_context(memory_offload=bad)
    ms.set_context(memory_offload="ON")
    assert cfg("memory_offload") == "ON" and cfg("launch_blocking") is False
    ms.set_context(memory_offload="OFF")
    assert cfg("memory_offload") == "OFF"


# context.py set_max_device_memory; tests/ut/python/pynative_mode/test_context.py
# test_max_device_memory_size: True and 1 raise TypeError, "3.5G" ValueError
def test_max_device_memory_rules():
    for bad in (True, 1, 1.5, None):
        with pytest.raises(TypeError):
            ms.set_context(max_device_memory=bad)
    for bad in ("3.5G", "0GB", "0.0GB", "-1GB", "GB", "1 GB", "01GB"):
        with pytest.raises(ValueError):
            ms.set_context(max_device_memory=bad)
    ms.set_context(max_device_memory="3.5GB")
    v = cfg("max_device_memory")
    assert type(v) is float and v == 3.5
    assert cfg("max_split_size") == 0                       # an hwrt key, untouched
    with pytest.raises(ms.OutOfMemoryError):
        ms.Tensor(shape=(4 * GB,), dtype=ms.uint8)          # the cap is real
    ms.set_context(max_device_memory="0.5GB")
    assert cfg("max_device_memory") == 0.5


# context.py set_mempool_block_size (>= 1GB), set_memory_optimize_level (O0/O1),
# set_variable_memory_max_size (<= 31GB), pynative_synchronize (bool)
def test_other_memory_keys():
    with pytest.raises(TypeError):
        ms.set_context(mempool_block_size=2)
    with pytest.raises(ValueError):
        ms.set_context(mempool_block_size="0.5GB")
    ms.set_context(mempool_block_size="2GB")
    assert cfg("mempool_block_size") == 2.0
    with pytest.raises(ValueError):
        ms.set_context(memory_optimize_level="O2")
    ms.set_context(memory_optimize_level="O1")
    assert cfg("memory_optimize_level") == 1
    with pytest.raises(TypeError):
        ms.set_context(variable_memory_max_size=True)
    with pytest.raises(ValueError):
        ms.set_context(variable_memory_max_size="32GB")
    ms.set_context(variable_memory_max_size="3GB")
    assert cfg("variable_memory_max_size") == "3 * 1024 * 1024 * 1024"
    with pytest.raises(TypeError):
        ms.set_context(pynative_synchronize=1)
    ms.set_context(pynative_synchronize=True)
    assert cfg("pynative_synchronize") is True and cfg("launch_blocking") is True
    ms.set_context(pynative_synchronize=False)
    assert cfg("pynative_synchronize") is False


# context.py get_context / set_context: unknown keys raise ValueError; args_type_check
# mode=int, device_id=int, device_target=str
def test_key_names_and_types():
    with pytest.raises(ValueError, match="not recognized"):
        ms.set_context(modex="ge")
    with pytest.raises(ValueError, match="not recognized"):
        ms.get_context("modex")
    with pytest.raises(TypeError):
        ms.set_context(device_target=123)
    with pytest.raises(TypeError):
        ms.set_context(device_id="cpu")
    with pytest.raises(TypeError):
        ms.set_context(mode="graph")
    assert type(cfg("mode")) is int and type(cfg("device_id")) is int
    assert cfg("device_target") == "Ascend"


def test_compiler_keys_are_recorded_with_a_warning():
    with pytest.warns(UserWarning, match="no graph compiler"):
        ms.set_context(jit_config={"jit_level": "O0"}, save_graphs=False)
    assert cfg("jit_config") == {"jit_level": "O0"}


def test_all_or_none():
    ms.set_context(max_device_memory="2GB", memory_offload="OFF")
    with pytest.raises(ValueError):
        ms.set_context(memory_offload="ON", max_device_memory="2G")
    assert cfg("memory_offload") == "OFF" and cfg("max_device_memory") == 2.0
    with pytest.raises(ValueError):
        ms.set_context(memory_offload="ON", expandable_segments="maybe")   # hwrt key, bad
    assert cfg("memory_offload") == "OFF"


# parallel/_offload_context.py: the 13 keys, their checks and get_offload_context's types
def test_offload_keys_validation():
    bad_type = [("offload_param", 1), ("offload_checkpoint", None), ("offload_path", 3),
                ("offload_cpu_size", 1 << 30), ("offload_disk_size", 2.0),
                ("enable_aio", 1), ("aio_block_size", 1), ("aio_queue_depth", "8"),
                ("aio_queue_depth", True), ("enable_pinned_mem", "true"),
                ("auto_offload", 0), ("host_mem_block_size", 1), ("cpu_ratio", 1),
                ("hbm_ratio", "0.5")]
    for k, v in bad_type:
        with pytest.raises(TypeError):
            ms.set_offload_context({k: v})
    bad_value = [("offload_param", "gpu"), ("offload_checkpoint", "ram"),
                 ("offload_cpu_size", "1G"), ("offload_disk_size", "0GB"),
                 ("aio_block_size", "x"), ("aio_queue_depth", 0), ("cpu_ratio", 0.0),
                 ("cpu_ratio", 1.5), ("hbm_ratio", -0.1), ("host_mem_block_size", "GB")]
    for k, v in bad_value:
        with pytest.raises(ValueError):
            ms.set_offload_context({k: v})
    with pytest.raises(ValueError, match="Unknown config"):
        ms.set_offload_context({"offload_params": "cpu"})
    with pytest.raises(TypeError):
        ms.set_offload_context(["offload_param"])


def test_offload_defaults_and_types():
    off = ms.get_offload_context()
    assert set(off) >= {"offload_param", "offload_path", "offload_cpu_size",
                        "offload_disk_size", "enable_aio", "aio_block_size", "aio_queue_depth",
                        "enable_pinned_mem", "auto_offload", "host_mem_block_size",
                        "cpu_ratio", "hbm_ratio", "offload_checkpoint"}
    # offload_context.cc's defaults where hwrt only records the key
    assert off["offload_param"] == "" and off["offload_checkpoint"] == ""
    assert off["enable_aio"] is True and off["aio_block_size"] == 1 << 20
    assert off["aio_queue_depth"] == 1024 and off["host_mem_block_size"] == GB
    assert off["cpu_ratio"] == 1.0 and off["hbm_ratio"] == 1.0


def test_offload_keys_reach_the_residency_manager(tmp_path):
    ms.set_offload_context({"offload_param": "CPU", "offload_checkpoint": "disk",
                            "offload_path": str(tmp_path), "offload_cpu_size": "2GB",
                            "offload_disk_size": "3GB", "enable_aio": False,
                            "aio_block_size": "0.5GB", "aio_queue_depth": 8,
                            "enable_pinned_mem": False, "auto_offload": False,
                            "host_mem_block_size": "2GB", "cpu_ratio": 0.5, "hbm_ratio": 0.25})
    off = ms.get_offload_context()
    assert off["offload_param"] == "cpu" and off["offload_checkpoint"] == "disk"
    assert off["offload_path"] == str(tmp_path) and off["offload_cpu_size"] == 2 * GB
    assert off["offload_disk_size"] == 3 * GB and off["aio_queue_depth"] == 8
    assert off["enable_pinned_mem"] is False and off["auto_offload"] is False
    # the hwrt config keys behind them: cpu_ratio scales the host budget
    assert cfg("offload_path") == str(tmp_path)
    assert cfg("offload_cpu_size") == GB                  # 0.5 x 2GB
    assert cfg("offload_disk_size") == 3 * GB
    assert cfg("enable_pinned_mem") is False and cfg("auto_offload") is False
    # hbm_ratio scales the device budget with memory_offload ON
    ms.set_context(memory_offload="ON", max_device_memory="4GB")
    assert cfg("max_device_memory") == 4.0                 # as the user set it
    with pytest.raises(ms.OutOfMemoryError):
        ms.Tensor(shape=(1536 << 20,), dtype=ms.uint8)     # over 0.25 x 4GB
    ms.set_context(memory_offload="OFF")
    t = ms.Tensor(shape=(1536 << 20,), dtype=ms.uint8)     # offload OFF: the full 4GB
    del t
    ms.set_offload_context({"cpu_ratio": 1.0, "hbm_ratio": 1.0, "enable_pinned_mem": True,
                            "auto_offload": True, "offload_cpu_size": "64GB"})
    assert cfg("offload_cpu_size") == 64 * GB


def test_offload_all_or_none(tmp_path):
    ms.set_offload_context({"offload_cpu_size": "8GB"})
    with pytest.raises(ValueError):
        ms.set_offload_context({"offload_cpu_size": "16GB", "offload_path": str(tmp_path),
                                "hbm_ratio": 2.0})
    assert ms.get_offload_context()["offload_cpu_size"] == 8 * GB
    assert cfg("offload_cpu_size") == 8 * GB and cfg("offload_path") != str(tmp_path)
