"""hwrt._kernel_ops is the runtime's op table (src/base/op_table.h), the one the op front
end validates against: every op it lists exists in Python under that name, and a tensor
of a dtype the table does not allow is refused with a sentence naming the kernel and the
dtypes it does allow, while every allowed dtype is accepted."""
import numpy as np
import pytest

import hwrt

ALL = ["float32", "float16", "bfloat16", "float64", "int8", "uint8", "int32", "int64", "bool"]


def call(py, dt):
    """Run op py on tensors of dtype dt (2x2, so matmul fits)."""
    a = hwrt.zeros((2, 2), getattr(hwrt, dt if dt != "bool" else "bool_"))
    if py == "fill":
        return a.fill(1.0)
    if py in ("add", "mul", "matmul"):
        return getattr(hwrt, py)(a, a)
    if py == "scale":
        return hwrt.scale(a, 2.0)
    if py == "cast":
        return hwrt.cast(a, hwrt.float32)
    return getattr(hwrt, py)(a)


def test_table_lists_every_op():
    ops = hwrt._kernel_ops
    assert {k: v[0] for k, v in ops.items()} == {
        "fill": "Fill", "add": "Add", "mul": "Mul", "scale": "Scale", "relu": "Relu",
        "cast": "Cast", "matmul": "MatMul", "sum": "ReduceSum"}
    for py, (name, arity, dtypes, out_dtype) in ops.items():
        assert callable(getattr(hwrt, py, None) or getattr(hwrt.Tensor, py)), py
        assert 0 <= arity <= 2 and isinstance(out_dtype, bool)
        assert set(dtypes) <= set(ALL) and dtypes, py
    assert ops["matmul"][2] == ("float32", "float16", "bfloat16", "float64")
    assert "bool" not in ops["add"][2] and "bool" in ops["sum"][2]


@pytest.mark.parametrize("py", sorted(hwrt._kernel_ops))
def test_dtypes_as_the_table_says(py):
    name, _, allowed, _ = hwrt._kernel_ops[py]
    for dt in ALL:
        if dt in allowed:
            r = call(py, dt)
            np.asarray(r.asnumpy())            # ran to completion
        else:
            with pytest.raises(hwrt.InvalidArgumentError) as e:
                call(py, dt)
            msg = str(e.value)
            assert f"dtype {dt} is not supported by {name}" in msg, msg
            assert ", ".join(allowed[:-1]) + " or " + allowed[-1] in msg, msg
