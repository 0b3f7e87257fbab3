"""The backend registry: the only place in minitorch that imports numpy or CuPy."""

from .registry import Backend, backend_for, is_registered, register_backend

__all__ = ["Backend", "backend_for", "is_registered", "register_backend"]
