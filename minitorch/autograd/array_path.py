"""The engine's fast path: a first-order backward evaluated on raw backend arrays.

Without ``create_graph`` nothing is recorded, so a node whose backward is plain arithmetic
(``array_derivative``, see ops/op.py) is called with the arrays themselves: no Tensor, Storage or
graph node is made per gradient. Gradients then flow between such nodes as arrays and become Tensors
only where a Tensor is needed (another node's backward, a hook, ``.grad``, a captured input). This module
holds everything that knows a gradient may be an array; ``engine.py`` only asks it.
"""

from __future__ import annotations

from .anomaly import report_failure
from .graph import Node


def is_tensor(g) -> bool:
    return hasattr(g, "_storage")  # Tensors (dense, sparse, quantized); the engine's other values are arrays


def as_tensor(node: Node, g, nr: int):
    """A gradient arriving at ``node``'s output ``nr`` as a Tensor (None stays None)."""
    return g if g is None or is_tensor(g) else node.wrap_grad(g, nr)


def as_tensors(node: Node, grads: list) -> list:
    for nr, g in enumerate(grads):
        if g is not None and not is_tensor(g):
            grads[nr] = node.wrap_grad(g, nr)
    return grads


def add_grads(child: Node, nr: int, old, g):
    """Two gradients meeting at one output. Same kinds add as they are; an array (or a numpy scalar, what
    0-dim numpy arithmetic returns) and a strided Tensor add as arrays; another layout stays a Tensor."""
    if type(old) is type(g):  # two arrays, two strided or two sparse Tensors
        return old + g
    old_is_tensor, g_is_tensor = is_tensor(old), is_tensor(g)
    if not old_is_tensor and not g_is_tensor:
        return old + g
    if old_is_tensor != g_is_tensor:
        tensor, array = (old, g) if old_is_tensor else (g, old)
        if tensor._dense:
            return tensor._array + array
        old, g = as_tensor(child, old, nr), as_tensor(child, g, nr)
    # another layout plus a strided tensor is refused (PyTorch's rule for sparse), so the strided one goes first
    return g + old if not old._dense and g._dense else old + g


def expandable(shape: tuple, target: tuple) -> bool:
    """Whether a gradient of shape ``target`` can be summed back to ``shape`` (broadcasting's inverse)."""
    if len(shape) > len(target):
        return False
    for n, m in zip(reversed(shape), reversed(target)):
        if n != m and n != 1:
            return False
    return True


def call_on_arrays(node: Node, grads: list, call_on_tensors) -> list:
    """A node's backward evaluated on arrays, its gradients checked against the inputs (as validate_grads).
    A gradient of another layout (sparse) goes to ``call_on_tensors`` instead."""
    ndarray = node.backend.ndarray
    uniform = node._uniform  # the dtype of inputs and output when they all match (see Op._uniform)
    flowing = False
    for nr, g in enumerate(grads):
        if g is not None:
            flowing = True
            if type(g) is not ndarray and is_tensor(g):
                if not g._dense:  # a sparse gradient: the Tensor path knows its layout
                    return call_on_tensors(node, as_tensors(node, grads))
                g = grads[nr] = g._array
            if g.dtype is not uniform:  # e.g. a seed of another dtype
                uniform = None
    if not flowing:
        return [None] * len(node.next_functions)
    try:
        grad_inputs = node._evaluate_on_arrays(grads)
    except Exception:
        if node._traceback is not None:
            report_failure(node)
        raise
    if uniform is not None:  # shapes and dtypes all agree: nothing to reduce or cast
        return grad_inputs
    result = []
    for i, (g, meta) in enumerate(zip(grad_inputs, node._input_meta)):  # an op has one meta per input
        if g is not None:
            if meta is None:  # an input that wants no gradient
                g = None
            else:
                shape, dtype = meta
                if g.shape != shape:
                    if not expandable(shape, g.shape):
                        raise RuntimeError(
                            f"Function {node.name()} returned an invalid gradient at index {i} - got "
                            f"{list(g.shape)} but expected shape compatible with {list(shape)}"
                        )
                    g = node.sum_to_shape(g, shape)
                if node.backend.dtype_of(g) is not dtype:
                    if g.dtype.kind == "c" and not dtype.is_complex:  # a real input's gradient: the real part
                        g = g.real
                    g = g.astype(node.backend.array_dtype(dtype))
        result.append(g)
    return result
