"""What every ONNX translation shares: the registry decorator and reading an op's arguments.

A translation is ``function(g, step)``: it reads the op's arguments as ``apply`` got them (``step.args``,
``step.params``) and its traced outputs (shapes and dtypes), adds nodes to the GraphBuilder ``g`` and returns
one ONNX value name per output (None for an output it does not translate, such as max-pool indices: using
one raises).
"""

from __future__ import annotations

from ..tensor import Tensor
from ._graph import as_array

INT64_MAX = 2**63 - 1


def registrar(table: dict):
    """A decorator ``@translates("OpName", ...)`` that enters a translation into ``table``."""

    def translates(*names: str):
        def register(function):
            for name in names:
                table[name] = function
            return function

        return register

    return translates


def output(step, i: int = 0) -> Tensor:
    """The traced output ``i`` of the op (its shape and dtype are the translation's targets)."""
    return step.outputs[i]


def operand(g, value, dtype) -> str:
    """A tensor argument (cast to ``dtype`` when it differs) or a Python scalar as a ``dtype`` constant."""
    if isinstance(value, Tensor):
        name = g.value(value)
        return name if value.dtype is dtype else g.node("Cast", [name], to=g.onnx_type(dtype))
    return g.scalar(value, dtype)


def first_input(g, step) -> str:
    """The ONNX value of the op's first argument."""
    return g.value(step.args[0])


def wrap_dims(dims, ndim: int) -> list:
    """Dims as non-negative axes (ONNX accepts negative ones too; these read better in a printed graph)."""
    return [d % ndim if ndim else 0 for d in dims]


def slice_node(g, value: str, starts, ends, axes, steps=None) -> str:
    """A Slice node (its starts, ends, axes and steps are int64 constants)."""
    inputs = [value, g.ints(starts), g.ints(ends), g.ints(axes)]
    if steps is not None:
        inputs.append(g.ints(steps))
    return g.node("Slice", inputs)


def constant_array(array, dtype):
    """A backend array (a pooling scale, an averaging matrix) as a numpy array of ``dtype``."""
    array = as_array(array)
    return array.astype(array.dtype.type if dtype.name == "bfloat16" else dtype.name, copy=False)
