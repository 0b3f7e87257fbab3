"""``minitorch.backends.cudnn``: PyTorch's cuDNN flags.

minitorch never calls cuDNN (its GPU kernels are CuPy's), so ``is_available()`` is False and ``version()``
None on every machine, as on CPU-only PyTorch; the flags keep PyTorch's defaults and type checks, so programs
that set them (``cudnn.benchmark = True``, ``cudnn.deterministic = True``) run unchanged, with no effect.
"""

from __future__ import annotations

from ._flags import BoolFlag, FlagsModule, install, scoped

benchmark_limit: int | None = None  # CPU-only PyTorch reports None


def is_available() -> bool:
    """Whether cuDNN can be used: never in minitorch (CuPy kernels instead)."""
    return False


def version() -> int | None:
    return None


def is_acceptable(tensor) -> bool:
    """Whether cuDNN would take ``tensor``: no tensor, as cuDNN is not used."""
    return False


class CudnnModule(FlagsModule):
    enabled = BoolFlag(True, "set_enabled_cudnn")
    benchmark = BoolFlag(False, "set_benchmark_cudnn")
    deterministic = BoolFlag(False, "set_deterministic_cudnn")
    allow_tf32 = BoolFlag(True, "set_allow_tf32_cudnn")


def flags(enabled: bool = False, benchmark: bool = False, deterministic: bool = False, allow_tf32: bool = True):
    """``with cudnn.flags(enabled=..., benchmark=..., ...):`` sets the flags inside the block, restores them after."""
    return scoped(__name__, enabled=enabled, benchmark=benchmark, deterministic=deterministic,
                  allow_tf32=allow_tf32)


install(__name__, CudnnModule)
