"""The tracer: records the ops a function's first call runs, as steps on numbered values (slots).

It sees the function through three narrow hooks (``Op._tracer`` in dispatch, the factories and the places a
tensor's values reach Python, via ``_trace_state``), while the call itself runs eagerly as usual, so the first
call's results are the eager ones whatever happens. Each tensor an op reads must be accounted for: an input of
the call, a parameter or buffer the tracer can find again (an "external"), a constant made by a factory from
Python values, or the output of a recorded step. Anything else - a tensor from an untraced function, a value
read into Python (``.item()``, ``bool(t)``, printing), an in-place write the trace did not see (a changed
version counter) - is a graph break: the trace stops, the call finishes eagerly, and the plan for these
guards is "run eagerly" with the reason.
"""

from __future__ import annotations

import builtins
import dataclasses
from typing import Any

from .. import _trace_state
from ..autograd.graph import SavedTensor
from ..ops.op import Op
from ..storage import Storage
from ..tensor import Tensor, view_requires_grad
from .errors import Unsupported


class GraphBreak(Exception):
    """Raised inside the tracer when it must stop (caught there; the call goes on eagerly)."""


@dataclasses.dataclass
class Slot:
    """One value of the trace: where it comes from and what it looked like."""

    kind: str  # "input", "external", "const" or "step"
    tensor: Any  # the traced Tensor (kept alive while tracing, so ids stay unique)
    version: int
    source: Any = None  # input: position; external: (getter, name); step: (step index, output nr)
    requires_grad: bool = False
    grad_fn: Any = None


@dataclasses.dataclass
class Step:
    """One recorded op call: ``cls.apply(*args, **params)`` with tensor args read from slots."""

    cls: type
    args: tuple  # the call's arguments, Tensors replaced by ("slot", i) markers (see ``arg_slots``)
    arg_slots: tuple  # (position, slot) for every Tensor argument
    params: dict
    outputs: tuple  # slots of the outputs
    node: Any = None  # the graph node eager dispatch recorded (None: no gradient through this call)
    views: tuple = ()  # per output: None, or (input position, span, size, stride, delta) for a view of an input
    extras: dict = dataclasses.field(default_factory=dict)  # node attributes set outside forward (views)
    saved: tuple = ()  # how to rebuild node._saved: ("arg", i) | ("out", k) | ("value", v) | None


class Detach:
    """The step ``t.detach()`` records: a view of the same geometry, without history."""

    row_major_output = False


class Tracer:
    """Records one call. ``externals`` maps ``id(tensor)`` to ``(tensor, getter, name)`` for the tensors the
    call may read without receiving them (the module's parameters and buffers, tensors of its closure)."""

    def __init__(self, externals: dict, fullgraph: bool):
        self.externals = externals
        self.fullgraph = fullgraph
        self.slots: list[Slot] = []
        self.by_id: dict[int, int] = {}
        self.steps: list[Step] = []
        self.break_reason: str | None = None
        self.ops_seen = 0
        self.eager_views: dict = {}  # output slot -> (input slot, view steps): made again by eager views
        self._print = None
        self._version = None

    # starting and stopping -------------------------------------------------------------------
    def start(self) -> None:
        Op._tracer = self
        _trace_state.tracer = self
        self._watch_writes()
        self._print = original = builtins.print
        tracer = self

        def traced_print(*args, **kwargs):
            tracer.graph_break("print() (a Python side effect the plan cannot replay)")
            return original(*args, **kwargs)

        builtins.print = traced_print

    def stop(self) -> None:
        Op._tracer = None
        _trace_state.tracer = None
        if self._version is not None:
            Storage.version = self._version
            self._version = None
        if self._print is not None:
            builtins.print = self._print
            self._print = None

    def _watch_writes(self) -> None:
        """Every version bump while tracing reaches ``written`` (the slot descriptor of ``Storage.version`` is
        wrapped for the trace only): a write into memory that existed before the call - a parameter updated by an
        optimizer on its arrays, an input written in place - is seen even when no op of the trace reads it."""
        self._version = original = Storage.__dict__["version"]
        tracer = self

        class WatchedVersion:
            def __get__(self, storage, owner=None):
                return original if storage is None else original.__get__(storage, owner)

            def __set__(self, storage, value):
                try:
                    original.__get__(storage, Storage)
                except AttributeError:  # Storage.__init__ setting the first version: a new buffer, no write
                    original.__set__(storage, value)
                    return
                original.__set__(storage, value)
                tracer.written(storage)

        Storage.version = WatchedVersion()

    def written(self, storage) -> None:
        if self.break_reason is not None:
            return
        kinds = {slot.kind for slot in self.slots if slot.tensor._storage is storage}
        if kinds == {"step"}:
            return  # an intermediate's memory: a later read of it sees the new version and breaks then
        self.graph_break("an in-place write to a tensor that existed before the call or was not made by a traced op "
                         "(an optimizer step, copy_, an in-place op on an input or parameter)")

    def graph_break(self, reason: str) -> None:
        """Stop tracing; the rest of the call runs eagerly. With ``fullgraph=True`` raise instead."""
        if self.break_reason is None:
            self.break_reason = reason
        self.stop()
        if self.fullgraph:
            raise Unsupported(f"torch.compile(fullgraph=True): graph break: {reason}")

    # values ------------------------------------------------------------------------------------
    def add_slot(self, kind: str, tensor, source=None) -> int:
        version = tensor._storage.version
        self.slots.append(Slot(kind, tensor, version, source, requires_grad_of(tensor), tensor._grad_fn))
        index = len(self.slots) - 1
        self.by_id[id(tensor)] = index
        return index

    def input(self, tensor, position) -> int:
        known = self.by_id.get(id(tensor))
        return known if known is not None else self.add_slot("input", tensor, position)

    def slot_of(self, t) -> int:
        """The slot of a tensor an op reads, or a graph break explaining why it has none."""
        if not t._dense:
            raise GraphBreak(f"a {t._kind} tensor (only strided tensors are compiled)")
        index = self.by_id.get(id(t))
        if index is None:
            entry = self.externals.get(id(t))
            if entry is not None and entry[0] is t:
                return self.add_slot("external", t, entry[1:])
            if t._grad_fn is not None:
                raise GraphBreak(f"a tensor made outside the traced ops (grad_fn {t._grad_fn.name()}): a custom "
                                 "autograd.Function or an op the tracer does not see")
            raise GraphBreak(f"a tensor {list(t.shape)} of unknown origin (not an input, a parameter or buffer of "
                             "the module, a tensor of the function's closure, a factory result or an op output)")
        slot = self.slots[index]
        if slot.tensor is not t:
            raise GraphBreak("a tensor id was reused while tracing")
        if t._storage.version != slot.version:
            raise GraphBreak(f"an in-place write to a tensor {list(t.shape)} that the trace did not record")
        if t._grad_fn is not slot.grad_fn:
            raise GraphBreak("a traced tensor's history was rewritten outside the traced ops (autograd.Function?)")
        if requires_grad_of(t) != slot.requires_grad:
            raise GraphBreak("requires_grad of a traced tensor was changed outside the traced ops")
        return index

    # hooks ----------------------------------------------------------------------------------------
    def backward_called(self) -> None:
        self.graph_break("backward() or autograd.grad() inside the function (compile the forward and loss; "
                         "backward() on a compiled output replays the recorded backward)")

    def data_read(self, tensor, what: str) -> None:
        self.graph_break(f"{what} reads a tensor's values into Python (data-dependent code cannot be replayed)")

    def detached(self, tensor, alias) -> None:
        if Op._tracer is not self or id(tensor) not in self.by_id:  # inside an op, or of an untraced tensor
            return
        try:
            slot = self.slot_of(tensor)
        except GraphBreak as exc:
            self.graph_break(str(exc))
            return
        geometry = self._view_geometry(alias, (tensor,), ((0, slot),))
        step = Step(Detach, (None,), ((0, slot),), {}, (), None, (geometry,))
        step.outputs = (self.add_slot("step", alias, (len(self.steps), 0)),)
        self.steps.append(step)

    def factory(self, tensor) -> None:
        if id(tensor) not in self.by_id:
            self.add_slot("const", tensor)

    def op(self, cls, args: tuple, params: dict):
        """Op dispatch while tracing: run the op eagerly (hooks off) and record it."""
        self.ops_seen += 1
        try:
            arg_slots = tuple((i, self.slot_of(a)) for i, a in enumerate(args) if isinstance(a, Tensor))
            for key, value in params.items():
                if isinstance(value, Tensor) or (isinstance(value, (list, tuple)) and
                                                 any(isinstance(v, Tensor) for v in value)):
                    raise GraphBreak(f"{cls.__name__} takes a tensor in keyword argument {key!r}")
            for a in args:
                if isinstance(a, (list, tuple)) and any(isinstance(v, Tensor) for v in a):
                    raise GraphBreak(f"{cls.__name__} takes a list of tensors (not traced yet)")
            if not arg_slots:
                raise GraphBreak(f"{cls.__name__} without tensor arguments")
        except GraphBreak as exc:
            self.graph_break(str(exc))
            return cls.apply(*args, **params)
        Op._tracer = None
        try:
            result = cls.apply(*args, **params)
        finally:
            if self.break_reason is None:
                Op._tracer = self
        if self.break_reason is not None:  # broken inside (a nested data read)
            return result
        outputs = result if type(result) is tuple else (result,)
        if not all(type(o) is Tensor or isinstance(o, Tensor) for o in outputs):
            self.graph_break(f"{cls.__name__} returned something other than tensors")
            return result
        self.record(cls, args, arg_slots, params, outputs)
        return result

    def record(self, cls, args, arg_slots, params, outputs) -> None:
        index = len(self.steps)
        if any(o is a for o in outputs for a in args):
            self.graph_break(f"{cls.__name__} returned one of its inputs")
            return
        node = next((o._grad_fn for o in outputs if o._grad_fn is not None), None)
        if node is not None and (type(node) is not cls or any(o._grad_fn not in (None, node) for o in outputs)):
            self.graph_break(f"{cls.__name__} recorded an unexpected graph node")
            return
        if node is not None and node._hooked:
            self.graph_break("a hook on a graph node")
            return
        marked = tuple(None if isinstance(a, Tensor) else a for a in args)
        views = [self._view_geometry(o, args, arg_slots) for o in outputs]
        if any(v is None for v in views) and any(v is not None for v in views):
            self.graph_break(f"{cls.__name__} returned views and new tensors together")
            return
        step = Step(cls, marked, arg_slots, dict(params), (), node, tuple(views))
        step.outputs = tuple(self.add_slot("step", o, (index, k)) for k, o in enumerate(outputs))
        if node is not None:
            step.extras = {k: v for k, v in node.__dict__.items() if not hasattr(v, "__array_interface__")
                           and not hasattr(v, "__cuda_array_interface__") and not isinstance(v, Tensor)}
            try:
                step.saved = self._saved_recipe(node, args, outputs)
            except GraphBreak as exc:
                self.graph_break(str(exc))
                return
        self.steps.append(step)

    @staticmethod
    def _view_geometry(out, args, arg_slots):
        """An output sharing an input's storage: (input position, span, size, stride, delta) to rebuild it."""
        for i, _ in arg_slots:
            a = args[i]
            if a._storage is out._storage:
                shape, stride = a._array.shape, a.stride()
                span = 1 + sum((n - 1) * s for n, s in zip(shape, stride)) if all(shape) else 0
                return (i, span, tuple(out._array.shape), tuple(out.stride()), out._offset - a._offset)
        return None

    @staticmethod
    def _saved_recipe(node, args, outputs) -> tuple:
        recipe = []
        for s in node._saved or ():
            if s is None:
                recipe.append(None)
            elif type(s) is SavedTensor:
                if s.output_nr is not None:
                    recipe.append(("out", s.output_nr))
                    continue
                for k, o in enumerate(outputs):
                    if s.tensor is o:
                        recipe.append(("out", k))
                        break
                else:
                    for i, a in enumerate(args):
                        if s.tensor is a:
                            recipe.append(("arg", i))
                            break
                    else:
                        raise GraphBreak(f"{type(node).__name__} saved a tensor that is neither input nor output")
            elif isinstance(s, Tensor):
                raise GraphBreak(f"{type(node).__name__} saved a bare tensor")
            else:
                recipe.append(("value", s))
        return tuple(recipe)

    def _view_chain(self, slot_index: int):
        """``(root slot, [(cls, args, params, output nr)])``: the view steps from an input or external to an output
        that is a view of it, or None if the output is not made by views alone."""
        chain = []
        while self.slots[slot_index].kind == "step":
            step_index, nr = self.slots[slot_index].source
            step = self.steps[step_index]
            if step.views[nr] is None or len(step.arg_slots) != 1:
                return None
            chain.append((step.cls, step.args, step.params, nr, len(step.outputs) > 1))
            slot_index = step.arg_slots[0][1]
        return slot_index, chain[::-1]

    # the end -------------------------------------------------------------------------------------
    def finish(self, result_tensors) -> None:
        """Checks after the call: outputs accounted for, no untraced in-place write to any traced value."""
        if self.break_reason is not None:
            return
        for slot in self.slots:
            if slot.tensor._storage.version != slot.version and slot.kind != "step":
                self.graph_break(f"an in-place write to a {slot.kind} tensor {list(slot.tensor.shape)} "
                                 "(in-place updates are not compiled)")
                return
        for step in self.steps:
            if step.node is not None and step.node._hooked:
                self.graph_break(f"a hook (register_hook, retain_grad) on {step.node.name()}")
                return
        for t in result_tensors:
            index = self.by_id.get(id(t))
            if index is None or self.slots[index].tensor is not t:
                self.graph_break("the function returns a tensor of unknown origin")
                return
            slot = self.slots[index]
            if slot.kind in ("external", "const"):
                self.graph_break(f"the function returns a {slot.kind} tensor")
                return
            if t._storage.version != slot.version:
                self.graph_break("an output was written in place after it was computed")
                return
            if t._grad_fn is not slot.grad_fn:
                self.graph_break("an output's history was rewritten outside the traced ops (autograd.Function?)")
                return
            if requires_grad_of(t) != slot.requires_grad:
                self.graph_break("requires_grad of an output was changed outside the traced ops")
                return
            if slot.kind == "step" and any(other.kind != "step" and other.tensor._storage is t._storage
                                           for other in self.slots):
                chain = self._view_chain(index)
                if chain is None:
                    self.graph_break("the function returns a tensor sharing memory with an input, not by views")
                    return
                self.eager_views[index] = chain


def requires_grad_of(t) -> bool:
    return t._requires_grad or (t._meta is not None and view_requires_grad(t))
