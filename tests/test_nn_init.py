"""nn.init: gains, fan computation, distribution statistics, in-place/no-grad behaviour and errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

import minitorch as torch
from minitorch import nn
from minitorch.nn import init
from minitorch.nn.init import _calculate_correct_fan, _calculate_fan_in_and_fan_out


@pytest.fixture(autouse=True)
def _seeded():
    """Statistics checks are deterministic: the tolerances hold for these seeds with a wide margin."""
    torch.manual_seed(0)


def values(t):
    return t.detach().cpu().numpy().astype(np.float64).ravel()


def test_calculate_gain():
    for name in ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                 "conv_transpose3d", "sigmoid"]:
        assert init.calculate_gain(name) == 1
    assert init.calculate_gain("tanh") == pytest.approx(5 / 3)
    assert init.calculate_gain("relu") == pytest.approx(math.sqrt(2))
    assert init.calculate_gain("leaky_relu") == pytest.approx(math.sqrt(2 / (1 + 0.01**2)))
    assert init.calculate_gain("leaky_relu", 0.2) == pytest.approx(math.sqrt(2 / 1.04))
    assert init.calculate_gain("leaky_relu", 1) == pytest.approx(1.0)
    assert init.calculate_gain("selu") == 0.75
    with pytest.raises(ValueError, match="negative_slope True not a valid number"):
        init.calculate_gain("leaky_relu", True)
    with pytest.raises(ValueError, match="Unsupported nonlinearity gelu"):
        init.calculate_gain("gelu")


@pytest.mark.parametrize(
    "shape, fans",
    [((3, 5), (5, 3)), ((4, 2, 3), (6, 12)), ((8, 3, 2, 5), (30, 80)), ((2, 1, 1, 2, 3), (6, 12)), ((0, 4), (4, 0))],
)
def test_fan_in_and_fan_out(shape, fans):
    t = torch.empty(shape)
    assert _calculate_fan_in_and_fan_out(t) == fans
    assert _calculate_correct_fan(t, "fan_in") == fans[0]
    assert _calculate_correct_fan(t, "FAN_OUT") == fans[1]


def test_fan_errors():
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        _calculate_fan_in_and_fan_out(torch.empty(5))
    with pytest.raises(ValueError, match="Mode fan_avg not supported, please use one of"):
        _calculate_correct_fan(torch.empty(2, 2), "fan_avg")
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init.xavier_uniform_(torch.empty(3))


def check_uniform(t, low, high):
    v = values(t)
    assert v.min() >= low and v.max() <= high
    # U(low, high): mean (low+high)/2, std (high-low)/sqrt(12); 4000+ samples give ~2% tolerance
    width = high - low
    assert abs(v.mean() - (low + high) / 2) < 0.05 * width
    assert v.std() == pytest.approx(width / math.sqrt(12), rel=0.06)
    assert v.min() < low + 0.05 * width and v.max() > high - 0.05 * width


def check_normal(t, mean, std):
    v = values(t)
    assert abs(v.mean() - mean) < 0.08 * std
    assert v.std() == pytest.approx(std, rel=0.06)


def test_uniform_and_normal(device):
    check_uniform(init.uniform_(torch.empty(60, 80, device=device), -2.0, 3.0), -2.0, 3.0)
    check_uniform(init.uniform_(torch.empty(4000, device=device)), 0.0, 1.0)
    check_normal(init.normal_(torch.empty(60, 80, device=device), 1.5, 0.5), 1.5, 0.5)
    check_normal(init.normal_(torch.empty(60, 80, dtype=torch.float64, device=device)), 0.0, 1.0)


def test_xavier(device):
    w = torch.empty(60, 40, 2, device=device)  # fan_in 80, fan_out 120
    bound = 2.0 * math.sqrt(6.0 / 200)
    check_uniform(init.xavier_uniform_(w, gain=2.0), -bound, bound)
    check_normal(init.xavier_normal_(w), 0.0, math.sqrt(2.0 / 200))


@pytest.mark.parametrize("mode", ["fan_in", "fan_out"])
@pytest.mark.parametrize("nonlinearity, a", [("relu", 0), ("leaky_relu", 0.2), ("tanh", 0)])
def test_kaiming(device, mode, nonlinearity, a):
    w = torch.empty(50, 20, 3, device=device)  # fan_in 60, fan_out 150
    fan = 60 if mode == "fan_in" else 150
    std = init.calculate_gain(nonlinearity, a) / math.sqrt(fan)
    check_uniform(init.kaiming_uniform_(w, a=a, mode=mode, nonlinearity=nonlinearity), -math.sqrt(3) * std,
                  math.sqrt(3) * std)
    check_normal(init.kaiming_normal_(w, a=a, mode=mode, nonlinearity=nonlinearity), 0.0, std)


def test_kaiming_default_is_leaky_relu_with_a_zero():
    w = torch.empty(100, 64)
    bound = math.sqrt(2.0) * math.sqrt(3.0 / 64)
    check_uniform(init.kaiming_uniform_(w), -bound, bound)
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        empty = torch.empty(0, 3)
        assert init.kaiming_normal_(empty) is empty
    with pytest.raises(ValueError, match="Mode fan not supported"):
        init.kaiming_uniform_(w, mode="fan")


def test_trunc_normal(device):
    w = init.trunc_normal_(torch.empty(80, 80, device=device), mean=0.5, std=0.5, a=-0.5, b=1.0)
    v = values(w)
    assert v.min() >= -0.5 and v.max() <= 1.0
    # moments of a normal truncated to [alpha, beta] in standard units
    alpha, beta = (-0.5 - 0.5) / 0.5, (1.0 - 0.5) / 0.5
    pdf = [math.exp(-x * x / 2) / math.sqrt(2 * math.pi) for x in (alpha, beta)]
    mass = 0.5 * (math.erf(beta / math.sqrt(2)) - math.erf(alpha / math.sqrt(2)))
    mean = 0.5 + 0.5 * (pdf[0] - pdf[1]) / mass
    var = 0.25 * (1 + (alpha * pdf[0] - beta * pdf[1]) / mass - ((pdf[0] - pdf[1]) / mass) ** 2)
    assert abs(v.mean() - mean) < 0.02
    assert v.std() == pytest.approx(math.sqrt(var), rel=0.05)
    with pytest.warns(UserWarning, match="mean is more than 2 std from"):
        init.trunc_normal_(torch.empty(3), mean=10.0)


def test_constant_ones_zeros_eye(device):
    t = torch.empty(2, 3, device=device)
    assert init.constant_(t, 2.5) is t and t.eq(2.5).all()
    assert init.ones_(t).eq(1).all() and init.zeros_(t).eq(0).all()
    np.testing.assert_array_equal(init.eye_(torch.empty(2, 3, device=device)).cpu().numpy(), np.eye(2, 3))
    np.testing.assert_array_equal(init.eye_(torch.empty(3, 2, device=device)).cpu().numpy(), np.eye(3, 2))
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        init.eye_(torch.empty(2, 2, 2))


def test_dirac(device):
    w = init.dirac_(torch.empty(4, 3, 3, 3, device=device))
    expected = np.zeros((4, 3, 3, 3))
    for d in range(3):
        expected[d, d, 1, 1] = 1
    np.testing.assert_array_equal(w.cpu().numpy(), expected)
    # a dirac conv weight leaves an input unchanged
    x = torch.randn(1, 3, 5, device=device)
    out = nn.functional.conv1d(x, init.dirac_(torch.empty(3, 3, 3, device=device)), padding=1)
    np.testing.assert_allclose(out.cpu().numpy(), x.cpu().numpy())
    grouped = init.dirac_(torch.empty(4, 2, 3, device=device), groups=2)
    assert grouped[:, :, 1].tolist() == [[1, 0], [0, 1], [1, 0], [0, 1]]
    with pytest.raises(ValueError, match="Only tensors with 3, 4, or 5 dimensions are supported"):
        init.dirac_(torch.empty(2, 2))
    with pytest.raises(ValueError, match="dim 0 must be divisible by groups"):
        init.dirac_(torch.empty(3, 2, 3), groups=2)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 2, 3), (4, 4)])
def test_orthogonal(device, shape):
    w = init.orthogonal_(torch.empty(shape, dtype=torch.float64, device=device), gain=2.0)
    flat = w.reshape(shape[0], -1).cpu().numpy() / 2.0
    rows, cols = flat.shape
    gram = flat.T @ flat if rows >= cols else flat @ flat.T
    np.testing.assert_allclose(gram, np.eye(min(rows, cols)), atol=1e-10)
    with pytest.raises(ValueError, match="Only tensors with 2 or more dimensions are supported"):
        init.orthogonal_(torch.empty(3))


def test_sparse(device):
    w = init.sparse_(torch.empty(10, 6, device=device), sparsity=0.3, std=0.1)
    zeros_per_column = (w.cpu().numpy() == 0).sum(axis=0)
    assert (zeros_per_column >= 3).all()
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        init.sparse_(torch.empty(2, 2, 2), 0.5)


@pytest.mark.parametrize(
    "fn", [init.uniform_, init.normal_, init.trunc_normal_, init.xavier_uniform_, init.xavier_normal_,
           init.kaiming_uniform_, init.kaiming_normal_, init.orthogonal_],
)
def test_generator_makes_draws_reproducible(fn):
    first = fn(torch.empty(4, 3), generator=torch.Generator().manual_seed(3))
    second = fn(torch.empty(4, 3), generator=torch.Generator().manual_seed(3))
    third = fn(torch.empty(4, 3), generator=torch.Generator().manual_seed(4))
    assert torch.equal(first, second) and not torch.equal(first, third)


def test_init_works_in_place_on_parameters_without_history(device):
    p = nn.Parameter(torch.empty(6, 4, device=device))
    ptr = p.data_ptr()
    for fn in (init.xavier_uniform_, init.kaiming_normal_, init.orthogonal_, init.trunc_normal_, init.zeros_,
               init.eye_, lambda t: init.constant_(t, 0.3)):
        assert fn(p) is p
        assert p.is_leaf and p.requires_grad and p.grad_fn is None and p.data_ptr() == ptr
    view = p[:, :2]
    init.ones_(view)
    assert p.detach()[:, :2].eq(1).all() and p.detach()[:, 2:].eq(0.3).all()
