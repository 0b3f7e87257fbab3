"""Unary elementwise math, as a table: name -> (kernel, derivative).

A kernel takes ``(xp, x)``; a derivative takes ``(grad, x, y)`` (input and output, both Tensors)
and is written in differentiable Tensor ops, so every entry supports double backward. Integer
inputs of float functions are promoted to the default float dtype, as in PyTorch.
"""

from __future__ import annotations

import dis
import math

from ..tensor import Tensor
from .op import Op
from .promotion import as_float


def _erf(xp, x):
    erf = getattr(xp, "erf", None)
    if erf is None:  # numpy has no erf ufunc: Abramowitz-Stegun 7.1.26 is too coarse, use math.erf
        return xp.vectorize(math.erf, otypes=[x.dtype])(x) if x.size else x.copy()
    return erf(x)


_SQRT_PI = math.sqrt(math.pi)

# name: (kernel(xp, x), derivative(grad, x, y), keeps integer dtype)
UNARY = {
    "exp": (lambda xp, x: xp.exp(x), lambda g, x, y: g * y),
    "exp2": (lambda xp, x: xp.exp2(x), lambda g, x, y: g * y * math.log(2.0)),
    "expm1": (lambda xp, x: xp.expm1(x), lambda g, x, y: g * (y + 1)),
    "log": (lambda xp, x: xp.log(x), lambda g, x, y: g / x),
    "log2": (lambda xp, x: xp.log2(x), lambda g, x, y: g / (x * math.log(2.0))),
    "log10": (lambda xp, x: xp.log10(x), lambda g, x, y: g / (x * math.log(10.0))),
    "log1p": (lambda xp, x: xp.log1p(x), lambda g, x, y: g / (x + 1)),
    "sqrt": (lambda xp, x: xp.sqrt(x), lambda g, x, y: g / (2 * y)),
    "rsqrt": (lambda xp, x: 1 / xp.sqrt(x), lambda g, x, y: -0.5 * g * y * y * y),
    "sin": (lambda xp, x: xp.sin(x), lambda g, x, y: g * x.cos()),
    "cos": (lambda xp, x: xp.cos(x), lambda g, x, y: -g * x.sin()),
    "tan": (lambda xp, x: xp.tan(x), lambda g, x, y: g * (1 + y * y)),
    "asin": (lambda xp, x: xp.arcsin(x), lambda g, x, y: g * (1 - x * x).rsqrt()),
    "acos": (lambda xp, x: xp.arccos(x), lambda g, x, y: -g * (1 - x * x).rsqrt()),
    "atan": (lambda xp, x: xp.arctan(x), lambda g, x, y: g / (1 + x * x)),
    "sinh": (lambda xp, x: xp.sinh(x), lambda g, x, y: g * x.cosh()),
    "cosh": (lambda xp, x: xp.cosh(x), lambda g, x, y: g * x.sinh()),
    "tanh": (lambda xp, x: xp.tanh(x), lambda g, x, y: g * (1 - y * y)),
    "asinh": (lambda xp, x: xp.arcsinh(x), lambda g, x, y: g * (x * x + 1).rsqrt()),
    "acosh": (lambda xp, x: xp.arccosh(x), lambda g, x, y: g * (x * x - 1).rsqrt()),
    "atanh": (lambda xp, x: xp.arctanh(x), lambda g, x, y: g / (1 - x * x)),
    "sigmoid": (lambda xp, x: _sigmoid(xp, x), lambda g, x, y: g * y * (1 - y)),
    "reciprocal": (lambda xp, x: xp.reciprocal(x), lambda g, x, y: -g * y * y),
    "erf": (_erf, lambda g, x, y: g * (2 / _SQRT_PI) * (-x * x).exp()),
    "square": (lambda xp, x: xp.square(x), lambda g, x, y: 2 * g * x),
    "abs": (lambda xp, x: xp.abs(x), lambda g, x, y: g * x.sign()),
    "relu": (lambda xp, x: xp.maximum(x, 0), lambda g, x, y: g * (y > 0)),
}
KEEPS_DTYPE = {"square", "abs", "relu"}  # integer in, integer out


def _sigmoid(xp, x):
    # exp of a negative argument only: no overflow for large |x|
    e = xp.exp(-xp.abs(x))
    return xp.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)


class Unary(Op):
    """Base of the table's ops; ``kernel`` and ``derivative`` come from the table entry."""

    save_inputs = (0,)
    save_output = True
    kernel = derivative = None
    keeps_dtype = False

    def forward(self, x):
        if not self.keeps_dtype:
            x = as_float(self, x)
        return type(self).kernel(self.xp, x)

    def backward(self, grad):
        saved = self.saved_tensors
        x = saved[0] if self.save_inputs else None
        y = saved[-1] if self.save_output else None
        return type(self).derivative(grad, x, y)


def _reads(derivative) -> tuple[bool, bool]:
    """Whether a derivative reads the input ``x`` and/or the output ``y``: only those are saved, as
    PyTorch does (sin saves its input, exp its result), so in-place writes are flagged only when
    they really clobber what backward needs."""
    loaded = {i.argval for i in dis.get_instructions(derivative) if i.opname.startswith("LOAD_FAST")}
    return "x" in loaded, "y" in loaded


def _make(name: str):
    kernel, derivative = UNARY[name]
    reads_x, reads_y = _reads(derivative)
    op = type(
        name.capitalize(),
        (Unary,),
        {
            "kernel": staticmethod(kernel),
            "derivative": staticmethod(derivative),
            "keeps_dtype": name in KEEPS_DTYPE,
            "save_inputs": (0,) if reads_x else (),
            "save_output": reads_y,
        },
    )

    def function(input: Tensor, *, out=None) -> Tensor:
        return op.apply(input)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"Elementwise {name}, differentiable (derivative in ops/pointwise.py UNARY)."
    return op, function


OPS = {}
for _name in UNARY:
    OPS[_name], globals()[_name] = _make(_name)
    setattr(Tensor, _name, globals()[_name])

arcsin, arccos, arctan, arcsinh, arccosh, arctanh = asin, acos, atan, asinh, acosh, atanh  # noqa: F821
absolute = abs  # noqa: F821
for _alias, _fn in {"arcsin": asin, "arccos": acos, "arctan": atan, "absolute": abs}.items():  # noqa: F821
    setattr(Tensor, _alias, _fn)

__all__ = list(UNARY) + ["arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "absolute"]
