"""Norms: vector_norm, matrix_norm, norm (linalg's choice between the two) and matrix_rank.

The vector norms are one op, ``torch.norm``'s (ops/reduction.py, with PyTorch's norm_backward); the
matrix norms are built from it and from ``svdvals``, so their derivatives need no rule of their own.
"""

from __future__ import annotations

import math

from ..autograd import grad_mode
from ..ops import reduction
from ..ops.blas import SCALAR_TYPE
from ..ops.comparison import where
from ..ops.reduction import reduction_dims
from ..tensor import Tensor, wrap_dim
from ._support import check_floating, check_matrix
from .decompositions import eigvalsh, svdvals

_INF = math.inf


def vector_norm(x: Tensor, ord=2, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """``(sum |x|^ord)^(1/ord)`` over ``dim`` (all dims by default); ord may be inf, -inf, 0 or any number."""
    name = "linalg.vector_norm"
    if dtype is not None:
        x = x.to(dtype)
    if not (x._storage.dtype.is_floating_point or x._storage.dtype.is_complex):
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got "
                           f"{SCALAR_TYPE[x.dtype.name]}")
    if isinstance(ord, str) or isinstance(ord, bool):
        raise RuntimeError(f"{name}: Expected a number as ord, but got {ord!r}")
    ord = float(ord)
    dims = reduction_dims(dim, x.dim())
    # no identity only where a *reduced* dim is empty (PyTorch): inf norms of (0, 1) over dim 1 are fine
    if (ord < 0 or ord == _INF) and any(x._array.shape[d] == 0 for d in dims):
        raise RuntimeError(f"{name} cannot compute the {ord} norm on an empty tensor because the operation does "
                           f"not have an identity")
    return reduction.norm(x, ord, dims, keepdim)


def _matrix_dims(name: str, A: Tensor, dim) -> tuple:
    if isinstance(dim, int) or len(dim) != 2:
        raise RuntimeError(f"{name}: dim must be a 2-tuple. Got {dim}")
    d0, d1 = wrap_dim(dim[0], A.dim()), wrap_dim(dim[1], A.dim())
    if d0 == d1:
        raise RuntimeError(f"{name}: dims must be different. Got ({dim[0]}, {dim[1]})")
    return d0, d1


def matrix_norm(A: Tensor, ord="fro", dim=(-2, -1), keepdim: bool = False, *, dtype=None) -> Tensor:
    """Matrix norms over two dims: 'fro', 'nuc', inf/-inf (max/min row sum), 1/-1 (max/min column sum),
    2/-2 (largest/smallest singular value)."""
    name = "linalg.matrix_norm"
    check_matrix(name, A)
    if dtype is not None:
        A = A.to(dtype)
    check_floating(name, A)
    d0, d1 = _matrix_dims(name, A, dim)
    if ord == "fro":
        return vector_norm(A, 2, (d0, d1), keepdim)
    if ord in ("nuc", 2, -2):
        S = svdvals(A.movedim((d0, d1), (-2, -1)))
        result = S.sum(-1) if ord == "nuc" else S.select(-1, 0 if ord == 2 else -1)
        for d in sorted((d0, d1)) if keepdim else ():
            result = result.unsqueeze(d)
        return result
    if ord in (1, -1, _INF, -_INF):
        summed, extreme = (d0, d1) if ord in (1, -1) else (d1, d0)
        sums = A.abs().sum(summed, keepdim=True)
        result = vector_norm(sums, _INF if ord > 0 else -_INF, extreme, keepdim=True)
        return result if keepdim else result.squeeze((d0, d1))
    raise RuntimeError(f"{name}: Order {ord} not supported.")


def norm(A: Tensor, ord=None, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """A vector norm over one dim (or all, flattened, when ord and dim are None) or a matrix norm over
    two dims, as ``torch.linalg.norm`` chooses."""
    if dim is not None:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        if len(dims) == 1:
            return vector_norm(A, 2 if ord is None else ord, dims, keepdim, dtype=dtype)
        return matrix_norm(A, "fro" if ord is None else ord, dims, keepdim, dtype=dtype)
    if ord is None:
        return vector_norm(A, 2, None, keepdim, dtype=dtype)
    if A.dim() == 2 or isinstance(ord, str):
        return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
    if A.dim() != 1:
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
                           f"Got {A.dim()}D.")
    return vector_norm(A, ord, None, keepdim, dtype=dtype)


def matrix_rank(A: Tensor, *, atol=None, rtol=None, hermitian: bool = False) -> Tensor:
    """The number of singular values above ``max(atol, rtol * largest)`` (an int64 tensor, no gradient)."""
    name = "linalg.matrix_rank"
    check_matrix(name, A)
    check_floating(name, A)
    with grad_mode.no_grad():
        values = eigvalsh(A).abs() if hermitian else svdvals(A)
        if rtol is None:
            rtol = 0.0 if atol is not None and atol > 0 else (
                (2.220446049250313e-16 if A.dtype.itemsize == 8 else 1.1920928955078125e-07) * max(A.shape[-2:]))
        largest = vector_norm(values, _INF, -1, keepdim=True) if values._array.shape[-1] else values
        cutoff = largest * rtol
        if atol is not None:
            cutoff = where(cutoff > atol, cutoff, cutoff.new_full((), float(atol)))
        return (values > cutoff).sum(-1)


__all__ = ["vector_norm", "matrix_norm", "norm", "matrix_rank"]
