"""What ``minitorch.backends`` reports about the CPU kernels: numpy's BLAS and its SIMD level."""

from __future__ import annotations

import numpy as np

try:
    from numpy._core._multiarray_umath import __cpu_features__ as _CPU_FEATURES
except ImportError:  # numpy < 2
    _CPU_FEATURES = {}


def blas_vendor() -> str:
    """The BLAS numpy was built against, lower-case ('scipy-openblas', 'mkl', 'accelerate', ...)."""
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        return str(blas.get("name", "unknown")).lower()
    except Exception:  # an old numpy without mode="dicts"
        return "unknown"


def cpu_capability() -> str:
    """PyTorch's name for the widest SIMD numpy dispatches to: 'AVX512', 'AVX2' or 'DEFAULT'."""
    features = _CPU_FEATURES
    if features.get("AVX512F") and features.get("AVX512BW") and features.get("AVX512VL"):
        return "AVX512"
    if features.get("AVX2"):
        return "AVX2"
    return "DEFAULT"
