"""Custom differentiable operations: ``class MyOp(Function)`` with forward/backward staticmethods.

As in PyTorch, the ``ctx`` that forward saves values on is the graph node itself (an instance of
``MyOpBackward``), and backward receives one gradient per forward output. Two styles are accepted:
``forward(ctx, *args)``, or ``forward(*args)`` plus ``setup_context(ctx, inputs, output)``.

``apply`` runs forward with grad mode off, then wires the outputs into the graph: inputs returned
as-is become aliases (views) of the input, ``mark_dirty`` inputs are returned as the same object
with their history rebased, ``mark_non_differentiable`` outputs (and integer outputs) get
``requires_grad=False``, and tensors passed to ``save_for_backward`` are version-checked when
backward reads ``ctx.saved_tensors``.
"""

from __future__ import annotations

import functools
import inspect

from .._backends import backend_for
from ..creation import zeros
from ..tensor import Tensor, from_array
from . import anomaly, forward_ad, grad_mode, saved_hooks
from .graph import Node, SavedTensor, edge_of, pack_saved
from .view_history import rebase_base_through_view


class FunctionCtx:
    """What ``forward`` (or ``setup_context``) may call on ``ctx``."""

    __slots__ = ()

    def save_for_backward(self, *tensors) -> None:
        """Keep inputs or outputs (or None) for backward; read back, version-checked, as ``ctx.saved_tensors``."""
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(
                    f"save_for_backward can only save variables, but argument {i} is of type {type(t).__name__}"
                )
        self.to_save = tensors

    def save_for_forward(self, *tensors) -> None:
        """Keep inputs or outputs (or None) for ``jvp``, which reads them back as ``ctx.saved_tensors``."""
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(
                    f"save_for_forward expects all arguments to be tensors; but got argument {i} of type "
                    f"{type(t).__name__}."
                )
        self.saved_for_forward = tensors

    def mark_dirty(self, *tensors) -> None:
        """Declare the inputs forward modified in place (they must also be returned)."""
        self.dirty_tensors = tensors

    def mark_non_differentiable(self, *tensors) -> None:
        """Declare outputs that carry no gradient (indices, masks): they get ``requires_grad=False``."""
        self.non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        """With False, backward receives None (not zeros) for outputs whose gradient is undefined."""
        self.materialize_grads = bool(value)


class BackwardCFunction(FunctionCtx, Node):
    """The node of a custom Function: runs the user's backward."""

    _always_called = True  # PyTorch calls a custom backward even when every grad is None

    _forward_cls = None

    def name(self) -> str:
        return type(self).__name__

    def wrap_grad(self, array, output_nr: int):
        device = self.output_meta[output_nr][2]
        return from_array(array, backend_for(device), device)

    def _evaluate(self, *grads):
        if getattr(self, "materialize_grads", True):
            grads = _materialized(grads, self.output_meta)
        result = self._forward_cls.backward(self, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        expected = len(self.next_functions)
        if len(result) > expected and all(r is None for r in result[expected:]):
            result = result[:expected]
        if len(result) != expected:
            raise RuntimeError(
                f"function {self.name()} returned an incorrect number of gradients "
                f"(expected {expected}, got {len(result)})"
            )
        for i, (g, tensor_input) in enumerate(zip(result, self._is_tensor_input)):
            if g is not None and not tensor_input:
                raise RuntimeError(
                    f"function {self.name()} returned a gradient different than None at position {i + 1}, "
                    "but the corresponding forward input was not a Variable"
                )
        return result


def _materialized(grads: tuple, output_meta: tuple) -> tuple:
    """Undefined gradients of tensor outputs become zeros (non-tensor outputs keep None)."""
    if all(g is not None for g in grads):
        return grads
    return tuple(
        zeros(meta[0], dtype=meta[1], device=meta[2]) if g is None and meta is not None else g
        for g, meta in zip(grads, output_meta)
    )


# Function.apply with an argument of a tensor kind listed here (vmap's BatchedTensors) goes to its function
# (minitorch/func/batched_autograd.py: the Function's vmap staticmethod or generated rule)
NON_DENSE_APPLY: dict = {}


class FunctionMeta(type):
    """Gives each Function subclass its own node class, named like PyTorch's (``MyOpBackward``)."""

    def __init__(cls, name, bases, attrs):
        cls._backward_cls = type(name + "Backward", (BackwardCFunction,), {"_forward_cls": cls})
        super().__init__(name, bases, attrs)


class Function(metaclass=FunctionMeta):
    """Base class of custom autograd operations; subclass and call ``MyOp.apply(*args)``.

    ``forward(ctx, *args)`` computes the outputs from Tensors (seen without history, grad mode off);
    ``backward(ctx, *grad_outputs)`` returns one gradient per forward input (None for non-tensors and
    inputs that need none), written in differentiable ops if double backward should work.
    """

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        """Optional: with it, ``forward(*args)`` takes no ctx and this saves what backward needs."""
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom autograd.Function "
            "to use it with backward mode AD."
        )

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        """Forward mode: the output tangents from one tangent per forward input (zeros for a tensor input
        without one, None for a non-tensor); ``ctx.saved_tensors`` gives what forward passed to
        ``save_for_forward``."""
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with forward mode AD."
        )

    # vmap (minitorch.func.vmap): set True to have the batching rule generated from forward/setup_context and
    # backward (they must be written in minitorch ops), or override ``vmap``
    generate_vmap_rule = False

    @staticmethod
    def vmap(info, in_dims, *args):
        """The batching rule: ``args`` with their batch dims ``in_dims`` (None: unbatched) and ``info.batch_size``
        in, ``(outputs, out_dims)`` out."""
        raise NotImplementedError(
            "To use autograd.Function with vmap, you must either override the vmap staticmethod or set "
            "generate_vmap_rule=True."
        )

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run forward on ``args`` and, when grad mode is on and an input requires grad, record the node."""
        for a in args:
            if isinstance(a, Tensor) and a._kind in NON_DENSE_APPLY:
                return NON_DENSE_APPLY[a._kind](cls, args, kwargs)
        uses_setup_context = cls.setup_context is not Function.setup_context
        if kwargs or uses_setup_context:
            args = _bind_arguments(cls, args, kwargs, uses_setup_context)
        ctx = cls._backward_cls()
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        record = grad_mode.state.enabled and any(ctx.needs_input_grad)
        dual = forward_ad.state.active
        with grad_mode.no_grad(), forward_ad._suspended():  # forward sees the primals only, as in PyTorch
            if uses_setup_context:
                outputs = cls.forward(*args)
                cls.setup_context(ctx, args, outputs)
            else:
                outputs = cls.forward(ctx, *args)
        is_tuple = isinstance(outputs, tuple)
        outputs = _finish_outputs(ctx, args, outputs if is_tuple else (outputs,), record)
        if dual:
            forward_ad.propagate(_ForwardCtx(cls, ctx), args, outputs)
        return outputs if is_tuple else outputs[0]


class _ForwardCtx:
    """The Function's ``jvp`` as forward_ad.propagate calls a rule: ``ctx.saved_tensors`` reads what forward
    saved for forward (not for backward) while it runs; tensor inputs without a tangent get zeros."""

    def __init__(self, cls, ctx):
        self.cls, self.ctx = cls, ctx

    def jvp(self, inputs, outputs, tangents):
        ctx = self.ctx
        tangents = forward_ad.zeros_for_missing(inputs, tangents)
        tangents = tuple(t.contiguous() if isinstance(t, Tensor) and 0 in t.stride() else t for t in tangents)
        saved_for_backward = getattr(ctx, "_saved", ())
        ctx._saved = tuple(getattr(ctx, "saved_for_forward", ()))
        try:
            result = self.cls.jvp(ctx, *tangents)
        finally:
            ctx._saved = saved_for_backward
        for out, tangent in zip(outputs, result if isinstance(result, tuple) else (result,)):
            if any(out is x for x in inputs) and tangent is not None:  # marked dirty: written in place
                forward_ad.write_tangent_value(out, tangent)
        return tuple(None if any(o is x for x in inputs) else r
                     for o, r in zip(outputs, result if isinstance(result, tuple) else (result,)))


def _bind_arguments(cls, args: tuple, kwargs: dict, uses_setup_context: bool) -> tuple:
    """Keyword arguments (and, for setup_context style, defaults) as positional ``inputs``."""
    signature = cls.__dict__.get("_forward_signature")
    if signature is None:
        signature = inspect.signature(cls.forward)
        cls._forward_signature = signature
    if uses_setup_context:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return bound.args
    bound = signature.bind(None, *args, **kwargs)  # None stands for ctx
    return bound.args[1:]


def _check_dirty(ctx, args: tuple, outputs: tuple, record: bool) -> tuple:
    """The tensors marked dirty: inputs, returned, not leaves that require grad; their version bumps."""
    dirty = getattr(ctx, "dirty_tensors", ())
    for t in dirty:
        if not any(t is a for a in args):
            raise RuntimeError("mark_dirty can only be called with input tensors of the Function")
        if not any(t is o for o in outputs):
            raise RuntimeError(
                "Some elements marked as dirty during the forward method were not returned as output. "
                "The inputs that are modified inplace must all be outputs of the Function."
            )
        if record:
            base = t._base
            if base is not None and base._requires_grad and base.grad_fn is None:
                raise RuntimeError(
                    "a view of a leaf Variable that requires grad is being used in an in-place operation."
                )
            if t._requires_grad and t.grad_fn is None:
                raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    for t in dirty:
        t._bump_version()
    return dirty


def _as_view_of_input(t):
    """An input returned as-is: a new tensor aliasing it, marked as made by a custom Function."""
    out = t._alias()
    meta = out._autograd_meta()
    meta.base = t._base if t._base is not None else t
    meta.view_version = t._storage.version
    meta.creation = "custom_function"
    if t.is_inference():
        meta.is_inference = True
    return out


def _finish_outputs(ctx, args: tuple, outputs: tuple, record: bool) -> tuple:
    """Turn forward's raw outputs into the Function's outputs, and make ``ctx`` their grad_fn."""
    dirty = _check_dirty(ctx, args, outputs, record)
    non_diff = getattr(ctx, "non_differentiable", ())
    finished = []
    for out in outputs:
        if isinstance(out, Tensor) and any(out is a for a in args) and not any(out is d for d in dirty):
            # in grad mode a view of the input; with grad mode off, as in PyTorch, a plain alias (a view made
            # in no_grad mode would still require grad when the input does)
            out = _as_view_of_input(out) if grad_mode.state.enabled else out._alias()
        finished.append(out)
    if not record:
        ctx.__dict__.pop("to_save", None)
        return tuple(finished)

    ctx.next_functions = tuple(edge_of(a) if isinstance(a, Tensor) else (None, 0) for a in args)
    ctx._is_tensor_input = tuple(isinstance(a, Tensor) for a in args)
    ctx._input_meta = tuple(
        (a._array.shape, a.dtype) if isinstance(a, Tensor) and a.requires_grad else None for a in args
    )
    ctx._n_outputs = len(finished)
    ctx.output_meta = tuple((o._array.shape, o.dtype, o.device) if isinstance(o, Tensor) else None for o in finished)
    for i, out in enumerate(finished):
        if not isinstance(out, Tensor):
            continue
        if any(out is t for t in non_diff) or not (out.dtype.is_floating_point or out.dtype.is_complex):
            if not any(out is d for d in dirty):
                out._requires_grad = False
            continue
        is_view = out._meta is not None and out._meta.base is not None
        if is_view and any(out is d for d in dirty):  # written through a view: rewrite the base's history
            rebase_base_through_view(out, ctx, i, view_input=next(k for k, a in enumerate(args) if a is out))
            continue
        out.grad_fn = ctx
        out._output_nr = i
        out._requires_grad = True
        if is_view and not any(out is d for d in dirty):
            out._meta.creation = "custom_function"
    ctx._saved = tuple(_saved(t, finished, ctx) for t in ctx.__dict__.pop("to_save", ()))
    if saved_hooks.active:
        pack_saved(ctx, tuple(finished))
    if anomaly._enabled:
        anomaly.record_traceback(ctx)
    return tuple(finished)


def _saved(t, outputs: tuple, ctx):
    """A SavedTensor for ``t``: outputs are saved without a reference cycle, the rest as they are."""
    if t is None:
        return None
    output_nr = next((i for i, o in enumerate(outputs) if o is t), None)
    if output_nr is not None and t.grad_fn is ctx:
        return SavedTensor(t, output_nr)
    return SavedTensor(t)


class DelayedError(Function):
    """Outputs that raise ``message`` if a gradient ever flows through them (for once_differentiable)."""

    @staticmethod
    def forward(ctx, message, *tensors):
        ctx.message = message
        return tensors

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(ctx.message)


def once_differentiable(backward):
    """Decorate a backward that is not itself differentiable: it runs without recording, and a
    double backward through it raises instead of silently returning wrong second derivatives."""

    @functools.wraps(backward)
    def wrapper(ctx, *grads):
        with grad_mode.no_grad():
            outputs = backward(ctx, *grads)
        if not grad_mode.state.enabled:
            return outputs
        if not any(isinstance(g, Tensor) and g._requires_grad for g in grads):
            return outputs
        is_tuple = isinstance(outputs, tuple)
        outputs = outputs if is_tuple else (outputs,)
        fakes = [o.detach().requires_grad_(True) if isinstance(o, Tensor) else o for o in outputs]
        tensors = [f for f in fakes if isinstance(f, Tensor)]
        guarded = iter(DelayedError.apply(
            "trying to differentiate twice a function that was marked with @once_differentiable", *tensors
        ))
        result = tuple(next(guarded) if isinstance(f, Tensor) else f for f in fakes)
        return result if is_tuple else result[0]

    return wrapper
