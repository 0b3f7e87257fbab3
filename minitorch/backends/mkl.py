"""``minitorch.backends.mkl``: whether numpy's BLAS is Intel MKL (PyTorch's builds use MKL on x86)."""

from __future__ import annotations

from .._backends import cpu_info


def is_available() -> bool:
    return cpu_info.blas_vendor() == "mkl"
