"""The CUDA backend: CuPy arrays over CuPy memory-pool allocations.

CuPy is imported lazily, on the first CUDA tensor, so minitorch imports without it. Whatever
CuPy build is installed (cupy-cuda12x from the ``gpu`` extra, or a CUDA 13 build) works.
"""

from __future__ import annotations

from .._device import device
from . import cuda_device
from .array_backend import ArrayBackend
from .array_stream import ArrayStream


class CupyBackend(ArrayBackend):
    device_type = "cuda"

    def __init__(self):
        try:
            import cupy
            import cupyx
        except ImportError as exc:  # pragma: no cover - depends on the machine
            raise RuntimeError(
                "CUDA tensors need CuPy: install minitorch with the 'gpu' extra "
                "(pip install 'minitorch[gpu]') on a machine with an NVIDIA GPU"
            ) from exc
        super().__init__(cupy)
        self.quiet_fp_state = None  # CuPy kernels never warn
        self._cupyx = cupyx
        # Allocations go through CuPy's default memory pool (cudaMalloc, cached and reused), through a thin
        # allocator that records the peak bytes in use (minitorch.cuda.max_memory_allocated).
        self.memory_pool = cupy.get_default_memory_pool()
        cuda_device.track_peak(self.memory_pool)

    def normalize(self, dev):
        index = dev.index if dev.index is not None else self.xp.cuda.runtime.getDevice()
        return device("cuda", index)

    def as_strided(self, buffer, size, stride, offset):
        itemsize = buffer.itemsize
        if 0 in size:  # no elements: keep the pointer inside the buffer
            offset, stride = 0, (0,) * len(size)
        return self.xp.ndarray(
            tuple(size),
            dtype=buffer.dtype,
            memptr=buffer.data + offset * itemsize,
            strides=tuple(s * itemsize for s in stride),
        )

    def span_buffer(self, array, span):
        return self.xp.ndarray((span,), dtype=array.dtype, memptr=array.data)

    def data_ptr(self, array) -> int:
        return array.data.ptr

    def to_numpy(self, array):
        return self.xp.asnumpy(array)

    def from_numpy(self, array):
        return self.xp.asarray(array)

    def is_native_array(self, obj) -> bool:
        return isinstance(obj, self.xp.ndarray)

    def index_add(self, target, index, values):
        self._cupyx.scatter_add(target, index, values)

    def rng(self, seed):
        xp = self.xp
        return ArrayStream(lambda s: xp.random.Generator(xp.random.XORWOW(s)), xp, seed)

    def from_dlpack(self, obj):
        return self.xp.from_dlpack(obj)

    def synchronize(self) -> None:
        self.xp.cuda.get_current_stream().synchronize()
