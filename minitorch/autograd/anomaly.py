"""detect_anomaly: remember where each op was created, and stop at the first NaN gradient."""

from __future__ import annotations

import sys
import traceback
import warnings

_enabled = False
_check_nan = True


def is_anomaly_enabled() -> bool:
    return _enabled


def is_anomaly_check_nan_enabled() -> bool:
    return _check_nan


class set_detect_anomaly:
    """``set_detect_anomaly(True)`` turns anomaly detection on (also as a context manager)."""

    def __init__(self, mode: bool, check_nan: bool = True):
        global _enabled, _check_nan
        self.prev = (_enabled, _check_nan)
        _enabled, _check_nan = bool(mode), bool(check_nan)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        global _enabled, _check_nan
        _enabled, _check_nan = self.prev


class detect_anomaly(set_detect_anomaly):
    """Context manager: record forward tracebacks; raise when a backward node returns NaN."""

    def __init__(self, check_nan: bool = True):
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime and should "
            "only be enabled for debugging.",
            stacklevel=2,
        )
        super().__init__(True, check_nan)

    def __call__(self, func):
        def wrapper(*args, **kwargs):
            with detect_anomaly(self.prev[1]):
                return func(*args, **kwargs)

        return wrapper


def record_traceback(node) -> None:
    """Called when an op is recorded with anomaly mode on: keep the forward stack."""
    node._traceback = traceback.format_stack(sys._getframe(2))


def report_failure(node) -> None:
    stack = "".join(node._traceback or ["<no forward traceback recorded>\n"])
    warnings.warn(
        f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n{stack}",
        stacklevel=3,
    )


def check_nan(node, grad_inputs) -> None:
    if not _check_nan:
        return
    for i, g in enumerate(grad_inputs):
        if g is not None and not g.is_sparse and bool(g.isnan().any()):
            if node._traceback is not None:
                report_failure(node)
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")
