"""A module's graph as TensorBoard's GraphDef (PyTorch's ``torch/utils/tensorboard/_pytorch_graph.py``).

PyTorch runs ``torch.jit.trace`` and writes one NodeDef per JIT op, named by module scope
(``Net/Linear[fc]/...``). minitorch traces with ``minitorch.fx`` into every module (no leaf modules, so a
layer shows as the functions it calls), remembers which module each node was recorded in, and runs the traced
graph on ``input_to_model`` to record each node's output shape (``_output_shapes``). Inputs are ``input/<name>``
and outputs ``output/output.<i>`` IO nodes; parameters are ``prim::GetAttr`` nodes, as in PyTorch.
"""

from __future__ import annotations

from tensorboard.compat.proto.attr_value_pb2 import AttrValue
from tensorboard.compat.proto.config_pb2 import RunMetadata
from tensorboard.compat.proto.graph_pb2 import GraphDef
from tensorboard.compat.proto.node_def_pb2 import NodeDef
from tensorboard.compat.proto.step_stats_pb2 import DeviceStepStats, StepStats
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.compat.proto.versions_pb2 import VersionDef

from ...autograd.grad_mode import no_grad
from ...fx import GraphModule, Interpreter, Tracer
from ...fx.node import Node, map_aggregate, target_name
from ...nn import Module
from ...tensor import Tensor


class _ScopeTracer(Tracer):
    """Traces through every module and records the module scope (``Net/Sequential[seq]/ReLU[0]``) of each node."""

    def __init__(self, root_name: str):
        super().__init__()
        self.scope = [root_name]
        self.scopes: dict[Node, str] = {}

    def is_leaf_module(self, m: Module, module_qualified_name: str) -> bool:
        return False

    def call_module(self, m: Module, forward, args: tuple, kwargs: dict):
        path = self.path_of_module(m)
        self.scope.append(f"{type(m).__name__}[{path.rpartition('.')[2]}]")
        try:
            return super().call_module(m, forward, args, kwargs)
        finally:
            self.scope.pop()

    def create_node(self, kind: str, target, args: tuple, kwargs: dict, name=None, type_expr=None) -> Node:
        node = super().create_node(kind, target, args, kwargs, name, type_expr)
        self.scopes[node] = "/".join(self.scope)
        return node


class _ShapeRecorder(Interpreter):
    """Runs the graph once and keeps each node's output shape (tensors only)."""

    def __init__(self, module):
        super().__init__(module)
        self.shapes: dict[Node, tuple] = {}

    def run_node(self, n: Node):
        result = super().run_node(n)
        if isinstance(result, Tensor):
            self.shapes[n] = tuple(result.shape)
        return result


def _attrs(text: str, shape: tuple | None) -> dict:
    attr = {"attr": AttrValue(s=text.encode("utf_8"))}
    if shape is not None:
        proto = TensorShapeProto(dim=[TensorShapeProto.Dim(size=d) for d in shape])
        attr["_output_shapes"] = AttrValue(list=AttrValue.ListValue(shape=[proto]))
    return attr


def _constants(node: Node) -> str:
    """The arguments that are not nodes (``dim=1``, the ``1`` of ``x + 1``), as the ``attr`` string."""
    parts = [repr(a) for a in node.args if not isinstance(a, Node)]
    parts += [f"{k}={v!r}" for k, v in node.kwargs.items() if not isinstance(v, Node)]
    return "{ " + ", ".join(parts) + " }" if parts else "{}"


def _nodes_in(value) -> list[Node]:
    found: list[Node] = []
    map_aggregate(value, lambda x: found.append(x) if isinstance(x, Node) else None)
    return found


def graph(model: Module, args, verbose: bool = False) -> tuple[GraphDef, RunMetadata]:
    """The GraphDef of ``model`` run on ``args`` (a tensor or a tuple/list of them) and PyTorch's RunMetadata."""
    if not isinstance(model, Module):
        raise TypeError(f"add_graph: expected an nn.Module, got {type(model).__name__}")
    inputs = tuple(args) if isinstance(args, (tuple, list)) else (args,) if args is not None else ()
    was_training = model.training
    model.eval()  # PyTorch traces in eval mode
    try:
        tracer = _ScopeTracer(type(model).__name__)
        traced = GraphModule(model, tracer.trace(model))
        if verbose:
            print(traced.graph)
        recorder = _ShapeRecorder(traced)
        with no_grad():
            recorder.run(*inputs)
    finally:
        model.train(was_training)
    names: dict[Node, str] = {}
    nodes: list[NodeDef] = []
    outputs = 0
    for node in traced.graph.nodes:
        scope = tracer.scopes.get(node, type(model).__name__)
        shape = recorder.shapes.get(node)
        if node.op == "placeholder":
            names[node] = f"input/{node.name}"
            nodes.append(NodeDef(name=names[node], op="IO Node", attr=_attrs("", shape)))
            continue
        if node.op == "output":
            for value in _nodes_in(node.args[0]):
                outputs += 1
                nodes.append(NodeDef(name=f"output/output.{outputs}", op="IO Node", input=[names[value]],
                                     attr=_attrs("", recorder.shapes.get(value))))
            continue
        names[node] = f"{scope}/{node.name}"
        inputs_of = [names[n] for n in node.all_input_nodes]
        if node.op == "get_attr":
            op, text = "prim::GetAttr", f"{{ name :  {node.target.rpartition('.')[2]} }}"
        elif node.op == "call_method":
            op, text = f"Tensor.{node.target}", _constants(node)
        else:
            op, text = target_name(node.target), _constants(node)
        nodes.append(NodeDef(name=names[node], op=op, input=inputs_of, attr=_attrs(text, shape)))
    # PyTorch's versions and its fixed CPU step stats (TensorBoard shows them; minitorch times nothing either)
    stats = RunMetadata(step_stats=StepStats(dev_stats=[DeviceStepStats(device="/device:CPU:0")]))
    return GraphDef(node=nodes, versions=VersionDef(producer=22)), stats
