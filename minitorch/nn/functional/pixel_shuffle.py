"""Rearrangements of channels: pixel_shuffle / pixel_unshuffle (sub-pixel convolution, Shi et al. 2016) and
channel_shuffle (ShuffleNet). Each is a reshape, a permute and a reshape, so autograd differentiates them
through those views' own derivatives; the result is a fresh contiguous tensor, as in PyTorch.
"""

from __future__ import annotations

import numbers

from ...tensor import Tensor


def _check_factor(name: str, argument: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name}(): argument '{argument}' (position 2) must be int, not {type(value).__name__}")
    if value <= 0:
        kind = "upscale_factor" if name == "pixel_shuffle" else "downscale_factor"
        raise RuntimeError(f"{name} expects a positive {kind}, but got {value}")
    return int(value)


def _check_dims(name: str, input: Tensor) -> None:
    if input.dim() < 3:
        raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got input with {input.dim()} "
                           "dimension(s)")


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """(*, C * r^2, H, W) -> (*, C, H * r, W * r): each group of r^2 channels becomes an r x r block."""
    r = _check_factor("pixel_shuffle", "upscale_factor", upscale_factor)
    _check_dims("pixel_shuffle", input)
    *batch, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(
            "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of upscale_factor, "
            f"but input.size(-3)={c} is not divisible by {r * r}"
        )
    n = len(batch)
    out = input.reshape(*batch, c // (r * r), r, r, h, w)
    out = out.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return out.reshape(*batch, c // (r * r), h * r, w * r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """(*, C, H * r, W * r) -> (*, C * r^2, H, W): the inverse of ``pixel_shuffle``."""
    r = _check_factor("pixel_unshuffle", "downscale_factor", downscale_factor)
    _check_dims("pixel_unshuffle", input)
    *batch, c, h, w = input.shape
    for side, size, dim in (("height", h, -2), ("width", w, -1)):
        if size % r:
            raise RuntimeError(f"pixel_unshuffle expects {side} to be divisible by downscale_factor, but "
                               f"input.size({dim})={size} is not divisible by {r}")
    n = len(batch)
    out = input.reshape(*batch, c, h // r, r, w // r, r)
    out = out.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return out.reshape(*batch, c * r * r, h // r, w // r)


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """(N, g * k, *) -> (N, k * g, *): channel ``i * k + j`` moves to ``j * g + i`` (interleave the groups)."""
    if input.dim() <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with sizes {list(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    n, c, *rest = input.shape
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups.")
    out = input.reshape(n, groups, c // groups, *rest).transpose(1, 2)
    return out.reshape(n, c, *rest)


native_channel_shuffle = channel_shuffle

__all__ = ["pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "native_channel_shuffle"]
