"""Reductions over dims (int, tuple or all) with keepdim."""

from __future__ import annotations

import builtins
import math

from .. import _dtype
from ..tensor import Tensor, wrap_dim
from .op import Op


def reduction_dims(dim, ndim: int) -> tuple:
    """``dim`` (None, int, or sequence; [] means all) as a sorted tuple of non-negative dims."""
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return tuple(range(ndim))
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    wrapped = tuple(sorted({wrap_dim(d, ndim) for d in dims}))
    if len(wrapped) != len(dims):
        raise RuntimeError(f"dim {dims} appears multiple times in the list of dims")
    return wrapped


def keepdim_shape(shape: tuple, dims: tuple) -> tuple:
    return tuple(1 if i in dims else n for i, n in enumerate(shape))


def accumulate_dtype(backend, array, dtype):
    """PyTorch sums integers and bools in int64; floats keep their dtype unless ``dtype`` is given."""
    if dtype is not None:
        return backend.array_dtype(dtype)
    if array.dtype.kind in "biu":
        return backend.array_dtype(_dtype.int64)
    return array.dtype


class Sum(Op):
    def forward(self, x, dims, keepdim, dtype=None):
        self.input_shape, self.dims, self.keepdim = x.shape, dims, keepdim
        return self.xp.sum(x, axis=dims, keepdims=keepdim, dtype=accumulate_dtype(self.backend, x, dtype))

    def backward(self, grad):
        if not self.keepdim:
            grad = grad.reshape(keepdim_shape(self.input_shape, self.dims))
        return grad.expand(self.input_shape)


class Mean(Op):
    def forward(self, x, dims, keepdim, dtype=None):
        if dtype is None and x.dtype.kind not in "fc":
            raise RuntimeError(
                f"mean(): could not infer output dtype. Input dtype must be either a floating point or complex "
                f"dtype. Got: {self.backend.dtype_of(x).name.capitalize()}"
            )
        self.input_shape, self.dims, self.keepdim = x.shape, dims, keepdim
        self.count = math.prod(x.shape[d] for d in dims)
        return self.xp.mean(x, axis=dims, keepdims=keepdim, dtype=accumulate_dtype(self.backend, x, dtype))

    def backward(self, grad):
        if not self.keepdim:
            grad = grad.reshape(keepdim_shape(self.input_shape, self.dims))
        return grad.expand(self.input_shape) / self.count


def sum(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:  # noqa: A001
    return Sum.apply(input, reduction_dims(dim, input.dim()), keepdim, dtype)


def mean(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    return Mean.apply(input, reduction_dims(dim, input.dim()), keepdim, dtype)


def sum_to_size(input: Tensor, *size) -> Tensor:
    """Sum ``input`` down to ``size``, which ``input`` must broadcast from (the reverse of expand)."""
    size = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else tuple(size)
    shape = input._array.shape
    if shape == size:
        return input
    lead = len(shape) - len(size)
    dims = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(size) if n == 1 and shape[lead + i] != 1)
    if lead < 0 or builtins.any(n != 1 and n != shape[lead + i] for i, n in enumerate(size)):
        raise RuntimeError(f"size {list(size)} is not expandable to size {list(shape)}.")
    out = Sum.apply(input, dims, True, None)
    return out.reshape(size) if lead else out


class All(Op):
    def forward(self, x, dims, keepdim):
        return self.xp.all(x, axis=dims, keepdims=keepdim)


class Any(Op):
    def forward(self, x, dims, keepdim):
        return self.xp.any(x, axis=dims, keepdims=keepdim)


def all(input: Tensor, dim=None, keepdim: bool = False) -> Tensor:  # noqa: A001
    """True where every element (along ``dim``) is nonzero; a bool tensor."""
    return All.apply(input, reduction_dims(dim, input.dim()), keepdim)


def any(input: Tensor, dim=None, keepdim: bool = False) -> Tensor:  # noqa: A001
    """True where some element (along ``dim``) is nonzero; a bool tensor."""
    return Any.apply(input, reduction_dims(dim, input.dim()), keepdim)


Tensor.sum = sum
Tensor.mean = mean
Tensor.all = all
Tensor.any = any
Tensor.sum_to_size = sum_to_size

__all__ = ["sum", "mean", "sum_to_size", "all", "any"]
