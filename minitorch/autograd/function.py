"""Custom differentiable operations: ``class MyOp(Function)`` with forward/backward staticmethods.

As in PyTorch, the ``ctx`` that forward saves values on is the graph node itself (an instance of
``MyOpBackward``), and backward receives one gradient per forward output.
"""

from __future__ import annotations

import functools

from . import grad_mode
from .graph import Node, SavedTensor, edge_of


class FunctionCtx:
    """What ``forward`` may call on ``ctx``."""

    __slots__ = ()

    def save_for_backward(self, *tensors) -> None:
        self.to_save = tensors

    def mark_dirty(self, *tensors) -> None:
        self.dirty_tensors = tensors

    def mark_non_differentiable(self, *tensors) -> None:
        self.non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        self.materialize_grads = value


class BackwardCFunction(FunctionCtx, Node):
    """The node of a custom Function: runs the user's backward."""

    _forward_cls = None

    def name(self) -> str:
        return type(self).__name__

    @property
    def saved_tensors(self) -> tuple:
        return Node.saved_tensors.fget(self)

    def _evaluate(self, *grads):
        if getattr(self, "materialize_grads", True):
            from ..creation import zeros

            grads = tuple(
                g if g is not None else zeros(shape, dtype=dtype, device=device)
                for g, (shape, dtype, device) in zip(grads, self.output_meta)
            )
        result = self._forward_cls.backward(self, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        expected = len(self.next_functions)
        if len(result) > expected and all(r is None for r in result[expected:]):
            result = result[:expected]
        if len(result) != expected:
            raise RuntimeError(
                f"function {self.name()} returned an incorrect number of gradients (expected {expected}, got {len(result)})"
            )
        return result


class FunctionMeta(type):
    """Gives each Function subclass its own node class, named like PyTorch's (``MyOpBackward``)."""

    def __init__(cls, name, bases, attrs):
        cls._backward_cls = type(name + "Backward", (BackwardCFunction,), {"_forward_cls": cls})
        super().__init__(name, bases, attrs)


class Function(metaclass=FunctionMeta):
    """Subclass with ``forward(ctx, *args)`` and ``backward(ctx, *grad_outputs)``; call ``.apply``."""

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom autograd.Function to use it with backward mode AD.")

    vjp = backward

    @classmethod
    def apply(cls, *args, **kwargs):
        from ..tensor import Tensor

        ctx = cls._backward_cls()
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a._requires_grad for a in args)
        record = grad_mode.state.enabled and any(ctx.needs_input_grad)
        uses_setup_context = cls.setup_context is not Function.setup_context
        with grad_mode.no_grad():
            if uses_setup_context:
                outputs = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, outputs)
            else:
                outputs = cls.forward(ctx, *args, **kwargs)
        is_tuple = isinstance(outputs, tuple)
        outputs = outputs if is_tuple else (outputs,)
        outputs = _finish_outputs(ctx, args, outputs, record)
        return outputs if is_tuple else outputs[0]


def _finish_outputs(ctx, args, outputs, record):
    from ..tensor import Tensor

    dirty = getattr(ctx, "dirty_tensors", ())
    for t in dirty:
        if not any(t is a for a in args):
            raise RuntimeError("mark_dirty: only input tensors can be marked dirty")
        t._bump_version()
    non_diff = getattr(ctx, "non_differentiable", ())
    finished = []
    for out in outputs:
        if isinstance(out, Tensor) and any(out is a for a in args) and not any(out is d for d in dirty):
            out = out._alias()  # an input returned as-is becomes a new tensor sharing its storage
            out._autograd_meta().creation = "custom_function"
        finished.append(out)
    if not record:
        return tuple(finished)
    ctx.next_functions = tuple(edge_of(a) if isinstance(a, Tensor) else (None, 0) for a in args)
    ctx._input_meta = tuple(
        (a._array.shape, a.dtype) if isinstance(a, Tensor) and a._requires_grad else None for a in args
    )
    ctx._n_outputs = len(finished)
    ctx.output_meta = tuple(
        (o._array.shape, o.dtype, o.device) if isinstance(o, Tensor) else ((), None, None) for o in finished
    )
    for i, out in enumerate(finished):
        if not isinstance(out, Tensor):
            continue
        if any(out is t for t in non_diff) or not out.dtype.is_floating_point:
            out._requires_grad = False
            continue
        out.grad_fn = ctx
        out._output_nr = i
        out._requires_grad = True
    saved = []
    for t in getattr(ctx, "to_save", ()):
        if t is None or not isinstance(t, Tensor):
            saved.append(t)
            continue
        nr = next((i for i, o in enumerate(finished) if o is t), None)
        if nr is not None and t.grad_fn is ctx:
            saved.append(SavedTensor(t, nr))
        else:
            saved.append(SavedTensor(t))
    ctx._saved = tuple(saved)
    if hasattr(ctx, "to_save"):
        del ctx.to_save
    return tuple(finished)


def once_differentiable(backward):
    """Run backward without recording, for backward code that is not itself differentiable."""

    @functools.wraps(backward)
    def wrapper(ctx, *grads):
        with grad_mode.no_grad():
            return backward(ctx, *grads)

    return wrapper
