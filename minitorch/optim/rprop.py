"""Rprop: resilient backpropagation, a per-coordinate step size that grows while the gradient keeps its sign
and shrinks when it flips; only the gradient's sign is used (Riedmiller & Braun 1993)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..autograd import grad_mode
from .optimizer import Optimizer, dense_grad, mark_written, new_buffer, new_step, scalar, step_counter

__all__ = ["Rprop"]


class Rprop(Optimizer):
    """PyTorch's Rprop. With ``g`` the gradient (negated if ``maximize``) and ``g_prev`` the last one used::

        f = eta_plus where g * g_prev > 0, eta_minus where < 0, 1 where 0
        step_size = clamp(step_size * f, *step_sizes)        (step_size starts at lr)
        g = 0 where f == eta_minus;  p = p - sign(g) * step_size;  g_prev = g
    """

    def __init__(self, params: Iterable, lr: float = 1e-2, etas: tuple[float, float] = (0.5, 1.2),
                 step_sizes: tuple[float, float] = (1e-6, 50), *, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False, differentiable: bool = False) -> None:
        if not 0.0 <= scalar(lr):
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _init_state(self, p, group: dict[str, Any]) -> dict[str, Any]:
        state = self.state[p]
        if not state:
            state["step"] = new_step()
            state["prev"] = new_buffer(p)
            state["step_size"] = new_buffer(p, scalar(group["lr"]))
        return state

    def step(self, closure: Callable[[], Any] | None = None):
        """One Rprop step over every parameter that has a gradient; returns the closure's loss, if any."""
        loss = self._evaluate_closure(closure)
        with grad_mode.no_grad():
            for group in self.param_groups:
                eta_minus, eta_plus = group["etas"]
                step_size_min, step_size_max = group["step_sizes"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    grad = dense_grad(self, p, "Rprop does not support sparse gradients")
                    state = self._init_state(p, group)
                    step_counter(state)
                    xp = p._storage.backend.xp
                    prev, step_size = state["prev"]._array, state["step_size"]._array
                    if group["maximize"]:
                        grad = -grad
                    sign = xp.sign(grad * prev)
                    factor = xp.where(sign > 0, eta_plus, xp.where(sign < 0, eta_minus, 1)).astype(grad.dtype)
                    step_size *= factor
                    xp.clip(step_size, step_size_min, step_size_max, out=step_size)
                    grad = xp.where(factor == grad.dtype.type(eta_minus), 0, grad).astype(grad.dtype)
                    p._array -= xp.sign(grad) * step_size
                    prev[...] = grad
                    mark_written(p, state["prev"], state["step_size"])
        return loss
