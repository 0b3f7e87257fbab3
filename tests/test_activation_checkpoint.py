"""Activation checkpointing (utils.checkpoint): the non-reentrant mode on saved-tensor hooks (holders,
recomputation once per backward, early stop, determinism check) and the reentrant mode."""

from __future__ import annotations

import gc
import weakref

import pytest

import minitorch as torch
from minitorch import nn
from minitorch.autograd.graph import saved_tensors_hooks
from minitorch.utils.checkpoint import (
    CheckpointError,
    checkpoint,
    checkpoint_sequential,
    set_checkpoint_debug_enabled,
    set_checkpoint_early_stop,
)


def _net(p=0.5):
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Dropout(p), nn.Linear(8, 8), nn.ReLU(), nn.Dropout(p),
                         nn.Linear(8, 2)).double()


def _grads(net, run, x):
    torch.manual_seed(5)
    net.zero_grad(set_to_none=True)
    x.grad = None
    run(x).pow(2).sum().backward()
    return [p.grad.clone() for p in net.parameters()] + [x.grad.clone()]


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_gradients_equal_plain_ones_with_dropout(use_reentrant):
    net = _net()
    x = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    plain = _grads(net, net, x)
    ckpt = _grads(net, lambda t: checkpoint(net, t, use_reentrant=use_reentrant), x)
    seq = _grads(net, lambda t: checkpoint_sequential(net, 3, t, use_reentrant=use_reentrant), x)
    for a, b, c in zip(plain, ckpt, seq):
        assert torch.equal(a, b) and torch.equal(a, c)  # the recomputation drew the same dropout masks


def test_without_preserved_rng_state_the_masks_differ():
    net = _net()
    x = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    plain = _grads(net, net, x)
    other = _grads(net, lambda t: checkpoint(net, t, use_reentrant=False, preserve_rng_state=False), x)
    assert not all(torch.equal(a, b) for a, b in zip(plain, other))


def test_the_graph_keeps_holders_not_activations():
    x = torch.randn(3, requires_grad=True)
    y = checkpoint(lambda t: t.exp().sin(), x, use_reentrant=False)
    assert y.grad_fn.name() == "SinBackward0"  # the outputs keep the first forward's graph
    saved = y.grad_fn._saved[0]
    assert type(saved.packed).__name__ == "_Holder"
    y.sum().backward()
    assert torch.allclose(x.grad, x.exp().cos() * x.exp())


def test_activations_are_freed_after_the_forward():
    """Inside the checkpoint an intermediate is referenced only by the graph: after the forward it is gone."""
    x = torch.randn(1000, requires_grad=True)
    alive = []

    def fn(t):
        mid = t.exp()
        alive.append(weakref.ref(mid))
        return mid.sin()

    y = checkpoint(fn, x, use_reentrant=False)
    gc.collect()
    assert alive[0]() is None
    z = fn(x)
    gc.collect()
    assert alive[1]() is not None  # without checkpointing, sin's node keeps it
    y.sum().backward()
    del z


def test_recomputes_once_per_backward_and_stops_early():
    x = torch.randn(3, requires_grad=True)
    steps = []

    def fn(t):
        steps.append("exp")
        a = t.exp()
        steps.append("sum")
        b = a.sum()  # saves nothing: the recomputation has all it needs after exp
        steps.append("mul")
        return b * 2

    y = checkpoint(fn, x, use_reentrant=False)
    steps.clear()
    y.backward(retain_graph=True)
    assert steps == ["exp"]  # early stop: the recomputation ended once exp's result was saved
    y.backward()  # a second backward recomputes again
    assert steps == ["exp", "exp"]
    assert torch.allclose(x.grad, 4 * x.exp())
    with set_checkpoint_early_stop(False):
        y = checkpoint(fn, x, use_reentrant=False)
    steps.clear()
    y.backward()
    assert steps == ["exp", "sum", "mul"]


def test_autograd_grad_and_double_backward():
    x = torch.randn(3, dtype=torch.float64, requires_grad=True)
    y = checkpoint(lambda t: (t * t * t).sum(), x, use_reentrant=False)
    (g,) = torch.autograd.grad(y, x, create_graph=True)
    (gg,) = torch.autograd.grad(g.sum(), x)
    assert torch.allclose(g, 3 * x * x) and torch.allclose(gg, 6 * x)


def test_parameters_and_captured_tensors_get_gradients_without_input_grad():
    w = torch.randn(3, requires_grad=True)
    x = torch.randn(3)
    checkpoint(lambda t: (t * w).sin().sum(), x, use_reentrant=False).backward()
    assert torch.allclose(w.grad, (x * w).cos() * x)


def test_nested_checkpoints():
    x = torch.randn(4, dtype=torch.float64, requires_grad=True)

    def inner(t):
        return t.sin().exp()

    def outer(t):
        return checkpoint(inner, t.cos(), use_reentrant=False).tanh()

    checkpoint(outer, x, use_reentrant=False).sum().backward()
    expected = torch.autograd.grad(outer(x).sum(), x)[0]
    assert torch.allclose(x.grad, expected)


def test_outer_hooks_pack_the_checkpoint_inputs():
    x = torch.randn(3, requires_grad=True)
    log = []
    with saved_tensors_hooks(lambda t: log.append("pack") or t, lambda t: log.append("unpack") or t):
        y = checkpoint(lambda t: t.exp().sin().sum(), x, use_reentrant=False)
    assert log == ["pack"]  # the input; what fn saved went to the checkpoint's own hooks
    y.backward()
    assert log == ["pack", "unpack"]


def test_determinism_check():
    x = torch.randn(4, 3, requires_grad=True)
    calls = []

    def changing_shape(t):
        calls.append(1)
        return (t[: 5 - len(calls)] * 2).exp().sum()

    y = checkpoint(changing_shape, x, use_reentrant=False)
    with pytest.raises(CheckpointError, match="Recomputed values for the following tensors have different "
                                              "metadata(.|\n)*tensor at position 0"):
        y.backward()

    calls.clear()

    def saves_less(t):
        calls.append(1)
        r = t.exp()
        return (r.exp() if len(calls) == 1 else r).sum()

    y = checkpoint(saves_less, x, use_reentrant=False)
    with pytest.raises(CheckpointError, match="A different number of tensors was saved(.|\n)*during forward: 2"):
        y.backward()

    calls.clear()

    def saves_more(t):
        calls.append(1)
        r = t.exp()
        return (r.exp() if len(calls) == 2 else r).sum()

    with set_checkpoint_early_stop(False):
        y = checkpoint(saves_more, x, use_reentrant=False)
    with pytest.raises(CheckpointError, match="trying to save more tensors during recomputation"):
        y.backward()
    calls.clear()
    y = checkpoint(saves_more, x, use_reentrant=False)
    y.backward()  # with early stop the extra tensor is never reached

    calls.clear()
    with set_checkpoint_debug_enabled(True):
        y = checkpoint(saves_less, x, use_reentrant=False)
    with pytest.raises(CheckpointError, match="saved during the original forward(.|\n)*ExpBackward0"):
        y.backward()

    with pytest.raises(ValueError, match="determinism_check should be one of"):
        checkpoint(lambda t: t, x, use_reentrant=False, determinism_check="strict")


def test_unpacking_twice_in_one_backward_is_an_error():
    class TwiceBackward(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * 2

        @staticmethod
        def backward(ctx, grad):
            ctx.saved_tensors  # noqa: B018
            ctx.saved_tensors  # noqa: B018
            return grad * 2

    x = torch.randn(3, requires_grad=True)
    y = checkpoint(lambda t: TwiceBackward.apply(t.exp()), x, use_reentrant=False)
    with pytest.raises(CheckpointError, match="Unpack is being triggered for a tensor that was already unpacked"):
        y.sum().backward()


def test_in_place_change_of_an_input_is_detected():
    w = torch.randn(3, 3, requires_grad=True)
    x = torch.randn(2, 3)
    y = checkpoint(lambda t: (t @ w).exp(), x, use_reentrant=False)
    x.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_context_fn_runs_forward_and_recomputation_under_its_contexts():
    log = []

    class Tag:
        def __init__(self, name):
            self.name = name

        def __enter__(self):
            log.append(self.name)

        def __exit__(self, *exc):
            pass

    x = torch.randn(3, requires_grad=True)
    y = checkpoint(lambda t: t.exp().sum(), x, use_reentrant=False, context_fn=lambda: (Tag("fwd"), Tag("re")))
    y.backward()
    assert log == ["fwd", "re"]
    with pytest.raises(ValueError, match="debug=True is incompatible with non-default context_fn"):
        checkpoint(lambda t: t, x, use_reentrant=False, debug=True, context_fn=lambda: (Tag("a"), Tag("b")))


def test_reentrant_mode_errors():
    x = torch.randn(3, requires_grad=True)
    y = checkpoint(lambda t: t.exp().sum(), x, use_reentrant=True)
    with pytest.raises(RuntimeError, match="use_reentrant=True, torch.utils.checkpoint is incompatible with "
                                           r"\.grad\(\)"):
        torch.autograd.grad(y, x)
    with pytest.raises(ValueError, match="only supported when use_reentrant=False"):
        checkpoint(lambda t: t, x, use_reentrant=True, context_fn=lambda: (None, None))
    with pytest.raises(ValueError, match="only supported when use_reentrant=False"):
        checkpoint(lambda t: t, x, use_reentrant=True, debug=True)


def test_no_grad_runs_the_function_plainly():
    x = torch.randn(3, requires_grad=True)
    with torch.no_grad():
        y = checkpoint(lambda t: t.exp(), x, use_reentrant=False)
    assert not y.requires_grad


def test_checkpoint_sequential_warning_and_arguments():
    net = _net(0.0)
    x = torch.randn(2, 4, dtype=torch.float64, requires_grad=True)
    with pytest.warns(UserWarning, match="checkpoint_sequential: the use_reentrant parameter should be passed"):
        checkpoint_sequential(net, 2, x)
    with pytest.raises(ValueError, match="Unexpected keyword arguments: foo"):
        checkpoint_sequential(net, 2, x, use_reentrant=False, foo=1)
