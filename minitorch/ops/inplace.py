"""In-place ops (``x.add_(y)``, ``x[i] = v``, writes through views).

One mechanism serves every in-place op: run the out-of-place op, write its result into ``self``'s
memory, bump the storage's version, and make the graph say what happened:

- ``self`` is not a view: ``self``'s history is *rebased* onto the op's node.
- ``self`` is a view of ``base``: ``base``'s history becomes a ``CopySlices`` node. Its backward sends
  the gradient outside the written region to the old base unchanged, and the gradient inside the
  region through the op's backward (PyTorch's CopySlices).
- Any other view of that storage notices the version change the next time its ``grad_fn`` is read
  and rebuilds it as an ``AsStridedBackward0`` of its base's current history.

The history rewriting (CopySlices, stale views) is autograd's: autograd/view_history.py. The errors
PyTorch raises to keep in-place writes sound are raised here (``check_inplace``).
"""

from __future__ import annotations

from .. import _dtype
from .._geometry import non_overlapping_and_dense
from .._names import state as names_state
from ..autograd import forward_ad, grad_mode, saved_hooks
from ..autograd.graph import Node, SavedTensor, packing_after
from ..autograd.view_history import INTERNAL_OVERLAP_MESSAGE, check_view_rebase, rebase_base_through_view
from ..tensor import Tensor, legacy_type_name, view_requires_grad
from .indexing import assignment_index
from .op import Op
from .views import (
    Index,
    _overlaps,
    as_strided,
    normalize_basic_index,
    squeeze,
    t,
    transpose,
    unsqueeze,
)

_LEGACY = {"float16": "Half", "float32": "Float", "float64": "Double", "int64": "Long", "int32": "Int",
           "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool", "bfloat16": "BFloat16",
           "complex64": "ComplexFloat", "complex128": "ComplexDouble"}


def _any_requires_grad(args) -> bool:
    return any(isinstance(a, Tensor) and a.requires_grad for a in args)


# In-place ops PyTorch allows on a tensor whose elements share memory (an expanded one): each writes one value
# wherever an element lives (a fill with a number; masked_fill_, index_fill_ and index_put_ warn and go ahead).
# (``t.copy_(t)`` too: PyTorch's copy_ returns before its overlap checks when the source is the destination)
_OVERLAP_ALLOWED = frozenset({"fill_", "zero_", "masked_fill_", "index_fill_", "index_put_", "copy_ from itself"})
# In-place ops whose source may not share any memory with the destination, not even all of it (PyTorch's
# assert_no_overlap); the others refuse only a partial overlap (``x.add_(x)`` is fine, ``x[1:].add_(x[:-1])`` not).
_NO_OVERLAP = frozenset({"index_add_", "index_copy_", "scatter_", "scatter_add_"})
_OVERLAP_MESSAGE = (
    "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory "
    "location. Please clone() the tensor before performing the operation."
)


def _span(t: Tensor) -> tuple:
    """The storage range ``[start, end)`` a non-empty tensor's elements lie in."""
    start = t._offset
    return start, start + 1 + sum((n - 1) * s for n, s in zip(t._array.shape, t.stride()))


def check_no_overlap(self: Tensor, args: tuple, op_name: str) -> None:
    """Raise if a tensor argument shares memory with ``self`` (PyTorch's get_overlap_status: ranges of dense
    tensors are compared; an overlap PyTorch cannot decide, of a non-dense tensor, is let through)."""
    if op_name == "fill_":  # a 0-d value is read once, before any write
        return
    for a in args:
        if not isinstance(a, Tensor) or a._storage is not self._storage:
            continue
        if a is self:
            full = True
        elif not a._array.size or not self._array.size or not _is_dense(a) or not _is_dense(self):
            continue
        else:
            (a0, a1), (s0, s1) = _span(a), _span(self)
            if not (a0 < s1 and s0 < a1):
                continue
            full = (a0, a1) == (s0, s1) and a.stride() == self.stride()  # else PyTorch calls it partial
        if not full or op_name in _NO_OVERLAP:
            raise RuntimeError(_OVERLAP_MESSAGE)


def _is_dense(t: Tensor) -> bool:
    """Non-overlapping and dense: its elements fill their storage range exactly."""
    start, end = _span(t)
    return end - start == t._array.size and not _overlaps(t._array.shape, t.stride())


def has_internal_overlap(t: Tensor) -> bool:
    """PyTorch's has_internal_overlap answering Yes: a non-empty tensor with a dim of size > 1 and stride 0 (an
    expanded one). Other overlaps (as_strided or unfold windows) are "too hard" for PyTorch, which writes them."""
    shape = t._array.shape
    return t._array.size > 0 and any(n > 1 and s == 0 for n, s in zip(shape, t.stride()))


def check_inplace(self: Tensor, recording: bool, writes_elements: bool = True) -> None:
    """PyTorch's checks that keep in-place writes sound (VariableTypeUtils check_inplace and
    handle_view_on_rebase). The first two hold always; the rest only when the write is recorded.
    An in-place view op (``t_``) writes no element, so overlapping memory is no reason to refuse it."""
    if writes_elements and has_internal_overlap(self):
        raise RuntimeError(INTERNAL_OVERLAP_MESSAGE)
    meta = self._meta
    if meta is not None and meta.is_inference and not grad_mode.state.inference:
        raise RuntimeError(
            "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to get a "
            "normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for more details."
        )
    if not recording:
        return
    if meta is not None and meta.base is not None:
        check_view_rebase(self, indirect=False)
        if meta.base._grad_fn is None and self.requires_grad:  # the base is a leaf (requiring grad or not)
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")
    # PyTorch tests the view's stored grad_fn, not a refreshed one: a view made before its base required grad,
    # whose history nothing has read since the base was written, counts as a leaf that requires grad.
    if self._grad_fn is None and (self._requires_grad or view_requires_grad(self)):
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")


def write_result(self: Tensor, result: Tensor, op_name: str) -> None:
    """Copy ``result`` into ``self``'s memory (after the checks PyTorch makes) and bump the version."""
    if result._array.shape != self._array.shape:
        raise RuntimeError(
            f"{op_name}: output with shape {list(self.shape)} doesn't match the broadcast shape {list(result.shape)}"
        )
    if result.dtype is not self.dtype and _dtype.category_of(result.dtype) > _dtype.category_of(self.dtype):
        raise RuntimeError(
            f"{op_name}: result type {_LEGACY[result.dtype.name]} can't be cast to the desired output type "
            f"{_LEGACY[self.dtype.name]}"
        )
    if op_name in _OVERLAP_ALLOWED and (has_internal_overlap(self) or not self._array.flags.c_contiguous and
                                        not non_overlapping_and_dense(self._array.shape, self.stride())):
        # (also where elements share memory in a way PyTorch does not check, an unfold window: its kernel writes
        # the filled positions only, so an unfilled alias must not write the old value back; fuzzer seed 1131021)
        _write_changed(self._array, result._array, self._storage.backend.xp)
    else:
        self._array[...] = result._array
    self._storage.version += 1
    if names_state.active and result._names is not None:  # an in-place op gives self the names it inferred
        self._names = result._names


def _write_changed(target, values, xp) -> None:
    """Write only the elements whose bits change: where elements share memory (an expanded tensor), a fill
    writes the filled positions, as PyTorch's kernel does, and an untouched alias does not write back the
    old value over them."""
    if values.dtype.kind == "f":
        bits = xp.dtype(f"u{values.dtype.itemsize}")
        changed = values.view(bits) != xp.ascontiguousarray(target).view(bits)
    else:
        changed = values != target
    target[changed] = values[changed]


# kind -> function(self, fn, args, kwargs, op_name): in-place ops on a tensor of that kind (vmap's BatchedTensors
# write the batched result into their value, minitorch/func/batched_autograd.py)
NON_DENSE_INPLACE: dict = {}


def run_inplace(self: Tensor, fn, args: tuple, kwargs: dict, op_name: str) -> Tensor:
    """``self`` overwritten with ``fn(self, *args, **kwargs)``, with autograd told what happened."""
    if not self._dense and self._kind in NON_DENSE_INPLACE:
        return NON_DENSE_INPLACE[self._kind](self, fn, args, kwargs, op_name)
    recording = grad_mode.state.enabled and (self.requires_grad or _any_requires_grad(args))
    base = self._meta.base if self._meta is not None else None
    check_inplace(self, recording or (grad_mode.state.enabled and base is not None and base._requires_grad),
                  op_name not in _OVERLAP_ALLOWED)
    if recording:  # PyTorch collects the inputs' edges, refreshing a view's history, before its kernel checks overlap
        for a in args:
            if isinstance(a, Tensor) and a._meta is not None and a._meta.base is not None:
                a.grad_fn  # noqa: B018 - the refresh is the point (seed 527698)
    check_no_overlap(self, args, op_name)
    if recording and base is not None and base._storage.dtype is not self._storage.dtype:
        raise RuntimeError(
            f"{op_name}: minitorch does not record in-place writes through view_as_real, view_as_complex, real or "
            "imag of a tensor in an autograd graph; build the result out of place (e.g. torch.complex(re, im))"
        )
    if not recording:
        with grad_mode.no_grad():
            result = fn(self, *args, **kwargs)
        write_result(self, result, op_name)
        if forward_ad.state.active:
            forward_ad.write_tangent(self, result)
        return self
    if saved_hooks.state.hooks is not None:  # inside saved_tensors_hooks: pack what the op saved once it has written
        return packing_after(lambda: _record_write(self, fn, args, kwargs, op_name))
    return _record_write(self, fn, args, kwargs, op_name)


def _record_write(self: Tensor, fn, args: tuple, kwargs: dict, op_name: str) -> Tensor:
    """Run the op on ``self``'s current value, write the result into ``self`` and rewrite the history."""
    source = _with_history(self)
    result = fn(source, *args, **kwargs)
    node = result._grad_fn
    if node is not None:
        _protect_saved_input(node, source)
    write_result(self, result, op_name)
    if forward_ad.state.active:
        forward_ad.write_tangent(self, result)
    if node is None:
        return self
    if self._meta is not None and self._meta.base is not None:
        rebase_base_through_view(self, node, result._output_nr)
        _point_saved_output_at(node, self, (self._grad_fn, self._output_nr))
    else:
        self._grad_fn = node
        self._output_nr = result._output_nr
        self._requires_grad = True
        _point_saved_output_at(node, self)
    return self


def _with_history(self: Tensor) -> Tensor:
    """A tensor over ``self``'s memory carrying ``self``'s current history, as the op's input."""
    source = self._alias()
    source._grad_fn = self.grad_fn
    source._output_nr = self._output_nr
    source._requires_grad = self.requires_grad
    if forward_ad.state.active:
        forward_ad.share_tangent(source, self)
    return source


def _protect_saved_input(node: Node, source: Tensor) -> None:
    """If the op saved ``self`` for backward, keep a copy: the write is about to overwrite it."""
    saved = node._saved
    if not saved:
        return
    for i, entry in enumerate(saved):
        if type(entry) is SavedTensor and entry.tensor is source:
            with grad_mode.no_grad():
                frozen = source.detach().clone()
            frozen._grad_fn, frozen._output_nr = source._grad_fn, source._output_nr
            frozen._requires_grad = source._requires_grad
            node._saved = saved[:i] + (SavedTensor(frozen),) + saved[i + 1:]
            saved = node._saved


def _point_saved_output_at(node: Node, self: Tensor, history: tuple | None = None) -> None:
    """A saved output is now ``self``'s memory (so a later write to ``self`` is detected); ``history``: the
    view's (grad_fn, output_nr) after a write through a view, which the output unpacks with."""
    if not node._saved:
        return
    for entry in node._saved:
        if type(entry) is SavedTensor and entry.output_nr is not None:
            entry.tensor = self._alias()
            entry.version = self._storage.version
            entry.history = history


# the in-place op set ---------------------------------------------------------------------------------


_UFUNCS = {"add": "add", "sub": "subtract", "mul": "multiply", "div": "true_divide"}


def _update_in_place(self: Tensor, ufunc: str, other, alpha) -> bool:
    """The optimizer-update fast path: ``self op= other`` with one ufunc writing into self's memory,
    when nothing is recorded and nothing needs casting or broadcasting. False: take the general path."""
    if not self._dense and self._kind in NON_DENSE_INPLACE:
        return False
    if grad_mode.state.enabled and (
        self.requires_grad
        or (isinstance(other, Tensor) and other.requires_grad)
        or (self._meta is not None and self._meta.base is not None)  # views: the general path's checks
    ):
        return False
    if not self._storage.dtype.is_floating_point:
        return False
    if names_state.active and (self._names is not None or getattr(other, "_names", None) is not None):
        return False  # named tensors: the general path checks and infers names
    if self._storage.dtype is _dtype.bfloat16 and (type(other) is float or alpha != 1):
        return False  # the ufunc would read the number in float32; PyTorch's add_/sub_ read it in bfloat16
    if isinstance(other, Tensor):
        if other._storage.dtype is not self._storage.dtype or other._array.shape != self._array.shape:
            return False
        if other._storage.device is not self._storage.device:
            return False
        operand = other._array
    elif type(other) in (int, float):
        operand = other
    else:
        return False
    check_inplace(self, False)
    if isinstance(other, Tensor) and other._storage is self._storage:
        check_no_overlap(self, (other,), "")
    xp = self._storage.backend.xp
    if alpha != 1:
        operand = operand * alpha
    getattr(xp, ufunc)(self._array, operand, out=self._array)
    self._storage.version += 1
    return True


def make_inplace(name: str):
    """``Tensor.<name>_``: the out-of-place ``Tensor.<name>`` written into self."""
    ufunc = _UFUNCS.get(name)

    def method(self, *args, **kwargs):
        if ufunc is not None and len(args) == 1 and not forward_ad.state.active and (
                not kwargs or set(kwargs) == {"alpha"} and name in ("add", "sub")):
            if _update_in_place(self, ufunc, args[0], kwargs.get("alpha", 1)):
                return self
        return run_inplace(self, getattr(Tensor, name), args, kwargs, name + "_")

    method.__name__ = name + "_"
    method.__doc__ = f"In-place version of :meth:`Tensor.{name}` (writes into self, returns self)."
    return method



class Copy(Op):
    """``self.copy_(src)``: src broadcast to self's shape and cast to its dtype. The old values of self
    get no gradient; src gets the gradient (summed over broadcast dims by the engine)."""

    def forward(self, x, src):
        if not hasattr(src, "shape"):
            return self.xp.full(x.shape, src, dtype=x.dtype)
        if src.shape != x.shape:
            try:
                src = self.xp.broadcast_to(src, x.shape)
            except ValueError:
                raise RuntimeError(
                    f"copy_: the source of shape {list(src.shape)} can't be broadcast to the destination's shape "
                    f"{list(x.shape)}"
                ) from None
        return src.astype(x.dtype, copy=True)

    def name(self) -> str:
        return "torch::autograd::CopyBackwards"  # PyTorch's name (the class is CopyBackwards)

    def backward(self, grad):
        return grad.new_zeros(()).expand(grad.shape), grad

    def jvp(self, inputs, outputs, tangents):  # the written values' tangent (broadcast); self's old one is gone
        return tangents[1] if tangents[1] is not None else outputs[0].new_zeros(()).expand(outputs[0].shape)


def copy_(self: Tensor, src, non_blocking: bool = False) -> Tensor:
    """Overwrite self's elements with ``src`` (any dtype, any device, broadcastable); returns self."""
    if isinstance(src, Tensor) and src.device != self.device:
        src = src.to(self.device)
    return run_inplace(self, Copy.apply, (src,), {}, "copy_ from itself" if src is self else "copy_")


def fill_(self: Tensor, value) -> Tensor:
    if isinstance(value, Tensor) and value.dim() != 0:
        raise RuntimeError(
            f"fill_ only supports 0-dimension value tensor but got tensor with {value.dim()} dimensions."
        )
    if isinstance(value, Tensor):
        check_inplace(self, False)  # fill_(Tensor) refuses an expanded self, as PyTorch's (fill_(number) does not)
        if value.device != self.device:
            value = value.to(self.device)
    return run_inplace(self, Copy.apply, (value,), {}, "fill_")


def zero_(self: Tensor) -> Tensor:
    return run_inplace(self, Copy.apply, (0,), {}, "zero_")




class IndexAssign(Op):
    """``out = x.clone(); out[index] = values`` for any index ``t[index] = v`` accepts (tensors,
    lists, masks mixed with slices). Gradient: zero at the written places for ``x``; ``grad[index]``
    for ``values`` (summed over broadcast dims by the engine)."""

    def forward(self, x, values, index):
        self.index = index
        out = x.copy()
        where = tuple(getattr(i, "_array", i) for i in index)
        try:
            out[where] = values
        except (ValueError, TypeError):
            if not hasattr(values, "shape"):
                raise
            raise RuntimeError(  # numpy's words for values that do not fit, PyTorch's instead
                f"shape mismatch: value tensor of shape {list(values.shape)} cannot be broadcast to indexing "
                f"result of shape {list(out[where].shape)}"
            ) from None
        return out

    def backward(self, grad):
        return IndexAssign.apply(grad, 0.0, index=self.index), grad[self.index]

    def jvp(self, inputs, outputs, tangents):  # linear in (x, values) together: the same write of the tangents
        tx, tv = forward_ad.zeros_for_missing(inputs[:2], tangents[:2])
        return IndexAssign.apply(tx, 0.0 if tv is None else tv, index=self.index)


def _assign(input: Tensor, index, values) -> Tensor:
    index = assignment_index(input, index)
    if isinstance(values, Tensor):
        values = values.to(input.dtype)
    return IndexAssign.apply(input, values, index=index)


def index_put_(self: Tensor, indices, values, accumulate: bool = False) -> Tensor:
    """In-place ``index_put``: ``self[indices] = values`` (``+=`` with ``accumulate``)."""
    return run_inplace(self, Tensor.index_put, (indices, values), {"accumulate": accumulate}, "index_put_")


def _check_assignable(self: Tensor, value) -> None:
    """PyTorch assigns through indexing only a Tensor or a number (bool, int, float, complex, a numpy integer):
    a list, tuple or array raises its TypeError, which names the type as Python's C API does (tp_name)."""
    kind = type(value)
    numpy_integer = hasattr(kind, "__index__") and not hasattr(kind, "__len__")
    if isinstance(value, (Tensor, int, float, complex)) or numpy_integer:
        return
    short = kind.__module__ == "builtins" or kind.__flags__ & _HEAP_TYPE  # a class defined in Python: its bare name
    name = kind.__name__ if short else f"{kind.__module__}.{kind.__name__}"
    raise TypeError(f"can't assign a {name} to a {legacy_type_name(self)}")


_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE


def setitem(self: Tensor, index, value) -> None:
    """``t[index] = value``: basic indices write through a view (CopySlices), others via index_put_.

    As in PyTorch (and unlike ``copy_``), a tensor value first loses its leading size-1 dims, then
    broadcasts to the indexed shape: ``logits[0] = torch.ones(1, 27)`` fills a row of 27."""
    _check_assignable(self, value)
    basic = normalize_basic_index(index, self.dim())
    if basic is not None:
        # PyTorch's applySlice returns self for a slice from 0 (or none) to the end with step 1: an index made of
        # only those writes into self itself, not through a view (no CopySlices; a leaf is "a leaf", seed 98224)
        whole = all(isinstance(i, slice) and i.start in (None, 0) and i.step in (None, 1)
                    and (i.stop is None or i.stop >= n) for i, n in zip(basic, self._array.shape))
        target = self if whole and len(basic) <= self.dim() else Index.apply(self, basic)
        # PyTorch's copy_to: a value of the target's shape is copied as it is, a 0-d one fills it
        if isinstance(value, Tensor) and value._array.shape != target._array.shape:
            if not value._array.shape:
                fill_(target, value)
                return
            value = _without_leading_ones(value).expand(target._array.shape)  # expand errors when it does not fit
        copy_(target, value)
    else:
        if isinstance(value, Tensor):
            value = _without_leading_ones(value)
        run_inplace(self, _assign, (index, value), {}, "index_put_")


def _without_leading_ones(value: Tensor) -> Tensor:
    """``value`` viewed without its leading size-1 dims (PyTorch's slicePrefix1sSize)."""
    shape = value._array.shape
    lead = 0
    while lead < len(shape) and shape[lead] == 1:
        lead += 1
    return value.view(shape[lead:]) if lead else value



# in-place view ops: a new geometry for self, no element written -----------------------------------


def run_inplace_view(self: Tensor, name: str, view_fn, *args, **kwargs) -> Tensor:
    """``self`` becomes the view ``view_fn(self, *args, **kwargs)`` of its own memory (``t_``, ``unsqueeze_``).

    Only size, stride and offset change, yet, as in PyTorch, it is an in-place op: the in-place checks
    apply, the version is bumped (a saved ``self`` is then caught at backward), and with grad the view's
    node goes on top of ``self``'s history. A view stays a view of its base, whose history is untouched."""
    if not self._dense:
        raise NotImplementedError(f"{name}: minitorch has no in-place view ops for {self._kind} tensors")
    recording = grad_mode.state.enabled and self.requires_grad
    base = self._meta.base if self._meta is not None else None
    check_inplace(self, recording or (grad_mode.state.enabled and base is not None and base._requires_grad), False)
    with grad_mode.set_grad_enabled(recording):
        result = view_fn(_with_history(self) if recording else self._alias(), *args, **kwargs)
    self._array, self._offset = result._array, result._offset
    self._storage.version += 1
    if forward_ad.state.active:
        forward_ad.view_tangent(self, view_fn, *args, **kwargs)
    if recording:
        self._grad_fn, self._output_nr, self._requires_grad = result._grad_fn, 0, True
        self._grad_fn.node_name = _inplace_view_node_name(name, args, kwargs)
        if base is not None:
            self._meta.view_version = self._storage.version
    return self


def _inplace_view_node_name(name: str, args: tuple, kwargs: dict) -> str:
    """PyTorch's node of an in-place view op: its own overload of the view's node (``t_``: TBackward1)."""
    if name == "squeeze_":
        dim = args[0] if args else kwargs.get("dim")
        return "SqueezeBackward3" if dim is None else "SqueezeBackward4" if isinstance(dim, int) else "SqueezeBackward5"
    return {"t_": "TBackward1", "transpose_": "TransposeBackward1", "unsqueeze_": "UnsqueezeBackward1",
            "as_strided_": "AsStridedBackward1"}[name]


def _inplace_view(view_fn, doc: str):
    name = view_fn.__name__ + "_"

    def method(self: Tensor, *args, **kwargs) -> Tensor:
        return run_inplace_view(self, name, view_fn, *args, **kwargs)

    method.__name__, method.__doc__ = name, doc
    return method


def t_(self: Tensor) -> Tensor:
    """In-place ``t``: self is transposed (at most 2 dims)."""
    if self.dim() > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is {self.dim()}D")
    return run_inplace_view(self, "t_", t)


unsqueeze_ = _inplace_view(unsqueeze, "In-place ``unsqueeze``: self gets a new dim of size 1.")
squeeze_ = _inplace_view(squeeze, "In-place ``squeeze``: self loses dims of size 1 (all, or the given).")
transpose_ = _inplace_view(transpose, "In-place ``transpose``: two dims of self swapped.")
as_strided_ = _inplace_view(as_strided, "In-place ``as_strided``: self becomes that window of its storage.")

__all__: list = []
