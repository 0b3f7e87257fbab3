"""minitorch.viz: graph and storage drawings are well-formed SVG/DOT, say the right things, and are deterministic."""

import re
import xml.etree.ElementTree as ET

import pytest

import minitorch as torch
from minitorch import viz
from minitorch.viz.storage import CELL_HEIGHT

SVG = "{http://www.w3.org/2000/svg}"


def texts(drawing) -> list[str]:
    root = ET.fromstring(drawing.svg)  # raises on malformed XML
    assert root.tag == SVG + "svg"
    return ["".join(t.itertext()) for t in root.iter(SVG + "text")]


def boxes(drawing) -> dict[str, list[str]]:
    """kind -> the first line (the title) of each box of that kind."""
    root = ET.fromstring(drawing.svg)
    found: dict[str, list[str]] = {}
    for group in root.iter(SVG + "g"):
        first = next(group.iter(SVG + "text"))
        found.setdefault(group.get("class"), []).append("".join(first.itertext()))
    return found


def rects(drawing) -> list[tuple[float, float, float, float]]:
    root = ET.fromstring(drawing.svg)
    return [
        tuple(float(g.find(SVG + "rect").get(k)) for k in ("x", "y", "width", "height")) for g in root.iter(SVG + "g")
    ]


def small_graph():
    a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = torch.tensor([[0.5], [2.0]], requires_grad=True)
    y = (a * b).sigmoid().sum()
    return a, b, y


def test_graph_has_ops_leaves_and_saved_versions():
    a, b, y = small_graph()
    drawing = viz.draw_graph(y, names={"a": a, "b": b, "y": y})
    kinds = boxes(drawing)
    assert kinds["root"] == ["y"]
    assert sorted(kinds["op"]) == ["MulBackward0", "SigmoidBackward0", "SumBackward0"]
    assert sorted(kinds["leaf"]) == ["a", "b"]
    lines = texts(drawing)
    assert "(3,) float32" in lines and "(2, 1) float32" in lines and "grad: None" in lines
    assert "saved result (2, 3) float32" in lines  # sigmoid keeps its output
    assert lines.count("saved at version 0") == 3  # mul keeps a and b
    assert "stale" not in drawing.svg


def test_graph_without_saved_and_after_backward():
    a, b, y = small_graph()
    y.backward()
    drawing = viz.draw_graph(y, show_saved=False, names={"a": a})
    kinds = boxes(drawing)
    assert "saved" not in kinds
    expected = (b * (a * b).sigmoid() * (1 - (a * b).sigmoid())).sum(0)
    values = "[" + ", ".join(f"{v:.4g}" for v in expected.tolist()) + "]"
    assert f"grad: {values}" in texts(drawing)
    freed = viz.draw_graph(y)  # backward without retain_graph freed the saved tensors
    assert "saved tensors freed" in texts(freed)


def test_stale_saved_tensor_is_marked():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    s = a.sigmoid()
    s.mul_(2)  # overwrites sigmoid's saved output: backward would raise
    drawing = viz.draw_graph(s)
    assert "stale" in boxes(drawing)
    assert "now version 1: stale" in texts(drawing)
    assert sorted(boxes(drawing)["op"]) == ["MulBackward0", "SigmoidBackward0"]


def test_copyslices_names_the_region_op():
    a = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    b = a.clone()
    b[1:3].mul_(2)
    drawing = viz.draw_graph(b)
    assert "CopySlices" in boxes(drawing)["op"]
    assert "region op: MulBackward0" in texts(drawing)


def test_create_graph_backward_is_drawn():
    x = torch.tensor([0.5, 1.5], requires_grad=True)
    y = (x * x * x).sum()
    y.backward(create_graph=True)
    with_backward = boxes(viz.draw_graph(y, names={"x": x}))
    assert with_backward["grad"] == ["x.grad"]
    assert "backward" in with_backward  # nodes only the gradient's graph has
    without = boxes(viz.draw_graph(y, show_backward=False))
    assert "grad" not in without and "backward" not in without


def test_leaf_and_plain_roots():
    x = torch.ones(2, 2, requires_grad=True)
    assert boxes(viz.draw_graph(x, names={"x": x})) == {"root": ["x"]}
    plain = viz.draw_graph(torch.ones(3))
    assert "no grad_fn (not recorded)" in texts(plain)
    two = viz.draw_graph([x.sum(), (x * 2).mean()])
    assert sorted(boxes(two)["op"]) == ["MeanBackward0", "MulBackward0", "SumBackward0"]
    with pytest.raises(TypeError, match="draw_graph"):
        viz.draw_graph([x, 3])


def test_multi_output_edges_are_labelled():
    x = torch.arange(6.0, requires_grad=True)
    values, _ = x.view(2, 3).max(dim=1)
    first, second = x.split(3)
    drawing = viz.draw_graph((first * second).sum() + values.sum())
    assert "out 0" in texts(drawing) and "out 1" in texts(drawing)


def test_layout_is_deterministic_and_boxes_do_not_overlap():
    def draw():
        a, b, y = small_graph()
        y.backward(create_graph=True)
        return viz.draw_graph(y, names={"a": a, "b": b})

    first, second = draw(), draw()
    assert first.svg == second.svg and first.to_dot() == second.to_dot()
    root = ET.fromstring(first.svg)
    width, height = float(root.get("width")), float(root.get("height"))
    placed = rects(first)
    for k, (x, y, w, h) in enumerate(placed):
        assert 0 <= x and x + w <= width and 0 <= y and y + h <= height
        for x2, y2, w2, h2 in placed[k + 1 :]:
            assert x + w <= x2 or x2 + w2 <= x or y + h <= y2 or y2 + h2 <= y, "boxes overlap"


def test_inputs_are_drawn_above_the_ops_that_use_them():
    a, b, y = small_graph()
    drawing = viz.draw_graph(y, show_saved=False)
    root = ET.fromstring(drawing.svg)
    tops = {}
    for group in root.iter(SVG + "g"):
        title = "".join(next(group.iter(SVG + "text")).itertext())
        tops[title] = float(group.find(SVG + "rect").get("y"))
    assert tops["leaf"] < tops["MulBackward0"] < tops["SigmoidBackward0"] < tops["SumBackward0"] < tops["output"]


def test_dot_text_is_valid():
    a, b, y = small_graph()
    dot = viz.draw_graph(y, names={"a": a, "b": b}).to_dot()
    assert dot == viz.to_dot(y, names={"a": a, "b": b})
    assert dot.startswith("digraph autograd {") and dot.rstrip().endswith("}")
    declared = set(re.findall(r"^  (n\d+) \[label=", dot, re.M))
    edges = re.findall(r"^  (n\d+) -> (n\d+)", dot, re.M)
    assert len(declared) == 9 and len(edges) == 8
    assert all(s in declared and t in declared for s, t in edges)
    assert dot.count("style=dashed") == 3  # one per saved tensor
    for label in re.findall(r'label="((?:[^"\\]|\\.)*)"', dot):  # quotes inside labels are escaped
        assert '"' not in label.replace('\\"', "")


def test_drawing_save_and_repr(tmp_path):
    drawing = viz.draw_graph(small_graph()[2])
    path = drawing.save(tmp_path / "graph.svg")
    assert path.read_text() == drawing.svg == drawing._repr_svg_()
    assert "SVG" in repr(drawing)


def test_deep_graph_does_not_recurse():
    x = torch.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(3000):
        y = y * 1.0
    assert len(boxes(viz.draw_graph(y, show_saved=False))["op"]) == 3000


# ------------------------------------------------------------------------------------------------
# storage


def storage_cells(drawing) -> list[str]:
    """The values written in the storage strip's cells (the strip is the first row of rects)."""
    root = ET.fromstring(drawing.svg)
    cells = [r for r in root.iter(SVG + "rect") if r.get("stroke") == "#333"]
    centres = {(round(float(r.get("x")) + float(r.get("width")) / 2, 1), float(r.get("y"))) for r in cells}
    found = []
    for t in root.iter(SVG + "text"):
        for x, y in centres:
            if abs(float(t.get("x")) - x) < 0.2 and y < float(t.get("y")) < y + CELL_HEIGHT:
                found.append("".join(t.itertext()))
    return found


def test_storage_of_transpose_shares_cells():
    t = torch.arange(6.0).view(2, 3)
    drawing = viz.draw_storage(t, t.t(), names=["t", "t.t()"])
    lines = texts(drawing)
    assert lines[0] == "storage: 6 x float32 on cpu, version 0"
    assert storage_cells(drawing) == ["0.", "1.", "2.", "3.", "4.", "5."]
    assert "t: size (2, 3)  stride (3, 1)  offset 0  contiguous=True" in lines
    assert "t.t(): size (3, 2)  stride (1, 3)  offset 0  contiguous=False" in lines
    assert "[i, j] -> storage[0 + i*1 + j*3]" in lines
    assert "t.t()[1, 1] -> storage[0 + 1*1 + 1*3] = storage[4]" in lines  # the highlighted element, worked out
    assert lines.count("s[1]") == 2 and lines.count("s[3]") == 2  # each element names its storage position
    root = ET.fromstring(drawing.svg)
    assert not list(root.iter(SVG + "line"))  # no line per element: positions and colours say it
    highlighted = [r for r in root.iter(SVG + "rect") if r.get("stroke-width") == "2.5"]
    assert len(highlighted) == 2


def test_storage_of_slice_has_offset_and_unused_cells():
    t = torch.arange(10).view(2, 5)
    column = t[:, 2]
    drawing = viz.draw_storage(column, names=["t[:, 2]"])
    lines = texts(drawing)
    assert "t[:, 2]: size (2,)  stride (5,)  offset 2  contiguous=False" in lines
    assert "s[2]" in lines and "s[7]" in lines
    assert storage_cells(drawing) == [str(v) for v in range(10)]
    root = ET.fromstring(drawing.svg)
    ticks = [r for r in root.iter(SVG + "rect") if r.get("height") == "3.0"]
    assert len(ticks) == 2  # only storage[2] and storage[7] are used by the view


def test_storage_scalar_expand_and_meta():
    s = torch.tensor(3.5)
    assert "[] -> storage[0]" in texts(viz.draw_storage(s))
    e = torch.tensor([1.0, 2.0]).expand(3, 2)
    assert "[i, j] -> storage[0 + i*0 + j*1]" in texts(viz.draw_storage(e))
    m = torch.empty(2, 3, device="meta")
    assert "?" in texts(viz.draw_storage(m))


def test_storage_long_dimensions_and_storages_are_elided():
    t = torch.arange(600.0).view(20, 30)
    lines = texts(viz.draw_storage(t))
    assert "\u2026" in lines
    assert "s[0]" in lines and "s[599]" in lines and "s[100]" not in lines  # first and last rows and columns
    assert "599." in lines and "300." not in lines  # the strip: first cells ... last cells
    ticks = [r for r in ET.fromstring(viz.draw_storage(t[:, :20]).svg).iter(SVG + "rect") if r.get("height") == "3.0"]
    read = {30 * i + j for i in range(20) for j in range(20)}
    shown = [*range(128), *range(600 - 127, 600)]  # the strip: the first 128 cells ... the last 127
    assert len(ticks) == sum(s in read for s in shown)  # elided view elements still tick their cells


def test_storage_highlight_argument():
    t = torch.arange(6.0).view(2, 3)
    lines = texts(viz.draw_storage(t, t.t(), highlight=[(0, 2), None], names=["t", "u"]))
    assert "t[0, 2] -> storage[0 + 0*3 + 2*1] = storage[2]" in lines
    assert "u[1, 1] -> storage[0 + 1*1 + 1*3] = storage[4]" in lines
    assert not any("= storage[" in line for line in texts(viz.draw_storage(t, highlight=False)))
    with pytest.raises(IndexError, match="highlight"):
        viz.draw_storage(t, highlight=[(2, 0)])
    with pytest.raises(ValueError, match="highlight has 1 entries for 2 tensors"):
        viz.draw_storage(t, t.t(), highlight=[(0, 0)])


def test_storage_errors():
    t = torch.arange(6.0)
    with pytest.raises(ValueError, match="does not share storage"):
        viz.draw_storage(t, t.clone())
    with pytest.raises(ValueError, match="names"):
        viz.draw_storage(t, names=["a", "b"])
    with pytest.raises(ValueError, match="at most 4 are drawn"):
        viz.draw_storage(torch.zeros(1, 1, 1, 1, 2))
    with pytest.raises(TypeError, match="strided"):
        viz.draw_storage([1, 2])


def test_storage_drawing_is_deterministic():
    t = torch.arange(12.0).view(3, 4)
    assert viz.draw_storage(t[1:, ::2]).svg == viz.draw_storage(t[1:, ::2]).svg


# ------------------------------------------------------------------------------------------------
# intermediate tensors, params, CopySlices regions


def test_show_tensors_draws_each_intermediate_with_data_and_grad():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    w = torch.tensor([0.5, -1.0], requires_grad=True)
    h = x * w
    h.retain_grad()
    z = torch.tanh(h)
    loss = z.sum()
    loss.backward()
    drawing = viz.draw_graph(loss, names={"x": x, "w": w, "h": h, "z": z, "loss": loss}, show_tensors=True,
                             show_saved=False)
    kinds = boxes(drawing)
    assert sorted(kinds["tensor"]) == ["h", "z"]
    lines = texts(drawing)
    assert "data: [0.5, -2.]" in lines and "grad: [0.7864, 0.07065]" in lines  # h kept its grad
    assert "data: [0.4621, -0.964]" in lines and lines.count("grad: not kept (retain_grad())") == 2  # z, loss
    assert "data: [1., 2.]" in lines  # leaves show their data too
    # the tensors sit between the node that made them and the node that uses them
    root = ET.fromstring(drawing.svg)
    tops = {}
    for group in root.iter(SVG + "g"):
        tops["".join(next(group.iter(SVG + "text")).itertext())] = float(group.find(SVG + "rect").get("y"))
    assert tops["MulBackward0"] < tops["h"] < tops["TanhBackward0"] < tops["z"] < tops["SumBackward0"]


def test_show_tensors_finds_unnamed_data_in_saved_tensors():
    a = torch.tensor([1.0, -2.0], requires_grad=True)
    y = (a.exp() * 3).sum()  # exp saves its result: the intermediate's data is known without a name
    lines = texts(viz.draw_graph(y, show_tensors=True))
    assert "data: [2.718, 0.1353]" in lines
    b = torch.tensor([1.0, -2.0], requires_grad=True)
    unknown = texts(viz.draw_graph((b * 2).sum(), show_tensors=True, show_saved=False))
    assert "data: not kept by autograd" in unknown and "(2,) float32" in unknown


def test_params_name_leaves_as_torchviz_does():
    model = torch.nn.Linear(3, 2)
    out = model(torch.ones(1, 3)).sum()
    kinds = boxes(viz.draw_graph(out, params=dict(model.named_parameters())))
    assert sorted(kinds["leaf"]) == ["bias", "weight"]
    both = boxes(viz.draw_graph(out, params={"weight": model.weight}, names={"W": model.weight}))
    assert "W" in both["leaf"]  # names win over params
    with pytest.raises(TypeError, match=r"params\['w'\] must be a Tensor"):
        viz.draw_graph(out, params={"w": 3})


def test_named_intermediate_labels_its_node():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    h = a.sin()
    drawing = viz.draw_graph(h.sum(), names={"h": h}, show_saved=False)
    assert "-> h" in texts(drawing)


def test_copyslices_shows_its_region():
    a = torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], requires_grad=True)
    b = a.clone().view(2, 3)
    b[:, 1].mul_(2)
    lines = texts(viz.draw_graph(b, show_saved=False))
    assert "region of the base: size (2,)" in lines and "stride (3,) offset 1" in lines
