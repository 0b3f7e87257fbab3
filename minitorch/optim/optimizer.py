"""Optimizer: the base class that holds parameter groups and per-parameter state.

As in PyTorch, an optimizer is a list of *param groups* (dicts holding ``params`` and the options that
apply to them; options a group leaves out come from ``defaults``) plus ``state``, a dict keyed by the
parameter tensor. ``state_dict()`` replaces tensors by their position so a checkpoint can be loaded
into an optimizer over freshly built parameters.

The update rules of the subclasses run on the parameters' backend arrays, in place, under ``no_grad``:
the parameter keeps its identity and storage, its version counter is bumped once per step (so a graph
that saved it notices), and a step costs a few array operations instead of a few Tensor ops each.
"""

from __future__ import annotations

import functools
import warnings
from collections import defaultdict
from collections.abc import Callable
from copy import deepcopy
from itertools import chain
from typing import Any

from .._dtype import float32, float64, get_default_dtype
from ..autograd import grad_mode
from ..autograd.graph import RemovableHandle
from ..creation import tensor, zeros_like
from ..tensor import Tensor, legacy_type_name

__all__ = ["Optimizer", "required", "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook"]


class _RequiredParameter:
    """The default of an option a param group must set itself (no global default exists)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


def _type_name(obj) -> str:
    return legacy_type_name(obj) if isinstance(obj, Tensor) else type(obj).__name__


_global_optimizer_pre_hooks: dict = {}
_global_optimizer_post_hooks: dict = {}


def register_optimizer_step_pre_hook(hook: Callable) -> RemovableHandle:
    """``hook(optimizer, args, kwargs) -> None or (args, kwargs)`` runs before every optimizer's ``step``,
    ahead of the optimizer's own pre-hooks."""
    handle = RemovableHandle(_global_optimizer_pre_hooks)
    _global_optimizer_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook: Callable) -> RemovableHandle:
    """``hook(optimizer, args, kwargs) -> None`` runs after every optimizer's ``step``, after its own."""
    handle = RemovableHandle(_global_optimizer_post_hooks)
    _global_optimizer_post_hooks[handle.id] = hook
    return handle


def _hooked_step(step: Callable) -> Callable:
    """Wrap a subclass's ``step`` so pre/post hooks run and schedulers can tell it was called."""

    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        for hook in chain(list(_global_optimizer_pre_hooks.values()), list(self._optimizer_step_pre_hooks.values())):
            result = hook(self, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError(
                        f"{hook} must return None or a tuple of (new_args, new_kwargs), but got {result}."
                    )
                args, kwargs = result
        out = step(self, *args, **kwargs)
        self._opt_called = True
        for hook in chain(list(self._optimizer_step_post_hooks.values()), list(_global_optimizer_post_hooks.values())):
            hook(self, args, kwargs)
        return out

    wrapper._hooked = True
    return wrapper


class Optimizer:
    """Base class of all optimizers: ``params`` is an iterable of Tensors, of ``(name, Tensor)`` pairs,
    or of dicts (param groups); ``defaults`` holds the option values groups fall back to."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "_hooked", False):
            cls.step = _hooked_step(step)

    def __init__(self, params, defaults: dict[str, Any]) -> None:
        if defaults.get("differentiable", False):
            raise RuntimeError(
                f"{type(self).__name__}: differentiable=True is not supported by minitorch optimizers "
                "(steps run in place under no_grad)"
            )
        self.defaults = defaults
        self._optimizer_step_pre_hooks: dict = {}
        self._optimizer_step_post_hooks: dict = {}
        self._opt_called = False
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or dicts, but got "
                + _type_name(params)
            )
        self.state: defaultdict[Tensor, dict[str, Any]] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    # param groups --------------------------------------------------------------------------------
    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group (e.g. layers unfrozen during fine-tuning); its missing options take the defaults."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but the ordering of tensors "
                "in sets will change between runs. Please use a list instead."
            )
        else:
            params = list(params)
        names = [p[0] for p in params if isinstance(p, tuple)]
        params = [p[1] if isinstance(p, tuple) else p for p in params]
        param_group["params"] = params
        if names:
            if len(names) != len(params):
                raise ValueError("all optimizer params should be with/without names. Some param names are missing")
            param_group["param_names"] = names

        for param in params:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is " + _type_name(param))
            if not (param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")

        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            param_group.setdefault(name, default)

        if len(params) != len(set(params)):
            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; in future, this will cause an "
                "error; see github.com/pytorch/pytorch/issues/40967 for more information",
                stacklevel=3,
            )
        seen: set = set()
        for group in self.param_groups:
            seen.update(group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                kind = "with names" if "param_names" in param_group else "without names"
                raise ValueError(
                    f"all optimizer param groups should be with/without names. cannot add param group {kind} "
                    "to the optimizer"
                )
        if not seen.isdisjoint(params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset every parameter's ``.grad``: to None (the default, saves memory) or to zeros in place."""
        for group in self.param_groups:
            for p in group["params"]:
                grad = p.grad
                if grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                    continue
                if grad.grad_fn is not None:
                    grad.detach_()
                else:
                    grad.requires_grad_(False)
                grad.zero_()

    def step(self, closure: Callable[[], Any] | None = None):
        """Perform one optimization step (subclasses define the update)."""
        raise NotImplementedError(f"{type(self).__name__} does not define step()")

    @staticmethod
    def _evaluate_closure(closure: Callable[[], Any] | None):
        """A closure recomputes the loss (re-running forward and backward), so it runs with grad enabled."""
        if closure is None:
            return None
        with grad_mode.enable_grad():
            return closure()

    # hooks ----------------------------------------------------------------------------------------
    def register_step_pre_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(optimizer, args, kwargs) -> None or (args, kwargs)`` runs before each ``step``."""
        handle = RemovableHandle(self._optimizer_step_pre_hooks)
        self._optimizer_step_pre_hooks[handle.id] = hook
        return handle

    def register_step_post_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(optimizer, args, kwargs) -> None`` runs after each ``step``."""
        handle = RemovableHandle(self._optimizer_step_post_hooks)
        self._optimizer_step_post_hooks[handle.id] = hook
        return handle

    # checkpoints ----------------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """``{'state': {index: {...}}, 'param_groups': [{..., 'params': [indices]}]}``; parameters are
        numbered in group order, so the dict holds no reference to the parameter tensors."""
        index_of: dict[int, int] = {}
        start = 0

        def pack_group(group: dict[str, Any]) -> dict[str, Any]:
            nonlocal start
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                index_of.setdefault(id(p), i)
            packed["params"] = [index_of[id(p)] for p in group["params"]]
            start += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        state = {(index_of[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        return {"state": state, "param_groups": param_groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore groups' options and per-parameter state. State tensors are copied to their parameter's
        device (floating-point ones also to its dtype, except the ``step`` counter)."""
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError(
                "loaded state dict contains a parameter group that doesn't match the size of optimizer's group"
            )
        saved_ids = chain.from_iterable(g["params"] for g in saved_groups)
        id_map = dict(zip(saved_ids, chain.from_iterable(g["params"] for g in groups)))
        state: defaultdict[Any, dict[str, Any]] = defaultdict(dict)
        for key, value in state_dict["state"].items():
            if key in id_map:
                param = id_map[key]
                state[param] = _cast_state(param, value)
            else:
                state[key] = value

        def update_group(group: dict[str, Any], new_group: dict[str, Any]) -> dict[str, Any]:
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        self.__setstate__({"state": state, "param_groups": [update_group(g, s) for g, s in zip(groups, saved_groups)]})

    def __getstate__(self) -> dict[str, Any]:
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        for hooks in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks"):
            self.__dict__.setdefault(hooks, {})
        self.__dict__.setdefault("_opt_called", False)
        for group in self.param_groups:  # checkpoints from older versions may lack newer options
            for name, default in self.defaults.items():
                if default is not required:
                    group.setdefault(name, default)

    def __repr__(self) -> str:
        text = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            for key in sorted(group):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        return text + ")"


def _cast_state(param: Tensor, value, key=None):
    """A loaded state value moved to ``param``'s device and dtype (``step`` stays a CPU float counter),
    always as a copy: two optimizers loaded from one checkpoint must not share their buffers."""
    if isinstance(value, Tensor):
        if key == "step":
            moved = value
        elif param.is_floating_point() and value.is_floating_point():
            moved = value.to(device=param.device, dtype=param.dtype)
        else:
            moved = value.to(device=param.device)
        return moved.clone() if moved is value else moved
    if isinstance(value, dict):
        return {k: _cast_state(param, v, k) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_state(param, v) for v in value)
    return value


# helpers the update rules share ---------------------------------------------------------------------


def scalar(value):
    """An option that may be given as a 1-element Tensor (``lr=torch.tensor(0.01)``) as a Python number."""
    return value.item() if isinstance(value, Tensor) else value


def check_adam_arguments(lr, eps: float, betas: tuple, weight_decay: float) -> None:
    """The argument checks the Adam family (Adam, AdamW, Adamax, NAdam, RAdam) share, with PyTorch's messages."""
    if not 0.0 <= scalar(lr):
        raise ValueError(f"Invalid learning rate: {lr}")
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


def new_buffer(param: Tensor, fill=None) -> Tensor:
    """A zero (or ``fill``-valued) state tensor shaped like ``param``, on its device and dtype."""
    buffer = zeros_like(param)
    if fill is not None:
        buffer._array[...] = fill
    return buffer


def new_step(value: float = 0.0) -> Tensor:
    """``state['step']`` (and other scalar state such as NAdam's ``mu_product``): a 0-dim float tensor on the
    CPU, float64 when that is the default dtype, else float32 (so its value is rounded as PyTorch's is)."""
    dtype = float64 if get_default_dtype() is float64 else float32
    return tensor(float(value), dtype=dtype)


def set_scalar(t: Tensor, value: float) -> float:
    """Store ``value`` in the 0-dim state tensor ``t`` (in place) and return it as rounded to ``t``'s dtype."""
    t._array[...] = value
    t._storage.version += 1
    return float(t._array)


def step_counter(state: dict[str, Any]) -> float:
    """Increment ``state['step']`` (a float 0-dim tensor, as in PyTorch) and return the new count."""
    step_t = state["step"]
    step_t._array[...] = step_t._array + 1
    step_t._storage.version += 1
    return float(step_t._array)


def mark_written(*tensors: Tensor) -> None:
    """Bump the version counter of tensors updated through their arrays (what an in-place op does)."""
    for t in tensors:
        t._storage.version += 1


def real_view(array):
    """A complex array's memory as real pairs, else the array itself: PyTorch's Adam, AdamW, RMSprop and Adagrad
    update a complex parameter through view_as_real, so its real and imaginary parts get moments of their own
    (``grad * grad`` of the complex numbers would be wrong). Parameters and buffers are row-major."""
    if array.dtype.kind != "c":
        return array
    if not array.flags.c_contiguous:  # a gradient may be strided; parameters and state buffers never are
        array = array.copy()
    return array.view(array.real.dtype)


def dense_grad(optimizer: Optimizer, param: Tensor, sparse_message: str | None = None):
    """``param.grad``'s array. A sparse gradient is refused with ``sparse_message`` (PyTorch's own wording);
    optimizers that take sparse gradients branch on ``param.grad.is_sparse`` and use ``sparse_grad``."""
    grad = param.grad
    if grad.is_sparse:
        raise RuntimeError(
            sparse_message
            or f"{type(optimizer).__name__} does not support sparse gradients (parameter of shape "
            f"{list(param.shape)}); use optim.SGD, optim.Adagrad or optim.SparseAdam, or grad.to_dense()"
        )
    return grad._array


def sparse_grad(param: Tensor, coalesce: bool = True):
    """A sparse ``param.grad`` as ``(where, values)``: ``where`` indexes ``param``'s array (a tuple of index
    arrays over the sparse dims) and ``values`` holds the rows. Coalesced (unique rows) unless told not to,
    which suffices for updates linear in the gradient (scatter-adds sum duplicates)."""
    grad = param.grad
    if coalesce and not grad.is_coalesced():
        grad = grad.coalesce()
    return tuple(grad._indices()._array), grad._values()._array
