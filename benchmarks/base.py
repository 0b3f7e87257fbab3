"""The base of every benchmark case (its own module, so the case files can import it from each other)."""

from __future__ import annotations


class Case:
    """A case: ``minitorch()`` and ``numpy()`` each run one forward + backward and return comparable
    results (the loss or output, then gradients; tests/test_benchmarks.py checks they agree at ``small=True``
    sizes). ``peak_memory``: run.py also measures both sides' peak allocation; ``heavy``: only run when
    named or with ``--all``."""

    unit = "ms"
    scale = 1e3  # seconds -> unit
    torch = None
    peak_memory = False
    heavy = False
