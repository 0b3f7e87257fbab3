"""The shape of the package (DESIGN.md, "The layers"): rules a reader relies on, checked on the source."""

from __future__ import annotations

import ast
from pathlib import Path

import minitorch

PACKAGE = Path(minitorch.__file__).parent
_TENSOR_CLASSES = {"Tensor", "SparseTensor", "QTensor"}


def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        yield path.relative_to(PACKAGE.parent).as_posix(), ast.parse(path.read_text())


def test_tensor_methods_come_from_one_table():
    """Only minitorch/_tensor_methods.py puts methods on Tensor (``Tensor.x = ...`` or ``setattr(Tensor, ...)``
    anywhere else fails): a reader finds ``__mul__`` by opening that one file."""
    offenders = []
    for name, tree in _modules():
        if name == "minitorch/_tensor_methods.py":
            continue
        for node in ast.walk(tree):
            targets = node.targets if isinstance(node, ast.Assign) else []
            for target in targets:
                for t in target.elts if isinstance(target, ast.Tuple) else [target]:
                    if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id in _TENSOR_CLASSES:
                        offenders.append(f"{name}:{node.lineno} {t.value.id}.{t.attr} = ...")
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr"
                    and node.args and isinstance(node.args[0], ast.Name) and node.args[0].id in _TENSOR_CLASSES):
                offenders.append(f"{name}:{node.lineno} setattr({node.args[0].id}, ...)")
    assert not offenders, "add these to the table in minitorch/_tensor_methods.py:\n" + "\n".join(offenders)


def test_the_table_is_what_tensor_has():
    """Every entry of the table is installed (and the operators are the table's functions)."""
    from minitorch._tensor_methods import METHODS

    for name, function in METHODS.items():
        installed = minitorch.Tensor.__dict__[name]  # x.sum(axis=0): numpy's keyword names wrap a method
        assert installed is function or installed.__wrapped__ is function, name
    assert len(METHODS) > 350
