"""RMSprop: divide the gradient by a running root-mean-square of recent gradients (Hinton's lecture 6e)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..autograd import grad_mode
from .optimizer import Optimizer, dense_grad, mark_written, new_buffer, new_step, real_view, scalar, step_counter

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """PyTorch's RMSprop. With ``g`` the gradient (negated if ``maximize``)::

        g = g + weight_decay * p
        v = alpha * v + (1 - alpha) * g * g
        avg = sqrt(v - g_avg**2) + eps  with g_avg = lerp(g_avg, g, 1 - alpha)  (centered)
        avg = sqrt(v) + eps                                                  (otherwise)
        b = momentum * b + g / avg;  p = p - lr * b       (momentum > 0)
        p = p - lr * g / avg                              (otherwise)
    """

    def __init__(
        self,
        params: Iterable,
        lr: float = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum: float = 0,
        centered: bool = False,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        if not 0.0 <= scalar(lr):
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = dict(
            lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered, weight_decay=weight_decay,
            capturable=capturable, foreach=foreach, maximize=maximize, differentiable=differentiable,
        )
        super().__init__(params, defaults)

    def _init_state(self, p, group: dict[str, Any]) -> dict[str, Any]:
        state = self.state[p]
        if not state:
            state["step"] = new_step()
            state["square_avg"] = new_buffer(p)
            if group["momentum"] > 0:
                state["momentum_buffer"] = new_buffer(p)
            if group["centered"]:
                state["grad_avg"] = new_buffer(p)
        return state

    def step(self, closure: Callable[[], Any] | None = None):
        """One RMSprop step over every parameter that has a gradient; returns the closure's loss, if any."""
        loss = self._evaluate_closure(closure)
        with grad_mode.no_grad():
            for group in self.param_groups:
                lr, alpha, eps = scalar(group["lr"]), group["alpha"], group["eps"]
                weight_decay, momentum = group["weight_decay"], group["momentum"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    grad = dense_grad(self, p, "RMSprop does not support sparse gradients")
                    state = self._init_state(p, group)
                    param, square_avg = p._array, state["square_avg"]._array
                    param, square_avg, grad = map(real_view, (param, square_avg, grad))
                    xp = p._storage.backend.xp
                    if group["maximize"]:
                        grad = -grad
                    step_counter(state)
                    if weight_decay != 0:
                        grad = grad + weight_decay * param
                    square_avg *= alpha
                    square_avg += (1 - alpha) * grad * grad
                    written = [p, state["square_avg"]]
                    if group["centered"]:
                        grad_avg = real_view(state["grad_avg"]._array)
                        grad_avg += (1 - alpha) * (grad - grad_avg)
                        avg = xp.sqrt(square_avg - grad_avg * grad_avg)
                        written.append(state["grad_avg"])
                    else:
                        avg = xp.sqrt(square_avg)
                    avg += eps
                    if momentum > 0:
                        buf = real_view(state["momentum_buffer"]._array)
                        buf *= momentum
                        buf += grad / avg
                        param -= lr * buf
                        written.append(state["momentum_buffer"])
                    else:
                        param -= lr * (grad / avg)
                    mark_written(*written)
        return loss
