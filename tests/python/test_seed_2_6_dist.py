"""Seed 2.6 and problem 4: rank, world size, device bound by rank.

In this process the snippet runs as a plain single process (rank 0 of 1). Under mpirun
the same snippet runs once per rank; without hwrt's distributed part (hwrt_dist.h) every
rank must refuse rather than all claim rank 0."""
import os
import shutil
import subprocess
import sys

import pytest

import hwrt
import seed_blocks as seed

HERE = os.path.dirname(os.path.abspath(__file__))


def test_2_6_single_process(capsys):
    ns = seed.run(seed.S2_6_DIST, {"ms": hwrt})     # the seed's script imported ms earlier
    assert ns["rank"] == 0 and ns["world_size"] == 1
    assert "rank:0, total_card:1" in capsys.readouterr().out
    assert hwrt.get_device_id() == 0
    assert hwrt.communication.get_local_rank() == 0
    seed.run(seed.S4_4_RANK_DEVICE, {"ms": hwrt, "rank": ns["rank"]})
    assert hwrt.get_device_id() == 0


def test_2_6_device_follows_rank():
    """Problem 4's fix with a rank other than 0: the device id is the rank."""
    hwrt.set_device("sim", 0)
    if hwrt.device_count("sim") < 2:
        pytest.skip("needs two simulated devices (HWRT_SIM_DEVICES)")
    seed.run(seed.S4_4_RANK_DEVICE, {"ms": hwrt, "rank": 1})
    assert hwrt.get_device_id() == 1
    t = hwrt.Tensor([1.0, 2.0])
    assert t.device_id == 1
    with pytest.raises(hwrt.InvalidDeviceError) as e:
        seed.run(seed.S4_4_RANK_DEVICE, {"ms": hwrt, "rank": 64})
    assert "64" in str(e.value)
    hwrt.set_device("sim", 0)


SCRIPT = """
import sys
sys.path.insert(0, %r)
import hwrt as ms
import seed_blocks as seed
try:
    seed.run(seed.S2_6_DIST, {"ms": ms})
    print("device", ms.get_device_id())
except ms.HwrtError as e:
    print("refused", type(e).__name__, e)
"""


def test_2_6_under_mpirun(tmp_path):
    mpirun = shutil.which("mpirun")
    if not mpirun:
        pytest.skip("mpirun is not installed")
    script = tmp_path / "seed_2_6.py"
    script.write_text(SCRIPT % HERE)
    cmd = [mpirun, "--allow-run-as-root", "--oversubscribe", "-np", "2", sys.executable,
           str(script)]
    env = dict(os.environ, OMPI_MCA_plm_rsh_agent="", HWRT_SIM_DEVICES="2")
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)
    out = r.stdout
    if "refused" in out:
        # this hwrt has no distributed part: both ranks must say so, clearly
        assert out.count("refused UnavailableError") == 2, out + r.stderr
        assert "2 ranks" in out and "hwrt_dist.h" in out
    else:
        assert r.returncode == 0, out + r.stderr
        assert "rank:0, total_card:2" in out and "rank:1, total_card:2" in out, out
        assert "device 0" in out and "device 1" in out, out
