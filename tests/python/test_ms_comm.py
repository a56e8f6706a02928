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


# communication/management.py create_group / destroy_group and communication/comm_func.py
# all_reduce, broadcast, all_gather_into_tensor, reduce_scatter_tensor, barrier with
# group=: a group is a sub-communicator of its members (hwrt_group_create), so a group's
# collective involves its members only. As in MindSpore's examples, the members call
# create_group; a rank outside rank_ids that calls it is warned (collective_manager.cc)
# and may not run the group's collectives.
GROUPS4 = """
import os, sys, warnings
import numpy as np
import hwrt as ms
from hwrt.communication import (init, get_rank, create_group, destroy_group, get_group_size,
    get_world_rank_from_group_rank, get_group_rank_from_world_rank, get_local_rank)
from hwrt.communication.comm_func import (all_reduce, broadcast, all_gather_into_tensor,
    reduce_scatter_tensor, barrier, ReduceOp)
init()
ms.set_device("sim", get_local_rank())
rank = get_rank()
name, ids = ("g02", [0, 2]) if rank % 2 == 0 else ("g31", [3, 1])
create_group(name, ids)
x = ms.Tensor(np.array([rank, 10 * rank, 1], np.float32))
out = {}
out["sum"] = all_reduce(x, group=name).asnumpy().tolist()
out["max"] = all_reduce(x, ReduceOp.MAX, name).asnumpy().tolist()
out["x_unchanged"] = x.asnumpy().tolist()
out["world"] = all_reduce(x).asnumpy().tolist()
out["bcast"] = broadcast(x, src=ids[1], group=name).asnumpy().tolist()
out["gather"] = all_gather_into_tensor(ms.Tensor(np.array([[rank, -rank]], np.int32)),
                                       group=name).asnumpy().tolist()
out["scatter"] = reduce_scatter_tensor(ms.Tensor(np.array([rank, 100 + rank], np.float32)),
                                       group=name).asnumpy().tolist()
out["ranks"] = [get_rank(name), get_group_size(name), get_world_rank_from_group_rank(name, 1),
                get_group_rank_from_world_rank(ids[0], name)]
barrier(name)
# a group of three; rank 0 is outside it, calls create_group anyway, is warned and refused
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    create_group("g123", [1, 2, 3])
out["warned"] = [str(m.message)[:40] for m in w]
if rank == 0:
    try:
        all_reduce(x, group="g123")
    except RuntimeError as e:
        out["g123"] = "refused: " + str(e)[:38]
else:
    out["g123"] = all_reduce(x, group="g123").asnumpy().tolist()
destroy_group("g123")
destroy_group(name)
try:
    all_reduce(x, group=name)
except ValueError:
    out["destroyed"] = True
for bad in (lambda: all_reduce([1.0]), lambda: all_reduce(x, op=1),
            lambda: broadcast(x, src="0")):
    try:
        bad()
    except TypeError:
        out.setdefault("typeerrors", 0)
        out["typeerrors"] += 1
try:
    all_reduce(x, op="mean")
except ValueError:
    out["bad_op"] = True
out["world_after"] = all_reduce(x, "sum").asnumpy().tolist()
with open(os.path.join(sys.argv[1], "rank_%d.txt" % rank), "w") as f:
    f.write(repr(out))
"""


def test_group_collectives_under_mpirun_np4(tmp_path):
    mpirun = shutil.which("mpirun")
    if not mpirun or not hwrt._features["dist"]:
        pytest.skip("needs mpirun and hwrt's distributed part")
    script = tmp_path / "groups4.py"
    script.write_text(GROUPS4)
    r = subprocess.run([mpirun, "--allow-run-as-root", "--oversubscribe", "-np", "4",
                        sys.executable, str(script), str(tmp_path)],
                       capture_output=True, text=True, timeout=180,
                       env=dict(os.environ, HWRT_SIM_DEVICES="4"))
    assert r.returncode == 0, r.stdout + r.stderr
    outs = [eval((tmp_path / ("rank_%d.txt" % i)).read_text()) for i in range(4)]
    for rank, o in enumerate(outs):
        ids = [0, 2] if rank % 2 == 0 else [3, 1]
        s = sum(ids)
        assert o["sum"] == [s, 10 * s, 2], (rank, o)           # the group's, not the world's
        assert o["max"] == [max(ids), 10 * max(ids), 1]
        assert o["x_unchanged"] == [rank, 10 * rank, 1]
        assert o["world"] == [6, 60, 4]
        assert o["bcast"] == [ids[1], 10 * ids[1], 1]          # src is a world rank
        assert o["gather"] == [[ids[0], -ids[0]], [ids[1], -ids[1]]]   # group-rank order
        mine = ids.index(rank)
        assert o["scatter"] == [[s], [200 + s]][mine]
        assert o["ranks"] == [mine, 2, ids[1], 0]
        if rank == 0:
            assert o["warned"] == ["create_group: this rank (0) is not in th"]
            assert o["g123"].startswith("refused: For 'all_reduce', this process")
        else:
            assert o["warned"] == [] and o["g123"] == [6, 60, 3]
        assert o["destroyed"] and o["typeerrors"] == 3 and o["bad_op"]
        assert o["world_after"] == [6, 60, 4]
