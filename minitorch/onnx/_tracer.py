"""Recording a forward call op by op, for the ONNX exporter.

Every built-in op runs through ``Op.apply`` (or the ``apply`` of a view op class). For the length of one
``record()`` block those classmethods are swapped for a recording wrapper, as the profiler swaps
``Op.apply`` while it records: nothing on the hot path checks a flag when no export runs. Only outermost
calls are recorded (an op called inside another op's apply belongs to it). In-place writes are seen
through ``ops.inplace.write_result``, which is swapped the same way (and the optimizer's one-ufunc fast path
for ``x += y`` is turned off): the tensor written into takes the value of the op's result from then on. The
storage versions seen at each call are kept, so a write the trace cannot follow is caught where the stale
value is used.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

from .. import _dispatch_modes
from ..ops import inplace
from ..ops.op import Op
from ..tensor import Tensor


@dataclass
class Step:
    """One recorded op call: the op class, its arguments as given to ``apply``, its outputs."""

    op: type
    args: tuple
    params: dict
    outputs: tuple
    versions: dict  # id(tensor) -> its storage's version, for the tensors in args and params and the outputs


@dataclass
class InplaceWrite:
    """``target`` was overwritten with ``result`` (an in-place op: ``x.relu_()``, ``x += y``)."""

    target: Tensor
    result: Tensor
    versions: dict


@dataclass
class Recording:
    events: list = field(default_factory=list)  # Step and InplaceWrite, in program order
    depth: int = 0


def _op_classes() -> list:
    """Op and every subclass that defines its own ``apply`` (view ops, split views)."""
    found, stack = [], [Op]
    while stack:
        cls = stack.pop()
        if "apply" in cls.__dict__:
            found.append(cls)
        stack.extend(cls.__subclasses__())
    return found


def _versions(value, found: dict | None = None) -> dict:
    """id -> storage version of every Tensor in ``value`` (nested lists, tuples and dicts)."""
    found = {} if found is None else found
    if isinstance(value, Tensor):
        found[id(value)] = value._storage.version
    elif isinstance(value, (list, tuple)):
        for v in value:
            _versions(v, found)
    elif isinstance(value, dict):
        for v in value.values():
            _versions(v, found)
    return found


def _recording_apply(original, recording: Recording):
    function = original.__func__

    def apply(cls, *args, **params):
        recording.depth += 1
        try:
            result = function(cls, *args, **params)
        finally:
            recording.depth -= 1
        if recording.depth == 0:
            outputs = result if type(result) is tuple else (result,)
            versions = _versions((args, params))
            versions.update(_versions(outputs))
            recording.events.append(Step(cls, args, params, outputs, versions))
        return result

    return classmethod(apply)


def _general_path(self, ufunc, other, alpha) -> bool:
    return False


@contextlib.contextmanager
def record():
    """Within the block, every op call is appended to the yielded ``Recording``."""
    recording = Recording()
    originals = {cls: cls.__dict__["apply"] for cls in _op_classes()}
    original_write = inplace.write_result
    original_fast_path = inplace._update_in_place

    def write_result(self: Tensor, result: Tensor, op_name: str) -> None:
        original_write(self, result, op_name)
        if recording.depth == 0:
            recording.events.append(InplaceWrite(self, result, _versions((self, result))))

    try:
        _dispatch_modes.hold(True)  # every op through the swapped applies
        for cls, original in originals.items():
            cls.apply = _recording_apply(original, recording)
        inplace.write_result = write_result
        inplace._update_in_place = _general_path  # x += y: through an op and write_result, not one ufunc
        yield recording
    finally:
        _dispatch_modes.hold(False)
        for cls, original in originals.items():
            cls.apply = original
        inplace.write_result = original_write
        inplace._update_in_place = original_fast_path
