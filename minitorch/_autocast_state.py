"""Autocast's state and its input casts (below the ops, like grad mode): which device types autocast is on
for, to which dtype, and the decorator an op carries to take part.

An op marked ``@autocast_op("lower")`` (the matmul and convolution family) runs in the autocast dtype; one
marked ``@autocast_op("float32")`` (the losses) runs in float32. As in PyTorch, only floating tensors other
than float64 on the autocast device are cast, through the differentiable ``Tensor.to`` (so gradients flow
back in the leaf's dtype), and the op's own inner ops are not cast again. ``minitorch.amp.autocast`` is the
public context manager over this state.
"""

from __future__ import annotations

import functools

from . import _dtype
from .tensor import Tensor

# PyTorch's default autocast dtypes: bfloat16 on the CPU, float16 on CUDA
DEFAULT_DTYPES = {"cpu": "bfloat16", "cuda": "float16"}


class _State:
    __slots__ = ("enabled", "dtypes", "active")

    def __init__(self) -> None:
        self.enabled: dict[str, bool] = {"cpu": False, "cuda": False}
        self.dtypes: dict[str, object] = {}
        self.active = False  # whether any device type is on: the one check an op pays when autocast is off


state = _State()


def default_dtype(device_type: str):
    """The dtype autocast uses when none is given (None if this minitorch lacks it)."""
    return state.dtypes.get(device_type) or getattr(_dtype, DEFAULT_DTYPES[device_type], None)


def set_enabled(device_type: str, enabled: bool) -> None:
    state.enabled[device_type] = bool(enabled)
    state.active = any(state.enabled.values())


def _cast(value, device_type: str, dtype):
    if (isinstance(value, Tensor) and value.dtype.is_floating_point and value.dtype is not _dtype.float64
            and value.dtype is not dtype and value.device.type == device_type):
        return value.to(dtype)
    return value


def _cast_all(args, kwargs, policy: str):
    for device_type, on in state.enabled.items():
        if not on:
            continue
        dtype = _dtype.float32 if policy == "float32" else default_dtype(device_type)
        args = tuple(_cast(a, device_type, dtype) for a in args)
        kwargs = {k: _cast(v, device_type, dtype) for k, v in kwargs.items()}
    return args, kwargs


def autocast_op(policy: str, device_types: tuple = ("cpu", "cuda")):
    """Mark an op for autocast: ``"lower"`` runs it in the autocast dtype, ``"float32"`` in float32, on the
    listed device types (PyTorch's CPU and CUDA lists differ for a few ops)."""

    def decorate(fn):
        @functools.wraps(fn)
        def op(*args, **kwargs):
            if not state.active or not any(state.enabled[d] for d in device_types):
                return fn(*args, **kwargs)
            args, kwargs = _cast_all(args, kwargs, policy)
            saved = dict(state.enabled)
            for d in saved:  # the op's inner ops run as written (PyTorch excludes autocast below an op)
                set_enabled(d, False)
            try:
                return fn(*args, **kwargs)
            finally:
                for d, on in saved.items():
                    set_enabled(d, on)

        return op

    return decorate
