"""``minitorch.backends.mps``: Apple's Metal backend, which minitorch does not have (never available or built)."""

from __future__ import annotations


def is_available() -> bool:
    return False


def is_built() -> bool:
    return False
