"""Scaled dot-product attention: ``softmax(Q K^T * scale + mask) V`` over the last two dims.

Composed from differentiable ops (batched matmul, masked_fill, softmax, dropout), so gradients and
double backward come from their rules. A query row whose keys are all masked out gets a zero output
(PyTorch's ``_safe_softmax`` in its math backend) rather than NaN, and a zero gradient.
"""

from __future__ import annotations

import math
import warnings

from ..._autocast_state import autocast_op
from ..._dtype import bool as bool_dtype
from ...creation import ones, zeros, zeros_like
from ...ops.arguments import user_stacklevel
from ...ops.comparison import where
from ...ops.shape import cat
from ...tensor import Tensor
from .activation import softmax
from .dropout import dropout
from .linear import linear
from .padding import pad


def _expand_heads(t: Tensor, heads: int) -> Tensor:
    """Grouped-query attention: repeat each of ``t``'s heads (dim -3) ``heads // t.size(-3)`` times in place
    (PyTorch's ``repeat_interleave`` along dim -3), as an expanded view then one reshape."""
    groups = heads // t.shape[-3]
    if groups == 1:
        return t
    lead, kv_heads, s, e = tuple(t.shape[:-3]), t.shape[-3], t.shape[-2], t.shape[-1]
    return t.unsqueeze(-3).expand(lead + (kv_heads, groups, s, e)).reshape(lead + (heads, s, e))


def _check_sdpa_inputs(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None, enable_gqa: bool) -> None:
    shapes = f"query {list(query.shape)}, key {list(key.shape)}, value {list(value.shape)}"
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise RuntimeError(f"scaled_dot_product_attention: expected inputs of at least 2 dims, but got {shapes}")
    if not (query.dtype is key.dtype is value.dtype):
        raise RuntimeError(
            "Expected query, key, and value to have the same dtype, but got query.dtype: "
            f"{query.dtype} key.dtype: {key.dtype} and value.dtype: {value.dtype} instead."
        )
    if not (query.device == key.device == value.device):
        raise RuntimeError(
            "Expected query, key, and value to have the same device type, but got query.device: "
            f"{query.device} key.device: {key.device} and value.device: {value.device} instead."
        )
    if not query.dtype.is_floating_point:
        raise RuntimeError(f"scaled_dot_product_attention: expected floating point inputs, but got {query.dtype}")
    if query.shape[-1] != key.shape[-1] or key.shape[-2] != value.shape[-2]:
        raise RuntimeError(
            f"scaled_dot_product_attention: query and key must share the embedding size (dim -1) and key and value "
            f"the sequence length (dim -2), but got {shapes}"
        )
    if enable_gqa and query.dim() >= 3 and key.dim() >= 3:
        for name, t in (("key", key), ("value", value)):
            if query.shape[-3] % t.shape[-3]:
                raise RuntimeError(
                    f"scaled_dot_product_attention: number of heads in {name} ({t.shape[-3]}) must divide the "
                    f"number of heads in query ({query.shape[-3]}) when enable_gqa=True; got {shapes}"
                )
    if attn_mask is not None and attn_mask.dtype.name != "bool" and not attn_mask.dtype.is_floating_point:
        raise RuntimeError(
            f"Expected attn_mask dtype to be bool or float or to match query dtype, but got attn_mask.dtype: "
            f"{attn_mask.dtype} and  query.dtype: {query.dtype} instead."
        )


@autocast_op("lower")
def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None = None,
                                 dropout_p: float = 0.0, is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """Attention of ``query`` (..., L, E) over ``key`` (..., S, E) and ``value`` (..., S, Ev) -> (..., L, Ev).

    ``attn_mask`` broadcasts to (..., L, S): a bool mask says which keys each query may attend to
    (True = attend), a float mask is added to the scores. ``is_causal`` applies the top-left aligned
    lower-triangular mask (it excludes ``attn_mask``). ``scale`` defaults to ``1 / sqrt(E)``.
    ``dropout_p`` drops attention weights (always, as in PyTorch: pass 0.0 in evaluation).
    ``enable_gqa`` lets key/value have fewer heads (dim -3) than query, each shared by a group of query heads."""
    _check_sdpa_inputs(query, key, value, attn_mask, enable_gqa)
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True")
    if enable_gqa and query.dim() >= 3:
        key, value = _expand_heads(key, query.shape[-3]), _expand_heads(value, query.shape[-3])
    length, source = query.shape[-2], key.shape[-2]
    scale_factor = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    scores = (query * scale_factor) @ key.transpose(-2, -1)
    if is_causal:
        attn_mask = ones(length, source, dtype=bool_dtype, device=query.device).tril()
    if attn_mask is not None:
        if attn_mask.dtype.name == "bool":
            scores = scores.masked_fill(attn_mask.logical_not(), float("-inf"))
        else:
            scores = scores + attn_mask
    weights = softmax(scores, -1) if attn_mask is None or is_causal else _safe_softmax(scores)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, training=True)
    return weights @ value


def _safe_softmax(scores: Tensor) -> Tensor:
    """softmax over the last dim, with rows that are entirely ``-inf`` (fully masked) giving zeros.

    Such rows are set to 0 before the softmax (so neither the forward nor the backward sees
    ``-inf - -inf``) and their result is replaced by 0, which also gives them a zero gradient."""
    masked_rows = scores.isneginf().all(-1, keepdim=True)
    return where(masked_rows, 0.0, softmax(scores.masked_fill(masked_rows, 0.0), -1))


# multi-head attention -----------------------------------------------------------------------------


def _none_or_dtype(input: Tensor | None):
    """The dtype of an optional mask (for ``_canonical_mask``'s mismatch warning)."""
    if input is None:
        return None
    if isinstance(input, Tensor):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or torch.Tensor")


def _canonical_mask(mask: Tensor | None, mask_name: str, other_type, other_name: str, target_type,
                    check_other: bool = True) -> Tensor | None:
    """An additive float mask from a bool one (True -> -inf: "may not attend", PyTorch's nn convention);
    float masks pass through unchanged."""
    if mask is None:
        return None
    if mask.dtype is not bool_dtype and not mask.dtype.is_floating_point:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype is not other_type:
        warnings.warn(
            f"Support for mismatched {mask_name} and {other_name} is deprecated. Use same type for both instead.",
            stacklevel=user_stacklevel(),
        )
    if mask.dtype is bool_dtype:
        return zeros_like(mask, dtype=target_type).masked_fill(mask, float("-inf"))
    return mask


def _mha_shape_check(query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Tensor | None,
                     attn_mask: Tensor | None, num_heads: int) -> bool:
    """Check the ranks multi-head attention accepts; says whether the input is batched."""
    rank = query.dim()
    if rank not in (2, 3):
        raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {rank}-D query tensor")
    batched = rank == 3
    which = "batched (3-D)" if batched else "unbatched (2-D)"
    if key.dim() != rank or value.dim() != rank:
        raise AssertionError(
            f"For {which} `query`, expected `key` and `value` to be {rank}-D but found "
            f"{key.dim()}-D and {value.dim()}-D tensors respectively"
        )
    if key_padding_mask is not None and key_padding_mask.dim() != rank - 1:
        raise AssertionError(
            f"For {which} `query`, expected `key_padding_mask` to be `None` or {rank - 1}-D but found "
            f"{key_padding_mask.dim()}-D tensor instead"
        )
    if attn_mask is not None:
        if attn_mask.dim() not in (2, 3):
            raise AssertionError(
                f"For {which} `query`, expected `attn_mask` to be `None`, 2-D or 3-D but found "
                f"{attn_mask.dim()}-D tensor instead"
            )
        expected = (num_heads, query.shape[0], key.shape[0])  # an unbatched 3-D mask is per head
        if not batched and attn_mask.dim() == 3 and tuple(attn_mask.shape) != expected:
            raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got {attn_mask.shape}")
    return batched


def _in_projection_packed(query: Tensor, key: Tensor, value: Tensor, weight: Tensor, bias: Tensor | None) -> tuple:
    """q, k, v from one packed (3E, E) weight: self-attention is a single GEMM, and key == value two."""
    if query is key is value:
        return linear(query, weight, bias).chunk(3, -1)
    e = weight.shape[0] // 3

    def rows(t: Tensor | None, start: int, stop: int | None = None) -> Tensor | None:
        return None if t is None else t[start:stop]

    q = linear(query, rows(weight, 0, e), rows(bias, 0, e))
    if key is value:
        return (q, *linear(key, rows(weight, e), rows(bias, e)).chunk(2, -1))
    k = linear(key, rows(weight, e, 2 * e), rows(bias, e, 2 * e))
    return q, k, linear(value, rows(weight, 2 * e), rows(bias, 2 * e))


def multi_head_attention_forward(
    query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
    in_proj_weight: Tensor | None, in_proj_bias: Tensor | None, bias_k: Tensor | None, bias_v: Tensor | None,
    add_zero_attn: bool, dropout_p: float, out_proj_weight: Tensor, out_proj_bias: Tensor | None,
    training: bool = True, key_padding_mask: Tensor | None = None, need_weights: bool = True,
    attn_mask: Tensor | None = None, use_separate_proj_weight: bool = False, q_proj_weight: Tensor | None = None,
    k_proj_weight: Tensor | None = None, v_proj_weight: Tensor | None = None, static_k: Tensor | None = None,
    static_v: Tensor | None = None, average_attn_weights: bool = True, is_causal: bool = False,
) -> tuple[Tensor, Tensor | None]:
    """Multi-head attention on sequence-first inputs: query (L, N, E), key (S, N, kdim), value (S, N, vdim)
    (or unbatched (L, E), ...). Returns ``(attn_output (L, N, E), attn_weights)``; the weights are
    (N, L, S) averaged over heads, (N, num_heads, L, S) with ``average_attn_weights=False``, or None when
    ``need_weights=False`` (then the heads go through ``scaled_dot_product_attention``).

    Masks follow nn's convention: in a bool ``attn_mask`` (L, S) or (N * num_heads, L, S) and
    ``key_padding_mask`` (N, S), True means "may not attend"; float masks are added to the scores.
    ``is_causal`` is a hint that ``attn_mask`` is the causal mask (an ``attn_mask`` is still required)."""
    batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:  # shared inputs stay shared (self-attention projects with one GEMM)
        same_kv, same_qk = key is value, query is key
        query = query.unsqueeze(1)
        key = query if same_qk else key.unsqueeze(1)
        value = key if same_kv else value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", _none_or_dtype(attn_mask), "attn_mask",
                                       query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError(
            "Need attn_mask if specifying the is_causal hint. You may use the Transformer module method "
            "`generate_square_subsequent_mask` to create this mask."
        )
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # scaled_dot_product_attention builds the causal mask itself
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
        if key_padding_mask is not None:
            is_causal = False  # the merged mask is no longer causal
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(
                f"key's sequence and batch dims {key.shape[:2]} do not match value's {value.shape[:2]}"
            )
        b_q, b_k, b_v = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
        q, k, v = linear(query, q_proj_weight, b_q), linear(key, k_proj_weight, b_k), linear(value, v_proj_weight, b_v)
    else:
        if key.shape != value.shape:
            raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)

    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, key.shape[0]):
                raise RuntimeError(
                    f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be {(tgt_len, key.shape[0])}."
                )
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            expected = (bsz * num_heads, tgt_len, key.shape[0])
            if tuple(attn_mask.shape) != expected:
                raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be {expected}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")

    if (bias_k is None) != (bias_v is None):
        raise AssertionError("bias_k and bias_v must be given together")
    if bias_k is not None:
        if static_k is not None or static_v is not None:
            raise AssertionError("bias cannot be added to static key.")
        k = cat([k, bias_k.repeat(1, bsz, 1)])
        v = cat([v, bias_v.repeat(1, bsz, 1)])
        attn_mask = None if attn_mask is None else pad(attn_mask, (0, 1))
        key_padding_mask = None if key_padding_mask is None else pad(key_padding_mask, (0, 1))

    # heads become batch entries: (N * num_heads, seq, head_dim)
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = _heads_first(k, static_k, "static_k", bsz * num_heads, head_dim)
    v = _heads_first(v, static_v, "static_v", bsz * num_heads, head_dim)
    if add_zero_attn:
        k = cat([k, zeros((bsz * num_heads, 1, head_dim), dtype=k.dtype, device=k.device)], 1)
        v = cat([v, zeros((bsz * num_heads, 1, head_dim), dtype=v.dtype, device=v.device)], 1)
        attn_mask = None if attn_mask is None else pad(attn_mask, (0, 1))
        key_padding_mask = None if key_padding_mask is None else pad(key_padding_mask, (0, 1))
    src_len = k.shape[1]

    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (bsz, src_len):
            raise AssertionError(
                f"expecting key_padding_mask shape of {(bsz, src_len)}, but got {key_padding_mask.shape}"
            )
        key_padding_mask = key_padding_mask.reshape(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1)
        key_padding_mask = key_padding_mask.reshape(bsz * num_heads, 1, src_len)
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask
    if not training:
        dropout_p = 0.0

    if need_weights:
        scores = (q * math.sqrt(1.0 / head_dim)) @ k.transpose(-2, -1)
        if attn_mask is not None:
            scores = scores + attn_mask
        weights = softmax(scores, -1)
        if dropout_p > 0.0:
            weights = dropout(weights, dropout_p)
        output = weights @ v
        weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(1)
    else:
        if attn_mask is not None:
            attn_mask = attn_mask.unsqueeze(0) if attn_mask.shape[0] == 1 else attn_mask.reshape(
                bsz, num_heads, -1, src_len)
        output = scaled_dot_product_attention(
            q.reshape(bsz, num_heads, tgt_len, head_dim), k.reshape(bsz, num_heads, src_len, head_dim),
            v.reshape(bsz, num_heads, src_len, head_dim), attn_mask, dropout_p, is_causal,
        )
        weights = None
    # (N * heads, L, head_dim) -> (L, N, E), then the output projection
    output = output.reshape(bsz, num_heads, tgt_len, head_dim).permute(2, 0, 1, 3).reshape(tgt_len, bsz, embed_dim)
    output = linear(output, out_proj_weight, out_proj_bias)
    if not batched:
        output = output.squeeze(1)
        weights = None if weights is None else weights.squeeze(0)
    return output, weights


def _heads_first(t: Tensor, static: Tensor | None, name: str, batch_heads: int, head_dim: int) -> Tensor:
    """(S, N, E) -> (N * num_heads, S, head_dim), or the caller's precomputed ``static`` one."""
    if static is None:
        return t.reshape(t.shape[0], batch_heads, head_dim).transpose(0, 1)
    if static.shape[0] != batch_heads:
        raise AssertionError(f"expecting {name}.size(0) of {batch_heads}, but got {static.shape[0]}")
    if static.shape[2] != head_dim:
        raise AssertionError(f"expecting {name}.size(2) of {head_dim}, but got {static.shape[2]}")
    return static


__all__ = ["scaled_dot_product_attention", "multi_head_attention_forward"]
