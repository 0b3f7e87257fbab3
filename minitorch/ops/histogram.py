"""Counting values into bins: ``bincount`` (one bin per non-negative integer), ``histc`` and ``histogram``
(equal-width bins over a range, or given bin edges).

The bin of each element is found as PyTorch's CPU kernel finds it, in the input's dtype: a linear
interpolation ``(x - left) * bins / (right - left)`` (``histc``), the same followed by a local search
among the neighbouring edges (``histogram`` with a bin count), or a binary search (given edges). An element
equal to the last edge counts in the last bin; elements outside the range and NaNs are not counted.
None of these has a derivative in PyTorch: where PyTorch records a node whose backward raises, so does
minitorch.
"""

from __future__ import annotations

from .. import _dtype, return_types
from .._dtype import scalar_type_name
from ..autograd import grad_mode
from ..creation import linspace
from ..tensor import Tensor
from .op import Op


class Bincount(Op):
    """The count (or the sum of ``weights``) of each value ``0..max(x)`` (at least ``minlength`` bins)."""

    def forward(self, x, weights, minlength):
        out = self.xp.bincount(x, weights=weights, minlength=minlength)
        if weights is None:
            return out.astype(self.backend.array_dtype(_dtype.int64), copy=False)
        # PyTorch: float32 weights give float32, any other weights float64
        dtype = _dtype.float32 if self.backend.dtype_of(weights) is _dtype.float32 else _dtype.float64
        return out.astype(self.backend.array_dtype(dtype), copy=False)

    def backward(self, grad):
        raise RuntimeError("derivative for aten::_bincount is not implemented")


class Histogram(Op):
    """The (weighted) count of ``x``'s elements in each bin between ``edges`` (see the module docstring for the
    search); ``density`` divides by the total and the bin widths. Returns the counts and the edges."""

    def forward(self, x, edges, weight, search, density):
        xp = self.xp
        bins = edges.shape[0] - 1
        x = x.reshape(-1)
        left, right = edges[0], edges[-1]
        keep = (x >= left) & (x <= right)
        values = x[keep]
        if search == "binary":
            pos = xp.searchsorted(edges, values, side="right") - 1
        else:
            pos = ((values - left) * bins / (right - left)).astype(xp.int64)
            if search == "local":  # PyTorch's upper_bound among edges[pos - 1 : pos + 2]
                low = xp.maximum(pos - 1, 0)
                high = xp.minimum(pos + 2, bins + 1)
                at_or_below = xp.zeros_like(pos)
                for k in range(3):
                    index = low + k
                    at_or_below += (index < high) & (edges[xp.minimum(index, bins)] <= values)
                pos = low + at_or_below - 1
        pos = xp.minimum(pos, bins - 1)
        weights = None if weight is None else weight.reshape(-1)[keep]
        hist = xp.bincount(pos, weights=weights, minlength=bins).astype(x.dtype)
        if density:
            hist = hist / (hist.sum() * xp.diff(edges))
        return hist.astype(x.dtype, copy=False), edges.copy()

    def backward(self, *grads):
        raise RuntimeError("derivative for aten::histogram is not implemented")


def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """How often each non-negative integer occurs in the 1-D ``input`` (or the sum of its ``weights``)."""
    if input.dtype.is_floating_point or input.dtype is _dtype.bool:
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{scalar_type_name(input.dtype)}'")
    if input.dim() != 1 or (input.numel() and int(input.min().item()) < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is not None and (weights.dim() != 1 or weights.shape[0] != input.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    return Bincount.apply(input, weights, minlength)


def _check_floating(input: Tensor, kernel: str) -> None:
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{scalar_type_name(input.dtype)}'")


def _check_bins(bins: int) -> None:
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")


def _data_range(input: Tensor) -> tuple:
    with grad_mode.no_grad():
        return float(input.min().item()), float(input.max().item())


def histc(input: Tensor, bins: int = 100, min: float = 0, max: float = 0) -> Tensor:  # noqa: A002
    """A histogram of ``bins`` equal-width bins between ``min`` and ``max`` (both 0, or equal: the data's range)."""
    _check_floating(input, "histogram_cpu")
    _check_bins(bins)
    low, high = float(min), float(max)
    if low > high:
        raise RuntimeError("torch.histc: max must be larger than min")
    if low == high and input.numel():
        low, high = _data_range(input)
    if low == high:
        low, high = low - 1, high + 1
    if not (abs(low) < float("inf") and abs(high) < float("inf")):
        raise RuntimeError(f"torch.histc: range of [{low:g}, {high:g}] is not finite")
    edges = linspace(low, high, bins + 1, dtype=input.dtype, device=input.device)
    return Histogram.apply(input.detach(), edges, None, "linear", False)[0]


def histogram(input: Tensor, bins=100, *, range=None, weight: Tensor | None = None,  # noqa: A002
              density: bool = False):
    """``(hist, bin_edges)``: the (weighted) counts in ``bins`` equal-width bins over ``range`` (default: the
    data's), or in the bins between the given 1-D tensor of edges."""
    _check_floating(input, "histogramdd")
    if weight is not None:
        if weight.shape != input.shape:
            raise RuntimeError(
                "torch.histogramdd: if weight tensor is provided it should have the same shape as the input tensor "
                f"excluding its innermost dimension, but got input with shape {[input.numel(), 1]} and weight with "
                f"shape {list(weight.shape)}"
            )
        if weight.dtype is not input.dtype:
            raise RuntimeError(
                "torch.histogramdd: if weight tensor is provided, input tensor and weight tensor should have the same "
                f"dtype, but got input({_C_NAMES[input.dtype.name]}), and weight({_C_NAMES[weight.dtype.name]})"
            )
    if isinstance(bins, Tensor):
        if bins.dim() != 1:
            raise RuntimeError(
                "torch.histogramdd: bins tensor should have one dimension, but got "
                f"{bins.dim()} dimensions in the bins tensor for dimension 0"
            )
        if bins.dtype is not input.dtype:
            raise RuntimeError(
                "torch.histogramdd: input tensor and bins tensors should have the same dtype, but got input with "
                f"dtype {_C_NAMES[input.dtype.name]} and bins for dimension 0 with dtype {_C_NAMES[bins.dtype.name]}"
            )
        _check_bins(bins.shape[0] - 1)
        result = Histogram.apply(input, bins.detach(), weight, "binary", density)
        return return_types.histogram(*result)
    if isinstance(bins, bool) or not isinstance(bins, int):
        raise TypeError(f"histogram(): argument 'bins' must be Tensor or int, not {type(bins).__name__}")
    _check_bins(bins)
    if range is not None:
        low, high = float(range[0]), float(range[1])
    else:
        low, high = _data_range(input) if input.numel() else (0.0, 1.0)
    if low > high:
        raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {low:g} max {high:g} for "
                           "dimension 0")
    if not (abs(low) < float("inf") and abs(high) < float("inf")):
        raise RuntimeError(f"torch.histogramdd: dimension 0's range [{low:g}, {high:g}] is not finite")
    if low == high:
        low, high = low - 0.5, high + 0.5
    edges = linspace(low, high, bins + 1, dtype=input.dtype, device=input.device)
    return return_types.histogram(*Histogram.apply(input, edges, weight, "local", density))


# PyTorch's messages name dtypes as C++ does
_C_NAMES = {"float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float", "float64": "double",
            "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
            "bool": "bool"}

__all__ = ["bincount", "histc", "histogram"]
