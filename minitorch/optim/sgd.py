"""SGD: stochastic gradient descent with optional momentum, dampening, Nesterov and weight decay."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..autograd import grad_mode
from .optimizer import Optimizer, dense_grad, mark_written, new_buffer, scalar, sparse_grad

__all__ = ["SGD"]


class SGD(Optimizer):
    """PyTorch's SGD. With ``g`` the gradient (negated if ``maximize``), per step::

        g = g + weight_decay * p
        b = g                                          (first step)
        b = momentum * b + (1 - dampening) * g         (later steps)
        g = g + momentum * b if nesterov else b        (when momentum != 0)
        p = p - lr * g

    A sparse gradient (``nn.Embedding(sparse=True)``) updates only the rows it holds; with momentum the
    buffer is dense (the same numbers PyTorch's sparse buffer represents); ``weight_decay`` raises, as in
    PyTorch. ``foreach`` and ``fused`` are accepted for compatibility; minitorch always runs one array-level loop.
    """

    def __init__(
        self,
        params: Iterable,
        lr: float = 1e-3,
        momentum: float = 0,
        dampening: float = 0,
        weight_decay: float = 0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        if scalar(lr) < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        defaults = dict(
            lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay, nesterov=nesterov,
            maximize=maximize, foreach=foreach, differentiable=differentiable, fused=fused,
        )
        super().__init__(params, defaults)

    def step(self, closure: Callable[[], Any] | None = None):
        """One SGD step over every parameter that has a gradient; returns the closure's loss, if any."""
        loss = self._evaluate_closure(closure)
        with grad_mode.no_grad():
            for group in self.param_groups:
                lr, weight_decay = scalar(group["lr"]), group["weight_decay"]
                momentum, dampening, nesterov = group["momentum"], group["dampening"], group["nesterov"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    if p.grad.is_sparse:
                        self._sparse_step(p, group, lr)
                        continue
                    grad = dense_grad(self, p)
                    param = p._array
                    if group["maximize"]:
                        grad = -grad
                    if weight_decay != 0:
                        grad = grad + weight_decay * param
                    if momentum != 0:
                        state = self.state[p]
                        buf = state.get("momentum_buffer")
                        if buf is None:
                            buf = state["momentum_buffer"] = new_buffer(p, grad)
                        else:
                            b = buf._array
                            b *= momentum
                            b += (1 - dampening) * grad
                            mark_written(buf)
                        grad = grad + momentum * buf._array if nesterov else buf._array
                    param -= lr * grad
                    mark_written(p)
        return loss

    def _sparse_step(self, p, group, lr: float) -> None:
        """The update for a sparse gradient: a scatter-add of its rows (plus a dense momentum buffer)."""
        if group["weight_decay"] != 0:
            raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
        backend = p._storage.backend
        where, values = sparse_grad(p, coalesce=False)
        if group["maximize"]:
            values = -values
        momentum, dampening = group["momentum"], group["dampening"]
        param = p._array
        if momentum == 0:
            backend.index_add(param, where, -lr * values)
            mark_written(p)
            return
        state = self.state[p]
        buf = state.get("momentum_buffer")
        if buf is None:
            buf = state["momentum_buffer"] = new_buffer(p)
            backend.index_add(buf._array, where, values)
        else:
            b = buf._array
            b *= momentum
            backend.index_add(b, where, (1 - dampening) * values)
            mark_written(buf)
        if group["nesterov"]:
            step = momentum * buf._array
            backend.index_add(step, where, values)
        else:
            step = buf._array
        param -= lr * step
        mark_written(p)
