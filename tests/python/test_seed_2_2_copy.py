"""Seed 2.2: host -> device -> host round trips are exact."""
import numpy as np

import hwrt
import seed_blocks as seed


def test_2_2_round_trip_is_exact():
    hwrt.set_device("sim", 0)
    base = hwrt.runtime.memory_allocated()
    ns = seed.run(seed.S2_2_COPY)
    host_np, back_np, host_out = ns["host_np"], ns["back_np"], ns["host_out"]
    for arr in (back_np, host_out):
        assert isinstance(arr, np.ndarray)
        assert arr.dtype == np.float16 and arr.shape == (8, 128)
        assert arr.tobytes() == host_np.tobytes()          # bit-exact, NaN-safe
    t1, t2 = ns["dev_tensor"], ns["dev_tensor2"]
    assert t1.shape == t2.shape == (8, 128)
    assert t1.dtype == t2.dtype == hwrt.float16
    assert t1.nbytes == host_np.nbytes
    # both tensors live in device memory and count as allocated
    assert hwrt.runtime.memory_allocated() - base >= 2 * host_np.nbytes
    del ns, t1, t2, arr
    assert hwrt.runtime.memory_allocated() == base


def test_2_2_host_buffer_is_reusable_after_copy_from_host():
    hwrt.set_device("sim", 0)
    host = np.arange(1024, dtype=np.float32).reshape(8, 128)
    t = hwrt.Tensor(shape=(8, 128), dtype=hwrt.float32)
    t.copy_from_host(host)
    host[:] = -1                                           # returns once host was read
    assert np.array_equal(t.copy_to_host(), np.arange(1024, dtype=np.float32).reshape(8, 128))


def test_2_2_every_dtype_round_trips():
    hwrt.set_device("sim", 0)
    rng = np.random.default_rng(1)
    for dt in ("float16", "float32", "float64", "int8", "uint8", "int32", "int64", "bool"):
        a = (rng.standard_normal((3, 5, 7)) * 50).astype(dt)
        t = hwrt.Tensor(a)
        assert str(t.dtype) == dt
        b = t.asnumpy()
        assert b.dtype == a.dtype and b.shape == a.shape and b.tobytes() == a.tobytes()


def test_2_2_copy_to_host_into_a_buffer_and_sizes_checked():
    hwrt.set_device("sim", 0)
    a = np.linspace(-1, 1, 256, dtype=np.float32)
    t = hwrt.Tensor(a)
    out = np.empty_like(a)
    assert t.copy_to_host(out) is out and np.array_equal(out, a)
    try:
        t.copy_to_host(np.empty(255, np.float32))
    except hwrt.InvalidArgumentError as e:
        assert "1020 bytes" in str(e) and "1024" in str(e)
    else:
        raise AssertionError("a short output buffer was accepted")
