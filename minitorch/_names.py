"""Dimension names on tensors (PyTorch's named tensors): where they live, how they are checked and looked up.

A tensor's names are its ``_names`` slot: ``None`` (unnamed, every dim ``None``) or a tuple with one entry per
dim, a ``str`` or ``None``, not all ``None``. Nothing else stores names. ``state.active`` turns true the first
time any tensor gets a name; until then the dispatcher (ops/op.py) never looks at names, so programs without
named tensors pay one flag read per op. The name inference rules of the ops are in ops/named.py.

PyTorch 2.13 removed named tensors; minitorch keeps them with PyTorch 2.12's semantics and messages, for the
programs that use them (see docs/named_tensors.md).
"""

from __future__ import annotations

import os
import sys
import warnings

from . import _dispatch_modes


class _State:
    """``active``: some tensor has had a dimension name in this process (never turns false again). A slot, so the
    dispatcher's read of it is the cheapest attribute read Python has."""

    __slots__ = ("active",)

    def __init__(self):
        self.active = False


state = _State()
_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep

_EXPERIMENTAL = (
    "Named tensors and all their associated APIs are an experimental feature and subject to change. Please do not "
    "use them for anything important until they are released as stable."
)


def _activate() -> None:
    """The first name in the process: PyTorch's one-time warning, and the dispatcher starts looking at names."""
    if not state.active:
        state.active = True
        _dispatch_modes.hold(True)  # (for good: names stay on)
        frame, level = sys._getframe(0), 1  # the warning points at the user's line (ops.arguments.user_stacklevel)
        while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
            frame, level = frame.f_back, level + 1
        warnings.warn(_EXPERIMENTAL, UserWarning, stacklevel=level)


def names_of(tensor) -> tuple:
    """``tensor.names``: one entry per dim, ``None`` for an unnamed dim."""
    names = tensor._names
    return names if names is not None else (None,) * len(tensor._array.shape)


def show(names) -> str:
    """A name list as PyTorch prints it in messages: ``['N', None]``."""
    return "[" + ", ".join("None" if n is None else f"'{n}'" for n in names) + "]"


def _valid_name(name) -> bool:
    """An ASCII Python identifier (PyTorch's Dimname::isValidName)."""
    return bool(name) and name.isascii() and name.isidentifier()


def checked(names, ndim: int) -> tuple:
    """``names`` as a tuple valid for a tensor of ``ndim`` dims, or PyTorch's error."""
    if isinstance(names, str):
        names = (names,)
    names = tuple(names)
    for name in names:
        if name is None:
            continue
        if not isinstance(name, str):
            raise TypeError(f"names must be a list of str or None, but got an element of type {type(name).__name__}")
        if not _valid_name(name):
            raise RuntimeError(
                "Invalid name: a valid identifier contains only digits, alphabetical characters and/or underscore "
                f"and starts with a non-digit. got: '{name}'."
            )
    if len(names) != ndim:
        raise RuntimeError(
            f"Number of names ({len(names)}) and number of dimensions in tensor ({ndim}) do not match. Attempted "
            f"to create a tensor with names {show(names)}"
        )
    seen = [n for n in names if n is not None]
    if len(set(seen)) != len(seen):
        raise RuntimeError(f"Cannot construct a tensor with duplicate names. Got names: {show(names)}.")
    return names


def set_names(tensor, names, validate: bool = True):
    """Give ``tensor`` these names in place (``None`` or all-``None`` names make it unnamed); returns it."""
    if names is None:
        tensor._names = None
        return tensor
    if validate:
        names = checked(names, len(tensor._array.shape))
    else:
        names = tuple(names)
    if all(n is None for n in names):
        tensor._names = None
        return tensor
    _activate()
    tensor._names = names
    return tensor


def dim_of(tensor, name) -> int:
    """The index of the dim called ``name`` in ``tensor`` (PyTorch's dimname_to_position)."""
    if name is None:
        raise RuntimeError("Please look up dimensions by name, got: name = None.")
    names = names_of(tensor)
    if name in names:
        return names.index(name)
    raise RuntimeError(f"Name '{name}' not found in Tensor{show(names)}.")


def resolve_dims(tensor, dim):
    """``dim`` with every name replaced by its index in ``tensor`` (an int, a str, or a list/tuple of them)."""
    if isinstance(dim, str):
        return dim_of(tensor, dim)
    if isinstance(dim, (list, tuple)) and any(isinstance(d, str) for d in dim):
        return type(dim)(dim_of(tensor, d) if isinstance(d, str) else d for d in dim)
    return dim


def dims_by_name(args: tuple, kwargs: dict, dim_at: int):
    """``args``/``kwargs`` of a function with a ``dim`` parameter (at position ``dim_at``), with a dimension
    name (or a list holding names) replaced by the index in the first tensor argument."""
    if "dim" in kwargs:
        dim = kwargs["dim"]
    elif dim_at < len(args):
        dim = args[dim_at]
    else:
        return args, kwargs
    if not (isinstance(dim, str) or (isinstance(dim, (list, tuple)) and any(isinstance(d, str) for d in dim))):
        return args, kwargs
    tensor = kwargs.get("input", args[0] if args else None)
    if isinstance(tensor, (list, tuple)) and tensor:  # cat(tensors, dim)
        tensor = tensor[0]
    if not hasattr(tensor, "_names"):
        return args, kwargs
    dim = resolve_dims(tensor, dim)
    if "dim" in kwargs:
        return args, {**kwargs, "dim": dim}
    return args[:dim_at] + (dim,) + args[dim_at + 1:], kwargs


def check_serializable(tensor) -> None:
    """PyTorch refuses to save or pickle a named tensor (its message)."""
    if tensor._names is not None:
        raise RuntimeError(
            "NYI: Named tensors don't support serialization. Please drop names via `tensor = tensor.rename(None)` "
            "before serialization."
        )


def out_names(out, result) -> None:
    """An ``out=`` tensor takes the names the op computed; one that has names must have exactly those."""
    if out._names is not None and out._names != result._names:
        raise _mismatch(names_of(out), names_of(result))
    out._names = result._names


def _mismatch(existing: tuple, computed: tuple) -> RuntimeError:
    return RuntimeError(
        f"Name mismatch: specified out tensor with names {show(existing)} are not the same as the computed output "
        f"names {show(computed)}. Please rename the out tensor's dims with `Tensor.rename`."
    )


def propagate(tensor, names) -> None:
    """``names`` onto ``tensor`` (PyTorch's propagate_names): a tensor that already has names must have these."""
    names = checked(names, len(tensor._array.shape))
    if tensor._names is not None and tensor._names != names:
        raise _mismatch(tensor._names, names)
    set_names(tensor, names, validate=False)
