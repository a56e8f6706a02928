"""Seed section 4: the failure cases' code, and what hwrt does about each."""
import numpy as np
import pytest

import hwrt
import seed_blocks as seed


def test_problem_1_read_after_sync_is_correct():
    hwrt.set_device("sim", 0)
    rng = np.random.default_rng(7)
    a = rng.standard_normal((64, 96)).astype(np.float32)
    b = rng.standard_normal((96, 48)).astype(np.float32)
    out_tensor = hwrt.relu(hwrt.matmul(hwrt.Tensor(a), hwrt.Tensor(b)))   # async ops
    ns = seed.run(seed.S4_1_STALE_READ, {"out_tensor": out_tensor})
    ref = np.maximum(a @ b, 0)
    assert np.allclose(ns["result_np"], ref, rtol=1e-5, atol=1e-5)


def test_problem_1_asnumpy_is_never_stale_even_without_sync():
    """hwrt orders asnumpy() after every op that wrote the tensor, whichever stream."""
    hwrt.set_device("sim", 0)
    s = hwrt.runtime.Stream()
    x = hwrt.Tensor(np.ones((256, 256), np.float32))
    with hwrt.runtime.StreamCtx(s):
        y = x
        for _ in range(8):
            y = hwrt.matmul(y, x) * (1.0 / 256)
        y = y + 1.0
    assert np.allclose(y.asnumpy(), 2.0)         # no synchronize_stream() call


def test_problem_4_bad_device_id_is_named():
    hwrt.set_device("sim", 0)
    n = hwrt.device_count("sim")
    with pytest.raises(hwrt.InvalidDeviceError) as e:
        seed.run(seed.S4_4_RANK_DEVICE, {"ms": hwrt, "rank": n})
    msg = str(e.value)
    assert str(n) in msg and "device" in msg
    assert hwrt.get_device_id() == 0                 # state intact


def test_problem_6_device_view_vs_runtime_view():
    """npu-smi counts driver context and cached pool memory; get_memory_info's
    allocated counts tensors. hwrt gives both, and their difference is accounted."""
    hwrt.set_device("sim", 0)
    t = hwrt.Tensor(shape=(1 << 20,), dtype=hwrt.float32)
    m = hwrt.runtime.get_memory_info(0)
    assert m["used"] >= m["reserved"] + m["overhead"]
    assert m["reserved"] >= m["allocated"] >= t.nbytes
    assert m["overhead"] > 0
    del t


def test_problem_5_host_read_inside_graph_capture_is_refused():
    """GRAPH mode: inside a captured region asnumpy() (a host read) is refused with a
    sentence saying to move it out; outside, after replay, it reads the result."""
    if not hwrt._features["graph"]:
        pytest.skip("this hwrt has no graph capture (hwrt_graph.h)")
    hwrt.set_device("sim", 0)
    rng = np.random.default_rng(5)
    a = rng.standard_normal((32, 48)).astype(np.float32)
    w = rng.standard_normal((48, 16)).astype(np.float32)
    x, tw = hwrt.Tensor(a), hwrt.Tensor(w)
    s = hwrt.runtime.Stream()
    g = hwrt.runtime.Graph()
    with g.capture(s):
        assert hwrt.runtime.current_stream() == s
        y = hwrt.relu(x @ tw)
        with pytest.raises(hwrt.NotPermittedError) as e:
            y.asnumpy()
        with pytest.raises(hwrt.NotPermittedError):
            hwrt.runtime.synchronize_stream()
    assert "copy_to_host" in str(e.value) or "capture" in str(e.value)
    assert hwrt.runtime.current_stream() == hwrt.runtime.default_stream()
    assert g.node_count >= 2
    g.replay(s)
    assert np.allclose(y.asnumpy(), np.maximum(a @ w, 0), rtol=1e-5, atol=1e-5)
    x.copy_from_host(a * 2)                       # replay again on new input
    g.replay(s)
    assert np.allclose(y.asnumpy(), np.maximum((a * 2) @ w, 0), rtol=1e-5, atol=1e-5)
