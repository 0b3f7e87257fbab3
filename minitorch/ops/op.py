"""Op: how every built-in differentiable operation is defined and dispatched.

An op is one small class: ``forward`` computes on backend arrays (numpy or CuPy, through
``self.xp``), ``backward`` returns the input gradients written in differentiable Tensor ops, so
``create_graph=True`` and gradgradcheck need nothing more. What backward needs is declared, as in
Chainer: ``save_inputs`` (indices of inputs) and ``save_output``; they come back, version-checked,
from ``self.saved_tensors``. Other values (a dim, a mask) are plain attributes set in forward.

``Op.apply`` is the dispatcher: it checks devices, runs forward, wraps the arrays into Tensors, and
records a graph node only when grad mode is on and some input requires grad. Broadcast gradients
are reduced by the engine, so a rule like ``grad * b`` never has to sum over broadcast dims.

Forward mode: ``jvp`` maps input tangents to output tangents (autograd/forward_ad.py calls it when an input
is dual). Common ops write it beside ``backward``; every other op inherits the rule below, derived from its
backward, so every differentiable op has a forward derivative (docs/derivatives.md lists which is which).
"""

from __future__ import annotations

import copy

from .. import _dtype
from .._names import state as names_state
from ..autograd import anomaly, grad_mode, saved_hooks
from ..autograd.api import grad as autograd_grad
from ..autograd.forward_ad import propagate
from ..autograd.forward_ad import state as forward_ad
from ..autograd.graph import Node, SavedTensor, edge_of, pack_saved
from ..creation import zeros_like
from ..tensor import Tensor, from_array, view_requires_grad
from . import named
from .arguments import type_name

_NO_EDGE = (None, 0)  # the edge of an input that wants no gradient


class Op(Node):
    """Base class of built-in ops (the node recorded for an op *is* its instance)."""

    # Set for every op (the first two) or every recorded op: slots, not the instance dict.
    # _arrays: the engine may run backward on arrays (Node._arrays): array_derivative, and every tensor input
    #   has the output's dtype. (numpy promotes mixed dtypes differently from PyTorch: float32 * int64 or a
    #   0-dim float64 give float64 there, float32 here; such a node keeps Tensors, so rounding stays PyTorch's.)
    # _uniform: the output's array dtype when, moreover, every input that wants a gradient has the output's
    #   shape: the arithmetic then gives each input's gradient exactly, and the engine checks nothing.
    __slots__ = ("backend", "device", "_arrays", "_uniform")

    # The active tracer of minitorch.compile (compiler/tracer.py) while it records a first call, else None: the
    # one check dispatch pays for the compiler (a class attribute, so ViewOp and SplitViews read it too).
    _tracer = None

    # PyTorch allocates this op's outputs row-major whatever the input's layout (reductions, scans); numpy's
    # would follow the input's strides, so wrap copies a permuted result (view() then succeeds as in PyTorch).
    row_major_output: bool = False

    save_inputs: tuple = ()
    save_output: bool = False
    # {i: (j, ...)}: save input i only if one of inputs j requires grad, as PyTorch saves only the inputs that the
    # gradients it computes read (mul saves b only for a's gradient; outputs are always saved); an input not
    # saved comes back from saved_tensors as None, and writing into it in place before backward is no error.
    saved_when: dict | None = None

    # backward returns each input's gradient in that input's shape whatever the output's (a reduction's broadcast):
    # with one dtype throughout, the engine then has nothing to check (``_uniform``)
    input_shaped_grads: bool = False

    keywords: dict = {}  # the op's keyword arguments, set on a node only for forward mode's rules (propagate)

    # subclasses -----------------------------------------------------------------------------
    def forward(self, *arrays, **params):
        raise NotImplementedError

    def backward(self, *grads):
        raise NotImplementedError

    def jvp(self, inputs: tuple, outputs: tuple, tangents: tuple):
        """Forward-mode derivative: the output tangents ``J t`` (one per output; None where there is none) from
        the input ``tangents`` (None for an input without one), at the primal ``inputs`` and ``outputs``.

        Derived from ``backward`` for every op that does not write its own (the double-vjp trick): backward is
        linear in its output gradient ``u``, ``vjp(u) = J^T u``, and written in differentiable Tensor ops, so
        ``J t`` is the gradient with respect to ``u`` of ``<vjp(u), t>`` (the real inner product, which makes it
        right for complex tensors too): one more reverse pass, over backward's own graph.
        """
        wanted = [i for i, t in enumerate(tangents) if t is not None]
        backward = self._borrowed_backward(inputs, outputs, wanted)
        differentiable = [o.dtype.is_floating_point or o.dtype.is_complex for o in outputs]
        keep_graph = grad_mode.state.enabled
        with grad_mode.enable_grad():
            dummies = [zeros_like(o).requires_grad_() if d else None for o, d in zip(outputs, differentiable)]
            vjps = backward(*dummies)
            total = None
            for i in wanted:
                g, t = vjps[i], tangents[i]
                if g is None or not g.requires_grad:  # zero, or independent of u
                    continue
                term = (g.conj() * t).real.sum() if g.is_complex() or t.is_complex() else (g * t).sum()
                total = term if total is None else total + term
        chosen = [u for u in dummies if u is not None]
        if total is None:
            found = [None] * len(chosen)
        else:
            found = autograd_grad(total, chosen, create_graph=keep_graph, allow_unused=True)
        found = iter(found)
        return tuple(_zero_if_none(next(found), o) if d else None for o, d in zip(outputs, differentiable))

    def _borrowed_backward(self, inputs: tuple, outputs: tuple, wanted) -> callable:
        """This op's backward as a function of its output gradients, at ``inputs``/``outputs``, giving gradients
        for the inputs in ``wanted``: a copy of the node with those values as its saved tensors (the derived
        jvp rules call it; the node itself may be recorded, or not)."""
        twin = copy.copy(self)
        last = len(inputs)
        while last and not isinstance(inputs[last - 1], Tensor):
            last -= 1
        twin.next_functions = ((None, 0),) * last
        twin._input_meta = tuple((inputs[i]._array.shape, inputs[i].dtype) if i in wanted else None
                                 for i in range(last))
        twin._saved = self._saved_values(inputs, outputs)
        twin._n_outputs = len(outputs)
        twin._arrays = False
        return lambda *grads: twin._per_input(twin.backward(*grads))

    def _saved_values(self, inputs: tuple, outputs: tuple) -> tuple:
        """What ``_record`` would save, as plain values (saved_tensors hands them back as they are)."""
        saved = [inputs[i] for i in self.save_inputs]
        if self.save_output:
            saved.append(outputs[0])
        if len(outputs) > 1:
            saved += [o for o in outputs if not (o.dtype.is_floating_point or o.dtype.is_complex)]
        return tuple(saved)

    # dispatch -------------------------------------------------------------------------------
    @classmethod
    def apply(cls, *args, **params):
        """Run the op on Tensors (and Python scalars); returns a Tensor or a tuple of Tensors."""
        if names_state.active:  # some tensor has dimension names: name inference first (ops/named.py)
            result = named.apply(cls, args, params)
            if result is not None:
                return result
        if cls._tracer is not None:
            return cls._tracer.op(cls, args, params)
        first = None
        record = False
        arrays = []
        for a in args:
            if isinstance(a, Tensor):
                if not a._dense:  # sparse or quantized: another implementation, or a clear error
                    return dispatch_non_dense(cls, args, params)
                if first is None:
                    first = a
                elif a._storage.device is not first._storage.device:
                    check_same_device(cls, first, a)
                if a._requires_grad or (a._meta is not None and view_requires_grad(a)):
                    record = True
                arrays.append(a._array)
            else:
                arrays.append(a)
        if first is None:
            raise no_tensor_error(cls, args)
        storage = first._storage
        node = cls.__new__(cls)
        node.backend = storage.backend
        node.device = storage.device
        result = node.forward(*arrays, **params)
        if type(result) is tuple:
            outputs = tuple(node.wrap(r) for r in result)
            if record and grad_mode.state.enabled:
                node._record(args, outputs)
            if forward_ad.active:
                propagate(node, args, outputs, params)
            return outputs
        # (node.wrap, inlined; forward may have moved the node to another device: to())
        out = node.wrap(result) if cls.row_major_output else from_array(result, node.backend, node.device)
        if record and grad_mode.state.enabled:
            node._record(args, (out,))
        if forward_ad.active:
            propagate(node, args, (out,), params)
        return out

    @property
    def xp(self):
        """The array module of the op's device (numpy on CPU, CuPy on CUDA)."""
        return self.backend.xp

    def wrap(self, array) -> Tensor:
        """A Tensor owning ``array`` (a fresh kernel result) on this op's device."""
        if self.row_major_output and not array.flags.c_contiguous:
            array = array.copy()
        return from_array(array, self.backend, self.device)

    def _record(self, args, outputs) -> None:
        """Make this op a node of the graph: edges, input metadata, saved tensors, outputs."""
        last = len(args)
        while last and not isinstance(args[last - 1], Tensor):  # trailing dims/flags are not inputs
            last -= 1
        out = outputs[0]
        out_shape, out_dtype = out._array.shape, out._storage.dtype
        if not (out_dtype.is_floating_point or out_dtype.is_complex) and not any(
                _differentiable(o.dtype) for o in outputs):
            return  # no output can carry a gradient (comparisons, argmax): no node, and no input's grad_fn is read
        arrays = self.array_derivative  # and every tensor input has out's dtype
        same_shape = True  # every input wanting a gradient has out's shape
        edges, metas = [], []
        for a in args if last == len(args) else args[:last]:
            if isinstance(a, Tensor):
                edge = edge_of(a)
                dtype = a._storage.dtype
                if dtype is not out_dtype:
                    arrays = False
                if edge[0] is None:
                    meta = None
                else:
                    shape = a._array.shape
                    meta = (shape, dtype)
                    if shape != out_shape:
                        same_shape = False
            else:
                edge, meta = _NO_EDGE, None
            edges.append(edge)
            metas.append(meta)
        self._arrays = arrays
        # (not for bfloat16: numpy's bfloat16 times a Python float is float32, so the engine must cast the gradients)
        self._uniform = out._array.dtype if arrays and (same_shape or self.input_shaped_grads) and (
            out_dtype is not _dtype.bfloat16) else None
        self.next_functions = tuple(edges)
        self._input_meta = tuple(metas)
        saved = [self._save_input(args[i], i, metas) for i in self.save_inputs] if self.save_inputs else []
        if self.save_output:
            saved.append(SavedTensor(out, 0))
        self._n_outputs = len(outputs)
        if len(outputs) == 1:
            if out_dtype.is_floating_point or out_dtype.is_complex:
                out._grad_fn = self
                out._requires_grad = True
        else:
            for i, output in enumerate(outputs):
                if output._storage.dtype.is_floating_point or output._storage.dtype.is_complex:
                    output._grad_fn = self
                    output._output_nr = i
                    output._requires_grad = True
                else:  # the indices of max(dim)/sort/topk/cummax/max_pool: backward reads them (saved last)
                    saved.append(SavedTensor(output))
        self._saved = tuple(saved)
        if saved_hooks.active:  # inside saved_tensors_hooks (in some thread): the pack hook gets what was saved
            pack_saved(self, outputs)
        if anomaly._enabled:
            anomaly.record_traceback(self)

    def needs_grad(self, i: int) -> bool:
        """Whether input ``i`` of this recorded op wants a gradient (backward skips the others)."""
        metas = self._input_meta
        return i < len(metas) and metas[i] is not None

    def _save_input(self, arg, i: int, metas: list):
        if not isinstance(arg, Tensor):
            return arg
        when = self.saved_when
        if when is not None and i in when:
            for j in when[i]:
                if j < len(metas) and metas[j] is not None:
                    break
            else:  # no input whose gradient reads it wants one
                return None
        return SavedTensor(arg)

    def _evaluate(self, *grads):
        if names_state.active:  # autograd ignores names: backward runs with them suspended (ops/named.py)
            return named.evaluate(self, grads)
        return self._per_input(self.backward(*grads))

    def _evaluate_on_arrays(self, grads):
        """``_evaluate`` with raw arrays in and out (the engine's call for a node with ``_arrays``)."""
        self._on_arrays = True  # saved_tensors and constant() hand out arrays
        try:
            result = self.backward(*grads)
        finally:
            self._on_arrays = False
        if type(result) is not tuple:
            result = (result,)
        return result if len(result) == len(self.next_functions) else self._per_input(result)

    def _per_input(self, result) -> tuple:
        """backward may return one gradient, or grads for the leading (tensor) inputs only; the rest are None."""
        if type(result) is not tuple:
            result = (result,)
        missing = len(self.next_functions) - len(result)
        if missing > 0:
            return result + (None,) * missing
        return result[: len(self.next_functions)] if missing < 0 else result

    def wrap_grad(self, array, output_nr: int) -> Tensor:
        """A gradient array as a Tensor (every output of an op lives on the op's device). A broadcast one (what
        sum and mean send back on arrays) stays a broadcast: an expanded Tensor over its distinct values, as the
        Tensor path's ``expand`` makes it, so CopySlices keeps it unexpanded instead of copying the whole base."""
        if type(array) is self.backend.ndarray and not array.flags.c_contiguous:
            strides = array.strides
            if 0 in strides:
                distinct = self.wrap(array[tuple(slice(0, 1) if s == 0 else slice(None) for s in strides)])
                stride = tuple(0 if s == 0 else d for s, d in zip(strides, distinct.stride()))
                return distinct._view(array.shape, stride, distinct._offset)
        return self.wrap(array)

    def constant(self, array) -> Tensor:
        """Wrap a helper array (a mask, indices) as a Tensor for use in backward (the array itself when
        backward runs on arrays)."""
        return array if self._on_arrays else self.wrap(array)


# hand-written jvp rules that several ops share ----------------------------------------------------
def linear_jvp(self: Op, inputs: tuple, outputs: tuple, tangents: tuple):
    """For an op linear in its first input, the other inputs being constants (dims, indices, masks): the op
    itself, applied to the tangent. (A tangent on another input: the derived rule.)"""
    if any(t is not None for t in tangents[1:]):
        return Op.jvp(self, inputs, outputs, tangents)
    return type(self).apply(tangents[0], *inputs[1:], **self.keywords)


def multilinear_jvp(self: Op, inputs: tuple, outputs: tuple, tangents: tuple, bias: int | None = None):
    """For an op linear in each tensor input separately (matmul, einsum, conv; ``bias``: the index of an input
    that is added, as conv's bias): the sum over inputs of the op with that one input replaced by its tangent."""
    total = None
    for i, t in enumerate(tangents):
        if t is None:
            continue
        if i == bias:
            term = t
        else:
            args = list(inputs)
            args[i] = t
            if bias is not None:
                args[bias] = None
            term = type(self).apply(*args, **self.keywords)
        total = term if total is None else total + term
    return total


def add_tangents(a, b):
    """``a + b`` where either may be None (an input without a tangent)."""
    if a is None:
        return b
    return a if b is None else a + b


def _zero_if_none(tangent, output: Tensor) -> Tensor:
    return zeros_like(output) if tangent is None else tangent


def _differentiable(dtype) -> bool:
    """Whether a tensor of ``dtype`` can carry a gradient (a QTensor's ``dtype``, qint8 and the like, does:
    straight-through, in float32; its storage's is a plain integer type)."""
    return dtype.is_floating_point or dtype.is_complex or dtype.is_quantized


# Tensors that are not plain strided arrays (sparse COO layout, quantized dtypes) set the class
# attribute ``_dense = False``; ops on them go here instead of running the dense kernel.
NON_DENSE_IMPLEMENTATIONS: dict = {}  # (op class, kind) -> function(*args, **params)
# kind -> function(op, args, params), for ops with no implementation registered for that kind (vmap's batched
# tensors: the batching rules of whole op families and the documented loop fallback, minitorch/func/)
NON_DENSE_FALLBACKS: dict = {}


def register_non_dense(op, kind: str):
    """Decorator: the implementation of ``op`` (an Op class) for tensors of ``kind`` ('sparse', 'quantized')."""

    def register(function):
        NON_DENSE_IMPLEMENTATIONS[(op, kind)] = function
        return function

    return register


def dispatch_non_dense(op, args, params):
    kinds = [a._kind for a in args if isinstance(a, Tensor) and not a._dense]
    function = NON_DENSE_IMPLEMENTATIONS.get((op, kinds[0]))
    if function is None and kinds[0] in NON_DENSE_FALLBACKS:
        return NON_DENSE_FALLBACKS[kinds[0]](op, args, params)
    if function is None:
        shapes = ", ".join(f"{a._kind} {list(a.shape)}" for a in args if isinstance(a, Tensor))
        raise NotImplementedError(
            f"Could not run '{op.__name__.lower()}' with arguments from the '{kinds[0]}' layout/dtype family "
            f"(arguments: {shapes}): minitorch has no {kinds[0]} kernel for it. Convert first "
            f"(e.g. .to_dense() or .dequantize())."
        )
    return function(*args, **params)


def no_tensor_error(op, args) -> TypeError:
    """An op called without any Tensor (``torch.relu([1.0])``): PyTorch's argument error."""
    kind = type_name(args[0] if args else None)
    return TypeError(f"{op.__name__.lower()}(): argument 'input' (position 1) must be Tensor, not {kind}")


def not_differentiable(function: str, **arguments) -> None:
    """PyTorch's kernel ``function`` has no derivative for these arguments: with grad mode on, one that requires
    grad raises (rather than silently getting no gradient, or a gradient PyTorch does not define)."""
    if not grad_mode.state.enabled:
        return
    for name, tensor in arguments.items():
        if isinstance(tensor, Tensor) and tensor.requires_grad:
            raise RuntimeError(
                f"The function '{function}' is not differentiable with respect to argument '{name}'. "
                "This input cannot have requires_grad True."
            )


def check_same_device(op, a: Tensor, b: Tensor) -> None:
    """Mixing devices in one op is an error naming both (PyTorch also lets a CPU 0-dim tensor act as a
    scalar on another device; minitorch asks for ``.item()`` or ``.to(device)`` instead)."""
    if a.device == b.device:
        return
    name = op.__name__.lower() if isinstance(op, type) else str(op)
    raise RuntimeError(
        f"Expected all tensors to be on the same device, but found at least two devices, "
        f"{a.device} and {b.device}! (when checking argument for {name}: "
        f"shapes {list(a.shape)} and {list(b.shape)})"
    )
