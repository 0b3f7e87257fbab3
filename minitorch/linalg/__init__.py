"""``minitorch.linalg``: PyTorch's torch.linalg on minitorch tensors, every function differentiable.

solve, inv, pinv, matrix_power, det, slogdet (inverses.py); cholesky, qr, eigh, eigvalsh, eig,
eigvals, svd, svdvals (decompositions.py); vector_norm, matrix_norm, norm, matrix_rank (norms.py);
matmul, multi_dot, vecdot, cross (products.py). Failures of the underlying LAPACK routine raise
``LinAlgError`` (a RuntimeError) with PyTorch's messages. minitorch has no complex dtypes, so eig and
eigvals only accept matrices whose eigenvalues are all real.
"""

from ._support import LinAlgError
from .decompositions import cholesky, eig, eigh, eigvals, eigvalsh, qr, svd, svdvals
from .inverses import det, inv, matrix_power, pinv, slogdet, solve
from .norms import matrix_norm, matrix_rank, norm, vector_norm
from .products import cross, matmul, multi_dot, vecdot

__all__ = [
    "LinAlgError", "cholesky", "cross", "det", "eig", "eigh", "eigvals", "eigvalsh", "inv", "matmul",
    "matrix_norm", "matrix_power", "matrix_rank", "multi_dot", "norm", "pinv", "qr", "slogdet", "solve", "svd",
    "svdvals", "vecdot", "vector_norm",
]
