"""Adadelta: a per-coordinate step from the ratio of running RMS of updates and of gradients (Zeiler 2012)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..autograd import grad_mode
from .optimizer import Optimizer, dense_grad, mark_written, new_buffer, new_step, scalar, step_counter

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """PyTorch's Adadelta. With ``g`` the gradient (negated if ``maximize``)::

        g = g + weight_decay * p
        v = rho * v + (1 - rho) * g * g
        delta = sqrt(u + eps) / sqrt(v + eps) * g
        u = rho * u + (1 - rho) * delta * delta
        p = p - lr * delta

    ``foreach`` and ``capturable`` are accepted for compatibility and change nothing.
    """

    def __init__(self, params: Iterable, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0, foreach: bool | None = None, *, capturable: bool = False,
                 maximize: bool = False, differentiable: bool = False) -> None:
        if not 0.0 <= scalar(lr):
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize, capturable=capturable,
                        foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def _init_state(self, p) -> dict[str, Any]:
        state = self.state[p]
        if not state:
            state["step"] = new_step()
            state["square_avg"] = new_buffer(p)
            state["acc_delta"] = new_buffer(p)
        return state

    def step(self, closure: Callable[[], Any] | None = None):
        """One Adadelta step over every parameter that has a gradient; returns the closure's loss, if any."""
        loss = self._evaluate_closure(closure)
        with grad_mode.no_grad():
            for group in self.param_groups:
                lr, rho, eps, weight_decay = scalar(group["lr"]), group["rho"], group["eps"], group["weight_decay"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    grad = dense_grad(self, p, "Adadelta does not support sparse gradients")
                    state = self._init_state(p)
                    step_counter(state)
                    xp = p._storage.backend.xp
                    param, square_avg, acc_delta = p._array, state["square_avg"]._array, state["acc_delta"]._array
                    if group["maximize"]:
                        grad = -grad
                    if weight_decay != 0:
                        grad = grad + weight_decay * param
                    square_avg *= rho
                    square_avg += (1 - rho) * grad * grad
                    delta = xp.sqrt(acc_delta + eps) / xp.sqrt(square_avg + eps) * grad
                    acc_delta *= rho
                    acc_delta += (1 - rho) * delta * delta
                    param -= lr * delta
                    mark_written(p, state["square_avg"], state["acc_delta"])
        return loss
