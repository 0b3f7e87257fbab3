"""``GraphModule``: an ``nn.Module`` whose ``forward`` is generated from a Graph (``gm.code``); edit
``gm.graph`` and call ``gm.recompile()`` to run the edited program."""

from __future__ import annotations

from ..nn import Module
from ..tensor import Tensor
from .graph import Graph, PythonCode


def _copy_attr(source, target: Module, qualified_name: str) -> None:
    """Copy ``source``'s attribute at the dotted path into ``target``, creating plain Modules on the way."""
    *path, last = qualified_name.split(".")
    for part in path:
        source = getattr(source, part) if not isinstance(source, dict) else source[part]
        if part not in target._modules:
            target.add_module(part, Module())
        target = target._modules[part]
    value = source[last] if isinstance(source, dict) else getattr(source, last)
    if isinstance(value, Module) or type(value).__name__ == "Parameter" or not isinstance(value, Tensor):
        setattr(target, last, value)
    elif last in getattr(source, "_buffers", {}):
        target.register_buffer(last, value)
    else:
        target.__dict__[last] = value  # a tensor constant: a plain attribute


class GraphModule(Module):
    """A Module that runs ``graph``, holding the submodules, parameters and buffers its nodes name (copied
    from ``root``, a Module or a dict of them)."""

    def __init__(self, root, graph: Graph, class_name: str = "GraphModule") -> None:
        super().__init__()
        # each GraphModule gets its own class, so recompile() can give it its own forward
        self.__class__ = type(class_name, (GraphModule,), {"__module__": GraphModule.__module__})
        for node in graph.nodes:
            if node.op in ("get_attr", "call_module"):
                _copy_attr(root, self, node.target)
        self.graph = graph

    @property
    def graph(self) -> Graph:
        return self.__dict__["_graph"]

    @graph.setter
    def graph(self, g: Graph) -> None:
        self.__dict__["_graph"] = g
        g.owning_module = self
        self.recompile()

    @property
    def code(self) -> str:
        """The generated ``forward``, as Python source."""
        return self.__dict__["_code"]

    def recompile(self) -> PythonCode:
        """Regenerate ``forward`` from the (possibly edited) graph."""
        python_code = self.graph.python_code(root_module="self")
        namespace = dict(python_code.globals)
        exec(compile(python_code.src, f"<eval_with_key>.{id(self)}", "exec"), namespace)  # noqa: S102
        self.__dict__["_code"] = python_code.src
        type(self).forward = namespace["forward"]
        return python_code

    def print_readable(self, print_output: bool = True) -> str:
        body = "\n".join(f"    {line}" if line else "" for line in self.code.strip().splitlines())
        text = f"class {type(self).__name__}(torch.nn.Module):\n{body}\n"
        if print_output:
            print(text)
        return text

    def __str__(self) -> str:
        return super().__str__() + "\n\n" + self.code

    __repr__ = Module.__repr__
