"""Saved-tensor hooks (autograd.graph.saved_tensors_hooks, save_on_cpu, disable_saved_tensors_hooks): every
tensor an op keeps for backward is packed once when recorded and unpacked each time backward reads it."""

from __future__ import annotations

import threading

import pytest

import minitorch as torch
from minitorch.autograd.graph import (
    PackedSavedTensor,
    disable_saved_tensors_hooks,
    save_on_cpu,
    saved_tensors_hooks,
)


class Counting:
    """Hooks that count their calls and keep a detached copy (so the graph holds no original tensor)."""

    def __init__(self):
        self.packed, self.unpacked = [], 0

    def pack(self, t):
        self.packed.append(t)
        return t.detach().clone()

    def unpack(self, t):
        self.unpacked += 1
        return t

    def hooks(self):
        return saved_tensors_hooks(self.pack, self.unpack)


def _model(x, w):
    return ((x @ w).tanh() * x.sigmoid()).exp().sum()


def _grads(x, w, hooks=None):
    x.grad = w.grad = None
    if hooks is None:
        _model(x, w).backward()
    else:
        with hooks:
            loss = _model(x, w)
        loss.backward()
    return x.grad, w.grad


def test_values_and_gradients_equal_with_and_without_hooks():
    torch.manual_seed(0)
    x = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    w = torch.randn(4, 4, dtype=torch.float64, requires_grad=True)
    plain = _grads(x, w)
    counting = Counting()
    hooked = _grads(x, w, counting.hooks())
    for a, b in zip(plain, hooked):
        assert torch.equal(a, b)
    # matmul saves x and w, tanh its result, sigmoid its result, mul both factors, exp its result
    assert len(counting.packed) == 7
    assert counting.unpacked == 7


def test_pack_receives_the_input_itself_and_the_output_with_its_grad_fn():
    x = torch.randn(3, requires_grad=True)
    seen = []

    def pack(t):
        seen.append((t, t.grad_fn, torch.is_grad_enabled()))
        return t

    with saved_tensors_hooks(pack, lambda t: t):
        y = x.exp()  # saves its result
        z = y * x  # saves y and x
    assert seen[0][0] is y and seen[0][1] is y.grad_fn
    assert {id(t) for t, _, _ in seen[1:]} == {id(x), id(y)}
    assert not any(enabled for _, _, enabled in seen)  # packing runs without recording
    assert z.grad_fn is not None


def test_unpack_runs_at_each_access_and_gets_what_pack_returned():
    x = torch.randn(3, requires_grad=True)
    got = []

    def unpack(packed):
        got.append(packed)
        return packed[1]

    with saved_tensors_hooks(lambda t: ("box", t.detach()), unpack):
        y = x.sin()
    node = y.grad_fn
    assert isinstance(node._saved[0], PackedSavedTensor)
    first = node.saved_tensors[0]
    node.saved_tensors  # noqa: B018 (each access unpacks again)
    assert len(got) == 2 and got[0][0] == "box"
    assert torch.equal(first, x) and first is not x
    y.sum().backward()
    assert len(got) == 3
    assert torch.allclose(x.grad, x.cos())


def test_graph_keeps_only_what_pack_returned():
    """The pack hook may drop the tensor entirely (what checkpointing does): nothing else keeps it."""
    x = torch.randn(3, requires_grad=True)
    with saved_tensors_hooks(lambda t: None, lambda _: torch.ones(3)):
        y = x.exp()
    saved = y.grad_fn._saved[0]
    assert saved.packed is None and not hasattr(saved, "tensor")
    y.sum().backward()
    assert torch.equal(x.grad, torch.ones(3))  # exp's backward used the unpacked (wrong on purpose) result


def test_innermost_hooks_apply_and_the_stack_is_thread_local():
    x = torch.randn(3, requires_grad=True)
    log = []
    with saved_tensors_hooks(lambda t: log.append("outer") or t, lambda t: t):
        with saved_tensors_hooks(lambda t: log.append("inner") or t, lambda t: t):
            x.exp()
        x.exp()
        worker = threading.Thread(target=lambda: x.exp())
        worker.start()
        worker.join()
    x.exp()
    assert log == ["inner", "outer"]


def test_custom_function_save_for_backward_goes_through_the_hooks():
    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            out = a * a
            ctx.save_for_backward(a, out)
            return out

        @staticmethod
        def backward(ctx, grad):
            a, _ = ctx.saved_tensors
            return 2 * a * grad

    x = torch.randn(3, requires_grad=True)
    counting = Counting()
    with counting.hooks():
        y = Square.apply(x)
    assert counting.packed[0] is x and counting.packed[1] is y
    y.sum().backward()
    assert counting.unpacked == 2
    assert torch.allclose(x.grad, 2 * x)


def test_in_place_ops_pack_the_saved_copy_after_the_write():
    """``y.sin_()`` keeps y's old value for backward: the pack hook sees that value, not the overwritten one."""
    x = torch.tensor([0.5, 1.0, 2.0], dtype=torch.float64, requires_grad=True)
    seen = []
    with saved_tensors_hooks(lambda t: seen.append(t.detach().clone()) or t, lambda t: t):
        y = x * 1
        y.sin_()
        y.exp_()
        loss = y.sum()
    assert torch.equal(seen[0], x.detach())  # sin's input, before sin_ overwrote it
    assert torch.allclose(seen[1], x.detach().sin().exp())  # exp's result
    loss.backward()
    assert torch.allclose(x.grad, x.detach().sin().exp() * x.detach().cos())


def test_double_backward_through_unpacked_tensors():
    x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    with saved_tensors_hooks(lambda t: t.detach().clone(), lambda t: t):
        y = (x.sin() * x).sum()
    (g,) = torch.autograd.grad(y, x, create_graph=True)
    (gg,) = torch.autograd.grad(g.sum(), x)
    assert torch.allclose(g, x.cos() * x + x.sin())
    assert torch.allclose(gg, 2 * x.cos() - x * x.sin())


def test_no_version_check_through_hooks_as_in_pytorch():
    x = torch.randn(3, requires_grad=True)
    with saved_tensors_hooks(lambda t: t.detach().clone(), lambda t: t):
        y = x * 1
        z = y.sin()
    y.add_(1)  # z saved y's old value through the hooks: no error, the gradient uses the packed copy
    z.sum().backward()
    assert torch.allclose(x.grad, x.detach().cos())
    y = x * 1
    z = y.sin()
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_errors():
    x = torch.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="A saved tensor pack hook is modifying its input in place"):
        with saved_tensors_hooks(lambda t: t.add_(1), lambda t: t):
            (x * 1).sin()
    with saved_tensors_hooks(lambda t: 5, lambda t: 5):
        y = x.sin()
    with pytest.raises(TypeError, match="unpack_hook expected to be a Tensor but got result of type int"):
        y.sum().backward()
    with saved_tensors_hooks(lambda t: t, lambda t: t):
        y = x.sin()
    y.sum().backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.sum().backward()


def test_retain_graph_unpacks_again():
    x = torch.randn(3, requires_grad=True)
    counting = Counting()
    with counting.hooks():
        y = x.exp().sum()
    y.backward(retain_graph=True)
    y.backward()
    assert len(counting.packed) == 1 and counting.unpacked == 2
    assert torch.allclose(x.grad, 2 * x.exp())


def test_disable_saved_tensors_hooks():
    with disable_saved_tensors_hooks("hooks are off here"):
        with pytest.raises(RuntimeError, match="^hooks are off here$"):
            with saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
        with disable_saved_tensors_hooks("inner"):
            pass
        with pytest.raises(RuntimeError, match="^hooks are off here$"):  # the outer message is back
            with save_on_cpu():
                pass
    with saved_tensors_hooks(lambda t: t, lambda t: t):  # allowed again
        with pytest.raises(RuntimeError, match="^no$"):  # and disabling while hooks are active raises
            with disable_saved_tensors_hooks("no"):
                pass

    @disable_saved_tensors_hooks("decorated")
    def uses_hooks():
        with saved_tensors_hooks(lambda t: t, lambda t: t):
            pass

    with pytest.raises(RuntimeError, match="decorated"):
        uses_hooks()


def test_save_on_cpu_gives_the_same_gradients():
    x = torch.randn(4, 3, requires_grad=True)
    w = torch.randn(3, 3, requires_grad=True)
    plain = _grads(x, w)
    for pin in (False, True):
        offloaded = _grads(x, w, save_on_cpu(pin_memory=pin))
        for a, b in zip(plain, offloaded):
            assert torch.equal(a, b)


def test_hooks_on_the_array_fast_path_and_multi_output_ops():
    """Nodes the engine evaluates on raw arrays (add/mul/tanh...) and ops saving several outputs unpack too."""
    x = torch.randn(5, dtype=torch.float64, requires_grad=True)
    counting = Counting()
    with counting.hooks():
        values, _ = x.sort()
        loss = (values * x).tanh().sum()
    loss.backward()
    assert counting.unpacked == len(counting.packed) >= 3
    expected = torch.autograd.grad(((x.sort()[0]) * x).tanh().sum(), x)[0]
    assert torch.allclose(x.grad, expected)


def test_increment_version():
    t = torch.zeros(2)
    torch.autograd.graph.increment_version(t)
    assert t._version == 1
    torch.autograd.graph.increment_version([t, t[:1]])  # a view shares the counter
    assert t._version == 3
    x = torch.randn(2, requires_grad=True)
    z = x.exp()
    torch.autograd.graph.increment_version(z)  # as if z had been written in place: exp saved its result
    with pytest.raises(RuntimeError, match="is at version 1; expected version 0"):
        z.sum().backward()
