"""``minitorch.utils.dlpack`` (PyTorch's ``torch.utils.dlpack``): DLPack capsules, the zero-copy exchange format
between array libraries. ``torch.from_dlpack(t)`` and ``t.__dlpack__()`` are the usual way; these are the
capsule-level spellings older code uses.
"""

from __future__ import annotations

import enum

from ..creation import from_dlpack
from ..tensor import Tensor


class DLDeviceType(enum.IntEnum):
    """DLPack's device codes (what ``__dlpack_device__`` returns first)."""

    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLROCMHost = 11
    kDLExtDev = 12
    kDLCUDAManaged = 13
    kDLOneAPI = 14
    kDLWebGPU = 15
    kDLHexagon = 16
    kDLMAIA = 17


def to_dlpack(tensor: Tensor):
    """A DLPack capsule sharing ``tensor``'s memory (consumed once, by ``from_dlpack``). It is a versioned
    (DLPack 1.0) capsule, which carries the read-only flag, so consumers import it writable."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"to_dlpack: expected a Tensor, got {type(tensor).__name__}")
    return tensor.__dlpack__(max_version=(1, 0))


__all__ = ["DLDeviceType", "from_dlpack", "to_dlpack"]
