"""minitorch.viz pictures are legible: measured with matplotlib's text renderer, no text overlaps another,
every text lies inside the cell or box it labels (or clear of every box), nothing leaves the picture, and
graph edges pass between boxes instead of through them. Run on the tensors the notebooks draw, on a
permuted 3-D view, on 4-D views, and on the graph of a TransformerEncoderLayer."""

import importlib.util
import math
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import minitorch as torch
import minitorch.nn as nn
from minitorch import viz

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

SVG = "{http://www.w3.org/2000/svg}"
SLACK = 0.6  # pixels: rounding in the SVG coordinates


class Box:
    def __init__(self, left, top, right, bottom, what):
        self.left, self.top, self.right, self.bottom, self.what = left, top, right, bottom, what

    def overlaps(self, other, slack=SLACK):
        return (self.left < other.right - slack and other.left < self.right - slack
                and self.top < other.bottom - slack and other.top < self.bottom - slack)

    def inside(self, other, slack=SLACK):
        return (self.left >= other.left - slack and self.right <= other.right + slack
                and self.top >= other.top - slack and self.bottom <= other.bottom + slack)

    def contains_point(self, x, y, margin=0.0):
        return self.left + margin < x < self.right - margin and self.top + margin < y < self.bottom - margin

    def __repr__(self):
        return f"{self.what!r} at ({self.left:.1f}, {self.top:.1f})-({self.right:.1f}, {self.bottom:.1f})"


def measure(drawing):
    """The picture's size, its texts and rectangles as boxes (texts measured by matplotlib, with the
    monospace font and size the SVG asks for), and its edges as point lists."""
    root = ET.fromstring(drawing.svg)
    width, height = float(root.get("width")), float(root.get("height"))
    default_size = float(root.get("font-size", 12))
    figure = Figure(figsize=(width / 72, height / 72), dpi=72)  # 1 point = 1 SVG pixel
    renderer = FigureCanvasAgg(figure).get_renderer()
    texts, rects, paths = [], [], []
    for element in root.iter():
        tag = element.tag.replace(SVG, "")
        if tag == "text":
            content = "".join(element.itertext())
            anchor = {"start": "left", "middle": "center", "end": "right"}[element.get("text-anchor", "start")]
            artist = figure.text(float(element.get("x")) / width, 1 - float(element.get("y")) / height, content,
                                 fontsize=float(element.get("font-size", default_size)), family="monospace",
                                 ha=anchor, va="baseline", weight=element.get("font-weight", "normal"))
            extent = artist.get_window_extent(renderer)
            texts.append(Box(extent.x0, height - extent.y1, extent.x1, height - extent.y0, content))
        elif tag == "rect":
            x, y = float(element.get("x", 0)), float(element.get("y", 0))
            w, h = float(element.get("width")), float(element.get("height"))
            if (x, y, w, h) != (0, 0, width, height):  # the white background
                rects.append(Box(x, y, x + w, y + h, "rect"))
        elif tag == "path" and element.get("marker-end"):
            paths.append(sample_path(element.get("d")))
        elif tag == "line":
            paths.append([(float(element.get("x1")), float(element.get("y1"))),
                          (float(element.get("x2")), float(element.get("y2")))])
    return width, height, texts, rects, paths


def sample_path(d):
    """Points along an SVG path of M, L and C commands (absolute coordinates)."""
    tokens = d.replace(",", " ").split()
    points, k, current = [], 0, None
    while k < len(tokens):
        command = tokens[k]
        if command in ("M", "L"):
            nxt = (float(tokens[k + 1]), float(tokens[k + 2]))
            if command == "L":
                points += [(current[0] + (nxt[0] - current[0]) * s / 20, current[1] + (nxt[1] - current[1]) * s / 20)
                           for s in range(1, 21)]
            else:
                points.append(nxt)
            current, k = nxt, k + 3
        elif command == "C":
            c1, c2, end = [(float(tokens[k + i]), float(tokens[k + i + 1])) for i in (1, 3, 5)]
            for s in range(1, 41):
                u = s / 40
                points.append(tuple((1 - u) ** 3 * p0 + 3 * (1 - u) ** 2 * u * p1 + 3 * (1 - u) * u ** 2 * p2 + u ** 3 * p3
                                    for p0, p1, p2, p3 in zip(current, c1, c2, end)))
            current, k = end, k + 7
        else:
            raise AssertionError(f"unexpected path command {command!r} in {d!r}")
    return points


def assert_legible(drawing):
    width, height, texts, rects, paths = measure(drawing)
    frame = Box(0, 0, width, height, "picture")
    for item in texts + rects:
        assert item.inside(frame), f"{item} leaves the {width:.0f}x{height:.0f} picture"
    for k, text in enumerate(texts):
        for other in texts[k + 1:]:
            assert not text.overlaps(other), f"texts overlap: {text} and {other}"
        centre = ((text.left + text.right) / 2, (text.top + text.bottom) / 2)
        holders = [r for r in rects if r.contains_point(*centre)]
        if holders:  # a label of a cell or box: it must fit that box
            holder = min(holders, key=lambda r: (r.right - r.left) * (r.bottom - r.top))
            assert text.inside(holder), f"{text} does not fit its box {holder}"
            others = [r for r in rects if r is not holder and not holder.inside(r) and r.overlaps(text)]
        else:  # a title or index: clear of every box
            others = [r for r in rects if r.overlaps(text)]
        assert not others, f"{text} overlaps {others[0]}"
    for k, rect in enumerate(rects):
        for other in rects[k + 1:]:
            assert not rect.overlaps(other) or rect.inside(other) or other.inside(rect), f"{rect} overlaps {other}"
    for points in paths:  # an edge may touch only the boxes it starts and ends at
        ends = [r for r in rects if any(math.dist(p, q) < 2 for p in points[:1] + points[-1:]
                                        for q in [(min(max(p[0], r.left), r.right), min(max(p[1], r.top), r.bottom))])]
        for x, y in points:
            crossed = [r for r in rects if r not in ends and r.contains_point(x, y, margin=1.0)]
            assert not crossed, f"an edge from {points[0]} to {points[-1]} crosses {crossed[0]}"
    return texts, rects


# ------------------------------------------------------------------------------------------------
# storage


def notebook_storage_drawings():
    """The draw_storage calls of notebooks 01, 03 and the seed notebooks, and bigger cases (drawn when called)."""
    t = torch.arange(6.0).view(2, 3)
    small = torch.tensor([[3, 1, 2], [4, 1, 7]])
    ten = torch.arange(10).view(2, 5)
    row = torch.tensor([1.0, 2.0, 3.0])
    y = torch.zeros(4)
    cube = torch.arange(24.0).view(2, 3, 4)
    batch = torch.randn(2, 3, 5, 5)
    points = torch.tensor([[4.0, 1.0], [5.0, 3.0], [2.0, 1.0]])
    zeros = torch.zeros(1, 2, 3)
    nine = torch.arange(1.0, 10.0).view(3, 3)
    six = torch.arange(6.0)
    weights = torch.tensor([0.2126, 0.7152, 0.0722])
    return {
        "t": lambda: viz.draw_storage(t, names=["t"]),
        "t.t()": lambda: viz.draw_storage(small, small.t(), names=["t", "t.t()"]),
        "columns": lambda: viz.draw_storage(ten[:, 2], ten[1, ::2], names=["t[:, 2]", "t[1, ::2]"]),
        "expand": lambda: viz.draw_storage(row, row.expand(2, 3), names=["row", "row.expand(2, 3)"]),
        "contiguous": lambda: viz.draw_storage(t.t().contiguous(), names=["t.t().contiguous()"]),
        "y[1:3]": lambda: viz.draw_storage(y, y[1:3], names=["y", "v = y[1:3]"]),
        "permuted 3-D": lambda: viz.draw_storage(cube, cube.permute(2, 0, 1), names=["cube", "cube.permute(2, 0, 1)"]),
        "transpose 3-D": lambda: viz.draw_storage(zeros, zeros.transpose(0, 2), zeros.transpose(1, 2),
                                          names=["t", "t.transpose(0, 2)", "t.transpose(1, 2)"]),
        "4-D": lambda: viz.draw_storage(batch, batch.transpose(1, 3), names=["batch", "batch.transpose(1, 3)"]),
        "points": lambda: viz.draw_storage(points, points[1:], points[:, 0], names=["points", "points[1:]", "points[:, 0]"]),
        "strided patterns": lambda: viz.draw_storage(nine, nine.t(), nine.diagonal(), nine[0].expand(2, 3),
                                                     names=["t", "t.t()", "t.diagonal()", "t[0].expand(2, 3)"]),
        "windows": lambda: viz.draw_storage(six, six.unfold(0, 3, 1), names=["x", "x.unfold(0, 3, 1)"]),
        "broadcast weights": lambda: viz.draw_storage(weights, weights[:, None, None].expand(3, 2, 2),
                                                      names=["weights", "unsqueezed_weights.expand(3, 2, 2)"]),
        "highlighted": lambda: viz.draw_storage(points, points[1], highlight=[(1, 1), (1,)]),
        "300": lambda: viz.draw_storage(torch.arange(300.0).view(3, 100)),
        "long rows": lambda: viz.draw_storage(torch.arange(600.0).view(20, 30)[::2, 1:]),
        "many blocks": lambda: viz.draw_storage(torch.randn(9, 7, 3, 16)),
        "scalar": lambda: viz.draw_storage(torch.tensor(3.5)),
        "empty": lambda: viz.draw_storage(torch.zeros(0, 3)),
        "meta": lambda: viz.draw_storage(torch.empty(2, 3, device="meta")),
    }


@pytest.mark.parametrize("name", list(notebook_storage_drawings()))
def test_storage_drawing_is_legible(name):
    drawing = notebook_storage_drawings()[name]()
    texts, _ = assert_legible(drawing)
    assert texts[0].what.startswith("storage: ")


def test_permuted_view_has_a_titled_block_per_leading_index():
    cube = torch.arange(24.0).view(2, 3, 4)
    view = cube.permute(2, 0, 1)  # size (4, 2, 3), stride (1, 12, 4)
    texts, rects = assert_legible(viz.draw_storage(view, names=["p"]))
    titles = [t for t in texts if t.what.startswith("[") and t.what.endswith(":, :]")]
    assert [t.what for t in titles] == ["[0, :, :]", "[1, :, :]", "[2, :, :]", "[3, :, :]"]
    cells = {t.what for t in texts if t.what.startswith("s[")}
    assert cells == {f"s[{i}]" for i in range(24)}  # every element says where it lives
    block_lefts = sorted({round(t.left) for t in titles})
    assert len(block_lefts) == 4  # side by side, apart
    assert "p[1, 1, 1] -> storage[0 + 1*1 + 1*12 + 1*4] = storage[17]" in {t.what for t in texts}


def test_blocks_of_a_3d_view_have_gaps_between_them():
    cube = torch.arange(24.0).view(2, 3, 4)
    _, _, _, rects, _ = measure(viz.draw_storage(cube.permute(2, 0, 1), names=["p"]))
    cells = [r for r in rects if r.bottom - r.top > 30 and r.top > 120]  # the view's cells, below the strip
    lefts = sorted({round(r.left, 1) for r in cells})
    rights = sorted({round(r.right, 1) for r in cells})
    gaps = [left - right for left in lefts for right in rights if 0 < left - right < 100]
    assert gaps and min(gaps) >= 20  # a block's right edge and the next block's left edge never touch


# ------------------------------------------------------------------------------------------------
# graphs


def transformer_loss():
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, dropout=0.0, batch_first=True)
    x = torch.randn(2, 3, 8, requires_grad=True)
    loss = layer(x).pow(2).mean()
    return layer, x, loss


@pytest.mark.parametrize("mode", ["plain", "saved", "tensors"])
def test_transformer_encoder_layer_graph_is_legible(mode):
    layer, x, loss = transformer_loss()
    if mode == "tensors":
        loss.backward()
    drawing = viz.draw_graph(loss, show_saved=mode == "saved", show_tensors=mode == "tensors",
                             params=dict(layer.named_parameters()), names={"x": x})
    texts, rects = assert_legible(drawing)
    assert len(rects) > 40
    assert "self_attn.in_proj_weight" in {t.what for t in texts}


def test_small_graphs_are_legible():
    a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = a.clone()
    b[1:].mul_(2)  # CopySlices with its region
    y = b.sin()
    b.add_(1)  # a stale saved tensor
    assert_legible(viz.draw_graph(y.sum(), names={"a": a, "b": b}))
    x = torch.arange(6.0, requires_grad=True)
    values, _ = x.view(2, 3).max(dim=1)
    first, second = x.split(3)
    assert_legible(viz.draw_graph((first * second).sum() + values.sum()))  # labelled multi-output edges
    w = torch.tensor([0.5, 1.5], requires_grad=True)
    (w * w * w).sum().backward(create_graph=True)
    assert_legible(viz.draw_graph(w.grad.sum(), names={"w": w}, show_tensors=True))


def test_backward_frames_are_legible():
    a = torch.tensor(2.0, requires_grad=True)
    b = torch.tensor(-3.0, requires_grad=True)
    c = torch.tensor([1.0, 2.0], requires_grad=True)
    trace = viz.trace_backward(((a * b + a) * c).tanh().sum(), names={"a": a, "b": b, "c": c})
    for frame in trace.frames():
        assert_legible(frame)


# ------------------------------------------------------------------------------------------------
# the pictures the docs build draws (docs/hooks/optable.py)


def _docs_hook():
    path = Path(__file__).resolve().parents[1] / "docs" / "hooks" / "optable.py"
    spec = importlib.util.spec_from_file_location("optable_for_viz", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


DOCS = _docs_hook()


@pytest.mark.parametrize("name", list(DOCS.DRAWINGS))
def test_docs_drawing_is_legible(name):
    svg = re.search(r"<svg .*</svg>", DOCS.render_drawing(name), re.S).group(0)
    assert_legible(viz.Drawing(svg))


def test_block_titles_wider_than_their_blocks_keep_apart():
    t = torch.zeros(1, 2, 3).transpose(0, 2)  # blocks one column wide, titles "[0, :, :]" wider than that
    _, _, texts, _, _ = measure(viz.draw_storage(t, names=["t"]))
    titles = sorted((x for x in texts if x.what.endswith(":, :]")), key=lambda x: x.left)
    assert len(titles) == 3
    assert all(b.left - a.right >= 15 for a, b in zip(titles, titles[1:]))
