"""The backward graph as objects (autograd.graph.Node): names, next_functions down to AccumulateGrad nodes,
metadata, node hooks and pre-hooks (on AccumulateGrad nodes too), and the order hooks run in."""

from __future__ import annotations

import pytest

import minitorch as torch
from minitorch.autograd.graph import Node


def test_nodes_edges_and_accumulate_grad():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp() * 2
    assert isinstance(y.grad_fn, Node) and y.grad_fn.name() == "MulBackward0"
    exp_node, nr = y.grad_fn.next_functions[0]
    assert exp_node.name() == "ExpBackward0" and nr == 0
    acc = exp_node.next_functions[0][0]
    assert isinstance(acc, Node) and type(acc).__name__ == "AccumulateGrad"
    assert acc.name() == "torch::autograd::AccumulateGrad" and acc.variable is x and acc.next_functions == ()
    assert repr(acc).startswith("<AccumulateGrad object at 0x")
    assert x.grad_fn is None  # a leaf has no grad_fn; its node is reached through next_functions
    assert (x * 3).grad_fn.next_functions[0][0] is acc  # one AccumulateGrad per leaf while the graph lives
    y.grad_fn.metadata["tag"] = 1
    assert y.grad_fn.metadata == {"tag": 1}


def _hook_order():
    log = []
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    acc = y.grad_fn.next_functions[0][0]
    x.register_hook(lambda g: log.append("x tensor hook"))
    acc.register_prehook(lambda go: log.append("acc prehook"))
    acc.register_hook(lambda gi, go: log.append(("acc hook", gi, [g.tolist() for g in go])))
    x.register_post_accumulate_grad_hook(lambda p: log.append("post accumulate"))
    y.register_hook(lambda g: log.append("y tensor hook"))
    y.grad_fn.register_prehook(lambda go: log.append("mul prehook"))
    y.grad_fn.register_hook(lambda gi, go: log.append("mul hook"))
    return x, y, acc, log


def test_hook_order_matches_pytorch():
    x, y, _, log = _hook_order()
    y.sum().backward()
    assert log == ["y tensor hook", "mul prehook", "mul hook", "x tensor hook", "acc prehook", "post accumulate",
                   ("acc hook", (), [[2.0, 2.0]])]


def test_accumulate_grad_hooks_run_for_backward_with_inputs_but_not_for_grad():
    x, y, _, log = _hook_order()
    y.sum().backward(inputs=[x], retain_graph=True)
    assert log[-3:] == ["acc prehook", "post accumulate", ("acc hook", (), [[2.0, 2.0]])]
    log.clear()
    torch.autograd.grad(y.sum(), [x])  # the leaf's node does not run: only its tensor hook sees the gradient
    assert "x tensor hook" in log and "acc prehook" not in log and "post accumulate" not in log


def test_accumulate_grad_prehook_replaces_what_is_accumulated():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    handle = y.grad_fn.next_functions[0][0].register_prehook(lambda go: (go[0] * 10,))
    y.sum().backward(retain_graph=True)
    assert torch.equal(x.grad, torch.tensor([20.0, 20.0]))
    handle.remove()
    y.sum().backward()
    assert torch.equal(x.grad, torch.tensor([22.0, 22.0]))


def test_node_hooks_replace_gradients():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    y.grad_fn.register_prehook(lambda go: (go[0] * 3,))
    y.grad_fn.register_hook(lambda gi, go: (gi[0] + 1,))
    y.sum().backward()
    assert torch.allclose(x.grad, 3 * x.exp() + 1)


@pytest.mark.parametrize("kind", ["prehook", "hook"])
def test_node_hook_results_are_checked(kind):
    x = torch.ones(2, requires_grad=True)

    def register(node, result):
        if kind == "prehook":
            return node.register_prehook(lambda go: result(go))
        return node.register_hook(lambda gi, go: result(go))

    y = x.exp()
    register(y.grad_fn, lambda go: (go[0], go[0]))
    with pytest.raises(RuntimeError, match=r"hook '<lambda>' has returned an incorrect number of values \(got 2, "
                                           r"but expected 1\)"):
        y.sum().backward()
    for wrong, name in ((5, "int"), ([x], "list")):
        y = x.exp()
        register(y.grad_fn, lambda go, wrong=wrong: wrong)
        with pytest.raises(TypeError, match=f"expected tuple, but hook returned '{name}'"):
            y.sum().backward()


def test_accumulate_grad_hook_may_not_return_gradients():
    x = torch.ones(2, requires_grad=True)
    y = x * 2
    y.grad_fn.next_functions[0][0].register_hook(lambda gi, go: (torch.zeros(2),))
    with pytest.raises(RuntimeError, match=r"\(got 1, but expected 0\)"):
        y.sum().backward()
