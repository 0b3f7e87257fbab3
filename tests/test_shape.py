"""Shape ops that build new tensors: cat/stack family, repeat/tile, flip/roll, tril/triu, diag/diag_embed/trace,
broadcasting helpers, atleast_*, meshgrid, cartesian_prod. Values against numpy, gradients by gradcheck."""

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch as torch
from minitorch.autograd import gradcheck, gradgradcheck
from minitorch.testing.strategies import broadcastable_shapes, shapes, tensors


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


# cat / stack ---------------------------------------------------------------------------------------


@given(st.data())
def test_cat_random(data):
    shape = data.draw(shapes(1, 3, 1, 4))
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    parts = []
    for _ in range(data.draw(st.integers(1, 3))):
        part = list(shape)
        part[dim] = data.draw(st.integers(0, 3))
        parts.append(data.draw(tensors(tuple(part), requires_grad=True)))
    out = torch.cat(parts, dim)
    np.testing.assert_array_equal(arr(out), np.concatenate([arr(p) for p in parts], axis=dim))
    check(lambda *ps: torch.cat(ps, dim), *parts)
    check(lambda *ps: torch.stack(ps[:1] * 2, dim), *parts)


def test_cat_type_promotion_and_aliases(device):
    a = torch.tensor([[1, 2]], device=device)
    b = torch.tensor([[0.5, 1.5]], dtype=torch.float32, device=device)
    c = torch.tensor([[True, False]], device=device)
    out = torch.cat([a, b, c])
    assert out.dtype == torch.float32 and out.tolist() == [[1, 2], [0.5, 1.5], [1, 0]]
    assert torch.cat([a, c]).dtype == torch.int64
    assert torch.concat([a, a], 1).shape == (1, 4) and torch.concatenate([a, a], dim=-1).shape == (1, 4)


def test_cat_skips_legacy_empty(device):
    x = leaf((2, 3), device)
    empty = torch.zeros(0, dtype=torch.float64, device=device, requires_grad=True)
    out = torch.cat([empty, x, empty], 1)
    assert out.shape == (2, 3)
    out.sum().backward()
    assert x.grad.tolist() == [[1.0] * 3] * 2 and empty.grad.shape == (0,)
    assert torch.cat([torch.zeros(0, device=device), torch.zeros(0, device=device)]).shape == (0,)


def test_cat_errors(device):
    a, b = torch.zeros(2, 3, device=device), torch.zeros(2, 4, device=device)
    with pytest.raises(ValueError, match=r"torch.cat\(\): expected a non-empty list of Tensors"):
        torch.cat([])
    with pytest.raises(ValueError, match=r"torch.cat\(\): expected a non-empty list of Tensors"):
        torch.concatenate(())
    for op in ("stack", "hstack", "vstack", "dstack", "column_stack"):
        with pytest.raises(RuntimeError, match=f"{op} expects a non-empty TensorList"):
            getattr(torch, op)([])
    with pytest.raises(RuntimeError, match=r"Sizes of tensors must match except in dimension 0. Expected size 3 but got "
                                           r"size 4 for tensor number 1 in the list. \(shapes \[2, 3\], \[2, 4\]\)"):
        torch.cat([a, b])
    with pytest.raises(RuntimeError, match="Tensors must have same number of dimensions: got 2 and 1"):
        torch.cat([a, torch.zeros(3, device=device)])
    with pytest.raises(RuntimeError, match=r"zero-dimensional tensor \(at position 0\) cannot be concatenated"):
        torch.cat([torch.tensor(1.0, device=device)])
    with pytest.raises(IndexError, match="Dimension out of range"):
        torch.cat([a, a], 2)
    with pytest.raises(TypeError, match="expected Tensor as element 1"):
        torch.cat([a, 1])
    with pytest.raises(RuntimeError, match=r"stack expects each tensor to be equal size, but got \[2, 3\] at entry 0 "
                                           r"and \[2, 4\] at entry 1"):
        torch.stack([a, b])
    with pytest.raises(RuntimeError, match="stack expects a non-empty TensorList"):
        torch.stack([])
    target = torch.zeros(2 * a.shape[0], *a.shape[1:], device=device)
    assert torch.cat([a, a], out=target) is target and torch.equal(target, torch.cat([a, a]))


def test_stack_family_matches_numpy(device):
    rng = np.random.default_rng(0)
    for shape in [(), (3,), (2, 3), (2, 3, 2)]:
        a, b = rng.standard_normal(shape), rng.standard_normal(shape)
        ta, tb = torch.tensor(a, device=device), torch.tensor(b, device=device)
        for dim in range(-len(shape) - 1, len(shape) + 1):
            np.testing.assert_array_equal(arr(torch.stack([ta, tb], dim)), np.stack([a, b], dim))
        np.testing.assert_array_equal(arr(torch.hstack([ta, tb])), np.hstack([a, b]))
        np.testing.assert_array_equal(arr(torch.vstack([ta, tb])), np.vstack([a, b]))
        np.testing.assert_array_equal(arr(torch.row_stack((ta, tb))), np.vstack([a, b]))
        np.testing.assert_array_equal(arr(torch.dstack([ta, tb])), np.dstack([a, b]))
        if len(shape) <= 2:
            np.testing.assert_array_equal(arr(torch.column_stack([ta, tb])), np.column_stack([a, b]))


# repeat / tile --------------------------------------------------------------------------------------


@given(tensors(shapes(0, 3, 1, 3), requires_grad=True), st.data())
def test_repeat_and_tile_random(x, data):
    extra = data.draw(st.integers(0, 1))
    reps = tuple(data.draw(st.lists(st.integers(0, 3), min_size=x.dim() + extra, max_size=x.dim() + extra)))
    out = x.repeat(reps)  # x.repeat(*()) is a TypeError in PyTorch
    np.testing.assert_array_equal(arr(out), np.tile(arr(x), reps))
    assert out.data_ptr() != x.data_ptr() or out.numel() == 0
    check(lambda x: x.repeat(reps), x)
    short = reps[: max(0, len(reps) - 1 - extra)]
    np.testing.assert_array_equal(arr(torch.tile(x, short)), np.tile(arr(x), short))
    check(lambda x: x.tile(short), x)


def test_repeat_is_a_copy_even_when_trivial(device):
    x = torch.arange(3.0, device=device)
    y = x.repeat(1)
    assert y.tolist() == [0.0, 1.0, 2.0] and y.data_ptr() != x.data_ptr()


def test_repeat_errors(device):
    with pytest.raises(RuntimeError, match="Number of dimensions of repeat dims can not be smaller"):
        torch.zeros(2, 3, device=device).repeat(2)
    with pytest.raises(RuntimeError, match="negative dimension"):
        torch.zeros(2, device=device).repeat(-1)


# flip / roll ----------------------------------------------------------------------------------------


@given(tensors(shapes(1, 3, 1, 4), requires_grad=True), st.data())
def test_flip_and_roll_random(x, data):
    dims = tuple(data.draw(st.lists(st.integers(0, x.dim() - 1), unique=True, max_size=x.dim())))
    out = x.flip(dims)
    np.testing.assert_array_equal(arr(out), np.flip(arr(x), dims) if dims else arr(x))
    assert out.data_ptr() != x.data_ptr()
    check(lambda x: torch.flip(x, dims), x)
    shifts = tuple(data.draw(st.integers(-5, 5)) for _ in dims)
    np.testing.assert_array_equal(arr(x.roll(shifts, dims)), np.roll(arr(x), shifts, dims) if dims else arr(x))
    check(lambda x: x.roll(shifts, dims), x)
    np.testing.assert_array_equal(arr(torch.roll(x, 2)), np.roll(arr(x), 2))
    check(lambda x: x.roll(-1), x)


def test_fliplr_flipud(device):
    a = np.arange(6.0).reshape(2, 3)
    x = torch.tensor(a, device=device)
    np.testing.assert_array_equal(arr(x.fliplr()), np.fliplr(a))
    np.testing.assert_array_equal(arr(torch.flipud(x)), np.flipud(a))
    with pytest.raises(RuntimeError, match="Input must be >= 2-d."):
        torch.fliplr(torch.zeros(3, device=device))
    with pytest.raises(RuntimeError, match="Input must be >= 1-d."):
        torch.flipud(torch.tensor(1.0, device=device))
    with pytest.raises(RuntimeError, match="dim 0 appears multiple times in the list of dims"):
        x.flip((0, -2))
    with pytest.raises(RuntimeError, match="shifts and dimensions must align. shifts: 2, dims:1"):
        x.roll((1, 2), 0)


# tril / triu / diag / trace ---------------------------------------------------------------------------


@given(tensors(shapes(2, 4, 1, 4), requires_grad=True), st.integers(-3, 3))
def test_tril_triu_random(x, diagonal):
    np.testing.assert_array_equal(arr(x.tril(diagonal)), np.tril(arr(x), diagonal))
    np.testing.assert_array_equal(arr(torch.triu(x, diagonal=diagonal)), np.triu(arr(x), diagonal))
    check(lambda x: x.tril(diagonal), x)
    check(lambda x: x.triu(diagonal), x)


def test_tril_triu_int_bool_and_errors(device):
    x = torch.ones(3, 3, dtype=torch.bool, device=device)
    assert x.triu(1).tolist() == np.triu(np.ones((3, 3), bool), 1).tolist()
    assert torch.arange(6, device=device).reshape(2, 3).tril().tolist() == [[0, 0, 0], [3, 4, 0]]
    with pytest.raises(RuntimeError, match="tril: input tensor must have at least 2 dimensions"):
        torch.zeros(3, device=device).tril()
    with pytest.raises(RuntimeError, match="triu: input tensor must have at least 2 dimensions"):
        torch.zeros(3, device=device).triu()


@pytest.mark.parametrize("k", [-2, -1, 0, 1, 3])
def test_diag_matches_numpy(device, k):
    v = np.arange(1.0, 4.0)
    m = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(arr(torch.diag(torch.tensor(v, device=device), k)), np.diag(v, k))
    out = torch.tensor(m, device=device).diag(k)
    np.testing.assert_array_equal(arr(out), np.diag(m, k))
    assert out._base is None  # a copy, as in PyTorch
    check(lambda v: torch.diag(v, k), leaf((3,), device))
    check(lambda m: m.t().diag(k), leaf((3, 4), device))


def test_diag_embed_and_trace(device):
    a = np.arange(6.0).reshape(2, 3)
    x = torch.tensor(a, device=device)
    out = torch.diag_embed(x)
    assert out.shape == (2, 3, 3)
    np.testing.assert_array_equal(arr(out), np.stack([np.diag(r) for r in a]))
    moved = x.diag_embed(offset=-1, dim1=0, dim2=2)
    assert moved.shape == (4, 2, 4)
    np.testing.assert_array_equal(arr(moved.permute(1, 0, 2)), np.stack([np.diag(r, -1) for r in a]))
    check(lambda x: torch.diag_embed(x, 1, 0, -1), leaf((2, 3), device))
    assert torch.trace(torch.tensor(a, device=device)).item() == np.trace(a)
    t = torch.arange(9, device=device).reshape(3, 3).trace()
    assert t.item() == 12 and t.dtype == torch.int64
    check(lambda m: m.t().trace(), leaf((3, 4), device))
    with pytest.raises(RuntimeError, match="trace: expected a matrix, but got tensor with dim 1"):
        torch.zeros(3, device=device).trace()
    with pytest.raises(RuntimeError, match="diag\\(\\): Supports 1D or 2D tensors. Got 3D"):
        torch.zeros(1, 2, 3, device=device).diag()
    with pytest.raises(RuntimeError, match="diagonal dimensions cannot be identical 1, 1"):
        x.diag_embed(0, 1, -2)


# broadcasting --------------------------------------------------------------------------------------


@given(st.data())
def test_broadcast_random(data):
    x = data.draw(tensors(shapes(0, 3, 1, 3), requires_grad=True))
    y = data.draw(tensors(broadcastable_shapes(x.shape), requires_grad=True))
    expected = np.broadcast_shapes(x.shape, y.shape)
    assert torch.broadcast_shapes(x.shape, y.shape) == expected
    bx, by = torch.broadcast_tensors(x, y)
    assert bx.shape == by.shape == expected
    assert bx.data_ptr() == x.data_ptr() and by._base is not None or by is y
    np.testing.assert_array_equal(arr(by), np.broadcast_to(arr(y), expected))
    np.testing.assert_array_equal(arr(y.broadcast_to(expected)), np.broadcast_to(arr(y), expected))
    check(lambda x, y: torch.broadcast_tensors(x, y)[1] * torch.broadcast_tensors(x, y)[0], x, y)


def test_broadcast_errors():
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(3\) must match the size of tensor b \(4\) at "
                                           r"non-singleton dimension 1"):
        torch.broadcast_tensors(torch.zeros(2, 3), torch.zeros(4))
    with pytest.raises(RuntimeError, match="Shape mismatch: objects cannot be broadcast to a single shape"):
        torch.broadcast_shapes((2, 3), (4,))
    assert torch.broadcast_shapes(3, (2, 1)) == (2, 3)
    with pytest.raises(RuntimeError, match="The expanded size of the tensor"):
        torch.zeros(3).broadcast_to((4, 2))


def test_atleast(device):
    s, v, m = torch.tensor(1.0, device=device), torch.zeros(3, device=device), torch.zeros(2, 3, device=device)
    assert torch.atleast_1d(s).shape == (1,) and torch.atleast_1d(v) is v
    assert [t.shape for t in torch.atleast_2d(s, v, m)] == [(1, 1), (1, 3), (2, 3)]
    assert [t.shape for t in torch.atleast_3d((s, v, m))] == [(1, 1, 1), (1, 3, 1), (2, 3, 1)]
    assert torch.atleast_3d(v)._base is v  # a view
    for fn, np_fn in [(torch.atleast_1d, np.atleast_1d), (torch.atleast_2d, np.atleast_2d),
                      (torch.atleast_3d, np.atleast_3d)]:
        for t in (s, v, m):
            assert fn(t).shape == np_fn(arr(t)).shape


def test_meshgrid(device):
    x, y, z = (torch.arange(n, dtype=torch.float64, device=device) for n in (2, 3, 4))
    for indexing in ("ij", "xy"):
        grids = torch.meshgrid(x, y, z, indexing=indexing)
        expected = np.meshgrid(arr(x), arr(y), arr(z), indexing=indexing)
        for g, e in zip(grids, expected, strict=True):
            np.testing.assert_array_equal(arr(g), e)
    gx, gy = torch.meshgrid([x, y], indexing="ij")
    assert gx._base is not None and gx.stride() == (1, 0)
    with pytest.warns(UserWarning, match="it will be required to pass the indexing argument"):
        torch.meshgrid(x, y)
    with pytest.raises(RuntimeError, match='indexing must be one of "xy" or "ij"'):
        torch.meshgrid(x, y, indexing="xx")
    with pytest.raises(RuntimeError, match="Expected 0D or 1D tensor"):
        torch.meshgrid(torch.zeros(2, 2, device=device), indexing="ij")
    a, b = leaf((2,), device), leaf((3,), device, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check(lambda a, b: torch.meshgrid(a, b, indexing="xy")[0] * torch.meshgrid(a, b, indexing="xy")[1], a, b)


def test_cartesian_prod(device):
    a, b = torch.tensor([1, 2], device=device), torch.tensor([3, 4, 5], device=device)
    assert torch.cartesian_prod(a, b).tolist() == [[1, 3], [1, 4], [1, 5], [2, 3], [2, 4], [2, 5]]
    assert torch.cartesian_prod(a) is a
    with pytest.raises(RuntimeError, match=r"Expect a 1D vector, but got shape \[2, 1\]"):
        torch.cartesian_prod(a, torch.zeros(2, 1, device=device))


# int-list arguments (dims, sizes): varargs, one sequence or keyword, as PyTorch's IntArrayRef ---------------


def test_int_list_arguments_accept_varargs_sequence_and_keyword():
    x = torch.arange(6.0).reshape(2, 3)
    flipped = [[5.0, 4.0, 3.0], [2.0, 1.0, 0.0]]
    assert x.flip(0, 1).tolist() == flipped
    assert torch.flip(x, 0, 1).tolist() == flipped
    assert x.flip([0, 1]).tolist() == x.flip(dims=(0, 1)).tolist() == flipped
    assert x.flip([]).tolist() == x.tolist()
    assert x.tile(2, 1).shape == x.tile((2, 1)).shape == x.tile(dims=(2, 1)).shape == (4, 3)
    assert x.tile(2).shape == (2, 6)
    assert x.broadcast_to(2, 2, 3).shape == x.broadcast_to(size=(2, 2, 3)).shape == (2, 2, 3)
    assert x.view(size=(3, 2)).shape == x.reshape(shape=(3, 2)).shape == (3, 2)
    assert x.expand(size=(2, 2, 3)).shape == (2, 2, 3)
    assert x.permute(dims=(1, 0)).shape == (3, 2)
    assert x.view(torch.tensor(3), 2).shape == (3, 2)  # 0-dim integer tensors are ints


def test_int_list_argument_errors():
    x = torch.ones(2, 3)
    with pytest.raises(RuntimeError, match="dim 0 appears multiple times in the list of dims"):
        x.flip(0, 0)
    with pytest.raises(RuntimeError, match="dim 1 appears multiple times in the list of dims"):
        x.flip(1, -1)
    with pytest.raises(TypeError, match=r"flip\(\) missing 1 required positional arguments: \"dims\""):
        x.flip()
    with pytest.raises(TypeError, match=r"flip\(\) got multiple values for argument 'dims'"):
        x.flip(0, dims=1)
    with pytest.raises(TypeError, match=r"flip\(\): argument 'dims' \(position 1\) must be tuple of ints, not float"):
        x.flip(0.5)
    with pytest.raises(TypeError, match=r"reshape\(\): argument 'shape' \(position 1\) must be tuple of ints, but found "
                                        r"element of type float at pos 0"):
        x.reshape((2.0, 3))
    with pytest.raises(TypeError, match=r"view\(\): argument 'size'.* element of type float at pos 0"):
        x.view(2.0, 3)  # never truncated to 2
    with pytest.raises(TypeError, match=r"tile\(\): argument 'dims'.* element of type float at pos 0"):
        x.tile((2.0,))
    with pytest.raises(TypeError, match=r"repeat\(\) missing 1 required positional arguments: \"repeats\""):
        torch.tensor(1.0).repeat()


def test_cat_and_stack_lay_their_output_out_row_major():
    """PyTorch's cat (and so stack) allocates a row-major output whatever the inputs' layout (numpy's concatenate
    would follow the inputs'); only inputs that are all channels-last keep that layout. A view or as_strided of
    the result depends on it (fuzzer seeds 334357, 378060)."""
    v0 = torch.zeros(2, 1, 2, dtype=torch.float64).transpose(0, -1)
    stacked = torch.stack([v0, v0], dim=-3)
    assert stacked.stride() == (4, 2, 2, 1) and stacked.view(-1, 4).shape == (2, 4)
    x2 = torch.arange(9.0).reshape(3, 3)
    assert torch.cat([x2.t(), x2.t()], 1).stride() == (6, 1)
    assert torch.equal(torch.cat([x2.t(), x2.t()], 1), torch.cat([x2.t().contiguous()] * 2, 1))
    c = torch.zeros(2, 3, 4, 5).to(memory_format=torch.channels_last)
    assert torch.cat([c, c], 1).stride() == (120, 1, 30, 6)
    assert torch.cat([c, torch.zeros(2, 3, 4, 5)], 1).stride() == (120, 20, 5, 1)
