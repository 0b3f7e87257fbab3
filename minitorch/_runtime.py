"""Process-wide helpers of the torch namespace: threads, result_type, is_tensor."""

from __future__ import annotations

import os

from . import _dtype
from ._backends import backend_for
from ._device import CPU, default_device
from ._device import device as Device
from ._tensor_str import get_printoptions, set_printoptions  # noqa: F401 - re-exported as minitorch.*
from .tensor import Tensor

_num_threads: int | None = None  # what set_num_threads asked for, when no BLAS pool can be queried


def set_num_threads(n: int) -> None:
    """Limit the BLAS/OpenMP threads numpy's kernels use (through threadpoolctl)."""
    global _num_threads
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise RuntimeError(f"set_num_threads expects a positive integer, got {n}")
    _num_threads = n
    try:
        backend_for(CPU).set_num_threads(n)
    except ImportError:  # threadpoolctl missing: nothing to limit, remember the request
        pass


def get_num_threads() -> int:
    """The threads of the BLAS pool (or the last ``set_num_threads`` value, or the CPU count)."""
    try:
        return backend_for(CPU).get_num_threads()
    except ImportError:
        return _num_threads if _num_threads is not None else (os.cpu_count() or 1)


def result_type(tensor1, tensor2) -> _dtype.dtype:
    """The dtype ``tensor1 op tensor2`` produces under PyTorch's promotion rules."""
    return _dtype.result_type_of([tensor1, tensor2])


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


def is_floating_point(input: Tensor) -> bool:
    return input.dtype.is_floating_point


def numel(input: Tensor) -> int:
    return input.numel()


def get_default_device() -> Device:
    """The device factories use without ``device=`` (``cuda`` without an index reads as the current ``cuda:N``)."""
    default = default_device()
    if default is None:
        return CPU
    if default.type == "cuda" and default.index is None:
        return backend_for(default).normalize(default)
    return default
