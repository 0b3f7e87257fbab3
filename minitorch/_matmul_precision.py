"""``set_float32_matmul_precision``: PyTorch's setting for float32 matmuls ('highest', 'high', 'medium').

The setting is shared with ``minitorch.backends.cuda.matmul.allow_tf32`` (True exactly when it is not
'highest'), as in PyTorch. minitorch's kernels (numpy, CuPy) always compute float32 products in full float32,
which every setting permits ('high' and 'medium' allow, not require, faster reduced-precision internals).
"""

from __future__ import annotations

import warnings

_PRECISIONS = ("highest", "high", "medium")
_precision = "highest"


def set_float32_matmul_precision(precision: str) -> None:
    """An unknown value warns and changes nothing, as in PyTorch."""
    global _precision
    if precision not in _PRECISIONS:
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                      "setFloat32MatmulPrecision call has no effect.", UserWarning, stacklevel=2)
        return
    _precision = precision


def get_float32_matmul_precision() -> str:
    return _precision
