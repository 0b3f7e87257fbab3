"""Products under linalg's names: matmul, multi_dot (cheapest parenthesization), vecdot, cross."""

from __future__ import annotations

from ..ops.blas import linalg_cross, matmul
from ..tensor import Tensor


def multi_dot(tensors) -> Tensor:
    """``tensors[0] @ tensors[1] @ ...`` in the order that needs the fewest multiplications (the classic
    dynamic program); the first and last may be 1-D (a row and a column vector)."""
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    first_vector, last_vector = tensors[0].dim() == 1, tensors[-1].dim() == 1
    if first_vector:
        tensors[0] = tensors[0].unsqueeze(0)
    if last_vector:
        tensors[-1] = tensors[-1].unsqueeze(-1)
    for i, t in enumerate(tensors):
        if t.dim() != 2:
            where = "first" if i == 0 else "last" if i == len(tensors) - 1 else None
            if where:
                raise RuntimeError(f"multi_dot(): the {where} tensor must be 1D or 2D but got {t.dim()}D")
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.dim()}D")
    for i in range(1, len(tensors)):
        if tensors[i - 1]._array.shape[1] != tensors[i]._array.shape[0]:
            a, b = tensors[i - 1]._array.shape, tensors[i]._array.shape
            raise RuntimeError(
                f"multi_dot(): tensors {i - 1} and {i} with shapes ({a[0]}, {a[1]}) and ({b[0]}, {b[1]}) "
                f"cannot be multiplied"
            )
    result = _chain(tensors, _order(tensors), 0, len(tensors) - 1)
    if first_vector:
        result = result.squeeze(0)
    if last_vector:
        result = result.squeeze(-1)
    return result


def _order(tensors) -> dict:
    """``split[(i, j)]``: where to cut the product of tensors i..j (matrix-chain dynamic program)."""
    dims = [tensors[0]._array.shape[0]] + [t._array.shape[1] for t in tensors]
    n = len(tensors)
    cost, split = {(i, i): 0 for i in range(n)}, {}
    for length in range(2, n + 1):
        for i in range(n - length + 1):
            j = i + length - 1
            cost[(i, j)], split[(i, j)] = min(
                (cost[(i, k)] + cost[(k + 1, j)] + dims[i] * dims[k + 1] * dims[j + 1], k) for k in range(i, j)
            )
    return split


def _chain(tensors, split, i, j):
    if i == j:
        return tensors[i]
    k = split[(i, j)]
    return matmul(_chain(tensors, split, i, k), _chain(tensors, split, k + 1, j))


def vecdot(x: Tensor, y: Tensor, *, dim: int = -1) -> Tensor:
    """Dot products along ``dim`` of broadcast batches of vectors."""
    if x._array.shape[dim] != y._array.shape[dim]:
        raise RuntimeError(
            f"linalg.vecdot: Expected x and y to have the same size along dim {dim}, but got "
            f"{x._array.shape[dim]} and {y._array.shape[dim]}"
        )
    return (x * y).sum(dim)


cross = linalg_cross

__all__ = ["matmul", "multi_dot", "vecdot", "cross"]
