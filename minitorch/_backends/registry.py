"""Device type -> Backend.

A Backend owns an array module ``xp`` (numpy, cupy, or the meta module) plus the few kernels
that differ between array libraries: building strided views over a 1-D buffer, scatter-add,
random numbers, and moving data to and from the host. Everything above this folder talks to a
Backend, so the CPU test run exercises the same code path the GPU takes.
"""

from __future__ import annotations

from typing import Any

from .._device import device


class Backend:
    """The interface every backend implements (see numpy_backend.py for the reference one)."""

    device_type: str = ""
    xp: Any = None

    def normalize(self, dev: device) -> device:
        """The concrete device tensors live on (``cuda`` -> ``cuda:0``)."""
        return dev

    # dtype mapping -------------------------------------------------------------------------
    def array_dtype(self, dtype):
        raise NotImplementedError

    def dtype_of(self, array):
        raise NotImplementedError

    # storage -------------------------------------------------------------------------------
    def as_strided(self, buffer, size, stride, offset):
        """A strided view of the 1-D ``buffer`` (element units), sharing its memory."""
        raise NotImplementedError

    def buffer_of(self, array):
        """``(buffer, array)``: a 1-D buffer covering ``array``'s memory; copies if it must."""
        raise NotImplementedError

    def data_ptr(self, array) -> int:
        raise NotImplementedError

    def memory_limit(self) -> int | None:
        """The most bytes one tensor may take on this device (None: no limit known). Factories check
        against it before allocating, so an absurd size is an error, never a swapping machine."""
        return None


_registry: dict[str, Backend] = {}
_factories: dict[str, Any] = {}


def register_backend(device_type: str, backend_or_factory) -> None:
    """Register a Backend (or a zero-argument factory, called on first use) for a device type.

    Third-party backends register at run time; ``minitorch.device(device_type)`` then works.
    """
    _registry.pop(device_type, None)
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


def _numpy():
    from .numpy_backend import NumpyBackend

    return NumpyBackend()


def _cupy():
    from .cupy_backend import CupyBackend

    return CupyBackend()


def _meta():
    from .meta_backend import MetaBackend

    return MetaBackend()


register_backend("cpu", _numpy)
register_backend("cuda", _cupy)
register_backend("meta", _meta)
