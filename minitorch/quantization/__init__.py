"""Quantized tensors (qint8, quint8, qint32) that take part in autograd, fake quantization, observers and
quantization-aware training. See docs/quantization.md."""

from . import copy, views  # noqa: F401  (register copy_, the quantized views, clone and device moves)
from .fake_quantize import (
    _fake_quantize_learnable_per_channel_affine,
    _fake_quantize_learnable_per_tensor_affine,
    fake_quantize_per_channel_affine,
    fake_quantize_per_tensor_affine,
)
from .kernels import quantized_add, quantized_linear, quantized_matmul, quantized_relu
from .modules import (
    DeQuantize,
    DeQuantStub,
    FakeQuantize,
    QATLinear,
    Quantize,
    QuantizedLinear,
    QuantizedReLU,
    QuantStub,
)
from .observer import (
    MinMaxObserver,
    MovingAverageMinMaxObserver,
    MovingAveragePerChannelMinMaxObserver,
    PerChannelMinMaxObserver,
    default_observer,
    default_per_channel_weight_observer,
    default_weight_observer,
)
from .qat import (
    QConfig,
    convert,
    default_fake_quant,
    default_per_channel_weight_fake_quant,
    get_default_qat_qconfig,
    prepare_qat,
    propagate_qconfig_,
)
from .qtensor import (
    QTensor,
    per_channel_affine,
    per_channel_affine_float_qparams,
    per_channel_symmetric,
    per_tensor_affine,
    per_tensor_symmetric,
    qscheme,
)
from .quantize import dequantize, int_repr, quantize_per_channel, quantize_per_tensor

__all__ = [
    "QTensor", "qscheme", "per_tensor_affine", "per_channel_affine", "per_tensor_symmetric", "per_channel_symmetric",
    "per_channel_affine_float_qparams", "quantize_per_tensor", "quantize_per_channel", "dequantize", "int_repr",
    "fake_quantize_per_tensor_affine", "fake_quantize_per_channel_affine",
    "_fake_quantize_learnable_per_tensor_affine", "_fake_quantize_learnable_per_channel_affine",
    "quantized_linear", "quantized_matmul", "quantized_add", "quantized_relu",
    "MinMaxObserver", "MovingAverageMinMaxObserver", "PerChannelMinMaxObserver",
    "MovingAveragePerChannelMinMaxObserver",
    "default_observer", "default_weight_observer", "default_per_channel_weight_observer",
    "FakeQuantize", "default_fake_quant", "default_per_channel_weight_fake_quant",
    "QuantStub", "DeQuantStub", "Quantize", "DeQuantize", "QATLinear", "QuantizedLinear", "QuantizedReLU",
    "QConfig", "get_default_qat_qconfig", "propagate_qconfig_", "prepare_qat", "convert",
]
