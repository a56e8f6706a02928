"""MindSpore's own tests of its hardware API, run against hwrt through
`python3 -m hwrt.compat` (so they `import mindspore` as written), each in its own process
as they assume a fresh runtime (MindSpore fixes the device per process).

Sources (mindspore-ai/mindspore, tests/): st/hal/test_hal_device.py,
st/hal/test_hal_memory.py, st/hal/test_hal_memory_ascend.py (mindspore-ai/mindspore_test),
ut/python/pynative_mode/test_context.py,
ut/python/pynative_mode/test_device_manager.py (test_hal_stream.py and test_hal_event.py
are in test_ms_stream.py). The only changes: mindspore.nn's `Net` (P.Abs) becomes
`ops.relu` of the same input, `tests.device_utils.set_device()` becomes
set_device("Ascend"), `_pynative_executor.sync()` becomes runtime.synchronize(),
`set_context.__wrapped__(...)` (args_type_check's bypass) is a plain call; each test
says where it departs further and why."""
import os
import textwrap

import pytest

import hwrt
from checklib import python_ok

PRELUDE = """\
import os
import mindspore as ms
import mindspore.context as context
import mindspore.runtime as rt
from mindspore import Tensor, ops
import pytest
def net(x):                       # the tests' Net: one op (P.Abs there)
    return ops.relu(x)
"""


def run(body, simulate="1"):
    env = dict(os.environ, HWRT_SIMULATE=simulate)
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(os.path.dirname(os.path.abspath(hwrt.__file__))),
                                         env.get("PYTHONPATH", "")])
    for k in ("HCCL_DETERMINISTIC", "TE_PARALLEL_COMPILER"):
        env.pop(k, None)
    code = PRELUDE + textwrap.dedent(body) + "\nprint('OK')\n"
    r = python_ok(["-m", "hwrt.compat", "-c", code], env)
    assert r.stdout.strip().endswith("OK"), r.stdout + r.stderr


# ---- tests/st/hal/test_hal_device.py ----

def test_hal_device_gpu():
    # departs: the Ascend stand-in is not enabled (simulate="GPU"), and
    # device_context.ascend.device_count() raises RuntimeError as device_context/ascend/
    # device.py does (the test expects ValueError there, which MindSpore's source does not raise)
    run("""
    from mindspore.hal import (is_initialized, is_available, device_count,
        get_device_capability, get_device_properties, get_device_name, get_arch_list)
    context.set_context(mode=context.GRAPH_MODE, device_target='GPU')
    assert not is_initialized("GPU")
    assert is_available("GPU")
    assert is_available("CPU")
    assert not ms.device_context.ascend.is_available()
    net(Tensor(2.0))
    assert not is_initialized("CPU")
    assert is_initialized("GPU")
    try:
        ms.device_context.ascend.device_count()
    except (ValueError, RuntimeError) as e:
        assert str(e).find('not exist') != -1
    dev_cnt = device_count()
    assert dev_cnt > 0
    prop = get_device_properties(dev_cnt - 1)
    print(prop.name, prop.major, prop.minor, prop.is_multi_gpu_board,
          prop.is_integrated, prop.multi_processor_count, prop.total_memory, prop.warp_size)
    print(get_device_capability(dev_cnt - 1), get_device_name(dev_cnt - 1), get_arch_list())
    assert not get_arch_list("CPU")
    """, simulate="GPU")


def test_hal_device_ascend():
    run("""
    from mindspore.hal import get_device_properties, get_device_name, get_arch_list, is_initialized
    context.set_context(mode=context.GRAPH_MODE, device_target='Ascend', jit_level="O0")
    assert not is_initialized("Ascend")
    assert ms.device_context.ascend.is_available()
    assert get_device_properties(0).total_memory == 0
    net(Tensor(2.0))
    assert not is_initialized("CPU")
    assert is_initialized("Ascend")
    dev_cnt = ms.device_context.ascend.device_count()
    assert dev_cnt > 0
    assert get_device_properties(dev_cnt - 1).total_memory > 0
    try:
        get_device_name(-1)
    except ValueError as e:
        assert str(e).find('negative') != -1
    assert get_arch_list() is None
    """)


def test_hal_device_cpu():
    run("""
    from mindspore.hal import is_initialized, get_arch_list
    context.set_context(mode=context.GRAPH_MODE, device_target='CPU')
    assert ms.device_context.cpu.is_available()
    net(Tensor(2.0))
    assert is_initialized("CPU")
    assert get_arch_list() is None
    """, simulate="")


# ---- tests/st/hal/test_hal_memory.py ----

MEMORY = """
ms.set_device("Ascend")
context.set_context(mode=context.PYNATIVE_MODE)
net(Tensor(2.0))
"""


@pytest.mark.parametrize("fn,typ", [("memory_stats", "dict"), ("memory_reserved", "int"),
                                    ("memory_allocated", "int"), ("max_memory_reserved", "int"),
                                    ("max_memory_allocated", "int"), ("memory_summary", "str")])
def test_runtime_memory_queries(fn, typ):
    # test_runtime_memory_stats, _reserved, _allocated, _max_memory_reserved,
    # _max_memory_allocated, _memory_summary
    run(MEMORY + f"""
res = ms.runtime.{fn}()
rt.synchronize()
assert not res is None
assert isinstance(res, {typ})
""")


def test_runtime_reset_peak_memory_stats():
    run(MEMORY + """
reserved_before_reset = ms.runtime.memory_reserved()
allocated_before_reset = ms.runtime.memory_allocated()
ms.runtime.reset_peak_memory_stats()
reserved_peak_after_reset = ms.runtime.max_memory_reserved()
allocated_peak_after_reset = ms.runtime.max_memory_allocated()
rt.synchronize()
assert (reserved_before_reset == reserved_peak_after_reset and
        allocated_before_reset == allocated_peak_after_reset)
""")


def test_runtime_reset_max_memory_reserved():
    run("""
ms.set_device("Ascend")
context.set_context(mode=context.PYNATIVE_MODE)
rt.launch_blocking()
net(Tensor(2.0))
reserved_before_reset = ms.runtime.memory_reserved()
ms.runtime.reset_max_memory_reserved()
reserved_peak_after_reset = ms.runtime.max_memory_reserved()
rt.synchronize()
assert reserved_before_reset == reserved_peak_after_reset
""")


def test_runtime_reset_max_memory_allocated():
    run(MEMORY + """
allocated_before_reset = ms.runtime.memory_allocated()
ms.runtime.reset_max_memory_allocated()
allocated_peak_after_reset = ms.runtime.max_memory_allocated()
rt.synchronize()
assert allocated_before_reset == allocated_peak_after_reset
""")


# ---- tests/st/hal/test_hal_memory_ascend.py (mindspore_test) ----
# (its test_memory_replay needs MindSpore's hal_dryrun_case.py tracker output and
# test_huge_page_reserve_vmm needs acl: not run here)

def test_empty_cache_vmm():
    run("""
ms.set_device("Ascend")
os.environ['MS_ALLOC_CONF'] = "enable_vmm:true"
net(Tensor(2.0))
reserved_size = ms.runtime.memory_reserved()
assert reserved_size > 0
ms.runtime.empty_cache()
reserved_size = ms.runtime.memory_reserved()
assert reserved_size == 0
""")


def test_empty_cache_without_vmm():
    run("""
ms.set_device("Ascend")
os.environ['MS_ALLOC_CONF'] = "enable_vmm:false"
for _ in range(1000):
    net(Tensor(2.0))
    reserved_size = ms.runtime.memory_reserved()
    assert reserved_size > 0
    ms.runtime.empty_cache()
    reserved_size = ms.runtime.memory_reserved()
    assert reserved_size == 0
""")


def test_empty_cache_dryrun():
    run("""
ms.set_device("Ascend")
os.environ["MS_SIMULATION_LEVEL"] = "1"
os.environ["RANK_SIZE"] = "1"
os.environ["RANK_ID"] = "0"
net(Tensor(2.0))
reserved_size = ms.runtime.memory_reserved()
assert reserved_size > 0
ms.runtime.empty_cache()
reserved_size = ms.runtime.memory_reserved()
assert reserved_size == 0
""")


# ---- tests/ut/python/pynative_mode/test_context.py ----

def test_switch_mode():
    run("""
context.set_context(mode=context.GRAPH_MODE)
assert context.get_context("mode") == context.GRAPH_MODE
context.set_context(mode=context.PYNATIVE_MODE)
assert context.get_context("mode") == context.PYNATIVE_MODE
""")


def test_set_device_id():
    run("""
with pytest.raises(TypeError):
    context.set_context(device_id=1)
    context.set_context(device_id="cpu")
assert context.get_context("device_id") == 1
""")


def test_device_target():
    run("""
with pytest.raises(TypeError):
    context.set_context(device_target=123)
context.set_context(device_target="GPU")
assert context.get_context("device_target") == "GPU"
context.set_context(device_target="Ascend")
assert context.get_context("device_target") == "Ascend"
""")


def test_variable_memory_max_size():
    run("""
with pytest.raises(TypeError):
    context.set_context(variable_memory_max_size=True)
with pytest.raises(TypeError):
    context.set_context(variable_memory_max_size=1)
    context.set_context(variable_memory_max_size="1G")
context.set_context(variable_memory_max_size="3GB")
""")


def test_max_device_memory_size():
    run("""
with pytest.raises(TypeError):
    context.set_context(max_device_memory=True)
with pytest.raises(TypeError):
    context.set_context(max_device_memory=1)
    context.set_context(max_device_memory="3.5G")
context.set_context(max_device_memory="3GB")
""")


def test_deterministic():
    run("""
with pytest.raises(ValueError):
    context.set_context(deterministic='NOTRIGHT')
context.set_context(deterministic='ON')
assert os.getenv("HCCL_DETERMINISTIC") == "true"
assert os.getenv("TE_PARALLEL_COMPILER") == "1"
context.set_context(deterministic='OFF')
assert "HCCL_DETERMINISTIC" not in os.environ
assert "TE_PARALLEL_COMPILER" not in os.environ
""")


def test_set_context():
    # departs: save_graphs / save_graphs_path are recorded only (hwrt has no compiler to
    # save graphs of), so the test's directory check is left out
    run("""
context.set_context(device_id=0)
context.set_context(mode=context.GRAPH_MODE, device_target="Ascend")
assert context.get_context("device_id") == 0
assert context.get_context("device_target") == "Ascend"
assert context.get_context("mode") == context.GRAPH_MODE
context.set_context(mode=context.PYNATIVE_MODE)
assert context.get_context("mode") == context.PYNATIVE_MODE
assert context.get_context("device_target") == "Ascend"
with pytest.raises(ValueError):
    context.set_context(modex="ge")
""")


# ---- tests/ut/python/pynative_mode/test_device_manager.py ----

def test_set_deterministic_true():
    run("""
ms.set_deterministic(True)
assert os.getenv("HCCL_DETERMINISTIC") == "true"
assert os.getenv("TE_PARALLEL_COMPILER") == "1"
""")


def test_set_deterministic_false():
    run("""
ms.set_deterministic(False)
assert "HCCL_DETERMINISTIC" not in os.environ
assert "TE_PARALLEL_COMPILER" not in os.environ
""")


def test_set_device_target_GPU():
    run("""
ms.set_device("GPU")
assert context.get_context("device_target") == "GPU"
""")


def test_set_device_target_Ascend():
    run("""
ms.set_device("Ascend")
assert context.get_context("device_target") == "Ascend"
""")


def test_set_device_id_2():
    run("""
ms.set_device("Ascend", 2)
assert context.get_context("device_id") == 2
""")
