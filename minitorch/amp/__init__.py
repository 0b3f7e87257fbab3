"""``minitorch.amp``: automatic mixed precision (``autocast``) and loss scaling (``GradScaler``)."""

from .autocast_mode import (
    autocast,
    custom_bwd,
    custom_fwd,
    get_autocast_dtype,
    is_autocast_available,
    is_autocast_enabled,
    set_autocast_dtype,
    set_autocast_enabled,
)
from .grad_scaler import GradScaler, OptState

__all__ = [
    "GradScaler", "OptState", "autocast", "custom_bwd", "custom_fwd", "get_autocast_dtype", "is_autocast_available",
    "is_autocast_enabled", "set_autocast_dtype", "set_autocast_enabled",
]
