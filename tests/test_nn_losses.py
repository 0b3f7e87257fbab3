"""nn loss modules: constructor options (reduction, weight/pos_weight buffers, ignore_index, label_smoothing,
legacy size_average/reduce), forward == functional form and numpy, reprs, state_dict and gradcheck."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch as torch
import minitorch.nn as nn
import minitorch.nn.functional as F
from minitorch.autograd import gradcheck, gradgradcheck
from minitorch.testing.strategies import tensors

RNG = np.random.default_rng(5)


def arr(t):
    return t.detach().cpu().numpy()


def t64(a, device="cpu", **kwargs):
    return torch.tensor(np.asarray(a, dtype=np.float64), device=device, **kwargs)


def reduce(values, reduction):
    return {"none": values, "mean": values.mean(), "sum": values.sum()}[reduction]


def log_softmax(x, axis=1):
    shifted = x - x.max(axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis, keepdims=True))


REDUCTIONS = ["none", "mean", "sum"]


# regression ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_regression_losses_match_numpy(device, reduction):
    x, y = RNG.standard_normal((3, 4)) * 2, RNG.standard_normal((3, 4)) * 2
    d = x - y
    a = np.abs(d)
    cases = [
        (nn.MSELoss(reduction=reduction), d * d),
        (nn.L1Loss(reduction=reduction), a),
        (nn.SmoothL1Loss(reduction=reduction, beta=0.5), np.where(a < 0.5, 0.5 * d * d / 0.5, a - 0.25)),
        (nn.HuberLoss(reduction=reduction, delta=1.5), np.where(a < 1.5, 0.5 * d * d, 1.5 * (a - 0.75))),
    ]
    for module, values in cases:
        assert module.reduction == reduction
        out = module(t64(x, device), t64(y, device))
        np.testing.assert_allclose(arr(out), reduce(values, reduction), rtol=1e-12, err_msg=repr(module))


def test_loss_reprs_and_defaults():
    assert repr(nn.MSELoss()) == "MSELoss()"
    assert repr(nn.CrossEntropyLoss()) == "CrossEntropyLoss()"
    assert repr(nn.BCEWithLogitsLoss()) == "BCEWithLogitsLoss()"
    ce = nn.CrossEntropyLoss()
    assert (ce.reduction, ce.ignore_index, ce.label_smoothing, ce.weight) == ("mean", -100, 0.0, None)
    assert nn.SmoothL1Loss().beta == 1.0 and nn.HuberLoss().delta == 1.0 and nn.KLDivLoss().log_target is False
    assert nn.NLLLoss().ignore_index == -100
    assert list(ce.state_dict()) == [] and list(ce.parameters()) == []


def test_legacy_size_average_and_reduce():
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        assert nn.MSELoss(size_average=False).reduction == "sum"
    with pytest.warns(UserWarning):
        assert nn.L1Loss(reduce=False).reduction == "none"
    with pytest.warns(UserWarning):
        assert nn.CrossEntropyLoss(size_average=True, reduce=True).reduction == "mean"


def test_invalid_reduction_raises_on_forward(device):
    loss = nn.MSELoss(reduction="avg")
    with pytest.raises(ValueError, match="avg is not a valid value for reduction"):
        loss(torch.zeros(2, device=device), torch.zeros(2, device=device))


# classification -----------------------------------------------------------------------------------


def np_cross_entropy(x, target, weight, ignore_index, reduction, smoothing):
    """PyTorch's formula for class-index targets: (1 - eps) * nll + eps * mean-over-classes term."""
    logp = log_softmax(x)
    classes = x.shape[1]
    w = np.ones(classes) if weight is None else weight
    keep = target != ignore_index
    safe = np.where(keep, target, 0)
    picked = np.take_along_axis(logp, safe[:, None], 1)[:, 0]
    nll = np.where(keep, -w[safe] * picked, 0.0)
    smooth = np.where(keep, -(logp * w).sum(1) / classes, 0.0)
    loss = (1 - smoothing) * nll + smoothing * smooth
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / np.where(keep, w[safe], 0).sum()


@given(reduction=st.sampled_from(REDUCTIONS), smoothing=st.sampled_from([0.0, 0.2]), weighted=st.booleans(),
       ignore=st.booleans())
@settings(max_examples=12)
def test_cross_entropy_loss_matches_numpy(reduction, smoothing, weighted, ignore):
    x = RNG.standard_normal((5, 4))
    target = np.array([0, 3, 1, 1, 2])
    weight = np.array([0.5, 1.0, 2.0, 1.5]) if weighted else None
    ignore_index = 1 if ignore else -100
    module = nn.CrossEntropyLoss(weight=None if weight is None else t64(weight), ignore_index=ignore_index,
                                 reduction=reduction, label_smoothing=smoothing)
    out = module(t64(x), torch.tensor(target))
    expected = np_cross_entropy(x, target, weight, ignore_index, reduction, smoothing)
    np.testing.assert_allclose(arr(out), expected, rtol=1e-10, atol=1e-12)


def test_cross_entropy_loss_probabilities_and_spatial(device):
    x = RNG.standard_normal((2, 3, 2, 2))
    probs = np.exp(log_softmax(RNG.standard_normal((2, 3, 2, 2))))
    out = nn.CrossEntropyLoss()(t64(x, device), t64(probs, device))
    np.testing.assert_allclose(arr(out), -(log_softmax(x) * probs).sum(1).mean(), rtol=1e-10)
    target = torch.tensor(RNG.integers(0, 3, (2, 2, 2)), device=device)
    np.testing.assert_allclose(arr(nn.CrossEntropyLoss(reduction="none")(t64(x, device), target)),
                               arr(F.cross_entropy(t64(x, device), target, reduction="none")))


def test_nll_loss_weight_buffer_and_ignore_index(device):
    logp = log_softmax(RNG.standard_normal((4, 3)))
    target = np.array([2, 0, 1, 2])
    weight = np.array([1.0, 2.0, 0.5])
    module = nn.NLLLoss(weight=t64(weight, device), ignore_index=0)
    assert list(module.state_dict()) == ["weight"] and list(module.parameters()) == []
    out = module(t64(logp, device), torch.tensor(target, device=device))
    keep = target != 0
    picked = logp[np.arange(4), target]
    expected = -(weight[target] * picked)[keep].sum() / weight[target][keep].sum()
    np.testing.assert_allclose(arr(out), expected, rtol=1e-12)
    module.float()
    assert module.weight.dtype is torch.float32  # the weight buffer follows the module's dtype


def test_weighted_cross_entropy_gradcheck(device):
    x = t64(RNG.standard_normal((4, 3)), device).t().contiguous().t().requires_grad_()
    weight = t64([0.3, 1.0, 2.0], device)
    target = torch.tensor([0, 2, 1, 2], device=device)
    module = nn.CrossEntropyLoss(weight=weight, label_smoothing=0.1)
    assert gradcheck(lambda x: module(x, target), (x,))
    assert gradgradcheck(lambda x: module(x, target), (x,))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_bce_loss(device, reduction):
    p = 1 / (1 + np.exp(-RNG.standard_normal((3, 4))))
    y = (RNG.random((3, 4)) > 0.5).astype(np.float64)
    w = RNG.random(4) + 0.5
    module = nn.BCELoss(weight=t64(w, device), reduction=reduction)
    values = -w * (y * np.log(p) + (1 - y) * np.log(1 - p))
    np.testing.assert_allclose(arr(module(t64(p, device), t64(y, device))), reduce(values, reduction), rtol=1e-10)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_bce_with_logits_pos_weight(device, reduction):
    x = RNG.standard_normal((3, 4)) * 3
    y = RNG.random((3, 4))
    w, pos = RNG.random(4) + 0.5, np.array([1.0, 2.0, 0.5, 3.0])
    module = nn.BCEWithLogitsLoss(weight=t64(w, device), reduction=reduction, pos_weight=t64(pos, device))
    assert list(module.state_dict()) == ["weight", "pos_weight"]
    log_sig = -np.logaddexp(0, -x)
    log_one_minus = -np.logaddexp(0, x)
    values = -w * (pos * y * log_sig + (1 - y) * log_one_minus)
    np.testing.assert_allclose(arr(module(t64(x, device), t64(y, device))), reduce(values, reduction), rtol=1e-10)


@given(x=tensors(shape=(2, 3), requires_grad=True))
@settings(max_examples=5)
def test_bce_with_logits_gradcheck(x):
    target = t64([[0.0, 1.0, 0.3], [1.0, 0.0, 0.9]])
    module = nn.BCEWithLogitsLoss(pos_weight=t64([1.0, 2.0, 0.5]))
    assert gradcheck(lambda x: module(x, target), (x,))
    assert gradgradcheck(lambda x: module(x, target), (x,))


def test_kl_div_loss(device):
    logq = log_softmax(RNG.standard_normal((3, 4)))
    p = np.exp(log_softmax(RNG.standard_normal((3, 4))))
    pointwise = p * (np.log(p) - logq)
    out = nn.KLDivLoss(reduction="batchmean")(t64(logq, device), t64(p, device))
    np.testing.assert_allclose(arr(out), pointwise.sum() / 3, rtol=1e-10)
    out = nn.KLDivLoss(reduction="sum", log_target=True)(t64(logq, device), t64(np.log(p), device))
    np.testing.assert_allclose(arr(out), pointwise.sum(), rtol=1e-10)
    with pytest.warns(UserWarning, match="batchmean"):
        nn.KLDivLoss()(t64(logq, device), t64(p, device))


def test_other_losses_match_functional(device):
    a, b = t64(RNG.standard_normal((3, 4)), device), t64(RNG.standard_normal((3, 4)), device)
    c = t64(RNG.standard_normal((3, 4)), device)
    sign = t64([1.0, -1.0, 1.0], device)
    signs = t64(np.sign(RNG.standard_normal((3, 4))), device)
    var = t64(RNG.random((3, 4)) + 0.1, device)
    cases = [
        (nn.PoissonNLLLoss(full=True)(a, b.abs()), F.poisson_nll_loss(a, b.abs(), full=True)),
        (nn.GaussianNLLLoss(eps=1e-3)(a, b, var), F.gaussian_nll_loss(a, b, var, eps=1e-3)),
        (nn.MarginRankingLoss(0.5)(a[:, 0], b[:, 0], sign), F.margin_ranking_loss(a[:, 0], b[:, 0], sign, 0.5)),
        (nn.HingeEmbeddingLoss(2.0)(a, signs), F.hinge_embedding_loss(a, signs, 2.0)),
        (nn.SoftMarginLoss(reduction="sum")(a, signs), F.soft_margin_loss(a, signs, reduction="sum")),
        (nn.MultiLabelSoftMarginLoss()(a, (signs > 0).double()), F.multilabel_soft_margin_loss(a, (signs > 0).double())),
        (nn.CosineEmbeddingLoss(0.1)(a, b, sign), F.cosine_embedding_loss(a, b, sign, 0.1)),
        (nn.TripletMarginLoss(swap=True)(a, b, c), F.triplet_margin_loss(a, b, c, swap=True)),
    ]
    for got, expected in cases:
        np.testing.assert_allclose(arr(got), arr(expected), rtol=1e-12)
    with pytest.raises(ValueError, match="TripletMarginLoss: expected margin to be greater than 0, got 0"):
        nn.TripletMarginLoss(margin=0)


def test_losses_in_a_training_step(device):
    torch.manual_seed(1)
    model = nn.Linear(3, 4, device=device)
    x, y = torch.randn(6, 3, device=device), torch.tensor([0, 1, 2, 3, 1, 0], device=device)
    loss = nn.CrossEntropyLoss()(model(x), y)
    loss.backward()
    assert loss.shape == () and model.weight.grad.shape == (4, 3)
    with torch.no_grad():
        model.weight -= 0.5 * model.weight.grad
        model.bias -= 0.5 * model.bias.grad
    assert nn.CrossEntropyLoss()(model(x), y).item() < loss.item()  # float(loss) would warn: it requires grad
