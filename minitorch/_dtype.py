"""dtypes and PyTorch's type-promotion rules.

A dtype is a small immutable object that names an element type. It does not know about numpy:
each backend maps ``dtype.name`` to its own array dtype. Promotion follows PyTorch's
"Type promotion" note: operands are split into dimensioned tensors, zero-dim tensors and
Python scalars, and a lower group only matters when it is of a higher *category*
(bool < integer < floating < complex).
"""

from __future__ import annotations

import builtins as _builtins

_pybool, _pyint, _pyfloat, _pycomplex = _builtins.bool, _builtins.int, _builtins.float, _builtins.complex


class dtype:
    """An element type (``minitorch.float32``, ``minitorch.int64``, ...)."""

    __slots__ = ("name", "itemsize", "is_floating_point", "is_signed", "is_complex", "is_quantized", "_rank",
                 "kind")

    def __init__(self, name: str, itemsize: int, category: int, is_signed: bool, rank: int, is_quantized=False):
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "itemsize", itemsize)
        object.__setattr__(self, "is_floating_point", category == FLOAT)
        object.__setattr__(self, "is_complex", category == COMPLEX)
        object.__setattr__(self, "is_signed", is_signed)
        object.__setattr__(self, "is_quantized", is_quantized)
        object.__setattr__(self, "_rank", rank)
        # numpy's one-letter kind ('b', 'u', 'i', 'f', 'c'), so that code handed a Tensor or a backend array
        # can ask ``x.dtype.kind == "c"`` of either (bfloat16 is 'f' here; numpy has no kind for it)
        kind = ("i" if is_signed else "u") if category == INTEGER else "bifc"[category]
        object.__setattr__(self, "kind", kind)

    def __setattr__(self, key, value):
        raise AttributeError("dtype objects are immutable")

    def __repr__(self) -> str:
        return f"torch.{self.name}"  # the name scripts see after `import minitorch as torch`

    def __reduce__(self):
        return self.name

    @property
    def category(self) -> int:
        return category_of(self)

    def to_real(self) -> dtype:
        """The real dtype of a complex one (complex64 -> float32); any other dtype itself."""
        return _REAL_OF.get(self, self)

    def to_complex(self) -> dtype:
        """The complex dtype whose parts are this floating dtype (float32 -> complex64)."""
        if self.is_complex:
            return self
        if self not in _COMPLEX_OF:
            raise RuntimeError(f"to_complex: no complex dtype has {self} parts")
        return _COMPLEX_OF[self]


BOOL, INTEGER, FLOAT, COMPLEX = 0, 1, 2, 3

bool = dtype("bool", 1, BOOL, False, 0)  # noqa: A001 - torch.bool
uint8 = dtype("uint8", 1, INTEGER, False, 1)
int8 = dtype("int8", 1, INTEGER, True, 1)
int16 = dtype("int16", 2, INTEGER, True, 2)
int32 = dtype("int32", 4, INTEGER, True, 3)
int64 = dtype("int64", 8, INTEGER, True, 4)
float16 = dtype("float16", 2, FLOAT, True, 5)
bfloat16 = dtype("bfloat16", 2, FLOAT, True, 5)  # the same rank as float16: together they promote to float32
float32 = dtype("float32", 4, FLOAT, True, 6)
float64 = dtype("float64", 8, FLOAT, True, 7)
complex64 = dtype("complex64", 8, COMPLEX, True, 6)  # ranks: those of the parts
complex128 = dtype("complex128", 16, COMPLEX, True, 7)

half, float, double = float16, float32, float64  # noqa: A001 - torch aliases
short, int, long = int16, int32, int64  # noqa: A001
cfloat, cdouble = complex64, complex128

ALL_DTYPES = (bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64, complex64, complex128)
_COMPLEX_OF = {float16: complex64, bfloat16: complex64, float32: complex64, float64: complex128}  # no complex32
_REAL_OF = {complex64: float32, complex128: float64}
DTYPES_BY_NAME = {d.name: d for d in ALL_DTYPES}

# Quantized dtypes (minitorch/quantization): a tensor of one stores its integer representation in the
# storage dtype below and carries scale/zero point beside it. They take part in no promotion.
qint8 = dtype("qint8", 1, INTEGER, True, -1, is_quantized=True)
quint8 = dtype("quint8", 1, INTEGER, False, -1, is_quantized=True)
qint32 = dtype("qint32", 4, INTEGER, True, -1, is_quantized=True)
QUANTIZED_DTYPES = (qint8, quint8, qint32)
QUANTIZED_STORAGE_DTYPES = {qint8: int8, quint8: uint8, qint32: int32}
QUANTIZED_RANGES = {qint8: (-128, 127), quint8: (0, 255), qint32: (-(2**31), 2**31 - 1)}


def category_of(d: dtype) -> int:
    if d is bool:
        return BOOL
    return FLOAT if d.is_floating_point else COMPLEX if d.is_complex else INTEGER


_default_dtype = float32


def get_default_dtype() -> dtype:
    return _default_dtype


def default_complex_dtype() -> dtype:
    """The dtype of Python complex numbers: complex128 under a float64 default, else complex64."""
    return complex128 if _default_dtype is float64 else complex64


def set_default_dtype(d: dtype) -> None:
    """Set the dtype of Python floats and of float factories (float32 or float64)."""
    global _default_dtype
    if not isinstance(d, dtype) or not d.is_floating_point:
        raise TypeError(f"set_default_dtype: only floating-point dtypes are supported, got {d}")
    _default_dtype = d


def promote_types(a: dtype, b: dtype) -> dtype:
    """The smallest dtype both ``a`` and ``b`` convert to without losing their category."""
    if a is b:
        return a
    if not isinstance(a, dtype) or not isinstance(b, dtype):
        bad, position = (a, 1) if not isinstance(a, dtype) else (b, 2)
        raise TypeError(f"promote_types(): argument 'type{position}' must be torch.dtype, not {type(bad).__name__}")
    if a.is_quantized or b.is_quantized:
        raise RuntimeError(f"Promotion for quantized types is not supported, attempted to promote {a} and {b}")
    if a is bool:
        return b
    if b is bool:
        return a
    if a.is_complex or b.is_complex:  # the complex type of the promoted parts (complex64 + float64: complex128)
        return promote_types(a.to_real(), b.to_real()).to_complex()
    if a.is_floating_point or b.is_floating_point:
        if a.is_floating_point and b.is_floating_point:
            if a._rank == b._rank:  # float16 and bfloat16: neither holds the other
                return float32
            return a if a._rank > b._rank else b
        return a if a.is_floating_point else b
    # both integers
    if a.is_signed == b.is_signed:
        return a if a.itemsize > b.itemsize else b
    unsigned, signed = (a, b) if not a.is_signed else (b, a)
    if signed.itemsize > unsigned.itemsize:
        return signed
    return {1: int16, 2: int32, 4: int64, 8: int64}[unsigned.itemsize]


def scalar_dtype(value) -> dtype:
    """The dtype a Python scalar takes when it is an operand (a 'wrapped number')."""
    if isinstance(value, _pybool):
        return bool
    if isinstance(value, _pyint):
        return int64
    if isinstance(value, _pyfloat):
        return _default_dtype
    if isinstance(value, _pycomplex):
        return default_complex_dtype()
    raise TypeError(f"unsupported scalar type {type(value).__name__}")


def _combine(higher: dtype | None, lower: dtype | None) -> dtype | None:
    """PyTorch's combine_categories: a lower-priority group only wins on a higher category."""
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher.is_complex:
        return higher
    if lower.is_complex:  # a complex scalar keeps a floating tensor's precision (float64 + 1j: complex128)
        return higher.to_complex() if higher.is_floating_point else lower
    if higher.is_floating_point:
        return higher
    if higher is bool or lower.is_floating_point:
        return promote_types(higher, lower)
    return higher


def result_type_of(operands) -> dtype:
    """Promote a sequence of operands: Tensors (with ``.dtype`` and ``.dim()``) or Python scalars."""
    dim_result = zero_result = wrapped_result = None
    for op in operands:
        d = getattr(op, "dtype", None)
        if isinstance(d, dtype):
            if op.dim() > 0:
                dim_result = d if dim_result is None else promote_types(dim_result, d)
            else:
                zero_result = d if zero_result is None else promote_types(zero_result, d)
        else:
            d = scalar_dtype(op)
            wrapped_result = d if wrapped_result is None else promote_types(wrapped_result, d)
    result = _combine(dim_result, _combine(zero_result, wrapped_result))
    if result is None:
        raise TypeError("result_type: expected at least one operand")
    return result


_SCALAR_TYPE_NAMES = {
    "float16": "Half", "bfloat16": "BFloat16", "float32": "Float", "float64": "Double", "int8": "Char",
    "int16": "Short", "int32": "Int", "int64": "Long", "uint8": "Byte", "bool": "Bool",
    "complex64": "ComplexFloat", "complex128": "ComplexDouble",
}


def scalar_type_name(dtype) -> str:
    """PyTorch's C++ name of a dtype ('Float', 'Long'), as its kernel errors spell it (a minitorch dtype, or a
    backend array's dtype of the same name)."""
    return _SCALAR_TYPE_NAMES.get(dtype.name, dtype.name)
