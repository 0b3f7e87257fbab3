"""The public functions' input check (``torch.*`` and ``torch.nn.functional.*``): every parameter annotated
``Tensor`` (``Tensor | None``: or None) must receive a Tensor, checked before the function touches it. A
numpy array or a list then gets PyTorch's TypeError naming the function, the argument and its position,
instead of an AttributeError from inside; and nothing silently computes on a numpy array
(``mse_loss(array, t)``) where PyTorch refuses it.

Only the namespaces' bindings are checked (``checked_namespace``): Tensor methods (``self`` is a Tensor) and
the library's internal calls between its own functions pay nothing."""

from __future__ import annotations

import functools
import inspect
import os
import sys

from .._names import dims_by_name
from .._names import state as names_state
from ..tensor import Tensor

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # .../minitorch/
_MISSING = object()
_KEYWORD_ONLY = 1 << 30  # a position no call reaches
# annotations as strings (modules with ``from __future__ import annotations``) or evaluated
_TENSOR = ("Tensor", Tensor)
_OPTIONAL_TENSOR = ("Tensor | None", "Optional[Tensor]", Tensor | None)


def type_name(value) -> str:
    """A type as PyTorch's argument errors print it: ``list``, ``numpy.ndarray``."""
    cls = type(value)
    return cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"


def tensor_inputs(fn, name: str | None = None):
    """``fn`` checking its Tensor-annotated parameters (read once from its signature) on each call; ``fn``
    itself when it has none. Errors call it ``name`` (an alias such as ``less_equal``), else its own name."""
    checks = []
    for position, p in enumerate(inspect.signature(fn).parameters.values()):
        if p.kind is p.VAR_POSITIONAL:  # positions after *args are not the parameters'
            break
        if p.annotation in _TENSOR or p.annotation in _OPTIONAL_TENSOR:
            keyword_only = p.kind is p.KEYWORD_ONLY
            checks.append((_KEYWORD_ONLY if keyword_only else position, p.name, p.annotation in _OPTIONAL_TENSOR))
    if not checks:
        return fn
    name = name or fn.__name__

    @functools.wraps(fn)
    def checked(*args, **kwargs):
        count = len(args)
        for position, argument, optional in checks:
            value = args[position] if position < count else kwargs.get(argument, _MISSING)
            if not isinstance(value, Tensor) and value is not _MISSING and not (optional and value is None):
                where = "" if position == _KEYWORD_ONLY else f" (position {position + 1})"
                raise TypeError(f"{name}(): argument '{argument}'{where} must be Tensor, not {type_name(value)}")
        return fn(*args, **kwargs)

    return checked


def checked_namespace(namespace: dict, modules) -> None:
    """Rebind, in ``namespace``, each public function of ``modules`` (their ``__all__``) to its checked form."""
    for module in modules:
        for name in module.__all__:
            function = getattr(module, name)
            if inspect.isfunction(function) and namespace.get(name) is function:
                namespace[name] = tensor_inputs(function, name)


# PyTorch's argument parser takes numpy's names for two parameters of every native function and method
_NUMPY_ALIASES = {"axis": "dim", "keepdims": "keepdim"}


def numpy_aliases(fn, name: str | None = None):
    """``fn`` also accepting ``axis=`` for its ``dim`` and ``keepdims=`` for its ``keepdim`` (``x.sum(axis=0,
    keepdims=True)``), as PyTorch does; ``fn`` itself when it has neither parameter. Calls without keywords
    pay one extra call."""
    try:
        parameters = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return fn
    aliases = tuple((alias, p) for alias, p in _NUMPY_ALIASES.items() if p in parameters and alias not in parameters)
    if not aliases:
        return fn
    name = name or fn.__name__
    names = list(parameters)
    dim_at = names.index("dim") if "dim" in parameters else None  # where a dimension name may be passed

    @functools.wraps(fn)
    def aliased(*args, **kwargs):
        if kwargs:
            for alias, parameter in aliases:
                if alias in kwargs:
                    if parameter in kwargs:
                        raise TypeError(f"{name}() got multiple values for argument '{parameter}' (as '{alias}')")
                    kwargs[parameter] = kwargs.pop(alias)
        if names_state.active and dim_at is not None:  # dims given by name (named tensors): their indices
            args, kwargs = dims_by_name(args, kwargs, dim_at)
        return fn(*args, **kwargs)

    aliased._numpy_aliases = True
    return aliased


# functions PyTorch writes in Python (torch.functional, torch/_tensor.py): its argument parser never sees them
PYTHON_LEVEL = frozenset({"norm", "split", "unique", "unique_consecutive", "unflatten", "tensordot", "stft", "istft"})


def install_numpy_aliases(namespace: dict, names) -> None:
    """Rebind each function ``namespace[name]`` to its ``numpy_aliases`` form (once), except PYTHON_LEVEL's."""
    for name in names:
        if name in PYTHON_LEVEL:
            continue
        function = namespace.get(name)
        if inspect.isfunction(function) and not getattr(function, "_numpy_aliases", False):
            namespace[name] = numpy_aliases(function, name)


def user_stacklevel() -> int:
    """The ``stacklevel`` for a ``warnings.warn`` in the calling function that points at the first frame
    outside minitorch: the user's line, however many minitorch frames (the checked wrapper above, a Tensor
    method, a module's forward) lie in between. A fixed stacklevel cannot be right for both ``torch.var(x)``
    and ``x.var()``."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    return level
