"""``minitorch.autocast`` / ``minitorch.amp.autocast``: run the matmul/convolution family in a lower-precision
dtype inside a region (PyTorch's automatic mixed precision).

Inside ``with autocast(device_type, dtype):`` the ops PyTorch lists as lower-precision ops (matmul, mm, bmm,
addmm, baddbmm, addbmm, einsum, linear, conv*/conv_transpose*, prelu, scaled_dot_product_attention) cast their
floating (non-float64) inputs on that device type to ``dtype``; the losses run in float32. Everything else runs
in its inputs' dtype. The cast is differentiable, so gradients reach leaves in the leaves' dtype.

The CPU default dtype is bfloat16 (PyTorch's): where this minitorch has no bfloat16, ``autocast('cpu')``
without ``dtype`` warns and disables itself, as PyTorch does for a dtype CPU autocast does not support;
``dtype=minitorch.float16`` works everywhere. Without a GPU, ``autocast('cuda')`` warns and disables itself.
"""

from __future__ import annotations

import functools
import warnings

from .. import _autocast_state, _dtype
from .._autocast_state import state
from .._backends import cuda_device
from .._device import device as _device

__all__ = [
    "autocast", "custom_bwd", "custom_fwd", "get_autocast_dtype", "is_autocast_available", "is_autocast_enabled",
    "set_autocast_dtype", "set_autocast_enabled",
]


def _device_type(device_type, name: str = "autocast") -> str:
    """PyTorch's validation of an autocast device type (``'cuda:0'`` means cuda)."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    kind = _device(device_type).type  # RuntimeError for an unknown device type, as PyTorch
    if kind not in _autocast_state.DEFAULT_DTYPES:
        raise RuntimeError(f"{name}: minitorch has autocast for 'cpu' and 'cuda' only, got '{device_type}'")
    return kind


def is_autocast_available(device_type: str) -> bool:
    return _device_type(device_type, "is_autocast_available") in _autocast_state.DEFAULT_DTYPES


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether autocast is on for ``device_type``; with no argument, for CUDA (as PyTorch)."""
    return state.enabled[_device_type(device_type or "cuda", "is_autocast_enabled")]


def set_autocast_enabled(device_type: str, enabled: bool) -> None:
    _autocast_state.set_enabled(_device_type(device_type, "set_autocast_enabled"), enabled)


def get_autocast_dtype(device_type: str) -> _dtype.dtype:
    return _autocast_state.default_dtype(_device_type(device_type, "get_autocast_dtype"))


def set_autocast_dtype(device_type: str, dtype: _dtype.dtype) -> None:
    state.dtypes[_device_type(device_type, "set_autocast_dtype")] = dtype


def _cpu_dtypes() -> tuple:
    return tuple(d for d in (getattr(_dtype, "bfloat16", None), _dtype.float16) if d is not None)


class autocast:
    """``with minitorch.autocast('cpu', dtype=minitorch.float16):`` (also a decorator)."""

    def __init__(self, device_type: str, dtype: _dtype.dtype | None = None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> None:
        self.device = _device_type(device_type)
        self.fast_dtype = dtype if dtype is not None else _autocast_state.default_dtype(self.device)
        self._enabled = enabled
        self._cache_enabled = True if cache_enabled is None else cache_enabled  # no cast cache: see docs/platform.md
        if not enabled:
            return
        if self.device == "cpu" and self.fast_dtype not in _cpu_dtypes():
            warnings.warn(
                "In CPU autocast, but the target dtype is not supported. Disabling autocast.\n"
                f"CPU Autocast only supports dtypes of {', '.join(f'torch.{d.name}' for d in _cpu_dtypes())} "
                "currently.", UserWarning, stacklevel=2)
            self._enabled = False
        elif self.device == "cuda" and cuda_device.device_count() == 0:
            warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.", UserWarning,
                          stacklevel=2)
            self._enabled = False
        elif self.device == "cuda" and self.fast_dtype not in (_dtype.float16, getattr(_dtype, "bfloat16", None)):
            raise RuntimeError(f"autocast: unsupported CUDA autocast dtype {self.fast_dtype}; use float16 or bfloat16")

    def __enter__(self) -> autocast:
        self.previous = (state.enabled[self.device], state.dtypes.get(self.device))
        _autocast_state.set_enabled(self.device, bool(self._enabled))
        if self._enabled:
            state.dtypes[self.device] = self.fast_dtype
        return self

    def __exit__(self, *exc) -> None:
        enabled, dtype = self.previous
        _autocast_state.set_enabled(self.device, enabled)
        if dtype is None:
            state.dtypes.pop(self.device, None)
        else:
            state.dtypes[self.device] = dtype

    def __call__(self, fn):
        @functools.wraps(fn)
        def run(*args, **kwargs):
            with autocast(self.device, self.fast_dtype, self._enabled, self._cache_enabled):
                return fn(*args, **kwargs)

        return run


def _cast_tree(value, device_type: str, dtype):
    """``value`` with each eligible tensor in it (nested lists, tuples, dicts) cast to ``dtype``."""
    if isinstance(value, dict):
        return {k: _cast_tree(v, device_type, dtype) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_tree(v, device_type, dtype) for v in value)
    return _autocast_state._cast(value, device_type, dtype)


def custom_fwd(fwd=None, *, device_type: str, cast_inputs: _dtype.dtype | None = None):
    """Decorate a custom ``Function.forward``: remember whether autocast was on (so ``custom_bwd`` runs
    backward the same way), or with ``cast_inputs`` run forward with autocast off on inputs cast to it."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(ctx, *args, **kwargs):
        ctx._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            ctx._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(ctx, *args, **kwargs)
        ctx._fwd_used_autocast = False
        if not is_autocast_enabled(device_type):
            return fwd(ctx, *args, **kwargs)
        with autocast(device_type, enabled=False):
            return fwd(ctx, *_cast_tree(args, device_type, cast_inputs), **_cast_tree(kwargs, device_type,
                                                                                       cast_inputs))

    return decorate_fwd


def custom_bwd(bwd=None, *, device_type: str):
    """Decorate a custom ``Function.backward``: run it under the autocast state its forward saw."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(ctx, *args, **kwargs):
        with autocast(device_type, enabled=ctx._fwd_used_autocast, dtype=ctx._dtype):
            return bwd(ctx, *args, **kwargs)

    return decorate_bwd
