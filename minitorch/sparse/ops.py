"""The differentiable ops of the COO layout, each forward beside its derivative.

A handful of primitive ops (the constructor, ``values``, ``coalesce``, ``to_dense``, ``to_sparse``,
lookups and segment sums, ``sparse.mm``) carry all derivatives; everything else (arithmetic, transpose,
sparse.sum, softmax) is a composition of them, so double backward comes for free. Gradients of sparse
inputs are sparse tensors on the input's pattern (PyTorch's masked semantics) unless noted.
"""

from __future__ import annotations

import math

from ..autograd import grad_mode
from ..autograd.forward_ad import propagate
from ..autograd.forward_ad import state as forward_ad
from ..layout import sparse_coo
from ..ops.op import Op, check_same_device, linear_jvp
from ..ops.shape import cat
from ..tensor import Tensor, from_array, wrap_dim
from . import kernels
from .tensor import Coo, SparseTensor

ADD_SPARSE_DENSE = "add(sparse, dense) is not supported. Use add(dense, sparse) instead."


class SparseOp(Op):
    """An Op whose inputs or output may be sparse: forward gets a ``Coo`` for each sparse input and may
    return a ``Coo``, which becomes a SparseTensor. Recording is Op's own."""

    @classmethod
    def apply(cls, *args, **params):
        first = None
        record = False
        for a in args:
            if isinstance(a, Tensor):
                if first is None:
                    first = a
                elif a._storage.device is not first._storage.device:
                    check_same_device(cls, first, a)
                record = record or a.requires_grad
        node = cls.__new__(cls)
        node.backend = first._storage.backend
        node.device = first._storage.device
        arrays = [a._coo() if isinstance(a, SparseTensor) else a._array if isinstance(a, Tensor) else a for a in args]
        out = node.wrap(node.forward(*arrays, **params))
        if record and grad_mode.state.enabled:
            node._record(args, (out,))
        if forward_ad.active and out._dense and all(a._dense for a in args if isinstance(a, Tensor)):
            propagate(node, args, (out,), params)  # (forward mode covers dense tensors only)
        return out

    def wrap(self, result) -> Tensor:
        if isinstance(result, Coo):
            return SparseTensor._from_coo(result, self.backend, self.device)
        return Op.wrap(self, result)

# the primitives ----------------------------------------------------------------------------------------
class SparseCooTensor(SparseOp):
    """indices + values -> sparse. d dense[idx_k] / d values[k] = 1: each entry (duplicates too) gets the
    gradient at its position."""

    def forward(self, indices, values, size, coalesced=False):
        self.indices = indices
        return Coo(indices, values, tuple(size), coalesced)

    def backward(self, grad):
        return None, values_at(grad, self.indices)


class SparseValues(SparseOp):
    """The values array as a dense tensor. Its gradient is a sparse tensor on the input's (coalesced)
    pattern, whose dense equivalent is the gradient of the dense tensor the input represents: for an
    uncoalesced input that is well defined only when duplicates receive equal gradients (true of every
    function of the represented tensor; ``values()`` refuses uncoalesced tensors for that reason), and the
    first duplicate's gradient is used."""

    def forward(self, s: Coo):
        self.indices, self.shape, self.coalesced = s.indices, s.shape, s.coalesced
        return s.values

    def backward(self, grad):
        if self.coalesced:
            indices = from_array(self.indices, self.backend, self.device)
            return SparseCooTensor.apply(indices, grad, size=self.shape, coalesced=True)
        unique, first = kernels.pattern(self.xp, self.indices, self.shape)
        indices = from_array(unique, self.backend, self.device)
        return SparseCooTensor.apply(indices, SegmentGather.apply(grad, ids=first), size=self.shape, coalesced=True)


class Coalesce(SparseOp):
    """Duplicates summed, indices sorted. The input represents the same dense tensor, so the gradient
    passes through unchanged."""

    def forward(self, s: Coo):
        indices, values, _ = kernels.coalesce(self.backend, s.indices, s.values, s.shape)
        return Coo(indices, values, s.shape, True)

    def backward(self, grad):
        return grad


class ToDense(SparseOp):
    """Scatter-add of the values into zeros. Backward: ``grad.sparse_mask(input)`` (masked_grad=True) or
    the whole dense gradient in sparse layout (masked_grad=False)."""

    def forward(self, s: Coo, masked_grad=True):
        self.indices, self.shape, self.masked = s.indices, s.shape, masked_grad
        return kernels.to_dense(self.backend, s.indices, s.values, s.shape)

    def backward(self, grad):
        sparse_dim = self.indices.shape[0]
        if not self.masked:
            return to_sparse(grad, sparse_dim)
        xp = self.xp
        unique = xp.unique(kernels.linear_index(xp, self.indices, self.shape[:sparse_dim]))
        pattern = kernels.unravel(xp, unique, self.shape[:sparse_dim], self.indices.dtype)
        indices = from_array(pattern, self.backend, self.device)
        return SparseCooTensor.apply(indices, values_at(grad, pattern), size=self.shape, coalesced=True)


class ToSparse(SparseOp):
    """Dense -> COO with the nonzero (sparse-dim) positions; the gradient of the dense input is dense."""

    def forward(self, x, sparse_dim):
        indices, values = kernels.nonzero_pattern(self.backend, x, sparse_dim)
        return Coo(indices, values, x.shape, True)

    def backward(self, grad):
        return grad.to_dense() if grad.is_sparse else grad


class SegmentGather(SparseOp):
    """``x[ids]`` along dim 0 (a row lookup); the adjoint of SegmentSum."""

    jvp = linear_jvp  # linear in x: the op on the tangent

    def forward(self, x, ids):
        self.ids, self.rows = ids, x.shape[0]
        return self.xp.take(x, ids, axis=0)

    def backward(self, grad):
        return SegmentSum.apply(grad, ids=self.ids, n=self.rows)


class SegmentSum(SparseOp):
    """``out[ids[k]] += x[k]`` along dim 0 (duplicates add up: a scatter-add); the adjoint of SegmentGather."""

    jvp = linear_jvp  # linear in x: the op on the tangent

    def forward(self, x, ids, n):
        self.ids = ids
        out = self.xp.zeros((n,) + x.shape[1:], dtype=x.dtype)
        self.backend.index_add(out, ids, x)
        return out

    def backward(self, grad):
        return SegmentGather.apply(grad, ids=self.ids)


class SparseLookup(SparseOp):
    """The values of a sparse tensor at given indices (0 where unspecified); the gradient is a sparse
    tensor on the queried indices."""

    def forward(self, s: Coo, query):
        self.query, self.shape = query, s.shape
        return kernels.lookup(self.backend, s.indices, s.values, s.shape, query)

    def backward(self, grad):
        indices = from_array(self.query, self.backend, self.device)
        return SparseCooTensor.apply(indices, grad, size=self.shape)


class SparseDenseMm(SparseOp):
    """``sparse (n, m) @ dense (m, k)`` in O(nnz * k). The sparse gradient is masked to the input's pattern
    (``torch.sparse.mm``); the dense one is ``sparse.t() @ grad``, again sparse @ dense."""

    save_inputs = (0, 1)

    def forward(self, s: Coo, dense):
        return kernels.sparse_dense_mm(self.backend, s.indices[0], s.indices[1], s.values, dense, s.shape[0])

    def backward(self, grad):
        s, dense = self.saved_tensors
        grad_sparse = grad_dense = None
        if self.needs_grad(0):
            grad_sparse = self.sparse_grad(grad, s, dense)
        if self.needs_grad(1):
            grad_dense = SparseDenseMm.apply(transpose(s, 0, 1), grad)
        return grad_sparse, grad_dense

    def sparse_grad(self, grad, s, dense):
        if s._coalesced:
            pattern = s._sparse_indices
        else:  # the unique positions: duplicates must not repeat the gradient
            pattern = from_array(kernels.pattern(self.xp, s._sparse_indices._array, s.shape)[0], self.backend,
                                 self.device)
        rows, cols = pattern._array
        values = (SegmentGather.apply(grad, ids=rows) * SegmentGather.apply(dense, ids=cols)).sum(-1)
        return SparseCooTensor.apply(pattern, values, size=s.shape, coalesced=True)


class SparseMatmul(SparseDenseMm):
    """``sparse @ dense`` through ``torch.mm`` / ``matmul``: the gradient of the sparse input is the full
    dense ``grad @ dense.T`` (PyTorch's MmBackward0), not masked."""

    def sparse_grad(self, grad, s, dense):
        return grad @ dense.t()


class DenseAddSparse(SparseOp):
    """``dense + alpha * sparse`` -> dense (a scatter-add into a copy); both gradients are dense."""

    def forward(self, dense, s: Coo, alpha=1):
        self.alpha = alpha
        xp = self.xp
        values = s.values if alpha == 1 else s.values * alpha
        out = xp.array(dense, dtype=xp.result_type(dense.dtype, values.dtype), order="C")  # reshape must be a view
        sparse_dim = s.indices.shape[0]
        flat = out.reshape((math.prod(s.shape[:sparse_dim]),) + tuple(s.shape[sparse_dim:]))
        self.backend.index_add(flat, kernels.linear_index(xp, s.indices, s.shape[:sparse_dim]), values)
        return out

    def backward(self, grad):
        return grad, grad if self.alpha == 1 else grad * self.alpha


# compositions ---------------------------------------------------------------------------------------------
def values_at(x: Tensor, indices) -> Tensor:
    """``x[tuple(indices)]`` (an (nnz, *dense_dims) tensor) for a dense or sparse ``x``; differentiable."""
    if x.is_sparse:
        return SparseLookup.apply(x, query=indices)
    sparse_dim = indices.shape[0]
    shape = x.shape
    flat = x.reshape((math.prod(shape[:sparse_dim]),) + tuple(shape[sparse_dim:]))
    xp = x._storage.backend.xp
    return SegmentGather.apply(flat, ids=kernels.linear_index(xp, indices, shape[:sparse_dim]))


def values(self: SparseTensor) -> Tensor:
    """``SparseTensor.values()``: the values of a coalesced tensor, differentiable (gradients flow back as a
    sparse tensor)."""
    if not self._coalesced:
        raise RuntimeError("Cannot get values on an uncoalesced tensor, please call .coalesce() first")
    return values_of(self)


def values_of(s: SparseTensor) -> Tensor:
    """The values of ``s`` with history (uncoalesced tensors too; ``values()`` checks coalescing first)."""
    return SparseValues.apply(s)


def with_values(s: SparseTensor, values: Tensor, coalesced: bool | None = None) -> SparseTensor:
    """A sparse tensor on ``s``'s pattern holding ``values`` (differentiable in ``values``)."""
    size = s.shape[: s.sparse_dim()] + tuple(values.shape[1:])
    flag = s._coalesced if coalesced is None else coalesced
    return SparseCooTensor.apply(s._sparse_indices, values, size=size, coalesced=flag)


def coalesce(s: SparseTensor) -> SparseTensor:
    """``s`` itself if its coalesced flag is set, else a coalesced copy (differentiable)."""
    return s if s._coalesced else Coalesce.apply(s)


def to_dense(input: Tensor, dtype=None, *, masked_grad: bool | None = None) -> Tensor:
    """The dense tensor ``input`` represents (a dense input is returned as is)."""
    if not input.is_sparse:
        return input if dtype is None else input.to(dtype)
    out = ToDense.apply(input, masked_grad=True if masked_grad is None else bool(masked_grad))
    return out if dtype is None else out.to(dtype)


def to_sparse(input: Tensor, sparse_dim: int | None = None, *, layout=None, blocksize=None,
              dense_dim: int | None = None) -> Tensor:
    """The COO tensor of a dense ``input`` (its nonzeros; hybrid when ``sparse_dim < input.dim()``)."""
    if layout is not None and layout is not sparse_coo:
        raise RuntimeError(f"to_sparse: minitorch supports only the sparse_coo layout, got {layout}")
    ndim = input.dim()
    if sparse_dim is None:
        sparse_dim = ndim - (dense_dim or 0)
    if not 0 <= sparse_dim <= ndim:
        raise RuntimeError(f"sparse_dim must be in [0, {ndim}] for a tensor of shape {list(input.shape)}, "
                           f"but got {sparse_dim}")
    if input.is_sparse:
        if sparse_dim != input.sparse_dim():
            raise RuntimeError(f"to_sparse: conversion from Sparse to Sparse with sparse_dim argument != "
                               f"self.sparse_dim() is not supported (got {sparse_dim} and {input.sparse_dim()})")
        return input
    return ToSparse.apply(input, sparse_dim)


def sparse_mask(input: Tensor, mask: SparseTensor) -> SparseTensor:
    """``input``'s values at the specified positions of ``mask`` (coalesced), as a sparse tensor."""
    if not mask.is_sparse:
        raise RuntimeError(f"sparse_mask(): expected mask to be a sparse COO tensor, but got {mask.layout}")
    if tuple(input.shape) != tuple(mask.shape):
        raise RuntimeError(f"sparse_mask(): operands have incompatible sizes; self has size {list(input.shape)} "
                           f"but mask has size {list(mask.shape)}")
    pattern = mask if mask._coalesced else Coalesce.apply(mask.detach())
    return with_values(pattern, values_at(input, pattern._sparse_indices._array), coalesced=True)


def transpose(s: SparseTensor, dim0: int, dim1: int) -> SparseTensor:
    """Swap two sparse dims (permute the index rows) or two dense dims (transpose the values)."""
    ndim, sparse_dim = s.dim(), s.sparse_dim()
    dim0, dim1 = wrap_dim(dim0, ndim), wrap_dim(dim1, ndim)
    shape = list(s.shape)
    shape[dim0], shape[dim1] = shape[dim1], shape[dim0]
    if dim0 < sparse_dim and dim1 < sparse_dim:
        order = list(range(sparse_dim))
        order[dim0], order[dim1] = order[dim1], order[dim0]
        indices = s._sparse_indices[order] if dim0 != dim1 else s._sparse_indices
        flag = s._coalesced and dim0 == dim1
        return SparseCooTensor.apply(indices, values_of(s), size=tuple(shape), coalesced=flag)
    if dim0 >= sparse_dim and dim1 >= sparse_dim:
        values = values_of(s).transpose(dim0 - sparse_dim + 1, dim1 - sparse_dim + 1)
        return SparseCooTensor.apply(s._sparse_indices, values, size=tuple(shape), coalesced=s._coalesced)
    raise RuntimeError(
        f"transpose(): a sparse dim and a dense dim cannot be swapped (dims {dim0} and {dim1} of a tensor with "
        f"sparse_dim={sparse_dim}, dense_dim={ndim - sparse_dim}, size {list(s.shape)})"
    )


def _check_same_size(op: str, a: Tensor, b: Tensor) -> None:
    if tuple(a.shape) != tuple(b.shape):
        raise RuntimeError(
            f"{op}: expected 'self' and 'other' to have same size, but self has size {list(a.shape)} while "
            f"other has size {list(b.shape)} (FYI: {op} doesn't support broadcast)"
        )


def add(input: Tensor, other, alpha=1) -> Tensor:
    """sparse + sparse concatenates (uncoalesced), dense + sparse is dense, sparse + dense is refused."""
    if not isinstance(input, Tensor) or not input.is_sparse:
        if isinstance(input, Tensor) and isinstance(other, Tensor):
            _check_same_size("add", input, other)
            return DenseAddSparse.apply(input, other, alpha=alpha)
        raise RuntimeError(ADD_SPARSE_DENSE)
    if not (isinstance(other, Tensor) and other.is_sparse):
        raise RuntimeError(ADD_SPARSE_DENSE)
    _check_same_size("add", input, other)
    if input.sparse_dim() != other.sparse_dim():
        raise RuntimeError(f"add: expected same sparse_dim for both operands, got {input.sparse_dim()} and "
                           f"{other.sparse_dim()} (sizes {list(input.shape)})")
    second = values_of(other) if alpha == 1 else values_of(other) * alpha
    indices = cat([input._sparse_indices, other._sparse_indices], 1)._array
    values = cat([values_of(input), second.to(input.dtype) if second.dtype is not input.dtype else second], 0)
    # PyTorch merges the two index lists in order; a stable sort of the concatenation gives the same order
    xp = input._storage.backend.xp
    sparse_dim = input.sparse_dim()
    order = xp.argsort(kernels.linear_index(xp, indices, tuple(input.shape[:sparse_dim])), kind="stable")
    merged = from_array(indices[:, order], input._storage.backend, input.device)
    out = SparseCooTensor.apply(merged, SegmentGather.apply(values, ids=order), size=tuple(input.shape))
    return Coalesce.apply(out) if input._coalesced and other._coalesced else out


def mul(input, other) -> Tensor:
    """Elementwise: sparse * scalar, sparse * dense and sparse * sparse (same size) are sparse on the sparse
    operand's pattern; linear in the stored values, so uncoalesced inputs are fine."""
    if not (isinstance(input, Tensor) and input.is_sparse):
        input, other = other, input
    if isinstance(other, Tensor) and other.dim() > 0:
        _check_same_size("mul", input, other)
        factor = values_at(other, input._sparse_indices._array)
    else:
        factor = other
    return with_values(input, values_of(input) * factor)


def neg(input: SparseTensor) -> SparseTensor:
    return with_values(input, -values_of(input))


def div(input: SparseTensor, other, rounding_mode=None) -> SparseTensor:
    """sparse / scalar (a 0-d tensor or a number): the values divided; anything else would fill with inf."""
    if not (isinstance(input, Tensor) and input.is_sparse) or (isinstance(other, Tensor) and other.dim() > 0):
        raise RuntimeError(
            "div(): only a sparse tensor divided by a scalar (or a 0-dim dense tensor) is supported; got "
            f"{getattr(input, 'layout', type(input).__name__)} / {getattr(other, 'layout', type(other).__name__)}"
        )
    return with_values(input, values_of(input).div(other, rounding_mode=rounding_mode))


def clone(input: SparseTensor, **_) -> SparseTensor:
    return SparseCooTensor.apply(input._sparse_indices.clone(), values_of(input).clone(), size=tuple(input.shape),
                                 coalesced=input._coalesced)


def to_copy(input: SparseTensor, device=None, dtype=None) -> SparseTensor:
    """The same pattern with the values cast / moved (the gradient flows back through ``to``)."""
    values = values_of(input).to(device=device, dtype=dtype)
    indices = input._sparse_indices.to(device=values.device)
    return SparseCooTensor.apply(indices, values, size=tuple(input.shape), coalesced=input._coalesced)


def accumulate_into(grad: SparseTensor, current: Tensor) -> Tensor:
    """``SparseTensor._accumulate_into``: a leaf's ``.grad`` plus a sparse gradient. Two sparse ones
    concatenate (SEMANTICS 3.2, coalesced when read); a strided ``.grad`` gets the values added in place."""
    if current.is_sparse:
        return current + grad
    add_into(current, grad)
    return current


def add_into(dense: Tensor, s: SparseTensor) -> None:
    """``dense += s`` in place on the data (no graph; bumps the version): how a sparse gradient is
    accumulated into a dense ``.grad``."""
    backend = dense._storage.backend
    indices, values, shape = s._sparse_indices._array, s._sparse_values._array, tuple(s.shape)
    sparse_dim = indices.shape[0]
    array = dense._array
    flat = array.reshape((math.prod(shape[:sparse_dim]),) + shape[sparse_dim:])  # a copy if non-contiguous
    backend.index_add(flat, kernels.linear_index(backend.xp, indices, shape[:sparse_dim]), values)
    if not array.flags.c_contiguous:
        array[...] = flat.reshape(shape)
    dense._storage.version += 1
