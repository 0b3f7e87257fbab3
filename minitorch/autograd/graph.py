"""The recorded graph: Nodes (``grad_fn``), their edges, saved tensors and hooks.

A Node is one recorded op. ``next_functions[i]`` is the edge ``(node, output_nr)`` along which
the gradient of the op's i-th input flows; a leaf's edge ends in its AccumulateGrad node. A Node
is also the ``ctx`` its op saved values on, so there is one object per recorded op.

This module is also PyTorch's ``torch.autograd.graph``: ``Node``, the saved-tensor hooks
(saved_hooks.py) and ``increment_version``.
"""

from __future__ import annotations

import itertools
import weakref

from .._dtype import float32
from ..tensor import Tensor, from_array
from . import grad_mode
from .anomaly import is_anomaly_enabled
from .saved_hooks import disable_saved_tensors_hooks, save_on_cpu, saved_tensors_hooks
from .saved_hooks import state as _hooks_state

__all__ = [
    "Node", "disable_saved_tensors_hooks", "increment_version", "save_on_cpu", "saved_tensors_hooks",
]

ERR_BACKWARD_TWICE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward."
)


class RemovableHandle:
    """Returned by ``register_hook``; ``remove()`` unregisters the hook."""

    __slots__ = ("_hooks", "id")
    _ids = itertools.count()

    def __init__(self, hooks: dict):
        self._hooks = hooks
        self.id = next(self._ids)

    def remove(self) -> None:
        self._hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def add_hook(hooks: dict | None, fn) -> tuple[dict, RemovableHandle]:
    hooks = {} if hooks is None else hooks
    handle = RemovableHandle(hooks)
    hooks[handle.id] = fn
    return hooks, handle


class Node:
    """A recorded operation in the backward graph."""

    __slots__ = (
        "next_functions",  # tuple of (Node | None, output_nr), one per forward input
        "_input_meta",  # per input: (shape, dtype) the gradient must have, or None
        "_saved",  # tuple of SavedTensor, or None once freed
        "_n_outputs",
        "__weakref__",
        "__dict__",  # op-specific attributes (dims, shapes) live here, and the rarely set fields below
    )
    # Rarely set, so class-level defaults (an instance stores its own only when it gets one):
    _pre_hooks = None  # {id: fn(grad_outputs) -> grad_outputs | None}
    _post_hooks = None  # {id: fn(grad_inputs, grad_outputs) -> grad_inputs | None}
    _tensor_pre_hooks = None  # {output_nr: {id: fn(grad) -> grad | None}} from Tensor.register_hook
    _retain_grad_tensors = None  # {output_nr: weakref to a tensor that called retain_grad()}
    _traceback = None  # forward stack, recorded under detect_anomaly
    _hooked = False  # whether any of the four hook fields above was ever set (the engine checks only this)
    # True for ops whose backward is plain arithmetic (+ - * / and Python numbers) on its grads and
    # saved values: the engine may then evaluate it on the raw arrays (first-order backward, no Tensors).
    array_derivative = False
    _arrays = False  # whether this recorded node does (Op._record decides: array_derivative, one dtype)
    _on_arrays = False  # set while the engine evaluates this node on arrays: saved_tensors gives arrays

    def __init__(self):
        self.next_functions = ()
        self._input_meta = ()
        self._saved = ()
        self._n_outputs = 1

    # identity -------------------------------------------------------------------------------
    def name(self) -> str:
        return type(self).__name__ + "Backward0"

    def __repr__(self) -> str:
        return f"<{self.name()} object at {hex(id(self))}>"

    @property
    def metadata(self) -> dict:
        return self.__dict__.setdefault("_metadata", {})

    # saved tensors ----------------------------------------------------------------------------
    @property
    def saved_tensors(self) -> tuple:
        saved = self._saved
        if saved is None:
            raise RuntimeError(ERR_BACKWARD_TWICE)
        if self._on_arrays:
            return saved_arrays(self)
        return tuple([s.unpack(self) if type(s) is SavedTensor or type(s) is PackedSavedTensor else s for s in saved])

    def release_saved(self) -> None:
        if self._saved:
            self._saved = None

    # whether release_saved is this one (the engine then releases inline: one call less per node)
    _releases_saved_only = True

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        cls._releases_saved_only = cls.release_saved is Node.release_saved

    # hooks ----------------------------------------------------------------------------------
    def register_prehook(self, fn) -> RemovableHandle:
        self._pre_hooks, handle = add_hook(self._pre_hooks, fn)
        self._hooked = True
        return handle

    def register_hook(self, fn) -> RemovableHandle:
        self._post_hooks, handle = add_hook(self._post_hooks, fn)
        self._hooked = True
        return handle

    # evaluation -----------------------------------------------------------------------------
    def _evaluate(self, *grad_outputs):
        """Gradients w.r.t. the inputs, one per entry of ``next_functions`` (the engine's call)."""
        raise NotImplementedError

    def wrap_grad(self, array, output_nr: int):
        """A gradient array for output ``output_nr`` as a Tensor on that output's device."""
        raise TypeError(f"{self.name()} does not take array gradients")

    def __call__(self, *grad_outputs):
        return self._evaluate(*grad_outputs)


def saved_arrays(node: Node) -> tuple:
    """``node.saved_tensors`` as the engine's array path reads them: the version check of ``SavedTensor.unpack``,
    then the bare arrays (numbers and None as saved)."""
    saved = node._saved
    if saved is None:
        raise RuntimeError(ERR_BACKWARD_TWICE)
    if len(saved) == 1 and type(s := saved[0]) is SavedTensor and s.tensor._storage.version == s.version:
        return (s.tensor._array,)  # (the common cases of one value, and of two, said quickly)
    if len(saved) == 2 and type(s := saved[0]) is SavedTensor and type(t := saved[1]) is SavedTensor and (
            s.tensor._storage.version == s.version and t.tensor._storage.version == t.version):
        return s.tensor._array, t.tensor._array
    arrays = []
    for s in saved:
        if type(s) is SavedTensor:
            tensor = s.tensor
            if tensor._storage.version != s.version:
                raise RuntimeError(_modified_message(tensor, node, s, tensor._storage.version))
            s = tensor._array
        elif type(s) is PackedSavedTensor:
            s = s.unpack(node)._array
        arrays.append(s)
    return tuple(arrays)


class AccumulateGrad(Node):
    """The sink of a leaf tensor: adds the arriving gradient into ``variable.grad``."""

    __slots__ = ("variable",)

    def __init__(self, variable):
        super().__init__()
        self.variable = variable
        dtype = variable.dtype
        if getattr(dtype, "is_quantized", False):  # a quantized leaf's gradient is float32 (straight-through)
            dtype = float32
        self._input_meta = ((variable._array.shape, dtype),)

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"  # PyTorch's name (the class is AccumulateGrad)

    def __repr__(self) -> str:
        return f"<AccumulateGrad object at {hex(id(self))}>"

    def _evaluate(self, grad):  # the engine accumulates (it knows about create_graph and aliasing)
        return ()

    def wrap_grad(self, array, output_nr: int):
        storage = self.variable._storage
        return from_array(array, storage.backend, storage.device)


def accumulate_grad_node(leaf) -> AccumulateGrad:
    """The leaf's AccumulateGrad, shared by every op that uses the leaf while the graph lives."""
    meta = leaf._autograd_meta()
    node = meta.accumulator() if meta.accumulator is not None else None
    if node is None:
        node = AccumulateGrad(leaf)
        meta.accumulator = weakref.ref(node)
    return node


def edge_of(tensor) -> tuple:
    """The edge a gradient for ``tensor`` flows along: its grad_fn, or its AccumulateGrad."""
    meta = tensor._meta
    # (a view's grad_fn is read through the property, which refreshes a stale one)
    node = tensor._grad_fn if meta is None or meta.base is None else tensor.grad_fn
    if node is not None:
        return (node, tensor._output_nr)
    if tensor._requires_grad:
        node = meta.accumulator() if meta is not None and meta.accumulator is not None else None  # (alive)
        return (accumulate_grad_node(tensor) if node is None else node, 0)
    return (None, 0)


class SavedTensor:
    """A tensor an op keeps for backward, with the storage version it had when saved.

    An op's own output is kept as a detached alias (the node must not hold its output, which holds
    the node); unpacking re-attaches the node so double backward sees the output's history. An
    output written in place into a view unpacks with the view's history instead (``history``: the
    view's grad_fn and output_nr after the write, PyTorch's is_inplace_on_view), since the node's
    own edge is owned by the base's CopySlices.
    """

    __slots__ = ("tensor", "version", "output_nr", "history")

    def __init__(self, tensor, output_nr: int | None = None):
        if output_nr is not None:
            tensor = tensor._alias()
        elif tensor._meta is not None and tensor._meta.is_inference:
            raise RuntimeError(
                "Inference tensors cannot be saved for backward. Please do not use Tensors created "
                "in inference mode in computation tracked by autograd. To work around this, you can "
                "make a clone to get a normal tensor and use it in autograd, or use "
                "`torch.no_grad()` instead of `torch.inference_mode()`."
            )
        self.tensor = tensor
        self.version = tensor._storage.version
        self.output_nr = output_nr
        self.history = None

    def unpack(self, owner: Node):
        tensor = self.tensor
        current = tensor._storage.version
        if current != self.version:
            raise RuntimeError(_modified_message(tensor, owner, self, current))
        if self.output_nr is None:
            return tensor
        alias = tensor._alias()
        alias._grad_fn, alias._output_nr = self.history or (owner, self.output_nr)
        alias._requires_grad = True
        return alias


def _modified_message(tensor, owner: Node, saved: SavedTensor, current: int) -> str:
    shape = list(tensor._array.shape)
    produced_by = tensor.grad_fn if saved.output_nr is None else owner
    output_nr = tensor._output_nr if saved.output_nr is None else saved.output_nr
    # PyTorch names the forward op here (``Exp``, not ``ExpBackward0``)
    name = produced_by.name().rstrip("0123456789").removesuffix("Backward") if produced_by is not None else ""
    which = f", which is output {output_nr} of {name}," if produced_by is not None else ""
    if is_anomaly_enabled():
        hint = (
            "Hint: the backtrace further above shows the operation that failed to compute its "
            "gradient. The variable in question was changed in there or anywhere later. Good luck!"
        )
    else:
        hint = (
            "Hint: enable anomaly detection to find the operation that failed to compute its "
            "gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False)."
        )
    return (
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: [{tensor.type()} {shape}]{which} is at version {current}; expected version "
        f"{saved.version} instead. {hint}"
    )


# saved-tensor hooks ---------------------------------------------------------------------------------------------

_PACK_MODIFIED_INPUT = (
    "A saved tensor pack hook is modifying its input in place. Tensors provided as input to pack hook cannot be "
    "modified by in-place operations as this can lead to unexpected side-effects. Please open an issue if you need "
    "to perform in-place operations on the input to a pack hook."
)


class PackedSavedTensor:
    """A saved tensor kept as what the pack hook returned (``saved_tensors_hooks``), not as the tensor.

    Unpacking calls the unpack hook and gives its result the saved tensor's history: the node's own edge for an
    output, the input's grad_fn (or its leaf's AccumulateGrad) otherwise, so double backward reaches the same
    graph. There is no version check, as in PyTorch: the graph no longer holds the tensor to compare.
    """

    __slots__ = ("packed", "unpack_hook", "output_nr", "history")

    def __init__(self, entry: SavedTensor, original, hooks: tuple) -> None:
        pack_hook, self.unpack_hook = hooks
        self.output_nr = entry.output_nr
        self.history = entry.history if entry.output_nr is not None else edge_of(original)
        version = original._version
        with grad_mode.no_grad():
            self.packed = pack_hook(original)
        if original._version != version:
            raise RuntimeError(_PACK_MODIFIED_INPUT)

    def unpack(self, owner: Node):
        tensor = self.unpack_hook(self.packed)
        if not isinstance(tensor, Tensor):
            raise TypeError(
                f"Output of saved tensor unpack_hook expected to be a Tensor but got result of type "
                f"{type(tensor).__name__}"
            )
        alias = tensor._alias()
        if self.output_nr is None:
            node, output_nr = self.history
        else:
            node, output_nr = self.history or (owner, self.output_nr)
        if type(node) is AccumulateGrad:  # a leaf: gradients through the alias reach the leaf's .grad
            alias._autograd_meta().accumulator = weakref.ref(node)
            alias._requires_grad = True
        elif node is not None:
            alias._grad_fn, alias._output_nr = node, output_nr
            alias._requires_grad = True
        return alias


class _DeferredPacking:
    """Stands in for the hooks while an in-place op runs: the nodes recorded are packed after the write."""

    __slots__ = ("hooks", "pending")

    def __init__(self, hooks: tuple) -> None:
        self.hooks, self.pending = hooks, []


def pack_saved(node: Node, outputs: tuple | None) -> None:
    """Hand each tensor ``node`` saved to this thread's pack hook, if any, in the order saved (the one call
    ops make when ``saved_hooks.active``). ``outputs``: the node's outputs, which the pack hook receives for
    its saved outputs; None: rebuild them from the saved aliases."""
    hooks = _hooks_state.hooks
    if hooks is None:  # hooks are active in another thread only
        return
    if type(hooks) is _DeferredPacking:
        hooks.pending.append(node)
        return
    saved = node._saved
    if saved:
        node._saved = tuple(
            PackedSavedTensor(s, _original(node, s, outputs), hooks) if type(s) is SavedTensor else s for s in saved
        )


def _original(node: Node, entry: SavedTensor, outputs: tuple | None):
    if entry.output_nr is None:
        return entry.tensor
    if outputs is not None:
        return outputs[entry.output_nr]
    tensor = entry.tensor._alias()
    tensor._grad_fn, tensor._output_nr = entry.history or (node, entry.output_nr)
    tensor._requires_grad = True
    return tensor


def packing_after(run):
    """``run()`` (an in-place op: the out-of-place op, then the write into ``self``) with the packing of what it
    saves held back until the write is done: the pack hook then sees the saved copy of an overwritten input and
    the written output, what PyTorch's in-place kernels save."""
    hooks = _hooks_state.hooks
    deferred = _hooks_state.hooks = _DeferredPacking(hooks)
    try:
        result = run()
    finally:
        _hooks_state.hooks = hooks
    for node in deferred.pending:
        pack_saved(node, None)
    return result


def increment_version(tensor) -> None:
    """Bump the version counter of ``tensor`` (or of each tensor in an iterable), as an in-place write would:
    for code that writes a tensor's memory behind autograd's back."""
    for t in (tensor,) if isinstance(tensor, Tensor) else tensor:
        t._bump_version()
