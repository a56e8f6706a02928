# hwrt.ops: the mindspore.ops names hwrt has (the same objects as hwrt's; mm is matmul).
from . import (add as add, cast as cast, full as full, matmul as matmul, mul as mul,
               ones as ones, relu as relu, zeros as zeros)
from . import matmul as mm

class ReduceOp:
    SUM: str
    MAX: str
    MIN: str
    PROD: str
