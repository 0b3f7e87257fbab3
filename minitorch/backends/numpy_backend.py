"""The CPU backend: numpy arrays over numpy buffers."""

from __future__ import annotations

import os

import numpy as np

from .._device import CPU
from .array_backend import ArrayBackend


class NumpyBackend(ArrayBackend):
    device_type = "cpu"

    def __init__(self):
        super().__init__(np)

    def normalize(self, dev):
        return CPU

    def memory_limit(self) -> int | None:
        """The machine's physical memory (with overcommit, a larger np.empty may "succeed" and the
        process be killed when it is touched)."""
        try:
            return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (AttributeError, ValueError, OSError):  # no sysconf (Windows)
            return None

    def as_strided(self, buffer, size, stride, offset):
        itemsize = buffer.itemsize
        if 0 in size:  # no elements: numpy wants the offset inside the buffer; the strides are kept (stride())
            offset = 0
        return np.ndarray(
            size,
            dtype=buffer.dtype,
            buffer=buffer,
            offset=offset * itemsize,
            strides=tuple(s * itemsize for s in stride),
        )

    @staticmethod
    def span_buffer(array, span):
        return np.lib.stride_tricks.as_strided(array, shape=(span,), strides=(array.itemsize,))

    def data_ptr(self, array) -> int:
        return array.__array_interface__["data"][0]

    def to_numpy(self, array):
        return array

    def from_numpy(self, array):
        return array

    def is_native_array(self, obj) -> bool:
        return isinstance(obj, np.ndarray)

    def rng(self, seed):
        return np.random.Generator(np.random.PCG64(seed))

    def from_dlpack(self, obj):
        return np.from_dlpack(obj)

    def set_num_threads(self, n: int) -> None:
        from threadpoolctl import threadpool_limits

        global _limiter
        _limiter = threadpool_limits(limits=n)

    def get_num_threads(self) -> int:
        from threadpoolctl import threadpool_info

        counts = [info["num_threads"] for info in threadpool_info() if info.get("user_api") == "blas"]
        return max(counts) if counts else 1


_limiter = None
