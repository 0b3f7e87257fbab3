"""The old top-level names of linear algebra (``torch.det``, ``torch.inverse``, ``torch.svd``, ``torch.qr``, ...):
each is its ``torch.linalg`` function under PyTorch's older name and conventions (``svd`` returns V, not Vh).
"""

from __future__ import annotations

from .. import linalg
from ..ops.comparison import where
from ..tensor import Tensor, from_array
from . import _support, decompositions
from ._support import svd_result
from .products import multi_dot


def chain_matmul(*matrices: Tensor) -> Tensor:
    """``matrices[0] @ matrices[1] @ ...`` (deprecated in PyTorch for ``linalg.multi_dot``)."""
    if len(matrices) == 1 and isinstance(matrices[0], (tuple, list)):
        matrices = tuple(matrices[0])
    return multi_dot(matrices)


def det(input: Tensor) -> Tensor:
    """``torch.det``: ``linalg.det``."""
    return linalg.det(input)


def logdet(input: Tensor) -> Tensor:
    """log(det(A)): nan where the determinant is negative, -inf where it is zero (as in PyTorch)."""
    sign, logabsdet = linalg.slogdet(input)
    return where(sign < 0, float("nan"), logabsdet)


def slogdet(input: Tensor):
    """``torch.slogdet``: ``linalg.slogdet``."""
    return linalg.slogdet(input)


def inverse(input: Tensor) -> Tensor:
    """``torch.inverse``: ``linalg.inv``."""
    return linalg.inv(input)


def svd(input: Tensor, some: bool = True, compute_uv: bool = True):
    """The old ``torch.svd``: returns ``(U, S, V)`` with V (not Vh); ``some=False`` gives full U and V;
    ``compute_uv=False`` gives zero-filled U (m x m) and V (n x n), as PyTorch does."""
    if not compute_uv:
        S = linalg.svdvals(input)
        m, n = input._array.shape[-2:]
        batch = input._array.shape[:-2]
        backend = input._storage.backend
        zeros_u = from_array(backend.zeros(batch + (m, m), input.dtype), backend, input.device)
        zeros_v = from_array(backend.zeros(batch + (n, n), input.dtype), backend, input.device)
        return svd_result(zeros_u, S, zeros_v)
    U, S, Vh = linalg.svd(input, full_matrices=not some)
    return svd_result(U, S, Vh.mT)


def cholesky(input: Tensor, upper: bool = False) -> Tensor:
    """``torch.cholesky`` (deprecated in PyTorch): ``linalg.cholesky``, its errors named ``cholesky``."""
    _support.check_square_floating("cholesky", input)
    return decompositions.Cholesky.apply(input, upper, "cholesky")


def qr(input: Tensor, some: bool = True):
    """``torch.qr``: ``linalg.qr`` with mode 'reduced' (``some=True``) or 'complete'."""
    return linalg.qr(input, mode="reduced" if some else "complete")


def matrix_power(input: Tensor, n: int) -> Tensor:
    """``torch.matrix_power``: ``linalg.matrix_power``."""
    return linalg.matrix_power(input, n)


def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:
    """``torch.pinverse``: ``linalg.pinv`` with a relative cutoff."""
    return linalg.pinv(input, rtol=rcond)


__all__ = [
    "chain_matmul", "det", "logdet", "slogdet", "inverse", "svd", "cholesky", "qr", "matrix_power", "pinverse",
]
