"""gradcheck / gradgradcheck (SEMANTICS.md 1.11, AG-16)."""

import re
import sys

import pytest
from hypothesis import given

import minitorch as torch
from minitorch.autograd import Function, GradcheckError, gradcheck, gradgradcheck
from minitorch.testing.strategies import gradcheck_inputs

gradcheck_module = sys.modules["minitorch.autograd.gradcheck"]

FLOAT32_WARNING = (
    "Input #0 requires gradient and is not a double precision floating point or complex. This check will likely "
    "fail if all the inputs are not of double precision floating point or complex. "
)


def leaf(values, device="cpu", dtype=torch.float64):
    return torch.tensor(values, dtype=dtype, device=device, requires_grad=True)


class WrongSq(Function):
    """x*x with the derivative 3x instead of 2x."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 3 * x * g


@pytest.mark.parametrize("fast_mode", [False, True])
@given(inputs=gradcheck_inputs(2))
def test_builtin_ops_pass(inputs, fast_mode):
    x, y = inputs
    assert gradcheck(lambda a, b: (a * b).sin(), (x, y), fast_mode=fast_mode)
    assert gradgradcheck(lambda a, b: (a * b).sin(), (x, y), fast_mode=fast_mode)


def test_ag16_sin(device):
    x = torch.randn(3, dtype=torch.float64, device=device, requires_grad=True)
    assert gradcheck(torch.sin, (x,)) is True
    assert gradcheck(torch.sin, (x,), fast_mode=True) is True
    assert gradcheck(torch.sin, x) is True  # a single tensor is accepted too


def test_ag16_wrong_backward_message(device):
    x = leaf([1.0, 2.0], device)
    with pytest.raises(GradcheckError) as info:
        gradcheck(WrongSq.apply, (x,))
    message = str(info.value)
    assert message.startswith("Jacobian mismatch for output 0 with respect to input 0,\nnumerical:")
    numerical, analytical = message.split("\nanalytical:")
    assert re.search(r"\[\[2\.0*, 0\.0*\],\s+\[0\.0*, 4\.0*\]\]", numerical)
    assert re.search(r"\[\[3\., 0\.\],\s+\[0\., 6\.\]\]", analytical)
    assert gradcheck(WrongSq.apply, (x,), raise_exception=False) is False
    assert isinstance(info.value, RuntimeError)


def test_fast_mode_failure_recomputes_slow_mode():
    x = leaf([1.0, 2.0])
    with pytest.raises(GradcheckError) as info:
        gradcheck(WrongSq.apply, (x,), fast_mode=True)
    message = str(info.value)
    assert message.startswith("Jacobian mismatch for output 0 with respect to input 0,\nnumerical:")
    assert "computed \nin fast mode" in message and "we recompute numerical and analytical jacobians in slow mode" in message
    assert "The max per-element difference (slow mode) is: 2.0" in message or "is: 1.99999" in message
    assert gradcheck(WrongSq.apply, (x,), fast_mode=True, raise_exception=False) is False


def test_fast_mode_leaves_the_global_rng_alone():
    torch.manual_seed(0)
    expected = torch.rand(3).tolist()
    torch.manual_seed(0)
    gradcheck(torch.sin, (leaf([0.5, 1.0]),), fast_mode=True)
    assert torch.rand(3).tolist() == expected


def test_output_index_names_the_failing_output():
    def two_outputs(x):
        return x * 2, WrongSq.apply(x)

    with pytest.raises(GradcheckError, match="^Jacobian mismatch for output 1 with respect to input 0,"):
        gradcheck(two_outputs, (leaf([1.0, 2.0]),))
    with pytest.raises(GradcheckError, match="^Jacobian mismatch for output 1 with respect to input 0,"):
        gradcheck(two_outputs, (leaf([1.0, 2.0]),), fast_mode=True)


def test_input_index_counts_inputs_that_require_grad():
    def f(c, x, y):
        return x * c + WrongSq.apply(y)

    constant = torch.tensor([1.0, 1.0], dtype=torch.float64)
    with pytest.raises(GradcheckError, match="^Jacobian mismatch for output 0 with respect to input 1,"):
        gradcheck(f, (constant, leaf([1.0, 2.0]), leaf([3.0, 4.0])))


def test_non_tensor_and_integer_inputs_are_passed_through():
    seen = []

    def f(x, k, name, idx, nothing):
        seen.append((k, name, nothing))
        return (x * k).gather(0, idx)

    idx = torch.tensor([1, 0, 1])
    assert gradcheck(f, (leaf([1.0, 2.0]), 3, "name", idx, None))
    assert all(s == (3, "name", None) for s in seen)


def test_inputs_are_restored():
    x = leaf([0.25, -1.5, 2.0])
    before, version = x.tolist(), x._version
    gradcheck(torch.exp, (x,))
    gradcheck(torch.exp, (x,), fast_mode=True)
    assert x.tolist() == before and x._version == version and x.grad is None


def test_non_contiguous_inputs(device):
    base = torch.randn(4, 6, dtype=torch.float64, device=device)
    x = base.t()[::2].detach().requires_grad_()
    assert not x.is_contiguous()
    assert gradcheck(lambda t: t.exp() * t, (x,))
    assert gradcheck(lambda t: t.exp() * t, (x,), fast_mode=True)


def test_output_that_is_an_input():
    x = leaf([1.0, 2.0])
    assert gradcheck(lambda t: t, (x,))
    assert gradcheck(lambda t: (t, t * 2), (x,), fast_mode=True)


def test_float32_warns_and_sin_fails():
    x = torch.randn(3, requires_grad=True)
    with pytest.warns(UserWarning) as record:
        result = gradcheck(torch.sin, (x,), raise_exception=False)
    assert FLOAT32_WARNING in [str(w.message) for w in record]
    assert result is False


def test_nothing_to_check():
    with pytest.raises(ValueError, match="gradcheck expects at least one input tensor to require gradient"):
        gradcheck(torch.sin, (torch.ones(2, dtype=torch.float64),))


def test_overlapping_input_is_refused():
    x = torch.ones(1, 3, dtype=torch.float64).expand(2, 3).requires_grad_()
    with pytest.raises(RuntimeError, match="The 0th input has a dimension with stride 0"):
        gradcheck(torch.sin, (x,))


def test_outputs_without_gradient():
    x = leaf([1.0, 2.0])
    assert gradcheck(lambda t: t.detach() * 0 + 1, (x,))  # constant: zero Jacobian on both sides
    with pytest.raises(GradcheckError, match="Numerical gradient for function expected to be zero"):
        gradcheck(lambda t: t.detach() * 2, (x,))
    assert gradcheck(lambda t: (t * 2, (t > 1)), (x,))  # a bool output is skipped


class Noisy(Function):
    calls = 0

    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        Noisy.calls += 1
        return g * (2 + Noisy.calls * 1e-9)


def test_non_reentrant_backward():
    with pytest.raises(GradcheckError, match="^Backward is not reentrant, i.e., running backward with same input"):
        gradcheck(Noisy.apply, (leaf([1.0, 2.0]),))
    with pytest.raises(GradcheckError, match="The tolerance for nondeterminism was 0.0"):
        gradcheck(Noisy.apply, (leaf([1.0, 2.0]),), fast_mode=True)
    assert gradcheck(Noisy.apply, (leaf([1.0, 2.0]),), nondet_tol=1e-6)


def test_backward_not_multiplied_by_grad_output():
    class IgnoresGrad(Function):
        forward = staticmethod(lambda ctx, x: x.sum())
        backward = staticmethod(lambda ctx, g: torch.ones(2, dtype=torch.float64))

    with pytest.raises(GradcheckError, match="backward not multiplied by grad_output"):
        gradcheck(IgnoresGrad.apply, (leaf([1.0, 2.0]),))


def test_backward_returning_none_for_a_used_input():
    class ForgetsY(Function):
        forward = staticmethod(lambda ctx, x, y: x * y)

        @staticmethod
        def backward(ctx, g):
            return g * 3.0, None

    with pytest.raises(GradcheckError, match="^Jacobian mismatch for output 0 with respect to input 1,"):
        gradcheck(ForgetsY.apply, (leaf([1.0]), leaf([3.0])))


class ThreeOutputs(Function):
    """Handles all-defined and mostly-undefined output grads, but breaks when exactly one is undefined
    (the case gradcheck's undefined-grad check adds on top of the Jacobian rows)."""

    @staticmethod
    def forward(ctx, x, robust):
        ctx.set_materialize_grads(False)
        ctx.robust = robust
        return x * 1, x * 2, x * 3

    @staticmethod
    def backward(ctx, *grads):
        defined = [(g, k) for g, k in zip(grads, (1, 2, 3)) if g is not None]
        if not defined:  # PyTorch calls backward even when no output got a gradient
            return None, None
        if len(defined) == 2 and not ctx.robust:
            raise RuntimeError("ThreeOutputs: cannot combine two gradients")
        total = defined[0][0] * defined[0][1]
        for g, k in defined[1:]:
            total = total + g * k
        return total, None


def test_check_undefined_grad():
    x = leaf([1.0, 2.0])
    with pytest.warns(UserWarning, match="Backwards compatibility"):
        with pytest.raises(GradcheckError, match="^Expected backward function to handle undefined output grads"):
            gradcheck(ThreeOutputs.apply, (x, False))
    assert gradcheck(ThreeOutputs.apply, (x, False), check_undefined_grad=False)
    assert gradcheck(ThreeOutputs.apply, (x, True))


def test_incorrect_grad_size_and_dtype(monkeypatch):
    """Sizes/dtypes are normally fixed by the engine; simulate an engine that lets a wrong one through."""
    original = gradcheck_module._vjps

    def wrong_size(output, diff_inputs, seeds):
        return [[g.sum() if g is not None else None for g in row] for row in original(output, diff_inputs, seeds)]

    monkeypatch.setattr(gradcheck_module, "_vjps", wrong_size)
    with pytest.raises(GradcheckError, match="^Analytical gradient has incorrect size$"):
        gradcheck(torch.exp, (leaf([1.0, 2.0]),))

    def wrong_dtype(output, diff_inputs, seeds):
        return [[g.float() if g is not None else None for g in row] for row in original(output, diff_inputs, seeds)]

    monkeypatch.setattr(gradcheck_module, "_vjps", wrong_dtype)
    assert gradcheck(torch.exp, (leaf([1.0, 2.0]),))
    with pytest.raises(GradcheckError, match="^Gradient has dtype mismatch$"):
        gradcheck(torch.exp, (leaf([1.0, 2.0]),), check_grad_dtypes=True)


def test_unsupported_flags_are_refused():
    x = leaf([1.0])
    for flag in ("check_batched_grad", "check_batched_forward_grad"):
        with pytest.raises(ValueError, match=flag):
            gradcheck(torch.sin, (x,), **{flag: True})
    with pytest.raises(AssertionError, match="Expected at least one of check_forward_ad or check_backward_ad"):
        gradcheck(torch.sin, (x,), check_backward_ad=False)


class FirstOrderOnly(Function):
    """Right first derivative (2x) written with a detached x: the second derivative is lost."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 2 * x.detach()


def test_gradgradcheck_catches_a_wrong_second_derivative():
    x = leaf([1.0, 2.0])
    assert gradcheck(FirstOrderOnly.apply, (x,))
    assert gradgradcheck(FirstOrderOnly.apply, (x,), raise_exception=False) is False
    with pytest.raises(GradcheckError, match="^Jacobian mismatch for output 0 with respect to input 0,"):
        gradgradcheck(FirstOrderOnly.apply, (x,))


def test_gradgradcheck_options():
    x = leaf([[0.5, -1.0], [2.0, 0.1]])
    v = torch.randn(2, 2, dtype=torch.float64, requires_grad=True)
    assert gradgradcheck(lambda t: t.exp() * t, (x,), (v,))
    assert gradgradcheck(lambda t: t.exp() * t, (x,), gen_non_contig_grad_outputs=True)
    assert gradgradcheck(lambda t: (t * t, t.sin()), (x,), fast_mode=True)
    assert gradgradcheck(lambda t: t * 2, (x,))  # linear: the first derivative does not depend on x


def test_masked_is_accepted_for_dense_inputs():
    x = leaf([1.0, 2.0])
    assert gradcheck(torch.sin, (x,), masked=True)
    assert gradcheck(torch.sin, (x,), masked=False)


def test_signatures_match_pytorch():
    import inspect

    params = inspect.signature(gradcheck).parameters
    assert [p for p in params][:2] == ["func", "inputs"]
    assert {k: params[k].default for k in ("eps", "atol", "rtol", "nondet_tol", "fast_mode", "masked")} == {
        "eps": 1e-6, "atol": 1e-5, "rtol": 1e-3, "nondet_tol": 0.0, "fast_mode": False, "masked": None,
    }
    assert all(params[k].kind is inspect.Parameter.KEYWORD_ONLY for k in list(params)[2:])
    gg = inspect.signature(gradgradcheck).parameters
    assert list(gg)[:3] == ["func", "inputs", "grad_outputs"] and gg["masked"].default is False
    assert gg["gen_non_contig_grad_outputs"].default is False
