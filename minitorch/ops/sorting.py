"""Sorting and order statistics: sort, argsort, msort, topk, kthvalue, median, mode, unique.

Values picked by an index (sort, topk, kthvalue, median(dim)) send their gradient back to that
index (``SelectAlongDim`` in ops/reduction.py); ``median()`` of all elements shares it among ties.
``sort(stable=True)`` keeps equal elements in input order; topk, kthvalue, median and mode always
sort stably, so their indices are deterministic. NaN sorts as the largest value, as in PyTorch.
"""

from __future__ import annotations

from .. import _dtype, return_types
from ..tensor import Tensor, wrap_dim
from .op import Op
from .promotion import array_kind
from .reduction import SelectAlongDim, SplitAmongTies, _check_nonempty, _on_0d


def argsort_array(xp, x, dim: int, descending: bool, stable: bool = True):
    """Indices that sort ``x`` along ``dim``. ``stable``: equal elements keep their order, also when
    descending (twice the cost of numpy's default sort, which ``stable=False`` uses)."""
    if not stable:
        order = xp.argsort(x, axis=dim)
        return xp.flip(order, dim) if descending else order
    if not descending:
        return xp.argsort(x, axis=dim, kind="stable")
    # sort the reversed input ascending, then reverse: ties end up in their original order
    n = x.shape[dim]
    reversed_order = xp.argsort(xp.flip(x, dim), axis=dim, kind="stable")
    return xp.flip(n - 1 - reversed_order, dim)


def _positions(xp, index, dim: int, start: int, stop: int):
    """``index[start:stop]`` along ``dim``."""
    window = [slice(None)] * index.ndim
    window[dim] = slice(start, stop)
    return index[tuple(window)]


class Sort(SelectAlongDim):
    """Values and indices laid out as the input is (PyTorch's preserve_format; numpy's are row-major)."""

    def forward(self, x, dim, descending, stable):
        index = argsort_array(self.xp, x, dim, descending, stable).astype(self.backend.array_dtype(_dtype.int64))
        values, index = self.pick(x, index, dim, True)
        if x.flags.c_contiguous:
            return values, index
        return _in_layout_of(self.xp, x, values), _in_layout_of(self.xp, x, index)


def _in_layout_of(xp, x, result):
    """``result`` (shaped like ``x``) copied into an array with ``x``'s order of strides."""
    out = xp.empty_like(x, dtype=result.dtype)
    out[...] = result
    return out


class Topk(SelectAlongDim):
    def forward(self, x, k, dim, largest):
        index = argsort_array(self.xp, x, dim, largest).astype(self.backend.array_dtype(_dtype.int64))
        return self.pick(x, _positions(self.xp, index, dim, 0, k), dim, True)


class Kthvalue(SelectAlongDim):
    def forward(self, x, k, dim, keepdim):
        index = argsort_array(self.xp, x, dim, False).astype(self.backend.array_dtype(_dtype.int64))
        return self.pick(x, _positions(self.xp, index, dim, k - 1, k), dim, keepdim)


class MedianAlongDim(SelectAlongDim):
    """The lower median along ``dim`` and its index; a slice with NaN gives its first NaN."""

    def name(self) -> str:  # median(x, dim); median(x) is MedianBackward0
        return "MedianBackward1"

    row_major_output = True

    def forward(self, x, dim, keepdim):
        xp = self.xp
        n = x.shape[dim]
        order = argsort_array(xp, x, dim, False).astype(self.backend.array_dtype(_dtype.int64))
        if array_kind(x.dtype) == "f":
            nans = xp.sum(xp.isnan(x), axis=dim, keepdims=True)
            position = xp.where(nans > 0, n - nans, (n - 1) // 2)
        else:
            position = xp.full(order.shape[:dim] + (1,) + order.shape[dim + 1:], (n - 1) // 2)
        return self.pick(x, xp.take_along_axis(order, position.astype(order.dtype), axis=dim), dim, keepdim)


class Median(SplitAmongTies):
    """The lower median of all elements (NaN if any is NaN or the input is empty)."""

    def forward(self, x):
        xp = self.xp
        self.input_shape, self.dims, self.keepdim = x.shape, tuple(range(x.ndim)), False
        flat = xp.sort(x.reshape(-1))
        if flat.size == 0:
            return xp.full((), float("nan"), dtype=x.dtype)
        if array_kind(x.dtype) == "f" and xp.isnan(flat[-1]):
            return flat[-1:].reshape(())
        return flat[(flat.size - 1) // 2 : (flat.size + 1) // 2].reshape(())


class Mode(SelectAlongDim):
    """The most frequent value along ``dim`` (the smallest of equally frequent ones) and the index of
    its last occurrence, as PyTorch's CPU kernel: runs of equal values in the stably sorted slices."""

    def forward(self, x, dim, keepdim):
        xp = self.xp
        int64 = self.backend.array_dtype(_dtype.int64)
        moved = xp.moveaxis(x, dim, -1)
        n = moved.shape[-1]
        rows = moved.reshape(-1, n)
        order = xp.argsort(rows, axis=1, kind="stable").astype(int64)
        ordered = xp.take_along_axis(rows, order, axis=1)
        starts = xp.ones(rows.shape, dtype=bool)
        starts[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
        ends = xp.ones(rows.shape, dtype=bool)
        ends[:, :-1] = starts[:, 1:]
        # number every run uniquely across rows, then count each run's length
        run = xp.cumsum(starts, axis=1) - 1 + xp.arange(rows.shape[0]).reshape(-1, 1) * n
        lengths = xp.bincount(run.reshape(-1), minlength=rows.size)[run]
        last_of_longest = xp.argmax(xp.where(ends, lengths, 0), axis=1).reshape(-1, 1)
        index = xp.take_along_axis(order, last_of_longest, axis=1).reshape(moved.shape[:-1] + (1,))
        return self.pick(x, xp.moveaxis(index, -1, dim), dim, keepdim)


def sort(input: Tensor, dim: int = -1, descending: bool = False, stable: bool = False):
    """``(values, indices)`` of ``input`` sorted along ``dim``; the gradient flows back through the indices."""
    if input.dtype.is_complex:
        raise RuntimeError(" Sort does not support complex dtypes on CPU")
    if input.dim() == 0:
        wrap_dim(dim, 0)
        return _on_0d(lambda t, d: sort(t, d, descending), input)
    return return_types.sort(*Sort.apply(input, wrap_dim(dim, input.dim()), descending, stable))


def argsort(input: Tensor, dim: int = -1, descending: bool = False, stable: bool = False) -> Tensor:
    """The indices that sort ``input`` along ``dim`` (int64)."""
    return sort(input.detach(), dim, descending, stable).indices


def msort(input: Tensor) -> Tensor:
    """``input`` sorted along its first dim."""
    return sort(input, 0).values


def topk(input: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True):  # noqa: A002
    """The ``k`` largest (or smallest) elements along ``dim`` and their indices, sorted; ties keep input order."""
    if input.dtype.is_complex:
        raise RuntimeError(" topk does not support complex dtypes on CPU")
    if input.dim() == 0:
        wrap_dim(dim, 0)
        # PyTorch gives a 0-dim tensor its one element for k = 0 as for k = 1
        return _on_0d(lambda t, d: topk(t, 1 if k == 0 else k, d, largest), input)
    dim = wrap_dim(dim, input.dim())
    if not 0 <= k <= input.shape[dim]:
        raise RuntimeError(f"selected index k out of range (topk: k={k}, dim {dim} of size {input.shape[dim]})")
    return return_types.topk(*Topk.apply(input, k, dim, largest))


def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False):
    """``(values, indices)`` of the k-th smallest element (1-based) along ``dim``."""
    if input.dim() == 0:
        wrap_dim(dim, 0)
        return _on_0d(lambda t, d: kthvalue(t, k, d), input)
    dim = wrap_dim(dim, input.dim())
    _check_nonempty("kthvalue", input.shape, (dim,))
    if not 1 <= k <= input.shape[dim]:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {dim} (k={k}, size "
                           f"{input.shape[dim]})")
    return return_types.kthvalue(*Kthvalue.apply(input, k, dim, keepdim))


def median(input: Tensor, dim=None, keepdim: bool = False):
    """``median(input)``: the lower median of all elements; ``median(input, dim)``: ``(values, indices)``."""
    if dim is None:
        return Median.apply(input)
    if input.dim() == 0:
        wrap_dim(dim, 0)
        return _on_0d(lambda t, d: median(t, d), input)
    dim = wrap_dim(dim, input.dim())
    _check_nonempty("median", input.shape, (dim,))
    return return_types.median(*MedianAlongDim.apply(input, dim, keepdim))


def mode(input: Tensor, dim: int = -1, keepdim: bool = False):
    """``(values, indices)``: the most frequent value along ``dim`` (smallest on ties), index of its last occurrence."""
    if input.dim() == 0:
        wrap_dim(dim, 0)
        return _on_0d(lambda t, d: mode(t, d), input)
    dim = wrap_dim(dim, input.dim())
    _check_nonempty("mode", input.shape, (dim,))
    return return_types.mode(*Mode.apply(input, dim, keepdim))


class Unique(Op):
    """Sorted unique elements (or slices along ``dim``), with the inverse map and counts (int64)."""

    def forward(self, x, dim, return_inverse, return_counts):
        xp = self.xp
        int64 = self.backend.array_dtype(_dtype.int64)
        values, inverse, counts = xp.unique(
            x.reshape(-1) if dim is None else x, return_inverse=True, return_counts=True, axis=dim
        )
        inverse = inverse.reshape(x.shape if dim is None else (x.shape[dim],)).astype(int64)
        results = (values,) + ((inverse,) if return_inverse else ())
        results += (counts.astype(int64),) if return_counts else ()
        return results if len(results) > 1 else values


def unique(input: Tensor, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False,  # noqa: A002
           dim=None):
    """The distinct elements of ``input`` (or distinct slices along ``dim``), always sorted; not differentiable.
    With ``return_inverse`` / ``return_counts`` a tuple ``(values, inverse, counts)`` (as requested)."""
    if dim is not None:
        dim = wrap_dim(dim, input.dim())
    return Unique.apply(input.detach(), dim, return_inverse, return_counts)


__all__ = ["sort", "argsort", "msort", "topk", "kthvalue", "median", "mode", "unique"]
