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


RANK_SCRIPT = """
import sys
sys.path.insert(0, %r)
import hwrt
import seed_blocks as seed
seed.run(seed.S4_4_RANK_DEVICE, {"ms": hwrt, "rank": 1})
t = hwrt.Tensor([1.0, 2.0])
print(hwrt.get_device_id(), t.device_id)
"""


def test_2_6_device_follows_rank():
    """Problem 4's fix with a rank other than 0: the device id is the rank. A process has
    one device (MindSpore's device_manager.py: set_device can not be modified), so rank 1
    is its own process, as it is under a launcher."""
    hwrt.set_device("sim", 0)
    if hwrt.device_count("sim") < 2:
        pytest.skip("needs two simulated devices (HWRT_SIM_DEVICES)")
    r = subprocess.run([sys.executable, "-c", RANK_SCRIPT % HERE], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["1", "1"]
    with pytest.raises(hwrt.InvalidDeviceError) as e:
        seed.run(seed.S4_4_RANK_DEVICE, {"ms": hwrt, "rank": 64})
    assert "64" in str(e.value)
    with pytest.raises(RuntimeError):          # this process already runs on device 0
        seed.run(seed.S4_4_RANK_DEVICE, {"ms": hwrt, "rank": 1})
    assert hwrt.get_device_id() == 0


SCRIPT = """
import contextlib, io, os, sys
sys.path.insert(0, %r)
import hwrt as ms
import seed_blocks as seed
out = io.StringIO()
try:
    with contextlib.redirect_stdout(out):
        seed.run(seed.S2_6_DIST, {"ms": ms})
    out.write("device %%d\\n" %% ms.get_device_id())
except ms.HwrtError as e:
    out.write("refused %%s %%s\\n" %% (type(e).__name__, e))
# one file per rank: ranks' stdout would interleave through mpirun
with open(os.path.join(%r, "rank_%%d.txt" %% os.getpid()), "w") as f:
    f.write(out.getvalue())
"""


def test_2_6_under_mpirun(tmp_path):
    mpirun = shutil.which("mpirun")
    if not mpirun:
        pytest.skip("mpirun is not installed")
    script = tmp_path / "seed_2_6.py"
    script.write_text(SCRIPT % (HERE, str(tmp_path)))
    cmd = [mpirun, "--allow-run-as-root", "--oversubscribe", "-np", "2", sys.executable,
           str(script)]
    env = dict(os.environ, HWRT_SIM_DEVICES="2")
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)
    outs = sorted(p.read_text() for p in tmp_path.glob("rank_*.txt"))
    assert len(outs) == 2, r.stdout + r.stderr
    if all(o.startswith("refused") for o in outs):
        # this hwrt has no distributed part: both ranks must say so, clearly
        assert not hwrt._features["dist"]
        for o in outs:
            assert o.startswith("refused UnavailableError"), o
            assert "2 ranks" in o and "hwrt_dist.h" in o
    else:
        assert r.returncode == 0, r.stdout + r.stderr
        assert outs == ["rank:0, total_card:2\ndevice 0\n", "rank:1, total_card:2\ndevice 1\n"], outs
