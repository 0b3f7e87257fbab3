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
                       r"by an inplace operation: \[torch.FloatTensor \[3\]\], which is output 0 of SigmoidBackward0, "
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
    with pytest.raises(RuntimeError, match="Output 0 of UnbindBackward0 is a view and is being modified inplace"):
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
