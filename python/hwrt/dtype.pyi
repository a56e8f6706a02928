# hwrt.dtype: element types, as MindSpore's mindspore.dtype (python/src/dtype.c).
import builtins
from typing import final

@final
class Type:
    @property
    def itemsize(self) -> int: ...
    @property
    def name(self) -> str: ...
    @property
    def value(self) -> int: ...
    def __eq__(self, other: object) -> builtins.bool: ...
    def __ne__(self, other: object) -> builtins.bool: ...
    def __lt__(self, other: Type) -> builtins.bool: ...
    def __le__(self, other: Type) -> builtins.bool: ...
    def __gt__(self, other: Type) -> builtins.bool: ...
    def __ge__(self, other: Type) -> builtins.bool: ...
    def __hash__(self) -> int: ...

bool: Type
bool_: Type
int8: Type
uint8: Type
int32: Type
int64: Type
int_: Type
float16: Type
half: Type
bfloat16: Type
float32: Type
single: Type
float_: Type
float64: Type
double: Type
int16: Type
uint16: Type
uint32: Type
uint64: Type
complex64: Type
complex128: Type
byte: Type
short: Type
intc: Type
intp: Type
ubyte: Type
ushort: Type
uintc: Type
uintp: Type
