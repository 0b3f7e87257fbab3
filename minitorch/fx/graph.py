"""``Graph``: the ordered list of Nodes symbolic tracing records, which you print, edit and turn back into
Python (``python_code``) for a ``GraphModule`` to run."""

from __future__ import annotations

import builtins
import contextlib
import keyword
import operator
import re
from typing import Any

import minitorch

from .node import _INFIX, Argument, Node, Target, _public_path, map_arg, target_name


def _snake(name: str) -> str:
    name = re.sub(r"[^0-9a-zA-Z_]+", "_", name)
    name = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()
    if not name or name[0].isdigit():
        name = "_" + name
    return name


class Graph:
    """Nodes in execution order. ``inserting_before/after(node)`` sets where new nodes go."""

    def __init__(self, owning_module=None, tracer_cls=None, tracer_extras=None) -> None:
        self._nodes: list[Node] = []
        self._used_names: dict[str, int] = {}
        self._insert_at: tuple[Node | None, bool] = (None, True)  # (anchor, after it); None: at the end
        self.owning_module = owning_module

    @property
    def nodes(self) -> list[Node]:
        """The nodes in order (a copy: safe to iterate while erasing)."""
        return list(self._nodes)

    # naming ----------------------------------------------------------------------------------------------------
    def _unique_name(self, candidate: str) -> str:
        base = _snake(candidate)
        illegal = keyword.iskeyword(base) or hasattr(builtins, base) or base in ("torch", "self")
        count = self._used_names.get(base)
        if count is None and not illegal:
            self._used_names[base] = 0
            return base
        count = (count or 0) + 1
        while f"{base}_{count}" in self._used_names:
            count += 1
        self._used_names[base] = count
        self._used_names[f"{base}_{count}"] = 0
        return f"{base}_{count}"

    @staticmethod
    def _candidate(op: str, target: Target) -> str:
        if isinstance(target, str):
            return target.replace(".", "_")
        return getattr(target, "__name__", "node")

    # building --------------------------------------------------------------------------------------------------
    def create_node(self, op: str, target: Target, args: tuple | None = None, kwargs: dict | None = None,
                    name: str | None = None, type_expr: Any = None) -> Node:
        node = Node(self, self._unique_name(name or self._candidate(op, target)), op, target, args or (),
                    kwargs or {}, type_expr)
        anchor, after = self._insert_at
        if anchor is None:
            self._nodes.append(node)
        else:
            index = self._nodes.index(anchor) + (1 if after else 0)
            self._nodes.insert(index, node)
            if after:
                self._insert_at = (node, True)  # keep appending after the newest
        return node

    def placeholder(self, name: str, type_expr: Any = None, default_value: Any = None) -> Node:
        return self.create_node("placeholder", name, (default_value,) if default_value is not None else (),
                                name=name, type_expr=type_expr)

    def get_attr(self, qualified_name: str, type_expr: Any = None) -> Node:
        return self.create_node("get_attr", qualified_name, type_expr=type_expr)

    def call_module(self, module_name: str, args: tuple | None = None, kwargs: dict | None = None,
                    type_expr: Any = None) -> Node:
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    def call_method(self, method_name: str, args: tuple | None = None, kwargs: dict | None = None,
                    type_expr: Any = None) -> Node:
        return self.create_node("call_method", method_name, args, kwargs, type_expr=type_expr)

    def call_function(self, the_function, args: tuple | None = None, kwargs: dict | None = None,
                      type_expr: Any = None) -> Node:
        return self.create_node("call_function", the_function, args, kwargs, type_expr=type_expr)

    def output(self, result: Argument, type_expr: Any = None) -> Node:
        return self.create_node("output", "output", (result,), name="output", type_expr=type_expr)

    def node_copy(self, node: Node, arg_transform=lambda n: n) -> Node:
        """A copy of ``node`` (from any graph) in this one, its Node arguments mapped by ``arg_transform``."""
        copy = self.create_node(node.op, node.target, map_arg(node.args, arg_transform),
                                map_arg(node.kwargs, arg_transform), name=node.name, type_expr=node.type)
        copy.meta = dict(node.meta)
        return copy

    @contextlib.contextmanager
    def inserting_before(self, n: Node | None = None):
        previous = self._insert_at
        self._insert_at = (n, False) if n is not None else (self._nodes[0] if self._nodes else None, False)
        try:
            yield
        finally:
            self._insert_at = previous

    @contextlib.contextmanager
    def inserting_after(self, n: Node | None = None):
        previous = self._insert_at
        self._insert_at = (n, True) if n is not None else (None, True)
        try:
            yield
        finally:
            self._insert_at = previous

    # editing ---------------------------------------------------------------------------------------------------
    def erase_node(self, to_erase: Node) -> None:
        if to_erase.users:
            raise RuntimeError(f"Tried to erase Node {to_erase} but it still had {len(to_erase.users)} users in "
                               f"the graph: {to_erase.users}!")
        if to_erase.graph is not self:
            raise RuntimeError(f"Attempting to remove {to_erase} from wrong graph!")
        to_erase._update_args_kwargs((), {})
        self._nodes.remove(to_erase)

    def _neighbour(self, node: Node, step: int) -> Node | None:
        index = self._nodes.index(node) + step
        return self._nodes[index] if 0 <= index < len(self._nodes) else None

    def _move(self, x: Node, anchor: Node, after: bool) -> None:
        self._nodes.remove(x)
        self._nodes.insert(self._nodes.index(anchor) + (1 if after else 0), x)

    def eliminate_dead_code(self) -> bool:
        """Erase nodes nobody uses (calls and attribute reads; placeholders and output stay). True if any went."""
        changed = False
        for node in reversed(self._nodes):
            if node.op in ("call_function", "call_method", "call_module", "get_attr") and not node.users:
                self.erase_node(node)
                changed = True
        return changed

    def lint(self) -> None:
        """Check that every node's inputs come before it and belong to this graph."""
        seen: set = set()
        for node in self._nodes:
            for arg in node.all_input_nodes:
                if arg.graph is not self:
                    raise RuntimeError(f"Argument '{arg}' of Node '{node}' does not belong to this Graph")
                if arg not in seen:
                    raise RuntimeError(f"Argument '{arg}' of Node '{node}' was used before it has been defined!")
            seen.add(node)

    # printing and code -----------------------------------------------------------------------------------------
    def __str__(self) -> str:
        placeholders = ", ".join(n.name for n in self._nodes if n.op == "placeholder")
        del placeholders
        lines = ["graph():"]
        lines += [f"    {n.format_node()}" for n in self._nodes]
        return "\n".join(lines)

    def print_tabular(self) -> None:
        """Print one row per node: opcode, name, target, args, kwargs."""
        header = ("opcode", "name", "target", "args", "kwargs")
        rows = [(n.op, n.name, _target_text(n), str(n.args), str(n.kwargs)) for n in self._nodes]
        widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]
        print("  ".join(h.ljust(w) for h, w in zip(header, widths)))
        print("  ".join("-" * w for w in widths))
        for row in rows:
            print("  ".join(c.ljust(w) for c, w in zip(row, widths)))

    def python_code(self, root_module: str = "self") -> PythonCode:
        """The ``forward`` this graph computes, as Python source, and the globals it needs."""
        globals_: dict[str, Any] = {"torch": minitorch, "operator": operator}
        body, params = [], []
        for node in self._nodes:
            kwargs = [f"{k} = {_source(v)}" for k, v in node.kwargs.items()]
            call = ", ".join(_source_items(node.args) + kwargs)
            if node.op == "placeholder":
                params.append(node.name if not node.args else f"{node.name} = {_source(node.args[0])}")
            elif node.op == "get_attr":
                body.append(f"{node.name} = {root_module}.{_attr_path(node.target)}")
            elif node.op == "call_module":
                body.append(f"{node.name} = {root_module}.{_attr_path(node.target)}({call})")
            elif node.op == "call_method":
                receiver, rest = _source(node.args[0]), _source_items(node.args[1:]) + kwargs
                body.append(f"{node.name} = {receiver}.{node.target}({', '.join(rest)})")
            elif node.op == "call_function":
                body.append(f"{node.name} = {_call_source(node, call, globals_)}")
            elif node.op == "output":
                body.append(f"return {_source(node.args[0])}")
        signature = ", ".join([root_module] + params)
        src = f"\n\n\ndef forward({signature}):\n" + "".join(f"    {line}\n" for line in body or ["pass"])
        return PythonCode(src, globals_)


class PythonCode:
    def __init__(self, src: str, globals: dict) -> None:
        self.src, self.globals = src, globals


def _attr_path(target: str) -> str:
    """A dotted module path as Python attribute access (``layers.0`` becomes ``layers._modules['0']``)."""
    return "".join(f".{p}" if p.isidentifier() else f"._modules[{p!r}]" for p in target.split("."))[1:]


def _target_text(node: Node) -> str:
    return target_name(node.target)


def _source(arg: Argument) -> str:
    if isinstance(arg, Node):
        return arg.name
    if isinstance(arg, tuple):
        items = _source_items(arg)
        return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"
    if isinstance(arg, list):
        return "[" + ", ".join(_source_items(arg)) + "]"
    if isinstance(arg, dict):
        return "{" + ", ".join(f"{k!r}: {_source(v)}" for k, v in arg.items()) + "}"
    if isinstance(arg, slice):
        return f"slice({_source(arg.start)}, {_source(arg.stop)}, {_source(arg.step)})"
    if isinstance(arg, minitorch.dtype):
        return f"torch.{arg.name}"
    if isinstance(arg, minitorch.device):
        return f"torch.device({str(arg)!r})"
    if arg is Ellipsis:
        return "..."
    return repr(arg)


def _source_items(args) -> list[str]:
    return [_source(a) for a in args]


def _call_source(node: Node, call: str, globals_: dict) -> str:
    target = node.target
    if target in _INFIX and len(node.args) == 2 and not node.kwargs:
        return f"{_source(node.args[0])} {_INFIX[target]} {_source(node.args[1])}"
    if target is operator.getitem and not node.kwargs:
        return f"{_source(node.args[0])}[{_source(node.args[1])}]"
    if target is builtins.getattr and not node.kwargs:
        return f"{_source(node.args[0])}.{node.args[1]}"
    module = getattr(target, "__module__", "") or ""
    if module.startswith("minitorch"):
        path = _public_path(target)
        if path.startswith("torch.") and _resolves(path, target):
            return f"{path}({call})"
    if module in ("_operator", "operator"):
        return f"operator.{target.__name__}({call})"
    # named after its module too (as PyTorch does), so a node named after the function cannot shadow it
    name = re.sub(r"[^0-9a-zA-Z_]", "_", f"{module}_{getattr(target, '__name__', 'fn')}")
    key, i = name, 0
    while key in globals_ and globals_[key] is not target:
        i += 1
        key = f"{name}_{i}"
    globals_[key] = target
    return f"{key}({call})"


def _resolves(path: str, target) -> bool:
    value: Any = minitorch
    for part in path.split(".")[1:]:
        value = getattr(value, part, None)
    return value is target
