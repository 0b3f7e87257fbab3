"""mkdocs hook: pages generated from the code at build time, so the docs cannot drift from it.

A page asks for generated content with an HTML comment on a line of its own:

- ``<!-- minitorch:op-table -->``: every ``minitorch.ops.op.Op`` subclass with its grad_fn name,
  module, what it saves for backward, and the source of its derivative (the ``backward`` method, or
  its entry in a derivative table such as ``UNARY`` in ops/pointwise.py or ``ACTIVATIONS`` in
  nn/functional/activation.py); graph nodes that are not ops (``AccumulateGrad``, ``CopySlices``,
  ...) follow with their ``_evaluate``.
- ``<!-- minitorch:functions minitorch.ops.arithmetic -->``: the module's ``__all__`` as a list of
  names.
- ``<!-- minitorch:tensor-methods -->``: every public ``Tensor`` method and property, from the live
  class (most are op functions from minitorch/_tensor_methods.py, which static docstring collection misses).
- ``<!-- minitorch:source minitorch.autograd.engine._discover -->``: the current source of a function
  or class, as a Python code block.
- ``<!-- minitorch:drawing graph -->``: a ``minitorch.viz`` picture drawn by the current code (one of
  ``DRAWINGS``), inlined as SVG beside the code that made it.

A block between ``<!-- minitorch:if-page quantization.md -->`` and ``<!-- minitorch:end-if -->`` is
kept only when that page exists in docs/ (pages other sessions are still writing), and such a page
is added to the nav after the page named in ``OPTIONAL_PAGES`` when it exists.

An unknown directive or a name that does not import raises, so ``mkdocs build --strict`` fails
instead of publishing a stale page. Only the standard library and minitorch are imported here:
tests/test_docs.py runs the generator without mkdocs.
"""

from __future__ import annotations

import ast
import functools
import html
import importlib
import inspect
import re
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DIRECTIVE = re.compile(r"^<!--\s*minitorch:(?P<kind>[\w-]+)\s*(?P<arg>[\w.]*)\s*-->[ \t]*$", re.MULTILINE)
IF_PAGE = re.compile(
    r"^<!--\s*minitorch:if-page\s+(?P<page>[\w./-]+)\s*-->\n(?P<body>.*?)^<!--\s*minitorch:end-if\s*-->\n?",
    re.MULTILINE | re.DOTALL,
)
# page that may not exist yet -> (its nav title, the nav page it follows); quantization.md is in mkdocs.yml now
OPTIONAL_PAGES: dict[str, tuple[str, str]] = {}

# the pictures pages ask for with <!-- minitorch:drawing NAME -->: code run at build time (in a namespace
# holding ``torch`` and ``viz``) whose last line is the drawing; the page shows the code and its picture
DRAWINGS = {
    "graph": """x = torch.tensor([1.0, 2.0], requires_grad=True)
w = torch.tensor([0.5, -1.0], requires_grad=True)
loss = torch.tanh(x * w).sum()
loss.backward()
viz.draw_graph(loss, names={"x": x, "w": w, "loss": loss})""",
    "storage": """t = torch.arange(6.0).view(2, 3)
viz.draw_storage(t, t.t(), t[:, 1], names=["t", "t.t()", "t[:, 1]"])""",
    "storage_3d": """cube = torch.arange(24.0).view(2, 3, 4)
viz.draw_storage(cube.permute(2, 0, 1), names=["cube.permute(2, 0, 1)"])""",
    "inplace": """base = torch.tensor([1.0, 2.0, 3.0], requires_grad=True).clone()
base[1:].mul_(2)          # an in-place op through a view rewrites the base's history (CopySlices)
y = base.sin()            # sin saves its input, base, for backward
base.add_(1)              # overwriting it afterwards makes that saved tensor stale (red): backward would raise
viz.draw_graph(y.sum(), names={"base": base})""",
    "graph_tensors": """x = torch.tensor([1.0, 2.0], requires_grad=True)
w = torch.tensor([0.5, -1.0], requires_grad=True)
h = x * w
h.retain_grad()           # keep an intermediate's gradient too
loss = torch.tanh(h).sum()
loss.backward()
viz.draw_graph(loss, names={"x": x, "w": w, "h": h, "loss": loss}, show_tensors=True, show_saved=False)""",
    "tensor_views": """t = torch.arange(6.0).view(2, 3)
viz.draw_storage(t, t.t(), t[:, 1], names=["t", "t.t()", "t[:, 1]"])""",
    "tensor_contiguous": """t = torch.arange(6.0).view(2, 3)
viz.draw_storage(t.t().contiguous(), names=["t.t().contiguous()"])   # a new storage, in the transposed order""",
    "tensor_expand": """row = torch.tensor([1.0, 2.0, 3.0])
viz.draw_storage(row, row.expand(2, 3), names=["row", "row.expand(2, 3)"])   # stride 0: one cell, read twice""",
    "autograd_graph": """x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x * x
z = y.sum()
viz.draw_graph(z, names={"x": x, "y": y, "z": z})""",
    "inplace_storage": """y = torch.zeros(4)
v = y[1:3]                # same storage, offset 1
v.add_(1)                 # writes into y's memory; the storage's version is now 1
viz.draw_storage(y, v, names=["y", "v = y[1:3]"])""",
    "inplace_stale": """a = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
b = a.sigmoid()           # sigmoid saves its output, b, at version 0
b.mul_(2)                 # version 1: the saved tensor is stale (red), backward would raise
viz.draw_graph(b.sum(), names={"a": a, "b": b})""",
    "inplace_copyslices": """a = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
b = a.clone()
v = b[1:3]
v.mul_(2)                 # b's history becomes CopySlices: the region of v, the op, b's old history
viz.draw_graph(b, names={"a": a, "b": b})""",
    "engine_trace": """x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x * x
z = (y * 3).sum()
trace = viz.trace_backward(z, names={"x": x, "y": y, "z": z})
trace.frame(len(trace) - 1)   # the last step: the gradient reaches x.grad""",
    "backward_step": """a = torch.tensor(2.0, requires_grad=True)
b = torch.tensor(-3.0, requires_grad=True)
trace = viz.trace_backward(a * b + a, names={"a": a, "b": b})
trace.frame(2)            # the third step the engine ran; trace.show() in a notebook shows every frame""",
}


def _import_minitorch():
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    return importlib.import_module("minitorch")


# ---------------------------------------------------------------------------------------------
# collecting the ops


def all_ops() -> list[type]:
    """Every Op subclass reachable from ``minitorch`` (its modules are imported by the package)."""
    _import_minitorch()
    from minitorch.ops.op import Op

    seen: list[type] = []
    stack = list(reversed(Op.__subclasses__()))
    while stack:
        cls = stack.pop()
        if cls in seen:
            continue
        seen.append(cls)
        stack.extend(reversed(cls.__subclasses__()))
    return sorted(seen, key=lambda c: (_module_rank(c.__module__), c.__module__, c.__name__))


def _module_rank(module_name: str) -> int:
    """Core ops first, then linalg, then nn.functional and the rest."""
    for rank, prefix in enumerate(("minitorch.ops.", "minitorch.linalg", "minitorch.nn.functional")):
        if module_name.startswith(prefix):
            return rank
    return 3


def other_nodes() -> list[type]:
    """Graph nodes that are not ops (AccumulateGrad, CopySlices, custom-Function nodes, ...)."""
    _import_minitorch()
    from minitorch.autograd.graph import Node
    from minitorch.ops.op import Op

    seen: list[type] = []
    stack = [Node]
    while stack:
        cls = stack.pop()
        for sub in cls.__subclasses__():
            if sub not in seen and not issubclass(sub, Op):
                seen.append(sub)
                stack.append(sub)
    return sorted((c for c in seen if "_evaluate" in c.__dict__), key=lambda c: (c.__module__, c.__name__))


def _backward_owner(cls: type) -> type:
    return next(klass for klass in cls.__mro__ if "backward" in klass.__dict__)


def _module_tables(module) -> dict[str, dict]:
    """Module-level dicts of ``name -> (kernel, derivative, ...)`` tuples: the derivative tables."""
    tables = {}
    for name, value in vars(module).items():
        if name.isupper() and isinstance(value, dict) and value:
            if all(isinstance(v, tuple) and len(v) >= 2 and callable(v[1]) for v in value.values()):
                tables[name] = value
    return tables


@functools.cache
def _dict_entry_sources(module, table_name: str) -> dict[str, str]:
    """``key -> source text of its value`` for the dict literal assigned to ``table_name``."""
    source = inspect.getsource(module)
    tree = ast.parse(source)
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict):
            if any(isinstance(t, ast.Name) and t.id == table_name for t in node.targets):
                entries = {}
                for key, value in zip(node.value.keys, node.value.values):
                    if isinstance(key, ast.Constant):
                        entries[key.value] = ast.get_source_segment(source, value)
                return entries
    return {}


@functools.cache
def derivative_of(cls: type) -> dict:
    """Where ``cls``'s derivative is written, and its source.

    Returns ``{"kind": "table"|"method"|"none", "source": str, "where": str}``.
    """
    from minitorch.ops.op import Op

    owner = _backward_owner(cls)
    if owner is Op:
        return {"kind": "none", "source": "", "where": ""}
    derivative = cls.__dict__.get("derivative")
    if isinstance(derivative, staticmethod):
        function = derivative.__func__
        module = sys.modules[cls.__module__]
        for table_name, table in _module_tables(module).items():
            for key, entry in table.items():
                if entry[1] is function:
                    text = _dict_entry_sources(module, table_name).get(key)
                    if text:
                        where = f"{table_name}[{key!r}]"
                        return {"kind": "table", "source": f'"{key}": {text},', "where": where, "key": key}
    source = textwrap.dedent(inspect.getsource(owner.__dict__["backward"]))
    where = f"{owner.__name__}.backward" if owner is not cls else "backward"
    return {"kind": "method", "source": source.rstrip(), "where": where}


class _Simplify(ast.NodeTransformer):
    """Strip the bookkeeping around a gradient expression: ``e if self.needs_grad(i) else None`` -> ``e``,
    ``conj_if_complex(z)`` -> ``conj(z)`` (the identity on real tensors)."""

    def visit_IfExp(self, node: ast.IfExp):
        self.generic_visit(node)
        test = node.test
        if (isinstance(node.orelse, ast.Constant) and node.orelse.value is None and isinstance(test, ast.Call)
                and isinstance(test.func, ast.Attribute) and test.func.attr == "needs_grad"):
            return node.body
        return node

    def visit_Call(self, node: ast.Call):
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id == "conj_if_complex" and len(node.args) == 1:
            node.func = ast.Name("conj", ast.Load())
        return node


FORMULA_MAX = 90  # longer expressions read better as the source in the fold below the table


@functools.cache
def formula_of(cls: type) -> str | None:
    """The derivative as one expression per input, read from the code: a derivative table's lambda body
    (``g``: the incoming gradient, ``x``: the input, ``y``: the output), or the returned expression of a
    ``backward`` that is a single ``return`` (after unpacking what it saved). None where the derivative
    is longer than a line of maths; the page then points to the source."""
    info = derivative_of(cls)
    if info["kind"] == "none":
        return None
    if info["kind"] == "table":  # ``"key": (forward, derivative, ...),``: the derivative lambda's body
        entry = ast.parse("{" + info["source"] + "}", mode="eval").body.values[0]
        entry = entry.elts[1] if isinstance(entry, ast.Tuple) and len(entry.elts) > 1 else None
        if not isinstance(entry, ast.Lambda):
            return None
        expressions = [entry.body]
    else:
        tree = ast.parse(info["source"])
        body = [s for s in tree.body[0].body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
        unpacks = body[:-1]
        if not body or not isinstance(body[-1], ast.Return) or body[-1].value is None or len(unpacks) > 1:
            return None
        if unpacks and not (isinstance(unpacks[0], ast.Assign) and "saved" in ast.unparse(unpacks[0].value)):
            return None
        value = _Simplify().visit(body[-1].value)
        expressions = value.elts if isinstance(value, ast.Tuple) else [value]
    text = ", ".join(ast.unparse(e) for e in expressions)
    if len(text) > FORMULA_MAX or "self." in text:
        return None
    return text


def forward_of(cls: type) -> tuple[str, str]:
    """``(kind, text)`` of ``cls``'s forward-mode derivative (its ``jvp``): kind is "written" (a rule beside
    backward, or a shared rule for linear ops and views) or "derived" (from backward; the text says how)."""
    owner = next(k for k in cls.__mro__ if "jvp" in k.__dict__)
    rule = owner.__dict__["jvp"]
    name = getattr(rule, "__name__", "")
    if owner.__name__ == "Op":
        return "derived", "derived from backward: double vjp (`Op.jvp`)"
    if owner.__name__ == "Elementwise":
        return "derived", "derived from backward: diagonal Jacobian, `J t = Jᵀt` (`Elementwise.jvp`)"
    if owner.__name__ == "Unary":
        return "derived", "the table's derivative applied to the tangent (`Unary.jvp`)"
    if owner.__name__ == "ViewOp":
        return "written", "the same view of the tangent (`ViewOp.jvp`)"
    if name == "linear_jvp":
        return "written", "linear: the op on the tangent (`linear_jvp`)"
    if name == "multilinear_jvp" or "multilinear_jvp" in inspect.getsource(rule):
        return "written", f"multilinear: one term per input (`{owner.__name__}.jvp`)"
    return "written", f"`{owner.__name__}.jvp`"


def _grad_fn_name(cls: type) -> str:
    try:
        return cls.__new__(cls).name()
    except Exception:  # a name() that reads forward state: fall back to the default rule
        return cls.__name__ + "Backward0"


def _saves(cls: type) -> str:
    parts = []
    if cls.save_inputs:
        parts.append("inputs " + ", ".join(str(i) for i in cls.save_inputs))
    if cls.save_output:
        parts.append("output")
    if getattr(cls, "saved_when", None):
        parts.append("conditionally: " + ", ".join(f"{i} if {list(js)} need grad" for i, js in cls.saved_when.items()))
    return "; ".join(parts) if parts else "nothing"


def _module_path(module_name: str) -> str:
    """``minitorch/ops/arithmetic.py``: relative to the directory holding the minitorch package."""
    package_parent = Path(sys.modules["minitorch"].__file__).resolve().parents[1]
    return Path(sys.modules[module_name].__file__).resolve().relative_to(package_parent).as_posix()


@functools.cache
def _callers(module_name: str) -> dict[str, list[str]]:
    """``op class name -> public functions of its module that call OpClass.apply``."""
    source = inspect.getsource(sys.modules[module_name])
    found: dict[str, list[str]] = {}
    for node in ast.parse(source).body:
        if not isinstance(node, ast.FunctionDef) or node.name.startswith("_"):
            continue
        for sub in ast.walk(node):
            if (
                isinstance(sub, ast.Attribute)
                and sub.attr == "apply"
                and isinstance(sub.value, ast.Name)
                and node.name not in found.setdefault(sub.value.id, [])
            ):
                found[sub.value.id].append(node.name)
    return found


# ---------------------------------------------------------------------------------------------
# rendering


def _code(source: str, indent: str = "") -> str:
    body = textwrap.indent(source, indent)
    return f"{indent}```python\n{body}\n{indent}```"


def render_op_table() -> str:
    """The generated part of the "every op and its derivative" page, as Markdown."""
    ops = all_ops()
    by_module: dict[str, list[type]] = {}
    for cls in ops:
        by_module.setdefault(cls.__module__, []).append(cls)
    differentiable = [c for c in ops if derivative_of(c)["kind"] != "none"]
    written = [c for c in differentiable if forward_of(c)[0] == "written"]
    lines = [
        f"minitorch defines **{len(ops)}** op classes in **{len(by_module)}** modules; "
        f"**{len(differentiable)}** of them have a derivative. The others have none: their results are "
        "integer or boolean (comparisons, argmax, nonzero, ...), or the public function only uses them when no "
        "input requires grad (`Eigvals`), or they are shared base classes. This page was generated from the "
        "code when the site was built.",
        "",
        f"**{sum(formula_of(c) is not None for c in differentiable)}** derivatives are short enough to show as a "
        "formula, read from the code: the gradient sent to each input, in order, where `grad` or `g` is the "
        "gradient arriving at the op's output, `x` the input and `y` the output (a derivative table's lambda), "
        "or the names the `backward` method unpacked from what it saved. The others link to their source, "
        "folded below each table.",
        "",
        "The **forward (jvp)** column is the forward-mode derivative (`torch.autograd.forward_ad`), which every op "
        f"with a backward has: **{len(written)}** are written beside their backward (or share a rule written "
        "once: a view's tangent is the same view of the input's tangent, a linear op applied to the tangent), the "
        f"other **{len(differentiable) - len(written)}** are derived from backward. Elementwise ops use their "
        "diagonal Jacobian (`J t` is backward's rule applied to `t`); the rest use the double-vjp trick (backward "
        "is linear in its output gradient `u` and written in differentiable ops, so `J t = d/du <vjpᵀ(u), t>`, "
        "one more reverse pass).",
        "",
    ]
    for module_name, classes in by_module.items():
        path = _module_path(module_name)
        callers = _callers(module_name)
        lines += [f"## `{module_name}`", "", f"Source: `{path}`", ""]
        lines += ["| op | grad_fn | saves for backward | derivative | forward (jvp) | called by |",
                  "| --- | --- | --- | --- | --- | --- |"]
        for cls in classes:
            info = derivative_of(cls)
            kind = {"none": "none: never differentiated", "table": f"table `{info['where']}`"}.get(
                info["kind"], f"`{info['where']}`"
            )
            formula = formula_of(cls)
            if formula is not None:
                # HTML code, not a backtick span: a `|` in a table cell's code span would split the cell
                kind = f"<code>{html.escape(formula).replace('|', '&#124;')}</code> ({kind})"
            if cls.array_derivative is True:  # a class flag (Div's is a property: only unrounded division)
                kind += "; runs on arrays"
            names = callers.get(cls.__name__, []) or ([info["key"]] if info["kind"] == "table" else [])
            users = ", ".join(f"`{n}`" for n in names)
            forward = "none" if info["kind"] == "none" else forward_of(cls)[1]
            lines.append(f"| `{cls.__name__}` | `{_grad_fn_name(cls)}` | {_saves(cls)} | {kind} | {forward} | {users} |")
        lines.append("")
        for cls in classes:
            info = derivative_of(cls)
            if info["kind"] == "none":
                continue
            title = f"{cls.__name__}: {info['where']}"
            lines += [f'??? note "{title}"', "", _code(info["source"], "    "), ""]
    nodes = other_nodes()
    if nodes:
        lines += [
            "## Graph nodes that are not ops",
            "",
            "These nodes are made by the engine, by in-place ops on views and by custom `Function`s; "
            "their `_evaluate` is what the engine calls.",
            "",
        ]
        for cls in nodes:
            source = textwrap.dedent(inspect.getsource(cls.__dict__["_evaluate"])).rstrip()
            path = _module_path(cls.__module__)
            lines += [f'??? note "{cls.__name__} ({path})"', "", _code(source, "    "), ""]
    return "\n".join(lines)


def render_functions(module_name: str) -> str:
    module = importlib.import_module(module_name)
    names = getattr(module, "__all__", None)
    if names is None:  # a package that star-imports its submodules (nn.functional): its own public functions
        names = [
            name
            for name, value in vars(module).items()
            if not name.startswith("_") and inspect.isfunction(value) and value.__module__.startswith(module_name)
        ]
    if not names:
        raise ValueError(f"minitorch:functions {module_name}: no public functions found")
    return ", ".join(f"`{name}`" for name in sorted(names))


def render_source(dotted: str) -> str:
    module_name, _, attr = dotted.rpartition(".")
    obj = getattr(importlib.import_module(module_name), attr)
    return _code(textwrap.dedent(inspect.getsource(obj)).rstrip())


def render_tensor_methods() -> str:
    """Every public ``Tensor`` attribute, with the module that defines it and its docstring's first line.

    Most methods are op functions put on the class by ``minitorch/_tensor_methods.py`` (one table, installed
    once), which static docstring collection cannot see; this table lists them from the live class.
    """
    from minitorch.tensor import Tensor

    lines = ["| method | defined in | what |", "| --- | --- | --- |"]
    for name in sorted(dir(Tensor)):
        if name.startswith("_"):
            continue
        value = inspect.getattr_static(Tensor, name)
        function = value.fget if isinstance(value, property) else getattr(value, "__func__", value)
        module = getattr(function, "__module__", None) or "minitorch.tensor"
        doc = (inspect.getdoc(function) or "").strip().split("\n\n")[0].replace("\n", " ").replace("|", "\\|")
        doc = re.sub(r":\w+:`([^`]+)`", r"`\1`", doc)  # reST roles (:meth:`Tensor.abs`) as code
        kind = " (property)" if isinstance(value, property) else ""
        lines.append(f"| `{name}`{kind} | `{module}` | {doc} |")
    return "\n".join(lines)


def render_drawing(name: str) -> str:
    """The code of ``DRAWINGS[name]`` as a code block, followed by the SVG it draws now."""
    if name not in DRAWINGS:
        raise ValueError(f"minitorch:drawing {name}: unknown drawing; known: {', '.join(DRAWINGS)}")
    torch = _import_minitorch()
    viz = importlib.import_module("minitorch.viz")
    *body, last = DRAWINGS[name].splitlines()
    namespace = {"torch": torch, "viz": viz}
    exec("\n".join(body), namespace)  # the docs' own example code, not input from a page
    svg = eval(last, namespace).svg
    svg = re.sub(r"<\?xml[^>]*>\s*", "", svg)
    # one line, no blank lines: Markdown keeps an HTML block intact only while no blank line interrupts it
    svg = " ".join(line.strip() for line in svg.splitlines() if line.strip())
    return f'{_code(DRAWINGS[name])}\n\n<div class="minitorch-drawing">{svg}</div>\n'


def expand(markdown: str) -> str:
    """Replace every ``<!-- minitorch:... -->`` directive in ``markdown`` by its generated content."""
    _import_minitorch()

    def replace(match: re.Match) -> str:
        kind, arg = match["kind"], match["arg"]
        if kind == "op-table":
            return render_op_table()
        if kind == "functions":
            return render_functions(arg)
        if kind == "tensor-methods":
            return render_tensor_methods()
        if kind == "source":
            return render_source(arg)
        if kind == "drawing":
            return render_drawing(arg)
        raise ValueError(f"unknown docs directive <!-- minitorch:{kind} {arg} -->")

    markdown = IF_PAGE.sub(lambda m: m["body"] if (ROOT / "docs" / m["page"]).is_file() else "", markdown)
    return DIRECTIVE.sub(replace, markdown)


# ---------------------------------------------------------------------------------------------
# the mkdocs event


def on_page_markdown(markdown: str, page, config, files) -> str:  # noqa: ARG001 (mkdocs' signature)
    return expand(markdown)


def _insert_after(nav: list, anchor: str, entry: dict) -> bool:
    for i, item in enumerate(nav):
        value = next(iter(item.values())) if isinstance(item, dict) else item
        if value == anchor:
            nav.insert(i + 1, entry)
            return True
        if isinstance(value, list) and _insert_after(value, anchor, entry):
            return True
    return False


def on_config(config):
    """Add the optional pages that exist now to the nav."""
    for page, (title, after) in OPTIONAL_PAGES.items():
        if (Path(config["docs_dir"]) / page).is_file() and config["nav"] is not None:
            _insert_after(config["nav"], after, {title: page})
    return config


def on_pre_build(config) -> None:  # noqa: ARG001 (mkdocs' signature)
    """``mkdocs serve`` rebuilds in one process: forget sources parsed for the previous build."""
    for cached in (_dict_entry_sources, derivative_of, formula_of, _callers):
        cached.cache_clear()
