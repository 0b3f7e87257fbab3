"""The collectives of torch.distributed on MPI, for CPU tensors.

Every collective starts MPI's non-blocking version (``Iallreduce``, ``Ibcast``, ...) on the tensor's own memory
(or a contiguous copy that is written back) and returns a ``Work``; without ``async_op`` it waits at once.
Waiting polls the request, so a rank that died or never called the collective makes the others fail after
the group's ``timeout`` instead of hanging. Before each collective the ranks compare the shape and dtype of
their tensors (one small all-reduce), so a mismatch is a clear error rather than garbage or a hang.
"""

from __future__ import annotations

import array
import time
import zlib

from ..autograd import grad_mode
from ..creation import empty
from ..ops.shape import stack
from . import nccl_collectives as nccl
from .process_group import ProcessGroup, _group
from .reduce_ops import ReduceOp

__all__ = [
    "Work", "all_gather", "all_gather_into_tensor", "all_gather_object", "all_reduce", "barrier", "broadcast",
    "broadcast_object_list", "gather", "gather_object", "irecv", "isend", "recv", "reduce", "reduce_scatter",
    "reduce_scatter_tensor", "scatter", "scatter_object_list", "send",
]


class Work:
    """The handle of a collective started with ``async_op=True``: ``wait()`` finishes it (and writes the result
    into the tensors), ``is_completed()`` asks without blocking."""

    def __init__(self, pg: ProcessGroup, name: str, requests: list, finish=None) -> None:
        self._pg, self._name, self._requests, self._finish = pg, name, requests, finish
        self._statuses = [pg.MPI.Status() for _ in requests]
        self._done = False

    def is_completed(self) -> bool:
        if not self._done and self._pg.MPI.Request.Testall(self._requests, self._statuses):
            self._complete()
        return self._done

    def _complete(self) -> None:
        self._done = True
        if self._finish is not None:
            self._finish(self._statuses)

    def wait(self, timeout=None) -> bool:
        """Block until done; RuntimeError after ``timeout`` (a timedelta; the group's timeout by default)."""
        if self._done:
            return True
        limit = (timeout or self._pg.timeout).total_seconds()
        deadline = time.monotonic() + limit
        spins = 0
        while not self._pg.MPI.Request.Testall(self._requests, self._statuses):
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self._name} timed out after {limit:g} s: another rank may have died, "
                                   "or not called it (MPI cannot cancel a collective: the group is unusable now)")
            spins += 1
            if spins > 1000:
                time.sleep(1e-4)
        self._complete()
        return True

    def result(self) -> list:
        return []

    def exception(self):
        return None


def _run(pg: ProcessGroup, name: str, requests: list, finish, async_op: bool):
    work = Work(pg, name, requests, finish)
    if async_op:
        return work
    work.wait()
    return None


def _cpu(tensor, name: str) -> None:
    if tensor.device.type != "cpu":
        raise RuntimeError(f"{name}: the MPI backend handles CPU tensors only, got a tensor on {tensor.device} "
                           "(init_process_group('nccl') for CUDA tensors; minitorch's nccl backend has all_reduce, "
                           "broadcast, all_gather(_into_tensor), reduce_scatter(_tensor) and reduce)")


def _check_same(pg: ProcessGroup, name: str, tensor) -> None:
    """All ranks must bring tensors of one shape and dtype: compare a hash of them (MAX of h and of -h)."""
    signature = f"{tuple(tensor.shape)}|{tensor.dtype}"
    h = zlib.crc32(signature.encode())
    buf = array.array("q", [h, -h])
    Work(pg, name, [pg.comm.Iallreduce(pg.MPI.IN_PLACE, buf, op=pg.MPI.MAX)]).wait()
    if buf[0] != -buf[1]:
        raise RuntimeError(f"{name}: the ranks' tensors differ in shape or dtype (this rank has shape "
                           f"{list(tensor.shape)} and dtype {tensor.dtype})")


def _source(tensor):
    """A C-contiguous array with the tensor's data (the tensor's own memory when it already is contiguous)."""
    return tensor.detach().contiguous().numpy()


def _target(tensor):
    """A C-contiguous array MPI may write into, and the function that puts its content into ``tensor``."""
    detached = tensor.detach()
    if detached.is_contiguous():
        return detached.numpy(), lambda: None
    copy = detached.contiguous()

    def write_back():
        with grad_mode.no_grad():
            detached.copy_(copy)
    return copy.numpy(), write_back


def _op(pg: ProcessGroup, op, name: str):
    if not isinstance(op, ReduceOp):
        raise TypeError(f"{name}: op must be a ReduceOp, got {op!r}")
    MPI = pg.MPI
    return {ReduceOp.SUM: MPI.SUM, ReduceOp.AVG: MPI.SUM, ReduceOp.PRODUCT: MPI.PROD, ReduceOp.MIN: MPI.MIN,
            ReduceOp.MAX: MPI.MAX, ReduceOp.BAND: MPI.BAND, ReduceOp.BOR: MPI.BOR, ReduceOp.BXOR: MPI.BXOR}[op]


def _average(tensor, op, size: int, name: str) -> None:
    if op is ReduceOp.AVG:
        if not (tensor.is_floating_point() or tensor.is_complex()):
            raise TypeError(f"{name}: ReduceOp.AVG needs a floating point tensor, got {tensor.dtype}")
        with grad_mode.no_grad():
            tensor.detach().div_(size)


def _root(pg: ProcessGroup, rank, group_rank, name: str, what: str) -> int:
    if group_rank is not None:
        return group_rank
    if rank is None:
        raise ValueError(f"{name}: either group_{what} or {what} must be specified")
    return pg.group_rank(rank, name)


def _avg_check(tensor, op, name: str) -> None:
    if op is ReduceOp.AVG and not (tensor.is_floating_point() or tensor.is_complex()):
        raise TypeError(f"{name}: ReduceOp.AVG needs a floating point tensor, got {tensor.dtype}")


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """Combine ``tensor`` over the ranks with ``op``; every rank gets the result, in place."""
    pg = _group(group)
    if pg is None:
        return None
    mpi_op = _op(pg, op, "all_reduce")
    _avg_check(tensor, op, "all_reduce")
    _check_same(pg, "all_reduce", tensor)
    if pg.nccl is not None:
        return nccl.all_reduce(pg, tensor, op, async_op)
    _cpu(tensor, "all_reduce")
    buf, write_back = _target(tensor)
    request = pg.comm.Iallreduce(pg.MPI.IN_PLACE, buf, op=mpi_op)

    def finish(_):
        write_back()
        _average(tensor, op, pg.size(), "all_reduce")
    return _run(pg, "all_reduce", [request], finish, async_op)


def broadcast(tensor, src: int | None = None, group=None, async_op: bool = False, group_src: int | None = None):
    """Copy rank ``src``'s tensor into every rank's ``tensor``."""
    pg = _group(group)
    if pg is None:
        return None
    root = _root(pg, src, group_src, "broadcast", "src")
    _check_same(pg, "broadcast", tensor)
    if pg.nccl is not None:
        return nccl.broadcast(pg, tensor, root, async_op)
    _cpu(tensor, "broadcast")
    buf, write_back = _target(tensor)
    request = pg.comm.Ibcast(buf, root=root)
    return _run(pg, "broadcast", [request], lambda _: write_back(), async_op)


def all_gather(tensor_list: list, tensor, group=None, async_op: bool = False):
    """Every rank's ``tensor`` into ``tensor_list[rank]``, on every rank."""
    pg = _group(group)
    if pg is None:
        return None
    if len(tensor_list) != pg.size():
        raise ValueError(f"all_gather: tensor_list has {len(tensor_list)} tensors, expected the world size "
                         f"{pg.size()}")
    _check_same(pg, "all_gather", tensor)
    if pg.nccl is not None:
        return nccl.all_gather(pg, tensor_list, tensor, async_op)
    _cpu(tensor, "all_gather")
    received = empty((pg.size(),) + tuple(tensor.shape), dtype=tensor.dtype)
    request = pg.comm.Iallgather(_source(tensor), received.numpy())

    def finish(_):
        with grad_mode.no_grad():
            for i, out in enumerate(tensor_list):
                out.detach().copy_(received[i])
    return _run(pg, "all_gather", [request], finish, async_op)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op: bool = False):
    """Every rank's ``input_tensor`` concatenated (or stacked) into ``output_tensor``."""
    pg = _group(group)
    if pg is None:
        return None
    if output_tensor.numel() != input_tensor.numel() * pg.size() or output_tensor.dtype != input_tensor.dtype:
        raise ValueError(f"all_gather_into_tensor: output tensor must have world size ({pg.size()}) times the "
                         "input's elements and its dtype")
    _check_same(pg, "all_gather_into_tensor", input_tensor)
    if pg.nccl is not None:
        return nccl.all_gather_into_tensor(pg, output_tensor, input_tensor, async_op)
    _cpu(input_tensor, "all_gather_into_tensor")
    buf, write_back = _target(output_tensor)
    request = pg.comm.Iallgather(_source(input_tensor), buf)
    return _run(pg, "all_gather_into_tensor", [request], lambda _: write_back(), async_op)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """Reduce ``input`` over the ranks and give rank ``r`` the ``r``-th of its world-size chunks (along dim 0)."""
    pg = _group(group)
    if pg is None:
        return None
    mpi_op = _op(pg, op, "reduce_scatter_tensor")
    _avg_check(output, op, "reduce_scatter_tensor")
    if input.numel() != output.numel() * pg.size() or output.dtype != input.dtype:
        raise ValueError(f"reduce_scatter_tensor: input tensor must have world size ({pg.size()}) times the "
                         "output's elements and its dtype")
    _check_same(pg, "reduce_scatter_tensor", input)
    if pg.nccl is not None:
        return nccl.reduce_scatter_tensor(pg, output, input, op, async_op)
    _cpu(input, "reduce_scatter_tensor")
    buf, write_back = _target(output)
    request = pg.comm.Ireduce_scatter_block(_source(input), buf, op=mpi_op)

    def finish(_):
        write_back()
        _average(output, op, pg.size(), "reduce_scatter_tensor")
    return _run(pg, "reduce_scatter_tensor", [request], finish, async_op)


def reduce_scatter(output, input_list: list, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """Reduce ``input_list[r]`` over the ranks into rank ``r``'s ``output``."""
    pg = _group(group)
    if pg is None:
        return None
    if len(input_list) != pg.size():
        raise ValueError(f"reduce_scatter: input_list has {len(input_list)} tensors, expected the world size "
                         f"{pg.size()}")
    for t in input_list:
        if tuple(t.shape) != tuple(output.shape) or t.dtype != output.dtype:
            raise ValueError("reduce_scatter: every tensor of input_list must have the output's shape and dtype")
    return reduce_scatter_tensor(output, stack([t.detach() for t in input_list]), op, group, async_op)


def reduce(tensor, dst: int | None = None, op=ReduceOp.SUM, group=None, async_op: bool = False,
           group_dst: int | None = None):
    """Combine ``tensor`` over the ranks into rank ``dst``'s ``tensor`` (the others' are left as they are)."""
    pg = _group(group)
    if pg is None:
        return None
    root = _root(pg, dst, group_dst, "reduce", "dst")
    mpi_op = _op(pg, op, "reduce")
    _avg_check(tensor, op, "reduce")
    _check_same(pg, "reduce", tensor)
    if pg.nccl is not None:
        return nccl.reduce(pg, tensor, root, op, async_op)
    _cpu(tensor, "reduce")
    if pg.rank() == root:
        buf, write_back = _target(tensor)
        request = pg.comm.Ireduce(pg.MPI.IN_PLACE, buf, op=mpi_op, root=root)

        def finish(_):
            write_back()
            _average(tensor, op, pg.size(), "reduce")
    else:
        request = pg.comm.Ireduce(_source(tensor), None, op=mpi_op, root=root)
        finish = None
    return _run(pg, "reduce", [request], finish, async_op)


def gather(tensor, gather_list: list | None = None, dst: int | None = None, group=None, async_op: bool = False,
           group_dst: int | None = None):
    """Every rank's ``tensor`` into ``gather_list`` on rank ``dst``."""
    pg = _group(group)
    if pg is None:
        return None
    _cpu(tensor, "gather")
    root = _root(pg, 0 if dst is None and group_dst is None else dst, group_dst, "gather", "dst")
    mine = pg.rank() == root
    if mine and (gather_list is None or len(gather_list) != pg.size()):
        raise ValueError(f"gather: gather_list on the destination rank must hold {pg.size()} tensors")
    if not mine and gather_list:
        raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination ranks.")
    _check_same(pg, "gather", tensor)
    received = empty((pg.size(),) + tuple(tensor.shape), dtype=tensor.dtype) if mine else None
    request = pg.comm.Igather(_source(tensor), received.numpy() if mine else None, root=root)

    def finish(_):
        if mine:
            with grad_mode.no_grad():
                for i, out in enumerate(gather_list):
                    out.detach().copy_(received[i])
    return _run(pg, "gather", [request], finish, async_op)


def scatter(tensor, scatter_list: list | None = None, src: int | None = None, group=None, async_op: bool = False,
            group_src: int | None = None):
    """Rank ``src``'s ``scatter_list[r]`` into rank ``r``'s ``tensor``."""
    pg = _group(group)
    if pg is None:
        return None
    _cpu(tensor, "scatter")
    root = _root(pg, 0 if src is None and group_src is None else src, group_src, "scatter", "src")
    mine = pg.rank() == root
    if mine and (scatter_list is None or len(scatter_list) != pg.size()):
        raise ValueError(f"scatter: scatter_list on the source rank must hold {pg.size()} tensors")
    if not mine and scatter_list:
        raise ValueError("Argument ``scatter_list`` must NOT be specified on non-source ranks.")
    _check_same(pg, "scatter", tensor)
    buf, write_back = _target(tensor)
    send = _source(stack([t.detach() for t in scatter_list])) if mine else None
    request = pg.comm.Iscatter(send, buf, root=root)
    return _run(pg, "scatter", [request], lambda _: write_back(), async_op)


def barrier(group=None, async_op: bool = False, device_ids=None):
    """Wait until every rank of the group has reached the barrier."""
    pg = _group(group)
    if pg is None:
        return None
    return _run(pg, "barrier", [pg.comm.Ibarrier()], None, async_op)


def _peer(pg: ProcessGroup, rank, group_rank, name: str, what: str) -> int:
    peer = _root(pg, rank, group_rank, name, what)
    if peer == pg.rank():
        raise ValueError(f"Invalid {'destination' if what == 'dst' else 'source'} rank: should not use the "
                         "current rank.")
    return peer


def isend(tensor, dst: int | None = None, group=None, tag: int = 0, group_dst: int | None = None):
    """Start sending ``tensor`` to rank ``dst``; returns a Work."""
    pg = _group(group)
    if pg is None:
        return None
    _cpu(tensor, "isend")
    peer = _peer(pg, dst, group_dst, "isend", "dst")
    data = _source(tensor)
    return Work(pg, "send", [pg.comm.Isend(data, dest=peer, tag=tag)])


def irecv(tensor, src: int | None = None, group=None, tag: int = 0, group_src: int | None = None):
    """Start receiving into ``tensor`` from rank ``src`` (any rank if None); returns a Work."""
    pg = _group(group)
    if pg is None:
        return None
    _cpu(tensor, "irecv")
    peer = pg.MPI.ANY_SOURCE if src is None and group_src is None else _peer(pg, src, group_src, "irecv", "src")
    buf, write_back = _target(tensor)
    work = Work(pg, "recv", [pg.comm.Irecv(buf, source=peer, tag=tag)], lambda _: write_back())
    return work


def send(tensor, dst: int | None = None, group=None, tag: int = 0, group_dst: int | None = None) -> None:
    work = isend(tensor, dst, group, tag, group_dst)
    if work is not None:
        work.wait()


def recv(tensor, src: int | None = None, group=None, tag: int = 0, group_src: int | None = None) -> int:
    """Receive into ``tensor``; returns the global rank of the sender (-1 when not a member of ``group``)."""
    work = irecv(tensor, src, group, tag, group_src)
    if work is None:
        return -1
    work.wait()
    return work._pg.ranks[work._statuses[0].Get_source()]


def broadcast_object_list(object_list: list, src: int | None = None, group=None, device=None,
                          group_src: int | None = None) -> None:
    """Rank ``src``'s picklable objects into every rank's ``object_list`` (in place)."""
    pg = _group(group)
    if pg is None:
        return
    root = _root(pg, 0 if src is None and group_src is None else src, group_src, "broadcast_object_list", "src")
    object_list[:] = pg.comm.bcast(list(object_list) if pg.rank() == root else None, root=root)


def all_gather_object(object_list: list, obj, group=None) -> None:
    """Every rank's ``obj`` into ``object_list[rank]``."""
    pg = _group(group)
    if pg is None:
        return
    if len(object_list) != pg.size():
        raise ValueError(f"all_gather_object: object_list must have {pg.size()} entries")
    object_list[:] = pg.comm.allgather(obj)


def gather_object(obj, object_gather_list: list | None = None, dst: int | None = None, group=None,
                  group_dst: int | None = None) -> None:
    pg = _group(group)
    if pg is None:
        return
    root = _root(pg, 0 if dst is None and group_dst is None else dst, group_dst, "gather_object", "dst")
    gathered = pg.comm.gather(obj, root=root)
    if pg.rank() == root:
        object_gather_list[:] = gathered


def scatter_object_list(scatter_object_output_list: list, scatter_object_input_list: list | None = None,
                        src: int | None = None, group=None, group_src: int | None = None) -> None:
    pg = _group(group)
    if pg is None:
        return
    root = _root(pg, 0 if src is None and group_src is None else src, group_src, "scatter_object_list", "src")
    mine = pg.rank() == root
    scatter_object_output_list[0] = pg.comm.scatter(list(scatter_object_input_list) if mine else None, root=root)


