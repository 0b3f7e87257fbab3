"""Adagrad: per-coordinate learning rates from the running sum of squared gradients (Duchi et al.)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..autograd import grad_mode
from .optimizer import (
    Optimizer,
    dense_grad,
    mark_written,
    new_buffer,
    new_step,
    real_view,
    scalar,
    sparse_grad,
    step_counter,
)

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """PyTorch's Adagrad. With ``g`` the gradient (negated if ``maximize``) and ``t`` the step count::

        g = g + weight_decay * p
        clr = lr / (1 + (t - 1) * lr_decay)
        s = s + g * g                     (s starts at initial_accumulator_value)
        p = p - clr * g / (sqrt(s) + eps)

    A sparse gradient updates ``s`` and ``p`` only at its (coalesced) rows; ``weight_decay`` is then an error.
    """

    def __init__(
        self,
        params: Iterable,
        lr: float = 1e-2,
        lr_decay: float = 0,
        weight_decay: float = 0,
        initial_accumulator_value: float = 0,
        eps: float = 1e-10,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        if not 0.0 <= scalar(lr):
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        defaults = dict(
            lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
            initial_accumulator_value=initial_accumulator_value, foreach=foreach, maximize=maximize,
            differentiable=differentiable, fused=fused,
        )
        super().__init__(params, defaults)
        for group in self.param_groups:  # PyTorch creates Adagrad's state eagerly
            for p in group["params"]:
                self._init_state(p, group)

    def _init_state(self, p, group: dict[str, Any]) -> dict[str, Any]:
        state = self.state[p]
        if not state:
            state["step"] = new_step()
            state["sum"] = new_buffer(p, group["initial_accumulator_value"])
        return state

    def step(self, closure: Callable[[], Any] | None = None):
        """One Adagrad step over every parameter that has a gradient; returns the closure's loss, if any."""
        loss = self._evaluate_closure(closure)
        with grad_mode.no_grad():
            for group in self.param_groups:
                lr, lr_decay, eps = scalar(group["lr"]), group["lr_decay"], group["eps"]
                weight_decay = group["weight_decay"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    state = self._init_state(p, group)
                    if p.grad.is_sparse:
                        self._sparse_step(p, state, group, lr)
                        continue
                    grad = dense_grad(self, p)
                    param, state_sum = p._array, state["sum"]._array
                    param, state_sum, grad = map(real_view, (param, state_sum, grad))
                    step = step_counter(state)
                    if group["maximize"]:
                        grad = -grad
                    if weight_decay != 0:
                        grad = grad + weight_decay * param
                    clr = lr / (1 + (step - 1) * lr_decay)
                    state_sum += grad * grad
                    std = p._storage.backend.xp.sqrt(state_sum)
                    std += eps
                    param -= clr * (grad / std)
                    mark_written(p, state["sum"])
        return loss

    def _sparse_step(self, p, state, group, lr: float) -> None:
        if group["weight_decay"] != 0:
            raise RuntimeError("weight_decay option is not compatible with sparse gradients")
        where, grad = sparse_grad(p)
        if group["maximize"]:
            grad = -grad
        step = step_counter(state)
        clr = lr / (1 + (step - 1) * group["lr_decay"])
        state_sum = state["sum"]._array
        state_sum[where] += grad * grad
        std = p._storage.backend.xp.sqrt(state_sum[where]) + group["eps"]
        p._array[where] -= clr * (grad / std)
        mark_written(p, state["sum"])
