"""Comparisons, logical and bitwise ops (no gradient), ``where`` and ``masked_fill`` (gradient to the branch taken).

Comparisons promote their operands first, as PyTorch does (``int64 == float32`` compares in float32),
then return bool tensors. Logical ops accept any dtype; bitwise ops only bool and integer dtypes.
"""

from __future__ import annotations

import math

from .._dtype import scalar_type_name
from ..autograd import grad_mode
from ..creation import tensor
from ..tensor import Tensor
from .op import Op
from .promotion import Elementwise, array_kind, promote

_SCALAR_TYPES = (bool, int, float)
_OPERAND_TYPES = (Tensor, bool, int, float, complex)
_TYPE_NAMES = {"float16": "Half", "bfloat16": "BFloat16", "float32": "Float", "float64": "Double"}


class Compare(Elementwise):
    """Elementwise comparison in the operands' promoted dtype; the result is bool."""

    ufunc = ""

    def compute(self, a, b):
        a, b, dtype = promote(self, a, b)
        if dtype.kind == "c" and self.ufunc in _ORDERINGS:  # complex numbers have no order
            kernel = _ORDERINGS[self.ufunc]
            raise NotImplementedError(f"\"{kernel}_cpu\" not implemented for '{scalar_type_name(dtype)}'")
        return getattr(self.xp, self.ufunc)(a, b)


_ORDERINGS = {"less": "lt", "less_equal": "le", "greater": "gt", "greater_equal": "ge"}


class Logical(Elementwise):
    """Logical ops read any dtype as truth values (nonzero is True); no promotion is needed."""

    ufunc = ""

    def compute(self, a, b):
        return getattr(self.xp, self.ufunc)(a, b)


def _binary(name: str, base: type, ufunc: str, doc: str):
    op = type(name.title().replace("_", ""), (base,), {"ufunc": ufunc})

    def function(input: Tensor, other) -> Tensor:
        return op.apply(input, other)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = doc
    function.op = op
    return function


eq = _binary("eq", Compare, "equal", "``input == other`` elementwise (bool result, broadcasting).")
ne = _binary("ne", Compare, "not_equal", "``input != other`` elementwise (bool result, broadcasting).")
lt = _binary("lt", Compare, "less", "``input < other`` elementwise (bool result, broadcasting).")
le = _binary("le", Compare, "less_equal", "``input <= other`` elementwise (bool result, broadcasting).")
gt = _binary("gt", Compare, "greater", "``input > other`` elementwise (bool result, broadcasting).")
ge = _binary("ge", Compare, "greater_equal", "``input >= other`` elementwise (bool result, broadcasting).")
logical_and = _binary("logical_and", Logical, "logical_and", "Elementwise AND of truth values (bool result).")
logical_or = _binary("logical_or", Logical, "logical_or", "Elementwise OR of truth values (bool result).")
logical_xor = _binary("logical_xor", Logical, "logical_xor", "Elementwise XOR of truth values (bool result).")
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne


class _Classify(Elementwise):
    """A unary bool-valued kernel (logical_not, isnan, isinf, ...)."""

    ufunc = ""

    def compute(self, a):
        return getattr(self.xp, self.ufunc)(a)


def _unary(name: str, ufunc: str, doc: str):
    op = type(name.title().replace("_", ""), (_Classify,), {"ufunc": ufunc})

    def function(input: Tensor) -> Tensor:
        return op.apply(input)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = doc
    return function


logical_not = _unary("logical_not", "logical_not", "Elementwise NOT of truth values (bool result).")
isnan = _unary("isnan", "isnan", "True where the element is NaN.")
isinf = _unary("isinf", "isinf", "True where the element is +inf or -inf.")
isposinf = _unary("isposinf", "isposinf", "True where the element is +inf.")
isneginf = _unary("isneginf", "isneginf", "True where the element is -inf.")
isfinite = _unary("isfinite", "isfinite", "True where the element is neither infinite nor NaN.")
signbit = _unary("signbit", "signbit", "True where the sign bit is set (including -0.0).")


class Bitwise(Elementwise):
    """Bitwise ops on bool and integer dtypes (PyTorch refuses floating point)."""

    ufunc = ""

    def compute(self, a, b=None):
        if b is None:
            _check_integral(self.ufunc, a)
            return getattr(self.xp, self.ufunc)(a)
        a, b, dtype = promote(self, a, b)
        if array_kind(dtype) == "f":
            _check_integral(self.ufunc, a if type(a) not in _SCALAR_TYPES and array_kind(a.dtype) == "f" else b)
        return getattr(self.xp, self.ufunc)(a, b)


def _check_integral(ufunc: str, x) -> None:
    kind = "float" if type(x) is float else array_kind(x.dtype)
    if kind in ("f", "float"):
        name = "Float" if type(x) is float else _TYPE_NAMES.get(str(x.dtype), str(x.dtype))
        raise NotImplementedError(f'"{ufunc}_cpu" not implemented for \'{name}\'')


def _bitwise(name: str, ufunc: str, doc: str):
    op = type(name.title().replace("_", ""), (Bitwise,), {"ufunc": ufunc})

    def function(input: Tensor, other=None) -> Tensor:
        return op.apply(input) if other is None else op.apply(input, other)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = doc
    function.op = op
    return function


bitwise_and = _bitwise("bitwise_and", "bitwise_and", "Elementwise AND of bits (bool and integer dtypes).")
bitwise_or = _bitwise("bitwise_or", "bitwise_or", "Elementwise OR of bits (bool and integer dtypes).")
bitwise_xor = _bitwise("bitwise_xor", "bitwise_xor", "Elementwise XOR of bits (bool and integer dtypes).")
bitwise_left_shift = _bitwise("bitwise_left_shift", "left_shift", "``input << other`` (integer dtypes).")
bitwise_right_shift = _bitwise("bitwise_right_shift", "right_shift", "``input >> other`` (integer dtypes).")


def bitwise_not(input: Tensor) -> Tensor:
    """Elementwise NOT of bits; logical NOT on bool tensors (``~mask``)."""
    return _BitwiseNot.apply(input)


_BitwiseNot = type("BitwiseNot", (Bitwise,), {"ufunc": "invert"})


class Where(Elementwise):
    """``input`` where ``condition`` holds, else ``other``; each branch gets the gradient where it was taken."""

    save_inputs = (0,)

    def compute(self, condition, a, b):
        if condition.dtype.kind != "b":
            raise RuntimeError(
                f"where expected condition to be a boolean tensor, but got a tensor with dtype "
                f"{_TYPE_NAMES.get(str(condition.dtype), str(condition.dtype))}"
            )
        if _is_positive_zero(b) and _is_floating_array(a):
            return self.backend.select_or_zero(condition, a, zero_where_true=False)
        if _is_positive_zero(a) and _is_floating_array(b):
            return self.backend.select_or_zero(condition, b, zero_where_true=True)
        a, b, dtype = promote(self, a, b)
        return self.xp.where(condition, a, b).astype(dtype, copy=False)

    def backward(self, grad):
        (condition,) = self.saved_tensors
        grad_a = where(condition, grad, 0.0) if self.needs_grad(1) else None
        grad_b = where(condition, 0.0, grad) if self.needs_grad(2) else None
        return None, grad_a, grad_b


def _is_positive_zero(x) -> bool:
    """A Python 0 or 0.0 (not -0.0): the zero branch of the masks in gradients (``where(c, g, 0.0)``)."""
    return (type(x) is float and x == 0.0 and math.copysign(1.0, x) > 0) or (type(x) is int and x == 0)


def _is_floating_array(x) -> bool:
    """A floating array: ``where`` with a Python zero then keeps its dtype (the zero is a weak scalar)."""
    return type(x) not in _SCALAR_TYPES and array_kind(x.dtype) == "f"


def where(condition: Tensor, input=None, other=None) -> Tensor:
    """``input`` where ``condition`` holds, else ``other`` (broadcasting); one argument: nonzero indices."""
    if input is None and other is None:
        return condition.nonzero(as_tuple=True)
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        input = tensor(input, device=condition.device)
    return Where.apply(condition, input, other)


class DependsOn(Op):
    """``value`` (a copy), recorded as a function of ``sources`` too, with derivative zero in them (or, with
    ``undefined``, no derivative at all: differentiating then says they were not used in the graph)."""

    def forward(self, value, *sources, undefined=False, not_implemented=None):
        self.undefined, self.not_implemented = undefined, not_implemented
        return value.copy()

    def backward(self, grad):
        if self.not_implemented and any(self.needs_grad(i) for i in range(1, len(self.next_functions))):
            raise RuntimeError(f"derivative for aten::{self.not_implemented} is not implemented")
        if self.undefined:
            return grad
        zeros = [None if meta is None else self.wrap(self.backend.zeros(*meta)) for meta in self._input_meta[1:]]
        return (grad, *zeros)


def depends_on(value: Tensor, *sources: Tensor, undefined: bool = False,
               not_implemented: str | None = None) -> Tensor:
    """A gradient that reads ``sources`` only through comparisons (relu's ``where(y <= 0, 0, g)``), or not at
    all though PyTorch's formula takes them (avg_pool's, pad's, nll_loss's: linear ops), recorded under
    create_graph=True as a function of them with derivative zero.

    PyTorch's formulas for these ops (threshold_backward, avg_pool2d_backward, ...) take the saved tensor as an
    input: the gradient then requires grad whenever the source does, and differentiating it again gives zeros
    rather than "does not require grad". ``undefined``: PyTorch's double backward leaves the derivative in the
    sources undefined (convolution_backward's input gradient in the input), so differentiating w.r.t. them
    raises "not used in the graph". ``not_implemented``: PyTorch has no such derivative (hardsigmoid_backward's in
    x): differentiating w.r.t. the sources raises its RuntimeError naming that function. When grad mode is off
    (a first-order backward) ``value`` is returned as it is, so the fast path costs nothing more."""
    if grad_mode.state.enabled and any(source is not None and source.requires_grad for source in sources):
        return DependsOn.apply(value, *sources, undefined=undefined, not_implemented=not_implemented)
    return value


def masked_fill(input: Tensor, mask: Tensor, value) -> Tensor:
    """``value`` where ``mask`` is True (mask and input broadcast), differentiable in input and a tensor value."""
    if mask.dtype.name != "bool":
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype {mask.dtype.name}")
    if isinstance(value, Tensor):
        if value.dim() != 0:
            raise RuntimeError(
                "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                f"{value.dim()} dimension(s)."
            )
        value = value.to(input.dtype)
    else:
        value = tensor(value, dtype=input.dtype, device=input.device)
    # out of place, input and mask broadcast together (PyTorch); masked_fill_ checks the result fits the input
    return MaskedFill.apply(mask, value, input)


class MaskedFill(Where):
    """``where(mask, value, input)``, row-major: PyTorch fills a contiguous clone of the broadcast input."""

    row_major_output = True


class IsClose(Elementwise):
    """``|a - b| <= atol + rtol * |b|``, or equal (so equal infinities are close); NaNs only with equal_nan."""

    def compute(self, a, b, rtol, atol, equal_nan):
        xp = self.xp
        close = xp.equal(a, b)
        if equal_nan:
            close = xp.logical_or(close, xp.logical_and(xp.isnan(a), xp.isnan(b)))
        if rtol == 0 and atol == 0:
            return close
        if array_kind(a.dtype) not in "fc":
            a, b = a.astype(xp.float64), b.astype(xp.float64)
        allowed = atol + xp.abs(rtol * b)
        actual = xp.abs(a - b)
        return xp.logical_or(close, xp.logical_and(xp.isfinite(actual), xp.less_equal(actual, allowed)))


def isclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Tensor:
    """Elementwise closeness, as ``allclose`` but per element (bool result)."""
    if input.dtype is not other.dtype:
        raise RuntimeError(
            f"isclose(): expected both input and other to have the same dtype, but got {input.dtype} and {other.dtype}"
        )
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    return IsClose.apply(input, other, rtol=rtol, atol=atol, equal_nan=equal_nan)


def allclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
    """True when every element is close (see isclose)."""
    return bool(isclose(input, other, rtol, atol, equal_nan).all())


def equal(input: Tensor, other: Tensor) -> bool:
    """True when both have the same shape, names and elements (NaN is never equal)."""
    if input._names != other._names:  # named tensors: different names are not equal (PyTorch's are_names_equal)
        return False
    return input.shape == other.shape and bool(eq(input, other).all())


def _invert(self: Tensor) -> Tensor:
    """``~t``: PyTorch refuses floating tensors with a TypeError (``bitwise_not`` with NotImplementedError)."""
    if self.dtype.is_floating_point:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    return bitwise_not(self)



__all__ = [
    "eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal", "not_equal",
    "logical_and", "logical_or", "logical_xor", "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor",
    "bitwise_not", "bitwise_left_shift", "bitwise_right_shift", "where", "masked_fill", "isnan", "isinf",
    "isposinf", "isneginf", "isfinite", "signbit", "isclose", "allclose", "equal",
]

