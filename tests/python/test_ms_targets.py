"""Device targets as MindSpore names them (issue 23, item 1).

A process has one device (mindspore/python/mindspore/device_manager.py: set_device can not
be modified), so every scenario runs in its own interpreter."""
import os

import pytest

from checklib import python_ok

HERE = os.path.dirname(os.path.abspath(__file__))


def run(code, **env):
    e = dict(os.environ)
    for k in ("HWRT_SIMULATE", "HWRT_SIM_MEMORY", "HWRT_SIM_DEVICES"):
        e.pop(k, None)
    e.update(env)
    return python_ok(["-c", "import hwrt as ms\n" + code], e).stdout


# device_manager.py: set_device("Ascend", 0), the seed's first line
def test_ascend_without_the_switch_names_it():
    out = run("""
try:
    ms.set_device("Ascend", 0)
except RuntimeError as e:
    print(type(e).__name__, e)
print(ms.get_context("device_target"))
""")
    assert out.startswith("UnavailableError")
    assert "HWRT_SIMULATE" in out and "Atlas 800I A2" in out
    assert out.strip().endswith("CPU")        # nothing was chosen


def test_ascend_with_the_switch_is_the_atlas_800i_a2_model():
    out = run("""
ms.set_device("Ascend", 0)
p = ms.hal.get_device_properties(0)
print(ms.get_context("device_target"), ms.get_current_device())
print(p.name, p.total_memory, p.simulated, ms.hal.device_count())
print(ms.hal.get_device_name(0), ms.hal.get_device_capability(0), ms.hal.get_arch_list())
print(ms.device_context.ascend.is_available(), ms.device_context.ascend.device_count())
t = ms.Tensor([1.0, 2.0, 3.0])
print((t + t).asnumpy().tolist(), ms.hal.get_device_properties(0).total_memory,
      ms.get_device_properties(0).total_memory)
""", HWRT_SIMULATE="Ascend")
    lines = out.splitlines()
    assert lines[0] == "Ascend hwrt.DeviceInfo(device_target='Ascend', device_id=0)"
    # hal/device.py: on Ascend, total_memory is 0 until the backend is initialized
    assert lines[1] == "Atlas 800I A2 NPU (simulated) 0 True 8"
    assert lines[2] == "Atlas 800I A2 NPU (simulated) None None"
    assert lines[3] == "True 8"
    assert lines[4] == "[2.0, 4.0, 6.0] %d %d" % (64 << 30, 64 << 30)


def test_gpu_with_the_switch_is_the_h200_model():
    out = run("""
ms.set_device("GPU", 7)
p = ms.hal.get_device_properties(7)
print(p.name, p.total_memory, p.major, p.minor, p.multi_processor_count, p.simulated)
print(ms.hal.get_device_capability(7), ms.hal.device_count("GPU"), ms.get_current_device().device_id)
print(ms.hal.is_available("Ascend"))
""", HWRT_SIMULATE="GPU")
    lines = out.splitlines()
    assert lines[0] == "NVIDIA H200 (simulated) 141000000000 9 0 132 True"
    assert lines[1] == "(9, 0) 8 7"
    assert lines[2] == "False"             # only GPU was allowed to be simulated


def test_gpu_without_the_switch_and_the_model_figures_honour_the_environment():
    out = run("""
try:
    ms.set_device("GPU")
except ms.UnavailableError as e:
    print("refused", "HWRT_SIMULATE=GPU" in str(e), "H200" in str(e))
""")
    assert out.strip() == "refused True True"
    out = run("""
ms.set_device("Ascend")
p = ms.get_device_properties()
print(p.total_memory, p.name)
""", HWRT_SIMULATE="1", HWRT_SIM_MEMORY="1GB")
    assert out.strip() == "%d Atlas 800I A2 NPU (simulated) [memory from HWRT_SIM_MEMORY]" % (1 << 30)


# hal/_cpu.py: CPU device count 1, name "CPU", properties None
def test_cpu_runs_everywhere_on_the_host():
    out = run("""
import os
ms.set_device("CPU")
print(ms.get_context("device_target"), ms.hal.device_count(), ms.hal.get_device_name(0))
print(ms.hal.get_device_properties(0), ms.hal.get_device_capability(0))
print(ms.get_device_properties().total_memory == os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
a = ms.Tensor([[1.0, 2.0], [3.0, 4.0]])
print((a @ a).asnumpy().tolist(), ms.runtime.memory_allocated() > 0)
""")
    lines = out.splitlines()
    assert lines[0] == "CPU 1 CPU"
    assert lines[1] == "None None"
    assert lines[2] == "True"
    assert lines[3] == "[[7.0, 10.0], [15.0, 22.0]] True"


# device_manager.py: "The 'mindspore.set_device' can not be modified."
def test_second_set_device_with_another_id_raises_runtime_error():
    out = run("""
ms.set_device("Ascend", 0)
ms.set_device("Ascend", 0)                      # the same choice again is fine
for args in (("Ascend", 1), ("GPU", 0), ("CPU", 0)):
    try:
        ms.set_device(*args)
    except RuntimeError as e:
        print(type(e).__name__, "can not be modified" in str(e))
try:
    ms.set_device("Ascend", 9)                  # out of range says so first
except ValueError as e:
    print("InvalidDevice", "9" in str(e) and "8 devices" in str(e))
print(ms.get_current_device())
""", HWRT_SIMULATE="1")
    assert out.splitlines() == ["NotPermittedError True"] * 3 + [
        "InvalidDevice True", "hwrt.DeviceInfo(device_target='Ascend', device_id=0)"]


def test_set_device_argument_types_and_values():
    # device_manager.py: args_type_check(device_target=str, device_id=int), id >= 0
    out = run("""
for args in ((1,), ("sim", "0"), ("sim", 1.0)):
    try:
        ms.set_device(*args)
    except TypeError:
        print("TypeError")
for args in (("sim", -1), ("TPU", 0)):
    try:
        ms.set_device(*args)
    except ValueError:
        print("ValueError")
""")
    assert out.split() == ["TypeError"] * 3 + ["ValueError"] * 2


# context.py set_device_target: set_context(device_target=) is a context parameter; the
# UT (tests/ut/python/pynative_mode/test_context.py::test_device_target) sets GPU then Ascend
def test_set_context_device_target_can_change_before_any_work():
    out = run("""
ms.set_context(device_target="GPU")
print(ms.get_context("device_target"))
ms.set_context(device_target="Ascend")
print(ms.get_context("device_target"), ms.hal.get_device_name(0))
ms.set_context(device_id=1)
print(ms.get_context("device_id"))
t = ms.Tensor([1.0])
try:
    ms.set_context(device_target="GPU")
except RuntimeError as e:
    print("refused after work")
print(ms.hal.is_initialized("Ascend"), ms.hal.is_initialized("GPU"), t.device_id)
""", HWRT_SIMULATE="1")
    assert out.splitlines() == ["GPU", "Ascend Atlas 800I A2 NPU (simulated)", "1",
                                "refused after work", "True False 1"]


def test_a_stand_in_after_implicit_use_is_refused():
    # device_manager.py: "The runtime has been initialized, please set it before the kernel
    # is executed"
    out = run("""
t = ms.Tensor([1.0])            # runs on "auto" (the sim) with its default model
try:
    ms.set_device("Ascend")
except RuntimeError as e:
    print("initialized" in str(e))
""", HWRT_SIMULATE="1")
    assert out.strip() == "True"


def test_set_context_device_target_keeps_the_device_id():
    # context.py: device_target and device_id are separate context parameters
    out = run("""
ms.set_device("Ascend", 1)
ms.set_context(device_target="Ascend", mode=ms.GRAPH_MODE)
print(ms.get_context("device_id"), ms.get_current_device())
""", HWRT_SIMULATE="1")
    assert out.strip() == "1 hwrt.DeviceInfo(device_target='Ascend', device_id=1)"


def test_a_failed_stand_in_leaves_the_sim_model_alone():
    # the Atlas model's HWRT_SIM_MEMORY / HWRT_SIM_DEVICES go when its set_device fails
    out = run("""
try:
    ms.set_device("Ascend", 9)                 # the model has 8 cards
except ValueError as e:
    print("refused", "9" in str(e))
ms.set_device("sim")
print(ms.get_device_properties().total_memory, ms.device_count("sim"))
""", HWRT_SIMULATE="1")
    assert out.splitlines() == ["refused True", "%d 2" % (32 << 30)]
