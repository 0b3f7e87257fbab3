"""``minitorch.fx``: symbolic tracing of Modules and functions into a Graph you can print, edit and run.

``gm = minitorch.fx.symbolic_trace(model)`` records ``model.forward`` as a Graph of Nodes (placeholder,
get_attr, call_function, call_method, call_module, output), with PyTorch's node names; ``print(gm.graph)``,
``gm.graph.print_tabular()`` and ``gm.code`` show it; edit ``gm.graph`` (``inserting_after``,
``call_function``, ``replace_all_uses_with``, ``erase_node``) and ``gm.recompile()``; ``replace_pattern`` rewrites
every match of one traced function with another; ``wrap`` keeps a function of yours as one node;
``Interpreter`` runs a graph node by node. See ``tracer.py`` for how minitorch intercepts calls without
``__torch_function__``.
"""

from .graph import Graph
from .graph_module import GraphModule
from .interpreter import Interpreter
from .node import Node, map_arg
from .proxy import Proxy
from .subgraph_rewriter import replace_pattern
from .tracer import Tracer, symbolic_trace, wrap

__all__ = ["Graph", "GraphModule", "Interpreter", "Node", "Proxy", "Tracer", "map_arg", "replace_pattern",
           "symbolic_trace", "wrap"]
