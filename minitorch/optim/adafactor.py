"""Adafactor (Shazeer & Stern 2018): Adam-like steps whose second moment of a matrix is kept factored as
row and column means (memory O(rows + cols)), with a relative step size and update clipping; PyTorch's
variant (no first moment, ``beta2_t = 1 - t ** beta2_decay``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..autograd import grad_mode
from ..creation import zeros
from .optimizer import Optimizer, mark_written, new_buffer, new_step, scalar, step_counter

__all__ = ["Adafactor"]


class Adafactor(Optimizer):
    """PyTorch's Adafactor. With ``g`` the gradient (negated if ``maximize``) and ``t`` the step count::

        b = t ** beta2_decay;  rho = min(lr, 1 / sqrt(t));  alpha = max(eps2, RMS(p)) * rho
        p = p * (1 - lr * weight_decay)
        matrices: R = lerp(R, mean_cols(g^2), b);  C = lerp(C, mean_rows(g^2), b);  V = R C / mean(R)
        vectors:  V = lerp(V, g^2, b)
        u = g / sqrt(max(V, eps1^2));  p = p - alpha / max(1, RMS(u) / d) * u
    """

    def __init__(self, params: Iterable, lr: float = 1e-2, beta2_decay: float = -0.8,
                 eps: tuple[float | None, float] = (None, 1e-3), d: float = 1.0, weight_decay: float = 0.0, *,
                 foreach: bool | None = None, maximize: bool = False) -> None:
        if not 0.0 <= scalar(lr):
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize)
        super().__init__(params, defaults)

    def _init_state(self, p) -> dict[str, Any]:
        state = self.state[p]
        if not state:
            state["step"] = new_step()
            if p.grad.dim() > 1:
                shape = list(p.grad.shape)
                state["row_var"] = zeros(shape[:-1] + [1], dtype=p.grad.dtype, device=p.grad.device)
                state["col_var"] = zeros(shape[:-2] + [1, shape[-1]], dtype=p.grad.dtype, device=p.grad.device)
            else:
                state["variance"] = new_buffer(p.grad)
        return state

    def step(self, closure: Callable[[], Any] | None = None):
        """One Adafactor step over every parameter that has a gradient; returns the closure's loss, if any."""
        loss = self._evaluate_closure(closure)
        with grad_mode.no_grad():
            for group in self.param_groups:
                lr, beta2_decay, (eps1, eps2) = scalar(group["lr"]), group["beta2_decay"], group["eps"]
                d, weight_decay = group["d"], group["weight_decay"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    if p.is_complex():
                        raise RuntimeError("Adafactor does not support complex parameters")
                    if p.grad.is_sparse:
                        raise RuntimeError("Adafactor does not support sparse gradients")
                    state = self._init_state(p)
                    xp = p._storage.backend.xp
                    param, grad = p._array, p.grad._array
                    if group["maximize"]:
                        grad = -grad
                    tiny = float(xp.finfo(param.dtype).eps) if eps1 is None else eps1
                    step = step_counter(state)
                    one_minus_beta2 = step**beta2_decay
                    rho = min(lr, 1 / (step**0.5))
                    rms = float(xp.sqrt(xp.sum(param * param))) / (param.size**0.5) if param.size else 0.0
                    alpha = max(eps2, rms) * rho
                    if weight_decay != 0:
                        param *= 1 - lr * weight_decay
                    if grad.ndim > 1:
                        row_var, col_var = state["row_var"]._array, state["col_var"]._array
                        row_var += one_minus_beta2 * ((grad * grad).sum(axis=-1, keepdims=True) / grad.shape[-1]
                                                      - row_var)
                        col_var += one_minus_beta2 * ((grad * grad).sum(axis=-2, keepdims=True) / grad.shape[-2]
                                                      - col_var)
                        estimate = xp.matmul(row_var, col_var)
                        estimate = estimate / xp.maximum(row_var.mean(axis=-2, keepdims=True), tiny)
                        mark_written(state["row_var"], state["col_var"])
                    else:
                        variance = state["variance"]._array
                        variance += one_minus_beta2 * (grad * grad - variance)
                        estimate = variance.copy()
                        mark_written(state["variance"])
                    update = grad / xp.sqrt(xp.maximum(estimate, tiny * tiny))
                    denom = max(1.0, float(xp.sqrt(xp.sum(update * update))) / ((update.size**0.5) * d))
                    param -= (alpha / denom) * update.astype(param.dtype, copy=False)
                    mark_written(p)
        return loss
