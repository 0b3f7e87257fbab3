"""``Proxy``: the stand-in value symbolic tracing passes through a program. Every operation on a Proxy (an
operator, a method, an attribute, indexing, or a minitorch function it is given to) records a Node instead of
computing."""

from __future__ import annotations

import builtins
import operator

from .graph import Graph
from .node import Node, map_aggregate


class TraceError(ValueError):
    pass


class TracerBase:
    """Turns operations on Proxies into Nodes of ``self.graph``."""

    graph: Graph

    def create_node(self, kind: str, target, args: tuple, kwargs: dict, name: str | None = None,
                    type_expr=None) -> Node:
        return self.graph.create_node(kind, target, args, kwargs, name, type_expr)

    def create_arg(self, a):
        """An argument as the graph stores it: Proxies become their Nodes; containers are mapped."""
        def convert(x):
            if isinstance(x, Proxy):
                return x.node
            return x

        return map_aggregate(a, convert)

    def create_proxy(self, kind: str, target, args: tuple, kwargs: dict, name: str | None = None,
                     type_expr=None) -> Proxy:
        node = self.create_node(kind, target, self.create_arg(tuple(args)), self.create_arg(dict(kwargs)), name,
                                type_expr)
        return self.proxy(node)

    def proxy(self, node: Node) -> Proxy:
        return Proxy(node, self)


class GraphAppendingTracer(TracerBase):
    """A tracer that appends to an existing graph (``Proxy(node, GraphAppendingTracer(graph))``)."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph


class Proxy:
    """Wraps a Node of the graph being traced; ``proxy.node`` is that Node."""

    def __init__(self, node: Node, tracer=None) -> None:
        if tracer is None:
            tracer = GraphAppendingTracer(node.graph)
        self.node, self.tracer = node, tracer

    def __repr__(self) -> str:
        return f"Proxy({self.node.name})"

    def __getattr__(self, name: str) -> Attribute:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return Attribute(self, name)

    def __call__(self, *args, **kwargs) -> Proxy:
        return self.tracer.create_proxy("call_method", "__call__", (self,) + args, kwargs)

    def __getitem__(self, key) -> Proxy:
        return self.tracer.create_proxy("call_function", operator.getitem, (self, key), {})

    def __iter__(self):
        raise TraceError("Proxy object cannot be iterated. This can be attempted when the Proxy is used in a loop "
                         "or as a *args or **kwargs function argument. See the torch.fx docs on pytorch.org for a "
                         "more detailed explanation of what types of control flow can be traced, and check out "
                         "the Proxy docstring for help troubleshooting Proxy iteration errors")

    def __bool__(self) -> bool:
        raise TraceError("symbolically traced variables cannot be used as inputs to control flow")

    def __len__(self) -> int:
        raise RuntimeError("'len' is not supported in symbolic tracing by default. If you want this call to be "
                           "recorded, please call torch.fx.wrap('len') at module scope")

    def keys(self):
        return self.tracer.create_proxy("call_method", "keys", (self,), {})


class Attribute(Proxy):
    """``proxy.name``: a ``getattr`` node, made only if the attribute is used as a value (``x.shape``);
    calling it (``x.relu()``) records a ``call_method`` node instead."""

    def __init__(self, root: Proxy, attr: str) -> None:
        self.root, self.attr, self.tracer = root, attr, root.tracer
        self._node: Node | None = None

    @property
    def node(self) -> Node:  # type: ignore[override]
        if self._node is None:
            self._node = self.tracer.create_proxy("call_function", builtins.getattr, (self.root, self.attr), {}).node
        return self._node

    def __call__(self, *args, **kwargs) -> Proxy:
        return self.tracer.create_proxy("call_method", self.attr, (self.root,) + args, kwargs)


def _binary(op, reflected: bool = False):
    def method(self, other):
        args = (other, self) if reflected else (self, other)
        return self.tracer.create_proxy("call_function", op, args, {})

    return method


def _unary(op):
    def method(self):
        return self.tracer.create_proxy("call_function", op, (self,), {})

    return method


for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and_", "or_", "xor", "lshift",
              "rshift"):
    _dunder = _name.rstrip("_")
    setattr(Proxy, f"__{_dunder}__", _binary(getattr(operator, _name)))
    setattr(Proxy, f"__r{_dunder}__", _binary(getattr(operator, _name), reflected=True))
for _name in ("eq", "ne", "lt", "le", "gt", "ge"):
    setattr(Proxy, f"__{_name}__", _binary(getattr(operator, _name)))
for _name in ("neg", "pos", "invert", "abs"):
    setattr(Proxy, f"__{_name}__", _unary(getattr(operator, _name)))
Proxy.__hash__ = object.__hash__  # __eq__ records a node; proxies still go in sets and dicts by identity
