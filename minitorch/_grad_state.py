"""The grad-mode flags, below Tensor: whether ops record the graph, and whether inference mode is on.

The modes that set them (``no_grad``, ``inference_mode``, ...) are autograd's (autograd/grad_mode.py);
the flags live here because a tensor is born knowing whether inference mode made it (PyTorch keeps the
same thread-local state in c10, below everything).
"""

from __future__ import annotations

import threading


class _GradState(threading.local):
    """Per-thread flags; the class attributes are what a thread sees until it sets its own, so a new
    thread needs no initialisation and reading ``state.enabled`` stays one attribute lookup."""

    enabled = True
    inference = False


state = _GradState()
