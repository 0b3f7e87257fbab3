"""RAdam: Adam whose adaptive step is switched on only once the variance of its estimate is tractable
(Liu et al. 2019); until then it is SGD with momentum."""

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

__all__ = ["RAdam"]


class RAdam(Optimizer):
    """PyTorch's RAdam. With ``g`` the gradient (negated if ``maximize``) and ``t`` the step count::

        m = lerp(m, g, 1 - beta1);  v = beta2 * v + (1 - beta2) * g * g;  m_hat = m / (1 - beta1**t)
        rho_inf = 2 / (1 - beta2) - 1;  rho_t = rho_inf - 2 t beta2**t / (1 - beta2**t)
        if rho_t > 5: p = p - lr * m_hat * r_t * sqrt(1 - beta2**t) / (sqrt(v) + eps)   (r_t: the rectification)
        else:         p = p - lr * m_hat
    """

    def __init__(self, params: Iterable, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, decoupled_weight_decay: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        check_adam_arguments(lr, eps, betas, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def _init_state(self, p) -> dict[str, Any]:
        state = self.state[p]
        if not state:
            state["step"] = new_step()
            state["exp_avg"] = new_buffer(p)
            state["exp_avg_sq"] = new_buffer(p)
        return state

    def step(self, closure: Callable[[], Any] | None = None):
        """One RAdam step over every parameter that has a gradient; returns the closure's loss, if any."""
        loss = self._evaluate_closure(closure)
        with grad_mode.no_grad():
            for group in self.param_groups:
                lr, (beta1, beta2), eps = scalar(group["lr"]), group["betas"], group["eps"]
                weight_decay = group["weight_decay"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    grad = dense_grad(self, p, "RAdam does not support sparse gradients")
                    state = self._init_state(p)
                    step = step_counter(state)
                    xp = p._storage.backend.xp
                    param, exp_avg, exp_avg_sq = p._array, state["exp_avg"]._array, state["exp_avg_sq"]._array
                    if group["maximize"]:
                        grad = -grad
                    if weight_decay != 0:
                        if group["decoupled_weight_decay"]:
                            param *= 1 - lr * weight_decay
                        else:
                            grad = grad + weight_decay * param
                    exp_avg += (1 - beta1) * (grad - exp_avg)
                    exp_avg_sq *= beta2
                    exp_avg_sq += (1 - beta2) * grad * grad
                    bias_correction1 = 1 - beta1**step
                    bias_correction2 = 1 - beta2**step
                    bias_corrected_exp_avg = exp_avg / bias_correction1
                    rho_inf = 2 / (1 - beta2) - 1
                    rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
                    if rho_t > 5.0:
                        rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
                        adaptive_lr = (bias_correction2**0.5) / (xp.sqrt(exp_avg_sq) + eps)
                        param -= bias_corrected_exp_avg * lr * adaptive_lr * rect
                    else:
                        param -= bias_corrected_exp_avg * lr
                    mark_written(p, state["exp_avg"], state["exp_avg_sq"])
        return loss
