"""Guards: what must hold for a recorded plan to give the eager answer again.

The key of a call (looked up in the plan cache) covers the arguments: each tensor's shape, strides, storage
offset, dtype, device and ``requires_grad``, which argument positions are the same tensor, every other argument
by value, and the global modes a trace depends on (grad mode, inference mode, the default dtype, the
``training`` flag of the module's submodules). A plan also checks its externals (parameters and buffers read
without being passed): the same tensor objects, still of the traced shape, dtype and ``requires_grad``. Their
values are read afresh at every replay, so in-place updates between calls (an optimizer step) are seen and need
no retrace; their version counters are not guarded for that reason.
"""

from __future__ import annotations

from .. import _autocast_state, _dtype
from .._grad_state import state as grad_state
from ..tensor import Tensor
from .tracer import requires_grad_of


class Unguardable(Exception):
    """An argument the cache cannot key on (unhashable, a sparse tensor): the call runs eagerly."""


def call_key(args: tuple, kwargs: dict, modules: tuple) -> tuple:
    """``(tensors, key)``: the call's tensor arguments in order, and the cache key of the call."""
    tensors: list = []
    parts: list = [grad_state.enabled, grad_state.inference, _dtype.get_default_dtype()]
    if _autocast_state.state.active:
        raise Unguardable("autocast is on (compiled plans do not record autocast's casts)")
    if modules:
        parts.append(tuple(m.training for m in modules))
    ids: dict = {}
    _flatten(args, tensors, parts, ids)
    if kwargs:
        for name in sorted(kwargs):
            parts.append(name)
            _flatten(kwargs[name], tensors, parts, ids)
    return tensors, tuple(parts)


def _flatten(value, tensors: list, parts: list, ids: dict) -> None:
    if isinstance(value, Tensor):
        if not value._dense:
            raise Unguardable(f"a {value._kind} tensor argument")
        first = ids.get(id(value))
        if first is not None:
            parts.append(("same as", first))
            return
        ids[id(value)] = len(tensors)
        tensors.append(value)
        array = value._array
        parts.append((type(value), array.shape, array.strides, value._offset, value._storage.dtype,
                      value._storage.device, requires_grad_of(value)))
    elif type(value) in (list, tuple) or (isinstance(value, tuple) and hasattr(value, "_fields")):
        parts.append((type(value), len(value)))
        for item in value:
            _flatten(item, tensors, parts, ids)
    elif type(value) is dict:
        parts.append((dict, tuple(value)))
        for item in value.values():
            _flatten(item, tensors, parts, ids)
    else:
        try:
            hash(value)
        except TypeError:
            raise Unguardable(f"an unhashable argument of type {type(value).__name__}") from None
        parts.append((type(value), value))


def externals_hold(plan) -> bool:
    """The plan's parameters and buffers are still the traced tensors, of the traced shape and dtype."""
    for _, tensor, getter, _, shape, dtype, requires_grad in plan.externals:
        if (getter() is not tensor or tensor._array.shape != shape or tensor._storage.dtype is not dtype
                or requires_grad_of(tensor) != requires_grad):
            return False
    return True


def describe(plan) -> list[str]:
    """The guards of a plan, one line each (for explain())."""
    lines = ["grad mode, inference mode, default dtype and autocast as at the trace"]
    for slot, position in plan.inputs:
        kind, shape, dtype = plan.slot_info[slot]
        lines.append(f"input {position}: shape {list(shape)}, {dtype}, strides and requires_grad as traced")
    for _, _tensor, _, name, shape, dtype, requires_grad in plan.externals:
        lines.append(f"{name} is the traced tensor, shape {list(shape)}, {dtype}, requires_grad={requires_grad}")
    return lines
