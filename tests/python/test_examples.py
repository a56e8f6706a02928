"""python/examples/: the seed's demo scripts run and report what they should."""
import os
import subprocess
import sys

from checklib import python_ok

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "..", "python", "examples")


def run(script, *args):
    return python_ok([os.path.join(EXAMPLES, script), *args], timeout=300).stdout


def test_hardware_op_demo():
    out = run("hardware_op_demo.py")
    assert "current device id: 0 | hwrt simulated NPU 0 (simulated)" in out
    assert "round trip exact: True" in out
    assert "matches numpy: True" in out
    assert "[after empty_cache] allocated 0.00 MB | reserved 0.00 MB" in out


def test_offload_demo():
    out = run("offload_demo.py", "8", "2")
    assert "32 MB of weights, device budget 8 MB" in out
    assert out.count("max |err|") == 2
    assert "weights now on:" in out and "host" in out.split("weights now on:")[1]


def test_ascend_target_of_the_demo_is_refused_here():
    r = subprocess.run([sys.executable, os.path.join(EXAMPLES, "hardware_op_demo.py"),
                        "Ascend"], capture_output=True, text=True, timeout=120)
    if r.returncode == 0:                 # a machine with an Ascend backend
        assert "current device id: 0" in r.stdout
        return
    assert "UnavailableError" in r.stderr or "NoDeviceError" in r.stderr
    assert '"sim"' in r.stderr
