"""``minitorch.cuda.nccl``: whether NCCL (through CuPy) can run collectives, and its version. Without it (no
GPU, or CuPy without NCCL), ``is_available`` warns and is False and ``version()`` raises AttributeError, as in a
PyTorch built without NCCL. (Collectives themselves belong to ``torch.distributed``.)"""

from __future__ import annotations

import warnings

from .._backends import cuda_device


def is_available(tensors) -> bool:
    """Whether NCCL can work on ``tensors``: NCCL present and every tensor a dense CUDA tensor."""
    if cuda_device.device_count() == 0 or cuda_device.nccl_version() is None:
        warnings.warn("PyTorch is not compiled with NCCL support", UserWarning, stacklevel=2)
        return False
    return all(t.device.type == "cuda" and not t.is_sparse for t in tensors)


def version() -> tuple[int, int, int]:
    found = cuda_device.nccl_version() if cuda_device.device_count() else None
    if found is None:
        raise AttributeError("version: this minitorch has no NCCL (CuPy with NCCL and a GPU are needed)")
    return found
