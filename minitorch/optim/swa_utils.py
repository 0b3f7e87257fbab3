"""Stochastic weight averaging (Izmailov et al. 2018) and exponential moving averages of a model's weights:
``AveragedModel`` keeps a copy of a model whose parameters are the running (or EMA) average of the
model's, ``SWALR`` anneals each group's rate to a constant SWA rate, and ``update_bn`` recomputes batch-norm
statistics for the averaged weights with one pass over the data."""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Callable, Iterable
from copy import deepcopy
from typing import Any

from .._dtype import int64
from ..autograd import grad_mode
from ..creation import tensor
from ..nn.modules.module import Module
from ..nn.modules.normalization import _BatchNorm
from ..tensor import Tensor
from .lr_scheduler import LRScheduler, _format_param
from .optimizer import Optimizer

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn", "get_ema_avg_fn",
           "get_swa_avg_fn"]


def _check_decay(decay: float) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")


def _lerp_all(averaged: list, current: list, weight: float) -> None:
    """``a += weight * (c - a)`` for each pair: floating tensors by ``lerp_``, others rounded by ``copy_``."""
    for a, c in zip(averaged, current):
        if a.is_floating_point():
            a.lerp_(c, weight)
        else:
            a.copy_(a + (c - a) * weight)


def get_ema_multi_avg_fn(decay: float = 0.999) -> Callable:
    """The in-place exponential moving average ``ema = decay * ema + (1 - decay) * param`` of lists."""
    _check_decay(decay)

    def ema_update(ema_param_list, current_param_list, _) -> None:
        with grad_mode.no_grad():
            _lerp_all(list(ema_param_list), list(current_param_list), 1 - decay)

    return ema_update


def get_swa_multi_avg_fn() -> Callable:
    """The in-place running mean ``avg += (param - avg) / (n + 1)`` of lists."""
    def swa_update(averaged_param_list, current_param_list, num_averaged) -> None:
        with grad_mode.no_grad():
            _lerp_all(list(averaged_param_list), list(current_param_list), 1 / (float(num_averaged) + 1))

    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> Callable:
    """``(ema, param, n) -> decay * ema + (1 - decay) * param`` (returns a new tensor)."""
    _check_decay(decay)

    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged) -> Tensor:
        with grad_mode.no_grad():
            return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn() -> Callable:
    """``(avg, param, n) -> avg + (param - avg) / (n + 1)`` (returns a new tensor)."""
    def swa_update(averaged_param: Tensor, current_param: Tensor, num_averaged) -> Tensor:
        with grad_mode.no_grad():
            return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    """A deep copy of ``model`` whose ``update_parameters(model)`` folds the model's current weights into a
    running average (SWA, the default), or with ``avg_fn``/``multi_avg_fn`` any other average (EMA).
    ``use_buffers`` averages the buffers too; otherwise they are copied from the model."""

    def __init__(self, model: Module, device=None, avg_fn: Callable | None = None,
                 multi_avg_fn: Callable | None = None, use_buffers: bool = False) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", tensor(0, dtype=int64, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        """Average ``model``'s current parameters (and buffers, with ``use_buffers``) into this copy."""
        if self.use_buffers:
            mine = list(itertools.chain(self.module.parameters(), self.module.buffers()))
            theirs = list(itertools.chain(model.parameters(), model.buffers()))
        else:
            mine, theirs = list(self.parameters()), list(model.parameters())
        mine = [p.detach() for p in mine]
        theirs = [p.detach().to(a.device) for a, p in zip(mine, theirs)]
        n_averaged = int(self.n_averaged.item())
        with grad_mode.no_grad():
            if n_averaged == 0:
                for a, p in zip(mine, theirs):
                    a.copy_(p)
            elif self.avg_fn is not None:
                for a, p in zip(mine, theirs):
                    a.copy_(self.avg_fn(a, p, self.n_averaged.to(a.device)))
            else:
                average = self.multi_avg_fn or get_swa_multi_avg_fn()
                average(mine, theirs, self.n_averaged)
            if not self.use_buffers:
                for b_swa, b_model in zip(self.module.buffers(), model.buffers()):
                    b_swa.detach().copy_(b_model.detach().to(b_swa.device))
            self.n_averaged += 1


def update_bn(loader: Iterable[Any], model: Module, device=None) -> None:
    """Recompute every batch-norm layer's running statistics as a cumulative average over one pass of
    ``loader`` (its items, or their first element, are the model's inputs)."""
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    with grad_mode.no_grad():
        for input in loader:
            if isinstance(input, (list, tuple)):
                input = input[0]
            if device is not None:
                input = input.to(device)
            model(input)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's rate from its current value to ``swa_lr`` over ``anneal_epochs`` steps ('cos' or
    'linear'), then hold it."""

    def __init__(self, optimizer: Optimizer, swa_lr: float, anneal_epochs: int = 10, anneal_strategy: str = "cos",
                 last_epoch: int = -1) -> None:
        for value, group in zip(_format_param("swa_lr", optimizer, swa_lr), optimizer.param_groups):
            group["swa_lr"] = value
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t: float) -> float:
        return t

    @staticmethod
    def _cosine_anneal(t: float) -> float:
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr: float, swa_lr: float, alpha: float) -> float:
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def _set_anneal_func(self, anneal_strategy: str) -> None:
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    def get_lr(self) -> list[float]:
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
                          UserWarning, stacklevel=2)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
                    for group in self.optimizer.param_groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [group["swa_lr"] * alpha + lr * (1 - alpha) for group, lr in zip(self.optimizer.param_groups, prev_lrs)]

    def state_dict(self) -> dict[str, Any]:
        """As the base's, without the anneal function (restored from ``_anneal_strategy`` on load)."""
        state = super().state_dict()
        state.pop("anneal_func", None)
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        super().load_state_dict(state_dict)
        self._set_anneal_func(self._anneal_strategy)
