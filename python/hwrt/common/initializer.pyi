# hwrt.common.initializer: MindSpore's initializers; a Tensor made with init= is filled on
# first use (python/src/initializer.c).
from inspect import Signature
from typing import ClassVar, SupportsFloat, SupportsIndex, Sequence

from .. import Tensor
from ..dtype import Type

class Initializer:
    __signature__: ClassVar[Signature]     # each class's (its __init__ is C)
    def __init__(self) -> None: ...

class Zero(Initializer):
    def __init__(self) -> None: ...
class One(Initializer):
    def __init__(self) -> None: ...
class Constant(Initializer):
    def __init__(self, value: SupportsFloat) -> None: ...
class Normal(Initializer):
    def __init__(self, sigma: float = 0.01, mean: float = 0.0) -> None: ...
class Uniform(Initializer):
    def __init__(self, scale: float = 0.07) -> None: ...
class TruncatedNormal(Initializer):
    def __init__(self, sigma: float = 0.01, mean: float = 0.0, a: float = -2.0,
                 b: float = 2.0) -> None: ...
class XavierUniform(Initializer):
    def __init__(self, gain: float = 1) -> None: ...

def initializer(init: Initializer | str | SupportsFloat | Tensor,
                shape: SupportsIndex | Sequence[SupportsIndex] | None = None,
                dtype: Type | None = None) -> Tensor: ...
