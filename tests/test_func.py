"""minitorch.autograd.functional and minitorch.func without PyTorch: Jacobians, Hessians and their products
against central finite differences and closed forms; vmap against explicit loops; functional_call's
swapping and restoring."""

from __future__ import annotations

import numpy as np
import pytest

import minitorch as torch
from minitorch.autograd import functional as AF
from minitorch.func import (
    functional_call,
    grad,
    grad_and_value,
    hessian,
    jacfwd,
    jacrev,
    jvp,
    linearize,
    vjp,
    vmap,
)

RNG = np.random.default_rng(3)


def t64(a, requires_grad=False):
    return torch.tensor(np.asarray(a, dtype=np.float64), requires_grad=requires_grad)


def numeric_jacobian(f, x: np.ndarray, eps=1e-6) -> np.ndarray:
    """d f / d x by central differences: shape f(x).shape + x.shape."""
    out = f(x)
    jac = np.zeros(out.shape + x.shape)
    for idx in np.ndindex(x.shape):
        dx = np.zeros_like(x)
        dx[idx] = eps
        jac[(...,) + idx] = (f(x + dx) - f(x - dx)) / (2 * eps)
    return jac


def f_vec(x):
    return (x.sin() * x.exp()).reshape(2, 3) + x.reshape(2, 3) ** 2


def f_vec_np(a):
    return (np.sin(a) * np.exp(a)).reshape(2, 3) + a.reshape(2, 3) ** 2


def f_scalar(x):
    return (x.sin() * x ** 2).sum() + (x ** 3).prod()


def f_scalar_np(a):
    return np.sum(np.sin(a) * a ** 2) + np.prod(a ** 3)


X = RNG.standard_normal(6) * 0.7


def test_jacobian_matches_finite_differences():
    for vectorize in (False, True):
        jac = AF.jacobian(f_vec, t64(X), vectorize=vectorize)
        assert jac.shape == (2, 3, 6)
        np.testing.assert_allclose(jac.numpy(), numeric_jacobian(f_vec_np, X), rtol=1e-6, atol=1e-7)


def test_jacobian_of_tuples_is_nested_like_pytorch():
    a, b = t64(RNG.standard_normal((2, 3))), t64(RNG.standard_normal(3))
    jac = AF.jacobian(lambda x, y: (x @ y, y.exp()), (a, b))
    assert isinstance(jac, tuple) and len(jac) == 2 and all(len(j) == 2 for j in jac)
    assert jac[0][0].shape == (2, 2, 3) and jac[0][1].shape == (2, 3)
    np.testing.assert_allclose(jac[0][1].numpy(), a.numpy())  # d(x @ y)/dy = x
    np.testing.assert_allclose(jac[1][0].numpy(), np.zeros((3, 2, 3)))  # exp(y) ignores x
    np.testing.assert_allclose(jac[1][1].numpy(), np.diag(np.exp(b.numpy())))


def test_hessian_hvp_vhp_match_finite_differences():
    h_num = numeric_jacobian(lambda a: numeric_jacobian(f_scalar_np, a, 1e-4), X, 1e-4)
    h = AF.hessian(f_scalar, t64(X))
    np.testing.assert_allclose(h.numpy(), h_num, rtol=1e-4, atol=1e-5)
    v = RNG.standard_normal(6)
    value, hv = AF.hvp(f_scalar, t64(X), t64(v))
    _, vh = AF.vhp(f_scalar, t64(X), t64(v))
    np.testing.assert_allclose(value.item(), f_scalar_np(X))
    np.testing.assert_allclose(hv.numpy(), h.numpy() @ v, rtol=1e-10)
    np.testing.assert_allclose(vh.numpy(), v @ h.numpy(), rtol=1e-10)


def test_vjp_and_jvp_are_the_jacobian_products():
    J = numeric_jacobian(f_vec_np, X).reshape(6, 6)
    u, w = RNG.standard_normal((2, 3)), RNG.standard_normal(6)
    out, vj = AF.vjp(f_vec, t64(X), t64(u))
    out2, jv = AF.jvp(f_vec, t64(X), t64(w))
    np.testing.assert_allclose(out.numpy(), f_vec_np(X))
    np.testing.assert_allclose(vj.numpy(), u.reshape(-1) @ J, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(jv.numpy(), (J @ w).reshape(2, 3), rtol=1e-6, atol=1e-7)
    assert not out.requires_grad and not vj.requires_grad and not jv.requires_grad


def test_create_graph_keeps_the_result_differentiable():
    x = t64(X, requires_grad=True)
    _, hv = AF.hvp(f_scalar, x, t64(np.ones(6)), create_graph=True)
    assert hv.requires_grad
    (g,) = torch.autograd.grad(hv.sum(), x)
    # d/dx (H(x) 1) summed = the third derivative contracted twice with ones; check against differences
    expected = numeric_jacobian(lambda a: numeric_jacobian(lambda b: numeric_jacobian(f_scalar_np, b, 1e-3), a,
                                                           1e-3).sum(), X, 1e-3)
    np.testing.assert_allclose(g.numpy(), expected, rtol=1e-3, atol=1e-3)


def test_strict_refuses_independent_outputs():
    x, y = t64(X), t64(np.ones(2))
    with pytest.raises(RuntimeError, match="independent of input 1"):
        AF.jacobian(lambda a, b: a.exp(), (x, y), strict=True)
    with pytest.raises(RuntimeError, match="does not require gradients"):
        AF.vjp(lambda a: torch.ones(2), x, torch.ones(2), strict=True)
    # without strict, the missing block is zeros
    assert float(AF.jacobian(lambda a, b: a.exp(), (x, y))[1].abs().sum()) == 0.0


def test_forward_mode_strategy_agrees_with_reverse_mode():
    reverse = AF.jacobian(f_vec, t64(X))
    forward = AF.jacobian(f_vec, t64(X), vectorize=True, strategy="forward-mode")
    np.testing.assert_allclose(forward.numpy(), reverse.numpy(), rtol=1e-12, atol=1e-12)
    reverse = AF.hessian(f_scalar, t64(X))
    forward = AF.hessian(f_scalar, t64(X), vectorize=True, outer_jacobian_strategy="forward-mode")
    assert forward.requires_grad  # as PyTorch's (its forward-over-reverse inputs require grad)
    np.testing.assert_allclose(forward.detach().numpy(), reverse.numpy(), rtol=1e-12, atol=1e-12)
    with pytest.raises(NotImplementedError, match="only implemented for `vectorize=True`"):
        AF.jacobian(f_vec, t64(X), strategy="forward-mode")


# torch.func --------------------------------------------------------------------------------------
def test_grad_and_value_with_argnums_and_aux():
    a, b = RNG.standard_normal(3), RNG.standard_normal(3)

    def f(x, y):
        return (x * y).sum() + (x ** 2).sum(), {"norm": y.norm()}

    (gx, gy), (value, aux) = grad_and_value(f, argnums=(0, 1), has_aux=True)(t64(a), t64(b))
    np.testing.assert_allclose(gx.numpy(), b + 2 * a)
    np.testing.assert_allclose(gy.numpy(), a)
    np.testing.assert_allclose(value.item(), a @ b + a @ a)
    np.testing.assert_allclose(aux["norm"].item(), np.linalg.norm(b))
    g, aux = grad(f, has_aux=True)(t64(a), t64(b))
    np.testing.assert_allclose(g.numpy(), b + 2 * a)


def test_grad_of_a_parameter_dict_and_unused_entries_are_zero():
    p = {"w": t64(RNG.standard_normal(3)), "unused": t64(np.ones(2))}
    g = grad(lambda d: (d["w"] ** 3).sum())(p)
    np.testing.assert_allclose(g["w"].numpy(), 3 * p["w"].numpy() ** 2)
    np.testing.assert_allclose(g["unused"].numpy(), np.zeros(2))


def test_nested_grad_is_the_second_derivative():
    x = t64(0.7)
    d2 = grad(grad(lambda t: t.sin() * t ** 3))(x)
    expected = -np.sin(0.7) * 0.7 ** 3 + 6 * np.cos(0.7) * 0.7 ** 2 + 6 * 0.7 * np.sin(0.7)
    np.testing.assert_allclose(d2.item(), expected)


def test_grad_keeps_the_graph_of_arguments_that_require_grad():
    w = t64(RNG.standard_normal(3), requires_grad=True)
    g = grad(lambda v: (v ** 3).sum())(w)  # 3 w^2, still a function of w (MAML's inner step)
    (gg,) = torch.autograd.grad(g.sum(), w)
    np.testing.assert_allclose(gg.numpy(), 6 * w.detach().numpy())


def test_vjp_jvp_linearize_jacobians_and_hessian():
    J = numeric_jacobian(f_vec_np, X)
    out, vjp_fn = vjp(f_vec, t64(X))
    u = RNG.standard_normal((2, 3))
    (vj,) = vjp_fn(t64(u))
    np.testing.assert_allclose(vj.numpy(), np.tensordot(u, J, 2), rtol=1e-6, atol=1e-7)
    (vj_again,) = vjp_fn(t64(u))  # the graph is retained
    np.testing.assert_allclose(vj_again.numpy(), vj.numpy())
    w = RNG.standard_normal(6)
    _, jv = jvp(f_vec, (t64(X),), (t64(w),))
    _, jvp_fn = linearize(f_vec, t64(X))
    np.testing.assert_allclose(jv.numpy(), J @ w, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(jvp_fn(t64(w)).numpy(), J @ w, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(jacrev(f_vec)(t64(X)).numpy(), J, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(jacfwd(f_vec)(t64(X)).numpy(), J, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(hessian(f_scalar)(t64(X)).numpy(), AF.hessian(f_scalar, t64(X)).numpy(),
                               rtol=1e-12)


def test_vmap_is_a_loop_with_in_dims_out_dims_and_nesting():
    a, b = RNG.standard_normal((4, 3)), RNG.standard_normal((3, 5))
    out = vmap(lambda x, y: x @ y, in_dims=(0, None))(t64(a), t64(b))
    np.testing.assert_allclose(out.numpy(), a @ b)
    outer = vmap(vmap(lambda x, y: x * y, in_dims=(None, 0)), in_dims=(0, None))(t64(a[:, 0]), t64(b[0]))
    np.testing.assert_allclose(outer.numpy(), np.outer(a[:, 0], b[0]))
    moved = vmap(lambda x: x * 2, in_dims=1, out_dims=1)(t64(b))
    np.testing.assert_allclose(moved.numpy(), 2 * b)
    first, second = vmap(lambda x: (x.sum(), x), out_dims=(0, 1))(t64(a))
    np.testing.assert_allclose(first.numpy(), a.sum(1))
    np.testing.assert_allclose(second.numpy(), a.T)
    with pytest.raises(ValueError, match="same size in the mapped dimension, got sizes \\[4, 3\\]"):
        vmap(lambda x, y: x + y)(t64(a), t64(b))


def mlp_loss(params, x, y):
    h = (x @ params["w1"] + params["b1"]).relu()
    return ((h @ params["w2"] + params["b2"] - y) ** 2).mean()


def test_per_sample_gradients_match_a_loop_over_samples():
    params = {"w1": t64(RNG.standard_normal((5, 16))), "b1": t64(RNG.standard_normal(16)),
              "w2": t64(RNG.standard_normal((16, 2))), "b2": t64(RNG.standard_normal(2))}
    xs, ys = t64(RNG.standard_normal((8, 5))), t64(RNG.standard_normal((8, 2)))
    batched = vmap(grad(mlp_loss), in_dims=(None, 0, 0))(params, xs, ys)
    for i in range(8):
        p = {k: v.detach().requires_grad_() for k, v in params.items()}
        mlp_loss(p, xs[i], ys[i]).backward()
        for k in params:
            np.testing.assert_allclose(batched[k][i].numpy(), p[k].grad.numpy(), rtol=1e-12)


def test_vmap_randomness_modes():
    x = torch.zeros(3, 2)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        vmap(lambda a: a + torch.rand(2))(x)
    same = vmap(lambda a: a + torch.rand(2), randomness="same")(x)
    assert bool((same == same[0]).all())
    different = vmap(lambda a: a + torch.rand(2), randomness="different")(x)
    assert not bool((different == different[0]).all())


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = torch.nn.Linear(3, 3)
        self.head = torch.nn.Linear(3, 1)
        self.head.weight = torch.nn.Parameter(torch.ones(1, 3))
        self.register_buffer("scale", torch.tensor(2.0))

    def forward(self, x):
        return self.head(self.inner(x)) * self.scale


def test_functional_call_swaps_nested_names_and_restores():
    net = Net()
    before = {k: v for k, v in net.state_dict().items()}
    zeros = {"inner.weight": torch.zeros(3, 3), "inner.bias": torch.ones(3), "scale": torch.tensor(10.0)}
    out = functional_call(net, zeros, (torch.ones(2, 3),))
    expected = (3.0 + net.head.bias.item()) * 10.0  # inner gives ones, head sums them
    np.testing.assert_allclose(out.detach().numpy(), np.full((2, 1), expected), rtol=1e-6)
    for k, v in net.state_dict().items():
        assert v is before[k] or bool((v == before[k]).all())
    assert isinstance(net.inner.weight, torch.nn.Parameter)


def test_functional_call_restores_after_an_error():
    net = Net()
    weight = net.inner.weight
    with pytest.raises(RuntimeError):
        functional_call(net, {"inner.weight": torch.zeros(3, 3)}, (torch.ones(2, 4),))  # wrong input width
    assert net.inner.weight is weight


def test_functional_call_tied_weights():
    net = torch.nn.Module()
    net.a = torch.nn.Linear(2, 2, bias=False)
    net.b = torch.nn.Linear(2, 2, bias=False)
    net.b.weight = net.a.weight
    net.forward = lambda x: net.b(net.a(x))
    out = functional_call(net, {"a.weight": torch.eye(2) * 2}, (torch.ones(2),))
    np.testing.assert_allclose(out.detach().numpy(), [4.0, 4.0])  # b's weight is tied: also 2 I
    untied = functional_call(net, {"a.weight": torch.eye(2) * 2}, (torch.ones(2),), tie_weights=False)
    assert not np.allclose(untied.detach().numpy(), [4.0, 4.0])
    with pytest.raises(ValueError, match="which are tied"):
        functional_call(net, {"a.weight": torch.eye(2), "b.weight": torch.zeros(2, 2)}, (torch.ones(2),))
