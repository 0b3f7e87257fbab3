"""View ops (ops/views.py): every view shares its base's storage, with PyTorch's size/stride/storage_offset,
``_base`` pointing at the root, and gradients that flow back through it (gradcheck in float64)."""

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


def numpy_geometry(view, base):
    """(shape, strides in elements, offset in elements) of a numpy view of ``base``."""
    itemsize = base.itemsize
    offset = view.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    return view.shape, tuple(s // itemsize for s in view.strides), offset // itemsize


def geometry(t):
    return tuple(t.shape), t.stride(), t.storage_offset()


# (name, minitorch view of x, numpy view of a) with x = arange(24.).reshape(2, 3, 4) and a its numpy twin
VIEWS = [
    ("view", lambda x: x.view(6, 4), lambda a: a.reshape(6, 4)),
    ("view_infer", lambda x: x.view(-1), lambda a: a.reshape(-1)),
    ("reshape", lambda x: x.reshape(4, 3, 2), lambda a: a.reshape(4, 3, 2)),
    ("view_as", lambda x: x.view_as(torch.zeros(3, 8)), lambda a: a.reshape(3, 8)),
    ("flatten", lambda x: x.flatten(1), lambda a: a.reshape(2, 12)),
    ("unflatten", lambda x: x.unflatten(2, (2, 2)), lambda a: a.reshape(2, 3, 2, 2)),
    ("permute", lambda x: x.permute(2, 0, 1), lambda a: a.transpose(2, 0, 1)),
    ("transpose", lambda x: x.transpose(0, 2), lambda a: a.swapaxes(0, 2)),
    ("swapdims", lambda x: x.swapdims(-1, 1), lambda a: a.swapaxes(-1, 1)),
    ("movedim", lambda x: x.movedim(0, -1), lambda a: np.moveaxis(a, 0, -1)),
    ("mT", lambda x: x.mT, lambda a: a.swapaxes(-1, -2)),
    ("t", lambda x: x[0].t(), lambda a: a[0].T),
    ("expand", lambda x: x[:, :1].expand(2, 5, 4), lambda a: np.broadcast_to(a[:, :1], (2, 5, 4))),
    ("expand_new_dim", lambda x: x.expand(3, -1, -1, -1), lambda a: np.broadcast_to(a, (3, 2, 3, 4))),
    ("squeeze", lambda x: x[:, :1].squeeze(1), lambda a: a[:, 0]),
    ("unsqueeze", lambda x: x.unsqueeze(-1), lambda a: a[..., None]),
    ("narrow", lambda x: x.narrow(2, 1, 2), lambda a: a[:, :, 1:3]),
    ("narrow_negative", lambda x: x.narrow(-1, -3, 2), lambda a: a[:, :, 1:3]),
    ("select", lambda x: x.select(1, -1), lambda a: a[:, -1]),
    ("diagonal", lambda x: x.diagonal(1, 1, 2), lambda a: np.diagonal(a, 1, 1, 2)),
    ("diagonal_negative", lambda x: x.diagonal(-1, 2, 1), lambda a: np.diagonal(a, -1, 2, 1)),
    ("as_strided", lambda x: x.as_strided((3, 3), (1, 1), 2),
     lambda a: np.lib.stride_tricks.as_strided(a.reshape(-1)[2:], (3, 3), (8, 8))),
    ("unbind", lambda x: x.unbind(1)[2], lambda a: a[:, 2]),
    ("split", lambda x: x.split([1, 3], -1)[1], lambda a: a[..., 1:]),
    ("chunk", lambda x: x.chunk(2, 1)[1], lambda a: a[:, 2:]),
    ("tensor_split", lambda x: x.tensor_split([1, 3], 2)[1], lambda a: a[:, :, 1:3]),
    ("getitem_int", lambda x: x[1], lambda a: a[1]),
    ("getitem_steps", lambda x: x[:, ::2, 1::3], lambda a: a[:, ::2, 1::3]),
    ("getitem_negative", lambda x: x[-1, -2:, -3], lambda a: a[-1, -2:, -3]),
    ("getitem_ellipsis", lambda x: x[..., 2], lambda a: a[..., 2]),
    ("getitem_mixed", lambda x: x[1, ..., 1:3], lambda a: a[1, ..., 1:3]),
    ("getitem_zero_dim_index", lambda x: x[torch.tensor(1), 2], lambda a: a[1, 2]),
    ("view_of_view", lambda x: x.transpose(0, 1)[1:].permute(2, 0, 1)[::2],
     lambda a: a.swapaxes(0, 1)[1:].transpose(2, 0, 1)[::2]),
]


@pytest.mark.parametrize("name,view,numpy_view", VIEWS, ids=[v[0] for v in VIEWS])
def test_view_shares_storage_with_pytorch_geometry(device, name, view, numpy_view):
    a = np.arange(24.0).reshape(2, 3, 4)
    x = torch.tensor(a, device=device)
    v = view(x)
    expected = numpy_view(a)
    np.testing.assert_array_equal(arr(v), expected)
    assert v._base is x and v._is_view()
    assert v.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    shape, strides, offset = numpy_geometry(expected, a)
    assert tuple(v.shape) == shape and v.storage_offset() == offset
    assert v.data_ptr() == x.data_ptr() + offset * x.element_size()
    # strides of size-1 dims are free; elsewhere they match numpy's
    assert all(s == e for n, s, e in zip(shape, v.stride(), strides, strict=True) if n != 1)
    assert v.is_contiguous() == row_major(shape, strides)


def row_major(shape, strides) -> bool:
    """PyTorch's is_contiguous rule (size-1 dims are free, empty tensors are contiguous), on numpy's strides."""
    if 0 in shape:
        return True
    expected = 1
    for n, s in zip(reversed(shape), reversed(strides)):
        if n != 1 and s != expected:
            return False
        expected *= n
    return True


def test_writes_through_the_base_show_in_views(device):
    if device != "cpu":
        pytest.skip(".numpy() shares memory only on the CPU")
    x = torch.zeros(3, 4)
    row, col, diag = x[1], x[:, 2], x.diagonal()
    x.numpy()[1, 2] = 7.0
    assert row[2].item() == col[1].item() == 7.0
    x.numpy()[2, 2] = 5.0
    assert diag.tolist() == [0.0, 0.0, 5.0]


def test_base_is_root_and_version_shared(device):
    x = torch.zeros(4, 6, device=device)
    v = x.t()[1:][:, ::2].unsqueeze(0)
    assert v._base is x and x._base is None and not x._is_view()
    assert v._version == x._version
    x._bump_version()
    assert v._version == x._version == 1
    assert x.detach()._base is None and x.detach().data_ptr() == x.data_ptr()


def test_pytorch_strides_for_none_and_unsqueeze(device):
    x = torch.zeros(2, 3, 4, device=device)
    assert x[None].stride() == (24, 12, 4, 1)  # unsqueeze(0): stride[0] * size[0]
    assert x[..., None].stride() == (12, 4, 1, 1)
    assert x[-1, 1:, None].stride() == (4, 4, 1)
    assert x.unsqueeze(1).stride() == (12, 12, 4, 1)


def test_contiguity(device):
    x = torch.zeros(2, 3, 4, device=device)
    assert x.is_contiguous() and x[1].is_contiguous() and x[:1].is_contiguous()
    assert not x.transpose(0, 1).is_contiguous() and not x[:, :1].is_contiguous()
    assert not x[..., ::2].is_contiguous() and x[..., 1].is_contiguous() is False
    assert torch.zeros(3, 1, device=device).expand(3, 1).is_contiguous()
    assert not torch.zeros(3, 1, device=device).expand(3, 2).is_contiguous()


def test_view_incompatible_strides_suggests_reshape(device):
    x = torch.zeros(3, 4, device=device)
    with pytest.raises(RuntimeError, match=r"view size is not compatible with input tensor's size and stride.*"
                                           r"Use \.reshape\(\.\.\.\) instead"):
        x.t().view(12)
    y = x.t().reshape(12)  # reshape copies instead
    assert y.shape == (12,) and y.data_ptr() != x.data_ptr()
    assert x.t().view(4, 1, 3).shape == (4, 1, 3)  # splitting a dim works on any strides
    with pytest.raises(RuntimeError, match=r"shape '\[5, -1\]' is invalid for input of size 12"):
        x.view(5, -1)
    with pytest.raises(RuntimeError, match="only one dimension can be inferred"):
        x.view(-1, -1)


def test_basic_index_errors(device):
    x = torch.zeros(3, 4, device=device)
    with pytest.raises(ValueError, match="step must be greater than zero"):
        x[::-1]
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 0 with size 3"):
        x[3]
    with pytest.raises(IndexError, match="index -5 is out of bounds for dimension 1 with size 4"):
        x[:, -5]
    with pytest.raises(IndexError, match="too many indices for tensor of dimension 2"):
        x[0, 0, 0]
    with pytest.raises(IndexError, match="an index can only have a single ellipsis"):
        x[..., ...]
    with pytest.raises(RuntimeError, match="exceeds dimension size"):
        x.narrow(1, 2, 3)
    with pytest.raises(IndexError, match="start out of range"):  # PyTorch: IndexError for the start
        x.narrow(1, 5, 0)
    with pytest.raises(RuntimeError, match="length must be non-negative"):
        x.narrow(1, 0, -1)
    with pytest.raises(RuntimeError, match="out of bounds for storage of size"):
        x.as_strided((4, 4), (4, 1))


@given(st.data())
def test_slicing_random(data):
    x = data.draw(tensors(shapes(1, 3, 1, 5), requires_grad=True))
    index = []
    for n in x.shape:
        kind = data.draw(st.sampled_from(["int", "slice", "none", "full"]))
        if kind == "int":
            index.append(data.draw(st.integers(-n, n - 1)))
        elif kind == "slice":
            start = data.draw(st.one_of(st.none(), st.integers(-n - 1, n + 1)))
            stop = data.draw(st.one_of(st.none(), st.integers(-n - 1, n + 1)))
            index.append(slice(start, stop, data.draw(st.one_of(st.none(), st.integers(1, 3)))))
        elif kind == "none":
            index.extend([None, slice(None)])
        else:
            index.append(Ellipsis if Ellipsis not in index else slice(None))
    index = tuple(index)
    v = x[index]
    np.testing.assert_array_equal(arr(v), arr(x)[index])
    assert v._base is (x._base if x._base is not None else x)
    check(lambda x: x[index], x)


@given(tensors(shapes(2, 3, 1, 4), requires_grad=True))
def test_view_chains_gradcheck(x):
    check(lambda x: x.transpose(0, -1).unsqueeze(1).expand(-1, 2, *x.shape[-2::-1]), x)
    check(lambda x: x.reshape(-1).view(x.numel(), 1)[1:].squeeze(1), x)
    check(lambda x: x.movedim(0, -1).narrow(0, 0, 1).select(-1, -1), x)
    check(lambda x: x.diagonal(0, -1, -2) * 2, x)
    check(lambda x: torch.stack(x.unbind(-1)) + x.split(1, 0)[0].sum(), x)


def test_as_strided_overlapping_windows(device):
    x = torch.arange(6.0, dtype=torch.float64, device=device, requires_grad=True)
    windows = x.as_strided((4, 3), (1, 1))
    assert windows.tolist() == [[0, 1, 2], [1, 2, 3], [2, 3, 4], [3, 4, 5]]
    windows.sum().backward()
    assert x.grad.tolist() == [1.0, 2.0, 3.0, 3.0, 2.0, 1.0]
    check(lambda x: x.as_strided((4, 3), (1, 1)) ** 2, x)
    check(lambda x: x.as_strided((2, 2, 2), (0, 2, 1), 1), x)  # stride 0: every element read twice
    y = torch.zeros(4, 5, dtype=torch.float64, device=device, requires_grad=True)
    check(lambda y: y[1:, 1:].as_strided((2, 3), (5, 1), 6), y)


def test_as_strided_of_an_expanded_input_shares_each_gradient(device):
    """An input whose window reads an element several times (expanded) gets an equal share of that element's
    gradient in each reading, as PyTorch's as_strided_backward divides by the count (fuzzer seed 426748)."""
    x = torch.zeros(3, 1, 2, device=device, requires_grad=True)
    (x * 3).expand(-1, 2, 2).as_strided((2, 1), (1, 1), 3).sum().backward()
    assert x.grad.reshape(-1).tolist() == [0.0, 0.0, 0.0, 3.0, 3.0, 0.0]
    y = torch.randn(2, 1, 3, dtype=torch.float64, device=device, requires_grad=True)
    check(lambda y: y.expand(2, 4, 3).as_strided((3, 2), (1, 2), 1) ** 2, y)


def test_view_grads_land_in_the_right_place(device):
    x = torch.zeros(3, 4, dtype=torch.float64, device=device, requires_grad=True)
    (x[1:, ::2] * 2).sum().backward()
    assert x.grad.tolist() == [[0, 0, 0, 0], [2, 0, 2, 0], [2, 0, 2, 0]]
    x.grad = None
    x.t()[-1, None, ...].sum().backward()
    assert x.grad.tolist() == [[0, 0, 0, 1], [0, 0, 0, 1], [0, 0, 0, 1]]


def test_double_backward_through_a_view_of_a_view():
    """Regression: ViewScatter's backward read its region at an absolute storage offset."""
    w = torch.arange(6.0, dtype=torch.float64).reshape(6, 1).requires_grad_()
    x = torch.tensor([2.0], dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad((w[2:6][0:2] * x).sum(), w, create_graph=True)
    (gx,) = torch.autograd.grad((g * torch.arange(6.0, dtype=torch.float64).reshape(6, 1)).sum(), x)
    assert gx.tolist() == [5.0]


# In-place view ops: self takes the view's geometry; expected geometries from PyTorch 2.13 on a (2, 1, 3) tensor.
INPLACE_VIEWS = {
    "unsqueeze_": (lambda t: t.unsqueeze_(1), lambda t: t.unsqueeze(1), ((2, 1, 1, 3), (3, 3, 3, 1), 0)),
    "squeeze_": (lambda t: t.squeeze_(), lambda t: t.squeeze(), ((2, 3), (3, 1), 0)),
    "squeeze_dim": (lambda t: t.squeeze_(1), lambda t: t.squeeze(1), ((2, 3), (3, 1), 0)),
    "squeeze_dims": (lambda t: t.squeeze_((0, 1)), lambda t: t.squeeze((0, 1)), ((2, 3), (3, 1), 0)),
    "t_": (lambda t: t.squeeze_(1).t_(), lambda t: t.squeeze(1).t(), ((3, 2), (1, 3), 0)),
    "transpose_": (lambda t: t.transpose_(0, 2), lambda t: t.transpose(0, 2), ((3, 1, 2), (1, 3, 3), 0)),
    "swapdims_": (lambda t: t.swapdims_(2, 0), lambda t: t.swapdims(2, 0), ((3, 1, 2), (1, 3, 3), 0)),
    "swapaxes_": (lambda t: t.swapaxes_(-1, 1), lambda t: t.swapaxes(-1, 1), ((2, 3, 1), (3, 1, 3), 0)),
    "as_strided_": (lambda t: t.as_strided_((2, 2), (1, 2), 1), lambda t: t.as_strided((2, 2), (1, 2), 1),
                    ((2, 2), (1, 2), 1)),
}
IDS = list(INPLACE_VIEWS)


@pytest.mark.parametrize("name", IDS)
def test_inplace_view_ops_change_only_the_geometry(name):
    inplace, _, expected = INPLACE_VIEWS[name]
    x = torch.arange(6.0).view(2, 1, 3).clone()
    storage = x.untyped_storage().data_ptr()
    assert inplace(x) is x
    assert geometry(x) == expected
    assert x.untyped_storage().data_ptr() == storage and x._version == (2 if name == "t_" else 1)  # as PyTorch
    assert not x.requires_grad and x.is_leaf


@pytest.mark.parametrize("name", IDS)
def test_inplace_view_ops_record_the_view_on_a_non_leaf(name):
    inplace, out_of_place, expected = INPLACE_VIEWS[name]

    def f_inplace(a):
        return inplace(a * 1.0) * 2

    def f_out_of_place(a):
        return out_of_place(a * 1.0) * 2

    a = torch.randn(2, 1, 3, dtype=torch.float64, requires_grad=True)
    check(f_inplace, a)
    y = a * 1.0
    inplace(y)
    assert geometry(y) == expected and y.grad_fn is not None and not y.is_leaf
    weights = torch.arange(float(y.numel()), dtype=torch.float64).view(y.shape)
    (g_in,) = torch.autograd.grad((f_inplace(a) * weights).sum(), a)
    (g_out,) = torch.autograd.grad((f_out_of_place(a) * weights).sum(), a)
    assert torch.equal(g_in, g_out)


@pytest.mark.parametrize("name", IDS)
def test_inplace_view_ops_refuse_leaves_and_restricted_views(name):
    inplace = INPLACE_VIEWS[name][0]
    leaf = torch.zeros(2, 1, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match="^a leaf Variable that requires grad is being used in an in-place operation"):
        inplace(leaf)
    assert geometry(leaf) == ((2, 1, 3), (3, 3, 1), 0) and leaf._version == 0
    with pytest.raises(RuntimeError, match="^a view of a leaf Variable that requires grad"):
        inplace(leaf[:, :, :])
    y = leaf.clone()
    with pytest.raises(RuntimeError, match="^Output 0 of Split is a view and is being modified inplace"):
        inplace(y.split(2)[0])
    with torch.no_grad():
        v = y[:, :, :]
    with pytest.raises(RuntimeError, match="^A view was created in no_grad mode and is being modified inplace"):
        inplace(v)
    assert geometry(v) == ((2, 1, 3), (3, 3, 1), 0) and y._version == 0
    with torch.no_grad():  # allowed, as optimizers do
        inplace(leaf)
    assert leaf.is_leaf and leaf.requires_grad and leaf._version >= 1


def test_inplace_view_op_on_a_view_keeps_it_a_view_of_the_base():
    a = torch.arange(6.0).view(3, 2).clone().requires_grad_()
    b = a.clone()
    x = b[:, :1]
    x.t_()
    assert x._base is b and geometry(x) == ((1, 3), (1, 2), 0) and x.grad_fn.name() == "TBackward1"  # PyTorch's t_ node
    assert b.grad_fn.name() == "CloneBackward0"  # no element written: the base's history is untouched
    (x * torch.tensor([[1.0, 2.0, 3.0]])).sum().backward()
    assert a.grad.tolist() == [[1.0, 0.0], [2.0, 0.0], [3.0, 0.0]]

    a.grad = None
    b = a.clone()
    x = b[:, :1]
    x.t_()
    x.mul_(2)  # a write through the re-shaped view: CopySlices on the base (values and grads from PyTorch)
    assert b.tolist() == [[0.0, 1.0], [4.0, 3.0], [8.0, 5.0]] and x.grad_fn.name() == "AsStridedBackward0"
    b.sum().backward()
    assert a.grad.tolist() == [[2.0, 1.0], [2.0, 1.0], [2.0, 1.0]]


def test_inplace_view_op_on_a_base_refreshes_its_other_views():
    a = torch.arange(6.0).view(2, 3).clone().requires_grad_()
    x = a * 1
    v = x[1:]
    x.t_()
    assert v.grad_fn.name() == "AsStridedBackward0" and v._base is x
    (v * torch.tensor([[1.0, 2.0, 3.0]])).sum().backward()
    assert a.grad.tolist() == [[0.0, 0.0, 0.0], [1.0, 2.0, 3.0]]


def test_inplace_view_op_bumps_the_version_seen_by_saved_tensors():
    x = torch.tensor([[0.0], [1.0], [2.0]], requires_grad=True)
    y = x.exp()
    y.t_()
    with pytest.raises(RuntimeError, match=r"modified by an inplace operation: \[torch.FloatTensor \[3, 1\]\], which "
                                           r"is output 0 of \w+, is at version 1; expected version 0 instead"):
        y.sum().backward()


def test_inplace_view_ops_errors_leave_self_unchanged():
    x = torch.zeros(3, 1)
    for bad, error, message in [
        (lambda: x.squeeze_(2), IndexError, r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)"),
        (lambda: x.unsqueeze_(3), IndexError, r"expected to be in range of \[-3, 2\], but got 3"),
        (lambda: x.transpose_(0, 2), IndexError, r"expected to be in range of \[-2, 1\], but got 2"),
        (lambda: torch.zeros(2, 2, 2).t_(), RuntimeError, "t_\\(\\) expects a tensor with <= 2 dimensions, but self is 3D"),
        (lambda: x.as_strided_((2,), (1, 1)), RuntimeError, "mismatch in length of strides and shape"),
        (lambda: x.as_strided_((10,), (1,)), RuntimeError, "setStorage: sizes \\[10\\], strides \\[1\\], storage offset 0"),
    ]:
        with pytest.raises(error, match=message):
            bad()
    assert geometry(x) == ((3, 1), (1, 1), 0) and x._version == 0
    e = torch.zeros(3).expand(2, 3)
    e.t_()  # no element is written: overlapping memory is fine
    assert geometry(e) == ((3, 2), (1, 0), 0)
    z = torch.tensor(5.0)
    z.t_().unsqueeze_(0).squeeze_(0).squeeze_()
    assert geometry(z) == ((), (), 0) and z._version == 4
    d = torch.arange(6.0)[2:]
    d.as_strided_((2,), (1,))  # the offset stays self's
    assert geometry(d) == ((2,), (1,), 2) and d.tolist() == [2.0, 3.0]


def test_empty_views_are_contiguous():
    # PyTorch: a tensor with no elements is contiguous whatever its strides
    x = torch.zeros(0, 2)
    assert x.t().is_contiguous() and x[:, ::2].is_contiguous()
    y = torch.zeros(2, 2, 1)[:, 1, 1:1]
    assert y.shape == (2, 0) and y.is_contiguous()
    assert torch.zeros(1, 0).reshape(0, 1, 0).is_contiguous()


def test_chunk_of_an_empty_dim_gives_chunks_empty_pieces():
    # PyTorch: chunk(k) of a size-0 dim returns k empty tensors (split would return one)
    pieces = torch.zeros(0, 3).chunk(4)
    assert len(pieces) == 4 and all(p.shape == (0, 3) for p in pieces)
    assert [p.shape for p in torch.zeros(2, 0).chunk(2, dim=1)] == [(2, 0), (2, 0)]
    assert len(torch.zeros(1).chunk(4)) == 1


def test_unbind_of_an_empty_dim_is_an_empty_tuple():
    assert torch.unbind(torch.zeros(0)) == ()
    assert torch.zeros(0, 2, requires_grad=True).unbind(0) == ()
    assert [t.shape for t in torch.zeros(0, 2).unbind(1)] == [(0,), (0,)]


@pytest.mark.parametrize("mode", ["no_grad", "inference_mode"])
@pytest.mark.parametrize("make", [lambda b: b[0:2], lambda b: b.view(3), lambda b: b.unbind(0)[0], lambda b: b.transpose(0, 0)])
def test_a_view_made_with_grad_off_requires_grad_when_its_base_does(mode, make):
    """PyTorch 2.13 (DifferentiableViewMeta::requires_grad): such a view requires grad, is a leaf without
    grad_fn, and stays so; ops on it are recorded, yet no gradient reaches it or its base."""
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with getattr(torch, mode)():
        v = make(x)
        assert v.requires_grad
    assert v.requires_grad and v.is_leaf and v.grad_fn is None and v._base is x
    assert "requires_grad=True" in repr(v)
    v.requires_grad_(False)
    assert v.requires_grad
    if mode == "inference_mode":
        return
    v.retain_grad()  # a no-op on a leaf
    y = (v * 2).sum()
    assert y.requires_grad and y.grad_fn is not None
    y.backward()
    assert x.grad is None and v.grad is None
    for wrt in (x, v):
        with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
            torch.autograd.grad((v * 2).sum(), wrt)
    w = v.unsqueeze(0)
    assert w.requires_grad and w.grad_fn.name() == "UnsqueezeBackward0"


def test_a_view_made_with_grad_off_follows_its_base():
    x = torch.tensor([1.0, 2.0, 3.0])
    with torch.no_grad():
        v = x[0:2]
    assert not v.requires_grad
    x.requires_grad_()
    assert v.requires_grad
    with torch.no_grad():
        assert not x.detach()[0:2].requires_grad


def test_using_a_no_grad_view_after_its_base_changed_raises_as_pytorch():
    """The optimizer pattern: a view taken under no_grad, its parameter updated in place, then used with grad."""
    p = torch.nn.Parameter(torch.ones(3))
    with torch.no_grad():
        v = p[0:2]
        p.add_(1)
    with pytest.raises(RuntimeError, match="^A view was created in no_grad mode and its base or another view of its"):
        (p * v.sum()).sum()


@pytest.mark.parametrize("shape", [(), (1,), (3,)])
def test_t_below_two_dims_is_a_new_view(shape):
    """PyTorch's t() of a 0-/1-dim tensor is an alias (transpose(0, 0)), not the tensor itself: an in-place
    view op on the input leaves it alone (fuzzer seeds 50869, 55145)."""
    x = torch.zeros(shape)
    y = x.t()
    assert y is not x and y._base is x and y.shape == shape
    x.unsqueeze_(0)
    assert y.shape == shape and x.shape == (1,) + shape
