"""minitorch.nn: Module, Parameter, layers, containers, functional, init and utils (torch.nn)."""

from . import functional, init, utils
from .modules import *  # noqa: F403
from .modules import __all__ as _modules_all
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter

__all__ = ["functional", "init", "utils", "Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer",
           *_modules_all]
