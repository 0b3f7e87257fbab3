"""``torch.ao.nn.qat``: modules that train with fake-quantized weights."""

from ....quantization.modules import QATLinear as Linear

__all__ = ["Linear"]
