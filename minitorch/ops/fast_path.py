"""Fast paths of the hot elementwise ops: one function per op class, specialised once, for the common case.

``Op.apply`` is general: named tensors, the compiler's tracer, sparse and quantized tensors, devices, dtype
promotion, forward AD, saved-tensor hooks, anomaly mode. Most calls of ``x + y`` or ``x.tanh()`` need none of
it, and its ~17 Python frames per op cost more than the kernel. The functions built here check the common case
with a few reads and then do the op's work in one frame (the kernel, the output Tensor, the node); anything else
calls the general path, unchanged:

- every tensor operand is a plain ``Tensor`` or an ``nn.Parameter`` (a leaf Tensor and nothing more; other
  subclasses: sparse, quantized and vmap's batched tensors go to the general path), not a view and not an
  inference tensor, on the CPU backend, of one
  float16/float32/float64 dtype; a Python ``int`` or ``float`` operand keeps that dtype under PyTorch's
  promotion (a weak scalar), so the kernel is the bare ufunc, as ``promote`` would leave it;
- no mode that changes dispatch or recording is on: named tensors, the tracer (``Op._tracer``), forward AD,
  saved-tensor hooks, anomaly mode, the profiler, the ONNX exporter (one count for all of them,
  ``_dispatch_modes.holds``), inference mode.

What it records is what ``Op._record`` records for that case (tests/test_fast_path.py compares the two).
A kernel error (broadcasting, an int too large for the dtype) re-runs the call on the general path, which
raises PyTorch's error: the kernel has written nothing.
"""

from __future__ import annotations

import functools
import itertools

from .. import _dispatch_modes, _dtype
from .._backends.registry import backend_for
from .._device import device as _device
from .._grad_state import state as _grad_state
from ..autograd.graph import SavedTensor, edge_of
from ..storage import Storage
from ..tensor import Tensor
from .promotion import in_operands_layout

_CPU = backend_for(_device("cpu"))
_NDARRAY = _CPU.ndarray
_XP = _CPU.xp
_FP_VARIABLE, _FP_QUIET = _CPU.quiet_fp_state  # numpy's floating-point state, set to "ignore" (promotion.py)
_FLOATS = (_dtype.float32, _dtype.float64, _dtype.float16)  # bfloat16 and complex: the general path
_new = object.__new__
_NO_EDGE = (None, 0)  # the edge of an operand that wants no gradient
_Parameter = Tensor  # nn.Parameter once nn is imported (accept_parameters): taken as a plain Tensor


def accept_parameters(cls: type) -> None:
    """Let ``cls`` (nn.Parameter, which defines no op behaviour of its own) take the fast paths as a Tensor."""
    global _Parameter
    _Parameter = cls
_UNARY = object()  # the missing second operand of a one-input op
def _save_plan(cls, n: int) -> tuple:
    """For each combination of which of the ``n`` inputs want a gradient (index ``wants_x + 2 * wants_y``):
    ``(i, kept)`` for each index ``i`` of ``save_inputs``, ``kept`` whether ``saved_when`` keeps a tensor there
    (a number is always kept: _save_input)."""
    when = cls.saved_when or {}
    plans = {sum(w << k for k, w in enumerate(wants)):
             tuple((i, i not in when or any(wants[j] for j in when[i] if j < n)) for i in cls.save_inputs)
             for wants in itertools.product((False, True), repeat=n)}
    return tuple(plans[k] for k in range(len(plans)))


def _leaf_edge(t: Tensor) -> tuple:
    """``edge_of(t)`` for a tensor with no grad_fn that is no view: its AccumulateGrad, while it lives."""
    meta = t._meta
    ref = meta.accumulator if meta is not None else None
    node = ref() if ref is not None else None
    return (node, 0) if node is not None else edge_of(t)


def _finish(cls, plan: tuple, arrays: bool, result, template, a, b, storage: Storage, record: bool, x,
            y=_UNARY) -> Tensor | None:
    """The kernel's ``result`` as a new Tensor on ``storage``'s device, laid out as ``Elementwise.forward`` and
    ``from_array`` lay it out (``Tensor._make`` and ``Storage``, inlined), and, if ``record``, its node: what
    ``Op._record`` records for one output of a float dtype and operands ``x`` (and ``y``) that are plain tensors of
    that dtype or numbers, written out for one and two operands (no lists: they are most of the cost of recording).
    ``a`` and ``b``: the kernel's operands (``b`` is ``_UNARY`` for one).
    None if the result does not have the array dtype of ``template`` (the caller then takes the general path).
    (One attribute per statement: a tuple assignment would build and unpack a tuple.)"""
    if result.dtype is not template.dtype:
        return None
    if type(result) is _NDARRAY and (ndim := result.ndim) == 1:
        buffer = result  # (its own 1-D buffer: a fresh 1-D result is contiguous)
    elif type(result) is _NDARRAY and ndim and (result := in_operands_layout(
            result, (a,) if b is _UNARY else (a, b), _XP)).flags.c_contiguous:
        buffer = result.ravel()
    else:
        buffer, result = _CPU.buffer_of(result)  # a numpy scalar (the result of 0-dim operands), or another layout
    device = storage.device
    dtype = storage.dtype
    storage = _new(Storage)
    storage.data = buffer
    storage.backend = _CPU
    storage.device = device
    storage.dtype = dtype
    storage.version = 0
    out = _new(Tensor)
    out._array = result
    out._storage = storage
    out._offset = 0
    out._requires_grad = record
    out._output_nr = 0
    out._meta = None
    out._names = None
    if not record:
        out._grad_fn = None
        return out
    out._grad_fn = node = _new(cls)
    node.backend = _CPU
    node.device = device
    node._n_outputs = 1
    node._arrays = arrays
    shape = result.shape
    meta = (shape, dtype)  # the metadata of an input of the output's shape, shared
    uniform = arrays  # (and every input wanting a gradient has the output's shape)
    if (type(x) is Tensor or type(x) is _Parameter) and x._requires_grad:  # (edge_of, for a tensor that is no view)
        edge_x = (x._grad_fn, x._output_nr) if x._grad_fn is not None else _leaf_edge(x)
        if x._array.shape == shape:
            meta_x = meta
        else:
            meta_x = (x._array.shape, dtype)
            uniform = False
    else:
        edge_x = _NO_EDGE
        meta_x = None
    if y is _UNARY:
        node.next_functions = (edge_x,)
        node._input_meta = (meta_x,)
        wants = meta_x is not None
    elif type(y) is Tensor or type(y) is _Parameter:
        if y._requires_grad:
            edge_y = (y._grad_fn, y._output_nr) if y._grad_fn is not None else _leaf_edge(y)
            if y._array.shape == shape:
                meta_y = meta
            else:
                meta_y = (y._array.shape, dtype)
                uniform = False
        else:
            edge_y = _NO_EDGE
            meta_y = None
        node.next_functions = (edge_x, edge_y)
        node._input_meta = (meta_x, meta_y)
        wants = (meta_x is not None) + 2 * (meta_y is not None)
    else:  # a trailing number is no input (a leading one is: ``2 - x``)
        node.next_functions = (edge_x,)
        node._input_meta = (meta_x,)
        wants = meta_x is not None
    node._uniform = result.dtype if uniform else None
    saving = plan[wants]  # what save_inputs and saved_when keep
    if saving:
        saved = []
        for i, kept in saving:
            a = y if i else x
            if type(a) is Tensor or type(a) is _Parameter:
                if kept:  # (SavedTensor(a), inlined)
                    entry = _new(SavedTensor)
                    entry.tensor = a
                    entry.version = a._storage.version
                    entry.output_nr = None
                    entry.history = None
                    a = entry
                else:
                    a = None
            saved.append(a)
        node._saved = tuple(saved)
    else:
        node._saved = ()
    if cls.save_output:  # (SavedTensor(out, 0): a detached alias of the fresh output; Tensor._make inlined)
        alias = _new(Tensor)
        alias._array = result
        alias._storage = storage
        alias._offset = 0
        alias._requires_grad = False
        alias._grad_fn = None
        alias._output_nr = 0
        alias._meta = None
        alias._names = None
        entry = _new(SavedTensor)
        entry.tensor = alias
        entry.version = 0
        entry.output_nr = 0
        entry.history = None
        node._saved += (entry,)
    return out


def _specialised(cls, n: int) -> tuple:
    """``(save plan, whether the node runs on arrays)`` of op class ``cls`` with ``n`` inputs."""
    return _save_plan(cls, n), bool(_new(cls).array_derivative)  # (an instance: Div's is a property)


def unary(cls, general, ufunc: str | None = None):
    """``cls``'s fast ``apply(x)`` (a Unary op of ops/pointwise.py, whose kernel keeps a float dtype; ``ufunc``: the
    name of the array library's ufunc that is its kernel, called directly); ``general`` handles every other call."""
    plan, arrays = _specialised(cls, 1)
    kernel = getattr(_XP, ufunc) if ufunc else functools.partial(cls.kernel, _XP)  # kernel(array)

    def apply(input):  # (the name of torch.exp's argument: torch.exp(input=x))
        x = input
        if (type(x) is not Tensor and type(x) is not _Parameter) or _dispatch_modes.holds:
            return general(x)  # (another type, or a mode that must see every op is on)
        meta = x._meta
        if meta is not None and (meta.base is not None or meta.is_inference):  # a view, or an inference tensor
            return general(x)
        storage = x._storage
        if storage.backend is not _CPU or storage.dtype not in _FLOATS:
            return general(x)
        recording = _grad_state.enabled
        if not recording and _grad_state.inference:
            return general(x)
        token = _FP_VARIABLE.set(_FP_QUIET)
        try:
            array = x._array
            out = _finish(cls, plan, arrays, kernel(array), array, array, _UNARY, storage,
                          recording and x._requires_grad, x)
        finally:
            _FP_VARIABLE.reset(token)
        return general(x) if out is None else out

    apply.__name__ = apply.__qualname__ = general.__name__
    apply.__doc__ = general.__doc__
    return apply


def binary(cls, ufunc: str, general, swap: bool = False):
    """``cls``'s fast ``apply(a, b)`` (``swap``: called as ``apply(b, a)``, a reflected operator) computing the
    ``ufunc`` of the array library; ``general(self, other)`` (same argument order) handles every other call."""
    plan, arrays = _specialised(cls, 2)
    kernel = getattr(_XP, ufunc)

    def apply(self, other):  # (an operator method's arguments)
        if swap:
            x, y = other, self
        else:
            x, y = self, other
        if type(x) is Tensor or type(x) is _Parameter:
            storage = x._storage
            if type(y) is Tensor or type(y) is _Parameter:
                y_storage = y._storage
                meta = y._meta
                if y_storage.dtype is not storage.dtype or y_storage.device is not storage.device or (
                        meta is not None and (meta.base is not None or meta.is_inference)):
                    return general(self, other)
                a, b = x._array, y._array
                wants = x._requires_grad or y._requires_grad
            elif type(y) is float or type(y) is int:
                a, b = x._array, y
                wants = x._requires_grad
            else:
                return general(self, other)
            template, t = a, x
        elif (type(y) is Tensor or type(y) is _Parameter) and (type(x) is float or type(x) is int):
            storage, template, t = y._storage, y._array, y
            a, b = x, template
            wants = y._requires_grad
        else:
            return general(self, other)
        meta = t._meta
        if storage.backend is not _CPU or storage.dtype not in _FLOATS or (
                meta is not None and (meta.base is not None or meta.is_inference)):
            return general(self, other)
        if _dispatch_modes.holds:  # (a mode that must see every op is on)
            return general(self, other)
        recording = _grad_state.enabled
        if not recording and _grad_state.inference:
            return general(self, other)
        token = _FP_VARIABLE.set(_FP_QUIET)
        try:
            out = _finish(cls, plan, arrays, kernel(a, b), template, a, b, storage, recording and wants, x, y)
        except (ValueError, OverflowError):  # broadcasting, or an int the dtype cannot hold: PyTorch's error
            out = None
        finally:
            _FP_VARIABLE.reset(token)
        return general(self, other) if out is None else out

    apply.__name__ = apply.__qualname__ = getattr(general, "__name__", ufunc)
    apply.__doc__ = general.__doc__
    return apply
