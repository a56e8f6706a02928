# hwrt.device_context: MindSpore's mindspore.device_context.{ascend,gpu,cpu}
# (python/src/target.c).
from . import ascend as ascend, cpu as cpu, gpu as gpu
