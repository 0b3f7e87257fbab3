"""Where dense ops meet sparse tensors: registrations with ``register_non_dense`` (so ``s * 2``, ``a + b``,
``s.t()``, ``s.sum()``, ``s @ d`` reach ops.py) and the Tensor methods of the sparse API."""

from __future__ import annotations

from ..ops.arithmetic import Add, Div, Mul, Neg, Rsub, Sub
from ..ops.blas import Matmul
from ..ops.conversion import Clone, ToCopy
from ..ops.op import register_non_dense
from ..ops.reduction import Sum
from ..ops.views import Transpose
from ..tensor import Tensor
from . import functional, ops
from .ops import SparseDenseMm, SparseMatmul, SparseTensor  # noqa: F401

register_non_dense(Mul, "sparse")(ops.mul)
register_non_dense(Neg, "sparse")(ops.neg)
register_non_dense(Div, "sparse")(ops.div)
register_non_dense(Transpose, "sparse")(ops.transpose)
register_non_dense(Clone, "sparse")(ops.clone)
register_non_dense(ToCopy, "sparse")(ops.to_copy)


@register_non_dense(Add, "sparse")
def _add(input, other, alpha=1):
    return ops.add(input, other, alpha)


@register_non_dense(Rsub, "sparse")
@register_non_dense(Sub, "sparse")
def _sub(input, other, alpha=1):
    return ops.add(input, other, -alpha)


@register_non_dense(Sum, "sparse")
def _sum(input, dims, keepdim=False, dtype=None, dim_given=False):
    if keepdim:
        raise RuntimeError(f"sum(): keepdim=True is not supported for sparse tensors (size {list(input.shape)})")
    return functional.sum(input, None if len(dims) == input.dim() else dims, dtype=dtype)


@register_non_dense(Matmul, "sparse")
def _matmul(a, b):
    """``mm`` / ``matmul`` / ``@`` with sparse operands: dense results, and (unlike ``sparse.mm``) a dense
    gradient for a sparse left operand, as PyTorch's MmBackward0."""
    if a.is_sparse and b.is_sparse:
        return functional.sparse_sparse_mm(a, b)
    if not a.is_sparse:  # dense @ sparse = (sparse.t() @ dense.t()).t()
        return _matmul(ops.transpose(b, 0, 1), a.t()).t()
    vector = b.dim() == 1
    b = b.unsqueeze(-1) if vector else b
    functional._check_mm("mm", a, b)
    out = SparseMatmul.apply(a, b)
    return out.squeeze(-1) if vector else out


def _sparse_dim_dense(self: Tensor) -> int:
    return 0


def _dense_dim_dense(self: Tensor) -> int:
    return self.dim()


def _not_sparse(name: str):
    def method(self, *args, **kwargs):
        raise RuntimeError(f"{name} expected sparse coordinate tensor layout but got {self.layout} (a dense tensor "
                           f"of size {list(self.shape)})")

    method.__name__ = name
    return method


# the methods only a sparse tensor has: a strided tensor raises (minitorch/_tensor_methods.py installs them)
SPARSE_ONLY = ("is_coalesced", "coalesce", "_indices", "_values", "indices", "values", "_nnz")

__all__: list[str] = []
