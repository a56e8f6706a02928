"""The seed's hardware_op_demo.py (sections 2.1-2.4 and problem 1) with hwrt on the
simulated NPU: device, memory figures, host<->device copies, async ops and stream
synchronization, freeing and empty_cache.

    PYTHONPATH=build/python /usr/bin/python3 python/examples/hardware_op_demo.py [target]
"""
import sys

import numpy as np

import hwrt as ms
from hwrt import runtime

GB, MB = 1024 ** 3, 1024 ** 2
target = sys.argv[1] if len(sys.argv) > 1 else "sim"


def show(when):
    m = runtime.get_memory_info(device_id=0)
    print(f"[{when}] allocated {m['allocated'] / MB:.2f} MB | reserved {m['reserved'] / MB:.2f} MB"
          f" | device used {m['used'] / GB:.2f} GB of {m['total'] / GB:.2f} GB"
          f" (overhead {m['overhead'] / MB:.0f} MB)")


# 2.1 device management
ms.set_device(target, device_id=0)
props = ms.get_device_properties(0)
print(f"current device id: {ms.get_device_id()} | {props['name']}"
      f"{' (simulated)' if props['simulated'] else ''}")
show("start")

# 2.2 host <-> device copies
host_np = np.random.randn(8, 128).astype(np.float16)
dev_tensor = ms.Tensor(host_np)
back_np = dev_tensor.asnumpy()
dev_tensor2 = ms.Tensor(shape=(8, 128), dtype=ms.float16)
dev_tensor2.copy_from_host(host_np)
host_out = dev_tensor2.copy_to_host()
print("round trip exact:", back_np.tobytes() == host_np.tobytes() == host_out.tobytes())

# 2.3 / problem 1: async ops, then synchronize before reading
x_np = (np.random.randn(512, 512) * np.sqrt(2 / 512)).astype(np.float32)   # He init
x = ms.Tensor(x_np)
out_tensor = x
for _ in range(8):
    out_tensor = ms.relu(ms.matmul(out_tensor, x))        # enqueued, not yet run
runtime.synchronize_stream()
result_np = out_tensor.asnumpy()
ref = x_np
for _ in range(8):
    ref = np.maximum(ref @ x_np, 0)
print(f"8 matmul+relu layers done: mean {result_np.mean():.4f}, matches numpy: "
      f"{np.allclose(result_np, ref, rtol=1e-3, atol=1e-3)}")
big = ms.zeros((64 * MB // 4,))
show("after ops and a 64 MB tensor")

# 2.4 / problem 2: drop tensors, then hand the pool's memory back
dev_tensor = dev_tensor2 = x = out_tensor = big = None
show("after dropping the tensors")
runtime.empty_cache(device_id=0)
show("after empty_cache")
print(runtime.memory_summary())
