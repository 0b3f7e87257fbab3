"""Arithmetic (ops/arithmetic.py): values against numpy with broadcasting and Python scalars on either side,
gradients by gradcheck/gradgradcheck in float64 on hypothesis-drawn layouts, and PyTorch's errors."""

import math
import operator
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minitorch as torch
from minitorch.autograd import gradcheck, gradgradcheck
from minitorch.testing.strategies import broadcastable_shapes, shapes, tensors

HEALTH = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
fixture_ok = settings(suppress_health_check=HEALTH)  # ``device`` is a plain string: safe across examples
SMALL = shapes(0, 3, 1, 3)


def examples(n: int):
    return settings(suppress_health_check=HEALTH, max_examples=n)


def as_numpy(t):
    return np.asarray(t.detach().cpu())


def on_grid(t, offset):
    """Move values onto k/4 + offset through the view (layout kept), away from the jumps of remainder/fmod."""
    t.detach()._array[...] = (torch.round(t.detach() * 4) / 4 + offset)._array
    return t


def away_from_zero(t, low=1.0):
    """Divisor values with |b| in {1, 1.5, 2, 2.5, ...}: a / b of a grid dividend is never an integer."""
    sign = torch.where(t.detach() < 0, -1.0, 1.0)
    t.detach()._array[...] = (sign * (low + torch.round(t.detach().abs()) / 2))._array
    return t


def draw_pair(data, device, low=-3.0, high=3.0, shape=SMALL):
    shape = data.draw(shape)
    a = data.draw(tensors(shape, device=device, min_value=low, max_value=high, requires_grad=True))
    b = data.draw(tensors(broadcastable_shapes(shape), device=device, min_value=low, max_value=high,
                          requires_grad=True))
    return (b, a) if data.draw(st.booleans()) else (a, b)


# values --------------------------------------------------------------------------------------------------
# name: (minitorch function, numpy reference)
FLOAT_OPS = {
    "add": (torch.add, np.add), "sub": (torch.sub, np.subtract), "mul": (torch.mul, np.multiply),
    "div": (torch.div, np.true_divide), "true_divide": (torch.true_divide, np.true_divide),
    "floor_divide": (torch.floor_divide, np.floor_divide), "remainder": (torch.remainder, np.remainder),
    "fmod": (torch.fmod, np.fmod), "pow": (torch.pow, np.power),
    "add_alpha": (lambda a, b: torch.add(a, b, alpha=2.5), lambda a, b: a + 2.5 * b),
    "sub_alpha": (lambda a, b: torch.sub(a, b, alpha=-0.5), lambda a, b: a + 0.5 * b),
    "div_trunc": (lambda a, b: torch.div(a, b, rounding_mode="trunc"), lambda a, b: np.trunc(a / b)),
    "div_floor": (lambda a, b: torch.div(a, b, rounding_mode="floor"), np.floor_divide),
}


@pytest.mark.parametrize("name", sorted(FLOAT_OPS))
@fixture_ok
@given(data=st.data())
def test_float_values(device, name, data):
    fn, reference = FLOAT_OPS[name]
    a, b = draw_pair(data, device, shape=shapes(0, 3, 1, 5))
    if name == "pow":
        a = a.abs() + 0.5
    else:
        away_from_zero(b, 0.5)
    out = fn(a, b)
    assert out.dtype == torch.float64
    np.testing.assert_allclose(as_numpy(out), reference(as_numpy(a), as_numpy(b)), rtol=1e-14, atol=1e-14)


INT_OPS = {
    "add": (torch.add, np.add), "sub": (torch.sub, np.subtract), "mul": (torch.mul, np.multiply),
    "floor_divide": (torch.floor_divide, np.floor_divide), "remainder": (torch.remainder, np.remainder),
    "fmod": (torch.fmod, np.fmod),
    "div_trunc": (lambda a, b: torch.div(a, b, rounding_mode="trunc"),
                  lambda a, b: np.vectorize(lambda x, y: int(x / y))(a, b)),
}


@pytest.mark.parametrize("name", sorted(INT_OPS))
@fixture_ok
@given(data=st.data())
def test_integer_values(device, name, data):
    fn, reference = INT_OPS[name]
    shape = data.draw(shapes(0, 3, 1, 4))
    a = data.draw(tensors(shape, dtype=torch.int64, device=device, min_value=-20, max_value=20))
    b = data.draw(tensors(broadcastable_shapes(shape), dtype=torch.int64, device=device, min_value=1, max_value=7))
    b = b * torch.where(data.draw(tensors(b.shape, dtype=torch.bool, device=device)), -1, 1)
    out = fn(a, b)
    assert out.dtype == torch.int64
    np.testing.assert_array_equal(as_numpy(out), reference(as_numpy(a), as_numpy(b)))


def test_true_division_of_integers_is_float(device):
    a = torch.tensor([7, -7], device=device)
    assert (a / 2).dtype == torch.float32 and (a / 2).tolist() == [3.5, -3.5]
    assert torch.true_divide(a, a).dtype == torch.float32
    assert (a // 2).tolist() == [3, -4] and torch.div(a, 2, rounding_mode="trunc").tolist() == [3, -3]
    assert (a % 3).tolist() == [1, 2] and torch.fmod(a, 3).tolist() == [1, -1]


def test_python_scalars_on_either_side(device):
    t = torch.tensor([1.0, 2.0, 4.0], device=device)
    assert (2 - t).tolist() == [1.0, 0.0, -2.0]
    assert (2 / t).tolist() == [2.0, 1.0, 0.5]
    assert (2 ** t).tolist() == [2.0, 4.0, 16.0]
    assert torch.pow(2, t).tolist() == [2.0, 4.0, 16.0]
    assert (t ** 2).tolist() == [1.0, 4.0, 16.0]
    assert (3 + t).tolist() == [4.0, 5.0, 7.0] and (3 * t).tolist() == [3.0, 6.0, 12.0]
    assert (9 // t).tolist() == [9.0, 4.0, 2.0] and (9 % t).tolist() == [0.0, 1.0, 1.0]
    assert torch.rsub(t, 1).tolist() == [0.0, -1.0, -3.0]
    assert torch.remainder(5, t).tolist() == [0.0, 1.0, 1.0]
    assert (-t).tolist() == [-1.0, -2.0, -4.0] and (+t) is t
    i = torch.tensor([1, 2], device=device)
    assert (2 ** i).dtype == torch.int64 and (2 ** i).tolist() == [2, 4]
    assert (i ** 0.5).dtype == torch.float32
    assert (2.0 ** i).dtype == torch.float32
    assert (torch.tensor([1, 2], dtype=torch.uint8, device=device) - 1000).tolist() == [25, 26]  # wraps


def test_zero_dim_and_numpy_scalars(device):
    t = torch.tensor([1.0, 2.0], device=device)
    assert (t * np.float64(2.0)).dtype == torch.float32  # a numpy scalar acts as a 0-dim tensor
    assert (t * torch.tensor(2.0, dtype=torch.float64, device=device)).dtype == torch.float32
    assert (torch.tensor(3, device=device) * 2).dtype == torch.int64


# gradients -----------------------------------------------------------------------------------------------
def prepare(name, a, b):
    if name == "pow":
        on_grid(a, 0.1), on_grid(b, 0.2)
        a.detach()._array[...] = (a.detach().abs() + 0.5)._array
    elif name in ("remainder", "fmod", "div"):
        on_grid(a, 0.1), away_from_zero(b)
    return a, b


GRADIENT_OPS = {
    "add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div, "pow": torch.pow,
    "remainder": torch.remainder, "fmod": torch.fmod,
    "add_alpha": lambda a, b: torch.add(a, b, alpha=-1.5), "sub_alpha": lambda a, b: torch.sub(a, b, alpha=3),
    "operators": lambda a, b: (a - b) * (2 - a) / (b * b + 1) + 2 ** a - b ** 2 + (-a) / 3,
}


@pytest.mark.parametrize("name", sorted(GRADIENT_OPS))
@examples(10)
@given(data=st.data())
def test_gradients(device, name, data):
    a, b = prepare(name, *draw_pair(data, device))
    fn = GRADIENT_OPS[name]
    assert gradcheck(fn, (a, b))
    assert gradgradcheck(fn, (a, b))


@examples(10)
@given(data=st.data())
def test_gradients_with_scalar_operands(device, data):
    x = data.draw(tensors(SMALL, device=device, min_value=0.5, max_value=2.0, requires_grad=True))
    for fn in (lambda t: 2 ** t, lambda t: torch.pow(0.5, t), lambda t: t ** 2.5, lambda t: t ** -1, lambda t: 3 / t,
               lambda t: 1 - t, lambda t: t.neg(), lambda t: torch.rsub(t, 2, alpha=3)):
        assert gradcheck(fn, (x,))
        assert gradgradcheck(fn, (x,))


def test_scalar_dividend_remainder_gradient(device):
    x = torch.tensor([0.8, 1.3, -1.9], dtype=torch.float64, device=device, requires_grad=True)
    assert gradcheck(lambda t: 7 % t, (x,)) and gradcheck(lambda t: torch.fmod(7.0, t), (x,))


def test_pow_gradients_at_zero(device):
    """PyTorch's conventions: d/da a**0 = 0 even at a = 0, and d/db a**b = 0 at a = 0 for b >= 0."""
    a = torch.tensor([0.0, 0.0, 2.0], device=device, requires_grad=True)
    b = torch.tensor([0.0, 2.0, 0.0], device=device, requires_grad=True)
    (a ** b).sum().backward()
    assert a.grad.tolist() == [0.0, 0.0, 0.0]
    assert b.grad.tolist() == [0.0, 0.0, pytest.approx(math.log(2.0))]
    x = torch.tensor([0.0, 1.0], device=device, requires_grad=True)
    (x ** 0).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0]
    e = torch.tensor([1.0, -1.0], device=device, requires_grad=True)
    torch.pow(0, e).sum().backward()
    assert e.grad.tolist()[0] == 0.0


def test_pow_non_finite_gradients_and_zero_base_second_derivative_match_pytorch(device):
    """PyTorch 2.13's pow_backward_exponent multiplies grad outside its where, so an infinite grad gives nan
    where d/db is 0; the masked log(0) branch makes the second derivative of 0 ** x nan at a zero base; and
    x ** -0.5 is rsqrt (-inf at -0.0, nan at -inf), which x ** 0.5's gradient reads."""
    inf, nan = math.inf, math.nan
    x = torch.tensor([0.0, 1.0, -1.0], dtype=torch.float64, device=device, requires_grad=True)
    (grad,) = torch.autograd.grad((0 ** x).sum(), x, create_graph=True)
    assert grad.tolist() == [0.0, 0.0, -inf]
    np.testing.assert_array_equal(np.array(torch.autograd.grad(grad.sum(), x)[0].tolist()), [nan, nan, inf])
    x = torch.tensor([-0.0, 1.0], dtype=torch.float64, device=device, requires_grad=True)
    np.testing.assert_array_equal(np.array(torch.autograd.grad(torch.log2(0 ** x).sum(), x)[0].tolist()), [0, nan])
    a = torch.tensor([0.0, 0.0, 2.0], dtype=torch.float64, device=device, requires_grad=True)
    b = torch.tensor([0.0, 1.0, 1.0], dtype=torch.float64, device=device, requires_grad=True)
    weights = torch.tensor([inf, inf, 1.0], dtype=torch.float64, device=device)
    grad_a, grad_b = torch.autograd.grad(((a ** b) * weights).sum(), [a, b])
    assert grad_a.tolist() == [0.0, inf, 1.0]
    np.testing.assert_array_equal(np.array(grad_b.tolist()), [nan, nan, 2 * math.log(2.0)])
    x = torch.tensor([-inf, -0.0, 4.0], dtype=torch.float64, device=device, requires_grad=True)
    np.testing.assert_array_equal(np.array((x ** -0.5).tolist()), [nan, -inf, 0.5])
    np.testing.assert_array_equal(np.array(torch.autograd.grad((x ** 0.5).sum(), x)[0].tolist()), [nan, -inf, 0.25])
    assert gradcheck(lambda t: t ** -0.5, (x[2:],)) and gradgradcheck(lambda t: t ** 0.5, (x[2:],))


def test_rounded_division_has_zero_gradient(device):
    a = torch.tensor([3.5, -2.5], device=device, requires_grad=True)
    b = torch.tensor([2.0, 2.0], device=device, requires_grad=True)
    (torch.div(a, b, rounding_mode="floor") + torch.div(a, b, rounding_mode="trunc")).sum().backward()
    assert a.grad.tolist() == [0.0, 0.0] and b.grad.tolist() == [0.0, 0.0]


def test_floor_divide_has_no_derivative(device):
    """PyTorch 2.13 defines none for aten::floor_divide (``//``): backward raises (div(rounding_mode='floor') has
    the zero one)."""
    a = torch.tensor([3.5, -2.5], device=device, requires_grad=True)
    for out in (a // 2.0, 2.0 // a, torch.floor_divide(a, torch.tensor(2.0, device=device)), a.floor_divide(2.0)):
        assert out.requires_grad
        with pytest.raises(RuntimeError, match="^derivative for aten::floor_divide is not implemented$"):
            out.sum().backward()
    assert (torch.tensor([7, -7], device=device) // 2).tolist() == [3, -4]


def test_broadcast_gradient_reduces_to_input_shape(device):
    """SEMANTICS AG-18: x (2, 3), y (3,): (x + y).sum() gives y.grad == [2, 2, 2]."""
    x = torch.ones(2, 3, device=device, requires_grad=True)
    y = torch.ones(3, device=device, requires_grad=True)
    (x + y).sum().backward()
    assert y.grad.tolist() == [2.0, 2.0, 2.0] and x.grad.shape == (2, 3)


def test_integer_operand_gets_no_gradient(device):
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    i = torch.tensor([3, 4], device=device)
    out = x * i
    assert out.dtype == torch.float32
    out.sum().backward()
    assert x.grad.tolist() == [3.0, 4.0] and i.grad is None


# integer powers ----------------------------------------------------------------------------------------
def test_integer_pow(device):
    base = torch.tensor([2, 1, -1, -1, 3, 0], device=device)
    exponent = torch.tensor([-1, -5, -3, -2, 2, 0], device=device)
    assert (base ** exponent).tolist() == [0, 1, -1, 1, 9, 1]  # negative powers: 1, +-1, else 0
    with pytest.raises(RuntimeError, match="Integers to negative integer powers are not allowed."):
        base ** -1
    assert (base.double() ** -1).tolist()[0] == 0.5


# errors --------------------------------------------------------------------------------------------------
def test_broadcast_errors_name_the_sizes(device):
    a, b = torch.ones(2, 3, device=device), torch.ones(4, device=device)
    message = r"The size of tensor a \(3\) must match the size of tensor b \(4\) at non-singleton dimension 1"
    for fn in (operator.add, operator.sub, operator.mul, operator.truediv, operator.pow, torch.remainder,
               torch.maximum, torch.eq, torch.atan2, torch.logical_and):
        with pytest.raises(RuntimeError, match=message):
            fn(a, b)
    with pytest.raises(RuntimeError, match=r"\(mul: shapes \[2, 3\] and \[4\]\)"):
        a * b
    with pytest.raises(RuntimeError, match="The size of tensor a"):
        torch.where(torch.ones(5, dtype=torch.bool, device=device), a, a)


def test_bool_errors(device):
    mask = torch.tensor([True, False], device=device)
    with pytest.raises(RuntimeError, match="Negation, the `-` operator, on a bool tensor is not supported"):
        -mask
    with pytest.raises(RuntimeError, match="with two bool tensors is not supported"):
        mask - mask
    with pytest.raises(RuntimeError, match="with a bool tensor is not supported"):
        mask - 1
    with pytest.raises(RuntimeError, match="with a bool tensor is not supported"):
        torch.ones(2, device=device) - mask
    with pytest.raises(RuntimeError, match="The `\\+` operator, on a bool tensor is not supported"):
        torch.positive(mask)
    assert (mask + mask).tolist() == [True, False] and (mask * 3).tolist() == [3, 0]


def test_other_errors(device):
    t = torch.tensor([1, 2], device=device)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        t // 0
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        t % torch.tensor([1, 0], device=device)
    with pytest.raises(RuntimeError, match="rounding_mode to be one of None, 'trunc', or 'floor' but found 'round'"):
        torch.div(t, 2, rounding_mode="round")
    with pytest.raises(RuntimeError, match="alpha must not be a floating point number"):
        torch.add(t, t, alpha=0.5)
    with pytest.raises(RuntimeError, match="Boolean alpha only supported for Boolean results"):
        torch.add(t.float(), t, alpha=True)
    with pytest.raises(TypeError):
        t + "a"
    with pytest.raises(TypeError):
        torch.add(1, 2)
    with pytest.raises(TypeError):
        torch.mul(t, [1, 2])


def test_failed_op_leaves_inputs_unchanged(device):
    a = torch.tensor([1, 2], device=device)
    before = a._version
    with pytest.raises(RuntimeError):
        a // torch.tensor([1, 0], device=device)
    assert a.tolist() == [1, 2] and a._version == before


def test_no_numpy_warnings(device):
    t = torch.tensor([0.0, 1.0, -1.0], device=device)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = (1 / t).tolist()
        assert out[1:] == [1.0, -1.0] and out[0] == math.inf
        assert math.isnan((t / t).tolist()[0])
        t ** 0.5, t // 0.0, t % 0.0, torch.fmod(t, 0.0), t * 1e39, torch.tensor([1e4], dtype=torch.float16) * 1e4


def test_meta_device(device):
    a = torch.ones(3, 1, dtype=torch.int32, device="meta")
    b = torch.ones(4, device="meta")
    out = a / b
    assert out.shape == (3, 4) and out.dtype == torch.float32 and out.device.type == "meta"
    assert (a // a).dtype == torch.int32 and (a ** a).shape == (3, 1) and (a % 2).dtype == torch.int32


def test_div_second_derivative_at_a_zero_divisor_is_infinite():
    # d2(a / b)/db2 = 2a / b^3: +-inf at b = +-0 (PyTorch 2.13), not nan
    b = torch.tensor([0.0, -0.0, 2.0], dtype=torch.float64, requires_grad=True)
    a = torch.tensor([1.0, 1.0, 1.0], dtype=torch.float64)
    (g,) = torch.autograd.grad((a / b).sum(), b, create_graph=True)
    (gg,) = torch.autograd.grad(g.sum(), b)
    assert g.tolist() == [float("-inf"), float("-inf"), -0.25]
    assert gg.tolist() == [float("inf"), float("-inf"), 0.25]


def test_a_number_raised_to_a_tensor_is_laid_out_row_major():
    """PyTorch's pow.Scalar allocates its output contiguous whatever the exponent's layout (fuzzer seed
    42395: ``(2 ** x.t()).view(-1)`` succeeds); ``x ** 2`` and a 0-dim tensor base follow x's layout."""
    x = torch.zeros(3, 4).t()
    assert (2 ** x).stride() == (3, 1) and torch.pow(2, x).stride() == (3, 1)
    assert (2 ** x).view(12).shape == (12,)
    assert (x ** 2).stride() == (1, 4) and (torch.tensor(2.0) ** x).stride() == (1, 4)


def test_division_gradient_for_the_divisor_is_grouped_as_pytorchs():
    """PyTorch's div_tensor_other_backward is -g * ((a / b) / b); grouped as (-g * (a / b)) / b, float32
    second derivatives rounded otherwise (fuzzer seed 79838). PyTorch 2.13's rounding noise for x / x at
    x = 0.013720699: d2/dx2 = 2**-11 (exactly 0 in real numbers)."""
    x = torch.tensor([0.013720699241793078, 0.46993079003644767], requires_grad=True)
    (g,) = torch.autograd.grad((x / x).sum(), x, create_graph=True)
    assert g.tolist() == [0.0, 0.0]
    assert torch.autograd.grad(g.sum(), x)[0].tolist() == [0.00048828125, 0.0]
