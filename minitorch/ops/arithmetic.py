"""Arithmetic with broadcasting and type promotion: add, sub, mul, div, pow, ... and operators.

Each rule returns gradients of the broadcast shape; the engine sums them back to each input's
shape, so no rule here has to know about broadcasting.
"""

from __future__ import annotations

from ..tensor import Tensor
from .comparison import where
from .op import Op
from .promotion import promote

_SCALARS = (bool, int, float)


class Add(Op):
    def forward(self, a, b, alpha=1):
        a, b, dtype = promote(self, a, b)
        self.alpha = alpha
        return self.xp.add(a, b if alpha == 1 else b * alpha, dtype=dtype)

    def backward(self, grad):
        return grad, grad if self.alpha == 1 else grad * self.alpha


class Sub(Op):
    def forward(self, a, b, alpha=1):
        a, b, dtype = promote(self, a, b)
        self.alpha = alpha
        return self.xp.subtract(a, b if alpha == 1 else b * alpha, dtype=dtype)

    def backward(self, grad):
        return grad, -grad if self.alpha == 1 else grad * -self.alpha


class Mul(Op):
    save_inputs = (0, 1)

    def forward(self, a, b):
        a, b, dtype = promote(self, a, b)
        return self.xp.multiply(a, b, dtype=dtype)

    def backward(self, grad):
        a, b = self.saved_tensors
        return grad * b, grad * a


class Div(Op):
    save_inputs = (0, 1)

    def forward(self, a, b, rounding_mode=None):
        self.rounding_mode = rounding_mode
        xp = self.xp
        if rounding_mode is None:
            a, b, dtype = promote(self, a, b, to_float=True)
            return xp.true_divide(a, b, dtype=dtype)
        a, b, dtype = promote(self, a, b)
        if rounding_mode == "floor":
            return xp.floor_divide(a, b, dtype=dtype)
        if rounding_mode == "trunc":
            if dtype.kind == "f":
                return xp.trunc(xp.true_divide(a, b)).astype(dtype)
            quotient = xp.floor_divide(a, b, dtype=dtype)
            remainder = xp.remainder(a, b, dtype=dtype)
            return quotient + ((remainder != 0) & ((remainder < 0) != (xp.asarray(b) < 0))).astype(dtype)
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{rounding_mode}'")

    def backward(self, grad):
        a, b = self.saved_tensors
        if self.rounding_mode is not None:  # piecewise constant
            return grad * 0, grad * 0 if isinstance(b, Tensor) else None
        return grad / b, -grad * a / (b * b) if isinstance(b, Tensor) else None


class Remainder(Op):
    save_inputs = (0, 1)

    def forward(self, a, b):
        a, b, dtype = promote(self, a, b)
        return self.xp.remainder(a, b, dtype=dtype)

    def backward(self, grad):
        a, b = self.saved_tensors
        return grad, -grad * div(a, b, rounding_mode="floor") if isinstance(b, Tensor) else None


class Fmod(Op):
    save_inputs = (0, 1)

    def forward(self, a, b):
        a, b, dtype = promote(self, a, b)
        return self.xp.fmod(a, b, dtype=dtype)

    def backward(self, grad):
        a, b = self.saved_tensors
        return grad, -grad * div(a, b, rounding_mode="trunc") if isinstance(b, Tensor) else None


class Pow(Op):
    save_inputs = (0, 1)
    save_output = True

    def forward(self, a, b):
        a, b, dtype = promote(self, a, b)
        if dtype.kind in "iu" and not isinstance(b, _SCALARS) and (b < 0).any():
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        if dtype.kind in "iu" and isinstance(b, int) and b < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        return self.xp.power(a, b, dtype=dtype)

    def backward(self, grad):
        a, b, out = self.saved_tensors
        if not isinstance(b, Tensor):
            return (grad * b * a ** (b - 1) if b != 0 else grad * 0), None
        zero = grad.new_zeros(())
        grad_a = where(b == 0, zero, grad * b * a ** (b - 1))  # d/da a**0 = 0, even at a = 0
        grad_b = where((a == 0) & (b >= 0), zero, grad * out * a.log())
        return grad_a, grad_b


class Neg(Op):
    def forward(self, a):
        if a.dtype.kind == "b":
            raise RuntimeError(
                "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a "
                "mask, use the `~` or `logical_not()` operator instead."
            )
        return self.xp.negative(a)

    def backward(self, grad):
        return -grad


def _check_operand(op: str, x) -> None:
    if not isinstance(x, (Tensor, bool, int, float)) and not hasattr(x, "dtype"):
        raise TypeError(f"{op}(): argument 'other' must be Tensor or Number, not {type(x).__name__}")


def _first_tensor(a, b):
    return a if isinstance(a, Tensor) else b


def add(input, other, *, alpha=1, out=None) -> Tensor:
    _check_operand("add", other)
    if not isinstance(input, Tensor):
        return Add.apply(other, input, alpha=1) if alpha == 1 else Add.apply(other * alpha, input)
    return Add.apply(input, other, alpha=alpha)


def sub(input, other, *, alpha=1, out=None) -> Tensor:
    _check_operand("sub", other)
    if input.dtype.name == "bool" if isinstance(input, Tensor) else False:
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a "
            "mask, use the `~` or `logical_not()` operator instead."
        )
    if not isinstance(input, Tensor):
        return Add.apply(Neg.apply(other) if alpha == 1 else other * -alpha, input)
    return Sub.apply(input, other, alpha=alpha)


def mul(input, other, *, out=None) -> Tensor:
    _check_operand("mul", other)
    if not isinstance(input, Tensor):
        input, other = other, input
    return Mul.apply(input, other)


def div(input, other, *, rounding_mode=None, out=None) -> Tensor:
    _check_operand("div", other)
    if not isinstance(input, Tensor):
        from ..creation import full_like

        input = full_like(other, input, dtype=None if isinstance(input, float) else other.dtype)
    return Div.apply(input, other, rounding_mode=rounding_mode)


def true_divide(input, other) -> Tensor:
    return div(input, other)


def floor_divide(input, other) -> Tensor:
    return div(input, other, rounding_mode="floor")


def remainder(input, other) -> Tensor:
    if not isinstance(input, Tensor):
        from ..creation import full_like

        input = full_like(other, input)
    return Remainder.apply(input, other)


def fmod(input, other) -> Tensor:
    return Fmod.apply(input, other)


def pow(input, exponent) -> Tensor:  # noqa: A001 - torch.pow
    if not isinstance(input, Tensor):
        from ..creation import full_like

        input = full_like(exponent, input, dtype=None if isinstance(input, float) else exponent.dtype)
    return Pow.apply(input, exponent)


def neg(input: Tensor) -> Tensor:
    return Neg.apply(input)


negative = neg


def rsub(input: Tensor, other, *, alpha=1) -> Tensor:
    return sub(other, input, alpha=alpha)


def _reflected(fn):
    def method(self, other):
        if not isinstance(other, (Tensor, bool, int, float)) and not hasattr(other, "dtype"):
            return NotImplemented
        return fn(other, self)

    return method


def _forward(fn):
    def method(self, other):
        if not isinstance(other, (Tensor, bool, int, float)) and not hasattr(other, "dtype"):
            return NotImplemented
        return fn(self, other)

    return method


Tensor.add = add
Tensor.sub = Tensor.subtract = sub
Tensor.mul = Tensor.multiply = mul
Tensor.div = Tensor.divide = div
Tensor.true_divide = true_divide
Tensor.floor_divide = floor_divide
Tensor.remainder = remainder
Tensor.fmod = fmod
Tensor.pow = pow
Tensor.neg = Tensor.negative = neg
Tensor.__add__ = _forward(add)
Tensor.__radd__ = _reflected(add)
Tensor.__sub__ = _forward(sub)
Tensor.__rsub__ = _reflected(sub)
Tensor.__mul__ = _forward(mul)
Tensor.__rmul__ = _reflected(mul)
Tensor.__truediv__ = _forward(div)
Tensor.__rtruediv__ = _reflected(div)
Tensor.__floordiv__ = _forward(floor_divide)
Tensor.__rfloordiv__ = _reflected(floor_divide)
Tensor.__mod__ = _forward(remainder)
Tensor.__rmod__ = _reflected(remainder)
Tensor.__pow__ = _forward(pow)
Tensor.__rpow__ = _reflected(pow)
Tensor.__neg__ = neg
Tensor.__pos__ = lambda self: self
Tensor.subtract = sub

subtract, multiply, divide = sub, mul, div

__all__ = ['add', 'sub', 'subtract', 'mul', 'multiply', 'div', 'divide', 'true_divide', 'floor_divide', 'remainder', 'fmod', 'pow', 'neg', 'negative', 'rsub']
