"""ReduceOp: how a collective combines the ranks' tensors (PyTorch's names; MPI's operations underneath), and
``reduce_op``, its deprecated spelling that old programs (PyTorch's distributed tutorial) still use."""

from __future__ import annotations

import enum
import warnings

__all__ = ["ReduceOp", "reduce_op"]


class ReduceOp(enum.Enum):
    """``dist.ReduceOp.SUM`` etc. AVG is a SUM followed by a division by the group size (MPI has no AVG)."""

    SUM = "sum"
    AVG = "avg"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"
    BAND = "band"
    BOR = "bor"
    BXOR = "bxor"

    def __repr__(self) -> str:
        return f"<RedOpType.{self.name}>"


class _reduce_op:
    """``torch.distributed.reduce_op``: SUM, PRODUCT, MIN and MAX as ReduceOp's, with PyTorch's FutureWarning."""

    def __init__(self) -> None:
        for name, member in ReduceOp.__members__.items():
            setattr(self, name, member)
        self.__members__ = ReduceOp.__members__

    def __getattribute__(self, key):
        warnings.warn("`torch.distributed.reduce_op` is deprecated, please use `torch.distributed.ReduceOp` "
                      "instead", FutureWarning, stacklevel=2)
        return object.__getattribute__(self, key)


reduce_op = _reduce_op()
