"""Process-wide helpers of the torch namespace: threads, result_type, is_tensor, cuda.*."""

from __future__ import annotations

import os

from . import _dtype
from ._backends import backend_for
from ._device import CPU, device
from ._tensor_str import get_printoptions, set_printoptions  # noqa: F401 - re-exported as minitorch.*
from .random import manual_seed
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


class _Cuda:
    """``minitorch.cuda``: availability and synchronization of the CuPy backend."""

    @staticmethod
    def is_available() -> bool:
        try:
            backend = backend_for(device("cuda"))
            return backend.xp.cuda.runtime.getDeviceCount() > 0
        except Exception:
            return False

    @staticmethod
    def device_count() -> int:
        try:
            return backend_for(device("cuda")).xp.cuda.runtime.getDeviceCount()
        except Exception:
            return 0

    @staticmethod
    def synchronize(dev=None) -> None:
        backend_for(device("cuda")).synchronize()

    @staticmethod
    def manual_seed(seed: int) -> None:
        manual_seed(seed)

    manual_seed_all = manual_seed


cuda = _Cuda()
