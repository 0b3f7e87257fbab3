"""``minitorch.futures``: PyTorch's ``Future``, a value that is set once and can be waited on and chained.

minitorch runs everything eagerly in the calling thread (``jit.fork`` runs its function at once), so a Future
here is usually complete when you get it; it is still thread-safe, and ``wait`` blocks until ``set_result`` or
``set_exception`` is called.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

__all__ = ["Future", "collect_all", "wait_all"]


class Future:
    """``fut.set_result(v)`` once; ``fut.wait()`` returns ``v`` (or raises what ``set_exception`` stored)."""

    def __init__(self, *, devices=None) -> None:
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._value: Any = None
        self._error: BaseException | None = None
        self._callbacks: list = []

    def done(self) -> bool:
        return self._done.is_set()

    def _complete(self, value, error) -> None:
        with self._lock:
            if self._done.is_set():
                raise RuntimeError("Future can only be marked completed once.")
            self._value, self._error = value, error
            self._done.set()
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback(self)

    def set_result(self, result) -> None:
        self._complete(result, None)

    def set_exception(self, result: BaseException) -> None:
        if not isinstance(result, BaseException):
            raise TypeError(f"set_exception expects an exception, got {type(result).__name__}")
        self._complete(None, result)

    def wait(self):
        """Block until complete; the value, or the stored exception raised."""
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._value

    def value(self):
        """The value of a completed Future (raises its exception if it failed)."""
        if not self.done():
            raise RuntimeError("Future.value() called before the Future completed")
        return self.wait()

    def add_done_callback(self, callback: Callable[[Future], None]) -> None:
        with self._lock:
            if not self._done.is_set():
                self._callbacks.append(callback)
                return
        callback(self)

    def then(self, callback: Callable[[Future], Any]) -> Future:
        """A new Future completed with ``callback(self)`` once this one completes."""
        chained = Future()

        def run(fut: Future) -> None:
            try:
                chained.set_result(callback(fut))
            except BaseException as error:  # the chained future carries the callback's failure
                chained.set_exception(error)

        self.add_done_callback(run)
        return chained


def collect_all(futures: list[Future]) -> Future:
    """A Future completed with the list of ``futures`` once all of them are."""
    combined = Future()
    remaining = [len(futures)]
    lock = threading.Lock()
    if not futures:
        combined.set_result([])

    def one_done(_: Future) -> None:
        with lock:
            remaining[0] -= 1
            last = remaining[0] == 0
        if last:
            combined.set_result(list(futures))

    for fut in futures:
        fut.add_done_callback(one_done)
    return combined


def wait_all(futures: list[Future]) -> list:
    """Wait for every Future; their values (the first failure raises)."""
    return [fut.wait() for fut in futures]
