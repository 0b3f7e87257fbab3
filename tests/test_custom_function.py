"""Custom autograd Functions (SEMANTICS.md 1.9, AG-13..AG-15, VW-16)."""


import numpy as np
import pytest
from hypothesis import given

import minitorch as torch
from minitorch.autograd import Function, gradcheck, gradgradcheck, once_differentiable
from minitorch.testing import assert_close
from minitorch.testing.strategies import gradcheck_inputs

VERSION_ERROR = "one of the variables needed for gradient computation has been modified by an inplace operation"


def leaf(values, device="cpu", dtype=torch.float64):
    return torch.tensor(values, dtype=dtype, device=device, requires_grad=True)


def add_one_in_place(t):
    """``t.add_(1)``; until in-place ops exist, the same write at the array level plus the version bump."""
    if hasattr(t, "add_"):
        return t.add_(1)
    t._array[...] += 1
    t._bump_version()
    return t


class Sq(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * x * g


class Exp(Function):
    """Saves its output: backward reads it back, and double backward flows through it."""

    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y


class MulAdd(Function):
    """Two tensor inputs, a Python scalar, two outputs."""

    @staticmethod
    def forward(ctx, x, y, alpha):
        ctx.save_for_backward(x, y)
        ctx.alpha = alpha
        return x * y, x + alpha * y

    @staticmethod
    def backward(ctx, g_prod, g_sum):
        x, y = ctx.saved_tensors
        return g_prod * y + g_sum, g_prod * x + ctx.alpha * g_sum, None


def test_sq_values_name_and_edges(device):
    x = leaf([1.0, 2.0], device)
    y = Sq.apply(x)
    assert type(y.grad_fn).__name__ == "SqBackward" and y.grad_fn.name() == "SqBackward"
    assert y.grad_fn.next_functions[0][0] is not None
    assert y.grad_fn.next_functions[0][0].name() == "torch::autograd::AccumulateGrad"
    assert y.grad_fn.next_functions[0][0].variable is x
    z = Sq.apply(x * 3)
    assert z.grad_fn.next_functions[0][0] is not None and z.grad_fn.next_functions[0][0].name() == "MulBackward0"
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 4.0]


@given(gradcheck_inputs(1))
def test_sq_and_exp_gradcheck(inputs):
    assert gradcheck(Sq.apply, inputs)
    assert gradgradcheck(Sq.apply, inputs)
    assert gradcheck(Exp.apply, inputs)
    assert gradgradcheck(Exp.apply, inputs)


@given(gradcheck_inputs(2))
def test_multiple_inputs_and_outputs_gradcheck(inputs):
    x, y = inputs
    assert gradcheck(lambda a, b: MulAdd.apply(a, b, 0.5), (x, y))
    assert gradgradcheck(lambda a, b: MulAdd.apply(a, b, 0.5), (x, y))
    prod, total = MulAdd.apply(x, y, 0.5)
    np.testing.assert_allclose(prod.detach().numpy(), x.detach().numpy() * y.detach().numpy())
    np.testing.assert_allclose(total.detach().numpy(), x.detach().numpy() + 0.5 * y.detach().numpy())


def test_needs_input_grad():
    seen = {}

    class Probe(Function):
        @staticmethod
        def forward(ctx, x, y, k):
            seen["needs"] = ctx.needs_input_grad
            return x * y * k

        @staticmethod
        def backward(ctx, g):
            return g, None, None

    Probe.apply(leaf([1.0]), torch.tensor([2.0]), 3)
    assert seen["needs"] == (True, False, False)


def test_forward_sees_no_grad_mode():
    seen = {}

    class Probe(Function):
        @staticmethod
        def forward(ctx, x):
            y = x * 2
            seen["inside"] = (torch.is_grad_enabled(), y.requires_grad, y.grad_fn)
            return y

        @staticmethod
        def backward(ctx, g):
            return 2 * g

    out = Probe.apply(leaf([1.0]))
    assert seen["inside"] == (False, False, None)
    assert out.requires_grad and out.grad_fn.name() == "ProbeBackward"


def test_saved_input_is_version_checked():
    x = leaf([1.0, 2.0]).clone()
    y = Sq.apply(x)
    add_one_in_place(x)
    with pytest.raises(RuntimeError, match=VERSION_ERROR) as info:
        y.sum().backward()
    assert "is at version 1; expected version 0 instead" in str(info.value)


def test_saved_output_is_version_checked_and_names_the_node():
    x = leaf([0.0, 1.0])
    y = Exp.apply(x)
    add_one_in_place(y)
    with pytest.raises(RuntimeError, match=VERSION_ERROR) as info:
        y.sum().backward()
    assert "which is output 0 of Exp, is at" in str(info.value)  # PyTorch names the forward op


def test_saved_output_values_and_double_backward():
    x = leaf([0.5, 1.5])
    y = Exp.apply(x)
    (g,) = torch.autograd.grad(y.sum(), x, create_graph=True)
    assert_close(g, x.detach().exp())
    (gg,) = torch.autograd.grad(g.sum(), x)
    assert_close(gg, x.detach().exp())


def test_saved_tensors_freed_after_backward():
    x = leaf([1.0, 2.0])
    y = Sq.apply(x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()


def test_ag13_wrong_number_of_gradients():
    class BadN(Function):
        forward = staticmethod(lambda ctx, x: x * 1)
        backward = staticmethod(lambda ctx, g: (g, g))

    with pytest.raises(RuntimeError, match=r"function BadNBackward returned an incorrect number of gradients \(expected 1, got 2\)"):
        BadN.apply(leaf([1.0, 2.0])).sum().backward()

    class ExtraNones(Function):
        forward = staticmethod(lambda ctx, x: x * 1)
        backward = staticmethod(lambda ctx, g: (g, None, None))

    x = leaf([1.0, 2.0])
    ExtraNones.apply(x).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]


def test_gradient_for_a_non_tensor_input_is_refused():
    class Bad(Function):
        forward = staticmethod(lambda ctx, x, k: x * k)
        backward = staticmethod(lambda ctx, g: (g * 2, torch.ones(1)))

    with pytest.raises(RuntimeError, match="returned a gradient different than None at position 2"):
        Bad.apply(leaf([1.0]), 2).sum().backward()


def test_save_for_backward_only_takes_tensors():
    class Bad(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, 3)
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(TypeError, match="save_for_backward can only save variables, but argument 1 is of type int"):
        Bad.apply(leaf([1.0]))


def test_save_none_and_intermediate():
    class Intermediate(Function):
        @staticmethod
        def forward(ctx, x):
            c = x.cos()
            ctx.save_for_backward(None, c, x)
            return c.sin()

        @staticmethod
        def backward(ctx, g):
            nothing, c, x = ctx.saved_tensors
            assert nothing is None
            return g * c.cos() * -x.sin()

    x = leaf([0.3, 1.1])
    Intermediate.apply(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.cos(np.cos([0.3, 1.1])) * -np.sin([0.3, 1.1]))
    assert gradcheck(Intermediate.apply, (leaf([0.3, 1.1]),))


def test_ag14_mark_non_differentiable_sort():
    class Sort(Function):
        @staticmethod
        def forward(ctx, x):
            values, idx = x.sort()
            ctx.mark_non_differentiable(idx)
            ctx.save_for_backward(idx)
            return values, idx

        @staticmethod
        def backward(ctx, g, g_idx):
            (idx,) = ctx.saved_tensors
            return torch.zeros_like(g).scatter(0, idx, g)

    x = leaf([3.0, 1.0, 2.0])
    s, idx = Sort.apply(x)
    assert not idx.requires_grad and idx.grad_fn is None
    assert s.requires_grad
    (s * torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)).sum().backward()
    assert x.grad.tolist() == [3.0, 1.0, 2.0]


def test_mark_non_differentiable_float_output_gets_a_zero_grad_slot():
    seen = {}

    class WithMask(Function):
        @staticmethod
        def forward(ctx, x):
            mask = (x > 0).to(x.dtype)
            ctx.mark_non_differentiable(mask)
            return x * mask, mask

        @staticmethod
        def backward(ctx, g, g_mask):
            seen["g_mask"] = g_mask
            return g * (g_mask + 1)

    x = leaf([-1.0, 2.0])
    y, mask = WithMask.apply(x)
    assert not mask.requires_grad and mask.grad_fn is None and mask.tolist() == [0.0, 1.0]
    y.sum().backward()
    assert seen["g_mask"].tolist() == [0.0, 0.0]
    assert x.grad.tolist() == [1.0, 1.0]


def test_integer_outputs_are_not_differentiable():
    class ArgMaxToo(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, (x > 0).long()

        @staticmethod
        def backward(ctx, g, g_int):
            return 2 * g

    y, flags = ArgMaxToo.apply(leaf([-1.0, 1.0]))
    assert y.requires_grad and not flags.requires_grad and flags.dtype == torch.int64


def test_ag15_materialize_grads_and_non_tensor_outputs():
    seen = {}

    class Two(Function):
        @staticmethod
        def forward(ctx, x, materialize):
            ctx.set_materialize_grads(materialize)
            return x * 1, x * 2, "label"

        @staticmethod
        def backward(ctx, g1, g2, g_label):
            seen.update(g2=g2, g_label=g_label)
            return g1 + (0 if g2 is None else 2 * g2), None

    a, _, label = Two.apply(leaf([1.0, 2.0]), True)
    assert label == "label"
    a.sum().backward()
    assert seen["g2"].tolist() == [0.0, 0.0] and seen["g_label"] is None
    a, _, _ = Two.apply(leaf([1.0, 2.0]), False)
    a.sum().backward()
    assert seen["g2"] is None and seen["g_label"] is None


def test_once_differentiable():
    class SqOnce(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            assert not torch.is_grad_enabled()
            return 2 * x * g

    x = leaf([1.0, 2.0])
    assert gradcheck(SqOnce.apply, (x,))
    (g,) = torch.autograd.grad(SqOnce.apply(x).sum(), x, create_graph=True)
    assert g.tolist() == [2.0, 4.0] and g.grad_fn is None
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad and does not have a grad_fn"):
        torch.autograd.grad(g.sum(), x)
    # when the incoming gradient itself requires grad, a double backward reaches the guard node
    y = SqOnce.apply(x)
    (g,) = torch.autograd.grad((y * x).sum(), x, create_graph=True)
    with pytest.raises(RuntimeError, match="trying to differentiate twice a function that was marked with @once_differentiable"):
        g.sum().backward()


def test_setup_context_style_with_kwargs_and_defaults():
    class Scale(Function):
        @staticmethod
        def forward(x, factor=3.0, *, shift=0.0):
            return x * factor + shift

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.inputs_seen = inputs
            ctx.factor = inputs[1]
            ctx.save_for_backward(output)

        @staticmethod
        def backward(ctx, g):
            (out,) = ctx.saved_tensors
            assert out.shape == g.shape
            return g * ctx.factor, None

    x = leaf([1.0, 2.0])
    y = Scale.apply(x)
    assert y.tolist() == [3.0, 6.0] and y.grad_fn.inputs_seen[1] == 3.0
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]
    x2 = leaf([1.0])
    Scale.apply(x2, factor=5.0).sum().backward()
    assert x2.grad.tolist() == [5.0]


def test_old_style_accepts_keyword_arguments():
    class Scale(Function):
        @staticmethod
        def forward(ctx, x, factor=2.0):
            ctx.factor = factor
            return x * factor

        @staticmethod
        def backward(ctx, g):
            return g * ctx.factor, None

    x = leaf([1.0])
    Scale.apply(x, factor=4.0).sum().backward()
    assert x.grad.tolist() == [4.0]


def test_input_returned_as_is_becomes_a_view():
    class Identity(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return 2 * g

    x = leaf([1.0, 2.0])
    y = Identity.apply(x)
    assert y is not x and y._is_view() and y._base is x
    assert y.data_ptr() == x.data_ptr() and y.grad_fn.name() == "IdentityBackward"
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]
    with torch.no_grad():
        z = Identity.apply(x)
    assert z is not x and not z.requires_grad and z.grad_fn is None


def test_no_grad_records_nothing():
    x = leaf([1.0, 2.0])
    with torch.no_grad():
        y = Sq.apply(x)
    assert not y.requires_grad and y.grad_fn is None
    assert Sq.apply(torch.tensor([1.0])).grad_fn is None


class Inplace(Function):
    @staticmethod
    def forward(ctx, x):
        add_one_in_place(x)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, g):
        return g


def test_vw16_mark_dirty_rebases_history():
    a = leaf([1.0])
    a2 = a.clone()
    out = Inplace.apply(a2)
    assert out is a2
    assert a2._version == 2
    assert a2.grad_fn.name() == "InplaceBackward"
    assert a2.tolist() == [2.0]
    out.sum().backward()
    assert a.grad.tolist() == [1.0]


def test_vw16_mark_dirty_invalidates_earlier_saves():
    a = leaf([1.0]).clone()
    b = a * a
    Inplace.apply(a)
    with pytest.raises(RuntimeError, match=VERSION_ERROR):
        b.backward()


def test_mark_dirty_rules():
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place operation."):
        Inplace.apply(leaf([1.0]))
    with torch.no_grad():  # allowed: nothing is recorded
        x = leaf([1.0])
        assert Inplace.apply(x) is x and x.tolist() == [2.0]

    class DirtyNotReturned(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(RuntimeError, match="Some elements marked as dirty during the forward method were not returned"):
        DirtyNotReturned.apply(leaf([1.0]).clone())


def test_hooks_on_custom_nodes():
    order = []
    x = leaf([1.0, 2.0])
    y = Sq.apply(x)
    y.register_hook(lambda g: order.append("tensor") or g * 10)
    y.grad_fn.register_prehook(lambda grads: order.append("pre"))

    def post(grad_inputs, grad_outputs):
        order.append("post")
        return (grad_inputs[0] + 1,)

    y.grad_fn.register_hook(post)
    y.sum().backward()
    assert order == ["tensor", "pre", "post"]
    assert x.grad.tolist() == [21.0, 41.0]


def test_node_keeps_ctx_attributes_and_metadata():
    class Tagged(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.tag = "hello"
            return x + 1

        @staticmethod
        def backward(ctx, g):
            return g

    y = Tagged.apply(leaf([1.0]))
    assert y.grad_fn.tag == "hello"
    y.grad_fn.metadata["k"] = 1
    assert y.grad_fn.metadata == {"k": 1}


def test_chain_of_custom_functions_matches_builtin_ops():
    x, x_ref = leaf([0.3, -0.2]), leaf([0.3, -0.2])
    y, y_ref = x, x_ref
    for _ in range(4):
        y = Sq.apply(Exp.apply(y) * 0.5)
        y_ref = (y_ref.exp() * 0.5) * (y_ref.exp() * 0.5)
    y.sum().backward()
    y_ref.sum().backward()
    assert_close(y, y_ref)
    assert_close(x.grad, x_ref.grad)


def test_backward_error_is_not_swallowed():
    class Raises(Function):
        forward = staticmethod(lambda ctx, x: x * 1)

        @staticmethod
        def backward(ctx, g):
            raise ValueError("boom in backward")

    with pytest.raises(ValueError, match="boom in backward"):
        Raises.apply(leaf([1.0])).sum().backward()


def test_base_function_must_be_implemented():
    class NoForward(Function):
        pass

    with pytest.raises(NotImplementedError, match="You must implement the forward function"):
        NoForward.apply(leaf([1.0]))


def test_input_returned_as_is_with_grad_off_is_a_plain_alias():
    """PyTorch 2.13: not a view (so it does not require grad through its base), sharing memory."""

    class Identity(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    x = leaf([1.0, 2.0])
    with torch.no_grad():
        z = Identity.apply(x)
    assert z is not x and not z.requires_grad and not z._is_view() and z.data_ptr() == x.data_ptr()
    z.mul_(2)
    assert x.tolist() == [2.0, 4.0]


def test_a_function_of_a_view_made_with_grad_off_is_recorded():
    """PyTorch 2.13: the input requires grad (through its base), so the Function is recorded and its backward
    runs (needs_input_grad True), but no gradient reaches the view's base."""
    seen = []

    class Square(Function):
        @staticmethod
        def forward(ctx, x):
            return x * x

        @staticmethod
        def backward(ctx, g):
            seen.append(ctx.needs_input_grad)
            return g

    x = leaf([1.0, 2.0, 3.0])
    with torch.no_grad():
        v = x[0:2]
    y = Square.apply(v)
    assert y.requires_grad and y.grad_fn is not None
    y.sum().backward()
    assert seen == [(True,)] and x.grad is None
