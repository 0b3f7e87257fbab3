"""ReduceOp: how a collective combines the ranks' tensors (PyTorch's names; MPI's operations underneath)."""

from __future__ import annotations

import enum

__all__ = ["ReduceOp"]


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
