"""minitorch.utils: ``benchmark`` (Timer, Measurement), ``data`` (datasets and loaders), ``checkpoint``
(activation checkpointing), ``backend_registration`` (adding a device backend) and ``safetensors``
(``.safetensors`` files, with the optional safetensors package).

Submodules load on first access, so ``import minitorch`` stays cheap and
``minitorch.utils.benchmark.Timer`` works with or without ``import minitorch.utils.benchmark``.
"""

from __future__ import annotations

import importlib

_SUBMODULES = ("backend_registration", "benchmark", "checkpoint", "data", "dlpack", "progress", "safetensors",
               "tensorboard")


def __getattr__(name: str):
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__: list = []
