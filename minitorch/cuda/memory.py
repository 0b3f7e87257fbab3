"""``minitorch.cuda`` memory statistics: CuPy's default memory pool is the caching allocator they describe.

Without a GPU they report what CPU-only PyTorch reports: 0 bytes, an empty ``memory_stats()``, and
``reset_peak_memory_stats`` / ``memory_summary`` raising (AttributeError / KeyError, PyTorch's types).
"""

from __future__ import annotations

import warnings
from collections import OrderedDict

from .._backends import backend_for, cuda_device
from .._device import CPU
from ..tensor import Tensor, from_array
from .util import NOT_COMPILED, device_index, require_cuda


def _index(device) -> int | None:
    """The GPU the statistics are for, or None on a machine without one (every statistic is then 0)."""
    index = device_index(device, optional=True) if device is not None else -1
    if cuda_device.device_count() == 0:
        return None
    return index if index >= 0 else cuda_device.current_device()


def memory_allocated(device=None) -> int:
    """Bytes held by live tensors on the GPU (CuPy pool's used bytes); 0 without a GPU."""
    index = _index(device)
    return 0 if index is None else cuda_device.memory_allocated(index)


def max_memory_allocated(device=None) -> int:
    """The most ``memory_allocated`` reached since start or ``reset_peak_memory_stats``; 0 without a GPU."""
    index = _index(device)
    return 0 if index is None else cuda_device.max_memory_allocated(index)


def memory_reserved(device=None) -> int:
    """Bytes the pool holds from the driver (in use or cached for reuse); 0 without a GPU."""
    index = _index(device)
    return 0 if index is None else cuda_device.memory_reserved(index)


def max_memory_reserved(device=None) -> int:
    """CuPy's pool has no peak of reserved bytes: minitorch reports the current one (docs/differences.md)."""
    return memory_reserved(device)


def memory_cached(device=None) -> int:
    warnings.warn("`torch.cuda.memory_cached` has been renamed to `torch.cuda.memory_reserved`", FutureWarning,
                  stacklevel=2)
    return memory_reserved(device)


def max_memory_cached(device=None) -> int:
    warnings.warn("`torch.cuda.max_memory_cached` has been renamed to `torch.cuda.max_memory_reserved`",
                  FutureWarning, stacklevel=2)
    return max_memory_reserved(device)


def reset_peak_memory_stats(device=None) -> None:
    index = _index(device)
    if index is None:  # CPU-only PyTorch: torch._C has no _cuda_resetPeakMemoryStats
        raise AttributeError(f"reset_peak_memory_stats: this minitorch has no CUDA device ({NOT_COMPILED})")
    cuda_device.reset_peak(index)


def reset_max_memory_allocated(device=None) -> None:
    reset_peak_memory_stats(device)


def memory_stats(device=None) -> OrderedDict:
    """The statistics CuPy's pool can give, under PyTorch's key names; empty without a GPU."""
    index = _index(device)
    stats: OrderedDict = OrderedDict()
    if index is None:
        return stats
    stats["allocated_bytes.all.current"] = cuda_device.memory_allocated(index)
    stats["allocated_bytes.all.peak"] = cuda_device.max_memory_allocated(index)
    stats["reserved_bytes.all.current"] = cuda_device.memory_reserved(index)
    stats["reserved_bytes.all.peak"] = stats["reserved_bytes.all.current"]
    return stats


def memory_summary(device=None, abbreviated: bool = False) -> str:
    """A short table of ``memory_stats()``; without a GPU the statistic is missing and it raises KeyError."""
    stats = memory_stats(device)
    mib = 1024 * 1024
    rows = [("Allocated memory", "allocated_bytes"), ("GPU reserved memory", "reserved_bytes")]
    lines = [f"{'Metric':<24}{'Cur Usage':>14}{'Peak Usage':>14}"]
    for label, key in rows:
        current, peak = stats[f"{key}.all.current"], stats[f"{key}.all.peak"]
        lines.append(f"{label:<24}{current / mib:>11.1f} MiB{peak / mib:>11.1f} MiB")
    return "\n".join(lines)


def empty_cache() -> None:
    """Return the pool's cached, unused blocks to the driver; nothing to do without a GPU."""
    if cuda_device.device_count() > 0:
        cuda_device.empty_cache()


def mem_get_info(device=None) -> tuple[int, int]:
    """(free, total) bytes of the GPU, from the driver."""
    require_cuda()
    index = _index(device)
    return cuda_device.mem_get_info(index)


# pinned host memory: the Tensor methods ---------------------------------------------------------------------


def pin_memory(self: Tensor, device=None) -> Tensor:
    """A copy of this CPU tensor in page-locked memory (faster, asynchronous copies to the GPU). Needs a GPU:
    without one it raises CPU-only PyTorch's RuntimeError."""
    if cuda_device.device_count() == 0:
        raise RuntimeError("Cannot access accelerator device when none is available.")
    if self.device.type != "cpu" or self.is_sparse:
        raise RuntimeError(f"cannot pin '{self.type()}' only dense CPU tensors can be pinned")
    if is_pinned(self):
        return self
    cpu = backend_for(CPU)
    return from_array(cuda_device.pinned_copy(cpu.xp.ascontiguousarray(self.detach()._array)), cpu, CPU)


def is_pinned(self: Tensor, device=None) -> bool:
    """Whether this tensor lies in page-locked host memory (never without a GPU)."""
    if cuda_device.device_count() == 0 or self.device.type != "cpu" or self.numel() == 0:
        return False
    return cuda_device.is_pinned(self._array)

