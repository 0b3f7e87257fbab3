"""``minitorch.backends.openmp``: whether the CPU kernels run multi-threaded. numpy's BLAS does (its thread
pool is what ``minitorch.set_num_threads`` sizes), so this is True, as in PyTorch's builds."""

from __future__ import annotations


def is_available() -> bool:
    return True
