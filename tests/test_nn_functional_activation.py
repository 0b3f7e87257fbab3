"""nn.functional activations: values against numpy formulas, gradcheck/gradgradcheck on every layout, errors."""

import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minitorch as torch
import minitorch.nn.functional as F
from minitorch.autograd import gradcheck, gradgradcheck
from minitorch.testing.strategies import shapes, tensors

fixture_ok = settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
_erf = np.vectorize(math.erf)
SELU_ALPHA, SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


def _sigmoid(a):
    return 1 / (1 + np.exp(-a))


# name: (minitorch function, numpy reference, points where the function has a kink)
ACTIVATIONS = {
    "relu": (F.relu, lambda a: np.maximum(a, 0), (0,)),
    "relu6": (F.relu6, lambda a: np.clip(a, 0, 6), (0, 6)),
    "leaky_relu": (lambda x: F.leaky_relu(x, 0.2), lambda a: np.where(a > 0, a, 0.2 * a), (0,)),
    "elu": (lambda x: F.elu(x, 0.7), lambda a: np.where(a > 0, a, 0.7 * np.expm1(a)), (0,)),
    "selu": (F.selu, lambda a: SELU_SCALE * np.where(a > 0, a, SELU_ALPHA * np.expm1(a)), (0,)),
    "celu": (
        lambda x: F.celu(x, 1.5),
        lambda a: np.maximum(0, a) + np.minimum(0, 1.5 * np.expm1(a / 1.5)),
        (0,),
    ),
    "gelu": (F.gelu, lambda a: 0.5 * a * (1 + _erf(a / math.sqrt(2))), ()),
    "gelu_tanh": (
        lambda x: F.gelu(x, approximate="tanh"),
        lambda a: 0.5 * a * (1 + np.tanh(math.sqrt(2 / math.pi) * (a + 0.044715 * a**3))),
        (),
    ),
    "silu": (F.silu, lambda a: a * _sigmoid(a), ()),
    "mish": (F.mish, lambda a: a * np.tanh(np.log1p(np.exp(a))), ()),
    "softplus": (
        lambda x: F.softplus(x, beta=2.0, threshold=3.0),
        lambda a: np.where(2 * a > 3, a, np.log1p(np.exp(2 * a)) / 2),
        (1.5,),
    ),
    "logsigmoid": (F.logsigmoid, lambda a: np.log(_sigmoid(a)), ()),
    "softsign": (F.softsign, lambda a: a / (1 + np.abs(a)), (0,)),
    "hardtanh": (lambda x: F.hardtanh(x, -0.5, 2.0), lambda a: np.clip(a, -0.5, 2.0), (-0.5, 2.0)),
    "hardsigmoid": (F.hardsigmoid, lambda a: np.clip(a / 6 + 0.5, 0, 1), (-3, 3)),
    "hardswish": (F.hardswish, lambda a: a * np.clip(a + 3, 0, 6) / 6, (-3, 3)),
    "hardshrink": (lambda x: F.hardshrink(x, 0.5), lambda a: np.where(np.abs(a) > 0.5, a, 0), (-0.5, 0.5)),
    "softshrink": (
        lambda x: F.softshrink(x, 0.5),
        lambda a: np.where(a > 0.5, a - 0.5, np.where(a < -0.5, a + 0.5, 0)),
        (-0.5, 0.5),
    ),
    "tanhshrink": (F.tanhshrink, lambda a: a - np.tanh(a), ()),
    "threshold": (lambda x: F.threshold(x, 0.5, -2.0), lambda a: np.where(a > 0.5, a, -2.0), (0.5,)),
    "sigmoid": (F.sigmoid, _sigmoid, ()),
    "tanh": (F.tanh, np.tanh, ()),
}


def away_from_kinks(x, kinks, gap=1e-3):
    """``x`` (same layout) with values within ``gap`` of a kink moved off it, so finite differences are valid."""
    values = x.detach().numpy().copy()
    for k in kinks:
        values = np.where(np.abs(values - k) < gap, values + 10 * gap, values)
    if x.is_contiguous():
        out = torch.tensor(values)
    elif x.dim() >= 2 and x.stride(-1) != 2:  # the strategies' transposed layout
        out = torch.tensor(np.ascontiguousarray(np.swapaxes(values, -1, -2))).transpose(-1, -2)
    else:  # the strategies' every-other-element layout
        doubled = np.zeros(values.shape[:-1] + (2 * values.shape[-1],))
        doubled[..., ::2] = values
        out = torch.tensor(doubled)[..., ::2]
    return out.requires_grad_(True)


@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_values_match_numpy(name, device):
    fn, ref, _ = ACTIVATIONS[name]
    a = np.linspace(-7, 7, 29)
    for dtype in (torch.float32, torch.float64):
        out = fn(torch.tensor(a, dtype=dtype, device=device))
        assert out.dtype is dtype and out.shape == (29,)
        np.testing.assert_allclose(out.cpu().numpy(), ref(a), rtol=1e-5 if dtype is torch.float32 else 1e-10,
                                   atol=1e-6 if dtype is torch.float32 else 1e-12)


@pytest.mark.parametrize("name", list(ACTIVATIONS))
@given(data=st.data())
@settings(max_examples=8)
def test_gradcheck_every_layout(name, data):
    fn, _, kinks = ACTIVATIONS[name]
    x = away_from_kinks(data.draw(tensors(shapes(1, 3, 1, 4))), kinks)
    assert gradcheck(fn, (x,))


@pytest.mark.parametrize("name", [name for name in ACTIVATIONS if name != "hardsigmoid"])
@given(data=st.data())
@settings(max_examples=4)
def test_gradgradcheck(name, data):
    """Every activation, piecewise-linear ones included (their gradient depends on x under create_graph, with
    second derivative 0 off the kinks); shapes from 0-dim to empty. (PyTorch has no second derivative of
    hardsigmoid: test_hardsigmoid_has_no_second_derivative.)"""
    fn, _, kinks = ACTIVATIONS[name]
    x = away_from_kinks(data.draw(tensors(shapes(0, 2, 0, 3))), kinks)
    assert gradgradcheck(fn, (x,))


def test_piecewise_gradients_at_and_off_kinks(device):
    x = torch.tensor([-4.0, -3.0, -1.0, 0.0, 1.0, 3.0, 6.0, 7.0], device=device, requires_grad=True)
    for fn, expected in [
        (F.relu, [0, 0, 0, 0, 1, 1, 1, 1]),
        (F.relu6, [0, 0, 0, 0, 1, 1, 0, 0]),
        (F.hardtanh, [0, 0, 0, 1, 0, 0, 0, 0]),
        (F.hardsigmoid, [0, 0, 1 / 6, 1 / 6, 1 / 6, 0, 0, 0]),
        (F.hardswish, [0, 0, 1 / 6, 0.5, 5 / 6, 1, 1, 1]),  # PyTorch: 0 at -3, 1 at 3
    ]:
        (grad,) = torch.autograd.grad(fn(x).sum(), [x])
        np.testing.assert_allclose(grad.cpu().numpy(), expected, atol=1e-6)


def test_gradients_at_boundaries_and_nan_match_pytorch(device):
    """PyTorch 2.13's *_backward formulas, at every boundary and at NaN (where a mask written as "zero outside"
    lets the gradient through): values printed by PyTorch for these inputs."""
    x = torch.tensor([-4.0, -3.0, -1.0, 0.0, 1.0, 3.0, 6.0, 7.0, math.nan, -0.5, 0.5, 2.0], device=device,
                     requires_grad=True)
    for name, fn, expected in [
        ("hardtanh", F.hardtanh, [0, 0, 0, 1, 0, 0, 0, 0, 1, 1, 1, 0]),
        ("hardtanh(-0.5, 2)", lambda t: F.hardtanh(t, -0.5, 2.0), [0, 0, 0, 1, 1, 0, 0, 0, 1, 0, 1, 0]),
        ("relu6", F.relu6, [0, 0, 0, 0, 1, 1, 0, 0, 1, 0, 1, 1]),
        ("hardsigmoid", F.hardsigmoid, [0, 0, 1 / 6, 1 / 6, 1 / 6, 0, 0, 0, 0, 1 / 6, 1 / 6, 1 / 6]),
        ("hardswish", F.hardswish, [0, 0, 1 / 6, 0.5, 5 / 6, 1, 1, 1, 1, 1 / 3, 2 / 3, 7 / 6]),
        ("relu", F.relu, [0, 0, 0, 0, 1, 1, 1, 1, 1, 0, 1, 1]),
        ("threshold", lambda t: F.threshold(t, 1.0, 5.0), [0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 1]),
        ("hardshrink", lambda t: F.hardshrink(t, 0.5), [1, 1, 1, 0, 1, 1, 1, 1, 1, 0, 0, 1]),
        ("softshrink", lambda t: F.softshrink(t, 0.5), [1, 1, 1, 0, 1, 1, 1, 1, 1, 0, 0, 1]),
        ("elu", F.elu, [math.exp(-4), math.exp(-3), math.exp(-1), 1, 1, 1, 1, 1, 1, math.exp(-0.5), 1, 1]),
        ("abs", torch.abs, [-1, -1, -1, 0, 1, 1, 1, 1, 0, -1, 1, 1]),
    ]:
        (grad,) = torch.autograd.grad(fn(x).sum(), [x])
        np.testing.assert_allclose(grad.cpu().numpy(), expected, atol=1e-6, err_msg=name)
    assert torch.sign(torch.tensor([math.nan, -2.0, 0.0], device=device)).tolist() == [0.0, -1.0, 0.0]


def test_activations_are_silent_on_nan_and_overflow(device):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x = torch.tensor([math.nan, math.inf, -math.inf, 1e300], dtype=torch.float64, device=device)
        for name, (fn, _, _) in ACTIVATIONS.items():
            fn(x)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_zero_dim_inputs_match_one_element_inputs(device, dtype):
    """numpy's arithmetic on a 0-d array returns a numpy scalar: gelu's normal CDF took it for a meta array (no
    values) and returned erf's input unchanged, so F.gelu(tensor(2.0)) was 2.414 instead of 1.954."""
    for name, (fn, _, _) in ACTIVATIONS.items():
        for value in (-1.3, 0.0, 2.0):
            scalar = torch.tensor(value, dtype=getattr(torch, dtype), device=device, requires_grad=True)
            vector = torch.tensor([value], dtype=getattr(torch, dtype), device=device, requires_grad=True)
            out, expected = fn(scalar), fn(vector)
            assert out.shape == () and out.item() == expected.item(), (name, value)
            (grad,) = torch.autograd.grad(out, scalar)
            assert grad.item() == torch.autograd.grad(expected.sum(), vector)[0].item(), (name, value)


def test_gelu_of_a_zero_dim_tensor_matches_pytorch(device):
    x = torch.tensor(2.0, dtype=torch.float64, device=device, requires_grad=True)
    y = F.gelu(x)
    (grad,) = torch.autograd.grad(y, x, create_graph=True)
    (second,) = torch.autograd.grad(grad, x)
    # PyTorch 2.13: F.gelu(tensor(2., dtype=float64)) and its first and second derivatives
    assert y.item() == pytest.approx(1.9544997361036416, rel=1e-14)
    assert grad.item() == pytest.approx(1.085231801078197, rel=1e-14)
    assert second.item() == pytest.approx(-0.10798193302637613, rel=1e-12)
    assert F.gelu(torch.tensor(-1.5, device=device)).item() == pytest.approx(-0.10021080190328704, rel=1e-6)
    assert gradcheck(F.gelu, (x,)) and gradgradcheck(F.gelu, (x,))


def test_softplus_and_logsigmoid_are_stable(device):
    x = torch.tensor([-1000.0, -50.0, 0.0, 50.0, 1000.0], dtype=torch.float64, device=device, requires_grad=True)
    sp = F.softplus(x, threshold=float("inf"))
    np.testing.assert_allclose(sp.detach().cpu().numpy(), [0, math.exp(-50), math.log(2), 50, 1000], rtol=1e-12)
    ls = F.logsigmoid(x)
    np.testing.assert_allclose(ls.detach().cpu().numpy(), [-1000, -50, -math.log(2), -math.exp(-50), 0], rtol=1e-12)
    (grad,) = torch.autograd.grad(ls.sum(), [x])
    assert np.isfinite(grad.cpu().numpy()).all()


def _np_softmax(a, dim):
    e = np.exp(a - a.max(dim, keepdims=True))
    return e / e.sum(dim, keepdims=True)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_family_values(dim, device):
    a = np.random.default_rng(0).standard_normal((3, 4, 2)) * 3
    x = torch.tensor(a, device=device)
    np.testing.assert_allclose(F.softmax(x, dim).cpu().numpy(), _np_softmax(a, dim), rtol=1e-12)
    np.testing.assert_allclose(F.log_softmax(x, dim).cpu().numpy(), np.log(_np_softmax(a, dim)), rtol=1e-12)
    np.testing.assert_allclose(F.softmin(x, dim).cpu().numpy(), _np_softmax(-a, dim), rtol=1e-12)
    np.testing.assert_allclose(x.softmax(dim).cpu().numpy(), _np_softmax(a, dim), rtol=1e-12)


def test_softmax_is_stable_for_huge_logits(device):
    x = torch.tensor([[1000.0, 0.0, -1000.0], [1e4, 1e4, 1e4]], device=device)
    np.testing.assert_allclose(F.softmax(x, 1).cpu().numpy(), [[1, 0, 0], [1 / 3, 1 / 3, 1 / 3]], atol=1e-7)
    np.testing.assert_allclose(F.log_softmax(x, 1).cpu().numpy()[0], [0, -1000, -2000], rtol=1e-6)


def test_softmax_dtype_argument_and_integer_inputs(device):
    x = torch.tensor([[1, 2, 3]], device=device)
    with pytest.raises(NotImplementedError, match="\"softmax_lastdim_kernel_impl\" not implemented for 'Long'"):
        F.softmax(x, 1)
    with pytest.raises(NotImplementedError, match="\"log_softmax_kernel_impl\" not implemented for 'Long'"):
        torch.log_softmax(x, 0)
    out = F.softmax(x, 1, dtype=torch.float64)
    assert out.dtype is torch.float64
    assert F.log_softmax(torch.ones(2, 3, device=device), -1, dtype=torch.float64).dtype is torch.float64


def test_torch_softmax_and_log_softmax_functions(device):
    """torch.softmax(input, dim, dtype=None) and torch.log_softmax: F's, with dim required (values: PyTorch 2.13)."""
    x = torch.tensor([[1.0, 2.0], [3.0, 5.0]], device=device)
    np.testing.assert_allclose(torch.softmax(x, 1).cpu().numpy(), [[0.26894142, 0.73105858], [0.11920292, 0.88079708]],
                               rtol=1e-6)
    np.testing.assert_allclose(torch.log_softmax(x, dim=1).cpu().numpy(),
                               [[-1.31326169, -0.31326169], [-2.12692801, -0.12692801]], rtol=1e-6)
    np.testing.assert_allclose(torch.softmax(x, dim=0).cpu().numpy(), [[0.11920292, 0.04742587],
                                                                       [0.88079708, 0.95257413]], rtol=1e-6)
    assert torch.softmax(x, 1, torch.float64).dtype is torch.float64
    assert torch.log_softmax(input=x, dim=-1, dtype=torch.float64).dtype is torch.float64
    assert torch.softmax(torch.tensor(3.0, device=device), 0).item() == 1.0
    assert x.softmax(1).tolist() == torch.softmax(x, 1).tolist() and x.log_softmax(dim=0).shape == (2, 2)
    with pytest.raises(TypeError, match="dim"):
        torch.softmax(x)
    with pytest.raises(IndexError, match="Dimension out of range"):
        torch.log_softmax(x, 2)
    w = torch.randn(3, 4, dtype=torch.float64, device=device).t().requires_grad_()
    assert gradcheck(lambda t: torch.log_softmax(t, 0), (w,)) and gradgradcheck(lambda t: torch.softmax(t, 1), (w,))


def test_softmax_implicit_dim_warns():
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        out = F.softmax(torch.zeros(2, 4))
    np.testing.assert_allclose(out.numpy(), np.full((2, 4), 0.25))  # 2-D input: dim=1


@given(data=st.data())
@settings(max_examples=10)
def test_softmax_family_gradcheck(data):
    x = data.draw(tensors(shapes(1, 3, 1, 4), requires_grad=True))
    dim = data.draw(st.integers(-x.dim(), x.dim() - 1))
    for fn in (F.softmax, F.log_softmax, F.softmin):
        assert gradcheck(lambda t: fn(t, dim), (x,))
        assert gradgradcheck(lambda t: fn(t, dim), (x,))


def test_softmax_gradient_formula(device):
    y_np = _np_softmax(np.array([[0.5, -1.0, 2.0]]), 1)
    x = torch.tensor([[0.5, -1.0, 2.0]], dtype=torch.float64, device=device, requires_grad=True)
    g = np.array([[1.0, 2.0, -3.0]])
    F.softmax(x, 1).backward(torch.tensor(g, device=device))
    np.testing.assert_allclose(x.grad.cpu().numpy(), y_np * (g - (g * y_np).sum(1, keepdims=True)), rtol=1e-12)


def test_glu_prelu_rrelu(device):
    a = np.random.default_rng(1).standard_normal((2, 4, 3))
    x = torch.tensor(a, device=device, requires_grad=True)
    np.testing.assert_allclose(F.glu(x, 1).detach().cpu().numpy(), a[:, :2] * _sigmoid(a[:, 2:]), rtol=1e-12)
    with pytest.raises(RuntimeError, match="Halving dimension must be even, but dimension 2 is size 3"):
        F.glu(x, -1)
    w = torch.tensor([0.1, 0.2, 0.3, 0.4], dtype=torch.float64, device=device, requires_grad=True)
    expected = np.where(a > 0, a, np.array([0.1, 0.2, 0.3, 0.4])[None, :, None] * a)
    np.testing.assert_allclose(F.prelu(x, w).detach().cpu().numpy(), expected, rtol=1e-12)
    assert gradcheck(F.prelu, (x, w))
    with pytest.raises(RuntimeError, match="Found parameter numbers = 3 and channel size = 4"):
        F.prelu(x, torch.ones(3, dtype=torch.float64, device=device))
    np.testing.assert_allclose(F.rrelu(x).detach().cpu().numpy(), np.where(a > 0, a, a * (1 / 8 + 1 / 3) / 2))
    torch.manual_seed(0)
    slopes = F.rrelu(-torch.ones(1000, device=device), training=True).cpu().numpy() * -1
    assert 1 / 8 <= slopes.min() and slopes.max() <= 1 / 3 and slopes.std() > 0.03


def test_inplace_flag_computes_out_of_place(device):
    x = torch.tensor([-1.0, 2.0], device=device)
    out = F.relu(x, inplace=True)
    assert out.tolist() == [0.0, 2.0] and x.tolist() == [-1.0, 2.0]
    assert F.elu(x, inplace=True).tolist()[1] == 2.0


def test_errors():
    with pytest.raises(NotImplementedError, match="\"gelu\" not implemented for 'Long'"):
        F.gelu(torch.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="approximate argument must be either none or tanh"):
        F.gelu(torch.ones(2), approximate="fast")
    with pytest.raises(RuntimeError, match="lambda must be greater or equal to 0, but found to be -1"):
        F.softshrink(torch.ones(2), -1)
    with pytest.raises(ValueError, match="min_val cannot be greater than max_val"):
        F.hardtanh(torch.ones(2), 1.0, -1.0)


def test_meta_device_shapes():
    x = torch.empty(2, 3, device="meta")
    assert F.softmax(x, 1).shape == (2, 3) and F.gelu(x).device.type == "meta"
    assert F.log_softmax(x, 0).is_meta


def test_elu_family_derivatives_at_zero_match_pytorch(device):
    """PyTorch 2.13: elu_backward takes the exponential branch at x <= 0, its double backward masks x < 0, so at 0
    the first derivative is alpha * scale * input_scale and the second is 0."""
    for fn, first in [(F.elu, 1.0), (F.selu, SELU_ALPHA * SELU_SCALE), (lambda t: F.celu(t, 2.0), 1.0),
                      (lambda t: F.elu(t, 0.5), 0.5)]:
        x = torch.tensor(0.0, dtype=torch.float64, device=device, requires_grad=True)
        (grad,) = torch.autograd.grad(fn(x), x, create_graph=True)
        (second,) = torch.autograd.grad(grad, x)
        assert grad.item() == pytest.approx(first, rel=1e-12) and second.item() == 0.0
        x = torch.tensor([-0.7, 0.4], dtype=torch.float64, device=device, requires_grad=True)
        assert gradgradcheck(fn, (x,))


@pytest.mark.parametrize(
    "name, fn, expected",
    [  # expected: PyTorch 2.13's x.grad after y = fn(x); y.mul_(3.0); y.sum().backward()
        ("hardsigmoid", F.hardsigmoid, [0.0, 0.5, 0.5, 0.5]),
        ("hardtanh", F.hardtanh, [0.0, 0.0, 3.0, 0.0]),
        ("leaky_relu", lambda t: F.leaky_relu(t, 0.2), [0.6, 0.6, 3.0, 3.0]),
        ("elu", lambda t: F.elu(t, 0.5), [0.027473458333101268, 0.5518191617571635, 3.0, 3.0]),
        ("softplus", F.softplus, [0.053958629886274666, 0.8068242641099854, 1.8673779936055637, 2.642391233933647]),
        ("silu", F.silu, [-0.15799384467321873, 0.2169884643855398, 2.2198835619079555, 3.2723527463546866]),
    ],
)
def test_activation_output_may_be_modified_in_place(name, fn, expected):
    # PyTorch's activations save their input, not their output: an in-place op on the output is legal
    x = torch.tensor([-4.0, -1.0, 0.5, 2.0], dtype=torch.float64, requires_grad=True)
    y = fn(x)
    y.mul_(3.0)
    y.sum().backward()
    assert x.grad.tolist() == pytest.approx(expected, rel=1e-7)


def test_elu_second_derivative_from_its_input():
    x = torch.tensor([-4.0, -1.0, 0.5, 2.0], dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad(F.elu(x, 0.5).sum(), x, create_graph=True)
    (gg,) = torch.autograd.grad(g.sum(), x)
    assert gg.tolist() == pytest.approx([0.00915781944436709, 0.18393972058572117, 0.0, 0.0], rel=1e-12)
    assert gradgradcheck(lambda t: F.elu(t, 0.7), (x.detach()[:2].clone().requires_grad_(),))


def test_elu_second_derivative_is_zero_where_exp_would_overflow():
    # PyTorch 2.13 (float32 and float64): elu's second derivative is 0 for x > 0 however large (exp(x) overflows
    # in float32 from about 89) and at inf; the gradient of x * x at inf makes the last one nan
    for dtype in (torch.float32, torch.float64):
        x = torch.tensor([-1.0, 12.0, 100.0, 1000.0, math.inf], dtype=dtype, requires_grad=True)
        (g,) = torch.autograd.grad(F.elu(x * x, alpha=0.5).sum(), x, create_graph=True)
        np.testing.assert_array_equal(np.array(torch.autograd.grad(g.sum(), x)[0].tolist()), [2, 2, 2, 2, math.nan])
        (g,) = torch.autograd.grad(F.celu(x, alpha=2.0).sum(), x, create_graph=True)
        assert torch.autograd.grad(g.sum(), x)[0].tolist()[1:] == [0.0, 0.0, 0.0, 0.0]


def test_masked_activation_gradients_select_rather_than_multiply():
    # PyTorch's backward selects the incoming gradient where the activation passes it and writes 0 elsewhere,
    # so a NaN arriving where the gradient is 0 stays out (expected: PyTorch 2.13, x.grad after backward(nan))
    x = torch.tensor([-4.0, -1.0, 0.5, 2.0, 5.0], dtype=torch.float64, requires_grad=True)
    nan = float("nan")
    cases = {
        "hardtanh": (F.hardtanh, [0.0, 0.0, nan, 0.0, 0.0]),
        "hardsigmoid": (F.hardsigmoid, [0.0, nan, nan, nan, 0.0]),
        "hardshrink": (F.hardshrink, [nan, nan, 0.0, nan, nan]),
        "softshrink": (F.softshrink, [nan, nan, 0.0, nan, nan]),
        "threshold": (lambda t: F.threshold(t, 0.6, 2.0), [0.0, 0.0, 0.0, nan, nan]),
        "relu6": (F.relu6, [0.0, 0.0, nan, nan, nan]),
        "hardswish": (F.hardswish, [0.0, nan, nan, nan, nan]),
    }
    for name, (fn, expected) in cases.items():
        x.grad = None
        fn(x).backward(torch.full((5,), nan, dtype=torch.float64))
        np.testing.assert_array_equal(x.grad.numpy(), expected, err_msg=name)


def test_softsign_second_derivative_at_zero():
    # |x|'s derivative at 0 is 0 (PyTorch's sgn), so softsign'' is 0 there, not -2
    x = torch.tensor([0.0, -0.5, 2.0], dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad(F.softsign(x).sum(), x, create_graph=True)
    (gg,) = torch.autograd.grad(g.sum(), x)
    assert g.tolist() == pytest.approx([1.0, 0.4444444444444444, 0.1111111111111111], rel=1e-12)
    assert gg.tolist() == pytest.approx([0.0, 0.5925925925925926, -0.07407407407407407], rel=1e-12)


def test_masked_activation_gradients_at_nan_and_the_boundaries():
    # expected: PyTorch 2.13's x.grad for backward(ones) at [nan, 0.5, 3, -3] (its kernels' own tests decide
    # what a NaN input and a boundary get)
    x = torch.tensor([float("nan"), 0.5, 3.0, -3.0], dtype=torch.float64, requires_grad=True)
    cases = {
        "hardtanh": (F.hardtanh, [1.0, 1.0, 0.0, 0.0]),
        "hardsigmoid": (F.hardsigmoid, [0.0, 1 / 6, 0.0, 0.0]),
        "hardshrink": (F.hardshrink, [1.0, 0.0, 1.0, 1.0]),
        "softshrink": (F.softshrink, [1.0, 0.0, 1.0, 1.0]),
        "threshold": (lambda t: F.threshold(t, 0.6, 2.0), [1.0, 0.0, 1.0, 0.0]),
        "relu6": (F.relu6, [1.0, 1.0, 1.0, 0.0]),
        "hardswish": (F.hardswish, [1.0, 0.6666666666666666, 1.0, 0.0]),
    }
    for name, (fn, expected) in cases.items():
        x.grad = None
        fn(x).backward(torch.ones(4, dtype=torch.float64))
        assert x.grad.tolist() == pytest.approx(expected, rel=1e-7), name


def test_prelu_double_backward_is_pytorchs_at_zero():
    """PyTorch 2.13's double backward of _prelu_kernel_backward masks with x >= 0: at x = 0 the first derivative
    is the weight's branch (x > 0 is false), but the second derivatives there are those of the x >= 0 branch."""
    x = torch.tensor([[0.0, 1.0], [-1.0, 0.0]], dtype=torch.float64, requires_grad=True)
    w = torch.tensor([0.25, 0.5], dtype=torch.float64, requires_grad=True)
    y = F.prelu(x, w)
    gx, gw = torch.autograd.grad((y * y).sum(), (x, w), create_graph=True)
    assert gx.tolist() == [[0.0, 2.0], [-0.125, 0.0]] and gw.tolist() == [0.5, 0.0]
    assert gx.grad_fn.name() == "PreluKernelBackwardBackward0"
    c = torch.tensor([1.0, 2.0], dtype=torch.float64)
    dx, dw = torch.autograd.grad((gx * c).sum(), (x, w), retain_graph=True)
    assert dx.tolist() == [[0.5, 4.0], [0.125, 2.0]] and dw.tolist() == [-1.0, 0.0]
    dx, dw = torch.autograd.grad((gw * gw).sum(), (x, w))
    assert dx.tolist() == [[0.0, 0.0], [-1.0, 0.0]] and dw.tolist() == [2.0, 0.0]

    x = torch.tensor([0.0, 1.0, -1.0], dtype=torch.float64, requires_grad=True)
    w = torch.tensor([0.25], dtype=torch.float64, requires_grad=True)
    gx, gw = torch.autograd.grad(F.prelu(x, w).sum(), (x, w), create_graph=True)
    assert gx.tolist() == [0.25, 1.0, 0.25] and gw.tolist() == [-1.0]
    dx, dw = torch.autograd.grad((gx * torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)).sum(), (x, w),
                                 retain_graph=True)
    assert dx.tolist() == [0.0, 0.0, 0.0] and dw.tolist() == [3.0]  # 4.0 with an x > 0 mask
    dx, dw = torch.autograd.grad(gw.sum(), (x, w))
    assert dx.tolist() == [0.0, 0.0, 1.0] and dw.tolist() == [0.0]  # [1, 0, 1] and None before


def test_prelu_gradgradcheck():
    x = torch.tensor([[0.3, -1.2, 0.7], [-0.4, 2.0, -0.1]], dtype=torch.float64, requires_grad=True)
    for w in (torch.tensor([0.2, -0.3, 0.5], dtype=torch.float64), torch.tensor([0.25], dtype=torch.float64)):
        w.requires_grad_()
        assert gradcheck(F.prelu, (x.t(), w[:2] if w.numel() == 3 else w))
        assert gradgradcheck(F.prelu, (x.t(), w[:2] if w.numel() == 3 else w))


def test_hardsigmoid_has_no_second_derivative():
    """PyTorch 2.13: the gradient requires grad under create_graph, but differentiating it in x raises."""
    x = torch.tensor([-4.0, -1.0, 0.5, 3.5], dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad(F.hardsigmoid(x).sum(), x, create_graph=True)
    assert g.requires_grad and g.tolist() == pytest.approx([0.0, 1 / 6, 1 / 6, 0.0])
    with pytest.raises(RuntimeError, match="^derivative for aten::hardsigmoid_backward is not implemented$"):
        torch.autograd.grad(g.sum(), x)


def test_softsign_is_composed_of_div_and_abs_as_in_pytorch():
    # PyTorch 2.13: x / (1 + |x|) through autograd, so +-inf and an infinite incoming gradient give nan, and an
    # integer input divides to a float
    inf, nan = math.inf, math.nan
    x = torch.tensor([inf, -inf, 1.0, -3.0], dtype=torch.float64, requires_grad=True)
    weights = torch.tensor([1.0, 1.0, inf, 2.0], dtype=torch.float64)
    (grad,) = torch.autograd.grad((F.softsign(x) * weights).sum(), x, create_graph=True)
    np.testing.assert_array_equal(np.array(grad.tolist()), [nan, nan, nan, 0.125])
    np.testing.assert_array_equal(np.array(torch.autograd.grad(grad.sum(), x)[0].tolist()), [nan, nan, nan, 0.0625])
    out = F.softsign(torch.tensor([1, -3]))
    assert out.dtype == torch.float32 and out.tolist() == [0.5, -0.75]


def test_elu_double_backward_multiplies_by_its_mask_as_pytorch():
    # PyTorch 2.13's elu_double_backward: elu_backward(gg * grad * input_scale, x) * (x < 0): with an infinite
    # incoming gradient the second derivative is nan where x >= 0 (acosh(celu(1.0)) makes one), and grad_fn names
    x = torch.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    (grad,) = torch.autograd.grad((F.celu(x, 0.5) * torch.tensor([1.0, 1.0, math.inf])).sum(), x, create_graph=True)
    assert grad.grad_fn.name() == "EluBackwardBackward0"
    assert grad.tolist() == pytest.approx([0.1353352814912796, 1.0, math.inf])
    (second,) = torch.autograd.grad(grad.sum(), x)
    np.testing.assert_allclose(np.array(second.tolist()), [0.2706705629825592, 0.0, math.nan], rtol=1e-6)
    y = torch.tensor([-2.0, -0.5, 0.7], dtype=torch.float64, requires_grad=True)
    for fn in (lambda t: F.elu(t, 0.7), F.selu, lambda t: F.celu(t, 1.5)):
        assert gradcheck(fn, (y,)) and gradgradcheck(fn, (y,))


def test_shrink_activations_keep_nan():
    # PyTorch 2.13's kernels: a NaN is neither inside nor outside [-lambd, lambd], so it passes through
    x = torch.tensor([math.nan, 0.2, -1.0, 1.0], dtype=torch.float64)
    np.testing.assert_array_equal(np.array(F.softshrink(x).tolist()), [math.nan, 0.0, -0.5, 0.5])
    np.testing.assert_array_equal(np.array(F.hardshrink(x).tolist()), [math.nan, 0.0, -1.0, 1.0])


def test_log_softmax_float32_gradient_near_probability_one_rounds_as_pytorch():
    """g - exp(y) * sum(g) cancels where a probability is near 1; PyTorch's kernel rounds it once (a fused
    multiply-add). Fuzzer seed 8361: PyTorch 2.13 gives -1.3177004 (float64: -1.3224668); numpy's float32
    exp and two roundings gave -1.296875."""
    x = torch.tensor([[-2.0], [-14.0]], requires_grad=True)
    torch.log_softmax(x, dim=0).log2().sum().backward()
    assert x.grad[0, 0].item() == -1.3177003860473633
    assert x.grad[1, 0].item() == pytest.approx(1.309743881225586, rel=1e-6)


def test_tanh_gelu_second_derivative_is_pytorchs_closed_form():
    """PyTorch differentiates gelu_backward with gelu_double_backward; through the saturated tail the autograd
    of the composite formula cancelled otherwise (fuzzer seed 14435: -7.04e-6 against PyTorch's -5.165e-6 at
    x = -5.1 in float32; float64: -5.348e-6). The gradient node is itself differentiable twice more."""
    x = torch.tensor([-5.1, 2.0], requires_grad=True)
    (g,) = torch.autograd.grad(F.gelu(x, approximate="tanh").sum(), x, create_graph=True)
    (gg,) = torch.autograd.grad(g.sum(), x)
    assert gg[0].item() == pytest.approx(-5.165458787814714e-06, rel=1e-6)
    assert gg[1].item() == pytest.approx(-0.10787512362003326, rel=1e-5)
    x64 = torch.tensor([-5.1, -0.7, 0.3, 2.0], dtype=torch.float64, requires_grad=True)
    assert gradgradcheck(lambda t: F.gelu(t, approximate="tanh"), (x64,))
    w = torch.tensor([0.5, -1.5, 2.0, 1.0], dtype=torch.float64, requires_grad=True)
    grad_of = lambda t, v: torch.autograd.grad(F.gelu(t, approximate="tanh"), t, v, create_graph=True)[0]  # noqa: E731
    assert gradgradcheck(grad_of, (x64, w))


def test_logsigmoid_and_rrelu_outputs_are_row_major_as_pytorchs():
    """PyTorch allocates logsigmoid's and rrelu_with_noise's outputs row-major whatever the input's layout (a
    view of the result then works: fuzzer seed 558290); rrelu in evaluation is rrelu_with_noise's node too."""
    x = torch.randn(2, 3, requires_grad=True).transpose(0, 1)
    for y in (F.logsigmoid(x), F.rrelu(x), F.rrelu(x, training=True)):
        assert y.stride() == (2, 1)
        y.view(6)
    assert F.rrelu(x).grad_fn.name() == "RreluWithNoiseBackward0"
    torch.testing.assert_close(F.rrelu(x), F.leaky_relu(x, (1 / 8 + 1 / 3) / 2), rtol=0, atol=0)


def test_elu_family_keeps_the_sign_of_a_negative_zero():
    """PyTorch computes elu's negative side with expm1, so elu(-0.0) is -0.0 (and 1 / it is -inf; fuzzer seed
    920483); selu and celu share the kernel."""
    x = torch.tensor([-0.0, 0.0], dtype=torch.float64)
    for f in (F.elu, F.selu, F.celu):
        assert (1 / f(x)).tolist() == [-math.inf, math.inf]
