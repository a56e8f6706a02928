"""MindSpore's Tensor methods (issue 23, item 5), following
mindspore/python/mindspore/common/tensor.py and common/initializer.py."""
import os

os.environ["HWRT_SIMULATE"] = "Ascend"

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import hwrt as ms  # noqa: E402
from hwrt.common.initializer import (Constant, Initializer, Normal, One,  # noqa: E402
                                     TruncatedNormal, Uniform, XavierUniform, Zero, initializer)


@pytest.fixture(autouse=True)
def ascend():
    ms.set_device("Ascend", 0)


# tensor.py __float__ / __int__ / __bool__ / __index__: one-element tensors only
def test_python_scalars_from_one_element_tensors():
    assert float(ms.Tensor([2.5])) == 2.5 and int(ms.Tensor(3)) == 3
    assert bool(ms.Tensor(1.0)) is True and bool(ms.Tensor([0])) is False
    assert [10, 20, 30][ms.Tensor(1, dtype=ms.int32)] == 20
    for conv in (float, int, bool):
        with pytest.raises(ValueError):
            conv(ms.Tensor([1.0, 2.0]))
    with pytest.raises(ValueError, match="integer tensors"):
        [1, 2][ms.Tensor(1.0)]


# tensor.py __str__ (str of asnumpy) and __repr__ (TensorPy: shape, dtype and values)
def test_print_and_repr_show_values():
    t = ms.Tensor(np.array([[1, 2], [3, 4]], np.int32))
    assert str(t) == str(np.array([[1, 2], [3, 4]], np.int32))
    assert repr(t) == "Tensor(shape=[2, 2], dtype=Int32, value=\n[[1, 2],\n [3, 4]])"
    assert repr(ms.Tensor([1.5, 2.0])) == "Tensor(shape=[2], dtype=Float32, value= [1.5, 2. ])"
    assert repr(ms.Tensor(2.0)) == "Tensor(shape=[], dtype=Float32, value= 2.)"


# numpy takes a Tensor inside a list (np.array([1, 2, Tensor(3)]))
def test_numpy_array_of_a_list_with_a_tensor():
    a = np.array([1, 2, ms.Tensor(3)])
    assert a.tolist() == [1, 2, 3]
    assert np.array([ms.Tensor([1.0, 2.0]), ms.Tensor([3.0, 4.0])]).shape == (2, 2)


# tensor.py strides, contiguous, is_contiguous, data_ptr()
def test_strides_contiguous_data_ptr():
    t = ms.Tensor(np.zeros((2, 3, 4), np.int64))
    assert t.strides == (96, 32, 8)
    assert ms.Tensor(np.zeros((3,), np.float16)).strides == (2,)
    assert t.contiguous() is t and t.is_contiguous() is True
    assert isinstance(t.data_ptr(), int) and t.data_ptr() != 0


# tensor.py from_numpy: same dtype and values
def test_from_numpy():
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    t = ms.Tensor.from_numpy(a)
    assert t.dtype == ms.int32 and np.array_equal(t.asnumpy(), a)
    with pytest.raises(TypeError):
        ms.Tensor.from_numpy([1, 2])


# tensor.py copy_, assign_value (x takes y's shape), set_dtype
def test_copy_assign_value_set_dtype():
    w = ms.Tensor(shape=(2,), dtype=ms.float32)
    assert w.copy_(ms.Tensor(np.array([7, 8], np.int32))) is w
    assert w.asnumpy().tolist() == [7.0, 8.0] and w.dtype == ms.float32
    with pytest.raises(ValueError):
        w.copy_(ms.Tensor([1.0, 2.0, 3.0]))
    x = ms.Tensor([1, 2, 3, 4])
    y = ms.Tensor(np.array([[1, 2], [3, 4]]))
    assert x.assign_value(y) is x
    assert x.shape == (2, 2) and x.asnumpy().tolist() == [[1, 2], [3, 4]]
    y.fill(0)                                  # a copy, not y's memory
    assert x.asnumpy().tolist() == [[1, 2], [3, 4]]
    z = ms.Tensor([1.5, -2.5])
    assert z.set_dtype(ms.int32) is z and z.dtype == ms.int32
    assert z.asnumpy().tolist() == [1, -2]
    with pytest.raises(TypeError):
        x.assign_value([1, 2])


# tensor.py move_to(to, blocking=True): ValueError for a bad blocking or target
def test_move_to():
    t = ms.Tensor([1.0, 2.0])
    u = t.move_to("Ascend")
    assert u is not t and u.asnumpy().tolist() == [1.0, 2.0] and u.location == "device"
    assert t.move_to("Ascend", blocking=False).asnumpy().tolist() == [1.0, 2.0]
    with pytest.raises(ValueError):
        t.move_to("Ascend", blocking=1)
    with pytest.raises(ValueError):
        t.move_to("NPU")
    with pytest.raises(RuntimeError, match="one device target per process"):
        t.move_to("GPU")
    if ms._features["offload"]:
        ms.set_context(memory_offload="ON")
        ms.set_offload_context({"offload_cpu_size": "1GB"})
        try:
            h = t.move_to("CPU")
            assert h.location == "host"
            assert (h + h).asnumpy().tolist() == [2.0, 4.0]      # brought back for the op
        finally:
            ms.set_context(memory_offload="OFF")


# initializer.py: Zero, One, Constant, Normal, Uniform, TruncatedNormal, XavierUniform,
# initializer(); tensor.py has_init / init_data
def test_init_and_init_data():
    a = ms.Tensor(init=One(), shape=(2, 3), dtype=ms.float32)
    assert a.has_init and isinstance(a.init, One)
    assert a.init_data() is a and not a.has_init
    assert a.asnumpy().tolist() == [[1.0] * 3] * 2
    b = ms.Tensor(init=Constant(5), shape=[2], dtype=ms.int32)
    assert b.asnumpy().tolist() == [5, 5] and not b.has_init     # a read fills it
    assert initializer("zeros", 3).asnumpy().tolist() == [0.0, 0.0, 0.0]
    assert initializer(Zero(), [2, 2], ms.float16).dtype == ms.float16
    assert initializer(2.5, (2,)).asnumpy().tolist() == [2.5, 2.5]
    n = initializer(Normal(sigma=2.0, mean=1.0), (20000,)).asnumpy()
    assert abs(n.mean() - 1.0) < 0.1 and abs(n.std() - 2.0) < 0.1
    u = initializer(Uniform(scale=0.5), (5000,)).asnumpy()
    assert u.min() >= -0.5 and u.max() <= 0.5 and u.std() > 0.2
    tn = initializer(TruncatedNormal(sigma=1.0), (5000,)).asnumpy()
    assert tn.min() >= -2.0 and tn.max() <= 2.0
    xu = initializer(XavierUniform(gain=2), (30, 20)).asnumpy()
    assert np.abs(xu).max() <= 2 * (6 / 50) ** 0.5 and np.abs(xu).max() > 0.5
    assert float(ms.Tensor(init=One(), shape=(1,), dtype=ms.float32)) == 1.0
    assert isinstance(Normal(), Initializer) and Normal(0.5).sigma == 0.5
    with pytest.raises(TypeError):
        Constant()                                # value is required
    with pytest.raises(TypeError):
        Normal(scale=1)
    with pytest.raises(TypeError):
        ms.Tensor(init="ones", shape=(2,))
    with pytest.raises(ValueError):
        ms.Tensor(init=One())                     # shape needed
    with pytest.raises(TypeError):
        initializer(object(), (2,))
    with pytest.raises(ValueError):
        initializer(XavierUniform(), (3,)).init_data()


# tensor.py __matmul__ / ops.matmul accept 2-D by 1-D (and 1-D by 2-D)
def test_matmul_matrix_vector():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    v = np.array([1.0, 2.0, 3.0], np.float32)
    assert np.allclose((ms.Tensor(a) @ ms.Tensor(v)).asnumpy(), a @ v)
    assert (ms.Tensor(a) @ ms.Tensor(v)).shape == (2,)
    c = np.arange(6, dtype=np.float32).reshape(3, 2)
    assert np.allclose(ms.ops.matmul(ms.Tensor(v), ms.Tensor(c)).asnumpy(), v @ c)
    with pytest.raises(ValueError):
        ms.Tensor(a) @ ms.Tensor(np.ones(4, np.float32))
    # tests/st/hal/test_hal_stream.py::test_runtime_synchronize uses exactly this
    s1, s2 = ms.runtime.Stream(), ms.runtime.Stream()
    x = ms.Tensor(np.ones([1, 2]), ms.float32)
    y = ms.Tensor(np.ones([2, ]), ms.float32)
    with ms.runtime.StreamCtx(s1):
        r1 = ms.ops.matmul(x, y)
    with ms.runtime.StreamCtx(s2):
        r2 = ms.ops.matmul(x, y)
    ms.runtime.synchronize()
    assert r1.asnumpy().tolist() == [2.0] and r2.asnumpy().tolist() == [2.0]


# mindspore/python/mindspore/common/dtype.py: int16 (short), uint16 (ushort), uint32
# (uintc), uint64 (uintp), complex64, complex128, and dtype_to_nptype's numpy types; the
# values round-trip exactly through Tensor(array), asnumpy, the buffer protocol, DLPack
# and a same-dtype copy_ (uint64's top values would not survive a detour through double)
MORE_DTYPES = [
    ("int16", np.int16, "Int16", [-32768, -1, 0, 32767]),
    ("uint16", np.uint16, "UInt16", [0, 1, 40000, 65535]),
    ("uint32", np.uint32, "UInt32", [0, 1, 3000000000, 4294967295]),
    ("uint64", np.uint64, "UInt64", [0, 2**53 + 1, 2**63, 2**64 - 1]),
    ("complex64", np.complex64, "Complex64", [1 + 2j, -0.5j, 3.25, -1e30 + 1e-30j]),
    ("complex128", np.complex128, "Complex128", [1 + 2j, -0.5j, 1e300 - 1e-300j, 2**60 + 1j]),
]


@pytest.mark.parametrize("name,npt,pretty,vals", MORE_DTYPES)
def test_more_dtypes_are_carried(name, npt, pretty, vals):
    dt = getattr(ms, name)
    assert getattr(ms.dtype, name) is dt and repr(dt) == pretty and str(dt) == name
    assert dt.itemsize == np.dtype(npt).itemsize and dt == name
    a = np.array(vals, dtype=npt).reshape(2, 2)
    t = ms.Tensor(a)
    assert t.dtype is dt and t.shape == (2, 2) and t.nbytes == a.nbytes
    for back in (t.asnumpy(), np.asarray(t), np.array(memoryview(t)), t.copy_to_host()):
        assert back.dtype == npt and np.array_equal(back, a)
    assert ms.Tensor(a, dtype=dt).dtype is dt and ms.Tensor.from_numpy(a).dtype is dt
    e = ms.Tensor(shape=(2, 2), dtype=dt)
    assert e.dtype is dt and np.array_equal(e.copy_from_host(a).asnumpy(), a)
    c = ms.Tensor(shape=(2, 2), dtype=npt).copy_(t)            # the same dtype: a byte copy
    assert np.array_equal(c.asnumpy(), a)
    assert np.array_equal(ms.from_dlpack(a).asnumpy(), a)       # numpy's capsule
    assert ms.from_dlpack(t).dtype is dt                        # hwrt's own, no copy
    assert np.array_equal(ms.Tensor(shape=(2, 2), dtype=dt).assign_value(t).asnumpy(), a)
    assert np.array_equal(t[1].asnumpy(), a[1])
    assert repr(t[0, 0]).startswith(f"Tensor(shape=[], dtype={pretty}, value=")


def test_more_dtype_aliases_and_scalars():
    # common/dtype.py: byte = int8, short = int16, intc = int32, intp = int64, ubyte =
    # uint8, ushort = uint16, uintc = uint32, uintp = uint64
    for alias, dt in [("byte", ms.int8), ("short", ms.int16), ("intc", ms.int32),
                      ("intp", ms.int64), ("ubyte", ms.uint8), ("ushort", ms.uint16),
                      ("uintc", ms.uint32), ("uintp", ms.uint64)]:
        assert getattr(ms, alias) is dt and getattr(ms.dtype, alias) is dt
    assert int(ms.Tensor(np.array([2**64 - 1], np.uint64))) == 2**64 - 1
    assert [10, 20, 30][ms.Tensor(np.uint16(2))] == 30           # __index__ of an integer
    assert complex(ms.Tensor(np.complex64(1 - 2j)).item()) == 1 - 2j
    assert ms.Tensor([1 + 1j, 2]).dtype is ms.complex128       # numpy's complex
    assert repr(ms.Tensor(np.array([1, 2], np.uint16))) == \
        "Tensor(shape=[2], dtype=UInt16, value= [1, 2])"


# tensor.py: ops on these dtypes are a backend matter; hwrt's backends have no kernels
# for them, and the refusal names the op, the operand, the dtype and what ops run on
def test_ops_refuse_dtypes_without_kernels():
    a = np.array([1, 2, 3, 4], np.uint16)
    u = ms.Tensor(a)
    with pytest.raises(ms.NotSupportedError,
                       match=r"hwrt_op_add: input a has dtype uint16.*ops run on float32"):
        u + u
    with pytest.raises(ms.NotSupportedError, match="uint16"):
        ms.ops.relu(u)
    with pytest.raises(ms.NotSupportedError, match="complex64"):
        ms.ops.zeros((2,), ms.complex64)
    with pytest.raises(ms.NotSupportedError, match="uint64"):
        ms.Tensor(np.ones((2, 2), np.uint64)).sum()
    assert np.array_equal(u.asnumpy(), a)                      # nothing was written


# tensor.py Tensor.__getitem__: ints (negative too), slices, tuples, Ellipsis, None and
# boolean masks give Tensors of the same dtype (a 0-D one for one element); the type is
# complete before PyType_Ready, so its __dict__ has the slot wrappers (__getitem__,
# __repr__, __str__, __len__) and from_numpy from the start
def test_getitem_and_a_complete_type():
    for k in ("__getitem__", "__len__", "__repr__", "__str__", "__float__", "from_numpy",
              "asnumpy", "strides", "__new__"):
        assert k in ms.Tensor.__dict__, k
    a = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    t = ms.Tensor(a)
    assert ms.Tensor.__getitem__(t, 1).shape == (3, 4)
    for key in (0, -1, (1, 2), (1, -1, 3), slice(None, None, -1), (slice(None), 1),
                (Ellipsis, 0), (0, None), a > 10, (1, slice(0, 3, 2), slice(1, None))):
        r = t[key]
        assert isinstance(r, ms.Tensor) and r.dtype is ms.int32, key
        assert np.array_equal(r.asnumpy(), a[key]), key
    assert t[1, 2, 3].shape == () and int(t[1, 2, 3]) == 23
    with pytest.raises(IndexError):
        t[2]
    with pytest.raises(IndexError):
        t[0, 0, 0, 0]
    with pytest.raises(IndexError):
        ms.Tensor(5)[0]
    assert int(ms.Tensor(5)[()]) == 5
    b = ms.Tensor(np.array([1.5, -2.0], np.float32)).astype(ms.bfloat16)
    assert b[1].dtype is ms.bfloat16 and float(b[1]) == -2.0
    assert [int(x) for x in ms.Tensor([4, 5, 6])] == [4, 5, 6]


# tensor.py astype / set_dtype / Tensor(x, dtype=) / copy_ between these dtypes and the
# others: the device's cast where it has a kernel, numpy's astype on the host copy where
# none does (MindSpore's Cast converts every pair)
def test_conversions_of_more_dtypes():
    a = np.array([[1, 40000], [65535, 7]], np.uint16)
    u = ms.Tensor(a)
    f = u.astype(ms.float32)
    assert f.dtype is ms.float32 and np.array_equal(f.asnumpy(), a.astype(np.float32))
    assert np.array_equal((f + f).asnumpy(), 2 * a.astype(np.float32))   # ops on the result
    back = f.astype(ms.uint16)
    assert back.dtype is ms.uint16 and np.array_equal(back.asnumpy(), a)
    assert ms.Tensor(np.zeros(3), dtype="complex").dtype is ms.complex128
    c = ms.Tensor(np.array([1.5, -2.0], np.float32), dtype=ms.complex64)
    assert np.array_equal(c.asnumpy(), np.array([1.5, -2.0], np.complex64))
    assert u.astype(ms.bfloat16).asnumpy().tolist() == [[1.0, 39936.0], [65536.0, 7.0]]
    w = ms.Tensor(shape=(2, 2), dtype=ms.int64).copy_(u)
    assert np.array_equal(w.asnumpy(), a.astype(np.int64))
    s = ms.Tensor(np.array([3, -4], np.int32))
    assert s.set_dtype(ms.int16) is s and s.dtype is ms.int16 and s.asnumpy().tolist() == [3, -4]
    assert ms.ops.cast(ms.Tensor(np.array([2**40], np.int64)), ms.uint64).asnumpy().tolist() == [2**40]
