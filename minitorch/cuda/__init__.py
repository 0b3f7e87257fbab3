"""``minitorch.cuda``: PyTorch's ``torch.cuda`` over CuPy.

On a machine without CuPy or without a GPU every function behaves as in a CPU-only PyTorch build:
``is_available()`` is False, ``device_count()`` is 0, memory statistics are 0, and the calls that need
a device raise what CPU-only PyTorch raises (``AssertionError: Torch not compiled with CUDA enabled``
and the others, same exception types; see docs/platform.md). With CuPy and a GPU they are real: devices,
properties and memory statistics come from CuPy (``minitorch._backends.cuda_device``).
"""

from __future__ import annotations

from dataclasses import dataclass

from .._backends import cuda_device
from .._device import device as _device
from ..random import _default_generator_for
from . import amp, nccl
from .memory import (
    empty_cache,
    max_memory_allocated,
    max_memory_cached,
    max_memory_reserved,
    mem_get_info,
    memory_allocated,
    memory_cached,
    memory_reserved,
    memory_stats,
    memory_summary,
    reset_max_memory_allocated,
    reset_peak_memory_stats,
)
from .streams import Event, Stream, StreamContext, current_stream, default_stream, stream
from .util import NOT_COMPILED, device_index, require_cuda

__all__ = [
    "Event", "Stream", "StreamContext", "amp", "current_device", "current_stream", "default_stream", "device",
    "device_count", "empty_cache", "get_arch_list", "get_device_capability", "get_device_name",
    "get_device_properties", "init", "is_available", "is_bf16_supported", "is_initialized", "manual_seed",
    "manual_seed_all", "max_memory_allocated", "max_memory_cached", "max_memory_reserved", "mem_get_info",
    "memory_allocated", "memory_cached", "memory_reserved", "memory_stats", "memory_summary", "nccl",
    "reset_max_memory_allocated", "reset_peak_memory_stats", "seed", "seed_all", "set_device", "stream", "synchronize",
]

_initialized = False


def is_available() -> bool:
    """Whether CuPy is installed and sees at least one GPU."""
    return cuda_device.device_count() > 0


def device_count() -> int:
    return cuda_device.device_count()


def is_initialized() -> bool:
    """Whether CUDA has been set up in this process (by ``init()`` or the first CUDA tensor)."""
    return _initialized or cuda_device.backend_started()


def init() -> None:
    """Set up CUDA now rather than on first use; raises on a machine without a GPU, as PyTorch does."""
    global _initialized
    require_cuda()
    _initialized = True


def current_device() -> int:
    require_cuda()
    return cuda_device.current_device()


def set_device(device) -> None:
    """Make ``device`` (an index, ``'cuda:N'`` or a device) the current GPU; a negative index is a no-op."""
    index = device_index(device, optional=False)
    if index < 0:
        return
    if not is_available():  # CPU-only PyTorch: torch._C has no _cuda_setDevice
        raise AttributeError(f"set_device: this minitorch has no CUDA device ({NOT_COMPILED})")
    cuda_device.set_device(index)


class device:
    """``with minitorch.cuda.device(1):`` makes GPU 1 current inside the block (``None`` or a negative index:
    nothing changes)."""

    def __init__(self, device) -> None:
        self.index = device_index(device, optional=True) if device is not None else -1
        self.previous = -1

    def __enter__(self):
        if self.index >= 0:
            if not is_available():
                raise RuntimeError("PyTorch was compiled without CUDA support")
            self.previous = cuda_device.current_device()
            cuda_device.set_device(self.index)
        return self

    def __exit__(self, *exc) -> None:
        if self.previous >= 0:
            cuda_device.set_device(self.previous)


@dataclass(frozen=True)
class _CudaDeviceProperties:
    """The properties PyTorch's ``get_device_properties`` reports (a subset)."""

    name: str
    major: int
    minor: int
    total_memory: int
    multi_processor_count: int

    def __repr__(self) -> str:
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
                f"total_memory={self.total_memory // (1024 * 1024)}MB, "
                f"multi_processor_count={self.multi_processor_count})")


def get_device_properties(device=None) -> _CudaDeviceProperties:
    require_cuda()
    index = device_index(device, optional=True)
    if index < 0:
        index = cuda_device.current_device()
    if index >= device_count():
        raise AssertionError("Invalid device id")
    props = cuda_device.properties(index)
    name = props["name"]
    return _CudaDeviceProperties(
        name=name.decode() if isinstance(name, bytes) else str(name), major=props["major"], minor=props["minor"],
        total_memory=props["totalGlobalMem"], multi_processor_count=props["multiProcessorCount"],
    )


def get_device_name(device=None) -> str:
    return get_device_properties(device).name


def get_device_capability(device=None) -> tuple[int, int]:
    props = get_device_properties(device)
    return props.major, props.minor


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """Whether the current GPU computes in bfloat16 natively (compute capability 8.0 and up); False without CUDA.

    ``including_emulation`` is accepted for PyTorch's signature; CuPy has no emulated bfloat16 path.
    """
    if not is_available():
        return False
    return get_device_capability()[0] >= 8


def get_arch_list() -> list[str]:
    """The ``sm_XY`` architectures of the GPUs present (PyTorch lists those it was compiled for; CuPy
    compiles for the GPU it runs on). Empty without CUDA."""
    if not is_available():
        return []
    return sorted({"sm_{}{}".format(*get_device_capability(i)) for i in range(device_count())})


def synchronize(device=None) -> None:
    """Wait until every kernel queued on ``device`` (default: the current GPU) has finished."""
    require_cuda()
    index = device_index(device, optional=True)
    cuda_device.synchronize(index if index >= 0 else cuda_device.current_device())


def manual_seed(seed: int) -> None:
    """Seed the generator CUDA tensors draw from (not the CPU one); without a GPU nothing happens, as in PyTorch."""
    seed = int(seed)
    if is_available():
        _default_generator_for(_device("cuda")).manual_seed(seed)


manual_seed_all = manual_seed


def seed() -> None:
    """Reseed the CUDA generator from a non-deterministic source; without a GPU nothing happens."""
    if is_available():
        _default_generator_for(_device("cuda")).seed()


seed_all = seed
