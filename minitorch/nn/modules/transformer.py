"""Attention layers: MultiheadAttention and the Transformer encoder/decoder stacks (Vaswani et al., 2017).

The maths lives in ``nn/functional/attention.py`` (``multi_head_attention_forward``,
``scaled_dot_product_attention``); these modules hold the parameters with PyTorch's names, shapes and
initialisation, and wire the residual blocks (post-norm by default, pre-norm with ``norm_first``).
PyTorch's fused "fast path" and nested tensors are not reproduced: every call takes the reference path,
which computes the same values.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

from ...creation import empty, full
from ...ops.shape import triu
from ...tensor import Tensor
from .. import functional as F
from .. import init
from ..functional.attention import _canonical_mask, _none_or_dtype, multi_head_attention_forward
from ..parameter import Parameter
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .normalization import LayerNorm

__all__ = [
    "MultiheadAttention", "TransformerEncoderLayer", "TransformerEncoder", "TransformerDecoderLayer",
    "TransformerDecoder", "Transformer",
]


def _generate_square_subsequent_mask(sz: int, device=None, dtype=None) -> Tensor:
    """The (sz, sz) causal float mask: 0 on and below the diagonal, -inf above (future positions)."""
    return triu(full((sz, sz), float("-inf"), dtype=dtype, device=device), diagonal=1)


def _get_seq_len(src: Tensor, batch_first: bool) -> int:
    if src.dim() == 2:
        return src.shape[0]  # unbatched (S, E)
    return src.shape[1 if batch_first else 0]


def _detect_is_causal_mask(mask: Tensor | None, is_causal: bool | None = None, size: int | None = None) -> bool:
    """``is_causal`` if given; otherwise whether ``mask`` is exactly the square causal mask."""
    if is_causal is not None or mask is None:
        return bool(is_causal)
    sz = size if size is not None else mask.shape[-2]
    causal = _generate_square_subsequent_mask(sz, device=mask.device, dtype=mask.dtype)
    return tuple(mask.shape) == tuple(causal.shape) and bool((mask == causal).all().item())


def _get_activation_fn(activation: str | Callable) -> Callable:
    if callable(activation):
        return activation
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


def _get_clones(module: Module, n: int) -> ModuleList:
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


class MultiheadAttention(Module):
    """``softmax(Q K^T / sqrt(head_dim)) V`` in ``num_heads`` parallel heads, then an output projection.

    Parameters as in PyTorch: ``in_proj_weight`` (3E, E) and ``in_proj_bias`` (3E) when key and value have
    the embedding size, else ``q_proj_weight``, ``k_proj_weight`` (E, kdim) and ``v_proj_weight``
    (E, vdim); ``out_proj`` a Linear(E, E); ``bias_k``/``bias_v`` (1, 1, E) with ``add_bias_kv``.
    Projection weights are Xavier-uniform, biases zero. Inputs are (L, N, E), or (N, L, E) with
    ``batch_first``, or unbatched (L, E); ``forward`` returns ``(attn_output, attn_weights)``."""

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: int | None = None,
                 vdim: int | None = None, batch_first: bool = False, device=None, dtype=None) -> None:
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(
                f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
                f"num_heads={num_heads} instead"
            )
        factory = {"device": device, "dtype": dtype}
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(empty((3 * embed_dim, embed_dim), **factory))
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(name, None)
        else:
            self.q_proj_weight = Parameter(empty((embed_dim, embed_dim), **factory))
            self.k_proj_weight = Parameter(empty((embed_dim, self.kdim), **factory))
            self.v_proj_weight = Parameter(empty((embed_dim, self.vdim), **factory))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(empty(3 * embed_dim, **factory))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias, **factory)
        if add_bias_kv:
            self.bias_k = Parameter(empty((1, 1, embed_dim), **factory))
            self.bias_v = Parameter(empty((1, 1, embed_dim), **factory))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def forward(self, query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Tensor | None = None,
                need_weights: bool = True, attn_mask: Tensor | None = None, average_attn_weights: bool = True,
                is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
        """query (L, N, E), key (S, N, kdim), value (S, N, vdim) (batch first with ``batch_first``).
        ``key_padding_mask`` (N, S) and ``attn_mask`` (L, S) or (N * num_heads, L, S): bool True means
        "may not attend", floats are added to the scores. Weights are (N, L, S) averaged over heads,
        or (N, num_heads, L, S); None when ``need_weights=False``."""
        batched = query.dim() == 3
        if self.batch_first and batched:
            # keep shared inputs shared, so self-attention stays one projection GEMM
            if query is key is value:
                query = key = value = query.transpose(0, 1)
            elif key is value:
                query, key = query.transpose(0, 1), key.transpose(0, 1)
                value = key
            else:
                query, key, value = (x.transpose(0, 1) for x in (query, key, value))
        separate = not self._qkv_same_embed_dim
        output, weights = multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight, self.in_proj_bias,
            self.bias_k, self.bias_v, self.add_zero_attn, self.dropout, self.out_proj.weight, self.out_proj.bias,
            training=self.training, key_padding_mask=key_padding_mask, need_weights=need_weights,
            attn_mask=attn_mask, use_separate_proj_weight=separate, q_proj_weight=self.q_proj_weight,
            k_proj_weight=self.k_proj_weight, v_proj_weight=self.v_proj_weight,
            average_attn_weights=average_attn_weights, is_causal=is_causal,
        )
        if self.batch_first and batched:
            output = output.transpose(0, 1)
        return output, weights


class _TransformerLayer(Module):
    """What encoder and decoder layers share: self-attention (plus attention over the encoder's ``memory`` in
    decoder layers, ``_cross_attention``), a feed-forward block, and one LayerNorm and one dropout per block."""

    _cross_attention = False

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: str | Callable = F.relu, layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device=None, dtype=None) -> None:
        factory = {"device": device, "dtype": dtype}
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first,
                                            **factory)
        if self._cross_attention:
            self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                                     batch_first=batch_first, **factory)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory)
        self.norm_first = norm_first
        # registered in PyTorch's order (norm1, norm2, [norm3], dropout1, ...): it fixes state_dict and repr
        blocks = range(1, 4 if self._cross_attention else 3)
        for i in blocks:
            self.add_module(f"norm{i}", LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory))
        for i in blocks:
            self.add_module(f"dropout{i}", Dropout(dropout))
        self.activation = _get_activation_fn(activation)

    def _residual(self, x: Tensor, norm: Module, block: Callable, *args) -> Tensor:
        """``x + block(norm(x))`` with ``norm_first``, else ``norm(x + block(x))``."""
        if self.norm_first:
            return x + block(norm(x), *args)
        return norm(x + block(x, *args))

    def _sa_block(self, x: Tensor, attn_mask, key_padding_mask, is_causal: bool = False) -> Tensor:
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False,
                           is_causal=is_causal)[0]
        return self.dropout1(x)

    def _feed_forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.dropout(self.activation(self.linear1(x))))


class TransformerEncoderLayer(_TransformerLayer):
    """Self-attention then a feed-forward block (``linear2(dropout(activation(linear1(x))))``), each with
    dropout, a residual connection and LayerNorm: after the residual (default) or, with ``norm_first``,
    on the block's input."""

    def forward(self, src: Tensor, src_mask: Tensor | None = None, src_key_padding_mask: Tensor | None = None,
                is_causal: bool = False) -> Tensor:
        """``src_mask`` (S, S) or (N * nhead, S, S), ``src_key_padding_mask`` (N, S); ``is_causal`` is a hint
        that ``src_mask`` is the causal mask."""
        src_key_padding_mask = _canonical_mask(src_key_padding_mask, "src_key_padding_mask",
                                               _none_or_dtype(src_mask), "src_mask", src.dtype)
        src_mask = _canonical_mask(src_mask, "src_mask", None, "", src.dtype, check_other=False)
        x = self._residual(src, self.norm1, self._sa_block, src_mask, src_key_padding_mask, is_causal)
        return self._residual(x, self.norm2, self._ff_block)

    def _ff_block(self, x: Tensor) -> Tensor:
        return self.dropout2(self._feed_forward(x))


class TransformerEncoder(Module):
    """``num_layers`` independent copies of ``encoder_layer`` applied in turn, then ``norm`` if given."""

    def __init__(self, encoder_layer: TransformerEncoderLayer, num_layers: int, norm: Module | None = None,
                 enable_nested_tensor: bool = True, mask_check: bool = True) -> None:
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor  # accepted for compatibility; no nested tensors here
        self.mask_check = mask_check

    def forward(self, src: Tensor, mask: Tensor | None = None, src_key_padding_mask: Tensor | None = None,
                is_causal: bool | None = None) -> Tensor:
        """``is_causal=None`` detects whether ``mask`` is the causal mask."""
        src_key_padding_mask = _canonical_mask(src_key_padding_mask, "src_key_padding_mask", _none_or_dtype(mask),
                                               "mask", src.dtype)
        mask = _canonical_mask(mask, "mask", None, "", src.dtype, check_other=False)
        batch_first = self.layers[0].self_attn.batch_first
        is_causal = _detect_is_causal_mask(mask, is_causal, _get_seq_len(src, batch_first))
        output = src
        for layer in self.layers:
            output = layer(output, src_mask=mask, is_causal=is_causal, src_key_padding_mask=src_key_padding_mask)
        return output if self.norm is None else self.norm(output)


class TransformerDecoderLayer(_TransformerLayer):
    """Self-attention over the target, attention over the encoder's ``memory``, then a feed-forward
    block; each with dropout, a residual connection and LayerNorm (post-norm, or pre-norm with
    ``norm_first``)."""

    _cross_attention = True

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None, memory_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None, memory_key_padding_mask: Tensor | None = None,
                tgt_is_causal: bool = False, memory_is_causal: bool = False) -> Tensor:
        x = self._residual(tgt, self.norm1, self._sa_block, tgt_mask, tgt_key_padding_mask, tgt_is_causal)
        x = self._residual(x, self.norm2, self._mha_block, memory, memory_mask, memory_key_padding_mask,
                           memory_is_causal)
        return self._residual(x, self.norm3, self._ff_block)

    def _mha_block(self, x: Tensor, mem: Tensor, attn_mask, key_padding_mask, is_causal: bool = False) -> Tensor:
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                                is_causal=is_causal, need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x: Tensor) -> Tensor:
        return self.dropout3(self._feed_forward(x))


class TransformerDecoder(Module):
    """``num_layers`` independent copies of ``decoder_layer`` applied in turn, then ``norm`` if given."""

    def __init__(self, decoder_layer: TransformerDecoderLayer, num_layers: int, norm: Module | None = None) -> None:
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None, memory_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None, memory_key_padding_mask: Tensor | None = None,
                tgt_is_causal: bool | None = None, memory_is_causal: bool = False) -> Tensor:
        """``tgt_is_causal=None`` detects whether ``tgt_mask`` is the causal mask."""
        batch_first = self.layers[0].self_attn.batch_first
        tgt_is_causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal, _get_seq_len(tgt, batch_first))
        output = tgt
        for layer in self.layers:
            output = layer(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                           tgt_key_padding_mask=tgt_key_padding_mask, memory_key_padding_mask=memory_key_padding_mask,
                           tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)
        return output if self.norm is None else self.norm(output)


class Transformer(Module):
    """The encoder-decoder model of "Attention Is All You Need": ``num_encoder_layers`` encoder layers and
    ``num_decoder_layers`` decoder layers, each stack followed by a LayerNorm; every matrix parameter is
    re-initialised Xavier-uniform, as PyTorch does."""

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6, num_decoder_layers: int = 6,
                 dim_feedforward: int = 2048, dropout: float = 0.1, activation: str | Callable = F.relu,
                 custom_encoder: Module | None = None, custom_decoder: Module | None = None,
                 layer_norm_eps: float = 1e-5, batch_first: bool = False, norm_first: bool = False, bias: bool = True,
                 device=None, dtype=None) -> None:
        factory = {"device": device, "dtype": dtype}
        super().__init__()

        def stack(custom: Module | None, layer_type: type, stack_type: type, num_layers: int) -> Module:
            if custom is not None:
                return custom
            layer = layer_type(d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first,
                               norm_first, bias, **factory)
            return stack_type(layer, num_layers, LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory))

        self.encoder = stack(custom_encoder, TransformerEncoderLayer, TransformerEncoder, num_encoder_layers)
        self.decoder = stack(custom_decoder, TransformerDecoderLayer, TransformerDecoder, num_decoder_layers)
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src: Tensor, tgt: Tensor, src_mask: Tensor | None = None, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None, src_key_padding_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None, memory_key_padding_mask: Tensor | None = None,
                src_is_causal: bool | None = None, tgt_is_causal: bool | None = None,
                memory_is_causal: bool = False) -> Tensor:
        batch_dim = 0 if self.batch_first else 1
        if src.dim() == 3 and src.shape[batch_dim] != tgt.shape[batch_dim]:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=tgt_is_causal,
                            memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device=None, dtype=None) -> Tensor:
        """The (sz, sz) causal mask for ``tgt_mask``: -inf above the diagonal, 0 elsewhere."""
        return _generate_square_subsequent_mask(sz, device=device, dtype=dtype)
