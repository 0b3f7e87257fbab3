"""Comparisons, logical and bitwise ops, where, masked_fill, isnan & co., isclose/allclose/equal
(ops/comparison.py): values against numpy, bool results, gradients of where/masked_fill."""

import math
import operator

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minitorch as torch
from minitorch.autograd import gradcheck, gradgradcheck
from minitorch.testing.strategies import broadcastable_shapes, shapes, tensors

HEALTH = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
fixture_ok = settings(suppress_health_check=HEALTH)  # ``device`` is a plain string: safe across examples


def as_numpy(t):
    return np.asarray(t.detach().cpu())


COMPARISONS = {
    "eq": (torch.eq, np.equal, operator.eq), "ne": (torch.ne, np.not_equal, operator.ne),
    "lt": (torch.lt, np.less, operator.lt), "le": (torch.le, np.less_equal, operator.le),
    "gt": (torch.gt, np.greater, operator.gt), "ge": (torch.ge, np.greater_equal, operator.ge),
    "greater": (torch.greater, np.greater, None), "less_equal": (torch.less_equal, np.less_equal, None),
    "logical_and": (torch.logical_and, np.logical_and, None), "logical_or": (torch.logical_or, np.logical_or, None),
    "logical_xor": (torch.logical_xor, np.logical_xor, None),
}


@pytest.mark.parametrize("name", sorted(COMPARISONS))
@fixture_ok
@given(data=st.data())
def test_comparison_values(device, name, data):
    fn, reference, operator_fn = COMPARISONS[name]
    shape = data.draw(shapes(0, 3, 1, 4))
    # small integers as floats: plenty of ties, so == and <= are exercised on equal values
    a = data.draw(tensors(shape, dtype=torch.int64, device=device, min_value=-2, max_value=2)).double()
    b = data.draw(tensors(broadcastable_shapes(shape), dtype=torch.int64, device=device, min_value=-2, max_value=2))
    expected = reference(as_numpy(a), as_numpy(b))
    for out in (fn(a, b), getattr(a, name)(b)) + ((operator_fn(a, b),) if operator_fn else ()):
        assert out.dtype == torch.bool
        np.testing.assert_array_equal(as_numpy(out), expected)
    np.testing.assert_array_equal(as_numpy(fn(a, 1)), reference(as_numpy(a), 1))
    if operator_fn:  # a number first works through the reflected operator (1.0 < t is t > 1.0)
        np.testing.assert_array_equal(as_numpy(operator_fn(1.0, b)), reference(1.0, as_numpy(b)))
    with pytest.raises(TypeError, match=rf"{name}\(\): argument 'input' \(position 1\) must be Tensor, not float"):
        fn(1.0, b)  # as PyTorch: the function takes a number second only


def test_reflected_comparisons_and_none(device):
    t = torch.tensor([1, 2, 3], device=device)
    assert (2 < t).tolist() == [False, False, True] and (2 >= t).tolist() == [True, True, False]
    assert (2 == t).tolist() == [False, True, False]
    assert (t == None) is False and (t != None) is True  # noqa: E711 - Python's fallback, as in PyTorch
    with pytest.raises(TypeError):
        t < "a"


def test_comparisons_promote_first(device):
    """int64 == float32 compares in float32, as PyTorch does (numpy would compare in float64)."""
    i = torch.tensor([16777217], device=device)
    f = torch.tensor([16777216.0], device=device)
    assert (i == f).tolist() == [True]
    assert (torch.tensor([True], device=device) == 1).tolist() == [True]
    assert (torch.tensor([0.5], device=device) > 0).tolist() == [True]


def test_logical_not_and_any_dtype(device):
    x = torch.tensor([0.0, 2.0, -1.0], device=device)
    assert torch.logical_not(x).tolist() == [True, False, False]
    assert x.logical_and(torch.tensor([1, 1, 0], device=device)).tolist() == [False, True, False]
    assert torch.logical_or(x, 0).dtype == torch.bool


@fixture_ok
@given(data=st.data())
def test_bitwise_values(device, data):
    shape = data.draw(shapes(0, 3, 1, 4))
    dtype = data.draw(st.sampled_from([torch.int64, torch.int32, torch.uint8, torch.bool]))
    a = data.draw(tensors(shape, dtype=dtype, device=device, min_value=0, max_value=100))
    b = data.draw(tensors(broadcastable_shapes(shape), dtype=dtype, device=device, min_value=0, max_value=100))
    na, nb = as_numpy(a), as_numpy(b)
    for fn, op, reference in ((torch.bitwise_and, operator.and_, np.bitwise_and),
                              (torch.bitwise_or, operator.or_, np.bitwise_or),
                              (torch.bitwise_xor, operator.xor, np.bitwise_xor)):
        assert fn(a, b).dtype == dtype and op(a, b).dtype == dtype
        np.testing.assert_array_equal(as_numpy(fn(a, b)), reference(na, nb))
        np.testing.assert_array_equal(as_numpy(op(a, b)), reference(na, nb))
    np.testing.assert_array_equal(as_numpy(~a), np.invert(na))
    np.testing.assert_array_equal(as_numpy(torch.bitwise_not(a)), np.invert(na))


def test_bitwise_mixed_and_shifts(device):
    i = torch.tensor([1, 6], device=device)
    mask = torch.tensor([True, False], device=device)
    assert (i & mask).dtype == torch.int64 and (i & mask).tolist() == [1, 0]
    assert (mask | True).tolist() == [True, True] and (3 & i).tolist() == [1, 2]
    assert (~mask).tolist() == [False, True]
    assert (i << 2).tolist() == [4, 24] and (i >> 1).tolist() == [0, 3] and (1 << i).tolist() == [2, 64]
    assert torch.bitwise_left_shift(i, 1).tolist() == [2, 12]
    u = torch.tensor([1], dtype=torch.uint8, device=device)
    assert (u | torch.tensor([-2], dtype=torch.int8, device=device)).dtype == torch.int16


def test_bitwise_refuses_floats(device):
    f = torch.tensor([1.0], device=device)
    with pytest.raises(NotImplementedError, match="\"bitwise_and_cpu\" not implemented for 'Float'"):
        f & f
    with pytest.raises(NotImplementedError, match="not implemented for 'Double'"):
        torch.bitwise_not(f.double())
    with pytest.raises(NotImplementedError, match="not implemented for 'Float'"):
        torch.tensor([1], device=device) | 1.5


def test_classification(device):
    x = torch.tensor([1.0, math.nan, math.inf, -math.inf, -0.0, 0.0], device=device)
    assert torch.isnan(x).tolist() == [False, True, False, False, False, False]
    assert torch.isinf(x).tolist() == [False, False, True, True, False, False]
    assert torch.isposinf(x).tolist() == [False, False, True, False, False, False]
    assert torch.isneginf(x).tolist() == [False, False, False, True, False, False]
    assert x.isfinite().tolist() == [True, False, False, False, True, True]
    assert torch.signbit(x).tolist() == [False, False, False, True, True, False]
    assert torch.isnan(torch.tensor([1, 2], device=device)).tolist() == [False, False]


def test_isclose_allclose_equal(device):
    a = torch.tensor([1.0, math.inf, math.nan, 1.0, -math.inf], device=device)
    b = torch.tensor([1.0 + 1e-6, math.inf, math.nan, 1.1, math.inf], device=device)
    assert torch.isclose(a, b).tolist() == [True, True, False, False, False]
    assert torch.isclose(a, b, equal_nan=True).tolist() == [True, True, True, False, False]
    assert a.isclose(b, rtol=0.2).tolist()[3] is True
    assert torch.isclose(a, b, rtol=0, atol=0).tolist() == [False, True, False, False, False]
    assert torch.allclose(torch.ones(3, device=device), torch.ones(3, device=device) + 1e-9)
    assert not torch.allclose(a, b)
    assert torch.allclose(a[:2], b[:2])
    ints = torch.tensor([100, 3], device=device)
    assert torch.isclose(ints, torch.tensor([101, 3], device=device), rtol=0.01).tolist() == [True, True]
    with pytest.raises(RuntimeError, match="expected both input and other to have the same dtype"):
        torch.isclose(ints, ints.double())
    with pytest.raises(RuntimeError, match="rtol must be greater than or equal to zero"):
        torch.isclose(a, b, rtol=-1)
    assert torch.equal(ints, ints.clone()) and not torch.equal(ints, ints[:1]) and not torch.equal(a, a)
    assert ints.equal(torch.tensor([100, 3], device=device))


# where / masked_fill ---------------------------------------------------------------------------------
@settings(suppress_health_check=HEALTH, max_examples=10)
@given(data=st.data())
def test_where_values_and_gradients(device, data):
    shape = data.draw(shapes(0, 3, 1, 3))
    inner = broadcastable_shapes(shape, max_dims=len(shape))  # no new leading dims: all three broadcast
    condition = data.draw(tensors(inner, dtype=torch.bool, device=device))
    a = data.draw(tensors(shape, device=device, requires_grad=True))
    b = data.draw(tensors(inner, device=device, requires_grad=True))
    out = torch.where(condition, a, b)
    np.testing.assert_array_equal(as_numpy(out), np.where(as_numpy(condition), as_numpy(a), as_numpy(b)))
    np.testing.assert_array_equal(as_numpy(a.where(condition, b)), as_numpy(out))
    fn = lambda x, y: torch.where(condition, x, y)  # noqa: E731
    assert gradcheck(fn, (a, b)) and gradgradcheck(fn, (a, b))
    assert gradcheck(lambda x: torch.where(condition, x, 0.5), (a,))


def test_where_scalars_and_errors(device):
    c = torch.tensor([True, False], device=device)
    assert torch.where(c, 1, 0).dtype == torch.int64 and torch.where(c, 1, 0).tolist() == [1, 0]
    assert torch.where(c, 1.0, 0).dtype == torch.float32
    assert torch.where(c, torch.tensor([1.0, 2.0], device=device), 0).tolist() == [1.0, 0.0]
    assert torch.where(c, torch.tensor([1, 2], device=device), 2.5).dtype == torch.float32
    with pytest.raises(RuntimeError, match="where expected condition to be a boolean tensor"):
        torch.where(torch.tensor([1, 0], device=device), 1.0, 0.0)
    (indices,) = torch.where(c)
    assert indices.tolist() == [0]


def _bits(array):
    return np.asarray(array).view(f"u{np.asarray(array).itemsize}")


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32, torch.float64])
def test_where_with_a_zero_branch_keeps_every_bit(device, dtype):
    """where(c, a, 0) / where(c, 0, a) take a bit-masking kernel: NaN, inf and -0.0 in ``a`` pass
    unchanged where they are selected, and the zero is +0.0 (``a * c`` would give NaN and -0.0)."""
    values = np.array([[np.nan, -np.inf, np.inf, -0.0, 0.0, -1.5, 3.0, 1e-7]] * 3, dtype=dtype.name)
    condition = np.random.default_rng(0).random(values.shape) < 0.5
    a, c = torch.tensor(values, device=device), torch.tensor(condition, device=device)
    for zero in (0.0, 0):
        for out, expected in [
            (torch.where(c, a, zero), np.where(condition, values, values.dtype.type(0))),
            (torch.where(c, zero, a), np.where(condition, values.dtype.type(0), values)),
        ]:
            assert out.dtype == dtype and out.shape == a.shape
            np.testing.assert_array_equal(_bits(as_numpy(out)), _bits(expected))


def test_where_with_a_zero_branch_broadcasts_and_reads_strided_inputs(device):
    rng = np.random.default_rng(1)
    values = rng.standard_normal((4, 6))
    condition = rng.random((6, 4)) < 0.5
    a = torch.tensor(values, device=device)
    c = torch.tensor(condition, device=device)
    np.testing.assert_array_equal(as_numpy(torch.where(c, a.t(), 0.0)), np.where(condition, values.T, 0.0))
    np.testing.assert_array_equal(
        as_numpy(torch.where(c[:, ::2], a.t()[:, 1::2], 0.0)), np.where(condition[:, ::2], values.T[:, 1::2], 0.0)
    )
    row, column = condition[:1], values[:, :1]  # (1, 4) condition and (4, 1) values: the result is (4, 4)
    out = torch.where(torch.tensor(row, device=device), 0.0, torch.tensor(column, device=device))
    np.testing.assert_array_equal(as_numpy(out), np.where(row, 0.0, column))
    assert torch.where(c, torch.tensor(2.5, device=device), 0.0).tolist() == np.where(condition, 2.5, 0.0).tolist()
    assert torch.where(torch.tensor(True, device=device), torch.tensor(2.5, device=device), 0).item() == 2.5
    assert torch.where(torch.tensor(True, device=device), 0.0, torch.tensor(2.5, device=device)).item() == 0.0


def test_where_with_other_scalars_keeps_numpy_semantics(device):
    c = torch.tensor([True, False], device=device)
    a = torch.tensor([1.0, 2.0], device=device)
    negative_zero = torch.where(c, a, -0.0)  # -0.0 is not the mask's +0.0: the general kernel
    assert math.copysign(1.0, negative_zero[1].item()) == -1.0
    assert torch.where(c, torch.tensor([1, 2], device=device), 0).tolist() == [1, 0]  # integer: no bit mask
    assert torch.where(c, a.half(), 0.0).dtype == torch.float16
    assert torch.where(c, torch.tensor([1, 2], device=device), 0.0).dtype == torch.float32


def test_where_with_a_zero_branch_gradients():
    rng = np.random.default_rng(2)
    condition = torch.tensor(rng.random((3, 4)) < 0.5)
    x = torch.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    assert gradcheck(lambda t: torch.where(condition, t, 0.0), (x,))
    assert gradcheck(lambda t: torch.where(condition, 0, t.t().t()), (x,))
    assert gradgradcheck(lambda t: torch.where(condition, t * t, 0.0), (x,))
    y = torch.tensor([[-1.0, 0.0, 2.0], [3.0, -0.0, 1e-9]], dtype=torch.float64, requires_grad=True)
    torch.nn.functional.relu(y).sum().backward()  # relu's backward is where(y > 0, g, 0.0)
    assert y.grad.tolist() == [[0.0, 0.0, 1.0], [1.0, 0.0, 1.0]]
    z = torch.tensor(rng.standard_normal((3, 4)) + 0.5, requires_grad=True)
    assert gradcheck(torch.nn.functional.relu, (z,))


def test_where_with_a_zero_branch_on_meta():
    c = torch.ones(2, 1, dtype=torch.bool, device="meta")
    a = torch.empty(3, dtype=torch.float16, device="meta")
    for out in (torch.where(c, a, 0.0), torch.where(c, 0, a)):
        assert out.device.type == "meta" and out.shape == (2, 3) and out.dtype == torch.float16


def test_masked_fill(device):
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], device=device, requires_grad=True)
    mask = torch.tensor([True, False], device=device)
    value = torch.tensor(9.0, device=device, requires_grad=True)
    out = x.masked_fill(mask, value)
    assert out.tolist() == [[9.0, 2.0], [9.0, 4.0]]
    out.sum().backward()
    assert x.grad.tolist() == [[0.0, 1.0], [0.0, 1.0]] and value.grad.item() == 2.0
    assert torch.masked_fill(x, mask, -1).tolist() == [[-1.0, 2.0], [-1.0, 4.0]]
    with pytest.raises(RuntimeError, match="only supports boolean masks"):
        x.masked_fill(torch.tensor([1, 0], device=device), 0.0)
    with pytest.raises(RuntimeError, match="0-dimensional value tensor"):
        x.masked_fill(mask, torch.ones(2, device=device))


def test_meta_device():
    a = torch.ones(2, 1, device="meta")
    b = torch.ones(3, dtype=torch.int64, device="meta")
    assert (a < b).shape == (2, 3) and (a < b).dtype == torch.bool
    assert torch.isclose(a, a).shape == (2, 1)
    assert torch.where(a > 0, a, b).shape == (2, 3)


def test_masked_fill_broadcasts_input_and_mask():
    # PyTorch: out of place the result has the broadcast shape; in place the mask must fit the input
    x = torch.zeros(1, 1, requires_grad=True)
    out = x.masked_fill(torch.tensor([True, False]), 2.0)
    assert out.shape == (1, 2) and out.tolist() == [[2.0, 0.0]]
    out.sum().backward()
    assert x.grad.tolist() == [[1.0]]
    y = torch.zeros(1, 1)
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        y.masked_fill_(torch.tensor([True, False]), 2.0)
    assert y.tolist() == [[0.0]]
