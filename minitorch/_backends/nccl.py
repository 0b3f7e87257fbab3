"""NCCL collectives on CuPy arrays (``cupy.cuda.nccl``): the engine under minitorch.distributed's "nccl" backend.

One communicator per process and GPU, as in PyTorch's ProcessGroupNCCL. Its unique id is made on rank 0 and
handed to the others by the group's MPI communicator (the bootstrap), then every collective is queued on the
current CuPy stream; ``synchronize`` waits for them. NCCL has no AVG before 2.10 and PyTorch's AVG is a SUM
divided by the world size anyway, which the caller does.
"""

from __future__ import annotations

from .cuda_device import _import_cupy

_DTYPES = {"float16": "NCCL_FLOAT16", "bfloat16": "NCCL_BFLOAT16", "float32": "NCCL_FLOAT32",
           "float64": "NCCL_FLOAT64", "int8": "NCCL_INT8", "uint8": "NCCL_UINT8", "int32": "NCCL_INT32",
           "int64": "NCCL_INT64", "bool": "NCCL_UINT8"}
_OPS = {"SUM": "NCCL_SUM", "AVG": "NCCL_SUM", "PRODUCT": "NCCL_PROD", "MIN": "NCCL_MIN", "MAX": "NCCL_MAX"}


def _nccl():
    cupy = _import_cupy()
    try:
        from cupy.cuda import nccl  # optional dependency: CuPy built with NCCL
    except ImportError as error:
        raise RuntimeError("the nccl backend needs CuPy with NCCL support (pip install 'minitorch[gpu]')") from error
    if not nccl.available:
        raise RuntimeError("the nccl backend needs CuPy with NCCL support: cupy.cuda.nccl.available is False")
    return cupy, nccl


def is_available() -> bool:
    """Whether CuPy with NCCL and a GPU are present (without raising)."""
    try:
        cupy, _ = _nccl()
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # noqa: BLE001 - no CuPy, no NCCL or no driver: not available
        return False


def unique_id() -> tuple:
    return _nccl()[1].get_unique_id()


class Communicator:
    """An NCCL communicator of ``size`` ranks for this process's current GPU; methods take contiguous CuPy
    arrays and queue the collective on the current stream."""

    def __init__(self, size: int, uid: tuple, rank: int) -> None:
        self._cupy, self._nccl = _nccl()
        self._comm = self._nccl.NcclCommunicator(size, uid, rank)

    def _dtype(self, array, what: str) -> int:
        name = _DTYPES.get(array.dtype.name)
        if name is None or not hasattr(self._nccl, name):
            raise RuntimeError(f"{what}: NCCL has no {array.dtype.name} type")
        return getattr(self._nccl, name)

    def _op(self, op_name: str, what: str) -> int:
        if op_name not in _OPS:
            raise RuntimeError(f"{what}: NCCL has no {op_name} reduction")
        return getattr(self._nccl, _OPS[op_name])

    def _stream(self) -> int:
        return self._cupy.cuda.get_current_stream().ptr

    def all_reduce(self, array, op_name: str) -> None:
        self._comm.allReduce(array.data.ptr, array.data.ptr, array.size, self._dtype(array, "all_reduce"),
                             self._op(op_name, "all_reduce"), self._stream())

    def broadcast(self, array, root: int) -> None:
        self._comm.bcast(array.data.ptr, array.size, self._dtype(array, "broadcast"), root, self._stream())

    def all_gather(self, send, receive) -> None:
        self._comm.allGather(send.data.ptr, receive.data.ptr, send.size, self._dtype(send, "all_gather"),
                             self._stream())

    def reduce_scatter(self, send, receive, op_name: str) -> None:
        self._comm.reduceScatter(send.data.ptr, receive.data.ptr, receive.size,
                                 self._dtype(send, "reduce_scatter"), self._op(op_name, "reduce_scatter"),
                                 self._stream())

    def reduce(self, array, op_name: str, root: int) -> None:
        self._comm.reduce(array.data.ptr, array.data.ptr, array.size, self._dtype(array, "reduce"),
                          self._op(op_name, "reduce"), root, self._stream())

    def synchronize(self) -> None:
        self._cupy.cuda.get_current_stream().synchronize()

    def destroy(self) -> None:
        self._comm.destroy()
