"""Copies and casts: clone, contiguous, to(device/dtype). Their gradients move back unchanged."""

from __future__ import annotations

from typing import Any

from .. import _dtype
from .._backends import backend_for
from .._device import as_device
from .._device import device as Device
from ..tensor import Tensor
from .op import Op


class ToCopy(Op):
    """A copy on another device and/or dtype; the gradient is cast/moved back by the engine."""

    def forward(self, x, device: Device, dtype):
        source = self.backend
        target = backend_for(device)
        if target is not source:
            x = target.from_numpy(source.to_numpy(x))
            self.backend, self.device = target, target.normalize(device)
        array_dtype = target.array_dtype(dtype) if dtype is not None else x.dtype
        return x.astype(array_dtype, copy=target is source)

    def backward(self, grad):
        device = self.next_device
        return grad.to(device) if device is not None else grad


def to_copy(x: Tensor, device: Device, dtype=None) -> Tensor:
    out = ToCopy.apply(x, device=device, dtype=dtype)
    if out.grad_fn is not None:
        out.grad_fn.next_device = x.device if x.device != out.device else None
    return out


class Clone(Op):
    """A copy; order 'K' keeps a permuted layout, as PyTorch's preserve_format (``x.t().clone()`` stays transposed)."""

    def forward(self, x, order="K"):
        return x.copy(order=order)

    def backward(self, grad):
        return grad


def clone(input: Tensor, *, memory_format=None) -> Tensor:
    """A copy with its own storage; gradients flow through it unchanged."""
    return Clone.apply(input)


def contiguous(input: Tensor, memory_format=None) -> Tensor:
    """``input`` itself when row-major already, else a row-major copy."""
    return input if input.is_contiguous() else Clone.apply(input, "C")


__all__ = ['clone', 'contiguous']


def to(self: Tensor, *args, **kwargs) -> Tensor:
    """``to(device)``, ``to(dtype)``, ``to(device, dtype)``, ``to(other)``; a no-op returns self."""
    device, dtype, copy = _parse_to(self, args, kwargs)
    if device == self.device and (dtype is None or dtype is self.dtype) and not copy:
        return self
    return to_copy(self, device=device, dtype=dtype)


def _parse_to(t: Tensor, args, kwargs) -> tuple[Any, Any, bool]:
    device, dtype = kwargs.get("device"), kwargs.get("dtype")
    copy = kwargs.get("copy", False)
    for arg in args:
        if isinstance(arg, _dtype.dtype):
            dtype = arg
        elif isinstance(arg, Tensor):
            device, dtype = arg.device, arg.dtype
        elif isinstance(arg, (str, int)) or type(arg).__name__ == "device":
            device = arg
        elif isinstance(arg, bool):
            copy = arg
    device = t.device if device is None else as_device(device)
    if device.type == "cuda" and device.index is None:
        device = backend_for(device).normalize(device)
    return device, dtype, copy
