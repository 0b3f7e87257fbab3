"""SparseAdam: Adam for sparse gradients (``nn.Embedding(sparse=True)``): only the rows present in the
gradient have their moments and values updated ("lazy Adam")."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

from ..autograd import grad_mode
from .optimizer import Optimizer, mark_written, new_buffer, scalar, sparse_grad

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """PyTorch's SparseAdam. For the rows ``r`` of the (coalesced) gradient ``g`` at step ``t``::

        m[r] = beta1 * m[r] + (1 - beta1) * g
        v[r] = beta2 * v[r] + (1 - beta2) * g * g
        p[r] = p[r] - lr * sqrt(1 - beta2^t) / (1 - beta1^t) * m[r] / (sqrt(v[r]) + eps)

    Other rows, and their moments, are untouched. Parameters must be dense and gradients sparse.
    """

    def __init__(self, params: Iterable, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, maximize: bool = False) -> None:
        if not 0.0 < scalar(lr):
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        defaults = dict(lr=lr, betas=betas, eps=eps, maximize=maximize)
        super().__init__(params, defaults)
        sparse_params = [
            [group_index, param_index]
            for group_index, group in enumerate(self.param_groups)
            for param_index, p in enumerate(group["params"])
            if p.is_sparse
        ]
        if sparse_params:
            raise ValueError(f"Sparse params at indices {sparse_params}: SparseAdam requires dense parameter tensors")

    def step(self, closure: Callable[[], Any] | None = None):
        """One SparseAdam step over every parameter that has a gradient; returns the closure's loss, if any."""
        loss = self._evaluate_closure(closure)
        with grad_mode.no_grad():
            for group in self.param_groups:
                lr, (beta1, beta2), eps = scalar(group["lr"]), group["betas"], group["eps"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    if not p.grad.is_sparse:
                        raise RuntimeError(
                            "SparseAdam does not support dense gradients, please consider Adam instead"
                        )
                    state = self.state[p]
                    if not state:
                        state["step"] = 0
                        state["exp_avg"] = new_buffer(p)
                        state["exp_avg_sq"] = new_buffer(p)
                    where, grad = sparse_grad(p)
                    state["step"] += 1
                    if grad.shape[0] == 0:
                        continue
                    if group["maximize"]:
                        grad = -grad
                    exp_avg, exp_avg_sq = state["exp_avg"]._array, state["exp_avg_sq"]._array
                    m = exp_avg[where] * beta1 + (1 - beta1) * grad
                    v = exp_avg_sq[where] * beta2 + (1 - beta2) * (grad * grad)
                    exp_avg[where], exp_avg_sq[where] = m, v
                    step = state["step"]
                    step_size = lr * math.sqrt(1 - beta2**step) / (1 - beta1**step)
                    p._array[where] -= step_size * m / (p._storage.backend.xp.sqrt(v) + eps)
                    mark_written(p, state["exp_avg"], state["exp_avg_sq"])
        return loss
