"""``finfo`` and ``iinfo``: the numerical limits of a dtype, with PyTorch's fields.

The values are computed from each format's bit layout (sign, exponent and mantissa bits), not read from
numpy, so a dtype numpy lacks (bfloat16) has its limits too.
"""

from __future__ import annotations

import math

from . import _dtype

# name -> (exponent bits, stored mantissa bits) of the IEEE-style binary formats
_FLOAT_FORMATS = {"float16": (5, 10), "bfloat16": (8, 7), "float32": (8, 23), "float64": (11, 52)}


_UNSET = object()


def _checked(name: str, value) -> _dtype.dtype:
    """The dtype argument, or PyTorch's TypeError naming it (``finfo()`` alone means the default dtype)."""
    if value is _UNSET and name == "finfo":
        return _dtype.get_default_dtype()
    if value is _UNSET:
        raise TypeError(f'{name}() missing 1 required positional arguments: "type"')
    if not isinstance(value, _dtype.dtype):
        cls = type(value)
        kind = cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"
        raise TypeError(f"{name}(): argument 'type' (position 1) must be torch.dtype, not {kind}")
    return value


class finfo:
    """Machine limits of a floating-point dtype (complex dtypes: of their real part), as ``torch.finfo``."""

    __slots__ = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype")

    def __init__(self, type: _dtype.dtype = _UNSET) -> None:  # noqa: A002 - PyTorch's argument name
        d = _checked("finfo", type)
        if d.is_complex:
            d = d.to_real()
        if d.name not in _FLOAT_FORMATS:
            raise TypeError(
                "torch.finfo() requires a floating point input type. Use torch.iinfo to handle 'torch.finfo'"
            )
        exponent_bits, mantissa_bits = _FLOAT_FORMATS[d.name]
        max_exponent = 2 ** (exponent_bits - 1) - 1
        self.bits = 1 + exponent_bits + mantissa_bits
        self.eps = 2.0**-mantissa_bits
        self.max = (2.0 - self.eps) * 2.0**max_exponent
        self.min = -self.max
        self.tiny = self.smallest_normal = 2.0 ** (1 - max_exponent)
        self.resolution = 10.0 ** -math.floor(-math.log10(self.eps))
        self.dtype = d.name

    def __eq__(self, other) -> bool:
        return isinstance(other, finfo) and other.dtype == self.dtype

    def __hash__(self) -> int:
        return hash(("finfo", self.dtype))

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """Limits of an integer dtype, as ``torch.iinfo``."""

    __slots__ = ("bits", "max", "min", "dtype")

    def __init__(self, type: _dtype.dtype = _UNSET) -> None:  # noqa: A002
        d = _checked("iinfo", type)
        if d is _dtype.bool:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if d.is_floating_point or d.is_complex:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to handle 'torch.iinfo'")
        self.bits = 8 * d.itemsize
        self.min = -(2 ** (self.bits - 1)) if d.is_signed else 0
        self.max = 2 ** (self.bits - 1) - 1 if d.is_signed else 2**self.bits - 1
        self.dtype = d.name

    def __eq__(self, other) -> bool:
        return isinstance(other, iinfo) and other.dtype == self.dtype

    def __hash__(self) -> int:
        return hash(("iinfo", self.dtype))

    def __repr__(self) -> str:
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"


__all__ = ["finfo", "iinfo"]
