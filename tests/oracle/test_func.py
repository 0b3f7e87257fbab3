"""minitorch.autograd.functional and minitorch.func against torch.autograd.functional and torch.func: the
same functions, the same float64 inputs, the same nesting of results, the same exception types."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import minitorch  # noqa: E402

RNG = np.random.default_rng(0)
A = RNG.standard_normal((3, 4))
B = RNG.standard_normal(4)
C = RNG.standard_normal((2, 3))
D = RNG.standard_normal((2, 2, 5))


def as_np(value):
    """Numpy leaves of a (possibly nested) result, keeping tuples/lists/dicts."""
    if isinstance(value, dict):
        return {k: as_np(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return type(value)(as_np(v) for v in value)
    if isinstance(value, (torch.Tensor, minitorch.Tensor)):
        return value.detach().cpu().numpy()
    return value


def assert_same(ours, theirs, atol=1e-10):
    ours, theirs = as_np(ours), as_np(theirs)
    assert type(ours) is type(theirs), (type(ours), type(theirs))
    if isinstance(ours, dict):
        assert ours.keys() == theirs.keys()
        for k in ours:
            assert_same(ours[k], theirs[k], atol)
    elif isinstance(ours, (tuple, list)):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            assert_same(a, b, atol)
    else:
        assert ours.shape == theirs.shape
        np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=atol)


def both(make):
    """``make(t)`` evaluated with t = minitorch and t = torch."""
    return make(minitorch), make(torch)


def T(t, array, requires_grad=False):
    return t.tensor(array, dtype=t.float64, requires_grad=requires_grad)


# functions written once against a module `t` -------------------------------------------------
def vector_fn(t):
    return lambda x: (x.sin() * x.exp()).reshape(2, 2) * 2.0


def two_in_two_out(t):
    return lambda x, y: (x @ y, (x.tanh() ** 2).sum(0) + y.exp())


def scalar_fn(t):
    return lambda x: (x.sin() * x ** 2).sum() + x.prod()


def scalar_two_in(t):
    return lambda x, y: ((x @ y).tanh() ** 2).sum() + (y ** 3).sum()


# torch.autograd.functional ---------------------------------------------------------------------
@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("vectorize", [False, True])
def test_jacobian_single_and_tuple(create_graph, vectorize):
    for fn, args in ((vector_fn, (B,)), (two_in_two_out, (A, B))):
        def run(t):
            inputs = tuple(T(t, a) for a in args)
            return t.autograd.functional.jacobian(fn(t), inputs if len(inputs) > 1 else inputs[0],
                                                  create_graph=create_graph, vectorize=vectorize)
        ours, theirs = both(run)
        assert_same(ours, theirs)


def test_jacobian_tuple_input_single_output_and_unused_input():
    def run(t):
        return t.autograd.functional.jacobian(lambda x, y: x.exp(), (T(t, B), T(t, C)))
    assert_same(*both(run))


@pytest.mark.parametrize("fn, args", [(scalar_fn, (B,)), (scalar_two_in, (A, B))])
def test_hessian(fn, args):
    def run(t):
        inputs = tuple(T(t, a) for a in args)
        return t.autograd.functional.hessian(fn(t), inputs if len(inputs) > 1 else inputs[0])
    assert_same(*both(run))


@pytest.mark.parametrize("name", ["vjp", "jvp"])
def test_vjp_jvp(name):
    for fn, args in ((vector_fn, (B,)), (two_in_two_out, (A, B))):
        def run(t):
            inputs = tuple(T(t, a) for a in args)
            f = fn(t)
            if name == "vjp":
                outs = f(*inputs)
                outs = outs if isinstance(outs, tuple) else (outs,)
                v = tuple(T(t, np.linspace(-1, 1, o.numel()).reshape(tuple(o.shape))) for o in outs)
            else:
                v = tuple(T(t, np.linspace(-1, 1, x.numel()).reshape(tuple(x.shape))) for x in inputs)
            single = len(v) == 1
            api = getattr(t.autograd.functional, name)
            return api(f, inputs[0] if len(inputs) == 1 else inputs, v[0] if single else v)
        assert_same(*both(run))


@pytest.mark.parametrize("name", ["hvp", "vhp"])
def test_hvp_vhp(name):
    for fn, args in ((scalar_fn, (B,)), (scalar_two_in, (A, B))):
        def run(t):
            inputs = tuple(T(t, a) for a in args)
            v = tuple(T(t, np.cos(np.arange(x.numel())).reshape(tuple(x.shape))) for x in inputs)
            api = getattr(t.autograd.functional, name)
            if len(inputs) == 1:
                return api(fn(t), inputs[0], v[0])
            return api(fn(t), inputs, v)
        assert_same(*both(run))


def test_create_graph_results_are_differentiable():
    def run(t):
        x = T(t, B, requires_grad=True)
        _, hv = t.autograd.functional.hvp(scalar_fn(t), x, T(t, np.ones(4)), create_graph=True)
        jac = t.autograd.functional.jacobian(vector_fn(t), x, create_graph=True)
        (g,) = t.autograd.grad(hv.sum() + jac.sum(), x)
        return g
    assert_same(*both(run))


@pytest.mark.parametrize("case", [
    "jacobian_strict", "vjp_strict", "jvp_strict", "hessian_strict", "hvp_strict",
    "vjp_bad_v_size", "vjp_v_none", "jvp_bad_v_len", "bad_input_type", "hessian_vector_out", "bad_strategy", "hessian_bad_strategy",
])
def test_errors_match(case):
    def run(t):
        F = t.autograd.functional
        x, y = T(t, B), T(t, C)
        calls = {
            "jacobian_strict": lambda: F.jacobian(lambda a, b: a.exp(), (x, y), strict=True),
            "vjp_strict": lambda: F.vjp(lambda a: t.ones(4, dtype=t.float64), x, T(t, np.ones(4)), strict=True),
            "jvp_strict": lambda: F.jvp(lambda a, b: a * 2, (x, y), (x, y), strict=True),
            "hessian_strict": lambda: F.hessian(lambda a: (a * 2).sum(), x, strict=True),
            "hvp_strict": lambda: F.hvp(lambda a: (a * 3).sum(), x, x, strict=True),
            "vjp_bad_v_size": lambda: F.vjp(lambda a: a * 2, x, T(t, np.ones(3))),
            "vjp_v_none": lambda: F.vjp(lambda a: a * 2, x),
            "jvp_bad_v_len": lambda: F.jvp(lambda a, b: a * 2, (x, y), (x,)),
            "bad_input_type": lambda: F.jacobian(lambda a: a, [x]),
            "hessian_vector_out": lambda: F.hessian(lambda a: a * 2, x),
            "bad_strategy": lambda: F.jacobian(lambda a: a, x, strategy="sideways"),
            "hessian_bad_strategy": lambda: F.hessian(lambda a: a.sum(), x, outer_jacobian_strategy="sideways"),
        }
        try:
            calls[case]()
        except Exception as e:  # noqa: BLE001 - the type and message are what is compared
            return type(e).__name__, str(e)
        return None
    ours, theirs = both(run)
    assert theirs is not None
    assert ours == theirs


# torch.func ------------------------------------------------------------------------------------
def test_grad_argnums_has_aux_and_value():
    def run(t):
        f = t.func
        x, y = T(t, A), T(t, B)
        g0 = f.grad(scalar_two_in(t))(x, y)
        g01 = f.grad(scalar_two_in(t), argnums=(0, 1))(x, y)
        gneg = f.grad(scalar_two_in(t), argnums=-1)(x, y)
        gv = f.grad_and_value(scalar_two_in(t), argnums=1)(x, y)
        aux = f.grad(lambda a: ((a ** 2).sum(), {"m": a.mean()}), has_aux=True)(y)
        tree = f.grad(lambda p: (p["w"] @ p["b"]).sum())({"w": x, "b": y})
        return g0, g01, gneg, gv, aux, tree
    assert_same(*both(run))


def test_nested_grad_and_hessians():
    def run(t):
        f = t.func
        y = T(t, B)
        second = f.grad(lambda a: f.grad(lambda b: (b.sin() * b).sum())(a).sum())(y)
        h = f.hessian(scalar_fn(t))(y)
        h2 = f.hessian(scalar_two_in(t), argnums=(0, 1))(T(t, A), y)
        return second, h, h2
    assert_same(*both(run))


def test_vjp_jvp_linearize():
    def run(t):
        f = t.func
        x, y = T(t, A), T(t, B)
        out, fn = f.vjp(two_in_two_out(t), x, y)
        cot = (T(t, np.arange(3.0)), T(t, np.ones(4)))
        grads = fn(cot)
        primal, tangent = f.jvp(two_in_two_out(t), (x, y), (T(t, np.ones((3, 4))), T(t, np.arange(4.0))))
        lin_out, jvp_fn = f.linearize(vector_fn(t), y)
        out_aux, fn_aux, aux = f.vjp(lambda a: (a.exp(), a.sum()), y, has_aux=True)
        return out, grads, primal, tangent, lin_out, jvp_fn(T(t, np.arange(4.0))), out_aux, fn_aux(y), aux
    assert_same(*both(run))


@pytest.mark.parametrize("api", ["jacrev", "jacfwd"])
def test_jacrev_jacfwd(api):
    def run(t):
        f = t.func
        x, y = T(t, A), T(t, B)
        J = getattr(f, api)
        return (J(vector_fn(t))(y), J(two_in_two_out(t), argnums=(0, 1))(x, y), J(two_in_two_out(t), argnums=1)(x, y),
                J(lambda p: p["w"] @ p["b"])({"w": x, "b": y}),
                J(lambda a: (a.exp(), a.sum()), has_aux=True)(y))
    assert_same(*both(run))


def mlp_loss(t, params, x, target):
    h = t.tanh(x @ params["w1"] + params["b1"])
    out = h @ params["w2"] + params["b2"]
    return ((out - target) ** 2).mean()


def test_per_sample_gradients_match_torch_and_a_loop():
    rng = np.random.default_rng(1)
    arrays = {"w1": rng.standard_normal((5, 8)), "b1": rng.standard_normal(8), "w2": rng.standard_normal((8, 3)),
              "b2": rng.standard_normal(3)}
    xs, ys = rng.standard_normal((6, 5)), rng.standard_normal((6, 3))

    def run(t):
        params = {k: T(t, v) for k, v in arrays.items()}
        return t.func.vmap(t.func.grad(lambda p, x, y: mlp_loss(t, p, x, y)), in_dims=(None, 0, 0))(
            params, T(t, xs), T(t, ys))
    ours, theirs = both(run)
    assert_same(ours, theirs)
    loop = [minitorch.func.grad(lambda p, x, y: mlp_loss(minitorch, p, x, y))(
        {k: T(minitorch, v) for k, v in arrays.items()}, T(minitorch, xs[i]), T(minitorch, ys[i])) for i in range(6)]
    for k in arrays:
        np.testing.assert_allclose(ours[k].numpy(), np.stack([g[k].numpy() for g in loop]), rtol=1e-12)


def test_per_sample_gradients_of_a_module_with_functional_call():
    torch.manual_seed(0)
    ref = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.ReLU(), torch.nn.Linear(6, 2)).double()
    ours_model = minitorch.nn.Sequential(minitorch.nn.Linear(4, 6), minitorch.nn.ReLU(),
                                         minitorch.nn.Linear(6, 2)).double()
    ours_model.load_state_dict({k: minitorch.tensor(v.numpy()) for k, v in ref.state_dict().items()})
    xs, ys = RNG.standard_normal((5, 4)), RNG.standard_normal((5, 2))

    def run(t, model):
        params = {k: v.detach() for k, v in model.named_parameters()}

        def loss(p, x, y):
            out = t.func.functional_call(model, p, (x.unsqueeze(0),))
            return ((out - y.unsqueeze(0)) ** 2).sum()
        return t.func.vmap(t.func.grad(loss), in_dims=(None, 0, 0))(params, T(t, xs), T(t, ys))
    assert_same(run(minitorch, ours_model), run(torch, ref))


def test_vmap_trees_dims_nesting_and_none():
    def run(t):
        f = t.func
        x, y = T(t, A), T(t, C)  # (3, 4), (2, 3)
        r1 = f.vmap(lambda a, b: (a * b.sum(), a.sum()), in_dims=(1, None), out_dims=(1, 0))(x, y)
        r2 = f.vmap(lambda d: d["a"] + d["b"], in_dims=({"a": 0, "b": 1},))({"a": x, "b": T(t, A.T.copy())})
        r3 = f.vmap(f.vmap(lambda a, b: a * b, in_dims=(0, None)), in_dims=(None, 0))(T(t, B), y)
        r4 = f.vmap(lambda a: a @ a, in_dims=-1, out_dims=-1)(T(t, D))
        r5 = f.vmap(lambda a: (a * 2, y), out_dims=(0, None))(x)
        r6 = f.vmap(lambda a, s: a * s, in_dims=(0, None), chunk_size=2)(x, 3.0)
        return r1, r2, r3, r4, r5, r6
    assert_same(*both(run))


@pytest.mark.parametrize("case", [
    "size_mismatch", "in_dim_out_of_range", "in_dims_structure", "non_tensor_mapped", "no_inputs",
    "out_none_batched", "non_tensor_output", "bad_randomness", "random_in_error_mode", "grad_not_scalar",
    "grad_bad_argnums", "grad_argnum_range", "grad_has_aux_shape", "vjp_cotangent_structure",
    "jacrev_chunk_size", "jvp_primals_not_tuple", "functional_call_strict", "functional_call_repeated",
    "jacfwd_random", "jvp_tangent_shape", "vjp_integer_output", "grad_integer_input",
])
def test_func_errors_match(case):
    def run(t):
        f = t.func
        x, y = T(t, A), T(t, C)
        lin = t.nn.Linear(2, 2)
        calls = {
            "size_mismatch": lambda: f.vmap(lambda a, b: a + b.sum())(x, y),
            "in_dim_out_of_range": lambda: f.vmap(lambda a: a, in_dims=2)(x),
            "in_dims_structure": lambda: f.vmap(lambda a, b: a, in_dims=(0,))(x, x),
            "non_tensor_mapped": lambda: f.vmap(lambda a, s: a, in_dims=(0, 0))(x, 2.0),
            "no_inputs": lambda: f.vmap(lambda: x)(),
            "out_none_batched": lambda: f.vmap(lambda a: a * 2, out_dims=None)(x),
            "non_tensor_output": lambda: f.vmap(lambda a: 3)(x),
            "bad_randomness": lambda: f.vmap(lambda a: a, randomness="sometimes")(x),
            "random_in_error_mode": lambda: f.vmap(lambda a: a + t.rand(4, dtype=t.float64))(x),
            "grad_not_scalar": lambda: f.grad(lambda a: a * 2)(x),
            "grad_bad_argnums": lambda: f.grad(lambda a: a.sum(), argnums=[0])(x),
            "grad_argnum_range": lambda: f.grad(lambda a: a.sum(), argnums=3)(x),
            "grad_has_aux_shape": lambda: f.grad(lambda a: a.sum(), has_aux=True)(x),
            "vjp_cotangent_structure": lambda: f.vjp(lambda a: (a, a), x)[1](x),
            "jacfwd_random": lambda: f.jacfwd(lambda a: a + t.rand(4, dtype=t.float64))(x),
            "jvp_tangent_shape": lambda: f.jvp(lambda a: a * 2, (x,), (t.ones(3, dtype=t.float64),)),
            "vjp_integer_output": lambda: f.vjp(lambda a: a.long(), x),
            "grad_integer_input": lambda: f.grad(lambda a: a.sum())(t.tensor([1, 2])),
            "jacrev_chunk_size": lambda: f.jacrev(lambda a: a, chunk_size=0)(x),
            "jvp_primals_not_tuple": lambda: f.jvp(lambda a: a, x, (x,)),
            "functional_call_strict": lambda: f.functional_call(lin, {"weight": t.zeros(2, 2)}, (t.zeros(2),),
                                                                strict=True),
            "functional_call_repeated": lambda: f.functional_call(lin, ({"bias": t.zeros(2)}, {"bias": t.zeros(2)}),
                                                                  (t.zeros(2),)),
        }
        try:
            calls[case]()
        except Exception as e:  # noqa: BLE001 - the type (and for most, the message) is what is compared
            return type(e).__name__, str(e)
        return None
    ours, theirs = both(run)
    assert theirs is not None and ours is not None
    assert ours[0] == theirs[0], (ours, theirs)
    if case != "in_dims_structure":  # PyTorch prints its TreeSpec repr there
        assert ours[1] == theirs[1]


def test_vmap_randomness_same_and_different():
    x = minitorch.zeros(4, 3)
    same = minitorch.func.vmap(lambda a: a + minitorch.rand(3), randomness="same")(x)
    diff = minitorch.func.vmap(lambda a: a + minitorch.rand(3), randomness="different")(x)
    assert bool((same == same[0]).all())
    assert not bool((diff == diff[0]).all())
