"""The documentation site: its generated pages (docs/hooks/optable.py) and a strict mkdocs build."""

import html
import importlib.util
import inspect
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import minitorch as torch
from minitorch.ops.arithmetic import Mul
from minitorch.ops.op import Op

ROOT = Path(__file__).resolve().parents[1]


def _load_hook():
    spec = importlib.util.spec_from_file_location("optable", ROOT / "docs" / "hooks" / "optable.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


optable = _load_hook()


def _all_op_classes():
    seen, stack = set(), [Op]
    while stack:
        for sub in stack.pop().__subclasses__():
            if sub not in seen:
                seen.add(sub)
                stack.append(sub)
    return seen


def test_op_table_lists_every_op_with_its_grad_fn_name():
    table = optable.render_op_table()
    classes = _all_op_classes()
    assert len(classes) > 100
    for cls in classes:
        assert f"| `{cls.__name__}` | `{optable._grad_fn_name(cls)}` |" in table, cls
    assert f"**{len(classes)}** op classes" in table


def test_table_driven_derivatives_come_from_their_table_entry():
    exp = optable.derivative_of(type(torch.tensor([1.0], requires_grad=True).exp().grad_fn))
    assert exp["kind"] == "table" and exp["where"] == "UNARY['exp']"
    assert exp["source"].startswith('"exp": (') and "lambda g, x, y: g * y" in exp["source"]
    gelu = optable.derivative_of(type(torch.nn.functional.gelu(torch.ones(1, requires_grad=True)).grad_fn))
    assert gelu["kind"] == "table" and gelu["where"] == "ACTIVATIONS['gelu']"
    assert "_gelu_derivative" in gelu["source"]


def test_method_derivatives_are_the_current_backward_source():
    mul = optable.derivative_of(Mul)
    assert mul["kind"] == "method"
    assert mul["source"] == textwrap.dedent(inspect.getsource(Mul.backward)).rstrip()
    assert mul["source"].startswith("def backward") and "saved_tensors" in mul["source"]
    table = optable.render_op_table()
    assert mul["source"].splitlines()[1] in table
    assert "| `Mul` | `MulBackward0` |" in table and "`mul`" in table


def test_ops_without_backward_are_marked_not_differentiable():
    eq = next(cls for cls in _all_op_classes() if cls.__name__ == "Eq")
    assert optable.derivative_of(eq)["kind"] == "none"
    assert "| `Eq` | `EqBackward0` | nothing | none: never differentiated |" in optable.render_op_table()


def test_directives_expand_to_the_current_code():
    page = (
        "intro\n<!-- minitorch:source minitorch.autograd.engine._discover -->\n"
        "<!-- minitorch:functions minitorch.ops.views -->\nend"
    )
    out = optable.expand(page)
    from minitorch.autograd.engine import _discover

    assert inspect.getsource(_discover).strip() in out
    assert "`as_strided`" in out and "`view`" in out
    assert "minitorch:" not in out
    assert out.startswith("intro\n```python") and out.endswith("\nend")


def test_tensor_method_table_covers_installed_ops():
    table = optable.render_tensor_methods()
    assert "| `add` | `minitorch.ops.arithmetic` |" in table
    assert "| `add_` | `minitorch.ops.inplace` |" in table
    assert ":meth:" not in table


def test_unknown_directive_or_name_fails_the_build():
    with pytest.raises(ValueError, match="unknown docs directive"):
        optable.expand("<!-- minitorch:no-such-thing x -->")
    with pytest.raises(AttributeError):
        optable.expand("<!-- minitorch:source minitorch.autograd.engine.no_such_function -->")


def test_every_directive_in_docs_expands():
    for page in sorted((ROOT / "docs").rglob("*.md")):
        text = page.read_text(encoding="utf-8")
        if "minitorch:" in text:
            assert "<!-- minitorch:" not in optable.expand(text), page


def test_site_builds_strict_without_warnings(tmp_path):
    for name in ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python"):
        if importlib.util.find_spec(name.split(".")[0]) is None:
            pytest.skip(f"{name} is not installed (pip install -e '.[docs]')")
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    log = result.stdout + result.stderr
    assert result.returncode == 0, log
    assert "WARNING" not in log, log
    page = (tmp_path / "site" / "derivatives" / "index.html").read_text(encoding="utf-8")
    derivatives = html.unescape(re.sub(r"<[^>]+>", "", page))  # the text, without highlighting spans
    assert "MulBackward0" in derivatives and "ExpBackward0" in derivatives and "lambda g, x, y: g * y" in derivatives


def test_if_page_blocks_follow_the_pages_that_exist():
    page = (
        "a\n<!-- minitorch:if-page index.md -->\nkept\n<!-- minitorch:end-if -->\n"
        "<!-- minitorch:if-page no-such-page.md -->\ndropped\n<!-- minitorch:end-if -->\nb"
    )
    assert optable.expand(page) == "a\nkept\nb"


def test_derivative_column_shows_formulas_read_from_the_code():
    def grad_fn_type(t):
        return type(t.grad_fn)

    x = torch.tensor([0.5], requires_grad=True)
    assert optable.formula_of(grad_fn_type(x.exp())) == "g * y"
    assert optable.formula_of(grad_fn_type(x.tanh())) == "g * (1 - y * y)"
    assert optable.formula_of(Mul) == "grad * conj(b), grad * conj(a)"  # needs_grad bookkeeping stripped
    table = optable.render_op_table()
    assert "| `Exp` | `ExpBackward0` | output | <code>g * y</code> (table `UNARY['exp']`)" in table
    # a derivative longer than a line of maths keeps pointing at its source
    long = [cls for cls in _all_op_classes() if optable.derivative_of(cls)["kind"] == "method"
            and optable.formula_of(cls) is None]
    assert long and all(f"`{optable.derivative_of(cls)['where']}`" in table for cls in long[:5])
