"""Grad modes: whether ops record the graph.

The flag is process-global (PyTorch's is thread-local); minitorch runs its data loading in the
main thread, so one flag is enough and reading it costs one attribute lookup per op.
"""

from __future__ import annotations

import functools


class _GradState:
    __slots__ = ("enabled", "inference")

    def __init__(self):
        self.enabled = True
        self.inference = False


state = _GradState()


def is_grad_enabled() -> bool:
    return state.enabled


def is_inference_mode_enabled() -> bool:
    return state.inference


class _DecoratorContextManager:
    """A context manager that also works as a decorator (``@no_grad()`` and ``@no_grad``)."""

    def __new__(cls, func=None, *args, **kwargs):
        self = super().__new__(cls)
        if callable(func) and not isinstance(func, bool):
            self.__init__()
            return self(func)
        return self

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)

        return wrapper

    def clone(self):
        return type(self)()


class no_grad(_DecoratorContextManager):
    """Disable graph recording: results of ops have ``requires_grad=False``."""

    def __enter__(self):
        self.prev = state.enabled
        state.enabled = False

    def __exit__(self, *exc):
        state.enabled = self.prev


class enable_grad(_DecoratorContextManager):
    """Re-enable graph recording inside ``no_grad``."""

    def __enter__(self):
        self.prev = state.enabled
        state.enabled = True

    def __exit__(self, *exc):
        state.enabled = self.prev


class set_grad_enabled(_DecoratorContextManager):
    """``set_grad_enabled(False)`` works as a function call, a context manager and a decorator."""

    def __new__(cls, mode=True):
        self = object.__new__(cls)
        return self

    def __init__(self, mode: bool = True):
        self.mode = bool(mode)
        self.prev = state.enabled
        state.enabled = self.mode

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        state.enabled = self.prev

    def clone(self):
        return type(self)(self.mode)


class inference_mode(_DecoratorContextManager):
    """Like ``no_grad``, and tensors made inside are inference tensors: they can't be saved
    for backward later, nor written in place outside the mode."""

    def __new__(cls, mode=True):
        if callable(mode) and not isinstance(mode, bool):
            self = object.__new__(cls)
            self.mode = True
            return self(mode)
        return object.__new__(cls)

    def __init__(self, mode: bool = True):
        self.mode = bool(mode) if isinstance(mode, bool) else True

    def __enter__(self):
        self.prev = (state.enabled, state.inference)
        if self.mode:
            state.enabled, state.inference = False, True

    def __exit__(self, *exc):
        state.enabled, state.inference = self.prev

    def clone(self):
        return type(self)(self.mode)
