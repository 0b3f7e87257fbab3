"""SparseTensor: the COO layout (``indices`` (sparse_dim, nnz) int64 + ``values`` (nnz, *dense_dims) + size).

A sparse tensor is a Tensor subclass with ``_dense = False``, so every Op routes it to the sparse
implementations registered in ops.py (or to a clear error naming the op). It holds two plain dense
Tensors without history; its own ``grad_fn`` records how it was made, exactly like a dense tensor.
``_storage`` is the values' storage (dtype, device and the version counter come from there) and
``_array`` is a shape-only stand-in, so the engine's shape bookkeeping works unchanged.
"""

from __future__ import annotations

from typing import NamedTuple

from .._dtype import get_default_dtype
from ..layout import sparse_coo
from ..tensor import Size, Tensor, from_array


class Coo(NamedTuple):
    """What a sparse op's ``forward`` receives and returns: backend arrays plus metadata."""

    indices: object  # int64 array (sparse_dim, nnz)
    values: object  # array (nnz, *dense_dims)
    shape: tuple
    coalesced: bool = False


class SparseGeometry:
    """Stands in for ``_array`` on a sparse tensor: only the shape (the dense size it represents)."""

    __slots__ = ("shape",)

    def __init__(self, shape: tuple):
        self.shape = tuple(shape)

    @property
    def ndim(self) -> int:
        return len(self.shape)


class SparseTensor(Tensor):
    """A sparse COO tensor: ``to_dense()[tuple(indices[:, k])] += values[k]`` for every k (duplicates add)."""

    __slots__ = ("_sparse_indices", "_sparse_values", "_coalesced")
    _dense = False
    _kind = "sparse"
    is_sparse = True

    # construction ----------------------------------------------------------------------------
    @staticmethod
    def _from_coo(coo: Coo, backend, device) -> SparseTensor:
        values = from_array(coo.values, backend, device)
        t = SparseTensor._make(SparseGeometry(coo.shape), values._storage)  # the storage: the values'
        t._sparse_indices = from_array(coo.indices, backend, device)
        t._sparse_values = values
        t._coalesced = bool(coo.coalesced)
        return t

    def _coo(self) -> Coo:
        return Coo(self._sparse_indices._array, self._sparse_values._array, self._array.shape, self._coalesced)

    # layout ----------------------------------------------------------------------------------
    @property
    def layout(self):
        return sparse_coo

    def sparse_dim(self) -> int:
        return self._sparse_indices._array.shape[0]

    def dense_dim(self) -> int:
        return len(self._array.shape) - self.sparse_dim()

    def _nnz(self) -> int:
        return self._sparse_indices._array.shape[1]

    def is_coalesced(self) -> bool:
        return self._coalesced

    def _coalesced_(self, coalesced: bool) -> SparseTensor:
        self._coalesced = bool(coalesced)
        return self

    def _indices(self) -> Tensor:
        """The indices, whether coalesced or not (no history)."""
        return self._sparse_indices._alias()

    def _values(self) -> Tensor:
        """The values, whether coalesced or not; detached, as in PyTorch (use ``coalesce().values()``)."""
        return self._sparse_values._alias()

    def indices(self) -> Tensor:
        if not self._coalesced:
            raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call .coalesce() first")
        return self._sparse_indices._alias()

    # what a strided tensor has and a sparse one does not -------------------------------------
    def stride(self, dim=None):
        raise RuntimeError("Sparse tensors do not have strides")

    def is_contiguous(self, memory_format=None) -> bool:
        raise RuntimeError("Tensors of type SparseTensorImpl do not have is_contiguous")

    def storage_offset(self) -> int:
        raise RuntimeError("Cannot access storage of SparseTensorImpl")

    def data_ptr(self) -> int:
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    def untyped_storage(self):
        raise RuntimeError("Cannot access storage of SparseTensorImpl")

    storage = untyped_storage

    def numpy(self, *, force: bool = False):
        raise TypeError("can't convert Sparse layout tensor to numpy. Use Tensor.to_dense() first.")

    def item(self):
        return self.to_dense().item()

    def tolist(self):
        raise RuntimeError("tolist() is not supported for sparse tensors; call .to_dense() first")

    # aliases ----------------------------------------------------------------------------------
    def _alias(self) -> SparseTensor:
        t = SparseTensor._from_coo(self._coo(), self._storage.backend, self._storage.device)
        t._sparse_indices, t._sparse_values = self._sparse_indices, self._sparse_values
        t._storage = self._storage
        return t

    def detach(self) -> SparseTensor:
        return self._alias()

    @property
    def data(self) -> SparseTensor:
        return self._alias()

    @data.setter
    def data(self, value: SparseTensor) -> None:
        self._sparse_indices, self._sparse_values = value._sparse_indices, value._sparse_values
        self._coalesced, self._array, self._storage = value._coalesced, value._array, value._storage

    def __deepcopy__(self, memo):
        result = self.clone().detach()
        if self._requires_grad and self.grad_fn is None:
            result.requires_grad_(True)
        memo[id(self)] = result
        return result

    def __repr__(self, *, tensor_contents=None) -> str:
        pad = " " * len("tensor(indices=")
        indices = repr(self._sparse_indices).replace("\n", "\n" + pad)
        values = repr(self._sparse_values).replace("\n", "\n" + " " * len("       values="))
        extras = [f"size={tuple(self.shape)}", f"nnz={self._nnz()}"]
        if self.dtype is not get_default_dtype():
            extras.append(f"dtype={self.dtype}")
        if self.device.type != "cpu":
            extras.append(f"device='{self.device}'")
        extras.append("layout=torch.sparse_coo")
        if self.grad_fn is not None:
            extras.append(f"grad_fn=<{self.grad_fn.name()}>")
        elif self.requires_grad:
            extras.append("requires_grad=True")
        return f"tensor(indices={indices},\n       values={values},\n       " + ", ".join(extras) + ")"

    @property
    def shape(self) -> Size:
        return Size(self._array.shape)
