"""The public sparse functions: ``sparse_coo_tensor`` and ``torch.sparse.mm / addmm / sum / softmax /
log_softmax``, all compositions of the primitives in ops.py (so their gradients need no extra code)."""

from __future__ import annotations

from .. import _dtype
from ..autograd import grad_mode
from ..creation import tensor as _tensor
from ..tensor import Tensor, from_array, wrap_dim
from . import kernels
from .ops import (
    Coalesce,
    SegmentGather,
    SegmentSum,
    SparseCooTensor,
    SparseDenseMm,
    coalesce,
    transpose,
    values_of,
    with_values,
)
from .tensor import SparseTensor


def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, pin_memory: bool = False,
                      requires_grad: bool = False, check_invariants: bool | None = None,
                      is_coalesced: bool | None = None) -> SparseTensor:
    """A COO tensor: ``indices`` (sparse_dim, nnz) integers, ``values`` (nnz, *dense_dims), ``size``
    (inferred from the indices when omitted). Duplicate indices are allowed and mean a sum.

    Differentiable in ``values`` (each entry, duplicates included, gets the gradient at its position).
    Indices are always checked against ``size`` (O(nnz)): a wrong index is an error, not a wrong result.
    """
    if not isinstance(values, Tensor):
        values = _tensor(values, dtype=dtype, device=device)
    elif dtype is not None or device is not None:
        values = values.to(device=device if device is not None else values.device, dtype=dtype or values.dtype)
    if not isinstance(indices, Tensor):
        indices = _tensor(indices, dtype=_dtype.int64, device=values.device)
    if indices.dtype.is_floating_point or indices.dtype is _dtype.bool:
        raise RuntimeError(f"indices must be an int64 tensor, but got {indices.dtype}")
    indices = indices.to(device=values.device, dtype=_dtype.int64)
    if indices.dim() != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(indices.shape)}")
    if values.dim() == 0:
        raise RuntimeError("values must have at least one dimension (nnz), but got a 0-dim tensor")
    sparse_dim, nnz = indices.shape
    if values.shape[0] != nnz:
        raise RuntimeError(
            f"indices and values must have same nnz, but got nnz from indices: {nnz}, nnz from values: "
            f"{values.shape[0]}"
        )
    index_array = indices._array
    dense_sizes = tuple(values.shape[1:])
    if size is None:
        if nnz == 0 and sparse_dim:
            sparse_sizes = (0,) * sparse_dim
        else:
            sparse_sizes = tuple(int(m) + 1 for m in index_array.max(axis=1)) if sparse_dim else ()
        size = sparse_sizes + dense_sizes
    size = tuple(int(n) for n in size)
    if len(size) != sparse_dim + len(dense_sizes):
        raise RuntimeError(
            f"number of dimensions must be sparse_dim ({sparse_dim}) + dense_dim ({len(dense_sizes)}), but got "
            f"{len(size)}"
        )
    if size[sparse_dim:] != dense_sizes:
        raise RuntimeError(f"values has incorrect size, expected {[nnz, *size[sparse_dim:]]}, got "
                           f"{[nnz, *dense_sizes]}")
    if nnz and indices.device.type != "meta":
        low, high = index_array.min(axis=1), index_array.max(axis=1)
        for d in range(sparse_dim):
            if int(low[d]) < 0:
                raise RuntimeError(f"found negative index {int(low[d])} for dim {d}")
            if int(high[d]) >= size[d]:
                raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is {size[d]} but found "
                                   f"index {int(high[d])}")
    if requires_grad:
        values = values.detach()
    out = SparseCooTensor.apply(indices, values, size=size, coalesced=bool(is_coalesced))
    return out.requires_grad_(True) if requires_grad else out


# products -----------------------------------------------------------------------------------------------
def _check_mm(name: str, mat1: Tensor, mat2: Tensor) -> None:
    if mat1.dim() != 2 or mat2.dim() != 2:
        raise RuntimeError(f"{name}: expected 2-D matrices, got {mat1.dim()}-D ({mat1.layout}) and {mat2.dim()}-D "
                           f"({mat2.layout})")
    if mat1.is_sparse and mat1.dense_dim() != 0:
        raise RuntimeError(f"{name}: expected a sparse matrix with 2 sparse dims and 0 dense dims, got sparse_dim="
                           f"{mat1.sparse_dim()}, dense_dim={mat1.dense_dim()}")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x{mat1.shape[1]} and "
                           f"{mat2.shape[0]}x{mat2.shape[1]})")
    if mat1.dtype is not mat2.dtype:
        raise RuntimeError(f"{name}: expected mat1 and mat2 to have the same dtype, but got: {mat1.dtype} != "
                           f"{mat2.dtype}")


def mm(mat1: Tensor, mat2: Tensor) -> Tensor:
    """``sparse (n, m) @ dense (m, k)`` -> dense, in O(nnz * k); the gradient of ``mat1`` is sparse on its
    pattern, the gradient of ``mat2`` is ``mat1.t() @ grad`` (sparse @ dense again). A dense ``mat1`` with a
    sparse ``mat2`` is computed as ``(mat2.t() @ mat1.t()).t()``."""
    if not mat1.is_sparse and mat2.is_sparse:
        _check_mm("sparse.mm", mat2.t(), mat1.t())
        return SparseDenseMm.apply(transpose(mat2, 0, 1), mat1.t()).t()
    _check_mm("sparse.mm", mat1, mat2)
    if not mat1.is_sparse:
        return mat1 @ mat2
    if mat2.is_sparse:
        return sparse_sparse_mm(mat1, mat2)
    return SparseDenseMm.apply(mat1, mat2)


def sparse_sparse_mm(mat1: SparseTensor, mat2: SparseTensor) -> SparseTensor:
    """sparse @ sparse -> sparse (coalesced), by joining mat1's columns with mat2's rows: work and memory are
    O(number of products). Differentiable in both values through gathers and a segment sum."""
    a, b = coalesce(mat1), coalesce(mat2)
    backend = a._storage.backend
    xp = backend.xp
    a_rows, a_cols = a._sparse_indices._array
    b_rows, b_cols = b._sparse_indices._array
    starts = xp.searchsorted(b_rows, a_cols, side="left")
    counts = xp.searchsorted(b_rows, a_cols, side="right") - starts
    total = int(counts.sum())
    left = xp.repeat(xp.arange(a_cols.shape[0]), counts)
    offsets = xp.cumsum(counts) - counts
    right = xp.repeat(starts - offsets, counts) + xp.arange(total)
    products = SegmentGather.apply(values_of(a), ids=left) * SegmentGather.apply(values_of(b), ids=right)
    indices = xp.stack([a_rows[left], b_cols[right]])
    shape = (mat1.shape[0], mat2.shape[1])
    lin = kernels.linear_index(xp, indices, shape)
    unique, inverse = xp.unique(lin, return_inverse=True)
    summed = SegmentSum.apply(products, ids=inverse.reshape(-1), n=unique.shape[0])
    unique_indices = kernels.unravel(xp, unique, shape, a._sparse_indices._array.dtype)
    index_tensor = from_array(unique_indices, backend, a.device)
    return SparseCooTensor.apply(index_tensor, summed, size=shape, coalesced=True)


def addmm(mat: Tensor, mat1: Tensor, mat2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """``beta * mat + alpha * (mat1 @ mat2)`` with a sparse ``mat1`` (see ``mm``)."""
    product = mm(mat1, mat2)
    if alpha != 1:
        product = product * alpha
    if beta == 0:
        return product + mat * 0 if product.shape != mat.shape else product
    return mat * beta + product if beta != 1 else mat + product


# reductions -------------------------------------------------------------------------------------------
def sum(input: Tensor, dim=None, dtype=None) -> Tensor:  # noqa: A001 - torch.sparse.sum
    """Sum over ``dim`` (all dims when None). Summing every sparse dim gives a dense tensor, otherwise the
    result is sparse (coalesced). Backward: only the specified entries of ``input`` get gradients, and the
    gradient of ``input`` is coalesced."""
    if not input.is_sparse:
        return input.sum() if dim is None else input.sum(dim)
    source = coalesce(input)
    if dtype is not None:
        source = source.to(dtype=dtype)
    ndim, sparse_dim = input.dim(), input.sparse_dim()
    dims = range(ndim) if dim is None else ([dim] if isinstance(dim, int) else list(dim))
    dims = sorted({wrap_dim(d, ndim) for d in dims})
    values = values_of(source)
    dense_dims = [d - sparse_dim + 1 for d in dims if d >= sparse_dim]
    if dense_dims:
        values = values.sum(dense_dims)
    kept = [d for d in range(sparse_dim) if d not in dims]
    if not kept:
        return values.sum(0)
    shape = tuple(n for d, n in enumerate(input.shape) if d not in dims)
    indices = source._sparse_indices[kept]
    return Coalesce.apply(SparseCooTensor.apply(indices, values, size=shape, coalesced=False))


def _groups(s: SparseTensor, dim: int):
    """For a softmax over sparse dim ``dim``: the group (the other sparse coordinates) of each entry."""
    xp = s._storage.backend.xp
    others = [d for d in range(s.sparse_dim()) if d != dim]
    indices = s._sparse_indices._array[others]
    lin = kernels.linear_index(xp, indices, tuple(s.shape[d] for d in others))
    unique, inverse = xp.unique(lin, return_inverse=True)
    return inverse.reshape(-1), unique.shape[0]


def _softmax_parts(input: SparseTensor, dim: int, dtype):
    """(values, shifted values, group ids, number of groups) of the coalesced input; unspecified entries act
    as -inf, so only specified values take part."""
    s = coalesce(input)
    if dtype is not None:
        s = s.to(dtype=dtype)
    values = values_of(s)
    ids, groups = _groups(s, dim)
    xp = s._storage.backend.xp
    with grad_mode.no_grad():
        peak = xp.full((groups,) + tuple(values.shape[1:]), -xp.inf, dtype=values._array.dtype)
        if ids.shape[0]:
            xp.maximum.at(peak, ids, values._array)
    shift = SegmentGather.apply(from_array(peak, s._storage.backend, s.device), ids=ids) if ids.shape[0] else values * 0
    return s, values - shift, ids, groups


def softmax(input: Tensor, dim: int, dtype=None) -> Tensor:
    """Softmax over ``dim`` among the specified entries (unspecified ones count as -inf, so they stay
    unspecified); the result has ``input``'s (coalesced) pattern."""
    if not input.is_sparse:
        return _dense_softmax(input, dim, dtype, log=False)
    dim = wrap_dim(dim, input.dim())
    if dim >= input.sparse_dim():
        s = coalesce(input)
        return with_values(s, _dense_softmax(values_of(s), dim - s.sparse_dim() + 1, dtype, log=False))
    s, shifted, ids, groups = _softmax_parts(input, dim, dtype)
    exp = shifted.exp()
    total = SegmentGather.apply(SegmentSum.apply(exp, ids=ids, n=groups), ids=ids)
    return with_values(s, exp / total)


def log_softmax(input: Tensor, dim: int, dtype=None) -> Tensor:
    """``log(softmax(input, dim))`` computed stably on the specified entries (see ``softmax``)."""
    if not input.is_sparse:
        return _dense_softmax(input, dim, dtype, log=True)
    dim = wrap_dim(dim, input.dim())
    if dim >= input.sparse_dim():
        s = coalesce(input)
        return with_values(s, _dense_softmax(values_of(s), dim - s.sparse_dim() + 1, dtype, log=True))
    s, shifted, ids, groups = _softmax_parts(input, dim, dtype)
    total = SegmentGather.apply(SegmentSum.apply(shifted.exp(), ids=ids, n=groups), ids=ids)
    return with_values(s, shifted - total.log())



def _dense_softmax(x: Tensor, dim: int, dtype, log: bool) -> Tensor:
    """(log-)softmax of a dense tensor over ``dim`` (used for dense dims of a hybrid tensor)."""
    if dtype is not None:
        x = x.to(dtype)
    shifted = x - x.detach().amax(dim, keepdim=True)
    total = shifted.exp().sum(dim, keepdim=True)
    return shifted - total.log() if log else shifted.exp() / total
