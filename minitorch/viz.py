"""Pictures for notebooks: the autograd graph behind a tensor, and how a view maps onto its storage.

Both return a :class:`Drawing`, which Jupyter shows inline through ``_repr_svg_``. minitorch writes the
SVG itself (a small layered layout), so no Graphviz or other system package is needed; graph drawings
also offer ``to_dot()`` for people who have Graphviz. Output is deterministic: the same graph gives
the same text, so drawings can be compared in tests.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from html import escape
from pathlib import Path

from .autograd.graph import AccumulateGrad, Node, SavedTensor
from .tensor import Tensor

__all__ = ["BackwardStep", "BackwardTrace", "Drawing", "GraphDrawing", "draw_graph", "draw_storage", "to_dot",
           "trace_backward"]

CHAR_WIDTH, LINE_HEIGHT, PAD = 7.2, 15, 6  # 12px monospace text
ROW_GAP, COLUMN_GAP, MARGIN = 44, 20, 12
FONT = 'font-family="monospace" font-size="12"'
# kind -> (fill, stroke): the colours say what a box is, the same in SVG and DOT
STYLES = {
    "root": ("#c8e6c9", "#2e7d32"),  # the tensor(s) you asked to draw
    "leaf": ("#bbdefb", "#1565c0"),  # leaves that require grad (their AccumulateGrad)
    "op": ("#eeeeee", "#616161"),  # grad_fn nodes of the forward graph
    "backward": ("#f3e5f5", "#6a1b9a"),  # nodes that only the create_graph backward graph has
    "grad": ("#e1bee7", "#6a1b9a"),  # a leaf's .grad that has its own graph (create_graph=True)
    "saved": ("#ffe0b2", "#ef6c00"),  # tensors a node saved for backward
    "stale": ("#ffcdd2", "#c62828"),  # saved tensors modified in place since: backward will raise
    "running": ("#fff59d", "#f57f17"),  # trace_backward: the node the engine runs in this frame
    "done": ("#dcedc8", "#558b2f"),  # trace_backward: nodes that have run, leaves whose .grad was written
    "tensor": ("#ffffff", "#37474f"),  # show_tensors: an intermediate tensor, between the op that made it and its users
}


class Drawing:
    """An SVG picture: shown inline by Jupyter, saved with ``save(path)``, raw text in ``.svg``."""

    def __init__(self, svg: str):
        self.svg = svg

    def _repr_svg_(self) -> str:
        return self.svg

    def save(self, path: str | Path) -> Path:
        """Write the SVG to ``path`` (a ``.svg`` file any browser opens) and return the path."""
        path = Path(path)
        path.write_text(self.svg, encoding="utf-8")
        return path

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {len(self.svg)} characters of SVG>"


class GraphDrawing(Drawing):
    """A drawn autograd graph; ``to_dot()`` gives the same graph as Graphviz DOT text."""

    def __init__(self, svg: str, dot: str):
        super().__init__(svg)
        self._dot = dot

    def to_dot(self) -> str:
        return self._dot


# ------------------------------------------------------------------------------------------------
# labels


def _shape(t: Tensor) -> str:
    return "(" + ", ".join(str(n) for n in t.shape) + ("," if len(t.shape) == 1 else "") + ")"


def _dtype(t: Tensor) -> str:
    return str(t.dtype).replace("torch.", "")


def _format(value) -> str:
    if isinstance(value, float):
        text = f"{value:.4g}"
        return text if any(c in text for c in ".ein") else text + "."  # 2. as PyTorch prints floats
    return str(value)


def _values(t: Tensor, limit: int = 4) -> str | None:
    """The values of a small tensor on one short line (None when too big or without data)."""
    if t.numel() > limit or t.device.type == "meta":
        return None
    flat = t.detach().reshape(-1).tolist()
    return "[" + ", ".join(_format(v) for v in flat) + "]"


def _describe(t: Tensor) -> str:
    return f"{_shape(t)} {_dtype(t)}"


def _describe_meta(shape: tuple, dtype) -> str:
    """``_describe`` for a tensor autograd did not keep: the shape and dtype its consumer recorded."""
    text = "(" + ", ".join(str(n) for n in shape) + ("," if len(shape) == 1 else "") + ")"
    return f"{text} {str(dtype).replace('torch.', '')}"


def _preview(t: Tensor, limit: int = 4) -> str:
    """A tensor's values on one short line: all of them when few, else the first ones and an ellipsis."""
    if t.device.type == "meta":
        return "?"
    if t.numel() <= limit:
        return _values(t, limit) or "[]"
    head = t.detach().reshape(-1)[: limit - 1].tolist()
    return "[" + ", ".join(_format(v) for v in head) + ", ...]"


# ------------------------------------------------------------------------------------------------
# the graph: boxes and edges, collected from grad_fn / next_functions


class _Box:
    __slots__ = ("lines", "kind", "row", "x", "y", "width", "height")

    def __init__(self, lines: list[str], kind: str):
        self.lines, self.kind = lines, kind
        self.row, self.x, self.y = 0, 0.0, 0.0
        self.width = max(len(line) for line in lines) * CHAR_WIDTH + 2 * PAD
        self.height = len(lines) * LINE_HEIGHT + 2 * PAD


class _Graph:
    """Boxes and edges ``(source, target, dashed, label)``; an edge points the way data flows forward."""

    def __init__(self, names: dict[int, str], show_saved: bool, show_backward: bool, show_tensors: bool = False,
                 outputs: dict[tuple[int, int], Tensor] | None = None):
        self.boxes: list[_Box] = []
        self.edges: list[tuple[int, int, bool, str]] = []
        self.names, self.show_saved, self.show_backward = names, show_saved, show_backward
        self.show_tensors = show_tensors
        # (id(grad_fn), output_nr) -> the tensor it made, where known: named, a root, or saved by a node
        self.outputs: dict[tuple[int, int], Tensor] = dict(outputs or {})
        self.tensor_box: dict[tuple[int, int], int] = {}  # show_tensors: the box of each intermediate tensor
        self.node_box: dict[int, int] = {}  # id(Node) or id(leaf Tensor) -> box index
        self.keep: list = []  # holds the nodes whose ids are keys above, so no id is reused
        self.connected: set[int] = set()  # nodes whose input edges are drawn
        self.pending: list[tuple[Tensor, Tensor]] = []  # (leaf, its .grad that has a graph)

    def add(self, lines: list[str], kind: str) -> int:
        self.boxes.append(_Box(lines, kind))
        return len(self.boxes) - 1

    def add_root(self, tensor: Tensor, kind: str = "root", title: str | None = None) -> None:
        node = tensor.grad_fn
        if node is None and tensor.requires_grad:
            self.node_box.setdefault(id(tensor), self._leaf_box(tensor, "root"))
            return
        lines = [title or self.names.get(id(tensor), "output"), _describe(tensor)]
        if node is None:
            lines.append("no grad_fn (not recorded)")
        elif self.show_tensors:
            lines += self._tensor_lines(tensor)
        root = self.add(lines, kind)
        if node is not None:
            self.outputs.setdefault((id(node), tensor.output_nr), tensor)
            self.tensor_box.setdefault((id(node), tensor.output_nr), root)
            self.edges.append((self.visit(node, "op" if kind == "root" else "backward"), root, False, ""))

    def _tensor_lines(self, tensor: Tensor | None) -> list[str]:
        """show_tensors: an intermediate's data and gradient (autograd keeps neither unless asked)."""
        if tensor is None:
            return ["data: not kept by autograd"]
        lines = ["data: " + _preview(tensor)]
        kept = tensor.is_leaf or tensor.retains_grad  # reading .grad of any other tensor warns
        if kept and tensor.grad is not None:
            lines.append("grad: " + _preview(tensor.grad))
        elif tensor.requires_grad:
            lines.append("grad: None" if kept else "grad: not kept (retain_grad())")
        return lines

    def visit(self, start: Node, kind: str) -> int:
        """Box for ``start`` and everything it reaches, walked iteratively (graphs can be deep)."""
        stack = [start]
        while stack:
            node = stack.pop()
            if id(node) in self.node_box:
                continue
            self._node_box(node, kind)
            for child, _ in reversed(node.next_functions):  # first input is visited first
                if child is not None and id(child) not in self.node_box:
                    stack.append(child)
        self._connect()
        return self.node_box[id(start)]

    def _node_box(self, node: Node, kind: str) -> int:
        self.keep.append(node)
        if isinstance(node, AccumulateGrad):
            leaf = node.variable
            index = self.node_box[id(leaf)] if id(leaf) in self.node_box else self._leaf_box(leaf)
            self.node_box[id(node)] = index
            return index
        lines = [node.name()]
        inner = getattr(node, "fn", None)
        if isinstance(inner, Node):  # CopySlices: the in-place op it applies to the written region
            lines.append(f"region op: {inner.name()}")
            size, stride, offset = node.region
            where = "of the storage" if node.storage_geometry is not None else "of the base"
            lines.append(f"region {where}: size {tuple(size)}")
            lines.append(f"stride {tuple(stride)} offset {offset}")
        named = [self.names[id(t)] for (key, nr), t in self.outputs.items()
                 if key == id(node) and id(t) in self.names and (key, nr) not in self.tensor_box]  # roots say it
        if named and not self.show_tensors:  # the user's name for what this node made
            lines.append("-> " + ", ".join(named))
        index = self.node_box[id(node)] = self.add(lines, kind)
        saved = node._saved if not isinstance(inner, Node) else inner._saved
        if self.show_tensors and saved:
            for entry in saved:  # saved inputs and outputs give the data of intermediates autograd kept
                if type(entry) is SavedTensor:
                    t = entry.tensor
                    if entry.output_nr is not None:
                        self.outputs.setdefault((id(node), entry.output_nr), t)
                    elif t.grad_fn is not None:
                        self.outputs.setdefault((id(t.grad_fn), t.output_nr), t)
        if self.show_saved:
            self._saved_boxes(node, inner if isinstance(inner, Node) else None, index)
        return index

    def _leaf_box(self, tensor: Tensor, kind: str = "leaf") -> int:
        lines = [self.names.get(id(tensor), "leaf"), _describe(tensor)]
        if self.show_tensors:
            lines.append("data: " + _preview(tensor))
        lines.append("requires_grad=True")
        grad = tensor.grad
        if grad is None:
            lines.append("grad: None")
        else:
            lines.append("grad: " + (_values(grad) or _describe(grad)))
        index = self.add(lines, kind)
        self.node_box[id(tensor)] = index
        self.keep.append(tensor)
        if self.show_backward and grad is not None and grad.grad_fn is not None:
            self.pending.append((tensor, grad))
        return index

    def _saved_boxes(self, node: Node, inner: Node | None, index: int) -> None:
        saved = node._saved if inner is None else inner._saved
        if saved is None:
            self.edges.append((self.add(["saved tensors freed", "(backward already ran)"], "saved"), index, True, ""))
            return
        for entry in saved:
            if type(entry) is not SavedTensor:
                continue
            tensor = entry.tensor
            title = "saved result" if entry.output_nr is not None else self.names.get(id(tensor), "saved")
            lines = [f"{title} {_describe(tensor)}", f"saved at version {entry.version}"]
            current = tensor._storage.version
            if current != entry.version:
                lines.append(f"now version {current}: stale")
            kind = "stale" if current != entry.version else "saved"
            self.edges.append((self.add(lines, kind), index, True, ""))

    def _connect(self) -> None:
        """The edges between node boxes (after all boxes exist; each edge is added once)."""
        for node in self.keep:
            if not isinstance(node, Node) or isinstance(node, AccumulateGrad) or id(node) in self.connected:
                continue
            self.connected.add(id(node))
            for k, (child, output_nr) in enumerate(node.next_functions):
                if child is None:
                    continue
                label = f"out {output_nr}" if child._n_outputs > 1 else ""
                source = self.node_box[id(child)]
                if self.show_tensors and not isinstance(child, AccumulateGrad):
                    source = self._intermediate(child, output_nr, node._input_meta[k], source, label)
                    label = ""
                self.edges.append((source, self.node_box[id(node)], False, label))

    def _intermediate(self, child: Node, output_nr: int, meta, child_box: int, label: str) -> int:
        """show_tensors: the box of the tensor ``child`` made (output ``output_nr``), between it and its users."""
        key = (id(child), output_nr)
        if key not in self.tensor_box:
            tensor = self.outputs.get(key)
            if tensor is not None:
                lines = [self.names.get(id(tensor), "tensor"), _describe(tensor)]
            else:
                lines = ["tensor", "?" if meta is None else _describe_meta(*meta)]
            self.tensor_box[key] = self.add(lines + self._tensor_lines(tensor), "tensor")
            self.edges.append((child_box, self.tensor_box[key], False, label))
        return self.tensor_box[key]


def _collect(roots: Sequence[Tensor], names: dict[int, str], show_saved: bool, show_backward: bool,
             show_tensors: bool = False, outputs: dict | None = None) -> _Graph:
    graph = _Graph(names, show_saved, show_backward, show_tensors, outputs)
    for tensor in roots:
        graph.add_root(tensor)
    seen = set()
    while graph.pending:  # gradients built with create_graph=True have graphs of their own
        leaf, grad = graph.pending.pop(0)
        if id(grad) not in seen:
            seen.add(id(grad))
            title = names.get(id(leaf), "leaf") + ".grad"
            graph.add_root(grad, "grad", title)
    return graph


# ------------------------------------------------------------------------------------------------
# layout: longest-path layering, sources pulled down to their consumers, an invisible waypoint in every
# row a long edge passes, barycentric ordering; edges run through the gaps between rows, never through a box

DUMMY_WIDTH = 4  # a waypoint's share of a row: the edge passes there, between the boxes


class _Layout:
    """Where each box went, and each edge's path: down from its source's row, through a reserved slot
    (a waypoint) in each row it passes, into its target's row."""

    def __init__(self, width: float, height: float, row_top: list[float], row_bottom: list[float],
                 routes: list[list[tuple[float, int, bool]]]):
        self.width, self.height, self.row_top, self.row_bottom = width, height, row_top, row_bottom
        self.routes = routes  # per edge: (x, row, whether a box is there) from source to target


def _layout(graph: _Graph) -> _Layout:
    boxes = graph.boxes
    preds: list[list[int]] = [[] for _ in boxes]
    succs: list[list[int]] = [[] for _ in boxes]
    for source, target, _, _ in graph.edges:
        preds[target].append(source)
        succs[source].append(target)
    order = _topological(preds, succs)
    for i in order:
        boxes[i].row = max((boxes[p].row + 1 for p in preds[i]), default=0)
    for i in order:  # a source sits right above its first consumer, not in the top row
        if not preds[i] and succs[i]:
            boxes[i].row = min(boxes[s].row for s in succs[i]) - 1
    nodes = list(boxes)  # the boxes, then the waypoints of long edges
    chains = []
    for source, target, _, _ in graph.edges:
        chain = [source]
        for row in range(boxes[source].row + 1, boxes[target].row):
            waypoint = _Box([""], "waypoint")
            waypoint.row, waypoint.width, waypoint.height = row, DUMMY_WIDTH, 0
            nodes.append(waypoint)
            chain.append(len(nodes) - 1)
        chains.append(chain + [target])
    up: list[list[int]] = [[] for _ in nodes]
    down: list[list[int]] = [[] for _ in nodes]
    for chain in chains:
        for a, b in zip(chain, chain[1:]):
            down[a].append(b)
            up[b].append(a)
    rows: list[list[int]] = [[] for _ in range(max((b.row for b in nodes), default=0) + 1)]
    for i, node in enumerate(nodes):
        rows[node.row].append(i)
    for row in rows:
        _pack(nodes, row)
    for _ in range(4):  # sweeps down then up: order each row by the mean x of its neighbours
        for row, neighbours in [(r, up) for r in rows[1:]] + [(r, down) for r in reversed(rows[:-1])]:
            centre = {i: _mean([nodes[j].x for j in neighbours[i]], nodes[i].x) for i in row}
            row.sort(key=lambda i: centre[i])
            _pack(nodes, row)
    for row in rows[1:]:  # final x: as close to the inputs' mean as the row's spacing allows
        _place(nodes, row, [_mean([nodes[j].x for j in up[i] or down[i]], nodes[i].x) for i in row])
    left = min(b.x - b.width / 2 for b in nodes)
    y, row_top, row_bottom = MARGIN, [], []
    for row in rows:
        height = max((nodes[i].height for i in row), default=0)
        for i in row:
            nodes[i].x += MARGIN - left
            nodes[i].y = y + (height - nodes[i].height) / 2
        row_top.append(y)
        row_bottom.append(y + height)
        y += height + ROW_GAP
    width = max(b.x + b.width / 2 for b in nodes) + MARGIN
    routes = [[(nodes[i].x, nodes[i].row, i < len(boxes)) for i in chain] for chain in chains]
    _spread_ends(graph, routes)
    return _Layout(width, y - ROW_GAP + MARGIN, row_top, row_bottom, routes)


def _spread_ends(graph: _Graph, routes: list[list[tuple[float, int, bool]]]) -> None:
    """Edges leave a box along its bottom and enter along its top side by side, in the order of where
    they go or come from, instead of all at its centre."""
    leaving: dict[int, list[int]] = {}
    entering: dict[int, list[int]] = {}
    for k, (source, target, _, _) in enumerate(graph.edges):
        leaving.setdefault(source, []).append(k)
        entering.setdefault(target, []).append(k)
    for ends, at, towards in ((leaving, 0, 1), (entering, -1, -2)):
        for index, edges in ends.items():
            if len(edges) < 2:
                continue
            box = graph.boxes[index]
            edges.sort(key=lambda k: (routes[k][towards][0], k))
            step = min(12.0, (box.width - 2 * PAD) / (len(edges) - 1))
            for n, k in enumerate(edges):
                x, row, real = routes[k][at]
                routes[k][at] = (box.x + (n - (len(edges) - 1) / 2) * step, row, real)


def _topological(preds: list[list[int]], succs: list[list[int]]) -> list[int]:
    waiting = [len(p) for p in preds]
    ready = [i for i, count in enumerate(waiting) if count == 0]
    order = []
    while ready:
        i = ready.pop(0)
        order.append(i)
        for s in succs[i]:
            waiting[s] -= 1
            if waiting[s] == 0:
                ready.append(s)
    return order


def _mean(values: list[float], default: float) -> float:
    return sum(values) / len(values) if values else default


def _pack(boxes: list[_Box], row: list[int]) -> None:
    """Lay a row out left to right, centred on x = 0."""
    total = sum(boxes[i].width for i in row) + COLUMN_GAP * (len(row) - 1)
    x = -total / 2
    for i in row:
        boxes[i].x = x + boxes[i].width / 2
        x += boxes[i].width + COLUMN_GAP


def _place(boxes: list[_Box], row: list[int], wanted: list[float]) -> None:
    """Put each box near its wanted x without overlaps: the mean of a left-to-right pass that pushes
    boxes right and a right-to-left pass that pushes them left (both keep the spacing, so the mean does)."""
    gaps = [COLUMN_GAP + (boxes[i].width + boxes[j].width) / 2 for i, j in zip(row, row[1:])]
    right, left = list(wanted), list(wanted)
    for k in range(1, len(row)):
        right[k] = max(right[k], right[k - 1] + gaps[k - 1])
    for k in range(len(row) - 2, -1, -1):
        left[k] = min(left[k], left[k + 1] - gaps[k])
    for i, a, b in zip(row, right, left):
        boxes[i].x = (a + b) / 2


# ------------------------------------------------------------------------------------------------
# output: SVG and DOT


def _svg_document(width: float, height: float, body: list[str]) -> str:
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" {FONT}>'
        '<defs><marker id="minitorch-arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#555"/></marker></defs>'
        f'<rect width="{width:.0f}" height="{height:.0f}" fill="white"/>'
    )
    return "\n".join([head, *body, "</svg>"])


def _text(x: float, y: float, text: str, extra: str = "") -> str:
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="middle" {extra}>{escape(text)}</text>'


def _graph_svg(graph: _Graph, layout: _Layout | None = None) -> str:
    layout = layout if layout is not None else _layout(graph)
    body, placed = [], []
    width = layout.width
    for (source, target, dashed, label), route in zip(graph.edges, layout.routes):
        a, b = graph.boxes[source], graph.boxes[target]
        x, row, _ = route[0]
        d = [f"M {x:.1f} {a.y + a.height:.1f}", f"L {x:.1f} {layout.row_bottom[row]:.1f}"]
        hops = []
        for (x1, row1, _), (x2, row2, real) in zip(route, route[1:]):
            y1, y2 = layout.row_bottom[row1], layout.row_top[row2]
            bend = (y2 - y1) / 2
            d.append(f"C {x1:.1f} {y1 + bend:.1f} {x2:.1f} {y2 - bend:.1f} {x2:.1f} {y2:.1f}")
            hops.append((x1, y1, x2, y2))
            if not real:  # a waypoint: straight down through the row it passes
                d.append(f"L {x2:.1f} {layout.row_bottom[row2]:.1f}")
        d.append(f"L {route[-1][0]:.1f} {b.y:.1f}")
        style = ' stroke-dasharray="4 3"' if dashed else ""
        body.append(f'<path d="{" ".join(d)}" fill="none" stroke="#555"{style} marker-end="url(#minitorch-arrow)"/>')
        if label:
            x, y = _label_place(label, hops, placed)
            body.append(f'<text x="{x:.1f}" y="{y:.1f}" font-size="10" fill="#555">{escape(label)}</text>')
            width = max(width, x + _text_width(label, 10) + MARGIN)
    for box in graph.boxes:
        fill, stroke = STYLES[box.kind]
        left = box.x - box.width / 2
        body.append(
            f'<g class="{box.kind}"><rect x="{left:.1f}" y="{box.y:.1f}" width="{box.width:.1f}" '
            f'height="{box.height:.1f}" rx="5" fill="{fill}" stroke="{stroke}"/>'
        )
        for k, line in enumerate(box.lines):
            weight = ' font-weight="bold"' if k == 0 else ""
            body.append(_text(box.x, box.y + PAD + (k + 0.8) * LINE_HEIGHT, line, weight))
        body.append("</g>")
    return _svg_document(width, layout.height, body)


def _label_place(label: str, hops: list[tuple[float, float, float, float]],
                 placed: list[tuple[float, float, float, float]]) -> tuple[float, float]:
    """Where an edge's label goes: beside the edge in a gap between rows (last gap first), clear of the
    labels already placed; ``placed`` gets its box."""
    width, first = _text_width(label, 10), None
    for x1, y1, x2, y2 in reversed(hops):
        for t in (0.5, 0.3, 0.7, 0.15, 0.85):
            y = y1 + (y2 - y1) * t  # the curve's height at parameter t is this (its control points split the gap)
            u = 3 * (1 - t) * t * t + t ** 3  # its x moves from x1 to x2 as the cubic's weights say
            x = x1 + (x2 - x1) * u + 4
            box = (x, y - 4, x + width, y + 8)  # baseline at y + 4, 10px text
            if box[1] < y1 + 1 or box[3] > y2 - 1:
                continue
            first = first or box
            if not any(box[0] < p[2] and p[0] < box[2] and box[1] < p[3] and p[1] < box[3] for p in placed):
                placed.append(box)
                return x, y + 4
    box = first or (hops[-1][0] + 4, hops[-1][1], 0, 0)
    placed.append(box)
    return box[0], box[1] + 8


def _dot_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _graph_dot(graph: _Graph) -> str:
    lines = [
        "digraph autograd {",
        '  node [shape=box, style="rounded,filled", fontname="monospace", fontsize=11];',
        '  edge [color="#555555"];',
    ]
    for i, box in enumerate(graph.boxes):
        fill, stroke = STYLES[box.kind]
        label = _dot_quote("\n".join(box.lines)).replace("\n", "\\n")
        lines.append(f'  n{i} [label={label}, fillcolor="{fill}", color="{stroke}"];')
    for source, target, dashed, label in graph.edges:
        attrs = (["style=dashed"] if dashed else []) + ([f"label={_dot_quote(label)}"] if label else [])
        lines.append(f"  n{source} -> n{target}" + (f" [{', '.join(attrs)}]" if attrs else "") + ";")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _roots_and_names(tensor, names, params=None) -> tuple[list[Tensor], dict[int, str], dict]:
    """The roots, ``{id(tensor): name}`` from ``params`` and ``names`` (names win), and the named
    non-leaf tensors keyed by ``(id(grad_fn), output_nr)``."""
    roots = [tensor] if isinstance(tensor, Tensor) else list(tensor)
    for t in roots:
        if not isinstance(t, Tensor):
            raise TypeError(f"draw_graph(): expected a Tensor or a sequence of Tensors, got {type(t).__name__}")
    labels, outputs = {}, {}
    for argument, given in (("params", params), ("names", names)):
        for name, t in dict(given or {}).items():
            if not isinstance(t, Tensor):
                raise TypeError(f"draw_graph(): {argument}[{name!r}] must be a Tensor, got {type(t).__name__}")
            labels[id(t)] = name
            if t.grad_fn is not None:
                outputs[(id(t.grad_fn), t.output_nr)] = t
    return roots, labels, outputs


def draw_graph(
    tensor: Tensor | Sequence[Tensor],
    show_backward: bool = True,
    show_saved: bool = True,
    names: dict[str, Tensor] | None = None,
    params: dict[str, Tensor] | None = None,
    show_tensors: bool = False,
) -> GraphDrawing:
    """Draw the autograd graph behind ``tensor`` (or several tensors), as torchviz's ``make_dot`` does.

    Boxes: the tensor itself (green), the ``grad_fn`` nodes it reaches (grey), the leaves with their
    shapes and ``.grad`` (blue), and with ``show_saved`` the tensors each node saved for backward with
    the version they were saved at (orange; red when an in-place write has made them stale, so
    backward would raise). Arrows point the way values flow forward; gradients flow against them.
    With ``show_backward``, a leaf ``.grad`` that has a graph of its own (``backward(create_graph=True)``)
    is drawn too (purple). ``names`` labels leaves, roots and intermediate tensors (``names={"x": x, "h": h}``);
    ``params`` does the same, as torchviz's ``make_dot(y, params=dict(model.named_parameters()))``.

    ``show_tensors=True`` draws the graph micrograd's way: every intermediate tensor gets a box of its own
    (white) between the node that made it and the nodes that use it, with its shape, its data where it
    is known (named, or saved by a node for backward: autograd keeps no other) and its ``.grad`` where
    it was kept (leaves, and tensors that called ``retain_grad()`` before ``backward()``).
    """
    roots, labels, outputs = _roots_and_names(tensor, names, params)
    graph = _collect(roots, labels, show_saved, show_backward, show_tensors, outputs)
    return GraphDrawing(_graph_svg(graph), _graph_dot(graph))


def to_dot(
    tensor: Tensor | Sequence[Tensor], show_saved: bool = True, names: dict[str, Tensor] | None = None,
    params: dict[str, Tensor] | None = None, show_tensors: bool = False,
) -> str:
    """The autograd graph behind ``tensor`` as Graphviz DOT text (``dot -Tsvg`` renders it)."""
    roots, labels, outputs = _roots_and_names(tensor, names, params)
    return _graph_dot(_collect(roots, labels, show_saved, True, show_tensors, outputs))


# ------------------------------------------------------------------------------------------------
# storage pictures

VIEW_COLOURS = ["#1565c0", "#2e7d32", "#ef6c00", "#6a1b9a", "#c62828"]
LIGHT_COLOURS = ["#bbdefb", "#c8e6c9", "#ffe0b2", "#e1bee7", "#ffcdd2"]  # the highlighted element's fill
SMALL = 9  # font size of indices and storage positions
CELL_HEIGHT = 38  # a value (12px) over its storage position (9px)
MAX_DIMS = 4
# shown per dimension before the middle is elided: columns (last dim), rows, and the 2-D blocks of 3-D/4-D
SHOWN_COLUMNS, SHOWN_ROWS, SHOWN_BLOCKS = 12, 10, 4
STRIP_SHOWN, STRIP_ROW = 256, 16  # storage cells drawn (then the first ones ... the last ones), cells per row
MAX_WIDTH = 960  # 3-D blocks wrap onto a new line past this width
ELLIPSIS = "\u2026"


def _text_width(text: str, size: int = 12) -> float:
    """An upper bound for monospace text (DejaVu Sans Mono advances 0.602 em; 0.61 leaves slack)."""
    return len(text) * size * 0.61


class _Canvas:
    """SVG elements with the extent they cover, so the picture is sized to what was drawn."""

    def __init__(self):
        self.body: list[str] = []
        self.right = self.bottom = 0.0

    def _cover(self, right: float, bottom: float) -> None:
        self.right, self.bottom = max(self.right, right), max(self.bottom, bottom)

    def rect(self, x: float, y: float, w: float, h: float, fill: str, stroke: str = "none", extra: str = "") -> None:
        self.body.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" fill="{fill}" '
                         f'stroke="{stroke}"{extra}/>')
        self._cover(x + w, y + h)

    def text(self, x: float, y: float, text: str, size: int = 12, anchor: str = "start", extra: str = "") -> None:
        """``y`` is the baseline; ``anchor`` is SVG's text-anchor (start, middle, end)."""
        size_attr = f' font-size="{size}"' if size != 12 else ""
        extra = f" {extra}" if extra else ""
        self.body.append(f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}"{size_attr}{extra}>'
                         f"{escape(text)}</text>")
        width = _text_width(text, size)
        self._cover(x + {"start": width, "middle": width / 2, "end": 0}[anchor], y + size * 0.3)

    def svg(self) -> str:
        return _svg_document(self.right + MARGIN, self.bottom + MARGIN, self.body)


def _shown(n: int, limit: int) -> list[int | None]:
    """The indices drawn along a dimension of size ``n``: all of them, or the first and last few around None."""
    if n <= limit:
        return list(range(n))
    head = limit // 2
    tail = limit - head - 1
    return list(range(head)) + [None] + list(range(n - tail, n))


def draw_storage(tensor: Tensor, *views: Tensor, names: Sequence[str] | None = None,
                 highlight: bool | Sequence[Sequence[int] | None] = True) -> Drawing:
    """Draw a tensor's storage as a row of cells, and each view of it as a grid that says where each element lives.

    Element ``[i, j, ...]`` of a view is ``storage[offset + i * stride[0] + j * stride[1] + ...]``. Every
    cell of a view shows its value and that storage position (``s[4]``); a coloured tick under a storage
    cell marks each view that reads it. One element per view is highlighted, with its sum written out,
    in the view's colour both in the grid and on the storage (``highlight=False`` for none, or one index
    tuple per tensor, ``None`` for the default). Pass more ``views`` of the same storage (``t.t()``,
    ``t[:, 1]``, ...) to see them side by side. Tensors of up to 4 dimensions are drawn: 3-D and 4-D ones
    as their 2-D blocks; long dimensions and storages show their first and last entries around an ellipsis.
    """
    tensors = [tensor, *views]
    names = list(names) if names is not None else ["tensor"] + [f"view {k}" for k in range(1, len(tensors))]
    if len(names) != len(tensors):
        raise ValueError(f"draw_storage(): got {len(tensors)} tensors but {len(names)} names")
    for name, t in zip(names, tensors):
        if not isinstance(t, Tensor) or str(t.layout) != "torch.strided":
            raise TypeError(f"draw_storage(): {name} must be a strided Tensor, got {getattr(t, 'layout', type(t))}")
        if t._storage is not tensor._storage:
            raise ValueError(f"draw_storage(): {name} does not share storage with {names[0]} (it is a copy); "
                             "draw it separately")
        if t.dim() > MAX_DIMS:
            raise ValueError(f"draw_storage(): {name} has {t.dim()} dimensions; at most {MAX_DIMS} are drawn")
    points = _highlights(tensors, names, highlight)
    storage = tensor._storage
    if storage.device.type == "meta":
        values = ["?"] * len(storage)
    else:
        values = [_format(v) for v in tensor.storage().tolist()]
    strip = _shown(len(storage), STRIP_SHOWN)
    shown_values = [values[i] for i in strip if i is not None]
    cell_width = max([_text_width(v) for v in shown_values] + [_text_width(f"s[{len(storage)}]", SMALL), 24]) + 12
    canvas = _Canvas()
    y = MARGIN + 12
    canvas.text(MARGIN, y, _storage_title(tensor), extra='font-weight="bold"')
    used = [(VIEW_COLOURS[k % len(VIEW_COLOURS)], _read_indices(t)) for k, t in enumerate(tensors)]
    marked = {}
    for k, point in enumerate(points):
        if point is not None:
            marked.setdefault(_storage_index(tensors[k], point), LIGHT_COLOURS[k % len(LIGHT_COLOURS)])
    y = _draw_strip(canvas, values, strip, cell_width, y + 8, used, marked)
    for k, (name, t, point) in enumerate(zip(names, tensors, points)):
        y = _draw_view(canvas, t, name, k, values, cell_width, y + ROW_GAP / 2, point)
    return Drawing(canvas.svg())


def _highlights(tensors: list[Tensor], names: list[str], highlight) -> list[tuple[int, ...] | None]:
    """The element of each view whose address is written out (None: nothing highlighted in that view)."""
    if highlight is True or highlight is None:
        wanted: list = [None] * len(tensors)
    elif highlight is False:
        return [None] * len(tensors)
    else:
        wanted = list(highlight)
        if len(wanted) != len(tensors):
            raise ValueError(f"draw_storage(): highlight has {len(wanted)} entries for {len(tensors)} tensors")
    points = []
    for name, t, point in zip(names, tensors, wanted):
        if point is None:  # the default: index 1 along each dimension (0 where it has one entry)
            points.append(None if t.numel() == 0 else tuple(min(1, n - 1) for n in t.shape))
            continue
        point = tuple(int(i) for i in point)
        if len(point) != t.dim() or any(not 0 <= i < n for i, n in zip(point, t.shape)):
            raise IndexError(f"draw_storage(): highlight {point} is not an element of {name} (size {tuple(t.shape)})")
        points.append(point)
    return points


def _storage_index(t: Tensor, position: Sequence[int]) -> int:
    return t.storage_offset() + sum(i * s for i, s in zip(position, t.stride()))


def _read_indices(t: Tensor) -> set[int]:
    """Every storage position ``t`` reads (the elided elements too), for the ticks under the strip."""
    if t.numel() > 1 << 16:  # a view of a very big storage: the ticks of the drawn strip cells suffice
        t = t[tuple(slice(0, min(n, SHOWN_COLUMNS)) for n in t.shape)]
    return {_storage_index(t, p) for p in itertools.product(*(range(n) for n in t.shape))}


def _draw_strip(canvas: _Canvas, values: list[str], strip: list[int | None], cell_width: float, top: float,
                used: list[tuple[str, set[int]]], marked: dict[int, str]) -> float:
    """The storage cells in rows of ``STRIP_ROW`` (one row when it is short), each with its index above it
    and a coloured tick under it for each view that reads it. Returns the y below the strip."""
    per_row = len(strip) if len(strip) <= 24 else STRIP_ROW
    pitch = SMALL + 4 + CELL_HEIGHT + 4 * len(used) + 8
    for number, index in enumerate(strip):
        row, column = divmod(number, per_row) if per_row else (0, 0)
        x, y = MARGIN + column * cell_width, top + row * pitch + SMALL + 4
        if index is None:
            canvas.text(x + cell_width / 2, y + CELL_HEIGHT / 2 + 4, ELLIPSIS, anchor="middle")
            continue
        canvas.text(x + cell_width / 2, y - 3, str(index), SMALL, "middle", 'fill="#777"')
        canvas.rect(x, y, cell_width, CELL_HEIGHT, marked.get(index, "#fafafa"), "#333")
        canvas.text(x + cell_width / 2, y + CELL_HEIGHT / 2 + 4, values[index], anchor="middle")
        for k, (colour, indices) in enumerate(used):
            if index in indices:
                canvas.rect(x + 3, y + CELL_HEIGHT + 2 + 4 * k, cell_width - 6, 3, colour)
    rows = -(-len(strip) // per_row) if per_row else 1
    return top + max(rows, 1) * pitch


def _draw_view(canvas: _Canvas, t: Tensor, name: str, k: int, values: list[str], cell_width: float, top: float,
               point: tuple[int, ...] | None) -> float:
    """A view's title, its address formula, the highlighted element's sum, then its cells as 2-D blocks."""
    colour, light = VIEW_COLOURS[k % len(VIEW_COLOURS)], LIGHT_COLOURS[k % len(LIGHT_COLOURS)]
    y = top + 12
    canvas.text(MARGIN, y, _view_title(name, t), extra=f'fill="{colour}" font-weight="bold"')
    y += LINE_HEIGHT
    canvas.text(MARGIN, y, _formula(t), extra=f'fill="{colour}"')
    if point is not None:
        y += LINE_HEIGHT
        canvas.text(MARGIN, y, _worked(name, t, point), extra=f'fill="{colour}"')
    y += 10
    shape = tuple(t.shape)
    if t.numel() == 0:
        canvas.text(MARGIN, y + 14, "(no elements: nothing in the storage is read)", extra='fill="#777"')
        return y + 20
    if len(shape) <= 2:
        return _draw_block(canvas, t, (), MARGIN, y, values, cell_width, colour, light, point)[1]
    if len(shape) == 3:  # the blocks side by side, wrapping onto a new line past MAX_WIDTH
        lines = [[None if b is None else (b,) for b in _shown(shape[0], SHOWN_BLOCKS)]]
    else:  # a line of blocks per index of the first dimension
        lines = [[None] if a is None else [None if b is None else (a, b) for b in _shown(shape[1], SHOWN_BLOCKS)]
                 for a in _shown(shape[0], SHOWN_BLOCKS)]
    width, gap = _block_width(t, cell_width), 20
    for line in lines:
        if line == [None]:  # elided lines of blocks (4-D)
            canvas.text(MARGIN + 12, y + 12, ELLIPSIS, anchor="middle")
            y += 16 + gap
            continue
        x, bottom = MARGIN, y + 24
        for key in line:
            if len(shape) == 3 and key is not None and x > MARGIN and x + width > MAX_WIDTH:
                x, y = MARGIN, bottom + gap
            if key is None:  # elided blocks
                canvas.text(x + 12, y + _block_height(t) / 2 + 4, ELLIPSIS, anchor="middle")
                x += 24 + gap
                continue
            right, block_bottom = _draw_block(canvas, t, key, x, y, values, cell_width, colour, light, point)
            x, bottom = right + gap, max(bottom, block_bottom)
        y = bottom + gap
    return y - gap


def _row_header_width(t: Tensor) -> float:
    rows = t.shape[-2] if t.dim() >= 2 else 0
    return _text_width(str(max(rows - 1, 0)), SMALL) + 8 if t.dim() >= 2 else 0


def _block_width(t: Tensor, cell_width: float) -> float:
    columns = _shown(t.shape[-1], SHOWN_COLUMNS) if t.dim() else [0]
    cells = sum(cell_width if c is not None else 24 for c in columns)
    title = _text_width(_block_title(t, (0,) * max(t.dim() - 2, 0))) if t.dim() > 2 else 0
    return max(_row_header_width(t) + cells, title)


def _block_height(t: Tensor) -> float:
    rows = _shown(t.shape[-2], SHOWN_ROWS) if t.dim() >= 2 else [0]
    return 12 + SMALL + 6 + sum(CELL_HEIGHT if r is not None else 20 for r in rows)


def _block_title(t: Tensor, key: tuple[int, ...]) -> str:
    return "[" + ", ".join([str(i) for i in key] + [":", ":"]) + "]"


def _draw_block(canvas: _Canvas, t: Tensor, key: tuple[int, ...], left: float, top: float, values: list[str],
                cell_width: float, colour: str, light: str, point) -> tuple[float, float]:
    """One 2-D block (the last two dimensions at fixed leading indices ``key``), with row indices on its
    left and column indices above. Returns its right and bottom edges."""
    shape = tuple(t.shape)
    y = top
    if key:  # a block of a 3-D or 4-D view: its leading indices
        y += 12
        canvas.text(left, y, _block_title(t, key), extra='fill="#555"')
    rows = _shown(shape[-2], SHOWN_ROWS) if len(shape) >= 2 else [0]
    columns = _shown(shape[-1], SHOWN_COLUMNS) if shape else [0]
    header = _row_header_width(t)
    y += SMALL + 6 if shape else 0
    x0 = left + header
    xs, x = [], x0
    for c in columns:
        xs.append(x)
        x += cell_width if c is not None else 24
    right = x
    if shape:  # column indices above
        for c, cx in zip(columns, xs):
            width = cell_width if c is not None else 24
            canvas.text(cx + width / 2, y - 4, ELLIPSIS if c is None else str(c), SMALL, "middle", 'fill="#777"')
    for r in rows:
        height = CELL_HEIGHT if r is not None else 20
        if len(shape) >= 2:
            canvas.text(left + header - 6, y + height / 2 + 3, ELLIPSIS if r is None else str(r), SMALL, "end",
                        'fill="#777"')
        for c, cx in zip(columns, xs):
            width = cell_width if c is not None else 24
            if r is None or c is None:
                canvas.text(cx + width / 2, y + height / 2 + 4, ELLIPSIS, anchor="middle")
                continue
            position = (*key, r, c)[-len(shape):] if shape else ()
            index = _storage_index(t, position)
            chosen = point is not None and tuple(point) == position
            canvas.rect(cx, y, width, height, light if chosen else "white", colour,
                        ' stroke-width="2.5"' if chosen else "")
            canvas.text(cx + width / 2, y + 16, values[index] if 0 <= index < len(values) else "?", anchor="middle",
                        extra='font-weight="bold"' if chosen else "")
            canvas.text(cx + width / 2, y + 31, f"s[{index}]", SMALL, "middle", 'fill="#777"')
        y += height
    return right, y


def _storage_title(t: Tensor) -> str:
    return f"storage: {len(t._storage)} x {_dtype(t)} on {t.device}, version {t._storage.version}"


def _view_title(name: str, t: Tensor) -> str:
    size = tuple(t.shape)
    return f"{name}: size {size}  stride {t.stride()}  offset {t.storage_offset()}  contiguous={t.is_contiguous()}"


def _formula(t: Tensor) -> str:
    letters = "ijklmnop"[: t.dim()]
    terms = [str(t.storage_offset())] + [f"{letter}*{s}" for letter, s in zip(letters, t.stride())]
    return f"[{', '.join(letters)}] -> storage[{' + '.join(terms)}]"


def _worked(name: str, t: Tensor, point: tuple[int, ...]) -> str:
    """The formula for one element, with the numbers filled in."""
    terms = [str(t.storage_offset())] + [f"{i}*{s}" for i, s in zip(point, t.stride())]
    where = ", ".join(str(i) for i in point)
    return f"{name}[{where}] -> storage[{' + '.join(terms)}] = storage[{_storage_index(t, point)}]"
# ------------------------------------------------------------------------------------------------
# backward, step by step: the engine's own hooks record what it does, frame by frame


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
