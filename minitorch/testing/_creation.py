"""make_tensor: a random test tensor of a given shape, dtype and device (``torch.testing.make_tensor``)."""

from __future__ import annotations

import math
import warnings

from .. import _dtype
from .._backends import backend_for
from .._device import as_device
from ..creation import full_like
from ..ops.comparison import where
from ..random import rand, randint
from ..tensor import Tensor, from_array


def _limits(dtype: _dtype.dtype, device) -> tuple:
    """``[lowest, highest)`` of the values ``dtype`` can hold, read off the backend's array dtype."""
    backend = backend_for(as_device(device))
    xp = backend.xp
    if dtype is _dtype.bool:
        return 0, 2
    array_dtype = backend.array_dtype(dtype)
    if dtype.is_floating_point:
        info = backend.finfo(array_dtype)
        return float(info.min), float(info.max)
    info = xp.iinfo(array_dtype)
    return int(info.min), int(info.max) + (1 if dtype is not _dtype.int64 else 0)


def _modify_low_high(low, high, dtype, lowest: float, highest: float, default_low, default_high) -> tuple:
    """PyTorch's rules: defaults, NaN/order/range checks, clamping into the dtype, ceil for integers."""
    low = default_low if low is None else low
    high = default_high if high is None else high
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    if low == high and dtype.is_floating_point:
        warnings.warn(
            "Passing `low==high` to `torch.testing.make_tensor` for floating or complex types is deprecated "
            "since 2.1 and will be removed in 2.3. Use `torch.full(...)` instead.",
            FutureWarning,
            stacklevel=3,
        )
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest or low >= highest:
        raise ValueError(
            f"The value interval specified by `low` and `high` is [{low}, {high}), but {dtype} only supports "
            f"[{lowest}, {highest})"
        )
    low, high = min(max(low, lowest), highest), min(max(high, lowest), highest)
    if not dtype.is_floating_point:
        return math.ceil(low), math.ceil(high)
    return low, high


def make_tensor(
    *shape,
    dtype: _dtype.dtype,
    device,
    low: float | None = None,
    high: float | None = None,
    requires_grad: bool = False,
    noncontiguous: bool = False,
    exclude_zero: bool = False,
    memory_format=None,
) -> Tensor:
    """A tensor filled with values drawn uniformly from ``[low, high)`` (default ``[-9, 9)``, clamped to
    what ``dtype`` holds; bool draws from {False, True}). Uses the global RNG: seed it with
    ``manual_seed`` for reproducible tests.

    ``noncontiguous=True`` returns every other element of a bigger tensor, ``exclude_zero=True``
    replaces zeros (by 1, or by the dtype's smallest normal number for floats).
    """
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    shape = tuple(int(n) for n in shape)
    if not isinstance(dtype, _dtype.dtype):
        raise TypeError(f"make_tensor() expected a minitorch dtype, but got {dtype!r}")
    if noncontiguous and memory_format is not None:
        raise ValueError(
            f"The parameters `noncontiguous` and `memory_format` are mutually exclusive, but got "
            f"noncontiguous={noncontiguous} and memory_format={memory_format}"
        )
    if requires_grad and not (dtype.is_floating_point or dtype.is_complex):
        raise ValueError(
            f"`requires_grad=True` is not supported for boolean and integral dtypes, but got dtype={dtype}"
        )
    if dtype.is_complex:  # real and imaginary parts: pairs of the real dtype, each drawn from [low, high)
        result = make_tensor(*shape, 2, dtype=dtype.to_real(), device=device, low=low, high=high).view_as_complex()
        return _finish(result, exclude_zero, noncontiguous, memory_format, requires_grad)
    lowest, highest = _limits(dtype, device)
    if dtype is _dtype.bool:
        low, high = _modify_low_high(low, high, dtype, 0, 2, 0, 2)
        result = randint(low, high, shape, device=device, dtype=dtype)
    elif not dtype.is_floating_point:
        low, high = _modify_low_high(low, high, dtype, lowest, highest, -9, 10)
        result = randint(low, high, shape, device=device, dtype=dtype)
    else:
        low, high = _modify_low_high(low, high, dtype, lowest, highest, -9, 9)
        uniform = rand(shape, device=device, dtype=_dtype.float64)
        if high - low >= highest:  # the width overflows: draw on the half-width interval and double
            result = ((uniform * (high / 2 - low / 2) + low / 2) * 2).to(dtype)
        else:
            result = (uniform * (high - low) + low).to(dtype)
    return _finish(result, exclude_zero, noncontiguous, memory_format, requires_grad)


def _finish(result: Tensor, exclude_zero: bool, noncontiguous: bool, memory_format, requires_grad: bool) -> Tensor:

    dtype = result.dtype
    if exclude_zero:
        floating = dtype.is_floating_point or dtype.is_complex
        tiny = float(result._storage.backend.finfo(result._array.dtype).tiny) if floating else 1
        result = where(result == 0, full_like(result, tiny), result)
    if noncontiguous and result.numel() > 1:
        result = _every_other_element(result)
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if requires_grad:
        result.requires_grad_(True)
    return result


def _every_other_element(t: Tensor) -> Tensor:
    """The same values, as the even columns of a tensor twice as wide in the last dim (PyTorch's layout)."""
    xp = t._storage.backend.xp
    doubled = from_array(xp.repeat(t._array, 2, axis=-1), t._storage.backend, t.device)
    return doubled[..., ::2]


__all__ = ["make_tensor"]
