"""Errors inside destructors: a Tensor whose hwrt_tensor_release fails (a DLPack-imported
tensor after a sticky device fault) is reported once through sys.unraisablehook and the
interpreter goes on; DLPack capsule destructors keep the exception a consumer is raising
(numpy.from_dlpack refusing bfloat16 is numpy's RuntimeError, not a SystemError)."""
import os
import subprocess
import sys

import numpy as np
import pytest

import hwrt

# Run in a child: before the fix the dealloc recursed until the interpreter segfaulted.
CHILD = r"""
import sys
import numpy as np
import hwrt
seen = []
if sys.argv[1:] != ["default-hook"]:
    sys.unraisablehook = lambda u: seen.append((type(u.exc_value).__name__, str(u.exc_value),
                                                u.object))
hwrt.set_device("sim", 0)
a = hwrt.Tensor(np.arange(16, dtype=np.float32))
b = hwrt.from_dlpack(a)              # imported: its release waits for its queued work
b2 = [hwrt.from_dlpack(a)]
c = b + b                            # the injected kernel fault (sticky)
c2 = b2[0] + b2[0]                   # skipped by the faulted device
del c, c2
try:
    hwrt.runtime.synchronize()
except hwrt.DeviceError:
    pass
live = hwrt._live_tensors()
del b                                # release fails: reported, not raised


def drop_while_raising(holder):
    t = holder.pop()                 # the last reference: freed while KeyError propagates
    raise KeyError("mine")


try:
    drop_while_raising(b2)
except KeyError as e:
    mine = str(e)
else:
    mine = None
print("seen", len(seen))
for name, msg, obj in seen:
    print("unraisable", name, obj is None, msg)
print("kept", mine)
print("live", live - hwrt._live_tensors())
"""


def test_failed_release_in_dealloc_is_reported_once():
    env = dict(os.environ, HWRT_SIM_FAULTS="kernel:nth=1")
    r = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, (r.returncode, r.stdout, r.stderr[-2000:])
    lines = r.stdout.splitlines()
    assert "seen 2" in lines, r.stdout           # once per tensor, no recursion
    un = [l for l in lines if l.startswith("unraisable")]
    assert len(un) == 2, un
    for u in un:
        assert u.startswith("unraisable DeviceError True "), un
        assert "while freeing an hwrt.Tensor" in u and "sticky fault" in u, un
    assert "kept 'mine'" in lines, r.stdout      # the exception in flight survived
    assert "live 2" in lines, r.stdout           # each wrapper freed exactly once


def test_failed_release_with_the_default_hook():
    env = dict(os.environ, HWRT_SIM_FAULTS="kernel:nth=1")
    r = subprocess.run([sys.executable, "-c", CHILD, "default-hook"], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, (r.returncode, r.stdout, r.stderr[-2000:])
    assert r.stderr.count("while freeing an hwrt.Tensor") == 2, r.stderr[-4000:]
    assert "InvalidHandleError" not in r.stderr and "repr() failed" not in r.stderr
    assert "kept 'mine'" in r.stdout.splitlines(), r.stdout


def test_numpy_from_dlpack_keeps_numpy_error(sim):
    t = hwrt.Tensor(np.arange(4, dtype=np.float32), dtype=hwrt.bfloat16)
    with pytest.raises(Exception) as ei:
        np.from_dlpack(t)        # numpy has no bfloat16 and says so
    assert not isinstance(ei.value, SystemError), repr(ei.value)
    assert "dtype" in str(ei.value).lower(), repr(ei.value)
    assert (t.asnumpy() == np.arange(4)).all()   # and the export let go of t cleanly


@pytest.mark.parametrize("max_version", [None, (1, 0)])
def test_capsule_dropped_while_raising_keeps_the_error(sim, max_version):
    t = hwrt.Tensor(np.arange(4, dtype=np.float32))
    # the capsule is on the interpreter's value stack when 1 / 0 raises: its destructor
    # runs while ZeroDivisionError is the pending exception
    with pytest.raises(ZeroDivisionError):
        [t.__dlpack__(max_version=max_version), 1 / 0]
    assert (t.asnumpy() == np.arange(4)).all()
