"""``torch.nn.modules.utils``: the argument helpers layers and user code import (``_pair(3) == (3, 3)``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def _ntuple(n: int, name: str = "parse"):
    """A function turning a value into an n-tuple: an iterable is kept as a tuple, anything else repeated."""
    def parse(x):
        if isinstance(x, Iterable):
            return tuple(x)
        return tuple([x] * n)

    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t, n: int) -> tuple:
    """``(a, b)`` -> ``(b, b, a, a)`` for n = 2: per-dim values in the last-dim-first order ``F.pad`` takes."""
    return tuple(x for x in reversed(t) for _ in range(n))


def _list_with_default(out_size, defaults: list) -> list:
    """``out_size`` with its None entries taken from the trailing ``defaults`` (adaptive pooling's sizes)."""
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    return [v if v is not None else d for v, d in zip(out_size, defaults[-len(out_size):])]


def consume_prefix_in_state_dict_if_present(state_dict: dict[str, Any], prefix: str) -> None:
    """Strip ``prefix`` from the keys that have it, in place (e.g. ``module.`` from a DataParallel checkpoint)."""
    for key in list(state_dict.keys()):
        if key.startswith(prefix):
            state_dict[key[len(prefix):]] = state_dict.pop(key)
    metadata = getattr(state_dict, "_metadata", None)
    if metadata is not None:
        for key in list(metadata.keys()):
            if len(key) == 0:
                continue
            if key == prefix.replace(".", "") or key.startswith(prefix):
                metadata[key[len(prefix):]] = metadata.pop(key)


__all__ = ["consume_prefix_in_state_dict_if_present"]
