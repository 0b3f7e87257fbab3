"""minitorch.viz.trace_backward: the engine's own hooks record each backward step, in the engine's order."""

import re
import sys

import pytest

import minitorch as torch
from minitorch import viz
from minitorch.viz import trace_backward


def small_graph():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    w = torch.tensor([0.5, -1.0], requires_grad=True)
    return x, w, torch.tanh(x * w).sum()


def test_steps_follow_the_engine_and_end_in_the_leaf_grads():
    x, w, loss = small_graph()
    trace = trace_backward(loss, names={"x": x, "w": w})
    assert [s.name for s in trace.steps] == ["SumBackward0", "TanhBackward0", "MulBackward0", "w.grad", "x.grad"]
    mul = trace.steps[2]
    torch.testing.assert_close(mul.grads_in[0], 1 - torch.tanh(x * w).detach() ** 2)
    torch.testing.assert_close(mul.grads_out[0], mul.grads_in[0] * w.detach())  # d(x*w)/dx = w
    by_name = {s.name: s for s in trace.steps}
    torch.testing.assert_close(by_name["x.grad"].grads_out[0], x.grad)
    torch.testing.assert_close(by_name["w.grad"].grads_in[0], mul.grads_out[1])


def test_every_node_runs_after_all_its_consumers():
    a = torch.tensor(2.0, requires_grad=True)
    b = a * 3
    c = b.exp() + b.sin() * a  # a diamond: b feeds two branches, a is used twice
    trace = trace_backward(c, names={"a": a})
    order = {s.name: k for k, s in enumerate(trace.steps)}
    assert order["MulBackward0"] > max(order["ExpBackward0"], order["SinBackward0"])
    assert trace.steps[-1].name == "a.grad" and len([s for s in trace.steps if s.name == "a.grad"]) == 1
    assert trace.steps[-1].grads_out[0].item() == pytest.approx(a.grad.item())


def test_accumulation_into_an_existing_grad_shows_the_sum():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    x.grad = torch.tensor([10.0, 10.0])
    trace = trace_backward((x * x).sum(), names={"x": x})
    leaf = trace.steps[-1]
    torch.testing.assert_close(leaf.grads_in[0], torch.tensor([2.0, 4.0]))
    torch.testing.assert_close(leaf.grads_out[0], torch.tensor([12.0, 14.0]))


def test_hooks_are_removed_afterwards():
    x, w, loss = small_graph()
    trace_backward(loss, retain_graph=True)
    before = x.grad.clone()
    loss.backward()  # no hook left to record or change anything
    torch.testing.assert_close(x.grad, 2 * before)
    assert not loss.grad_fn._post_hooks


def test_frames_highlight_one_step_and_keep_their_layout():
    x, w, loss = small_graph()
    trace = trace_backward(loss, names={"x": x, "w": w, "loss": loss})
    sizes = set()
    for k in range(len(trace)):
        svg = trace.frame(k).svg
        assert svg.count('fill="#fff59d"') == 1  # the running step
        assert svg.count('fill="#dcedc8"') == k  # the steps before it
        sizes.add(re.search(r'width="(\d+)" height="(\d+)"', svg).groups())
        rects = [tuple(map(float, m)) for m in re.findall(
            r'<rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)" rx', svg)]
        assert len(rects) == 6  # loss, SumBackward0, TanhBackward0, MulBackward0, x, w
        for i, (x1, y1, w1, h1) in enumerate(rects):
            for x2, y2, w2, h2 in rects[i + 1:]:
                assert x1 + w1 <= x2 or x2 + w2 <= x1 or y1 + h1 <= y2 or y2 + h2 <= y1, "boxes overlap"
    assert len(sizes) == 1  # the picture does not jump between frames
    last = trace.frame(len(trace) - 1).svg
    assert "grad [0.3932, -0.07065]" in last and "grad: [0.3932, -0.07065]" in last  # edge and the leaf's .grad
    with pytest.raises(IndexError, match="BackwardTrace.frame"):
        trace.frame(len(trace))


def test_a_tensor_without_a_graph_is_refused():
    with pytest.raises(RuntimeError, match="trace_backward"):
        trace_backward(torch.tensor(1.0, requires_grad=True))
    with pytest.raises(TypeError, match="trace_backward"):
        trace_backward([1.0])


def _displayed(monkeypatch):
    """Replace IPython's display with a recorder (show() imports it when called)."""
    display_module = pytest.importorskip("IPython.display")
    shown = []
    monkeypatch.setattr(display_module, "display", lambda *objects, **kwargs: shown.extend(objects))
    return shown


def _small_trace():
    a = torch.tensor(2.0, requires_grad=True)
    b = torch.tensor(-3.0, requires_grad=True)
    return viz.trace_backward(a * b + a, names={"a": a, "b": b})


def test_show_without_ipywidgets_displays_every_frame(monkeypatch):
    shown = _displayed(monkeypatch)
    monkeypatch.setitem(sys.modules, "ipywidgets", None)  # import ipywidgets raises ImportError
    trace = _small_trace()
    trace.show()
    frames = [o for o in shown if isinstance(o, viz.Drawing)]
    assert [f.svg for f in frames] == [f.svg for f in trace.frames()]
    assert len(shown) == 2 * len(trace)  # a caption and a picture per step


def test_show_with_ipywidgets_is_a_slider(monkeypatch):
    ipywidgets = pytest.importorskip("ipywidgets")
    shown = _displayed(monkeypatch)
    trace = _small_trace()
    trace.show()
    widget = next(o for o in shown if isinstance(o, ipywidgets.interactive))
    slider = widget.children[0]
    assert (slider.min, slider.max, slider.value) == (1, len(trace), 1)
    assert [o.svg for o in shown if isinstance(o, viz.Drawing)] == [trace.frame(0).svg]
    slider.value = 3  # moving the slider draws that step's frame
    assert [o.svg for o in shown if isinstance(o, viz.Drawing)][-1] == trace.frame(2).svg
