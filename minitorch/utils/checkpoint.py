"""Activation checkpointing: trade compute for memory by recomputing a segment's forward in backward.

``checkpoint(fn, *args, use_reentrant=False)`` keeps none of the tensors ``fn``'s ops save for backward:
when backward first needs one, ``fn`` runs again (with the random state it first saw, so dropout draws the
same mask) and the recomputed values are handed to the original graph. The gradients equal those without
checkpointing.

- ``use_reentrant=False`` (PyTorch's recommendation), built on saved-tensor hooks as in PyTorch: during the
  forward, the pack hook replaces each saved tensor by an empty holder (the activations are freed as soon as
  nothing else uses them); the first unpack in a backward reruns ``fn`` under a second pair of hooks that
  fill the holders, and stops as soon as the last one is filled (early stop). The outputs keep the graph of
  the first forward, so gradients reach everything ``fn`` used (arguments, parameters, captured tensors),
  ``autograd.grad`` and double backward work, and a recomputation that saves tensors of other shapes, dtypes
  or devices (or a different number of them) raises ``CheckpointError``.
- ``use_reentrant=True`` (the default when omitted, with PyTorch's warning): one custom Function runs
  ``fn`` under ``no_grad``; its backward recomputes ``fn`` with grad enabled and runs a nested backward
  through it. Only arguments carry gradients out, keyword arguments are refused, and it cannot be used with
  ``autograd.grad`` or ``backward(inputs=...)``.
"""

from __future__ import annotations

import contextlib
import itertools
import warnings
import weakref
from collections import defaultdict

from .. import random as _random
from ..amp import autocast, get_autocast_dtype, is_autocast_enabled
from ..autograd import Function, grad_mode
from ..autograd import backward as _backward
from ..autograd.engine import graph_task
from ..autograd.graph import PackedSavedTensor, SavedTensor, saved_tensors_hooks
from ..autograd.saved_hooks import state as _hooks_state
from ..tensor import Tensor

__all__ = [
    "CheckpointError", "checkpoint", "checkpoint_sequential", "noop_context_fn", "set_checkpoint_debug_enabled",
    "set_checkpoint_early_stop",
]

_NO_REENTRANT_CHOICE = (
    "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in PyTorch 2.9, "
    "calling checkpoint without use_reentrant will raise an exception. use_reentrant=False is recommended, but "
    "if you need to preserve the current default behavior, you can pass use_reentrant=True. Refer to docs for "
    "more details on the differences between the two variants."
)
_SEQUENTIAL_NO_REENTRANT_CHOICE = (
    "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be passed explicitly. In "
    "version 2.9 we will raise an exception if use_reentrant is not passed. use_reentrant=False is recommended, "
    "but if you need to preserve the current default behavior, you can pass use_reentrant=True. Refer to docs "
    "for more details on the differences between the two variants."
)


_DEBUG_TIP = (
    "\n\nTip: To see a more detailed error message, either pass `debug=True` to "
    "`torch.utils.checkpoint.checkpoint(...)` or wrap the code block with "
    "`with torch.utils.checkpoint.set_checkpoint_debug_enabled(True):` to enable checkpoint-debug mode globally."
)


class CheckpointError(RuntimeError):
    """The recomputation did not save what the first forward saved (non-reentrant checkpoint)."""


# random and autocast state: the recomputation must run as the first forward did ---------------------------------


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


def _autocast_states() -> list:
    """The autocast setting of each device type where it is on (the recomputation runs under the same)."""
    return [(device, get_autocast_dtype(device)) for device in ("cpu", "cuda") if is_autocast_enabled(device)]


def _forward_conditions(preserve_rng_state: bool):
    """A function that enters, in a recomputation, the random state and autocast the forward saw."""
    rng = _rng_states() if preserve_rng_state else None
    casts = _autocast_states()

    def conditions() -> contextlib.ExitStack:
        stack = contextlib.ExitStack()
        stack.enter_context(_ForkedRng(rng))
        stack.enter_context(autocast("cpu", enabled=False))  # off unless the forward had it on
        for device, dtype in casts:
            stack.enter_context(autocast(device, dtype=dtype))
        return stack

    return conditions


# debugging and early stop switches ------------------------------------------------------------------------------

_early_stop_override: bool | None = None
_debug_override: bool | None = None


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool):
    """Checkpoints whose forward runs inside stop (or, with False, do not stop) their recomputation as soon as
    every tensor the backward needs is recomputed, whatever their ``early_stop`` argument."""
    global _early_stop_override
    previous, _early_stop_override = _early_stop_override, enable
    try:
        yield
    finally:
        _early_stop_override = previous


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled: bool | None):
    """Checkpoints inside behave as with ``debug=enabled`` (None: as their own argument says)."""
    global _debug_override
    previous, _debug_override = _debug_override, enabled
    try:
        yield
    finally:
        _debug_override = previous


# non-reentrant: saved-tensor hooks ------------------------------------------------------------------------------


class _Holder:
    """What the graph keeps instead of a saved tensor: per backward (graph task id), a handle to the
    recomputed value (None once handed out)."""

    __slots__ = ("handles", "__weakref__")

    def __init__(self) -> None:
        self.handles: dict = {}


class _Handle:
    __slots__ = ("__weakref__",)


class _StopRecomputation(Exception):
    """Raised by the recomputation's pack hook once every holder is filled (early stop)."""


def _default_metadata(x: Tensor) -> dict:
    return {"shape": x.shape, "dtype": x.dtype, "device": x.device}


_METADATA = {"default": _default_metadata, "none": lambda _: None}
_outside_backward_ids = itertools.count(-2, -1)  # unpacking outside a backward (ctx.saved_tensors by hand)


class _Frame:
    """One checkpointed call: its inputs, how to run it again, and the holders its saved tensors became."""

    def __init__(self, recompute, early_stop: bool, metadata_fn, debug: bool) -> None:
        self.recompute = recompute
        self.early_stop = early_stop
        self.metadata_fn = metadata_fn
        self.weak_holders: list = []  # one per tensor saved in the forward, in order
        self.metadata: list = []
        self.saved_by: list | None = [] if debug else None  # debug: which op saved each tensor
        self.recomputed_by: dict = defaultdict(list)
        self.recomputed: dict = defaultdict(weakref.WeakKeyDictionary)  # graph task -> {handle: tensor}
        self.counter: dict = defaultdict(int)  # graph task -> tensors saved so far by its recomputation
        self.done: set = set()  # graph tasks whose recomputation ran
        self.forward_completed = False
        self.ignore_mismatch = False
        self.inputs: list = []

    def save_inputs(self, args: tuple) -> None:
        """The arguments, kept for the recomputation as an op keeps its inputs (version-checked; through the
        saved-tensor hooks active around the checkpoint, if any)."""
        hooks = _hooks_state.hooks
        saved = []
        for a in args:
            if isinstance(a, Tensor):
                a = SavedTensor(a)
                if hooks is not None:
                    a = PackedSavedTensor(a, a.tensor, hooks)
            saved.append(a)
        self.inputs = saved

    def get_inputs(self) -> list:
        return [a.unpack(None) if isinstance(a, (SavedTensor, PackedSavedTensor)) else a for a in self.inputs]

    # the forward's hooks
    def pack(self, x: Tensor) -> _Holder:
        holder = _Holder()
        self.weak_holders.append(weakref.ref(holder))
        with grad_mode.no_grad():
            self.metadata.append(self.metadata_fn(x))
        if self.saved_by is not None:
            self.saved_by.append(_describe(x))
        return holder

    def unpack(self, holder: _Holder) -> Tensor:
        task = graph_task.id if graph_task.id != -1 else next(_outside_backward_ids)
        if task not in self.done:
            self._recompute(task)
        handle = holder.handles.get(task)
        if handle is None:
            raise CheckpointError(
                "torch.utils.checkpoint: Unpack is being triggered for a tensor that was already unpacked once. "
                "If you are calling ctx.saved_tensors in backward, make sure to do so only once. Otherwise please "
                "open an issue with details on your use case."
            )
        holder.handles[task] = None
        return self.recomputed[task][handle]

    def _recompute(self, task: int) -> None:
        args = self.get_inputs()
        try:
            with saved_tensors_hooks(_RecomputationPack(self, task), _identity), grad_mode.enable_grad():
                self.recompute(*args)
        except _StopRecomputation:
            pass
        self.done.add(task)
        self._check_recomputed(task)

    def _check_recomputed(self, task: int) -> None:
        if self.ignore_mismatch:
            return
        if self.counter[task] != len(self.weak_holders):
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved during the original forward and "
                f"recomputation.\nNumber of tensors saved during forward: {len(self.weak_holders)}\n"
                f"Number of tensors saved during recomputation: {self.counter[task]}." + self._debug_log(task)
            )
        different = ""
        for index, weak in enumerate(self.weak_holders):
            holder = weak()
            if holder is None:
                continue
            recomputed = self.metadata_fn(self.recomputed[task][holder.handles[task]])
            if recomputed != self.metadata[index]:
                different += (f"tensor at position {index}:\nsaved metadata: {self.metadata[index]}\n"
                              f"recomputed metadata: {recomputed}\n")
        if different:
            raise CheckpointError(
                "torch.utils.checkpoint: Recomputed values for the following tensors have different metadata than "
                f"during the forward pass.\n{different}" + self._debug_log(task)
            )

    def _debug_log(self, task: int) -> str:
        if self.saved_by is None:
            return _DEBUG_TIP
        return ("\nTensors saved during the original forward (saved by):\n  " + "\n  ".join(self.saved_by)
                + "\nTensors saved during the recomputation:\n  " + "\n  ".join(self.recomputed_by[task]))


def _describe(x: Tensor) -> str:
    producer = x.grad_fn.name() if x.grad_fn is not None else "an input or leaf"
    return f"{producer}: shape {list(x.shape)}, {x.dtype}, {x.device}"


def _identity(x):
    return x


class _RecomputationPack:
    """The pack hook of a recomputation: each tensor saved fills the next holder of the frame."""

    def __init__(self, frame: _Frame, task: int) -> None:
        self.frame, self.task = weakref.ref(frame), task

    def __call__(self, x: Tensor) -> Tensor:
        frame, task = self.frame(), self.task
        x = x.detach() if x.requires_grad else x
        index = frame.counter[task]
        frame.counter[task] += 1
        if frame.saved_by is not None:
            frame.recomputed_by[task].append(_describe(x))
        if index >= len(frame.weak_holders):
            if not frame.forward_completed:  # a grad computed inside the checkpointed function
                frame.ignore_mismatch = True
                return x
            raise CheckpointError(
                "torch.utils.checkpoint: trying to save more tensors during recomputation than during the "
                "original forward pass." + frame._debug_log(task)
            )
        holder = frame.weak_holders[index]()
        if holder is not None:  # (the graph may have freed this saved tensor already)
            handle = holder.handles[task] = _Handle()
            frame.recomputed[task][handle] = x
        if frame.early_stop and frame.counter[task] == len(frame.weak_holders):
            raise _StopRecomputation
        return x


def noop_context_fn():
    """The default ``context_fn``: no extra context around the forward or the recomputation."""
    return contextlib.nullcontext(), contextlib.nullcontext()


def _checkpoint_without_reentrant(function, args, kwargs, preserve_rng_state, context_fn, determinism_check,
                                  debug, early_stop):
    if determinism_check not in _METADATA:
        raise ValueError(
            f"determinism_check should be one of {list(_METADATA)}, but got {determinism_check}"
        )
    debug = _debug_override if _debug_override is not None else debug
    if debug and context_fn is not noop_context_fn:
        raise ValueError("debug=True is incompatible with non-default context_fn")
    forward_context, recompute_context = context_fn()
    conditions = _forward_conditions(preserve_rng_state)

    def recompute(*inputs):
        with conditions(), recompute_context:
            function(*inputs, **kwargs)

    if not grad_mode.state.enabled:  # nothing will be differentiated: nothing to save or recompute
        return function(*args, **kwargs)
    stop = _early_stop_override if _early_stop_override is not None else early_stop
    frame = _Frame(recompute, stop, _METADATA[determinism_check], debug)
    frame.save_inputs(args)
    with saved_tensors_hooks(frame.pack, frame.unpack), forward_context:
        outputs = function(*args, **kwargs)
    frame.forward_completed = True
    return outputs


# reentrant: one custom Function ---------------------------------------------------------------------------------


class CheckpointFunction(Function):
    """The reentrant variant: ``fn`` runs without a graph; backward reruns it and backpropagates through it."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", UserWarning,
                          stacklevel=3)
        ctx.run_function = run_function
        ctx.conditions = _forward_conditions(preserve_rng_state)
        ctx.inputs = [None if isinstance(a, Tensor) else a for a in args]
        ctx.save_for_backward(*(a for a in args if isinstance(a, Tensor)))
        with grad_mode.no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grad_outputs):
        if graph_task.towards_inputs:
            raise RuntimeError(
                "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or passing an "
                "`inputs` parameter to .backward(). To resolve this error, you can either set use_reentrant=False, "
                "or call .backward() without passing the `inputs` argument."
            )
        tensors = iter(ctx.saved_tensors)
        inputs = [next(tensors) if a is None else a for a in ctx.inputs]
        detached = [a.detach().requires_grad_(a.requires_grad) if isinstance(a, Tensor) else a for a in inputs]
        with ctx.conditions(), grad_mode.enable_grad():
            outputs = ctx.run_function(*detached)
        outputs = (outputs,) if isinstance(outputs, Tensor) else outputs
        pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if isinstance(o, Tensor) and o.requires_grad]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        _backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None) + tuple(a.grad if isinstance(a, Tensor) else None for a in detached)


# the public functions -------------------------------------------------------------------------------------------


def checkpoint(function, *args, use_reentrant: bool | None = None, context_fn=noop_context_fn,
               determinism_check: str = "default", debug: bool = False, early_stop: bool = True,
               preserve_rng_state: bool = True, **kwargs):
    """``function(*args, **kwargs)``, keeping none of its activations for backward (recomputed there instead)."""
    if use_reentrant is None:
        warnings.warn(_NO_REENTRANT_CHOICE, UserWarning, stacklevel=2)
        use_reentrant = True
    if use_reentrant:
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
        if context_fn is not noop_context_fn or debug:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        return CheckpointFunction.apply(function, preserve_rng_state, *args)
    return _checkpoint_without_reentrant(function, args, kwargs, preserve_rng_state, context_fn,
                                         determinism_check, debug, early_stop)


def checkpoint_sequential(functions, segments: int, input, use_reentrant: bool | None = None, **kwargs):
    """Run ``functions`` (an ``nn.Sequential`` or a list of modules/functions) in ``segments`` pieces,
    checkpointing all but the last."""
    if use_reentrant is None:
        warnings.warn(_SEQUENTIAL_NO_REENTRANT_CHOICE, UserWarning, stacklevel=2)
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
