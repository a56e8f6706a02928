"""Seed 2.3: synchronize_stream() waits for the stream's queued work."""
import numpy as np

import hwrt
import seed_blocks as seed


def test_2_3_waits_for_queued_work(capsys):
    hwrt.set_device("sim", 0)
    a = hwrt.Tensor(np.ones((256, 256), np.float32))
    marker = hwrt.runtime.Event()
    out = a
    for _ in range(20):                       # a queue of kernels on the default stream
        out = hwrt.matmul(out, a) * (1.0 / 256)
    marker.record()
    seed.run(seed.S2_3_SYNC)
    assert "NPU流全部任务执行完成" in capsys.readouterr().out
    # everything queued before the call has finished when it returns
    assert marker.query() is True
    assert hwrt.runtime.default_stream().query() is True
    assert np.allclose(out.asnumpy(), 1.0)


def test_2_3_synchronize_stream_uses_the_current_stream():
    hwrt.set_device("sim", 0)
    s = hwrt.runtime.Stream()
    x = hwrt.Tensor(np.full((128, 128), 2.0, np.float32))
    with hwrt.runtime.StreamCtx(s):
        assert hwrt.runtime.current_stream() == s
        y = x
        for _ in range(10):
            y = hwrt.matmul(y, x) * (1.0 / 256)
        ev = s.record_event()
        seed.run(seed.S2_3_SYNC)                  # the seed's call, inside the context
        assert ev.query() is True and s.query() is True
    assert hwrt.runtime.current_stream() == hwrt.runtime.default_stream()
    assert np.allclose(y.asnumpy(), 2.0)
