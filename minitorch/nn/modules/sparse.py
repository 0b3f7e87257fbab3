"""Embedding: a lookup table of ``num_embeddings`` learnable vectors, rows picked by integer indices.

The weight starts N(0, 1), as in PyTorch, with the ``padding_idx`` row zeroed (and kept out of the
gradient). With ``sparse=True`` the weight gradient is a sparse COO tensor holding one row per lookup,
which ``optim.SGD``, ``optim.Adagrad`` and ``optim.SparseAdam`` apply touching only those rows.
EmbeddingBag reduces bags of lookups (sum, mean, max) without materializing them per bag.
"""

from __future__ import annotations

from ...autograd import grad_mode
from ...creation import empty
from ...tensor import Tensor
from .. import functional as F
from .. import init
from ..functional.sparse import _wrap_padding_idx
from ..parameter import Parameter
from .module import Module


class _EmbeddingTable(Module):
    """What Embedding and EmbeddingBag share: the (num_embeddings, embedding_dim) weight, fresh N(0, 1) with
    the ``padding_idx`` row zeroed, or a given ``_weight``."""

    def _init_weight(self, _weight: Tensor | None, requires_grad: bool, device=None, dtype=None) -> None:
        if _weight is None:
            shape = (self.num_embeddings, self.embedding_dim)
            self.weight = Parameter(empty(shape, device=device, dtype=dtype), requires_grad=requires_grad)
            self.reset_parameters()
        else:
            assert list(_weight.shape) == [self.num_embeddings, self.embedding_dim], (
                "Shape of weight does not match num_embeddings and embedding_dim"
            )
            self.weight = Parameter(_weight, requires_grad=requires_grad)

    def _lookup_options_repr(self) -> str:
        """The ``max_norm``, ``norm_type`` and ``scale_grad_by_freq`` part of ``extra_repr``, where not default."""
        s = ""
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        return s

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self) -> None:
        if self.padding_idx is not None:
            with grad_mode.no_grad():
                self.weight[self.padding_idx].fill_(0)


class Embedding(_EmbeddingTable):
    """``weight[input]``: input of any shape of int64/int32 indices, output ``input.shape + (embedding_dim,)``.

    ``max_norm`` renormalizes, in place, the rows a forward reads; ``scale_grad_by_freq`` divides each
    row's gradient by its count in the batch."""

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                 sparse: bool = False, _weight: Tensor | None = None, _freeze: bool = False, device=None,
                 dtype=None) -> None:
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.padding_idx = _wrap_padding_idx(padding_idx, num_embeddings)
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self._init_weight(_weight, not _freeze, device, dtype)
        self.sparse = sparse

    def forward(self, input: Tensor) -> Tensor:
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        s += self._lookup_options_repr()
        if self.sparse is not False:
            s += ", sparse=True"
        return s

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True, padding_idx: int | None = None,
                        max_norm: float | None = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        sparse: bool = False) -> Embedding:
        """An Embedding whose weight is ``embeddings`` (2-D, shared, not copied); ``freeze`` turns its grad off.
        The ``padding_idx`` row is kept as given (not zeroed), as in PyTorch."""
        assert embeddings.dim() == 2, "Embeddings parameter is expected to be 2-dimensional"
        rows, cols = embeddings.shape
        return cls(num_embeddings=rows, embedding_dim=cols, _weight=embeddings, _freeze=freeze,
                   padding_idx=padding_idx, max_norm=max_norm, norm_type=norm_type,
                   scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


class EmbeddingBag(_EmbeddingTable):
    """Sums, means or maxima of bags of embeddings (see ``F.embedding_bag``); ``sparse=True`` makes the
    weight gradient a sparse COO tensor."""

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm: float | None = None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                 _weight: Tensor | None = None, include_last_offset: bool = False, padding_idx: int | None = None,
                 device=None, dtype=None) -> None:
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.padding_idx = _wrap_padding_idx(padding_idx, num_embeddings, "padding_idx")
        self._init_weight(_weight, True, device, dtype)
        self.mode = mode
        self.sparse = sparse
        self.include_last_offset = include_last_offset

    def forward(self, input: Tensor, offsets: Tensor | None = None,
                per_sample_weights: Tensor | None = None) -> Tensor:
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type, self.scale_grad_by_freq,
                               self.mode, self.sparse, per_sample_weights, self.include_last_offset,
                               self.padding_idx)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        s += self._lookup_options_repr()
        s += f", mode='{self.mode}'"
        if self.sparse:
            s += ", sparse=True"
        if self.include_last_offset:
            s += ", include_last_offset=True"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        return s

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True, max_norm: float | None = None,
                        norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                        sparse: bool = False, include_last_offset: bool = False,
                        padding_idx: int | None = None) -> EmbeddingBag:
        assert embeddings.dim() == 2, "Embeddings parameter is expected to be 2-dimensional"
        rows, cols = embeddings.shape
        bag = cls(num_embeddings=rows, embedding_dim=cols, _weight=embeddings, max_norm=max_norm,
                  norm_type=norm_type, scale_grad_by_freq=scale_grad_by_freq, mode=mode, sparse=sparse,
                  include_last_offset=include_last_offset, padding_idx=padding_idx)
        bag.weight.requires_grad = not freeze
        return bag


__all__ = ["Embedding", "EmbeddingBag"]
