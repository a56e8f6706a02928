"""Stream and Event as MindSpore defines them (issue 23, item 7), and MindSpore's own
stream/event tests (tests/st/hal/test_hal_stream.py, test_hal_event.py) with hwrt's ops
in place of mindspore.ops (ops.matmul -> @, ops.abs -> relu of a non-negative input)."""
import os

os.environ["HWRT_SIMULATE"] = "Ascend"

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import hwrt as ms  # noqa: E402

rt = ms.runtime


@pytest.fixture(autouse=True)
def ascend():
    ms.set_device("Ascend", 0)
    yield
    rt.set_cur_stream(rt.default_stream())


# runtime/stream.py Stream.__init__(priority=0, **kwargs): stream=, stream_id=, .id
def test_stream_keywords_and_id():
    assert rt.default_stream().id == 0 and rt.current_stream().id == 0
    s = rt.Stream()
    t = rt.Stream(priority=-1)
    assert s.id >= 1 and t.id == s.id + 1 and s.stream_id() == s.id
    assert rt.Stream(stream=s) is s
    assert rt.Stream(stream_id=s.id) is s and rt.Stream(stream_id=0) == rt.default_stream()
    assert rt.Stream(stream=None).id > t.id                # None: a new stream
    assert rt.Stream(stream_id=None).id > t.id             # None (the signature's default) too
    with pytest.raises(TypeError):
        rt.Stream(priority="high")
    with pytest.raises(TypeError):
        rt.Stream(stream_id="1")
    with pytest.raises(TypeError):
        rt.Stream(stream=3)
    with pytest.raises(ValueError, match="no live stream"):
        rt.Stream(stream_id=10 ** 6)
    with pytest.raises(TypeError):
        rt.Stream(0, s)                                     # stream= is keyword-only
    assert "stream id:%d" % s.id in repr(s) and "device_name=Ascend" in repr(s)
    sid = t.id
    del t
    with pytest.raises(ValueError):
        rt.Stream(stream_id=sid)                            # dropped streams are gone


# runtime/stream.py __eq__: "the argument 'other' should be Stream"
def test_comparing_with_a_non_stream_raises_type_error():
    s = rt.Stream()
    for other in (None, 0, "s", rt.Event()):
        with pytest.raises(TypeError, match="should be Stream"):
            s == other  # noqa: B015
        with pytest.raises(TypeError):
            s != other  # noqa: B015
    assert s == rt.Stream(stream=s) and s != rt.default_stream()
    assert hash(rt.default_stream()) == hash(rt.default_stream())
    assert len({s, rt.Stream(stream=s)}) == 1


# runtime/stream.py StreamCtx / set_cur_stream: no-ops for None; TypeError otherwise
def test_stream_ctx_none_and_set_cur_stream_none():
    s = rt.Stream()
    rt.set_cur_stream(s)
    with rt.StreamCtx(None):
        assert rt.current_stream() == s
    assert rt.current_stream() == s
    rt.set_cur_stream(None)
    assert rt.current_stream() == s
    for bad in (1, "s"):
        with pytest.raises(TypeError):
            rt.StreamCtx(bad)
        with pytest.raises(TypeError):
            rt.set_cur_stream(bad)


# runtime/event.py Event.__init__ / record / wait / elapsed_time argument checks
def test_event_argument_types():
    assert rt.Event(True, False) is not None
    for kw in ({"enable_timing": 1}, {"blocking": "yes"}, {"enable_timing": None}):
        with pytest.raises(TypeError, match="must be a bool"):
            rt.Event(**kw)
    ev = rt.Event()
    for call in (lambda: ev.record(1), lambda: ev.wait("s"), lambda: ev.elapsed_time(1),
                 lambda: rt.Stream().record_event(1), lambda: rt.Stream().wait_event(None),
                 lambda: rt.Stream().wait_stream(ev)):
        with pytest.raises(TypeError):
            call()


# ---- tests/st/hal/test_hal_stream.py, with hwrt ops ----

def test_runtime_simple_stream():
    a = ms.Tensor(2.0)
    s1 = rt.Stream()
    with rt.StreamCtx(s1):
        ms.relu(a)
    s1.synchronize()


def test_runtime_set_stream():
    cur_stream = rt.current_stream()
    assert cur_stream == rt.default_stream()
    s1 = rt.Stream()
    rt.set_cur_stream(s1)
    assert rt.current_stream() == s1


def test_runtime_wait_stream():
    s1, s2 = rt.Stream(), rt.Stream()
    a = ms.Tensor(np.random.randn(20, 20), ms.float32)
    with rt.StreamCtx(s1):
        b = a @ a
    with rt.StreamCtx(s2):
        s2.wait_stream(s1)
        c = b @ b
    rt.synchronize()
    assert np.allclose((a @ a).asnumpy(), b.asnumpy(), atol=1e-4)
    assert np.allclose((b @ b).asnumpy(), c.asnumpy(), atol=1e-3)


def test_runtime_wait_event():
    s1, s2 = rt.Stream(), rt.Stream()
    ev = rt.Event()
    a = ms.Tensor(np.random.randn(20, 20), ms.float32)
    with rt.StreamCtx(s1):
        b = a @ a
        ev.record(s1)
    with rt.StreamCtx(s2):
        s2.wait_event(ev)
        c = b @ b
    rt.synchronize()
    assert ev.query() is True
    assert np.allclose((a @ a).asnumpy(), b.asnumpy(), atol=1e-4)
    assert np.allclose((b @ b).asnumpy(), c.asnumpy(), atol=1e-3)


def test_runtime_get_stream():
    s1 = rt.current_stream()
    s1.record_event()
    s1 = rt.default_stream()
    s1.record_event()


def test_runtime_multi_streams():
    prev_curr_stream = rt.current_stream()
    s1, s2 = rt.Stream(), rt.Stream()
    a = ms.Tensor(np.random.randn(20, 20), ms.float32)
    with rt.StreamCtx(s1):
        is_stream_stream1 = rt.current_stream() == s1
        b = a @ a
    ev = s1.record_event()
    is_prev_1 = rt.current_stream() == prev_curr_stream
    s2.wait_event(ev)
    with rt.StreamCtx(s2):
        is_stream_stream2 = rt.current_stream() == s2
        c = b @ b
    s2.synchronize()
    is_prev_2 = rt.current_stream() == prev_curr_stream
    assert is_stream_stream1 is True and is_prev_1 is True
    assert is_stream_stream2 is True and is_prev_2 is True
    assert np.allclose((b @ b).asnumpy(), c.asnumpy(), atol=1e-3)


def test_runtime_none_streams():
    curr_stream = rt.current_stream()
    with rt.StreamCtx(None):
        is_curr_stream_same = rt.current_stream() == curr_stream
    assert is_curr_stream_same is True


# ---- tests/st/hal/test_hal_event.py ----

def test_hal_event_args():
    assert rt.Event() is not None
    assert rt.Event(enable_timing=True, blocking=True) is not None


def test_hal_event_elapsed_time():
    start = rt.Event(enable_timing=True)
    end = rt.Event(enable_timing=True)
    start.record()
    a = ms.Tensor(np.ones([256, 256]), ms.float32)
    a @ a
    end.record()
    start.synchronize()
    end.synchronize()
    assert start.elapsed_time(end) > 0


def test_hal_event_wait():
    s1, s2 = rt.Stream(), rt.Stream()
    ev1, ev2 = rt.Event(), rt.Event()
    a = ms.Tensor(np.random.randn(20, 20), ms.float32)
    with rt.StreamCtx(s1):
        b = a @ a
        ev1.record()
    with rt.StreamCtx(s2):
        ev1.wait()
        c = b @ b
        ev2.record()
    ev2.wait()
    ev2.synchronize()
    assert ev1.query() is True and ev2.query() is True
    assert np.allclose((b @ b).asnumpy(), c.asnumpy(), atol=1e-3)


def test_hal_event_sync():
    stream = rt.Stream()
    ev1 = rt.Event(True, False)
    ev2 = rt.Event(True, False)
    ev1.record(stream)
    a = ms.Tensor(np.random.randn(256, 256), ms.float32)
    with rt.StreamCtx(stream):
        a @ a
        stream.record_event(ev2)
    ev1.synchronize()
    ev2.synchronize()
    assert ev2.query() is True
    stream.synchronize()
    assert stream.query() is True
    assert ev1.elapsed_time(ev2) > 0
