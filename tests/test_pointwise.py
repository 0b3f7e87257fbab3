"""Elementwise math (ops/pointwise.py): values against numpy, gradients by gradcheck/gradgradcheck in float64
on hypothesis-drawn shapes (contiguous, transposed and strided layouts; broadcasting for binary ops)."""

import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minitorch as torch
from minitorch.autograd import gradcheck, gradgradcheck
from minitorch.ops.pointwise import UNARY
from minitorch.testing.strategies import broadcastable_shapes, shapes, tensors

# ``device`` is a plain string per test instance, so sharing it across hypothesis examples is safe
HEALTH = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
fixture_ok = settings(suppress_health_check=HEALTH)


def examples(n: int):
    """Fewer hypothesis examples for the gradient checks (each one is a few hundred backward passes)."""
    return settings(suppress_health_check=HEALTH, max_examples=n)


SMALL = shapes(0, 3, 1, 3)


def as_numpy(t):
    return np.asarray(t.detach().cpu())


def on_grid(t, offset=0.1):
    """Move values onto k/4 + offset (written through the view, so the layout is kept): at least 0.1 away
    from 0, the integers and +-1, where abs, relu, clamp, floor, frac, ... have kinks or jumps."""
    t.detach()._array[...] = (torch.round(t.detach() * 4) / 4 + offset)._array
    return t


def erf_reference(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x)


# name: (numpy reference or None, (low, high) domain where the op is smooth, values on the kink-free grid)
CASES = {
    "exp": (np.exp, (-3, 3), False), "exp2": (np.exp2, (-3, 3), False), "expm1": (np.expm1, (-3, 3), False),
    "log": (np.log, (0.2, 3), False), "log2": (np.log2, (0.2, 3), False), "log10": (np.log10, (0.2, 3), False),
    "log1p": (np.log1p, (-0.8, 3), False), "sqrt": (np.sqrt, (0.2, 3), False),
    "rsqrt": (lambda x: 1 / np.sqrt(x), (0.2, 3), False), "sin": (np.sin, (-3, 3), False),
    "cos": (np.cos, (-3, 3), False), "tan": (np.tan, (-1.2, 1.2), False), "asin": (np.arcsin, (-0.9, 0.9), False),
    "acos": (np.arccos, (-0.9, 0.9), False), "atan": (np.arctan, (-3, 3), False), "sinh": (np.sinh, (-3, 3), False),
    "cosh": (np.cosh, (-3, 3), False), "tanh": (np.tanh, (-3, 3), False), "asinh": (np.arcsinh, (-3, 3), False),
    "acosh": (np.arccosh, (1.2, 3), False), "atanh": (np.arctanh, (-0.9, 0.9), False),
    "sigmoid": (lambda x: 1 / (1 + np.exp(-x)), (-3, 3), False), "reciprocal": (np.reciprocal, (0.3, 3), False),
    "erf": (erf_reference, (-3, 3), False), "erfinv": (None, (-0.9, 0.9), False),
    "frac": (lambda x: x - np.trunc(x), (-3, 3), True), "square": (np.square, (-3, 3), False),
    "abs": (np.abs, (-3, 3), True), "relu": (lambda x: np.maximum(x, 0), (-3, 3), True),
    "sign": (np.sign, (-3, 3), True), "sgn": (np.sign, (-3, 3), True), "floor": (np.floor, (-3, 3), True),
    "ceil": (np.ceil, (-3, 3), True), "trunc": (np.trunc, (-3, 3), True),
    # special functions: values against PyTorch's in tests/test_mathops.py
    "erfc": (np.vectorize(math.erfc, otypes=[np.float64]), (-3, 3), False), "lgamma": (None, (0.2, 3), False),
    "digamma": (None, (0.3, 3), False), "i0": (None, (-3, 3), False), "i1": (None, (-3, 3), False),
    "sinc": (np.sinc, (-3, 3), True), "deg2rad": (np.deg2rad, (-3, 3), False),
    "rad2deg": (np.rad2deg, (-3, 3), False),
}
ZERO_GRADIENT = {"sign", "sgn", "floor", "ceil", "trunc"}


def test_every_table_entry_is_tested():
    assert set(CASES) == set(UNARY)


def function(name: str):
    """``torch.<name>``, or ``torch.special.<name>`` for the table's entries without a torch-level name (i1)."""
    return getattr(torch, name, None) or getattr(torch.special, name)


def draw_input(data, name, device, shape=SMALL):
    _, (low, high), grid = CASES[name]
    x = data.draw(tensors(shape, device=device, min_value=low, max_value=high, requires_grad=True))
    return on_grid(x) if grid else x


@pytest.mark.parametrize("name", sorted(CASES))
@fixture_ok
@given(data=st.data())
def test_unary_values(device, name, data):
    reference = CASES[name][0]
    x = draw_input(data, name, device, shapes(0, 3, 1, 5))
    out = function(name)(x)
    assert out.shape == x.shape and out.dtype == torch.float64
    if hasattr(x, name):
        assert getattr(x, name)().tolist() == out.tolist()  # the Tensor method is the same op
    if reference is not None:
        np.testing.assert_allclose(as_numpy(out), reference(as_numpy(x)), rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("name", sorted(CASES))
@examples(8)
@given(data=st.data())
def test_unary_gradients(device, name, data):
    x = draw_input(data, name, device)
    fn = function(name)
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


@pytest.mark.parametrize("name", sorted(ZERO_GRADIENT))
def test_zero_gradient_ops(device, name):
    x = torch.tensor([-1.7, -0.5, 0.0, 0.4, 2.5], dtype=torch.float64, device=device, requires_grad=True)
    getattr(torch, name)(x).sum().backward()
    assert x.grad.tolist() == [0.0] * 5


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_zero_dim_inputs_match_one_element_inputs(device, dtype):
    """numpy's arithmetic on a 0-d array returns a numpy scalar, not a 0-d array: every kernel and helper (the
    float32 erf polynomial, its meta-device check) must take it as values. torch.erf(tensor(0.5)) used to raise."""
    for name in UNARY:
        low, high = CASES[name][1]
        value = low + 0.37 * (high - low)
        scalar = torch.tensor(value, dtype=getattr(torch, dtype), device=device, requires_grad=True)
        vector = torch.tensor([value], dtype=getattr(torch, dtype), device=device, requires_grad=True)
        out, expected = function(name)(scalar), function(name)(vector)
        assert out.shape == () and out.dtype == expected.dtype and out.item() == expected.item(), name
        (grad,) = torch.autograd.grad(out, scalar)
        assert grad.shape == () and grad.item() == torch.autograd.grad(expected.sum(), vector)[0].item(), name
    assert torch.erf(torch.tensor(0.5, dtype=getattr(torch, dtype), device=device)).item() == pytest.approx(
        0.5204998778130465, rel=1e-7)


def test_values_at_non_differentiable_points(device):
    """SEMANTICS.md 1.13: relu'(0) = 0, |x|'(0) = 0, sqrt'(0) = inf, sqrt'(-1) = nan."""
    x = torch.tensor([0.0], device=device, requires_grad=True)
    torch.relu(x).backward()
    assert x.grad.tolist() == [0.0]
    x.grad = None
    torch.abs(x).backward()
    assert x.grad.tolist() == [0.0]
    x.grad = None
    torch.sqrt(x).backward()
    assert x.grad.tolist() == [math.inf]
    y = torch.tensor([-1.0], device=device, requires_grad=True)
    torch.sqrt(y).backward()
    assert math.isnan(y.grad.item())


FLOAT_FUNCTIONS = sorted(set(UNARY) - {"square", "abs", "relu", "sign", "sgn", "floor", "ceil", "trunc", "frac"})


@pytest.mark.parametrize("name", FLOAT_FUNCTIONS)
def test_integer_inputs_promote_to_default_dtype(device, name):
    x = torch.tensor([0, 1], device=device)
    assert function(name)(x).dtype == torch.float32
    assert function(name)(torch.tensor([True, False], device=device)).dtype == torch.float32
    torch.set_default_dtype(torch.float64)
    try:
        assert function(name)(x).dtype == torch.float64
    finally:
        torch.set_default_dtype(torch.float32)


@pytest.mark.parametrize("name", ["square", "abs", "relu", "sign", "sgn", "floor", "ceil", "trunc"])
def test_integer_preserving_ops(device, name):
    x = torch.tensor([-3, 0, 2], dtype=torch.int32, device=device)
    out = getattr(torch, name)(x)
    assert out.dtype == torch.int32
    assert out.tolist() == CASES[name][0](np.array([-3, 0, 2])).tolist()


def test_reduced_precision_keeps_dtype(device):
    for dtype in (torch.float16, torch.float32):
        x = torch.tensor([0.25, -1.5], dtype=dtype, device=device)
        for name in ("exp", "sigmoid", "erf", "erfinv", "rsqrt", "tanh"):
            arg = x.abs() if name == "rsqrt" else (x / 2 if name == "erfinv" else x)
            assert getattr(torch, name)(arg).dtype == dtype


def test_float_warnings_are_silent(device):
    """numpy warns on log(0), 0/0, overflow; PyTorch does not, so minitorch must not either."""
    x = torch.tensor([0.0, -1.0, 1000.0], device=device)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert torch.log(x).tolist()[0] == -math.inf
        assert math.isnan(torch.sqrt(x).tolist()[1])
        assert torch.exp(x).tolist()[2] == math.inf
        assert torch.sigmoid(-x).tolist()[2] == 0.0
        torch.acos(x * 2), torch.atanh(x), torch.reciprocal(x), torch.erfinv(x)


# erf / erfinv --------------------------------------------------------------------------------------------
def test_erf_is_accurate_to_an_ulp(device):
    values = np.concatenate([np.linspace(-7, 7, 20001), np.logspace(-310, 1.5, 3000), -np.logspace(-12, 0.5, 500),
                             [0.84375, 1.25, 1 / 0.35, 6.0, 28.0, 30.0]])
    got = as_numpy(torch.erf(torch.tensor(values, dtype=torch.float64, device=device)))
    expected = erf_reference(values)
    assert np.all(np.abs(got - expected) <= 2 * np.spacing(np.abs(expected)))


def test_erf_special_values_and_float32(device):
    x = torch.tensor([math.inf, -math.inf, math.nan, -0.0, 0.5], device=device)
    out = torch.erf(x).tolist()
    assert out[:2] == [1.0, -1.0] and math.isnan(out[2]) and math.copysign(1, out[3]) == -1
    assert out[4] == pytest.approx(math.erf(0.5), rel=1e-7)



def test_erf_float32_is_accurate_to_an_ulp_of_float32(device):
    """float32 has its own polynomial kernel (evaluated in float64, rounded once): within 1 ulp of float32
    everywhere, including tiny inputs (relative accuracy), the polynomial's end at 3.92 and the saturation to 1."""
    rng = np.random.default_rng(0)
    values = np.concatenate([np.linspace(-5, 5, 40001), rng.uniform(-4, 4, 20000), np.logspace(-40, 0.7, 3000),
                             -np.logspace(-20, 0.5, 500), [3.9, 3.92, 3.93, 10.0, 1e30]]).astype(np.float32)
    values = values[np.abs(values) >= np.finfo(np.float32).tiny]  # subnormals: math.erf's result is subnormal too
    got = as_numpy(torch.erf(torch.tensor(values, device=device)))
    assert got.dtype == np.float32
    expected = erf_reference(values.astype(np.float64))
    assert np.all(np.abs(got - expected) <= np.spacing(np.abs(expected).astype(np.float32)))
    in_range = np.abs(values) < 60000  # float16's range
    half = as_numpy(torch.erf(torch.tensor(values[in_range], dtype=torch.float16, device=device)))
    np.testing.assert_allclose(half, expected[in_range].astype(np.float16), rtol=1e-3, atol=1e-7)

def test_erfinv_is_precise_in_the_tail(device):
    """Near +-1 (1 - |x| down to 1e-16) erfc(erfinv(x)) gives back 1 - |x| to relative precision: the old
    Newton steps on erfc stopped up to 8% short of the answer there (fuzzer seed 209388)."""
    complement = np.concatenate([10.0 ** -np.linspace(1, 15.9, 300), [1.87960758e-12, 2.0**-52]])
    x = np.concatenate([1 - complement, -(1 - complement)])
    y = as_numpy(torch.erfinv(torch.tensor(x, dtype=torch.float64, device=device)))
    back = np.array([math.erfc(abs(v)) for v in y])
    np.testing.assert_allclose(back, np.concatenate([1 - (1 - complement)] * 2), rtol=1e-12)
    assert torch.tensor(27.0, dtype=torch.float64).sigmoid().erfinv().item() == pytest.approx(4.98024915, rel=1e-8)


def test_erfinv_inverts_erf(device):
    y = np.linspace(-0.999999, 0.999999, 2001)
    x = torch.erfinv(torch.tensor(y, dtype=torch.float64, device=device))
    np.testing.assert_allclose(erf_reference(as_numpy(x)), y, rtol=0, atol=3e-16)
    assert torch.erfinv(torch.tensor([0.5], dtype=torch.float64, device=device)).item() == pytest.approx(
        0.4769362762044699, rel=1e-15
    )
    edges = torch.erfinv(torch.tensor([1.0, -1.0, 1.5, 0.0], device=device)).tolist()
    assert edges[:2] == [math.inf, -math.inf] and math.isnan(edges[2]) and edges[3] == 0.0


# round / nan_to_num ------------------------------------------------------------------------------------
def test_round_half_to_even_and_decimals(device):
    x = torch.tensor([0.5, 1.5, 2.5, -0.5, -1.5, 1.2345], dtype=torch.float64, device=device)
    assert torch.round(x).tolist() == [0.0, 2.0, 2.0, -0.0, -2.0, 1.0]
    assert x.round(decimals=2).tolist()[-1] == 1.23
    assert torch.round(torch.tensor([1234.5, 1250.0], device=device), decimals=-2).tolist() == [1200.0, 1200.0]
    assert torch.round(torch.tensor([7, -3], device=device)).tolist() == [7, -3]
    w = torch.tensor([1.26, -0.3], dtype=torch.float64, device=device, requires_grad=True)
    torch.round(w, decimals=1).sum().backward()
    assert w.grad.tolist() == [0.0, 0.0]


def test_nan_to_num(device):
    x = torch.tensor([math.nan, math.inf, -math.inf, 1.5], device=device, requires_grad=True)
    big = float(np.finfo(np.float32).max)
    assert torch.nan_to_num(x).tolist() == [0.0, big, -big, 1.5]
    assert x.nan_to_num(nan=1.0, posinf=2.0, neginf=-2.0).tolist() == [1.0, 2.0, -2.0, 1.5]
    torch.nan_to_num(x).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0, 1.0]
    assert torch.nan_to_num(torch.tensor([3], device=device)).tolist() == [3]


# clamp ------------------------------------------------------------------------------------------------
def test_clamp_values(device):
    x = torch.tensor([-2.0, -1.0, 0.0, 1.0, 2.0], device=device)
    assert torch.clamp(x, -1, 1).tolist() == [-1.0, -1.0, 0.0, 1.0, 1.0]
    assert x.clamp(min=0.5).tolist() == [0.5, 0.5, 0.5, 1.0, 2.0]
    assert x.clip(max=0).tolist() == [-2.0, -1.0, 0.0, 0.0, 0.0]
    assert torch.clamp_min(x, 0).tolist() == [0.0, 0.0, 0.0, 1.0, 2.0]
    assert torch.clamp_max(x, 0).tolist() == [-2.0, -1.0, 0.0, 0.0, 0.0]
    assert torch.clamp(x, 1, -1).tolist() == [-1.0] * 5  # min > max: every element is max
    ints = torch.tensor([1, 5], device=device)
    assert torch.clamp(ints, 2, 4).dtype == torch.int64
    assert torch.clamp(ints, min=1.5).tolist() == [1.5, 5.0]  # the result type promotes over the bounds
    nan = torch.clamp(torch.tensor([math.nan], device=device), 0, 1).item()
    assert math.isnan(nan)
    bounds = torch.tensor([[0.0], [1.0]], device=device)
    assert torch.clamp(x, min=bounds).shape == (2, 5)


def test_clamp_needs_a_bound(device):
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max' must not be None"):
        torch.clamp(torch.ones(2, device=device))


def test_clamp_gradient_at_boundaries_matches_pytorch(device):
    """PyTorch 2.13 (derivatives.yaml clamp_backward, clamp_backward_min_max): the input gets the gradient where
    min <= x <= max, boundaries included; a tensor min where x < min and min < max; a tensor max where x > max
    or max < min (a NaN x included); a NaN bound passes nothing. Upstream gradient 1..6 shows each element."""
    nan = math.nan
    x0, up = [-2.0, -1.0, 0.0, 1.0, 2.0, nan], torch.arange(1.0, 7.0, device=device)
    x = torch.tensor([0.0, 0.61], device=device, requires_grad=True)  # the report: PyTorch gives [1, 1]
    x.clamp(0, 0.61).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]
    # (min, max): (x.grad, min.grad, max.grad) with tensor bounds; x.grad is the same with number bounds
    expected = {
        (-1.0, 1.0): ([0, 2, 3, 4, 0, 0], 1, 5), (-1.0, -1.0): ([0, 2, 0, 0, 0, 0], 0, 12),
        (1.0, 1.0): ([0, 0, 0, 4, 0, 0], 0, 5), (1.0, -1.0): ([0] * 6, 0, 21),
        (-1.0, None): ([0, 2, 3, 4, 5, 0], 1, None), (1.0, None): ([0, 0, 0, 4, 5, 0], 6, None),
        (None, 1.0): ([1, 2, 3, 4, 0, 0], None, 5), (None, -1.0): ([1, 2, 0, 0, 0, 0], None, 12),
        (-1.0, nan): ([0] * 6, 0, 0), (nan, 1.0): ([0] * 6, 0, 5), (nan, None): ([0] * 6, 0, None),
    }
    for (low, high), (grad_x, grad_low, grad_high) in expected.items():
        for as_tensors in (False, True):
            x = torch.tensor(x0, device=device, requires_grad=True)
            lo = torch.tensor(low, device=device, requires_grad=True) if as_tensors and low is not None else low
            hi = torch.tensor(high, device=device, requires_grad=True) if as_tensors and high is not None else high
            torch.clamp(x, lo, hi).backward(up)
            assert x.grad.tolist() == grad_x, (low, high, as_tensors)
            if as_tensors:
                assert (lo.grad.item() if low is not None else None) == grad_low, (low, high)
                assert (hi.grad.item() if high is not None else None) == grad_high, (low, high)
    for bound, (grad_min, grad_max) in {-1.0: (([0, 2, 3, 4, 5, 0], 1), ([1, 2, 0, 0, 0, 0], 12)),
                                        1.0: (([0, 0, 0, 4, 5, 0], 6), ([1, 2, 3, 4, 0, 0], 5))}.items():
        for function, (grad_x, grad_bound) in ((torch.clamp_min, grad_min), (torch.clamp_max, grad_max)):
            x = torch.tensor(x0, device=device, requires_grad=True)
            b = torch.tensor(bound, device=device, requires_grad=True)
            function(x, b).backward(up)
            assert x.grad.tolist() == grad_x and b.grad.item() == grad_bound
            x.grad = None
            function(x, bound).backward(up)
            assert x.grad.tolist() == grad_x


@examples(10)
@given(data=st.data())
def test_clamp_gradients(device, data):
    shape = data.draw(shapes(0, 3, 0, 3))  # 0-dim and empty included
    x = on_grid(data.draw(tensors(shape, device=device, requires_grad=True)), 0.1)
    inner = broadcastable_shapes(shape, max_dims=len(shape))  # no new leading dims: the bounds broadcast together
    low = on_grid(data.draw(tensors(inner, device=device, max_value=0, requires_grad=True)), 0.2)
    high = on_grid(data.draw(tensors(inner, device=device, min_value=0, requires_grad=True)), 0.15)
    for fn, args in [(torch.clamp, (x, low, high)), (lambda a, b: torch.clamp(a, min=b), (x, low)),
                     (lambda a, b: torch.clamp(a, max=b), (x, high)), (lambda a: torch.clamp(a, -1, 1), (x,))]:
        reference = np.minimum(np.maximum(as_numpy(x), as_numpy(low)), as_numpy(high)) if len(args) == 3 else None
        if reference is not None:
            np.testing.assert_array_equal(as_numpy(fn(*args)), reference)
        assert gradcheck(fn, args)
        assert gradgradcheck(fn, args)


# binary math ------------------------------------------------------------------------------------------
# name: (function, numpy reference, (low, high) for both inputs, value grids (offsets) or None)
BINARY = {
    "maximum": (torch.maximum, np.maximum, (-3, 3), (0.1, 0.2)),
    "minimum": (torch.minimum, np.minimum, (-3, 3), (0.1, 0.2)),
    "fmax": (torch.fmax, np.fmax, (-3, 3), (0.1, 0.2)),
    "fmin": (torch.fmin, np.fmin, (-3, 3), (0.1, 0.2)),
    "atan2": (torch.atan2, np.arctan2, (-3, 3), (0.1, 0.2)),
    "logaddexp": (torch.logaddexp, np.logaddexp, (-3, 3), None),
    "logaddexp2": (torch.logaddexp2, np.logaddexp2, (-3, 3), None),
    "xlogy": (torch.xlogy, lambda x, y: x * np.log(y), (0.2, 3), None),
    "lerp": (lambda a, b: torch.lerp(a, b, 0.3), lambda a, b: a + 0.3 * (b - a), (-3, 3), None),
    "hypot": (torch.hypot, np.hypot, (-3, 3), (0.1, 0.2)),
    "copysign": (torch.copysign, np.copysign, (-3, 3), (0.1, 0.2)),
}


def draw_pair(data, name, device, shape=SMALL):
    _, _, (low, high), grids = BINARY[name]
    shape = data.draw(shape)
    a = data.draw(tensors(shape, device=device, min_value=low, max_value=high, requires_grad=True))
    b = data.draw(tensors(broadcastable_shapes(shape), device=device, min_value=low, max_value=high,
                          requires_grad=True))
    if data.draw(st.booleans()):
        a, b = b, a
    if grids:
        on_grid(a, grids[0]), on_grid(b, grids[1])
    return a, b


@pytest.mark.parametrize("name", sorted(BINARY))
@fixture_ok
@given(data=st.data())
def test_binary_values(device, name, data):
    fn, reference = BINARY[name][:2]
    a, b = draw_pair(data, name, device, shapes(0, 3, 1, 5))
    np.testing.assert_allclose(as_numpy(fn(a, b)), reference(as_numpy(a), as_numpy(b)), rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("name", sorted(BINARY))
@examples(8)
@given(data=st.data())
def test_binary_gradients(device, name, data):
    a, b = draw_pair(data, name, device)
    fn = BINARY[name][0]
    assert gradcheck(fn, (a, b))
    assert gradgradcheck(fn, (a, b))


def test_atan2_gradient_at_the_origin_matches_pytorch(device):
    """PyTorch 2.13: 0 (not NaN) at (0, 0), also when a^2 + b^2 underflows; its second derivative there is NaN."""
    a = torch.tensor([0.0, 1.0, 0.0, -0.0, 1e-200, 3.0], dtype=torch.float64, device=device, requires_grad=True)
    b = torch.tensor([0.0, 0.0, 2.0, -0.0, 1e-200, -4.0], dtype=torch.float64, device=device, requires_grad=True)
    grad_a, grad_b = torch.autograd.grad(torch.atan2(a, b).sum(), (a, b), create_graph=True)
    assert grad_a.tolist() == [0.0, 0.0, 0.5, 0.0, 0.0, -0.16]
    assert grad_b.tolist() == pytest.approx([0.0, -1.0, 0.0, 0.0, 0.0, -0.12], abs=1e-15)
    second_a, second_b = torch.autograd.grad((grad_a * 2 + grad_b).sum(), (a, b))
    assert math.isnan(second_a[0].item()) and second_a[1:3].tolist() == [1.0, -0.25]
    assert second_b[5].item() == pytest.approx(-0.0608, rel=1e-12)
    # away from the origin, every layout (0-dim, empty, strided, broadcast): gradcheck and gradgradcheck
    for shape_a, shape_b in [((), ()), ((0,), (1,)), ((2, 3), (3,)), ((), (2, 0))]:
        x = torch.rand(shape_a, dtype=torch.float64, device=device).add(0.5).requires_grad_()
        y = torch.rand(shape_b, dtype=torch.float64, device=device).sub(1.5).requires_grad_()
        assert gradcheck(torch.atan2, (x, y)) and gradgradcheck(torch.atan2, (x, y))
    z = torch.rand(3, 4, dtype=torch.float64, device=device).add(0.2).t().requires_grad_()
    assert gradcheck(torch.atan2, (z, z.detach().flip(0).requires_grad_()))


@examples(10)
@given(data=st.data())
def test_lerp_tensor_weight(device, data):
    shape = data.draw(SMALL)
    start = data.draw(tensors(shape, device=device, requires_grad=True))
    inner = broadcastable_shapes(shape, max_dims=len(shape))  # no new leading dims: all three broadcast together
    end = data.draw(tensors(inner, device=device, requires_grad=True))
    weight = data.draw(tensors(inner, device=device, min_value=-1, max_value=2, requires_grad=True))
    s, e, w = as_numpy(start), as_numpy(end), as_numpy(weight)
    np.testing.assert_allclose(as_numpy(torch.lerp(start, end, weight)), s + w * (e - s), rtol=1e-12, atol=1e-12)
    assert gradcheck(torch.lerp, (start, end, weight))
    assert gradgradcheck(torch.lerp, (start, end, weight))


def test_lerp_endpoints_are_exact(device):
    a = torch.tensor([0.1, 1e8], dtype=torch.float64, device=device)
    b = torch.tensor([0.7, -3.3], dtype=torch.float64, device=device)
    assert a.lerp(b, 1.0).tolist() == b.tolist()
    assert torch.lerp(a, b, 0.0).tolist() == a.tolist()


def test_maximum_minimum_split_ties(device):
    """PyTorch splits the gradient 0.5 / 0.5 where both inputs are equal."""
    a = torch.tensor([1.0, 2.0, 5.0], device=device, requires_grad=True)
    b = torch.tensor([1.0, 3.0, 4.0], device=device, requires_grad=True)
    torch.maximum(a, b).sum().backward()
    assert a.grad.tolist() == [0.5, 0.0, 1.0] and b.grad.tolist() == [0.5, 1.0, 0.0]
    a.grad = b.grad = None
    torch.minimum(a, b).sum().backward()
    assert a.grad.tolist() == [0.5, 1.0, 0.0] and b.grad.tolist() == [0.5, 0.0, 1.0]


def test_nan_handling_of_max_min_families(device):
    a = torch.tensor([math.nan, 1.0, math.nan], device=device, requires_grad=True)
    b = torch.tensor([2.0, math.nan, math.nan], device=device, requires_grad=True)
    assert all(math.isnan(v) for v in torch.maximum(a, b).tolist())
    out = torch.fmax(a, b).tolist()
    assert out[:2] == [2.0, 1.0] and math.isnan(out[2])
    torch.fmin(a, b).sum().backward()
    assert a.grad.tolist() == [0.0, 1.0, 1.0] and b.grad.tolist() == [1.0, 0.0, 0.0]


def test_xlogy_at_zero(device):
    x = torch.tensor([0.0, 0.0, 2.0], dtype=torch.float64, device=device)
    y = torch.tensor([0.0, math.nan, 3.0], dtype=torch.float64, device=device)
    out = torch.xlogy(x, y).tolist()
    assert out[0] == 0.0 and math.isnan(out[1]) and out[2] == pytest.approx(2 * math.log(3.0))
    assert torch.xlogy(torch.tensor([0, 1], device=device), 2).dtype == torch.float32


def test_binary_math_promotes_integers(device):
    i = torch.tensor([1, 2], device=device)
    assert torch.atan2(i, i).dtype == torch.float32
    assert torch.maximum(i, torch.tensor([2, 1], dtype=torch.int8, device=device)).dtype == torch.int64
    assert torch.maximum(i, torch.tensor([0.5, 3.0], device=device)).tolist() == [1.0, 3.0]


def test_meta_device_shapes():
    a = torch.ones(2, 1, 3, device="meta")
    b = torch.ones(4, 1, device="meta", dtype=torch.float64)
    assert torch.erf(a).shape == (2, 1, 3) and torch.erf(a).device.type == "meta"
    out = torch.maximum(a, b)
    assert out.shape == (2, 4, 3) and out.dtype == torch.float64
    assert torch.clamp(a, 0, 1).shape == (2, 1, 3)
    assert torch.exp(torch.ones(3, dtype=torch.int64, device="meta")).dtype == torch.float32



def test_dtype_errors_as_in_pytorch(device):
    """relu/hardtanh refuse bool, abs refuses bool, frac and lerp refuse integers, ~ refuses floats: PyTorch's
    exception types and messages (NotImplementedError for a missing dtype kernel)."""
    b = torch.ones(2, dtype=torch.bool, device=device)
    i = torch.ones(2, dtype=torch.int64, device=device)
    x = torch.ones(2, device=device)
    for call in (lambda: torch.relu(b), lambda: b.relu(), lambda: torch.nn.functional.relu(b)):
        with pytest.raises(RuntimeError, match="Boolean inputs not supported for relu"):
            call()
    for call in (lambda: torch.nn.functional.hardtanh(b), lambda: torch.nn.functional.relu6(b)):
        with pytest.raises(RuntimeError, match="Bool inputs not supported for hardtanh"):
            call()
    with pytest.raises(NotImplementedError, match="\"abs_cpu\" not implemented for 'Bool'"):
        b.abs()
    with pytest.raises(NotImplementedError, match="\"frac_cpu\" not implemented for 'Long'"):
        i.frac()
    with pytest.raises(NotImplementedError, match="\"lerp_kernel_scalar\" not implemented for 'Long'"):
        torch.lerp(i, i, 0.5)
    with pytest.raises(RuntimeError, match="expected dtype torch.float32 for `end` but got dtype torch.int64"):
        torch.lerp(x, i, 0.5)
    with pytest.raises(TypeError, match=r"~ \(operator.invert\) is only implemented on integer and Boolean-type"):
        ~x
    with pytest.raises(NotImplementedError, match="\"invert_cpu\" not implemented for 'Float'"):
        x.bitwise_not()
    assert (~b).tolist() == [False, False] and torch.relu(i).tolist() == [1, 1]


def test_sign_of_nan_is_zero():
    # PyTorch computes sign as (0 < x) - (x < 0): 0 at NaN (numpy's sign gives NaN)
    x = torch.tensor([float("nan"), -0.0, -2.0, 3.0])
    assert torch.sign(x).tolist() == [0.0, 0.0, -1.0, 1.0]
    assert torch.sgn(x).tolist() == [0.0, 0.0, -1.0, 1.0]
    x.sign_()
    assert x.tolist() == [0.0, 0.0, -1.0, 1.0]


def test_erf_of_a_0dim_float32_tensor():
    # erf(0.5) = 0.5204998778 (PyTorch 2.13 float32: 0.5205)
    assert torch.erf(torch.tensor(0.5)).item() == pytest.approx(0.5204998778, rel=1e-6)
    assert torch.tensor(-0.5).erf().shape == ()
