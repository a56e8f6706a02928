"""MindSpore's communication names (issue 23, item 6): rank queries before init()
(communication/_comm_helper.py: RANK_ID / RANK_SIZE / LOCAL_RANK / LOCAL_RANK_SIZE, else
0 / 1 / 0 / 1), GlobalComm and the world-group names, groups and rank translation
(communication/management.py), the management submodule. Groups run under mpirun."""
import os
import shutil
import subprocess
import sys

import pytest

import hwrt

HERE = os.path.dirname(os.path.abspath(__file__))
c = hwrt.communication


def py(code, **env):
    e = dict(os.environ)
    for k in ("RANK_ID", "RANK_SIZE", "LOCAL_RANK", "LOCAL_RANK_SIZE"):
        e.pop(k, None)
    e.update(env)
    r = subprocess.run([sys.executable, "-c", "import hwrt.communication as c\n" + code],
                       env=e, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout.split()


def test_rank_queries_before_init_read_the_launcher():
    q = "print(c.get_rank(), c.get_group_size(), c.get_local_rank(), c.get_local_rank_size())"
    assert py(q) == ["0", "1", "0", "1"]
    assert py(q, RANK_ID="5", RANK_SIZE="8", LOCAL_RANK="1", LOCAL_RANK_SIZE="4") == \
        ["5", "8", "1", "4"]


def test_names_and_the_management_submodule():
    import hwrt.communication.management as mgmt
    assert c.HCCL_WORLD_COMM_GROUP == "hccl_world_group"
    assert c.NCCL_WORLD_COMM_GROUP == "nccl_world_group"
    assert c.MCCL_WORLD_COMM_GROUP == "mccl_world_group"
    assert mgmt.GlobalComm is c.GlobalComm
    for name in ("init", "release", "get_rank", "get_group_size", "get_local_rank",
                 "get_local_rank_size", "get_world_rank_from_group_rank",
                 "get_group_rank_from_world_rank", "create_group", "destroy_group",
                 "get_comm_name", "get_process_group_ranks"):
        assert callable(getattr(mgmt, name)) and callable(getattr(c, name)), name


def test_type_checks_and_init_required():
    with pytest.raises(TypeError):
        c.get_rank(group=1)
    assert py("""
for call in (lambda: c.create_group("g", [0, 1]), lambda: c.destroy_group("g"),
             lambda: c.get_world_rank_from_group_rank("g", 0)):
    try:
        call()
    except RuntimeError as e:
        print("has not been inited" in str(e))
print(c.GlobalComm.INITED)
c.init()
print(c.GlobalComm.INITED, c.get_process_group_ranks() == [0])
for call in (lambda: c.create_group("g", [0]), lambda: c.create_group("g", [0, 1]),
             lambda: c.create_group("g", [-1, 0]),
             lambda: c.create_group("hccl_world_group", [0, 0]),
             lambda: c.get_world_rank_from_group_rank("hccl_world_group", 0),
             lambda: c.destroy_group("nope")):
    try:
        call()
    except ValueError:
        print("ValueError")
for call in (lambda: c.create_group(1, [0, 1]), lambda: c.create_group("g", (0, 1)),
             lambda: c.get_group_rank_from_world_rank("0", "g")):
    try:
        call()
    except TypeError:
        print("TypeError")
""") == ["True"] * 3 + ["False", "True", "True"] + ["ValueError"] * 6 + ["TypeError"] * 3


SCRIPT = """
import os, sys
import hwrt as ms
from hwrt.communication import (init, get_rank, get_group_size, create_group, destroy_group,
    get_world_rank_from_group_rank, get_group_rank_from_world_rank, get_process_group_ranks,
    GlobalComm)
init()
rank = get_rank()
out = [rank, get_group_size(), GlobalComm.INITED]
create_group("odd_even", [2, 0])
out += [get_group_size("odd_even"), get_world_rank_from_group_rank("odd_even", 0),
        get_group_rank_from_world_rank(0, "odd_even"), get_process_group_ranks("odd_even")]
out.append(get_rank("odd_even") if rank in (0, 2) else "not-member")
try:
    create_group("odd_even", [0, 1])
except ValueError:
    out.append("exists")
try:
    create_group("big", [0, 5])
except ValueError:
    out.append("range")
destroy_group("odd_even")
try:
    get_group_size("odd_even")
except ValueError:
    out.append("destroyed")
with open(os.path.join(sys.argv[1], "rank_%d.txt" % rank), "w") as f:
    f.write(repr(out))
"""


def test_groups_under_mpirun(tmp_path):
    mpirun = shutil.which("mpirun")
    if not mpirun or not hwrt._features["dist"]:
        pytest.skip("needs mpirun and hwrt's distributed part")
    script = tmp_path / "groups.py"
    script.write_text(SCRIPT)
    r = subprocess.run([mpirun, "--allow-run-as-root", "--oversubscribe", "-np", "3",
                        sys.executable, str(script), str(tmp_path)],
                       capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, HWRT_SIM_DEVICES="3"))
    assert r.returncode == 0, r.stdout + r.stderr
    outs = [(tmp_path / ("rank_%d.txt" % i)).read_text() for i in range(3)]
    tail = "2, 2, 1, [2, 0], %s, 'exists', 'range', 'destroyed']"
    assert outs[0] == "[0, 3, True, " + tail % "1"
    assert outs[1] == "[1, 3, True, " + tail % "'not-member'"
    assert outs[2] == "[2, 3, True, " + tail % "0"
