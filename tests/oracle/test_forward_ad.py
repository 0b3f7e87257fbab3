"""Forward-mode AD against PyTorch 2.13: the tangents every op of the double-backward table gives, tangents
through views and in-place writes, custom Function jvps, errors, and the forward transforms (torch.func.jvp,
jacfwd, linearize, hessian; autograd.functional.jvp and jacobian(strategy="forward-mode"))."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from test_double_backward_table import CASES, _input, _values  # noqa: E402

import minitorch  # noqa: E402


def _fwad(t):
    return t.autograd.forward_ad


def _tangent_of_case(t, name):
    """The output tangent of the case's function at its input, for a fixed tangent (or the exception type)."""
    kind, shape, function = CASES[name]
    x = _input(t, kind, shape).detach()
    direction = _values(t, shape, -1.0, 1.0, phase=0.7)
    fw = _fwad(t)
    with fw.dual_level():
        try:
            out = function(t, fw.make_dual(x, direction))
        except (RuntimeError, NotImplementedError) as error:
            return type(error).__name__
        if out is None:
            return None
        tangent = fw.unpack_dual(out).tangent
        return "none" if tangent is None else tangent.detach().numpy().copy()


# PyTorch 2.13 gives scatter_reduce(reduce="prod") no tangent at all (silently) and has no forward derivative of
# embedding_bag (NotImplementedError); minitorch gives the right tangents, which tests/test_forward_ad.py checks
# against finite differences (docs/differences.md)
NO_TANGENT_IN_PYTORCH = {"scatter_reduce_prod_self"}
NO_FORWARD_AD_IN_PYTORCH = {"embedding_bag", "embedding_bag_max", "embedding_bag_sum"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_tangents_of_every_op_match_pytorch(name):
    ours = _tangent_of_case(minitorch, name)
    assert ours is not None, f"minitorch lacks the op table's {name}"
    theirs = _tangent_of_case(torch, name)
    if name in NO_TANGENT_IN_PYTORCH | NO_FORWARD_AD_IN_PYTORCH:
        assert isinstance(ours, np.ndarray)
        assert theirs == ("none" if name in NO_TANGENT_IN_PYTORCH else "NotImplementedError")
        return
    if isinstance(theirs, str) or isinstance(ours, str):
        assert ours == theirs, (name, ours, theirs)
        return
    # (PyTorch's jvp formulas of hardsigmoid and celu round a constant to float32: a 3e-8 relative difference)
    np.testing.assert_allclose(ours, theirs, rtol=1e-7, atol=1e-10, err_msg=name)


def _scenarios(t):
    """Tangents after views and in-place writes, as lists (the same program in either library)."""
    fw, d = _fwad(t), t.float64
    results = {}
    with fw.dual_level():
        tb = t.arange(20.0, dtype=d).reshape(4, 5).clone()
        base = fw.make_dual(t.zeros(4, 5, dtype=d), tb)
        view = base[1:3, ::2]
        results["view"] = fw.unpack_dual(view).tangent.tolist()
        view.mul_(2)
        results["base_after_view_mul"] = tb.tolist()
        results["diagonal"] = fw.unpack_dual(base.diagonal()).tangent.tolist()
        results["unbind"] = fw.unpack_dual(base.unbind(1)[3]).tangent.tolist()
        results["expand_stride"] = list(fw.unpack_dual(fw.make_dual(t.ones(3, 1, dtype=d), t.ones(3, 1, dtype=d))
                                                       .expand(3, 2)).tangent.stride())
        a = fw.make_dual(t.tensor([3.0, 4.0], dtype=d), t.tensor([1.0, 2.0], dtype=d))
        a.mul_(a.clone()).add_(1.0).sin_()  # (not a.mul_(a): PyTorch's tangent is wrong there, docs/differences.md)
        results["chain_in_place"] = fw.unpack_dual(a).tangent.tolist()
        plain = t.zeros(4, dtype=d)
        left, right = plain[0:2], plain[2:4]
        right.copy_(fw.make_dual(t.ones(2, dtype=d), t.tensor([5.0, 6.0], dtype=d)))
        results["base_gets_tangent"] = fw.unpack_dual(plain).tangent.tolist()
        results["sibling_view"] = fw.unpack_dual(left).tangent.tolist()
        g = t.zeros(3, dtype=d)
        g[1] = fw.make_dual(t.tensor(1.0, dtype=d), t.tensor(9.0, dtype=d))
        results["setitem"] = fw.unpack_dual(g).tangent.tolist()
        h = fw.make_dual(t.ones(3, dtype=d), t.ones(3, dtype=d))
        h.zero_()
        results["zeroed"] = fw.unpack_dual(h).tangent.tolist()
        m = fw.make_dual(t.ones(2, 3, dtype=d), t.arange(6.0, dtype=d).reshape(2, 3).clone())
        m.t_()
        results["t_"] = fw.unpack_dual(m).tangent.tolist()
        results["detach"] = fw.unpack_dual(m.detach()).tangent
        results["unpacked_primal"] = fw.unpack_dual(fw.unpack_dual(m).primal).tangent
    results["after_exit"] = fw.unpack_dual(m).tangent
    return results


def test_tangents_through_views_and_in_place_writes_match_pytorch():
    ours, theirs = _scenarios(minitorch), _scenarios(torch)
    assert ours.keys() == theirs.keys()
    for key in ours:
        if ours[key] is None:
            assert theirs[key] is None, key
        else:
            np.testing.assert_allclose(np.asarray(ours[key]), np.asarray(theirs[key]), rtol=1e-12, err_msg=key)


def _errors(t):
    fw, d = _fwad(t), t.float64
    x = t.ones(3, dtype=d)
    attempts = {
        "outside": lambda: fw.make_dual(x, x),
        "exit_without_level": lambda: fw.exit_dual_level(),
    }
    found = {}
    for key, attempt in attempts.items():
        try:
            attempt()
            found[key] = None
        except Exception as error:  # noqa: BLE001 - the type and message are what is compared
            found[key] = (type(error).__name__, str(error))
    with fw.dual_level():
        inside = {
            "nested": lambda: fw.enter_dual_level(),
            "shape": lambda: fw.make_dual(x, t.ones(4, dtype=d)),
            "int_primal": lambda: fw.make_dual(t.arange(3), x),
            "int_tangent": lambda: fw.make_dual(x, t.arange(3)),
            "level": lambda: fw.make_dual(x, x, level=3),
            "twice": lambda: fw.make_dual(fw.make_dual(x, x), x),
        }
        for key, attempt in inside.items():
            try:
                attempt()
                found[key] = None
            except Exception as error:  # noqa: BLE001
                found[key] = (type(error).__name__, str(error))

        class NoJvp(t.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2

        try:
            NoJvp.apply(fw.make_dual(x, x))
        except Exception as error:  # noqa: BLE001
            found["no_jvp"] = (type(error).__name__, str(error))
    return found


def test_errors_match_pytorch():
    assert _errors(minitorch) == _errors(torch)


def _custom_function(t):
    fw, d = _fwad(t), t.float64

    class ScaledSin(t.autograd.Function):
        @staticmethod
        def forward(ctx, x, y, k):
            ctx.save_for_forward(x, y)
            ctx.k = k
            return x.sin() * y * k

        @staticmethod
        def backward(ctx, g):
            raise AssertionError

        @staticmethod
        def jvp(ctx, tx, ty, tk):
            x, y = ctx.saved_tensors
            return (tx * x.cos() * y + x.sin() * ty) * ctx.k

    x, y = t.tensor([0.2, 0.9], dtype=d), t.tensor([1.5, -0.5], dtype=d)
    with fw.dual_level():
        out = ScaledSin.apply(fw.make_dual(x, t.tensor([1.0, -2.0], dtype=d)), y, 3.0)
        return fw.unpack_dual(out).tangent.tolist()


def test_custom_function_jvp_matches_pytorch():
    assert _custom_function(minitorch) == pytest.approx(_custom_function(torch))


def _transforms(t):
    F, AF, d = t.func, t.autograd.functional, t.float64
    x = t.tensor([0.3, -0.2, 0.5], dtype=d)
    m = t.tensor([[0.3, -0.2, 0.5], [0.1, 0.7, -0.4]], dtype=d)
    v = t.tensor([1.0, 0.5, -0.5], dtype=d)

    def f(a):
        return (a.sin() * a.exp()).sum()

    def g(a, b):
        return (b @ a).tanh(), a.cumsum(0)

    out, jvp_fn = F.linearize(lambda a: a.tanh() * 2, x)
    results = {
        "jvp": F.jvp(g, (x, m), (v, m * 2)),
        "jvp_aux": F.jvp(lambda a: (a.exp(), a.sum()), (x,), (v,), has_aux=True),
        "jacfwd": F.jacfwd(g, argnums=(0, 1))(x, m),
        "jacfwd_dict": F.jacfwd(lambda p: p["w"] @ p["b"])({"w": m, "b": x}),
        "hessian": F.hessian(f)(x),
        "jacfwd_jacfwd": F.jacfwd(F.jacfwd(lambda a: a.sin() * a.sum()))(x),
        "jvp_of_grad": F.jvp(F.grad(f), (x,), (v,)),
        "grad_of_jvp": F.grad(lambda a: F.jvp(lambda b: (b ** 3).sum(), (a,), (v,))[1])(x),
        "linearize": (out, jvp_fn(v), jvp_fn(v * 3)),
        "per_sample_grads": F.vmap(F.grad(lambda w, xi: ((xi * w).sum() - 1.0) ** 2), in_dims=(None, 0))(x, m),
        "functional_jvp": AF.jvp(g, (x, m), (v, m * 2)),
        "functional_jacobian": AF.jacobian(g, (x, m), vectorize=True, strategy="forward-mode"),
        "functional_hessian": AF.hessian(f, x, vectorize=True, outer_jacobian_strategy="forward-mode"),
    }
    return results


def _as_np(value):
    if isinstance(value, dict):
        return {k: _as_np(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return type(value)(_as_np(v) for v in value)
    return value.detach().numpy()


def _assert_same(ours, theirs, key):
    assert type(ours) is type(theirs), key
    if isinstance(ours, dict):
        assert ours.keys() == theirs.keys(), key
        for k in ours:
            _assert_same(ours[k], theirs[k], key)
    elif isinstance(ours, (tuple, list)):
        assert len(ours) == len(theirs), key
        for a, b in zip(ours, theirs):
            _assert_same(a, b, key)
    else:
        assert ours.shape == theirs.shape, key
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12, err_msg=key)


def test_forward_transforms_match_pytorch():
    ours, theirs = _transforms(minitorch), _transforms(torch)
    for key in theirs:
        _assert_same(_as_np(ours[key]), _as_np(theirs[key]), key)
