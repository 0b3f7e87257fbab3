"""F.pdist: the p-norm distance between every pair of rows of an (N, M) input, as the condensed vector of
the N (N - 1) / 2 upper-triangle pairs (i < j, row-major), the layout ``scipy.spatial.distance.pdist`` uses."""

from __future__ import annotations

from ... import _dtype
from ...creation import tensor
from ...tensor import Tensor


def pdist(input: Tensor, p: float = 2) -> Tensor:
    """``[||x_i - x_j||_p for i < j]`` over the rows of ``input`` (N, M); p may be 0 or inf."""
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if not input.is_floating_point():
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = input.shape[0]
    first = [i for i in range(n) for _ in range(i + 1, n)]
    second = [j for i in range(n) for j in range(i + 1, n)]
    rows = tensor(first, dtype=_dtype.int64, device=input.device)
    cols = tensor(second, dtype=_dtype.int64, device=input.device)
    diff = input.index_select(0, rows) - input.index_select(0, cols)
    if p == 0:  # the count of differing entries; sign() keeps it in the graph with PyTorch's zero gradient
        return diff.abs().sign().sum(1)
    return diff.norm(p=p, dim=1)


__all__ = ["pdist"]
