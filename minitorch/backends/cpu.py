"""``minitorch.backends.cpu``: the SIMD level the CPU kernels use (numpy's highest enabled extension)."""

from __future__ import annotations

from .._backends import cpu_info


def get_cpu_capability() -> str:
    """PyTorch's names: 'AVX512', 'AVX2', or 'DEFAULT' (also on non-x86 CPUs)."""
    return cpu_info.cpu_capability()
