"""The autograd graph behind a tensor as boxes and edges, laid out in rows, as SVG (``draw_graph``) or DOT."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from ..autograd.graph import AccumulateGrad, Node, SavedTensor
from ..tensor import Tensor
from ._drawing import (
    CHAR_WIDTH,
    COLUMN_GAP,
    LINE_HEIGHT,
    MARGIN,
    PAD,
    ROW_GAP,
    GraphDrawing,
    _describe,
    _describe_meta,
    _preview,
    _svg_document,
    _text,
    _text_width,
    _values,
)

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
            if not any(box[0] < p[2] + 8 and p[0] < box[2] + 8 and box[1] < p[3] + 2 and p[1] < box[3] + 2
                       for p in placed):  # a little space between labels, so two never read as one
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
