"""How minitorch's dtypes map to numpy array dtypes, bfloat16 included.

numpy has no bfloat16; the ml_dtypes package (made for exactly this) registers one whose ufuncs compute
in float32 and round each result to bfloat16, which is how PyTorch's CPU kernels compute bfloat16 ops.
numpy gives it the kind 'V' (a user dtype), so code above the backends asks ``kind`` instead of
``dtype.kind`` where bfloat16 must count as floating.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
FLOAT32 = np.dtype(np.float32)


def kind(array_dtype) -> str:
    """numpy's one-letter kind of an array dtype, with bfloat16 'f' (floating) like the others."""
    kind = array_dtype.kind
    return "f" if kind == "V" and array_dtype == BFLOAT16 else kind


def is_bfloat16(array_dtype) -> bool:
    """(Cheap for the other dtypes: numpy gives bfloat16, a user dtype, the kind 'V'.)"""
    return array_dtype is BFLOAT16 or (array_dtype.kind == "V" and array_dtype == BFLOAT16)


def finfo(array_dtype):
    """numpy's finfo, or ml_dtypes' for bfloat16 (the same fields)."""
    return ml_dtypes.finfo(array_dtype) if array_dtype == BFLOAT16 else np.finfo(array_dtype)
