"""Device type -> Backend (the interface is in base.py). A backend is created on first use: the CuPy
backend imports CuPy only then. Registering a device type also makes ``minitorch.device`` accept it."""

from __future__ import annotations

from typing import Any

from .. import _device
from .._device import device
from .base import Backend
from .cupy_backend import CupyBackend
from .meta_backend import MetaBackend
from .numpy_backend import NumpyBackend

_registry: dict[str, Backend] = {}
_factories: dict[str, Any] = {}


def register_backend(device_type: str, backend_or_factory) -> None:
    """Register a Backend (or a zero-argument factory, called on first use) for a device type.

    Third-party backends register at run time; ``minitorch.device(device_type)`` then works.
    """
    _registry.pop(device_type, None)
    _device.registered_types.add(device_type)
    _factories[device_type] = backend_or_factory


def is_registered(device_type: str) -> bool:
    return device_type in _factories


def backend_for(dev: device) -> Backend:
    """The Backend for a device, created lazily (CuPy is imported on first CUDA use)."""
    backend = _registry.get(dev.type)
    if backend is None:
        factory = _factories.get(dev.type)
        if factory is None:
            raise RuntimeError(f"no backend is registered for device type '{dev.type}'")
        backend = factory() if not isinstance(factory, Backend) else factory
        _registry[dev.type] = backend
    return backend


register_backend("cpu", NumpyBackend)
register_backend("cuda", CupyBackend)
register_backend("meta", MetaBackend)
