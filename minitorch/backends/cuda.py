"""``minitorch.backends.cuda``: PyTorch's CUDA flags (``matmul.allow_tf32`` and the attention-kernel switches).

``is_built()`` says whether this minitorch can run CUDA at all (CuPy importable), as PyTorch's says whether it
was compiled with CUDA. The flags keep PyTorch's defaults and checks; minitorch's CuPy matmuls compute in full
float32 whatever they say (docs/platform.md).
"""

from __future__ import annotations

import importlib.util

from .. import _matmul_precision


def is_built() -> bool:
    """Whether CUDA support is installed: CuPy importable (a GPU need not be present)."""
    return importlib.util.find_spec("cupy") is not None


class cuBLASModule:
    """``backends.cuda.matmul``: ``allow_tf32`` mirrors ``get_float32_matmul_precision() != 'highest'``."""

    _bool_flags = {"allow_fp16_reduced_precision_reduction": "set_allow_fp16_reduced_precision_reduction",
                   "allow_bf16_reduced_precision_reduction": "set_allow_bf16_reduced_precision_reduction"}

    def __init__(self) -> None:
        object.__setattr__(self, "_values", dict.fromkeys(self._bool_flags, True))

    def __getattr__(self, name: str):
        if name == "allow_tf32":
            return _matmul_precision.get_float32_matmul_precision() != "highest"
        if name in self._bool_flags:
            return self._values[name]
        raise AttributeError(f"Unknown attribute {name}")

    def __setattr__(self, name: str, value) -> None:
        if name == "allow_tf32":
            if not isinstance(value, bool):
                raise RuntimeError(f"set_allow_tf32_cublas expects a bool, but got {type(value).__name__}")
            _matmul_precision.set_float32_matmul_precision("high" if value else "highest")
        elif name in self._bool_flags:
            if not isinstance(value, bool):
                raise RuntimeError(f"{self._bool_flags[name]} expects a bool, but got {type(value).__name__}")
            self._values[name] = value
        else:
            raise AttributeError(f"Unknown attribute {name}")


matmul = cuBLASModule()


# the scaled-dot-product-attention kernel switches: minitorch has one kernel (the math one); the switches are
# recorded as in PyTorch, where all default to on
_sdp = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}


def flash_sdp_enabled() -> bool:
    return _sdp["flash"]


def mem_efficient_sdp_enabled() -> bool:
    return _sdp["mem_efficient"]


def math_sdp_enabled() -> bool:
    return _sdp["math"]


def cudnn_sdp_enabled() -> bool:
    return _sdp["cudnn"]


def _enabler(kind: str):
    def enable(enabled: bool) -> None:
        _sdp[kind] = bool(enabled)

    enable.__name__ = f"enable_{kind}_sdp"
    enable.__doc__ = f"Record whether the {kind} attention kernel may be used (minitorch always runs the math one)."
    return enable


enable_flash_sdp = _enabler("flash")
enable_mem_efficient_sdp = _enabler("mem_efficient")
enable_math_sdp = _enabler("math")
enable_cudnn_sdp = _enabler("cudnn")


def is_flash_attention_available() -> bool:
    return False

