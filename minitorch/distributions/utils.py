"""Helpers shared by the distributions: broadcasting parameters, logits <-> probs, lazy properties."""

from __future__ import annotations

import math
from functools import update_wrapper
from numbers import Number

from .. import _dtype
from ..autograd import enable_grad
from ..creation import arange, empty, tensor
from ..nn.functional.activation import softmax
from ..ops.shape import broadcast_tensors
from ..tensor import Size, Tensor

__all__ = ["broadcast_all", "logits_to_probs", "clamp_probs", "probs_to_logits", "lazy_property",
           "tril_matrix_to_vec", "vec_to_tril_matrix"]

euler_constant = 0.57721566490153286060  # Euler-Mascheroni constant

# torch.finfo(dtype).eps / .tiny / .max for the floating dtypes (IEEE formats; bfloat16 has float32's range)
_EPS = {"float16": 2.0**-10, "bfloat16": 2.0**-7, "float32": 2.0**-23, "float64": 2.0**-52}
_TINY = {"float16": 2.0**-14, "bfloat16": 2.0**-126, "float32": 2.0**-126, "float64": 2.0**-1022}
_MAX = {"float16": 65504.0, "bfloat16": (2 - 2.0**-7) * 2.0**127, "float32": (2 - 2.0**-23) * 2.0**127,
        "float64": (2 - 2.0**-52) * 2.0**1023}


def finfo_eps(dtype: _dtype.dtype) -> float:
    """``torch.finfo(dtype).eps``: the gap between 1 and the next representable number."""
    return _EPS[dtype.name]


def finfo_tiny(dtype: _dtype.dtype) -> float:
    """``torch.finfo(dtype).tiny``: the smallest positive normal number."""
    return _TINY[dtype.name]


def finfo_min(dtype: _dtype.dtype) -> float:
    """``torch.finfo(dtype).min``: the most negative finite number."""
    return -_MAX[dtype.name]


def is_number(value) -> bool:
    return isinstance(value, Number) and not isinstance(value, Tensor)


def broadcast_all(*values) -> tuple:
    """Tensors broadcast together; numbers become tensors of the first tensor's dtype and device (or of the
    default dtype when every value is a number)."""
    if not all(isinstance(v, Tensor) or is_number(v) for v in values):
        raise ValueError("Input arguments must all be instances of Number, "
                         "torch.Tensor or objects implementing __torch_function__.")
    if not all(isinstance(v, Tensor) for v in values):
        options = {"dtype": _dtype.get_default_dtype()}
        for value in values:
            if isinstance(value, Tensor):
                options = {"dtype": value.dtype, "device": value.device}
                break
        values = tuple(v if isinstance(v, Tensor) else tensor(v, **options) for v in values)
    return tuple(broadcast_tensors(*values))


def count_and_param(dist, total_count, probs, logits) -> Size:
    """Binomial's and NegativeBinomial's parameters set on ``dist``: ``total_count`` broadcast with exactly one of
    ``probs`` and ``logits`` (in its dtype), the one given as ``_param``; returns the batch shape."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")
    if probs is not None:
        dist.total_count, dist.probs = broadcast_all(total_count, probs)
        dist._param = dist.probs
    else:
        dist.total_count, dist.logits = broadcast_all(total_count, logits)
        dist._param = dist.logits
    dist.total_count = dist.total_count.type_as(dist._param)
    return dist._param.size()


def expand_count_and_param(dist, new, batch_shape: Size) -> None:
    """``count_and_param``'s attributes of ``dist`` expanded to ``batch_shape`` on ``new`` (lazy ones stay lazy)."""
    new.total_count = dist.total_count.expand(batch_shape)
    if "probs" in dist.__dict__:
        new.probs = new._param = dist.probs.expand(batch_shape)
    if "logits" in dist.__dict__:
        new.logits = new._param = dist.logits.expand(batch_shape)


def _standard_normal(shape, dtype, device) -> Tensor:
    """Standard normal draws, as PyTorch draws them for ``rsample`` (``empty(shape).normal_()``)."""
    return empty(shape, dtype=dtype, device=device).normal_()


def _sum_rightmost(value, dim: int):
    """Sum out the ``dim`` rightmost dimensions of ``value``."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[:-dim]) + (-1,)).sum(-1)


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """Log-odds (binary) or unnormalized log-probabilities along the last dim -> probabilities."""
    if is_binary:
        return logits.sigmoid()
    return softmax(logits, dim=-1)


def clamp_probs(probs: Tensor) -> Tensor:
    """Probabilities clamped into ``[eps, 1 - eps]`` so their logs stay finite."""
    eps = finfo_eps(probs.dtype)
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """Probabilities -> log-odds (binary) or log-probabilities."""
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return ps_clamped.log() - (-ps_clamped).log1p()
    return ps_clamped.log()


class lazy_property:
    """A property computed on first access (with grad enabled) and then stored on the instance, so ``probs``
    and ``logits`` can each be derived from the other only when asked for."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    """Looks like a property to documentation tools and like a lazy_property to argument validation."""

    def __init__(self, wrapped):
        property.__init__(self, wrapped)


def _tril_mask(n: int, diag: int, device) -> Tensor:
    rows = arange(n, device=device)
    return rows < rows.view(-1, 1) + (diag + 1)


def tril_matrix_to_vec(mat: Tensor, diag: int = 0) -> Tensor:
    """The lower-triangular entries of a (batch of) ``D x D`` matrix, in row order."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    return mat[..., _tril_mask(n, diag, mat.device)]


def vec_to_tril_matrix(vec: Tensor, diag: int = 0) -> Tensor:
    """The inverse of ``tril_matrix_to_vec``: a (batch of) lower-triangular ``D x D`` matrix."""
    # the positive root of D**2 + (1+2*diag)*D - |diag| * (diag+1) - 2*vec.shape[-1] = 0
    n = (-(1 + 2 * diag) + math.sqrt((1 + 2 * diag) ** 2 + 8 * vec.shape[-1] + 4 * abs(diag) * (diag + 1))) / 2
    if round(n) - n > finfo_eps(vec.dtype):
        raise ValueError(f"The size of last dimension is {vec.shape[-1]} which cannot be expressed as "
                         "the lower triangular part of a square D x D matrix.")
    n = round(n)
    mat = vec.new_zeros(tuple(vec.shape[:-1]) + (n, n))
    mat[..., _tril_mask(n, diag, vec.device)] = vec
    return mat


def size(*dims) -> Size:
    """``torch.Size`` of a concatenation of shapes (``Size + Size`` is a plain tuple in minitorch)."""
    return Size(tuple(d for shape in dims for d in shape))
