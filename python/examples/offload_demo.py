"""The seed's offload_demo.py (section 2.5): a model whose weights are 4x the device
budget runs with memory_offload ON, and matches numpy.

    PYTHONPATH=build/python /usr/bin/python3 python/examples/offload_demo.py [layers] [steps]
"""
import sys
import time

import numpy as np

import hwrt as ms

layers = int(sys.argv[1]) if len(sys.argv) > 1 else 16
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 3
hidden, batch = 1024, 64
budget_mb = layers * hidden * hidden * 4 // 4 >> 20           # a quarter of the weights
ms.set_context(mode=ms.GRAPH_MODE, device_target="sim", memory_offload="ON",
               max_device_memory=f"{budget_mb / 1024}GB")      # MindSpore takes "xxGB"
ms.set_offload_context(offload_config={"auto_offload": True, "offload_cpu_size": "0.25GB",
                                       "enable_pinned_mem": True})

rng = np.random.default_rng(0)
ws = [(rng.standard_normal((hidden, hidden)) * np.sqrt(2 / hidden)).astype(np.float32)
      for _ in range(layers)]
x = rng.standard_normal((batch, hidden)).astype(np.float32)
weights = [ms.Tensor(w).set_offloadable() for w in ws]
print(f"{layers} layers x {hidden}x{hidden} float32 = {layers * hidden * hidden * 4 >> 20} MB of "
      f"weights, device budget {ms.get_context('max_device_memory') * 1024:.0f} MB")

ref = x
for w in ws:
    ref = np.maximum(ref @ w, 0)
for step in range(steps):
    t0 = time.perf_counter()
    h = ms.Tensor(x)
    for w in weights:
        h = ms.relu(h @ w)
    out = h.asnumpy()
    ms.offload.step()
    st = ms.offload.stats()
    print(f"step {step}: {1e3 * (time.perf_counter() - t0):7.1f} ms, max |err| "
          f"{np.abs(out - ref).max():.2e} (values up to {np.abs(ref).max():.2f}), fetched {st['bytes_from_host'] >> 20} MB so far, "
          f"prefetch hits {st['prefetch_hits']}, stall {st['stall_ms']:.1f} ms")
    assert np.allclose(out, ref, rtol=1e-4, atol=1e-4)
print("weights now on:", sorted({t.location for t in weights}))
