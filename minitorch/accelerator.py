"""``minitorch.accelerator``: the device-agnostic API over the one accelerator minitorch has, CUDA (CuPy).

Without a GPU it behaves as CPU-only PyTorch: ``is_available()`` False, ``current_accelerator()`` None,
``device_count()`` 0, and the calls that need a device raise ``RuntimeError: Cannot access accelerator device
when none is available.``
"""

from __future__ import annotations

from . import cuda
from ._device import device as _device

_NONE = "Cannot access accelerator device when none is available."


def _require() -> None:
    if not cuda.is_available():
        raise RuntimeError(_NONE)


def is_available() -> bool:
    return cuda.is_available()


def current_accelerator(check_available: bool = False) -> _device | None:
    """``device('cuda')`` where CuPy sees a GPU, else None."""
    return _device("cuda") if cuda.is_available() else None


def device_count() -> int:
    return cuda.device_count()


def current_device_index() -> int:
    _require()
    return cuda.current_device()


def set_device_index(device) -> None:
    _require()
    cuda.set_device(device)


current_device_idx = current_device_index
set_device_idx = set_device_index


def synchronize(device=None) -> None:
    _require()
    cuda.synchronize(device)


def empty_cache() -> None:
    _require()
    cuda.empty_cache()


def memory_allocated(device_index=None) -> int:
    _require()
    return cuda.memory_allocated(device_index)


def max_memory_allocated(device_index=None) -> int:
    _require()
    return cuda.max_memory_allocated(device_index)


def memory_reserved(device_index=None) -> int:
    _require()
    return cuda.memory_reserved(device_index)


def max_memory_reserved(device_index=None) -> int:
    _require()
    return cuda.max_memory_reserved(device_index)


def reset_peak_memory_stats(device_index=None) -> None:
    _require()
    cuda.reset_peak_memory_stats(device_index)


def memory_stats(device_index=None):
    _require()
    return cuda.memory_stats(device_index)


def get_memory_info(device_index=None) -> tuple[int, int]:
    _require()
    return cuda.mem_get_info(device_index)


def current_stream(device=None):
    _require()
    return cuda.current_stream(device)


class device_index:
    """``with minitorch.accelerator.device_index(1):`` makes accelerator 1 current in the block (None: no change)."""

    def __init__(self, device, /) -> None:
        self.index = device
        self.previous: int | None = None

    def __enter__(self) -> None:
        if self.index is not None:
            self.previous = current_device_index()
            set_device_index(self.index)

    def __exit__(self, *exc) -> None:
        if self.previous is not None:
            set_device_index(self.previous)
