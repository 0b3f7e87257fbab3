"""Reductions over dims (int, tuple or all) with keepdim, and the cumulative scans.

Every backward first restores the reduced dims as size 1 (``restore_dims``) so the gradient
broadcasts against the input. Max/min-like values either share their gradient evenly among all
tied elements (``max()``, ``amax``, ``median()``: ``SplitAmongTies``) or send it to the one element
whose index they return (``max(dim)``, ``sort``, ``topk``: ``SelectAlongDim``), as PyTorch does.
"""

from __future__ import annotations

import builtins
import math
import warnings

from .. import _dtype, return_types
from .._backends.dtypes import FLOAT32, is_bfloat16
from .._names import resolve_dims
from ..autograd import grad_mode
from ..creation import tensor
from ..tensor import Tensor, wrap_dim
from . import comparison, pointwise
from .arguments import user_stacklevel
from .comparison import where
from .op import Op, linear_jvp
from .promotion import array_kind, as_float, broadcast_dims, conj_if_complex
from .shape import cat, stack

_INF = float("inf")
_LEGACY_NAMES = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}
_FLOAT_NAMES = {"float64": "Double", "float32": "Float", "float16": "Half", "bfloat16": "BFloat16"}


def reduction_dims(dim, ndim: int) -> tuple:
    """``dim`` (None, int, or sequence; [] means all) as a sorted tuple of non-negative dims."""
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return tuple(range(ndim))
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    wrapped = tuple(sorted({wrap_dim(d, ndim) for d in dims}))
    if ndim == 0:  # a 0-d tensor accepts dim 0 / -1, and there is nothing to reduce
        return ()
    if len(wrapped) != len(dims):
        repeated = next(d for d in wrapped if [wrap_dim(e, ndim) for e in dims].count(d) > 1)
        raise RuntimeError(f"dim {repeated} appears multiple times in the list of dims")
    return wrapped


def keepdim_shape(shape: tuple, dims: tuple) -> tuple:
    return tuple(1 if i in dims else n for i, n in enumerate(shape))


def restore_dims(t: Tensor, shape: tuple, dims: tuple, keepdim: bool) -> Tensor:
    """A reduced result (or its gradient) with the reduced dims back as size 1, to broadcast against the input."""
    return t if keepdim else t.reshape(keepdim_shape(shape, dims))


def accumulate_dtype(backend, array, dtype):
    """PyTorch sums integers and bools in int64; floats keep their dtype unless ``dtype`` is given."""
    if dtype is not None:
        return backend.array_dtype(dtype)
    if array.dtype.kind in "biu":
        return backend.array_dtype(_dtype.int64)
    return array.dtype


def _int64(op: Op):
    return op.backend.array_dtype(_dtype.int64)


def _check_nonempty(name: str, shape: tuple, dims: tuple) -> None:
    """Reductions without an identity (max, argmax, median, ...) refuse an empty reduced dim: IndexError, as
    in PyTorch."""
    for d in dims:
        if shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def _on_0d(fn, input: Tensor, *args):
    """Run a dim-wise op on a 0-d tensor as on one element (PyTorch accepts dim 0 / -1 there)."""
    result = fn(input.reshape(1), 0, *args)
    if isinstance(result, tuple):
        return type(result)(*(r.reshape(()) for r in result))
    return result.reshape(())


# sum, mean, prod --------------------------------------------------------------------------------------
class Sum(Op):
    row_major_output = True
    dim_given = False  # PyTorch's node: SumBackward0 for sum(x), SumBackward1 for sum(x, dim)
    array_derivative = True  # backward is a broadcast (broadcast_to on arrays): the loss's sum joins the array path
    input_shaped_grads = True

    jvp = linear_jvp  # forward mode: linear in its first input, so the op itself on the tangent (ops/op.py)

    def name(self) -> str:
        return "SumBackward1" if self.dim_given else "SumBackward0"

    def forward(self, x, dims, keepdim, dtype=None, dim_given=False):
        self.input_shape, self.dims, self.keepdim, self.dim_given = x.shape, dims, keepdim, dim_given
        return self.backend.sum(x, dims, keepdim, accumulate_dtype(self.backend, x, dtype))

    def backward(self, grad):
        grad = restore_dims(grad, self.input_shape, self.dims, self.keepdim)
        return self.backend.broadcast_to(grad, self.input_shape) if self._on_arrays else grad.expand(self.input_shape)


class Mean(Op):
    row_major_output = True
    dim_given = False  # MeanBackward0 for mean(x), MeanBackward1 for mean(x, dim)
    array_derivative = True  # as Sum's, divided by the count
    input_shaped_grads = True

    jvp = linear_jvp  # forward mode: linear in its first input, so the op itself on the tangent (ops/op.py)

    def name(self) -> str:
        return "MeanBackward1" if self.dim_given else "MeanBackward0"

    def forward(self, x, dims, keepdim, dtype=None, dim_given=False):
        self.dim_given = dim_given
        if dtype is None and array_kind(x.dtype) not in "fc":
            raise RuntimeError(
                f"mean(): could not infer output dtype. Input dtype must be either a floating point or complex "
                f"dtype. Got: {self.backend.dtype_of(x).name.capitalize()}"
            )
        self.input_shape, self.dims, self.keepdim = x.shape, dims, keepdim
        self.count = math.prod(x.shape[d] for d in dims)
        return self.backend.mean(x, dims, keepdim, accumulate_dtype(self.backend, x, dtype))

    def backward(self, grad):
        return Sum.backward(self, grad) / self.count


def sum(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:  # noqa: A001
    return Sum.apply(input, reduction_dims(dim, input.dim()), keepdim, dtype, dim is not None)


def mean(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    return Mean.apply(input, reduction_dims(dim, input.dim()), keepdim, dtype, dim is not None)


def sum_to_size(input: Tensor, *size) -> Tensor:
    """Sum ``input`` down to ``size``, which ``input`` must broadcast from (the reverse of expand)."""
    size = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else tuple(size)
    shape = input._array.shape
    if shape == size:
        return input
    lead = len(shape) - len(size)
    if lead < 0 or builtins.any(n != 1 and n != shape[lead + i] for i, n in enumerate(size)):
        raise RuntimeError(f"size {list(size)} is not expandable to size {list(shape)}.")
    out = Sum.apply(input, broadcast_dims(size, shape), True, None, True)
    return out.reshape(size) if lead else out


class Prod(Op):
    """Product over one dim or all. Without zeros the gradient is ``out / x``; with zeros it is the
    product of the *other* elements, from exclusive cumprods (PyTorch's prod_safe_zeros_backward)."""
    row_major_output = True

    save_inputs = (0,)
    save_output = True

    def name(self) -> str:
        return "ProdBackward0" if self.dim is None else "ProdBackward1"

    def forward(self, x, dim, keepdim, dtype=None):
        self.input_shape, self.dim, self.keepdim = x.shape, dim, keepdim
        return self.xp.prod(x, axis=dim, keepdims=keepdim, dtype=accumulate_dtype(self.backend, x, dtype))

    def backward(self, grad):
        x, out = map(conj_if_complex, self.saved_tensors)  # complex: grad * conj(d out / dx), of the conjugates
        dims = tuple(range(x.dim())) if self.dim is None else (self.dim,)
        grad = restore_dims(grad, self.input_shape, dims, self.keepdim)
        if x.dim() == 0:
            return grad
        if not bool((x == 0).any()):  # also for an empty x: the gradient still depends on x, as in PyTorch
            return grad * (restore_dims(out, self.input_shape, dims, self.keepdim) / x)
        if self.dim is None:
            return grad * _product_of_others(x.reshape(-1), 0).reshape(self.input_shape)
        return grad * _product_of_others(x, self.dim)


def _along(t: Tensor, dim: int, values: list) -> Tensor:
    """An int64 index tensor holding ``values`` along ``dim``, expanded to ``t``'s shape (for gather)."""
    shape = [1] * t.dim()
    shape[dim] = len(values)
    return tensor(values, dtype=_dtype.int64, device=t.device).reshape(shape).expand(t.shape)


def _exclusive_cumprod(x: Tensor, dim: int) -> Tensor:
    """``[1, x0, x0*x1, ...]`` along ``dim``, differentiable (a gather shifts, cumprod multiplies)."""
    n = x.shape[dim]
    shifted = x.gather(dim, _along(x, dim, [0] + list(range(n - 1))))
    first = _along(x, dim, [1] + [0] * (n - 1)) == 1
    return where(first, 1.0, shifted).cumprod(dim)


def _product_of_others(x: Tensor, dim: int) -> Tensor:
    """``prod(x_j for j != i)`` along ``dim`` for every i, correct when x has zeros; O(n)."""
    reverse = _along(x, dim, list(range(x.shape[dim] - 1, -1, -1)))
    backwards = _exclusive_cumprod(x.gather(dim, reverse), dim).gather(dim, reverse)
    return _exclusive_cumprod(x, dim) * backwards


def prod(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """Product of all elements, or along one ``dim``; integers and bools multiply in int64."""
    if dim is not None and not isinstance(dim, int):
        raise TypeError(f"prod(): argument 'dim' must be int, not {type(dim).__name__}")
    if dim is not None:
        dim = wrap_dim(dim, input.dim())
        if input.dim() == 0:
            return Prod.apply(input, None, False, dtype)
    return Prod.apply(input, dim, keepdim, dtype)


# cumulative scans -------------------------------------------------------------------------------------
class Cumsum(Op):
    row_major_output = True

    jvp = linear_jvp  # forward mode: linear in its first input, so the op itself on the tangent (ops/op.py)

    def forward(self, x, dim, dtype=None):
        self.dim = dim
        if dtype is None and is_bfloat16(x.dtype):  # accumulated in float32, rounded once (PyTorch's)
            return self.xp.cumsum(x, axis=dim, dtype=FLOAT32).astype(x.dtype)
        return self.xp.cumsum(x, axis=dim, dtype=accumulate_dtype(self.backend, x, dtype))

    def backward(self, grad):
        return ReverseCumsum.apply(grad, self.dim)


class ReverseCumsum(Op):
    """``out[i] = sum(x[j] for j >= i)``: the gradient of cumsum (and cumsum is its gradient)."""
    row_major_output = True

    def forward(self, x, dim):
        self.dim = dim
        xp = self.xp
        if is_bfloat16(x.dtype):  # accumulated in float32, as cumsum
            return xp.flip(xp.cumsum(xp.flip(x, dim), axis=dim, dtype=FLOAT32), dim).astype(x.dtype)
        return xp.flip(xp.cumsum(xp.flip(x, dim), axis=dim), dim)

    def backward(self, grad):
        return Cumsum.apply(grad, self.dim)


class Cumprod(Op):
    """Running product. Backward is PyTorch's cumprod_backward: grad itself for one element along ``dim``;
    without zeros ``reverse_cumsum(grad * out) / x``; with zeros, at first order its O(n) formula (only the
    elements up to the first zero get a gradient), and under create_graph the products that skip each element
    (O(n^2) per slice, one index of dim at a time as PyTorch, differentiable). Both agree for finite inputs;
    like PyTorch's, they may differ between NaN, inf and 0 when the input has infinities."""
    row_major_output = True

    save_inputs = (0,)
    save_output = True

    def forward(self, x, dim, dtype=None):
        self.dim = dim
        if dtype is None and is_bfloat16(x.dtype):  # accumulated in float32, rounded once (PyTorch's)
            return self.xp.cumprod(x, axis=dim, dtype=FLOAT32).astype(x.dtype)
        return self.xp.cumprod(x, axis=dim, dtype=accumulate_dtype(self.backend, x, dtype))

    def backward(self, grad):
        x, out = map(conj_if_complex, self.saved_tensors)  # complex: grad * conj(d out / dx), of the conjugates
        dim = self.dim
        if x.numel() <= 1 or x.shape[dim] == 1:
            return grad
        if not bool((x == 0).any()):
            return ReverseCumsum.apply(grad * out, dim) / x
        if not grad_mode.state.enabled:
            return _cumprod_grad_with_zeros(grad, x, out, dim)
        return stack([_cumprod_grad_at(grad, x, dim, k) for k in range(x.shape[dim])], dim)


def _cumprod_grad_at(grad: Tensor, x: Tensor, dim: int, k: int) -> Tensor:
    """The gradient of x[k] (dim removed), differentiable: ``sum(grad[j] * prod(x[i] for i <= j, i != k))``
    over j >= k, with the products composed as in PyTorch (prod(x[:k]) times cumprod(x[k+1:])), so that
    second derivatives through zeros and infinities agree with its."""
    n = x.shape[dim]
    after = x.narrow(dim, k + 1, n - k - 1).cumprod(dim)
    if k == 0:
        omitted = cat([grad.new_ones(keepdim_shape(x.shape, (dim,))), after], dim)
    else:
        until = x.narrow(dim, 0, k).prod(dim, keepdim=True)
        omitted = until if k == n - 1 else cat([until, until * after], dim)
    return (grad.narrow(dim, k, n - k) * omitted).sum(dim)


def _cumprod_grad_with_zeros(grad: Tensor, x: Tensor, out: Tensor, dim: int) -> Tensor:
    """PyTorch's first-order cumprod gradient when x has zeros: before the first zero z1 the usual
    ``reverse_cumsum(grad * out) / x``; at z1, ``out[z1 - 1] * sum(grad[k] * prod(x[z1 + 1:k + 1]))`` over
    k < z2 (the second zero); after z1, 0 (every product there has a zero factor, even beside an inf)."""
    zeros_before = (x == 0).cumsum(dim)
    before = zeros_before == 0
    result = where(before, ReverseCumsum.apply(where(before, grad * out, 0.0), dim) / x, 0.0)
    first_zero = (x == 0) & (zeros_before == 1)
    between = (zeros_before == 1) & ~first_zero
    z1 = first_zero.to(_dtype.int64).argmax(dim, keepdim=True)
    out_before_z1 = where(z1 == 0, 1.0, out.gather(dim, (z1 - 1).clamp(min=0)))
    at_z1 = (where(between, x, 1.0).cumprod(dim) * where(zeros_before != 1, 0.0, grad)).sum(dim, keepdim=True)
    return where(first_zero, at_z1 * out_before_z1, result)


def cumsum(input: Tensor, dim: int, *, dtype=None) -> Tensor:
    """Running sum along ``dim``; integers and bools accumulate in int64."""
    if input.dim() == 0:
        wrap_dim(dim, 0)
        return _on_0d(lambda t, d: cumsum(t, d, dtype=dtype), input)
    return Cumsum.apply(input, wrap_dim(dim, input.dim()), dtype)


def cumprod(input: Tensor, dim: int, *, dtype=None) -> Tensor:
    """Running product along ``dim``; integers and bools accumulate in int64."""
    if input.dim() == 0:
        wrap_dim(dim, 0)
        return _on_0d(lambda t, d: cumprod(t, d, dtype=dtype), input)
    return Cumprod.apply(input, wrap_dim(dim, input.dim()), dtype)


class CumExtremum(Op):
    """cummax / cummin: the running extremum and the index it came from. A tie or a NaN moves the index to
    the newer element (PyTorch: ``isnan(x) || (!isnan(out) && x >= out)``), and once NaN the values stay NaN.
    The gradient goes to those indices (PyTorch's cummaxmin_backward, a scatter_add, which saves the input too)."""
    row_major_output = True

    save_inputs = (0,)

    def name(self) -> str:
        return "CummaxBackward0" if self.largest else "CumminBackward0"

    def forward(self, x, dim, largest):
        xp = self.xp
        self.dim, self.largest = dim, largest
        values = (xp.maximum if largest else xp.minimum).accumulate(x, axis=dim)
        positions = xp.arange(x.shape[dim]).reshape((-1,) + (1,) * (x.ndim - dim - 1))
        moves = values == x
        if array_kind(x.dtype) == "f":
            moves = xp.logical_or(moves, xp.isnan(x))
        index = xp.maximum.accumulate(xp.where(moves, positions, 0), axis=dim).astype(_int64(self))
        return values, index

    def backward(self, grad, grad_indices=None):
        x, index = self.saved_tensors  # index: the indices output (saved by Op._record: modifying it raises here)
        if x._array.size == 0:  # PyTorch's cummaxmin_backward returns the (empty) input itself
            return x
        return grad.new_zeros(grad.shape).scatter_add(self.dim, index, grad)


def _cum_extremum(name: str, largest: bool, input: Tensor, dim: int):
    result_type = return_types.cummax if largest else return_types.cummin
    if input.dim() == 0:
        wrap_dim(dim, 0)
        return _on_0d(lambda t, d: _cum_extremum(name, largest, t, d), input)
    if input.numel() == 0 and not -input.dim() <= dim < input.dim():
        dim = 0  # PyTorch's cummax_out skips an empty input before it reads dim: any dim is accepted
    dim = wrap_dim(dim, input.dim())
    return result_type(*CumExtremum.apply(input, dim, largest))


def cummax(input: Tensor, dim: int):
    """``(values, indices)``: the running maximum along ``dim`` and where it was (the latest of ties)."""
    return _cum_extremum("cummax", True, input, dim)


def cummin(input: Tensor, dim: int):
    """``(values, indices)``: the running minimum along ``dim`` and where it was (the latest of ties)."""
    return _cum_extremum("cummin", False, input, dim)


class Logcumsumexp(Op):
    """``log(cumsum(exp(x)))`` by a running logaddexp. Backward is PyTorch's logcumsumexp_backward: the
    positive and negative parts of grad in log space, so nothing overflows."""
    row_major_output = True

    save_inputs = (0,)
    save_output = True

    def forward(self, x, dim):
        self.dim = dim
        if x.ndim == 0:
            return x.copy()
        return self.xp.logaddexp.accumulate(x, axis=dim)

    def backward(self, grad):
        """A 0-d input passes grad through (PyTorch does too, so an infinite x still gets the gradient)."""
        x, out = self.saved_tensors  # unpacked first: an in-place change of either raises, as in PyTorch
        if grad.dim() == 0 or grad.numel() == 0:
            return grad
        dim = self.dim
        lowest = -1.7976931348623157e308 if grad.dtype.itemsize == 8 else -3.4028234663852886e38

        def reverse_logcumsumexp(t):
            return t.flip(dim).logcumsumexp(dim).flip(dim)

        log_abs = grad.abs().log()
        positive = where(grad > 0, log_abs, lowest)
        negative = where(grad < 0, log_abs, lowest)
        return (reverse_logcumsumexp(positive - out) + x).exp() - (reverse_logcumsumexp(negative - out) + x).exp()


def logcumsumexp(input: Tensor, dim: int) -> Tensor:
    """``log(cumsum(exp(input)))`` along ``dim`` without overflow (floating inputs only, as in PyTorch)."""
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"logcumsumexp_out_cpu\" not implemented for '{_LEGACY_NAMES[input.dtype.name]}'")
    return Logcumsumexp.apply(input, wrap_dim(dim, input.dim()))


# max / min ------------------------------------------------------------------------------------------
class SplitAmongTies(Op):
    """Base of reductions to one of the input's values: the gradient is shared evenly by the elements equal
    to the result. ``evenly`` (max(), min(), median() of all elements) is PyTorch's
    evenly_distribute_backward: at a NaN result the NaN elements share it, and the others get exactly 0;
    otherwise (amax, amin) its scale_grad_by_count: ``grad / count * (x == out)``, so a NaN result, which
    equals nothing, gives NaN everywhere in its slice. Subclasses set input_shape, dims, keepdim."""

    save_inputs = (0,)
    save_output = True
    evenly = True

    def backward(self, grad):
        x, out = self.saved_tensors
        shape, dims, keepdim = self.input_shape, self.dims, self.keepdim
        grad, out = restore_dims(grad, shape, dims, keepdim), restore_dims(out, shape, dims, keepdim)
        if self.evenly:  # one result for all of x
            ties = x.isnan() if bool(out.isnan().any()) else x == out
            return where(ties, grad / ties.sum(), 0.0)
        ties = x == out
        return grad / ties.sum(dims, keepdim=True) * ties


class Extremum(SplitAmongTies):
    """amax / amin, and ``max()`` / ``min()`` of all elements (``evenly``)."""
    row_major_output = True

    def name(self) -> str:  # max() / min() of all elements are MaxBackward1 / MinBackward1 in PyTorch
        if self.evenly:
            return "MaxBackward1" if self.largest else "MinBackward1"
        return "AmaxBackward0" if self.largest else "AminBackward0"

    def forward(self, x, dims, keepdim, largest, evenly=False):
        self.input_shape, self.dims, self.keepdim, self.evenly = x.shape, dims, keepdim, evenly
        self.largest = largest
        return (self.xp.amax if largest else self.xp.amin)(x, axis=dims, keepdims=keepdim)


class SelectAlongDim(Op):
    """Base of ops whose values are picked from the input at returned indices along ``self.dim``
    (the indices output, saved by Op._record): the gradient goes to the picked elements only."""

    def backward(self, grad, grad_indices=None):
        index = self.saved_tensors[-1]
        if not self.keepdim:
            grad, index = grad.unsqueeze(self.dim), index.unsqueeze(self.dim)
        return grad.new_zeros(self.input_shape).scatter(self.dim, index, grad)

    def pick(self, x, index, dim: int, keepdim: bool):
        """``(values, indices)`` at ``index`` (keepdim layout) and remember what backward needs."""
        self.input_shape, self.dim, self.keepdim = x.shape, dim, keepdim
        values = self.xp.take_along_axis(x, index, axis=dim)
        if keepdim:
            return values, index
        return values.squeeze(dim), index.squeeze(dim)


class ExtremumAlongDim(SelectAlongDim):
    """``max(input, dim)`` / ``min(input, dim)``: values and the index of the first extremum (NaN wins)."""

    def name(self) -> str:
        return "MaxBackward0" if self.largest else "MinBackward0"

    def forward(self, x, dim, keepdim, largest):
        self.largest = largest
        index = (self.xp.argmax if largest else self.xp.argmin)(x, axis=dim, keepdims=True).astype(_int64(self))
        return self.pick(x, index, dim, keepdim)


def _elementwise(name: str, input: Tensor, other: Tensor) -> Tensor:
    """``max(a, b)`` is ``maximum(a, b)``; it lives with the binary elementwise ops."""
    fn = getattr(comparison, name, None) or getattr(pointwise, name, None)
    if fn is None:
        raise RuntimeError(f"{name}() is not available in this build of minitorch")
    return fn(input, other)


def _max_or_min(name: str, largest: bool, input: Tensor, dim, keepdim: bool, other):
    if isinstance(dim, Tensor) or other is not None:
        return _elementwise("maximum" if largest else "minimum", input, dim if other is None else other)
    if input.dtype.is_complex:  # complex numbers have no order
        if dim is None:
            raise NotImplementedError(f"\"{name}_all\" not implemented for '{_dtype.scalar_type_name(input.dtype)}'")
        raise RuntimeError(f"{name}(): does not support complex input")
    result_type = return_types.max if largest else return_types.min
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError(
                f"{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction "
                "dim with the 'dim' argument."
            )
        return Extremum.apply(input, tuple(range(input.dim())), False, largest, True)
    if input.dim() == 0:
        wrap_dim(dim, 0)
        return _on_0d(lambda t, d: _max_or_min(name, largest, t, d, False, None), input)
    dim = wrap_dim(dim, input.dim())
    _check_nonempty(name, input.shape, (dim,))
    return result_type(*ExtremumAlongDim.apply(input, dim, keepdim, largest))


def max(input: Tensor, dim=None, keepdim: bool = False, *, other=None):  # noqa: A001
    """``max(input)``: the largest element; ``max(input, dim)``: ``(values, indices)`` along ``dim``;
    ``max(input, other)``: the elementwise maximum."""
    return _max_or_min("max", True, input, dim, keepdim, other)


def min(input: Tensor, dim=None, keepdim: bool = False, *, other=None):  # noqa: A001
    """``min(input)``, ``min(input, dim)`` -> ``(values, indices)``, or elementwise ``min(input, other)``."""
    return _max_or_min("min", False, input, dim, keepdim, other)


def _extremum(name: str, largest: bool, input: Tensor, dim, keepdim: bool) -> Tensor:
    if input.dtype.is_complex:  # complex numbers have no order
        kernel = "aminmax_cpu" if name == "aminmax" else f"{name[1:]}_values_cpu"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_dtype.scalar_type_name(input.dtype)}'")
    if input.numel() == 0 and (dim is None or (isinstance(dim, (tuple, list)) and not dim)):
        if name == "aminmax":
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                               "identity.")
        raise RuntimeError(
            f"{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction "
            f"dim with the 'dim' argument."
        )
    dims = reduction_dims(dim, input.dim())
    _check_nonempty(name, input.shape, dims)
    return Extremum.apply(input, dims, keepdim, largest)


def amax(input: Tensor, dim=(), keepdim: bool = False) -> Tensor:
    """Largest value over ``dim`` (int or tuple; all by default); ties share the gradient evenly."""
    return _extremum("amax", True, input, dim, keepdim)


def amin(input: Tensor, dim=(), keepdim: bool = False) -> Tensor:
    """Smallest value over ``dim`` (int or tuple; all by default); ties share the gradient evenly."""
    return _extremum("amin", False, input, dim, keepdim)


def aminmax(input: Tensor, *, dim=None, keepdim: bool = False):
    """``(min, max)`` over ``dim`` (one int) or all elements."""
    dims = () if dim is None else (dim,)
    return return_types.aminmax(_extremum("aminmax", False, input, dims, keepdim),
                                _extremum("aminmax", True, input, dims, keepdim))


class ArgExtremum(Op):
    """Index of the first max/min along ``dim`` (of the flattened input when dim is None); int64."""

    def forward(self, x, dim, keepdim, largest):
        fn = self.xp.argmax if largest else self.xp.argmin
        if dim is None:
            index = fn(x.reshape(-1))
            index = self.xp.asarray(index).reshape((1,) * x.ndim if keepdim else ())
        else:
            index = fn(x, axis=dim, keepdims=keepdim)
        return index.astype(_int64(self))


def _arg_extremum(name: str, largest: bool, input: Tensor, dim, keepdim: bool) -> Tensor:
    if input.dtype.is_complex:
        raise RuntimeError(f"{name}(): does not support complex input")
    if dim is None:
        if input.numel() == 0:
            raise IndexError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
        return ArgExtremum.apply(input.detach(), None, keepdim, largest)
    if input.dim() == 0:
        wrap_dim(dim, 0)
        return _on_0d(lambda t, d: _arg_extremum(name, largest, t, d, False), input)
    dim = wrap_dim(dim, input.dim())
    _check_nonempty(name, input.shape, (dim,))
    return ArgExtremum.apply(input.detach(), dim, keepdim, largest)


def argmax(input: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    """Index of the first largest element along ``dim`` (or of the flattened input); int64, no gradient."""
    return _arg_extremum("argmax", True, input, dim, keepdim)


def argmin(input: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    """Index of the first smallest element along ``dim`` (or of the flattened input); int64, no gradient."""
    return _arg_extremum("argmin", False, input, dim, keepdim)


# var / std ------------------------------------------------------------------------------------------
class Var(Op):
    """``sum((x - mean)^2) / max(N - correction, 0)`` (std: its square root). A divisor of 0 gives
    inf (nan for 0/0 and for a nan sum of squares, as from an infinite x), as in PyTorch. The std gradient is
    0 where std is 0 (PyTorch's rule)."""
    row_major_output = True

    save_inputs = (0,)
    save_output = True  # std's gradient reads it; var saves only x, as PyTorch (set in forward)

    def name(self) -> str:
        return "StdBackward0" if self.take_sqrt else "VarBackward0"

    def forward(self, x, dims, correction, keepdim, take_sqrt, whole=False):
        xp = self.xp
        self.input_shape, self.dims, self.keepdim, self.take_sqrt = x.shape, dims, keepdim, take_sqrt
        self.save_output = take_sqrt
        count = math.prod(x.shape[d] for d in dims)
        self.dof, self.whole = count - correction, whole or x.ndim == 0
        self.divisor = builtins.max(self.dof, 0)
        # PyTorch reduces every element of a float32/float64 tensor in two passes around the mean (std_var_all_cpu),
        # and anything else with Welford's algorithm, which gives exactly 0 for identical values: shifting each group
        # by one of its values first does the same here (seeds 501659, 838105)
        two_pass = count == x.size and x.dtype.kind == "f" and x.dtype.itemsize >= 4
        if count > 1 and not two_pass:
            x = x - x[tuple(slice(0, 1) if d in dims else slice(None) for d in range(x.ndim))]
        centered = x - self.backend.sum(x, dims, True) / builtins.max(count, 1)
        squares = self.backend.sum(centered * centered, dims, keepdim)
        if self.divisor == 0:
            out = xp.where(squares > 0, _INF, math.nan).astype(x.dtype)  # squares / 0: NaN for 0 and NaN
        else:
            out = squares / self.divisor
        return xp.sqrt(out) if take_sqrt else out

    def backward(self, grad):
        """PyTorch's var_backward (std's divides grad by 2 std first): ``2 / dof * grad * (x - mean)`` with the
        signed dof = N - correction; for a reduction over everything (no dim, or a 0-dim x) with dof <= 0 it is
        ``grad * where(x == mean, nan, inf)``, a constant pattern, so var's gradient does not depend on x."""
        x, *out = self.saved_tensors  # out: [std], or [] for var
        shape, dims = self.input_shape, self.dims
        grad = restore_dims(grad, shape, dims, self.keepdim)
        if self.take_sqrt:  # PyTorch's std_backward, composed as it is: its second derivative at std == 0 is
            # NaN wherever the incoming gradient depends on the input (0 / 0 in the division's backward)
            std = restore_dims(out[0], shape, dims, self.keepdim)
            grad = (grad / (std * 2)).masked_fill(std == 0, 0.0)
        if self.whole and self.dof <= 0:
            return grad * where(x == x.mean(), math.nan, _INF).to(x.dtype)
        centered = x - x.mean(dims, keepdim=True)
        return (2 / self.dof if self.dof else _INF) * grad * centered


def _sign(x: Tensor) -> Tensor:
    """-1, 0 or 1 as x's dtype: the sign op, as PyTorch's norm_backward uses sgn. Its derivative is 0, but it is
    recorded, so under create_graph the gradient of norm(x, 1) still depends on x (second derivative 0)."""
    return x.sign()


def _var_args(name: str, input: Tensor, dim, unbiased, keepdim, correction):
    """dims, keepdim, correction and whether no dim was given (PyTorch's var_backward tells that case apart)."""
    if isinstance(dim, bool):  # var(input, unbiased)
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise TypeError(f"{name}() received both 'unbiased' and 'correction'; pass only one of them")
    if correction is None:
        correction = 0 if unbiased is False else 1
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        what = "std and var" if name in ("var", "std") else name
        raise RuntimeError(f"{what} only support floating point and complex dtypes")
    dims = reduction_dims(dim, input.dim())
    if math.prod(input.shape[d] for d in dims) - correction <= 0:
        warnings.warn(
            f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than the reduction factor "
            "(input numel divided by output numel).",
            UserWarning,
            stacklevel=user_stacklevel(),
        )
    return dims, keepdim, correction, dim is None


def _variance(input: Tensor, dims, correction, keepdim: bool, take_sqrt: bool, whole: bool) -> Tensor:
    """Var of real input; of complex input the variances of the real and imaginary parts add (PyTorch's)."""
    if not input.dtype.is_complex:
        return Var.apply(input, dims, correction, keepdim, take_sqrt, whole)
    total = Var.apply(input.real, dims, correction, keepdim, False, whole)
    total = total + Var.apply(input.imag, dims, correction, keepdim, False, whole)
    return total.sqrt() if take_sqrt else total


def var(input: Tensor, dim=None, unbiased=None, keepdim: bool = False, *, correction=None) -> Tensor:
    """Variance over ``dim`` with Bessel's ``correction`` (default 1; ``unbiased=False`` means 0)."""
    dims, keepdim, correction, whole = _var_args("var", input, dim, unbiased, keepdim, correction)
    return _variance(input, dims, correction, keepdim, False, whole)


def std(input: Tensor, dim=None, unbiased=None, keepdim: bool = False, *, correction=None) -> Tensor:
    """Standard deviation over ``dim`` with Bessel's ``correction`` (default 1)."""
    dims, keepdim, correction, whole = _var_args("std", input, dim, unbiased, keepdim, correction)
    return _variance(input, dims, correction, keepdim, True, whole)


def var_mean(input: Tensor, dim=None, unbiased=None, keepdim: bool = False, *, correction=None):
    """``(var, mean)`` over ``dim``."""
    dims, keepdim, correction, whole = _var_args("var_mean", input, dim, unbiased, keepdim, correction)
    return _variance(input, dims, correction, keepdim, False, whole), mean(input, dims, keepdim)


def std_mean(input: Tensor, dim=None, unbiased=None, keepdim: bool = False, *, correction=None):
    """``(std, mean)`` over ``dim``."""
    dims, keepdim, correction, whole = _var_args("std_mean", input, dim, unbiased, keepdim, correction)
    return _variance(input, dims, correction, keepdim, True, whole), mean(input, dims, keepdim)


# norm, logsumexp ------------------------------------------------------------------------------------
class Norm(Op):
    """Vector p-norm over ``dims``; gradients follow PyTorch's norm_backward (0 where the norm is 0; its second
    derivative there is nan, as PyTorch's: the norm has none at 0)."""
    row_major_output = True

    save_inputs = (0,)
    save_output = True

    def name(self) -> str:  # torch.norm and linalg.norm of vectors call linalg.vector_norm
        return "LinalgVectorNormBackward0"

    def forward(self, x, p, dims, keepdim):
        xp = self.xp
        self.input_shape, self.p, self.dims, self.keepdim = x.shape, p, dims, keepdim
        magnitude = xp.abs(x)
        if p != 0 and math.prod(x.shape[d] for d in dims) == 1:
            # one element per output: PyTorch's reduction is then |x| itself, with no power to overflow or
            # underflow (the norm of a float32 2e25 is 2e25, not inf; fuzzer seed 248088)
            return self.backend.sum(magnitude, dims, keepdim)
        if p == 2:
            return xp.sqrt(self.backend.sum(x * x, dims, keepdim))
        if p == 1:
            return self.backend.sum(magnitude, dims, keepdim)
        if p == 0:
            return xp.sum(x != 0, axis=dims, keepdims=keepdim).astype(x.dtype)
        if math.isinf(p):
            return (xp.amax if p > 0 else xp.amin)(magnitude, axis=dims, keepdims=keepdim)
        if p < 0:  # |0|^p is inf; computed without numpy's divide-by-zero warning
            zero = magnitude == 0
            powers = xp.where(zero, _INF, xp.where(zero, 1, magnitude) ** p).astype(x.dtype)
        else:
            powers = magnitude**p
        return self.backend.sum(powers, dims, keepdim) ** (1.0 / p)

    def backward(self, grad):
        x, out = self.saved_tensors
        p, dims = self.p, self.dims
        grad = restore_dims(grad, self.input_shape, dims, self.keepdim)
        out = restore_dims(out, self.input_shape, dims, self.keepdim)
        if p == 0:  # PyTorch's norm_backward returns no gradient: x counts as unused
            return None
        if p == 1:
            return _sign(x) * grad
        # PyTorch's norm_backward, composed the same way: its masked_fill_ after a division by the norm (or a
        # power of |x|) leaves nan in the second derivative where the norm (or x) is 0, as there
        magnitude = x.abs()
        if p == 2:
            return grad * where(out == 0, 0.0, x / out)
        if math.isinf(p):  # the elements equal to the extremum share the gradient; a NaN counts as one
            ties = (magnitude == out) | magnitude.isnan()
            return _sign(x) * ((grad / ties.sum(dims, keepdim=True)) * ties)
        if p < 1:
            return _sign(x) * where(x == 0, 0.0, magnitude ** (p - 1)) * grad * out ** (1 - p)
        scale = where(out == 0, 0.0, grad / out ** (p - 1))
        if p < 2:
            return _sign(x) * magnitude ** (p - 1) * scale
        return x * magnitude ** (p - 2) * scale


def norm(input: Tensor, p="fro", dim=None, keepdim: bool = False, dtype=None) -> Tensor:
    """Vector p-norm (``p`` a number, ``inf``, ``-inf`` or ``'fro'``) over ``dim`` (int, tuple or all)."""
    if dtype is not None:
        input = input.to(dtype)
    if input.dtype.is_complex:  # the norm of the magnitudes (abs' gradient is the complex one, z / |z|)
        return norm(input.abs(), p, dim, keepdim)
    if not input.dtype.is_floating_point:
        raise RuntimeError(
            f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
            f"{input.dtype.name.capitalize()}"
        )
    if p is None or p == "fro":
        p = 2
    elif isinstance(p, str):
        raise RuntimeError(f"norm(): p={p!r} is not supported (only numbers, inf, -inf and 'fro')")
    if input._names is not None:  # dims by name (norm is Python-level in PyTorch: no argument parser wrapper)
        dim = resolve_dims(input, dim)
    dims = reduction_dims(dim, input.dim())
    if math.isinf(p) and 0 in [input.shape[d] for d in dims]:  # an empty reduced dim has no identity
        raise RuntimeError(
            "linalg.vector_norm cannot compute the inf norm on an empty tensor because the operation does not "
            "have an identity"
        )
    return Norm.apply(input, float(p), dims, keepdim)


def dist(input: Tensor, other: Tensor, p=2) -> Tensor:
    """The p-norm of ``input - other`` (broadcasting), a 0-dim tensor; gradients as norm's."""
    difference = input - other
    if not difference.dtype.is_floating_point:
        raise RuntimeError(
            "norm(): input dtype should be either floating point or complex. "
            f"Got {_LEGACY_NAMES[difference.dtype.name]} instead."
        )
    return norm(difference, p)


class Cdist(Op):
    """Pairwise p-norm distances between the rows of ``x1`` (..., P, M) and ``x2`` (..., R, M) -> (..., P, R).
    Gradients are PyTorch's _cdist_backward: p=2 ``diff / dist``, p=1 ``sign(diff)``, p=inf ``sign(diff)`` on every
    coordinate reaching the maximum, p=0 none, else ``diff |diff|^(p-2) / dist^(p-1)``; 0 where dist == 0."""

    save_inputs = (0, 1)
    save_output = True

    def forward(self, x1, x2, p):
        xp = self.xp
        self.p = p
        diff = xp.abs(x1[..., :, None, :] - x2[..., None, :, :])
        if p == 0:
            return xp.count_nonzero(diff, axis=-1).astype(diff.dtype)
        if p == _INF:
            return xp.amax(diff, axis=-1, initial=0.0)
        if p == 1:
            return xp.sum(diff, axis=-1)
        if p == 2:
            return xp.sqrt(xp.sum(diff * diff, axis=-1))
        return xp.sum(diff**p, axis=-1) ** (1 / p)

    def backward(self, grad):
        x1, x2, out = self.saved_tensors
        diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)  # (..., P, R, M)
        dist, g, p = out.unsqueeze(-1), grad.unsqueeze(-1), self.p
        if p == 0:
            each = diff * 0
        elif p == 1:
            each = g * diff.sign()
        elif p == _INF:
            each = g * diff.sign() * (diff.abs() == dist)
        elif p == 2:
            each = where(dist == 0, 0.0, g * diff / where(dist == 0, 1.0, dist))
        else:
            magnitude = diff.abs()
            each = where(dist == 0, 0.0, g * diff * magnitude ** (p - 2) / where(dist == 0, 1.0, dist) ** (p - 1))
            if p < 1:
                each = where(diff == 0, 0.0, each)
        grad1 = each.sum(-2) if self.needs_grad(0) else None
        grad2 = -each.sum(-3) if self.needs_grad(1) else None
        return grad1, grad2


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode=None) -> Tensor:
    """Distances between each row of ``x1`` and each row of ``x2`` (batch dims broadcast); ``compute_mode``
    is accepted and ignored (minitorch always takes the exact, difference-based path)."""
    for name, x in (("X1", x1), ("X2", x2)):
        if x.dim() < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {x.dim()}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    for name, x in (("X1", x1), ("X2", x2)):
        if not x.dtype.is_floating_point:
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: {_LEGACY_NAMES[x.dtype.name]}")
    if x1.dtype != x2.dtype:
        raise RuntimeError(f"cdist: expected scalar type {_FLOAT_NAMES[x1.dtype.name]} but found "
                           f"{_FLOAT_NAMES[x2.dtype.name]}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    return Cdist.apply(x1, x2, float(p))


class Logsumexp(Op):
    """``log(sum(exp(x)))`` computed as ``m + log(sum(exp(x - m)))`` with m the max (finite) value;
    the gradient is the softmax ``exp(x - out)``."""
    row_major_output = True

    save_inputs = (0,)
    save_output = True

    def forward(self, x, dims, keepdim):
        xp = self.xp
        x = as_float(self, x)
        self.input_shape, self.dims, self.keepdim = x.shape, dims, keepdim
        if builtins.any(x.shape[d] == 0 for d in dims):
            return xp.full(xp.sum(x, axis=dims, keepdims=keepdim).shape, -_INF, dtype=x.dtype)
        shift = xp.amax(x, axis=dims, keepdims=True)
        shift = xp.where(xp.isinf(shift), 0, shift).astype(x.dtype)
        total = self.backend.sum(xp.exp(x - shift), dims, True)
        positive = total > 0  # all -inf gives 0: its log is -inf (without numpy's divide warning)
        out = xp.where(positive, xp.log(xp.where(positive, total, 1)), -_INF).astype(x.dtype) + shift
        return out if keepdim else out.squeeze(axis=dims)

    def backward(self, grad):
        x, out = self.saved_tensors
        grad = restore_dims(grad, self.input_shape, self.dims, self.keepdim)
        return grad * (x - restore_dims(out, self.input_shape, self.dims, self.keepdim)).exp()


def logsumexp(input: Tensor, dim, keepdim: bool = False) -> Tensor:
    """``log(sum(exp(input)))`` over ``dim`` (int or tuple), without overflow."""
    return Logsumexp.apply(input, reduction_dims(dim, input.dim()), keepdim)


# boolean and counting reductions --------------------------------------------------------------------
class All(Op):
    row_major_output = True

    def forward(self, x, dims, keepdim):
        return self.xp.all(x, axis=dims, keepdims=keepdim)


class Any(Op):
    row_major_output = True

    def forward(self, x, dims, keepdim):
        return self.xp.any(x, axis=dims, keepdims=keepdim)


class CountNonzero(Op):
    def forward(self, x, dims):
        return self.xp.asarray(self.xp.count_nonzero(x, axis=dims)).astype(_int64(self))


def all(input: Tensor, dim=None, keepdim: bool = False) -> Tensor:  # noqa: A001
    """True where every element (along ``dim``) is nonzero; a bool tensor."""
    return All.apply(input, reduction_dims(dim, input.dim()), keepdim)


def any(input: Tensor, dim=None, keepdim: bool = False) -> Tensor:  # noqa: A001
    """True where some element (along ``dim``) is nonzero; a bool tensor."""
    return Any.apply(input, reduction_dims(dim, input.dim()), keepdim)


def count_nonzero(input: Tensor, dim=None) -> Tensor:
    """Number of nonzero elements over ``dim`` (int or tuple; all by default); int64."""
    return CountNonzero.apply(input.detach(), reduction_dims(dim, input.dim()))



__all__ = [
    "sum", "mean", "prod", "sum_to_size", "cumsum", "cumprod", "cummax", "cummin", "logcumsumexp", "max", "min",
    "amax", "amin", "aminmax", "argmax", "argmin", "var", "std", "var_mean", "std_mean", "norm", "dist", "cdist",
    "logsumexp", "all", "any", "count_nonzero",
]
