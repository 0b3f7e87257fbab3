"""Grad modes (SEMANTICS.md 1.5, AG-12): no_grad, enable_grad, set_grad_enabled, inference_mode."""

import pytest

import minitorch as torch
from minitorch.autograd import Function

INFERENCE_SAVE_ERROR = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in inference mode in "
    "computation tracked by autograd. To work around this, you can make a clone to get a normal tensor and use it "
    "in autograd, or use `torch.no_grad()` instead of `torch.inference_mode()`."
)


def leaf(device="cpu"):
    return torch.ones(2, device=device, requires_grad=True)


def records(device="cpu") -> bool:
    y = leaf(device) * 2
    assert y.requires_grad == (y.grad_fn is not None)
    return y.requires_grad


def test_ag12_no_grad_and_enable_grad(device):
    with torch.no_grad():
        y = leaf(device) * 2
        assert not y.requires_grad and y.grad_fn is None
        assert not torch.is_grad_enabled()
        with torch.enable_grad():
            assert torch.is_grad_enabled() and records(device)
        assert not records(device)
    assert torch.is_grad_enabled() and records(device)


def test_no_grad_results_are_usable_later(device):
    x = leaf(device)
    with torch.no_grad():
        c = x * 3
    assert not c.is_inference()
    (c * x).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


@pytest.mark.parametrize("make", [lambda: torch.no_grad, torch.no_grad, lambda: torch.set_grad_enabled(False)])
def test_disabling_decorators(make):
    decorator = make()  # set_grad_enabled(False) switches the mode when created, until it decorates

    @decorator
    def f(x):
        """doc kept"""
        return x * 2

    assert torch.is_grad_enabled()  # decorating does not switch the mode
    assert not f(leaf()).requires_grad
    assert torch.is_grad_enabled() and records()
    assert f.__doc__ == "doc kept" and f.__name__ == "f"


@pytest.mark.parametrize("make", [lambda: torch.enable_grad, torch.enable_grad, lambda: torch.set_grad_enabled(True)])
def test_enabling_decorators(make):
    with torch.no_grad():
        decorator = make()

        @decorator
        def f(x):
            return x * 2

        assert not torch.is_grad_enabled()
        assert f(leaf()).requires_grad
        assert not torch.is_grad_enabled()


def test_set_grad_enabled_as_function_and_context_manager():
    torch.set_grad_enabled(False)
    try:
        assert not torch.is_grad_enabled() and not records()
    finally:
        torch.set_grad_enabled(True)
    assert torch.is_grad_enabled()
    with torch.set_grad_enabled(False):
        assert not records()
        with torch.set_grad_enabled(True):
            assert records()
        assert not records()
    assert records()


def test_modes_restore_after_exceptions():
    with pytest.raises(ValueError):
        with torch.no_grad():
            raise ValueError
    assert torch.is_grad_enabled()
    with pytest.raises(ValueError):
        with torch.inference_mode():
            raise ValueError
    assert torch.is_grad_enabled() and not torch.is_inference_mode_enabled()


def test_one_instance_can_be_reentered():
    mode = torch.no_grad()
    with mode:
        with torch.enable_grad():
            with mode:
                assert not torch.is_grad_enabled()
            assert torch.is_grad_enabled()
        assert not torch.is_grad_enabled()
    assert torch.is_grad_enabled()


def test_decorated_generator_applies_the_mode_per_step():
    @torch.no_grad()
    def gen(x):
        for _ in range(2):
            got = yield (x * 2).requires_grad
            assert got == "sent"

    g = gen(leaf())
    assert next(g) is False
    assert torch.is_grad_enabled()  # the caller runs with its own mode between steps
    assert g.send("sent") is False
    with pytest.raises(StopIteration):
        g.send("sent")


def test_inference_mode(device):
    x = leaf(device)
    with torch.inference_mode():
        assert torch.is_inference_mode_enabled() and not torch.is_grad_enabled()
        y = x * 2
        z = torch.zeros(2, device=device)
        assert y.is_inference() and z.is_inference()
        assert not y.requires_grad and y.grad_fn is None
    assert not x.is_inference()
    assert not torch.is_inference_mode_enabled() and torch.is_grad_enabled()


@pytest.mark.parametrize("make", [lambda: torch.inference_mode, torch.inference_mode, lambda: torch.inference_mode(True)])
def test_inference_mode_decorators(make):
    @make()
    def f(x):
        return x * 2

    assert not torch.is_inference_mode_enabled()
    out = f(leaf())
    assert out.is_inference() and not out.requires_grad


def test_inference_mode_false_enables_grad():
    with torch.inference_mode():
        with torch.inference_mode(False):
            assert not torch.is_inference_mode_enabled() and torch.is_grad_enabled()
            y = leaf() * 2
            assert y.requires_grad and not y.is_inference()
        assert torch.is_inference_mode_enabled()


def test_inference_tensor_cannot_be_saved_for_backward():
    with torch.inference_mode():
        t = torch.ones(2)
    x = leaf()
    with pytest.raises(RuntimeError) as info:
        x * t  # mul saves both operands
    assert str(info.value) == INFERENCE_SAVE_ERROR
    assert (x * t.clone()).requires_grad  # the documented workaround

    class Keep(Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(b)
            return a * b

        @staticmethod
        def backward(ctx, g):
            (b,) = ctx.saved_tensors
            return g * b, None

    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
        Keep.apply(x, t)
    with torch.no_grad():  # nothing recorded, nothing saved
        assert Keep.apply(x, t).tolist() == [1.0, 1.0]


def test_custom_function_under_inference_mode():
    class Double(Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return 2 * g

    with torch.inference_mode():
        out = Double.apply(leaf())
    assert out.is_inference() and not out.requires_grad and out.grad_fn is None


def test_is_grad_enabled_is_exported_where_pytorch_has_it():
    assert torch.autograd.grad_mode.is_grad_enabled is torch.is_grad_enabled
    assert torch.autograd.no_grad is torch.no_grad
    assert torch.autograd.grad_mode.inference_mode is torch.inference_mode
