"""Sorting and order statistics (ops/sorting.py): values against numpy, gradients by gradcheck/gradgradcheck."""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minitorch as torch
from minitorch.autograd import gradcheck, gradgradcheck
from minitorch.testing.strategies import shapes, tensors

fixture_ok = settings(suppress_health_check=[HealthCheck.function_scoped_fixture])


def as_numpy(t):
    return np.asarray(t.detach().cpu())


def check_gradients(fn, x) -> None:
    """First and second derivatives of ``fn`` at ``x`` against finite differences."""
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


@st.composite
def tensor_and_dim(draw, device="cpu", distinct=False, requires_grad=False, dtype=torch.float64, max_side=4):
    x = draw(tensors(shapes(1, 3, 1, max_side), dtype=dtype, device=device, requires_grad=requires_grad,
                     min_value=-3, max_value=3))
    if distinct:  # tie-free values written through the (possibly strided) view
        order = draw(st.permutations(range(x.numel())))
        as_numpy(x)[...] = (np.array(order, dtype=np.float64) * 0.731 - 1.5).reshape(x.shape)
    return x, draw(st.integers(-x.dim(), x.dim() - 1))


def stable_descending(a, axis):
    """numpy's stable argsort for descending order: ties keep their input order."""
    n = a.shape[axis]
    return np.flip(n - 1 - np.argsort(np.flip(a, axis), axis=axis, kind="stable"), axis)


@fixture_ok
@given(data=st.data())
def test_sort_argsort_msort_values(device, data):
    dtype = data.draw(st.sampled_from([torch.float64, torch.int32]))
    x, dim = data.draw(tensor_and_dim(device, dtype=dtype))
    a = as_numpy(x)
    descending = data.draw(st.booleans())
    values, indices = torch.sort(x, dim, descending=descending, stable=True)
    expected = stable_descending(a, dim) if descending else np.argsort(a, axis=dim, kind="stable")
    np.testing.assert_array_equal(as_numpy(indices), expected)
    np.testing.assert_array_equal(as_numpy(values), np.take_along_axis(a, expected, dim))
    assert indices.dtype == torch.int64 and values.dtype == x.dtype
    np.testing.assert_array_equal(as_numpy(x.argsort(dim, descending, stable=True)), expected)
    np.testing.assert_array_equal(as_numpy(x.msort()), np.sort(a, axis=0))


@fixture_ok
@given(data=st.data())
def test_topk_kthvalue_median_values(device, data):
    x, dim = data.draw(tensor_and_dim(device))
    a = as_numpy(x)
    n = a.shape[dim]
    k = data.draw(st.integers(0, n))
    largest = data.draw(st.booleans())
    values, indices = x.topk(k, dim, largest)
    order = stable_descending(a, dim) if largest else np.argsort(a, axis=dim, kind="stable")
    expected = np.take(order, range(k), axis=dim)
    np.testing.assert_array_equal(as_numpy(indices), expected)
    np.testing.assert_array_equal(as_numpy(values), np.take_along_axis(a, expected, dim))
    keepdim = data.draw(st.booleans())
    kth = data.draw(st.integers(1, n))
    values, indices = torch.kthvalue(x, kth, dim, keepdim)
    expected = np.take(np.sort(a, axis=dim), [kth - 1], axis=dim)  # keepdim layout
    values, indices = as_numpy(values), as_numpy(indices)
    if not keepdim:
        values, indices = np.expand_dims(values, dim), np.expand_dims(indices, dim)
    np.testing.assert_array_equal(values, expected)
    np.testing.assert_array_equal(np.take_along_axis(a, indices, dim), expected)
    lower_median = np.take(np.sort(a, axis=dim), [(n - 1) // 2], axis=dim)
    values, indices = x.median(dim, keepdim=True)
    np.testing.assert_array_equal(as_numpy(values), lower_median)
    np.testing.assert_array_equal(np.take_along_axis(a, as_numpy(indices), dim), lower_median)
    assert x.median(dim).values.shape == np.sum(a, axis=dim).shape
    assert x.median().item() == np.sort(a.reshape(-1))[(a.size - 1) // 2]


@fixture_ok
@given(data=st.data())
def test_mode_values(device, data):
    x = data.draw(tensors(shapes(1, 3, 1, 5), dtype=torch.int64, device=device, min_value=0, max_value=2))
    dim = data.draw(st.integers(-x.dim(), x.dim() - 1))
    keepdim = data.draw(st.booleans())
    values, indices = x.mode(dim, keepdim)
    a = np.moveaxis(as_numpy(x), dim, -1)
    got_values = as_numpy(values) if not keepdim else np.squeeze(as_numpy(values), dim)
    got_indices = as_numpy(indices) if not keepdim else np.squeeze(as_numpy(indices), dim)
    for position in np.ndindex(a.shape[:-1]):
        row = list(a[position])
        best = min(set(row), key=lambda v: (-row.count(v), v))  # most frequent, then smallest
        assert got_values[position] == best
        assert got_indices[position] == len(row) - 1 - row[::-1].index(best)  # its last occurrence


def test_sort_is_stable_and_puts_nan_last(device):
    x = torch.tensor([2.0, 1.0, float("nan"), 2.0, 1.0], device=device)
    values, indices = x.sort(stable=True)
    assert indices.tolist() == [1, 4, 0, 3, 2] and math.isnan(values[-1].item())
    values, indices = x.sort(descending=True, stable=True)
    assert indices.tolist() == [2, 0, 3, 1, 4] and math.isnan(values[0].item())
    assert x.topk(2).indices.tolist() == [2, 0]
    median = torch.tensor([[3.0, float("nan"), 1.0, float("nan")], [4.0, 1.0, 2.0, 3.0]], device=device).median(1)
    assert math.isnan(median.values[0].item()) and median.indices.tolist() == [1, 2]
    assert median.values[1].item() == 2.0
    assert math.isnan(x.median().item()) and math.isnan(torch.zeros(0, device=device).median().item())


def test_return_types_and_zero_dim(device):
    result = torch.tensor([[3, 1, 2]], device=device).sort()
    assert isinstance(result, torch.return_types.sort) and repr(result).startswith("torch.return_types.sort(\n")
    values, indices = result
    assert values.tolist() == [[1, 2, 3]] and indices.tolist() == [[1, 2, 0]]
    assert isinstance(torch.topk(torch.arange(4, device=device), 2), torch.return_types.topk)
    scalar = torch.tensor(5.0, device=device)
    assert scalar.sort().values.item() == 5.0 and scalar.sort(0).indices.item() == 0
    assert scalar.topk(1).values.item() == 5.0 and scalar.median(0).indices.item() == 0
    assert scalar.argsort().shape == () and scalar.kthvalue(1).values.item() == 5.0


def test_unique(device):
    x = torch.tensor([[3, 1, 2], [3, 1, 5]], device=device)
    assert torch.unique(x).tolist() == [1, 2, 3, 5]
    values, inverse, counts = torch.unique(x, return_inverse=True, return_counts=True)
    assert inverse.tolist() == [[2, 0, 1], [2, 0, 3]] and counts.tolist() == [2, 1, 2, 1]
    assert inverse.dtype == torch.int64 and counts.dtype == torch.int64
    values, counts = x.unique(return_counts=True)
    assert counts.tolist() == [2, 1, 2, 1]
    rows = torch.tensor([[1, 2], [0, 5], [1, 2]], device=device)
    values, inverse = torch.unique(rows, dim=0, return_inverse=True)
    assert values.tolist() == [[0, 5], [1, 2]] and inverse.tolist() == [1, 0, 1]
    columns, counts = torch.unique(rows, dim=-1, return_counts=True)
    assert columns.tolist() == [[1, 2], [0, 5], [1, 2]] and counts.tolist() == [1, 1]
    floats = torch.tensor([0.5, -1.0, 0.5], device=device, requires_grad=True)
    out = floats.unique()
    assert out.tolist() == [-1.0, 0.5] and not out.requires_grad


@fixture_ok
@given(data=st.data())
def test_sort_topk_kthvalue_median_gradcheck(device, data):
    x, dim = data.draw(tensor_and_dim(device, distinct=True, requires_grad=True, max_side=3))
    n = x.shape[dim]
    k = data.draw(st.integers(1, n))
    descending = data.draw(st.booleans())
    for fn in [lambda t: t.sort(dim, descending).values, lambda t: t.topk(k, dim, largest=descending).values,
               lambda t: t.kthvalue(k, dim, keepdim=descending).values, lambda t: t.median(dim).values,
               lambda t: t.median(), lambda t: t.msort(), lambda t: t.mode(dim, keepdim=descending).values]:
        check_gradients(fn, x)


def test_gradient_goes_to_the_selected_elements(device):
    x = torch.tensor([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]], dtype=torch.float64, device=device, requires_grad=True)
    weights = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, device=device)
    (x.sort(1).values * weights).sum().backward()
    assert x.grad.tolist() == [[3.0, 1.0, 2.0], [1.0, 3.0, 2.0]]
    x.grad = None
    x.topk(1, dim=0).values.sum().backward()
    assert x.grad.tolist() == [[1.0, 0.0, 0.0], [0.0, 1.0, 1.0]]
    x.grad = None
    ties = torch.tensor([1.0, 2.0, 2.0, 3.0], dtype=torch.float64, device=device, requires_grad=True)
    ties.median().backward()  # median() of all elements shares the gradient among ties, as in PyTorch
    assert ties.grad.tolist() == [0.0, 0.5, 0.5, 0.0]


def test_errors(device):
    x = torch.ones(2, 3, device=device)
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        x.topk(4)
    with pytest.raises(RuntimeError, match="kthvalue\\(\\): selected number k out of range"):
        x.kthvalue(0)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.sort(2)
    with pytest.raises(IndexError, match="median\\(\\): Expected reduction dim 1 to have non-zero size"):
        torch.zeros(2, 0, device=device).median(1)
    with pytest.raises(IndexError, match="kthvalue\\(\\): Expected reduction dim 0 to have non-zero size"):
        torch.zeros(0, device=device).kthvalue(1)




def test_topk_of_a_0dim_tensor_with_k_0():
    # PyTorch 2.13: a 0-dim input gives its element back for k = 0 as for k = 1
    values, indices = torch.topk(torch.tensor(2.0), 0)
    assert values.shape == () and values.item() == 2.0 and indices.item() == 0
    with pytest.raises(RuntimeError, match="k out of range"):
        torch.topk(torch.tensor(2.0), 2)
