"""``Node``: one operation of an fx ``Graph`` (PyTorch's six kinds: placeholder, get_attr, call_function,
call_method, call_module, output), with its arguments (other Nodes or constants) and its users."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import minitorch

from ..nn import functional

_OPS = ("placeholder", "get_attr", "call_function", "call_method", "call_module", "output", "root")

Target = Any  # a str (method, module path, attribute path, placeholder name) or a callable
Argument = Any


def map_aggregate(a: Argument, fn: Callable[[Argument], Argument]) -> Argument:
    """``fn`` applied to every leaf of the nested tuples, lists, dicts and slices in ``a``."""
    if isinstance(a, tuple):
        mapped = tuple(map_aggregate(x, fn) for x in a)
        return type(a)(*mapped) if hasattr(a, "_fields") else mapped
    if isinstance(a, list):
        return [map_aggregate(x, fn) for x in a]
    if isinstance(a, dict):
        return {k: map_aggregate(v, fn) for k, v in a.items()}
    if isinstance(a, slice):
        return slice(map_aggregate(a.start, fn), map_aggregate(a.stop, fn), map_aggregate(a.step, fn))
    return fn(a)


def map_arg(a: Argument, fn: Callable[[Node], Argument]) -> Argument:
    """``fn`` applied to every Node inside ``a`` (other values kept)."""
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)


_INFIX = {operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/", operator.floordiv: "//",
          operator.mod: "%", operator.pow: "**", operator.matmul: "@", operator.and_: "&", operator.or_: "|",
          operator.xor: "^", operator.lshift: "<<", operator.rshift: ">>", operator.eq: "==", operator.ne: "!=",
          operator.lt: "<", operator.le: "<=", operator.gt: ">", operator.ge: ">="}


def target_name(target: Target) -> str:
    """How a target prints: a str as is, ``operator.add`` as ``<built-in function add>``, a minitorch
    function as ``torch.relu`` (the name a program calls it by)."""
    if isinstance(target, str):
        return target
    module = getattr(target, "__module__", None) or ""
    name = getattr(target, "__qualname__", getattr(target, "__name__", repr(target)))
    if module in ("_operator", "operator"):
        return f"operator.{name}"
    if module == "builtins":
        return f"builtins.{name}"
    if module.startswith("minitorch"):
        return _public_path(target)
    return f"{module}.{name}"


def _public_path(target) -> str:
    """``torch.relu`` / ``torch.nn.functional.relu`` for minitorch functions exported there."""
    name = target.__name__
    if getattr(minitorch, name, None) is target:
        return f"torch.{name}"
    if getattr(functional, name, None) is target:
        return f"torch.nn.functional.{name}"
    return f"{target.__module__.replace('minitorch', 'torch', 1)}.{name}"


class Node:
    """A node of a Graph. ``args``/``kwargs`` may hold other Nodes; ``users`` are the nodes reading this one."""

    def __init__(self, graph, name: str, op: str, target: Target, args: tuple, kwargs: dict,
                 return_type: Any = None) -> None:
        if op not in _OPS:
            raise ValueError(f"Node: op must be one of {_OPS}, got {op!r}")
        self.graph, self.name, self.op, self.target = graph, name, op, target
        self.type = return_type
        self.users: dict[Node, None] = {}
        self.meta: dict[str, Any] = {}
        self._args: tuple = ()
        self._kwargs: dict = {}
        self._input_nodes: dict[Node, None] = {}
        self._update_args_kwargs(args, kwargs)

    # arguments and the users they imply ------------------------------------------------------------------------
    def _update_args_kwargs(self, args: tuple, kwargs: dict) -> None:
        for old in self._input_nodes:
            old.users.pop(self, None)
        self._args, self._kwargs = tuple(args), dict(kwargs)
        self._input_nodes = {}
        map_arg((self._args, self._kwargs), lambda n: self._input_nodes.setdefault(n))
        for new in self._input_nodes:
            new.users.setdefault(self)

    @property
    def args(self) -> tuple:
        return self._args

    @args.setter
    def args(self, value: tuple) -> None:
        self._update_args_kwargs(value, self._kwargs)

    @property
    def kwargs(self) -> dict:
        return self._kwargs

    @kwargs.setter
    def kwargs(self, value: dict) -> None:
        self._update_args_kwargs(self._args, value)

    @property
    def all_input_nodes(self) -> list[Node]:
        return list(self._input_nodes)

    def update_arg(self, idx: int, arg: Argument) -> None:
        args = list(self.args)
        args[idx] = arg
        self.args = tuple(args)

    def update_kwarg(self, key: str, arg: Argument) -> None:
        self.kwargs = {**self.kwargs, key: arg}

    def replace_input_with(self, old_input: Node, new_input: Node) -> None:
        swap = lambda n: new_input if n is old_input else n  # noqa: E731
        self._update_args_kwargs(map_arg(self._args, swap), map_arg(self._kwargs, swap))

    def replace_all_uses_with(self, replace_with: Node, delete_user_cb: Callable[[Node], bool] = lambda u: True,
                              *, propagate_meta: bool = False) -> list[Node]:
        """Make every user of this node read ``replace_with`` instead; returns those users."""
        changed = [user for user in list(self.users) if delete_user_cb(user)]
        for user in changed:
            user.replace_input_with(self, replace_with)
        return changed

    # position in the graph -------------------------------------------------------------------------------------
    @property
    def next(self) -> Node | None:
        return self.graph._neighbour(self, +1)

    @property
    def prev(self) -> Node | None:
        return self.graph._neighbour(self, -1)

    def prepend(self, x: Node) -> None:
        """Move ``x`` to just before this node."""
        self.graph._move(x, self, after=False)

    def append(self, x: Node) -> None:
        """Move ``x`` to just after this node."""
        self.graph._move(x, self, after=True)

    # printing --------------------------------------------------------------------------------------------------
    def __repr__(self) -> str:
        return self.name

    def format_node(self) -> str:
        """PyTorch's line for this node in ``print(graph)``."""
        if self.op == "placeholder":
            default = f"{self.args[0]!r}" if self.args else ""
            return f"%{self.name} : [num_users={len(self.users)}] = placeholder[target={self.target}]" + (
                f"(default={default})" if self.args else "")
        if self.op == "get_attr":
            return f"%{self.name} : [num_users={len(self.users)}] = get_attr[target={self.target}]"
        if self.op == "output":
            return f"return {_format_arg(self.args[0])}"
        return (f"%{self.name} : [num_users={len(self.users)}] = {self.op}[target={target_name(self.target)}]"
                f"(args = {_format_arg(self.args)}, kwargs = {_format_arg(self.kwargs)})")


def _format_arg(arg: Argument) -> str:
    if isinstance(arg, Node):
        return f"%{arg.name}"
    if isinstance(arg, tuple):
        inner = ", ".join(_format_arg(a) for a in arg)
        return f"({inner},)" if len(arg) == 1 else f"({inner})"
    if isinstance(arg, list):
        return "[" + ", ".join(_format_arg(a) for a in arg) + "]"
    if isinstance(arg, dict):
        return "{" + ", ".join(f"{k}: {_format_arg(v)}" for k, v in arg.items()) + "}"
    return str(arg) if isinstance(arg, str) else repr(arg)
