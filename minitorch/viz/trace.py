"""Backward, step by step: the engine's own hooks record what it does, and each step is drawn (``trace_backward``)."""

from __future__ import annotations

import re
from html import escape

from ..autograd.graph import AccumulateGrad, Node
from ..tensor import Tensor
from ._drawing import CHAR_WIDTH, LINE_HEIGHT, PAD, Drawing, _describe, _values
from .graph import _collect, _Graph, _graph_svg, _layout, _roots_and_names


class BackwardStep:
    """One thing the engine did, in its order: ran a node, or accumulated a gradient into a leaf's ``.grad``.

    ``grads_in`` are the gradients that arrived (one per output of the node; the leaf's incoming gradient);
    ``grads_out`` what the node sent along each of its ``next_functions`` (for a leaf: its ``.grad`` after).
    """

    def __init__(self, kind: str, name: str, key: int, grads_in: tuple, grads_out: tuple):
        self.kind, self.name, self._key = kind, name, key
        self.grads_in, self.grads_out = grads_in, grads_out

    def __repr__(self) -> str:
        def show(grads):
            return "(" + ", ".join("None" if g is None else (_values(g) or _describe(g)) for g in grads) + ")"

        verb = "ran" if self.kind == "node" else "accumulated into"
        return f"<{verb} {self.name}: in {show(self.grads_in)} -> out {show(self.grads_out)}>"


class BackwardTrace:
    """What ``backward()`` did on a graph, in the engine's order; ``frame(k)`` draws the graph after step k.

    In a notebook, ``trace.show()`` puts the frames under a slider when ipywidgets is installed, and
    shows them one after another otherwise.
    """

    def __init__(self, graph: _Graph, steps: list[BackwardStep], edge_children: dict[int, list]):
        self._graph, self.steps, self._edge_children = graph, steps, edge_children
        self._lines = [self._box_lines(k) for k in range(len(steps) + 1)]
        for index, box in enumerate(graph.boxes):  # one size per box for every frame: nothing jumps
            box.lines = max((lines[index] for lines in self._lines), key=lambda ls: max(map(len, ls)))
            box.width = max(len(line) for lines in self._lines for line in lines[index]) * CHAR_WIDTH + 2 * PAD
            box.height = len(box.lines) * LINE_HEIGHT + 2 * PAD
        self._layout = _layout(graph)
        # edge labels may widen a frame: every frame takes the widest one's width, so nothing jumps
        self._layout.width = max(float(re.search(r'width="([\d.]+)"', self.frame(k).svg).group(1))
                                 for k in range(len(steps))) if steps else self._layout.width

    def __len__(self) -> int:
        return len(self.steps)

    def _box_lines(self, done: int) -> list[list[str]]:
        lines = [list(box.lines) for box in self._graph.boxes]
        for step in self.steps[:done]:
            if step.kind == "leaf":
                box = lines[self._graph.node_box[step._key]]
                value = step.grads_out[0]
                box[-1] = "grad: " + (_values(value) or _describe(value))
        return lines

    def frame(self, k: int) -> Drawing:
        """The graph while step ``k`` (0-based) runs: earlier steps green, step ``k`` yellow, and each edge
        labelled with the gradient that has flowed along it so far."""
        if not 0 <= k < len(self.steps):
            raise IndexError(f"BackwardTrace.frame(): step {k} out of range for {len(self.steps)} steps")
        graph = self._graph
        kinds = [box.kind for box in graph.boxes]
        labels: dict[tuple[int, int], str] = {}
        for i, step in enumerate(self.steps[: k + 1]):
            index = graph.node_box[step._key]
            kinds[index] = "running" if i == k else "done"
            if step.kind == "node":
                for child_key, g in zip(self._edge_children[step._key], step.grads_out):
                    if child_key is not None and g is not None:
                        labels[(graph.node_box[child_key], index)] = "grad " + (_values(g) or _describe(g))
        saved = [(box.kind, box.lines) for box in graph.boxes]
        edges = graph.edges
        try:
            for box, kind, lines in zip(graph.boxes, kinds, self._lines[k + 1]):
                box.kind, box.lines = kind, lines
            graph.edges = [(a, b, dashed, labels.get((a, b), label)) for a, b, dashed, label in edges]
            svg = _graph_svg(graph, self._layout)
        finally:
            graph.edges = edges
            for box, (kind, lines) in zip(graph.boxes, saved):
                box.kind, box.lines = kind, lines
        title = f"step {k + 1} of {len(self.steps)}: {self.steps[k]!r}"
        return Drawing(svg.replace("</svg>", f"<title>{escape(title)}</title>\n</svg>"))

    def frames(self) -> list[Drawing]:
        return [self.frame(k) for k in range(len(self.steps))]

    def show(self) -> None:
        """Display the frames in a notebook: a slider with ipywidgets, else every frame in order."""
        from IPython.display import HTML, display  # optional: only inside Jupyter

        try:
            import ipywidgets  # optional: the slider
        except ImportError:
            ipywidgets = None
        if ipywidgets is None:
            for k in range(len(self.steps)):
                display(HTML(f"<b>step {k + 1}</b>: {escape(repr(self.steps[k]))}"), self.frame(k))
            return
        slider = ipywidgets.IntSlider(min=1, max=len(self.steps), value=1, description="step")
        display(ipywidgets.interactive(
            lambda step: display(HTML(escape(repr(self.steps[step - 1]))), self.frame(step - 1)), step=slider))

    def __repr__(self) -> str:
        return "BackwardTrace(\n" + "".join(f"  {k + 1}. {s!r}\n" for k, s in enumerate(self.steps)) + ")"


def trace_backward(tensor: Tensor, gradient: Tensor | None = None, names: dict[str, Tensor] | None = None,
                   retain_graph: bool | None = None) -> BackwardTrace:
    """Run ``tensor.backward(gradient)`` and record, through the engine's own hooks, what it did.

    Every node of the graph gets a post-hook (``grad_fn.register_hook``: the gradients that arrived and
    those it sent on), every leaf a tensor hook and a post-accumulate-grad hook (what arrived, and its
    ``.grad`` after); the hooks are removed afterwards. The steps are in the order the engine ran them,
    because the engine itself called the hooks. ``names`` labels leaves as in ``draw_graph``.
    """
    if not isinstance(tensor, Tensor):
        raise TypeError(f"trace_backward(): expected a Tensor, got {type(tensor).__name__}")
    if tensor.grad_fn is None:
        raise RuntimeError("trace_backward(): the tensor has no grad_fn (it is a leaf or was not recorded), "
                           "so backward has no graph to run")
    roots, labels, outputs = _roots_and_names(tensor, names)
    graph = _collect(roots, labels, show_saved=False, show_backward=False, outputs=outputs)
    steps: list[BackwardStep] = []
    edge_children: dict[int, list] = {}
    handles, arrived = [], {}

    def snapshot(g):
        return None if g is None else g.detach().clone()

    def on_node(node):
        def hook(grad_inputs, grad_outputs):
            steps.append(BackwardStep("node", node.name(), id(node), tuple(map(snapshot, grad_outputs)),
                                      tuple(map(snapshot, grad_inputs))))
        return hook

    def on_leaf_grad(leaf):
        def hook(grad):
            arrived[id(leaf)] = snapshot(grad)
        return hook

    def on_leaf_accumulated(leaf, name):
        def hook(t):
            steps.append(BackwardStep("leaf", f"{name}.grad", id(leaf), (arrived.pop(id(leaf), None),),
                                      (snapshot(t.grad),)))
        return hook

    for node in graph.keep:
        if isinstance(node, AccumulateGrad):
            leaf = node.variable
            handles.append(leaf.register_hook(on_leaf_grad(leaf)))
            handles.append(leaf.register_post_accumulate_grad_hook(
                on_leaf_accumulated(leaf, labels.get(id(leaf), "leaf"))))
        elif isinstance(node, Node):
            edge_children[id(node)] = [
                None if child is None else (id(child.variable) if isinstance(child, AccumulateGrad) else id(child))
                for child, _ in node.next_functions
            ]
            handles.append(node.register_hook(on_node(node)))
    try:
        tensor.backward(gradient, retain_graph=retain_graph)
    finally:
        for handle in handles:
            handle.remove()
    return BackwardTrace(graph, steps, edge_children)
