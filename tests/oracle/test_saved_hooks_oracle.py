"""Saved-tensor hooks, activation checkpointing and graph-node hooks against CPU PyTorch: the same program in both
libraries gives the same hook calls (order and counts), the same gradients and the same errors."""

from __future__ import annotations

import warnings
from importlib import import_module

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import minitorch  # noqa: E402

LIBS = (torch, minitorch)


def _numpy(t):
    return t.detach().cpu().numpy()


# saved-tensor hooks ---------------------------------------------------------------------------------------------

PROGRAMS = {
    "unary chain": lambda lib, x, w: x.exp().sin().tanh().sigmoid().sum(),
    "matmul": lambda lib, x, w: (x @ w).sum(),
    "mul of two tensors": lambda lib, x, w: (x * x.exp()).sum(),
    "softmax and log": lambda lib, x, w: lib.softmax(x, dim=1).log().sum(),
    "pow and div": lambda lib, x, w: (x.pow(3) / (x.exp() + 1)).sum(),
    "in place": lambda lib, x, w: (x * 1).sin_().exp_().sum(),
}


def _hooked_run(lib, program, pack_copy: bool):
    rng = np.random.default_rng(0)
    x = lib.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    w = lib.tensor(rng.standard_normal((4, 2)), requires_grad=True)
    log = []

    def pack(t):
        log.append(("pack", tuple(t.shape), t.requires_grad, lib.is_grad_enabled()))
        return t.detach().clone() if pack_copy else t

    def unpack(t):
        log.append(("unpack", tuple(t.shape)))
        return t

    with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
        loss = program(lib, x, w)
    loss.backward()
    grads = [None if t.grad is None else _numpy(t.grad) for t in (x, w)]
    return sorted(log), grads


@pytest.mark.parametrize("pack_copy", [False, True])
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_pack_and_unpack_calls_and_gradients_match(name, pack_copy):
    (theirs, their_grads), (mine, my_grads) = (_hooked_run(lib, PROGRAMS[name], pack_copy) for lib in LIBS)
    assert mine == theirs  # each saved tensor packed once (shape, requires_grad, under no_grad), unpacked once
    for a, b in zip(my_grads, their_grads):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-12)


def _custom_function_log(lib):
    class Scale(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            out = a * b
            ctx.save_for_backward(a, b, out)
            return out

        @staticmethod
        def backward(ctx, grad):
            a, b, _ = ctx.saved_tensors
            a, b, _ = ctx.saved_tensors
            return grad * b, grad * a

    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = lib.tensor([3.0, 4.0])
    log = []
    with lib.autograd.graph.saved_tensors_hooks(lambda t: log.append(("pack", t is x, t is y)) or t,
                                                lambda t: log.append("unpack") or t):
        out = Scale.apply(x, y)
    out.sum().backward()
    return log, _numpy(x.grad)


def test_custom_function_saved_tensors():
    (theirs, their_grad), (mine, my_grad) = (_custom_function_log(lib) for lib in LIBS)
    assert mine == theirs
    np.testing.assert_array_equal(my_grad, their_grad)


def _outcome(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fn()
        except Exception as error:
            return type(error).__name__, str(error).split("\n")[0]
    return "ok", None


def _error_cases(lib):
    graph = lib.autograd.graph
    x = lib.ones(3, requires_grad=True)

    def pack_modifies_input():
        with graph.saved_tensors_hooks(lambda t: t.mul_(2), lambda t: t):
            (x * 1).exp()

    def unpack_returns_a_number():
        with graph.saved_tensors_hooks(lambda t: 1, lambda t: 1):
            y = x.exp()
        y.sum().backward()

    def enter_while_disabled():
        with graph.disable_saved_tensors_hooks("off"), graph.save_on_cpu():
            pass

    def disable_while_active():
        with graph.saved_tensors_hooks(lambda t: t, lambda t: t), graph.disable_saved_tensors_hooks("off"):
            pass

    def no_version_check_through_hooks():
        with graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            y = x * 1
            z = y.exp()
        z.add_(1)
        z.sum().backward()

    def backward_twice():
        with graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            y = x.exp().sum()
        y.backward()
        y.backward()

    return [pack_modifies_input, unpack_returns_a_number, enter_while_disabled, disable_while_active,
            no_version_check_through_hooks, backward_twice]


def test_errors_match():
    theirs, mine = ([_outcome(case) for case in _error_cases(lib)] for lib in LIBS)
    assert mine == theirs


# graph nodes and hook order -------------------------------------------------------------------------------------


def _hook_log(lib, how):
    log = []
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x) * 2  # exact arithmetic: the logs compare gradients with ==
    acc = y.grad_fn.next_functions[0][0].next_functions[0][0]
    x.register_hook(lambda g: log.append(("x hook", g.tolist())))
    acc.register_prehook(lambda go: log.append(("acc prehook", [g.tolist() for g in go])))
    acc.register_hook(lambda gi, go: log.append(("acc hook", len(gi), [g.tolist() for g in go])))
    x.register_post_accumulate_grad_hook(lambda p: log.append(("post accumulate", p.grad.tolist())))
    y.register_hook(lambda g: log.append(("y hook", g.tolist())))
    y.retain_grad()
    y.grad_fn.register_prehook(lambda go: log.append(("mul prehook", [g.tolist() for g in go])))
    y.grad_fn.register_hook(lambda gi, go: log.append(("mul hook", [None if g is None else g.tolist() for g in gi])))
    square_node = y.grad_fn.next_functions[0][0]
    square_node.register_prehook(lambda go: (go[0] * 3,))
    if how == "backward":
        y.sum().backward()
    elif how == "inputs":
        y.sum().backward(inputs=[x])
    else:
        lib.autograd.grad(y.sum(), [x])
    log.append(("names", y.grad_fn.name(), square_node.name(), type(acc).__name__, acc.variable is x,
                isinstance(acc, lib.autograd.graph.Node), y.grad_fn.metadata))
    return log


@pytest.mark.parametrize("how", ["backward", "inputs", "grad"])
def test_hook_order_matches(how):
    theirs, mine = (_hook_log(lib, how) for lib in LIBS)
    # minitorch's mul by a Python number has one edge, PyTorch's two (the number is a wrapped tensor there)
    mine = [entry[:1] + ([entry[1][0]],) if entry[0] == "mul hook" else entry for entry in mine]
    theirs = [entry[:1] + ([entry[1][0]],) if entry[0] == "mul hook" else entry for entry in theirs]
    assert mine == theirs


def test_increment_version_matches():
    for lib in LIBS:
        t = lib.zeros(2)
        lib.autograd.graph.increment_version(t)
        lib.autograd.graph.increment_version([t, t])
        assert t._version == 3


# activation checkpointing ---------------------------------------------------------------------------------------


def _checkpoint_run(lib, mode: str, preserve: bool):
    ckpt = import_module(f"{lib.__name__}.utils.checkpoint")
    lib.manual_seed(0)
    net = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.Tanh(), lib.nn.Dropout(0.5), lib.nn.Linear(8, 8),
                            lib.nn.ReLU(), lib.nn.Dropout(0.3), lib.nn.Linear(8, 2)).double()
    x = lib.randn(3, 4, dtype=lib.float64, requires_grad=True)
    lib.manual_seed(7)
    if mode == "plain":
        out = net(x)
    elif mode == "sequential":
        out = ckpt.checkpoint_sequential(net, 3, x, use_reentrant=False, preserve_rng_state=preserve)
    else:
        out = ckpt.checkpoint(net, x, use_reentrant=mode == "reentrant", preserve_rng_state=preserve)
    out.pow(2).sum().backward()
    return [_numpy(p.grad) for p in net.parameters()] + [_numpy(x.grad)]


@pytest.mark.parametrize("mode", ["plain", "non-reentrant", "reentrant", "sequential"])
def test_checkpoint_gradients_with_dropout_match(mode):
    theirs, mine = (_checkpoint_run(lib, mode, True) for lib in LIBS)
    for a, b in zip(mine, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def _checkpoint_behaviour(lib):
    ckpt = import_module(f"{lib.__name__}.utils.checkpoint")
    x = lib.tensor([0.5, 1.0, 1.5], dtype=lib.float64, requires_grad=True)
    report = []
    steps = []

    def fn(t):
        steps.append("exp")
        a = t.exp()
        steps.append("sin")
        b = a.sin()
        steps.append("sum")
        return b.sum() * 2

    y = ckpt.checkpoint(fn, x, use_reentrant=False)
    steps.clear()
    y.backward(retain_graph=True)
    report.append(("early stop", list(steps)))
    y.backward()
    report.append(("second backward", list(steps), _numpy(x.grad).tolist()))
    with ckpt.set_checkpoint_early_stop(False):
        y = ckpt.checkpoint(fn, x, use_reentrant=False)
    steps.clear()
    (g,) = lib.autograd.grad(y, x, create_graph=True)
    report.append(("no early stop, grad", list(steps), _numpy(g).tolist()))
    (gg,) = lib.autograd.grad(g.sum(), x)
    report.append(("double backward", _numpy(gg).tolist()))

    calls = []

    def changing(t):
        calls.append(1)
        return (t[: 4 - len(calls)] * 2).exp().sum()

    def saves_less(t):
        calls.append(1)
        r = t.exp()
        return (r.exp() if len(calls) == 1 else r).sum()

    def saves_more(t):
        calls.append(1)
        r = t.exp()
        return (r.exp() if len(calls) == 2 else r).sum()

    for fn_, early in ((changing, True), (saves_less, True), (saves_more, False), (saves_more, True)):
        calls.clear()
        with ckpt.set_checkpoint_early_stop(early):
            y = ckpt.checkpoint(fn_, x, use_reentrant=False)
        report.append((fn_.__name__, early, _outcome(y.backward)))
    y = ckpt.checkpoint(lambda t: t.exp().sum(), x, use_reentrant=True)
    report.append(("reentrant grad", _outcome(lambda: lib.autograd.grad(y, x))))
    return report


def test_checkpoint_recomputation_and_errors_match():
    theirs, mine = (_checkpoint_behaviour(lib) for lib in LIBS)
    assert mine == theirs
