"""Anomaly detection: remember where each op was created, and stop at the first NaN gradient.

With the mode on, every recorded node keeps the stack of the forward call that created it. When a
node's backward fails (or, with ``check_nan``, returns NaN), that stack is shown as a warning
("Error detected in DivBackward0. Traceback of forward call that caused the error: ...") and the
error is raised, so the failing forward line is found without a debugger.
"""

from __future__ import annotations

import functools
import sys
import traceback
import warnings

from .. import _dispatch_modes

_enabled = False
_check_nan = True


def is_anomaly_enabled() -> bool:
    return _enabled


def is_anomaly_check_nan_enabled() -> bool:
    return _check_nan


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Turn anomaly mode on or off (``torch.set_anomaly_enabled``)."""
    global _enabled, _check_nan
    if bool(enabled) != _enabled:
        _dispatch_modes.hold(bool(enabled))
    _enabled, _check_nan = bool(enabled), bool(check_nan)


class detect_anomaly:
    """Context manager (and decorator) that turns anomaly detection on for a block."""

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan
        self._previous = []
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime and should "
            "only be enabled for debugging.",
            stacklevel=2,
        )

    def __enter__(self) -> None:
        self._previous.append((_enabled, _check_nan))
        set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *exc) -> None:
        set_anomaly_enabled(*self._previous.pop())

    def __call__(self, func):
        @functools.wraps(func)
        def decorated(*args, **kwargs):
            with self:
                return func(*args, **kwargs)

        return decorated


class set_detect_anomaly:
    """``set_detect_anomaly(mode, check_nan=True)``: switches at once when called, and restores the
    previous setting when used as a context manager (or decorator) and the block ends."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = (_enabled, _check_nan)
        self.mode, self.check_nan = mode, check_nan
        set_anomaly_enabled(mode, check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        set_anomaly_enabled(*self.prev)

    def __call__(self, func):
        set_anomaly_enabled(*self.prev)  # used as a decorator: the call above must not leak

        @functools.wraps(func)
        def decorated(*args, **kwargs):
            with set_detect_anomaly(self.mode, self.check_nan):
                return func(*args, **kwargs)

        return decorated


def record_traceback(node) -> None:
    """Called when an op is recorded with anomaly mode on: keep the forward stack (from the caller
    of ``apply``, i.e. the user's line, upwards)."""
    node._traceback = traceback.format_stack(sys._getframe(2))


def report_failure(node) -> None:
    """Show the forward stack of ``node`` (the op whose backward failed) as a warning."""
    stack = "".join(node._traceback or ["<no forward traceback recorded>\n"])
    warnings.warn(
        f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n{stack}",
        stacklevel=3,
    )


def check_nan(node, grad_inputs) -> None:
    """Raise (after showing the forward stack) if ``node`` returned a gradient containing NaN."""
    if not _check_nan:
        return
    for i, g in enumerate(grad_inputs):
        if g is None:
            continue
        values = g._values() if g.is_sparse else g
        if values.dtype.is_floating_point and bool(values.isnan().any()):
            if node._traceback is not None:
                report_failure(node)
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")


__all__ = [
    "detect_anomaly", "is_anomaly_check_nan_enabled", "is_anomaly_enabled", "set_anomaly_enabled",
    "set_detect_anomaly",
]
