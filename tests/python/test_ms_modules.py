"""MindSpore's module layout (issue 23, item 2): context, hal, device_context, dtype and
the top-level re-exports. The process runs on the simulated Atlas 800I A2 model
(HWRT_SIMULATE), as a MindSpore script would on an Ascend host."""
import os

os.environ["HWRT_SIMULATE"] = "Ascend"

import pytest  # noqa: E402

import hwrt as ms  # noqa: E402


@pytest.fixture(autouse=True)
def ascend():
    ms.set_device("Ascend", 0)


# mindspore/python/mindspore/__init__.py: from mindspore.runtime import *; device_manager
def test_top_level_re_exports_are_the_runtime_objects():
    for name in ("launch_blocking", "dispatch_threads_num", "set_cpu_affinity",
                 "set_kernel_launch_group", "Stream", "communication_stream", "synchronize",
                 "set_cur_stream", "current_stream", "default_stream", "StreamCtx",
                 "set_memory", "memory_stats", "memory_reserved", "max_memory_reserved",
                 "empty_cache", "memory_replay", "reset_peak_memory_stats", "memory_summary",
                 "memory_allocated", "max_memory_allocated", "reset_max_memory_reserved",
                 "reset_max_memory_allocated", "Event"):
        assert getattr(ms, name) is getattr(ms.runtime, name), name
    for name in ("set_device", "get_current_device", "set_context", "get_context",
                 "set_offload_context", "get_offload_context", "GRAPH_MODE", "PYNATIVE_MODE"):
        assert hasattr(ms, name), name


def test_submodules_import_like_packages():
    import hwrt.context as context
    import hwrt.device_context.ascend as asc
    import hwrt.hal as hal
    from hwrt.dtype import float32
    from hwrt.device_context import cpu
    assert context.set_context is ms.set_context and context.GRAPH_MODE == 0
    assert context.PYNATIVE_MODE == 1
    assert asc is ms.device_context.ascend and cpu.device_count() == 1
    assert hal.Stream is ms.runtime.Stream and hal.Event is ms.runtime.Event
    assert float32 is ms.float32


# mindspore/python/mindspore/common/dtype.py: ms.dtype is a module of dtype objects
def test_dtype_is_a_module():
    import types
    assert isinstance(ms.dtype, types.ModuleType)
    assert ms.dtype.float16 is ms.float16 and ms.dtype.bool_ is ms.bool_
    assert isinstance(ms.float32, ms.dtype.Type)
    assert ms.Tensor([1, 2], dtype=ms.dtype.float16).dtype == ms.float16


# mindspore/python/mindspore/hal/device.py
def test_hal_device_functions():
    hal = ms.hal
    assert hal.is_available("Ascend") is True and hal.is_available("CPU") is True
    assert hal.is_available("GPU") is False              # HWRT_SIMULATE=Ascend only
    assert not hal.is_initialized("CPU")
    assert hal.device_count() == 8 and hal.device_count("Ascend") == 8
    assert hal.device_count("CPU") == 1
    with pytest.raises(ValueError, match="GPU backend is not available"):
        hal.device_count("GPU")
    for fn in (hal.is_available, hal.is_initialized):
        with pytest.raises(ValueError, match="must be one of"):
            fn("NPU")
    p = hal.get_device_properties(0)
    assert p.total_memory == 64 << 30 and p.name.endswith("(simulated)")
    assert 0 < p.free_memory <= p.total_memory
    assert p["total_memory"] == p.total_memory            # hwrt's older dict use
    assert "total_memory=65536MB" in repr(p) and "simulated=True" in repr(p)
    assert hal.get_device_name(0) == p.name
    with pytest.raises(ValueError, match="negative"):      # test_hal_device.py: get_device_name(-1)
        hal.get_device_name(-1)
    assert hal.get_device_capability(0) is None           # _ascend.py: None
    assert hal.get_arch_list() is None and hal.get_arch_list("CPU") is None
    assert hal.get_device_properties(0, "CPU") is None    # _cpu.py: None
    assert hal.get_device_name(0, "CPU") == "CPU"


def test_hal_is_initialized_after_the_first_work():
    # test_hal_device.py: not initialized before the first op, initialized after
    t = ms.Tensor([2.0])
    assert ms.hal.is_initialized("Ascend") and not ms.hal.is_initialized("CPU")
    del t


# mindspore/python/mindspore/device_context/{ascend,cpu,gpu}/device.py
def test_device_context_submodules():
    assert ms.device_context.ascend.is_available() is True
    assert ms.device_context.ascend.device_count() == 8
    assert ms.device_context.cpu.is_available() is True
    assert ms.device_context.cpu.device_count() == 1
    assert ms.device_context.gpu.is_available() is False
    with pytest.raises(RuntimeError, match="Device GPU not exist"):
        ms.device_context.gpu.device_count()


def test_hal_memory_and_stream_names_are_the_runtime_ones():
    for name in ("memory_stats", "memory_reserved", "max_memory_reserved", "empty_cache",
                 "reset_peak_memory_stats", "memory_summary", "memory_allocated",
                 "max_memory_allocated", "reset_max_memory_reserved",
                 "reset_max_memory_allocated", "synchronize", "set_cur_stream",
                 "current_stream", "default_stream", "StreamCtx"):
        assert getattr(ms.hal, name) is getattr(ms.runtime, name), name
    s = ms.hal.Stream()
    with ms.hal.StreamCtx(s):
        assert ms.hal.current_stream() == s
    ms.hal.synchronize()
