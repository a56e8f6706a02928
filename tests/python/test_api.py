"""The module beyond the seed's blocks: errors, ops, operators, streams, events, numpy
interop through the buffer protocol and DLPack."""
import gc
import io
import sys

import numpy as np
import pytest

import hwrt
from hwrt import runtime as rt


@pytest.fixture(autouse=True)
def device():
    hwrt.set_device("sim", 0)


# ---- errors ----

def test_error_hierarchy_and_sentences():
    assert issubclass(hwrt.OutOfMemoryError, hwrt.HwrtError)
    assert issubclass(hwrt.HwrtError, RuntimeError)
    assert issubclass(hwrt.InvalidArgumentError, ValueError)
    with pytest.raises(hwrt.OutOfMemoryError) as e:
        hwrt.Tensor(shape=(1 << 40,), dtype=hwrt.uint8)          # 1 TiB
    assert e.value.status_name == "HWRT_ERROR_OUT_OF_MEMORY" and e.value.status == 5
    assert "1.00 TiB" in str(e.value) and "sim device 0" in str(e.value)
    with pytest.raises(hwrt.InvalidDeviceError) as e:
        hwrt.set_device("sim", 99)
    assert "99" in str(e.value)
    with pytest.raises(hwrt.InvalidArgumentError) as e:
        hwrt.add(hwrt.zeros((2, 3)), hwrt.zeros((3, 2)))
    assert "[2,3]" in str(e.value).replace(" ", "") or "2,3" in str(e.value)
    with pytest.raises(hwrt.InvalidArgumentError):
        hwrt.matmul(hwrt.zeros((2, 3)), hwrt.zeros((2, 3)))
    with pytest.raises(hwrt.InvalidArgumentError):
        hwrt.matmul(hwrt.zeros((2, 3, 4)), hwrt.zeros((4, 2)))


@pytest.mark.parametrize("call", [
    lambda: hwrt.Tensor(shape=(-1, 2), dtype=hwrt.float32),
    lambda: hwrt.Tensor(shape=tuple([1] * 9)),
    lambda: hwrt.Tensor(np.zeros(3), dtype="complex256"),
    lambda: hwrt.sum(hwrt.zeros((2, 2)), axis=5),
    lambda: hwrt.set_device("sim", -1),
    lambda: hwrt.set_context(mode="graph"),
    lambda: hwrt.Tensor(np.zeros(3, dtype=">f4")),
])
def test_bad_values_raise_value_errors(call):
    with pytest.raises((ValueError, TypeError)):
        call()


@pytest.mark.parametrize("call", [
    lambda: hwrt.Tensor(shape="abc"),
    lambda: hwrt.Tensor(shape=(2.5,)),
    lambda: hwrt.Tensor(object()),
    lambda: hwrt.Tensor(np.zeros(3, dtype=np.longdouble)),
    lambda: hwrt.Tensor(shape=(2,), dtype=object()),
    lambda: hwrt.add(1, 2),
    lambda: hwrt.relu("x"),
    lambda: hwrt.matmul(hwrt.zeros((2, 2)), np.zeros((2, 2))),
    lambda: hwrt.runtime.synchronize_stream(stream=3),
    lambda: hwrt.runtime.get_memory_info(device_id="0"),
    lambda: hwrt.runtime.StreamCtx(5),
    lambda: hwrt.runtime.Event().elapsed_time(None),
    lambda: hwrt.zeros((2,)).copy_from_host(object()),
    lambda: hwrt.set_device(None),
])
def test_bad_types_raise_type_errors(call):
    with pytest.raises(TypeError):
        call()


# ---- ops ----

def test_ops_match_numpy():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((32, 48)).astype(np.float32)
    b = rng.standard_normal((32, 48)).astype(np.float32)
    c = rng.standard_normal((48, 16)).astype(np.float32)
    ta, tb, tc = hwrt.Tensor(a), hwrt.Tensor(b), hwrt.Tensor(c)
    assert np.allclose(hwrt.add(ta, tb).asnumpy(), a + b)
    assert np.allclose(hwrt.mul(ta, tb).asnumpy(), a * b)
    assert np.allclose(hwrt.matmul(ta, tc).asnumpy(), a @ c, rtol=1e-5, atol=1e-5)
    assert np.array_equal(hwrt.relu(ta).asnumpy(), np.maximum(a, 0))
    assert np.allclose(hwrt.scale(ta, 0.5).asnumpy(), a * 0.5)
    assert np.allclose(hwrt.sum(ta).asnumpy(), a.sum(), rtol=1e-4)
    assert hwrt.sum(ta).shape == ()
    assert np.allclose(hwrt.sum(ta, axis=0).asnumpy(), a.sum(0), rtol=1e-5, atol=1e-5)
    assert np.allclose(ta.sum(axis=-1).asnumpy(), a.sum(1), rtol=1e-5, atol=1e-5)
    h = hwrt.cast(ta, hwrt.float16)
    assert h.dtype == hwrt.float16 and np.array_equal(h.asnumpy(), a.astype(np.float16))
    assert np.array_equal(ta.astype("int32").asnumpy(), a.astype(np.int32))
    bf = ta.astype(hwrt.bfloat16)
    back = bf.asnumpy()
    assert back.dtype == np.float32 and np.allclose(back, a, rtol=1e-2, atol=1e-2)
    assert np.array_equal(hwrt.cast(bf, hwrt.float32).asnumpy(), back)   # exact widening


def test_operators_and_scalars():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = hwrt.Tensor(a)
    assert np.array_equal((t + t).asnumpy(), a + a)
    assert np.array_equal((t * t).asnumpy(), a * a)
    assert np.array_equal((t - t * 2.0).asnumpy(), a - a * 2)
    assert np.array_equal((t + 1).asnumpy(), a + 1)
    assert np.array_equal((1 + t).asnumpy(), a + 1)
    assert np.array_equal((3 * t).asnumpy(), a * 3)
    assert np.array_equal((t - 1.5).asnumpy(), a - 1.5)
    assert np.array_equal((10 - t).asnumpy(), 10 - a)
    assert np.array_equal((-t).asnumpy(), -a)
    assert np.array_equal((t / 2).asnumpy(), a / 2)
    assert np.allclose((t @ hwrt.Tensor(a.T.copy())).asnumpy(), a @ a.T)
    with pytest.raises(ZeroDivisionError):
        t / 0
    with pytest.raises(TypeError):
        t + "x"


def test_out_argument_and_fill():
    a = hwrt.full((4, 4), 3.0)
    out = hwrt.zeros((4, 4))
    r = hwrt.add(a, a, out=out)
    assert r is out and np.array_equal(out.asnumpy(), np.full((4, 4), 6.0, np.float32))
    assert np.array_equal(hwrt.ones(5, dtype=hwrt.int32).asnumpy(), np.ones(5, np.int32))
    assert out.fill(-2) is out and np.array_equal(out.asnumpy(), np.full((4, 4), -2.0, np.float32))


def test_tensor_constructors():
    assert hwrt.Tensor([1.5, 2.5]).dtype == hwrt.float32           # MindSpore's default
    assert hwrt.Tensor([1, 2]).dtype == hwrt.int64
    assert hwrt.Tensor(3.0).shape == ()
    assert hwrt.Tensor(3.0).item() == 3.0
    assert hwrt.Tensor([[1, 2]], dtype=hwrt.float16).dtype == hwrt.float16
    assert hwrt.Tensor(b"\x01\x02").asnumpy().tolist() == [1, 2]
    nc = np.arange(24, dtype=np.int32).reshape(4, 6)[:, ::2]       # not contiguous
    assert np.array_equal(hwrt.Tensor(nc).asnumpy(), nc)
    t = hwrt.Tensor(np.arange(6, dtype=np.float32))
    u = hwrt.Tensor(t)                                              # a device copy
    assert u.data_ptr() != t.data_ptr() and np.array_equal(u.asnumpy(), t.asnumpy())
    assert hwrt.Tensor(t, dtype=hwrt.float64).dtype == hwrt.float64
    assert hwrt.Tensor(shape=(2, 3)).dtype == hwrt.float32
    assert hwrt.Tensor(shape=(0, 3)).asnumpy().shape == (0, 3)
    with pytest.raises(ValueError):
        hwrt.Tensor([1, 2], shape=(3,))
    assert hwrt.float16 == "float16" and hwrt.float16 == "half" and hwrt.bool_ is hwrt.bool
    assert repr(hwrt.float16) == "Float16" and hwrt.float16.itemsize == 2
    assert len(hwrt.zeros((5, 2))) == 5 and hwrt.zeros((5, 2)).size == 10
    assert "shape=[5, 2]" in repr(hwrt.zeros((5, 2)))


def test_copy_from_host_converts_other_dtypes():
    t = hwrt.Tensor(shape=(2, 3), dtype=hwrt.float16)
    t.copy_from_host(np.arange(6, dtype=np.float64).reshape(2, 3))
    assert np.array_equal(t.asnumpy(), np.arange(6, dtype=np.float16).reshape(2, 3))
    with pytest.raises(hwrt.InvalidArgumentError):
        t.copy_from_host(np.zeros(7, np.float16))


# ---- streams and events ----

def test_streams_events_and_timing():
    s1, s2 = rt.Stream(), rt.Stream()
    x = hwrt.Tensor(np.ones((256, 256), np.float32))
    start, end = rt.Event(enable_timing=True), rt.Event(enable_timing=True)
    with rt.StreamCtx(s1):
        start.record()
        y = x
        for _ in range(4):
            y = hwrt.matmul(y, x) * (1.0 / 256)
        end.record(s1)
    end.wait(s2)                               # s2 waits for s1's work
    with rt.StreamCtx(s2):
        assert rt.current_stream() == s2
        z = y + 1.0
    s2.synchronize()
    assert end.query() is True and start.query() is True
    assert start.elapsed_time(end) >= 0.0
    assert np.allclose(z.asnumpy(), 2.0)
    untimed = rt.Event()
    untimed.record()
    untimed.synchronize()
    with pytest.raises(hwrt.InvalidArgumentError):
        untimed.elapsed_time(end)
    rt.set_cur_stream(s1)
    assert rt.current_stream() == s1
    rt.set_cur_stream(None)                      # MindSpore (runtime/stream.py): a no-op
    assert rt.current_stream() == s1
    rt.set_cur_stream(rt.default_stream())       # how MindSpore's docs go back
    assert rt.current_stream() == rt.default_stream()
    s2.wait_stream(s1)
    rt.synchronize()
    assert s1.query() and s2.query()


def test_stream_ctx_nesting_restores():
    s1, s2 = rt.Stream(), rt.Stream()
    with rt.StreamCtx(s1):
        with rt.StreamCtx(s2):
            assert rt.current_stream() == s2
        assert rt.current_stream() == s1
    assert rt.current_stream() == rt.default_stream()


def test_memory_stats_summary_peaks():
    st = rt.memory_stats()
    for k in ("total_allocated_memory", "total_reserved_memory", "max_allocated_memory"):
        assert k in st
    t = hwrt.zeros((1 << 18,))
    assert rt.memory_stats()["total_allocated_memory"] >= t.nbytes
    s = rt.memory_summary()
    assert isinstance(s, str) and len(s) > 20
    try:
        rt.reset_peak_memory_stats()
    except hwrt.NotSupportedError as e:      # a libhwrt without the caching pool
        assert "hwrt_reset_peak_memory_stats" in str(e)
    else:
        assert rt.max_memory_allocated() == rt.memory_allocated()


# ---- numpy interop ----

def test_buffer_protocol_is_a_host_snapshot():
    a = np.arange(20, dtype=np.float32).reshape(4, 5)
    t = hwrt.Tensor(a)
    m = memoryview(t)
    assert m.readonly and m.format == "f" and m.shape == (4, 5)
    assert np.array_equal(np.asarray(t), a)
    assert np.array_equal(np.frombuffer(t, dtype=np.float32), a.ravel())
    with pytest.raises((BufferError, TypeError)):
        io.BytesIO(b"x").readinto(t)                            # asks for a writable buffer
    with pytest.raises(TypeError):
        m[0, 0] = 1.0
    bf = hwrt.Tensor(a, dtype=hwrt.bfloat16)
    assert np.array_equal(np.asarray(bf), a)                     # small ints: exact in bf16


def test_dlpack_shares_device_memory():
    t = hwrt.Tensor(np.arange(10, dtype=np.float32))
    assert t.__dlpack_device__() == (1, 0)                       # sim memory: kDLCPU, device 0
    u = hwrt.from_dlpack(t)
    assert u.data_ptr() == t.data_ptr()                              # no copy
    v = hwrt.from_dlpack(t.__dlpack__(max_version=(1, 0)))
    assert v.data_ptr() == t.data_ptr()
    del t
    gc.collect()
    assert np.array_equal(u.asnumpy(), np.arange(10, dtype=np.float32))   # still alive
    cap = u.__dlpack__()
    hwrt.from_dlpack(cap)
    with pytest.raises(ValueError):
        hwrt.from_dlpack(cap)                                    # consumed
    w = hwrt.from_dlpack(u.__dlpack__(copy=True))
    assert w.data_ptr() != u.data_ptr()
    with pytest.raises(BufferError):
        u.__dlpack__(dl_device=(2, 0))                           # kDLCUDA: not this backend
    unused = u.__dlpack__()                                       # dropped unconsumed
    del unused


def test_dlpack_from_numpy_copies():
    a = np.arange(12, dtype=np.int64).reshape(3, 4)
    t = hwrt.from_dlpack(a)
    assert t.dtype == hwrt.int64 and t.shape == (3, 4)
    a[:] = 0
    assert np.array_equal(t.asnumpy(), np.arange(12).reshape(3, 4))
    with pytest.raises(TypeError):
        hwrt.from_dlpack(object())


def test_no_reference_leaks_on_sources():
    a = np.ones(100, np.float32)
    before = sys.getrefcount(a)
    for _ in range(100):
        t = hwrt.Tensor(a)
        t.copy_from_host(a)
        t.copy_to_host()
    del t
    assert sys.getrefcount(a) == before


def test_profiler_start_stop(tmp_path):
    out = tmp_path / "prof"
    if not hwrt._features["profiler"]:
        with pytest.raises(hwrt.NotSupportedError) as e:
            hwrt.profiler.start(str(out))
        assert "hwrt_prof.h" in str(e.value)
        return
    hwrt.profiler.start(str(out))
    a = hwrt.ones((64, 64))
    (a @ a).asnumpy()
    hwrt.profiler.stop()
    raw = list((out / "raw").iterdir())
    assert raw and raw[0].stat().st_size > 0
    with pytest.raises(hwrt.NotPermittedError):
        hwrt.profiler.stop()


def test_features_reported():
    assert set(hwrt._features) == {"dist", "profiler", "caching_pool", "offload", "graph"}
    assert all(isinstance(v, bool) for v in hwrt._features.values())


def test_threads_have_their_own_current_stream():
    import threading
    results, errors = {}, []

    def work(k):
        try:
            hwrt.set_device("sim", 0)           # the current device is per thread too
            s = rt.Stream()
            x = hwrt.Tensor(np.full((128, 128), float(k), np.float32))
            with rt.StreamCtx(s):
                for _ in range(20):
                    assert rt.current_stream() == s
                    y = hwrt.matmul(x, hwrt.ones((128, 128))) * (1.0 / 128)
                results[k] = y.asnumpy()
        except Exception as e:                   # noqa: BLE001 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(1, 5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for k in range(1, 5):
        assert np.allclose(results[k], float(k))
    assert rt.current_stream() == rt.default_stream()


def test_memory_snapshot(tmp_path):
    import json
    keep = hwrt.zeros((1 << 16,))
    path = tmp_path / "snap.json"
    if not hwrt._features["caching_pool"]:
        with pytest.raises(hwrt.NotSupportedError) as e:
            rt.memory_snapshot(str(path))
        assert "hwrt_memory_snapshot" in str(e.value)
        return
    rt.memory_snapshot(str(path))
    json.loads(path.read_text())                 # valid JSON
    assert path.stat().st_size > 0 and keep.nbytes > 0
