"""The collectives of a process group with ``backend="nccl"``: CUDA tensors through NCCL (``_backends/nccl.py``).

Each collective queues NCCL's kernel on the current CuPy stream, on the tensor's own memory (a non-contiguous
tensor goes through a contiguous copy that is written back). Later work on that stream runs after it, as in
PyTorch; ``Work.wait()`` (or a call without ``async_op``) also waits for the stream, so the host sees the
result. Shapes and dtypes are compared across ranks first, through the group's MPI communicator.

Not yet run on a GPU (docs/gpu.md): ``python -m minitorch.utils.verify_gpu`` exercises it on one.
"""

from __future__ import annotations

from ..autograd import grad_mode
from ..creation import empty
from .process_group import ProcessGroup
from .reduce_ops import ReduceOp


class NcclWork:
    """The handle of an NCCL collective: it is queued on the stream; ``wait`` lets the host see its result."""

    def __init__(self, pg: ProcessGroup, finish) -> None:
        self._pg, self._finish, self._done = pg, finish, False

    def wait(self, timeout=None) -> bool:
        if not self._done:
            self._pg.nccl.synchronize()
            if self._finish is not None:
                self._finish()
            self._done = True
        return True

    def is_completed(self) -> bool:
        return self._done

    def result(self) -> list:
        return []

    def exception(self):
        return None


def _run(pg: ProcessGroup, finish, async_op: bool):
    work = NcclWork(pg, finish)
    if async_op:
        return work
    work.wait()
    return None


def _cuda(tensor, name: str) -> None:
    if tensor.device.type != "cuda":
        raise RuntimeError(f"{name}: the nccl backend handles CUDA tensors only, got a tensor on {tensor.device} "
                           "(use backend='gloo' for CPU tensors)")


def _target(tensor):
    """A contiguous CuPy array NCCL may write into, and the function that puts its content into ``tensor``."""
    detached = tensor.detach()
    if detached.is_contiguous():
        return detached._array, None
    copy = detached.contiguous()

    def write_back():
        with grad_mode.no_grad():
            detached.copy_(copy)
    return copy._array, write_back


def _then(*steps):
    """One finishing function running the given ones (None skipped) in order."""
    steps = [s for s in steps if s is not None]
    return (lambda: [s() for s in steps]) if steps else None


def _average(tensor, op, size: int):
    if op is not ReduceOp.AVG:
        return None

    def divide():
        with grad_mode.no_grad():
            tensor.detach().div_(size)
    return divide


def all_reduce(pg: ProcessGroup, tensor, op, async_op: bool):
    _cuda(tensor, "all_reduce")
    array, write_back = _target(tensor)
    pg.nccl.all_reduce(array, op.name)
    return _run(pg, _then(write_back, _average(tensor, op, pg.size())), async_op)


def broadcast(pg: ProcessGroup, tensor, root: int, async_op: bool):
    _cuda(tensor, "broadcast")
    array, write_back = _target(tensor)
    pg.nccl.broadcast(array, root)
    return _run(pg, write_back, async_op)


def all_gather_into_tensor(pg: ProcessGroup, output, input, async_op: bool):
    _cuda(input, "all_gather_into_tensor")
    array, write_back = _target(output)
    pg.nccl.all_gather(input.detach().contiguous()._array, array)
    return _run(pg, write_back, async_op)


def all_gather(pg: ProcessGroup, tensor_list: list, tensor, async_op: bool):
    _cuda(tensor, "all_gather")
    received = empty((pg.size(),) + tuple(tensor.shape), dtype=tensor.dtype, device=tensor.device)
    pg.nccl.all_gather(tensor.detach().contiguous()._array, received._array)

    def finish():
        with grad_mode.no_grad():
            for i, out in enumerate(tensor_list):
                out.detach().copy_(received[i])
    return _run(pg, finish, async_op)


def reduce_scatter_tensor(pg: ProcessGroup, output, input, op, async_op: bool):
    _cuda(input, "reduce_scatter_tensor")
    array, write_back = _target(output)
    pg.nccl.reduce_scatter(input.detach().contiguous()._array, array, op.name)
    return _run(pg, _then(write_back, _average(output, op, pg.size())), async_op)


def reduce(pg: ProcessGroup, tensor, root: int, op, async_op: bool):
    _cuda(tensor, "reduce")
    array, write_back = _target(tensor)
    pg.nccl.reduce(array, op.name, root)
    mine = pg.rank() == root
    return _run(pg, _then(write_back, _average(tensor, op, pg.size()) if mine else None), async_op)


