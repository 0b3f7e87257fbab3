"""Forward-mode AD (``torch.autograd.forward_ad``): dual tensors whose tangents ride along with every op.

Reverse mode records a graph and walks it back once per output; forward mode pushes a tangent ``t`` (a
direction in input space) through each op as the op runs, so one pass gives ``J t``. Inside a
``dual_level``, ``make_dual(primal, tangent)`` makes a dual tensor; an op with a dual input gives each
output the tangent its ``jvp`` computes (ops/op.py: the rule stands beside the op's ``backward``, written by
hand or derived from it). Leaving the level drops every tangent. As in PyTorch, levels do not nest.

Tangents live in the tensor's AutogradMeta (``tangent``: a Tensor, None, or False for "explicitly none",
which a view's lookup must not fill from its base). A tangent is laid out like its primal in memory (same
strides and offset, over a storage of the same length), so a view's tangent is the same window of its
base's tangent, and an in-place op through a view writes its base's tangent, as in PyTorch.

The dispatchers read one flag, ``state.active``, and call in here only when it is set. While a jvp rule
runs the flag is off (``_suspended``): rules compute on primals, and tangents get no tangents of their own.
"""

from __future__ import annotations

import contextlib
import weakref
from typing import NamedTuple

from .. import _dispatch_modes
from ..creation import zeros
from ..tensor import Tensor
from .grad_mode import _DecoratorContextManager

__all__ = ["UnpackedDualTensor", "dual_level", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual"]


class _State:
    __slots__ = ("_active", "level")

    def __init__(self):
        self._active = False
        self.level = -1  # PyTorch's _current_level: -1 when no level is open

    @property
    def active(self) -> bool:
        """A level is open and no jvp rule is running: ops propagate tangents."""
        return self._active

    @active.setter
    def active(self, on: bool) -> None:
        if on != self._active:
            _dispatch_modes.hold(on)
            self._active = on


state = _State()
_dual_tensors: list = []  # weak references to the tensors given a tangent in the open level (cleared on exit)


class UnpackedDualTensor(NamedTuple):
    """``unpack_dual``'s result: the primal (a view without tangent) and the tangent (None if there is none)."""

    primal: Tensor
    tangent: Tensor | None


# levels -----------------------------------------------------------------------------------------
def enter_dual_level() -> int:
    """Open the (only) forward AD level and return it (0)."""
    if state.level >= 0:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    state.level = 0
    state.active = True
    return 0


def exit_dual_level(*, level: int | None = None) -> None:
    """Close the level: every tangent made in it is dropped."""
    if level is None:
        level = state.level
    if level != state.level:
        raise RuntimeError(
            "Trying to exit a forward AD level that was not the last one that was created. This is not supported."
        )
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    for ref in _dual_tensors:
        t = ref()
        if t is not None and t._meta is not None:
            t._meta.tangent = None
    _dual_tensors.clear()
    state.level = -1
    state.active = False


class dual_level(_DecoratorContextManager):
    """``with dual_level():`` forward AD is on inside; every tangent is dropped on exit."""

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc) -> None:
        exit_dual_level()


def _check_level(level, api: str) -> None:
    if level is not None and level != state.level:
        raise RuntimeError(f"Invalid level given to {api}")


# dual tensors -----------------------------------------------------------------------------------
def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """A view of ``tensor`` whose tangent is ``tangent`` (``tangent`` itself when laid out like ``tensor``,
    else a copy that is)."""
    if (state.level if level is None else level) < 0:
        raise RuntimeError(
            "Trying to create a dual Tensor for forward AD but no level exists, make sure to enter_dual_level() first."
        )
    if not (tensor.is_floating_point() or tensor.is_complex()):
        raise ValueError(f"Expected primal to be floating point or complex, but got: {tensor.dtype}")
    if not (tangent.is_floating_point() or tangent.is_complex()):
        raise ValueError(f"Expected tangent to be floating point or complex, but got: {tangent.dtype}")
    _check_level(level, "_make_dual")
    if tangent._array.shape != tensor._array.shape:
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the original Tensor, this is "
            f"not supported. Tensor is of size {list(tensor.shape)} while the given forward gradient is of size "
            f"{list(tangent.shape)}."
        )
    if tangent.device != tensor.device:
        raise RuntimeError(
            "Trying to set a forward gradient that has a different device than that of the original Tensor, this is "
            f"not supported. Tensor is on {tensor.device} while the given forward gradient is on {tangent.device}."
        )
    if tangent_of(tensor) is not None:
        raise RuntimeError(
            "Making a dual Tensor based on a Tensor that already has a forward gradient at the same level 0 is not "
            "supported."
        )
    with _suspended():
        dual = tensor.view_as(tensor)
        set_tangent(dual, laid_out_like(dual, tangent))
    return dual


def unpack_dual(tensor: Tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """``(primal, tangent)``: the primal is a view of ``tensor`` without a tangent; the tangent is None when
    ``tensor`` has none (or no level is open)."""
    if (state.level if level is None else level) < 0 or not state.active:  # (inactive: a custom forward runs)
        return UnpackedDualTensor(tensor, None)
    _check_level(level, "_unpack_dual")
    tangent = tangent_of(tensor)
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    with _suspended():
        primal = tensor.view_as(tensor)
    primal._autograd_meta().tangent = False  # not filled from its base's tangent either
    return UnpackedDualTensor(primal, tangent)


# tangents -----------------------------------------------------------------------------------------
def _own_tangent(t: Tensor):
    meta = t._meta
    if meta is None:
        return None
    tangent = meta.tangent
    return None if tangent is False else tangent


def tangent_of(t: Tensor) -> Tensor | None:
    """``t``'s tangent in the open level. A view made before its base got a tangent (by an in-place write
    through a sibling view) finds the same window of its base's tangent."""
    meta = t._meta
    if meta is None:
        return None
    tangent = meta.tangent
    if tangent is not None:
        return None if tangent is False else tangent
    base = meta.base
    if base is None or base._storage.dtype is not t._storage.dtype:
        return None
    base_tangent = _own_tangent(base)
    if base_tangent is None:
        return None
    tangent = base_tangent._view(t._array.shape, t.stride(), t._offset)
    set_tangent(t, tangent)
    return tangent


def set_tangent(t: Tensor, tangent: Tensor) -> None:
    t._autograd_meta().tangent = tangent
    _dual_tensors.append(weakref.ref(t))
    if len(_dual_tensors) > _prune_above[0]:  # a long level: drop the references to tensors already gone
        _dual_tensors[:] = [ref for ref in _dual_tensors if ref() is not None]
        _prune_above[0] = max(1024, 2 * len(_dual_tensors))


_prune_above = [1024]


def laid_out_like(primal: Tensor, tangent: Tensor) -> Tensor:
    """``tangent`` if it has ``primal``'s strides and offset over a storage of the same length; else a copy that
    has (recorded by reverse mode when ``tangent`` requires grad). Call with forward AD suspended."""
    storage, target = tangent._storage, primal._storage
    if tangent._offset == primal._offset and len(storage) == len(target) and tangent.stride() == primal.stride():
        return tangent
    window = _zeros_laid_out_like(primal, tangent.dtype)
    window.copy_(tangent)
    return window


def _zeros_laid_out_like(primal: Tensor, dtype) -> Tensor:
    buffer = zeros(len(primal._storage), dtype=dtype, device=primal.device)
    return buffer._view(primal._array.shape, primal.stride(), primal._offset)


@contextlib.contextmanager
def _suspended():
    """Forward AD off while a jvp rule (or minitorch's own bookkeeping) runs; back on afterwards."""
    was = state.active
    state.active = False
    try:
        yield
    finally:
        state.active = was


def zeros_for_missing(inputs: tuple, tangents: tuple) -> tuple:
    """``tangents`` with a zero tangent (a broadcast zero: no memory) for every floating-point tensor input that
    has none, so a hand-written rule can read ``ta * b + a * tb`` without asking which tangents exist."""
    filled = []
    for x, t in zip(inputs, tangents):
        if t is None and isinstance(x, Tensor) and (x.dtype.is_floating_point or x.dtype.is_complex):
            t = zeros((), dtype=x.dtype, device=x.device).expand(x.shape)
        filled.append(t)
    return tuple(filled)


# the dispatcher's entry points ---------------------------------------------------------------------
def propagate(node, inputs: tuple, outputs: tuple, keywords: dict | None = None) -> None:
    """After ``node`` (an op, forward done) produced ``outputs``: give each output its tangent, if an input
    has one. ``node.jvp(inputs, outputs, tangents)`` returns one tangent per output (or one tangent); the op's
    keyword arguments are on ``node.keywords`` for rules that call the op again."""
    if not any(o.dtype.is_floating_point or o.dtype.is_complex for o in outputs):
        return  # comparisons, indices: nothing to differentiate
    tangents = tuple(tangent_of(x) if isinstance(x, Tensor) else None for x in inputs)
    if all(t is None for t in tangents):
        return
    if keywords:
        node.keywords = keywords
    with _suspended():
        result = node.jvp(inputs, outputs, tangents)
        attach(outputs, result)
    keep_saved_tangents(node, outputs)


def attach(outputs: tuple, result) -> None:
    """Set each floating-point output's tangent from ``result`` (broadcast to its shape, cast to its dtype,
    laid out like it). Call with forward AD suspended."""
    if type(result) is not tuple:
        result = (result,)
    for out, tangent in zip(outputs, result):
        if tangent is None or not isinstance(out, Tensor) or not (out.dtype.is_floating_point or out.dtype.is_complex):
            continue
        if tangent._array.shape != out._array.shape:
            tangent = tangent.expand(out.shape)
        if tangent.dtype is not out.dtype:
            tangent = tangent.to(out.dtype)
        set_tangent(out, laid_out_like(out, tangent))


def keep_saved_tangents(node, outputs: tuple) -> None:
    """A recorded node keeps its own outputs as detached aliases (graph.SavedTensor), which would lose their
    tangents; forward-over-reverse (a backward run inside the level) needs them, so the node keeps a tangent-
    carrying alias instead (no version check for it) and runs backward on Tensors."""
    saved = getattr(node, "_saved", None)
    if not saved:
        return
    kept = []
    for entry in saved:
        output_nr = getattr(entry, "output_nr", None)
        if output_nr is not None and output_nr < len(outputs) and tangent_of(outputs[output_nr]) is not None:
            alias = entry.tensor._alias()
            alias._grad_fn, alias._output_nr, alias._requires_grad = node, output_nr, True
            set_tangent(alias, tangent_of(outputs[output_nr]))
            entry = alias
        kept.append(entry)
    node._saved = tuple(kept)
    node._arrays = False


def write_tangent(self: Tensor, result: Tensor) -> None:
    """After an in-place op wrote ``result`` into ``self``: ``result``'s tangent is written into ``self``'s
    tangent's memory. If ``self`` had none it gets zeros first (a view: a window of its base's tangent, which
    the base gets then); a write of a value without tangent zeroes ``self``'s tangent."""
    new, old = tangent_of(result), tangent_of(self)
    if new is None and old is None:
        return
    with _suspended():
        if old is None:
            old = _fresh_tangent(self)
        if new is None:
            old.zero_()
        else:
            old.copy_(new)


def write_tangent_value(self: Tensor, tangent: Tensor) -> None:
    """``self`` (written in place by a custom Function) gets ``tangent``, written into its tangent's memory."""
    old = tangent_of(self)
    with _suspended():
        if old is None:
            old = _fresh_tangent(self)
        if old is not tangent:
            old.copy_(tangent)


def _fresh_tangent(t: Tensor) -> Tensor:
    base = t._meta.base if t._meta is not None else None
    if base is not None and base._storage.dtype is t._storage.dtype:
        if tangent_of(base) is None:
            set_tangent(base, _zeros_laid_out_like(base, base.dtype))
        return tangent_of(t)
    tangent = _zeros_laid_out_like(t, t.dtype)
    set_tangent(t, tangent)
    return tangent


def share_tangent(alias: Tensor, t: Tensor) -> None:
    """``alias`` (same memory as ``t``, a stand-in for it in an in-place op) gets ``t``'s tangent."""
    tangent = tangent_of(t)
    if tangent is not None:
        set_tangent(alias, tangent)


def view_tangent(self: Tensor, view_fn, *args, **kwargs) -> None:
    """After an in-place view op (``t_``, ``unsqueeze_``) changed ``self``'s geometry: its tangent follows."""
    tangent = tangent_of(self)
    if tangent is not None:
        with _suspended():
            self._meta.tangent = view_fn(tangent, *args, **kwargs)
