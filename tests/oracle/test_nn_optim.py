"""Differential tests of nn layers and optimizers against PyTorch (skipped without torch).

Layers: weights copied from the torch module into the minitorch one (or the lazy module materialized from
the same input), outputs and input/parameter gradients compared. Optimizers: N steps from the same
parameters and the same gradient sequence in both, parameters and state compared after each step.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import minitorch as mt  # noqa: E402

# optimizers ----------------------------------------------------------------------------------------------

OPTIMIZERS = [
    ("Adadelta", {}),
    ("Adadelta", {"lr": 0.5, "rho": 0.8, "eps": 1e-5, "weight_decay": 0.1, "maximize": True}),
    ("Adamax", {}),
    ("Adamax", {"lr": 0.01, "betas": (0.8, 0.9), "weight_decay": 0.05, "maximize": True}),
    ("NAdam", {}),
    ("NAdam", {"lr": 0.01, "weight_decay": 0.1, "momentum_decay": 0.01}),
    ("NAdam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True, "maximize": True}),
    ("RAdam", {}),
    ("RAdam", {"lr": 0.01, "betas": (0.5, 0.6), "weight_decay": 0.1}),  # rho_t > 5 from step 2 on
    ("RAdam", {"lr": 0.01, "betas": (0.5, 0.6), "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("Rprop", {}),
    ("Rprop", {"lr": 0.05, "etas": (0.3, 1.5), "step_sizes": (1e-3, 0.1), "maximize": True}),
    ("ASGD", {}),
    ("ASGD", {"lr": 0.05, "lambd": 0.01, "alpha": 0.5, "t0": 3, "weight_decay": 0.1}),
    ("Adafactor", {}),
    ("Adafactor", {"lr": 0.05, "beta2_decay": -0.5, "eps": (1e-4, 1e-2), "d": 1.5, "weight_decay": 0.1,
                   "maximize": True}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.01, "weight_decay": 0.1, "initial_accumulator_value": 0.2}),
    ("Adam", {"amsgrad": True, "weight_decay": 0.1}),
    ("AdamW", {"amsgrad": True}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.5, "centered": True}),
]


def _run_both(name, kwargs, dtype, steps=6, seed=0):
    rng = np.random.default_rng(seed)
    shapes = [(3, 4), (5,), ()]
    values = [rng.standard_normal(s) for s in shapes]
    t_params = [torch.tensor(v, dtype=getattr(torch, dtype), requires_grad=True) for v in values]
    m_params = [mt.tensor(v, dtype=getattr(mt, dtype), requires_grad=True) for v in values]
    t_opt = getattr(torch.optim, name)([{"params": t_params[:2]}, {"params": t_params[2:], "lr": 0.003}], **kwargs)
    m_opt = getattr(mt.optim, name)([{"params": m_params[:2]}, {"params": m_params[2:], "lr": 0.003}], **kwargs)
    for _ in range(steps):
        grads = [rng.standard_normal(s) for s in shapes]
        for p, g in zip(t_params, grads):
            p.grad = torch.tensor(g, dtype=p.dtype)
        for p, g in zip(m_params, grads):
            p.grad = mt.tensor(g, dtype=p.dtype)
        t_opt.step()
        m_opt.step()
        yield t_params, m_params, t_opt, m_opt


def _close(a, b, dtype):
    tol = 1e-5 if dtype == "float32" else 1e-11
    np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("name", "kwargs"), OPTIMIZERS)
def test_optimizer_steps_match_pytorch(name, kwargs, dtype):
    for t_params, m_params, t_opt, m_opt in _run_both(name, kwargs, dtype):
        for tp, mp in zip(t_params, m_params):
            _close(tp.detach().numpy(), mp.detach().numpy(), dtype)
    t_state, m_state = t_opt.state_dict(), m_opt.state_dict()
    assert t_state["state"].keys() == m_state["state"].keys()
    for key, t_entry in t_state["state"].items():
        m_entry = m_state["state"][key]
        assert list(t_entry) == list(m_entry)  # the same state names, in the same order
        for k, value in t_entry.items():
            assert m_entry[k].dtype == getattr(mt, str(value.dtype).replace("torch.", ""))
            _close(value.numpy(), m_entry[k].numpy(), dtype)
    for t_group, m_group in zip(t_state["param_groups"], m_state["param_groups"]):
        assert t_group == m_group  # options and defaults, as PyTorch fills them


@pytest.mark.parametrize(("name", "kwargs"), OPTIMIZERS[:14])
def test_optimizer_state_dict_round_trip_continues_like_pytorch(name, kwargs):
    """Steps, save, load into a fresh optimizer over copies of the parameters, step on: same as not saving."""
    for t_params, m_params, t_opt, m_opt in _run_both(name, kwargs, "float64", steps=3):
        pass
    fresh = {}
    for lib, params, opt in ((torch, t_params, t_opt), (mt, m_params, m_opt)):
        copies = [lib.tensor(p.detach().numpy(), requires_grad=True) for p in params]
        new = getattr(lib.optim, name)([{"params": copies[:2]}, {"params": copies[2:], "lr": 0.003}], **kwargs)
        new.load_state_dict(opt.state_dict())  # loading casts scalar state (NAdam's mu_product, ...) as PyTorch
        fresh[lib] = (copies, new)
    rng = np.random.default_rng(7)
    for _ in range(2):
        grads = [rng.standard_normal(tuple(p.shape)) for p in t_params]
        for lib, (copies, new) in fresh.items():
            for p, g in zip(copies, grads):
                p.grad = lib.tensor(g, dtype=p.dtype)
            new.step()
    for tp, mp in zip(fresh[torch][0], fresh[mt][0]):
        _close(tp.detach().numpy(), mp.detach().numpy(), "float64")
    for t_entry, m_entry in zip(fresh[torch][1].state_dict()["state"].values(),
                                fresh[mt][1].state_dict()["state"].values()):
        for key, value in t_entry.items():
            assert str(m_entry[key].dtype) == str(value.dtype), key


def _rosenbrock_closure(lib, x, opt):
    def closure():
        opt.zero_grad()
        loss = (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2 + (x[2:] ** 2).sum()
        loss.backward()
        return loss
    return closure


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_lbfgs_matches_pytorch(line_search_fn, dtype):
    start = np.array([-1.5, 2.0, 0.5, -0.3])
    tx = torch.tensor(start, dtype=getattr(torch, dtype), requires_grad=True)
    mx = mt.tensor(start, dtype=getattr(mt, dtype), requires_grad=True)
    kw = dict(lr=0.5 if line_search_fn is None else 1, max_iter=7, history_size=4, line_search_fn=line_search_fn)
    t_opt, m_opt = torch.optim.LBFGS([tx], **kw), mt.optim.LBFGS([mx], **kw)
    t_close, m_close = _rosenbrock_closure(torch, tx, t_opt), _rosenbrock_closure(mt, mx, m_opt)
    # float32: one-ulp differences (summation order) grow along Rosenbrock's valley, so fewer outer steps
    for _ in range(2 if dtype == "float32" else 4):
        t_loss, m_loss = t_opt.step(t_close), m_opt.step(m_close)
        tol = 2e-5 if dtype == "float32" else 1e-9
        np.testing.assert_allclose(float(m_loss.detach()), float(t_loss.detach()), rtol=tol, atol=tol)
        np.testing.assert_allclose(mx.detach().numpy(), tx.detach().numpy(), rtol=tol, atol=tol)
    t_state, m_state = t_opt.state[tx], m_opt.state[mx]
    assert t_state["func_evals"] == m_state["func_evals"]
    assert t_state["n_iter"] == m_state["n_iter"]


# schedulers ----------------------------------------------------------------------------------------------


def _scheduled(lib, make, optimizer="SGD", steps=25, **opt_kwargs):
    p = lib.zeros(2, requires_grad=True)
    opt = getattr(lib.optim, optimizer)([{"params": [p]}, {"params": [lib.zeros(1, requires_grad=True)]}],
                                        lr=0.1, **opt_kwargs)
    scheduler = make(lib, opt)
    seen = []
    for _ in range(steps):
        opt.step()
        scheduler.step()
        group = opt.param_groups[0]
        seen.append((scheduler.get_last_lr(), group.get("momentum"), group.get("betas")))
    return seen, scheduler


SCHEDULERS = [
    (lambda lib, o: lib.optim.lr_scheduler.CyclicLR(o, 0.01, 0.1, step_size_up=4), "SGD", {"momentum": 0.9}),
    (lambda lib, o: lib.optim.lr_scheduler.CyclicLR(o, [0.01, 0.02], 0.1, step_size_up=3, step_size_down=5,
                                                    mode="triangular2"), "SGD", {"momentum": 0.9}),
    (lambda lib, o: lib.optim.lr_scheduler.CyclicLR(o, 0.01, 0.1, step_size_up=2, mode="exp_range", gamma=0.9),
     "Adam", {}),
    (lambda lib, o: lib.optim.lr_scheduler.CyclicLR(o, 0.01, 0.1, scale_fn=lambda x: 0.5 ** x, step_size_up=2,
                                                    cycle_momentum=False), "SGD", {}),
    (lambda lib, o: lib.optim.lr_scheduler.ChainedScheduler([
        lib.optim.lr_scheduler.ConstantLR(o, factor=0.1, total_iters=2),
        lib.optim.lr_scheduler.ExponentialLR(o, gamma=0.9)]), "SGD", {}),
]


@pytest.mark.parametrize(("make", "optimizer", "opt_kwargs"), SCHEDULERS)
def test_scheduler_matches_pytorch(make, optimizer, opt_kwargs):
    t_seen, t_sched = _scheduled(torch, make, optimizer, **opt_kwargs)
    m_seen, m_sched = _scheduled(mt, make, optimizer, **opt_kwargs)
    for (t_lr, t_m, t_b), (m_lr, m_m, m_b) in zip(t_seen, m_seen):
        np.testing.assert_allclose(m_lr, t_lr, rtol=1e-12)
        assert (t_m is None) == (m_m is None) and (t_m is None or abs(t_m - m_m) < 1e-12)
        assert (t_b is None) == (m_b is None) and (t_b is None or np.allclose(t_b, m_b, rtol=1e-12))
    t_keys = set(t_sched.state_dict()) - {"_get_lr_called_within_step", "_is_initial"}
    assert t_keys <= set(m_sched.state_dict()) | {"_schedulers"}


# layers --------------------------------------------------------------------------------------------------


def _pair_tensors(array, dtype="float64"):
    return (torch.tensor(array, dtype=getattr(torch, dtype), requires_grad=True),
            mt.tensor(array, dtype=getattr(mt, dtype), requires_grad=True))


def _compare_call(t_fn, m_fn, arrays, dtype="float64", grad=True):
    t_in = [torch.tensor(a, dtype=getattr(torch, dtype), requires_grad=grad) for a in arrays]
    m_in = [mt.tensor(a, dtype=getattr(mt, dtype), requires_grad=grad) for a in arrays]
    t_out, m_out = t_fn(*t_in), m_fn(*m_in)
    tol = 1e-5 if dtype == "float32" else 1e-11
    assert tuple(m_out.shape) == tuple(t_out.shape)
    assert str(m_out.dtype) == str(t_out.dtype)
    np.testing.assert_allclose(m_out.detach().numpy(), t_out.detach().numpy(), rtol=tol, atol=tol)
    if grad:
        g = np.random.default_rng(1).standard_normal(tuple(t_out.shape))
        t_out.backward(torch.tensor(g, dtype=t_out.dtype))
        m_out.backward(mt.tensor(g, dtype=m_out.dtype))
        for t, m in zip(t_in, m_in):
            np.testing.assert_allclose(m.grad.numpy(), t.grad.numpy(), rtol=tol * 10, atol=tol * 10)


INTERPOLATE = [
    (mode, dims, size_kwargs, align)
    for mode, dims in [("nearest", 1), ("nearest", 2), ("nearest", 3), ("nearest-exact", 2), ("linear", 1),
                       ("bilinear", 2), ("bicubic", 2), ("trilinear", 3), ("area", 2)]
    for size_kwargs in [{"size": 1}, {"size": 7}, {"scale_factor": 2}, {"scale_factor": 0.5},
                        {"scale_factor": 2.5}, {"scale_factor": 1.7, "recompute_scale_factor": True}]
    for align in ([None] if mode in ("nearest", "nearest-exact", "area") else [False, True])
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("mode", "dims", "size_kwargs", "align"), INTERPOLATE)
def test_interpolate_matches_pytorch(mode, dims, size_kwargs, align, dtype):
    x = np.random.default_rng(dims).standard_normal((2, 3) + (5,) * dims)
    kwargs = dict(size_kwargs, mode=mode)
    if align is not None:
        kwargs["align_corners"] = align
    _compare_call(lambda t: torch.nn.functional.interpolate(t, **kwargs),
                  lambda t: mt.nn.functional.interpolate(t, **kwargs), [x], dtype)


PADS = ["ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
        "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "CircularPad1d", "CircularPad2d", "CircularPad3d"]


@pytest.mark.parametrize("name", PADS)
@pytest.mark.parametrize("padding", [1, (2, 1, 0, 1, 1, 0)])
def test_padding_modules_match_pytorch(name, padding):
    dims = int(name[-2])
    if isinstance(padding, tuple):
        padding = padding[: 2 * dims]
    t_layer, m_layer = getattr(torch.nn, name)(padding), getattr(mt.nn, name)(padding)
    assert repr(m_layer) == repr(t_layer)
    x = np.random.default_rng(0).standard_normal((2, 3) + (4,) * dims)
    _compare_call(t_layer, m_layer, [x])


@pytest.mark.parametrize("value", [0.0, -2.5])
def test_constant_pad_matches_pytorch(value):
    for dims in (1, 2, 3):
        t_layer = getattr(torch.nn, f"ConstantPad{dims}d")((1, 2) * dims, value)
        m_layer = getattr(mt.nn, f"ConstantPad{dims}d")((1, 2) * dims, value)
        assert repr(m_layer) == repr(t_layer)
        _compare_call(t_layer, m_layer, [np.ones((1, 2) + (3,) * dims)])


@pytest.mark.parametrize(("t_make", "m_make", "shape"), [
    (lambda: torch.nn.PixelShuffle(2), lambda: mt.nn.PixelShuffle(2), (2, 8, 3, 2)),
    (lambda: torch.nn.PixelUnshuffle(2), lambda: mt.nn.PixelUnshuffle(2), (2, 3, 4, 6)),
    (lambda: torch.nn.ChannelShuffle(3), lambda: mt.nn.ChannelShuffle(3), (2, 6, 2, 2)),
    (lambda: torch.nn.Unfold(2, dilation=1, padding=1, stride=2), lambda: mt.nn.Unfold(2, 1, 1, 2), (2, 3, 5, 4)),
    (lambda: torch.nn.Fold((4, 5), 2), lambda: mt.nn.Fold((4, 5), 2), (2, 12, 12)),
    (lambda: torch.nn.Upsample(scale_factor=(2, 1.5), mode="bilinear"),
     lambda: mt.nn.Upsample(scale_factor=(2, 1.5), mode="bilinear"), (1, 2, 3, 4)),
    (lambda: torch.nn.UpsamplingBilinear2d(size=5), lambda: mt.nn.UpsamplingBilinear2d(size=5), (1, 2, 3, 4)),
])
def test_rearranging_layers_match_pytorch(t_make, m_make, shape):
    t_layer, m_layer = t_make(), m_make()
    assert repr(m_layer) == repr(t_layer)
    _compare_call(t_layer, m_layer, [np.random.default_rng(2).standard_normal(shape)])


def test_distance_modules_match_pytorch():
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((4, 5)), rng.standard_normal((4, 5))
    for t_layer, m_layer in [(torch.nn.PairwiseDistance(p=1.5, keepdim=True), mt.nn.PairwiseDistance(1.5, keepdim=True)),
                             (torch.nn.CosineSimilarity(dim=0), mt.nn.CosineSimilarity(dim=0))]:
        assert repr(m_layer) == repr(t_layer)
        _compare_call(t_layer, m_layer, [a, b])


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_margin_losses_match_pytorch(reduction):
    rng = np.random.default_rng(4)
    x, y = rng.standard_normal((4, 5)), np.array([0, 4, 2, 2])
    weight = rng.random(5)
    for p in (1, 2):
        _compare_call(lambda t: torch.nn.MultiMarginLoss(p=p, margin=0.8, weight=torch.tensor(weight),
                                                         reduction=reduction)(t, torch.tensor(y)),
                      lambda t: mt.nn.MultiMarginLoss(p=p, margin=0.8, weight=mt.tensor(weight),
                                                      reduction=reduction)(t, mt.tensor(y)), [x])
    target = np.array([[1, 2, -1, 0, 0], [4, -1, 0, 0, 0], [0, 1, 2, 3, 4], [3, 3, 1, -1, 2]])
    _compare_call(lambda t: torch.nn.MultiLabelMarginLoss(reduction=reduction)(t, torch.tensor(target)),
                  lambda t: mt.nn.MultiLabelMarginLoss(reduction=reduction)(t, mt.tensor(target)), [x])
    a, p_, n = (rng.standard_normal((4, 3)) for _ in range(3))
    _compare_call(lambda *ts: torch.nn.TripletMarginWithDistanceLoss(swap=True, reduction=reduction)(*ts),
                  lambda *ts: mt.nn.TripletMarginWithDistanceLoss(swap=True, reduction=reduction)(*ts), [a, p_, n])


LAZY = [
    ("LazyLinear", (3,), (2, 5)), ("LazyConv1d", (4, 3), (2, 3, 8)), ("LazyConv2d", (4, 3), (2, 3, 5, 5)),
    ("LazyConv3d", (2, 2), (1, 2, 3, 3, 3)), ("LazyConvTranspose1d", (4, 3), (2, 6, 5)),
    ("LazyConvTranspose2d", (2, 3), (1, 3, 4, 4)), ("LazyConvTranspose3d", (2, 1), (1, 4, 2, 2, 2)),
    ("LazyBatchNorm1d", (), (4, 3)), ("LazyBatchNorm2d", (), (2, 3, 4, 4)), ("LazyBatchNorm3d", (), (2, 3, 2, 2, 2)),
    ("LazyInstanceNorm1d", (), (2, 3, 5)), ("LazyInstanceNorm2d", (), (2, 3, 4, 4)),
    ("LazyInstanceNorm3d", (), (2, 3, 2, 2, 2)),
]


@pytest.mark.parametrize(("name", "args", "shape"), LAZY)
def test_lazy_modules_match_pytorch(name, args, shape):
    t_layer, m_layer = getattr(torch.nn, name)(*args), getattr(mt.nn, name)(*args)
    assert repr(m_layer) == repr(t_layer)
    assert list(m_layer.state_dict()) == list(t_layer.state_dict())
    x = np.random.default_rng(5).standard_normal(shape)
    t_out = t_layer(torch.tensor(x, dtype=torch.float32))
    m_layer(mt.tensor(x, dtype=mt.float32))
    assert type(m_layer).__name__ == type(t_layer).__name__
    assert repr(m_layer) == repr(t_layer)
    assert [(n, tuple(p.shape)) for n, p in m_layer.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in t_layer.named_parameters()]
    # with the same (materialized) weights, the same outputs
    m_layer.load_state_dict({k: mt.tensor(v.numpy()) for k, v in t_layer.state_dict().items()})
    m_layer.train(False)
    t_layer.train(False)
    np.testing.assert_allclose(m_layer(mt.tensor(x, dtype=mt.float32)).detach().numpy(),
                               t_layer(torch.tensor(x, dtype=torch.float32)).detach().numpy(), rtol=1e-4, atol=1e-5)
    assert t_out is not None


def test_data_parallel_state_dict_interchanges_with_pytorch():
    t_dp = torch.nn.DataParallel(torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.BatchNorm1d(2)))
    m_dp = mt.nn.DataParallel(mt.nn.Sequential(mt.nn.Linear(3, 2), mt.nn.BatchNorm1d(2)))
    assert list(m_dp.state_dict()) == list(t_dp.state_dict())
    assert repr(m_dp) == repr(t_dp)
    m_dp.load_state_dict({k: mt.tensor(v.numpy()) for k, v in t_dp.state_dict().items()})
    x = np.random.default_rng(6).standard_normal((4, 3))
    m_dp.eval()
    t_dp.eval()
    np.testing.assert_allclose(m_dp(mt.tensor(x, dtype=mt.float32)).detach().numpy(),
                               t_dp(torch.tensor(x, dtype=torch.float32)).detach().numpy(), rtol=1e-5, atol=1e-6)


def test_pad_sequence_matches_pytorch():
    rng = np.random.default_rng(7)
    seqs = [rng.standard_normal((n, 3)) for n in (2, 5, 1)]
    for kwargs in ({}, {"batch_first": True, "padding_value": -1.0}, {"padding_side": "left"}):
        _compare_call(lambda *ts: torch.nn.utils.rnn.pad_sequence(list(ts), **kwargs),
                      lambda *ts: mt.nn.utils.rnn.pad_sequence(list(ts), **kwargs), seqs)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("zero_infinity", [False, True])
@pytest.mark.parametrize("concatenated", [False, True])
def test_ctc_loss_matches_pytorch(reduction, zero_infinity, concatenated):
    rng = np.random.default_rng(8)
    T, N, C, S = 7, 3, 5, 3
    x = rng.standard_normal((T, N, C))
    targets = rng.integers(1, C, (N, S))
    targets[0, 1] = targets[0, 0]  # a repeated label
    input_lengths, target_lengths = [7, 6, 2], [2, 3, 2]
    if concatenated:
        flat = np.concatenate([row[:k] for row, k in zip(targets, target_lengths)])
        t_targets, m_targets = torch.tensor(flat), mt.tensor(flat)
    else:
        t_targets, m_targets = torch.tensor(targets), mt.tensor(targets)
    kwargs = dict(reduction=reduction, zero_infinity=zero_infinity)
    _compare_call(lambda t: torch.nn.CTCLoss(**kwargs)(t.log_softmax(2), t_targets, input_lengths, target_lengths),
                  lambda t: mt.nn.CTCLoss(**kwargs)(t.log_softmax(2), m_targets, input_lengths, target_lengths),
                  [x])


# swa_utils -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["swa", "ema", "ema_avg_fn", "buffers"])
def test_averaged_model_matches_pytorch(kind):
    rng = np.random.default_rng(9)

    def build(lib):
        model = lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.BatchNorm1d(2))
        kwargs = {"swa": {}, "ema": {"multi_avg_fn": lib.optim.swa_utils.get_ema_multi_avg_fn(0.9)},
                  "ema_avg_fn": {"avg_fn": lib.optim.swa_utils.get_ema_avg_fn(0.8)},
                  "buffers": {"use_buffers": True}}[kind]
        return model, lib.optim.swa_utils.AveragedModel(model, **kwargs)

    (t_model, t_avg), (m_model, m_avg) = build(torch), build(mt)
    assert list(m_avg.state_dict()) == list(t_avg.state_dict())
    for _ in range(4):
        weights = {k: rng.standard_normal(tuple(v.shape)) for k, v in t_model.state_dict().items()
                   if v.is_floating_point()}
        batch = rng.standard_normal((5, 3))
        for lib, model in ((torch, t_model), (mt, m_model)):
            model.load_state_dict({k: lib.tensor(v, dtype=lib.float32) for k, v in weights.items()}, strict=False)
            model(lib.tensor(batch, dtype=lib.float32))
        t_avg.update_parameters(t_model)
        m_avg.update_parameters(m_model)
    for (k, tv), (mk, mv) in zip(t_avg.state_dict().items(), m_avg.state_dict().items()):
        assert k == mk
        np.testing.assert_allclose(mv.numpy(), tv.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(("anneal_epochs", "strategy"), [(3, "cos"), (4, "linear"), (0, "cos")])
def test_swalr_matches_pytorch(anneal_epochs, strategy):
    seen = {}
    for lib in (torch, mt):
        opt = lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=0.5)
        sched = lib.optim.swa_utils.SWALR(opt, swa_lr=0.05, anneal_epochs=anneal_epochs, anneal_strategy=strategy)
        lrs = []
        for _ in range(7):
            opt.step()
            sched.step()
            lrs.append(sched.get_last_lr()[0])
        seen[lib] = lrs
    np.testing.assert_allclose(seen[mt], seen[torch], rtol=1e-12)


def test_update_bn_matches_pytorch():
    rng = np.random.default_rng(10)
    data = [rng.standard_normal((4, 3)) for _ in range(3)]
    stats = {}
    for lib in (torch, mt):
        model = lib.nn.Sequential(lib.nn.Linear(3, 3), lib.nn.BatchNorm1d(3))
        model[0].weight.data.copy_(lib.tensor(np.eye(3), dtype=lib.float32))
        model[0].bias.data.zero_()
        model.eval()
        lib.optim.swa_utils.update_bn([(lib.tensor(d, dtype=lib.float32), 0) for d in data], model)
        assert not model.training
        stats[lib] = (model[1].running_mean.numpy(), model[1].running_var.numpy(), model[1].momentum)
    np.testing.assert_allclose(stats[mt][0], stats[torch][0], rtol=1e-5)
    np.testing.assert_allclose(stats[mt][1], stats[torch][1], rtol=1e-5)
    assert stats[mt][2] == stats[torch][2] == 0.1


@pytest.mark.parametrize("dims", [1, 2, 3])
@pytest.mark.parametrize(("kernel", "stride", "padding", "output_size"), [(2, 2, 0, None), (3, 2, 1, 6)])
def test_max_unpool_matches_pytorch(dims, kernel, stride, padding, output_size):
    rng = np.random.default_rng(11)
    x = rng.standard_normal((2, 3) + (6,) * dims)
    pool = getattr(torch.nn.functional, f"max_pool{dims}d")
    pooled, indices = pool(torch.tensor(x), kernel, stride=stride, padding=padding, return_indices=True)
    size = None if output_size is None else [output_size] * dims
    t_layer = getattr(torch.nn, f"MaxUnpool{dims}d")(kernel, stride=stride, padding=padding)
    m_layer = getattr(mt.nn, f"MaxUnpool{dims}d")(kernel, stride=stride, padding=padding)
    assert repr(m_layer) == repr(t_layer)
    t_idx, m_idx = indices, mt.tensor(indices.numpy())
    _compare_call(lambda t: t_layer(t, t_idx, size), lambda t: m_layer(t, m_idx, size), [pooled.numpy()])


@pytest.mark.parametrize("p", [0, 0.5, 1, 2, 3, float("inf")])
def test_pdist_matches_pytorch(p):
    x = np.random.default_rng(12).standard_normal((5, 3))
    x[3] = x[1]  # a zero distance: PyTorch's gradient is 0 there
    _compare_call(lambda t: torch.pdist(t, p), lambda t: mt.nn.functional.pdist(t, p), [x])


@pytest.mark.parametrize("mode", ["nearest", "bilinear", "bicubic"])
def test_interpolate_non_finite_matches_pytorch(mode):
    x = np.random.default_rng(13).standard_normal((1, 2, 5, 5))
    x[0, 0, 1, 2] = np.inf
    x[0, 1, 4, 4] = np.nan
    t_out = torch.nn.functional.interpolate(torch.tensor(x), size=(9, 7), mode=mode)
    m_out = mt.nn.functional.interpolate(mt.tensor(x), size=(9, 7), mode=mode)
    np.testing.assert_allclose(m_out.numpy(), t_out.numpy(), rtol=1e-12, atol=1e-12)  # nan and inf where PyTorch's


@pytest.mark.parametrize("dims", [1, 2, 3])
@pytest.mark.parametrize("norm_type", [1, 2, 3, float("inf"), -float("inf")])
def test_lp_pool_matches_pytorch(dims, norm_type):
    x = np.random.default_rng(14).standard_normal((2, 3) + (5,) * dims)
    t_layer = getattr(torch.nn, f"LPPool{dims}d")(norm_type, 2, stride=1)
    m_layer = getattr(mt.nn, f"LPPool{dims}d")(norm_type, 2, stride=1)
    assert repr(m_layer) == repr(t_layer)
    _compare_call(t_layer, m_layer, [x])


def test_adaptive_max_pool3d_matches_pytorch():
    x = np.random.default_rng(15).standard_normal((2, 3, 5, 6, 7))
    t_layer, m_layer = torch.nn.AdaptiveMaxPool3d((2, None, 3)), mt.nn.AdaptiveMaxPool3d((2, None, 3))
    assert repr(m_layer) == repr(t_layer)
    _compare_call(t_layer, m_layer, [x])
    _, t_idx = torch.nn.functional.adaptive_max_pool3d(torch.tensor(x), 3, return_indices=True)
    _, m_idx = mt.nn.functional.adaptive_max_pool3d(mt.tensor(x), 3, return_indices=True)
    assert (m_idx.numpy() == t_idx.numpy()).all()
