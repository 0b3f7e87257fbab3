"""Differentiable collectives (``torch.distributed.nn.functional``).

The collectives of ``torch.distributed`` write into their arguments and record nothing. These return a new
tensor and have a backward, so a model can compute through them: the gradient of an all-reduced sum is the
all-reduced sum of the gradients (every rank's loss depends on every rank's input), and the gradient of an
all-gather is this rank's slice of the summed gradients. Every rank must run backward, as it runs forward.
"""

from __future__ import annotations

from ...autograd.function import Function
from .. import collectives
from ..process_group import GroupMember, _group
from ..reduce_ops import ReduceOp

__all__ = ["all_gather", "all_reduce", "broadcast"]


class _AllReduce(Function):
    @staticmethod
    def forward(ctx, op, group, tensor):
        ctx.op, ctx.group = op, group
        result = tensor.clone().contiguous()
        collectives.all_reduce(result, op=op, group=group)
        return result

    @staticmethod
    def backward(ctx, grad):
        if ctx.op not in (ReduceOp.SUM, ReduceOp.AVG):
            raise RuntimeError(f"all_reduce: the backward of a {ctx.op} reduction is not defined "
                               "(only SUM and AVG are differentiable)")
        return None, None, _AllReduce.apply(ctx.op, ctx.group, grad)


class _AllGather(Function):
    @staticmethod
    def forward(ctx, group, tensor):
        ctx.group = group
        pg = _group(group)
        pieces = [tensor.new_empty(tensor.shape) for _ in range(pg.size())]
        collectives.all_gather(pieces, tensor.contiguous(), group=group)
        ctx.rank = pg.rank()
        return tuple(pieces)

    @staticmethod
    def backward(ctx, *grads):
        total = [g.contiguous() for g in grads]
        summed = [_AllReduce.apply(ReduceOp.SUM, ctx.group, g) for g in total]
        return None, summed[ctx.rank]


class _Broadcast(Function):
    @staticmethod
    def forward(ctx, src, group, tensor):
        ctx.src, ctx.group = src, group
        result = tensor.clone().contiguous()
        collectives.broadcast(result, src, group=group)
        return result

    @staticmethod
    def backward(ctx, grad):
        summed = _AllReduce.apply(ReduceOp.SUM, ctx.group, grad)
        mine = _group(ctx.group).ranks[_group(ctx.group).rank()] == ctx.src
        return None, None, summed if mine else summed.new_zeros(summed.shape)


def all_reduce(tensor, op=ReduceOp.SUM, group=GroupMember.WORLD):
    """The reduction of ``tensor`` over the ranks, as a new tensor that autograd differentiates."""
    return _AllReduce.apply(op, group, tensor)


def all_gather(tensor, group=GroupMember.WORLD) -> tuple:
    """Every rank's ``tensor`` (a tuple, in rank order); its gradient is this rank's part of the summed ones."""
    return _AllGather.apply(group, tensor)


def broadcast(tensor, src: int, group=GroupMember.WORLD):
    """Rank ``src``'s ``tensor`` on every rank; its gradient, the sum over the ranks, goes to ``src``'s input."""
    return _Broadcast.apply(src, group, tensor)
