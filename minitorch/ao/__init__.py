"""``minitorch.ao``: PyTorch's ``torch.ao`` import paths for the quantization package (minitorch/quantization)."""

from . import nn, quantization

__all__ = ["nn", "quantization"]
