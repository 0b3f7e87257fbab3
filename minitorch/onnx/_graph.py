"""GraphBuilder: the ONNX graph an export writes, and which ONNX value each traced Tensor is.

A traced tensor is one of: a graph input, a parameter or buffer (an initializer, or an input when
``export_params=False``), the output of a translated op, or a constant (a tensor made inside forward from
no input, ``torch.arange(T)``, a mask): constants become initializers when first used, and an op whose
tensor inputs are all constants is folded (its traced result is the constant). A tensor the trace has not
seen but that shares memory with a graph value (``x.detach()``) is that value when it has the same
geometry, and an error otherwise: the exporter never bakes a value that depends on the inputs.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..tensor import Tensor
from .errors import SymbolicValueError, UnsupportedOperatorError

_ONNX_TYPES = {"float32": "FLOAT", "float64": "DOUBLE", "float16": "FLOAT16", "bfloat16": "BFLOAT16",
               "int64": "INT64", "int32": "INT32", "int16": "INT16", "int8": "INT8", "uint8": "UINT8",
               "bool": "BOOL"}


@dataclass
class Value:
    """What the exporter knows about one traced tensor."""

    tensor: Tensor
    name: str | None  # the ONNX value name (None: a constant not used yet, or an output nothing translates)
    version: int  # the storage's version when it got this value: a later in-place write makes it stale
    constant: bool = False
    untranslated: str = ""  # the op whose output this is, when its translation gives no value for it


def as_array(value):
    """A numpy array of a Tensor or backend array (CuPy's are copied to the host)."""
    if isinstance(value, Tensor):
        return value.detach().cpu().numpy()
    return value.get() if hasattr(value, "get") else value


def _is_arange(array) -> bool:
    """Whether a 1-D array is 0, 1, ..., n - 1."""
    return array.tolist() == list(range(len(array)))


class GraphBuilder:
    """One export's nodes, initializers and inputs, and the ONNX value of each traced Tensor."""

    def __init__(self, opset: int, fold_constants: bool = True) -> None:
        import onnx  # the optional dependency: minitorch[onnx]

        self.onnx = onnx
        self.helper = onnx.helper
        self.opset = opset
        self.fold_constants = fold_constants
        self.nodes: list = []
        self.initializers: list = []
        self.inputs: list = []
        self._values: dict[int, Value] = {}
        self._by_storage: dict[int, list[Value]] = {}
        self._used_names: set[str] = set()
        self._counter = 0
        self.versions: dict[int, int] = {}  # id(tensor) -> storage version at the traced call being translated
        # A second trace with every dynamic input dim one larger, when there is one (see _export.py): a shape that
        # changes between the two traces is written from the input dims that change in the same way.
        self.counterparts: dict[int, Tensor] = {}  # id(tensor of the first trace) -> that tensor in the second
        self.dynamic_dims: list = []  # (input name, dim, its size in the first trace, in the second)
        self._input_dims: dict = {}

    # names and values ---------------------------------------------------------------------------------
    def fresh(self, hint: str) -> str:
        """A value or node name not used yet (``hint``, or ``hint_N``)."""
        name = hint
        while name in self._used_names:
            self._counter += 1
            name = f"{hint}_{self._counter}"
        self._used_names.add(name)
        return name

    def _version(self, tensor: Tensor) -> int:
        return self.versions.get(id(tensor), tensor._storage.version)

    def bind(self, tensor: Tensor, name: str | None, *, constant: bool = False, untranslated: str = "") -> None:
        """From now on ``tensor`` is the ONNX value ``name``."""
        entry = Value(tensor, name, self._version(tensor), constant, untranslated)
        self._values[id(tensor)] = entry
        self._by_storage.setdefault(id(tensor._storage), []).append(entry)

    def _lookup(self, tensor: Tensor) -> Value:
        entry = self._values.get(id(tensor))
        if entry is not None and entry.tensor is tensor:
            return entry
        geometry = (tuple(tensor.shape), tensor.stride(), tensor.storage_offset(), tensor.dtype)
        version = self._version(tensor)
        graph_values = [v for v in self._by_storage.get(id(tensor._storage), []) if not v.constant]
        for other in reversed(graph_values):
            t = other.tensor
            if (tuple(t.shape), t.stride(), t.storage_offset(), t.dtype) == geometry and other.version == version:
                self.bind(tensor, other.name, untranslated=other.untranslated)  # an alias: x.detach(), x.data
                return self._values[id(tensor)]
        if graph_values:
            raise SymbolicValueError(
                f"a tensor of shape {list(tensor.shape)} shares memory with a traced value but was not made by an "
                "op the exporter saw (a view or a write outside the ops?); it cannot be exported as a constant")
        self.bind(tensor, None, constant=True)
        return self._values[id(tensor)]

    def is_constant(self, value) -> bool:
        """Whether ``value`` (a Tensor or a Python scalar) is known without the graph's inputs."""
        return not isinstance(value, Tensor) or self._lookup(value).constant

    def value(self, tensor: Tensor) -> str:
        """The ONNX value name of a traced tensor (a constant gets its initializer now)."""
        entry = self._lookup(tensor)
        if entry.untranslated:
            raise UnsupportedOperatorError(entry.untranslated, self.opset, None)
        if entry.constant:
            if entry.name is None:
                entry.name = self._constant(tensor)
            return entry.name
        if entry.version != self._version(tensor):
            raise SymbolicValueError(
                f"a tensor of shape {list(tensor.shape)} was written in place after the exporter saw it (through "
                "another view of its memory?); export the model with out-of-place ops there")
        return entry.name

    def _constant(self, tensor: Tensor) -> str:
        """An initializer, unless its shape follows the dynamic dims (the second trace's differs) and it is one of
        the constants forward builds from a size: one value everywhere (an RNN's zero state,
        ``torch.zeros(x.size(0), n)``, ``torch.ones(T, T)`` before ``triu``) or ``torch.arange(n)``. Those are
        built from the inputs' shapes instead (and ops on them are not folded: see _export.py)."""
        array = as_array(tensor)
        shape = self.shape_value(tuple(tensor.shape), self.other_shape(tensor))
        if shape is None or not array.size:
            return self.initializer(array, "constant")
        other = as_array(self.counterparts[id(tensor)])
        if (array == array.flat[0]).all() and (other == array.flat[0]).all():
            return self.node("Expand", [self.initializer(array.reshape(-1)[:1].reshape(()), "fill"), shape])
        if array.ndim == 1 and _is_arange(array) and _is_arange(other):
            limit = self.node("Squeeze", [shape, self.ints([0])])
            if tensor.dtype.name != "int64":
                limit = self.node("Cast", [limit], to=self.onnx_type(tensor.dtype))
            return self.node("Range", [self.scalar(0, tensor.dtype), limit, self.scalar(1, tensor.dtype)])
        return self.initializer(array, "constant")

    # shapes that follow the dynamic dims --------------------------------------------------------------
    def shape_follows_inputs(self, tensors) -> bool:
        """Whether any of ``tensors`` has another shape in the second trace."""
        return any(self.other_shape(t) not in (None, tuple(t.shape)) for t in tensors if isinstance(t, Tensor))

    def other_shape(self, tensor) -> tuple | None:
        """The tensor's shape in the second trace (None without one)."""
        other = self.counterparts.get(id(tensor)) if isinstance(tensor, Tensor) else None
        return None if other is None else tuple(other.shape)

    def shape_value(self, shape: tuple, other: tuple | None) -> str | None:
        """A 1-D int64 value: ``shape`` where the second trace's shape ``other`` agrees, and where it does not, the
        size of an input dim that changed the same way. None when the shapes agree, or a changed dim matches no
        input dim (a size computed from one, such as 2 * batch)."""
        if other is None or len(other) != len(shape) or tuple(shape) == tuple(other):
            return None
        pieces, literal = [], []
        for first, second in zip(shape, other):
            if first == second:
                literal.append(first)
                continue
            source = next(((name, d) for name, d, a, b in self.dynamic_dims if (a, b) == (first, second)), None)
            if source is None:
                return None
            if literal:
                pieces.append(self.ints(literal))
                literal = []
            pieces.append(self._input_dim(*source))
        if literal:
            pieces.append(self.ints(literal))
        return pieces[0] if len(pieces) == 1 else self.node("Concat", pieces, axis=0)

    def _input_dim(self, name: str, dim: int) -> str:
        key = (name, dim)
        if key not in self._input_dims:
            self._input_dims[key] = self.node("Shape", [name], start=dim, end=dim + 1)
        return self._input_dims[key]

    # initializers and nodes ---------------------------------------------------------------------------
    def onnx_type(self, dtype) -> int:
        name = _ONNX_TYPES.get(dtype.name)
        if name is None:
            raise SymbolicValueError(f"ONNX export has no element type for {dtype}")
        return getattr(self.onnx.TensorProto, name)

    def initializer(self, array, hint: str) -> str:
        name = self.fresh(hint)
        self.initializers.append(self.onnx.numpy_helper.from_array(array, name))
        return name

    def scalar(self, value, dtype) -> str:
        """A 0-dim constant of a minitorch dtype."""
        tensor = self.helper.make_tensor(self.fresh("scalar"), self.onnx_type(dtype), [], [value])
        self.initializers.append(tensor)
        return tensor.name

    def ints(self, values) -> str:
        """A 1-D int64 constant (shapes, axes, starts and ends)."""
        values = [int(v) for v in values]
        tensor = self.helper.make_tensor(self.fresh("ints"), self.onnx.TensorProto.INT64, [len(values)], values)
        self.initializers.append(tensor)
        return tensor.name

    def node(self, op_type: str, inputs, outputs: int = 1, **attributes):
        """Append an ONNX node; returns its output name (or the list of names when ``outputs > 1``)."""
        names = [self.fresh(f"{op_type.lower()}") for _ in range(outputs)]
        attributes = {k: v for k, v in attributes.items() if v is not None}
        self.nodes.append(self.helper.make_node(op_type, list(inputs), names, name=names[0], **attributes))
        return names[0] if outputs == 1 else names

    def reduce(self, op_type: str, x: str, axes, keepdims: bool) -> str:
        """A Reduce* node over ``axes``: an attribute before opset 18 (13 for ReduceSum), an input after."""
        axes = list(axes)
        takes_input = self.opset >= (13 if op_type == "ReduceSum" else 18)
        if takes_input:
            return self.node(op_type, [x, self.ints(axes)], keepdims=int(keepdims))
        return self.node(op_type, [x], axes=axes, keepdims=int(keepdims))
