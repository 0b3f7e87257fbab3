"""Lookups by index: ``embedding`` (rows of a weight matrix) and ``one_hot``."""

from __future__ import annotations

from ... import _dtype
from ...autograd import grad_mode
from ...ops.op import Op, linear_jvp
from ...sparse.ops import SegmentGather, SegmentSum, SparseCooTensor
from ...tensor import Tensor, legacy_type_name


def _has_data(t: Tensor) -> bool:
    return t.device.type != "meta"


class Embedding(Op):
    """``weight[indices]``. The weight gradient scatter-adds each output row's gradient into the
    row it was read from (repeated indices add up); rows scaled by ``row_scale`` (0 for
    ``padding_idx``, ``1/count`` for ``scale_grad_by_freq``)."""

    jvp = linear_jvp  # forward mode: linear in its first input, so the op itself on the tangent (ops/op.py)

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


class SparseEmbedding(Embedding):
    """``weight[indices]`` whose weight gradient is a sparse COO tensor with one row per lookup
    (uncoalesced: repeated indices stay separate rows), ``padding_idx`` lookups dropped (PyTorch's
    ``embedding_sparse_backward``)."""

    def forward(self, weight, indices, padding_idx, scale_grad_by_freq=False):
        self.num_weights = weight.shape[0]
        flat = indices.reshape(-1).astype(self.backend.array_dtype(_dtype.int64), copy=False)
        self.keep = None if padding_idx is None else self.xp.nonzero(flat != padding_idx)[0]
        self.indices = flat if self.keep is None else flat[self.keep]
        return self.xp.take(weight, indices, axis=0)

    def backward(self, grad):
        dim = grad.shape[-1]
        rows = grad.reshape(-1, dim)
        if self.keep is not None:
            rows = SegmentGather.apply(rows, ids=self.keep)
        indices = self.constant(self.indices.reshape(1, -1))
        return SparseCooTensor.apply(indices, rows, size=(self.num_weights, dim)), None


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


def _wrap_padding_idx(padding_idx: int | None, num_embeddings: int, name: str = "Padding_idx") -> int | None:
    """``padding_idx`` asserted to be a row of the table, a negative one counted from the end. ``name`` spells
    it as PyTorch's message does: "Padding_idx" for embedding and Embedding, "padding_idx" for EmbeddingBag."""
    if padding_idx is not None:
        if padding_idx > 0:
            assert padding_idx < num_embeddings, f"{name} must be within num_embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -num_embeddings, f"{name} must be within num_embeddings"
            padding_idx = num_embeddings + padding_idx
    return padding_idx


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None, max_norm: float | None = None,
              norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of ``weight`` (num_embeddings, embedding_dim) picked by the integer tensor ``input``:
    the result has shape ``input.shape + (embedding_dim,)``.

    ``padding_idx``'s row gets no gradient. ``max_norm`` renormalizes the rows it reads, in place
    in ``weight``, as PyTorch does. With ``sparse=True`` the weight gradient is a
    sparse COO tensor (one row per lookup, uncoalesced), for ``optim.SGD``, ``Adagrad`` and ``SparseAdam``."""
    if input.dtype not in (_dtype.int64, _dtype.int32):
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got "
            f"{legacy_type_name(input)} instead (while checking arguments for embedding)"
        )
    if weight.dim() != 2:
        raise RuntimeError(f"'weight' must be 2-D, but got weight of shape {list(weight.shape)}")
    num_weights = weight.shape[0]
    padding_idx = _wrap_padding_idx(padding_idx, num_weights)
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
    if sparse:
        if scale_grad_by_freq:
            raise RuntimeError("embedding_backward: scale_grad_by_freq not supported with sparse gradients")
        return SparseEmbedding.apply(weight, input, padding_idx)
    return Embedding.apply(weight, input, padding_idx, scale_grad_by_freq)


class SegmentMax(Op):
    """Per-bag maximum along dim 0 (``out[b] = max of x[k] with ids[k] == b``, 0 for an empty bag); the
    gradient goes to the first element that attains the maximum, as PyTorch's ``max_indices``."""

    def forward(self, x, ids, n):
        xp = self.xp
        out = xp.full((n,) + x.shape[1:], -xp.inf, dtype=x.dtype)
        xp.maximum.at(out, ids, x)
        position = xp.arange(x.shape[0]).reshape((-1,) + (1,) * (x.ndim - 1))
        candidate = xp.where(x == out[ids], position, x.shape[0])
        first = xp.full(out.shape, x.shape[0], dtype=candidate.dtype)
        xp.minimum.at(first, ids, candidate)
        self.ids, self.winner = ids, candidate == first[ids]
        return xp.where(xp.isneginf(out), 0, out).astype(x.dtype, copy=False)

    def backward(self, grad):
        return SegmentGather.apply(grad, ids=self.ids) * self.constant(self.winner)


def _bag_ids(input: Tensor, offsets: Tensor | None, include_last_offset: bool):
    """(flat indices, bag id of each, number of bags) for a 2-D input or a 1-D input with offsets."""
    xp = input._storage.backend.xp
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError(
                "if input is 2D, then offsets has to be None, as input is treated is a mini-batch of fixed length "
                f"sequences. However, found offsets of type {type(offsets).__name__}"
            )
        bags, length = input.shape
        return input.reshape(-1), xp.repeat(xp.arange(bags), length), bags
    if input.dim() != 1:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    if offsets is None:
        raise ValueError("offsets has to be a 1D Tensor but got None")
    if offsets.dim() != 1:
        raise ValueError("offsets has to be a 1D Tensor")
    starts = offsets._array.astype(input._array.dtype, copy=False)
    bags = starts.shape[0] - 1 if include_last_offset else starts.shape[0]
    n = input.shape[0]
    if starts.shape[0] and (int(starts[0]) != 0 or bool((starts[1:] < starts[:-1]).any()) or int(starts[-1]) > n):
        raise RuntimeError(f"embedding_bag: offsets must start at 0, be non-decreasing and at most the input length "
                           f"({n}); got {starts.tolist() if hasattr(starts, 'tolist') else starts}")
    ids = xp.searchsorted(starts, xp.arange(n), side="right") - 1
    if include_last_offset:  # entries at or past the last offset belong to no bag
        ids = xp.where(ids >= bags, -1, ids)
    return input, ids, bags


def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None, max_norm: float | None = None,
                  norm_type: float = 2, scale_grad_by_freq: bool = False, mode: str = "mean",
                  sparse: bool = False, per_sample_weights: Tensor | None = None,
                  include_last_offset: bool = False, padding_idx: int | None = None) -> Tensor:
    """Sums, means or maxima of bags of embeddings without materializing the lookups per bag: a 2-D
    ``input`` is one bag per row; a 1-D ``input`` is split into bags at ``offsets``. ``padding_idx``
    entries are left out of their bag (and of the mean's count); an empty bag gives zeros. With
    ``sparse=True`` the weight gradient is a sparse COO tensor (one row per lookup)."""
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"mode has to be one of sum, mean or max, but got {mode}")
    if per_sample_weights is not None:
        if mode != "sum":
            raise NotImplementedError(
                f"embedding_bag: per_sample_weights was not None. per_sample_weights is only supported for "
                f"mode='sum' (got mode='{mode}'). Please open a feature request on GitHub."
            )
        if tuple(per_sample_weights.shape) != tuple(input.shape):
            raise ValueError(f"embedding_bag: If per_sample_weights ({list(per_sample_weights.shape)}) is not None, "
                             f"then it must have the same shape as the input ({list(input.shape)})")
    flat, ids, bags = _bag_ids(input, offsets, include_last_offset)
    xp = input._storage.backend.xp
    num_weights = weight.shape[0]
    if padding_idx is not None and padding_idx < 0:
        padding_idx += num_weights
    keep = ids >= 0
    if padding_idx is not None:
        keep = keep & (flat._array != padding_idx)
    positions = xp.nonzero(keep)[0]
    ids = ids[positions]
    kept = flat[flat.new_tensor(positions)] if positions.shape[0] != flat.shape[0] else flat
    rows = embedding(kept, weight, None, max_norm, norm_type, scale_grad_by_freq, sparse)
    if per_sample_weights is not None:
        scale = per_sample_weights.reshape(-1)
        if positions.shape[0] != scale.shape[0]:
            scale = SegmentGather.apply(scale, ids=positions)
        rows = rows * scale.unsqueeze(-1)
    if mode == "max":
        return SegmentMax.apply(rows, ids=ids, n=bags)
    total = SegmentSum.apply(rows, ids=ids, n=bags)
    if mode == "sum":
        return total
    counts = xp.bincount(ids, minlength=bags)[:bags]
    counts = xp.maximum(counts, 1).astype(rows._array.dtype).reshape(-1, 1)
    return total / total.new_tensor(counts)


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
        if tensor._kind == "batched":  # the count would differ between samples
            raise RuntimeError("When vmap-ing torch.nn.functional.one_hot, please provide an explicit positive "
                               "num_classes argument.")
        num_classes = int(tensor._array.max()) + 1
    elif num_classes < -1:
        raise RuntimeError("num_classes should be positive")
    if has_data and tensor.numel():
        if int(tensor._array.min()) < 0:
            raise RuntimeError("Class values must be non-negative.")
        if int(tensor._array.max()) >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    return OneHot.apply(tensor, num_classes)


__all__ = ["embedding", "embedding_bag", "one_hot"]
