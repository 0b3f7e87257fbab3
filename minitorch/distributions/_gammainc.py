"""The regularized lower incomplete gamma function ``P(a, x)`` (``torch.special.gammainc``), for
``Gamma.cdf``. Values come from the power series (``x < a + 1``) or Lentz's continued fraction for
``Q = 1 - P`` (otherwise), in float64. As in PyTorch, only the derivative with respect to ``x`` exists
(``x ** (a - 1) exp(-x) / Gamma(a)``); asking for the one with respect to ``a`` raises."""

from __future__ import annotations

from .. import _dtype
from ..autograd import Function, no_grad
from ..ops.comparison import where
from ..ops.shape import broadcast_shapes
from ..tensor import Tensor

_MAX_TERMS = 2000
_TOLERANCE = 1e-16
_TINY = 1e-300


def _series(a: Tensor, x: Tensor) -> Tensor:
    """``P(a, x) = exp(-x + a log x - lgamma(a)) * sum_n x**n / (a (a+1) ... (a+n))``."""
    term = 1.0 / a
    total = term
    denominator = a
    for _ in range(_MAX_TERMS):
        denominator = denominator + 1
        term = term * x / denominator
        total = total + term
        if not bool((term.abs() > total.abs() * _TOLERANCE).any()):
            break
    return total * (-x + a * x.log() - a.lgamma()).exp()


def _continued_fraction(a: Tensor, x: Tensor) -> Tensor:
    """``Q(a, x)`` by the modified Lentz method on the Legendre continued fraction."""
    b = x + 1 - a
    c = x.new_full(x.shape, 1 / _TINY)
    d = 1 / where(b.abs() < _TINY, _TINY, b)
    h = d
    for i in range(1, _MAX_TERMS):
        an = -i * (i - a)
        b = b + 2
        d = an * d + b
        d = 1 / where(d.abs() < _TINY, _TINY, d)
        c = b + an / c
        c = where(c.abs() < _TINY, _TINY, c)
        delta = d * c
        h = h * delta
        if not bool(((delta - 1).abs() > _TOLERANCE).any()):
            break
    return (-x + a * x.log() - a.lgamma()).exp() * h


def _gammainc_values(a: Tensor, x: Tensor) -> Tensor:
    with no_grad():
        a64, x64 = a.to(_dtype.float64), x.to(_dtype.float64)
        shape = _shape(a64, x64)
        a64, x64 = a64.expand(shape).contiguous(), x64.expand(shape).contiguous()
        use_series = x64 < a64 + 1
        safe_x = where(x64 > 0, x64, 1.0)
        series = _series(a64[use_series], safe_x[use_series])
        fraction = 1 - _continued_fraction(a64[~use_series], safe_x[~use_series])
        result = a64.new_zeros(a64.shape)
        result[use_series] = series
        result[~use_series] = fraction
        result = where(x64 > 0, result, 0.0)
        result = where(x64.isinf(), 1.0, result)
        result = where(a64.isnan() | x64.isnan() | (a64 < 0) | (x64 < 0), float("nan"), result)
        return result.to(_dtype.promote_types(a.dtype, x.dtype))


def _shape(a: Tensor, x: Tensor) -> tuple:
    return tuple(broadcast_shapes(a.shape, x.shape))


class GammaInc(Function):
    """``P(a, x)`` with the derivative in ``x`` only."""

    @staticmethod
    def forward(ctx, a, x):
        ctx.save_for_backward(a, x)
        ctx.save_for_forward(a, x)
        return _gammainc_values(a, x)

    @staticmethod
    def backward(ctx, grad_output):
        a, x = ctx.saved_tensors
        if ctx.needs_input_grad[0]:
            raise NotImplementedError("the derivative for 'igamma: input' is not implemented.")
        density = (-x + (a - 1) * x.log() - a.lgamma()).exp()
        return None, _sum_to(grad_output * density, x.shape)

    @staticmethod
    def jvp(ctx, tangent_a, tangent_x):  # d/dx P(a, x) = x^(a-1) e^-x / Gamma(a); none in a, as PyTorch's
        a, x = ctx.saved_tensors
        if tangent_a is not None and bool((tangent_a != 0).any()):
            raise NotImplementedError("the derivative for 'igamma: input' is not implemented.")
        return tangent_x * (-x + (a - 1) * x.log() - a.lgamma()).exp()


def _sum_to(grad: Tensor, shape) -> Tensor:
    """Sum a broadcast gradient back to ``shape``."""
    extra = grad.dim() - len(shape)
    if extra:
        grad = grad.sum(tuple(range(extra)))
    dims = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
    return grad.sum(dims, keepdim=True) if dims else grad


def gammainc(a: Tensor, x: Tensor) -> Tensor:
    """``torch.special.gammainc(a, x)``: the regularized lower incomplete gamma function."""
    return GammaInc.apply(a, x)
