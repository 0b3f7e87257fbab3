"""Activation checkpointing: trade compute for memory by recomputing a segment's forward in backward.

``checkpoint(fn, *args, use_reentrant=False)`` keeps none of ``fn``'s intermediate activations for backward:
when the gradient arrives, ``fn`` runs again (with the random state it first saw, so dropout draws the same
mask) and the gradient flows through that recomputed graph. The gradients equal those without checkpointing.

- ``use_reentrant=False`` (PyTorch's recommendation): gradients reach every tensor ``fn`` uses that requires
  grad, its arguments and the parameters it reads alike, even when no argument requires grad. minitorch finds
  those tensors by running the first forward with the graph recorded and walking it (the graph is dropped when
  ``checkpoint`` returns, so the memory saved between forward and backward is PyTorch's); PyTorch uses
  saved-tensor hooks instead.
- ``use_reentrant=True`` (the default when omitted, with PyTorch's warning): the forward runs under
  ``no_grad``; only arguments carry the gradient out, so if none requires grad, nothing does (PyTorch's
  "None of the inputs have requires_grad=True" warning), and keyword arguments are refused.
"""

from __future__ import annotations

import warnings

from .. import random as _random
from ..autograd import Function, grad_mode
from ..autograd import backward as _backward
from ..autograd import grad as _grad
from ..autograd.graph import AccumulateGrad
from ..tensor import Tensor

__all__ = ["CheckpointError", "checkpoint", "checkpoint_sequential"]

_NO_REENTRANT_CHOICE = (
    "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in PyTorch 2.9, "
    "calling checkpoint without use_reentrant will raise an exception. use_reentrant=False is recommended, but "
    "if you need to preserve the current default behavior, you can pass use_reentrant=True. Refer to docs for "
    "more details on the differences between the two variants."
)


class CheckpointError(RuntimeError):
    """The recomputed forward differs from the first one (shapes or dtypes of its outputs)."""


# random state: the recomputation must draw what the first forward drew -----------------------------------------


def _rng_states() -> dict:
    """The streams a segment can draw from (meta tensors draw nothing, and its generator has no state)."""
    return {name: gen.get_state() for name, gen in _random._default_generators.items() if name != "meta"}


class _ForkedRng:
    """Run a block with the default generators set to ``states``, then put the current streams back."""

    def __init__(self, states: dict | None) -> None:
        self.states = states

    def __enter__(self) -> None:
        if self.states is not None:
            self.current = _rng_states()
            for name, state in self.states.items():
                _random._default_generators[name].set_state(state)

    def __exit__(self, *exc) -> None:
        if self.states is not None:
            for name, state in self.current.items():
                _random._default_generators[name].set_state(state)


# the recomputation --------------------------------------------------------------------------------------------


def _tensor_outputs(outputs) -> tuple:
    if isinstance(outputs, Tensor):
        return (outputs,)
    if isinstance(outputs, (tuple, list)):
        return tuple(o for o in outputs if isinstance(o, Tensor))
    raise TypeError(f"checkpoint: the function must return a Tensor or a tuple of them, got {type(outputs).__name__}")


def _rebuild(template, tensors: list):
    """``template``'s structure (a tensor, or a tuple/list with non-tensors) with its tensors taken in order."""
    if isinstance(template, Tensor):
        return tensors.pop(0)
    return type(template)(tensors.pop(0) if isinstance(o, Tensor) else o for o in template)


def _detached_like(args: tuple) -> tuple:
    """Each tensor argument as a fresh leaf with the same ``requires_grad`` (the segment's graph starts there)."""
    return tuple(a.detach().requires_grad_(a.requires_grad) if isinstance(a, Tensor) else a for a in args)


def _check_same(first: tuple, again: tuple) -> None:
    described = [(tuple(t.shape), t.dtype) for t in first]
    redone = [(tuple(t.shape), t.dtype) for t in again]
    if described != redone:
        raise CheckpointError(
            "torch.utils.checkpoint: Recomputed values have different metadata than during the forward pass: "
            f"{described} then {redone}"
        )


class CheckpointFunction(Function):
    """One node for the whole segment: its inputs are the tensors gradients must reach."""

    @staticmethod
    def forward(ctx, run, n_args: int, *inputs):
        ctx.run = run
        ctx.save_for_backward(*inputs[:n_args])
        outputs = run.first_outputs if run.first_outputs is not None else run.call(inputs[:n_args])
        detached = [t.detach() for t in _tensor_outputs(outputs)]
        run.described = tuple(detached)
        run.template = _rebuild(outputs, list(detached))  # the structure, without the first forward's graph
        return tuple(detached)

    @staticmethod
    def backward(ctx, *grad_outputs):
        run = ctx.run
        args = _detached_like(ctx.saved_tensors)
        with _ForkedRng(run.rng_states), grad_mode.enable_grad():
            outputs = _tensor_outputs(run.call(args))
        _check_same(run.described, outputs)
        pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o.requires_grad]
        arg_tensors = [a for a in args if isinstance(a, Tensor) and a.requires_grad]
        targets = arg_tensors + list(run.extra_leaves)
        if not pairs or not targets:
            return (None, None) + (None,) * (len(ctx.needs_input_grad) - 2)
        outs, grads = zip(*pairs)
        if run.reentrant:  # PyTorch's reentrant variant: a nested backward, accumulating into what fn reads
            _backward(outs, grads)
            arg_grads = [a.grad for a in arg_tensors]
            extra_grads: list = []
        else:
            found = _grad(outs, targets, grads, allow_unused=True, retain_graph=True)
            arg_grads, extra_grads = list(found[:len(arg_tensors)]), list(found[len(arg_tensors):])
        result = [None, None]
        for a in args:
            result.append(arg_grads.pop(0) if isinstance(a, Tensor) and a.requires_grad else None)
        return tuple(result + extra_grads)


class _Run:
    """How to call the segment again: the function, its keyword arguments and the random state it saw."""

    def __init__(self, function, kwargs: dict, reentrant: bool, rng_states: dict | None) -> None:
        self.function, self.kwargs, self.reentrant, self.rng_states = function, kwargs, reentrant, rng_states
        self.first_outputs = None
        self.extra_leaves: tuple = ()
        self.template = self.described = None

    def call(self, args: tuple):
        return self.function(*args, **self.kwargs)


def _leaves_reached(outputs: tuple, own_leaves: set) -> tuple:
    """The leaves that require grad which the recorded graph of ``outputs`` reaches, other than ``own_leaves``
    (``fn``'s parameters and captured tensors), in a stable order."""
    seen, found, stack = set(), [], [o.grad_fn for o in outputs if o.grad_fn is not None]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, AccumulateGrad):
            if id(node.variable) not in own_leaves:
                found.append(node.variable)
            continue
        stack.extend(next_node for next_node, _ in node.next_functions)
    return tuple(found)


def checkpoint(function, *args, use_reentrant: bool | None = None, context_fn=None, determinism_check: str = "default",
               debug: bool = False, preserve_rng_state: bool = True, **kwargs):
    """``function(*args, **kwargs)``, keeping none of its activations for backward (recomputed there instead)."""
    if use_reentrant is None:
        warnings.warn(_NO_REENTRANT_CHOICE, UserWarning, stacklevel=2)
        use_reentrant = True
    if use_reentrant and kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if context_fn is not None and use_reentrant:
        raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
    if determinism_check not in ("default", "none"):
        raise ValueError(f"determinism_check should be one of ['default', 'none'], but got {determinism_check}")
    if not grad_mode.state.enabled:  # nothing will be differentiated: nothing to save or recompute
        return function(*args, **kwargs)
    run = _Run(function, kwargs, use_reentrant, _rng_states() if preserve_rng_state else None)
    if use_reentrant:
        if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", UserWarning,
                          stacklevel=2)
        inputs = args
    else:
        leaves = _detached_like(args)
        first = function(*leaves, **kwargs)
        own = {id(a) for a in leaves if isinstance(a, Tensor)}
        run.extra_leaves = _leaves_reached(_tensor_outputs(first), own)
        run.first_outputs = first
        inputs = args + run.extra_leaves
    tensors = CheckpointFunction.apply(run, len(args), *inputs)
    run.first_outputs = None  # drop the first forward's graph: only the recomputation keeps activations
    return _rebuild(run.template, list(tensors))


def checkpoint_sequential(functions, segments: int, input, use_reentrant: bool | None = None, **kwargs):
    """Run ``functions`` (an ``nn.Sequential`` or a list of modules) in ``segments`` pieces, checkpointing all
    but the last."""
    if use_reentrant is None:
        warnings.warn(_NO_REENTRANT_CHOICE, UserWarning, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if hasattr(functions, "children") and not isinstance(functions, (list, tuple)):
        functions = list(functions.children())

    def run_function(start: int, end: int):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x

        return forward

    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_function(start, end), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run_function(end + 1, len(functions) - 1)(input)
