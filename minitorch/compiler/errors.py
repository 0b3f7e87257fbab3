"""The compiler's exception (PyTorch's ``torch._dynamo.exc.Unsupported``, a RuntimeError)."""

from __future__ import annotations


class Unsupported(RuntimeError):
    """``fullgraph=True`` met a graph break (the message gives the reason), or a compiled output was
    differentiated twice (double backward through a compiled function)."""
