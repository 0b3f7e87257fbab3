"""Copies and casts: clone, contiguous, to(device/dtype). Their gradients move back unchanged."""

from __future__ import annotations

from .._backends import backend_for
from .._device import device as Device
from ..tensor import Tensor
from .op import Op
from .promotion import in_operands_layout


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
        if order == "K" and any(n > 1 and s == 0 for n, s in zip(x.shape, x.strides)):
            # an expanded input: PyTorch's empty_like infers dense strides as TensorIterator orders dims (a
            # stride-0 dim stays in place); numpy's order 'K' moves it
            return in_operands_layout(x.copy(order="C"), (x,), self.xp)
        return x.copy(order=order)

    def backward(self, grad):
        return grad


def clone(input: Tensor, *, memory_format=None) -> Tensor:
    """A copy with its own storage; gradients flow through it unchanged."""
    return Clone.apply(input)


def contiguous(input: Tensor, memory_format=None) -> Tensor:
    """``input`` itself when row-major already, else a row-major copy."""
    return input if input.is_contiguous() else Clone.apply(input, "C")


Tensor.clone = clone
Tensor.contiguous = contiguous

__all__ = ['clone', 'contiguous']
