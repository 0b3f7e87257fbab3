"""Graph breaks: a call that met breaks replays piece by piece while the function's own Python runs again.

PyTorch's dynamo splits the function's bytecode at a break: the part before it runs as one compiled graph, the
break runs in Python, and a resume function compiles the rest. minitorch does not rewrite bytecode; it gets the
same division of work by running the function's Python at every call, with a *replayer* answering its ops:

- The trace (tracer.py) goes on past a break. Its recorded steps fall into **pieces**: runs of recorded ops cut
  around an op the plan cannot replay (an **eager step**: a tensor in a keyword, a sparse input, an op that saved
  a value written in place later), around ``backward()`` and a ``torch.compiler.disable``'d call, and before an
  op reading a tensor made outside the trace that requires grad (the piece's one graph node must not depend on
  itself). Other breaks - values read into Python (``.item()``, ``bool(t)``, ``print``), in-place writes to
  inputs or parameters, foreign tensors without grad (a random factory's, ``backward()``'s gradients) - do not
  cut: a piece runs its steps as their ops are called, so it reads such a tensor when the op reading it is called.
- Each piece is compiled as a plan of its own (plan.py, fused as any plan) whose inputs are the tensors it
  reads from outside: the call's inputs, earlier pieces' results, foreign tensors (bound where first read; a
  fused group starts at an op reading one). Unlike a whole-call plan, every result is materialised: the Python
  code receives each op's result.
- At a call with the same guards the replayer is installed where the tracer was (``Op._tracer``,
  ``_trace_state.tracer``) and checks each op the Python code dispatches against the next recorded step: the
  same op class, the same Python arguments, keywords and grad mode, and each tensor argument the very tensor
  of the recorded value, unchanged since (its version counter and history). It then runs the piece's plan up to
  that step (a fused group runs whole at its first op) and hands the op its result, wrapped as a Tensor. Eager
  steps and views are run by eager dispatch (a view shares memory, version counter and history with its base).
- A piece records **one graph node** (``PieceBackward``, a ``CompiledFunctionBackward``): the results that
  require grad are its outputs, its edges lead to the tensors it read, and its backward replays the piece's
  recorded backward (a fused group's backward as one program, unless a gradient arrives at a value inside the
  group: then its ops one by one). As in eager mode it refuses to run if a tensor it saved was written since.
- A break itself is Python: ``.item()`` reads a real tensor, ``print`` prints, ``backward()`` runs the engine
  (through the pieces' nodes), an optimizer updates the parameters.
- When the Python code leaves the traced path (an op that does not match: ``if loss.item() > 1`` went the
  other way; a tensor written in place where the trace saw no write), the replayer steps aside and the rest of
  the call runs eagerly, from that op on. What it handed out so far is right: each result it handed out was
  computed, by the same kernels as in eager mode, from tensors that the checks proved to be the ones the op
  read, unchanged.

What a piece does not do is keep values in the CPU's cache across a fused group (its results are all handed out,
so all are written to memory) or skip the wrapping of each result; a call without breaks is one plan, which does.
"""

from __future__ import annotations

import dataclasses
import weakref

from ..autograd import grad_mode
from ..autograd.graph import ERR_BACKWARD_TWICE, edge_of
from ..tensor import Tensor, from_array
from . import fusion
from .backward import CompiledBackward, replay_backward
from .errors import Unsupported
from .optim_step import installed
from .plan import Plan, PlanStep, _SlotRef
from .tracer import Detach, EagerStep, Hooks, requires_grad_of


class GuidedStep:
    """A recorded step as the replayer checks and answers it: its piece, what must be equal at the call, and the
    step's plain attributes (copied here: they are read at every op)."""

    __slots__ = ("piece", "local", "n_args", "const_positions", "const_values", "const_types", "grad_enabled",
                 "cls", "params", "arg_slots", "outputs", "backend", "device", "view", "tuple_result", "output_nrs",
                 "step", "drop")

    def __init__(self, piece, local: int, step: PlanStep, traced_step):
        self.piece, self.local, self.step = piece, local, step
        self.n_args = len(step.args)
        tensor_positions = {position for position, _ in step.arg_slots}
        constants = [(i, a) for i, a in enumerate(step.args) if i not in tensor_positions]
        self.const_positions = tuple(i for i, _ in constants)
        self.const_values = tuple(a for _, a in constants)
        self.const_types = tuple(type(a) for _, a in constants)
        self.grad_enabled = traced_step.grad_enabled
        self.cls, self.params, self.arg_slots, self.outputs = step.cls, step.params, step.arg_slots, step.outputs
        self.backend, self.device = step.backend, step.device
        self.view = step.views is not None
        self.tuple_result = traced_step.tuple_result
        self.output_nrs = ()  # set by GuidedPlan once the piece's outputs are known
        self.drop = ()  # outputs no later step of the piece reads: the replay forgets them once handed out


class Piece:
    """Consecutive recorded steps between two cuts, compiled as one plan whose inputs are what they read from
    outside; their backward is one node (``PieceBackward``)."""

    def __init__(self, number: int, indices: list, tracer, read_later: set, fuse: bool, guards):
        self.number, self.indices = number, indices
        steps = [tracer.steps[i] for i in indices]
        produced = {slot for step in steps for slot in step.outputs}
        inputs: list = []  # slots read from outside, other than externals and constants
        for step in steps:
            for _, slot in step.arg_slots:
                if slot not in produced and slot not in inputs and tracer.slots[slot].kind not in ("external", "const"):
                    inputs.append(slot)
        self.inputs = inputs
        first = steps[0]
        self.first_reads = {slot: position for position, slot in first.arg_slots}
        view = _PieceTrace(tracer, steps, set(inputs), produced)
        handed = [slot for step in steps if not (step.views and step.views[0] is not None) for slot in step.outputs]
        plan = Plan(view, {id(tracer.slots[slot].tensor): k for k, slot in enumerate(inputs)},
                    [_SlotRef(slot) for slot in reversed(handed)], guards, 0.0)
        plan.inputs = [(slot, k) for k, slot in enumerate(inputs)]
        plan.leaves = [slot for slot in inputs + [e[0] for e in plan.externals] if tracer.slots[slot].requires_grad]
        plan.outside_reads = (produced & read_later)
        # foreign tensors other than the first op's are bound when the op reading them is called
        self.read_inside = {slot for step in steps for _, slot in step.arg_slots}
        self.late = frozenset(slot for slot in inputs if tracer.slots[slot].kind in ("foreign", "random")
                              and slot not in self.first_reads)
        if fuse:
            fusion.fuse(plan, view, self.late)
        # each result is handed out right after its step ran (the Tensor then keeps it), except a fused group's,
        # which all exist once its first op ran: they stay until the piece ends
        plan._liveness(keep={slot for step in plan.steps if step.fused is not None for slot in step.outputs})
        self.plan = plan
        self.output_slots = [slot for slot in handed if tracer.slots[slot].requires_grad and plan.records]
        self.output_nr = {slot: k for k, slot in enumerate(self.output_slots)}
        self.records = bool(self.output_slots)
        self.leaf_meta = tuple((tuple(tracer.slots[s].tensor._array.shape), tracer.slots[s].tensor._storage.dtype)
                               for s in plan.leaves)
        # the values its backward reads: their tensors' versions are checked before it runs (as SavedTensor does)
        self.saved_slots = set()
        for step in steps:
            if step.node is not None:
                for entry in step.saved:
                    if entry is not None and entry[0] == "arg":
                        self.saved_slots.add(dict(step.arg_slots)[entry[1]])
                    elif entry is not None and entry[0] == "out":
                        self.saved_slots.add(step.outputs[entry[1]])

    # what replay_backward reads from a plan
    @property
    def steps(self):
        return self.plan.steps

    @property
    def schedule(self):
        return self.plan.schedule

    @property
    def backward_units(self):
        return self.plan.backward_units

    @property
    def leaves(self):
        return self.plan.leaves

    @property
    def backward_program(self):
        return self.plan.backward_program

    @backward_program.setter
    def backward_program(self, program):
        self.plan.backward_program = program

    @property
    def handoffs(self):
        return self.plan.handoffs

    @handoffs.setter
    def handoffs(self, handoffs):
        self.plan.handoffs = handoffs


class _PieceTrace:
    """A tracer's slots and steps as one piece's plan sees them: what it reads from outside is an input."""

    def __init__(self, tracer, steps, inputs: set, produced: set):
        self.steps = steps
        self.eager_views: dict = {}
        read = {slot for step in steps for _, slot in step.arg_slots}
        self.slots = []
        for i, slot in enumerate(tracer.slots):
            if i in inputs:
                slot = dataclasses.replace(slot, kind="input")
            elif i not in produced and not (i in read and slot.kind in ("external", "const")):
                slot = dataclasses.replace(slot, kind="unused")
            self.slots.append(slot)


class GuidedPlan:
    """A traced call with graph breaks: its pieces and eager steps in call order, replayed by a ``Replayer``
    while the function runs (the module docstring)."""

    guided = True

    def __init__(self, tracer, guards, fuse: bool, result_tensors: list):
        self.guards = guards
        self.compile_seconds = 0.0
        self.breaks = list(tracer.breaks)
        self.fills = tuple(tracer.fills)  # which sampler fills the trace made random values (Replayer.random_fill)
        slots = tracer.slots
        self.n_slots = len(slots)
        self.slot_kind = [s.kind for s in slots]
        self.slot_info = [(s.kind, tuple(s.tensor.shape), s.tensor.dtype) for s in slots]
        self.slot_check = [(s.tensor._array.shape, s.tensor._storage.dtype, s.tensor._storage.device,
                            s.requires_grad) for s in slots]
        self.const_arrays = {i: s.tensor._array for i, s in enumerate(slots) if s.kind == "const"}
        self.inputs = [(i, s.source) for i, s in enumerate(slots) if s.kind == "input"]
        self.externals = [(i, s.tensor, s.source[0], s.source[1], s.tensor._array.shape, s.tensor._storage.dtype,
                           requires_grad_of(s.tensor)) for i, s in enumerate(slots) if s.kind == "external"]
        cuts = {position for position, _, cut in tracer.breaks if cut}
        runs: list = [[]]
        for i, step in enumerate(tracer.steps):
            if i in cuts or type(step) is EagerStep:
                runs.append([])
            if type(step) is not EagerStep:
                runs[-1].append(i)
        runs = [run for run in runs if run]
        returned = {tracer.by_id.get(id(t)) for t in result_tensors}
        self.events: list = list(tracer.steps)  # EagerSteps stay; recorded steps become GuidedSteps
        self.pieces: list[Piece] = []
        for run in runs:
            inside = set(run)
            read_later = set(returned)
            for i, step in enumerate(tracer.steps):
                if i not in inside and type(step) is not EagerStep:
                    read_later.update(slot for _, slot in step.arg_slots)
            piece = Piece(len(self.pieces), run, tracer, read_later, fuse, guards)
            self.pieces.append(piece)
            for local, i in enumerate(run):
                event = self.events[i] = GuidedStep(piece, local, piece.plan.steps[local], tracer.steps[i])
                event.output_nrs = tuple(piece.output_nr.get(slot) for slot in event.outputs)
                if event.step.fused is None:
                    event.drop = tuple(slot for slot in event.outputs if slot not in piece.read_inside)
        self.records = any(piece.records for piece in self.pieces)
        self.fused_groups = [group for piece in self.pieces for group in piece.plan.fused_groups]
        self.diverged = 0
        self.divergence: str | None = None
        self.optimizer_steps: list = []  # (optimizer, CompiledStep): installed for each call (optim_step.py)

    def resident_bytes(self) -> int:
        return sum(piece.plan.resident_bytes() for piece in self.pieces)

    def run(self, fn, args, kwargs, tensors):
        """The call, run by its own Python with the replayer answering its ops."""
        replayer = Replayer(self, tensors)
        replayer.start()
        try:
            with installed(self.optimizer_steps):
                return fn(*args, **kwargs)
        finally:
            replayer.stop()


class PieceBackward(CompiledBackward):
    """The graph node of a piece's results: its backward replays the piece's recorded backward on arrays."""

    def _check(self) -> None:
        if self._saved is None:
            raise RuntimeError(ERR_BACKWARD_TWICE)
        for t, version in self.watched:
            if t._storage.version != version:
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified by an inplace "
                    f"operation: [{t.type()} {list(t.shape)}] is at version {t._storage.version}; expected version "
                    f"{version} instead. (It was saved by a torch.compile'd piece; the same write fails in eager "
                    "mode.)")

    def _evaluate(self, *grads):
        self._check()
        if grad_mode.state.enabled:
            raise Unsupported("double backward (create_graph=True) through a torch.compile'd function is not "
                              "supported; run the function without torch.compile for higher-order gradients")
        return replay_backward(self.piece, self._saved[0], self.piece.output_slots, grads)

    def _evaluate_on_arrays(self, grads):
        self._check()
        return replay_backward(self.piece, self._saved[0], self.piece.output_slots, grads, arrays=True)


_UNSET = object()  # (no tensor checked for this slot yet)


_LEAF, _GRAD_LEAF = object(), object()  # (a tensor without grad_fn, not requiring grad / requiring it)


def _same_history(recorded, t) -> bool:
    """``t``'s history is the one recorded: the same grad_fn (a weak reference), or no grad_fn and the same
    ``requires_grad`` (a leaf whose flag was switched must not meet the piece's edges of before)."""
    fn = t._grad_fn
    if fn is None:
        return recorded is (_GRAD_LEAF if t._requires_grad else _LEAF)
    return type(recorded) is weakref.ref and recorded() is fn


class Replayer(Hooks):
    """Answers the ops of one call of a ``GuidedPlan`` (module docstring); steps aside at the first mismatch."""

    def __init__(self, plan: GuidedPlan, tensors: list):
        self.plan = plan
        self.pos = 0
        # per slot, a weak reference to its tensor at this call (an input, a parameter, a result handed out, a
        # foreign tensor once read): weak, so that the replay keeps no tensor alive that eager mode would free
        self.tensor_of: list = [None] * plan.n_slots
        for slot, position in plan.inputs:
            self.tensor_of[slot] = weakref.ref(tensors[position])
        for slot, tensor, *_ in plan.externals:
            self.tensor_of[slot] = weakref.ref(tensor)
        # per slot: the version and grad_fn its tensor had when it was first read or handed out
        self.versions: list = [0] * plan.n_slots
        self.histories: list = [_UNSET] * plan.n_slots
        self.piece = self.node = self.node_ref = self.values = self.nodes = None
        self.done = 0  # the piece's steps run so far
        self.fill_count = 0  # sampler fills seen so far

    # the hooks --------------------------------------------------------------------------------
    def op(self, cls, args: tuple, params: dict):
        """Check the op against the next recorded step, and answer it (module docstring)."""
        pos = self.pos
        events = self.plan.events
        if pos >= len(events):
            return self.diverge(cls, args, params, f"{cls.__name__}: more ops than the trace had")
        event = events[pos]
        if type(event) is not GuidedStep:
            if event.cls is not cls:
                return self.diverge(cls, args, params, f"{cls.__name__} where the trace ran {event.cls.__name__}")
            self.pos = pos + 1
            with self.pause():
                result = cls.apply(*args, **params)
            for slot, t in zip(event.outputs, result if type(result) is tuple else (result,)):
                self._note(slot, t)
            return result
        if (event.cls is not cls or len(args) != event.n_args or grad_mode.state.enabled is not event.grad_enabled
                or ((params or event.params) and not _same_values(params, event.params))):
            return self.diverge(cls, args, params, f"{cls.__name__} where the trace ran {event.cls.__name__} "
                                                   "(or with other keywords or grad mode)")
        positions = event.const_positions
        if positions:
            values = tuple([args[i] for i in positions])
            if tuple(map(type, values)) != event.const_types or not _same_value(values, event.const_values):
                return self.diverge(cls, args, params, f"{cls.__name__}: arguments {values!r}, traced "
                                                       f"{event.const_values!r}")
        piece = event.piece
        if self.piece is not piece and not self._start_piece(piece, args):
            return self.diverge(cls, args, params, f"{cls.__name__}: a tensor the piece reads is not the traced one")
        tensor_of, versions, histories = self.tensor_of, self.versions, self.histories
        for position, slot in event.arg_slots:
            a = args[position]
            known = tensor_of[slot]
            if known is None or known() is not a:
                if known is not None or not isinstance(a, Tensor) or not self._bind(slot, a):
                    return self.diverge(cls, args, params, f"{cls.__name__}: argument {position} is not the traced "
                                                           "tensor")
                if slot in piece.late:
                    self.values[slot] = a._array
                    if self.node is not None and slot in piece.saved_slots:
                        self.node.watched.append((a, a._storage.version))
            elif a._storage.version != versions[slot] or not _same_history(histories[slot], a):
                return self.diverge(cls, args, params, f"{cls.__name__}: argument {position} was written in place "
                                                       "or got another history")
        self.pos = pos + 1
        if event.view:  # a view: made by eager dispatch, sharing memory and history with its base
            if self.done <= event.local:
                piece.plan.compute_range(self.values, self.nodes, self.done, event.local + 1)
                self.done = event.local + 1
            with self.pause():
                result = cls.apply(*args, **params)
            for slot, t in zip(event.outputs, result if type(result) is tuple else (result,)):
                self._note(slot, t)
            return result
        values, node = self.values, self.node
        node_ref = self.node_ref
        if self.done <= event.local:  # run the piece's steps up to this one (a fused group at its first op)
            piece.plan.compute_range(values, self.nodes, self.done, event.local + 1)
            self.done = event.local + 1
        backend, device = event.backend, event.device
        made = []
        for slot, nr in zip(event.outputs, event.output_nrs):
            t = from_array(values[slot], backend, device)
            if nr is not None:
                t._grad_fn = node
                t._output_nr = nr
                t._requires_grad = True
                if slot in self.piece.saved_slots:
                    node.watched.append((t, t._storage.version))
            tensor_of[slot] = weakref.ref(t)
            versions[slot] = t._storage.version
            histories[slot] = _LEAF if nr is None else node_ref
            made.append(t)
        for slot in event.drop:
            values[slot] = None
        return tuple(made) if event.tuple_result else made[0]

    def detached(self, tensor, alias) -> None:
        event = self.plan.events[self.pos] if self.pos < len(self.plan.events) else None
        if type(event) is not GuidedStep or event.cls is not Detach:
            return  # a detach the trace did not record (of an untraced tensor); a mismatch shows at the next op
        slot = event.arg_slots[0][1]
        if self.piece is not event.piece and not self._start_piece(event.piece, (tensor,)):
            self._left("detach(): a tensor the piece reads is not the traced one")
            self.stop()
            return
        known = self.tensor_of[slot]
        if known is None or known() is not tensor:
            return
        if self.done <= event.local:
            event.piece.plan.compute_range(self.values, self.nodes, self.done, event.local + 1)
            self.done = event.local + 1
        self._note(event.outputs[0], alias)
        self.pos += 1

    def data_read(self, tensor, what: str) -> None:
        pass  # the tensor is real: its values are read as in eager mode

    def random_fill(self, tensor, redraw, fill):
        """A sampler's fill: one the trace made a random value runs as in eager mode, hooks paused (its tensor is
        checked where an op reads it, as a foreign one); any other runs its ops through the checks, as traced."""
        k = self.fill_count
        self.fill_count = k + 1
        if k < len(self.plan.fills) and self.plan.fills[k]:
            with self.pause():
                return fill()
        return fill()

    def factory(self, tensor) -> None:
        pass  # a factory's result is checked where an op reads it (``_bind``)

    def backward_called(self) -> None:  # the engine reached directly: the rest of the call runs eagerly
        if not self.paused:
            self._left("the autograd engine was called directly")
            self.stop()

    # the pieces ---------------------------------------------------------------------------------------
    def _start_piece(self, piece: Piece, args) -> bool:
        """Check what the piece reads (and bind its foreign tensors, the arguments of its first op), then run its
        plan: every result is computed here and handed out op by op. False: not the traced tensors."""
        plan = piece.plan
        tensor_of, versions, histories = self.tensor_of, self.versions, self.histories
        values = [None] * plan.n_slots
        bound = {}
        for slot, _ in plan.inputs:
            ref = tensor_of[slot]
            t = ref() if ref is not None else None
            if ref is not None and t is None:  # the tensor of a value the piece reads no longer exists
                return False
            if t is None:
                if slot in piece.late:
                    continue  # bound, and put in ``values``, when the op reading it is called
                position = piece.first_reads.get(slot)
                if position is None or not isinstance(args[position], Tensor) or not self._bind(slot, args[position]):
                    return False
                t = args[position]
            elif histories[slot] is _UNSET:
                self._note(slot, t)
            elif t._storage.version != versions[slot] or not _same_history(histories[slot], t):
                return False
            values[slot] = t._array
            bound[slot] = t
        for slot, t, *_ in plan.externals:
            if histories[slot] is _UNSET:
                self._note(slot, t)
            elif t._storage.version != versions[slot] or not _same_history(histories[slot], t):
                return False
            bound[slot] = t
        plan.prepare(values)
        nodes = [None] * len(plan.steps) if plan.records else None
        self.piece, self.values, self.nodes, self.done = piece, values, nodes, 0
        if not piece.records:
            self.node = self.node_ref = None
            return True
        node = PieceBackward()
        node.plan = node.piece = piece
        node.next_functions = tuple(edge_of(bound[slot]) for slot in plan.leaves)
        node._input_meta = piece.leaf_meta
        node._n_outputs = len(piece.output_slots)
        node.output_slots = piece.output_slots
        node.device = plan.steps[0].device
        saved = piece.saved_slots
        node.watched = [(bound[slot], versions[slot]) for slot, _ in plan.inputs if slot in saved and slot in bound]
        node.watched += [(t, versions[slot]) for slot, t, *_ in plan.externals if slot in saved]
        node._saved = (nodes,)
        self.node, self.node_ref = node, weakref.ref(node)
        return True

    def _bind(self, slot: int, t) -> bool:
        """A foreign or factory-made tensor, read for the first time: like the traced one? (A constant must also
        have the traced values: the piece's plan computed with them.)"""
        kind = self.plan.slot_kind[slot]
        if kind not in ("foreign", "const", "random") or not t._dense:
            return False
        shape, dtype, device, requires_grad = self.plan.slot_check[slot]
        if (t._array.shape != shape or t._storage.dtype is not dtype or t._storage.device != device
                or requires_grad_of(t) != requires_grad):
            return False
        if kind == "const" and not _bit_equal(t._array, self.plan.const_arrays[slot]):
            return False
        self._note(slot, t)
        return True

    def _note(self, slot: int, t) -> None:
        """``t`` is the tensor of ``slot`` now, with its version and history (both checked where it is read)."""
        self.tensor_of[slot] = weakref.ref(t)
        self.versions[slot] = t._storage.version
        fn = t._grad_fn
        self.histories[slot] = (_GRAD_LEAF if t._requires_grad else _LEAF) if fn is None else weakref.ref(fn)

    def diverge(self, cls, args, params, why: str):
        """The Python code left the traced path: the rest of the call runs eagerly (from this op on)."""
        self._left(why)
        self.stop()
        return cls.apply(*args, **params)

    def _left(self, why: str) -> None:
        self.plan.diverged += 1
        self.plan.divergence = why


def _bit_equal(a, b) -> bool:
    """Same shape, dtype and values (NaNs in the same places)."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return bool(((a == b) | ((a != a) & (b != b))).all())


def _same_values(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(_same_value(a[k], b[k]) for k in a)


def _same_value(a, b) -> bool:
    """Equal Python arguments: same types, and arrays (index arrays) with the same values."""
    if type(a) is not type(b):
        return False
    if type(a) in (tuple, list):
        return len(a) == len(b) and all(_same_value(x, y) for x, y in zip(a, b))
    if hasattr(a, "__array_interface__") or hasattr(a, "__cuda_array_interface__"):
        return _bit_equal(a, b)
    try:
        return bool(a == b)
    except Exception:  # something without a plain equality: equal only if the same object
        return a is b
