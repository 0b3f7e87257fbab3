"""Devices: where a tensor's storage lives (``cpu``, ``cuda:N``, ``meta``).

Device objects are interned, so the hot path can compare them with ``is``.
"""

from __future__ import annotations

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


def as_device(spec) -> device:
    """Normalize what users pass as ``device=`` (str, int CUDA ordinal, device, None->cpu)."""
    if spec is None:
        return CPU
    if isinstance(spec, device):
        return spec
    if isinstance(spec, int):
        return device("cuda", spec)
    return device(spec)


CPU = device("cpu")
