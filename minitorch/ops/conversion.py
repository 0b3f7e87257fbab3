"""Copies and casts: clone, contiguous, to(device/dtype). Their gradients move back unchanged."""

from __future__ import annotations

import warnings
from typing import Any

from .. import _dtype
from .._backends import backend_for
from .._device import as_device
from .._device import device as Device
from ..memory_format import checked, contiguous_format, format_strides, preserve_format
from ..tensor import Tensor
from .op import Op, linear_jvp
from .promotion import in_operands_layout


class ToCopy(Op):
    """A copy on another device and/or dtype; the gradient is cast/moved back by the engine."""

    jvp = linear_jvp  # forward mode: linear in its first input, so the op itself on the tangent (ops/op.py)

    def forward(self, x, device: Device, dtype):
        source = self.backend
        target = backend_for(device)
        if target is not source:
            x = target.from_numpy(source.to_numpy(x))
            self.backend, self.device = target, target.normalize(device)
        array_dtype = target.array_dtype(dtype) if dtype is not None else x.dtype
        if x.dtype.kind == "c" and array_dtype.kind != "c":
            warnings.warn("Casting complex values to real discards the imaginary part", UserWarning, stacklevel=5)
            x = x.real
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
    """A copy; order 'K' keeps a permuted layout, as PyTorch's preserve_format (``x.t().clone()`` stays transposed),
    'C' is row-major, and a tuple gives the copy's strides (a channels-last memory format)."""

    jvp = linear_jvp  # forward mode: linear in its first input, so the op itself on the tangent (ops/op.py)

    def forward(self, x, order="K"):
        if type(order) is tuple:
            out = self.backend.as_strided(self.xp.empty(x.size, dtype=x.dtype), x.shape, order, 0)
            out[...] = x
            return out
        if order == "K" and any(n > 1 and s == 0 for n, s in zip(x.shape, x.strides)):
            # an expanded input: PyTorch's empty_like infers dense strides as TensorIterator orders dims (a
            # stride-0 dim stays in place); numpy's order 'K' moves it
            return in_operands_layout(x.copy(order="C"), (x,), self.xp)
        return x.copy(order=order)

    def backward(self, grad):
        return grad


def clone(input: Tensor, *, memory_format=preserve_format) -> Tensor:
    """A copy with its own storage; gradients flow through it unchanged."""
    if memory_format is None or memory_format is preserve_format:
        return Clone.apply(input)
    return Clone.apply(input, format_order(checked("clone", memory_format), input.shape))


def contiguous(input: Tensor, memory_format=contiguous_format) -> Tensor:
    """``input`` itself when already laid out in ``memory_format`` (row-major by default), else such a copy."""
    if input.is_contiguous(memory_format=checked("contiguous", memory_format)):
        return input
    if memory_format is preserve_format:
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    return Clone.apply(input, format_order(memory_format, input.shape))


def format_order(memory_format, shape: tuple):
    """Clone's ``order`` for a memory format other than preserve: 'C' (row-major) or the format's strides."""
    return format_strides(memory_format, tuple(shape)) or "C"


__all__ = ['clone', 'contiguous']


def to(self: Tensor, *args, **kwargs) -> Tensor:
    """``to(device)``, ``to(dtype)``, ``to(device, dtype)``, ``to(other)``; a no-op returns self."""
    device, dtype, copy = _parse_to(self, args, kwargs)
    memory_format = kwargs.get("memory_format", preserve_format)
    out = self
    if device != self.device or (dtype is not None and dtype is not self.dtype) or copy:
        out = to_copy(self, device=device, dtype=dtype)
    if memory_format is not preserve_format:  # a layout other than the input's: a copy in that layout
        out = out.contiguous(memory_format=checked("to", memory_format))
    return out


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
