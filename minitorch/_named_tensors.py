"""The named-tensor API (``names``, ``rename``, ``refine_names``, ``align_to``, ``flatten``/``unflatten`` by name)
and which name inference rule each op follows.

Names live in ``Tensor._names`` (``_names.py``); the rules are in ``ops/named.py``; this module binds ops to
rules (``RULES``) and defines the Tensor methods that ``_tensor_methods.py`` installs. Every new tensor made
here is a view made by a differentiable op, so gradients flow through renaming and aligning.
"""

from __future__ import annotations

import math
from collections import OrderedDict

from ._names import checked, dim_of, names_of, set_names, show
from .nn.functional.activation import LogSoftmax, Softmax
from .nn.functional.dropout import Dropout
from .ops import concat, conversion, indexing, inplace, named, reduction, sorting, views
from .ops.blas import Matmul
from .ops.named import removing
from .ops.promotion import Elementwise
from .tensor import Tensor

# which rule each op follows (PyTorch's "Named Tensors operator coverage"); any other op refuses named inputs
named.register(named.unify, Elementwise, inplace.Copy)
named.register(named.keep, conversion.Clone, conversion.ToCopy, Softmax, LogSoftmax, Dropout, reduction.Cumsum,
               reduction.Cumprod, reduction.Logcumsumexp, reduction.CumExtremum, sorting.Sort, sorting.Topk,
               indexing.IndexFill, views.Narrow)
named.register(removing(1, 2), reduction.Sum, reduction.Mean, reduction.Logsumexp, reduction.All, reduction.Any,
               reduction.Extremum, reduction.Prod, reduction.ArgExtremum)
named.register(removing(1, 2, outputs=2), reduction.ExtremumAlongDim, sorting.MedianAlongDim, sorting.Mode)
named.register(removing(2, 3, outputs=2), sorting.Kthvalue)
named.register(removing(1, 3), reduction.Var)
named.register(removing(2, 3), reduction.Norm)
named.register(removing(1, None), reduction.CountNonzero, views.Select)
named.register(lambda op, args, params: None, sorting.Median)
named.register(named.matmul, Matmul)
named.register(named.cat, concat.Cat)
named.register(named.transpose, views.Transpose)
named.register(named.permute, views.Permute)
named.register(named.unsqueeze, views.Unsqueeze)
named.register(named.squeeze, views.Squeeze)
named.register(named.expand, views.Expand)
named.register(named.diagonal, views.Diagonal)
named.register(named.alias_only, views.View)
named.register(named.split_views, views.SplitViews)


# names -------------------------------------------------------------------------------------------------------
def get_names(self: Tensor) -> tuple:
    """``tensor.names``: the name of each dim (``None`` where unnamed)."""
    return names_of(self)


def set_names_property(self: Tensor, names) -> None:
    """``tensor.names = names`` renames in place; ``None`` drops the names."""
    set_names(self, names)


def has_names(self: Tensor) -> bool:
    """Whether any dim has a name."""
    return self._names is not None


def _quoted(name) -> str:
    return "None" if name is None else f"'{name}'"


def _alias(tensor: Tensor) -> Tensor:
    """A view of all of ``tensor`` (gradients flow back through it); the caller names it."""
    with named.suspended():
        return views.View.apply(tensor, tensor._array.shape)


def _is_ellipsis(name) -> bool:
    return name is Ellipsis or name == "..."


def _ellipsis_index(names, function: str):
    found = [i for i, name in enumerate(names) if _is_ellipsis(name)]
    if len(found) >= 2:
        raise RuntimeError(
            f"{function}: More than one Ellipsis ('...') found in names ({names}). This function supports up to "
            "one Ellipsis."
        )
    return found[0] if found else None


def _resolve_ellipsis(names: tuple, tensor_names: tuple, function: str) -> tuple:
    """``...`` in ``names`` replaced by the tensor's names it stands for (those not matched by position)."""
    at = _ellipsis_index(names, function)
    if at is None:
        return tuple(names)
    after = len(names) - at - 1
    return tuple(names[:at]) + tuple(tensor_names[at : len(tensor_names) - after]) + tuple(names[at + 1 :])


def _update_names(tensor: Tensor, names: tuple, rename_map: dict, inplace: bool) -> Tensor:
    function = "rename_" if inplace else "rename"
    if names and rename_map:
        raise RuntimeError(
            f"{function}: This function takes either positional args or keyword args, but not both. Use "
            f"tensor.{function}(*names) to name dims and tensor.{function}(**rename_map) to rename dims."
        )
    if rename_map:
        current = names_of(tensor)
        new = list(current)
        for old, replacement in rename_map.items():
            if old not in current:
                raise RuntimeError(
                    f"{function}: Tried to rename dim '{old}' to dim {replacement} in Tensor[{current}] but dim "
                    f"'{old}' does not exist"
                )
            new[current.index(old)] = replacement
        new_names = tuple(new)
    elif len(names) == 1 and names[0] is None:
        new_names = None
    else:
        new_names = _resolve_ellipsis(names, names_of(tensor), function)
    out = tensor if inplace else _alias(tensor)
    return set_names(out, new_names)


def rename(self: Tensor, *names, **rename_map) -> Tensor:
    """A view with new names: ``rename('N', 'C')``, ``rename(..., 'W')``, ``rename(N='batch')``; ``rename(None)``
    drops them."""
    return _update_names(self, names, rename_map, inplace=False)


def rename_(self: Tensor, *names, **rename_map) -> Tensor:
    """``rename`` in place."""
    return _update_names(self, names, rename_map, inplace=True)


def refine_names(self: Tensor, *names) -> Tensor:
    """A view whose unnamed dims get names; a named dim must keep its name (``...`` keeps several)."""
    current = names_of(self)
    names = _resolve_ellipsis(names, current, "refine_names")
    if len(names) != len(current):
        raise RuntimeError(
            f"refine_names: cannot coerce Tensor{show(current)} to Tensor{show(names)} because they have a "
            f"different number of dims ({len(current)} and {len(names)} respectively)."
        )
    names = checked(names, len(current))
    for i, (old, new) in enumerate(zip(current, names)):
        if old == new or old is None:
            continue
        reason = "is more specific than" if new is None else "is different from"
        raise RuntimeError(
            f"refine_names: cannot coerce Tensor{show(current)} to Tensor{show(names)} because '{old}' {reason} "
            f"{'None' if new is None else repr(new)} at index {i}"
        )
    return set_names(_alias(self), names)


def _aligned(tensor: Tensor, order: tuple, new_names: tuple) -> Tensor:
    """``tensor``'s dims permuted into ``order`` (tensor dim or None for a new size-1 dim), named ``new_names``."""
    with named.suspended():
        existing = [d for d in order if d is not None]
        out = tensor.permute(existing) if existing != list(range(len(existing))) else _alias(tensor)
        for position, d in enumerate(order):
            if d is None:
                out = out.unsqueeze(position)
    return set_names(out, new_names)


def align_to(self: Tensor, *names) -> Tensor:
    """A view with the dims in the order of ``names``: a name the tensor lacks becomes a new dim of size 1,
    ``...`` stands for the dims not mentioned, in their order."""
    at = _ellipsis_index(names, "align_to")
    current = names_of(self)
    if at is None:
        for i, name in enumerate(current):
            if name is None:
                raise RuntimeError(
                    f"align_to: All input dims must be named. Found unnamed dim at index {i} of Tensor{show(current)}"
                )
            if name not in names:
                raise RuntimeError(
                    f"align_to: Cannot find dim '{name}' from Tensor{show(names)} in desired alignment {show(names)}."
                )
        names = checked(names, len(names))
        order = tuple(current.index(n) if n in current else None for n in names)
        return _aligned(self, order, names)
    order_names = [n for n in names if not _is_ellipsis(n)]
    if any(n is None for n in order_names):
        raise RuntimeError(
            f"align_to: the desired order of dimensions cannot contain a None name, got {show(order_names)}"
        )
    mentioned = {current.index(n) for n in order_names if n in current}
    rest = [i for i in range(len(current)) if i not in mentioned]
    order = [current.index(n) if n in current else None for n in order_names]
    order[at:at] = rest
    out_names = [n for n in order_names]
    out_names[at:at] = [current[i] for i in rest]
    return _aligned(self, tuple(order), checked(out_names, len(out_names)))


def align_as(self: Tensor, other: Tensor) -> Tensor:
    """``align_to(*other.names)``."""
    return align_to(self, *names_of(other))


# flatten / unflatten by name -----------------------------------------------------------------------------
def flatten(self: Tensor, start_dim=0, end_dim=-1, out_dim=None) -> Tensor:
    """``flatten(start_dim, end_dim)``, and with names: ``flatten(dims, out_dim)`` (a list of consecutive dims) or
    ``flatten(start_dim, end_dim, out_dim)``, the flattened dim called ``out_dim``."""
    if isinstance(start_dim, (list, tuple)):  # flatten(dims, out_dim)
        dims, out_dim = start_dim, end_dim
        if not dims:
            raise RuntimeError("flatten(tensor, dims, out_dim): dims cannot be empty")
        positions = [dim_of(self, d) if isinstance(d, str) else self._wrap_dim(d) for d in dims]
        if positions != list(range(positions[0], positions[0] + len(positions))):
            raise RuntimeError(
                f"flatten(tensor, dims, out_dim): dims {show(dims)} must be consecutive in Tensor"
                f"{show(names_of(self))}"
            )
        start, end = positions[0], positions[-1]
    elif out_dim is None:
        return views.flatten(self, start_dim, end_dim)
    else:
        start, end = self._wrap_dim(start_dim), self._wrap_dim(end_dim)
    names = names_of(self)
    out_names = names[:start] + (out_dim,) + names[end + 1 :]
    with named.suspended():
        out = views.flatten(self, start, end)
        if out is self:
            out = _alias(self)
    return set_names(out, out_names)


def unflatten(self: Tensor, dim, sizes) -> Tensor:
    """``unflatten(dim, sizes)``; ``sizes`` as ``(name, size)`` pairs (or an OrderedDict) names the new dims."""
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    if isinstance(sizes, OrderedDict) or (isinstance(sizes, (list, tuple)) and sizes
                                         and isinstance(sizes[0], (list, tuple))):
        items = list(sizes.items()) if isinstance(sizes, OrderedDict) else list(sizes)
        new_names, sizes = zip(*items)
    else:
        new_names = None
    if new_names is None:
        if isinstance(dim, str):
            raise TypeError(f"unflatten(): argument 'dim' (position 1) must be int, not {type(dim).__name__}")
        if self._names is not None:
            raise RuntimeError("unflatten: input is a named tensor but no names were given for unflattened sizes")
        return views.unflatten(self, dim, sizes)
    d = dim_of(self, dim) if isinstance(dim, str) else self._wrap_dim(dim)
    names = names_of(self)
    size = self._array.shape[d]
    known = math.prod(n for n in sizes if n != -1)
    if (-1 not in sizes and known != size) or (-1 in sizes and known and size % known):
        raise RuntimeError(
            f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {d} "
            f"({_quoted(names[d])}: {size}) in Tensor{show(names)}"
        )
    with named.suspended():
        out = views.unflatten(self, d, list(sizes))
    return set_names(out, names[:d] + tuple(new_names) + names[d + 1 :])

