"""The tracer: records the ops a function's first call runs, as steps on numbered values (slots).

It sees the function through narrow hooks (``Op._tracer`` in dispatch; the factories and the places a tensor's
values reach Python, via ``_trace_state``; ``autograd.api.run_backward``, ``print`` and ``Storage.version``,
wrapped for the first call only), while the call itself runs eagerly as usual, so the first call's results are
the eager ones whatever happens. Each tensor an op reads is accounted for: an input of the call, a parameter or
buffer the tracer can find again (an "external"), a constant made by a factory from Python values, the output of
a recorded step, or else a "foreign" tensor (made where the tracer does not look: an untraced function, a random
factory, ``backward()``'s gradients, an in-place write the trace did not record).

A graph break - a value read into Python (``.item()``, ``bool(t)``, printing), ``print()``, ``backward()``, an
in-place write to an input or parameter, a foreign tensor, an op the plan cannot replay (it runs eagerly: an
``EagerStep``) - does not stop the trace: it is listed in ``breaks`` with its position, and the steps between
two breaks become one *piece* (compiler/pieces.py). A call without breaks becomes one plan (plan.py).
"""

from __future__ import annotations

import builtins
import contextlib
import dataclasses
from typing import Any

from .. import _dispatch_modes, _trace_state
from ..autograd import api as autograd_api
from ..autograd import grad_mode
from ..autograd.graph import SavedTensor
from ..ops.op import Op
from ..random import Generator
from ..storage import Storage
from ..tensor import Tensor, view_requires_grad
from .errors import Unsupported


class GraphBreak(Exception):
    """Raised inside the tracer when it must stop (caught there; the call goes on eagerly)."""


@dataclasses.dataclass
class Slot:
    """One value of the trace: where it comes from and what it looked like."""

    kind: str  # "input", "external", "const", "random", "step" (or "foreign": a tensor the trace cannot make)
    tensor: Any  # the traced Tensor (kept alive while tracing, so ids stay unique)
    version: int
    source: Any = None  # input: position; external: (getter, name); step: (step index, output nr); random: redraw
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
    grad_enabled: bool = True  # grad mode when it ran (a guided replay checks it: pieces.py)
    tuple_result: bool = False  # the op returned a tuple


class EagerStep:
    """An op the plan cannot replay on arrays (a list of tensors, an in-place write, a sparse input...): it runs
    eagerly at every call, and what it returns is read later as foreign tensors."""

    __slots__ = ("cls", "reason", "outputs")

    def __init__(self, cls, reason: str, outputs: tuple = ()):
        self.cls, self.reason = cls, reason
        self.outputs = outputs  # slots of its results, when they have slots (a step demoted by ``written``)


class Detach:
    """The step ``t.detach()`` records: a view of the same geometry, without history."""

    row_major_output = False


def _install(tracer) -> None:
    """``tracer`` (or None) as the hook of dispatch (``Op._tracer``) and of ``_trace_state``, counted in
    ``_dispatch_modes`` while one is installed (the fast paths then call the general path)."""
    if (Op._tracer is None) != (tracer is None):
        _dispatch_modes.hold(tracer is not None)
    Op._tracer = _trace_state.tracer = tracer


class Hooks:
    """What the tracer and the guided replayer (pieces.py) share: installing themselves as the hooks of dispatch
    and ``_trace_state``, and pausing while something must run as in eager mode (an eager step, ``backward()``,
    a ``torch.compiler.disable``'d function)."""

    active = False
    paused = False

    def start(self) -> None:
        self.active = True
        _install(self)
        self._run_backward = original = autograd_api.run_backward
        hooks = self

        def run_backward(*args, **kwargs):  # backward() inside the function: the engine runs as usual
            hooks.backward_started()
            with hooks.pause():
                return original(*args, **kwargs)

        autograd_api.run_backward = run_backward

    def stop(self) -> None:
        if not self.active:
            return
        self.active = False
        _install(None)
        autograd_api.run_backward = self._run_backward

    @contextlib.contextmanager
    def pause(self):
        """Dispatch and the hooks as in eager mode for the duration (nested pauses are fine)."""
        if not self.active or self.paused:
            yield
            return
        self.paused = True
        _install(None)
        try:
            yield
        finally:
            self.paused = False
            if self.active:
                _install(self)

    def eager_call(self, fn, args, kwargs, reason: str):
        """``fn(*args, **kwargs)`` run eagerly (``torch.compiler.disable``)."""
        self.graph_break(reason, cut=True)
        with self.pause():
            return fn(*args, **kwargs)

    def backward_started(self) -> None:
        pass

    def random_fill(self, tensor, redraw, fill):
        """A sampler fills ``tensor`` from the default generator (``_trace_state.random_fill``)."""
        return fill()

    def graph_break(self, reason: str, cut: bool = False) -> None:
        pass


class Tracer(Hooks):
    """Records one call. ``externals`` maps ``id(tensor)`` to ``(tensor, getter, name)`` for the tensors the
    call may read without receiving them (the module's parameters and buffers, tensors of its closure)."""

    def __init__(self, externals: dict, fullgraph: bool):
        self.externals = externals
        self.fullgraph = fullgraph
        self.slots: list[Slot] = []
        self.by_id: dict[int, int] = {}
        self.steps: list = []  # Step, or EagerStep for an op run eagerly
        self.breaks: list[tuple[int, str, bool]] = []  # (number of steps recorded before it, reason, cut)
        self.foreign_writes: set = set()  # storages written in place that the trace's steps did not make
        self.abandoned: str | None = None  # set when the call cannot be replayed at all: it then runs eagerly
        self.backward_at = 0  # the number of steps recorded before the last backward() inside the call
        self.ops_seen = 0
        self.eager_views: dict = {}  # output slot -> (input slot, view steps): made again by eager views
        self.fills: list = []  # per sampler fill, in call order: whether it became a random value (not traced ops)
        self._print = None
        self._version = None

    # starting and stopping -------------------------------------------------------------------
    def start(self) -> None:
        super().start()
        self._watch_writes()
        self._print = original = builtins.print
        tracer = self

        def traced_print(*args, **kwargs):
            if tracer.active and not tracer.paused:
                tracer.graph_break("print() (a Python side effect: it runs eagerly at every call)")
            return original(*args, **kwargs)

        builtins.print = traced_print
        self._seeding = {}
        for name in ("manual_seed", "seed", "set_state"):  # a generator reseeded inside the call: a replay of the
            original_method = self._seeding[name] = Generator.__dict__[name]  # plan would not reseed it

            def seeding(*args, _original=original_method, **kwargs):
                if tracer.active and not tracer.paused:
                    tracer.graph_break("a generator was seeded or its state set (the Python code runs at every "
                                       "call, so random values are drawn by it)")
                return _original(*args, **kwargs)

            setattr(Generator, name, seeding)

    def stop(self) -> None:
        super().stop()
        for name, method in getattr(self, "_seeding", {}).items():
            setattr(Generator, name, method)
        self._seeding = {}
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
        if self.paused or not self.active:
            return
        self._demote_savers(storage)
        for slot in self.slots:  # a factory's tensor written in place (empty_like(x).bernoulli_()) is no constant:
            if slot.kind == "const" and slot.tensor._storage is storage:  # a replay reads the tensor it is given
                slot.kind = "foreign"
        kinds = {slot.kind for slot in self.slots if slot.tensor._storage is storage}
        if kinds == {"step"}:
            return  # an intermediate's memory: a later read of it sees the new version (a foreign tensor then)
        self.foreign_writes.add(storage)
        self.graph_break("an in-place write to a tensor that existed before the call or was not made by a traced op "
                         "(an optimizer step, copy_, an in-place op on an input or parameter)")

    def _demote_savers(self, storage) -> None:
        """A recorded step (since the last ``backward()``) that saved a value of this memory for backward becomes an
        eager step: its eager node then sees the write as in eager mode (an in-place op's own node keeps a copy
        of its input; any other raises at backward)."""
        for i in range(self.backward_at, len(self.steps)):
            step = self.steps[i]
            if type(step) is not Step or step.node is None:
                continue
            for entry in step.saved:
                if entry is None or entry[0] == "value":
                    continue
                slot = dict(step.arg_slots)[entry[1]] if entry[0] == "arg" else step.outputs[entry[1]]
                if self.slots[slot].tensor._storage is storage:
                    reason = f"{step.cls.__name__} saved a value that is then written in place"
                    self.steps[i] = EagerStep(step.cls, reason, step.outputs)
                    self.breaks.append((i, reason, True))
                    self.breaks.sort(key=lambda entry: entry[0])
                    break

    def graph_break(self, reason: str, cut: bool = False) -> None:
        """A break at this point of the call: listed, and with ``cut`` the next step starts a new piece (needed
        where a piece would otherwise read, through its edges, what depends on its own results: a tensor made
        outside it that requires grad, after an eager op or ``backward()``). With ``fullgraph=True`` raise."""
        if self.fullgraph:
            self.stop()
            raise Unsupported(f"torch.compile(fullgraph=True): graph break: {reason}")
        entry = (len(self.steps), reason, cut)
        if self.abandoned is None and (not self.breaks or self.breaks[-1] != entry):
            self.breaks.append(entry)

    def abandon(self, reason: str) -> None:
        """Stop tracing: this call's guards will run eagerly (what no piece can replay soundly)."""
        if self.fullgraph:
            self.stop()
            raise Unsupported(f"torch.compile(fullgraph=True): graph break: {reason}")
        if self.abandoned is None:
            self.abandoned = reason
        self.stop()

    @property
    def break_reason(self) -> str | None:
        """The first reason the call is not one plan (a break or what abandoned it), or None."""
        return self.abandoned or (self.breaks[0][1] if self.breaks else None)

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
        """The slot of a tensor an op reads: a known value, or a new foreign one (a graph break before this op)."""
        if not t._dense:
            raise GraphBreak(f"a {t._kind} tensor (only strided tensors are compiled)")
        index = self.by_id.get(id(t))
        if index is None:
            entry = self.externals.get(id(t))
            if entry is not None and entry[0] is t:
                return self.add_slot("external", t, entry[1:])
            if t._grad_fn is not None:
                return self._foreign(t, f"a tensor made outside the traced ops (grad_fn {t._grad_fn.name()}): a "
                                        "custom autograd.Function or an op the tracer does not see")
            return self._foreign(t, f"a tensor {list(t.shape)} of unknown origin (not an input, a parameter or buffer "
                                    "of the module, a tensor of the function's closure, a factory result or an op "
                                    "output)")
        slot = self.slots[index]
        if slot.tensor is not t:
            return self._foreign(t, "a tensor id was reused while tracing")
        if t._storage.version != slot.version:
            return self._foreign(t, f"an in-place write to a tensor {list(t.shape)} that the trace did not record")
        if t._grad_fn is not slot.grad_fn:
            return self._foreign(t, "a traced tensor's history was rewritten outside the traced ops "
                                    "(autograd.Function?)")
        if requires_grad_of(t) != slot.requires_grad:
            return self._foreign(t, "requires_grad of a traced tensor was changed outside the traced ops")
        return index

    def _foreign(self, t, reason: str) -> int:
        """A tensor the trace cannot make again: at every call the op reads the tensor it is given (a break)."""
        self.graph_break(reason, cut=requires_grad_of(t))  # (one that requires grad may depend on this piece)
        return self.add_slot("foreign", t)

    # hooks ----------------------------------------------------------------------------------------
    def backward_started(self) -> None:
        self.backward_at = len(self.steps)
        self.graph_break("backward() or autograd.grad() inside the function (it runs through the engine; "
                         "the compiled pieces before it replay their recorded backward)", cut=True)

    def backward_called(self) -> None:  # the engine reached without autograd.api (e.g. a checkpoint's recompute)
        if not self.paused:
            self.abandon("the autograd engine was called directly inside the function")

    def data_read(self, tensor, what: str) -> None:
        if what == "numpy()":  # the array shares the tensor's memory: writes through it are seen by no one
            self.abandon("numpy() hands the tensor's memory to Python (writes through it would not be seen)")
            return
        self.graph_break(f"{what} reads a tensor's values into Python (the Python code after it runs at every call)")

    def detached(self, tensor, alias) -> None:
        if Op._tracer is not self or id(tensor) not in self.by_id:  # inside an op, or of an untraced tensor
            return
        try:
            slot = self.slot_of(tensor)
        except GraphBreak:
            return
        geometry = self._view_geometry(alias, (tensor,), ((0, slot),))
        step = Step(Detach, (None,), ((0, slot),), {}, (), None, (geometry,))
        step.grad_enabled = grad_mode.state.enabled
        step.outputs = (self.add_slot("step", alias, (len(self.steps), 0)),)
        self.steps.append(step)

    def factory(self, tensor) -> None:
        if id(tensor) not in self.by_id:
            self.add_slot("const", tensor)

    def random_fill(self, tensor, redraw, fill):
        """``empty_like(x).bernoulli_(p)`` (dropout's mask), ``torch.empty(n).normal_()``: a tensor a factory made
        inside the call, filled from the default generator before any op read it, becomes a **random** value: a
        replay draws it again with ``redraw`` - the same generator calls, in the same order, as eager mode - instead
        of treating it as a tensor of unknown origin (a graph break). Any other fill runs as traced ops."""
        index = self.by_id.get(id(tensor))
        if (index is None or self.slots[index].kind != "const" or self.slots[index].tensor is not tensor
                or any(s.tensor._storage is tensor._storage for i, s in enumerate(self.slots) if i != index)
                or any(slot == index for step in self.steps if type(step) is Step for _, slot in step.arg_slots)):
            self.fills.append(False)
            return fill()
        self.fills.append(True)
        with self.pause():
            result = fill()
        slot = self.slots[index]
        slot.kind, slot.source, slot.version = "random", redraw, tensor._storage.version
        return result

    def op(self, cls, args: tuple, params: dict):
        """Op dispatch while tracing: run the op eagerly (hooks off) and record it, or record that it runs eagerly."""
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
            return self._eager(cls, args, params, str(exc))
        if any(_has_array(v) for v in params.values()) or any(_has_array(a) for a in args if not isinstance(a, Tensor)):
            # index arrays read from index tensors: a whole-call plan would replay the traced indices
            self.graph_break(f"{cls.__name__} takes arrays read from a tensor (indices): the Python code runs at "
                             "every call and the replay compares them")
        with self.pause():
            result = cls.apply(*args, **params)
        if not self.active:  # abandoned inside
            return result
        outputs = result if type(result) is tuple else (result,)
        if not all(type(o) is Tensor or isinstance(o, Tensor) for o in outputs):
            self._eager_after(cls, f"{cls.__name__} returned something other than tensors")
            return result
        reason = self.record(cls, args, arg_slots, params, outputs)
        if reason is not None:
            self._eager_after(cls, reason)
        else:
            self.steps[-1].tuple_result = type(result) is tuple
        return result

    def _eager(self, cls, args, params, reason: str):
        self.graph_break(reason, cut=True)
        self.steps.append(EagerStep(cls, reason))
        with self.pause():
            return cls.apply(*args, **params)

    def _eager_after(self, cls, reason: str) -> None:
        """The op already ran but cannot be recorded: it runs eagerly at every call."""
        self.graph_break(reason, cut=True)
        self.steps.append(EagerStep(cls, reason))

    def record(self, cls, args, arg_slots, params, outputs) -> str | None:
        """Record the step; returns why it cannot be, or None."""
        index = len(self.steps)
        if any(o is a for o in outputs for a in args):
            return f"{cls.__name__} returned one of its inputs"
        node = next((o._grad_fn for o in outputs if o._grad_fn is not None), None)
        if node is not None and (type(node) is not cls or any(o._grad_fn not in (None, node) for o in outputs)):
            return f"{cls.__name__} recorded an unexpected graph node"
        if node is not None and node._hooked:
            return "a hook on a graph node"
        if any(not o._dense for o in outputs):
            return f"{cls.__name__} returned a sparse or quantized tensor"
        marked = tuple(None if isinstance(a, Tensor) else a for a in args)
        views = [self._view_geometry(o, args, arg_slots) for o in outputs]
        if any(v is None for v in views) and any(v is not None for v in views):
            return f"{cls.__name__} returned views and new tensors together"
        step = Step(cls, marked, arg_slots, dict(params), (), node, tuple(views))
        step.grad_enabled = grad_mode.state.enabled
        saved = ()
        if node is not None:
            try:
                saved = self._saved_recipe(node, args, outputs)
            except GraphBreak as exc:
                return str(exc)
            step.extras = {k: v for k, v in node.__dict__.items() if not hasattr(v, "__array_interface__")
                           and not hasattr(v, "__cuda_array_interface__") and not isinstance(v, Tensor)}
        step.saved = saved
        step.outputs = tuple(self.add_slot("step", o, (index, k)) for k, o in enumerate(outputs))
        self.steps.append(step)
        return None

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
        """Checks after the call: no hook on a recorded node; for a call without breaks (one plan), outputs
        accounted for and no untraced in-place write to any traced value (else a break: pieces replay it)."""
        if self.abandoned is not None:
            return
        for step in self.steps:
            if type(step) is Step and step.node is not None and step.node._hooked:
                self.abandon(f"a hook (register_hook, retain_grad) on {step.node.name()} (a compiled piece would "
                             "sum its gradient before the hook sees it)")
                return
        if self.breaks:
            return
        for slot in self.slots:
            if slot.tensor._storage.version != slot.version and slot.kind != "step":
                self.graph_break(f"an in-place write to a {slot.kind} tensor {list(slot.tensor.shape)} "
                                 "(in-place updates are not compiled)")
                return
        for t in result_tensors:
            index = self.by_id.get(id(t))
            if index is None or self.slots[index].tensor is not t:
                self.graph_break("the function returns a tensor of unknown origin")
                return
            slot = self.slots[index]
            if slot.kind in ("external", "const", "random"):
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


def _has_array(value) -> bool:
    if hasattr(value, "__array_interface__") or hasattr(value, "__cuda_array_interface__"):
        return True
    if type(value) in (tuple, list):
        return any(_has_array(v) for v in value)
    return False


def requires_grad_of(t) -> bool:
    return t._requires_grad or (t._meta is not None and view_requires_grad(t))
