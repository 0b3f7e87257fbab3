"""The base of every benchmark case (its own module, so the case files can import it from each other)."""

from __future__ import annotations


class Case:
    """A case: ``minitorch()`` and ``numpy()`` each run one forward + backward and return comparable
    results (the loss or output, then gradients; tests/test_benchmarks.py checks they agree at ``small=True``
    sizes). ``compiled()``, where a case has it, runs the same step with ``minitorch.compile`` (its compiled
    functions in ``compiled_functions``, for the compile time); ``torch()`` the same step in PyTorch eager mode,
    where PyTorch is installed. ``peak_memory``: run.py also measures the peak allocation; ``heavy``: only run
    when named or with ``--all``."""

    unit = "ms"
    scale = 1e3  # seconds -> unit
    compiled = None
    torch = None
    peak_memory = False
    heavy = False

    def resident_mib(self) -> float:
        """MiB the compiled side's plans keep between calls (scratch and pooled buffers), which a peak traced during
        one call does not see: run.py adds it to the compiled side's peak."""
        return sum(entry.plan.resident_bytes() for fn in getattr(self, "compiled_functions", ())
                   for _, entry in fn.history if entry.plan is not None) / 2**20

    def compile_seconds(self) -> float:
        """Seconds spent tracing and planning the compiled side so far (every plan of every compiled function)."""
        return sum(entry.plan.compile_seconds for fn in getattr(self, "compiled_functions", ())
                   for _, entry in fn.history if entry.plan is not None)


def torch_module(device):
    """PyTorch, for the torch column (CPU cases only), or None when it is not installed."""
    if device != "cpu":
        return None
    try:
        import torch
    except ImportError:
        return None
    return torch
