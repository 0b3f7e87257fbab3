"""Type promotion at the array level: cast a kernel's operands to PyTorch's result dtype.

Python scalars stay Python scalars (numpy and CuPy treat them as "weak", like PyTorch's wrapped
numbers); arrays are cast only when their dtype differs from the result's.
"""

from __future__ import annotations

from .. import _dtype

_SCALARS = (bool, int, float)


class _Operand:
    """What result_type_of needs from an array operand: its dtype and whether it is 0-dim."""

    __slots__ = ("dtype", "_ndim")

    def __init__(self, dtype, ndim):
        self.dtype, self._ndim = dtype, ndim

    def dim(self):
        return self._ndim


def result_dtype(backend, *operands) -> _dtype.dtype:
    """PyTorch's result dtype of arrays (by dtype and dimensionality) and Python scalars."""
    return _dtype.result_type_of(
        [x if isinstance(x, _SCALARS) else _Operand(backend.dtype_of(x), x.ndim) for x in operands]
    )


def promote(op, *operands, to_float: bool = False):
    """``(operands cast to the common dtype..., that dtype)``; ``to_float`` makes integer results
    floating (true division, sqrt, exp, ... on integer tensors)."""
    arrays = [x for x in operands if not isinstance(x, _SCALARS)]
    dtype0 = arrays[0].dtype
    if len(arrays) == len(operands) and all(a.dtype is dtype0 for a in arrays):
        target = op.backend.dtype_of(arrays[0])
    else:
        target = result_dtype(op.backend, *operands)
    if to_float and not target.is_floating_point:
        target = _dtype.get_default_dtype()
    array_dtype = op.backend.array_dtype(target)
    cast = tuple(
        x if isinstance(x, _SCALARS) or x.dtype == array_dtype else x.astype(array_dtype) for x in operands
    )
    return cast + (array_dtype,)


def as_float(op, x):
    """Integer and bool arrays become the default float dtype (unary float ops such as exp)."""
    if x.dtype.kind == "f":
        return x
    return x.astype(op.backend.array_dtype(_dtype.get_default_dtype()))
