"""NAdam: Adam with Nesterov momentum and a momentum schedule (Dozat 2016)."""

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

__all__ = ["NAdam"]


class NAdam(Optimizer):
    """PyTorch's NAdam. With ``g`` the gradient (negated if ``maximize``) and ``t`` the step count::

        mu_t = beta1 * (1 - 0.5 * 0.96 ** (t * momentum_decay));  P = P * mu_t  (state 'mu_product')
        m = lerp(m, g, 1 - beta1);  v = beta2 * v + (1 - beta2) * g * g
        d = sqrt(v / (1 - beta2**t)) + eps
        p = p - lr * (1 - mu_t) / (1 - P) * g / d - lr * mu_{t+1} / (1 - P * mu_{t+1}) * m / d

    ``weight_decay`` is an L2 term on ``g``, or with ``decoupled_weight_decay`` (NAdamW) ``p *= 1 - lr * wd``.
    """

    def __init__(self, params: Iterable, lr: float = 2e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False) -> None:
        check_adam_arguments(lr, eps, betas, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    def _init_state(self, p) -> dict[str, Any]:
        state = self.state[p]
        if not state:
            state["step"] = new_step()
            state["mu_product"] = new_step(1.0)
            state["exp_avg"] = new_buffer(p)
            state["exp_avg_sq"] = new_buffer(p)
        return state

    def step(self, closure: Callable[[], Any] | None = None):
        """One NAdam step over every parameter that has a gradient; returns the closure's loss, if any."""
        loss = self._evaluate_closure(closure)
        with grad_mode.no_grad():
            for group in self.param_groups:
                lr, (beta1, beta2), eps = scalar(group["lr"]), group["betas"], group["eps"]
                weight_decay, momentum_decay = group["weight_decay"], group["momentum_decay"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    grad = dense_grad(self, p, "NAdam does not support sparse gradients")
                    state = self._init_state(p)
                    step = step_counter(state)
                    xp = p._storage.backend.xp
                    param, exp_avg, exp_avg_sq = p._array, state["exp_avg"]._array, state["exp_avg_sq"]._array
                    if group["maximize"]:
                        grad = -grad
                    bias_correction2 = 1 - beta2**step
                    if weight_decay != 0:
                        if group["decoupled_weight_decay"]:
                            param *= 1 - lr * weight_decay
                        else:
                            grad = grad + weight_decay * param
                    mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
                    mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
                    product = state["mu_product"]
                    product._array *= mu  # in the state's dtype (float32 by default), as PyTorch's ``*=``
                    mark_written(product)
                    mu_product = float(product._array)
                    exp_avg += (1 - beta1) * (grad - exp_avg)
                    exp_avg_sq *= beta2
                    exp_avg_sq += (1 - beta2) * grad * grad
                    denom = xp.sqrt(exp_avg_sq / bias_correction2)
                    denom += eps
                    param += (-lr * (1.0 - mu) / (1.0 - mu_product)) * (grad / denom)
                    param += (-lr * mu_next / (1.0 - mu_product * mu_next)) * (exp_avg / denom)
                    mark_written(p, state["exp_avg"], state["exp_avg_sq"])
        return loss
