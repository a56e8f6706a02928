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
