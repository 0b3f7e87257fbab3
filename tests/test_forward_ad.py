"""Forward-mode AD (torch.autograd.forward_ad): tangents checked against finite differences.

Every op of the double-backward table (the op list the reverse-mode tables use) is gradchecked with
``check_forward_ad=True`` in float64; then a set of ops on 0-dim, empty, non-contiguous and broadcast
inputs; then the semantics of dual levels, views, in-place ops, custom Functions and forward over reverse.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_double_backward_table import CASES, _input

import minitorch as torch
import minitorch.autograd.forward_ad as fwAD
from minitorch.autograd import Function, GradcheckError, gradcheck, gradgradcheck
from minitorch.ops import op as op_module

D = torch.float64
F = torch.nn.functional
RAISES_IN_FORWARD_MODE = {"floor_divide": "Trying to use forward AD with aten::floor_divide that does not support it"}


def t64(values, requires_grad=False):
    return torch.tensor(values, dtype=D, requires_grad=requires_grad)


def tangent(dual):
    return fwAD.unpack_dual(dual).tangent


# every op of the table -----------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(CASES))
def test_forward_ad_gradcheck_over_the_op_table(name):
    kind, shape, function = CASES[name]
    x = _input(torch, kind, shape)
    assert function(torch, x) is not None, f"minitorch lacks the op table's {name}"
    if name in RAISES_IN_FORWARD_MODE:
        with pytest.raises(NotImplementedError, match=RAISES_IN_FORWARD_MODE[name]):
            gradcheck(lambda a: function(torch, a), (x,), check_forward_ad=True, check_backward_ad=False)
        return
    assert gradcheck(lambda a: function(torch, a), (x,), check_forward_ad=True, check_backward_ad=False)


# geometries --------------------------------------------------------------------------------------
def _geometries():
    """(name, inputs): 0-dim, empty, non-contiguous (transposed, strided) and broadcasting inputs."""
    rng = np.random.default_rng(7)

    def leaf(a):
        return torch.tensor(a, dtype=D).requires_grad_()

    base = rng.uniform(0.5, 1.5, (4, 6))
    return {
        "0-dim": (leaf(0.7), leaf(1.3)),
        "empty": (leaf(np.zeros((0, 3))), leaf(np.zeros((0, 3)))),
        "transposed": (torch.tensor(base, dtype=D).t().requires_grad_(), leaf(rng.uniform(0.5, 1.5, (6, 4)))),
        "strided": (torch.tensor(base, dtype=D)[:, ::2].detach().requires_grad_(), leaf(rng.uniform(0.5, 1.5, (4, 3)))),
        "broadcast": (leaf(rng.uniform(0.5, 1.5, (3, 1))), leaf(rng.uniform(0.5, 1.5, (4,)))),
    }


BINARY = {
    "add": lambda a, b: a + b * 2,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "pow": lambda a, b: a ** b,
    "atan2": torch.atan2,
    "maximum": torch.maximum,
    "where": lambda a, b: torch.where(a > 1, a, b),
    "chain": lambda a, b: ((a * b).exp() + a.sin() / b).tanh().log1p(),
}
UNARY = {
    "sum": lambda a: a.sum(),
    "mean_dim": lambda a: a.mean(-1) if a.dim() else a.mean(),
    "softmax": lambda a: a.softmax(-1) if a.dim() else a.softmax(0),
    "log_softmax": lambda a: a.log_softmax(-1) if a.dim() else a.log_softmax(0),
    "view_ops": lambda a: a.reshape(-1).flip(0)[: max(a.numel() - 1, 0)].unsqueeze(0).expand(2, -1),
    "transpose_contiguous": lambda a: a.mT.contiguous() * 2 if a.dim() == 2 else a * 2,
    "clone_inplace": lambda a: a.clone().mul_(3).add_(a),
    "cumsum_prod": lambda a: a.reshape(-1).cumsum(0) * a.reshape(-1).cumprod(0),
    "norm": lambda a: a.norm(),
    "sort": lambda a: a.reshape(-1).sort()[0],
}


@pytest.mark.parametrize("geometry", sorted(_geometries()))
@pytest.mark.parametrize("name", sorted(BINARY))
def test_forward_ad_binary_ops_on_every_geometry(name, geometry):
    inputs = _geometries()[geometry]
    assert gradcheck(BINARY[name], inputs, check_forward_ad=True, check_backward_ad=False)


@pytest.mark.parametrize("geometry", sorted(_geometries()))
@pytest.mark.parametrize("name", sorted(UNARY))
def test_forward_ad_unary_ops_on_every_geometry(name, geometry):
    x = _geometries()[geometry][0]
    assert gradcheck(UNARY[name], (x,), check_forward_ad=True, check_backward_ad=False)


@pytest.mark.parametrize("fast_mode", [False, True])
def test_forward_ad_of_matmul_linear_conv_einsum(fast_mode):
    rng = np.random.default_rng(3)

    def leaf(*shape):
        return torch.tensor(rng.standard_normal(shape), dtype=D).requires_grad_()

    x, w, b = leaf(2, 3, 7), leaf(4, 3, 3), leaf(4)
    assert gradcheck(lambda x, w, b: F.conv1d(x, w, b, padding=1), (x, w, b), check_forward_ad=True,
                     fast_mode=fast_mode)
    assert gradcheck(lambda x, w, b: F.conv_transpose1d(x.mT.contiguous().mT[:, :, :3], w, b[:3]),
                     (leaf(2, 4, 4), w, b), check_forward_ad=True, fast_mode=fast_mode)
    a, m, bias = leaf(5, 3), leaf(2, 3), leaf(2)
    assert gradcheck(F.linear, (a, m, bias), check_forward_ad=True, fast_mode=fast_mode)
    assert gradcheck(lambda a, m: a @ m.t(), (a, m), check_forward_ad=True, fast_mode=fast_mode)
    assert gradcheck(lambda a, m: torch.einsum("ij,kj->ik", a, m), (a, m), check_forward_ad=True,
                     fast_mode=fast_mode)


def test_forward_ad_of_complex_functions():
    z = torch.complex(t64([0.3, -0.4, 0.8]), t64([0.5, 0.2, -0.6])).requires_grad_()
    assert gradcheck(lambda a: (a * a).exp() / (a + 2), (z,), check_forward_ad=True)
    assert gradcheck(lambda a: a.abs() * a.angle(), (z,), check_forward_ad=True)  # not holomorphic


def test_check_forward_ad_catches_a_wrong_jvp():
    class WrongJvp(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_forward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            return g  # wrong too, but only forward mode is checked below

        @staticmethod
        def jvp(ctx, t):
            (x,) = ctx.saved_tensors
            return t * x  # should be 2 x t

    x = t64([0.5, 1.5], requires_grad=True)
    with pytest.raises(GradcheckError, match="Jacobian computed with forward mode mismatch for output 0"):
        gradcheck(WrongJvp.apply, (x,), check_forward_ad=True, check_backward_ad=False)
    assert not gradcheck(WrongJvp.apply, (x,), check_forward_ad=True, check_backward_ad=False, fast_mode=True,
                         raise_exception=False)


def test_gradgradcheck_forward_over_reverse():
    x = t64([[0.3, -0.7, 1.1], [0.2, 0.5, -0.4]], requires_grad=True)
    assert gradgradcheck(lambda a: (a.sin() * a.exp()).softmax(-1), (x,), check_fwd_over_rev=True)
    assert gradgradcheck(lambda a: a.tanh().prod(1), (x,), check_fwd_over_rev=True, check_rev_over_rev=False,
                         check_undefined_grad=False)


# levels and dual tensors --------------------------------------------------------------------------
def test_dual_levels_do_not_nest_and_tangents_end_with_the_level():
    x, t = t64([1.0, 2.0]), t64([0.5, -1.0])
    with pytest.raises(RuntimeError, match="no level exists"):
        fwAD.make_dual(x, t)
    with fwAD.dual_level() as level:
        assert level == 0
        with pytest.raises(RuntimeError, match="Nested forward mode AD is not supported at the moment"):
            fwAD.enter_dual_level()
        dual = fwAD.make_dual(x, t)
        y = dual.exp()
        assert tangent(dual) is t  # laid out like x: the tangent itself, as in PyTorch
        assert "tangent=" in repr(y)
    assert tangent(dual) is None and tangent(y) is None and "tangent" not in repr(y)
    with pytest.raises(RuntimeError, match="Dual level must be a positive number"):
        fwAD.exit_dual_level()


def test_make_dual_checks_its_arguments():
    x = t64([1.0, 2.0, 3.0])
    with fwAD.dual_level():
        with pytest.raises(RuntimeError, match=r"Tensor is of size \[3\] while the given forward gradient is of size"):
            fwAD.make_dual(x, t64([1.0]))
        with pytest.raises(ValueError, match="Expected primal to be floating point or complex, but got: torch.int64"):
            fwAD.make_dual(torch.arange(3), torch.arange(3).double())
        with pytest.raises(ValueError, match="Expected tangent to be floating point or complex"):
            fwAD.make_dual(x, torch.arange(3))
        with pytest.raises(RuntimeError, match="Invalid level given to _make_dual"):
            fwAD.make_dual(x, x, level=1)
        dual = fwAD.make_dual(x, x)
        with pytest.raises(RuntimeError, match="already has a forward gradient at the same level 0"):
            fwAD.make_dual(dual, x)
        strided = t64([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]).t()  # a tangent of another layout is copied into x's
        laid_out = tangent(fwAD.make_dual(t64([[0.0] * 2] * 3), strided))
        assert laid_out.stride() == (2, 1) and torch.equal(laid_out, strided)
        primal, t = fwAD.unpack_dual(dual)
        assert tangent(primal) is None and primal.data_ptr() == x.data_ptr() and torch.equal(t, x)
        assert fwAD.unpack_dual(dual.detach()).tangent is None


def test_ops_without_a_dual_input_or_without_float_outputs_give_no_tangent():
    with fwAD.dual_level():
        dual = fwAD.make_dual(t64([1.0, -2.0]), t64([1.0, 1.0]))
        assert tangent(t64([1.0]) * 2) is None
        assert tangent(dual > 0) is None and tangent(dual.argmax()) is None
        with torch.no_grad():  # forward mode does not depend on grad mode
            assert torch.equal(tangent(dual * 3), t64([3.0, 3.0]))


# views and in-place ------------------------------------------------------------------------------
def test_tangent_of_a_view_is_a_view_of_the_tangent():
    with fwAD.dual_level():
        tb = torch.arange(20.0, dtype=D).reshape(4, 5).clone()
        base = fwAD.make_dual(torch.zeros(4, 5, dtype=D), tb)
        view = base[1:3, ::2]
        assert tangent(view)._base is tb and torch.equal(tangent(view), tb[1:3, ::2])
        pieces = base.unbind(0)
        assert torch.equal(tangent(pieces[2]), tb[2])
        view.mul_(2)  # in place through the view: the base's tangent is written in place
        assert torch.equal(tb[1:3, ::2], torch.arange(20.0, dtype=D).reshape(4, 5)[1:3, ::2] * 2)
        base.t_()
        assert torch.equal(tangent(base), tb.t())


def test_in_place_on_a_dual_keeps_and_updates_its_tangent():
    with fwAD.dual_level():
        t = t64([1.0, 2.0])
        a = fwAD.make_dual(t64([3.0, 4.0]), t)
        a.mul_(a)
        assert tangent(a) is t and torch.equal(t, t64([6.0, 16.0]))  # d(a^2) = 2 a da
        a.copy_(t64([0.0, 0.0]))  # a value without tangent: the tangent becomes zero
        assert torch.equal(t, t64([0.0, 0.0]))


def test_in_place_of_a_dual_into_a_view_gives_the_base_a_tangent():
    with fwAD.dual_level():
        base = torch.zeros(4, dtype=D)
        left, right = base[0:2], base[2:4]
        right.add_(fwAD.make_dual(t64([1.0, 1.0]), t64([7.0, 8.0])))
        assert torch.equal(tangent(base), t64([0.0, 0.0, 7.0, 8.0]))
        assert torch.equal(tangent(left), t64([0.0, 0.0]))  # made before the base was dual
        g = torch.zeros(3, dtype=D)
        g[1] = fwAD.make_dual(t64(1.0), t64(9.0))
        assert torch.equal(tangent(g), t64([0.0, 9.0, 0.0]))
        h = torch.zeros(3, dtype=D)
        h[t64([0, 2]).long()] = fwAD.make_dual(t64([1.0, 2.0]), t64([5.0, 6.0]))  # advanced indexing
        assert torch.equal(tangent(h), t64([5.0, 0.0, 6.0]))


# custom Functions --------------------------------------------------------------------------------
class Sin(Function):
    @staticmethod
    def forward(ctx, x, scale):
        assert tangent(x) is None  # forward sees the primal only
        ctx.save_for_forward(x)
        ctx.scale = scale
        return x.sin() * scale

    @staticmethod
    def backward(ctx, grad):
        raise AssertionError("not called in forward mode")

    @staticmethod
    def jvp(ctx, tx, tscale):
        assert tscale is None
        (x,) = ctx.saved_tensors
        return tx * x.cos() * ctx.scale


def test_custom_function_jvp_and_its_absence():
    x, t = t64([0.2, 0.9]), t64([1.0, -2.0])
    with fwAD.dual_level():
        y = Sin.apply(fwAD.make_dual(x, t), 3.0)
        np.testing.assert_allclose(tangent(y).numpy(), (t * x.cos() * 3).numpy())

        class NoJvp(Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2

        with pytest.raises(NotImplementedError, match="You must implement the jvp function for custom"):
            NoJvp.apply(fwAD.make_dual(x, t))
        assert tangent(NoJvp.apply(x)) is None  # no dual input: jvp is not needed


# reverse and forward together --------------------------------------------------------------------
def test_forward_over_reverse_is_a_hessian_vector_product():
    x, v = t64([0.3, -0.7, 1.1], requires_grad=True), t64([1.0, 0.5, -2.0])
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, v)
        (g,) = torch.autograd.grad((dual.exp() * dual.sin()).sum(), x)  # create_graph=False is enough
        hv = tangent(g)
    xd = x.detach()
    expected = (2 * xd.exp() * xd.cos()) * v  # (e^x sin x)'' = 2 e^x cos x, a diagonal Hessian
    np.testing.assert_allclose(hv.numpy(), expected.numpy(), rtol=1e-12)


def test_reverse_over_forward_differentiates_the_tangent():
    x, v = t64([0.3, -0.7], requires_grad=True), t64([1.0, 2.0])
    with fwAD.dual_level():
        jv = tangent((fwAD.make_dual(x, v) ** 3).sum())  # 3 x^2 . v
        (g,) = torch.autograd.grad(jv, x)
    np.testing.assert_allclose(g.numpy(), (6 * x.detach() * v).numpy(), rtol=1e-12)


def test_dispatch_reads_one_flag_outside_a_level():
    assert fwAD.state.active is False and fwAD.state.level == -1
    assert op_module.forward_ad is fwAD.state


def test_functional_jvp_is_forward_mode():
    x, v = t64([0.5, 1.5]), t64([1.0, -1.0])
    out, jv = torch.autograd.functional.jvp(lambda a: a.exp() * a, x, v)
    np.testing.assert_allclose(jv.numpy(), ((x.exp() * (1 + x)) * v).numpy(), rtol=1e-12)
    with fwAD.dual_level():  # inside a level (no nesting) jvp falls back to the double-backward trick
        _, again = torch.autograd.functional.jvp(lambda a: a.exp() * a, x, v)
    assert torch.allclose(again, jv)
    assert math.isclose(float(out.sum()), float((x.exp() * x).sum()))


# random programs of views and in-place writes -------------------------------------------------------
VIEWS = {
    "rows": lambda t: t[1:],
    "column": lambda t: t[:, 1],
    "transpose": lambda t: t.t(),
    "strided": lambda t: t[:, ::2],
    "diagonal": lambda t: t.diagonal(),
    "whole": lambda t: t.view(-1),
}
WRITES = {
    "mul_self": lambda v, other: v.mul_(v.clone()),
    "add_other": lambda v, other: v.add_(other.sum() * 0.5),
    "mul_other": lambda v, other: v.mul_(other.mean()),
    "sin_": lambda v, other: v.sin_(),
    "copy_from_other": lambda v, other: v.copy_(other.reshape(-1)[: v.numel()].reshape(v.shape) * 2),
    "fill_": lambda v, other: v.fill_(0.25),
    "exp_then_div": lambda v, other: v.exp_().div_(other.abs().sum() + 1),
}


@settings(deadline=None)
@given(steps=st.lists(st.tuples(st.sampled_from(sorted(VIEWS)), st.sampled_from(sorted(WRITES))), min_size=1,
                      max_size=4))
def test_random_view_and_in_place_programs_have_the_right_tangents(steps):
    """A program of in-place writes through views of a buffer (itself not dual until written with dual values):
    its forward-mode Jacobian matches finite differences."""

    def program(x, other):
        buffer = x * 1.0
        plain = torch.zeros(3, 4, dtype=D)  # not dual until a dual value is written into a view of it
        for view_name, write_name in steps:
            view = VIEWS[view_name](buffer)
            WRITES[write_name](view, other)
            target = VIEWS[view_name](plain)
            target.copy_(VIEWS[view_name](buffer))
        return buffer, plain

    x = t64(np.linspace(0.1, 0.9, 12).reshape(3, 4), requires_grad=True)
    other = t64(np.linspace(-0.5, 0.4, 12).reshape(3, 4), requires_grad=True)
    assert gradcheck(program, (x, other), check_forward_ad=True, check_backward_ad=False)


def test_library_functions_have_jvps_too():
    """minitorch's own custom Functions (Gamma's reparameterized sampler, the incomplete gamma function)."""
    concentration = t64([1.5, 2.5], requires_grad=True)
    with fwAD.dual_level():
        torch.manual_seed(0)
        sample = torch.distributions.Gamma(fwAD.make_dual(concentration, t64([1.0, 1.0])), t64(1.0)).rsample()
        forward = tangent(sample)
    torch.manual_seed(0)
    torch.distributions.Gamma(concentration, t64(1.0)).rsample().sum().backward()
    np.testing.assert_allclose(forward.numpy(), concentration.grad.numpy(), rtol=1e-12)  # elementwise: equal
    x = t64([0.7, 1.9], requires_grad=True)
    cdf = torch.distributions.Gamma(t64([1.5, 2.5]), t64(1.0)).cdf  # the regularized incomplete gamma function
    assert gradcheck(cdf, (x,), check_forward_ad=True)
