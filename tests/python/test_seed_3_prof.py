"""Seed section 3 on a Python application: the seed's msprof commands with hwrt-prof
(the profiler's tool) in place of msprof, profiling python/examples/hardware_op_demo.py
without changing it (HWRT_PROFILE, set by hwrt-prof --application)."""
import json
import os
import shlex
import subprocess
import sys

import pytest

import hwrt

HERE = os.path.dirname(os.path.abspath(__file__))
DEMO = os.path.normpath(os.path.join(HERE, "..", "..", "python", "examples",
                                     "hardware_op_demo.py"))
# the build tree's python/hwrt/__init__.so -> the build tree, whose tools are in bin/
PYPATH = os.path.dirname(os.path.dirname(os.path.abspath(hwrt.__file__)))
TOOL = os.path.join(os.path.dirname(PYPATH), "bin", "hwrt-prof")

# the seed's block, msprof -> hwrt-prof and "python3 hardware_op_demo.py" -> this demo
SEED_3 = '''\
msprof --application="python3 hardware_op_demo.py" --output="./prof_ms_hw"
msprof --export=on --output="./prof_ms_hw"
msprof --analyze=op --output="./prof_ms_hw" | grep -E "op_name|duration|Memcpy"
'''


def test_3_msprof_flow_on_the_python_demo(tmp_path):
    if not (hwrt._features["profiler"] and os.path.exists(TOOL)):
        pytest.skip("this build has no profiler / hwrt-prof")
    script = (SEED_3.replace("msprof", shlex.quote(TOOL))
              .replace("python3 hardware_op_demo.py", f"{sys.executable} {DEMO}"))
    env = dict(os.environ, PYTHONPATH=PYPATH)
    r = subprocess.run(["sh", "-ec", script], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout
    assert "round trip exact: True" in out                 # the demo ran, unchanged
    assert "op_name" in out and "MemcpyHtoD" in out and "MemcpyDtoH" in out
    prof = tmp_path / "prof_ms_hw"
    trace = json.loads((prof / "trace.json").read_text())
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    names = {e.get("name") for e in events}
    assert "MemcpyHtoD" in names and any(n and "MatMul" in n for n in names), sorted(
        n for n in names if n)[:40]
