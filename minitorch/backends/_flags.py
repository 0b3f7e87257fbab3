"""Module-level flags with PyTorch's checks: ``minitorch.backends.cudnn.benchmark = 1`` raises as in PyTorch.

A flags module's class is swapped for a ``FlagsModule`` subclass whose class attributes are ``BoolFlag``
descriptors (module attributes cannot otherwise validate what is assigned to them).
"""

from __future__ import annotations

import contextlib
import sys
import types


class BoolFlag:
    """A bool module attribute; anything else raises PyTorch's ``RuntimeError: <setter> expects a bool``."""

    def __init__(self, default: bool, setter_name: str) -> None:
        self.default = default
        self.setter_name = setter_name

    def __set_name__(self, owner, name: str) -> None:
        self.name = name

    def __get__(self, module, owner=None):
        if module is None:
            return self
        return module.__dict__.get(f"_flag_{self.name}", self.default)

    def __set__(self, module, value) -> None:
        if not isinstance(value, bool):
            raise RuntimeError(f"{self.setter_name} expects a bool, but got {type(value).__name__}")
        module.__dict__[f"_flag_{self.name}"] = value


class FlagsModule(types.ModuleType):
    """A module whose flags are ``BoolFlag`` descriptors."""


@contextlib.contextmanager
def scoped(module_name: str, **values):
    """Set flags of ``module_name`` for a ``with`` block (PyTorch's ``cudnn.flags(...)``), restore them after."""
    module = sys.modules[module_name]
    previous = {name: getattr(module, name) for name in values}
    try:
        for name, value in values.items():
            setattr(module, name, value)
        yield
    finally:
        for name, value in previous.items():
            setattr(module, name, value)


def install(module_name: str, module_class: type) -> None:
    """Give the already-imported module ``module_name`` the flag descriptors of ``module_class``."""
    sys.modules[module_name].__class__ = module_class
