"""Flatten parameters into one vector and back (for optimizers and second-order methods)."""

from __future__ import annotations

from collections.abc import Iterable

from ...ops.shape import cat
from ...tensor import Tensor
from ..modules.module import typename

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _check_param_device(param: Tensor, old_param_device: int | None) -> int:
    """The CUDA index shared by all parameters (-1 for the CPU); parameters on two devices raise."""
    device = param.get_device() if param.device.type == "cuda" else -1
    if old_param_device is not None and device != old_param_device:
        raise TypeError("Found two parameters on different devices, this is currently not supported.")
    return device


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """All parameters flattened and concatenated in order (differentiable)."""
    device = None
    pieces = []
    for param in parameters:
        device = _check_param_device(param, device)
        pieces.append(param.reshape(-1))
    return cat(pieces)


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Point each parameter's ``.data`` at its slice of ``vec`` (they share ``vec``'s storage afterwards,
    as in PyTorch)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {typename(vec)}")
    device = None
    pointer = 0
    for param in parameters:
        device = _check_param_device(param, device)
        n = param.numel()
        param.data = vec[pointer:pointer + n].view_as(param).data
        pointer += n
