"""What ``minitorch.cuda`` asks of the GPU: devices, memory statistics, events and streams, through CuPy.

This is the only place the platform modules touch CuPy. CuPy is imported on the first call, so
minitorch imports without it; ``device_count()`` is 0 when CuPy is missing or finds no GPU, and every
caller checks that first (so the CPU-only behaviour needs no CuPy at all).
"""

from __future__ import annotations

import numpy as np

_CUDA_MEMORY_TYPE_HOST = 1  # cudaMemoryTypeHost: page-locked host memory (cudaPointerAttributes.type)
_cupy = None  # the module, once imported
_backend_started = False  # whether the CuPy backend has been created (CUDA initialized for tensors)
_peak_bytes: dict[int, int] = {}  # device index -> most bytes CuPy's pool held in use since the last reset


def _import_cupy():
    global _cupy
    if _cupy is None:
        import cupy

        _cupy = cupy
    return _cupy


def device_count() -> int:
    """GPUs CuPy sees; 0 without CuPy, without a driver, or without a GPU."""
    try:
        return _import_cupy().cuda.runtime.getDeviceCount()
    except Exception:  # ImportError, CUDARuntimeError (no driver / no device): a machine without a GPU
        return 0


def current_device() -> int:
    return _import_cupy().cuda.runtime.getDevice()


def set_device(index: int) -> None:
    _import_cupy().cuda.runtime.setDevice(index)


def properties(index: int) -> dict:
    """``cudaGetDeviceProperties`` as CuPy returns it (name as bytes, major, minor, totalGlobalMem, ...)."""
    return _import_cupy().cuda.runtime.getDeviceProperties(index)


def synchronize(index: int) -> None:
    cupy = _import_cupy()
    with cupy.cuda.Device(index):
        cupy.cuda.runtime.deviceSynchronize()


def mem_get_info(index: int) -> tuple[int, int]:
    cupy = _import_cupy()
    with cupy.cuda.Device(index):
        return cupy.cuda.runtime.memGetInfo()


# memory statistics: CuPy's default memory pool is the caching allocator PyTorch's statistics describe ----------


def _pool_bytes(index: int) -> tuple[int, int]:
    """(bytes in use, bytes held) of CuPy's default pool on device ``index``."""
    cupy = _import_cupy()
    pool = cupy.get_default_memory_pool()
    with cupy.cuda.Device(index):
        return pool.used_bytes(), pool.total_bytes()


def track_peak(pool) -> None:
    """Route allocations through ``pool`` while remembering the peak of its used bytes per device
    (CuPy's pool has no peak counter; a peak can only follow an allocation, so this sees every one)."""
    global _backend_started
    cupy = _import_cupy()
    _backend_started = True

    def malloc(size):
        memory = pool.malloc(size)
        index = memory.device_id
        used = pool.used_bytes()
        if used > _peak_bytes.get(index, 0):
            _peak_bytes[index] = used
        return memory

    cupy.cuda.set_allocator(malloc)


def backend_started() -> bool:
    return _backend_started


def memory_allocated(index: int) -> int:
    used = _pool_bytes(index)[0]
    if used > _peak_bytes.get(index, 0):  # every observation counts toward the peak, as every allocation does
        _peak_bytes[index] = used
    return used


def memory_reserved(index: int) -> int:
    return _pool_bytes(index)[1]


def max_memory_allocated(index: int) -> int:
    memory_allocated(index)
    return _peak_bytes.get(index, 0)


def reset_peak(index: int) -> None:
    _peak_bytes[index] = memory_allocated(index)


def empty_cache() -> None:
    """Give the pool's unused blocks back to the driver (PyTorch's ``empty_cache``)."""
    cupy = _import_cupy()
    cupy.get_default_memory_pool().free_all_blocks()
    cupy.get_default_pinned_memory_pool().free_all_blocks()


# events and streams ---------------------------------------------------------------------------------------------


def new_event(enable_timing: bool, blocking: bool, interprocess: bool):
    return _import_cupy().cuda.Event(block=blocking, disable_timing=not enable_timing, interprocess=interprocess)


def elapsed_ms(start, end) -> float:
    return _import_cupy().cuda.get_elapsed_time(start, end)


def new_stream(index: int, priority: int):
    cupy = _import_cupy()
    with cupy.cuda.Device(index):
        if priority == 0:  # CuPy before 13 takes no priority argument
            return cupy.cuda.Stream()
        return cupy.cuda.Stream(priority=priority)


def current_stream(index: int):
    cupy = _import_cupy()
    with cupy.cuda.Device(index):
        return cupy.cuda.get_current_stream()


def null_stream():
    return _import_cupy().cuda.Stream.null


# pinned (page-locked) host memory -------------------------------------------------------------------------------


def pinned_copy(array):
    """A copy of the numpy ``array`` in page-locked host memory (a numpy array over CuPy's pinned pool)."""
    cupy = _import_cupy()
    memory = cupy.cuda.alloc_pinned_memory(array.nbytes)
    pinned = np.frombuffer(memory, array.dtype, array.size).reshape(array.shape)
    pinned[...] = array
    return pinned


def is_pinned(array) -> bool:
    """Whether the host ``array`` lies in page-locked memory (CUDA's own answer, cudaPointerGetAttributes)."""
    runtime = _import_cupy().cuda.runtime
    return runtime.pointerGetAttributes(array.ctypes.data).type == _CUDA_MEMORY_TYPE_HOST


def nccl_version() -> tuple[int, int, int] | None:
    """NCCL's version through CuPy's binding, as PyTorch reports it ((2, 18, 5)); None without it."""
    try:
        from cupy.cuda import nccl
    except Exception:  # CuPy without NCCL (or no CuPy)
        return None
    code = nccl.get_version()
    return code // 10000, code % 10000 // 100, code % 100
