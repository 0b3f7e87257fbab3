"""Registering a device backend from outside minitorch (PyTorch's ``torch.utils.backend_registration``).

minitorch keeps its backend registry in the private ``minitorch._backends``, so that ``minitorch.backends``
can be PyTorch's flags module (``torch.backends.cudnn``, ``torch.backends.mps``, ...). A third-party backend
subclasses :class:`Backend` and registers it here; ``minitorch.device(device_type)`` then works.
"""

from .._backends import Backend, is_registered, register_backend

__all__ = ["Backend", "is_registered", "register_backend"]
