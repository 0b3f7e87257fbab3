"""What a tensor asks of the graph: hooks on its gradient and ``retain_grad`` (Tensor methods, installed by
minitorch/_tensor_methods.py). A leaf keeps its hooks in its autograd meta; a non-leaf's live on its grad_fn,
per output, where the engine runs them (``_run_tensor_pre_hooks``).
"""

from __future__ import annotations

import weakref

from ..tensor import Tensor
from .graph import add_hook


def retain_grad(self: Tensor) -> None:
    """Keep ``.grad`` for this non-leaf tensor during backward (a no-op on leaves)."""
    if not self.requires_grad:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    if self.grad_fn is None:
        return
    meta = self._autograd_meta()
    meta.retains_grad = True
    node = self.grad_fn
    if node._retain_grad_tensors is None:
        node._retain_grad_tensors = {}
        node._hooked = True
    node._retain_grad_tensors[self._output_nr] = weakref.ref(self)


def register_hook(self: Tensor, hook):
    """``hook(grad) -> Tensor | None`` runs when this tensor's gradient is computed."""
    if not self._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if self.grad_fn is None:
        meta = self._autograd_meta()
        meta.hooks, handle = add_hook(meta.hooks, hook)
        return handle
    node = self.grad_fn
    if node._tensor_pre_hooks is None:
        node._tensor_pre_hooks = {}
        node._hooked = True
    per_output, handle = add_hook(node._tensor_pre_hooks.get(self._output_nr), hook)
    node._tensor_pre_hooks[self._output_nr] = per_output
    return handle


def register_post_accumulate_grad_hook(self: Tensor, hook):
    """``hook(tensor)`` runs after a leaf's ``.grad`` was updated."""
    if not self._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if self.grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    meta = self._autograd_meta()
    meta.post_accumulate_hooks, handle = add_hook(meta.post_accumulate_hooks, hook)
    return handle
