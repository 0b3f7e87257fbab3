"""``torch.ao.nn.quantized.functional``: quantized ops that take the output scale and zero point."""

from __future__ import annotations

from ....quantization.kernels import quantized_add, quantized_linear, quantized_matmul, quantized_relu
from ....quantization.qtensor import QTensor
from ....tensor import Tensor


def linear(input: QTensor, weight: QTensor, bias: Tensor | None = None, scale: float | None = None,
           zero_point: int | None = None) -> QTensor:
    """Quantized linear; without ``scale``/``zero_point`` the output keeps the input's (PyTorch's default)."""
    scale = input.q_scale() if scale is None else scale
    zero_point = input.q_zero_point() if zero_point is None else zero_point
    return quantized_linear(input, weight, bias, scale, zero_point)


def relu(input: QTensor, inplace: bool = False) -> QTensor:
    return quantized_relu(input)


matmul = quantized_matmul
add = quantized_add

__all__ = ["linear", "relu", "matmul", "add"]
