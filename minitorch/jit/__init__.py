"""``minitorch.jit``: TorchScript's API with PyTorch's eager fallback.

minitorch has no TorchScript compiler. Every function here behaves as PyTorch's does when TorchScript is
disabled (``PYTORCH_JIT=0``): ``script`` and ``trace`` return the function or module unchanged (it runs eagerly,
with the same results), the decorators (``ignore``, ``unused``, ``export``, ...) return what they decorate,
``is_scripting()`` and ``is_tracing()`` are False, and ``fork`` runs its function at once. ``script`` and
``trace`` warn with PyTorch 2.13's DeprecationWarning. There is no TorchScript file format: ``save`` and
``load`` raise ``NotImplementedError`` naming the alternative (``minitorch.save`` of a ``state_dict``).
"""

from __future__ import annotations

import warnings
from typing import Any, Final  # noqa: F401 - torch.jit.Final is typing.Final

from ..futures import Future

__all__ = ["Attribute", "Final", "Future", "annotate", "export", "fork", "ignore", "interface", "is_scripting",
           "is_tracing", "load", "save", "script", "script_if_tracing", "trace", "trace_module", "unused", "wait"]

_NO_TORCHSCRIPT = ("minitorch has no TorchScript, so there is no TorchScript file to {}; save and load the model's "
                   "state_dict with minitorch.save / minitorch.load instead (docs/platform.md)")


def _deprecated(name: str) -> None:
    warnings.warn(f"`torch.jit.{name}` is deprecated. Please switch to `torch.compile` or `torch.export`.",
                  DeprecationWarning, stacklevel=3)


def script(obj, optimize=None, _frames_up: int = 0, _rcb=None, example_inputs=None):
    """Returns ``obj`` itself: it runs eagerly (PyTorch's behaviour with TorchScript disabled)."""
    _deprecated("script")
    return obj


def trace(func, example_inputs=None, optimize=None, check_trace: bool = True, check_inputs=None,
          check_tolerance: float = 1e-5, strict: bool = True, _force_outplace: bool = False,
          _module_class=None, _compilation_unit=None, example_kwarg_inputs=None, _store_inputs: bool = True):
    """Returns ``func`` itself: it runs eagerly (PyTorch's behaviour with TorchScript disabled)."""
    _deprecated("trace")
    return func


def trace_module(mod, inputs=None, **kwargs):
    _deprecated("trace_module")
    return mod


def script_if_tracing(fn):
    return fn


def ignore(drop=False, **kwargs):
    """``@jit.ignore`` or ``@jit.ignore(drop=True)``: leave the function to Python (it always is here)."""
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn):
    return fn


def export(fn):
    return fn


def interface(obj):
    return obj


def is_scripting() -> bool:
    """False: code never runs inside TorchScript in minitorch."""
    return False


def is_tracing() -> bool:
    return False


def annotate(the_type, the_value):
    """The value itself (a type hint for the TorchScript compiler)."""
    return the_value


def Attribute(value, type=None):  # noqa: N802 - PyTorch's name
    """The value itself (a type hint for the TorchScript compiler)."""
    return value


def fork(func, *args, **kwargs) -> Future:
    """Runs ``func(*args, **kwargs)`` now and returns a completed Future of its result."""
    future = Future()
    try:
        future.set_result(func(*args, **kwargs))
    except Exception as error:  # the failure is delivered by wait(), as from a forked task
        future.set_exception(error)
    return future


def wait(future: Future) -> Any:
    return future.wait()


def save(m, f, _extra_files=None) -> None:
    raise NotImplementedError(_NO_TORCHSCRIPT.format("save"))


def load(f, map_location=None, _extra_files=None, _restore_shapes: bool = False):
    raise NotImplementedError(_NO_TORCHSCRIPT.format("load"))
