"""python3 -m hwrt.compat (issue 23, item 8): unmodified MindSpore scripts, `import
mindspore` resolving to hwrt for that process only."""
import os
import subprocess
import sys
import textwrap
import types

import pytest

import hwrt
import seed_blocks as seed

HERE = os.path.dirname(os.path.abspath(__file__))


def compat(*args, cwd=None, env=None, check=True):
    e = dict(os.environ)
    e.pop("HWRT_SIMULATE", None)
    e.update(env or {})
    e["PYTHONPATH"] = os.pathsep.join([os.path.dirname(os.path.dirname(os.path.abspath(hwrt.__file__))),
                                       e.get("PYTHONPATH", "")])
    r = subprocess.run([sys.executable, "-m", "hwrt.compat", *args], cwd=cwd, env=e,
                       capture_output=True, text=True, timeout=120)
    if check:
        assert r.returncode == 0, r.stdout + r.stderr
    return r


def test_the_seed_blocks_run_unchanged(tmp_path):
    """Sections 2.1-2.6 of the seed, verbatim (mindspore imports, "Ascend"), in one script."""
    script = tmp_path / "seed_script.py"
    script.write_text("\n".join([seed.S2_1_DEVICE, seed.S2_2_COPY,
                                 "import numpy as np\nassert np.array_equal(back_np, host_np)\n"
                                 "assert np.array_equal(host_out, host_np)\n",
                                 seed.S2_3_SYNC, seed.S2_4_EMPTY_CACHE, seed.S2_5_OFFLOAD,
                                 "import mindspore as ms\n" + seed.S2_6_DIST,
                                 "print(ms.get_context('device_target'), ms.__name__)\n"]))
    assert "hwrt" not in script.read_text()
    out = compat("--simulate", "Ascend", str(script)).stdout
    assert "当前设备ID：0" in out
    assert "设备总内存 64.00 GB" in out                  # the Atlas 800I A2 model's HBM
    assert "NPU流全部任务执行完成" in out
    assert "empty_cache后已占用" in out
    assert "rank:0, total_card:1" in out
    assert out.strip().endswith("Ascend hwrt")


def test_a_mindspore_docs_example_runs_unchanged(tmp_path):
    # mindspore/python/mindspore/runtime/memory.py, memory_stats's example
    script = tmp_path / "docs_example.py"
    script.write_text(textwrap.dedent("""\
        import mindspore as ms
        import numpy as np
        from mindspore import Tensor, ops
        ms.set_device("Ascend", 0)
        a = Tensor(np.ones([1, 2]), ms.float32)
        b = Tensor(np.ones([1, 2]), ms.float32)
        c = ops.add(a, b).asnumpy()
        stats = ms.runtime.memory_stats()
        print(c.tolist(), sorted(k for k in stats if "." not in k))
        import mindspore.hal, mindspore.context, mindspore.device_context.ascend
        from mindspore.common import dtype as mstype
        print(mstype.float32 is ms.float32, mindspore.context.get_context("device_target"))
    """))
    out = compat(str(script), env={"HWRT_SIMULATE": "1"}).stdout.splitlines()
    assert out[0].startswith("[[2.0, 2.0]] ['commom_mem_pool_stats', 'max_allocated_memory'")
    assert out[1] == "True Ascend"


def test_argv_exit_status_and_the_three_forms(tmp_path):
    (tmp_path / "prog.py").write_text("import sys, mindspore\nprint(sys.argv)\n"
                                      "print(sys.path[0])\nsys.exit(3)\n")
    r = compat(str(tmp_path / "prog.py"), "a", "--b", check=False)
    assert r.returncode == 3
    assert r.stdout.splitlines() == [str([str(tmp_path / "prog.py"), "a", "--b"]), str(tmp_path)]
    r = compat("-c", "import sys, mindspore.runtime as mrt; print(sys.argv, mrt.__name__)", "x")
    assert r.stdout.strip() == "['-c', 'x'] hwrt.runtime"
    r = compat("-m", "prog", "z", cwd=tmp_path, check=False)
    assert r.returncode == 3 and "'z'" in r.stdout
    r = compat(check=False)
    assert r.returncode == 2 and "usage" in r.stderr


def test_without_the_entry_point_mindspore_is_not_hwrt(tmp_path):
    """Nothing is installed as `mindspore`: a real install (a stand-in package here) is
    what plain python finds, and only the hwrt.compat process sees hwrt."""
    pkg = tmp_path / "mindspore"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("REAL = True\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(tmp_path), os.path.dirname(os.path.dirname(os.path.abspath(hwrt.__file__)))]))
    code = "import mindspore; print(getattr(mindspore, 'REAL', False), mindspore.__name__)"
    plain = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                           text=True, timeout=60)
    assert plain.stdout.strip() == "True mindspore"
    assert compat("-c", code, env=env).stdout.strip() == "False hwrt"


def test_install_refuses_to_replace_a_real_mindspore():
    saved = sys.modules.get("mindspore")
    sys.modules["mindspore"] = types.ModuleType("mindspore")
    try:
        with pytest.raises(RuntimeError, match="already imported"):
            hwrt.compat.install()
    finally:
        if saved is None:
            del sys.modules["mindspore"]
        else:
            sys.modules["mindspore"] = saved


def test_simulate_option_sets_the_switch():
    r = compat("--simulate=GPU", "-c",
               "import os, mindspore as ms; ms.set_device('GPU'); "
               "print(os.environ['HWRT_SIMULATE'], ms.hal.get_device_name(0))")
    assert r.stdout.strip() == "GPU NVIDIA H200 (simulated)"
    r = compat("-c", "import mindspore as ms; ms.set_device('GPU')", check=False)
    assert r.returncode == 1 and "HWRT_SIMULATE" in r.stderr
