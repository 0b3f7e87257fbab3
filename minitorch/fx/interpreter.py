"""``Interpreter``: run a GraphModule node by node (override a method to change how one kind of node runs)."""

from __future__ import annotations

from typing import Any

from .node import Node, map_arg


class Interpreter:
    def __init__(self, module, garbage_collect_values: bool = True, graph=None) -> None:
        self.module = module
        self.graph = graph if graph is not None else module.graph
        self.env: dict[Node, Any] = {}

    def run(self, *args, initial_env: dict | None = None, enable_io_processing: bool = True):
        self.env = dict(initial_env or {})
        self.args_iter = iter(args)
        for node in self.graph.nodes:
            if node in self.env:
                continue
            self.env[node] = self.run_node(node)
            if node.op == "output":
                return self.env[node]
        return None

    def run_node(self, n: Node):
        args = map_arg(n.args, lambda a: self.env[a])
        kwargs = map_arg(n.kwargs, lambda a: self.env[a])
        return getattr(self, n.op)(n.target, args, kwargs)

    def placeholder(self, target, args: tuple, kwargs: dict):
        try:
            return next(self.args_iter)
        except StopIteration as missing:
            if args:
                return args[0]
            raise RuntimeError(f"Expected positional argument for parameter {target}, but one was not passed "
                               "in!") from missing

    def get_attr(self, target: str, args: tuple, kwargs: dict):
        return self.fetch_attr(target)

    def call_function(self, target, args: tuple, kwargs: dict):
        return target(*args, **kwargs)

    def call_method(self, target: str, args: tuple, kwargs: dict):
        self_obj, *rest = args
        return getattr(self_obj, target)(*rest, **kwargs)

    def call_module(self, target: str, args: tuple, kwargs: dict):
        return self.fetch_attr(target)(*args, **kwargs)

    def output(self, target, args: tuple, kwargs: dict):
        return args[0]

    def fetch_attr(self, target: str):
        value = self.module
        for part in target.split("."):
            value = getattr(value, part)
        return value
