"""torch.func.functional_call: run a module with some parameters and buffers swapped for given tensors.

The module's own tensors are put back afterwards, also when the call raises, so a function of the
parameters (``grad(lambda p: loss(functional_call(model, p, x)))``) can be differentiated or vmapped
without touching the model.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..nn.modules.module import Module
from ..tensor import Tensor

__all__ = ["functional_call"]


def _merge(parameter_and_buffer_dicts) -> dict:
    if isinstance(parameter_and_buffer_dicts, dict):
        return parameter_and_buffer_dicts
    if isinstance(parameter_and_buffer_dicts, Sequence):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be dictionaries")
        counts: dict[str, int] = {}
        for d in parameter_and_buffer_dicts:
            for k in d:
                counts[k] = counts.get(k, 0) + 1
        repeated = [k for k, n in counts.items() if n > 1]
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of functional call is ambiguous")
        return {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    raise ValueError("Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got "
                     f"{type(parameter_and_buffer_dicts)}")


def _untie(module: Module, given: dict) -> dict:
    """Give every name of a tied tensor the value passed for any of its names (PyTorch's tie_weights)."""
    names_of: dict[int, set[str]] = {}
    tensors = dict(module.named_parameters(remove_duplicate=False))
    tensors.update(module.named_buffers(remove_duplicate=False))
    for name, t in tensors.items():
        names_of.setdefault(id(t), set()).add(name)
    tied = {n: names for names in names_of.values() if len(names) > 1 for n in names}
    result = dict(given)
    for name in [n for n in given if n in tied]:
        group = tied[name]
        values = {id(given[n]) for n in group if n in given}
        if len(values) > 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(group)}, which are tied. "
                             "Consider using tie_weights=False")
        for other in group:
            result[other] = given[name]
    return result


def _owner(module: Module, name: str) -> tuple[Module, str]:
    *path, leaf = name.split(".")
    for part in path:
        module = module._modules[part] if part in module._modules else getattr(module, part)
    return module, leaf


def _swap(module: Module, name: str, value) -> tuple:
    """Put ``value`` at ``name``; returns how to restore what was there."""
    owner, leaf = _owner(module, name)
    for store in (owner._parameters, owner._buffers):
        if leaf in store:
            old = store[leaf]
            store[leaf] = value
            return (store, leaf, old, True)
    had = leaf in owner.__dict__
    old = owner.__dict__.get(leaf)
    object.__setattr__(owner, leaf, value)  # a name that is neither: a plain attribute, as PyTorch sets it
    return (owner.__dict__, leaf, old, had)


def functional_call(module: Module, parameter_and_buffer_dicts, args: Any = None, kwargs: dict | None = None, *,
                    tie_weights: bool = True, strict: bool = False):
    """``module(*args, **kwargs)`` with the named parameters/buffers (dotted names) replaced for the call."""
    tensors = _merge(parameter_and_buffer_dicts)
    if tie_weights:
        tensors = _untie(module, tensors)
    if strict:
        expected = {n for n, _ in module.named_parameters(remove_duplicate=False)}
        expected |= {n for n, _ in module.named_buffers(remove_duplicate=False)}
        unexpected = [k for k in tensors if k not in expected]
        missing = [k for k in sorted(expected) if k not in tensors]
        msgs = []
        if unexpected:
            msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            msgs.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if msgs:
            joined = "\n\t".join(msgs)
            raise RuntimeError(f"Error(s) in reparametrizing for {module._get_name()}:\n\t{joined}")
    for name, value in tensors.items():
        if value is not None and not isinstance(value, Tensor):
            raise TypeError(f"functional_call: expected a Tensor for '{name}', got {type(value).__name__}")
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    restore = []
    try:
        for name, value in tensors.items():
            restore.append(_swap(module, name, value))
        return module(*args, **(kwargs or {}))
    finally:
        for store, leaf, old, had in reversed(restore):
            if had:
                store[leaf] = old
            else:
                store.pop(leaf, None)
