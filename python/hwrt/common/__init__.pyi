# hwrt.common: MindSpore's mindspore.common names hwrt has (python/src/module.c,
# initializer.c).
from .. import Tensor as Tensor
from .. import dtype as dtype
from . import initializer as initializer
