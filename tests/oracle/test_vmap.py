"""minitorch.func.vmap against torch.func.vmap: the same functions (written once against a module ``t``),
the same float64 inputs and in_dims/out_dims; values, shapes and exception types must agree, including
vmap(grad) per-sample gradients of a small MLP and custom Functions with vmap rules."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import minitorch  # noqa: E402

RNG = np.random.default_rng(7)


def arr(*shape):
    return RNG.standard_normal(shape)


def T(t, a):
    a = np.asarray(a)
    return t.tensor(a, dtype=t.float64 if a.dtype.kind == "f" else t.int64)


def as_np(value):
    if isinstance(value, dict):
        return {k: as_np(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return type(value)(as_np(v) for v in value)
    if isinstance(value, (torch.Tensor, minitorch.Tensor)):
        return value.detach().numpy()
    return value


def assert_same(ours, theirs):
    ours, theirs = as_np(ours), as_np(theirs)
    if isinstance(ours, dict):
        assert ours.keys() == theirs.keys()
        for k in ours:
            assert_same(ours[k], theirs[k])
    elif isinstance(ours, (tuple, list)):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            assert_same(a, b)
    else:
        assert ours.shape == theirs.shape, (ours.shape, theirs.shape)
        np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-10)


X, Y, V, M = arr(4, 3, 5), arr(4, 3, 5), arr(4, 5), arr(5, 2)
LABELS = RNG.integers(0, 5, (4, 3))
IMAGES = arr(4, 2, 3, 6, 6)

# name -> (function of t, input arrays, in_dims, out_dims)
CASES = {
    "binary_broadcast": (lambda t: lambda a, b: a * b - b.exp(), (X, V[:, None, :]), 0, 0),
    "unbatched_arg": (lambda t: lambda a, m: (a @ m).tanh(), (X, M), (0, None), 0),
    "in_dim_last_out_dim_1": (lambda t: lambda a: a.softmax(0) * 2, (X,), -1, 1),
    "reductions": (lambda t: lambda a: (a.sum(0), a.mean(-1, keepdim=True), a.amax(1), a.var(0), a.norm(dim=1)),
                   (X,), 0, 0),
    "argmax_max": (lambda t: lambda a: (a.argmax(1), a.max(0)[0], a.argmax()), (X,), 0, 0),
    "views": (lambda t: lambda a: a.t().reshape(20)[::2].unsqueeze(0).expand(2, 10).flatten(), (X,), 1, 0),
    "indexing": (lambda t: lambda a: a[1:, None, 2] + a[0].sum() + a.select(1, 3).narrow(0, 1, 2).sum(), (X,), 0, 0),
    "matmul_variants": (lambda t: lambda a, b, v: (a @ b.transpose(0, 1), v @ a.transpose(0, 1), a @ v, v @ v),
                        (X, Y, V), 0, 0),
    "bmm_mm_linear": (lambda t: lambda a, w: (t.mm(a, w.t()), t.bmm(a[None], w.t()[None]),
                                             t.nn.functional.linear(a, w)), (X, arr(4, 2, 5)), 0, 0),
    "cat_stack_where": (lambda t: lambda a, b: t.where(a > b, t.cat([a, b], 1)[:, :5], t.stack([a, b]).sum(0)),
                        (X, Y), 0, 0),
    "activations": (lambda t: lambda a: (t.nn.functional.gelu(a) + t.nn.functional.silu(a) + t.relu(a)
                                         + t.nn.functional.log_softmax(a, 1)), (X,), 0, 0),
    "losses": (lambda t: lambda a, b, y: (t.nn.functional.mse_loss(a, b), t.nn.functional.cross_entropy(a, y),
                                          t.nn.functional.nll_loss(a.log_softmax(1), y, reduction="sum"),
                                          t.nn.functional.cross_entropy(a[0], y[0], label_smoothing=0.2)),
               (X, Y, LABELS), 0, 0),
    "conv_pool": (lambda t: lambda a, w: t.nn.functional.max_pool2d(t.nn.functional.conv2d(a, w, padding=1), 2),
                  (IMAGES, arr(4, 2, 3, 3, 3)), (0, 0), 0),
    "nested_tuple_in_dims": (lambda t: lambda d, s: d["a"] @ d["b"] + s, ({"a": X, "b": M}, V[0, :2]),
                             ({"a": 0, "b": None}, None), 0),
    "out_dims_tree": (lambda t: lambda a: {"x": a.sum(), "y": (a * 2, a[0])}, (X,), 0, {"x": 0, "y": (1, -1)}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_vmap_matches_torch(name):
    make, arrays, in_dims, out_dims = CASES[name]

    def run(t):
        args = [({k: T(t, v) for k, v in a.items()} if isinstance(a, dict) else T(t, a)) for a in arrays]
        return t.func.vmap(make(t), in_dims=in_dims, out_dims=out_dims)(*args)

    assert_same(run(minitorch), run(torch))


def test_nested_vmap_and_chunk_size_match_torch():
    def run(t):
        f = t.func.vmap(t.func.vmap(lambda a, b: (a * b).sum(-1), in_dims=(0, None)), in_dims=(None, 0))
        g = t.func.vmap(lambda a, m: (a @ m).sin(), in_dims=(0, None), chunk_size=3)
        return f(T(t, X[0]), T(t, Y[:, 0])), g(T(t, X), T(t, M))

    assert_same(run(minitorch), run(torch))


def _mlp(t):
    F = t.nn.functional

    def loss(p, x, y):
        h = F.relu(x @ p["w1"] + p["b1"])
        return F.cross_entropy((h @ p["w2"] + p["b2"]).unsqueeze(0), y.unsqueeze(0))

    return loss


def test_per_sample_gradients_match_torch_func():
    params = {"w1": arr(5, 16), "b1": arr(16), "w2": arr(16, 3), "b2": arr(3)}
    xs, ys = arr(8, 5), RNG.integers(0, 3, 8)

    def run(t):
        p = {k: T(t, v) for k, v in params.items()}
        grads = t.func.vmap(t.func.grad(_mlp(t)), in_dims=(None, 0, 0))(p, T(t, xs), T(t, ys))
        second = t.func.vmap(t.func.grad(lambda x: (x.sin() * x).sum()))(T(t, X))
        return grads, second

    assert_same(run(minitorch), run(torch))


def test_vmap_of_transforms_matches_torch():
    def run(t):
        f = lambda a: a.sin() * a.sum()  # noqa: E731
        x, v = T(t, X[:, 0]), T(t, Y[:, 0])
        F = t.func
        return (F.vmap(F.jacrev(f))(x), F.vmap(F.hessian(lambda z: f(z).sum()))(x),
                F.vmap(lambda a, c: F.vjp(f, a)[1](c)[0])(x, v), F.vmap(lambda a, c: F.jvp(f, (a,), (c,))[1])(x, v),
                F.vmap(F.jacfwd(f))(x), F.jacrev(F.vmap(f))(x),
                F.grad(lambda z: F.vmap(F.grad(lambda a: (a ** 3).sum()))(z).sum())(x))

    assert_same(run(minitorch), run(torch))


def test_custom_function_vmap_rules_match_torch():
    def classes(t):
        class Cube(t.autograd.Function):
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

        class Twice(t.autograd.Function):
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
                return Twice.apply(x) + info.batch_size, in_dims[0]

        return Cube, Twice

    def run(t):
        cube, twice = classes(t)
        x = T(t, X)
        return (t.func.vmap(cube.apply)(x), t.func.vmap(t.func.grad(lambda a: cube.apply(a).sum()))(x),
                t.func.vmap(twice.apply, in_dims=1, out_dims=1)(x))

    assert_same(run(minitorch), run(torch))


ERRORS = {
    "sizes": (lambda t: t.func.vmap(lambda a, b: a + b)(T(t, X), T(t, arr(5, 2)))),
    "in_dims_structure": (lambda t: t.func.vmap(lambda a, b: a, in_dims=(0,))(T(t, X), T(t, X))),
    "in_dim_range": (lambda t: t.func.vmap(lambda a: a, in_dims=3)(T(t, X))),
    "non_tensor_in": (lambda t: t.func.vmap(lambda a, n: a, in_dims=(0, 0))(T(t, X), 2)),
    "non_tensor_out": (lambda t: t.func.vmap(lambda a: 1.0)(T(t, X))),
    "out_dim_none_batched": (lambda t: t.func.vmap(lambda a: a, out_dims=None)(T(t, X))),
    "out_dim_range": (lambda t: t.func.vmap(lambda a: a, out_dims=4)(T(t, X))),
    "item": (lambda t: t.func.vmap(lambda a: a.sum().item())(T(t, X))),
    "control_flow": (lambda t: t.func.vmap(lambda a: a if a.sum() > 0 else a)(T(t, X))),
    "randomness_error": (lambda t: t.func.vmap(lambda a: a + t.rand(5))(T(t, X))),
    "randomness_value": (lambda t: t.func.vmap(lambda a: a, randomness="maybe")(T(t, X))),
    "chunk_size": (lambda t: t.func.vmap(lambda a: a, chunk_size=0)(T(t, X))),
    "no_inputs": (lambda t: t.func.vmap(lambda: 1)()),
    "one_hot_inferred_classes": (lambda t: t.func.vmap(lambda i: t.nn.functional.one_hot(i))(T(t, LABELS))),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    outcome = []
    for t in (minitorch, torch):
        try:
            ERRORS[name](t)
            outcome.append(None)
        except Exception as error:  # noqa: BLE001 - the exception types are compared
            outcome.append(type(error))
    assert outcome[0] is not None and outcome[0] is outcome[1], outcome


def test_generated_rule_with_two_outputs_a_non_tensor_argument_and_outer_autograd_matches_torch():
    def run(t):
        class Split(t.autograd.Function):
            generate_vmap_rule = True

            @staticmethod
            def forward(x, k):
                return x[:k] * 2, x[k:].exp()

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.save_for_backward(output[1])

            @staticmethod
            def backward(ctx, g1, g2):
                (e,) = ctx.saved_tensors
                return t.cat([g1 * 2, g2 * e]), None

        class Both(Split):
            @staticmethod
            def vmap(info, in_dims, x, k):
                return Split.apply(x, k), (in_dims[0], in_dims[0])

        x = T(t, X[:, 0, :4])
        pieces = t.func.vmap(Split.apply, in_dims=(0, None))(x, 1)
        per_sample = t.func.vmap(t.func.grad(lambda z: sum(o.sum() for o in Split.apply(z, 2))))(x)
        w = x[0].clone().requires_grad_()
        t.func.vmap(lambda z: Split.apply(z * w, 1)[1].sum())(x).sum().backward()
        try:
            t.func.vmap(Both.apply, in_dims=(0, None))(x, 1)
            error = None
        except RuntimeError as e:
            error = str(e)
        return pieces, per_sample, w.grad, error

    ours, theirs = run(minitorch), run(torch)
    assert_same(ours[:3], theirs[:3])
    assert ours[3] == theirs[3]
