"""nn.functional losses and distances: values against numpy references, gradients, PyTorch's errors."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch as torch
import minitorch.nn.functional as F
from minitorch.autograd import gradcheck, gradgradcheck
from minitorch.testing.strategies import shapes, tensors

RNG = np.random.default_rng(1234)


def t(a, device="cpu", **kwargs):
    return torch.tensor(a, device=device, **kwargs)


def reduce_np(loss, reduction):
    return {"mean": loss.mean(), "sum": loss.sum(), "none": loss}[reduction]


# regression ------------------------------------------------------------------------------------

REGRESSION = {
    "mse_loss": (F.mse_loss, lambda d: d * d),
    "l1_loss": (F.l1_loss, np.abs),
    "smooth_l1_loss": (
        lambda a, b, reduction: F.smooth_l1_loss(a, b, reduction=reduction, beta=0.5),
        lambda d: np.where(np.abs(d) < 0.5, d * d, np.abs(d) - 0.25),
    ),
    "huber_loss": (
        lambda a, b, reduction: F.huber_loss(a, b, reduction=reduction, delta=0.5),
        lambda d: np.where(np.abs(d) < 0.5, 0.5 * d * d, 0.5 * (np.abs(d) - 0.25)),
    ),
}


@pytest.mark.parametrize("name", list(REGRESSION))
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_regression_values(name, reduction, device):
    fn, ref = REGRESSION[name]
    a, b = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4))
    out = fn(t(a, device), t(b, device), reduction=reduction)
    np.testing.assert_allclose(out.cpu().numpy(), reduce_np(ref(a - b), reduction), rtol=1e-12)


@pytest.mark.parametrize("name", list(REGRESSION))
@given(data=st.data())
@settings(max_examples=6)
def test_regression_gradcheck(name, data):
    fn = REGRESSION[name][0]
    shape = data.draw(shapes(1, 3, 1, 4))
    x = data.draw(tensors(shape, requires_grad=True))
    y = data.draw(tensors(shape, requires_grad=True))
    d = (x - y).detach().numpy()
    if name != "mse_loss" and (np.abs(np.abs(d) - 0.5) < 1e-3).any() | (np.abs(d) < 1e-3).any():
        return  # finite differences across a kink
    for reduction in ("mean", "none"):
        assert gradcheck(lambda a, b: fn(a, b, reduction=reduction), (x, y))
    if name == "mse_loss":
        assert gradgradcheck(lambda a, b: fn(a, b, reduction="sum"), (x, y))


def test_smooth_l1_beta_zero_is_l1_and_size_warning(device):
    a, b = t([1.0, -2.0, 0.25], device), t([0.0, 0.0, 0.0], device)
    assert F.smooth_l1_loss(a, b, beta=0.0).item() == pytest.approx(3.25 / 3)
    with pytest.warns(UserWarning, match=r"Using a target size \(torch.Size\(\[1, 3\]\)\) that is different"):
        F.mse_loss(a, b.reshape(1, 3))
    with pytest.raises(ValueError, match="foo is not a valid value for reduction"):
        F.mse_loss(a, b, reduction="foo")
    with pytest.warns(UserWarning, match="reduction='sum' instead"):
        assert F.l1_loss(a, b, size_average=False).item() == pytest.approx(3.25)


# cross entropy / nll --------------------------------------------------------------------------


def np_log_softmax(a, axis):
    shifted = a - a.max(axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis, keepdims=True))


def np_cross_entropy(logits, target, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
    """Reference: PyTorch's documented formula, class dim 1, class-index targets."""
    classes = logits.shape[1]
    logp = np_log_softmax(logits, 1)
    weight = np.ones(classes) if weight is None else weight
    valid = target != ignore_index
    safe = np.where(valid, target, 0)
    w_target = weight[safe] * valid
    picked = np.take_along_axis(logp, safe[:, None], 1)[:, 0]
    w_shape = (1, classes) + (1,) * (logits.ndim - 2)
    smooth = -(logp * weight.reshape(w_shape)).sum(1) * valid
    per_item = (1 - label_smoothing) * -(w_target * picked) + label_smoothing / classes * smooth
    if reduction == "none":
        return per_item
    if reduction == "sum":
        return per_item.sum()
    return per_item.sum() / w_target.sum()


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("label_smoothing", [0.0, 0.3])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("shape", [(5, 4), (3, 4, 2, 2)])
def test_cross_entropy_against_numpy(reduction, label_smoothing, weighted, shape, device):
    logits = RNG.standard_normal(shape) * 2
    target = RNG.integers(0, shape[1], size=(shape[0],) + shape[2:])
    target.reshape(-1)[::3] = -1  # some ignored
    weight = RNG.uniform(0.5, 2.0, shape[1]) if weighted else None
    out = F.cross_entropy(t(logits, device), t(target, device), weight=None if weight is None else t(weight, device),
                          ignore_index=-1, reduction=reduction, label_smoothing=label_smoothing)
    expected = np_cross_entropy(logits, target, weight, -1, reduction, label_smoothing)
    np.testing.assert_allclose(out.cpu().numpy(), expected, rtol=1e-10)
    if reduction != "none":
        assert out.shape == ()


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_gradients(reduction):
    x = t(RNG.standard_normal((4, 3, 2)), requires_grad=True)
    target = t([[0, 2], [1, -100], [2, 2], [1, 0]])
    weight = t([0.5, 1.0, 2.0], dtype=torch.float64)
    for smoothing in (0.0, 0.2):
        fn = lambda a: F.cross_entropy(a, target, weight=weight, reduction=reduction, label_smoothing=smoothing)  # noqa: E731
        assert gradcheck(fn, (x,))
        assert gradgradcheck(fn, (x,))


@given(data=st.data())
@settings(max_examples=10)
def test_cross_entropy_gradcheck_layouts(data):
    n, c = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 4))
    x = data.draw(tensors((n, c), requires_grad=True))
    target = t(data.draw(st.lists(st.integers(0, c - 1), min_size=n, max_size=n)))
    assert gradcheck(lambda a: F.cross_entropy(a, target), (x,))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss_gradients(reduction):
    x = t(RNG.standard_normal((2, 3, 4))).permute(2, 1, 0).requires_grad_()  # non-contiguous leaf
    target = t([[0, 2], [1, -100], [2, 2], [1, 0]])
    weight = t([0.5, 1.0, 2.0], dtype=torch.float64)
    fn = lambda a: F.nll_loss(a, target, weight=weight, reduction=reduction)  # noqa: E731
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))
    assert gradcheck(lambda a: F.nll_loss(a, t(2), reduction=reduction), (t([0.1, 0.2, 0.3], dtype=torch.float64, requires_grad=True),))


def test_cross_entropy_gradient_is_softmax_minus_onehot(device):
    logits = RNG.standard_normal((3, 5))
    x = t(logits, device, requires_grad=True)
    F.cross_entropy(x, t([4, 0, 2], device), reduction="sum").backward()
    expected = np.exp(np_log_softmax(logits, 1)) - np.eye(5)[[4, 0, 2]]
    np.testing.assert_allclose(x.grad.cpu().numpy(), expected, rtol=1e-10)


@pytest.mark.parametrize("label_smoothing", [0.0, 0.25])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_probability_targets(label_smoothing, reduction, device):
    logits = RNG.standard_normal((4, 3, 2))
    probs = np.exp(np_log_softmax(RNG.standard_normal((4, 3, 2)), 1))
    weight = np.array([1.0, 0.5, 2.0])
    out = F.cross_entropy(t(logits, device), t(probs, device), weight=t(weight, device), reduction=reduction,
                          label_smoothing=label_smoothing)
    smoothed = probs * (1 - label_smoothing) + label_smoothing / 3
    per_item = -(np_log_softmax(logits, 1) * smoothed * weight[None, :, None]).sum(1)
    expected = per_item.sum() / 8 if reduction == "mean" else reduce_np(per_item, reduction)
    np.testing.assert_allclose(out.cpu().numpy(), expected, rtol=1e-10)
    x, p = t(logits, requires_grad=True), t(probs, requires_grad=True)
    assert gradcheck(lambda a, b: F.cross_entropy(a, b, label_smoothing=label_smoothing), (x, p))


def test_cross_entropy_unbatched_and_all_ignored(device):
    logits = np.array([0.5, 1.5, -1.0])
    out = F.cross_entropy(t(logits, device), t(1, device))
    assert out.shape == () and out.item() == pytest.approx(-np_log_softmax(logits, 0)[1])
    assert math.isnan(F.cross_entropy(t([[1.0, 2.0]], device), t([-100], device)).item())


def test_nll_loss_values_and_errors(device):
    logp = np_log_softmax(RNG.standard_normal((4, 3)), 1)
    target = np.array([2, 0, 1, 2])
    weight = np.array([1.0, 2.0, 3.0])
    out = F.nll_loss(t(logp, device), t(target, device), weight=t(weight, device))
    w = weight[target]
    assert out.item() == pytest.approx(-(w * logp[range(4), target]).sum() / w.sum())
    none = F.nll_loss(t(logp, device), t(target, device), reduction="none")
    np.testing.assert_allclose(none.cpu().numpy(), -logp[range(4), target])
    with pytest.raises(ValueError, match=r"Expected input batch_size \(4\) to match target batch_size \(3\)\."):
        F.nll_loss(t(logp, device), t([0, 1, 2], device))
    with pytest.raises(IndexError, match="Target 3 is out of bounds."):
        F.nll_loss(t(logp, device), t([0, 1, 2, 3], device))
    # class-index targets are int64 or uint8 (PyTorch's "Long or Byte"); a float target of class indices
    # (not probabilities: not input's shape) and an int32 target are refused, naming the dtype
    with pytest.raises(RuntimeError, match="expected target dtype to be Long or Byte, but got Float"):
        F.cross_entropy(t(logp, device), t([0.0, 1.0, 2.0, 0.0], device))
    with pytest.raises(RuntimeError, match="expected target dtype to be Long or Byte, but got Int"):
        F.nll_loss(t(logp, device), t(target, device).to(torch.int32))
    with pytest.raises(RuntimeError, match="expected target dtype to be Long or Byte, but got Bool"):
        F.nll_loss(t(logp, device), t(target, device) > 0)
    assert F.nll_loss(t(logp, device), t(target, device).to(torch.uint8)).item() == pytest.approx(
        F.nll_loss(t(logp, device), t(target, device)).item())
    with pytest.raises(RuntimeError, match="weight tensor should be defined either for all 3 classes"):
        F.cross_entropy(t(logp, device), t(target, device), weight=t([1.0, 2.0], device))
    with pytest.raises(RuntimeError, match=r"Expected target size \[4, 2\], got \[4, 3\]"):
        F.cross_entropy(torch.zeros(4, 3, 2, device=device), torch.zeros(4, 3, dtype=torch.int64, device=device))
    with pytest.raises(RuntimeError, match="label_smoothing must be between 0.0 and 1.0. Got: 1.5"):
        F.cross_entropy(t(logp, device), t(target, device), label_smoothing=1.5)


# binary ---------------------------------------------------------------------------------------


def test_binary_cross_entropy_values_and_clamp(device):
    p, y = RNG.uniform(0.05, 0.95, (3, 4)), RNG.uniform(0, 1, (3, 4))
    w = RNG.uniform(0.5, 1.5, (4,))
    out = F.binary_cross_entropy(t(p, device), t(y, device), weight=t(w, device), reduction="sum")
    assert out.item() == pytest.approx((-w * (y * np.log(p) + (1 - y) * np.log(1 - p))).sum())
    edge = F.binary_cross_entropy(t([0.0, 1.0, 1.0], device), t([1.0, 0.0, 1.0], device), reduction="none")
    assert edge.tolist() == [100.0, 100.0, 0.0]
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        F.binary_cross_entropy(t([1.5], device), t([1.0], device))
    with pytest.raises(ValueError, match="Using a target size"):
        F.binary_cross_entropy(t([0.5, 0.5], device), t([1.0], device))


@given(data=st.data())
@settings(max_examples=8)
def test_binary_cross_entropy_gradients(data):
    shape = data.draw(shapes(1, 3, 1, 4))
    p = data.draw(tensors(shape, min_value=0.05, max_value=0.95, requires_grad=True))
    y = data.draw(tensors(shape, min_value=0.0, max_value=1.0, requires_grad=True))
    assert gradcheck(F.binary_cross_entropy, (p, y))
    assert gradgradcheck(F.binary_cross_entropy, (p, y))


def test_bce_with_logits_values_and_stability(device):
    z, y = RNG.standard_normal((3, 4)) * 3, RNG.uniform(0, 1, (3, 4))
    pw = np.array([0.5, 1.0, 2.0, 3.0])
    out = F.binary_cross_entropy_with_logits(t(z, device), t(y, device), pos_weight=t(pw, device), reduction="none")
    s = 1 / (1 + np.exp(-z))
    np.testing.assert_allclose(out.cpu().numpy(), -(pw * y * np.log(s) + (1 - y) * np.log(1 - s)), rtol=1e-10)
    huge = F.binary_cross_entropy_with_logits(t([1000.0, -1000.0], device), t([0.0, 1.0], device), reduction="none")
    assert huge.tolist() == [1000.0, 1000.0]
    with pytest.raises(ValueError, match=r"Target size \(torch.Size\(\[1\]\)\) must be the same as input size"):
        F.binary_cross_entropy_with_logits(t([0.5, 0.5], device), t([1.0], device))


@given(data=st.data())
@settings(max_examples=8)
def test_bce_with_logits_gradients(data):
    shape = data.draw(shapes(1, 3, 1, 4))
    z = data.draw(tensors(shape, requires_grad=True))
    y = data.draw(tensors(shape, min_value=0.0, max_value=1.0, requires_grad=True))
    w = data.draw(tensors(shape[-1:], min_value=0.5, max_value=2.0))
    fn = lambda a, b: F.binary_cross_entropy_with_logits(a, b, weight=w, pos_weight=w * 2)  # noqa: E731
    assert gradcheck(fn, (z, y))
    assert gradgradcheck(fn, (z, y))


# divergences, margins, distances ---------------------------------------------------------------


def test_kl_div(device):
    logq = np_log_softmax(RNG.standard_normal((3, 4)), 1)
    p = np.exp(np_log_softmax(RNG.standard_normal((3, 4)), 1))
    p[0, 0] = 0.0
    pointwise = np.where(p > 0, p * np.log(np.where(p > 0, p, 1)), 0) - p * logq
    out = F.kl_div(t(logq, device), t(p, device), reduction="batchmean")
    assert out.item() == pytest.approx(pointwise.sum() / 3)
    with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
        assert F.kl_div(t(logq, device), t(p, device)).item() == pytest.approx(pointwise.mean())
    logp = np.log(np.where(p > 0, p, 1e-3))
    out = F.kl_div(t(logq, device), t(logp, device), reduction="none", log_target=True)
    np.testing.assert_allclose(out.cpu().numpy(), np.exp(logp) * (logp - logq), rtol=1e-12)
    x, target = t(logq, requires_grad=True), t(np.exp(logp), requires_grad=True)
    assert gradcheck(lambda a, b: F.kl_div(a, b, reduction="batchmean"), (x, target))
    assert gradgradcheck(lambda a, b: F.kl_div(a, b, reduction="sum", log_target=True), (x, t(logp, requires_grad=True)))


def test_cosine_similarity_and_pairwise_distance(device):
    a, b = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4))
    cos = F.cosine_similarity(t(a, device), t(b, device))
    expected = (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    np.testing.assert_allclose(cos.cpu().numpy(), expected, rtol=1e-12)
    assert F.cosine_similarity(t(a, device), t(b[:1], device), dim=1).shape == (3,)  # broadcasting
    dist = F.pairwise_distance(t(a, device), t(b, device))
    np.testing.assert_allclose(dist.cpu().numpy(), np.linalg.norm(a - b + 1e-6, axis=1), rtol=1e-12)
    d1 = F.pairwise_distance(t(a, device), t(b, device), p=1.0, keepdim=True)
    np.testing.assert_allclose(d1.cpu().numpy(), np.abs(a - b + 1e-6).sum(1, keepdims=True), rtol=1e-12)


@given(data=st.data())
@settings(max_examples=8)
def test_distances_gradcheck(data):
    shape = data.draw(shapes(2, 2, 1, 4))
    a = data.draw(tensors(shape, requires_grad=True))
    b = data.draw(tensors(shape, requires_grad=True))
    if (np.linalg.norm(a.detach().numpy(), axis=-1) < 1e-2).any() or (np.linalg.norm(b.detach().numpy(), axis=-1) < 1e-2).any():
        return  # the norm is not differentiable at 0
    assert gradcheck(lambda x, y: F.cosine_similarity(x, y, dim=-1), (a, b))
    if (np.linalg.norm(a.detach().numpy() - b.detach().numpy(), axis=-1) < 1e-2).any():
        return  # nor is the distance where x == y (there only eps keeps it smooth)
    assert gradcheck(lambda x, y: F.pairwise_distance(x, y), (a, b))


def test_margin_and_likelihood_losses(device):
    x1, x2 = RNG.standard_normal(5), RNG.standard_normal(5)
    y = np.array([1.0, -1.0, 1.0, -1.0, 1.0])
    out = F.margin_ranking_loss(t(x1, device), t(x2, device), t(y, device), margin=0.3)
    assert out.item() == pytest.approx(np.maximum(0, -y * (x1 - x2) + 0.3).mean())
    out = F.hinge_embedding_loss(t(x1, device), t(y, device), margin=0.5, reduction="sum")
    assert out.item() == pytest.approx(np.where(y == 1, x1, np.maximum(0, 0.5 - x1)).sum())
    out = F.soft_margin_loss(t(x1, device), t(y, device))
    assert out.item() == pytest.approx(np.log1p(np.exp(-y * x1)).mean())
    rates, counts = RNG.standard_normal(5), np.array([0.0, 1.0, 2.0, 5.0, 3.0])
    out = F.poisson_nll_loss(t(rates, device), t(counts, device), full=True, reduction="none")
    stirling = np.where(counts > 1, counts * np.log(np.maximum(counts, 1)) - counts
                        + 0.5 * np.log(2 * np.pi * np.maximum(counts, 1)), 0)
    np.testing.assert_allclose(out.cpu().numpy(), np.exp(rates) - counts * rates + stirling, rtol=1e-12)
    var = RNG.uniform(0.5, 2, 5)
    out = F.gaussian_nll_loss(t(x1, device), t(x2, device), t(var, device), reduction="sum")
    assert out.item() == pytest.approx((0.5 * (np.log(var) + (x1 - x2) ** 2 / var)).sum())
    logits, labels = RNG.standard_normal((2, 3)), np.array([[1.0, 0, 1], [0, 0, 1]])
    out = F.multilabel_soft_margin_loss(t(logits, device), t(labels, device), reduction="none")
    s = 1 / (1 + np.exp(-logits))
    np.testing.assert_allclose(out.cpu().numpy(), -(labels * np.log(s) + (1 - labels) * np.log(1 - s)).mean(1))
    a, p, n = (RNG.standard_normal((4, 3)) for _ in range(3))
    out = F.triplet_margin_loss(t(a, device), t(p, device), t(n, device), margin=1.0)
    d = lambda u, v: np.linalg.norm(u - v + 1e-6, axis=1)  # noqa: E731
    assert out.item() == pytest.approx(np.maximum(0, 1 + d(a, p) - d(a, n)).mean())
    cos_target = np.array([1.0, -1.0, 1.0, -1.0])
    out = F.cosine_embedding_loss(t(a, device), t(p, device), t(cos_target, device), margin=0.1, reduction="none")
    cos = (a * p).sum(1) / np.sqrt(((a * a).sum(1) + 1e-12) * ((p * p).sum(1) + 1e-12))
    np.testing.assert_allclose(out.cpu().numpy(), np.where(cos_target == 1, 1 - cos, np.maximum(0, cos - 0.1)))


def test_margin_losses_gradcheck():
    x1, x2 = t(RNG.standard_normal((3, 4)), requires_grad=True), t(RNG.standard_normal((3, 4)), requires_grad=True)
    y = t([1.0, -1.0, 1.0], dtype=torch.float64)
    assert gradcheck(lambda a, b: F.cosine_embedding_loss(a, b, y), (x1, x2))
    assert gradcheck(lambda a, b: F.triplet_margin_loss(a, b, 2 * b - a, swap=True), (x1, x2))
    assert gradcheck(lambda a, b: F.multilabel_soft_margin_loss(a, b.sigmoid()), (x1, x2))
    assert gradcheck(lambda a: F.poisson_nll_loss(a, x2.detach().abs(), full=True), (x1,))



def test_regression_losses_refuse_integer_inputs():
    """PyTorch has no integer kernel for these losses: NotImplementedError naming it; kl_div its own error.
    One floating operand promotes and works."""
    i = torch.ones(3, dtype=torch.int64)
    for loss, kernel in ((F.mse_loss, "mse_cpu"), (F.smooth_l1_loss, "smooth_l1_cpu"), (F.huber_loss, "huber_cpu")):
        with pytest.raises(NotImplementedError, match=f"\"{kernel}\" not implemented for 'Long'"):
            loss(i, i)
    assert F.mse_loss(i, torch.ones(3)).item() == 0.0
    with pytest.raises(RuntimeError, match="kl_div: Integral inputs not supported."):
        F.kl_div(torch.ones(3), i, reduction="sum")


def test_pairwise_distance_saves_its_result():
    """PyTorch's norm saves its result: writing into the distance in place makes backward raise."""
    a = torch.tensor([[1.0, 2.0, 3.0], [0.0, -1.0, 2.0]], requires_grad=True)
    d = F.pairwise_distance(a, torch.zeros(2, 3))
    d.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        d.sum().backward()


@pytest.mark.parametrize(
    "function, argument, call",
    [  # PyTorch 2.13 raises for these arguments (its kernels define no derivative for them)
        ("soft_margin_loss", "target", lambda x, w, m: F.soft_margin_loss(x, m)),
        ("soft_margin_loss", "target", lambda x, w, m: F.soft_margin_loss(x, m, reduction="none")),
        ("nll_loss_forward", "weight", lambda x, w, m: F.nll_loss(x, torch.tensor([0, 2]), weight=w)),
        ("nll_loss_forward", "weight", lambda x, w, m: F.cross_entropy(x, torch.tensor([0, 2]), weight=w)),
        ("binary_cross_entropy", "weight", lambda x, w, m: F.binary_cross_entropy(x.sigmoid(), x.detach(), w)),
        ("binary_cross_entropy_with_logits", "weight",
         lambda x, w, m: F.binary_cross_entropy_with_logits(x, x.detach(), weight=w)),
        ("binary_cross_entropy_with_logits", "pos_weight",
         lambda x, w, m: F.binary_cross_entropy_with_logits(x, x.detach(), pos_weight=w)),
    ],
)
def test_losses_refuse_a_gradient_for_arguments_pytorch_does_not_differentiate(function, argument, call):
    x = torch.tensor([[0.2, -0.4, 0.6], [0.1, 0.3, -0.5]], dtype=torch.float64, requires_grad=True)
    w = torch.tensor([0.5, 1.0, 2.0], dtype=torch.float64, requires_grad=True)
    m = torch.tensor([[1.0, -1.0, 1.0], [-1.0, 1.0, 1.0]], dtype=torch.float64, requires_grad=True)
    message = f"The function '{function}' is not differentiable with respect to argument '{argument}'. This input"
    with pytest.raises(RuntimeError, match=message):
        call(x, w, m)
    with torch.no_grad():
        call(x, w, m)  # grad mode off: no gradient is asked for, so no error
    assert call(x, w.detach(), m.detach()).requires_grad


def test_loss_targets_pytorch_differentiates_get_gradients():
    """PyTorch 2.13's target gradients (cross entropy with probabilities also differentiates its weight)."""
    x = torch.tensor([[0.2, -0.4, 0.6], [0.1, 0.3, -0.5]], dtype=torch.float64, requires_grad=True)
    t = torch.tensor([[0.3, 0.5, 0.2], [0.6, 0.1, 0.3]], dtype=torch.float64, requires_grad=True)
    w = torch.tensor([0.5, 1.0, 2.0], dtype=torch.float64, requires_grad=True)
    (grad_t, grad_w) = torch.autograd.grad(F.cross_entropy(x, t, weight=w), (t, w))
    assert grad_t.sum().item() == pytest.approx(4.129235, abs=1e-6)
    assert grad_w.tolist() == pytest.approx([0.472487, 0.468963, 0.314045], abs=1e-6)
    (grad_t,) = torch.autograd.grad(F.multilabel_soft_margin_loss(x, t), t)
    assert grad_t.sum().item() == pytest.approx(-0.05, abs=1e-12)
