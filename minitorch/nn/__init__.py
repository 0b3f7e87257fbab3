"""minitorch.nn (in progress)."""

from . import functional

__all__ = ["functional"]
