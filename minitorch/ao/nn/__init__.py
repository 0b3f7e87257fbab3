"""``torch.ao.nn``: quantized (``quantized``) and quantization-aware (``qat``) modules."""

from . import qat, quantized

__all__ = ["qat", "quantized"]
