"""``minitorch.cuda.amp``: PyTorch's deprecated CUDA spellings of ``minitorch.amp`` (a FutureWarning, then
``autocast('cuda', ...)`` / ``GradScaler('cuda', ...)``, which without a GPU warn and disable themselves)."""

from .autocast_mode import autocast, custom_bwd, custom_fwd
from .grad_scaler import GradScaler

__all__ = ["GradScaler", "autocast", "custom_bwd", "custom_fwd"]
