"""minitorch.func: composable function transforms (torch.func) on the reverse-mode engine.

``grad``, ``grad_and_value``, ``vjp``, ``jacrev`` and ``hessian`` are reverse mode; ``jvp``, ``jacfwd``
and ``linearize`` use the double-vjp trick until forward-mode AD exists (issue 17), and ``hessian`` is
``jacrev(jacrev(f))`` where PyTorch composes ``jacfwd(jacrev(f))``. ``vmap`` runs the function once on
BatchedTensors, each op through a batching rule (a loop over the samples for ops without one, docs/func.md).
"""

from __future__ import annotations

from . import batched_autograd  # noqa: F401 - hooks vmap's BatchedTensors into autograd
from .batching_rules import vmap_fallback_ops
from .functional_call import functional_call
from .transforms import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, linearize, vjp
from .vmap import vmap

__all__ = ["functional_call", "grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "jvp", "linearize", "vjp",
           "vmap", "vmap_fallback_ops"]
