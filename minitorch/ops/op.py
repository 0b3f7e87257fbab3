"""Op: how every built-in differentiable operation is defined and dispatched.

An op is one small class: ``forward`` computes on backend arrays (numpy or CuPy, through
``self.xp``), ``backward`` returns the input gradients written in differentiable Tensor ops, so
``create_graph=True`` and gradgradcheck need nothing more. What backward needs is declared, as in
Chainer: ``save_inputs`` (indices of inputs) and ``save_output``; they come back, version-checked,
from ``self.saved_tensors``. Other values (a dim, a mask) are plain attributes set in forward.

``Op.apply`` is the dispatcher: it checks devices, runs forward, wraps the arrays into Tensors, and
records a graph node only when grad mode is on and some input requires grad. Broadcast gradients
are reduced by the engine, so a rule like ``grad * b`` never has to sum over broadcast dims.
"""

from __future__ import annotations

from .. import _dtype
from ..autograd import anomaly, grad_mode
from ..autograd.graph import Node, SavedTensor, edge_of
from ..tensor import Tensor, from_array, view_requires_grad
from .arguments import type_name


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

    # subclasses -----------------------------------------------------------------------------
    def forward(self, *arrays, **params):
        raise NotImplementedError

    def backward(self, *grads):
        raise NotImplementedError

    # dispatch -------------------------------------------------------------------------------
    @classmethod
    def apply(cls, *args, **params):
        """Run the op on Tensors (and Python scalars); returns a Tensor or a tuple of Tensors."""
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
            return outputs
        out = node.wrap(result)
        if record and grad_mode.state.enabled:
            node._record(args, (out,))
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
        same_dtype = same_shape = True  # every tensor input has out's dtype; every one wanting a gradient its shape
        edges, metas = [], []
        for i in range(last):
            a = args[i]
            if not isinstance(a, Tensor):
                edges.append((None, 0))
                metas.append(None)
                continue
            edge = edge_of(a)
            edges.append(edge)
            shape, dtype = a._array.shape, a._storage.dtype
            same_dtype = same_dtype and dtype is out_dtype
            if edge[0] is None:
                metas.append(None)
            else:
                metas.append((shape, dtype))
                same_shape = same_shape and shape == out_shape
        self._arrays = self.array_derivative and same_dtype
        # (not for bfloat16: numpy's bfloat16 times a Python float is float32, so the engine must cast the gradients)
        self._uniform = out._array.dtype if self._arrays and same_shape and out_dtype is not _dtype.bfloat16 else None
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
        return self._per_input(self.backward(*grads))

    def _evaluate_on_arrays(self, grads):
        """``_evaluate`` with raw arrays in and out (the engine's call for a node with ``_arrays``)."""
        self._on_arrays = True  # saved_tensors and constant() hand out arrays
        try:
            result = self.backward(*grads)
        finally:
            self._on_arrays = False
        if type(result) is tuple and len(result) == len(self.next_functions):
            return result
        return self._per_input(result)

    def _per_input(self, result) -> tuple:
        """backward may return one gradient, or grads for the leading (tensor) inputs only; the rest are None."""
        if type(result) is not tuple:
            result = (result,)
        missing = len(self.next_functions) - len(result)
        if missing > 0:
            return result + (None,) * missing
        return result[: len(self.next_functions)] if missing < 0 else result

    def wrap_grad(self, array, output_nr: int) -> Tensor:
        return self.wrap(array)  # every output of an op lives on the op's device

    def constant(self, array) -> Tensor:
        """Wrap a helper array (a mask, indices) as a Tensor for use in backward (the array itself when
        backward runs on arrays)."""
        return array if self._on_arrays else self.wrap(array)


# Tensors that are not plain strided arrays (sparse COO layout, quantized dtypes) set the class
# attribute ``_dense = False``; ops on them go here instead of running the dense kernel.
NON_DENSE_IMPLEMENTATIONS: dict = {}  # (op class, kind) -> function(*args, **params)


def register_non_dense(op, kind: str):
    """Decorator: the implementation of ``op`` (an Op class) for tensors of ``kind`` ('sparse', 'quantized')."""

    def register(function):
        NON_DENSE_IMPLEMENTATIONS[(op, kind)] = function
        return function

    return register


def dispatch_non_dense(op, args, params):
    kinds = [a._kind for a in args if isinstance(a, Tensor) and not a._dense]
    function = NON_DENSE_IMPLEMENTATIONS.get((op, kinds[0]))
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
