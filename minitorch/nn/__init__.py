"""minitorch.nn (in progress)."""

from . import functional
