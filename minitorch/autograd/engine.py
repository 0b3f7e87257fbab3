"""backward(): walk the recorded graph from the outputs to the leaves, once, without recursion.

The algorithm, micrograd's with the bookkeeping PyTorch needs:
  1. discover the graph below the roots and count, for each node, the edges that reach it;
  2. run nodes whose count dropped to zero: hooks, then the node's backward, then hand each
     input's gradient down its edge, summing gradients that meet at one node;
  3. a leaf's AccumulateGrad adds what reaches it into ``.grad``.
With ``inputs`` (``autograd.grad`` or ``backward(inputs=...)``) only the nodes on a path to an
input run, and the gradients arriving at the inputs are captured.
"""

from __future__ import annotations

import itertools
import threading

from .. import _trace_state
from .._geometry import non_overlapping_and_dense
from ..memory_format import contiguous_format
from . import forward_ad, grad_mode
from .anomaly import check_nan, is_anomaly_enabled, report_failure
from .array_path import add_grads, as_tensor, as_tensors, call_on_arrays, expandable
from .graph import AccumulateGrad, Node, edge_of


class GraphRoot(Node):
    """The node the engine starts from: its edges are the roots, its outputs the seeds."""

    def __init__(self, edges, seeds):
        super().__init__()
        self.next_functions = tuple(edges)
        self.seeds = seeds

    def _evaluate(self, *_):
        return self.seeds


def run_backward(
    outputs, grad_outputs, retain_graph, create_graph, inputs=None, accumulate=True, allow_unused=True
):
    """Back-propagate ``grad_outputs`` from ``outputs``. With ``accumulate`` grads go into ``.grad``;
    otherwise the gradients of ``inputs`` are returned (that is ``autograd.grad``).

    Without ``create_graph`` nothing is recorded, so nodes with an ``array_derivative`` run on the raw
    arrays (array_path.py): gradients flow between them as arrays, and become Tensors only where a
    Tensor is needed (another node's backward, a hook, ``.grad``, a captured input).
    """
    if _trace_state.tracer is not None:  # inside minitorch.compile's trace: the plan cannot replay a backward
        _trace_state.backward_called()
    root = GraphRoot([edge_of(t) for t in outputs], tuple(grad_outputs))
    # 1. discover and count; ``buffers``: per node, the gradients arrived for each of its outputs
    dependencies, buffers, reach, captured = _plan(root, inputs)
    # (inside a dual level backward runs on Tensors: forward-over-reverse needs the tangents of saved values)
    on_arrays = not create_graph and not is_anomaly_enabled() and not forward_ad.state.active
    owned = {_memory_of(g) for g in grad_outputs}  # memory a .grad may not share with another
    ready = [root]
    # A node that runs on arrays without hooks, towards no inputs= (nearly every node of a training step) takes
    # the first branch: none of the checks of the second (hooks, capture, leaves, the root) can apply to it.
    plain = on_arrays and captured is None
    with BackwardScope(create_graph, outputs if on_arrays else (), towards_inputs=inputs is not None):
        while ready:
            node = ready.pop()  # 2. pop a node whose gradients have all arrived
            grads = buffers.pop(node)
            if plain and node._arrays and not node._hooked:  # 3. call its backward
                uniform = node._uniform
                if uniform is not None and len(grads) == 1 and getattr(grads[0], "dtype", None) is uniform:
                    grad_inputs = node._evaluate_on_arrays(grads)  # (call_on_arrays's case with nothing to check)
                else:
                    grad_inputs = call_on_arrays(node, grads, _call_node)
            else:
                if node._hooked or type(node) is AccumulateGrad:
                    grads = _run_tensor_pre_hooks(node, as_tensors(node, grads), create_graph, owned)
                if captured is not None and not _capture(node, grads, captured):
                    continue
                if type(node) is AccumulateGrad:  # a leaf: into .grad
                    if accumulate:
                        _run_accumulate_grad(node, grads, create_graph, owned)
                    continue
                if node is root:
                    grad_inputs = root.seeds
                elif on_arrays and node._arrays and not node._hooked:
                    grad_inputs = call_on_arrays(node, grads, _call_node)
                else:
                    grad_inputs = _call_node(node, as_tensors(node, grads))
            if not retain_graph:
                if not node._releases_saved_only:
                    node.release_saved()
                elif node._saved:  # (Node.release_saved, inlined)
                    node._saved = None
            for (child, nr), g in zip(node.next_functions, grad_inputs):  # 4. route each gradient down its edge
                if child is None or (reach is not None and child not in reach):
                    continue
                if g is not None:
                    slots = buffers[child]
                    old = slots[nr]  # (add_grads's first case inlined: two of one kind add as they are)
                    slots[nr] = g if old is None else old + g if type(old) is type(g) else add_grads(child, nr, old, g)
                count = dependencies[child] - 1
                dependencies[child] = count
                if not count:
                    ready.append(child)
    if captured is None:
        return None
    return _captured_grads(inputs, captured, accumulate, create_graph, allow_unused, owned)


class _GraphTaskState(threading.local):
    """The backward running in this thread (PyTorch's graph task): ``id`` is -1 outside backward,
    ``towards_inputs`` whether it only computes the gradients of given inputs. Non-reentrant checkpointing
    recomputes once per backward; the reentrant one refuses to run towards inputs."""

    id = -1
    towards_inputs = False


graph_task = _GraphTaskState()
_task_ids = itertools.count()


class BackwardScope:
    """What one ``run_backward`` sets for its duration and restores after: grad mode (on only to build a graph,
    ``create_graph``), the quiet floating-point state of the backends of ``quiet`` (derivatives on arrays are as
    quiet as the kernels), and ``graph_task``, which backward this is (a nested backward gets its own id, then
    the outer's is back). One object, not three context managers: every ``backward()`` enters it."""

    __slots__ = ("grad_enabled", "quiet", "towards_inputs", "outer", "tokens")

    def __init__(self, grad_enabled: bool, quiet, towards_inputs: bool) -> None:
        self.grad_enabled, self.quiet, self.towards_inputs = grad_enabled, quiet, towards_inputs

    def __enter__(self) -> None:
        state = grad_mode.state
        self.outer = state.enabled, graph_task.id, graph_task.towards_inputs
        state.enabled = self.grad_enabled
        graph_task.id, graph_task.towards_inputs = next(_task_ids), self.towards_inputs
        self.tokens = tokens = []  # (the state variable, the token that restores it): one per backend
        for t in self.quiet:
            fp_state = t._storage.backend.quiet_fp_state
            if fp_state is not None and (not tokens or all(fp_state[0] is not v for v, _ in tokens)):
                tokens.append((fp_state[0], fp_state[0].set(fp_state[1])))

    def __exit__(self, *exc) -> None:
        for variable, token in reversed(self.tokens):
            variable.reset(token)
        grad_mode.state.enabled, graph_task.id, graph_task.towards_inputs = self.outer


def _plan(root: Node, inputs) -> tuple:
    """What the loop needs before it starts: each node's count of incoming edges and its empty gradient
    slots; with ``inputs`` (``autograd.grad``), also ``reach`` (the nodes on a path to an input) and
    ``captured`` (the inputs' edges, the gradients that arrive there, filled by ``_capture``, and the nodes
    that must run)."""
    if inputs is None:
        return *_count_dependencies(root), None, None
    input_edges = [edge_of(t) for t in inputs]
    children = _discover(root)
    wanted = _nodes_leading_to({node for node, _ in input_edges}, children)
    captured = {"edges": input_edges, "grads": dict.fromkeys(input_edges), "runs": wanted["runs"]}
    buffers = {node: [None] * node._n_outputs for node in children}
    return _count_wanted_dependencies(children, wanted), buffers, wanted["reach"], captured


def _capture(node: Node, grads: list, captured: dict) -> bool:
    """Keep the gradients arriving at an input of ``autograd.grad``; False: the node need not run (nothing
    below it leads to an input)."""
    arrived = captured["grads"]
    for nr, g in enumerate(grads):
        if (node, nr) in arrived:
            arrived[(node, nr)] = as_tensor(node, g, nr)
    return node in captured["runs"]


def _discover(root: Node) -> dict[Node, tuple]:
    """Every node below ``root`` with its children, by an explicit-stack depth-first search."""
    children: dict[Node, tuple] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        if node in children:
            continue
        kids = tuple(child for child, _ in node.next_functions if child is not None)
        children[node] = kids
        stack.extend(kid for kid in kids if kid not in children)
    return children


def _nodes_leading_to(targets: set, children: dict) -> dict:
    """``reach``: nodes on a path to a target; ``runs``: nodes that must run to get there."""
    parents: dict[Node, list] = {}
    for node, kids in children.items():
        for kid in kids:
            parents.setdefault(kid, []).append(node)
    reach, stack = set(), [t for t in targets if t in children]
    while stack:
        node = stack.pop()
        if node not in reach:
            reach.add(node)
            stack.extend(parents.get(node, ()))
    runs = {node for node in reach if any(kid in reach for kid in children[node])}
    return {"reach": reach, "runs": runs}


def _count_dependencies(root: Node) -> tuple[dict, dict]:
    """Every node below ``root`` with the number of edges reaching it (a node runs once that many gradients
    have arrived), and with its empty gradient slots, in one depth-first pass."""
    dependencies = {root: 0}
    buffers = {root: [None]}
    stack = [root]
    while stack:
        for child, _ in stack.pop().next_functions:
            if child is not None:
                count = dependencies.get(child)
                if count is None:
                    dependencies[child] = 1
                    buffers[child] = [None] * child._n_outputs
                    stack.append(child)
                else:
                    dependencies[child] = count + 1
    return dependencies, buffers


def _count_wanted_dependencies(children: dict, wanted: dict) -> dict[Node, int]:
    """As ``_count_dependencies``, counting only the edges of nodes that run to reach the inputs."""
    dependencies = dict.fromkeys(children, 0)
    runs = wanted["runs"]
    for node, kids in children.items():
        if node in runs:
            for kid in kids:
                dependencies[kid] += 1
    return dependencies


def _run_tensor_pre_hooks(node: Node, grads: list, create_graph: bool, owned: set) -> list:
    """Tensor hooks (``register_hook``) in registration order, then ``retain_grad``."""
    hooks = node._tensor_pre_hooks
    if type(node) is AccumulateGrad:
        meta = node.variable._meta
        hooks = {0: meta.hooks} if meta is not None and meta.hooks else None
    if hooks:
        for nr, per_output in hooks.items():
            for fn in list(per_output.values()):
                if grads[nr] is None:
                    break
                replaced = fn(grads[nr])
                if replaced is not None:
                    if replaced.shape != grads[nr].shape:
                        raise RuntimeError(
                            f"hook '{getattr(fn, '__name__', 'hook')}' has changed the size of value: expected "
                            f"{list(grads[nr].shape)}, got {list(replaced.shape)}"
                        )
                    grads[nr] = replaced
    if node._retain_grad_tensors:
        for nr, ref in node._retain_grad_tensors.items():
            tensor = ref()
            if tensor is not None and grads[nr] is not None:
                accumulate_into(tensor, grads[nr], create_graph, owned)
    return grads


def _call_node(node: Node, grads: list) -> tuple:
    """Pre-hooks, the node's backward, post-hooks, then the gradients checked against the inputs."""
    if node._pre_hooks:
        grads = _run_node_pre_hooks(node, grads)
    if all(g is None for g in grads) and not getattr(node, "_always_called", False):
        return (None,) * len(node.next_functions)  # nothing flows through a built-in op
    try:
        grad_inputs = node._evaluate(*grads)
    except Exception:
        if node._traceback is not None:
            report_failure(node)
        raise
    if not isinstance(grad_inputs, tuple):
        grad_inputs = (grad_inputs,)
    if node._post_hooks:
        grad_inputs = _run_node_post_hooks(node, grad_inputs, grads)
    grad_inputs = validate_grads(node, grad_inputs)
    if is_anomaly_enabled():
        check_nan(node, grad_inputs)
    return grad_inputs


def _run_accumulate_grad(node: AccumulateGrad, grads: list, create_graph: bool, owned: set) -> None:
    """A leaf's AccumulateGrad node: its pre-hooks, the gradient added into ``.grad`` (then the leaf's
    post-accumulate-grad hooks), its hooks, in PyTorch's order. (Tensor hooks ran before, as for any node.)"""
    if node._pre_hooks:
        grads = _run_node_pre_hooks(node, grads)
    if grads[0] is not None:
        accumulate_into(node.variable, grads[0], create_graph, owned)
    if node._post_hooks:
        _run_node_post_hooks(node, (), grads)


def _run_node_pre_hooks(node: Node, grads: list) -> list:
    """``node.register_prehook`` hooks in registration order; each may return replacement ``grad_outputs``."""
    for fn in list(node._pre_hooks.values()):
        replaced = _checked_hook_result(fn, fn(tuple(grads)), len(grads))
        if replaced is not None:
            grads = list(replaced)
    return grads


def _run_node_post_hooks(node: Node, grad_inputs: tuple, grads: list) -> tuple:
    """``node.register_hook`` hooks in registration order; each may return replacement ``grad_inputs``."""
    for fn in list(node._post_hooks.values()):
        replaced = _checked_hook_result(fn, fn(grad_inputs, tuple(grads)), len(grad_inputs))
        if replaced is not None:
            grad_inputs = replaced
    return grad_inputs


def _checked_hook_result(fn, result, expected: int):
    """A node hook returns None or a tuple of as many gradients as it was given (PyTorch's checks)."""
    if result is None:
        return None
    if type(result) is not tuple:
        raise TypeError(f"expected tuple, but hook returned '{type(result).__name__}'")
    if len(result) != expected:
        raise RuntimeError(
            f"hook '{getattr(fn, '__name__', 'hook')}' has returned an incorrect number of values "
            f"(got {len(result)}, but expected {expected})"
        )
    return result


def validate_grads(node: Node, grad_inputs: tuple) -> tuple:
    """Reduce broadcast gradients to their input's shape and cast them to its dtype."""
    expected = len(node.next_functions)
    if len(grad_inputs) != expected:
        raise RuntimeError(
            f"function {node.name()} returned an incorrect number of gradients "
            f"(expected {expected}, got {len(grad_inputs)})"
        )
    metas = node._input_meta
    result = list(grad_inputs)
    for i, g in enumerate(grad_inputs):
        if g is None:
            continue
        meta = metas[i] if i < len(metas) else None
        if meta is None:
            result[i] = None
            continue
        shape, dtype = meta
        if g._array.shape != shape:  # a sparse gradient's _array is its shape-only geometry
            if g.is_sparse or not expandable(shape, g._array.shape):
                raise RuntimeError(
                    f"Function {node.name()} returned an invalid gradient at index {i} - got "
                    f"{list(g._array.shape)} but expected shape compatible with {list(shape)}"
                )
            g = g.sum_to_size(shape)
        if g.dtype is not dtype and not g.is_sparse:
            if g.dtype.is_complex and not dtype.is_complex:  # a real input's gradient: the real part (PyTorch's rule)
                g = g.real
            g = g.to(dtype)
        result[i] = g
    return tuple(result)


def accumulate_into(tensor, grad, create_graph: bool, owned: set) -> None:
    """Add ``grad`` into ``tensor.grad`` as PyTorch's AccumulateGrad does.

    The first gradient is stored without a copy unless its memory is already some other tensor's
    ``.grad`` (or the caller's seed); later ones are added in place, or out of place when
    ``create_graph`` (then ``.grad`` carries a graph).
    """
    meta = tensor._autograd_meta()
    current = meta.grad
    if current is None:
        meta.grad = _first_grad(tensor, grad if create_graph else grad.detach(), create_graph, owned)
    elif create_graph:
        meta.grad = current + grad
    else:  # in place where the layouts allow (the one layout-specific step: SparseTensor overrides it)
        meta.grad = grad._accumulate_into(current)
    owned.add(_memory_of(meta.grad))
    if meta.post_accumulate_hooks and tensor.grad_fn is None:
        for fn in list(meta.post_accumulate_hooks.values()):
            fn(tensor)


def _first_grad(tensor, grad, create_graph: bool, owned: set):
    """A leaf's first ``.grad``, by PyTorch's gradient layout contract: the gradient itself when nothing else
    holds its memory (not the caller's seed, not another ``.grad``), no graph is being built and it is laid out
    as the leaf; else a copy laid out as the leaf when the leaf is dense (its strides), row-major otherwise.
    With ``create_graph`` the copy is recorded (CopyBackwards), as in PyTorch."""
    if not (tensor._dense and grad._dense):  # sparse, quantized, batched: their own layouts
        return grad.clone() if _memory_of(grad) in owned else grad
    leaf, array = tensor._array, grad._array
    if not create_graph and array.strides == leaf.strides and array.shape == leaf.shape and (
            leaf.flags.c_contiguous and 0 not in leaf.strides and _memory_of(grad) not in owned):
        return grad  # the common case, said quickly: both row-major alike (the check below would agree)
    shape, strides = tensor.shape, tensor.stride()
    dense = non_overlapping_and_dense(shape, strides)
    if not create_graph and _memory_of(grad) not in owned and _obeys_layout(grad, strides, dense):
        return grad
    if dense:
        return grad.new_empty_strided(shape, strides).copy_(grad)
    return grad.clone(memory_format=contiguous_format)


def _obeys_layout(grad, strides: tuple, dense: bool) -> bool:
    """A gradient with the leaf's strides (where a dim has more than one element) if the leaf is dense, else
    row-major (PyTorch's ``obeys_layout_contract``)."""
    if not dense:
        return grad.is_contiguous()
    return all(g == s if n != 1 else g != 0 for n, g, s in zip(grad.shape, grad.stride(), strides))


def _memory_of(tensor) -> int:
    """Identity of the memory under a gradient: the owner of its buffer for a dense one (shared by every
    view, including arrays the engine wrapped into a new Tensor), its storage for a sparse one."""
    if not tensor._dense:
        return id(tensor._storage)
    array = tensor._storage.data
    base = getattr(array, "base", None)
    while base is not None:
        array, base = base, getattr(base, "base", None)
    return id(array)


def _captured_grads(inputs, captured, accumulate, create_graph, allow_unused, owned):
    result = []
    for i, (tensor, edge) in enumerate(zip(inputs, captured["edges"])):
        g = captured["grads"][edge]
        if g is None and not allow_unused:
            raise RuntimeError(
                f"The differentiated Tensor at index {i} appears to not have been used in the "
                "graph. Set allow_unused=True if this is the desired behavior."
            )
        if accumulate and g is not None:
            if type(edge[0]) is AccumulateGrad:  # backward(inputs=[leaf]) runs the leaf's node and its hooks
                _run_accumulate_grad(edge[0], [g], create_graph, owned)
            else:
                accumulate_into(tensor, g, create_graph, owned)
        result.append(g)
    return tuple(result)
