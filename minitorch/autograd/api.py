"""The entry points into the engine: ``autograd.backward``, ``autograd.grad`` and ``tensor.backward()``.
They check the outputs, make the seeds (``ones`` for a scalar loss), and call ``engine.run_backward``.
"""

from __future__ import annotations

from ..tensor import Tensor, from_array
from .engine import run_backward

# autograd.grad of tensors some of which are vmap's BatchedTensors (kind "batched"): set by minitorch.func,
# which unwraps them to the plain tensors the graph was recorded on (minitorch/func/batched_autograd.py)
NON_DENSE_GRAD: dict = {}


def _as_tuple(x) -> tuple:
    if x is None:
        return ()
    return (x,) if isinstance(x, Tensor) else tuple(x)


def _make_grads(outputs: tuple, grad_outputs: tuple) -> tuple:
    """The seeds: ``ones`` for scalar outputs, else what the caller passed (checked)."""
    seeds = []
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if g is None:
            if out.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not out.dtype.is_floating_point:
                raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got {out.dtype}")
            if out._dense:  # (out.new_ones(out.shape) without the factory's argument handling: 4 us less a call)
                storage = out._storage
                backend = storage.backend
                shape = out._array.shape  # (a loss's 0-dim ones from asarray: full's Python is 0.6 us more)
                ones = backend.asarray(1, storage.dtype) if shape == () else backend.full(shape, 1, storage.dtype)
                g = from_array(ones, backend, storage.device)
            else:
                g = out.new_ones(out.shape)
        elif not hasattr(g, "_array"):
            g = out.new_full(out.shape, g)
        elif g.shape != out.shape and not g.is_sparse:
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and output[{i}] has a shape of "
                f"{out.shape}."
            )
        seeds.append(g)
    return tuple(seeds)


def _check_outputs(outputs: tuple) -> None:
    for i, out in enumerate(outputs):
        if not out.requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None) -> None:
    """Accumulate the gradients of ``tensors`` into the ``.grad`` of the leaves (or of ``inputs``)."""
    outputs = _as_tuple(tensors)
    grads = _as_tuple(grad_tensors) if grad_tensors is not None else (None,) * len(outputs)
    if len(grads) != len(outputs):
        raise RuntimeError(f"got {len(grads)} gradients for {len(outputs)} tensors")
    _check_outputs(outputs)
    if inputs is not None:
        inputs = _as_tuple(inputs)
        if not inputs:
            raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    retain_graph = create_graph if retain_graph is None else retain_graph
    run_backward(outputs, _make_grads(outputs, grads), retain_graph, create_graph, inputs=inputs, accumulate=True)


def tensor_backward(self: Tensor, gradient=None, retain_graph=None, create_graph=False, inputs=None) -> None:
    """``tensor.backward()``: ``autograd.backward(tensor, ...)``."""
    backward(self, gradient, retain_graph, create_graph, inputs=inputs)


def grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph=None,
    create_graph: bool = False,
    only_inputs: bool = True,
    allow_unused: bool | None = None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
):
    """The gradients of ``outputs`` w.r.t. ``inputs``, returned (``.grad`` is not touched)."""
    outputs = _as_tuple(outputs)
    inputs = _as_tuple(inputs)
    grads = _as_tuple(grad_outputs) if grad_outputs is not None else (None,) * len(outputs)
    if len(grads) != len(outputs):
        raise RuntimeError(f"grad requires one grad_output per output: got {len(grads)} for {len(outputs)} outputs")
    for t in outputs + inputs + grads:
        if isinstance(t, Tensor) and t._kind in NON_DENSE_GRAD:
            return NON_DENSE_GRAD[t._kind](outputs, inputs, grads, retain_graph, create_graph, allow_unused,
                                           materialize_grads)
    _check_outputs(outputs)
    for i, t in enumerate(inputs):
        if not t.requires_grad:
            raise RuntimeError(f"One of the differentiated Tensors does not require grad (input {i})")
    allow_unused = materialize_grads if allow_unused is None else allow_unused
    retain_graph = create_graph if retain_graph is None else retain_graph
    result = run_backward(
        outputs, _make_grads(outputs, grads), retain_graph, create_graph,
        inputs=inputs, accumulate=False, allow_unused=allow_unused,
    )
    if materialize_grads:
        result = tuple(g if g is not None else t.new_zeros(t.shape) for g, t in zip(result, inputs))
    return result
