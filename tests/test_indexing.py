"""Indexing by tensors: advanced ``t[index]``, index_put, gather/scatter(+reduce), index_* along a dim,
masks, take/take_along_dim, nonzero/argwhere/where(cond). Values against numpy's fancy indexing
(same semantics, except where PyTorch selects integer scalars first), gradients by gradcheck in float64."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch as torch
from minitorch.autograd import gradcheck, gradgradcheck
from minitorch.testing.strategies import shapes, tensors


def check(fn, *inputs, twice=True):
    """gradcheck and (when ``twice``) gradgradcheck of ``fn`` at float64 ``inputs``."""
    assert gradcheck(fn, inputs)
    if twice and fn(*inputs).numel():  # an empty grad_output gets numpy's stride 0, which gradcheck refuses
        assert gradgradcheck(fn, inputs)


def arr(t):
    return np.asarray(t.detach().cpu())


def leaf(shape, device, seed=0):
    values = np.random.default_rng(seed).standard_normal(shape)
    return torch.tensor(values, dtype=torch.float64, device=device, requires_grad=True)


# advanced indexing: values ----------------------------------------------------------------------

A = np.arange(60.0).reshape(3, 4, 5)
NUMPY_COMPATIBLE = [
    [0, 2, 2],
    ([0, 1], [3, 2]),
    (slice(None), [0, 3]),
    (slice(None), [[0, 1], [3, 3]], slice(1, 4)),
    ([0, 2], slice(None), [1, 4]),  # separated by a slice: index dims go first
    (Ellipsis, [4, -1]),
    (None, [1], slice(None), [[0], [2]]),
    ([-1, -3],),
    (slice(None, None, 2), [0, 0, 1]),
    ([],),
    (True,),
    (False,),
    (A > 30,),
    (A[:, :, 0] > 20,),
    (slice(None), A[0] > 7),
    (A[:, 0, 0] > 0, [1, 2]),
    (slice(1, None), Ellipsis, [True, False, True, False, True]),
    (torch.tensor([[2, 0]]), torch.tensor([1]), None),
    (np.array([1, 0]),),
]


@pytest.mark.parametrize("index", NUMPY_COMPATIBLE, ids=range(len(NUMPY_COMPATIBLE)))
def test_advanced_index_matches_numpy(device, index):
    x = torch.tensor(A, device=device)
    np_index = tuple(arr(i) if isinstance(i, torch.Tensor) else i for i in index) if isinstance(index, tuple) else index
    got = x[index]
    expected = A[np_index]
    assert got.shape == expected.shape
    np.testing.assert_array_equal(arr(got), expected)


def test_integer_scalars_select_first_as_in_pytorch(device):
    # numpy treats the 0 as an advanced index (result (2, 4)); PyTorch selects it first: (4, 2)
    x = torch.tensor(A, device=device)
    got = x[0, :, [1, 3]]
    assert got.shape == (4, 2)
    np.testing.assert_array_equal(arr(got), A[0][:, [1, 3]])
    assert x[torch.tensor(1), [0, 2]].shape == (2, 5)


def test_list_of_sequences_is_a_tuple_index(device):
    x = torch.tensor(A, device=device)
    np.testing.assert_array_equal(arr(x[[[0, 1], [1, 2]]]), A[[0, 1], [1, 2]])
    np.testing.assert_array_equal(arr(x[[torch.tensor([0, 2]), slice(None), 1]]), A[[0, 2], :, 1])
    assert x[[0, 1]].shape == (2, 4, 5)


def test_advanced_index_is_a_copy(device):
    x = torch.tensor(A, device=device)
    y = x[[0, 1]]
    assert y.data_ptr() != x.data_ptr() and y._base is None


def test_index_tensor_on_cpu_for_any_device(device):
    x = torch.tensor(A, device=device)
    assert x[torch.tensor([2, 0])].device == x.device


@given(st.data())
def test_advanced_index_random(data):
    x = data.draw(tensors(shapes(1, 3, 1, 4), requires_grad=True))
    n_index = data.draw(st.integers(1, x.dim()))
    skip = int(x.dim() > n_index and data.draw(st.booleans()))  # a leading slice before the index tensors
    index_shape = data.draw(shapes(0, 2, 1, 3))
    count = int(np.prod(index_shape))
    index = (slice(None),) * skip + tuple(
        torch.tensor(data.draw(st.lists(st.integers(-n, n - 1), min_size=count, max_size=count)),
                     dtype=torch.int64).reshape(index_shape)
        for n in x.shape[skip:skip + n_index]
    )
    got = x[index]
    np.testing.assert_array_equal(arr(got), arr(x)[tuple(arr(i) if isinstance(i, torch.Tensor) else i for i in index)])
    check(lambda x: x[index], x)


@given(tensors(shapes(1, 3, 1, 4), requires_grad=True), st.data())
def test_mask_index_random(x, data):
    mask = torch.tensor(data.draw(st.lists(st.booleans(), min_size=x.numel(), max_size=x.numel()))).reshape(x.shape)
    np.testing.assert_array_equal(arr(x[mask]), arr(x)[arr(mask)])
    check(lambda x: x[mask], x)


# advanced indexing: gradients --------------------------------------------------------------------


def test_sp10_repeated_indices_add_up(device):
    x = torch.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    x[[0, 0, 1]].sum().backward()
    assert x.grad.tolist() == [2.0, 1.0, 0.0]


def test_repeated_indices_weighted(device):
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], device=device, requires_grad=True)
    y = x[[1, 1, 0], [0, 0, 1]]
    (y * torch.tensor([1.0, 10.0, 100.0], device=device)).sum().backward()
    assert x.grad.tolist() == [[0.0, 100.0], [11.0, 0.0]]


def test_advanced_index_double_backward(device):
    x = leaf((3, 4), device)
    index = ([0, 0, 2], slice(1, None))
    check(lambda x: x[index] ** 2, x)
    (g,) = torch.autograd.grad((x[[1, 1]] ** 2).sum(), x, create_graph=True)
    (gg,) = torch.autograd.grad(g.sum(), x)
    expected = np.zeros((3, 4))
    expected[1] = 4.0  # d/dx of 2 * (2x) for the doubly picked row
    np.testing.assert_allclose(arr(gg), expected)


def test_advanced_index_non_contiguous_input(device):
    x = leaf((4, 6), device)
    check(lambda x: x.t()[[0, 5, 0]][:, torch.tensor([True, False, True, True])], x)
    check(lambda x: x[::2, 1::2][[1, 0, 1], [2, 2, 0]], x)


# advanced indexing: errors ------------------------------------------------------------------------


def test_index_errors(device):
    x = torch.zeros(3, 4, device=device)
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0 with size 3"):
        x[[5]]
    with pytest.raises(IndexError, match="index -4 is out of bounds for dimension 0 with size 3"):
        x[[-4, 0]]
    with pytest.raises(IndexError, match="index 4 is out of bounds for dimension 1 with size 4"):
        x[:, [4]]
    with pytest.raises(IndexError, match="tensors used as indices must be long, int, byte or bool tensors"):
        x[torch.tensor([1.0])]
    with pytest.raises(IndexError, match=r"shape mismatch: indexing tensors could not be broadcast together with shapes \[2\], \[3\]"):
        x[[0, 1], [0, 1, 2]]
    with pytest.raises(IndexError, match=r"The shape of the mask \[2\] at index 0 does not match"):
        x[torch.tensor([True, False])]
    with pytest.raises(IndexError, match="too many indices for tensor of dimension 2"):
        x[[0], 0, 0]
    with pytest.raises(IndexError, match="single ellipsis"):
        x[..., [0], ...]
    with pytest.raises(ValueError, match="step must be greater than zero"):
        x[::-1, [0]]
    with pytest.raises(IndexError, match="only integers, slices"):
        x[[0], "a"]
    assert x.shape == (3, 4)


# index_put ----------------------------------------------------------------------------------------


def test_index_put(device):
    x = torch.zeros(3, 2, device=device)
    i = torch.tensor([0, 0, 2], device=device)
    v = torch.tensor([1.0, 2.0, 3.0], device=device)
    expected = np.zeros((3, 2))
    np.add.at(expected, (arr(i), 1), arr(v))
    np.testing.assert_array_equal(arr(x.index_put((i, torch.tensor(1)), v, accumulate=True)), expected)
    assert x.index_put((torch.tensor([1]),), torch.tensor(5.0, device=device)).tolist() == [[0, 0], [5, 5], [0, 0]]
    assert x.tolist() == [[0, 0]] * 3  # out of place
    mask = torch.tensor([True, False, True], device=device)
    assert torch.index_put(x, (mask,), torch.tensor(7.0, device=device)).tolist() == [[7, 7], [0, 0], [7, 7]]
    with pytest.raises(RuntimeError, match="Index put requires the source and destination dtypes match"):
        x.index_put((i,), torch.ones(1, dtype=torch.float64, device=device))


def test_index_put_grad(device):
    x, v = leaf((3, 4), device), leaf((2, 1), device, seed=1)
    i, j = torch.tensor([2, 0]), torch.tensor([[1], [1]])
    check(lambda x, v: x.index_put((i, j), v * x[0, 0], accumulate=True), x, v)
    check(lambda x, v: x.t().index_put((torch.tensor([0, 3]),), v), x, v)


# gather / scatter ---------------------------------------------------------------------------------


@given(st.data())
def test_gather_scatter_random(data):
    x = data.draw(tensors(shapes(1, 3, 1, 4), requires_grad=True))
    dim = data.draw(st.integers(-x.dim(), x.dim() - 1))
    axis = dim % x.dim()
    index_shape = tuple(data.draw(st.integers(1, 4)) if d == axis else data.draw(st.integers(1, n))
                        for d, n in enumerate(x.shape))
    count = int(np.prod(index_shape))
    index = torch.tensor(data.draw(st.lists(st.integers(0, x.shape[dim] - 1), min_size=count, max_size=count)))
    index = index.reshape(index_shape)
    # gather reads x at these coordinates: index on ``dim``, the position itself on every other dim
    where = tuple(arr(index) if d == axis else np.indices(index_shape)[d] for d in range(x.dim()))
    np.testing.assert_array_equal(arr(x.gather(dim, index)), arr(x)[where])
    check(lambda x: torch.gather(x, dim, index), x)
    src = data.draw(tensors(index_shape, requires_grad=True))
    expected = arr(x).copy()
    np.add.at(expected, where, arr(src))
    np.testing.assert_allclose(arr(x.scatter_add(dim, index, src)), expected)
    check(lambda x, s: x.scatter_add(dim, index, s), x, src)
    if len(set(zip(*(w.ravel() for w in where)))) == count:  # scatter's gradient needs distinct targets
        expected = arr(x).copy()
        expected[where] = arr(src)
        np.testing.assert_array_equal(arr(x.scatter(dim, index, src)), expected)
        check(lambda x, s: x.scatter(dim, index, s), x, src)


def test_scatter_values(device):
    x = torch.zeros(2, 4, device=device)
    index = torch.tensor([[3, 0], [1, 1]], device=device)
    src = torch.tensor([[1.0, 2.0, 9.0], [3.0, 4.0, 9.0]], device=device)
    assert x.scatter(1, torch.tensor([[3, 0], [1, 2]], device=device), src).tolist() == [[2, 0, 0, 1], [0, 3, 4, 0]]
    assert x.scatter(1, index, value=5.0).tolist() == [[5, 0, 0, 5], [0, 5, 0, 0]]
    assert x.scatter(1, index, src, reduce="add").tolist() == [[2, 0, 0, 1], [0, 7, 0, 0]]
    y = torch.full((2, 4), 2.0, device=device)
    assert y.scatter(1, index, src, reduce="multiply").tolist() == [[4, 2, 2, 2], [2, 24, 2, 2]]


def test_gather_scatter_errors(device):
    x = torch.zeros(2, 3, device=device)
    with pytest.raises(RuntimeError, match="index -1 is out of bounds for dimension 1 with size 3"):
        x.gather(1, torch.tensor([[-1]], device=device))
    with pytest.raises(RuntimeError, match="index 3 is out of bounds for dimension 1 with size 3"):
        x.scatter_add(1, torch.tensor([[3]], device=device), torch.ones(1, 1, device=device))
    with pytest.raises(RuntimeError, match=r"gather\(\): Expected dtype int32/int64 for index"):
        x.gather(1, torch.tensor([[0]], dtype=torch.int16, device=device))
    with pytest.raises(RuntimeError, match=r"scatter\(\): Expected dtype int32/int64 for index"):
        x.scatter(1, torch.tensor([[0.0]], device=device), 1.0)
    with pytest.raises(RuntimeError, match="Index tensor must have the same number of dimensions as input tensor"):
        x.gather(1, torch.tensor([0], device=device))
    with pytest.raises(RuntimeError, match=r"Size does not match at dimension 0 expected index \[3, 1\]"):
        x.gather(1, torch.zeros(3, 1, dtype=torch.int64, device=device))
    with pytest.raises(RuntimeError, match="to be smaller size than src"):
        x.scatter(1, torch.zeros(2, 2, dtype=torch.int64, device=device), torch.ones(2, 1, device=device))


def _scatter_reduce_numpy(x, dim, index, src, reduce, include_self):
    out = x.copy()
    groups = {}
    for pos in np.ndindex(*index.shape):
        target = list(pos)
        target[dim] = index[pos]
        groups.setdefault(tuple(target), []).append(src[pos])
    fn = {"sum": np.sum, "prod": np.prod, "mean": np.mean, "amax": np.max, "amin": np.min}[reduce]
    for target, values in groups.items():
        out[target] = fn(values + [x[target]] if include_self else values)
    return out


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce(device, reduce, include_self):
    x = torch.tensor([[1.0, -2.0, 0.0, 4.0], [5.0, 0.5, 2.0, -1.0], [2.0, 2.0, 3.0, 1.0]], dtype=torch.float64,
                     device=device, requires_grad=True)
    index = torch.tensor([[0, 1, 0, 1], [2, 2, 0, 0]], device=device)
    src = torch.tensor([[3.0, -1.0, 0.0, 2.0], [1.5, 2.5, -3.0, 0.25], [9.0, 9.0, 9.0, 9.0]], dtype=torch.float64,
                       device=device, requires_grad=True)
    got = x.scatter_reduce(0, index, src, reduce, include_self=include_self)
    expected = _scatter_reduce_numpy(arr(x), 0, arr(index), arr(src), reduce, include_self)
    np.testing.assert_allclose(arr(got), expected)
    check(lambda x, s: x.scatter_reduce(0, index, s, reduce, include_self=include_self), x, src,
          twice=reduce in ("sum", "mean"))


def test_scatter_reduce_prod_with_zeros():
    x = torch.tensor([0.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    src = torch.tensor([4.0, 0.0, 5.0, 0.0], dtype=torch.float64, requires_grad=True)
    index = torch.tensor([0, 1, 2, 2])
    check(lambda x, s: x.scatter_reduce(0, index, s, "prod"), x, src, twice=False)
    out = x.scatter_reduce(0, index, src, "prod")
    out.sum().backward()
    assert x.grad.tolist() == [4.0, 0.0, 0.0] and src.grad.tolist() == [0.0, 2.0, 0.0, 15.0]


def test_scatter_reduce_errors(device):
    x = torch.zeros(3, device=device)
    with pytest.raises(RuntimeError, match="reduce argument must be either sum, prod, mean, amax or amin"):
        x.scatter_reduce(0, torch.tensor([0], device=device), torch.ones(1, device=device), "max")


# along one dim ------------------------------------------------------------------------------------


@given(tensors(shapes(1, 3, 1, 4), requires_grad=True), st.data())
def test_index_select_and_index_add_random(x, data):
    dim = data.draw(st.integers(-x.dim(), x.dim() - 1))
    n = x.shape[dim]
    index = torch.tensor(data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=5)))
    np.testing.assert_array_equal(arr(x.index_select(dim, index)), np.take(arr(x), arr(index), axis=dim))
    check(lambda x: torch.index_select(x, dim, index), x)
    shape = list(x.shape)
    shape[dim] = index.numel()
    source = data.draw(tensors(tuple(shape), requires_grad=True))
    expected = arr(x).copy()
    np.add.at(expected, (slice(None),) * (dim % x.dim()) + (arr(index),), 2.5 * arr(source))
    np.testing.assert_allclose(arr(x.index_add(dim, index, source, alpha=2.5)), expected)
    check(lambda x, s: x.index_add(dim, index, s, alpha=2.5), x, source)


def test_index_fill_and_copy(device):
    x = torch.arange(12.0, device=device).reshape(3, 4)
    index = torch.tensor([0, -1], device=device)
    expected = np.arange(12.0).reshape(3, 4)
    expected[:, [0, -1]] = -1
    np.testing.assert_array_equal(arr(x.index_fill(1, index, -1)), expected)
    np.testing.assert_array_equal(arr(x.index_fill(1, index, torch.tensor(-1.0, device=device))), expected)
    source = torch.tensor([[10.0, 11.0, 12.0, 13.0], [20.0, 21.0, 22.0, 23.0]], device=device)
    expected = np.arange(12.0).reshape(3, 4)
    expected[[2, 0]] = arr(source)
    np.testing.assert_array_equal(arr(x.index_copy(0, torch.tensor([2, 0], device=device), source)), expected)


def test_index_fill_and_copy_grads(device):
    x, value, source = leaf((3, 4), device), leaf((), device, 1), leaf((3, 2), device, 2)
    index = torch.tensor([2, 0, 2])
    check(lambda x: x.t().index_fill(0, index, 3.0), x)
    check(lambda x, v: x.index_fill(1, index, v * v), x, value)
    check(lambda x, s: x.index_copy(1, torch.tensor([3, 1]), s), x, source)


def test_index_dim_errors(device):
    x = torch.zeros(3, 4, device=device)
    with pytest.raises(IndexError, match="index out of range in self"):
        x.index_select(0, torch.tensor([3], device=device))
    with pytest.raises(IndexError, match="index out of range in self"):
        x.index_select(0, torch.tensor([-1], device=device))
    with pytest.raises(RuntimeError, match="Expected dtype int32 or int64 for index"):
        x.index_select(0, torch.tensor([0.0], device=device))
    with pytest.raises(IndexError, match="Index is supposed to be a vector"):
        x.index_select(0, torch.zeros(1, 1, dtype=torch.int64, device=device))
    with pytest.raises(RuntimeError, match=r"Number of indices \(1\) should be equal to source.size\(dim\): \(2\)"):
        x.index_add(0, torch.tensor([0], device=device), torch.ones(2, 4, device=device))
    with pytest.raises(RuntimeError, match=r"index_add\(\): source of shape \[1, 5\]"):
        x.index_add(0, torch.tensor([0], device=device), torch.ones(1, 5, device=device))
    with pytest.raises(RuntimeError, match="must have the same scalar type"):
        x.index_add(0, torch.tensor([0], device=device), torch.ones(1, 4, dtype=torch.float64, device=device))
    with pytest.raises(IndexError, match="index 4 is out of bounds for dimension 1 with size 4"):
        x.index_fill(1, torch.tensor([4], device=device), 0.0)
    with pytest.raises(RuntimeError, match="0-dimensional value tensor"):
        x.index_fill(1, torch.tensor([0], device=device), torch.ones(2, device=device))


# masks --------------------------------------------------------------------------------------------


@given(tensors(shapes(1, 3, 1, 4), requires_grad=True), st.data())
def test_masked_fill_and_select_broadcast(x, data):
    from minitorch.testing.strategies import broadcastable_shapes

    mask_shape = data.draw(broadcastable_shapes(x.shape, max_dims=x.dim()))
    mask = data.draw(tensors(mask_shape, dtype=torch.bool, layout="contiguous"))
    expected = np.where(arr(mask), -2.0, arr(x))
    np.testing.assert_array_equal(arr(x.masked_fill(mask, -2.0)), expected)
    np.testing.assert_array_equal(arr(torch.masked_select(x, mask)), arr(x)[np.broadcast_to(arr(mask), x.shape)])
    check(lambda x: x.masked_fill(mask, 0.5), x)
    check(lambda x: x.masked_select(mask), x)
    value = torch.tensor(1.5, dtype=torch.float64, requires_grad=True)
    check(lambda x, v: x.masked_fill(mask, v), x, value)


def test_masked_select_broadcasts_input(device):
    x = torch.tensor([1.0, 2.0, 3.0], device=device)
    mask = torch.tensor([[True, False, True], [False, True, False]], device=device)
    assert torch.masked_select(x, mask).tolist() == [1.0, 3.0, 2.0]
    with pytest.raises(RuntimeError, match="expected BoolTensor for mask"):
        x.masked_select(torch.tensor([1, 0, 1], device=device))


def test_masked_fill_errors(device):
    x = torch.zeros(2, 3, device=device)
    with pytest.raises(RuntimeError, match="only supports boolean masks"):
        x.masked_fill(torch.ones(2, 3, device=device), 1.0)
    with pytest.raises(RuntimeError, match="0-dimensional value tensor"):
        x.masked_fill(torch.ones(2, 3, dtype=torch.bool, device=device), torch.ones(2, device=device))


def test_masked_scatter(device):
    x = torch.zeros(2, 3, device=device)
    mask = torch.tensor([True, False, True], device=device)
    source = torch.arange(1.0, 7.0, device=device).reshape(2, 3)
    assert x.masked_scatter(mask, source).tolist() == [[1, 0, 2], [3, 0, 4]]
    with pytest.raises(RuntimeError, match="masked_scatter: expected source to have at least 4 elements"):
        x.masked_scatter(mask, torch.ones(3, device=device))
    xs, s = leaf((2, 3), device), leaf((2, 3), device, 1)
    check(lambda x, s: x.masked_scatter(mask, s), xs, s)


# take, take_along_dim, put -----------------------------------------------------------------------


def test_take_and_put(device):
    x = torch.tensor(A, device=device)
    index = torch.tensor([[0, 59], [-1, 7]], device=device)
    np.testing.assert_array_equal(arr(torch.take(x, index)), np.take(A, arr(index)))
    with pytest.raises(IndexError, match="out of range: tried to access index 60 on a tensor of 60 elements."):
        x.take(torch.tensor([60], device=device))
    with pytest.raises(RuntimeError, match="Expected a long tensor for index"):
        x.take(torch.tensor([0], dtype=torch.int32, device=device))
    y = torch.zeros(2, 2, device=device)
    i = torch.tensor([0, 3, 0], device=device)
    v = torch.tensor([1.0, 2.0, 4.0], device=device)
    assert y.put(i, v, accumulate=True).tolist() == [[5, 0], [0, 2]]
    assert y.put(torch.tensor([3], device=device), torch.tensor([9.0], device=device)).tolist() == [[0, 0], [0, 9]]
    xs = leaf((3, 4), device)
    check(lambda x: x.t().take(torch.tensor([[1, 1], [-1, 5]])), xs)
    check(lambda x, v: x.put(torch.tensor([0, 11, 0]), v, accumulate=True), xs, leaf((3,), device, 1))


def test_take_along_dim(device):
    a = np.random.default_rng(0).standard_normal((3, 4))
    x = torch.tensor(a, device=device)
    order = torch.tensor(np.argsort(a, axis=1), device=device)
    np.testing.assert_array_equal(arr(torch.take_along_dim(x, order, dim=1)), np.take_along_axis(a, arr(order), 1))
    top = torch.tensor([[0], [2], [1]], device=device)
    np.testing.assert_array_equal(arr(x.take_along_dim(top, 1)), np.take_along_axis(a, arr(top), 1))
    broadcast = torch.tensor([[0, 2, 1, 0]], device=device)  # broadcast over dim 0... along dim 0
    np.testing.assert_array_equal(arr(x.take_along_dim(broadcast, 0)), np.take_along_axis(a, arr(broadcast), 0))
    flat = torch.tensor([11, 0], device=device)
    np.testing.assert_array_equal(arr(x.take_along_dim(flat)), a.ravel()[[11, 0]])
    with pytest.raises(RuntimeError, match="should have the same number of dimensions"):
        x.take_along_dim(flat, 0)
    xs = leaf((3, 4), device)
    check(lambda x: x.take_along_dim(torch.tensor([[0], [3], [3]]), 1), xs)


# nonzero, argwhere, where(cond) --------------------------------------------------------------------


@given(tensors(shapes(0, 3, 0, 4), dtype=torch.int64, min_value=0, max_value=2))
def test_nonzero_random(x):
    a = arr(x)
    np.testing.assert_array_equal(arr(x.nonzero()), np.argwhere(a))
    assert x.nonzero().dtype == torch.int64 and x.nonzero().shape == (np.count_nonzero(a), x.dim())
    np.testing.assert_array_equal(arr(torch.argwhere(x)), np.argwhere(a))
    if x.dim():
        for got, expected in zip(torch.nonzero(x, as_tuple=True), np.nonzero(a), strict=True):
            np.testing.assert_array_equal(arr(got), expected)
        for got, expected in zip(torch.where(x != 0), np.nonzero(a), strict=True):
            np.testing.assert_array_equal(arr(got), expected)


def test_nonzero_scalar_and_float(device):
    assert torch.tensor(3, device=device).nonzero().shape == (1, 0)
    assert torch.tensor(0, device=device).nonzero().shape == (0, 0)
    (only,) = torch.tensor(2.0, device=device).nonzero(as_tuple=True)
    assert only.tolist() == [0]
    x = torch.tensor([0.0, 1.5, -2.0], device=device, requires_grad=True)
    out = x.nonzero()
    assert out.tolist() == [[1], [2]] and not out.requires_grad


def test_ops_keep_their_own_copy_of_the_index():
    x = torch.zeros(3, dtype=torch.float64, requires_grad=True)
    index = torch.tensor([0, 0])
    picked, selected = x[index], x.index_select(0, index)
    index.numpy()[:] = 2  # writing the index afterwards must not move the gradient
    (picked.sum() + selected.sum()).backward()
    assert x.grad.tolist() == [4.0, 0.0, 0.0]


# t[index] = value: the value's leading size-1 dims are dropped, then it broadcasts (PyTorch's setitem rule;
# not copy_'s). Expected values from PyTorch 2.13; values are 1, 2, 3, ... in the value's shape.
MASK = [[True, False, True], [False, True, True]]
SETITEM_FITS = [
    ((2, 3), 0, (1, 3), [[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]]),
    ((2, 3), 0, (1, 1, 3), [[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]]),
    ((2, 3), 0, (1,), [[1.0, 1.0, 1.0], [0.0, 0.0, 0.0]]),
    ((2, 3), 0, (), [[1.0, 1.0, 1.0], [0.0, 0.0, 0.0]]),
    ((2, 3), slice(0, 2), (1, 1, 3), [[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]),
    ((2, 3), slice(0, 2), (1, 2, 1), [[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]]),
    ((2, 3), Ellipsis, (1, 1, 2, 3), [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]),
    ((2, 3), (0, 0), (1, 1), [[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]]),
    ((2, 3), (None, 0), (1, 1, 3), [[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]]),
    ((2, 3), [0, 1], (1, 1, 3), [[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]),
    ((2, 3), [0, 1], (1, 2, 1), [[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]]),
    ((2, 3), (slice(None), [0, 2]), (1, 1, 2), [[1.0, 0.0, 2.0], [1.0, 0.0, 2.0]]),
    ((2, 3), (0, [0, 2]), (1, 1, 2), [[1.0, 0.0, 2.0], [0.0, 0.0, 0.0]]),
    ((2, 3), "mask", (1, 4), [[1.0, 0.0, 2.0], [0.0, 3.0, 4.0]]),
    ((2, 3), "mask", (1, 1), [[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]]),
]


def _index(index):
    return torch.tensor(MASK) if isinstance(index, str) else index


def _counting(shape):
    return torch.arange(1.0, 1 + math.prod(shape)).view(shape)


@pytest.mark.parametrize("shape,index,value_shape,expected", SETITEM_FITS, ids=[str(c[1:3]) for c in SETITEM_FITS])
def test_setitem_drops_leading_ones_of_the_value(shape, index, value_shape, expected):
    x = torch.zeros(shape)
    x[_index(index)] = _counting(value_shape)
    assert x.tolist() == expected


def test_setitem_row_from_a_row_matrix():
    logits = torch.zeros(8, 27)
    logits[0] = torch.ones(1, 27)
    assert logits.sum().item() == 27.0 and logits[0].tolist() == [1.0] * 27
    with pytest.raises(RuntimeError):  # copy_ keeps its own rule: no dims dropped
        logits[1].copy_(torch.ones(1, 27))


SETITEM_ERRORS = [
    ((8, 27), 0, (1, 27, 1), r"expand\(torch.FloatTensor\{\[27, 1\]\}, size=\[27\]\): the number of sizes provided \(1\) "
                             r"must be greater or equal to the number of dimensions in the tensor \(2\)"),
    ((8, 27), 0, (2, 27), r"expand\(torch.FloatTensor\{\[2, 27\]\}, size=\[27\]\): the number of sizes provided"),
    ((8, 27), 0, (28,), r"The expanded size of the tensor \(27\) must match the existing size \(28\) at non-singleton "
                        r"dimension 0.  Target sizes: \[27\].  Tensor sizes: \[28\]"),
    ((2, 3), (0, 0), (1, 2), r"expand\(torch.FloatTensor\{\[2\]\}, size=\[\]\): the number of sizes provided \(0\)"),
    ((2, 3), [0, 1], (3, 2, 3), r"shape mismatch: value tensor of shape \[3, 2, 3\] cannot be broadcast to indexing "
                                r"result of shape \[2, 3\]"),
    ((2, 3), (slice(None), [0, 2]), (3, 2), r"shape mismatch: value tensor of shape \[3, 2\] cannot be broadcast to "
                                            r"indexing result of shape \[2, 2\]"),
    ((2, 3), "mask", (1, 3), r"shape mismatch: value tensor of shape \[3\] cannot be broadcast to indexing result of "
                             r"shape \[4\]"),
    ((2, 3), "mask", (2, 2), r"shape mismatch: value tensor of shape \[2, 2\] cannot be broadcast to indexing result"),
]


@pytest.mark.parametrize("shape,index,value_shape,message", SETITEM_ERRORS, ids=[str(c[1:3]) for c in SETITEM_ERRORS])
def test_setitem_values_that_do_not_fit(shape, index, value_shape, message):
    x = torch.zeros(shape)
    with pytest.raises(RuntimeError, match=message):
        x[_index(index)] = _counting(value_shape)
    assert x.count_nonzero().item() == 0 and x._version == 0


def test_setitem_with_leading_ones_is_differentiable():
    weights = torch.arange(12.0, dtype=torch.float64).view(3, 4)
    base = torch.zeros(3, 4, dtype=torch.float64, requires_grad=True)
    v = torch.arange(1.0, 5.0, dtype=torch.float64).view(1, 4).requires_grad_()
    x = base.clone()
    x[1] = v * 2
    (x * weights).sum().backward()
    assert base.grad.tolist() == [[0.0, 1.0, 2.0, 3.0], [0.0, 0.0, 0.0, 0.0], [8.0, 9.0, 10.0, 11.0]]
    assert v.grad.tolist() == [[8.0, 10.0, 12.0, 14.0]]
    base.grad = None
    w = torch.arange(1.0, 5.0, dtype=torch.float64).view(1, 1, 4).requires_grad_()
    x = base.clone()
    x[[0, 2]] = w
    (x * weights).sum().backward()
    assert base.grad.tolist() == [[0.0, 0.0, 0.0, 0.0], [4.0, 5.0, 6.0, 7.0], [0.0, 0.0, 0.0, 0.0]]
    assert w.grad.tolist() == [[[8.0, 10.0, 12.0, 14.0]]]

    def basic(b, value):
        y = b * 1
        y[1:3] = value
        return y

    def advanced(b, value):
        y = b * 1
        y[[2, 0]] = value
        return y

    b = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    check(basic, b, torch.randn(1, 1, 4, dtype=torch.float64, requires_grad=True))
    check(basic, b, torch.randn(1, 2, 1, dtype=torch.float64, requires_grad=True))
    check(advanced, b, torch.randn(1, 1, 4, dtype=torch.float64, requires_grad=True))
    check(advanced, b, torch.randn(1, 2, 4, dtype=torch.float64, requires_grad=True))


def test_int32_indices_where_pytorch_takes_them(device):
    """gather, scatter, scatter_add, scatter_reduce, index_select, index_add, embedding and x[index] take int32
    indices as well as int64 (values from PyTorch); take_along_dim, take, put, index_copy and index_fill take
    int64 only, and no op takes int16."""
    x = torch.arange(6.0, dtype=torch.float64, device=device).reshape(2, 3).requires_grad_()
    i32 = torch.tensor([[0], [2]], dtype=torch.int32, device=device)
    picked = x.gather(1, i32)
    assert picked.tolist() == [[0.0], [5.0]]
    picked.sum().backward()
    assert x.grad.tolist() == [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
    zeros = torch.zeros(2, 3, device=device)
    assert zeros.scatter(1, i32, 1.0).tolist() == [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
    assert zeros.scatter_add(1, i32, torch.ones(2, 1, device=device)).tolist() == [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
    assert zeros.scatter_reduce(1, i32, torch.full((2, 1), 2.0, device=device), "sum").tolist() == [
        [2.0, 0.0, 0.0], [0.0, 0.0, 2.0]]
    row = torch.tensor([1, 0], dtype=torch.int32, device=device)
    assert x.detach().index_select(1, row).tolist() == [[1.0, 0.0], [4.0, 3.0]]
    assert x.detach()[row].tolist() == [[3.0, 4.0, 5.0], [0.0, 1.0, 2.0]]
    assert zeros.index_add(1, row, torch.ones(2, 2, device=device)).tolist() == [[1.0, 1.0, 0.0], [1.0, 1.0, 0.0]]
    with pytest.raises(RuntimeError, match=r"torch.take_along_dim\(\): dtype of indices should be Long but got Int"):
        torch.take_along_dim(x, i32, 1)
    for call in (lambda: x.detach().take(row), lambda: zeros.put(row, torch.ones(2, device=device)),
                 lambda: zeros.index_copy(1, row, torch.ones(2, 2, device=device))):
        with pytest.raises(RuntimeError, match="Expected a long tensor for index, but got Int"):
            call()
    with pytest.raises(IndexError, match=r"index_fill\(\): Expected a long tensor for index"):
        zeros.index_fill(1, row, 1.0)
    i16 = row.to(torch.int16)
    with pytest.raises(RuntimeError, match=r"index_select\(\): Expected dtype int32 or int64 for index"):
        x.index_select(1, i16)
    with pytest.raises(RuntimeError, match=r"index_add\(\): Expected dtype int32 or int64 for index"):
        zeros.index_add(1, i16, torch.ones(2, 2, device=device))
    with pytest.raises(IndexError, match="tensors used as indices must be long, int, byte or bool tensors"):
        x[i16]
    with pytest.raises(RuntimeError, match=r"but got torch.ShortTensor instead \(while checking arguments for embedding"):
        torch.nn.functional.embedding(i16, x)


def test_index_select_of_a_0dim_tensor():
    # PyTorch: exactly one index, and the result is 0-dim
    x = torch.tensor(2.0, requires_grad=True)
    out = x.index_select(0, torch.tensor([0]))
    assert out.shape == () and out.item() == 2.0
    out.backward()
    assert x.grad.item() == 1.0
    for index in (torch.tensor([0, 0]), torch.tensor([], dtype=torch.int64)):
        with pytest.raises(RuntimeError, match="Index to scalar can have only 1 value"):
            x.index_select(0, index)


@pytest.mark.parametrize(
    "indices, value_shape, result_shape",
    [
        ((torch.tensor([0]),), (1, 2, 3), [1, 3]),
        ((torch.tensor([0]),), (1, 1, 3), [1, 3]),
        ((torch.tensor([0]),), (2, 3), [1, 3]),
        ((torch.tensor([0, 1]),), (1, 1, 1, 3), [2, 3]),
        ((torch.tensor([True, False]),), (1, 2, 3), [1, 3]),
        ((torch.tensor([0, 1]), torch.tensor([1, 2])), (1, 2), [2]),
        ((torch.tensor([0, 1]), torch.tensor([1, 2])), (2, 1), [2]),
    ],
)
@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put_values_broadcast_by_the_ordinary_rule(indices, value_shape, result_shape, accumulate):
    """PyTorch 2.13 does not drop the values' leading size-1 dims in index_put (numpy's assignment does)."""
    x = torch.zeros(2, 3)
    message = rf"shape mismatch: value tensor of shape {list(value_shape)} cannot be broadcast to indexing result " \
              rf"of shape {result_shape}".replace("[", r"\[")
    with pytest.raises(RuntimeError, match=message):
        x.index_put_(indices, torch.ones(*value_shape), accumulate=accumulate)
    with pytest.raises(RuntimeError, match=message):
        x.index_put(indices, torch.ones(*value_shape), accumulate=accumulate)
    assert x.tolist() == [[0.0] * 3] * 2 and x._version == 0


def test_index_put_values_that_broadcast():
    x = torch.zeros(2, 3)
    x.index_put_((torch.tensor([0]),), torch.ones(1, 3))
    x.index_put_((torch.tensor([1]),), torch.full((3,), 2.0))
    assert x.tolist() == [[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]]


@pytest.mark.parametrize(
    "index, value, name",
    [
        (0, [[1.0, 2.0, 3.0]], "list"),
        (0, [1.0, 2.0, 3.0], "list"),
        (0, (1.0, 2.0, 3.0), "tuple"),
        (0, [], "list"),
        ((0, 0), [1.0], "list"),
        ([0, 1], [1.0, 2.0, 3.0], "list"),
        (0, np.array([1.0, 2.0, 3.0]), "numpy.ndarray"),
        (0, np.float32(1.5), "numpy.float32"),
        (0, None, "NoneType"),
        (0, "a", "str"),
        (0, range(3), "range"),
    ],
)
def test_setitem_refuses_values_that_are_not_tensors_or_numbers(index, value, name):
    """PyTorch 2.13: ``t[0] = [1., 2., 3.]`` raises TypeError naming the value's type and the tensor's legacy type."""
    t = torch.zeros(2, 3)
    with pytest.raises(TypeError, match=rf"^can't assign a {name} to a torch.FloatTensor$"):
        t[index] = value
    assert t.tolist() == [[0.0] * 3] * 2 and t._version == 0
    with pytest.raises(TypeError, match=r"^can't assign a list to a torch.LongTensor$"):
        torch.zeros(2, 3, dtype=torch.int64)[0] = [1, 2, 3]


def test_setitem_accepts_numbers():
    t = torch.zeros(4)
    t[0], t[1], t[2], t[3] = 1, 2.5, np.int64(3), True
    assert t.tolist() == [1.0, 2.5, 3.0, 1.0]


def test_index_select_out_of_range_errors_follow_pytorchs_kernels():
    """PyTorch 2.13: along dim 1 of a 2+-dim tensor its dim-1 kernel raises a RuntimeError; elsewhere IndexError."""
    index = torch.tensor([9])
    for shape, dim in [((2, 3), 1), ((2, 3), -1), ((2, 3, 4), 1)]:
        with pytest.raises(RuntimeError, match="INDICES element is out of DATA bounds, id=9 axis_dim=3"):
            torch.zeros(shape).index_select(dim, index)
    for shape, dim in [((2, 3), 0), ((3,), 0), ((2, 3, 4), 2)]:
        with pytest.raises(IndexError, match="index out of range in self"):
            torch.zeros(shape).index_select(dim, index)
    with pytest.raises(RuntimeError, match="Index to scalar can have only 1 value, got 3 value"):
        torch.tensor(0.0).index_select(-1, torch.tensor([1, 0, 0]))  # the count is checked before the range


def test_index_add_out_of_range_errors_follow_pytorchs_kernels():
    """PyTorch 2.13: along the first or last dim of a 2+-dim tensor with alpha 1, index_add_ runs as scatter_add
    (a RuntimeError naming the index); with another alpha (fuzzer seed 43580) or along a middle dim, IndexError."""
    x, source, index = torch.zeros(3, 4, 1), torch.ones(3, 4, 3), torch.tensor([1, 0, 0])
    with pytest.raises(RuntimeError, match="index 1 is out of bounds for dimension 2 with size 1"):
        x.index_add_(2, index, source)
    for alpha in (0.001, 2):
        with pytest.raises(IndexError, match="index out of range in self"):
            x.index_add_(2, index, source, alpha=alpha)
    with pytest.raises(IndexError, match="index out of range in self"):
        torch.zeros(3, 1, 2).index_add_(1, index, torch.ones(3, 3, 2))
    assert x.sum().item() == 0.0


def test_index_add_saves_its_source_for_the_sources_gradient():
    """PyTorch saves source (for source.dim() and expand_as): writing into it before backward raises, also when it
    is an empty view of the tensor index_add_ writes (fuzzer seed 110008); a source needing no gradient is not
    saved."""
    x = torch.ones(3, 2, requires_grad=True)
    source = torch.ones(2, 2, requires_grad=True) * 1
    z = (x * 1).index_add(0, torch.tensor([0, 2]), source)
    source.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()
    plain = torch.ones(2, 2)
    z = (x * 1).index_add(0, torch.tensor([0, 2]), plain)
    plain.mul_(2)
    z.sum().backward()
    assert x.grad.sum().item() == 6.0
    y = torch.ones(1, 1, 1, requires_grad=True) * 2
    y.index_add_(0, torch.tensor([], dtype=torch.int64), y[0:0], alpha=-2.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_index_add_into_an_empty_dim_refuses_only_the_sources_gradient():
    """Into a dim of size 0, the source's gradient (index_select of an empty dim) is refused, as PyTorch's; a
    source that needs no gradient leaves the backward free (fuzzer seed 409335)."""
    x = torch.zeros(0, 2, dtype=torch.float64, requires_grad=True)
    z = x.t().index_add(-1, torch.tensor([0, 0]), torch.zeros(2, 2, dtype=torch.float64))
    z.sum().backward()
    assert x.grad.shape == (0, 2)
    source = torch.zeros(2, 2, dtype=torch.float64, requires_grad=True)
    z = x.t().index_add(-1, torch.tensor([0, 0]), source)
    with pytest.raises(RuntimeError, match="self indexing axis dim should be positive"):
        z.sum().backward()


def test_advanced_indexing_that_selects_nothing_checks_no_bound():
    """PyTorch's index kernel visits no element of an empty result, so it checks no bound (fuzzer seeds 159145,
    186181); an index into a dim of size 0 is still refused, and so is a bad dtype."""
    x = torch.zeros(1, 0, requires_grad=True)
    y = x[torch.tensor([1, -1])]
    assert y.shape == (2, 0) and y.requires_grad
    y.sum().backward()
    assert x.grad.shape == (1, 0)
    assert torch.zeros(2, 0)[torch.tensor([5])].shape == (1, 0)
    assert torch.zeros(3, 2)[torch.zeros(0, 1, dtype=torch.long), torch.tensor([7, 8])].shape == (0, 2)
    for shape, index in (((0, 2), (torch.tensor([5]),)), ((2, 0), (slice(None), torch.tensor([5])))):
        with pytest.raises(IndexError, match="out of bounds for dimension with size 0"):
            torch.zeros(shape)[index]
    with pytest.raises(IndexError, match="must be long, int, byte or bool"):
        torch.zeros(2, 0)[torch.tensor([5.0])]
    with pytest.raises(IndexError, match="index 9 is out of bounds for dimension 0 with size 3"):
        torch.zeros(3, 2)[torch.tensor([9])]


def test_assignment_that_selects_nothing_checks_no_bound():
    x = torch.zeros(2, 0)
    x[torch.tensor([5])] = 3.0
    assert x._version == 1
    x.index_put_((torch.tensor([5]),), torch.tensor(1.0))
    assert x._version == 2
    with pytest.raises(IndexError, match="out of bounds for dimension with size 0"):
        torch.zeros(0, 2)[torch.tensor([5])] = 3.0
    with pytest.raises(IndexError):
        torch.zeros(2, 3)[torch.tensor([5])] = 3.0


def test_an_empty_broadcast_index_reads_nothing_even_from_a_dim_of_size_0():
    """The size-0-dim check applies only when the broadcast index selects something (fuzzer seed 357124)."""
    assert torch.zeros(0, 0, 0)[torch.tensor([], dtype=torch.int64), torch.tensor([0])].shape == (0, 0)
    with pytest.raises(IndexError, match="out of bounds for dimension with size 0"):
        torch.zeros(0, 0)[torch.tensor([5])]


@pytest.mark.parametrize("call", [
    lambda x, i, s: x.scatter(0, i, s), lambda x, i, s: x.clone().scatter_(0, i, s),
    lambda x, i, s: x.scatter(0, i, s, reduce="add"), lambda x, i, s: x.scatter(0, i, s, reduce="multiply"),
    lambda x, i, s: x.scatter_add(0, i, s), lambda x, i, s: x.clone().scatter_add_(0, i, s),
])
def test_scatter_refuses_a_source_of_another_dtype(call):
    """PyTorch's scatter family casts nothing: src must have self's dtype (fuzzer seed 466055), and the failed
    op leaves self unchanged."""
    x = torch.zeros(2, 2)
    with pytest.raises(RuntimeError, match=r"scatter\(\): Expected self.dtype to be equal to src.dtype"):
        call(x, torch.tensor([[0, 1]]), torch.ones(1, 2, dtype=torch.float64))
    assert x.sum().item() == 0.0


def test_advanced_indexing_of_a_row_major_tensor_is_row_major():
    """PyTorch's index kernel writes a row-major input's result row-major, also when the indexed dims are not
    leading (numpy puts them first in memory), so a view of the result works (fuzzer seed 760426)."""
    x = torch.zeros(4, 2, 4, 3)
    i = torch.tensor([0, 1, 0])
    for result in (x[:, i], x[:, :, i], x[i, :, i], x[:, i, :, i], x[..., i]):
        assert result.is_contiguous()
    x[:, i].view(1, -1)


def test_index_add_into_an_empty_tensor_checks_its_indices_in_the_sources_backward():
    """The source's gradient is index_select of the incoming one, which checks every index even when there are no
    elements (fuzzer seed 862614); a source that wants no gradient checks nothing."""
    for index, error in (([1, 0], "id=1 axis_dim=1"), ([-1, 0], "id=-1 axis_dim=1"), ([0, 0], None)):
        x = torch.zeros(1, 3, 0, requires_grad=True)
        y = (x * 1).index_add(0, torch.tensor(index), torch.zeros(2, 3, 0, requires_grad=True))
        if error is None:
            y.sum().backward()
        else:
            with pytest.raises(RuntimeError, match=f"INDICES element is out of DATA bounds, {error}"):
                y.sum().backward()
    x = torch.zeros(1, 3, 0, requires_grad=True)
    (x * 1).index_add(0, torch.tensor([1, 0]), torch.zeros(2, 3, 0)).sum().backward()
    assert x.grad.shape == (1, 3, 0)
