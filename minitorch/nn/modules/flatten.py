"""Flatten and Unflatten: reshape modules for Sequential models (views when the layout allows)."""

from __future__ import annotations

from ...tensor import Tensor
from .module import Module


class Flatten(Module):
    """Merge dims ``start_dim..end_dim`` into one (by default all but the batch dim)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input: Tensor) -> Tensor:
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


def _require_tuple_int(value) -> None:
    if isinstance(value, (tuple, list)):
        for idx, elem in enumerate(value):
            if not isinstance(elem, int):
                raise TypeError(
                    f"unflattened_size must be tuple of ints, but found element of type {type(elem).__name__} at pos "
                    f"{idx}"
                )
        return
    raise TypeError(f"unflattened_size must be a tuple of ints, but found type {type(value).__name__}")


class Unflatten(Module):
    """Split dim ``dim`` into ``unflattened_size`` (one entry may be -1). Named-tensor dims (str) are not supported."""

    def __init__(self, dim: int, unflattened_size) -> None:
        super().__init__()
        if not isinstance(dim, int):
            raise TypeError("invalid argument type for dim parameter")
        _require_tuple_int(unflattened_size)
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input: Tensor) -> Tensor:
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


__all__ = ["Flatten", "Unflatten"]
