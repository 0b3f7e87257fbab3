"""Saved-tensor hooks: decide how the tensors an op keeps for backward are stored.

Inside ``saved_tensors_hooks(pack, unpack)`` every tensor an op saves for backward (built-in ops and a
custom Function's ``save_for_backward`` alike) is handed to ``pack`` once, when the op is recorded, and
the graph keeps only what ``pack`` returns; backward calls ``unpack`` on that each time it reads the
saved tensor. Offloading (``save_on_cpu``) and activation checkpointing (utils/checkpoint.py) are built
on this. The hooks are a per-thread stack: only the innermost pair applies. As in PyTorch, a tensor
saved through hooks gets no version-counter check (the graph no longer holds the tensor to compare).

The graph side (packing what a node saved, unpacking it in backward) is ``PackedSavedTensor`` in graph.py;
this module holds the state it reads: the per-thread stack, and ``active``, how many hook contexts are
entered in all threads. A recording op reads only ``active`` (a module global, three times cheaper than the
thread-local attribute) and looks at its thread's hooks when it is non-zero.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any

from .. import _dispatch_modes
from ..tensor import Tensor


class _HooksState(threading.local):
    """Per-thread: the innermost (pack, unpack) pair or None, and the message that forbids hooks (or None)."""

    hooks = None
    disabled_message = None


state = _HooksState()
active = 0  # saved_tensors_hooks contexts entered, in every thread
_count_lock = threading.Lock()


def _count(change: int) -> None:
    global active
    with _count_lock:
        was = active
        active += change
        if not was or not active:  # off to on, or on to off
            _dispatch_modes.hold(bool(active))


class saved_tensors_hooks:  # noqa: N801 (PyTorch's name)
    """Context manager: ``pack_hook(tensor) -> Any`` runs when an op saves ``tensor`` for backward,
    ``unpack_hook(packed) -> Tensor`` whenever backward reads it back."""

    def __init__(self, pack_hook: Callable[[Tensor], Any], unpack_hook: Callable[[Any], Tensor]) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook
        self._previous: list = []

    def __enter__(self) -> None:
        if state.disabled_message is not None:
            raise RuntimeError(state.disabled_message)
        self._previous.append(state.hooks)
        state.hooks = (self.pack_hook, self.unpack_hook)
        _count(1)

    def __exit__(self, *exc) -> None:
        state.hooks = self._previous.pop()
        _count(-1)


class save_on_cpu(saved_tensors_hooks):  # noqa: N801 (PyTorch's name)
    """Keep saved tensors in CPU memory and copy them back to their device in backward (a tensor already
    on the CPU is kept as it is). ``pin_memory`` has no effect: minitorch's CPU memory is never pinned."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack_to_cpu(tensor: Tensor) -> tuple:
            return (tensor.device, tensor.cpu())

        def unpack_from_cpu(packed: tuple) -> Tensor:
            device, tensor = packed
            return tensor.to(device, non_blocking=pin_memory)

        super().__init__(pack_to_cpu, unpack_from_cpu)


class disable_saved_tensors_hooks:  # noqa: N801 (PyTorch's name)
    """Context manager: entering ``saved_tensors_hooks`` raises ``RuntimeError(error_message)`` inside it
    (for features that cannot work with them). Entering it while hooks are active raises the same."""

    def __init__(self, error_message: str) -> None:
        self.error_message = error_message
        self._previous: list = []

    def __enter__(self) -> None:
        if state.hooks is not None:
            raise RuntimeError(self.error_message)
        self._previous.append(state.disabled_message)
        state.disabled_message = self.error_message

    def __exit__(self, *exc) -> None:
        state.disabled_message = self._previous.pop()

    def __call__(self, function):
        @functools.wraps(function)
        def disabled(*args, **kwargs):
            with disable_saved_tensors_hooks(self.error_message):
                return function(*args, **kwargs)

        return disabled
