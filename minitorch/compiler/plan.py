"""A plan: the flat list of kernels one traced call ran, replayed on arrays.

Replaying a step calls the op's own ``forward`` on arrays (a fresh op instance keeps what its backward needs,
as in eager mode) or rebuilds a view from its recorded geometry; no Tensor, graph node or dispatch is made per
op. Arrays are dropped after their last use (liveness from the trace), so a replay holds no more memory than
eager mode. When the call is differentiated, the op instances of the replay become the nodes of one
``CompiledBackward`` node (compiler/backward.py), which replays the recorded backward on arrays.
"""

from __future__ import annotations

import bisect
import threading

from ..autograd import grad_mode
from ..nn.functional.linear import Linear
from ..ops.reduction import Sum, accumulate_dtype
from ..tensor import from_array
from .backward import PLAIN_BACKWARD, CompiledBackward, engine_order
from .errors import Unsupported
from .replay_nodes import fused_node, saved_values
from .tracer import Detach, Tracer, requires_grad_of


class NodeInfo:
    """What the backward replay needs from the node eager dispatch recorded for a step while tracing."""

    __slots__ = ("_input_meta", "_arrays", "_uniform", "_n_outputs", "edges", "name")

    def __init__(self, node):
        self._input_meta = node._input_meta
        self._arrays, self._uniform, self._n_outputs = node._arrays, node._uniform, node._n_outputs
        self.edges = ((None, 0),) * len(node.next_functions)  # only their number is read by a replayed node
        self.name = node.name()


class PlanStep:
    """What the replay loop needs from a traced step, in plain attributes."""

    __slots__ = ("cls", "args", "arg_slots", "params", "outputs", "views", "traced", "extras", "saved", "free",
                 "backend", "device", "row_major", "fused", "fused_head", "fused_group", "sum_dtype",
                 "linear_dtype", "plain_dtype", "sum_node")

    def __init__(self, step, backend, device):
        self.cls = step.cls
        self.args = step.args
        self.arg_slots = step.arg_slots
        self.params = step.params
        self.outputs = step.outputs
        self.views = step.views if step.views and step.views[0] is not None else None
        self.traced = NodeInfo(step.node) if step.node is not None else None
        self.extras = step.extras
        self.saved = step.saved
        self.free = ()
        self.backend, self.device = backend, device
        self.row_major = step.cls.row_major_output
        self.fused = self.fused_group = None  # the FusedGroup this step belongs to (fusion.py)
        self.fused_head = False
        self.sum_dtype = None  # a Sum whose input and output arrays have this dtype: its backward runs on arrays
        self.linear_dtype = None  # a Linear of real arrays of this dtype: the same (backward.py)
        self.plain_dtype = None  # View, Transpose, Clone, Dropout with input and output of this dtype: the same
        self.sum_node = None  # a Sum: its node, made once (what its forward sets depends only on the guards)


class Plan:
    """A traced call's steps, with where its inputs come from and what it returns."""

    guided = False  # (a call with graph breaks gets a pieces.GuidedPlan instead)

    def __init__(self, tracer: Tracer, input_positions: dict, outputs, guards, compile_seconds: float):
        self.guards = guards
        # the plan's buffers (pools, scratch, frames) serve one replay at a time: a call finding it taken runs
        # eagerly (api.py), a backward waits its turn (backward.py); reentrant for a backward inside a call
        self.lock = threading.RLock()
        self.compile_seconds = compile_seconds
        self.n_slots = len(tracer.slots)
        self.slot_info = [(s.kind, tuple(s.tensor.shape), s.tensor.dtype) for s in tracer.slots]
        self.inputs = [(i, input_positions[id(s.tensor)]) for i, s in enumerate(tracer.slots) if s.kind == "input"]
        self.externals = [(i, s.tensor, s.source[0], s.source[1], s.tensor._array.shape, s.tensor._storage.dtype,
                           requires_grad_of(s.tensor)) for i, s in enumerate(tracer.slots) if s.kind == "external"]
        self.consts = [(i, s.tensor._array) for i, s in enumerate(tracer.slots) if s.kind == "const"]
        # random values (dropout's masks): drawn again at every call, in the trace's order (slots are numbered in
        # the order the tensors were made); read or not, each draw advances the generator as in eager mode
        self.randoms = [(i, s.source) for i, s in enumerate(tracer.slots) if s.kind == "random"]
        if any(requires_grad_of(s.tensor) for s in tracer.slots if s.kind == "const"):
            raise Unsupported("a tensor made by a factory inside the function requires grad")
        self.leaves = [i for i, s in enumerate(tracer.slots) if s.kind in ("input", "external")
                       and requires_grad_of(s.tensor)]
        self.steps = []
        for step in tracer.steps:
            first = tracer.slots[step.arg_slots[0][1]].tensor._storage
            plan_step = PlanStep(step, first.backend, first.device)
            if step.cls is Linear and step.node is not None:
                dtypes = {tracer.slots[slot].tensor._array.dtype for slot in [s for _, s in step.arg_slots]
                          + list(step.outputs)}
                if len(dtypes) == 1 and next(iter(dtypes)).kind == "f":
                    plan_step.linear_dtype = dtypes.pop()
            if step.cls in PLAIN_BACKWARD and step.node is not None:
                dtypes = {tracer.slots[slot].tensor._array.dtype for slot in (step.arg_slots[0][1], step.outputs[0])}
                if len(dtypes) == 1 and next(iter(dtypes)).kind == "f":
                    plan_step.plain_dtype = dtypes.pop()
            if step.cls is Sum and step.node is not None:
                dtypes = {tracer.slots[slot].tensor._array.dtype for slot in (step.arg_slots[0][1], step.outputs[0])}
                if len(dtypes) == 1:
                    plan_step.sum_dtype = dtypes.pop()
            if (step.cls is Sum and set(step.extras or ()) <= _SUM_ATTRIBUTES and len(step.args) == 5
                    and step.arg_slots[0][0] == 0):
                plan_step.sum_node = _static_sum(plan_step, tracer.slots[step.arg_slots[0][1]].tensor._array)
            self.steps.append(plan_step)
        self.outputs = outputs  # the output structure, tensors replaced by slot numbers (see api.py)
        self.output_slots = [s for s in _leaves(outputs) if isinstance(s, _SlotRef)]
        self.output_requires_grad = [requires_grad_of(tracer.slots[r.slot].tensor) for r in self.output_slots]
        self.any_output_requires_grad = any(self.output_requires_grad)
        self.output_sources = None  # (``_outputs``, made at first use)
        self.eager_views = tracer.eager_views  # outputs that are views of an input: made by eager views
        self.records = grad_mode.state.enabled and any(s.traced is not None for s in self.steps)
        self.schedule = engine_order(self.steps, [r.slot for r in self.output_slots], tracer) if self.records else []
        self._liveness()
        self.fused_groups = []
        self.backward_units = {}  # last step of a fused group -> its FusedBackward (fusion.py)
        self.backward_program = None  # the schedule with fused groups as units (backward.py), made at first use
        self.handoffs = None  # (made with it)
        self.run_list = self.run_indices = None  # the steps a replay runs (``_make_run_list``), made at first use
        self.attach_info = None  # (backward.py's attach, made at first use)
        self.differentiable_outputs = None
        self.outside_reads = None  # a piece's plan: the slots read outside it in the trace (pieces.py)

    def resident_bytes(self) -> int:
        """Bytes the plan keeps between calls: fused groups' scratch buffers and pooled buffers not in use."""
        total = 0
        for group in self.fused_groups:
            backward = group.backward
            kernels = (group.kernel,) + ((backward.kernel, backward.unit) if backward is not None else ())
            for kernel in kernels:
                if kernel is not None:
                    total += kernel.scratch_bytes + sum(b.nbytes for _, pool in kernel.outputs for b in pool.buffers)
                    total += sum(kernel.regs[r].nbytes for r in kernel.fixed_regs)
            for frame in group.frames:  # (a frame's own arrays: its batches' and its first values)
                owned = frame[:len(group.framed)] + frame[len(group.backward.kept):]
                total += sum(a.nbytes for a in owned if a.base is None)
        return total

    def _liveness(self, keep=None) -> None:
        """Each step drops the arrays it read for the last time (outputs and backward's saved values excepted)."""
        last = {}
        for i, step in enumerate(self.steps):
            for _, slot in step.arg_slots:
                last[slot] = i
        keep = {r.slot for r in self.output_slots} if keep is None else keep
        frees: dict[int, list] = {}
        for slot, i in last.items():
            if slot not in keep:
                frees.setdefault(i, []).append(slot)
        for i, step in enumerate(self.steps):
            step.free = tuple(frees.get(i, ()))

    # replay -------------------------------------------------------------------------------------
    def run(self, tensors: list):
        """The call's outputs, computed from ``tensors`` (the call's tensor arguments, flattened)."""
        values = [None] * self.n_slots
        for slot, position in self.inputs:
            values[slot] = tensors[position]._array
        nodes = self.compute(values)
        return self._outputs(values, tensors, nodes)

    def compute(self, values: list):
        """Run the steps on ``values`` (the inputs' arrays filled in; externals and constants are added here);
        returns the per-step graph nodes for backward (None when nothing is recorded)."""
        self.prepare(values)
        nodes = [None] * len(self.steps) if self.records else None
        self.compute_range(values, nodes, 0, len(self.steps))
        return nodes

    def prepare(self, values: list) -> None:
        for slot, tensor, *_ in self.externals:
            values[slot] = tensor._array
        for slot, array in self.consts:
            values[slot] = array
        for slot, redraw in self.randoms:
            values[slot] = redraw()

    def compute_range(self, values: list, nodes, start: int, stop: int) -> None:
        """Run steps ``start`` to ``stop - 1`` (a piece runs its steps as its ops are called: pieces.py)."""
        records = nodes is not None
        run_list = self.run_list
        if run_list is None:
            run_list = self._make_run_list()
        pos = bisect.bisect_left(self.run_indices, start) if start else 0
        for i, step, free in run_list[pos:] if pos else run_list:
            if i >= stop:
                break
            if step.fused is not None:
                group = step.fused
                if step.fused_head:
                    kept = group.run(values)
                    if records and group.backward is not None:  # its nodes are made only if backward needs them
                        nodes[group.indices[-1]] = kept if kept is not None else [values[slot] for slot in
                                                                                  group.backward.kept]
                if records and step.traced is not None and group.backward is None:
                    nodes[i] = fused_node(step, group, values, i)
            elif step.views is not None:
                self._run_view(step, values, nodes, i)
            elif step.sum_node is not None:  # (Sum.forward without a new node: its attributes never change)
                node = step.sum_node
                result = step.backend.sum(values[step.arg_slots[0][1]], node.dims, node.keepdim, node.sum_dtype)
                values[step.outputs[0]] = _normalized(result, step.backend, step.backend.ndarray, True)
                if records and step.traced is not None:
                    nodes[i] = node
            else:
                args = list(step.args)
                for position, slot in step.arg_slots:
                    args[position] = values[slot]
                cls = step.cls
                node = cls.__new__(cls)
                node.backend = backend = step.backend
                node.device = step.device
                if step.extras:
                    node.__dict__.update(step.extras)
                result = node.forward(*args, **step.params)
                ndarray = backend.ndarray
                if type(result) is tuple:
                    for slot, array in zip(step.outputs, result):
                        values[slot] = _normalized(array, backend, ndarray, step.row_major)
                else:
                    values[step.outputs[0]] = _normalized(result, backend, ndarray, step.row_major)
                if records and step.traced is not None:
                    node._saved = saved_values(step, args, values)
                    nodes[i] = node
            for slot in free:
                values[slot] = None

    def _make_run_list(self) -> list:
        """``(index, step, slots to free)`` for the steps that do something at replay: a fused group's members
        after its first run with it (unless each needs a graph node of its own), their frees moved to the first."""
        run_list = []
        for i, step in enumerate(self.steps):
            group = step.fused
            idle = (group is not None and not step.fused_head
                    and (not self.records or step.traced is None or group.backward is not None))
            if idle:
                head = run_list[-1]
                run_list[-1] = (head[0], head[1], head[2] + tuple(step.free))
            else:
                run_list.append((i, step, tuple(step.free)))
        for n, (i, step, free) in enumerate(run_list):
            group = step.fused
            if group is not None and step.fused_head and group.kernel.straight is not None:
                # a generated group program stores only its inputs' and its unframed outputs' values: only those
                # slots can hold an array to drop
                framed = {reg for reg, _, _ in group.framed}
                stored = {slot for _, slot in group.inputs} | {slot for reg, slot in group.outputs if reg not in framed}
                run_list[n] = (i, step, tuple(slot for slot in free if slot in stored))
        self.run_list = run_list
        self.run_indices = [i for i, _, _ in run_list]
        return run_list


    @staticmethod
    def _run_view(step, values, nodes, i) -> None:
        backend = step.backend
        for slot, (position, span, size, stride, delta) in zip(step.outputs, step.views):
            source = values[dict(step.arg_slots)[position]]
            buffer = backend.span_buffer(source, span) if span else source.reshape(-1)
            values[slot] = backend.as_strided(buffer, size, stride, delta)
        if nodes is not None and step.traced is not None:
            cls = step.cls
            node = cls.__new__(cls)
            node.backend, node.device = backend, step.device
            node.__dict__.update(step.extras)
            node._saved = ()
            nodes[i] = node

    def _eager_view(self, slot: int, tensors: list):
        root, chain = self.eager_views[slot]
        position = next((p for s, p in self.inputs if s == root), None)
        base = tensors[position] if position is not None else next(t for s, t, *_ in self.externals if s == root)
        return _view_again(base, chain)

    def _outputs(self, values, tensors, nodes):
        made = {}
        sources = self.output_sources
        if sources is None:  # per distinct output slot: the call's tensor at a position, an eager view, or new
            positions = dict(self.inputs)
            sources = self.output_sources = []
            for ref in self.output_slots:
                if all(entry[0] != ref.slot for entry in sources):
                    sources.append((ref.slot, positions.get(ref.slot), ref.slot in self.eager_views))
        for slot, position, view in sources:
            if position is not None:
                made[slot] = tensors[position]
            elif view:
                made[slot] = self._eager_view(slot, tensors)
            else:  # (a plan without steps returns only inputs and views of them)
                step = self.steps[0]
                made[slot] = from_array(values[slot], step.backend, step.device)
        if nodes is not None and self.any_output_requires_grad:
            CompiledBackward.attach(self, nodes, made, tensors)
        return _rebuild(self.outputs, made)


_SUM_ATTRIBUTES = {"input_shape", "dims", "keepdim", "dim_given"}  # what Sum.forward sets


def _static_sum(step: PlanStep, traced_input):
    """The node of a Sum step, shared by every replay: ``Sum.forward`` sets only the input's shape, the dims,
    keepdim and dim_given (all fixed by the guards and the step's arguments), and it saves no tensor."""
    _, dims, keepdim, dtype, dim_given = step.args
    node = Sum.__new__(Sum)
    node.backend, node.device = step.backend, step.device
    node.input_shape, node.dims, node.keepdim, node.dim_given = traced_input.shape, dims, keepdim, dim_given
    node.sum_dtype = accumulate_dtype(step.backend, traced_input, dtype)
    node._saved = ()
    if step.saved or step.params or any(getattr(node, k) != v for k, v in (step.extras or {}).items()):
        return None
    return node


def _view_again(t, chain):
    """Apply recorded view steps to ``t`` through eager dispatch (the output then shares memory and version
    counter with ``t``, and has a view's history, as in eager mode)."""
    for cls, args, params, nr, _ in chain:
        if cls is Detach:
            t = t.detach()
            continue
        result = cls.apply(t, *args[1:], **params)
        t = result[nr] if type(result) is tuple else result
    return t


def _normalized(array, backend, ndarray, row_major: bool):
    """The array eager dispatch would wrap (Op.wrap, then from_array): row-major where the op asks for it,
    a 0-d array for a numpy scalar, a dense copy of an overlapping result."""
    if type(array) is ndarray and array.flags.c_contiguous:
        return array
    if row_major and type(array) is ndarray:
        array = array.copy()
        if array.flags.c_contiguous:
            return array
    return backend.buffer_of(array)[1]


class _SlotRef:
    """An output of the call: the value in ``slot``."""

    __slots__ = ("slot",)

    def __init__(self, slot: int):
        self.slot = slot


def _leaves(structure):
    if isinstance(structure, (list, tuple)):
        for item in structure:
            yield from _leaves(item)
    elif isinstance(structure, dict):
        for item in structure.values():
            yield from _leaves(item)
    else:
        yield structure


def _rebuild(structure, made: dict):
    if isinstance(structure, _SlotRef):
        return made[structure.slot]
    if isinstance(structure, list):
        return [_rebuild(item, made) for item in structure]
    if isinstance(structure, tuple):
        items = [_rebuild(item, made) for item in structure]
        return type(structure)(*items) if hasattr(structure, "_fields") else tuple(items)
    if isinstance(structure, dict):
        return type(structure)((k, _rebuild(v, made)) for k, v in structure.items())
    return structure


def output_structure(result, tracer: Tracer):
    """The call's result with each tensor replaced by its slot (tensors only inside lists, tuples, dicts)."""
    if isinstance(result, (list, tuple)):
        items = [output_structure(item, tracer) for item in result]
        if isinstance(result, list):
            return items
        return type(result)(*items) if hasattr(result, "_fields") else tuple(items)
    if isinstance(result, dict):
        return type(result)((k, output_structure(v, tracer)) for k, v in result.items())
    if hasattr(result, "_storage"):
        return _SlotRef(tracer.by_id[id(result)])
    return result
