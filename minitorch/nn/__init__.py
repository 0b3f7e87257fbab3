"""minitorch.nn: Module, Parameter, layers, containers, functional, init and utils (torch.nn)."""

from . import functional, init, parallel, utils
from .modules import *  # noqa: F403
from .modules import __all__ as _modules_all
from .parallel import DataParallel
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter

__all__ = ["functional", "init", "parallel", "utils", "DataParallel", "Parameter", "Buffer", "UninitializedParameter",
           "UninitializedBuffer", *_modules_all]
