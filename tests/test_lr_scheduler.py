"""Learning-rate schedulers: the sequences PyTorch's recursive ``get_lr`` produces against closed-form
formulas, ReduceLROnPlateau's bookkeeping, warnings, and state_dict round trips."""

from __future__ import annotations

import io
import math
import warnings

import pytest

import minitorch as torch
import minitorch.optim as optim
from minitorch.optim import lr_scheduler as sched


def make_optimizer(lrs=(0.1,), cls=optim.SGD, **kwargs):
    groups = [{"params": [torch.zeros(1, requires_grad=True)], "lr": lr} for lr in lrs]
    return cls(groups, **kwargs)


def lr_sequence(optimizer, scheduler, epochs, group=0):
    """Rates seen by the optimizer at epochs 0..epochs-1 (one optimizer step then one scheduler step)."""
    seen = []
    for _ in range(epochs):
        seen.append(optimizer.param_groups[group]["lr"])
        optimizer.step()
        scheduler.step()
    return seen


def approx(values):
    return pytest.approx(values, rel=1e-12, abs=1e-15)


def test_step_lr():
    opt = make_optimizer((0.1, 1.0))
    s = sched.StepLR(opt, step_size=3, gamma=0.5)
    assert lr_sequence(opt, s, 10) == approx([0.1 * 0.5 ** (e // 3) for e in range(10)])
    assert s.get_last_lr() == approx([0.1 * 0.5**3, 1.0 * 0.5**3])


def test_multistep_lr_repeated_milestone():
    opt = make_optimizer()
    s = sched.MultiStepLR(opt, milestones=[2, 5, 5], gamma=0.1)
    expected = [0.1, 0.1, 0.01, 0.01, 0.01, 1e-4, 1e-4]
    assert lr_sequence(opt, s, 7) == approx(expected)


def test_exponential_linear_constant_polynomial():
    cases = [
        (lambda o: sched.ExponentialLR(o, gamma=0.9), lambda e: 0.1 * 0.9**e),
        (lambda o: sched.LinearLR(o, start_factor=0.25, end_factor=0.75, total_iters=4),
         lambda e: 0.1 * (0.25 + 0.5 * min(e, 4) / 4)),
        (lambda o: sched.LinearLR(o), lambda e: 0.1 * (1 / 3 + (2 / 3) * min(e, 5) / 5)),
        (lambda o: sched.ConstantLR(o, factor=0.5, total_iters=3), lambda e: 0.05 if e < 3 else 0.1),
        (lambda o: sched.PolynomialLR(o, total_iters=4, power=2.0), lambda e: 0.1 * (1 - min(e, 4) / 4) ** 2),
    ]
    for make, formula in cases:
        opt = make_optimizer()
        s = make(opt)
        assert lr_sequence(opt, s, 8) == approx([formula(e) for e in range(8)]), type(s).__name__


def test_lambda_and_multiplicative_lr():
    opt = make_optimizer((0.1, 0.2))
    s = sched.LambdaLR(opt, [lambda e: 1 / (e + 1), lambda e: 0.5**e])
    assert lr_sequence(opt, s, 4, group=0) == approx([0.1, 0.05, 0.1 / 3, 0.025])
    assert s.get_last_lr()[1] == approx(0.2 * 0.5**4)
    opt = make_optimizer()
    s = sched.MultiplicativeLR(opt, lambda e: 0.5)
    assert lr_sequence(opt, s, 4) == approx([0.1, 0.05, 0.025, 0.0125])
    with pytest.raises(ValueError, match="Expected 1 lr_lambdas, but got 2"):
        sched.LambdaLR(make_optimizer(), [lambda e: 1.0, lambda e: 1.0])


@pytest.mark.parametrize("eta_min", [0.0, 0.01])
def test_cosine_annealing_recursive_matches_closed_form(eta_min):
    """The recursive form (which composes with other schedulers) follows the cosine, including past T_max."""
    T_max = 5
    opt = make_optimizer()
    s = sched.CosineAnnealingLR(opt, T_max=T_max, eta_min=eta_min)
    expected = [eta_min + (0.1 - eta_min) * (1 + math.cos(math.pi * e / T_max)) / 2 for e in range(3 * T_max)]
    assert lr_sequence(opt, s, 3 * T_max) == pytest.approx(expected, rel=1e-9, abs=1e-12)
    assert s.get_last_lr() == pytest.approx(s._get_closed_form_lr(), rel=1e-9)


def test_cosine_annealing_warm_restarts():
    opt = make_optimizer()
    s = sched.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=2, eta_min=0.001)
    # cycles of 2, 4, 8 epochs
    positions = [(0, 2), (1, 2), (0, 4), (1, 4), (2, 4), (3, 4), (0, 8), (1, 8)]
    expected = [0.001 + 0.099 * (1 + math.cos(math.pi * t / T)) / 2 for t, T in positions]
    assert lr_sequence(opt, s, 8) == approx(expected)
    s.step(2.5)  # fractional epochs: a quarter into the second cycle
    assert s.get_last_lr() == approx([0.001 + 0.099 * (1 + math.cos(math.pi * 0.5 / 4)) / 2])
    with pytest.raises(ValueError, match="Expected positive integer T_0, but got 0"):
        sched.CosineAnnealingWarmRestarts(make_optimizer(), T_0=0)


@pytest.mark.parametrize("anneal", ["cos", "linear"])
def test_one_cycle_lr_with_sgd_momentum(anneal):
    opt = make_optimizer(momentum=0.9)
    total = 10
    s = sched.OneCycleLR(opt, max_lr=1.0, total_steps=total, anneal_strategy=anneal)

    def anneal_fn(start, end, pct):
        if anneal == "cos":
            return end + (start - end) / 2 * (math.cos(math.pi * pct) + 1)
        return start + (end - start) * pct

    initial, min_lr, warm_end = 1.0 / 25, 1.0 / 25 / 1e4, 0.3 * total - 1
    expected_lr, expected_momentum = [], []
    for step in range(total):
        if step <= warm_end:
            pct = step / warm_end
            expected_lr.append(anneal_fn(initial, 1.0, pct))
            expected_momentum.append(anneal_fn(0.95, 0.85, pct))
        else:
            pct = (step - warm_end) / (total - 1 - warm_end)
            expected_lr.append(anneal_fn(1.0, min_lr, pct))
            expected_momentum.append(anneal_fn(0.85, 0.95, pct))
    lrs, momenta = [], []
    for _ in range(total):
        lrs.append(opt.param_groups[0]["lr"])
        momenta.append(opt.param_groups[0]["momentum"])
        opt.step()
        s.step()  # PyTorch allows one step past the schedule's last rate
    assert lrs == approx(expected_lr)
    assert momenta == approx(expected_momentum)
    assert lrs[-1] == approx(min_lr)
    with pytest.raises(ValueError, match="Tried to step 11 times. The specified number of total steps is 10"):
        s.step()


def test_one_cycle_three_phase_and_adam_betas():
    opt = make_optimizer(cls=optim.Adam)
    s = sched.OneCycleLR(opt, max_lr=0.5, epochs=2, steps_per_epoch=5, pct_start=0.25, three_phase=True,
                         anneal_strategy="linear")
    # phases end at steps 1.5, 3.0 and 9
    initial = 0.5 / 25
    seen, beta1 = [], []
    for _ in range(10):
        seen.append(opt.param_groups[0]["lr"])
        beta1.append(opt.param_groups[0]["betas"][0])
        opt.step()
        s.step()
    expected = [initial + (0.5 - initial) * 0 / 1.5, initial + (0.5 - initial) / 1.5,
                0.5 + (initial - 0.5) * 0.5 / 1.5, initial]
    assert seen[:4] == approx(expected)
    assert seen[9] == approx(initial / 1e4)
    assert beta1[0] == 0.95 and beta1[3] == approx(0.95) and opt.param_groups[0]["betas"][1] == 0.999
    with pytest.raises(ValueError, match="You must define either total_steps OR"):
        sched.OneCycleLR(make_optimizer(), max_lr=1.0)
    with pytest.raises(ValueError, match="Expected float between 0 and 1 pct_start, but got 1"):
        sched.OneCycleLR(make_optimizer(), max_lr=1.0, total_steps=5, pct_start=1)
    with pytest.raises(ValueError, match="max_lr must have the same length as optimizer.param_groups"):
        sched.OneCycleLR(make_optimizer(), max_lr=[1.0, 2.0], total_steps=5)
    with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
        sched.OneCycleLR(make_optimizer(cls=optim.Adagrad), max_lr=1.0, total_steps=5)


def test_reduce_lr_on_plateau_patience_cooldown_min_lr():
    opt = make_optimizer((1.0, 0.02))
    s = sched.ReduceLROnPlateau(opt, factor=0.5, patience=2, cooldown=1, min_lr=[0.0, 0.01])
    lrs = []
    for metric in [10, 9, 9, 9, 9, 9, 9, 9, 9]:
        s.step(metric)
        lrs.append(s.get_last_lr())
    # bad epochs: 3rd, 4th, 5th (>2 -> halve at epoch 5); cooldown eats epoch 6; 7, 8, 9 bad -> halve at 9
    assert [lr[0] for lr in lrs] == [1.0, 1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.5, 0.25]
    assert [lr[1] for lr in lrs] == [0.02] * 4 + [0.01] * 5  # floored at min_lr
    assert s.best == 9 and s.last_epoch == 9


def test_reduce_lr_on_plateau_modes_and_threshold():
    opt = make_optimizer()
    s = sched.ReduceLROnPlateau(opt, mode="max", patience=0, threshold=0.1, threshold_mode="rel")
    s.step(1.0)
    s.step(1.05)  # not 10% better: bad epoch, patience 0 -> reduce
    assert opt.param_groups[0]["lr"] == approx(0.01)
    s.step(torch.tensor(2.0))  # a 0-dim tensor metric works
    assert s.best == 2.0 and s.num_bad_epochs == 0
    opt = make_optimizer()
    s = sched.ReduceLROnPlateau(opt, patience=0, threshold=0.5, threshold_mode="abs", min_lr=0.1 - 1e-9)
    s.step(1.0)
    s.step(0.6)  # not 0.5 lower: bad; new lr would change it by less than eps -> unchanged
    assert opt.param_groups[0]["lr"] == 0.1
    with pytest.raises(ValueError, match="Factor should be < 1.0."):
        sched.ReduceLROnPlateau(opt, factor=1.0)
    with pytest.raises(ValueError, match="mode avg is unknown!"):
        sched.ReduceLROnPlateau(opt, mode="avg")
    with pytest.raises(ValueError, match="threshold mode x is unknown!"):
        sched.ReduceLROnPlateau(opt, threshold_mode="x")


def test_sequential_lr():
    opt = make_optimizer()
    warmup = sched.LinearLR(opt, start_factor=0.5, total_iters=2)
    decay = sched.ExponentialLR(opt, gamma=0.5)
    s = sched.SequentialLR(opt, schedulers=[warmup, decay], milestones=[3])
    assert lr_sequence(opt, s, 6) == approx([0.05, 0.075, 0.1, 0.1, 0.05, 0.025])
    with pytest.raises(ValueError, match="expects number of schedulers provided to be one more"):
        sched.SequentialLR(opt, schedulers=[warmup, decay], milestones=[])


def test_chained_schedulers_compose():
    opt = make_optimizer()
    a = sched.StepLR(opt, step_size=2, gamma=0.1)
    b = sched.ExponentialLR(opt, gamma=0.5)
    seen = []
    for _ in range(4):
        seen.append(opt.param_groups[0]["lr"])
        opt.step()
        a.step()
        b.step()
    assert seen == approx([0.1 * 0.1 ** (e // 2) * 0.5**e for e in range(4)])


def test_step_with_epoch_uses_closed_form_and_warns():
    opt = make_optimizer()
    s = sched.StepLR(opt, step_size=2, gamma=0.1)
    opt.step()
    with pytest.warns(UserWarning, match="The epoch parameter in `scheduler.step\\(\\)` was not necessary"):
        s.step(5)
    assert s.last_epoch == 5 and opt.param_groups[0]["lr"] == approx(0.1 * 0.1**2)


def test_order_warning():
    opt = make_optimizer()
    s = sched.StepLR(opt, step_size=1)
    with pytest.warns(UserWarning, match="Detected call of `lr_scheduler.step\\(\\)` before `optimizer.step\\(\\)`"):
        s.step()
    opt = make_optimizer()
    s = sched.StepLR(opt, step_size=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt.step()
        s.step()
        s.step()


def test_get_lr_outside_step_warns():
    s = sched.StepLR(make_optimizer(), step_size=1)
    with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
        s.get_lr()


def test_initial_lr_and_resume():
    opt = make_optimizer((0.1, 0.2))
    sched.StepLR(opt, step_size=1, gamma=0.5)
    assert [g["initial_lr"] for g in opt.param_groups] == [0.1, 0.2]
    with pytest.raises(KeyError, match=r"param 'initial_lr' is not specified in param_groups\[0\]"):
        sched.StepLR(make_optimizer(), step_size=1, last_epoch=3)
    with pytest.raises(TypeError, match="list is not an Optimizer"):
        sched.StepLR([], step_size=1)


def test_lr_tensor_is_filled_in_place():
    p = torch.zeros(1, requires_grad=True)
    lr = torch.tensor(0.1)
    opt = optim.SGD([p], lr=lr)
    s = sched.ExponentialLR(opt, gamma=0.5)
    opt.step()
    s.step()
    assert opt.param_groups[0]["lr"] is lr and lr.item() == pytest.approx(0.05, rel=1e-6)


@pytest.mark.parametrize("make", [
    lambda o: sched.StepLR(o, step_size=2, gamma=0.5),
    lambda o: sched.MultiStepLR(o, milestones=[1, 3, 3]),
    lambda o: sched.CosineAnnealingLR(o, T_max=4, eta_min=0.001),
    lambda o: sched.OneCycleLR(o, max_lr=1.0, total_steps=20),
    lambda o: sched.LambdaLR(o, lambda e: 0.9**e),
    lambda o: sched.SequentialLR(o, [sched.ConstantLR(o, 0.5, 2), sched.ExponentialLR(o, 0.9)], [2]),
    lambda o: sched.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2),
])
def test_state_dict_round_trip_through_save_load(make):
    """Resume from a checkpoint (optimizer + scheduler via minitorch.save) and get the same rates."""
    opt = make_optimizer(momentum=0.9)
    s = make(opt)
    lr_sequence(opt, s, 3)
    buffer = io.BytesIO()
    torch.save({"optimizer": opt.state_dict(), "scheduler": s.state_dict()}, buffer)
    expected = lr_sequence(opt, s, 5)

    buffer.seek(0)
    checkpoint = torch.load(buffer)
    opt2 = make_optimizer(momentum=0.9)
    s2 = make(opt2)
    opt2.load_state_dict(checkpoint["optimizer"])
    s2.load_state_dict(checkpoint["scheduler"])
    assert lr_sequence(opt2, s2, 5) == approx(expected)


def test_reduce_lr_on_plateau_state_dict():
    opt = make_optimizer()
    s = sched.ReduceLROnPlateau(opt, patience=1)
    for metric in [3, 4]:
        s.step(metric)
    buffer = io.BytesIO()
    torch.save(s.state_dict(), buffer)
    buffer.seek(0)
    s2 = sched.ReduceLROnPlateau(make_optimizer(), patience=5)
    s2.load_state_dict(torch.load(buffer))
    assert (s2.best, s2.num_bad_epochs, s2.patience, s2.mode_worse) == (3.0, 1, 1, math.inf)
