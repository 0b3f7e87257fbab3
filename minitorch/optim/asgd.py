"""ASGD: averaged stochastic gradient descent (Polyak & Juditsky 1992); ``state['ax']`` holds the running
average of the iterates, which is the estimate to evaluate with."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..autograd import grad_mode
from ..creation import tensor
from .optimizer import Optimizer, dense_grad, mark_written, new_buffer, new_step, scalar, set_scalar, step_counter

__all__ = ["ASGD"]


class ASGD(Optimizer):
    """PyTorch's ASGD. With ``g`` the gradient (negated if ``maximize``) and ``t`` the step count::

        g = g + weight_decay * p
        p = p * (1 - lambd * eta) - eta * g
        ax = ax + mu * (p - ax)                 (ax = p while mu == 1)
        eta = lr / (1 + lambd * lr * t) ** alpha;  mu = 1 / max(1, t - t0)
    """

    def __init__(self, params: Iterable, lr: float = 1e-2, lambd: float = 1e-4, alpha: float = 0.75,
                 t0: float = 1e6, weight_decay: float = 0, foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        if not 0.0 <= scalar(lr):
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _init_state(self, p, group: dict[str, Any]) -> dict[str, Any]:
        state = self.state[p]
        if not state:
            state["step"] = new_step()
            state["eta"] = new_step(scalar(group["lr"]))
            state["mu"] = new_step(1.0)
            state["ax"] = new_buffer(p)
        return state

    def step(self, closure: Callable[[], Any] | None = None):
        """One ASGD step over every parameter that has a gradient; returns the closure's loss, if any."""
        loss = self._evaluate_closure(closure)
        with grad_mode.no_grad():
            for group in self.param_groups:
                lr, lambd, alpha, t0 = scalar(group["lr"]), group["lambd"], group["alpha"], group["t0"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    grad = dense_grad(self, p, "ASGD does not support sparse gradients")
                    state = self._init_state(p, group)
                    step = step_counter(state)
                    param, ax = p._array, state["ax"]._array
                    if group["maximize"]:
                        grad = -grad
                    if group["weight_decay"] != 0:
                        grad = grad + group["weight_decay"] * param
                    eta = float(state["eta"]._array)
                    param *= 1 - lambd * eta
                    param -= eta * grad
                    if float(state["mu"]._array) != 1:
                        ax += (param - ax) * float(state["mu"]._array)
                    else:
                        ax[...] = param
                    # PyTorch builds each new value with ``as_tensor`` (the default dtype) before copying it in
                    set_scalar(state["eta"], float(tensor(lr / ((1 + lambd * lr * step) ** alpha))))
                    set_scalar(state["mu"], float(tensor(1 / max(1, step - t0))))
                    mark_written(p, state["ax"])
        return loss
