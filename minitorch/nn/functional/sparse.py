"""Lookups by index: ``embedding`` (rows of a weight matrix) and ``one_hot``."""

from __future__ import annotations

from ... import _dtype
from ...autograd import grad_mode
from ...ops.op import Op
from ...tensor import Tensor
from .activation import scalar_type_name


def _has_data(t: Tensor) -> bool:
    return t.device.type != "meta"


class Embedding(Op):
    """``weight[indices]``. The weight gradient scatter-adds each output row's gradient into the
    row it was read from (repeated indices add up); rows scaled by ``row_scale`` (0 for
    ``padding_idx``, ``1/count`` for ``scale_grad_by_freq``)."""

    def forward(self, weight, indices, padding_idx, scale_grad_by_freq):
        xp = self.xp
        self.num_weights = weight.shape[0]
        self.indices = indices.reshape(-1).astype(self.backend.array_dtype(_dtype.int64), copy=False)
        self.row_scale = None
        if padding_idx is not None or scale_grad_by_freq:
            scale = xp.ones(self.indices.shape, dtype=weight.dtype)
            if scale_grad_by_freq:
                counts = xp.bincount(self.indices, minlength=self.num_weights)
                scale = scale / counts[self.indices]
            if padding_idx is not None:
                scale = xp.where(self.indices == padding_idx, 0, scale).astype(weight.dtype, copy=False)
            self.row_scale = scale.reshape(-1, 1)
        return xp.take(weight, indices, axis=0)

    def backward(self, grad):
        dim = grad.shape[-1]
        rows = grad.reshape(-1, dim)
        if self.row_scale is not None:
            rows = rows * self.constant(self.row_scale)
        index = self.constant(self.indices.reshape(-1, 1)).expand(-1, dim)
        return rows.new_zeros((self.num_weights, dim)).scatter_add(0, index, rows), None


def _renorm_rows(weight: Tensor, indices: Tensor, max_norm: float, norm_type: float) -> None:
    """PyTorch's ``embedding_renorm_``: rescale, in place and without grad, the rows of ``weight`` that
    ``indices`` reads whose ``norm_type``-norm exceeds ``max_norm``."""
    xp = weight._storage.backend.xp
    table = weight._array
    rows = xp.unique(indices._array.reshape(-1))
    picked = table[rows]
    magnitude = xp.abs(picked)
    if norm_type == float("inf"):
        norms = magnitude.max(axis=1)
    else:
        norms = (magnitude**norm_type).sum(axis=1) ** (1.0 / norm_type)
    scale = xp.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0).astype(table.dtype, copy=False)
    table[rows] = picked * scale[:, None]
    weight._bump_version()


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None, max_norm: float | None = None,
              norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of ``weight`` (num_embeddings, embedding_dim) picked by the integer tensor ``input``:
    the result has shape ``input.shape + (embedding_dim,)``.

    ``padding_idx``'s row gets no gradient. ``max_norm`` renormalizes the rows it reads, in place
    in ``weight``, as PyTorch does. ``sparse=True`` is accepted, but the weight gradient is dense
    for now (sparse gradients arrive with the sparse-tensor issue)."""
    if input.dtype not in (_dtype.int64, _dtype.int32):
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got "
            f"{scalar_type_name(input.dtype)} instead (while checking arguments for embedding)"
        )
    if weight.dim() != 2:
        raise RuntimeError(f"'weight' must be 2-D, but got weight of shape {list(weight.shape)}")
    num_weights = weight.shape[0]
    if padding_idx is not None:
        if padding_idx > 0:
            assert padding_idx < num_weights, "Padding_idx must be within num_embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -num_weights, "Padding_idx must be within num_embeddings"
            padding_idx = num_weights + padding_idx
    if _has_data(input) and input.numel():
        low, high = int(input._array.min()), int(input._array.max())
        if low < 0 or high >= num_weights:
            raise IndexError(
                f"index out of range in self (embedding: index {low if low < 0 else high} with num_embeddings="
                f"{num_weights})"
            )
    if max_norm is not None and _has_data(weight):
        with grad_mode.no_grad():
            _renorm_rows(weight, input, max_norm, norm_type)
    return Embedding.apply(weight, input, padding_idx, scale_grad_by_freq)


class OneHot(Op):
    def forward(self, x, num_classes):
        classes = self.xp.arange(num_classes)
        return self.xp.equal(x[..., None], classes).astype(self.backend.array_dtype(_dtype.int64))


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """An int64 tensor of shape ``tensor.shape + (num_classes,)``, 1 at each index and 0 elsewhere;
    ``num_classes=-1`` uses ``tensor.max() + 1``."""
    if tensor.dtype is not _dtype.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    has_data = _has_data(tensor)
    if num_classes == -1:
        if not has_data:
            raise RuntimeError("Can not infer total number of classes from meta tensor.")
        if tensor.numel() == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(tensor._array.max()) + 1
    elif num_classes < -1:
        raise RuntimeError("num_classes should be positive")
    if has_data and tensor.numel():
        if int(tensor._array.min()) < 0:
            raise RuntimeError("Class values must be non-negative.")
        if int(tensor._array.max()) >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    return OneHot.apply(tensor, num_classes)


__all__ = ["embedding", "one_hot"]
