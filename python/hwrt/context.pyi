# hwrt.context: MindSpore's mindspore.context (python/src/context.c; the same objects as
# hwrt's top-level names).
from . import (GRAPH_MODE as GRAPH_MODE, PYNATIVE_MODE as PYNATIVE_MODE,
               get_context as get_context, get_offload_context as get_offload_context,
               set_context as set_context, set_offload_context as set_offload_context)
