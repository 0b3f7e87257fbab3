"""Optimizers: updates against numpy transcriptions of PyTorch's documented algorithms, pinned values,
param groups, closures, state_dict round trips and PyTorch's errors."""

from __future__ import annotations

import io
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch as torch
import minitorch.optim as optim
from minitorch.testing.strategies import shapes, tensors

# numpy references: PyTorch's documented pseudo-code (grad negated first when maximize) ----------------


def ref_sgd(params, grads, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, maximize=False):
    params = [p.copy() for p in params]
    bufs = [None] * len(params)
    for step_grads in grads:
        for i, (p, g) in enumerate(zip(params, step_grads)):
            g = -g if maximize else g
            g = g + weight_decay * p
            if momentum:
                bufs[i] = g.copy() if bufs[i] is None else momentum * bufs[i] + (1 - dampening) * g
                g = g + momentum * bufs[i] if nesterov else bufs[i]
            params[i] = p - lr * g
    return params


def ref_adam(params, grads, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False,
             maximize=False, decoupled_weight_decay=False):
    beta1, beta2 = betas
    params = [p.copy() for p in params]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    v_max = [np.zeros_like(p) for p in params]
    for t, step_grads in enumerate(grads, start=1):
        for i, g in enumerate(step_grads):
            g = -g if maximize else g
            if decoupled_weight_decay:
                params[i] = params[i] * (1 - lr * weight_decay)
            else:
                g = g + weight_decay * params[i]
            m[i] = beta1 * m[i] + (1 - beta1) * g
            v[i] = beta2 * v[i] + (1 - beta2) * g * g
            m_hat = m[i] / (1 - beta1**t)
            if amsgrad:
                v_max[i] = np.maximum(v_max[i], v[i])
                v_hat = v_max[i] / (1 - beta2**t)
            else:
                v_hat = v[i] / (1 - beta2**t)
            params[i] = params[i] - lr * m_hat / (np.sqrt(v_hat) + eps)
    return params


def ref_rmsprop(params, grads, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                maximize=False):
    params = [p.copy() for p in params]
    v = [np.zeros_like(p) for p in params]
    g_ave = [np.zeros_like(p) for p in params]
    buf = [np.zeros_like(p) for p in params]
    for step_grads in grads:
        for i, g in enumerate(step_grads):
            g = -g if maximize else g
            g = g + weight_decay * params[i]
            v[i] = alpha * v[i] + (1 - alpha) * g * g
            v_tilde = v[i]
            if centered:
                g_ave[i] = alpha * g_ave[i] + (1 - alpha) * g
                v_tilde = v_tilde - g_ave[i] ** 2
            if momentum > 0:
                buf[i] = momentum * buf[i] + g / (np.sqrt(v_tilde) + eps)
                params[i] = params[i] - lr * buf[i]
            else:
                params[i] = params[i] - lr * g / (np.sqrt(v_tilde) + eps)
    return params


def ref_adagrad(params, grads, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                maximize=False):
    params = [p.copy() for p in params]
    sums = [np.full_like(p, initial_accumulator_value) for p in params]
    for t, step_grads in enumerate(grads, start=1):
        clr = lr / (1 + (t - 1) * lr_decay)
        for i, g in enumerate(step_grads):
            g = -g if maximize else g
            g = g + weight_decay * params[i]
            sums[i] = sums[i] + g * g
            params[i] = params[i] - clr * g / (np.sqrt(sums[i]) + eps)
    return params


# helpers ---------------------------------------------------------------------------------------------


def make_params(device, rng):
    """A matrix, a vector and a non-contiguous (transposed) leaf, float64."""
    values = [rng.standard_normal((3, 4)), rng.standard_normal(5), rng.standard_normal((4, 2))]
    params = [torch.tensor(values[0], device=device, requires_grad=True),
              torch.tensor(values[1], device=device, requires_grad=True),
              torch.tensor(values[2].T.copy(), device=device).t().detach().requires_grad_()]
    assert not params[2].is_contiguous()
    return params, values


def run(optimizer, params, grads, device):
    for step_grads in grads:
        for p, g in zip(params, step_grads):
            p.grad = torch.tensor(g, device=device)
        optimizer.step()
    return [p.detach().cpu().numpy() for p in params]


def check_against_reference(device, cls, reference, kwargs, steps=5, **ref_kwargs):
    rng = np.random.default_rng(0)
    params, values = make_params(device, rng)
    grads = [[rng.standard_normal(v.shape) for v in values] for _ in range(steps)]
    got = run(cls(params, **kwargs), params, grads, device)
    expected = reference(values, grads, **kwargs, **ref_kwargs)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)


def one_param(values, device="cpu", dtype=torch.float64):
    return torch.tensor(values, dtype=dtype, device=device, requires_grad=True)


def set_grad(p, values):
    p.grad = torch.tensor(values, dtype=p.dtype, device=p.device)


# update rules --------------------------------------------------------------------------------------


@pytest.mark.parametrize("kwargs", [
    dict(lr=0.1),
    dict(lr=0.1, momentum=0.9),
    dict(lr=0.05, momentum=0.8, dampening=0.3, weight_decay=0.1),
    dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01),
    dict(lr=0.1, momentum=0.5, maximize=True, weight_decay=0.2),
])
def test_sgd_matches_reference(device, kwargs):
    check_against_reference(device, optim.SGD, ref_sgd, kwargs)


@pytest.mark.parametrize("kwargs", [
    dict(),
    dict(lr=0.1, betas=(0.8, 0.9), eps=1e-6),
    dict(lr=0.1, amsgrad=True),
    dict(lr=0.05, weight_decay=0.1, maximize=True),
    dict(lr=0.05, weight_decay=0.1, amsgrad=True, decoupled_weight_decay=True),
])
def test_adam_matches_reference(device, kwargs):
    check_against_reference(device, optim.Adam, ref_adam, kwargs)


@pytest.mark.parametrize("kwargs", [dict(), dict(lr=0.1, weight_decay=0.3, amsgrad=True, maximize=True)])
def test_adamw_matches_reference(device, kwargs):
    def reference(values, grads, weight_decay=1e-2, **other):
        return ref_adam(values, grads, weight_decay=weight_decay, decoupled_weight_decay=True, **other)

    check_against_reference(device, optim.AdamW, reference, kwargs)


@pytest.mark.parametrize("kwargs", [
    dict(),
    dict(lr=0.05, alpha=0.9, weight_decay=0.1),
    dict(lr=0.01, centered=True),
    dict(lr=0.01, momentum=0.9, centered=True, maximize=True),
    dict(lr=0.01, momentum=0.5, eps=1e-3),
])
def test_rmsprop_matches_reference(device, kwargs):
    check_against_reference(device, optim.RMSprop, ref_rmsprop, kwargs)


@pytest.mark.parametrize("kwargs", [
    dict(),
    dict(lr=0.1, lr_decay=0.5),
    dict(lr=0.1, weight_decay=0.2, initial_accumulator_value=0.3, eps=1e-4),
    dict(lr=0.1, lr_decay=0.1, maximize=True),
])
def test_adagrad_matches_reference(device, kwargs):
    check_against_reference(device, optim.Adagrad, ref_adagrad, kwargs)


ALGORITHMS = [
    (optim.SGD, ref_sgd, dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1)),
    (optim.Adam, ref_adam, dict(lr=0.1, amsgrad=True, weight_decay=0.1)),
    (optim.RMSprop, ref_rmsprop, dict(lr=0.01, momentum=0.5, centered=True)),
    (optim.Adagrad, ref_adagrad, dict(lr=0.1, lr_decay=0.1)),
]


@given(shape=shapes(1, 3), data=st.data(), algorithm=st.sampled_from(ALGORITHMS))
def test_any_shape_and_layout(shape, data, algorithm):
    """Parameters of any layout (transposed, every-other-element views) are updated exactly where they
    live: the rest of their storage is untouched."""
    cls, reference, kwargs = algorithm
    p = data.draw(tensors(shape=shape, requires_grad=True))
    grads = [[data.draw(tensors(shape=shape)).numpy().copy()] for _ in range(3)]
    storage_before = np.array(p.storage().tolist())
    start = p.detach().numpy().copy()
    got = run(cls([p], **kwargs), [p], grads, "cpu")
    np.testing.assert_allclose(got[0], reference([start], grads, **kwargs)[0], rtol=1e-10, atol=1e-12)
    owned = np.zeros(storage_before.shape, dtype=bool)  # the storage elements p's view covers
    owned[np.asarray(p.stride()) @ np.indices(shape).reshape(len(shape), -1) + p.storage_offset()] = True
    storage_after = np.array(p.storage().tolist())
    np.testing.assert_array_equal(storage_after[~owned], storage_before[~owned])


# pinned values (worked by hand from the formulas) -----------------------------------------------------


def test_sgd_nesterov_pinned():
    # buf = 0.5, g = 0.5 + 0.9 * 0.5 = 0.95, p = 1 - 0.095; then buf = 0.95, g = 0.5 + 0.855 = 1.355
    p = one_param([1.0])
    opt = optim.SGD([p], lr=0.1, momentum=0.9, nesterov=True)
    seen = []
    for _ in range(2):
        set_grad(p, [0.5])
        opt.step()
        seen.append(p.item())
    assert seen == pytest.approx([0.905, 0.7695], abs=1e-12)
    assert opt.state[p]["momentum_buffer"].item() == pytest.approx(0.95)


def test_adam_amsgrad_pinned():
    # step 1 moves by lr * sign(g); step 2 has v2 = 0.0039961 < v1 = 0.004, so amsgrad keeps v1:
    # p = (1 - 0.1 * 2 / (2 + 1e-8)) - 0.1 / 0.19 * 0.181 / (sqrt(0.004 / 0.001999) + 1e-8)
    p = one_param([1.0])
    opt = optim.Adam([p], lr=0.1, amsgrad=True)
    set_grad(p, [2.0])
    opt.step()
    assert p.item() == pytest.approx(0.9, abs=1e-9)
    set_grad(p, [0.01])
    opt.step()
    assert p.item() == pytest.approx(0.83265561844, abs=1e-11)
    assert opt.state[p]["max_exp_avg_sq"].item() == pytest.approx(0.004)
    assert opt.state[p]["step"].item() == 2.0 and opt.state[p]["step"].dtype == torch.float32


def test_adamw_pinned():
    # decay first: 1 * (1 - 0.1 * 0.5) = 0.95, then the first Adam step moves by lr: 0.85
    p = one_param([1.0])
    opt = optim.AdamW([p], lr=0.1, weight_decay=0.5)
    set_grad(p, [3.0])
    opt.step()
    assert p.item() == pytest.approx(0.85, abs=1e-9)


def test_rmsprop_centered_momentum_pinned():
    # v = 0.01 * 4 = 0.04, g_avg = 0.02, avg = sqrt(0.04 - 0.0004) + eps, buf = 2 / avg, p = 1 - 0.01 * buf
    p = one_param([1.0])
    opt = optim.RMSprop([p], lr=0.01, momentum=0.9, centered=True)
    set_grad(p, [2.0])
    opt.step()
    assert p.item() == pytest.approx(1 - 0.01 * 2 / (math.sqrt(0.0396) + 1e-8), abs=1e-12)
    assert p.item() == pytest.approx(0.8994962235, abs=1e-10)


def test_adagrad_lr_decay_pinned():
    # step 1: clr = 1, sum = 4, p = 1 - 2 / 2 = 0; step 2: clr = 1 / 1.5, sum = 8, p = -(2 / sqrt(8)) / 1.5
    p = one_param([1.0])
    opt = optim.Adagrad([p], lr=1.0, lr_decay=0.5)
    for _ in range(2):
        set_grad(p, [2.0])
        opt.step()
    assert p.item() == pytest.approx(-0.4714045208, abs=1e-10)


# the Optimizer machinery ----------------------------------------------------------------------------


def test_updates_in_place_keep_identity_and_bump_version(device):
    p = one_param([1.0, 2.0], device)
    ptr, version = p.data_ptr(), p._version
    opt = optim.Adam([p], lr=0.1)
    set_grad(p, [1.0, 1.0])
    opt.step()
    assert p.data_ptr() == ptr and p._version > version
    assert p.is_leaf and p.requires_grad and p.grad_fn is None


def test_float32_params_stay_float32(device):
    p = one_param([1.0, 2.0], device, torch.float32)
    for opt in (optim.SGD([p], lr=0.1, momentum=0.9), optim.Adam([p]), optim.RMSprop([p], centered=True)):
        set_grad(p, [0.5, -0.5])
        opt.step()
        assert p.dtype == torch.float32
        assert all(v.dtype == torch.float32 for v in opt.state[p].values() if v.dim() > 0)


def test_version_bump_is_seen_by_backward():
    """A graph that saved the parameter refuses to backward once a step changed it (as in PyTorch)."""
    p = one_param([1.0, 2.0])
    loss = (p * p).sum()
    opt = optim.SGD([p], lr=0.1)
    set_grad(p, [1.0, 1.0])
    opt.step()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


def test_params_without_grad_are_skipped():
    a, b = one_param([1.0]), one_param([2.0])
    opt = optim.Adam([a, b], lr=0.1)
    set_grad(a, [1.0])
    opt.step()
    assert b.item() == 2.0 and b not in opt.state
    assert a.item() == pytest.approx(0.9)


def test_param_groups_override_defaults():
    a, b = one_param([1.0]), one_param([1.0])
    opt = optim.SGD([{"params": [a]}, {"params": b, "lr": 0.5, "momentum": 0.9}], lr=0.1)
    assert opt.param_groups[0]["lr"] == 0.1 and opt.param_groups[0]["momentum"] == 0
    assert opt.param_groups[1]["lr"] == 0.5 and opt.param_groups[1]["params"] == [b]
    set_grad(a, [1.0])
    set_grad(b, [1.0])
    opt.step()
    assert (a.item(), b.item()) == pytest.approx((0.9, 0.5))
    assert "momentum_buffer" in opt.state[b] and a not in opt.state


def test_add_param_group_and_named_params():
    a, b = one_param([1.0]), one_param([1.0])
    opt = optim.Adam([("w", a)], lr=0.1)
    assert opt.param_groups[0]["param_names"] == ["w"]
    with pytest.raises(ValueError, match="cannot add param group without names"):
        opt.add_param_group({"params": [b]})
    opt.add_param_group({"params": [("b", b)], "lr": 0.01})
    assert opt.param_groups[1]["lr"] == 0.01 and opt.param_groups[1]["betas"] == (0.9, 0.999)
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter group"):
        opt.add_param_group({"params": [("again", a)]})


def test_constructor_errors():
    a = one_param([1.0])
    with pytest.raises(ValueError, match="optimizer got an empty parameter list"):
        optim.SGD([], lr=0.1)
    with pytest.raises(TypeError, match="should be an iterable of Tensors or dicts, but got torch.DoubleTensor"):
        optim.SGD(a, lr=0.1)
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter group"):
        optim.SGD([{"params": [a]}, {"params": [a]}], lr=0.1)
    with pytest.raises(TypeError, match="ordering of tensors in sets will change"):
        optim.SGD([{"params": {a}}], lr=0.1)
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        optim.SGD([a * 2], lr=0.1)
    with pytest.raises(TypeError, match="optimizer can only optimize Tensors, but one of the params is list"):
        optim.SGD([[1.0]], lr=0.1)
    with pytest.warns(UserWarning, match="duplicate parameters"):
        optim.SGD([a, a], lr=0.1)
    with pytest.raises(RuntimeError, match="differentiable=True is not supported"):
        optim.Adam([a], differentiable=True)


@pytest.mark.parametrize("make, message", [
    (lambda p: optim.SGD([p], lr=-1), "Invalid learning rate: -1"),
    (lambda p: optim.SGD([p], momentum=-0.1), "Invalid momentum value: -0.1"),
    (lambda p: optim.SGD([p], weight_decay=-1), "Invalid weight_decay value: -1"),
    (lambda p: optim.SGD([p], lr=0.1, nesterov=True), "Nesterov momentum requires a momentum and zero dampening"),
    (lambda p: optim.SGD([p], momentum=0.9, dampening=0.1, nesterov=True), "Nesterov momentum requires"),
    (lambda p: optim.Adam([p], betas=(1.0, 0.9)), "Invalid beta parameter at index 0: 1.0"),
    (lambda p: optim.Adam([p], betas=(0.9, -0.1)), "Invalid beta parameter at index 1: -0.1"),
    (lambda p: optim.Adam([p], eps=-1e-8), "Invalid epsilon value: -1e-08"),
    (lambda p: optim.AdamW([p], lr=-0.1), "Invalid learning rate: -0.1"),
    (lambda p: optim.RMSprop([p], alpha=-0.5), "Invalid alpha value: -0.5"),
    (lambda p: optim.Adagrad([p], lr_decay=-1), "Invalid lr_decay value: -1"),
    (lambda p: optim.Adagrad([p], initial_accumulator_value=-1), "Invalid initial_accumulator_value value: -1"),
])
def test_invalid_options(make, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        make(one_param([1.0]))


def test_closure_runs_with_grad_enabled_and_returns_loss():
    p = one_param([3.0])
    opt = optim.SGD([p], lr=0.25)

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    with torch.no_grad():
        loss = opt.step(closure)
    assert loss.item() == 9.0
    assert p.item() == pytest.approx(3.0 - 0.25 * 6.0)
    for cls in (optim.Adam, optim.AdamW, optim.RMSprop, optim.Adagrad):
        before = p.item()
        assert cls([p]).step(closure).item() == before**2 and p.item() < before


def test_zero_grad():
    p = one_param([1.0, 2.0])
    opt = optim.SGD([p], lr=0.1)
    (p * p).sum().backward()
    opt.zero_grad(set_to_none=False)
    grad = p.grad
    assert grad is not None and grad.tolist() == [0.0, 0.0] and not grad.requires_grad
    (p * p).sum().backward()
    assert p.grad is grad and p.grad.tolist() == [2.0, 4.0]
    opt.zero_grad()
    assert p.grad is None


def test_lr_as_tensor():
    p = one_param([1.0])
    opt = optim.SGD([p], lr=torch.tensor(0.5))
    set_grad(p, [1.0])
    opt.step()
    assert p.item() == pytest.approx(0.5)


def test_step_hooks():
    p = one_param([1.0])
    opt = optim.SGD([p], lr=0.1)
    calls = []
    pre = opt.register_step_pre_hook(lambda o, args, kwargs: calls.append(("pre", p.item())))
    opt.register_step_post_hook(lambda o, args, kwargs: calls.append(("post", p.item())))
    set_grad(p, [1.0])
    opt.step()
    pre.remove()
    opt.step()
    assert calls == [("pre", 1.0), ("post", pytest.approx(0.9)), ("post", pytest.approx(0.8))]


def test_repr():
    opt = optim.SGD([one_param([1.0])], lr=0.1, momentum=0.9)
    assert repr(opt) == (
        "SGD (\nParameter Group 0\n    dampening: 0\n    differentiable: False\n    foreach: None\n"
        "    fused: None\n    lr: 0.1\n    maximize: False\n    momentum: 0.9\n    nesterov: False\n"
        "    weight_decay: 0\n)"
    )


def test_meta_params_step_shape_only():
    p = torch.zeros(3, 2, device="meta", requires_grad=True)
    opt = optim.Adam([p], amsgrad=True, weight_decay=0.1)
    p.grad = torch.zeros(3, 2, device="meta")
    opt.step()
    assert opt.state[p]["exp_avg"].device.type == "meta" and opt.state[p]["exp_avg"].shape == (3, 2)


# sparse gradients: the seam the sparse layout will plug into ------------------------------------------


class _SparseLookingGrad(torch.Tensor):
    """Stands in for a sparse COO gradient until the layout exists: only ``is_sparse`` matters here."""

    is_sparse = True

    def __new__(cls, like):
        return cls._make(like._array, like._storage, like._offset)


@pytest.mark.parametrize("make, message", [
    (lambda p: optim.Adam([p]), "Adam does not support sparse gradients, please consider SparseAdam instead"),
    (lambda p: optim.AdamW([p]), "Adam does not support sparse gradients, please consider SparseAdam instead"),
    (lambda p: optim.RMSprop([p]), "RMSprop does not support sparse gradients"),
])
def test_sparse_gradients_are_refused(make, message):
    p = one_param([1.0, 2.0])
    opt = make(p)
    p.grad = _SparseLookingGrad(torch.ones(2, dtype=torch.float64))
    with pytest.raises(RuntimeError, match=message):
        opt.step()
    assert p.tolist() == [1.0, 2.0]


# state_dict ------------------------------------------------------------------------------------------


def test_state_dict_structure():
    a, b, c = one_param([1.0]), one_param([2.0]), one_param([3.0])
    opt = optim.Adam([{"params": [a, b]}, {"params": [c], "lr": 0.01}], lr=0.1)
    set_grad(a, [1.0])
    set_grad(c, [1.0])
    opt.step()
    sd = opt.state_dict()
    assert set(sd) == {"state", "param_groups"}
    assert [g["params"] for g in sd["param_groups"]] == [[0, 1], [2]]
    assert [g["lr"] for g in sd["param_groups"]] == [0.1, 0.01]
    assert set(sd["state"]) == {0, 2}
    assert set(sd["state"][0]) == {"step", "exp_avg", "exp_avg_sq"}
    assert sd["state"][0]["step"].item() == 1.0


@pytest.mark.parametrize("make", [
    lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True),
    lambda ps: optim.Adam(ps, lr=0.1, amsgrad=True),
    lambda ps: optim.AdamW(ps, lr=0.1),
    lambda ps: optim.RMSprop(ps, lr=0.01, momentum=0.5, centered=True),
    lambda ps: optim.Adagrad(ps, lr=0.1, lr_decay=0.1),
])
def test_state_dict_round_trip_through_save_load(make):
    """Save after 3 steps, load into a fresh optimizer over copies, continue: same as never stopping."""
    rng = np.random.default_rng(1)
    grads = [[rng.standard_normal(3), rng.standard_normal((2, 2))] for _ in range(6)]
    init = [rng.standard_normal(3), rng.standard_normal((2, 2))]
    params = [one_param(v) for v in init]
    opt = make(params)
    run(opt, params, grads[:3], "cpu")
    buffer = io.BytesIO()
    torch.save({"optimizer": opt.state_dict(), "params": [p.detach() for p in params]}, buffer)
    expected = run(opt, params, grads[3:], "cpu")

    buffer.seek(0)
    checkpoint = torch.load(buffer)
    resumed = [one_param(p.numpy()) for p in checkpoint["params"]]
    opt2 = make(resumed)
    opt2.load_state_dict(checkpoint["optimizer"])
    assert opt2.state_dict()["param_groups"] == opt.state_dict()["param_groups"]
    got = run(opt2, resumed, grads[3:], "cpu")
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, e)


def test_load_state_dict_casts_copies_and_keeps_step():
    p64 = one_param([1.0, 2.0])
    opt = optim.Adam([p64], lr=0.1)
    set_grad(p64, [1.0, 1.0])
    opt.step()
    p32 = one_param([1.0, 2.0], dtype=torch.float32)
    opt32 = optim.Adam([p32], lr=0.5)
    sd = opt.state_dict()
    opt32.load_state_dict(sd)
    state = opt32.state[p32]
    assert state["exp_avg"].dtype == torch.float32 and state["step"].dtype == torch.float32
    assert opt32.param_groups[0]["lr"] == 0.1 and opt32.param_groups[0]["params"][0] is p32
    p64b = one_param([1.0, 2.0])
    opt64 = optim.Adam([p64b], lr=0.1)
    opt64.load_state_dict(sd)
    assert opt64.state[p64b]["exp_avg"] is not sd["state"][0]["exp_avg"]  # no aliasing between optimizers
    assert opt64.state[p64b]["exp_avg"].tolist() == sd["state"][0]["exp_avg"].tolist()


def test_load_state_dict_errors():
    a, b = one_param([1.0]), one_param([2.0])
    sd = optim.SGD([a, b], lr=0.1).state_dict()
    with pytest.raises(ValueError, match="loaded state dict has a different number of parameter groups"):
        optim.SGD([{"params": [a]}, {"params": [b]}], lr=0.1).load_state_dict(sd)
    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
        optim.SGD([a], lr=0.1).load_state_dict(sd)


def test_training_converges():
    """A small least-squares fit: each optimizer drives the loss down."""
    torch.manual_seed(0)
    x = torch.randn(16, 3, dtype=torch.float64)
    y = x @ torch.tensor([[1.0], [-2.0], [0.5]], dtype=torch.float64)
    for make in (lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9), lambda ps: optim.Adam(ps, lr=0.1),
                 lambda ps: optim.RMSprop(ps, lr=0.05), lambda ps: optim.Adagrad(ps, lr=0.5)):
        w = torch.zeros(3, 1, dtype=torch.float64, requires_grad=True)
        opt = make([w])
        first = None
        for _ in range(50):
            opt.zero_grad()
            loss = ((x @ w - y) ** 2).mean()
            loss.backward()
            opt.step()
            first = loss.item() if first is None else first
        assert loss.item() < 0.05 * first
