"""Dropout: zero random elements (or whole channels) in training and rescale the survivors.

Masks are PyTorch's: ``empty(mask shape).bernoulli_(1 - p)`` from the input device's default generator,
so after ``minitorch.manual_seed`` the CPU masks are PyTorch's. ``inplace=True`` is accepted but computed out
of place until in-place ops arrive: use the returned tensor.
"""

from __future__ import annotations

import math
import warnings

from ...creation import empty_like
from ...ops.arguments import user_stacklevel
from ...ops.op import Op
from ...ops.promotion import as_bfloat16_of
from ...sampling import bernoulli_
from ...tensor import Tensor
from .activation import check_floating

_SELU_NEGATIVE_SATURATION = 1.7580993408473766  # -selu(-inf) = scale * alpha


class Dropout(Op):
    """``input * noise (+ shift)`` with a Bernoulli(1 - p) ``keep`` mask that broadcasts over the input
    (the input's shape, or (N, C, 1, ...) for channel dropout), rounded step by step as PyTorch's CPU
    ``_dropout_impl``.

    Plain dropout: ``noise = keep / (1 - p)``, no shift. Alpha dropout keeps SELU's mean and variance:
    dropped elements become the negative saturation value, then an affine map ``a * x + b``
    (PyTorch's formula). The gradient is ``grad * noise`` either way."""

    def forward(self, x, keep, p, alpha):
        if alpha:
            a = 1.0 / math.sqrt((_SELU_NEGATIVE_SATURATION**2 * p + 1) * (1 - p))
            shift = (keep - 1) * (_SELU_NEGATIVE_SATURATION * a) + _SELU_NEGATIVE_SATURATION * a * p
            self.multiplier = keep * a
            return as_bfloat16_of(x * self.multiplier + shift, x)
        self.multiplier = as_bfloat16_of(keep / (1.0 - p), x)
        return x * self.multiplier

    def backward(self, grad):
        return grad * self.constant(self.multiplier)


def _check_probability(p: float) -> None:
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _dropout(name: str, input: Tensor, p: float, training: bool, mask_shape=None, alpha: bool = False) -> Tensor:
    _check_probability(p)
    if not training or p == 0 or input.numel() == 0:
        return input
    check_floating(name, input)
    if p == 1:
        return input * 0.0
    # PyTorch's noise: empty_like(input) (its dense layout, filled in memory order) or, per channel, a new tensor
    keep = empty_like(input) if mask_shape is None else input.new_empty(mask_shape)
    return Dropout.apply(input, bernoulli_(keep, 1 - p), float(p), alpha)


def _channel_mask_shape(input: Tensor, batched: bool) -> tuple:
    """One mask entry per (sample, channel): later dims broadcast."""
    lead = 2 if batched else 1
    return tuple(input.shape[:lead]) + (1,) * (input.dim() - lead)


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)`` (in training;
    the identity otherwise), so the expected value is unchanged."""
    return _dropout("dropout", input, p, training)


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """Dropout for SELU networks: keeps zero mean and unit variance (Klambauer et al., 2017)."""
    return _dropout("alpha_dropout", input, p, training, alpha=True)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """Alpha dropout of whole channels (dim 1)."""
    _check_probability(p)
    if training and input.dim() < 2:
        raise RuntimeError(
            f"Feature dropout requires at least 2 dimensions in the input, got input of shape {list(input.shape)}"
        )
    mask = _channel_mask_shape(input, True) if input.dim() >= 2 else None
    return _dropout("feature_alpha_dropout", input, p, training, mask, alpha=True)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels: input (N, C, L) or (C, L)."""
    _check_probability(p)
    if input.dim() not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {input.dim()}D input. Note that dropout1d exists to "
            "provide channel-wise dropout on inputs with 1 spatial dimension, a channel dimension, and an optional "
            "batch dimension (i.e. 2D or 3D inputs)."
        )
    return _dropout("dropout1d", input, p, training, _channel_mask_shape(input, input.dim() == 3))


def _channel_dropout(n: int, input: Tensor, p: float, training: bool, batched: bool) -> Tensor:
    """dropout2d/3d: warn, as PyTorch does, on a rank other than n + 1 or n + 2, then zero whole channels
    (plain dropout below 2-D)."""
    ndim = input.dim()
    if ndim not in (n + 1, n + 2):
        warnings.warn(
            f"dropout{n}d: Received a {ndim}-D input to dropout{n}d, which is deprecated and will result in an error "
            "in a future release. To retain the behavior and silence this warning, please use dropout instead. Note "
            f"that dropout{n}d exists to provide channel-wise dropout on inputs with {n} spatial dimensions, a channel "
            f"dimension, and an optional batch dimension (i.e. {n + 1}D or {n + 2}D inputs).",
            stacklevel=user_stacklevel(),
        )
    if ndim < 2:
        return _dropout(f"dropout{n}d", input, p, training)
    return _dropout(f"dropout{n}d", input, p, training, _channel_mask_shape(input, batched))


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels: input (N, C, H, W). A 3-D input is read as (N, C, L), as PyTorch does (with its warning)."""
    _check_probability(p)
    if input.dim() == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout behavior is "
            "desired - input is interpreted as shape (N, C, L), where C is the channel dim. This behavior will change "
            "in a future release to interpret the input as one without a batch dimension, i.e. shape (C, H, W). To "
            "maintain the 1D channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=user_stacklevel(),
        )
    return _channel_dropout(2, input, p, training, batched=True)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels: input (N, C, D, H, W) or (C, D, H, W)."""
    _check_probability(p)
    return _channel_dropout(3, input, p, training, batched=input.dim() != 4)


__all__ = ["dropout", "alpha_dropout", "feature_alpha_dropout", "dropout1d", "dropout2d", "dropout3d"]
