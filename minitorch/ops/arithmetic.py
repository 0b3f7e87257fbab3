"""Arithmetic with broadcasting and type promotion: add, sub, mul, div, remainder, fmod, pow, neg, operators.

Each op class holds its kernel (``compute``) beside its derivative (``backward``). Rules return
gradients of the broadcast shape; the engine sums them back to each input's shape and casts them
to its dtype, so no rule here knows about broadcasting. Either operand may be a Python scalar
(``2 - t``, ``torch.pow(2, t)``): kernels take it as a weak scalar and backward returns None for it.
"""

from __future__ import annotations

import math
import numbers

from .._backends.dtypes import is_bfloat16
from .._dtype import scalar_type_name
from ..autograd.graph import saved_arrays
from ..creation import zeros_like
from ..tensor import Tensor
from .arguments import type_name
from .comparison import where
from .op import add_tangents
from .promotion import Elementwise, array_kind, conj_if_complex, promote

_SCALAR_TYPES = (bool, int, float, complex)
_OPERAND_TYPES = (Tensor, bool, int, float, complex)


def _zeros(grad: Tensor) -> Tensor:
    return zeros_like(grad)


class Add(Elementwise):
    array_derivative = True
    alpha = 1  # an instance sets its own only when given one

    def compute(self, a, b, alpha=1):
        a, b, dtype = promote(self, a, b)
        if alpha != 1 or type(alpha) is not int:
            _check_alpha("add", alpha, dtype)
            self.alpha = alpha
            b = b * alpha  # bfloat16 * a float: float32 (numpy), rounded once below
            return self.xp.add(a, b).astype(dtype, copy=False)
        return self.xp.add(a, b)

    def backward(self, grad):
        alpha = self.alpha
        metas = self._input_meta  # (needs_grad(0) and (1), inlined: a hot backward)
        return (grad if metas[0] is not None else None), (
            (grad if alpha == 1 else grad * conj_if_complex(alpha)) if len(metas) > 1 and metas[1] is not None
            else None)

    def _evaluate_on_arrays(self, grads):  # backward reads no saved value: on arrays it is the same call
        return self.backward(grads[0])

    def jvp(self, inputs, outputs, tangents):  # d(a + alpha b) = da + alpha db
        ta, tb = tangents
        return add_tangents(ta, tb if tb is None or self.alpha == 1 else tb * self.alpha)


class Sub(Elementwise):
    array_derivative = True
    alpha = 1

    def compute(self, a, b, alpha=1):
        _check_sub_bool(a, b)
        a, b, dtype = promote(self, a, b)
        if alpha != 1 or type(alpha) is not int:
            _check_alpha("sub", alpha, dtype)
            self.alpha = alpha
            b = b * alpha  # bfloat16 * a float: float32 (numpy), rounded once below
            return self.xp.subtract(a, b).astype(dtype, copy=False)
        return self.xp.subtract(a, b)

    def backward(self, grad):
        alpha = self.alpha
        metas = self._input_meta  # (needs_grad(0) and (1), inlined: a hot backward)
        return (grad if metas[0] is not None else None), (
            (-grad if alpha == 1 else grad * -conj_if_complex(alpha)) if len(metas) > 1 and metas[1] is not None
            else None)

    def _evaluate_on_arrays(self, grads):  # backward reads no saved value: on arrays it is the same call
        return self.backward(grads[0])

    def jvp(self, inputs, outputs, tangents):  # d(a - alpha b) = da - alpha db
        ta, tb = tangents
        return add_tangents(ta, None if tb is None else (-tb if self.alpha == 1 else tb * -self.alpha))


def _is_bool(x) -> bool:
    return type(x) is bool or (not isinstance(x, (int, float, complex)) and x.dtype.kind == "b")


def _check_sub_bool(a, b) -> None:
    """PyTorch refuses ``-`` on bool tensors (it would be an 'invert', spelled ``~``)."""
    a_bool, b_bool = _is_bool(a), _is_bool(b)
    if a_bool and b_bool:
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. "
            "Use the `^` or `logical_xor()` operator instead."
        )
    if a_bool or b_bool:
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. "
            "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead."
        )


def _check_alpha(name: str, alpha, dtype) -> None:
    if type(alpha) is bool and dtype.kind != "b":
        raise RuntimeError(f"{name}: Boolean alpha only supported for Boolean results.")
    if array_kind(dtype) not in "fc" and not isinstance(alpha, int):
        raise RuntimeError(f"{name}: For integral input tensors, argument alpha must not be a floating point number.")


class Mul(Elementwise):
    array_derivative = True
    save_inputs = (0, 1)
    saved_when = {0: (1,), 1: (0,)}  # d(ab)/da needs b; d(ab)/db needs a

    def compute(self, a, b):
        a, b, dtype = promote(self, a, b, float32_scalars=True)
        result = self.xp.multiply(a, b)
        return result if result.dtype is dtype else result.astype(dtype, copy=False)  # bfloat16 * 0.3

    def backward(self, grad):
        a, b = self.saved_tensors
        return (grad * conj_if_complex(b) if self.needs_grad(0) else None), (
            grad * conj_if_complex(a) if self.needs_grad(1) else None)

    def _evaluate_on_arrays(self, grads):
        """``backward`` on arrays without the general call's frames; of one real dtype (``_uniform``, the engine's
        common case) the conjugates are the values themselves."""
        uniform = self._uniform
        if uniform is None or uniform.kind == "c":
            return super()._evaluate_on_arrays(grads)
        a, b = saved_arrays(self)
        metas = self._input_meta  # (needs_grad(i), inlined)
        grad = grads[0]
        return (grad * b if metas[0] is not None else None), (
            grad * a if len(metas) > 1 and metas[1] is not None else None)

    def jvp(self, inputs, outputs, tangents):  # d(ab) = da b + a db
        (a, b), (ta, tb) = inputs, tangents
        return add_tangents(None if ta is None else ta * b, None if tb is None else a * tb)


class Div(Elementwise):
    """True division (integers become the default float dtype), or floor/trunc-rounded division.
    Rounded division is piecewise constant: its gradient is zero, as in PyTorch."""

    save_inputs = (0, 1)
    saved_when = {0: (1,)}  # a is read only for b's gradient
    rounding_mode = None  # (forward sets it; the fast path of ``/`` leaves the default)

    @property
    def array_derivative(self) -> bool:  # rounded division's zero gradient is built with zeros_like
        return self.rounding_mode is None

    def compute(self, a, b, rounding_mode=None):
        self.rounding_mode = rounding_mode
        xp = self.xp
        if rounding_mode is None:
            a, b, dtype = promote(self, a, b, to_float=True, float32_scalars=True)
            result = xp.true_divide(a, b)
            return result if result.dtype is dtype else result.astype(dtype, copy=False)  # bfloat16 / 0.3
        if rounding_mode not in ("floor", "trunc"):
            raise RuntimeError(
                f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{rounding_mode}'"
            )
        a, b, dtype = promote(self, a, b)
        _check_not_complex("div_floor_cpu" if rounding_mode == "floor" else "div_trunc_cpu", dtype)
        if array_kind(dtype) != "f":
            _check_integer_divisor(self, b)
            quotient = xp.floor_divide(a, b)
            if rounding_mode == "floor" or dtype.kind == "u":
                return quotient
            # floor rounds down; trunc rounds towards zero: one more where the signs differ and it is inexact
            inexact = xp.not_equal(xp.remainder(a, b), 0)
            return quotient + xp.logical_and(inexact, xp.not_equal(xp.less(a, 0), xp.less(b, 0)))
        if rounding_mode == "floor":
            return xp.floor_divide(a, b)
        return xp.trunc(xp.true_divide(a, b))

    def backward(self, grad):
        a, b = self.saved_tensors
        if self.rounding_mode is not None:
            return (_zeros(grad) if self.needs_grad(0) else None), (_zeros(grad) if self.needs_grad(1) else None)
        # -g * ((a / b) / b) rather than -g * a / (b * b): PyTorch's form (div_tensor_other_backward, grouped as it
        # is, so float32 second derivatives round alike), whose derivative at b = 0 is +-inf (through b * b it is
        # inf * 0 = nan), and b * b does not underflow for tiny b; complex: conjugated
        b_conj = conj_if_complex(b)
        return (grad / b_conj if self.needs_grad(0) else None), (
            -grad * (conj_if_complex(a / b) / b_conj) if self.needs_grad(1) else None)

    def jvp(self, inputs, outputs, tangents):  # d(a / b) = da / b - (a / b) db / b; rounded: zero
        b, (ta, tb), out = inputs[1], tangents, outputs[0]
        if self.rounding_mode is not None:
            return zeros_like(out)
        return add_tangents(None if ta is None else ta / b, None if tb is None else -tb * (out / b))


class FloorDivide(Div):
    """``floor_divide`` and ``//``: PyTorch defines no derivative for aten::floor_divide (unlike div with
    rounding_mode='floor', whose gradient is zero), so its backward raises."""

    def backward(self, grad):
        raise RuntimeError("derivative for aten::floor_divide is not implemented")

    def jvp(self, inputs, outputs, tangents):
        raise NotImplementedError("Trying to use forward AD with aten::floor_divide that does not support it.")


def _check_not_complex(kernel: str, dtype) -> None:
    """Rounded division and remainders have no complex kernels in PyTorch."""
    if dtype.kind == "c":
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{scalar_type_name(dtype)}'")


def _check_integer_divisor(op: Elementwise, b) -> None:
    """Integer division by zero raises in PyTorch (numpy would return 0 with a warning)."""
    if type(b) in _SCALAR_TYPES:
        zero = b == 0
    else:
        zero = not op.on_meta and bool((b == 0).any())
    if zero:
        raise RuntimeError("ZeroDivisionError")


class Remainder(Elementwise):
    """Python's modulo: the result has the divisor's sign. d/db = -floor(a / b)."""

    save_inputs = (0, 1)
    saved_when = {0: (1,), 1: (1,)}  # only b's gradient reads them

    tensor_other = False

    def name(self) -> str:  # RemainderBackward0: a number divisor, RemainderBackward1: a tensor
        return "RemainderBackward1" if self.tensor_other else "RemainderBackward0"

    def compute(self, a, b):
        self.tensor_other = hasattr(b, "shape")
        a, b, dtype = promote(self, a, b)
        _check_not_complex("remainder_cpu", dtype)
        if array_kind(dtype) != "f":
            _check_integer_divisor(self, b)
        return self.xp.remainder(a, b)

    def backward(self, grad):
        a, b = self.saved_tensors
        grad_b = -grad * div(a, b, rounding_mode="floor") if self.needs_grad(1) else None
        return (grad if self.needs_grad(0) else None), grad_b


class Fmod(Elementwise):
    """C's fmod: the result has the dividend's sign. d/db = -trunc(a / b)."""

    save_inputs = (0, 1)
    saved_when = {0: (1,), 1: (1,)}  # only b's gradient reads them

    tensor_other = False

    def name(self) -> str:  # FmodBackward0: a number divisor, FmodBackward1: a tensor
        return "FmodBackward1" if self.tensor_other else "FmodBackward0"

    def compute(self, a, b):
        self.tensor_other = hasattr(b, "shape")
        a, b, dtype = promote(self, a, b)
        _check_not_complex("fmod_cpu", dtype)
        if array_kind(dtype) != "f":
            _check_integer_divisor(self, b)
        return self.xp.fmod(a, b)

    def backward(self, grad):
        a, b = self.saved_tensors
        grad_b = -grad * div(a, b, rounding_mode="trunc") if self.needs_grad(1) else None
        return (grad if self.needs_grad(0) else None), grad_b


class Pow(Elementwise):
    """``a ** b``; either side may be a Python scalar. As in PyTorch, d/da is 0 where b == 0 (even at
    a == 0) and d/db is 0 where a == 0 and b >= 0 (instead of the 0 * log(0) = nan of the formula). The
    formulas are composed as PyTorch's pow_backward_self / pow_backward_exponent, so that non-finite
    gradients and second derivatives (nan at a zero base, from the masked log(0) branch) agree."""

    save_inputs = (0, 1)
    save_output = True  # a ** b, read by the exponent's gradient; not saved for a number exponent (below)
    exponent = None  # a Python number exponent (``x ** 2``), else None
    number_base = False  # ``2 ** x``

    def name(self) -> str:  # PyTorch's overloads: Tensor ** number, Tensor ** Tensor, number ** Tensor
        return "PowBackward2" if self.number_base else "PowBackward0" if self.exponent is not None else "PowBackward1"

    @property
    def array_derivative(self) -> bool:  # grad * (b * a ** (b - 1)): arithmetic when b is a number other than 0
        return self.exponent is not None and self.exponent not in (0, 0.5)  # a ** -0.5 is rsqrt (compute)

    def forward(self, a, b):
        result = super().forward(a, b)
        self.number_base = type(a) in _SCALAR_TYPES
        if self.number_base and type(result) is self.backend.ndarray and not result.flags.c_contiguous:
            result = self.xp.ascontiguousarray(result)  # PyTorch's pow.Scalar allocates its output row-major
        return result

    def compute(self, a, b):
        if type(b) in _SCALAR_TYPES:
            # PyTorch's pow.Tensor_Scalar saves only the input: modifying x ** 2.5 in place leaves backward valid
            self.exponent, self.save_output = b, False
            if b in (3, -2) and type(b) is not complex and is_bfloat16(a.dtype):
                # PyTorch's bfloat16 kernel multiplies in bfloat16 for these: (x * x) * x and 1 / (x * x)
                return a * a * a if b == 3 else 1 / (a * a)
        a, b, dtype = promote(self, a, b)
        xp = self.xp
        if dtype.kind not in "iu":
            if type(b) in _SCALAR_TYPES and b == -0.5:  # PyTorch's rsqrt: -inf at -0.0, nan at -inf
                return 1 / xp.sqrt(a)
            return xp.power(a, b)
        if type(b) in _SCALAR_TYPES:
            if b < 0:
                raise RuntimeError("Integers to negative integer powers are not allowed.")
            return xp.power(a, b)
        if dtype.kind == "u":
            return xp.power(a, b)
        # integer tensor exponents may be negative: 1 ** -n = 1, (-1) ** -n = +-1, anything else 0
        negative = b < 0
        result = xp.power(a, xp.where(negative, 0, b).astype(dtype, copy=False))
        special = xp.where(xp.equal(a, 1), 1, xp.where(xp.equal(a, -1), 1 - 2 * xp.bitwise_and(b, 1), 0))
        return xp.where(negative, special, result).astype(dtype, copy=False)

    def backward(self, grad):
        a, b, *out = self.saved_tensors  # out: [a ** b], or [] when b is a number
        out = out[0] if out else None
        # complex: grad * conj(f'), and f' is a real-coefficient formula, so f' of the conjugates
        a, b, out = conj_if_complex(a), conj_if_complex(b), conj_if_complex(out)
        grad_a = grad_b = None
        if self.needs_grad(0):
            if type(b) in _SCALAR_TYPES:
                grad_a = _zeros(grad) if b == 0 else grad * (b * a ** (b - 1))
            else:
                grad_a = where(b == 0, 0.0, grad * (b * a ** (b - 1)))
        if self.needs_grad(1):  # grad outside the where: a non-finite grad gives nan even where d/db is 0
            if type(a) in _SCALAR_TYPES:
                log_a = math.log(a) if a > 0 else -math.inf if a == 0 else math.nan
                grad_b = grad * (where(b.real >= 0, 0.0, out * log_a) if a == 0 else out * log_a)
            else:
                grad_b = grad * where((a == 0) & (b.real >= 0), 0.0, out * a.log())  # (real: b itself)
        return grad_a, grad_b


class Neg(Elementwise):
    array_derivative = True

    def compute(self, a):
        if a.dtype.kind == "b":
            raise RuntimeError(
                "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a "
                "mask, use the `~` or `logical_not()` operator instead."
            )
        return self.xp.negative(a)

    def backward(self, grad):
        return -grad

    def jvp(self, inputs, outputs, tangents):
        return -tangents[0]


# functions -------------------------------------------------------------------------------------
def _need_tensor(name: str, input, other) -> None:
    """Python numbers are accepted in either position (PyTorch wraps them), but one must be a Tensor; a
    non-Tensor ``input`` must be a number (not a numpy array or a list)."""
    if not isinstance(other, Tensor) or not isinstance(input, numbers.Number):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type_name(input)}")


def add(input: Tensor | float, other, *, alpha=1) -> Tensor:
    """``input + alpha * other`` with broadcasting and type promotion."""
    if not isinstance(input, Tensor):
        _need_tensor("add", input, other)
    return Add.apply(input, other, alpha=alpha)


def sub(input: Tensor | float, other, *, alpha=1) -> Tensor:
    """``input - alpha * other``; refuses bool tensors as PyTorch does."""
    if not isinstance(input, Tensor):
        _need_tensor("sub", input, other)
    return Sub.apply(input, other, alpha=alpha)


class Rsub(Sub):
    """``number - tensor`` (``__rsub__``, ``rsub(tensor, number)``): Sub with the number first, named as
    PyTorch's rsub.Scalar node."""

    def name(self) -> str:
        return "RsubBackward1"


def rsub(input: Tensor, other, *, alpha=1) -> Tensor:
    """``other - alpha * input``."""
    if not isinstance(other, Tensor) and isinstance(input, Tensor) and input._dense:
        return Rsub.apply(other, input, alpha=alpha)
    return sub(other, input, alpha=alpha)


def mul(input: Tensor | float, other) -> Tensor:
    if not isinstance(input, Tensor):
        _need_tensor("mul", input, other)
    return Mul.apply(input, other)


def div(input: Tensor | float, other, *, rounding_mode: str | None = None) -> Tensor:
    """True division (integers give the default float dtype), or rounded with 'floor' / 'trunc'."""
    if not isinstance(input, Tensor):
        _need_tensor("div", input, other)
    return Div.apply(input, other, rounding_mode=rounding_mode)


def true_divide(input: Tensor, other) -> Tensor:
    return div(input, other)


def floor_divide(input: Tensor, other) -> Tensor:
    """Division rounded towards -inf (PyTorch >= 1.13 semantics); integer inputs stay integer."""
    if not isinstance(input, Tensor):
        _need_tensor("floor_divide", input, other)
    return FloorDivide.apply(input, other, rounding_mode="floor")


def remainder(input: Tensor | float, other) -> Tensor:
    """Python's ``%``: the result takes the divisor's sign."""
    if not isinstance(input, Tensor):
        _need_tensor("remainder", input, other)
    return Remainder.apply(input, other)


def fmod(input: Tensor | float, other) -> Tensor:
    """C's fmod: the result takes the dividend's sign."""
    if not isinstance(input, Tensor):
        _need_tensor("fmod", input, other)
    return Fmod.apply(input, other)


def pow(input: Tensor | float, exponent) -> Tensor:  # noqa: A001 - torch.pow
    """``input ** exponent``; ``input`` may be a Python number (``torch.pow(2, t)``)."""
    if not isinstance(input, Tensor):
        _need_tensor("pow", input, exponent)
    return Pow.apply(input, exponent)


def neg(input: Tensor) -> Tensor:
    return Neg.apply(input)


def positive(input: Tensor) -> Tensor:
    """``+input``: the input itself (PyTorch refuses bool tensors)."""
    if input.dtype.name == "bool":
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


negative, subtract, multiply, divide = neg, sub, mul, div


__all__ = [
    "add", "sub", "subtract", "rsub", "mul", "multiply", "div", "divide", "true_divide", "floor_divide",
    "remainder", "fmod", "pow", "neg", "negative", "positive",
]

