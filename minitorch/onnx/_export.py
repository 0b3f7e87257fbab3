"""``torch.onnx.export``: run the model once on example inputs, record its ops, write them as an ONNX model.

The recording is a trace, as PyTorch's TorchScript exporter makes: Python control flow is taken as it ran,
shapes the forward computes in Python stay as traced (reshapes and expands are written to follow a dynamic
batch dim; see _tensor_ops.py), and tensors made inside forward from no input are constants. Parameters and
buffers become initializers named by their state-dict keys; ops whose tensor inputs are all constants are
folded. The model runs in eval mode unless ``training`` says otherwise, as in PyTorch.
"""

from __future__ import annotations

import enum
import inspect
import warnings
from collections.abc import Mapping, Sequence

from ..autograd import grad_mode
from ..creation import from_numpy
from ..nn import Module
from ..ops.concat import cat
from ..tensor import Tensor
from ..testing import assert_close
from ._graph import GraphBuilder
from ._symbolics import TRANSLATIONS
from ._tracer import InplaceWrite, record
from .errors import OnnxExporterError, SymbolicValueError

DEFAULT_OPSET = 20  # PyTorch 2.13's torch.onnx default (torch.onnx._constants.ONNX_DEFAULT_OPSET)
MIN_OPSET = 17
MAX_OPSET = 23


class TrainingMode(enum.IntEnum):
    """The mode the model is exported in (PyTorch's ``torch.onnx.TrainingMode``)."""

    EVAL = 0
    PRESERVE = 1
    TRAINING = 2


_exporting = [False]


def is_in_onnx_export() -> bool:
    """Whether an ONNX export is tracing the model right now (for a forward that must act differently)."""
    return _exporting[0]


class ONNXProgram:
    """What ``export(..., dynamo=True)`` returns: the ONNX model, which can be saved or run (onnxruntime)."""

    def __init__(self, model_proto, input_names: list, output_names: list) -> None:
        self.model_proto = model_proto
        self._input_names, self._output_names = input_names, output_names

    def save(self, destination) -> None:
        import onnx

        onnx.save_model(self.model_proto, destination)

    def __call__(self, *args, **kwargs) -> list:
        """Run the model in onnxruntime on Tensors; returns the outputs as Tensors."""
        import onnxruntime

        session = onnxruntime.InferenceSession(self.model_proto.SerializeToString(),
                                               providers=["CPUExecutionProvider"])
        tensors = _tensor_inputs(args, kwargs)
        feed = {name: t.detach().cpu().numpy() for name, t in zip(self._input_names, tensors)}
        return [from_numpy(out) for out in session.run(None, feed)]


def export(model, args=(), f=None, *, kwargs: dict | None = None, verbose: bool | None = None,
           input_names: Sequence[str] | None = None, output_names: Sequence[str] | None = None,
           opset_version: int | None = None, dynamo: bool = True, dynamic_shapes=None, export_params: bool = True,
           keep_initializers_as_inputs: bool = False, dynamic_axes: Mapping | None = None,
           training: TrainingMode = TrainingMode.EVAL, do_constant_folding: bool = True, verify: bool = False):
    """Export ``model`` (called as ``model(*args, **kwargs)``) as an ONNX model written to ``f`` (a path or a
    binary file object). ``dynamic_axes`` (``{name: {dim: dim_name}}`` or ``{name: [dims]}``) or
    ``dynamic_shapes`` mark dims of the inputs and outputs as symbolic. Returns an ``ONNXProgram`` when
    ``dynamo`` (PyTorch's default), else None. Needs the onnx package: ``pip install minitorch[onnx]``."""
    try:
        import onnx
    except ImportError as error:
        raise ModuleNotFoundError("torch.onnx.export needs the onnx package: pip install 'minitorch[onnx]'") from error
    opset = DEFAULT_OPSET if opset_version is None else int(opset_version)
    highest = min(MAX_OPSET, onnx.defs.onnx_opset_version())
    if not MIN_OPSET <= opset <= highest:
        raise ValueError(f"Unsupported ONNX opset version: {opset} (minitorch.onnx exports opsets {MIN_OPSET} to "
                         f"{highest})")
    if f is None and not dynamo:
        raise ValueError("torch.onnx.export: f (a path or a file object) is required when dynamo=False")
    args, kwargs = _split_args(args, kwargs)

    g = GraphBuilder(opset, do_constant_folding)
    # versions before the trace: a forward may write into an input or a buffer (read before that write)
    g.versions = _versions(_tensor_inputs(args, kwargs) + _state_tensors(model))
    state_versions = dict(g.versions)
    outputs, recording = _trace(model, args, kwargs, training)
    names = _input_names(model, args, kwargs, input_names)
    flat_outputs = [t for t in _flatten(outputs) if t is not None]
    if not flat_outputs:
        raise OnnxExporterError("torch.onnx.export: the model returned no tensor")
    out_names = _output_names(output_names, len(flat_outputs))
    axes = _dynamic_axes(dynamic_axes, dynamic_shapes, names)
    _second_trace(g, model, args, kwargs, training, names, axes, recording.events)
    model_proto = _model_proto(g, model, recording.events, list(zip(names, _tensor_inputs(args, kwargs))),
                               list(zip(out_names, flat_outputs)), axes, export_params, keep_initializers_as_inputs,
                               state_versions)
    _unknown_axes(axes, names, out_names)
    try:
        onnx.checker.check_model(model_proto)
    except onnx.checker.ValidationError as error:
        raise OnnxExporterError(f"torch.onnx.export wrote a model the ONNX checker rejects: {error}") from error
    if verbose:
        print(onnx.helper.printable_graph(model_proto.graph))
    if f is not None:
        onnx.save_model(model_proto, f)
    program = ONNXProgram(model_proto, names, out_names)
    if verify:
        _verify(program, args, kwargs, flat_outputs)
    return program if dynamo else None


def _model_proto(g: GraphBuilder, model, events: list, inputs: list, outputs: list, axes: dict, export_params: bool,
                 initializers_as_inputs: bool, state_versions: dict):
    """The ONNX model of a trace: ``inputs`` and ``outputs`` are (name, Tensor) pairs; ``state_versions`` the
    parameters' and buffers' versions before it."""
    for name, _ in inputs + outputs:
        g.fresh(name)
    for name, tensor in inputs:
        g.bind(tensor, name)
        g.inputs.append(_value_info(g, name, tensor, axes.get(name)))
    parameters = _bind_parameters(g, model)
    _translate(g, events)
    graph_outputs = []
    for name, tensor in outputs:
        if not isinstance(tensor, Tensor):
            raise OnnxExporterError(f"torch.onnx.export: the model returned a {type(tensor).__name__}, not a tensor")
        g.nodes.append(g.helper.make_node("Identity", [g.value(tensor)], [name], name=g.fresh(f"{name}_identity")))
        graph_outputs.append(_value_info(g, name, tensor, axes.get(name), unknown=bool(axes)))
    _prune(g, [name for name, _ in outputs])

    used = {i for node in g.nodes for i in node.input}
    initializers, graph_inputs = list(g.initializers), list(g.inputs)
    for name, parameter in parameters:
        if name not in used:
            continue
        if parameter._storage.version != state_versions.get(id(parameter), parameter._storage.version):
            raise SymbolicValueError(
                f"torch.onnx.export: the forward writes into {name!r} in place after reading it, so its value "
                "before the call is gone; export in eval mode, or write it out of place")
        if export_params:
            initializers.append(g.onnx.numpy_helper.from_array(parameter.detach().cpu().numpy(), name))
        if initializers_as_inputs or not export_params:
            graph_inputs.append(_value_info(g, name, parameter, None))
    graph = g.helper.make_graph(g.nodes, "main_graph", graph_inputs, graph_outputs, initializers)
    opsets = [g.helper.make_opsetid("", g.opset)]
    return g.helper.make_model(graph, opset_imports=opsets, producer_name="minitorch",
                               ir_version=g.helper.find_min_ir_version_for(opsets))


# the trace ---------------------------------------------------------------------------------------------------
def _split_args(args, kwargs):
    if isinstance(args, Tensor):
        args = (args,)
    args = tuple(args)
    kwargs = dict(kwargs or {})
    if args and isinstance(args[-1], dict):  # PyTorch: a trailing dict holds the keyword arguments
        kwargs = {**args[-1], **kwargs}
        args = args[:-1]
    return args, kwargs


def _trace(model, args: tuple, kwargs: dict, training: TrainingMode):
    was_training = model.training if isinstance(model, Module) else None
    if was_training is not None and training != TrainingMode.PRESERVE:
        model.train(training == TrainingMode.TRAINING)
    _exporting[0] = True
    try:
        with grad_mode.no_grad(), record() as recording:
            outputs = model(*args, **kwargs)
    finally:
        _exporting[0] = False
        if was_training is not None:
            model.train(was_training)
    return outputs, recording


def _second_trace(g: GraphBuilder, model, args: tuple, kwargs: dict, training, names: list, axes: dict,
                  events: list) -> None:
    """Trace again with every dynamic input dim one larger and tell ``g`` which tensor of this trace is which of
    the first: shapes the forward computed in Python from a dynamic size (``torch.zeros(x.size(0), n)``, a
    reshape to ``(batch, heads, -1)``) are then written to follow it. Nothing is learnt (and the export is the
    single trace's) if the model refuses the larger inputs or runs other ops on them, or runs in training mode."""
    grown = {name: dims for name, dims in axes.items() if name in names and dims}
    in_training = training == TrainingMode.TRAINING or (training == TrainingMode.PRESERVE and
                                                        getattr(model, "training", False))
    if not grown or in_training:  # (a training forward updates running statistics: not twice)
        return
    try:
        with grad_mode.no_grad():
            args2, kwargs2 = _grow(args, kwargs, names, grown)
        _, recording = _trace(model, args2, kwargs2, training)
    except Exception:  # noqa: BLE001 - a model may accept only the traced sizes; the first trace stands alone
        return
    pairs = list(zip(events, recording.events))
    if len(events) != len(recording.events) or any(_event_key(a) != _event_key(b) for a, b in pairs):
        return
    for first, second in pairs:
        for a, b in zip(_event_tensors(first), _event_tensors(second)):
            g.counterparts[id(a)] = b
    inputs1, inputs2 = _tensor_inputs(args, kwargs), _tensor_inputs(args2, kwargs2)
    for name, t1, t2 in zip(names, inputs1, inputs2):
        g.counterparts[id(t1)] = t2
        g.dynamic_dims.extend((name, d, t1.shape[d], t2.shape[d]) for d in grown.get(name, {}) if d < t1.dim())


def _grow(args: tuple, kwargs: dict, names: list, grown: dict):
    """The inputs with each dynamic dim one longer (its last slice repeated: indices stay valid). A tensor passed
    twice (``mha(x, x, x)``) stays one tensor: a forward may check ``query is key``."""
    positions = iter(names)
    done: dict = {}

    def grow(value):
        if isinstance(value, (list, tuple)):
            return type(value)(grow(v) for v in value)
        if isinstance(value, dict):
            return {k: grow(v) for k, v in value.items()}
        if not isinstance(value, Tensor):
            return value
        dims = grown.get(next(positions), {})
        if id(value) in done:
            return done[id(value)]
        original = value
        for d in sorted(dims, reverse=True):
            if d < value.dim() and value.shape[d]:
                value = cat([value, value.narrow(d, value.shape[d] - 1, 1)], d)
        done[id(original)] = value
        return value

    return grow(args), grow(kwargs)


def _event_key(event) -> tuple:
    if isinstance(event, InplaceWrite):
        return ("write", len(_event_tensors(event)))
    return (event.op, len(_event_tensors(event)))


def _event_tensors(event) -> list:
    if isinstance(event, InplaceWrite):
        return [event.target, event.result]
    return _tensors_in(event.args) + _tensors_in(event.params) + [t for t in event.outputs if isinstance(t, Tensor)]


def _tensors_in(value) -> list:
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensors_in(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _tensors_in(v)]
    return []


def _translate(g: GraphBuilder, events: list) -> None:
    for event in events:
        g.versions = event.versions
        if isinstance(event, InplaceWrite):
            if g.is_constant(event.result):
                g.bind(event.target, None, constant=True)
            else:
                g.bind(event.target, g.value(event.result))
            continue
        tensors = _tensors_in(event.args) + _tensors_in(event.params)
        if (g.fold_constants and all(g.is_constant(t) for t in tensors) and not _has_arrays(event)
                and not g.shape_follows_inputs(event.outputs)):  # (torch.arange(T) * 2 with a dynamic T: an op)
            for out in event.outputs:
                if isinstance(out, Tensor):
                    g.bind(out, None, constant=True)
            continue
        op = f"minitorch::{event.op.__name__}"
        # an op subclass that only renames its node (Rsub of Sub, Celu of Elu) translates as its base
        translate = next((TRANSLATIONS[c.__name__] for c in event.op.__mro__ if c.__name__ in TRANSLATIONS), None)
        if translate is None:  # raised where a value it made is used (an unused one, e.g. dead code, is dropped)
            for out in event.outputs:
                if isinstance(out, Tensor):
                    g.bind(out, None, untranslated=op)
            continue
        for out, name in zip(event.outputs, translate(g, event)):
            if isinstance(out, Tensor):
                g.bind(out, name, untranslated="" if name is not None else f"{op} (this output)")
    g.versions = {}


def _has_arrays(step) -> bool:
    """Whether a backend array is among the op's arguments (``x[index_tensor]`` hands its op the index as an
    array): it may come from an input, so such an op is never folded into a constant."""
    values = list(step.args) + list(step.params.values())
    while values:
        value = values.pop()
        if isinstance(value, (list, tuple)):
            values.extend(value)
        elif not isinstance(value, Tensor) and hasattr(value, "__array_interface__") or \
                hasattr(value, "__cuda_array_interface__"):
            return True
    return False


def _state_tensors(model) -> list:
    if not isinstance(model, Module):
        return []
    return [t for _, t in list(model.named_parameters()) + list(model.named_buffers())]


def _versions(tensors: list) -> dict:
    return {id(t): t._storage.version for t in tensors}


def _bind_parameters(g: GraphBuilder, model) -> list:
    """Parameters and buffers as (ONNX name, Tensor): their state-dict names, unless an input has taken one."""
    if not isinstance(model, Module):
        return []
    found = []
    for name, tensor in list(model.named_parameters()) + list(model.named_buffers()):
        name = g.fresh(name)
        g.bind(tensor, name)
        found.append((name, tensor))
    return found


# names, shapes and dynamic axes ------------------------------------------------------------------------------
def _tensor_inputs(args: tuple, kwargs: dict) -> list:
    """Every tensor among the arguments, nested tuples, lists and dicts flattened (``lstm(x, (h0, c0))``)."""
    return _tensors_in(list(args) + list(kwargs.values()))


def _input_names(model, args: tuple, kwargs: dict, given) -> list:
    """``given``, then each remaining tensor's parameter name in ``forward`` (``hx_0``, ``hx_1`` inside a tuple)."""
    try:
        parameters = list(inspect.signature(model.forward if isinstance(model, Module) else model).parameters)
    except (TypeError, ValueError):
        parameters = []
    named = [(parameters[i] if i < len(parameters) else f"input_{i}", a) for i, a in enumerate(args)]
    defaults = []
    for name, value in named + list(kwargs.items()):
        tensors = _tensors_in(value)
        defaults += [name] if isinstance(value, Tensor) else [f"{name}_{i}" for i in range(len(tensors))]
    given = list(given or [])
    if len(given) > len(defaults):
        raise ValueError(f"torch.onnx.export: {len(given)} input_names for {len(defaults)} tensor inputs")
    return given + defaults[len(given):]


def _output_names(given, n: int) -> list:
    given = list(given or [])
    if len(given) > n:
        raise ValueError(f"torch.onnx.export: {len(given)} output_names for {n} outputs")
    defaults = ["output"] if n == 1 else [f"output_{i}" for i in range(n)]
    return given + defaults[len(given):]


def _flatten(value) -> list:
    if isinstance(value, (list, tuple)):
        return [x for v in value for x in _flatten(v)]
    if isinstance(value, dict):
        return [x for v in value.values() for x in _flatten(v)]
    return [value]


def _dynamic_axes(dynamic_axes, dynamic_shapes, input_names: list) -> dict:
    """{value name: {dim: dim name}} from dynamic_axes, or from dynamic_shapes (by input name or position)."""
    result: dict = {}
    if dynamic_shapes is not None:
        if isinstance(dynamic_shapes, Mapping):
            items = list(dynamic_shapes.items())
        else:
            items = list(zip(input_names, dynamic_shapes))
        for name, dims in items:
            if dims is None:
                continue
            if not isinstance(dims, Mapping):
                raise ValueError(f"torch.onnx.export: dynamic_shapes[{name!r}] must map dims to names (or be None)")
            result[name] = {int(d): v if isinstance(v, str) else getattr(v, "__name__", f"{name}_dim_{d}")
                            for d, v in dims.items()}
    for name, dims in (dynamic_axes or {}).items():
        if isinstance(dims, Mapping):
            result[name] = {int(d): str(v) for d, v in dims.items()}
        else:
            result[name] = {int(d): f"{name}_dynamic_axes_{i + 1}" for i, d in enumerate(dims)}
    return result


def _unknown_axes(axes: dict, inputs: list, outputs: list) -> None:
    for name in axes:
        if name not in inputs and name not in outputs:
            warnings.warn(f"Provided key {name} for dynamic axes is not a valid input/output name", stacklevel=3)


def _value_info(g: GraphBuilder, name: str, tensor: Tensor, dynamic: dict | None, unknown: bool = False):
    dynamic = dynamic or {}
    shape = [dynamic.get(i, None if unknown else n) for i, n in enumerate(tensor.shape)]
    return g.helper.make_tensor_value_info(name, g.onnx_type(tensor.dtype), shape)


def _prune(g: GraphBuilder, outputs: list) -> None:
    """Drop the nodes no output needs (dead code of the traced forward) and the constants only they read."""
    live = set(outputs)
    kept = []
    for node in reversed(g.nodes):
        if any(o in live for o in node.output):
            kept.append(node)
            live.update(node.input)
    g.nodes = kept[::-1]
    g.initializers = [t for t in g.initializers if t.name in live]


def _verify(program: ONNXProgram, args: tuple, kwargs: dict, expected: list) -> None:
    for got, want in zip(program(*args, **kwargs), expected):
        assert_close(got, want.detach().cpu(), rtol=1e-4, atol=1e-5, check_dtype=False)
