"""``minitorch.mps``: Apple's Metal device, which minitorch does not have. It behaves as PyTorch's ``torch.mps``
on a machine without MPS: not available, 0 devices, seeding a no-op, and the calls that need the device raising
PyTorch's RuntimeError."""

from __future__ import annotations


def _no_mps(what: str):
    return RuntimeError(f"Cannot execute {what}() without MPS backend.")


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0


def synchronize() -> None:
    raise _no_mps("deviceSynchronize")


def empty_cache() -> None:
    raise _no_mps("emptyCache")


def current_allocated_memory() -> int:
    raise _no_mps("getCurrentAllocatedMemory")


def driver_allocated_memory() -> int:
    raise _no_mps("getDriverAllocatedMemory")


def recommended_max_memory() -> int:
    raise _no_mps("getRecommendedMaxMemory")


def manual_seed(seed: int) -> None:
    """Seeds the MPS generator; without MPS it returns at once (no check of ``seed``), as in PyTorch."""


def seed() -> None:
    raise _no_mps("getDefaultGenerator")


def get_rng_state():
    raise _no_mps("getDefaultGenerator")


def set_per_process_memory_fraction(fraction: float) -> None:
    raise _no_mps("setMemoryFraction")
