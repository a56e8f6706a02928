"""Every public callable of the module, called with assorted wrong arguments, raises a
Python exception or succeeds; none crashes the interpreter (a crash fails this file)."""
import itertools
import random

import numpy as np
import pytest

import hwrt

# small values only: a valid large shape would really be filled in (simulated) memory
VALUES = [None, 0, -1, 1, 3, 1 << 70, -(1 << 70), 1.5, float("nan"), "x", "sim", "", b"x",
          object(), [], (), (2, -3), [1, "a"], {}, {"auto_offload": object()}, hwrt.float16,
          np.float32, np.zeros(2), np.zeros((2, 2), np.complex64), True]


def public_callables():
    import hwrt.common.initializer  # noqa: F401  (MindSpore's module layout, issue 23)
    mods = [hwrt, hwrt.runtime, hwrt.communication, hwrt.profiler, hwrt.hal, hwrt.context,
            hwrt.ops, hwrt.common.initializer, hwrt.device_context.ascend,
            hwrt.device_context.gpu, hwrt.device_context.cpu, hwrt.communication.management,
            hwrt.communication.comm_func]
    seen = set()
    for m in mods:
        for name in dir(m):
            obj = getattr(m, name)
            if name.startswith("__") or not callable(obj) or isinstance(obj, type) and \
                    issubclass(obj, BaseException):
                continue
            if id(obj) in seen or name in ("launch_blocking",):
                continue
            seen.add(id(obj))
            yield f"{m.__name__}.{name}", obj


def instances():
    hwrt.set_device("sim", 0)
    t = hwrt.Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    s = hwrt.runtime.Stream()
    e = hwrt.runtime.Event()
    for obj in (t, s, e, hwrt.float32):
        for name in dir(obj):
            attr = getattr(obj, name)
            if not name.startswith("__") or name in ("__dlpack__", "__dlpack_device__",
                                                     "__array__", "__enter__", "__exit__"):
                if callable(attr):
                    yield f"{type(obj).__name__}.{name}", attr


def test_bad_arguments_raise_and_never_crash(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)                # calls that write files write here
    hwrt.set_device("sim", 0)
    rng = random.Random(1234)
    targets = list(public_callables()) + list(instances())
    calls = 0
    for name, fn in targets:
        combos = [()] + [(v,) for v in VALUES]
        combos += [rng.choice(list(itertools.product(VALUES, repeat=2))) for _ in range(60)]
        combos += [tuple(rng.choice(VALUES) for _ in range(3)) for _ in range(30)]
        for args in combos:
            try:
                fn(*args)
            except Exception:
                pass
            calls += 1
        hwrt.runtime.set_cur_stream(hwrt.runtime.default_stream())   # None is a no-op (MindSpore)
        hwrt.set_device("sim", 0)
    hwrt.runtime.synchronize()
    assert calls > 1000
    # the runtime still works afterwards
    a = hwrt.Tensor(np.arange(4, dtype=np.float32))
    assert np.array_equal((a + a).asnumpy(), np.arange(4, dtype=np.float32) * 2)


def test_a_shape_of_non_ints_is_named_after_the_sequence_is_gone():
    """hwpy_parse_shape named the bad element after dropping the list PySequence_Fast made
    of a non-list shape (a numpy array here): a read of freed memory, which PYTHONMALLOC=
    debug turns into a crash (found by ASan running the fuzz above)."""
    import os
    import subprocess
    import sys
    code = ("import hwrt, numpy as np\nhwrt.set_device('sim')\n"
            "for f in (hwrt.zeros, hwrt.ones):\n"
            "    try:\n        f(np.zeros((2, 2)))\n    except TypeError as e:\n"
            "        print(e)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, PYTHONMALLOC="debug"))
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["shape[0] must be an int, not numpy.ndarray"] * 2
