"""``minitorch.multiprocessing``: Python's ``multiprocessing`` plus PyTorch's ``spawn``.

Everything of ``multiprocessing`` is here (``Process``, ``Queue``, ``set_start_method``, ``get_context``, ...).
Tensors sent to another process are pickled, i.e. copied: minitorch has no shared-memory tensors, so the
sharing-strategy functions report PyTorch's names but change nothing on the way tensors travel
(docs/differences.md).
"""

import multiprocessing
import sys
from multiprocessing import *  # noqa: F403 - torch.multiprocessing re-exports the module whole

from .spawn import (
    ProcessContext,
    ProcessException,
    ProcessExitedException,
    ProcessRaisedException,
    spawn,
    start_processes,
)

__all__ = list(multiprocessing.__all__) + [
    "ProcessContext", "ProcessException", "ProcessExitedException", "ProcessRaisedException",
    "get_all_sharing_strategies", "get_sharing_strategy", "set_sharing_strategy", "spawn", "start_processes",
]

_STRATEGIES = {"file_system"} if sys.platform == "darwin" else {"file_descriptor", "file_system"}
_strategy = "file_system" if sys.platform == "darwin" else "file_descriptor"


def get_all_sharing_strategies() -> set:
    return set(_STRATEGIES)


def get_sharing_strategy() -> str:
    return _strategy


def set_sharing_strategy(new_strategy: str) -> None:
    """Accepts PyTorch's strategy names (an unknown one is an AssertionError, as in PyTorch)."""
    global _strategy
    if new_strategy not in _STRATEGIES:
        raise AssertionError(f"unknown sharing strategy {new_strategy!r}; choose one of {sorted(_STRATEGIES)}")
    _strategy = new_strategy
