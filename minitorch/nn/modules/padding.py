"""Padding layers over ``F.pad``: Zero/Constant/Reflection/Replication/Circular Pad 1d, 2d and 3d.

``padding`` is an int (the same amount on every side) or a tuple ``(left, right[, top, bottom[, front, back]])``
starting from the last dim, as ``F.pad`` takes it. Negative amounts crop.
"""

from __future__ import annotations

from collections.abc import Iterable

from ...tensor import Tensor
from .. import functional as F
from .module import Module


def _padding_tuple(padding, n: int) -> tuple:
    """PyTorch's ``_ntuple(n)``: an iterable is kept as given, a number repeated ``n`` times."""
    return tuple(padding) if isinstance(padding, Iterable) else (padding,) * n


class _PadNd(Module):
    """``F.pad(input, padding, mode)``; ``_sides`` is 2, 4 or 6 (1d, 2d, 3d)."""

    _mode = "constant"
    _sides = 2

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _padding_tuple(padding, self._sides)

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pad the last dim with ``value``."""


class ConstantPad2d(_ConstantPadNd):
    """Pad the last two dims with ``value``."""

    _sides = 4


class ConstantPad3d(_ConstantPadNd):
    """Pad the last three dims with ``value``."""

    _sides = 6


class ZeroPad1d(ConstantPad1d):
    """Pad the last dim with zeros."""

    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    """Pad the last two dims with zeros."""

    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad3d(ConstantPad3d):
    """Pad the last three dims with zeros."""

    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ReflectionPad1d(_PadNd):
    """Pad the last dim with its reflection (the edge not repeated)."""

    _mode = "reflect"


class ReflectionPad2d(ReflectionPad1d):
    """Pad the last two dims with their reflection."""

    _sides = 4


class ReflectionPad3d(ReflectionPad1d):
    """Pad the last three dims with their reflection."""

    _sides = 6


class ReplicationPad1d(_PadNd):
    """Pad the last dim by repeating its edge values."""

    _mode = "replicate"


class ReplicationPad2d(ReplicationPad1d):
    """Pad the last two dims by repeating their edges."""

    _sides = 4


class ReplicationPad3d(ReplicationPad1d):
    """Pad the last three dims by repeating their edges."""

    _sides = 6


class _CircularPadNd(_PadNd):
    """Circular padding; refuses inputs without exactly the batched or unbatched number of dims."""

    _mode = "circular"

    def forward(self, input: Tensor) -> Tensor:
        spatial = self._sides // 2
        if input.dim() not in (spatial + 1, spatial + 2):
            raise ValueError(f"expected {spatial + 1}D or {spatial + 2}D input (got {input.dim()}D input)")
        return super().forward(input)


class CircularPad1d(_CircularPadNd):
    """Pad the last dim by wrapping around."""


class CircularPad2d(_CircularPadNd):
    """Pad the last two dims by wrapping around."""

    _sides = 4


class CircularPad3d(_CircularPadNd):
    """Pad the last three dims by wrapping around."""

    _sides = 6


__all__ = [
    "CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
    "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
    "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d",
]
