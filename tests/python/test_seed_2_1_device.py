"""Seed 2.1: set the device, read its id and memory figures."""
import subprocess
import sys

import pytest

import hwrt
import seed_blocks as seed


def test_2_1_runs_and_reports(capsys):
    ns = seed.run(seed.S2_1_DEVICE)
    out = capsys.readouterr().out
    assert ns["cur_dev_id"] == 0
    assert hwrt.get_device_id() == 0
    assert hwrt.current_backend() == "sim"
    props = hwrt.get_device_properties(0)
    assert props["simulated"] is True
    mem = ns["mem_info"]
    assert set(mem) == {"total", "free", "used", "allocated", "reserved", "peak_allocated",
                        "peak_reserved", "overhead"}
    assert mem["total"] == props["total_memory"]
    # a fresh process: no tensor yet, but the device context costs overhead device-wide
    assert mem["allocated"] == 0 and mem["reserved"] == 0
    assert mem["used"] >= mem["overhead"] > 0
    assert mem["free"] + mem["used"] == mem["total"]
    gb = mem["total"] / 1024 / 1024 / 1024
    assert "当前设备ID：0" in out
    assert f"设备总内存 {gb:.2f} GB" in out
    assert "当前张量占用内存 0.00 GB" in out and "内存池托管内存 0.00 GB" in out


def test_2_1_figures_follow_a_tensor(sim):
    seed.run(seed.S2_1_DEVICE)
    before = hwrt.runtime.get_memory_info(device_id=0)
    t = hwrt.Tensor(shape=(1024, 1024), dtype=hwrt.float32)      # 4 MiB
    mid = hwrt.runtime.get_memory_info(device_id=0)
    assert mid["allocated"] - before["allocated"] >= t.nbytes
    assert mid["reserved"] >= mid["allocated"]
    assert mid["peak_allocated"] >= mid["allocated"]
    assert hwrt.runtime.memory_allocated() == mid["allocated"]
    assert hwrt.runtime.memory_reserved() == mid["reserved"]
    assert hwrt.runtime.max_memory_allocated() == mid["peak_allocated"]
    assert hwrt.runtime.max_memory_reserved() == mid["peak_reserved"]
    del t
    after = hwrt.runtime.get_memory_info(device_id=0)
    assert after["allocated"] == before["allocated"]
    assert after["peak_allocated"] >= mid["allocated"]


ASCEND_SCRIPT = """
import hwrt
info = hwrt.backend_info("Ascend")
print("available", info["available"])
for target in ("Ascend", "NPU"):
    try:
        hwrt.set_device(target, device_id=0)
        print("selected", hwrt.current_backend())
    except hwrt.HwrtError as e:
        print("refused", type(e).__name__, e.status_name, e)
"""


def test_ascend_target_is_honest():
    """The seed's literal target in a fresh process: without an Ascend backend it fails
    clearly (saying why and naming "sim"); it never runs on the simulator silently."""
    r = subprocess.run([sys.executable, "-c", ASCEND_SCRIPT], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    if "available True" in out:
        assert out.count("selected ascend") == 2            # a machine with CANN
        return
    lines = [l for l in out.splitlines() if l.startswith("refused")]
    assert len(lines) == 2, out
    for line in lines:
        assert ("UnavailableError HWRT_ERROR_UNAVAILABLE" in line
                or "NoDeviceError HWRT_ERROR_NO_DEVICE" in line), line
        assert "ascend" in line and '"sim"' in line


def test_switching_backend_later_is_refused(sim):
    with pytest.raises(hwrt.HwrtError) as e:
        hwrt.set_context(device_target="Ascend")
    assert "sim" in str(e.value) and "ascend" in str(e.value)
    assert hwrt.current_backend() == "sim"
