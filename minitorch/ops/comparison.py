"""Comparisons and logical ops (bool results, no gradient), and ``where`` (gradient to the branch taken)."""

from __future__ import annotations

from ..tensor import Tensor
from .op import Op
from .promotion import promote


class Compare(Op):
    """Elementwise comparison in the operands' promoted dtype; the result is bool."""

    ufunc = ""

    def forward(self, a, b):
        a, b, _ = promote(self, a, b)
        return getattr(self.xp, self.ufunc)(a, b)


def _compare(name: str, ufunc: str):
    op = type(name.capitalize(), (Compare,), {"ufunc": ufunc})

    def function(input, other, *, out=None) -> Tensor:
        if not isinstance(input, Tensor):
            return op.apply(_as_tensor_like(other, input), other)
        return op.apply(input, other)

    function.__name__ = name
    return function


def _as_tensor_like(t: Tensor, value) -> Tensor:
    from ..creation import tensor

    return tensor(value, device=t.device)


eq = _compare("eq", "equal")
ne = _compare("ne", "not_equal")
lt = _compare("lt", "less")
le = _compare("le", "less_equal")
gt = _compare("gt", "greater")
ge = _compare("ge", "greater_equal")
logical_and = _compare("logical_and", "logical_and")
logical_or = _compare("logical_or", "logical_or")
logical_xor = _compare("logical_xor", "logical_xor")
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne


class LogicalNot(Op):
    def forward(self, a):
        return self.xp.logical_not(a)


def logical_not(input: Tensor) -> Tensor:
    return LogicalNot.apply(input)


class Bitwise(Op):
    ufunc = ""

    def forward(self, a, b=None):
        if b is None:
            return getattr(self.xp, self.ufunc)(a)
        a, b, _ = promote(self, a, b)
        if a.dtype.kind == "f" or getattr(b, "dtype", None) is not None and b.dtype.kind == "f":
            raise RuntimeError(f"\"{self.ufunc}_cpu\" not implemented for 'Float'")
        return getattr(self.xp, self.ufunc)(a, b)


def _bitwise(name: str, ufunc: str):
    op = type(name, (Bitwise,), {"ufunc": ufunc})

    def function(input, other=None) -> Tensor:
        return op.apply(input) if other is None else op.apply(input, other)

    function.__name__ = name
    return function


bitwise_and = _bitwise("bitwise_and", "bitwise_and")
bitwise_or = _bitwise("bitwise_or", "bitwise_or")
bitwise_xor = _bitwise("bitwise_xor", "bitwise_xor")
bitwise_not = _bitwise("bitwise_not", "invert")


class Where(Op):
    save_inputs = (0,)

    def forward(self, condition, a, b):
        if condition.dtype.kind != "b":
            raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype {condition.dtype}")
        a, b, dtype = promote(self, a, b)
        return self.xp.where(condition, a, b).astype(dtype, copy=False)

    def backward(self, grad):
        (condition,) = self.saved_tensors
        zero = grad.new_zeros(())
        return None, where(condition, grad, zero), where(condition, zero, grad)


def where(condition: Tensor, input=None, other=None) -> Tensor:
    """``input`` where ``condition`` holds, else ``other`` (broadcasting); one argument: nonzero indices."""
    if input is None and other is None:
        return condition.nonzero(as_tuple=True)
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        from ..creation import tensor

        input = tensor(input, device=condition.device)
    return Where.apply(condition, input, other)


def masked_fill(input: Tensor, mask: Tensor, value) -> Tensor:
    """``value`` where ``mask`` is True (mask broadcasts to input), differentiable in input and a tensor value."""
    if mask.dtype.name != "bool":
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype {mask.dtype}")
    if isinstance(value, Tensor):
        if value.dim() != 0:
            raise RuntimeError(
                f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with {value.dim()} dimension(s)."
            )
        value = value.to(input.dtype)
    else:
        from ..creation import tensor

        value = tensor(value, dtype=input.dtype, device=input.device)
    out = Where.apply(mask, value, input)
    if out._array.shape != input._array.shape:
        raise RuntimeError(
            f"masked_fill: the mask of shape {list(mask.shape)} must broadcast to the input's shape {list(input.shape)}"
        )
    return out


def isnan(input: Tensor) -> Tensor:
    return ne(input, input)


class _Classify(Op):
    fn = ""

    def forward(self, a):
        return getattr(self.xp, self.fn)(a)


_Isinf = type("Isinf", (_Classify,), {"fn": "isinf"})
_Isfinite = type("Isfinite", (_Classify,), {"fn": "isfinite"})


def isinf(input: Tensor) -> Tensor:
    return _Isinf.apply(input)


def isfinite(input: Tensor) -> Tensor:
    return _Isfinite.apply(input)


def equal(input: Tensor, other: Tensor) -> bool:
    """True when both have the same shape and elements."""
    return input.shape == other.shape and bool(eq(input, other).all())


for _fn in (eq, ne, lt, le, gt, ge, logical_and, logical_or, logical_xor, logical_not, bitwise_and, bitwise_or,
            bitwise_xor, bitwise_not, masked_fill, isnan, isinf, isfinite, equal):
    setattr(Tensor, _fn.__name__, _fn)
Tensor.greater, Tensor.greater_equal, Tensor.less, Tensor.less_equal, Tensor.not_equal = gt, ge, lt, le, ne
Tensor.where = lambda self, condition, other: where(condition, self, other)
Tensor.__eq__ = lambda self, other: eq(self, other)
Tensor.__ne__ = lambda self, other: ne(self, other)
Tensor.__lt__ = lambda self, other: lt(self, other)
Tensor.__le__ = lambda self, other: le(self, other)
Tensor.__gt__ = lambda self, other: gt(self, other)
Tensor.__ge__ = lambda self, other: ge(self, other)
Tensor.__and__ = Tensor.__rand__ = lambda self, other: bitwise_and(self, other)
Tensor.__or__ = Tensor.__ror__ = lambda self, other: bitwise_or(self, other)
Tensor.__xor__ = Tensor.__rxor__ = lambda self, other: bitwise_xor(self, other)
Tensor.__invert__ = lambda self: bitwise_not(self)
Tensor.__hash__ = object.__hash__

__all__ = ['eq', 'ne', 'lt', 'le', 'gt', 'ge', 'greater', 'greater_equal', 'less', 'less_equal', 'not_equal', 'logical_and', 'logical_or', 'logical_xor', 'logical_not', 'bitwise_and', 'bitwise_or', 'bitwise_xor', 'bitwise_not', 'where', 'masked_fill', 'isnan', 'isinf', 'isfinite', 'equal']
