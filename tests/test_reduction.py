"""Reductions and scans (ops/reduction.py): values against numpy, gradients by gradcheck/gradgradcheck."""

import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minitorch as torch
from minitorch.autograd import gradcheck, gradgradcheck
from minitorch.testing.strategies import shapes, tensors

# ``device`` is a plain string per test instance, so sharing it across hypothesis examples is safe
fixture_ok = settings(suppress_health_check=[HealthCheck.function_scoped_fixture])


def t64(values, device="cpu", requires_grad=False):
    return torch.tensor(values, dtype=torch.float64, device=device, requires_grad=requires_grad)


def as_numpy(t):
    return np.asarray(t.detach().cpu())


def check_gradients(fn, x) -> None:
    """First and second derivatives of ``fn`` at ``x`` against finite differences."""
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


@st.composite
def tensor_and_dims(draw, device="cpu", min_dims=1, max_side=4, requires_grad=False, distinct=False,
                    away_from_zero=False):
    """A float64 tensor (any layout), a dim spec for it (None, int or tuple, maybe negative), keepdim.
    ``away_from_zero`` replaces values within 0.1 of 0 by 0.5 (tiny values make x/x-style gradients inexact)."""
    x = draw(tensors(shapes(min_dims, 3, 1, max_side), device=device, requires_grad=requires_grad))
    if away_from_zero:
        values = as_numpy(x)
        values[...] = np.where(np.abs(values) < 0.1, 0.5, values)
    if distinct:  # tie-free values, written through the (possibly strided) view
        order = draw(st.permutations(range(x.numel())))
        as_numpy(x)[...] = (np.array(order, dtype=np.float64) * 0.731 - 1.5).reshape(x.shape)
    chosen = draw(st.lists(st.integers(0, x.dim() - 1), unique=True, min_size=1, max_size=x.dim()))
    chosen = [d - x.dim() if draw(st.booleans()) else d for d in chosen]
    dim = draw(st.sampled_from([None, chosen[0], tuple(chosen)]))
    return x, dim, draw(st.booleans())


def numpy_axis(dim, ndim):
    if dim is None:
        return tuple(range(ndim))
    return tuple(d % ndim for d in ((dim,) if isinstance(dim, int) else dim))


# values ---------------------------------------------------------------------------------------------
@fixture_ok
@given(data=st.data())
def test_sum_mean_amax_amin_values(device, data):
    x, dim, keepdim = data.draw(tensor_and_dims(device))
    a, axis = as_numpy(x), numpy_axis(dim, x.dim())
    for name, expected in [("sum", np.sum), ("mean", np.mean), ("amax", np.amax), ("amin", np.amin)]:
        got = getattr(torch, name)(x, dim if dim is not None else (), keepdim=keepdim)
        np.testing.assert_allclose(as_numpy(got), expected(a, axis=axis, keepdims=keepdim), rtol=1e-12, atol=1e-12)
        assert got.shape == expected(a, axis=axis, keepdims=keepdim).shape


@fixture_ok
@given(data=st.data())
def test_var_std_logsumexp_norm_values(device, data):
    x, dim, keepdim = data.draw(tensor_and_dims(device))
    a, axis = as_numpy(x), numpy_axis(dim, x.dim())
    count = math.prod(a.shape[d] for d in axis)
    correction = data.draw(st.sampled_from([0, 1]))
    if count > correction:
        np.testing.assert_allclose(as_numpy(x.var(dim, correction=correction, keepdim=keepdim)),
                                   np.var(a, axis=axis, ddof=correction, keepdims=keepdim), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(as_numpy(torch.std(x, dim, keepdim=keepdim, correction=correction)),
                                   np.std(a, axis=axis, ddof=correction, keepdims=keepdim), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(as_numpy(x.logsumexp(axis if dim is None else dim, keepdim=keepdim)),
                               np.log(np.sum(np.exp(a), axis=axis, keepdims=keepdim)), rtol=1e-10, atol=1e-12)
    for p in [1, 2, 3, 0.5, -1, math.inf, -math.inf, 0]:
        magnitude = np.abs(a)
        if p == 0:
            expected = np.sum(a != 0, axis=axis, keepdims=keepdim).astype(np.float64)
        elif math.isinf(p):
            expected = (np.amax if p > 0 else np.amin)(magnitude, axis=axis, keepdims=keepdim)
        else:
            with np.errstate(divide="ignore", over="ignore"):
                expected = np.sum(magnitude**p, axis=axis, keepdims=keepdim) ** (1 / p)
        with warnings.catch_warnings():  # p < 0 on subnormal values overflows (to the right result, inf)
            warnings.simplefilter("ignore", RuntimeWarning)
            got = x.norm(p, dim, keepdim)
        np.testing.assert_allclose(as_numpy(got), expected, rtol=1e-10, atol=1e-12)


@fixture_ok
@given(data=st.data())
def test_prod_cumsum_cumprod_values(device, data):
    x, _, keepdim = data.draw(tensor_and_dims(device))
    a = as_numpy(x)
    dim = data.draw(st.integers(-x.dim(), x.dim() - 1))
    np.testing.assert_allclose(as_numpy(x.prod()), np.prod(a), rtol=1e-12)
    np.testing.assert_allclose(as_numpy(x.prod(dim, keepdim)), np.prod(a, axis=dim, keepdims=keepdim), rtol=1e-12)
    np.testing.assert_allclose(as_numpy(x.cumsum(dim)), np.cumsum(a, axis=dim), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(as_numpy(torch.cumprod(x, dim)), np.cumprod(a, axis=dim), rtol=1e-12)


@fixture_ok
@given(data=st.data())
def test_integer_inputs_accumulate_in_int64(device, data):
    x = data.draw(tensors(shapes(1, 3, 1, 4), dtype=torch.int32, device=device, min_value=-4, max_value=4))
    a = as_numpy(x)
    for got, expected in [(x.sum(), np.sum(a, dtype=np.int64)), (x.prod(), np.prod(a, dtype=np.int64)),
                          (x.sum(0, keepdim=True), np.sum(a, 0, dtype=np.int64, keepdims=True)),
                          (x.prod(-1), np.prod(a, -1, dtype=np.int64)), (x.cumsum(0), np.cumsum(a, 0, dtype=np.int64)),
                          (x.cumprod(-1), np.cumprod(a, -1, dtype=np.int64))]:
        assert got.dtype == torch.int64
        np.testing.assert_array_equal(as_numpy(got), expected)
    assert x.amax().dtype == torch.int32 and x.amax().item() == a.max()
    assert x.max(0).values.dtype == torch.int32
    np.testing.assert_array_equal(as_numpy(x.max(0).indices), np.argmax(a, 0))
    np.testing.assert_array_equal(as_numpy(x.argmin(-1, keepdim=True)), np.argmin(a, -1, keepdims=True))
    assert x.argmax().item() == np.argmax(a) and x.argmax().dtype == torch.int64
    np.testing.assert_array_equal(as_numpy(x.count_nonzero(0)), np.count_nonzero(a, axis=0))
    assert x.sum(dtype=torch.float64).dtype == torch.float64
    assert torch.tensor([True, True, False], device=device).prod().dtype == torch.int64


@fixture_ok
@given(data=st.data())
def test_max_min_with_dim_and_argmax(device, data):
    x, _, keepdim = data.draw(tensor_and_dims(device))
    a = as_numpy(x)
    dim = data.draw(st.integers(-x.dim(), x.dim() - 1))
    for fn, np_value, np_index in [(torch.max, np.amax, np.argmax), (torch.min, np.amin, np.argmin)]:
        values, indices = fn(x, dim, keepdim)
        np.testing.assert_array_equal(as_numpy(values), np_value(a, axis=dim, keepdims=keepdim))
        np.testing.assert_array_equal(as_numpy(indices), np_index(a, axis=dim, keepdims=keepdim))
        assert indices.dtype == torch.int64 and not indices.requires_grad
    np.testing.assert_array_equal(as_numpy(x.argmax(dim, keepdim)), np.argmax(a, axis=dim, keepdims=keepdim))
    assert x.argmax().item() == np.argmax(a) and x.argmin().item() == np.argmin(a)
    assert x.argmax(keepdim=True).shape == (1,) * x.dim()
    assert x.max().item() == a.max() and x.min().item() == a.min()
    if x.dim() > 1:
        np.testing.assert_array_equal(as_numpy(x.count_nonzero((0, -1))), np.count_nonzero(a, axis=(0, a.ndim - 1)))


def test_return_types_are_named_tuples(device):
    x = torch.tensor([[1.0, 5.0], [7.0, 2.0]], device=device)
    result = x.max(dim=1)
    assert isinstance(result, tuple) and isinstance(result, torch.return_types.max)
    values, indices = result
    assert values.tolist() == [5.0, 7.0] and result.indices.tolist() == [1, 0] and result[0] is values
    assert repr(result).startswith("torch.return_types.max(\nvalues=tensor(")
    low = torch.min(x, -1, keepdim=True)
    assert type(low).__name__ == "min" and low.values.shape == (2, 1)
    both = torch.aminmax(x, dim=0)
    assert both.min.tolist() == [1.0, 2.0] and both.max.tolist() == [7.0, 5.0]


def test_zero_dim_inputs(device):
    x = torch.tensor(3.0, device=device)
    values, indices = x.max(0)
    assert values.item() == 3.0 and indices.item() == 0 and values.shape == () == indices.shape
    assert x.argmax(-1).item() == 0 and x.argmax().item() == 0
    assert x.cumsum(0).item() == 3.0 and x.cumprod(-1).item() == 3.0 and x.prod(0).item() == 3.0
    assert x.sum(0).item() == 3.0 and x.amax().item() == 3.0 and x.std(0, correction=0).item() == 0.0
    with pytest.warns(UserWarning, match="degrees of freedom"):
        assert x.var().isnan().item()


def test_elementwise_max_min(device):
    a = torch.tensor([1.0, 5.0, 3.0], device=device)
    b = torch.tensor([4.0, 2.0, 3.0], device=device)
    assert torch.max(a, b).tolist() == [4.0, 5.0, 3.0]
    assert a.min(b).tolist() == [1.0, 2.0, 3.0]
    assert torch.max(a, other=b).tolist() == [4.0, 5.0, 3.0]


def test_logsumexp_is_stable(device):
    x = t64([[1000.0, 1000.0], [-1000.0, -math.inf]], device, requires_grad=True)
    out = x.logsumexp(1)
    np.testing.assert_allclose(as_numpy(out), [1000 + math.log(2), -1000.0])
    out.sum().backward()
    np.testing.assert_allclose(as_numpy(x.grad), [[0.5, 0.5], [1.0, 0.0]])
    assert torch.logsumexp(t64([-math.inf, -math.inf], device), 0).item() == -math.inf
    assert torch.logsumexp(torch.zeros(0, 2, device=device), 0).tolist() == [-math.inf, -math.inf]
    assert torch.logsumexp(torch.tensor([0, 0], device=device), 0).dtype == torch.float32


def test_var_std_corrections(device):
    x = t64([1.0, 2.0, 4.0], device)
    assert x.var().item() == pytest.approx(np.var([1, 2, 4], ddof=1))
    assert torch.var(x, unbiased=False).item() == pytest.approx(np.var([1, 2, 4]))
    assert torch.var(x, False).item() == pytest.approx(np.var([1, 2, 4]))
    assert torch.std(x, 0, True, True).shape == (1,)
    assert x.std(correction=2).item() == pytest.approx(math.sqrt(np.sum((np.array([1, 2, 4]) - 7 / 3) ** 2)))
    var, mean = torch.var_mean(x)
    assert var.item() == pytest.approx(np.var([1, 2, 4], ddof=1)) and mean.item() == pytest.approx(7 / 3)
    std, mean = torch.std_mean(x, dim=0, keepdim=True)
    assert std.shape == (1,) and mean.item() == pytest.approx(7 / 3)
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        assert x.var(correction=3).item() == math.inf
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        assert x.std(correction=5).item() == math.inf
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        assert math.isnan(t64([2.0], device).var().item())


# gradients ------------------------------------------------------------------------------------------
@fixture_ok
@given(data=st.data())
def test_smooth_reductions_gradcheck(device, data):
    x, dim, keepdim = data.draw(tensor_and_dims(device, max_side=3, requires_grad=True))
    axis = numpy_axis(dim, x.dim())
    for fn in [lambda t: t.sum(dim, keepdim), lambda t: t.mean(dim, keepdim), lambda t: t.logsumexp(axis, keepdim)]:
        check_gradients(fn, x)


@fixture_ok
@given(data=st.data())
def test_var_std_norm_gradcheck(device, data):
    # distinct values: std and norms have kinks where all values are equal / zero
    x, dim, keepdim = data.draw(tensor_and_dims(device, max_side=3, requires_grad=True, distinct=True))
    functions = [lambda t: t.norm(2, dim, keepdim), lambda t: t.norm(3, dim, keepdim),
                 lambda t: torch.norm(t, 1.5, dim, keepdim), lambda t: t.norm(0.5, dim, keepdim)]
    if math.prod(x.shape[d] for d in numpy_axis(dim, x.dim())) > 1:
        functions += [lambda t: t.var(dim, keepdim=keepdim), lambda t: t.std(dim, keepdim=keepdim, correction=0)]
    for fn in functions:
        check_gradients(fn, x)


@fixture_ok
@given(data=st.data())
def test_prod_and_scans_gradcheck(device, data):
    x, _, keepdim = data.draw(tensor_and_dims(device, max_side=3, requires_grad=True, away_from_zero=True))
    dim = data.draw(st.integers(-x.dim(), x.dim() - 1))
    for fn in [lambda t: t.prod(), lambda t: t.prod(dim, keepdim), lambda t: t.cumsum(dim), lambda t: t.cumprod(dim)]:
        check_gradients(fn, x)


@fixture_ok
@given(data=st.data())
def test_selecting_reductions_gradcheck(device, data):
    x, dim, keepdim = data.draw(tensor_and_dims(device, max_side=3, requires_grad=True, distinct=True))
    one = data.draw(st.integers(-x.dim(), x.dim() - 1))
    for fn in [lambda t: t.max(), lambda t: torch.min(t), lambda t: t.amax(dim if dim is not None else (), keepdim),
               lambda t: t.amin(dim if dim is not None else (), keepdim), lambda t: t.max(one, keepdim).values,
               lambda t: t.min(dim=one).values, lambda t: t.norm(math.inf, dim, keepdim),
               lambda t: t.norm(-math.inf, dim, keepdim), lambda t: t.norm(1, dim, keepdim)]:
        check_gradients(fn, x)


def test_broadcast_inputs(device):
    # stride-0 (expanded) inputs: every op sees the same element several times
    x = torch.tensor([[0.5], [-1.25], [2.0]], dtype=torch.float64, device=device, requires_grad=True)
    for fn in [lambda t: t.expand(3, 4).prod(0), lambda t: t.expand(3, 2).cumprod(1), lambda t: t.expand(3, 3).cumsum(0),
               lambda t: t.expand(3, 2).logsumexp(1), lambda t: t.expand(2, 3, 2).var((0, 2)),
               lambda t: t.t().expand(2, 3).amax(0), lambda t: (t.expand(3, 3) + t.t()).norm(dim=1)]:
        check_gradients(fn, x)
    assert x.expand(3, 2).amax(1).tolist() == [0.5, -1.25, 2.0]
    x.expand(3, 2).amax().backward()
    assert x.grad.tolist() == [[0.0], [0.0], [1.0]]  # two tied copies of one element: 0.5 + 0.5


def test_ties_share_the_gradient(device):
    x = t64([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]], device, requires_grad=True)
    x.amax(1).sum().backward()
    np.testing.assert_allclose(as_numpy(x.grad), [[0, 0.5, 0.5], [1 / 3, 1 / 3, 1 / 3]])
    x.grad = None
    x.max().backward()
    np.testing.assert_allclose(as_numpy(x.grad), [[0, 0.5, 0.5], [0, 0, 0]])
    x.grad = None
    x.amin((0, 1)).backward()
    np.testing.assert_allclose(as_numpy(x.grad), [[1, 0, 0], [0, 0, 0]])
    x.grad = None
    values, indices = x.max(1)
    assert indices.tolist() == [1, 0]
    values.sum().backward()  # max(dim) sends the gradient to the returned index only
    np.testing.assert_allclose(as_numpy(x.grad), [[0, 1, 0], [1, 0, 0]])
    y = t64([float("nan"), 1.0, float("nan")], device, requires_grad=True)
    y.max().backward()
    np.testing.assert_allclose(as_numpy(y.grad), [0.5, 0, 0.5])


@pytest.mark.parametrize("values", [
    [[2.0, 0.0, 3.0], [1.5, -2.0, 0.5]],  # one zero in a row
    [[0.0, 0.0, 3.0], [1.5, -2.0, 0.5]],  # two zeros in a row
    [[0.0, 0.0, 0.0], [0.0, 1.0, 0.5]],   # all zero, and one zero
])
def test_prod_and_cumprod_with_zeros(device, values):
    x = t64(values, device, requires_grad=True)
    for fn in [lambda t: t.prod(), lambda t: t.prod(1), lambda t: t.prod(0, keepdim=True), lambda t: t.cumprod(1),
               lambda t: t.cumprod(0), lambda t: t.t().prod(1), lambda t: t.t().cumprod(-1)]:
        check_gradients(fn, x)
    a = np.array(values)
    x.prod(1).sum().backward()
    others = [[np.prod(np.delete(row, i)) for i in range(len(row))] for row in a]
    np.testing.assert_allclose(as_numpy(x.grad), others)


def test_norm_gradient_at_zero_is_zero(device):
    x = torch.zeros(3, dtype=torch.float64, device=device, requires_grad=True)
    x.norm().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]
    y = torch.zeros(2, 2, dtype=torch.float64, device=device, requires_grad=True)
    (y.norm(dim=1).sum() + y.norm(3) + y.norm(0.5) + y.std()).backward()
    assert not y.grad.isnan().any().item() and y.grad.tolist() == [[0.0, 0.0], [0.0, 0.0]]


# errors ---------------------------------------------------------------------------------------------
def test_errors(device):
    empty = torch.zeros(0, 3, device=device)
    with pytest.raises(RuntimeError, match=r"max\(\): Expected reduction dim to be specified for input.numel\(\) == 0"):
        empty.max()
    with pytest.raises(IndexError, match=r"min\(\): Expected reduction dim 0 to have non-zero size"):
        empty.min(0)
    assert empty.max(1).values.shape == (0,)
    # PyTorch: IndexError for argmax/argmin without a dim and for an empty reduced dim; RuntimeError for
    # max/min/amax/amin without a dim
    with pytest.raises(IndexError, match=r"argmax\(\): Expected reduction dim to be specified for input.numel\(\) == 0"):
        empty.argmax()
    with pytest.raises(IndexError, match=r"argmin\(\): Expected reduction dim to be specified"):
        torch.zeros(0, device=device).argmin()
    with pytest.raises(IndexError, match=r"argmax\(\): Expected reduction dim 0 to have non-zero size"):
        empty.argmax(0)
    with pytest.raises(RuntimeError, match=r"amax\(\): Expected reduction dim to be specified for input.numel\(\) == 0. "
                                           r"Specify the reduction dim with the 'dim' argument."):
        empty.amax()
    with pytest.raises(RuntimeError, match=r"amin\(\): Expected reduction dim to be specified"):
        empty.amin()
    with pytest.raises(IndexError, match=r"amax\(\): Expected reduction dim 0 to have non-zero size"):
        empty.amax(0)
    assert empty.amax(1).shape == (0,)
    with pytest.raises(RuntimeError, match=r"amax\(\): Expected reduction dim to be specified"):
        empty.amax(())
    with pytest.raises(RuntimeError, match=r"aminmax\(\): cannot compute aminmax over an empty dimension"):
        empty.aminmax()
    with pytest.raises(IndexError, match=r"aminmax\(\): Expected reduction dim 0 to have non-zero size"):
        empty.aminmax(dim=0)
    ints = torch.tensor([1, 2], device=device)
    with pytest.raises(RuntimeError, match="mean\\(\\): could not infer output dtype"):
        ints.mean()
    with pytest.raises(RuntimeError, match="std and var only support floating point"):
        ints.var()
    with pytest.raises(RuntimeError, match="linalg.vector_norm: Expected a floating point"):
        ints.norm()
    with pytest.raises(TypeError, match="prod"):
        torch.ones(2, 2, device=device).prod((0, 1))
    with pytest.raises(IndexError, match="Dimension out of range"):
        torch.ones(2, device=device).sum(2)
    with pytest.raises(RuntimeError, match="dim 0 appears multiple times in the list of dims"):
        torch.ones(2, 2, device=device).amax((0, -2))


def test_second_derivatives_of_std_and_var_at_a_constant_input_match_pytorch():
    """PyTorch 2.13 (std_backward masks grad / (2 std) to 0 where std == 0): the std's gradient and second
    derivative at a constant input are 0, not NaN; var's second derivative is 2 / (n - correction) (I - 1/n);
    one element with correction 1 gives NaN for both."""
    for dtype in (torch.float32, torch.float64):
        for correction in (0, 1):
            x = torch.full((3,), 1.5, dtype=dtype, requires_grad=True)
            for fn in (torch.std, torch.var):
                (grad,) = torch.autograd.grad(fn(x, correction=correction), x, create_graph=True)
                (second,) = torch.autograd.grad(grad[0], x)
                assert grad.tolist() == [0.0, 0.0, 0.0]
                scale = 0.0 if fn is torch.std else 2 / (3 - correction)
                assert second.tolist() == pytest.approx([scale * 2 / 3, -scale / 3, -scale / 3], rel=1e-6)
    one = torch.tensor([2.0], dtype=torch.float64, requires_grad=True)
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        (grad,) = torch.autograd.grad(one.std(), one, create_graph=True)
    assert math.isnan(grad.item()) and math.isnan(torch.autograd.grad(grad.sum(), one)[0].item())


def test_std_second_derivative_at_zero_is_nan_where_the_incoming_gradient_depends_on_the_input():
    """PyTorch's std_backward, (grad / (2 std)).masked_fill_(std == 0, 0), differentiated again: the division's
    gradient for grad is 0 / 0. So the second derivative is NaN for whatever the incoming gradient depends on
    (fuzzer seeds 28593, 58746, 32865: std(x) / w, std(x) * x), while std(x) alone still gives 0 (above)."""
    x = torch.full((3,), 1.5, dtype=torch.float64, requires_grad=True)
    w = torch.tensor(2.0, dtype=torch.float64, requires_grad=True)
    gx, gw = torch.autograd.grad(torch.std(x, correction=0) / w, [x, w], create_graph=True)
    assert gx.tolist() == [0.0, 0.0, 0.0] and gw.item() == 0.0
    ggx, ggw = torch.autograd.grad(gx.sum() + gw, [x, w])
    assert ggx.tolist() == [0.0, 0.0, 0.0] and math.isnan(ggw.item())
    x = torch.tensor(-1.0, dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad(torch.std(x, dim=-1, correction=0) * x, x, create_graph=True)
    assert g.item() == 0.0 and math.isnan(torch.autograd.grad(g, x)[0].item())


@pytest.mark.parametrize(
    "fn, shape, expected, requires_grad",
    [  # PyTorch 2.13's gradient of .sum() under create_graph=True, and its requires_grad
        (lambda x: x.var(), (1,), [math.nan], False),
        (lambda x: x.var(), (), math.nan, False),
        (lambda x: x.var(0), (), math.nan, False),
        (lambda x: torch.var(x, None), (1,), [math.nan], False),
        (lambda x: x.var(correction=2), (2,), [math.inf, math.inf], False),
        (lambda x: x.var(correction=3), (2,), [math.inf, math.inf], False),
        (lambda x: torch.var_mean(x)[0], (1,), [math.nan], False),
        (lambda x: x.var((0,)), (1,), [math.nan], True),
        (lambda x: x.var(0, correction=3), (2,), [1.0, -1.0], True),
        (lambda x: x.var(correction=0), (1,), [0.0], True),
        (lambda x: x.std(), (1,), [math.nan], True),
        (lambda x: x.std(correction=3), (2,), [math.nan, math.nan], True),
        (lambda x: torch.std_mean(x)[0], (1,), [math.nan], True),
    ],
)
def test_var_gradient_with_no_degrees_of_freedom_matches_pytorch(fn, shape, expected, requires_grad):
    """PyTorch's var_backward: over everything (no dim, or 0-dim x) with N - correction <= 0 the gradient is the
    constant grad * where(x == mean, nan, inf), which does not require grad; with a dim, 2 / (N - correction)
    * grad * (x - mean) with the signed count."""
    x = torch.arange(1.0, 1.0 + math.prod(shape), dtype=torch.float64).reshape(shape).requires_grad_()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (grad,) = torch.autograd.grad(fn(x).sum(), x, create_graph=True)
    assert grad.requires_grad is requires_grad
    np.testing.assert_array_equal(np.array(grad.tolist()), np.array(expected))


# float32/float16 accuracy: numpy adds the rows of a leading axis one after another --------------------
def _tall_float32(device):
    """200,000 x 2 float32 values near 1000, and their float64 copy (the reference). Added row by row in
    float32, sum(0) was 0.2% off and var(0) 57x too large; PyTorch's cascade sum is within 1e-7."""
    values = (1000 + np.random.default_rng(0).random((200_000, 2))).astype(np.float32)
    return torch.from_numpy(values).to(device), values.astype(np.float64)


def _assert_close_rel(t, expected, rtol=1e-5):
    assert t.dtype == torch.float32 and t.shape == expected.shape
    np.testing.assert_allclose(as_numpy(t).astype(np.float64), expected, rtol=rtol)


def test_float32_reductions_over_many_rows_are_accurate(device):
    x, ref = _tall_float32(device)
    _assert_close_rel(x.sum(0), ref.sum(0))
    _assert_close_rel(x.sum(0, keepdim=True), ref.sum(0, keepdims=True))
    _assert_close_rel(x.mean(0), ref.mean(0))
    _assert_close_rel(x.reshape(400, 250, 4).sum((0, 1)), ref.reshape(400, 250, 4).sum((0, 1)))
    _assert_close_rel(x.t().sum(1), ref.sum(0))  # the same sum, as a (non-contiguous) last axis
    _assert_close_rel(x.sum(), ref.sum())
    rows = torch.tensor([0.1, 0.3], device=device).expand(200_000, 2)  # a broadcast view: stride 0 along the rows
    _assert_close_rel(rows.sum(0), np.float32([0.1, 0.3]).astype(np.float64) * 200_000)
    _assert_close_rel(x.var(0), ref.var(0, ddof=1))
    _assert_close_rel(x.std(0), ref.std(0, ddof=1))
    _assert_close_rel(x.norm(dim=0), np.sqrt((ref * ref).sum(0)))  # PyTorch's own norm is 6e-4 off here
    assert np.array_equal(as_numpy(x.double().sum(0)), ref.sum(0))  # float64: numpy's own sum, bit for bit


def test_float32_broadcast_gradients_over_many_rows_are_accurate(device):
    x, ref = _tall_float32(device)
    _assert_close_rel(x.sum_to_size(1, 2), ref.sum(0, keepdims=True))
    bias = torch.zeros(2, device=device, requires_grad=True)
    (x.detach() * 0 + bias).backward(x)  # the bias gradient: the incoming gradient summed over the rows
    _assert_close_rel(bias.grad, ref.sum(0))
    bias.grad = None
    (x.detach() + bias).mean().backward()  # the gradient of mean: one value, broadcast (stride 0), summed
    np.testing.assert_allclose(as_numpy(bias.grad), [0.5, 0.5], rtol=1e-5)
    running_mean = torch.zeros(2, device=device)
    torch.nn.functional.batch_norm(x, running_mean, None, training=True, momentum=1.0)
    _assert_close_rel(running_mean, ref.mean(0))


def test_float16_sums_accumulate_in_float32(device):
    """As PyTorch (values from it): added row by row in float16, 3000 ones would stop at 2048."""
    ones = torch.ones(3000, 2, dtype=torch.float16, device=device)
    assert ones.sum(0).tolist() == [3000.0, 3000.0] and ones.sum(0).dtype == torch.float16
    assert ones.sum().item() == 6000.0
    tenths = torch.full((4096,), 0.1, dtype=torch.float16, device=device)
    assert tenths.sum().item() == 409.5
    assert tenths.reshape(256, 16).sum(0)[0].item() == 25.59375
    assert tenths.mean().dtype == torch.float16 and tenths.mean().item() == pytest.approx(0.1, rel=1e-3)
    assert tenths.sum(dtype=torch.float32).dtype == torch.float32
    assert tenths.reshape(64, 64).var(0)[0].item() == 0.0


@pytest.mark.parametrize(
    "values, dim, correction, expected",
    [  # PyTorch 2.13: sum of squares / 0 is inf, or nan for 0 and for nan (an infinite x makes x - mean nan)
        ([math.inf], None, 2, math.nan),
        ([math.inf], 0, 1, math.nan),
        ([1.0, math.inf], None, 2, math.nan),
        ([math.nan], 0, 1, math.nan),
        ([1.0, 2.0], None, 2, math.inf),
        ([1.0], 0, 1, math.nan),
    ],
)
def test_var_std_without_degrees_of_freedom_of_non_finite_values_are_nan(values, dim, correction, expected):
    x = t64(values)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        var, std = torch.var(x, dim, correction=correction), torch.std(x, dim, correction=correction)
    np.testing.assert_array_equal(np.array([var.item(), std.item()]), np.array([expected, expected]))


@pytest.mark.parametrize(
    "values, first_order, create_graph",
    [  # PyTorch 2.13's cumprod_backward for the loss (cumprod(x, 0) * [1, 2, ...]).sum(): its first-order
        # formula for slices with zeros and its create_graph one differ where an inf meets a zero
        ([0.0, 0.0, 0.0, math.inf], [1.0, 0.0, 0.0, 0.0], [math.nan, math.nan, math.nan, 0.0]),
        ([2.0, 0.0, 3.0, math.inf], [1.0, math.inf, 0.0, 0.0], [math.nan, math.inf, math.nan, 0.0]),
        ([math.inf, 0.0, 2.0], [math.nan, math.inf, 0.0], [1.0, math.inf, math.nan]),
        ([3.0, 2.0, 0.0, 4.0, 5.0, 0.0, 6.0], [5.0, 6.0, 714.0, 0.0, 0.0, 0.0, 0.0],
         [5.0, 6.0, 714.0, 0.0, 0.0, 0.0, 0.0]),
        ([-math.inf], [1.0], [1.0]),  # one element: the gradient passes through
    ],
)
def test_cumprod_gradient_with_zeros_and_infinities_matches_pytorch(values, first_order, create_graph):
    x = t64(values, requires_grad=True)
    weights = torch.arange(1.0, 1.0 + len(values), dtype=torch.float64)
    (grad,) = torch.autograd.grad((x.cumprod(0) * weights).sum(), x)
    np.testing.assert_array_equal(np.array(grad.tolist()), np.array(first_order))
    (grad,) = torch.autograd.grad((x.cumprod(0) * weights).sum(), x, create_graph=True)
    np.testing.assert_array_equal(np.array(grad.tolist()), np.array(create_graph))
    scalar = torch.tensor(-math.inf, requires_grad=True)
    (grad,) = torch.autograd.grad(scalar.cumprod(0) * 3.0, scalar, create_graph=True)
    assert grad.item() == 3.0 and not grad.requires_grad


def test_cumprod_second_derivative_through_zeros_and_infinities_matches_pytorch():
    # PyTorch 2.13 composes the create_graph gradient of x[k] as prod(x[:k]) * cumprod(x[k+1:])
    weights = torch.arange(1.0, 5.0, dtype=torch.float64)
    for values, expected in [([2.0, 0.0, 3.0, math.inf], [math.nan, math.inf, math.inf, math.nan]),
                             ([1.0, math.inf, 0.0, 2.0], [math.nan, math.nan, math.inf, math.inf]),
                             ([0.0, 1.5, 2.0, 0.0], [45.0, 32.0, 18.0, 48.0])]:
        x = t64(values, requires_grad=True)
        (grad,) = torch.autograd.grad((x.cumprod(0) * weights).sum(), x, create_graph=True)
        (second,) = torch.autograd.grad((grad * weights.flip(0)).sum(), x)
        np.testing.assert_array_equal(np.array(second.tolist()), np.array(expected))


def test_max_and_amax_gradients_at_a_nan_result_match_pytorch():
    """PyTorch 2.13: max()/min()/median() (evenly_distribute_backward) give the gradient to the NaN elements and
    exactly 0 to the others; amax/amin (scale_grad_by_count, x == result) give NaN to the whole slice."""
    inf, nan = math.inf, math.nan
    for fn, weight, expected in [
        (torch.max, 1.0, [[0.0, 1.0], [0.0, 0.0]]),
        (torch.min, inf, [[0.0, inf], [0.0, 0.0]]),
        (torch.median, 1.0, [[0.0, 1.0], [0.0, 0.0]]),
        (torch.amax, 1.0, [[nan, nan], [nan, nan]]),
        (lambda t: torch.amax(t, 0), 1.0, [[0.0, nan], [1.0, nan]]),
        (lambda t: torch.amin(t, -1), inf, [[nan, nan], [inf, inf]]),
        (lambda t: torch.amax(t, 1), inf, [[nan, nan], [inf, inf]]),
    ]:
        x = t64([[1.0, nan], [2.0, 2.0]], requires_grad=True)
        (grad,) = torch.autograd.grad((fn(x) * weight).sum(), x)
        np.testing.assert_array_equal(np.array(grad.tolist()), np.array(expected))
    x = t64([3.0, 3.0, 1.0], requires_grad=True)
    assert torch.autograd.grad(torch.max(x) * inf, x)[0].tolist() == [inf, inf, 0.0]


def test_prod_gradient_of_an_empty_or_0d_input_matches_pytorch():
    # PyTorch 2.13's prod_backward: grad * (result / input) even when input is empty, so under create_graph
    # the gradient requires grad; a 0-d input passes grad through (inf gets 1, not inf / inf)
    x = torch.zeros((0, 1), dtype=torch.float64, requires_grad=True)
    (grad,) = torch.autograd.grad(x.prod(-1).sum(), x, create_graph=True)
    assert grad.shape == (0, 1) and grad.requires_grad
    scalar = torch.tensor(math.inf, dtype=torch.float64, requires_grad=True)
    for y in (scalar.prod(), scalar.prod(0)):
        (grad,) = torch.autograd.grad(y * 2.0, scalar, create_graph=True)
        assert grad.item() == 2.0 and not grad.requires_grad
    one = t64([math.inf], requires_grad=True)
    assert math.isnan(torch.autograd.grad(one.prod(), one)[0].item())


def test_norm_gradients_at_zero_and_nan_match_pytorch():
    """PyTorch 2.13's norm_backward: the second derivative is nan where the 2-norm (or a p < 2 norm) is 0, or
    where x is 0 for p < 1 (the norm has none there); an inf-norm at a NaN gives the NaN element sgn(nan) = 0."""
    nan = math.nan
    weights = t64([1.0, 2.0])
    for ord, values, grad_expected, second_expected in [
        (2, [0.0, 0.0], [0.0, 0.0], [nan, nan]),
        (-1, [0.0, 0.0], [0.0, 0.0], [nan, nan]),
        (0.5, [0.0, 1.0], [0.0, 1.0], [nan, 0.0]),
        (1, [0.0, 1.0], [0.0, 1.0], [0.0, 0.0]),
        (math.inf, [nan, 1.0], [0.0, 0.0], [0.0, 0.0]),
        (-math.inf, [nan, 1.0], [0.0, 0.0], [0.0, 0.0]),
    ]:
        x = t64(values, requires_grad=True)
        (grad,) = torch.autograd.grad(torch.linalg.vector_norm(x, ord=ord), x, create_graph=True)
        assert grad.tolist() == grad_expected
        (second,) = torch.autograd.grad((grad * weights).sum(), x)
        np.testing.assert_array_equal(np.array(second.tolist()), np.array(second_expected))
    x = torch.tensor(nan, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.grad(torch.linalg.vector_norm(x, ord=-math.inf, dim=0, keepdim=True), x)[0].item() == 0.0
    y = t64([-2.0, 1.0, 0.5], requires_grad=True)
    for ord in (2, 0.5, 1.5, 3, -1, math.inf):
        assert gradcheck(lambda t, o=ord: torch.linalg.vector_norm(t, ord=o), (y,))
        assert gradgradcheck(lambda t, o=ord: torch.linalg.vector_norm(t, ord=o), (y,))


def test_norm_of_one_element_per_output_is_its_magnitude():
    """PyTorch reduces nothing when each output has one element: the norm is |x| with no power that could
    overflow or underflow (fuzzer seed 248088), for any ord; with two elements the square overflows in both."""
    assert torch.norm(torch.tensor(19.0) ** 19.0).item() == pytest.approx(1.9784196e24, rel=1e-6)
    assert torch.linalg.vector_norm(torch.tensor([[1e-30], [2e-30]]), ord=3, dim=1).tolist() == pytest.approx(
        [1e-30, 2e-30], rel=1e-6)
    assert torch.norm(torch.tensor([2e25, 2e25])).item() == float("inf")
    x = torch.tensor([-3.0], requires_grad=True)
    torch.norm(x).backward()
    assert x.grad.tolist() == [-1.0]


def test_var_and_std_of_identical_values_are_exactly_zero():
    """PyTorch's Welford variance of identical values is exactly 0 (so std's gradient there is masked to 0);
    a two-pass variance around a rounded mean is not (fuzzer seed 501659)."""
    x = torch.zeros(3, 1, 4, dtype=torch.float64) + torch.tensor([-0.8, 0.8, -0.4, 1.4], dtype=torch.float64)
    assert torch.std(x, dim=(0, 1), correction=2).tolist() == [0.0] * 4
    y = torch.tensor([0.2], dtype=torch.float64, requires_grad=True)
    assert torch.std(y.expand(2, 3)).item() == pytest.approx(3.04e-17, rel=0.01)  # all elements: two passes
    torch.std(y.expand(2, 3)).backward()  # (seed 838105)
    assert y.grad.item() == pytest.approx(1.0954451150103321)
    w = torch.tensor([-0.8, 0.8], dtype=torch.float64, requires_grad=True)
    torch.std(w.expand(3, 2), dim=0).sum().backward()
    assert w.grad.tolist() == [0.0, 0.0]
