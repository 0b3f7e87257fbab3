"""Adadelta, Adamax, NAdam, RAdam, Rprop, ASGD and LBFGS against numpy transcriptions of PyTorch's
documented algorithms (float64), their options and errors; CyclicLR and ChainedScheduler values."""

from __future__ import annotations

import io

import numpy as np
import pytest

import minitorch as torch
import minitorch.optim as optim

RNG = np.random.default_rng(11)


def run(name, params, grads, **kwargs):
    tensors = [torch.tensor(p, requires_grad=True) for p in params]
    opt = getattr(optim, name)(tensors, **kwargs)
    for step_grads in grads:
        for t, g in zip(tensors, step_grads):
            t.grad = torch.tensor(g)
        opt.step()
    return [t.detach().numpy() for t in tensors], opt


def ref_adadelta(ps, gs, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, maximize=False):
    ps = [p.copy() for p in ps]
    v = [np.zeros_like(p) for p in ps]
    u = [np.zeros_like(p) for p in ps]
    for step in gs:
        for i, g in enumerate(step):
            g = (-g if maximize else g) + weight_decay * ps[i]
            v[i] = rho * v[i] + (1 - rho) * g * g
            delta = np.sqrt(u[i] + eps) / np.sqrt(v[i] + eps) * g
            u[i] = rho * u[i] + (1 - rho) * delta * delta
            ps[i] = ps[i] - lr * delta
    return ps


def ref_adamax(ps, gs, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, maximize=False):
    b1, b2 = betas
    ps = [p.copy() for p in ps]
    m = [np.zeros_like(p) for p in ps]
    u = [np.zeros_like(p) for p in ps]
    for t, step in enumerate(gs, 1):
        for i, g in enumerate(step):
            g = (-g if maximize else g) + weight_decay * ps[i]
            m[i] = b1 * m[i] + (1 - b1) * g
            u[i] = np.maximum(b2 * u[i], np.abs(g) + eps)
            ps[i] = ps[i] - lr / (1 - b1**t) * m[i] / u[i]
    return ps


def ref_nadam(ps, gs, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
              decoupled_weight_decay=False):
    b1, b2 = betas
    ps = [p.copy() for p in ps]
    m = [np.zeros_like(p) for p in ps]
    v = [np.zeros_like(p) for p in ps]
    prod = [np.float32(1.0) for _ in ps]  # PyTorch keeps mu_product in a float32 tensor
    for t, step in enumerate(gs, 1):
        for i, g in enumerate(step):
            if decoupled_weight_decay:
                ps[i] = ps[i] * (1 - lr * weight_decay)
            else:
                g = g + weight_decay * ps[i]
            mu = b1 * (1 - 0.5 * 0.96 ** (t * momentum_decay))
            mu_next = b1 * (1 - 0.5 * 0.96 ** ((t + 1) * momentum_decay))
            prod[i] = np.float32(prod[i] * np.float32(mu))
            m[i] = b1 * m[i] + (1 - b1) * g
            v[i] = b2 * v[i] + (1 - b2) * g * g
            denom = np.sqrt(v[i] / (1 - b2**t)) + eps
            p_ = float(prod[i])
            ps[i] = ps[i] - lr * (1 - mu) / (1 - p_) * g / denom - lr * mu_next / (1 - p_ * mu_next) * m[i] / denom
    return ps


def ref_radam(ps, gs, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0):
    b1, b2 = betas
    ps = [p.copy() for p in ps]
    m = [np.zeros_like(p) for p in ps]
    v = [np.zeros_like(p) for p in ps]
    rho_inf = 2 / (1 - b2) - 1
    for t, step in enumerate(gs, 1):
        for i, g in enumerate(step):
            g = g + weight_decay * ps[i]
            m[i] = b1 * m[i] + (1 - b1) * g
            v[i] = b2 * v[i] + (1 - b2) * g * g
            m_hat = m[i] / (1 - b1**t)
            rho_t = rho_inf - 2 * t * b2**t / (1 - b2**t)
            if rho_t > 5:
                r = np.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
                ps[i] = ps[i] - lr * m_hat * r * np.sqrt(1 - b2**t) / (np.sqrt(v[i]) + eps)
            else:
                ps[i] = ps[i] - lr * m_hat
    return ps


def ref_rprop(ps, gs, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50)):
    ps = [p.copy() for p in ps]
    prev = [np.zeros_like(p) for p in ps]
    size = [np.full_like(p, lr) for p in ps]
    for step in gs:
        for i, g in enumerate(step):
            s = np.sign(g * prev[i])
            f = np.where(s > 0, etas[1], np.where(s < 0, etas[0], 1.0))
            size[i] = np.clip(size[i] * f, *step_sizes)
            g = np.where(s < 0, 0, g)
            ps[i] = ps[i] - np.sign(g) * size[i]
            prev[i] = g
    return ps


def ref_asgd(ps, gs, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0):
    ps = [p.copy() for p in ps]
    ax = [np.zeros_like(p) for p in ps]
    eta, mu = [np.float32(lr)] * len(ps), [1.0] * len(ps)
    for t, step in enumerate(gs, 1):
        for i, g in enumerate(step):
            g = g + weight_decay * ps[i]
            ps[i] = ps[i] * (1 - lambd * float(eta[i])) - float(eta[i]) * g
            ax[i] = ax[i] + (ps[i] - ax[i]) * mu[i] if mu[i] != 1 else ps[i].copy()
            eta[i] = np.float32(lr / (1 + lambd * lr * t) ** alpha)
            mu[i] = float(np.float32(1 / max(1, t - t0)))
    return ps, ax


CASES = [
    ("Adadelta", ref_adadelta, {}), ("Adadelta", ref_adadelta, {"lr": 0.3, "rho": 0.5, "weight_decay": 0.1}),
    ("Adadelta", ref_adadelta, {"maximize": True}),
    ("Adamax", ref_adamax, {}), ("Adamax", ref_adamax, {"lr": 0.1, "betas": (0.5, 0.8), "weight_decay": 0.2}),
    ("Adamax", ref_adamax, {"maximize": True}),
    ("NAdam", ref_nadam, {}), ("NAdam", ref_nadam, {"lr": 0.05, "weight_decay": 0.1, "momentum_decay": 0.1}),
    ("NAdam", ref_nadam, {"weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("RAdam", ref_radam, {}), ("RAdam", ref_radam, {"lr": 0.05, "betas": (0.5, 0.6), "weight_decay": 0.1}),
    ("Rprop", ref_rprop, {}), ("Rprop", ref_rprop, {"lr": 0.1, "etas": (0.3, 1.5), "step_sizes": (1e-3, 0.2)}),
]


@pytest.mark.parametrize(("name", "ref", "kwargs"), CASES)
def test_update_matches_reference(name, ref, kwargs):
    params = [RNG.standard_normal((3, 2)), RNG.standard_normal(4)]
    grads = [[RNG.standard_normal(p.shape) for p in params] for _ in range(8)]
    got, _ = run(name, params, grads, **kwargs)
    for a, b in zip(got, ref(params, grads, **kwargs)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("kwargs", [{}, {"lr": 0.1, "lambd": 0.01, "alpha": 0.5, "t0": 3, "weight_decay": 0.1}])
def test_asgd_matches_reference_and_averages(kwargs):
    params = [RNG.standard_normal((3, 2))]
    grads = [[RNG.standard_normal((3, 2))] for _ in range(8)]
    got, opt = run("ASGD", params, grads, **kwargs)
    want, ax = ref_asgd(params, grads, **kwargs)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-10)
    state = opt.state[opt.param_groups[0]["params"][0]]
    np.testing.assert_allclose(state["ax"].numpy(), ax[0], rtol=1e-10)
    assert list(state) == ["step", "eta", "mu", "ax"]


@pytest.mark.parametrize(("name", "state_keys"), [
    ("Adadelta", ["step", "square_avg", "acc_delta"]), ("Adamax", ["step", "exp_avg", "exp_inf"]),
    ("NAdam", ["step", "mu_product", "exp_avg", "exp_avg_sq"]), ("RAdam", ["step", "exp_avg", "exp_avg_sq"]),
    ("Rprop", ["step", "prev", "step_size"]), ("ASGD", ["step", "eta", "mu", "ax"]),
])
def test_state_dict_round_trip(name, state_keys):
    params = [RNG.standard_normal((2, 2))]
    grads = [[RNG.standard_normal((2, 2))] for _ in range(5)]
    _, opt = run(name, params, grads[:3])
    state = opt.state_dict()
    assert list(state["state"][0]) == state_keys
    buffer = io.BytesIO()
    torch.save(state, buffer)
    buffer.seek(0)
    clone = torch.tensor(opt.param_groups[0]["params"][0].detach().numpy(), requires_grad=True)
    fresh = getattr(optim, name)([clone])
    fresh.load_state_dict(torch.load(buffer))
    for g in grads[3:]:
        for p in (opt.param_groups[0]["params"][0], clone):
            p.grad = torch.tensor(g[0])
        opt.step()
        fresh.step()
    np.testing.assert_allclose(clone.detach().numpy(), opt.param_groups[0]["params"][0].detach().numpy())


@pytest.mark.parametrize(("name", "kwargs", "message"), [
    ("Adadelta", {"rho": 1.5}, "Invalid rho value: 1.5"), ("Adadelta", {"lr": -1}, "Invalid learning rate: -1"),
    ("Adamax", {"betas": (1.0, 0.9)}, "Invalid beta parameter at index 0: 1.0"),
    ("NAdam", {"momentum_decay": -1}, "Invalid momentum_decay value: -1"),
    ("RAdam", {"weight_decay": -1}, "Invalid weight_decay value: -1"),
    ("Rprop", {"etas": (1.1, 1.2)}, "Invalid eta values: 1.1, 1.2"),
    ("ASGD", {"eps": 1}, None),
])
def test_option_errors(name, kwargs, message):
    p = [torch.zeros(2, requires_grad=True)]
    if message is None:
        with pytest.raises(TypeError):
            getattr(optim, name)(p, **kwargs)
        return
    with pytest.raises(ValueError, match=message):
        getattr(optim, name)(p, **kwargs)


def test_sparse_gradients_are_refused():
    p = torch.zeros(3, 2, requires_grad=True)
    p.grad = torch.sparse_coo_tensor(torch.tensor([[0]]), torch.ones(1, 2), (3, 2))
    with pytest.raises(RuntimeError, match="Adadelta does not support sparse gradients"):
        optim.Adadelta([p]).step()


# LBFGS -----------------------------------------------------------------------------------------------------


def _quadratic(x, opt, A, b):
    def closure():
        opt.zero_grad()
        loss = 0.5 * (x @ (A @ x)) - b @ x
        loss.backward()
        return loss
    return closure


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_lbfgs_solves_a_quadratic(line_search_fn):
    M = RNG.standard_normal((5, 5))
    A = torch.tensor(M @ M.T + 5 * np.eye(5))
    b = torch.tensor(RNG.standard_normal(5))
    x = torch.zeros(5, dtype=torch.float64, requires_grad=True)
    opt = optim.LBFGS([x], lr=1, max_iter=50, history_size=10, line_search_fn=line_search_fn,
                      tolerance_grad=1e-12, tolerance_change=1e-14)
    first = opt.step(_quadratic(x, opt, A, b))
    assert first.item() == 0.0  # the loss at the start point
    np.testing.assert_allclose(x.detach().numpy(), np.linalg.solve(A.numpy(), b.numpy()), atol=1e-7)
    state = opt.state[x]
    assert state["n_iter"] <= 50 and state["func_evals"] >= state["n_iter"]
    assert len(state["old_dirs"]) <= 10


def test_lbfgs_rosenbrock_with_strong_wolfe():
    x = torch.tensor([-1.2, 1.0], dtype=torch.float64, requires_grad=True)
    opt = optim.LBFGS([x], lr=1, max_iter=100, line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2
        loss.backward()
        return loss

    for _ in range(5):
        opt.step(closure)
    np.testing.assert_allclose(x.detach().numpy(), [1.0, 1.0], atol=1e-4)


def test_lbfgs_errors():
    a, b = torch.zeros(2, requires_grad=True), torch.zeros(2, requires_grad=True)
    with pytest.raises(ValueError, match="LBFGS doesn't support per-parameter options"):
        optim.LBFGS([{"params": [a]}, {"params": [b]}])
    opt = optim.LBFGS([a], line_search_fn="armijo")

    def closure():
        opt.zero_grad()
        loss = ((a - 1) ** 2).sum()
        loss.backward()
        return loss

    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        opt.step(closure)


# schedulers ------------------------------------------------------------------------------------------------


def _sgd():
    return optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0, momentum=0.9)


def test_cyclic_lr_triangular_values():
    opt = _sgd()
    sched = optim.lr_scheduler.CyclicLR(opt, base_lr=0.1, max_lr=0.5, step_size_up=2)
    seen = [opt.param_groups[0]["lr"]]
    momenta = [opt.param_groups[0]["momentum"]]
    for _ in range(6):
        opt.step()
        sched.step()
        seen.append(opt.param_groups[0]["lr"])
        momenta.append(opt.param_groups[0]["momentum"])
    np.testing.assert_allclose(seen, [0.1, 0.3, 0.5, 0.3, 0.1, 0.3, 0.5])
    np.testing.assert_allclose(momenta, [0.9, 0.85, 0.8, 0.85, 0.9, 0.85, 0.8])


def test_cyclic_lr_modes_and_errors():
    opt = _sgd()
    sched = optim.lr_scheduler.CyclicLR(opt, 0.0, 1.0, step_size_up=1, mode="triangular2", cycle_momentum=False)
    peaks = []
    for _ in range(6):
        opt.step()
        sched.step()
        peaks.append(sched.get_last_lr()[0])
    np.testing.assert_allclose(peaks, [1.0, 0.0, 0.5, 0.0, 0.25, 0.0])
    state = sched.state_dict()
    assert "_scale_fn_ref" not in state and state["_scale_fn_custom"] is None
    with pytest.raises(ValueError, match="mode is invalid and scale_fn is None"):
        optim.lr_scheduler.CyclicLR(_sgd(), 0.1, 1.0, mode="sine")
    plain = optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
    with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
        optim.lr_scheduler.CyclicLR(optim.Adagrad([torch.zeros(1, requires_grad=True)]), 0.1, 1.0)
    assert optim.lr_scheduler.CyclicLR(plain, 0.1, 1.0).use_beta1 is False


def test_chained_scheduler_multiplies_factors():
    opt = optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
    chain = optim.lr_scheduler.ChainedScheduler([
        optim.lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=2),
        optim.lr_scheduler.ExponentialLR(opt, gamma=0.9),
    ])
    seen = []
    for _ in range(4):
        opt.step()
        chain.step()
        seen.append(chain.get_last_lr()[0])
    np.testing.assert_allclose(seen, [0.5 * 0.9, 0.9**2, 0.9**3, 0.9**4])
    state = chain.state_dict()
    assert len(state["_schedulers"]) == 2
    with pytest.raises(ValueError, match="expects at least one scheduler to be chained"):
        optim.lr_scheduler.ChainedScheduler([])
    with pytest.raises(ValueError, match="does not support `ReduceLROnPlateau`"):
        optim.lr_scheduler.ChainedScheduler([optim.lr_scheduler.ReduceLROnPlateau(opt)])


def test_global_optimizer_hooks():
    from minitorch.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook

    calls = []
    p = torch.zeros(1, requires_grad=True)
    p.grad = torch.ones(1)
    opt = optim.SGD([p], lr=0.1)
    opt.register_step_post_hook(lambda *a: calls.append("own post"))
    pre = register_optimizer_step_pre_hook(lambda *a: calls.append("global pre"))
    post = register_optimizer_step_post_hook(lambda *a: calls.append("global post"))
    opt.step()
    pre.remove()
    post.remove()
    opt.step()
    assert calls == ["global pre", "own post", "global post", "own post"]


# swa_utils -------------------------------------------------------------------------------------------------


def test_averaged_model_is_the_mean_of_snapshots():
    from minitorch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn

    model = torch.nn.Linear(3, 2)
    swa = AveragedModel(model)
    ema = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.5))
    snapshots = []
    for _ in range(4):
        with torch.no_grad():
            model.weight.copy_(torch.randn(2, 3))
        snapshots.append(model.weight.detach().numpy().copy())
        swa.update_parameters(model)
        ema.update_parameters(model)
    np.testing.assert_allclose(swa.module.weight.detach().numpy(), np.mean(snapshots, 0), rtol=1e-5, atol=1e-6)
    expected = snapshots[0]
    for s in snapshots[1:]:
        expected = 0.5 * expected + 0.5 * s
    np.testing.assert_allclose(ema.module.weight.detach().numpy(), expected, rtol=1e-5, atol=1e-6)
    assert swa.n_averaged.item() == 4 and list(swa.state_dict())[0] == "n_averaged"
    assert torch.equal(swa(torch.ones(1, 3)), swa.module(torch.ones(1, 3)))
    with pytest.raises(ValueError, match=r"Invalid decay value 2 provided. Please provide a value in \[0,1\] range."):
        get_ema_multi_avg_fn(2)
    with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn should be provided"):
        AveragedModel(model, avg_fn=lambda *a: a[0], multi_avg_fn=lambda *a: None)


def test_swalr_anneals_to_the_swa_rate():
    opt = optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
    sched = optim.swa_utils.SWALR(opt, swa_lr=0.1, anneal_epochs=2, anneal_strategy="linear")
    seen = [opt.param_groups[0]["lr"]]
    for _ in range(4):
        opt.step()
        sched.step()
        seen.append(opt.param_groups[0]["lr"])
    np.testing.assert_allclose(seen, [1.0, 0.55, 0.1, 0.1, 0.1])
    assert "anneal_func" not in sched.state_dict()
    with pytest.raises(ValueError, match="anneal_strategy must be one of 'cos' or 'linear', instead got step"):
        optim.swa_utils.SWALR(opt, 0.1, anneal_strategy="step")
    with pytest.raises(ValueError, match="anneal_epochs must be equal or greater than 0, got -1"):
        optim.swa_utils.SWALR(opt, 0.1, anneal_epochs=-1)


def test_update_bn_recomputes_statistics():
    model = torch.nn.BatchNorm1d(2)
    batches = [torch.tensor(RNG.standard_normal((5, 2)), dtype=torch.float32) for _ in range(3)]
    optim.swa_utils.update_bn(batches, model)
    data = np.concatenate([b.numpy() for b in batches])
    np.testing.assert_allclose(model.running_mean.numpy(), data.mean(0), rtol=1e-5, atol=1e-6)
    assert model.momentum == 0.1 and model.num_batches_tracked.item() == 3


def test_adafactor_factored_state_and_first_step():
    w = torch.tensor(RNG.standard_normal((3, 4)), requires_grad=True)
    b = torch.tensor(RNG.standard_normal(4), requires_grad=True)
    g_w, g_b = RNG.standard_normal((3, 4)), RNG.standard_normal(4)
    w.grad, b.grad = torch.tensor(g_w), torch.tensor(g_b)
    before = b.detach().numpy().copy()
    opt = optim.Adafactor([w, b], lr=0.01)
    opt.step()
    assert list(opt.state[w]) == ["step", "row_var", "col_var"] and opt.state[w]["row_var"].shape == (3, 1)
    assert opt.state[w]["col_var"].shape == (1, 4) and list(opt.state[b]) == ["step", "variance"]
    # step 1: beta2_t = 1, so V = g^2 and the update is sign(g), clipped to RMS 1, times max(eps2, RMS(p)) * lr
    alpha = max(1e-3, np.sqrt((before**2).mean())) * 0.01
    np.testing.assert_allclose(b.detach().numpy(), before - alpha * np.sign(g_b), rtol=1e-6)
    with pytest.raises(ValueError, match="beta2_decay should be <= 0 but is: 0.5"):
        optim.Adafactor([w], beta2_decay=0.5)
    with pytest.raises(ValueError, match="Clipping threshold d should be >= 1 but is: 0.5"):
        optim.Adafactor([w], d=0.5)
