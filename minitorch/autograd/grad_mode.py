"""Grad modes: whether ops record the graph.

The flags are thread-local, as PyTorch's: ``no_grad`` in one thread leaves every other thread
recording, and each new thread starts with grad mode on and inference mode off, whatever the thread
that started it was doing. (Anomaly mode, like PyTorch's, stays process-global.)

Every mode works as a context manager and as a decorator (``@no_grad()``, and for the modes whose
argument is optional, ``@no_grad``); decorating a generator function applies the mode each time
the generator resumes, not while the caller runs between ``next()`` calls.
"""

from __future__ import annotations

import functools
import inspect
import sys

from .._grad_state import state


def is_grad_enabled() -> bool:
    """True when ops record the graph (the default)."""
    return state.enabled


def is_inference_mode_enabled() -> bool:
    """True inside ``inference_mode()``."""
    return state.inference


class _DecoratorContextManager:
    """A context manager that also decorates functions; each call enters a fresh ``clone()``.

    The previous state is kept on a stack, so one instance may be entered again while active.
    """

    def __call__(self, func):
        if inspect.isclass(func):
            raise RuntimeError("Please decorate the class's methods, not the class itself.")
        if inspect.isgeneratorfunction(func):
            return _wrap_generator(self.clone, func)

        @functools.wraps(func)
        def decorated(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)

        return decorated

    def clone(self):
        return type(self)()

    def _push(self, enabled: bool, inference: bool | None = None) -> None:
        stack = self.__dict__.setdefault("_previous", [])
        stack.append((state.enabled, state.inference))
        state.enabled = enabled
        if inference is not None:
            state.inference = inference

    def __exit__(self, *exc) -> None:
        state.enabled, state.inference = self._previous.pop()


def _wrap_generator(make_context, func):
    """Run each step of the generator ``func(...)`` inside a fresh context from ``make_context``."""

    @functools.wraps(func)
    def generator_context(*args, **kwargs):
        generator = func(*args, **kwargs)
        try:
            with make_context():
                response = generator.send(None)
            while True:
                try:
                    request = yield response
                except GeneratorExit:
                    with make_context():
                        generator.close()
                    raise
                except BaseException:
                    with make_context():
                        response = generator.throw(*sys.exc_info())
                else:
                    with make_context():
                        response = generator.send(request)
        except StopIteration as stop:
            return stop.value

    return generator_context


class _NoParamDecoratorContextManager(_DecoratorContextManager):
    """Also usable bare: ``@no_grad`` is ``@no_grad()``."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_NoParamDecoratorContextManager):
    """Disable graph recording: results of ops have ``requires_grad=False`` and no ``grad_fn``.

    Unlike ``inference_mode``, tensors made here may be used in recorded computations later.
    """

    def __enter__(self) -> None:
        self._push(False)


class enable_grad(_NoParamDecoratorContextManager):
    """Re-enable graph recording, e.g. inside ``no_grad``."""

    def __enter__(self) -> None:
        self._push(True)


class set_grad_enabled(_DecoratorContextManager):
    """``set_grad_enabled(mode)``: as a plain call it switches the mode at once; as a context manager
    or decorator it switches for the block and restores the previous mode after."""

    def __init__(self, mode: bool) -> None:
        self.prev = state.enabled
        self.mode = bool(mode)
        state.enabled = self.mode

    def __call__(self, func):
        state.enabled = self.prev  # used as a decorator: the call above must not leak
        return super().__call__(func)

    def __enter__(self) -> None:
        state.enabled = self.mode

    def __exit__(self, *exc) -> None:
        state.enabled = self.prev

    def clone(self):
        return type(self)(self.mode)


class inference_mode(_DecoratorContextManager):
    """Like ``no_grad``, and tensors made inside are inference tensors: they can't be saved for
    backward later, nor written in place outside the mode. ``inference_mode(False)`` turns both
    inference mode off and grad mode on for the block (as PyTorch's ``InferenceMode(false)``)."""

    def __new__(cls, mode=True):
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)

    def __init__(self, mode: bool = True) -> None:
        self.mode = mode

    def __enter__(self) -> None:
        self._push(not self.mode, self.mode)

    def clone(self):
        return type(self)(self.mode)


__all__ = [
    "enable_grad", "inference_mode", "is_grad_enabled", "is_inference_mode_enabled", "no_grad", "set_grad_enabled",
]
