"""The seed's code blocks (sections 2.1-2.6 and 4), copied verbatim from the seed
document (MindSpore on Ascend), and the one adaptation the tests apply to them: the
import lines name hwrt instead of mindspore, and the device target "Ascend" becomes
"sim" (hwrt's simulated NPU). Nothing else in a block is changed.
"""

# The only substitutions adapt() makes, in order.
IMPORTS = [
    ("import mindspore.runtime as mrt", "import hwrt.runtime as mrt"),
    ("from mindspore.communication import", "from hwrt.communication import"),
    ("from mindspore import runtime", "from hwrt import runtime"),
    ("import mindspore as ms", "import hwrt as ms"),
]
TARGET = ('"Ascend"', '"sim"')


def adapt(block):
    """The block with hwrt's import lines and the "sim" device target."""
    for old, new in IMPORTS + [TARGET]:
        block = block.replace(old, new)
    assert "mindspore" not in block and "Ascend" not in block
    return block


def run(block, namespace=None):
    """Execute an adapted seed block in namespace (a dict, returned)."""
    ns = {} if namespace is None else namespace
    exec(compile(adapt(block), "<seed block>", "exec"), ns)
    return ns

# seed section 2.1
S2_1_DEVICE = '''\
import mindspore as ms
from mindspore import runtime

# 设置昇腾设备0，大模型脚本最开头执行
ms.set_device("Ascend", device_id=0)

# 获取当前使用设备id
cur_dev_id = ms.get_device_id()
print(f"当前设备ID：{cur_dev_id}")

# 获取物理设备总内存、已占用内存
mem_info = runtime.get_memory_info(device_id=0)
print(f"设备总内存 {mem_info['total'] / 1024 / 1024 / 1024:.2f} GB")
print(f"当前张量占用内存 {mem_info['allocated'] / 1024 / 1024 / 1024:.2f} GB")
print(f"内存池托管内存 {mem_info['reserved'] / 1024 / 1024 / 1024:.2f} GB")
'''

# seed section 2.2
S2_2_COPY = '''\
import mindspore as ms
import numpy as np

# numpy主机数据
host_np = np.random.randn(8,128).astype(np.float16)

# host -> npu：主机拷贝至昇腾设备
dev_tensor = ms.Tensor(host_np)

# npu -> host：设备张量拷贝回主机numpy数组
back_np = dev_tensor.asnumpy()

# 图模式下显式拷贝接口（runtime）
dev_tensor2 = ms.Tensor(shape=(8,128), dtype=ms.float16)
dev_tensor2.copy_from_host(host_np)
host_out = dev_tensor2.copy_to_host()
'''

# seed section 2.3
S2_3_SYNC = '''\
import mindspore.runtime as mrt

# 获取当前默认stream，同步等待该流上所有任务执行完毕
mrt.synchronize_stream()
print("NPU流全部任务执行完成")
'''

# seed section 2.4
S2_4_EMPTY_CACHE = '''\
import mindspore.runtime as mrt

# 删除python侧张量引用
dev_tensor = None

# 清空内存池，将内存归还NPU硬件
mrt.empty_cache(device_id=0)

# 清空后再次打印内存
mem_after = mrt.get_memory_info(0)
print(f"empty_cache后已占用：{mem_after['allocated'] / 1024/1024:.2f} MB")
'''

# seed section 2.5
S2_5_OFFLOAD = '''\
import mindspore as ms

# 开启异构offload，GRAPH模式生效
ms.set_context(
    mode=ms.GRAPH_MODE,
    device_target="Ascend",
    memory_offload="ON",
    max_device_memory="24GB"
)

# offload详细策略配置
offload_cfg = {
    "auto_offload": True,
    "offload_cpu_size":"64GB",
    "enable_pinned_mem": True
}
ms.set_offload_context(offload_config=offload_cfg)
'''

# seed section 2.6
S2_6_DIST = '''\
from mindspore.communication import init, get_rank, get_group_size

init()
rank = get_rank()
world_size = get_group_size()
print(f"rank:{rank}, total_card:{world_size}")
ms.set_device("Ascend", rank)
'''

# seed section 4.1
S4_1_STALE_READ = '''\
import mindspore.runtime as mrt
mrt.synchronize_stream()
result_np = out_tensor.asnumpy()
'''

# seed section 4.4
S4_4_RANK_DEVICE = '''\
ms.set_device("Ascend", device_id=rank)
'''
