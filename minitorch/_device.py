"""Devices: where a tensor's storage lives (``cpu``, ``cuda:N``, ``meta``), and the default device that
factories use when given none (``set_default_device``, or ``with torch.device('meta'):``).

Device objects are interned, so the hot path can compare them with ``is``.
"""

from __future__ import annotations

import threading

_interned: dict[tuple[str, int | None], device] = {}
# device types a backend was registered for (_backends/registry.py adds them), beyond cpu, cuda and meta
registered_types: set[str] = set()


class device:
    """``device('cpu')``, ``device('cuda', 0)``, ``device('cuda:1')``, ``device('meta')``."""

    __slots__ = ("type", "index")

    def __new__(cls, type: str | device, index: int | None = None):  # noqa: A002
        if isinstance(type, device):
            if index is not None:
                raise ValueError("device(): pass either a device or (type, index), not both")
            return type
        if not isinstance(type, str):
            raise TypeError(f"device(): expected a string like 'cuda:0', got {type!r}")
        kind, sep, idx = type.partition(":")
        if sep:
            if index is not None:
                raise RuntimeError(f"device(): type {type!r} already has an index")
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}'")
            index = int(idx)
        if index is not None and index < 0:
            raise RuntimeError(f"Device index must not be negative (got {type}, {index})")
        if kind not in ("cpu", "cuda", "meta") and kind not in registered_types:
            raise RuntimeError(
                f"Expected one of cpu, cuda, meta or a registered backend device type "
                f"at start of device string: {type}"
            )
        key = (kind, index)
        dev = _interned.get(key)
        if dev is None:
            dev = object.__new__(cls)
            object.__setattr__(dev, "type", kind)
            object.__setattr__(dev, "index", index)
            _interned[key] = dev
        return dev

    def __setattr__(self, key, value):
        raise AttributeError("device objects are immutable")

    def __reduce__(self):
        return (device, (self.type, self.index))

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            other = device(other)
        if not isinstance(other, device):
            return NotImplemented
        return self.type == other.type and self.index == other.index

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __enter__(self) -> device:
        """``with torch.device('meta'):``: factories without ``device=`` allocate here until the block ends."""
        stack = _state.__dict__.setdefault("entered", [])
        stack.append(_state.__dict__.get("default"))
        _state.default = self
        return self

    def __exit__(self, *exc) -> None:
        _state.default = _state.entered.pop()


# The default device is per thread, as PyTorch's device context is (None: the CPU).
_state = threading.local()


def set_default_device(device) -> None:
    """Make ``device`` (a device, a string, a CUDA ordinal, or None for the CPU) the device of tensors that
    factories (``zeros``, ``tensor``, ``arange``, ...) create without ``device=``."""
    _state.default = None if device is None else as_device(device)


def default_device() -> device | None:
    """The device set by ``set_default_device`` or a ``with device(...)`` block (None: none set, the CPU).
    ``minitorch.get_default_device`` (_runtime.py) resolves a bare ``cuda`` through the backend."""
    return _state.__dict__.get("default")


def as_device(spec) -> device:
    """Normalize what users pass as ``device=`` (str, int CUDA ordinal, device; None: the default device)."""
    if spec is None:
        return _state.__dict__.get("default") or CPU
    if isinstance(spec, device):
        return spec
    if isinstance(spec, int):
        return device("cuda", spec)
    return device(spec)


CPU = device("cpu")
