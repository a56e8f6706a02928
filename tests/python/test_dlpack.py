"""DLPack 1.0 with real consumers (issue 20 item 3): Debian's numpy and torch read sim
tensors in place (kDLCPU: the sim's memory is host memory), every hwrt dtype crosses both
ways including bfloat16, __dlpack__ follows the array API (max_version, dl_device, copy),
and an opencl tensor is kDLOpenCL."""
import ctypes
import os
import subprocess
import sys

import numpy as np
import pytest

import hwrt

import torch  # Debian python3-torch: a real consumer (issue 20 item 3)

kDLCPU, kDLOpenCL = 1, 4
FLAG_READ_ONLY, FLAG_IS_COPIED = 1, 2

_api = ctypes.pythonapi
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int),
                ("device_id", ctypes.c_int32), ("ndim", ctypes.c_int32),
                ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.c_void_p),
                ("byte_offset", ctypes.c_uint64)]


class Versioned(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32),
                ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p),
                ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]


class versioned:
    """The DLManagedTensorVersioned inside a capsule, which it keeps alive."""
    def __init__(self, cap):
        assert _api.PyCapsule_IsValid(cap, b"dltensor_versioned")
        self.cap = cap
        self.m = Versioned.from_address(_api.PyCapsule_GetPointer(cap, b"dltensor_versioned"))

    def __getattr__(self, name):
        return getattr(self.m, name)


DTYPES = [(hwrt.float32, torch.float32), (hwrt.float16, torch.float16),
          (hwrt.bfloat16, torch.bfloat16), (hwrt.float64, torch.float64),
          (hwrt.int8, torch.int8), (hwrt.uint8, torch.uint8), (hwrt.int32, torch.int32),
          (hwrt.int64, torch.int64)]


def test_sim_is_kdlcpu_and_numpy_reads_in_place(sim):
    t = hwrt.Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert t.__dlpack_device__() == (kDLCPU, 0)
    a = np.from_dlpack(t)
    assert a.ctypes.data == t.data_ptr()                     # zero copy
    assert np.array_equal(a, np.arange(6).reshape(2, 3))
    assert not a.flags.writeable                             # numpy 1.24 marks imports read-only
    t.copy_from_host(np.full((2, 3), 7.0, np.float32))       # hwrt's write shows in the view
    assert (a == 7.0).all()


def test_torch_reads_in_place_both_ways(sim):
    t = hwrt.Tensor(np.arange(12, dtype=np.float32).reshape(3, 4))
    x = torch.from_dlpack(t)
    assert x.data_ptr() == t.data_ptr() and x.shape == (3, 4) and x.device.type == "cpu"
    x[0, 0] = 42.0
    assert t.asnumpy()[0, 0] == 42.0
    u = hwrt.from_dlpack(x)                                  # hwrt's memory, seen through torch
    assert u.data_ptr() == t.data_ptr()
    del t, u
    assert float(x[0, 0]) == 42.0                            # the export keeps the memory


@pytest.mark.parametrize("hdt,tdt", DTYPES, ids=[str(d[1]) for d in DTYPES])
def test_every_dtype_both_ways(sim, hdt, tdt):
    ref = torch.arange(-3, 5).to(tdt) if tdt != torch.uint8 else torch.arange(8, dtype=tdt)
    h = hwrt.from_dlpack(ref)                                # torch -> hwrt: a copy
    assert h.dtype == hdt and h.shape == (8,)
    assert h.data_ptr() != ref.data_ptr()
    back = torch.from_dlpack(h)                              # hwrt -> torch: in place
    assert back.dtype == tdt and back.data_ptr() == h.data_ptr()
    assert torch.equal(back, ref)


def test_bfloat16_values_exact(sim):
    ref = torch.tensor([1.5, -2.25, 3.0e38, 1.0e-38, 0.0], dtype=torch.bfloat16)
    h = hwrt.from_dlpack(ref)
    assert h.dtype == hwrt.bfloat16
    assert torch.equal(torch.from_dlpack(h), ref)
    assert np.array_equal(h.asnumpy(), ref.float().numpy())


def test_dtypes_hwrt_has_not_are_refused_by_name(sim):
    # complex32 (torch's ComplexHalf) has no hwrt dtype; int16 and complex64 do (issue 23)
    with pytest.warns(UserWarning):
        half_complex = torch.ones(3, dtype=torch.complex32)
    with pytest.raises(hwrt.NotSupportedError, match="code 5 bits 32"):
        hwrt.from_dlpack(half_complex)
    assert hwrt.from_dlpack(torch.ones(3, dtype=torch.int16)).dtype == hwrt.int16
    assert hwrt.from_dlpack(torch.ones(3, dtype=torch.complex64)).dtype == hwrt.complex64


def test_torch_cpu_tensor_is_copied(sim):
    x = torch.arange(10, dtype=torch.float32)
    h = hwrt.from_dlpack(x)
    x[:] = 0
    assert np.array_equal(h.asnumpy(), np.arange(10, dtype=np.float32))


def test_max_version_selects_the_capsule(sim):
    t = hwrt.Tensor(np.ones(4, np.float32))
    legacy = t.__dlpack__()
    assert _api.PyCapsule_IsValid(legacy, b"dltensor")
    v = versioned(t.__dlpack__(max_version=(1, 0)))
    assert (v.major, v.minor) == (1, 0) and v.flags == 0
    assert v.dl_tensor.device_type == kDLCPU and v.dl_tensor.data == t.data_ptr()
    assert (v.dl_tensor.code, v.dl_tensor.bits, v.dl_tensor.lanes) == (2, 32, 1)
    assert _api.PyCapsule_IsValid(t.__dlpack__(max_version=(0, 8)), b"dltensor")
    with pytest.raises(TypeError):
        t.__dlpack__(max_version=1)


def test_copy_and_dl_device(sim):
    t = hwrt.Tensor(np.arange(4, dtype=np.float32))
    c = versioned(t.__dlpack__(max_version=(1, 0), copy=True))
    assert c.flags & FLAG_IS_COPIED and c.dl_tensor.data != t.data_ptr()
    same = versioned(t.__dlpack__(max_version=(1, 0), dl_device=(kDLCPU, 0), copy=False))
    assert same.dl_tensor.data == t.data_ptr() and same.flags == 0   # sim: already kDLCPU
    with pytest.raises(BufferError, match="dl_device"):
        t.__dlpack__(dl_device=(2, 0))
    with pytest.raises(TypeError):
        t.__dlpack__(copy="yes")


OPENCL_CHILD = r"""
import numpy as np, hwrt, torch, ctypes, sys
sys.path.insert(0, sys.argv[1])
from test_dlpack import versioned, kDLCPU, kDLOpenCL, FLAG_IS_COPIED
hwrt.set_device("opencl", 0)
t = hwrt.Tensor(np.arange(8, dtype=np.float32))
assert t.__dlpack_device__() == (kDLOpenCL, 0), t.__dlpack_device__()
v = versioned(t.__dlpack__(max_version=(1, 0)))
assert v.dl_tensor.device_type == kDLOpenCL and v.dl_tensor.data != t.data_ptr()  # a cl_mem
u = hwrt.from_dlpack(t)
assert u.data_ptr() == t.data_ptr()                   # own export: shared
w = hwrt.from_dlpack(t.__dlpack__())                  # legacy capsule of our own
assert w.data_ptr() == t.data_ptr()
try:
    np.from_dlpack(t)
    raise SystemExit("numpy read device memory")
except RuntimeError as e:
    assert "device" in str(e).lower(), e
try:
    t.__dlpack__(dl_device=(kDLCPU, 0), copy=False)
    raise SystemExit("copy=False to the host did not raise")
except BufferError as e:
    assert "copy" in str(e), e
h = versioned(t.__dlpack__(max_version=(1, 0), dl_device=(kDLCPU, 0)))
assert h.dl_tensor.device_type == kDLCPU and h.flags & FLAG_IS_COPIED
x = torch.from_dlpack(hwrt.Tensor(np.arange(3, dtype=np.float32)).__dlpack__(dl_device=(kDLCPU, 0), copy=True))
assert x.tolist() == [0.0, 1.0, 2.0], x
print("opencl ok")
"""


def test_opencl_is_kdlopencl():
    env = dict(os.environ, POCL_DEVICES="pthread")
    r = subprocess.run([sys.executable, "-c", OPENCL_CHILD, os.path.dirname(__file__)],
                       env=env, capture_output=True, text=True, timeout=240)
    if r.returncode != 0 and "UNAVAILABLE" in r.stderr.upper() and "opencl" in r.stderr.lower():
        pytest.fail("opencl backend unavailable (PoCL missing?): " + r.stderr[-500:])
    assert r.returncode == 0 and "opencl ok" in r.stdout, (r.stdout, r.stderr[-3000:])
