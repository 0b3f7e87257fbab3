"""Adamax: Adam with the infinity norm in place of the second moment (Kingma & Ba, section 7)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..autograd import grad_mode
from .optimizer import (
    Optimizer,
    check_adam_arguments,
    dense_grad,
    mark_written,
    new_buffer,
    new_step,
    scalar,
    step_counter,
)

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """PyTorch's Adamax. With ``g`` the gradient (negated if ``maximize``) and ``t`` the step count::

        g = g + weight_decay * p
        m = lerp(m, g, 1 - beta1);  u = max(beta2 * u, |g| + eps)
        p = p - lr / (1 - beta1**t) * m / u
    """

    def __init__(self, params: Iterable, lr: float = 2e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, foreach: bool | None = None, *, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        check_adam_arguments(lr, eps, betas, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _init_state(self, p) -> dict[str, Any]:
        state = self.state[p]
        if not state:
            state["step"] = new_step()
            state["exp_avg"] = new_buffer(p)
            state["exp_inf"] = new_buffer(p)
        return state

    def step(self, closure: Callable[[], Any] | None = None):
        """One Adamax step over every parameter that has a gradient; returns the closure's loss, if any."""
        loss = self._evaluate_closure(closure)
        with grad_mode.no_grad():
            for group in self.param_groups:
                lr, (beta1, beta2), eps = scalar(group["lr"]), group["betas"], group["eps"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    grad = dense_grad(self, p, "Adamax does not support sparse gradients")
                    state = self._init_state(p)
                    step = step_counter(state)
                    xp = p._storage.backend.xp
                    param, exp_avg, exp_inf = p._array, state["exp_avg"]._array, state["exp_inf"]._array
                    if group["maximize"]:
                        grad = -grad
                    if group["weight_decay"] != 0:
                        grad = grad + group["weight_decay"] * param
                    exp_avg += (1 - beta1) * (grad - exp_avg)
                    exp_inf *= beta2
                    xp.maximum(exp_inf, xp.abs(grad) + eps, out=exp_inf)
                    param -= (lr / (1 - beta1**step)) * (exp_avg / exp_inf)
                    mark_written(p, state["exp_avg"], state["exp_inf"])
        return loss
