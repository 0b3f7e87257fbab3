"""Backend: the interface every backend implements.

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
