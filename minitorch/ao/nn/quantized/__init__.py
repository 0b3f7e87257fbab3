"""``torch.ao.nn.quantized``: int8 modules that run on quantized tensors."""

from ....quantization.modules import DeQuantize, Quantize
from ....quantization.modules import QuantizedLinear as Linear
from ....quantization.modules import QuantizedReLU as ReLU
from . import functional

__all__ = ["Linear", "ReLU", "Quantize", "DeQuantize", "functional"]
