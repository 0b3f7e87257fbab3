"""F.scaled_dot_product_attention, nn.MultiheadAttention and the Transformer layers: values against
numpy references written head by head from the papers' equations (with the modules' own weights),
gradients in float64, causal masks, options and errors."""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minitorch as torch
import minitorch.nn as nn
import minitorch.nn.functional as F
from minitorch.autograd import gradcheck, gradgradcheck
from minitorch.nn.functional.attention import scaled_dot_product_attention as sdpa
from minitorch.testing.strategies import tensors

fixture_ok = settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
RNG = np.random.default_rng(5)
F64 = torch.float64


def npy(t):
    return t.detach().cpu().numpy()


def t(a, device="cpu", **kwargs):
    return torch.tensor(a, device=device, **kwargs)


def np_softmax(s):
    """Softmax over the last dim; rows that are all -inf give zeros (PyTorch's SDPA convention)."""
    m = s.max(-1, keepdims=True)
    m = np.where(np.isneginf(m), 0, m)
    e = np.exp(s - m)
    total = e.sum(-1, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)


def np_sdpa(q, k, v, mask=None, is_causal=False, scale=None):
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    s = q @ np.swapaxes(k, -1, -2) * scale
    if is_causal:
        mask = np.tril(np.ones((q.shape[-2], k.shape[-2]), dtype=bool))
    if mask is not None:
        s = np.where(mask, s, -np.inf) if mask.dtype == bool else s + mask
    return np_softmax(s) @ v


def randomize(module):
    """Non-zero biases everywhere (the default init zeroes attention biases, which would hide bugs)."""
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.tensor(RNG.standard_normal(tuple(p.shape)) * 0.5, dtype=p.dtype, device=p.device))
    return module


# scaled_dot_product_attention -----------------------------------------------------------------------


@fixture_ok
@given(data=st.data())
def test_sdpa_matches_numpy(device, data):
    lead = data.draw(st.lists(st.integers(1, 2), max_size=2).map(tuple))
    L, S, E, Ev = (data.draw(st.integers(1, 4)) for _ in range(4))
    q = data.draw(tensors(lead + (L, E), device=device))
    k = data.draw(tensors(lead + (S, E), device=device))
    v = data.draw(tensors(lead + (S, Ev), device=device))
    kind = data.draw(st.sampled_from(["none", "bool", "float", "causal"]))
    scale = data.draw(st.sampled_from([None, 0.3]))
    mask = None
    if kind == "bool":
        mask = RNG.random((L, S)) < 0.6  # may leave a row fully masked: that row's output is 0
    elif kind == "float":
        mask = RNG.standard_normal((1,) * len(lead) + (L, S))
    out = sdpa(q, k, v, None if mask is None else t(mask, device), is_causal=kind == "causal", scale=scale)
    expected = np_sdpa(npy(q), npy(k), npy(v), mask, kind == "causal", scale)
    assert tuple(out.shape) == lead + (L, Ev)
    np.testing.assert_allclose(npy(out), expected, rtol=1e-10, atol=1e-12)


def test_sdpa_fully_masked_row_is_zero_with_zero_grad(device):
    q = t(RNG.standard_normal((2, 3, 4)), device, requires_grad=True)
    mask = t(np.array([[True, False], [False, False], [True, True]]), device)
    kv = t(RNG.standard_normal((2, 2, 4)), device, requires_grad=True)
    out = sdpa(q, kv, kv, attn_mask=mask)
    np.testing.assert_array_equal(npy(out)[:, 1], 0)
    out.sum().backward()
    assert np.isfinite(npy(q.grad)).all() and np.isfinite(npy(kv.grad)).all()
    np.testing.assert_array_equal(npy(q.grad)[:, 1], 0)


def test_sdpa_grouped_query_attention(device):
    q, k, v = RNG.standard_normal((2, 4, 3, 5)), RNG.standard_normal((2, 2, 6, 5)), RNG.standard_normal((2, 2, 6, 3))
    out = sdpa(t(q, device), t(k, device), t(v, device), enable_gqa=True)
    expected = np_sdpa(q, np.repeat(k, 2, axis=1), np.repeat(v, 2, axis=1))
    np.testing.assert_allclose(npy(out), expected, rtol=1e-12)


def test_sdpa_dropout_drops_weights(device):
    """With value = identity the output is the (dropped, rescaled) weight matrix itself."""
    torch.manual_seed(0)
    q, k = RNG.standard_normal((8, 5, 4)), RNG.standard_normal((8, 5, 4))
    weights = np_softmax(q @ np.swapaxes(k, -1, -2) / 2)
    out = npy(sdpa(t(q, device), t(k, device), t(np.broadcast_to(np.eye(5), (8, 5, 5)).copy(), device), dropout_p=0.5))
    dropped = out == 0
    assert 0.3 < dropped.mean() < 0.7
    np.testing.assert_allclose(out[~dropped], 2 * weights[~dropped], rtol=1e-12)
    np.testing.assert_array_equal(npy(sdpa(t(q, device), t(k, device), t(q, device), dropout_p=1.0)), 0)


@given(data=st.data())
@settings(max_examples=10)
def test_sdpa_gradcheck(data):
    L, S, E = (data.draw(st.integers(1, 3)) for _ in range(3))
    lead = (data.draw(st.integers(1, 2)),)
    q = data.draw(tensors(lead + (L, E), requires_grad=True))
    k = data.draw(tensors(lead + (S, E), requires_grad=True))
    v = data.draw(tensors(lead + (S, 2), requires_grad=True))
    kind = data.draw(st.sampled_from(["none", "bool", "float", "causal"]))
    if kind == "float":
        mask = data.draw(tensors((L, S), requires_grad=True))
        inputs = (q, k, v, mask)

        def fn(q, k, v, mask):
            return sdpa(q, k, v, attn_mask=mask)
    else:
        bool_mask = t(RNG.random((L, S)) < 0.7) if kind == "bool" else None
        inputs = (q, k, v)

        def fn(q, k, v):
            return sdpa(q, k, v, attn_mask=bool_mask, is_causal=kind == "causal", scale=0.7)

    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


def test_sdpa_causal_ignores_the_future(device):
    q, k, v = (t(RNG.standard_normal((2, 5, 3)), device, requires_grad=True) for _ in range(3))
    out = sdpa(q, k, v, is_causal=True)
    for pos in range(5):
        changed = [x.detach().clone() for x in (q, k, v)]
        for x in changed:
            x[:, pos + 1:] = x[:, pos + 1:] * 3 + 1
        np.testing.assert_allclose(npy(sdpa(*changed, is_causal=True))[:, : pos + 1], npy(out)[:, : pos + 1],
                                   rtol=1e-12)
    out[:, 2].sum().backward()
    for x in (q, k, v):
        np.testing.assert_array_equal(npy(x.grad)[:, 3:], 0)
    assert np.abs(npy(k.grad)[:, :3]).sum() > 0


def test_sdpa_errors(device):
    q = torch.zeros(2, 3, 4, device=device)
    with pytest.raises(RuntimeError, match="Explicit attn_mask should not be set when is_causal=True"):
        sdpa(q, q, q, attn_mask=torch.ones(3, 3, dtype=torch.bool, device=device), is_causal=True)
    with pytest.raises(RuntimeError, match="Expected query, key, and value to have the same dtype"):
        sdpa(q, q.double(), q)
    with pytest.raises(RuntimeError, match=r"query \[2, 3, 4\], key \[2, 3, 5\]"):
        sdpa(q, torch.zeros(2, 3, 5, device=device), q)


# MultiheadAttention ----------------------------------------------------------------------------------


def np_mha(m, query, key, value, key_padding_mask=None, attn_mask=None, average=True):
    """Sequence-first numpy multi-head attention, one (batch, head) pair at a time."""
    E, heads = m.embed_dim, m.num_heads
    d = E // heads
    if m._qkv_same_embed_dim:
        w_q, w_k, w_v = np.split(npy(m.in_proj_weight), 3)
    else:
        w_q, w_k, w_v = npy(m.q_proj_weight), npy(m.k_proj_weight), npy(m.v_proj_weight)
    b_q, b_k, b_v = np.split(npy(m.in_proj_bias), 3) if m.in_proj_bias is not None else (0, 0, 0)
    Q, K, V = query @ w_q.T + b_q, key @ w_k.T + b_k, value @ w_v.T + b_v
    L, N = Q.shape[:2]

    def to_float(a):
        return np.where(a, -np.inf, 0.0) if a.dtype == bool else a

    add = np.zeros((N, heads, L, K.shape[0]))
    if attn_mask is not None:
        add = add + to_float(attn_mask).reshape((-1, heads, L, K.shape[0]) if attn_mask.ndim == 3 else (L, -1))
    if key_padding_mask is not None:
        add = add + to_float(key_padding_mask)[:, None, None, :]
    extra = []
    if m.bias_k is not None:
        extra.append((np.broadcast_to(npy(m.bias_k), (1, N, E)), np.broadcast_to(npy(m.bias_v), (1, N, E))))
    if m.add_zero_attn:
        extra.append((np.zeros((1, N, E)), np.zeros((1, N, E))))
    for k_extra, v_extra in extra:
        K, V = np.concatenate([K, k_extra]), np.concatenate([V, v_extra])
        add = np.concatenate([add, np.zeros(add.shape[:3] + (1,))], -1)
    out = np.zeros((L, N, E))
    weights = np.zeros((N, heads, L, K.shape[0]))
    for n in range(N):
        for j in range(heads):
            cols = slice(j * d, (j + 1) * d)
            w = np_softmax(Q[:, n, cols] @ K[:, n, cols].T / math.sqrt(d) + add[n, j])
            out[:, n, cols] = w @ V[:, n, cols]
            weights[n, j] = w
    out = out @ npy(m.out_proj.weight).T + (npy(m.out_proj.bias) if m.out_proj.bias is not None else 0)
    return out, (weights.mean(1) if average else weights)


@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_mha_matches_numpy(device, data):
    heads = data.draw(st.sampled_from([1, 2]))
    E = heads * data.draw(st.integers(1, 2))
    L, S, N = (data.draw(st.integers(1, 3)) for _ in range(3))
    self_attention = data.draw(st.booleans())
    kdim, vdim = (E, E) if self_attention else (data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3)))
    opts = {"bias": data.draw(st.booleans()), "add_bias_kv": data.draw(st.booleans()),
            "add_zero_attn": data.draw(st.booleans()), "batch_first": data.draw(st.booleans())}
    m = randomize(nn.MultiheadAttention(E, heads, kdim=kdim, vdim=vdim, dtype=F64, device=device, **opts))
    batched = data.draw(st.booleans())
    if self_attention:
        S = L
    query = RNG.standard_normal((L, N, E))
    key = query if self_attention else RNG.standard_normal((S, N, kdim))
    value = query if self_attention else RNG.standard_normal((S, N, vdim))
    kpm = attn_mask = None
    if data.draw(st.booleans()):
        kpm = RNG.random((N, S)) < 0.4
        kpm[:, 0] = False  # every query keeps a key, so no row is fully masked
        kpm = kpm if data.draw(st.booleans()) else np.where(kpm, -np.inf, RNG.standard_normal((N, S)))
    mask_kind = data.draw(st.sampled_from([None, "bool2d", "float2d", "bool3d", "float3d"]))
    if mask_kind:
        shape = (L, S) if mask_kind.endswith("2d") else (N * heads, L, S)
        attn_mask = RNG.random(shape) < 0.4 if mask_kind.startswith("bool") else RNG.standard_normal(shape)
        if attn_mask.dtype == bool:
            attn_mask[..., 0] = False
        elif kpm is not None and kpm.dtype == bool:
            kpm = np.where(kpm, -np.inf, 0.0)  # same mask types (mismatches are deprecated)
    if attn_mask is not None and attn_mask.dtype == bool and kpm is not None and kpm.dtype != bool:
        kpm = kpm > 0
        kpm[:, 0] = False
    average = data.draw(st.booleans())
    need_weights = data.draw(st.booleans())
    if not batched:
        query, key, value, N = query[:, :1], key[:, :1], value[:, :1], 1
        kpm = None if kpm is None else kpm[:1]
        if attn_mask is not None and attn_mask.ndim == 3:
            attn_mask = attn_mask[:heads]
    expected, expected_weights = np_mha(m, query, key, value, kpm, attn_mask, average)

    def prep(a):
        if not batched:
            return t(a[:, 0], device)
        return t(a.transpose(1, 0, 2), device) if opts["batch_first"] else t(a, device)

    q_in = prep(query)
    k_in = q_in if self_attention else prep(key)
    v_in = q_in if self_attention else prep(value)
    kpm_in = None if kpm is None else t(kpm if batched else kpm[0], device)
    out, weights = m(q_in, k_in, v_in, key_padding_mask=kpm_in,
                     attn_mask=None if attn_mask is None else t(attn_mask, device),
                     need_weights=need_weights, average_attn_weights=average)
    if not batched:
        expected, expected_weights = expected[:, 0], expected_weights[0]
    elif opts["batch_first"]:
        expected = expected.transpose(1, 0, 2)
    np.testing.assert_allclose(npy(out), expected, rtol=1e-9, atol=1e-12)
    if need_weights:
        np.testing.assert_allclose(npy(weights), expected_weights, rtol=1e-9, atol=1e-12)
    else:
        assert weights is None


def leaf(a):
    return torch.tensor(a).detach().requires_grad_()


def test_mha_gradcheck():
    m = randomize(nn.MultiheadAttention(4, 2, kdim=3, vdim=2, add_bias_kv=True, dtype=F64))
    q = leaf(RNG.standard_normal((2, 2, 4)))
    k = torch.tensor(RNG.standard_normal((3, 2, 6)))[..., ::2].detach().requires_grad_()  # non-contiguous
    v = torch.tensor(RNG.standard_normal((2, 3, 2))).transpose(0, 1).detach().requires_grad_()
    mask = torch.tensor([[False, True, False], [False, False, True]])
    params = list(m.parameters())

    def fn(q, k, v, *params):
        return m(q, k, v, attn_mask=mask, average_attn_weights=False)

    assert gradcheck(fn, (q, k, v, *params), fast_mode=True)
    assert gradgradcheck(lambda q, k, v: m(q, k, v, need_weights=False)[0], (q, k, v))
    self_attention = randomize(nn.MultiheadAttention(2, 1, dtype=F64))
    x = leaf(RNG.standard_normal((2, 2)))
    assert gradgradcheck(lambda x, w: self_attention(x, x, x)[0], (x, self_attention.in_proj_weight))


def test_mha_parameters_and_init(device):
    m = nn.MultiheadAttention(6, 3, device=device)
    assert {n: tuple(p.shape) for n, p in m.named_parameters()} == {
        "in_proj_weight": (18, 6), "in_proj_bias": (18,), "out_proj.weight": (6, 6), "out_proj.bias": (6,)}
    assert m.head_dim == 2 and m.q_proj_weight is None
    np.testing.assert_array_equal(npy(m.in_proj_bias), 0)
    np.testing.assert_array_equal(npy(m.out_proj.bias), 0)
    bound = math.sqrt(6 / (18 + 6))  # xavier_uniform_ on (3E, E)
    assert np.abs(npy(m.in_proj_weight)).max() <= bound
    m = nn.MultiheadAttention(4, 2, bias=False, add_bias_kv=True, kdim=3, vdim=5, device=device)
    assert {n: tuple(p.shape) for n, p in m.named_parameters()} == {
        "q_proj_weight": (4, 4), "k_proj_weight": (4, 3), "v_proj_weight": (4, 5), "bias_k": (1, 1, 4),
        "bias_v": (1, 1, 4), "out_proj.weight": (4, 4)}
    assert m.in_proj_weight is None and m.in_proj_bias is None


def test_mha_causal_hint_and_dropout(device):
    m = randomize(nn.MultiheadAttention(4, 2, dtype=F64, dropout=0.5, device=device)).eval()
    x = t(RNG.standard_normal((5, 2, 4)), device, requires_grad=True)
    causal = nn.Transformer.generate_square_subsequent_mask(5, device=device, dtype=F64)
    hinted, _ = m(x, x, x, attn_mask=causal, is_causal=True, need_weights=False)
    explicit, weights = m(x, x, x, attn_mask=causal)
    np.testing.assert_allclose(npy(hinted), npy(explicit), rtol=1e-12)
    np.testing.assert_array_equal(npy(weights)[:, np.triu_indices(5, 1)[0], np.triu_indices(5, 1)[1]], 0)
    hinted[2].sum().backward()
    np.testing.assert_array_equal(npy(x.grad)[3:], 0)
    m.train()
    torch.manual_seed(1)
    assert not np.allclose(npy(m(x, x, x)[0]), npy(explicit))


def test_mha_errors(device):
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        nn.MultiheadAttention(5, 2)
    with pytest.raises(ValueError, match="embed_dim and num_heads must be greater than 0"):
        nn.MultiheadAttention(0, 2)
    m = nn.MultiheadAttention(4, 2, device=device)
    x = torch.zeros(3, 2, 4, device=device)
    with pytest.raises(RuntimeError, match=r"The shape of the 2D attn_mask is .*\[3, 4\]\), but should be \(3, 3\)"):
        m(x, x, x, attn_mask=torch.zeros(3, 4, device=device))
    with pytest.raises(RuntimeError, match="The shape of the 3D attn_mask is"):
        m(x, x, x, attn_mask=torch.zeros(2, 3, 3, device=device))
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        m(x, x, x, is_causal=True)
    with pytest.raises(AssertionError, match="was expecting embedding dimension of 4, but got 3"):
        m(x[..., :3], x[..., :3], x[..., :3])
    with pytest.raises(AssertionError, match="query should be unbatched 2D or batched 3D tensor"):
        m(x[None], x[None], x[None])
    with pytest.raises(AssertionError, match=r"For batched \(3-D\) `query`, expected `key` and `value` to be 3-D but "
                                             "found 2-D and 3-D tensors respectively"):
        m(x, x[0], x)
    with pytest.raises(AssertionError, match=r"For unbatched \(2-D\) `query`, expected `key_padding_mask` to be `None` "
                                             "or 1-D but found 2-D tensor instead"):
        m(x[:, 0], x[:, 0], x[:, 0], key_padding_mask=torch.zeros(1, 3, dtype=torch.bool, device=device))
    with pytest.raises(AssertionError, match=r"For batched \(3-D\) `query`, expected `attn_mask` to be `None`, 2-D or "
                                             "3-D but found 1-D tensor instead"):
        m(x, x, x, attn_mask=torch.zeros(3, device=device))
    with pytest.raises(AssertionError, match=r"Expected `attn_mask` shape to be \(2, 3, 3\)"):
        m(x[:, 0], x[:, 0], x[:, 0], attn_mask=torch.zeros(1, 3, 3, device=device))
    with pytest.raises(AssertionError, match="only bool and floating types of key_padding_mask are supported"):
        m(x, x, x, key_padding_mask=torch.zeros(2, 3, dtype=torch.int64, device=device))


# Transformer layers ------------------------------------------------------------------------------


def np_layer_norm(x, weight, bias, eps):
    mean = x.mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(x.var(-1, keepdims=True) + eps) * weight + (0 if bias is None else bias)


def np_encoder_layer(layer, x, mask=None, kpm=None, activation="relu"):
    """Sequence-first (S, N, E) reference of TransformerEncoderLayer in evaluation."""
    def norm(module, a):
        return np_layer_norm(a, npy(module.weight), None if module.bias is None else npy(module.bias), module.eps)

    def ff(a):
        hidden = a @ npy(layer.linear1.weight).T + npy(layer.linear1.bias)
        if activation == "relu":
            hidden = np.maximum(hidden, 0)
        else:
            hidden = hidden * 0.5 * (1 + np.vectorize(math.erf)(hidden / math.sqrt(2)))
        return hidden @ npy(layer.linear2.weight).T + npy(layer.linear2.bias)

    def sa(a):
        return np_mha(layer.self_attn, a, a, a, kpm, mask)[0]

    if layer.norm_first:
        x = x + sa(norm(layer.norm1, x))
        return x + ff(norm(layer.norm2, x))
    x = norm(layer.norm1, x + sa(x))
    return norm(layer.norm2, x + ff(x))


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize("batch_first", [False, True])
def test_encoder_layer_matches_numpy(device, norm_first, activation, batch_first):
    layer = nn.TransformerEncoderLayer(4, 2, dim_feedforward=6, activation=activation, norm_first=norm_first,
                                       batch_first=batch_first, dtype=F64, device=device)
    layer = randomize(layer).eval()
    x = RNG.standard_normal((3, 2, 4))
    mask = RNG.standard_normal((3, 3))
    kpm = np.array([[0.0, 0.0, -np.inf], [0.0, -0.5, 0.0]])
    expected = np_encoder_layer(layer, x, mask, kpm, activation)
    x_in = t(x.transpose(1, 0, 2) if batch_first else x, device)
    out = layer(x_in, src_mask=t(mask, device), src_key_padding_mask=t(kpm, device))
    np.testing.assert_allclose(npy(out), expected.transpose(1, 0, 2) if batch_first else expected, rtol=1e-9)
    unbatched = layer(t(x[:, 0], device), src_mask=t(mask < 0, device), src_key_padding_mask=t(kpm[0] < 0, device))
    np.testing.assert_allclose(
        npy(unbatched), np_encoder_layer(layer, x[:, :1], mask < 0, kpm[:1] < 0, activation)[:, 0], rtol=1e-9
    )


def test_encoder_stack_and_causality(device):
    layer = nn.TransformerEncoderLayer(4, 2, dim_feedforward=8, dropout=0.0, batch_first=True, dtype=F64,
                                       device=device)
    encoder = randomize(nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm(4, dtype=F64, device=device)))
    assert encoder.layers[0] is not encoder.layers[1] and encoder.layers[0].linear1.weight is not layer.linear1.weight
    x = t(RNG.standard_normal((2, 5, 4)), device, requires_grad=True)
    causal = nn.Transformer.generate_square_subsequent_mask(5, device=device, dtype=F64)
    out = encoder(x, mask=causal)
    expected = t(npy(x))
    for mod in encoder.layers:
        expected = mod(expected, src_mask=causal)
    np.testing.assert_allclose(npy(out), npy(encoder.norm(expected)), rtol=1e-12)
    changed = x.detach().clone()
    changed[:, 3:] = 5.0
    np.testing.assert_allclose(npy(encoder(changed, mask=causal))[:, :3], npy(out)[:, :3], rtol=1e-12)
    out[:, 1].sum().backward()
    np.testing.assert_array_equal(npy(x.grad)[:, 2:], 0)


def test_encoder_layer_gradcheck():
    layer = randomize(nn.TransformerEncoderLayer(4, 2, dim_feedforward=3, dropout=0.0, norm_first=True,
                                                 activation="gelu", dtype=F64))
    x = torch.tensor(RNG.standard_normal((3, 2, 4)), requires_grad=True)
    mask = torch.tensor(np.triu(np.ones((3, 3), dtype=bool), 1))
    params = list(layer.parameters())
    assert gradcheck(lambda x, *params: layer(x, src_mask=mask, is_causal=True), (x, *params), fast_mode=True)


def test_decoder_and_transformer_shapes(device):
    model = nn.Transformer(d_model=4, nhead=2, num_encoder_layers=2, num_decoder_layers=1, dim_feedforward=8,
                           batch_first=True, device=device)
    src, tgt = torch.randn(2, 5, 4, device=device), torch.randn(2, 3, 4, device=device)
    out = model(src, tgt, tgt_mask=model.generate_square_subsequent_mask(3, device=device))
    assert out.shape == (2, 3, 4)
    out.sum().backward()
    assert all(p.grad is not None for p in model.parameters())
    assert len(model.encoder.layers) == 2 and len(model.decoder.layers) == 1
    with pytest.raises(RuntimeError, match="the batch number of src and tgt must be equal"):
        model(src, tgt[:1])
    with pytest.raises(RuntimeError, match="the feature number of src and tgt must be equal to d_model"):
        model(src[..., :3], tgt[..., :3])


def test_decoder_layer_is_causal_in_target(device):
    layer = randomize(nn.TransformerDecoderLayer(4, 2, dim_feedforward=6, dropout=0.0, dtype=F64, device=device))
    tgt = t(RNG.standard_normal((4, 2, 4)), device)
    memory = t(RNG.standard_normal((3, 2, 4)), device)
    causal = nn.Transformer.generate_square_subsequent_mask(4, device=device, dtype=F64)
    out = layer(tgt, memory, tgt_mask=causal, tgt_is_causal=True)
    changed = tgt.clone()
    changed[2:] = 0.0
    np.testing.assert_allclose(npy(layer(changed, memory, tgt_mask=causal))[:2], npy(out)[:2], rtol=1e-12)
    assert not np.allclose(npy(layer(tgt, memory * 2, tgt_mask=causal))[:2], npy(out)[:2])


def test_square_subsequent_mask_and_activation_error(device):
    mask = npy(nn.Transformer.generate_square_subsequent_mask(3, device=device))
    np.testing.assert_array_equal(mask, [[0, -np.inf, -np.inf], [0, 0, -np.inf], [0, 0, 0]])
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        nn.TransformerEncoderLayer(4, 2, activation="tanh")
    layer = nn.TransformerEncoderLayer(4, 2, activation=F.silu, dim_feedforward=5)
    assert layer.activation is F.silu and layer.linear1.weight.shape == (5, 4)
