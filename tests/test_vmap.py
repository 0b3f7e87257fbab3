"""vmap with batching rules: every op against a Python loop over the samples, in_dims/out_dims, nesting,
chunk_size, randomness, PyTorch's errors, vmap of grad (per-sample gradients) and custom Functions.

Each op in OPS is also checked to run through its batching rule, not the loop fallback
(``vmap_fallback_ops()`` must not grow)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import minitorch as torch
import minitorch.nn.functional as F
from minitorch.func import grad, vmap, vmap_fallback_ops
from minitorch.func.batching_rules import ops_without_rule
from minitorch.testing import assert_close


def _loop(f, args, in_dims):
    dims = in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(args)
    size = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
    outs = [f(*[a if d is None else a.select(d, i) for a, d in zip(args, dims)]) for i in range(size)]
    if isinstance(outs[0], tuple):
        return tuple(torch.stack([o[k] for o in outs]) for k in range(len(outs[0])))
    return torch.stack(outs)


def _check(f, *args, in_dims=0, rule=True):
    before = set(vmap_fallback_ops())
    got = vmap(f, in_dims=in_dims)(*args)
    if rule:
        assert set(vmap_fallback_ops()) == before, f"fell back to the loop: {set(vmap_fallback_ops()) - before}"
    expected = _loop(f, args, in_dims)
    if isinstance(expected, tuple):
        for g, e in zip(got, expected):
            assert_close(g, e)
    else:
        assert_close(got, expected)


def r(*shape):
    return torch.randn(*shape, dtype=torch.float64)


torch.manual_seed(0)
X, Y, V, M = r(4, 3, 5), r(4, 3, 5), r(4, 5), r(5, 2)
LABELS = torch.randint(0, 5, (4, 3))
IMAGES = r(4, 2, 3, 6, 6)

OPS = {
    # elementwise, broadcasting, scalars, promotion
    "add": (lambda a, b: a + b, (X, Y)),
    "sub_broadcast": (lambda a, b: a - b, (X, V)),
    "mul_scalar": (lambda a: a * 3 - 1, (X,)),
    "div": (lambda a, b: a / (b.abs() + 1), (X, Y)),
    "pow": (lambda a: a.abs() ** 1.5, (X,)),
    "unary": (lambda a: a.exp() + a.sin() + a.tanh() + a.sigmoid() + a.abs().sqrt() + a.abs().log1p(), (X,)),
    "clamp": (lambda a: a.clamp(-0.5, 0.5), (X,)),
    "maximum": (lambda a, b: torch.maximum(a, b), (X, Y)),
    "compare": (lambda a, b: (a > b).to(a.dtype) + (a == a).to(a.dtype), (X, Y)),
    "where": (lambda a, b: torch.where(a > 0, a, b), (X, Y)),
    "where_scalar": (lambda a: torch.where(a > 0, a, 0.0), (X,)),
    "masked_fill": (lambda a: a.masked_fill(a < 0, 2.0), (X,)),
    "lerp": (lambda a, b: torch.lerp(a, b, 0.3), (X, Y)),
    "zero_dim_promotion": (lambda a, s: a.float() * s, (X, r(4))),
    # activations
    "relu_gelu_silu": (lambda a: F.relu(a) + F.gelu(a) + F.silu(a) + F.leaky_relu(a, 0.1) + F.elu(a), (X,)),
    "softplus_hardtanh": (lambda a: F.softplus(a) + F.hardtanh(a) + F.logsigmoid(a), (X,)),
    # reductions
    "sum_all": (lambda a: a.sum(), (X,)),
    "sum_dim_keepdim": (lambda a: a.sum(-1, keepdim=True), (X,)),
    "mean_dims": (lambda a: a.mean((0, 1)), (X,)),
    "var_std": (lambda a: a.var(0) + a.std(1, keepdim=True).sum(), (X,)),
    "norm": (lambda a: a.norm(dim=1) + a.norm(), (X,)),
    "amax_amin": (lambda a: a.amax(1) - a.amin(-1).sum(), (X,)),
    "max_dim": (lambda a: a.max(1), (X,)),
    "argmax": (lambda a: a.argmax(1) + a.argmax(), (X,)),
    "prod": (lambda a: a.prod(1) + a.prod(), (X,)),
    "cumsum": (lambda a: a.cumsum(1) + a.cumprod(0), (X,)),
    "logsumexp": (lambda a: a.logsumexp(1), (X,)),
    # matrix products
    "matmul_mv": (lambda a, m: a @ m, (V, M), (0, None)),
    "matmul_mm": (lambda a, m: a @ m, (X, M), (0, None)),
    "matmul_unbatched_left": (lambda m, a: m.t() @ a, (M, X.transpose(1, 2)), (None, 0)),
    "matmul_nd": (lambda a, b: a.unsqueeze(0).expand(2, 3, 5) @ b, (X, r(4, 5, 2))),
    "matmul_both": (lambda a, b: a @ b.transpose(0, 1), (X, Y)),
    "matmul_vec_vec": (lambda a, b: a @ b, (V, r(4, 5))),
    "matmul_mat_vec": (lambda a, b: a @ b, (X, V)),
    "mm_bmm": (lambda a, b: torch.bmm(a.unsqueeze(0), b.t().unsqueeze(0)) + torch.mm(a, b.t()), (X, Y)),
    "linear": (lambda a, w: F.linear(a, w, torch.ones(2, dtype=torch.float64)), (X, r(2, 5)), (0, None)),
    "linear_batched_weight": (lambda a, w: F.linear(a, w), (X, r(4, 2, 5))),
    "einsum_free": (lambda a, b: (a * b).sum(-1), (X, Y)),
    # views and shape ops
    "view_reshape": (lambda a: a.view(15).reshape(5, 3), (X,)),
    "permute_transpose": (lambda a: a.permute(1, 0).transpose(0, 1).t(), (X,)),
    "unsqueeze_squeeze": (lambda a: a.unsqueeze(0).unsqueeze(-1).squeeze(0).squeeze(), (X,)),
    "expand": (lambda a: a[:, :1].expand(3, 4) + a.sum(0).expand(2, 5).sum(), (X,)),
    "indexing": (lambda a: a[1] + a[:, 2].sum() + a[..., ::2].sum() + a[None, 0].sum(), (X,)),
    "select_narrow": (lambda a: a.select(1, 2) + a.narrow(1, 1, 2).sum(), (X,)),
    "flatten_unflatten": (lambda a: a.flatten().unflatten(0, (5, 3)), (X,)),
    "movedim_chunk": (lambda a: a.movedim(0, 1).chunk(2, 0)[1], (X,)),
    "unbind_split": (lambda a: a.unbind(0)[1] + a.split(1, 0)[2].squeeze(0), (X,)),
    "diagonal": (lambda a: a[:, :3].diagonal(), (X,)),
    "advanced_index": (lambda a: a[torch.tensor([2, 0])], (X,)),
    "gather": (lambda a: a.gather(1, torch.tensor([[0], [4], [2]])), (X,)),
    "sort_topk_flip": (lambda a: a.sort(1)[0] + a.topk(2, 1)[0].sum() + a.flip(0), (X,)),
    "layer_norm": (lambda a: F.layer_norm(a, (5,)), (X,)),
    "layer_norm_affine": (lambda a, w, b: F.layer_norm(a, (5,), w, b), (X, r(4, 5), r(5)), (0, 0, None)),
    "bce": (lambda a, b: F.binary_cross_entropy(a.sigmoid(), b.sigmoid()) + F.binary_cross_entropy_with_logits(a, b),
            (X, Y)),
    "roll_tril_pad": (lambda a: a.roll(1, 0) + a.tril() + F.pad(a, (1, 1))[:, 1:-1] + a.roll(2), (X,)),
    "one_hot_embedding": (lambda t, w: F.one_hot(t, 5).double() @ w + F.embedding(t, w), (LABELS, r(5, 5)),
                          (0, None)),
    "einsum": (lambda a, b, m: torch.einsum("ij,kj,jl->ikl", a, b, m), (X, Y, M), (0, 0, None)),
    "conv2d": (lambda a, w: F.conv2d(a, w, padding=1), (IMAGES, r(2, 3, 3, 3)), (0, None)),
    "conv2d_batched_weight": (lambda a, w, b: F.conv2d(a, w, b, groups=1), (IMAGES, r(4, 2, 3, 3, 3), r(4, 2))),
    "conv1d_grouped": (lambda a, w: F.conv1d(a[:, :2, 0], w, groups=2), (IMAGES, r(4, 4, 1, 3))),
    "pooling": (lambda a: F.max_pool2d(a, 2) + F.avg_pool2d(a, 2) + F.adaptive_avg_pool2d(a, 3), (IMAGES,)),
    "dropout_eval": (lambda a: F.dropout(a, 0.5, training=False), (X,)),
    "index_select": (lambda a: a.index_select(1, torch.tensor([4, 1])), (X,)),
    "gather_batched_index": (lambda a, i: a.gather(1, i.unsqueeze(1)) + torch.take_along_dim(a, i.unsqueeze(1), 1),
                             (X, LABELS)),
    "lookup_batched_index": (lambda i, w: w[i] + F.embedding(i, w), (LABELS, r(5, 5)), (0, None)),
    "index_batched_both": (lambda a, i: a[i], (X, LABELS % 3)),
    "cat_stack": (lambda a, b: torch.cat([a, b], 1) + torch.stack([a, b]).sum(0).repeat(1, 2), (X, Y)),
    "cat_unbatched": (lambda a: torch.cat([a, torch.ones(1, 5, dtype=torch.float64)]), (X,)),
    "clone_contiguous": (lambda a: a.t().contiguous().clone(), (X,)),
    "to_dtype": (lambda a: a.float().double(), (X,)),
    "factories": (lambda a: a + torch.zeros_like(a) + torch.ones(3, 5, dtype=torch.float64) + a.new_ones(5), (X,)),
    # softmax family and losses
    "softmax": (lambda a: F.softmax(a, -1) + F.log_softmax(a, 0), (X,)),
    "mse": (lambda a, b: F.mse_loss(a, b) + F.mse_loss(a, b, reduction="sum"), (X, Y)),
    "cross_entropy": (lambda a, t: F.cross_entropy(a, t), (X.transpose(1, 2).reshape(4, 3, 5), LABELS)),
    "cross_entropy_1d": (lambda a, t: F.cross_entropy(a, t), (V, LABELS[:, 0])),
    "cross_entropy_options": (lambda a, t: F.cross_entropy(a, t, weight=torch.arange(1.0, 6.0, dtype=torch.float64),
                                                           label_smoothing=0.1, ignore_index=2),
                              (X, LABELS)),
    "cross_entropy_none_sum": (lambda a, t: F.cross_entropy(a, t, reduction="none") + F.cross_entropy(a, t,
                                                                                                  reduction="sum"),
                               (X, LABELS)),
    "nll": (lambda a, t: F.nll_loss(F.log_softmax(a, 1), t), (X, LABELS)),
    "cross_entropy_probs": (lambda a, b: F.cross_entropy(a, F.softmax(b, 1)), (X, Y)),
}


@pytest.mark.parametrize("name", sorted(OPS))
def test_op_matches_loop_through_its_rule(name):
    f, args, *in_dims = OPS[name]
    _check(f, *args, in_dims=in_dims[0] if in_dims else 0)


@pytest.mark.parametrize("name", ["add", "matmul_mm", "softmax", "cross_entropy", "view_reshape", "sum_dim_keepdim"])
def test_op_with_batch_dim_elsewhere(name):
    f, args, *in_dims = OPS[name]
    dims = in_dims[0] if in_dims else (0,) * len(args)
    moved = tuple(a.movedim(0, -1).contiguous().movedim(-1, 0) if d is not None and a.dim() > 1 else a
                  for a, d in zip(args, dims))
    _check(f, *moved, in_dims=dims)  # same values, non-contiguous batch dim
    last = tuple(a if d is None else a.movedim(0, -1) for a, d in zip(args, dims))
    _check(f, *last, in_dims=tuple(None if d is None else -1 for d in dims))


def test_unbatched_arguments_and_in_dims_trees():
    _check(lambda a, m: a @ m, X, M, in_dims=(0, None))
    _check(lambda m, a: a @ m, M, X.transpose(0, 1), in_dims=(None, 1))
    out = vmap(lambda d: d["a"] * d["b"], in_dims=({"a": 0, "b": None},))({"a": X, "b": V[0]})
    assert_close(out, X * V[0])


def test_out_dims_and_unbatched_outputs():
    out = vmap(lambda a: a * 2, out_dims=1)(X)
    assert out.shape == (3, 4, 5)
    assert_close(out, (X * 2).movedim(0, 1))
    first, second = vmap(lambda a: (a.sum(), torch.ones(2)), out_dims=(0, 1))(X)
    assert first.shape == (4,) and second.shape == (2, 4)
    same = vmap(lambda a: torch.ones(2), out_dims=None)(X)
    assert same.shape == (2,)
    assert vmap(lambda a: (a, 3), out_dims=(0, None))(X)[1] == 3


def test_nested_vmap():
    a, b = r(2, 3), r(3, 4)
    out = vmap(vmap(lambda x, y: x * y, in_dims=(None, 0)), in_dims=(0, None))(a[:, 0], b[0])
    assert_close(out, a[:, 0, None] * b[0][None, :])
    nested = vmap(vmap(lambda x, m: x @ m, in_dims=(0, None)), in_dims=(0, 0))(r(2, 3, 4), r(2, 4, 5))
    assert nested.shape == (2, 3, 5)
    x3 = r(2, 3, 4, 5)
    assert_close(vmap(vmap(vmap(lambda t: F.softmax(t, 0))))(x3), F.softmax(x3, -1))
    inner_first = vmap(vmap(lambda t: t.sum(0), in_dims=1), in_dims=2)(x3)
    assert_close(inner_first, x3.sum(0).permute(1, 0, 2))


def test_chunk_size_gives_the_same_result():
    f = lambda a, m: F.softmax(a @ m, -1)  # noqa: E731
    full = vmap(f, in_dims=(0, None))(X, M)
    for chunk in (1, 3, 4, 10):
        assert_close(vmap(f, in_dims=(0, None), chunk_size=chunk)(X, M), full)
    with pytest.raises(ValueError, match="chunk_size should be None or greater than 0"):
        vmap(f, chunk_size=0)


def test_randomness():
    x = torch.zeros(3, 2)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        vmap(lambda a: a + torch.rand(2))(x)
    same = vmap(lambda a: a + torch.rand(2), randomness="same")(x)
    assert_close(same[0], same[1])
    different = vmap(lambda a: a + torch.rand(2), randomness="different")(x)
    assert not torch.equal(different[0], different[1])
    with pytest.raises(RuntimeError, match="Only allowed values for randomness"):
        vmap(lambda a: a, randomness="sometimes")


def test_errors_are_pytorchs():
    with pytest.raises(ValueError, match="same size in the mapped dimension, got sizes \\[4, 5\\]"):
        vmap(lambda a, b: a + b)(X, r(5, 3, 5))
    with pytest.raises(ValueError, match="in_dims is not compatible with the structure of `inputs`"):
        vmap(lambda a, b: a + b, in_dims=(0,))(X, Y)
    with pytest.raises(ValueError, match="expected in_dim to satisfy -3 <= in_dim < 3"):
        vmap(lambda a: a, in_dims=3)(X)
    with pytest.raises(ValueError, match="We cannot vmap over non-Tensor arguments"):
        vmap(lambda a, n: a, in_dims=(0, 0))(X, 3)
    with pytest.raises(ValueError, match="must only return Tensors, got type <class 'int'>"):
        vmap(lambda a: 3)(X)
    with pytest.raises(ValueError, match="can not return a BatchedTensor when out_dim is None"):
        vmap(lambda a: a, out_dims=None)(X)
    with pytest.raises(ValueError, match="got no inputs"):
        vmap(lambda: 1)()
    with pytest.raises(ValueError, match="at least one Tensor to vmap over"):
        vmap(lambda a: a, in_dims=(None,))(X)
    with pytest.raises(ValueError, match="expected `in_dims` to be int or a"):
        vmap(lambda a: a, in_dims=None)(X)
    with pytest.raises(RuntimeError, match="calling .item\\(\\) on a Tensor"):
        vmap(lambda a: a.sum().item())(X)
    with pytest.raises(RuntimeError, match="data-dependent control flow"):
        vmap(lambda a: a if a.sum() > 0 else -a)(X)
    with pytest.raises(IndexError, match="Dimension out of range"):
        vmap(lambda a: a, out_dims=5)(X)


def test_batched_tensor_looks_like_one_sample():
    seen = {}

    def f(a):
        seen.update(shape=a.shape, dim=a.dim(), stride=a.stride(), contiguous=a.is_contiguous(), text=repr(a))
        return a

    vmap(f, in_dims=1)(X)
    assert seen["shape"] == (4, 5) and seen["dim"] == 2
    assert seen["stride"] == (15, 1) and not seen["contiguous"]
    assert seen["text"].startswith("BatchedTensor(lvl=")


def test_in_place_ops_write_into_the_batch():
    x = r(4, 3)
    y = x.clone()
    out = vmap(lambda a: a.mul_(2).add_(1))(y)
    assert_close(y, x * 2 + 1)
    assert_close(out, x * 2 + 1)
    z = x.t().clone()
    vmap(lambda a, b: a.copy_(b), in_dims=(1, 0))(z, x.exp())
    assert_close(z, x.exp().t())
    w = x.clone()
    vmap(lambda a: a.zero_())(w)
    assert_close(w, torch.zeros_like(x))
    with pytest.raises(RuntimeError, match="read directly"):
        vmap(lambda a, u: u.add_(a), in_dims=(0, None))(x, r(3))


def test_size_zero_batch():
    out = vmap(lambda a: a * 2 + a.sum())(r(0, 3))
    assert out.shape == (0, 3)


def test_indexing_with_batched_indices_that_takes_the_loop():
    before = set(vmap_fallback_ops())
    _check(lambda a, i: a[:, i], X, LABELS, rule=False)
    assert "AdvancedIndex" in set(vmap_fallback_ops()) - before or "AdvancedIndex" in before


def test_docs_list_every_op_without_a_rule():
    text = (Path(__file__).resolve().parent.parent / "docs" / "func.md").read_text()
    section = text[text.index("### The loop fallback"):text.index("### Randomness")]
    listed = set(re.findall(r"`((?:ops|nn|fft|linalg)\.[\w.]+)`", section))
    assert listed == set(ops_without_rule())


def test_fallback_loop_for_an_op_without_rule():
    before = set(vmap_fallback_ops())
    x = r(4, 6)
    got = vmap(lambda a: torch.cummax(a, 0)[0] * torch.cdist(a.view(3, 2), a.view(3, 2).flip(0)).sum())(x)
    expected = torch.stack([torch.cummax(x[i], 0)[0] * torch.cdist(x[i].view(3, 2), x[i].view(3, 2).flip(0)).sum()
                            for i in range(4)])
    assert_close(got, expected)
    assert {"Cdist"} <= set(vmap_fallback_ops()) - before


# vmap and autograd ------------------------------------------------------------------------------
def _mlp_loss(p, x, y):
    h = torch.tanh(x @ p["w1"] + p["b1"])
    return F.cross_entropy((h @ p["w2"] + p["b2"]).unsqueeze(0), y.unsqueeze(0))


def _params():
    return {"w1": r(5, 7), "b1": r(7), "w2": r(7, 3), "b2": r(3)}


def test_per_sample_gradients_match_a_loop():
    params, xs, ys = _params(), r(6, 5), torch.randint(0, 3, (6,))
    before = set(vmap_fallback_ops())
    batched = vmap(grad(_mlp_loss), in_dims=(None, 0, 0))(params, xs, ys)
    assert set(vmap_fallback_ops()) == before
    for k, v in params.items():
        expected = torch.stack([grad(_mlp_loss)(params, xs[i], ys[i])[k] for i in range(6)])
        assert batched[k].shape == (6,) + tuple(v.shape)
        assert_close(batched[k], expected)


def test_vmap_of_grad_with_batched_and_unbatched_args_and_argnums():
    f = lambda w, x: ((x @ w).sin() ** 2).sum()  # noqa: E731
    w, xs = r(5, 2), r(4, 5)
    gw, gx = vmap(grad(f, argnums=(0, 1)), in_dims=(None, 0))(w, xs)
    for i in range(4):
        ew, ex = grad(f, argnums=(0, 1))(w, xs[i])
        assert_close(gw[i], ew)
        assert_close(gx[i], ex)


def test_grad_of_vmap_and_outer_autograd():
    w = r(5, 2).requires_grad_()
    out = vmap(lambda x: (x @ w).tanh().sum())(r(4, 5))
    out.sum().backward()
    g1 = w.grad.clone()
    w.grad = None
    xs = r(4, 5)
    gv = grad(lambda w_: vmap(lambda x: (x @ w_).tanh().sum())(xs).sum())(w.detach())
    gl = grad(lambda w_: sum((xs[i] @ w_).tanh().sum() for i in range(4)))(w.detach())
    assert_close(gv, gl)
    assert g1.shape == (5, 2)


def test_nested_vmap_of_grad_and_hessian_like():
    f = lambda x: (x ** 3).sum()  # noqa: E731
    xs = r(2, 3, 4)
    g = vmap(vmap(grad(f)))(xs)
    assert_close(g, 3 * xs ** 2)
    gg = vmap(grad(lambda x: grad(f)(x).sum()))(xs[0])
    assert_close(gg, 6 * xs[0])


@pytest.mark.parametrize("transform", ["jacrev", "hessian", "vjp", "jvp", "jacfwd"])
def test_vmap_of_other_transforms_matches_a_loop(transform):
    f = lambda a: a.sin() * a.sum()  # noqa: E731
    per_sample = {
        "jacrev": lambda a, v: torch.func.jacrev(f)(a),
        "hessian": lambda a, v: torch.func.hessian(lambda z: f(z).sum())(a),
        "vjp": lambda a, v: torch.func.vjp(f, a)[1](v)[0],
        "jvp": lambda a, v: torch.func.jvp(f, (a,), (v,))[1],
        "jacfwd": lambda a, v: torch.func.jacfwd(f)(a),
    }[transform]
    xs = r(4, 3)
    _check(per_sample, xs, xs.cos())


def test_zeros_like_of_a_batched_tensor_is_batched():
    seen = []
    vmap(lambda a: seen.append(torch.zeros_like(a, requires_grad=True)) or a)(X)
    assert type(seen[0]).__name__ == "BatchedTensor" and seen[0].shape == X.shape[1:] and seen[0].requires_grad


def test_autograd_grad_inside_vmap():
    def f(x):
        x = x.detach().requires_grad_(False)
        return x

    xs = r(3, 4)
    out = vmap(lambda x: torch.autograd.grad((x.exp()).sum(), x)[0])(xs.requires_grad_())
    assert_close(out, xs.detach().exp())
    assert f(xs).shape == (3, 4)


# custom Functions under vmap --------------------------------------------------------------------
class Cube(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return x ** 3

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 3 * g * x ** 2


class Double(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return x * 2

    @staticmethod
    def setup_context(ctx, inputs, output):
        pass

    @staticmethod
    def backward(ctx, g):
        return g * 2

    @staticmethod
    def vmap(info, in_dims, x):
        assert info.batch_size == 4 and info.randomness == "same"
        return Double.apply(x), in_dims[0]


class NoRule(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return x

    @staticmethod
    def setup_context(ctx, inputs, output):
        pass

    @staticmethod
    def backward(ctx, g):
        return g


class OldStyle(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, g):
        return g


def test_function_with_generated_rule_and_vmap_staticmethod():
    xs = r(4, 3)
    assert_close(vmap(Cube.apply)(xs), xs ** 3)
    assert_close(vmap(grad(lambda x: Cube.apply(x).sum()))(xs), 3 * xs ** 2)
    assert_close(vmap(Double.apply, in_dims=1, out_dims=1, randomness="same")(xs.t().contiguous()), (xs * 2).t())
    assert_close(vmap(grad(lambda x: Double.apply(x).sum()), randomness="same")(xs), torch.full_like(xs, 2.0))


def test_generated_rule_under_nested_vmap_and_outer_autograd():
    x = r(2, 3, 4)
    assert_close(vmap(vmap(Cube.apply))(x), x ** 3)
    assert_close(vmap(vmap(grad(lambda a: Cube.apply(a).sum())))(x), 3 * x ** 2)
    xr = x.clone().requires_grad_()
    vmap(vmap(Cube.apply))(xr).sum().backward()
    assert_close(xr.grad, 3 * x ** 2)
    w = r(4).requires_grad_()
    vmap(lambda a: Cube.apply(a * w).sum())(x[0]).sum().backward()  # w unbatched: its gradient sums the samples
    assert_close(w.grad, (3 * (x[0] * w.detach()) ** 2 * x[0]).sum(0))


def test_function_without_vmap_support_raises_pytorchs_errors():
    with pytest.raises(RuntimeError, match="does not have vmap support"):
        vmap(NoRule.apply)(X)
    with pytest.raises(RuntimeError, match="must override the setup_context staticmethod"):
        vmap(OldStyle.apply)(X)
