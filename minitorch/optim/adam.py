"""Adam: adaptive moment estimation (Kingma & Ba), with PyTorch's bias correction and AMSGrad option."""

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
    real_view,
    scalar,
    step_counter,
)

__all__ = ["Adam"]

SPARSE_MESSAGE = "Adam does not support sparse gradients, please consider SparseAdam instead"


class Adam(Optimizer):
    """PyTorch's Adam. With ``g`` the gradient (negated if ``maximize``) and ``t`` the step count::

        g = g + weight_decay * p               (L2 penalty; AdamW / decoupled_weight_decay instead
                                                shrinks p = p * (1 - lr * weight_decay) first)
        m = lerp(m, g, 1 - beta1);  v = beta2 * v + (1 - beta2) * g * g
        v_hat = max(v_hat, v) if amsgrad else v
        p = p - lr / (1 - beta1**t) * m / (sqrt(v_hat) / sqrt(1 - beta2**t) + eps)

    ``foreach``, ``capturable`` and ``fused`` are accepted for compatibility and change nothing.
    """

    def __init__(
        self,
        params: Iterable,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        amsgrad: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
        decoupled_weight_decay: bool = False,
    ) -> None:
        check_adam_arguments(lr, eps, betas, weight_decay)
        defaults = dict(
            lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad, maximize=maximize,
            foreach=foreach, capturable=capturable, differentiable=differentiable, fused=fused,
            decoupled_weight_decay=decoupled_weight_decay,
        )
        super().__init__(params, defaults)

    def _init_state(self, p, group: dict[str, Any]) -> dict[str, Any]:
        state = self.state[p]
        if not state:
            state["step"] = new_step()
            state["exp_avg"] = new_buffer(p)
            state["exp_avg_sq"] = new_buffer(p)
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = new_buffer(p)
        return state

    def step(self, closure: Callable[[], Any] | None = None):
        """One Adam step over every parameter that has a gradient; returns the closure's loss, if any."""
        loss = self._evaluate_closure(closure)
        with grad_mode.no_grad():
            for group in self.param_groups:
                lr, (beta1, beta2), eps = scalar(group["lr"]), group["betas"], group["eps"]
                weight_decay, decoupled = group["weight_decay"], group["decoupled_weight_decay"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    grad = dense_grad(self, p, SPARSE_MESSAGE)
                    state = self._init_state(p, group)
                    param, exp_avg, exp_avg_sq = p._array, state["exp_avg"]._array, state["exp_avg_sq"]._array
                    param, exp_avg, exp_avg_sq, grad = map(real_view, (param, exp_avg, exp_avg_sq, grad))
                    xp = p._storage.backend.xp
                    if group["maximize"]:
                        grad = -grad
                    step = step_counter(state)
                    if weight_decay != 0:
                        if decoupled:
                            param *= 1 - lr * weight_decay
                        else:
                            grad = grad + weight_decay * param
                    exp_avg += (1 - beta1) * (grad - exp_avg)
                    exp_avg_sq *= beta2
                    exp_avg_sq += (1 - beta2) * grad * grad
                    bias_correction1 = 1 - beta1**step
                    bias_correction2_sqrt = (1 - beta2**step) ** 0.5
                    if group["amsgrad"]:
                        max_exp_avg_sq = real_view(state["max_exp_avg_sq"]._array)
                        xp.maximum(max_exp_avg_sq, exp_avg_sq, out=max_exp_avg_sq)
                        denom = xp.sqrt(max_exp_avg_sq) / bias_correction2_sqrt
                        mark_written(state["max_exp_avg_sq"])
                    else:
                        denom = xp.sqrt(exp_avg_sq) / bias_correction2_sqrt
                    denom += eps
                    param -= (lr / bias_correction1) * (exp_avg / denom)
                    mark_written(p, state["exp_avg"], state["exp_avg_sq"])
        return loss
