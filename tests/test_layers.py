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


# the layers, bottom to top (DESIGN.md): a module imports only from its own layer or the ones below --------------
LAYERS = [
    ("dtypes, devices, layouts and grad-mode flags", ["_dtype", "_device", "layout", "memory_format", "_grad_state",
                                                      "_trace_state", "_dispatch_modes"]),
    ("backends", ["_backends"]),
    ("storage", ["storage"]),
    ("geometry", ["_geometry"]),
    ("tensor", ["tensor", "_names"]),
    ("creation and random (factories need no op)", ["creation", "random"]),
    ("autograd", ["autograd"]),
    ("ops", ["ops", "return_types", "_autocast_state"]),
    # everything else: nn, optim, sparse, quantization, linalg, utils, viz, testing, ... and the method table
]
# modules at PyTorch's paths inside a lower package that belong to the top (they use ops; nothing below imports them)
TOP_LEVEL_PATHS = ("minitorch.autograd.profiler", "minitorch.autograd.functional")
# optional heavy dependencies may be imported where they are first needed (a function body), nothing else may
OPTIONAL_DEPENDENCIES = {"cupy", "cupyx", "matplotlib", "threadpoolctl", "graphviz", "IPython", "tqdm", "scipy", "mpi4py",
                         "safetensors", "ipywidgets", "onnx", "onnxruntime"}


def _layer(module: str) -> int:
    if module.startswith(TOP_LEVEL_PATHS):
        return len(LAYERS)
    parts = module.split(".")[1:]
    for i, (_, prefixes) in enumerate(LAYERS):
        if parts and parts[0] in prefixes:
            return i
    return len(LAYERS)


def _module_name(name: str) -> str:
    name = name.removesuffix(".py").replace("/", ".")
    return name.removesuffix(".__init__")


def _imports():
    """(importer, imported module, line, inside a function) for every import of the package's source."""
    modules = {_module_name(name): (name, tree) for name, tree in _modules()}
    found = []
    for module, (name, tree) in modules.items():
        package = module if name.endswith("__init__.py") else module.rpartition(".")[0]
        functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        nested = {id(n) for f in functions for n in ast.walk(f) if isinstance(n, (ast.Import, ast.ImportFrom))}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = base[: len(base) - node.level + 1]
                    prefix = ".".join(base + ([node.module] if node.module else []))
                else:
                    prefix = node.module
                targets = [f"{prefix}.{a.name}" if f"{prefix}.{a.name}" in modules else prefix for a in node.names]
            else:
                continue
            for target in targets:
                found.append((module, target, node.lineno, id(node) in nested))
    return modules, found


def test_no_function_level_imports():
    """Imports sit at the top of a module, where a reader sees what it depends on; only optional heavy
    dependencies (CuPy, matplotlib, ...) are imported where first used."""
    _, imports = _imports()
    lazy = [f"{m}:{line} imports {t}" for m, t, line, nested in imports
            if nested and t.split(".")[0] not in OPTIONAL_DEPENDENCIES]
    assert not lazy, "\n".join(lazy)


def test_imports_point_down():
    """No module imports from a layer above its own (LAYERS, bottom to top)."""
    _, imports = _imports()
    upward = [f"{m}:{line} ({LAYERS[_layer(m)][0]}) imports {t}" for m, t, line, _ in imports
              if t.startswith("minitorch") and _layer(t) > _layer(m)]
    assert not upward, "\n".join(upward)


def test_no_import_cycles():
    """The module import graph has no cycle (a package's __init__ counts as a module that imports what it
    re-exports). Found by Tarjan's strongly connected components, iteratively."""
    modules, imports = _imports()
    graph: dict[str, set] = {m: set() for m in modules}
    for m, t, _, _ in imports:
        if t in modules and t != m:
            graph[m].add(t)
    cycles = [sorted(c) for c in _strongly_connected(graph) if len(c) > 1]
    assert not cycles, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def _strongly_connected(graph: dict) -> list:
    index, low, on_stack, stack, result, counter = {}, {}, set(), [], [], [0]
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    result.append(component)
    return result


def test_the_layer_checks_catch_what_they_should():
    """The checks are not vacuous: the graph is found, and a cycle is detected when one exists."""
    modules, imports = _imports()
    assert "minitorch.tensor" in modules and len(imports) > 300
    assert any(m == "minitorch.ops.op" and t == "minitorch.tensor" for m, t, _, _ in imports)
    assert [sorted(c) for c in _strongly_connected({"a": {"b"}, "b": {"a"}, "c": set()}) if len(c) > 1] == [["a", "b"]]
    assert _layer("minitorch.ops.views") > _layer("minitorch.autograd.engine") > _layer("minitorch.tensor")
