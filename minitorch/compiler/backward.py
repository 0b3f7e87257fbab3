"""The backward of a compiled call: one graph node that replays the recorded backward on arrays.

Eager mode records one node per op; a replay records one ``CompiledBackward`` (PyTorch's
``CompiledFunctionBackward``) whose edges lead to the call's inputs, parameters and buffers that require grad.
Its backward runs the op instances of the replay in the order the engine would have run their nodes
(``engine_order``: the engine's own stack discipline, simulated once at compile time), so gradients meeting at
a value are summed in eager mode's order and the results are bit-identical to eager mode's. Ops whose
derivative is plain arithmetic run on arrays (autograd/array_path.py); the others through their Tensor
backward, with grad mode off.
"""

from __future__ import annotations

import math

from .._geometry import broadcast_dims
from ..autograd import grad_mode
from ..autograd.array_path import add_grads, as_tensors, call_on_arrays
from ..autograd.engine import _call_node
from ..autograd.graph import ERR_BACKWARD_TWICE, Node, edge_of
from ..nn.functional.dropout import Dropout
from ..ops.conversion import Clone
from ..ops.reduction import accumulate_dtype, keepdim_shape
from ..ops.views import Transpose, View
from ..tensor import from_array
from .errors import Unsupported
from .replay_nodes import fused_node


class CompiledBackward(Node):
    """The graph node of a replayed call's outputs."""

    def name(self) -> str:
        return "CompiledFunctionBackward"

    @classmethod
    def attach(cls, plan, nodes: list, made: dict, tensors: list) -> None:
        node = cls.__new__(cls)
        static = plan.attach_info
        if static is None:
            static = plan.attach_info = _attach_info(plan, made, tensors)
        sources, input_meta, arrays = static
        leaves = [tensors[position] if position is not None else t for position, t in sources]
        node.next_functions = tuple([edge_of(t) for t in leaves])
        node._input_meta = input_meta
        node.plan = plan
        node._saved = (nodes,)
        node.output_slots = output_slots = []
        for slot, requires_grad in plan.differentiable_outputs:
            t = made[slot]
            if requires_grad and t._grad_fn is None and not t._requires_grad and slot not in output_slots:
                t._grad_fn = node
                t._output_nr = len(output_slots)
                t._requires_grad = True
                output_slots.append(slot)
        node._n_outputs = len(output_slots)
        node.device = made[output_slots[0]]._storage.device if output_slots else None
        node.backend = plan.steps[0].backend
        if arrays is not None and output_slots and {made[slot]._storage.dtype for slot in output_slots} == arrays[0]:
            node._arrays, node._uniform = True, arrays[1]

    def _check(self) -> None:
        if self._saved is None:
            raise RuntimeError(ERR_BACKWARD_TWICE)

    def _evaluate_on_arrays(self, grads):
        """The engine's array path (first-order backward): gradients in and out as arrays."""
        self._check()
        with self.plan.lock:
            return replay_backward(self.plan, self._saved[0], self.output_slots, grads, arrays=True)

    def wrap_grad(self, array, output_nr: int):
        step = self.plan.steps[0]
        return from_array(array, step.backend, step.device)

    def _evaluate(self, *grads):
        self._check()
        if grad_mode.state.enabled:
            raise Unsupported("double backward (create_graph=True) through a torch.compile'd function is not "
                              "supported; run the function without torch.compile for higher-order gradients")
        with self.plan.lock:
            return replay_backward(self.plan, self._saved[0], self.output_slots, grads)


def _attach_info(plan, made: dict, tensors: list) -> tuple:
    """What ``attach`` needs that the guards keep fixed: per leaf the position of the call's tensor or the
    external tensor itself, the leaves' (shape, dtype), and whether the engine may hand the node arrays and take
    arrays back (its array path: no Tensor wrapping, no re-validation) - when every output and leaf has one
    floating dtype and the leaves are dense: the replay gives each leaf's gradient in exactly its shape and dtype
    (``_uniform``, as an op's node: autograd/array_path.py). The outputs' dtypes are checked at each call (an
    output may be an input, the caller's tensor)."""
    positions = dict(plan.inputs)
    externals = {s: t for s, t, *_ in plan.externals}
    sources = [(positions[slot], None) if slot in positions else (None, externals[slot]) for slot in plan.leaves]
    leaves = [tensors[position] if position is not None else t for position, t in sources]
    input_meta = tuple((t._array.shape, t._storage.dtype) for t in leaves)
    plan.differentiable_outputs = [(ref.slot, rg) for ref, rg in zip(plan.output_slots, plan.output_requires_grad)]
    dtypes = {t._storage.dtype for t in leaves}
    arrays = None
    if len(dtypes) <= 1 and all(t._dense for t in leaves):
        dtypes |= {made[slot]._storage.dtype for slot, rg in plan.differentiable_outputs if rg}
        if len(dtypes) == 1 and next(iter(dtypes)).is_floating_point:
            dtype = next(iter(dtypes))
            arrays = ({dtype}, plan.steps[0].backend.array_dtype(dtype))
    return sources, input_meta, arrays


def replay_backward(plan, nodes: list, output_slots: list, grads, arrays: bool = False) -> tuple:
    """The gradients of the plan's leaves, given those of its outputs (``arrays``: the engine's array path, which
    hands in and takes back arrays)."""
    flowing: dict = {}
    for slot, g in zip(output_slots, grads):
        if g is not None:
            flowing[slot] = g._array if hasattr(g, "_storage") and g._dense else g
    steps = plan.steps
    ndarray = steps[0].backend.ndarray
    program = plan.backward_program
    if program is None:
        program = plan.backward_program = backward_program(plan)
    handoffs = plan.handoffs
    for i, unit, members in program:
        if unit is None:
            target = handoffs.get(i) if handoffs else None
            if target is None or not _hand_off(steps[i], nodes[i], flowing, ndarray, target, nodes):
                step_backward(steps[i], nodes[i], flowing, ndarray)
            continue
        if type(nodes[i]) is list:  # a fused group's kept values (FusedBackward.kept), not yet nodes
            g = flowing.get(unit.grad_slot)
            inner = unit.inner_slots and any(slot in flowing for slot in unit.inner_slots)
            if g is None and not inner:
                continue
            if not inner and unit.applies(g, ndarray):
                del flowing[unit.grad_slot]
                for slot, contribution in unit.run(g, nodes[i]):
                    old = flowing.get(slot)
                    flowing[slot] = contribution if old is None else _add(old, contribution)
                continue
            # a gradient of another dtype, or one arriving at a value inside the group (a piece's result used by
            # the Python code): the unfused nodes after all
            steps[i].fused.retire(nodes[i])  # (its arrays go to graph nodes: the frame is not reused)
            kept = dict(zip(unit.kept, nodes[i]))
            for j in unit.members:
                if steps[j].traced is not None:
                    nodes[j] = fused_node(steps[j], steps[j].fused, kept, j)
        for j in members:
            step_backward(steps[j], nodes[j], flowing, ndarray)
    if arrays:
        return tuple([flowing.get(slot) for slot in plan.leaves])
    result = []
    for slot in plan.leaves:
        g = flowing.get(slot)
        result.append(None if g is None or hasattr(g, "_storage") else from_array(g, steps[0].backend,
                                                                                  steps[0].device))
        if g is not None and hasattr(g, "_storage"):
            result[-1] = g
    return tuple(result)


def backward_program(plan) -> list:
    """The schedule with each fused group's nodes as one entry ``(last step, FusedBackward, members in engine
    order)``, the other steps as ``(step, None, ())`` (their nodes are consecutive in the schedule: fusion.py).
    Sets ``plan.handoffs``: a full ``Sum`` of a fused group's output right before the group's backward hands it
    its gradient as one value (``_hand_off``)."""
    units = plan.backward_units
    program, covered = [], set()
    for i in plan.schedule:
        if i in covered:
            continue
        unit = units.get(i) if units else None
        if unit is None:
            program.append((i, None, ()))
            continue
        members = [j for j in plan.schedule if j in unit.members]
        covered.update(members)
        program.append((i, unit, members))
    handoffs = {}
    for (i, unit, _), (j, after, _) in zip(program, program[1:]):
        step = plan.steps[i]
        if (unit is None and after is not None and step.sum_node is not None and len(step.arg_slots) == 1
                and step.arg_slots[0][1] == after.grad_slot and after.scalar_ok and not after.inner_slots):
            handoffs[i] = (j, after)
    plan.handoffs = handoffs
    return program


def _hand_off(step, node, flowing: dict, ndarray, target, nodes) -> bool:
    """A full sum's backward straight into the fused group's backward that follows it: the sum's gradient, one
    value, is what the group's program multiplies by (the broadcast view eager mode makes holds only that value),
    so no view is made. False (nothing done) unless the gradient is one value of the group's dtype, no other
    gradient reached the group's output, and the group's values are still kept for it."""
    j, unit = target
    slot = step.outputs[0]
    g = flowing.get(slot)
    if (type(g) is not ndarray or g.size != 1 or g.dtype != unit.dtype or unit.grad_slot in flowing
            or type(nodes[j]) is not list or node is None):
        return False
    del flowing[slot]
    for out, contribution in unit.run_value(g.reshape(-1)[0], nodes[j]):
        old = flowing.get(out)
        flowing[out] = contribution if old is None else _add(old, contribution)
    return True


def step_backward(step, node, flowing: dict, ndarray) -> None:
    """One recorded node's backward: its outputs' gradients taken from ``flowing``, its inputs' added there."""
    incoming = [flowing.pop(slot, None) for slot in step.outputs]
    if node is None or all(g is None for g in incoming):
        return
    traced = step.traced
    if step.sum_dtype is not None and type(incoming[0]) is ndarray and incoming[0].dtype == step.sum_dtype:
        grad_inputs = (_sum_backward(node, incoming[0]),)  # (before the array path: the same view, cheaper)
    else:
        node.next_functions = traced.edges
        node._input_meta = traced._input_meta
        node._n_outputs = traced._n_outputs
        grad_inputs = _general_backward(step, node, incoming, ndarray)
    metas = traced._input_meta
    for position, slot in step.arg_slots:
        g = grad_inputs[position] if position < len(grad_inputs) else None
        if g is None or metas[position] is None:
            continue
        if hasattr(g, "_storage") and g._dense:
            g = g._array
        old = flowing.get(slot)
        flowing[slot] = g if old is None else _add(old, g)


def _general_backward(step, node, incoming: list, ndarray):
    traced = step.traced
    if traced._arrays:
        node._arrays, node._uniform = True, traced._uniform
        grad_inputs = call_on_arrays(node, incoming, _on_tensors)
    elif step.linear_dtype is not None and (grad_inputs := _linear_backward(node, incoming[0], step.linear_dtype,
                                                                           ndarray)) is not None:
        pass
    elif step.plain_dtype is not None and type(incoming[0]) is ndarray and incoming[0].dtype == step.plain_dtype:
        grad_inputs = PLAIN_BACKWARD[step.cls](node, incoming[0])
    else:
        grad_inputs = _on_tensors(node, as_tensors(node, incoming))
    return grad_inputs


def _linear_backward(node, grad, dtype, ndarray):
    """``Linear``'s backward on arrays, the same GEMMs as its Tensor backward (``linear(grad, weight.t())`` and
    ``linear(g2.t(), x2.t())``: numpy's ``matmul`` on the same layouts, so the same bits) and the bias gradient
    summed as the engine's ``sum_to_size`` sums it; None (the Tensor path) unless every array is a row-major
    real matrix of the traced dtype, where the Tensor path's reshapes are views too."""
    x, weight = node._saved[0], node._saved[1]
    needs = node._input_meta
    if (type(grad) is not ndarray or grad.dtype != dtype or not grad.flags.c_contiguous
            or (x is not None and not x.flags.c_contiguous) or (weight is not None and not weight.flags.c_contiguous)):
        return None
    xp, backend = node.backend.xp, node.backend
    rows = math.prod(grad.shape[:-1])
    g2 = grad if grad.ndim == 2 else grad.reshape(rows, grad.shape[-1])
    grad_x = grad_weight = grad_bias = None
    if needs[0] is not None:
        grad_x = xp.matmul(g2, weight).reshape(grad.shape[:-1] + (weight.shape[1],)).astype(dtype, copy=False)
    if needs[1] is not None:
        x2 = x if x.ndim == 2 else x.reshape(rows, x.shape[-1])
        grad_weight = xp.matmul(g2.T, x2).astype(dtype, copy=False)
    if node.has_bias and len(needs) > 2 and needs[2] is not None:
        size = needs[2][0]
        grad_bias = grad
        if tuple(grad.shape) != tuple(size):
            total = backend.sum(grad, broadcast_dims(size, grad.shape), True, accumulate_dtype(backend, grad, None))
            grad_bias = total.reshape(size) if len(grad.shape) != len(size) else total
    return grad_x, grad_weight, grad_bias


# Backward formulas written in Tensor ops that are one array operation, run on the array in replays (the same
# numpy operation the Tensor op runs: the same values; a view stays a view): View's ``grad.reshape(input_shape)``,
# Transpose's ``grad.transpose(d0, d1)``, Clone's identity, Dropout's ``grad * multiplier`` (same dtypes only).
PLAIN_BACKWARD = {
    View: lambda node, grad: (grad.reshape(node.input_shape),),
    Transpose: lambda node, grad: (node.backend.xp.swapaxes(grad, *node.params),),
    Clone: lambda node, grad: (grad,),
    Dropout: lambda node, grad: (grad * node.multiplier, None, None, None)
    if node.multiplier.dtype == grad.dtype else _dropout_on_tensors(node, grad),
}


def _dropout_on_tensors(node, grad):
    return _on_tensors(node, as_tensors(node, [grad]))


def _sum_backward(node, grad):
    """``Sum``'s backward on arrays: the gradient with the summed dims back as size 1, broadcast to the input's
    shape (what its Tensor backward, ``reshape`` then ``expand``, makes as a view: the same values)."""
    if grad.size == 1 and grad.flags.c_contiguous:  # one value (a full sum): a stride-0 window on it
        return node.backend.as_strided(grad.reshape(-1), node.input_shape, (0,) * len(node.input_shape), 0)
    if not node.keepdim:
        grad = grad.reshape(keepdim_shape(node.input_shape, node.dims))
    return node.backend.xp.broadcast_to(grad, node.input_shape)


def _on_tensors(node, grads):
    """A node whose backward is written in Tensor ops: its saved arrays become Tensors first."""
    saved = node._saved
    if saved and any(hasattr(s, "shape") and not hasattr(s, "_storage") for s in saved):
        node._saved = tuple(from_array(s, node.backend, node.device) if hasattr(s, "shape") and
                            not hasattr(s, "_storage") else s for s in saved)
    return _call_node(node, grads)


def _add(old, g):
    """Two gradients meeting at one value, summed as the engine sums them (``old + g``)."""
    if type(old) is type(g):
        return old + g
    return add_grads(None, 0, old, g)


def engine_order(steps: list, output_slots: list, tracer) -> list:
    """The order in which the engine would run the recorded nodes, backward from the outputs: its dependency
    count and last-in-first-out ready stack (autograd/engine.py), simulated on the steps."""
    producer = {}
    for i, step in enumerate(steps):
        if step.traced is not None:
            for slot in step.outputs:
                producer[slot] = i

    def children(i):
        step = steps[i]
        kids = []
        positions = dict(step.arg_slots)
        for position in range(len(step.traced.edges)):
            slot = positions.get(position)
            kids.append(producer.get(slot) if slot is not None and step.traced._input_meta[position] is not None
                        else None)
        return kids

    roots = [producer.get(slot) for slot in output_slots]
    dependencies: dict = {}
    stack = [r for r in roots if r is not None]
    seen = set()
    for r in stack:
        dependencies[r] = dependencies.get(r, 0) + 1
    while stack:
        i = stack.pop()
        if i in seen:
            continue
        seen.add(i)
        for kid in children(i):
            if kid is not None:
                dependencies[kid] = dependencies.get(kid, 0) + 1
                if kid not in seen:
                    stack.append(kid)
    order = []
    ready = []
    for r in roots:  # the root's edges, in order
        if r is not None:
            dependencies[r] -= 1
            if dependencies[r] == 0:
                ready.append(r)
    while ready:
        i = ready.pop()
        order.append(i)
        for kid in children(i):
            if kid is not None:
                dependencies[kid] -= 1
                if dependencies[kid] == 0:
                    ready.append(kid)
    return order
