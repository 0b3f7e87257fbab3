"""Shared by the ``minitorch.cuda`` modules: PyTorch's device-argument parsing and its CPU-only error."""

from __future__ import annotations

from .._backends import cuda_device
from .._device import device as _device

# CPU-only PyTorch's words for "this call needs a GPU"; programs and their users search for this exact text
NOT_COMPILED = "Torch not compiled with CUDA enabled"


def require_cuda() -> None:
    """Raise what CPU-only PyTorch raises for a call that needs a GPU (CuPy missing or no GPU found)."""
    if cuda_device.device_count() == 0:
        raise AssertionError(NOT_COMPILED)


def device_index(device, optional: bool = False) -> int:
    """The GPU index ``device`` names (an int, ``'cuda:N'``, a ``minitorch.device``); ``-1`` for "current"
    when ``optional`` (``None`` or ``'cuda'`` without an index). PyTorch's ValueErrors otherwise."""
    if isinstance(device, str):
        device = _device(device)
    if isinstance(device, _device):
        if device.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {device}")
        if device.index is not None:
            return device.index
    elif isinstance(device, int) and not isinstance(device, bool):
        return device
    if optional and (device is None or isinstance(device, _device)):
        return -1
    raise ValueError(f"Expected a torch.device with a specified index or an integer, but got:{device}")
