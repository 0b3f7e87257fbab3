"""In-place ops and views in autograd: every SEMANTICS.md VW example, plus the forbidden cases."""

import math

import numpy as np
import pytest

import minitorch as torch
from minitorch.autograd import Function


def leaf(values, **kwargs):
    return torch.tensor(values, requires_grad=True, **kwargs)


def close(t, expected, tol=1e-4):
    return t.tolist() == pytest.approx(expected, abs=tol)


def test_vw1_leaf_and_view_of_leaf_in_place():
    a = leaf([1.0, 2.0, 3.0])
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place operation"):
        a.add_(1)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is being used"):
        a[0] = 5
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is being used"):
        a[0:2].mul_(2)
    assert a.tolist() == [1.0, 2.0, 3.0]  # a failed op leaves its input unchanged
    with torch.no_grad():
        a.add_(1)
    assert a._version == 1 and a.is_leaf and a.tolist() == [2.0, 3.0, 4.0]


def test_vw1_leaf_that_is_a_view_of_a_tensor_without_grad():
    # requires_grad_() on a view makes a leaf whose base needs no grad: writing through a view of it must
    # still raise (PyTorch checks "the view requires grad and its base is a leaf"), not make it a non-leaf
    a = torch.zeros(3).view(3).requires_grad_()
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is being used"):
        a[0] = 5.0
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is being used"):
        a[1:].mul_(2)
    assert a.is_leaf and a.grad_fn is None and a.tolist() == [0.0, 0.0, 0.0]
    b = torch.zeros(3)
    b[:2].mul_(torch.ones(2, requires_grad=True))  # a view needing no grad of a leaf needing none: allowed
    assert b.requires_grad and not b.is_leaf


def test_vw2_versions_shared_by_views_and_detach():
    x = torch.zeros(4)
    v, d = x[1:3], x.detach()
    v.add_(1)
    assert (x._version, v._version, d._version) == (1, 1, 1)
    d.add_(1)
    assert (x._version, v._version, d._version) == (2, 2, 2)
    x[0] = 3.0
    assert x._version == 3
    assert x.tolist() == [3.0, 2.0, 2.0, 1.0]


def test_vw3_saved_output_modified():
    a = leaf([1.0, 2.0, 3.0])
    b = a.sigmoid()
    b.mul_(2)
    with pytest.raises(RuntimeError, match=r"one of the variables needed for gradient computation has been modified "
                       r"by an inplace operation: \[torch.FloatTensor \[3\]\], which is output 0 of Sigmoid, "
                       r"is at version 1; expected version 0 instead"):
        b.sum().backward()


def test_vw4_leaf_bumped_under_no_grad():
    a = leaf([1.0, 2.0, 3.0])
    b = a * a
    with torch.no_grad():
        a.add_(1)
    with pytest.raises(RuntimeError, match=r"\[torch.FloatTensor \[3\]\] is at version 1; expected version 0"):
        b.sum().backward()


def test_vw5_data_shares_the_version_counter():
    """minitorch's deliberate difference: writes through .data are caught, never silently wrong."""
    a = leaf([1.0, 2.0, 3.0])
    b = a.sigmoid()
    b.data.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        b.sum().backward()
    c = a.sigmoid()
    c.detach().mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        c.sum().backward()


def test_vw6_in_place_on_a_view():
    a = leaf([1.0, 2.0, 3.0, 4.0])
    b = a.clone()
    v = b[1:3]
    v.mul_(2)
    assert b.tolist() == [1.0, 4.0, 6.0, 4.0]
    assert b.grad_fn.name() == "CopySlices"
    assert v.grad_fn.name() == "AsStridedBackward0"
    assert v._base is b and b._version == 1 and v._version == 1
    b.sum().backward()
    assert a.grad.tolist() == [1.0, 2.0, 2.0, 1.0]


def test_vw7_base_written_after_view():
    a = leaf([1.0, 2.0, 3.0, 4.0])
    b = a.clone()
    v = b[1:3]
    b.mul_(3)
    assert v.tolist() == [6.0, 9.0]
    v.sum().backward()
    assert a.grad.tolist() == [0.0, 3.0, 3.0, 0.0]


def test_vw8_overlapping_sibling_views():
    x = leaf([1.0, 2.0, 3.0, 4.0])
    y = x.clone()
    v, w = y[::2], y[1:3]
    v.mul_(10)
    assert w.tolist() == [2.0, 30.0]
    (w * torch.tensor([1.0, 100.0])).sum().backward()
    assert x.grad.tolist() == [0.0, 1.0, 1000.0, 0.0]


def test_vw9_view_of_a_view():
    x = torch.arange(6.0).requires_grad_()
    y = x.clone().view(2, 3)
    t = y.t()
    t[0].mul_(10)
    assert y.tolist() == [[0.0, 1.0, 2.0], [30.0, 4.0, 5.0]]
    assert t._base is y._base
    y.sum().backward()
    assert x.grad.tolist() == [10.0, 1.0, 1.0, 10.0, 1.0, 1.0]


def test_vw10_setitem_on_a_non_leaf():
    x = leaf([1.0, 2.0, 3.0])
    y = x.clone()
    y[1] = 7.0
    (y * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert x.grad.tolist() == [1.0, 0.0, 3.0]
    x2, w = leaf([1.0, 2.0, 3.0]), leaf([5.0])
    y2 = x2.clone()
    y2[1:2] = w * 2
    (y2 * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert x2.grad.tolist() == [1.0, 0.0, 3.0] and w.grad.tolist() == [4.0]


def test_vw11_base_that_did_not_require_grad():
    base, var = torch.zeros(3), leaf([5.0])
    base[1:2].copy_(var)
    assert base.grad_fn.name() == "CopySlices" and base.requires_grad and not base.is_leaf
    (g,) = torch.autograd.grad((base * torch.tensor([1.0, 2.0, 3.0])).sum(), var)
    assert g.tolist() == [2.0]
    base2, var2 = torch.zeros(2, 3), leaf([1.0, 2.0, 3.0])
    view = base2[1]
    base2.copy_(var2)
    (g2,) = torch.autograd.grad(view.sum(), var2)
    assert g2.tolist() == [1.0, 1.0, 1.0]


def test_vw12_exp_in_place_on_a_view():
    x = leaf([1.0, 2.0, 3.0])
    y = x * 1
    y[1:].exp_()
    y.sum().backward()
    assert close(x.grad, [1.0, math.exp(2), math.exp(3)])


def test_vw13_saved_output_written_through_a_view():
    x = leaf([1.0, 2.0, 3.0])
    y = x.exp()
    y[1:].mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_vw14_forbidden_views():
    x = leaf([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(RuntimeError, match="Output 0 of Unbind is a view and is being modified inplace"):
        x.clone().unbind(0)[0].mul_(2)
    with pytest.raises(RuntimeError, match="This view is the output of a function that returns multiple views"):
        x.clone().split(1)[0].mul_(2)
    y = x.clone()
    with torch.no_grad():
        v = y[0]
    with pytest.raises(RuntimeError, match="A view was created in no_grad mode and is being modified inplace"):
        v.mul_(2)
    z = x.clone()
    with torch.no_grad():
        w = z[0]
    z.mul_(2)
    with pytest.raises(RuntimeError, match="its base or another view of its base has been modified inplace"):
        _ = w.grad_fn


def test_vw15_overlapping_memory():
    x = leaf([1.0, 2.0, 3.0])
    y = x.clone()
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor refers to a single memory"):
        y.expand(2, 3).mul_(2)


def test_vw16_custom_function_mark_dirty():
    class Inplace(Function):
        @staticmethod
        def forward(ctx, a):
            a.add_(1)
            ctx.mark_dirty(a)
            return a

        @staticmethod
        def backward(ctx, g):
            return g

    a = leaf([1.0])
    a2 = a.clone()
    out = Inplace.apply(a2)
    assert out is a2 and a2._version == 2
    assert out.grad_fn.name() == "InplaceBackward"
    out.sum().backward()
    assert a.grad.tolist() == [1.0]
    b_leaf = leaf([2.0])
    a3 = b_leaf * 1
    b = a3 * a3
    Inplace.apply(a3)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        b.backward()


def test_in_place_leaf_not_requiring_grad_becomes_non_leaf():
    base, var = torch.zeros(3), leaf([1.0, 2.0, 3.0])
    base[1] = var[0]
    assert base.requires_grad and not base.is_leaf


def test_hooks_bind_to_the_history_at_registration():
    t = leaf(1.0).sin()
    seen = {}
    t.register_hook(lambda g: seen.update(A=g.item()))
    t.cos_()
    t.register_hook(lambda g: seen.update(B=g.item()))
    t.backward()
    assert seen["B"] == pytest.approx(1.0)
    assert seen["A"] == pytest.approx(-math.sin(math.sin(1.0)), abs=1e-4)


def test_in_place_operators_return_self_and_bump_versions():
    x = torch.ones(3)
    y = x
    y += 1
    y *= 3
    y -= 1
    y /= 5
    assert y is x and x.tolist() == [1.0, 1.0, 1.0] and x._version == 4


def test_in_place_dtype_rules():
    x = torch.ones(3, dtype=torch.int64)
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        x.add_(1.5)
    assert x.tolist() == [1, 1, 1]
    f = torch.ones(3)
    f.add_(torch.ones(3, dtype=torch.int64))
    assert f.dtype is torch.float32 and f.tolist() == [2.0, 2.0, 2.0]
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        torch.ones(3).add_(torch.ones(2, 3))


def test_fill_zero_copy_and_random_fills():
    x = torch.empty(2, 3)
    assert x.fill_(2.5).tolist() == [[2.5] * 3] * 2
    assert x.zero_().tolist() == [[0.0] * 3] * 2
    x.copy_(torch.tensor([1, 2, 3]))
    assert x.tolist() == [[1.0, 2.0, 3.0]] * 2
    torch.manual_seed(0)
    u = torch.empty(1000).uniform_(2.0, 3.0)
    assert 2.0 <= min(u.tolist()) and max(u.tolist()) < 3.0
    n = torch.empty(4000).normal_(1.0, 0.5)
    assert abs(n.mean().item() - 1.0) < 0.05


def test_copy_gradient_reduces_broadcast_and_casts():
    src = leaf([1.0, 2.0], dtype=torch.float64)
    dst = torch.zeros(3, 2)
    dst.copy_(src)
    dst.sum().backward()
    assert src.grad.dtype is torch.float64 and src.grad.tolist() == [3.0, 3.0]


def test_setitem_with_masks_and_integer_tensors():
    x = leaf([1.0, 2.0, 3.0, 4.0])
    y = x * 1
    y[torch.tensor([True, False, True, False])] = 0.0
    y[torch.tensor([3])] = torch.tensor([10.0])
    assert y.tolist() == [0.0, 2.0, 0.0, 10.0]
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 1.0, 0.0, 0.0]


def test_in_place_through_view_does_not_copy_the_base():
    y = torch.zeros(1000, 1000)
    ptr = y.data_ptr()
    y[:, ::2].mul_(2)
    y.t()[10:20].add_(1)
    assert y.data_ptr() == ptr


def test_gradcheck_through_in_place_ops_on_views():
    def f(x):
        y = x * 1
        y[:, 1:].mul_(y[:, :-1] + 2)
        y[0, ::2] += x[1, ::2]
        y.t()[0].exp_()  # last: exp_ saves its result, so a later write to it would (rightly) raise
        return y

    x = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(f, (x,))
    assert torch.autograd.gradgradcheck(f, (x,))


def test_in_place_views_under_a_sum_or_mean_gradient():
    """sum's and mean's gradient is one value expanded: CopySlices reads its regions without a copy
    and copies it once where a region is written. Values against the hand-derived gradient."""
    data = np.random.default_rng(0).standard_normal((6, 8))
    for reduce, scale in (("sum", 1.0), ("mean", 1.0 / data.size)):
        x = torch.tensor(data, requires_grad=True)
        y = x * 3
        y[:, ::2].mul_(2)
        y.t()[1:3].add_(1)
        y[1:4, 1:5].mul_(-0.5)
        getattr(y, reduce)().backward()
        expected = np.full(data.shape, 3.0 * scale)
        expected[:, ::2] *= 2
        expected[1:4, 1:5] *= -0.5
        np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-12)
    x = torch.empty(6, 8, device="meta", requires_grad=True)
    y = x * 3
    y[:, ::2].mul_(2)
    y.t()[1:3].add_(1)
    y.mean().backward()
    assert x.grad.shape == (6, 8) and x.grad.device.type == "meta"


def test_in_place_views_under_a_sum_gradient_leave_shared_gradients_alone():
    x = torch.randn(4, 5, dtype=torch.float64, requires_grad=True)
    w = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
    other = torch.randn(4, 5, dtype=torch.float64, requires_grad=True)
    y = x * 1
    y[:, ::2].mul_(w)  # the written region's other input wants a gradient too
    seen = []
    y.register_hook(seen.append)
    y[:, 1].add_(2)
    (y.sum() + other.sum()).backward()  # both sums expand the same seed
    assert other.grad.tolist() == [[1.0] * 5] * 4
    assert seen[0].tolist() == [[1.0] * 5] * 4  # the gradient a hook saw is not written over
    expected = np.ones((4, 5))
    expected[:, ::2] = w.detach().numpy()
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-12)

    def f(x, w):
        y = x * 1
        y[:, ::2].mul_(w)
        y.t()[0].add_(x[:, 1])
        return y.sum()

    assert torch.autograd.gradcheck(f, (x, w))
    assert torch.autograd.gradgradcheck(f, (x, w))


def test_out_argument_writes_bumps_version_and_refuses_autograd():
    x = torch.zeros(4)
    torch.add(x, 1, out=x)
    assert x.tolist() == [1.0] * 4 and x._version == 1
    s = torch.empty(0)
    assert torch.sum(torch.ones(2, 3), dim=0, out=s) is s and s.tolist() == [2.0, 2.0, 2.0]
    with pytest.warns(UserWarning, match="was resized"):
        torch.mul(torch.ones(2), 3, out=torch.empty(5))
    with pytest.raises(RuntimeError, match=r"mul\(\): functions with out=... arguments don't support automatic"):
        torch.mul(leaf([1.0, 2.0]), 2, out=torch.empty(2))
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        torch.add(torch.ones(2), 0.5, out=torch.empty(2, dtype=torch.int64))
    values, indices = torch.empty(2), torch.empty(2, dtype=torch.int64)
    torch.max(torch.tensor([[1.0, 5.0], [7.0, 2.0]]), 1, out=(values, indices))
    assert values.tolist() == [5.0, 7.0] and indices.tolist() == [1, 0]


def test_mark_dirty_on_a_view_rewrites_the_base():
    class TimesTen(Function):
        @staticmethod
        def forward(ctx, scale, v):
            v.mul_(10)
            ctx.mark_dirty(v)
            return v

        @staticmethod
        def backward(ctx, g):
            return None, g * 10

    x = leaf([1.0, 2.0, 3.0])
    y = x * 1
    out = TimesTen.apply(2.0, y[1:])
    assert out.tolist() == [20.0, 30.0] and y.tolist() == [1.0, 20.0, 30.0]
    assert y.grad_fn.name() == "CopySlices"
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 10.0, 10.0]


# Views of restricted views (PyTorch's CreationMeta propagation): messages from PyTorch 2.13.
MULTI_OUTPUT = "This view is the output of a function that returns multiple views. Such functions do not allow"
NO_GRAD_VIEW = "created in no_grad mode and is being modified inplace with grad mode enabled. Given that this use"
PIECES = {
    "split": lambda t: t.split(1, dim=2)[2],
    "split_sizes": lambda t: t.split([2, 3], dim=2)[1],
    "split_with_sizes": lambda t: t.split_with_sizes([2, 3], dim=2)[1],
    "torch.split": lambda t: torch.split(t, 1, 2)[2],
    "chunk": lambda t: t.chunk(5, dim=2)[2],
    "unbind": lambda t: t.unbind(2)[2].unsqueeze(-1),
}
FURTHER_WRITES = {
    "setitem": lambda p: p.__setitem__((2, -1, slice(None, 1)), 0.5),
    "view_then_add_": lambda p: p.transpose(0, 1)[0].add_(1),
    "unsqueeze_then_mul_": lambda p: p.unsqueeze(0).mul_(2),
}


@pytest.mark.parametrize("write", list(FURTHER_WRITES), ids=list(FURTHER_WRITES))
@pytest.mark.parametrize("piece", list(PIECES), ids=list(PIECES))
def test_views_of_multi_output_views_may_not_be_written_in_place(piece, write):
    t2 = torch.randn(3, 4, 5, requires_grad=True).clone() * 1
    before = t2.detach().clone()
    p = PIECES[piece](t2)
    with pytest.raises(RuntimeError, match=r"Output 0 of \w+ is a view and is being modified inplace\. " + MULTI_OUTPUT):
        FURTHER_WRITES[write](p)
    assert torch.equal(t2.detach(), before)  # a refused write changes nothing


def test_multi_output_message_names_the_output_and_its_forward_op():
    x = torch.randn(3, 4, requires_grad=True).clone()
    with pytest.raises(RuntimeError, match="^Output 1 of Unbind is a view and is being modified inplace. " + MULTI_OUTPUT):
        x.unbind(0)[1].add_(1)
    with pytest.raises(RuntimeError, match="^Output 1 of SplitWithSizes is a view and is being modified inplace"):
        x.split([1, 2])[1].add_(1)
    with pytest.raises(RuntimeError, match="^Output 0 of View is a view and is being modified inplace. " + MULTI_OUTPUT):
        x.unbind(0)[0].view(2, 2).add_(1)
    leaf_ = torch.randn(3, 4, requires_grad=True)  # the view rule is checked before the leaf rule
    with pytest.raises(RuntimeError, match="^Output 0 of Select is a view and is being modified inplace. " + MULTI_OUTPUT):
        leaf_.split(2)[0][0].add_(1)


def test_views_of_no_grad_and_inference_views_may_not_be_written_with_grad():
    x = torch.randn(3, 4, requires_grad=True).clone()
    with torch.no_grad():
        v = x[1]
        p = x.split(2)[0]
    with pytest.raises(RuntimeError, match=NO_GRAD_VIEW):
        v[1:3].mul_(2)
    with pytest.raises(RuntimeError, match=NO_GRAD_VIEW):
        p[0].add_(1)
    with torch.inference_mode():
        w = x[0]
    with pytest.raises(RuntimeError, match="created in inference mode and is being modified inplace in normal mode.*"
                                           "inside the inference_mode block"):
        w[1:].add_(1)


def test_the_most_recent_restriction_wins_except_inference_mode():
    x = torch.randn(3, 4, requires_grad=True).clone()
    p = x.split(2)[0]
    with torch.no_grad():
        q = p[0]  # no_grad replaces multi-output
    with pytest.raises(RuntimeError, match="^A view was " + NO_GRAD_VIEW):
        q.add_(1)
    with torch.no_grad():
        v = x[0:2]
    # (PyTorch starts "Output 0 of Split is a view": its no_grad view v requires grad, minitorch's does not)
    with pytest.raises(RuntimeError, match="is being modified inplace.*" + MULTI_OUTPUT):
        v.split(2, 1)[0].add_(1)  # multi-output replaces no_grad
    with torch.inference_mode():
        w = x[0]
    with torch.no_grad():
        u = w[1:]
    with pytest.raises(RuntimeError, match="created in inference mode and is being modified inplace in normal mode"):
        u.add_(torch.ones(3, requires_grad=True))


def test_views_of_a_base_not_requiring_grad_written_with_a_grad_value():
    x = torch.randn(3, 4)
    p = x.split(2)[0]
    message = "^A view was created in no_grad mode and is being modified inplace with grad mode enabled. " + MULTI_OUTPUT
    with pytest.raises(RuntimeError, match=message):
        p[0].copy_(torch.randn(4, requires_grad=True))
    with pytest.raises(RuntimeError, match=message):
        p.copy_(torch.randn(2, 4, requires_grad=True))


def test_indirect_writes_make_restricted_views_unusable():
    x = torch.randn(3, 4, requires_grad=True).clone()
    p = x.split(2)[0]
    q = p[0]
    with torch.no_grad():
        x.mul_(2)  # the base written, even under no_grad
    assert repr(p).endswith(", grad_fn=<Invalid>)")  # printing still works, as in PyTorch
    with pytest.raises(RuntimeError, match="^Output 0 of Split is a view and its base or another view of its base has "
                                           "been modified inplace. " + MULTI_OUTPUT):
        _ = p.grad_fn
    with pytest.raises(RuntimeError, match="^Output 0 of Select is a view and its base or another view"):
        _ = q * 2
    y = torch.randn(3, 4, requires_grad=True).clone()
    with torch.no_grad():
        w = y[0][1:]
    y.mul_(2)
    with torch.no_grad(), pytest.raises(RuntimeError, match="created in no_grad mode and its base or another view"):
        _ = w.grad_fn


def test_restricted_views_stay_writable_without_grad():
    x = torch.arange(12.0).view(3, 4)  # nothing requires grad
    p = x.split(2)[0]
    p.mul_(2)
    p[0].add_(1)
    p[0, 1] = 30.0
    with torch.no_grad():
        v = x[2]
    v[1:3].mul_(10)
    assert x.tolist() == [[1.0, 30.0, 5.0, 7.0], [8.0, 10.0, 12.0, 14.0], [8.0, 90.0, 100.0, 11.0]]
    assert x._version == 4

    a = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = a.clone()
    pieces = y.unbind(0)
    with torch.no_grad():  # made with grad, written without: allowed, and not recorded
        pieces[0].mul_(10)
        pieces[1][0:1].add_(1)
        u = y.split(1, 1)[1]
        u[0].sub_(1)
    assert y.tolist() == [[10.0, 19.0], [4.0, 4.0]] and y.grad_fn.name() == "CloneBackward0"
    (y * torch.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    assert a.grad.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    d = a.clone().split(1)[0].detach()  # a detached piece has no view history
    d[0].add_(1)


def test_tensor_split_pieces_are_plain_slices_that_may_be_written():
    x = torch.arange(12.0).view(3, 4).requires_grad_()
    y = x.clone()
    pieces = y.tensor_split(2, 1)
    assert [p.grad_fn.name() for p in pieces] == ["SliceBackward0", "SliceBackward0"]
    assert all(p._base is y for p in pieces)
    pieces[1].mul_(2)
    (y * torch.arange(12.0).view(3, 4)).sum().backward()
    assert x.grad.tolist() == [[0.0, 1.0, 4.0, 6.0], [4.0, 5.0, 12.0, 14.0], [8.0, 9.0, 20.0, 22.0]]


def test_views_of_inference_tensors_are_inference_tensors():
    with torch.inference_mode():
        x = torch.zeros(3)
    for view in (x[1:], x.view(3), x.split(1)[0], x.unsqueeze(0), x.detach()):
        assert view.is_inference()
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside InferenceMode is not allowed"):
        x[1:].add_(1)
    assert x.tolist() == [0.0, 0.0, 0.0]


def test_a_view_made_to_require_grad_is_a_view_of_a_leaf():
    x = torch.arange(3.0).view(3, 1).requires_grad_()  # its base, the arange, does not require grad
    with pytest.raises(RuntimeError, match="^a view of a leaf Variable that requires grad is being used in an in-place"):
        x.mul_(2)
    assert x.tolist() == [[0.0], [1.0], [2.0]] and x._version == 0


# what backward saves: PyTorch's choice of input or output --------------------------------------------------
def _saving_cases():
    F = torch.nn.functional
    cases = {name: getattr(torch, name) for name in (
        "exp", "exp2", "expm1", "sqrt", "rsqrt", "tan", "tanh", "sigmoid", "reciprocal", "relu",  # save the output
        "log", "sin", "atan", "erf", "erfinv", "square", "abs")}  # save the input
    cases.update({
        "pow_number": lambda x: x.pow(2.5), "pow_2": lambda x: x**2, "pow_0": lambda x: x**0,
        "pow_tensor": lambda x: x ** torch.full((4,), 2.0, dtype=x.dtype), "number_pow": lambda x: 2.0**x,
        "var": lambda x: x.var().reshape(1), "var_dim": lambda x: x.reshape(2, 2).var(1), "std": lambda x: x.std(0),
        "logaddexp": lambda x: torch.logaddexp(x, x.flip(0)), "logaddexp2": lambda x: torch.logaddexp2(x, x.flip(0)),
        "softmax": lambda x: F.softmax(x, 0), "logsumexp": lambda x: x.logsumexp(0).reshape(1),
        "prod": lambda x: x.prod().reshape(1), "norm": lambda x: x.norm().reshape(1),
        "layer_norm": lambda x: F.layer_norm(x, (4,)), "batch_norm": lambda x: F.batch_norm(x.reshape(2, 2), None, None,
                                                                                           training=True),
        "group_norm": lambda x: F.group_norm(x.reshape(1, 2, 2), 1),
    })
    for name in ("hardtanh", "leaky_relu", "elu", "selu", "celu", "gelu", "silu", "mish", "softplus", "logsigmoid",
                 "softsign", "hardsigmoid", "hardswish", "hardshrink", "softshrink", "relu6"):
        cases["F." + name] = getattr(F, name)
    cases["F.threshold"] = lambda x: F.threshold(x, 0.5, 0.0)
    return cases


# PyTorch 2.13: does y = f(x); y.mul_(2); y.sum().backward() raise "modified by an inplace operation"?
# (derivatives.yaml: exp, tanh, sigmoid, sqrt, ..., relu, softmax, std, prod, norm and a ** tensor read `result`;
# pow(Tensor, Scalar), erfinv, var, logaddexp, the activations and the native norms read only `self`)
RAISES_AFTER_IN_PLACE = {
    "exp", "exp2", "expm1", "sqrt", "rsqrt", "tan", "tanh", "sigmoid", "reciprocal", "relu", "pow_tensor",
    "number_pow", "std", "softmax", "logsumexp", "prod", "norm",
}


@pytest.mark.parametrize("name", sorted(_saving_cases()))
def test_writing_into_an_output_in_place_is_an_error_exactly_when_pytorch_saved_it(name):
    x = torch.tensor([0.2, 0.4, 0.7, 0.9], dtype=torch.float64, requires_grad=True)
    y = _saving_cases()[name](x)
    reference = torch.autograd.grad(y.sum() * 2, x)[0]
    y = _saving_cases()[name](x)
    y.mul_(2)
    if name in RAISES_AFTER_IN_PLACE:
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()
        return
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), reference.numpy(), rtol=1e-12, atol=1e-15)


def test_pow_with_a_number_exponent_saves_only_its_input():
    """The report: y = x.pow(2.5); y.tanh_() raised in backward; PyTorch 2.13 gives these gradients."""
    x = torch.tensor([1.0, 2.0, 0.5], dtype=torch.float64, requires_grad=True)
    y = x.pow(2.5)
    y.tanh_()
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0499358540350654, 0.00034518603860573583, 0.8568275360244634],
                               rtol=1e-9)


def test_double_backward_through_an_output_saving_op_applied_in_place_to_a_view():
    """The saved output of exp_/tanh_ written into a view unpacks with the view's history (as_strided of the
    base's CopySlices), not with the in-place node whose edge the CopySlices owns (PyTorch 2.13's values)."""
    x = leaf([0.5, 1.0])
    v = x * 1
    v[...].exp_()
    g, = torch.autograd.grad(v.sinh().sum(), x, create_graph=True)
    assert close(g, [4.4455, 20.6865])
    assert close(torch.autograd.grad(g.sum(), x)[0], [11.2521, 76.4305], tol=1e-3)
    x = leaf([0.5, 1.0, 2.0], dtype=torch.float64)
    v = x * 1
    v[1:].tanh_()
    g, = torch.autograd.grad((v ** 3).sum(), x, create_graph=True)
    assert close(g, [0.75, 0.7308, 0.1970])
    assert close(torch.autograd.grad(g.sum(), x)[0], [3.0, -0.3072, -0.3509])

    def f(x):
        v = x * 1
        v[1:].sigmoid_()
        return v ** 3

    assert torch.autograd.gradgradcheck(f, (leaf([0.5, 1.0, 2.0], dtype=torch.float64),))


def _backward_raises_modified(loss):
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


def test_inputs_whose_gradient_is_not_wanted_are_not_saved():
    """PyTorch saves only what the gradients of inputs requiring grad read (Op.saved_when): writing into the
    other inputs before backward is allowed; writing into a saved one raises (PyTorch 2.13's gradients)."""
    x, y = leaf([1.5, -2.0]), torch.tensor([0.7, 0.3])
    z = torch.fmod(x, y)
    y[...] = 0.25
    z.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]
    x, y = torch.tensor([1.5, -2.0]), leaf([0.7, 0.3])
    z = torch.remainder(x, y)
    x[...] = 0.25  # read by y's gradient
    _backward_raises_modified(z.sum())
    x, y = leaf([1.5, -2.0]), torch.tensor([0.7, 0.3])
    z = torch.lerp(x, y, 0.3)  # a number weight: nothing is saved
    y.reciprocal_()
    z.sum().backward()
    assert close(x.grad, [0.7, 0.7])
    x, y, w = leaf([1.5, -2.0]), torch.tensor([0.7, 0.3]), torch.tensor([0.2, 0.3])
    z = torch.lerp(x, y, w)
    y.div_(2)
    z.sum().backward()
    assert close(x.grad, [0.8, 0.7])
    z = torch.lerp(x, y, w)
    w.div_(2)
    _backward_raises_modified(z.sum())
    x, y = leaf([1.5, 2.0]), torch.tensor([0.7, 0.3])
    z = torch.hypot(x, y)
    y.mul_(2)
    z.sum().backward()
    assert close(x.grad, [0.9062, 0.9889])
    x, y = torch.tensor([1.5, 2.0]), leaf([0.7, 0.3])
    z = torch.copysign(x, y)
    x.mul_(2)
    z.sum().backward()
    assert y.grad.tolist() == [0.0, 0.0]
    x = leaf([1.5, 2.0])
    index = torch.tensor([1])
    z = torch.scatter_add(x * 1, 0, index, torch.tensor([3.0]))  # src needs no gradient: index not saved
    index.zero_()
    z.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]
    z = torch.pow(x, torch.tensor([0.7, 0.3]))  # the output is always saved
    z.mul_(2)
    _backward_raises_modified(z.sum())


@pytest.mark.parametrize("take", ["gather", "take_along_dim"])
def test_gather_saves_its_input(take):
    x0 = leaf([1.5, 2.0])
    x = x0 * 1
    z = getattr(torch, take)(x, 0, torch.tensor([1])) if take == "gather" else torch.take_along_dim(x, torch.tensor([1]), 0)
    x.mul_(2)
    _backward_raises_modified(z.sum())


INDEX_OUTPUT_OPS = {
    "max": lambda x: torch.max(x, 1), "min": lambda x: x.min(0, keepdim=True), "sort": lambda x: torch.sort(x, 1),
    "topk": lambda x: torch.topk(x, 2), "kthvalue": lambda x: torch.kthvalue(x, 2, 1), "median": lambda x: x.median(1),
    "mode": lambda x: x.mode(1), "cummax": lambda x: torch.cummax(x, 1), "cummin": lambda x: torch.cummin(x, 0),
    "max_pool1d": lambda x: torch.nn.functional.max_pool1d(x.unsqueeze(0), 2, return_indices=True),
    "max_0d": lambda x: torch.max(x[0, 0], 0),
}
# PyTorch 2.13's x.grad of out.values.sum() when the indices are left alone
INDEX_OUTPUT_GRADS = {
    "max": [0, 1, 0, 1, 0, 0], "min": [1, 0, 1, 0, 1, 0], "sort": [1, 1, 1, 1, 1, 1], "topk": [1, 1, 0, 1, 1, 0],
    "kthvalue": [1, 0, 0, 0, 1, 0], "median": [1, 0, 0, 0, 1, 0], "mode": [0, 0, 1, 0, 0, 1],
    "cummax": [1, 2, 0, 3, 0, 0], "cummin": [2, 1, 2, 0, 1, 0], "max_pool1d": [0, 1, 0, 1, 0, 0],
    "max_0d": [1, 0, 0, 0, 0, 0],
}


@pytest.mark.parametrize("name", sorted(INDEX_OUTPUT_OPS))
def test_index_outputs_are_saved_and_version_checked(name):
    x = leaf([[0.5, 2.0, -1.0], [3.0, 1.0, 0.0]])
    values, indices = INDEX_OUTPUT_OPS[name](x)
    values.sum().backward()
    assert x.grad.reshape(-1).tolist() == INDEX_OUTPUT_GRADS[name]
    values, indices = INDEX_OUTPUT_OPS[name](x)
    indices.add_(0)
    with pytest.raises(RuntimeError, match=r"modified by an inplace operation: \[torch.LongTensor .*\] is at version 1"):
        values.sum().backward()


def test_sgn_saves_its_result():
    x = leaf([0.5, -2.0])
    s = torch.sgn(x * 1)
    (s * x).sum().backward()
    assert x.grad.tolist() == [1.0, -1.0]
    s = torch.sgn(x * 1)
    s.mul_(2)
    _backward_raises_modified((s * x).sum())
    y = x * 1
    s = torch.sgn(y)  # and its input
    y.add_(1)
    _backward_raises_modified((s * x).sum())
    s = torch.sign(x * 1)  # sign saves nothing
    s.mul_(2)
    (s * x).sum().backward()
    assert x.grad.tolist() == [3.0, -3.0]


def test_cummax_saves_its_input():
    """PyTorch's cummaxmin_backward(grad, self, indices, dim) reads the input too."""
    x = leaf([[0.5, -2.0, 3.0]])
    y = x * 1
    values, _ = torch.cummax(y, 1)
    y.add_(1)
    _backward_raises_modified(values.sum())
    values, _ = torch.cummin(x * 1, 1)
    values.sum().backward()
    assert x.grad.tolist() == [[1.0, 2.0, 0.0]]


def test_number_divided_by_a_tensor_saves_the_reciprocal():
    """``1.5 / t`` is ``t.reciprocal() * 1.5`` in PyTorch: t itself is not saved (fuzzer seed 101484)."""
    x = leaf([0.0, 1.0, 2.0])
    v = x * 1
    y = 1.5 / v
    v.add_(1)
    y.sum().backward()
    assert x.grad.tolist() == [-math.inf, -1.5, -0.375]
    assert (1 / torch.tensor([3.0])).tolist() == [0.3333333432674408]  # float32(1/3) * 1
    assert (1 / torch.tensor([2, 0])).tolist() == [0.5, math.inf]


def test_cummax_of_an_empty_input_under_create_graph_returns_the_input():
    """PyTorch's cummaxmin_backward returns the empty input itself, so the gradient requires grad."""
    x = leaf(np.zeros((2, 0)).tolist())
    values, _ = torch.cummin(x, 0)
    g, = torch.autograd.grad(values.sum(), x, create_graph=True)
    assert g.shape == (2, 0) and g.requires_grad


@pytest.mark.parametrize("shapes", [((2, 3), (3, 4)), ((2, 3), (3,)), ((5, 2, 3), (3, 4)), ((3,), (3, 4))])
def test_matmul_saves_each_operand_only_for_the_other_gradient(shapes):
    """As PyTorch's mm/mv/bmm: a requiring grad with b constant saves only b, so writing into a is allowed."""
    a0, b = torch.ones(shapes[0], requires_grad=True), torch.full(shapes[1], 2.0)
    a = a0 * 1
    y = a @ b
    a.add_(1)
    (y * 1.5).sum().backward()
    assert a0.grad.sum().item() == 3.0 * a0.numel() * (4 if len(shapes[1]) == 2 else 1)
    y = a @ b
    b.add_(1)
    _backward_raises_modified(y.sum())


def test_a_view_made_before_its_base_required_grad_is_a_leaf_until_its_history_is_read():
    """PyTorch's check_inplace reads the view's stored grad_fn: a view made while its base needed no grad,
    whose base then started to require grad through an in-place write, counts as a leaf that requires grad
    (fuzzer seeds 43189, 16148, 13013); once its grad_fn has been read (regenerated), the write is allowed."""
    x, s = torch.tensor([0.5, 1.0]), leaf([2.0, 3.0])
    v = x[...]
    x.copy_(s)
    assert v.requires_grad and x.grad_fn is not None
    with pytest.raises(RuntimeError, match="^a leaf Variable that requires grad is being used in an in-place"):
        v.relu_()
    x, s = torch.tensor([0.5, 1.0]), leaf(2.0)
    v = x[::2]
    v[0] = s  # a write through a view of v: v's own history is never read
    with pytest.raises(RuntimeError, match="^a leaf Variable that requires grad is being used in an in-place"):
        v.reciprocal_()
    x, s = torch.tensor([0.5, 1.0]), leaf([2.0, 3.0])
    v = x[...]
    x.copy_(s)
    assert v.grad_fn is not None  # reading it builds the view's history: no longer a leaf
    v.mul_(2)
    v.sum().backward()
    assert s.grad.tolist() == [2.0, 2.0]


def test_linear_saves_input_and_weight_only_for_each_others_gradient():
    """As PyTorch's addmm/mm (fuzzer seeds 28203, 30618, 86020): with only the bias requiring grad nothing is
    saved, so writing into the input or the weight before backward is allowed."""
    F = torch.nn.functional
    x, w, b = torch.tensor([[1.0, 2.0]]), torch.tensor([[3.0, 4.0]]), leaf([0.5])
    y = F.linear(x, w, b)
    x.floor_().mul_(0)
    w.sqrt_()
    y.sum().backward()
    assert b.grad.tolist() == [1.0]
    x, w = torch.tensor([1.0, 2.0]), leaf([[3.0, 4.0]])
    y = F.linear(x, w)
    w.detach().zero_()  # the weight is not saved for its own gradient
    y.sum().backward()
    assert w.grad.tolist() == [[1.0, 2.0]]
    y = F.linear(x, w)
    x.mul_(2)  # the input is saved for the weight's gradient
    _backward_raises_modified(y.sum())


def test_writes_to_overlapping_windows_follow_pytorchs_overlap_rule():
    """PyTorch refuses a write only where an expanded (stride-0) dim of size > 1 makes elements share memory
    in a non-empty tensor; overlapping as_strided/unfold windows and empty expanded tensors are written
    (fuzzer seeds 17605, 77972, 17903). minitorch computes the elements from the values before the write
    (PyTorch's order-dependent result is undefined there: docs/differences.md)."""
    x = torch.tensor([1.0, 2.0, 3.0])
    w = torch.as_strided(x, (2, 2), (1, 1), 0)
    w.sub_(torch.tensor([1.0]))
    assert x.tolist() == [0.0, 1.0, 2.0]
    x = torch.arange(4.0)
    x.unfold(0, 2, 1).floor_()
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0]
    e = torch.zeros(1, 1).expand(0, 1, 2)
    assert e.add_(1).shape == (0, 1, 2)
    empty_windows = torch.zeros(1, 2, 4).unfold(2, 0, 2)
    assert empty_windows.pow_(2.0).shape == (1, 2, 3, 0)
    for write in (lambda t: t.add_(1), lambda t: torch.zeros(3).as_strided((2, 2), (1, 0)).sub_(1)):
        with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
            write(torch.zeros(1, 2).expand(2, 2))


def test_masked_fill_of_an_expanded_tensor_writes_only_the_filled_positions():
    """An unfilled alias of a filled element must not write the old value back (fuzzer seed 74629)."""
    x = torch.tensor(math.nan).expand(2)
    x.masked_fill_(torch.tensor([True, False]), 0.25)
    assert x.tolist() == [0.25, 0.25]
    x = torch.zeros(3, 1).expand(3, 2)
    x.masked_fill_(torch.tensor([[True, False], [False, False], [False, True]]), 2.0)
    assert x.tolist() == [[2.0, 2.0], [0.0, 0.0], [2.0, 2.0]]
    x = torch.zeros(1, 3).expand(2, 3)
    x.index_fill_(1, torch.tensor([1]), -1.0)
    assert x.tolist() == [[0.0, -1.0, 0.0], [0.0, -1.0, 0.0]]


def test_backward_through_a_fill_of_an_expanded_view_raises_as_pytorchs_copy_slices():
    """PyTorch's CopySlices copies the fill's gradient into the expanded region of the base's gradient,
    which refuses the copy; without a base gradient to compute there is no copy and no error."""
    x = leaf([1.0])
    e = (x * 2).expand(1, 3)
    e.masked_fill_(torch.tensor([True, False, False]), 2.0)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        e.sum().backward()
    s = leaf(1.0)
    y = torch.zeros(3).expand(2, 3)
    y.masked_fill_(torch.tensor([True, False, False]), s)
    y.sum().backward()
    assert s.grad.item() == 4.0
    x = leaf([1.0, 2.0])
    e = (x * 2).expand(1, 2)  # a size-1 expanded dim shares nothing
    e.masked_fill_(torch.tensor([True, False]), 2.0)
    e.sum().backward()
    assert x.grad.tolist() == [0.0, 2.0]


def test_setitem_over_whole_slices_writes_into_the_tensor_itself():
    """PyTorch's applySlice returns the tensor itself for a slice from 0 to the end with step 1, so
    ``t[:, :] = v`` is a fill of t (no CopySlices): the gradient of what t was is a zero that depends on
    nothing (fuzzer seed 98224), and a leaf raises the leaf error, not the view-of-a-leaf one."""
    x, w = leaf([[0.5]]), leaf([[-1.0]])
    y = torch.sinh(x)
    y[:, :] = -2.0
    gx, gw = torch.autograd.grad((y @ w).sum(), [x, w], create_graph=True)
    assert gx.tolist() == [[0.0]] and gw.tolist() == [[-2.0]]
    assert torch.autograd.grad(gx.sum() + gw.sum(), [x, w], allow_unused=True)[1] is None
    a = leaf([1.0, 2.0])
    for index in (slice(None), slice(0, 100), Ellipsis):
        with pytest.raises(RuntimeError, match="^a leaf Variable that requires grad is being used"):
            a[index] = 1.0
    with pytest.raises(RuntimeError, match="^a view of a leaf Variable"):
        a[-2:] = 1.0  # a negative start is not optimized away: a view


def test_operands_pytorch_saves_as_reshaped_copies_may_be_written_before_backward():
    """PyTorch's composite matmul folds a batch into one mm (or flattens it for bmm), and einsum permutes and
    reshapes its pair for bmm: where that reshape copies, the copy is what is saved, so writing into the
    operand afterwards is no error (fuzzer seeds 97687, 33376); where it is a view, it still raises."""
    F = torch.nn.functional
    w = leaf(np.ones((3, 2)).tolist())
    a = torch.ones(3, 2, 4).transpose(0, 2)  # (4, 2, 3): its leading dims do not merge
    y = torch.matmul(a, w)
    a.mul_(2)
    y.sum().backward()
    assert w.grad.tolist() == [[8.0, 8.0]] * 3
    a = torch.ones(4, 2, 3)  # contiguous: folded as a view
    y = torch.matmul(a, w)
    a.mul_(2)
    _backward_raises_modified(y.sum())
    v = leaf([1.0, 2.0, 3.0])
    b = torch.ones(5, 3, 2)  # v @ b folds b.mT, a copy
    y = torch.matmul(v, b)
    b.mul_(3)
    y.sum().backward()
    assert v.grad.tolist() == [10.0, 10.0, 10.0]
    weight = leaf(np.ones((5, 3)).tolist())
    x = torch.ones(2, 4, 3).transpose(0, 1)  # linear folds a non-contiguous 3-d input: a copy
    y = F.linear(x, weight)
    x.mul_(2)
    y.sum().backward()
    assert weight.grad.tolist() == [[8.0, 8.0, 8.0]] * 5
    s = leaf([[[0.5, 0.5]], [[0.5, 0.5]]])
    p = torch.ones(2, 1, 2).transpose(0, 2)
    q = s.transpose(0, 2) * 2
    y = torch.einsum("ijk,ijk->", q, p)
    q.add_(1)
    y.backward()
    assert s.grad.tolist() == [[[2.0, 2.0]], [[2.0, 2.0]]]


def test_clone_of_an_expanded_tensor_is_laid_out_as_pytorchs_empty_like():
    """PyTorch infers dense strides keeping a stride-0 dim in place (TensorIterator's order); numpy's order 'K'
    moved it: ones(1, 2, 3).expand(5, 2, 3).clone() had strides (1, 15, 5), PyTorch's are (6, 3, 1)."""
    assert torch.ones(1, 2, 3).expand(5, 2, 3).clone().stride() == (6, 3, 1)
    assert torch.ones(2, 1, 3).expand(2, 4, 3).clone().stride() == (12, 3, 1)
    assert torch.ones(3, 1).t().expand(5, 3).clone().stride() == (3, 1)
    assert torch.ones(4, 1, 3).permute(2, 1, 0).expand(3, 5, 4).clone().stride() == (1, 3, 15)
    assert torch.ones(3, 4).t().clone().stride() == (1, 4)


def test_an_op_without_differentiable_outputs_reads_no_stale_view_history():
    """A comparison of a multi-output view whose base was written in place with grad does not read the view's
    grad_fn (PyTorch records nothing for it: fuzzer seed 181717); reading grad_fn itself raises, as in PyTorch."""
    x1 = torch.zeros(5)
    x4 = torch.zeros(3, requires_grad=True)
    v1 = x1[::2]
    pieces = torch.split(v1, 5)
    written = v1.index_add_(-1, torch.tensor([2, 1, 2]), x4, alpha=-2.0)
    assert torch.ge(pieces[0], written).tolist() == [True, True, True]
    assert pieces[0].argmax().item() == 0
    with pytest.raises(RuntimeError, match="its base or another view of its base has been modified inplace"):
        pieces[0].grad_fn


def test_a_failed_inplace_op_still_refreshes_its_inputs_view_history():
    """PyTorch collects an in-place op's input edges (regenerating a stale view's grad_fn) before its kernel
    refuses overlapping memory, so after the failed write the view is no longer a leaf that requires grad
    (fuzzer seed 527698)."""
    x = torch.tensor(0.0, dtype=torch.float64, requires_grad=True)
    base = torch.tensor(1.0, dtype=torch.float64)
    view = base.reshape(1)
    base.sub_(x)  # the base now requires grad; the view's stored history is stale
    with pytest.raises(RuntimeError, match="refer to a single memory location"):
        base.add_(view, alpha=2.0)
    view.masked_fill_(torch.tensor([True]), 0.25)
    assert view.grad_fn is not None and base.item() == 0.25


def test_copy_from_itself_skips_the_overlap_check():
    """PyTorch's copy_ returns at once when src is self, before refusing an expanded destination; the version
    still moves and a recorded write still rebases the history (fuzzer seed 631370)."""
    x = torch.zeros(1, dtype=torch.float64)
    v = x.expand(2, 3)
    v.copy_(v)
    assert x._version == 1
    w = (torch.zeros(1, requires_grad=True) * 1).expand(2, 3)
    w.copy_(w)
    assert w.grad_fn.name() == "AsStridedBackward0"
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        v.copy_(v.clone())


def test_a_fill_through_a_window_whose_elements_share_memory_writes_only_what_it_fills():
    """An unfold window's elements share memory (PyTorch does not check it): masked_fill_ and index_fill_ write the
    filled positions only, so an unfilled alias of a filled location keeps the filled value (fuzzer seed 1131021;
    the values are PyTorch's)."""
    y = torch.zeros(4)
    y.unfold(-1, 2, 1).masked_fill_(torch.tensor([False, True]), -2.0)
    assert y.tolist() == [0.0, -2.0, -2.0, -2.0]
    z = torch.arange(4.0)
    z.unfold(-1, 2, 1).index_fill_(1, torch.tensor([1]), 7.0)
    assert z.tolist() == [0.0, 7.0, 7.0, 7.0]
    w = torch.arange(5.0)
    w.unfold(-1, 3, 1).masked_fill_(torch.tensor([[True, False, False], [False] * 3, [False, False, True]]), -1.0)
    assert w.tolist() == [-1.0, 1.0, 2.0, 3.0, -1.0]
