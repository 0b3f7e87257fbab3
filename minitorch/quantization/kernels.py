"""Quantized kernels: linear/matmul (integer products accumulated in int32, then requantized), add, relu.

Each takes quantized tensors and returns one quantized to the given output ``scale``/``zero_point``:
  linear:  acc = (x_q - x_zp) @ (w_q - w_zp).T  in int32;  real = acc * (x_scale * w_scale[c]) + bias
  matmul:  acc = (a_q - a_zp) @ (b_q - b_zp)    in int32;  real = acc * (a_scale * b_scale)
  add:     real = dequantize(a) + dequantize(b)
then ``q = clamp(rint(zero_point + real * (1/scale)), qmin, qmax)`` (float32, as quantize_per_tensor), except
linear, which rounds before adding the zero point as FBGEMM's requantization does:
``q = clamp(rint(real * (1/scale)) + zero_point, qmin, qmax)`` (``round_to_grid``).
relu keeps the input's quantizer: ``max(q, zero_point)``.
Gradients follow the straight-through estimator: the float op's derivative at the dequantized inputs,
masked where the output requantization clamped. Inputs must be quantized per tensor, except the linear
weight (per tensor or per channel along dim 0).
"""

from __future__ import annotations

from .. import _dtype
from ..ops import pointwise
from ..ops.op import Op, register_non_dense
from ..tensor import Tensor
from .dispatch import apply_quantized
from .qtensor import PerChannelQuantizer, PerTensorQuantizer, QTensor, check_scale, check_zero_point
from .quantize import channel_shape, clamp_to_int, round_to_grid


def _centered(op: Op, q, quantizer):
    """``(q - zero_point)`` as int32 and the float32 scale broadcastable against it."""
    xp = op.xp
    if isinstance(quantizer, PerTensorQuantizer):
        return q.astype(xp.int32) - xp.int32(quantizer.zero_point), xp.float64(quantizer.scale)
    shape = channel_shape(q.ndim, quantizer.axis)
    zero_points = quantizer.zero_points._array.astype(xp.int32).reshape(shape)
    return q.astype(xp.int32) - zero_points, quantizer.scales._array.reshape(shape)


def _requantize(op: Op, real, scale: float, zero_point: int, dtype, zero_point_first: bool = True):
    """float32 ``real`` -> integers with the output quantizer; the STE mask goes on ``op``."""
    xp = op.xp
    scaled = real.astype(xp.float32) * (xp.float32(1.0) / xp.float32(scale))
    shifted = round_to_grid(xp, scaled, xp.float32(zero_point), zero_point_first=zero_point_first)
    qmin, qmax = _dtype.QUANTIZED_RANGES[dtype]
    op.mask = (shifted >= qmin) & (shifted <= qmax)
    op.out_quantizer = PerTensorQuantizer(dtype, scale, zero_point)
    return clamp_to_int(op, shifted, dtype)


class QuantizedLinear(Op):
    def forward(self, x, weight, bias, scale: float, zero_point: int, dtype):
        xp = self.xp
        x_int, x_scale = _centered(self, x, self.quantizers[0])
        w_int, w_scale = _centered(self, weight, self.quantizers[1])
        acc = xp.matmul(x_int, w_int.T)  # int32 accumulation
        multiplier = (x_scale * (w_scale.reshape(-1) if w_scale.ndim else w_scale)).astype(xp.float32)
        real = acc.astype(xp.float32) * multiplier
        if bias is not None:
            real = real + bias.astype(xp.float32)
        self.x_hat = (x_int.astype(xp.float64) * x_scale).astype(xp.float32)
        self.w_hat = (w_int.astype(xp.float64) * w_scale).astype(xp.float32)
        return _requantize(self, real, scale, zero_point, dtype, zero_point_first=False)

    def backward(self, grad):
        g = grad * self.constant(self.mask)
        x_hat, w_hat = self.constant(self.x_hat), self.constant(self.w_hat)
        grad_x = g @ w_hat
        grad_w = g.reshape(-1, g.shape[-1]).t() @ x_hat.reshape(-1, x_hat.shape[-1])
        return grad_x, grad_w, g


class QuantizedMatmul(Op):
    def forward(self, a, b, scale: float, zero_point: int, dtype):
        xp = self.xp
        a_int, a_scale = _centered(self, a, self.quantizers[0])
        b_int, b_scale = _centered(self, b, self.quantizers[1])
        real = xp.matmul(a_int, b_int).astype(xp.float32) * xp.float32(a_scale * b_scale)
        self.a_hat = (a_int.astype(xp.float64) * a_scale).astype(xp.float32)
        self.b_hat = (b_int.astype(xp.float64) * b_scale).astype(xp.float32)
        return _requantize(self, real, scale, zero_point, dtype)

    def backward(self, grad):
        g = grad * self.constant(self.mask)
        return g @ self.constant(self.b_hat).transpose(-1, -2), self.constant(self.a_hat).transpose(-1, -2) @ g


class QuantizedAdd(Op):
    def forward(self, a, b, scale: float, zero_point: int, dtype):
        xp = self.xp
        a_int, a_scale = _centered(self, a, self.quantizers[0])
        b_int, b_scale = _centered(self, b, self.quantizers[1])
        real = xp.float32(a_scale) * a_int.astype(xp.float32) + xp.float32(b_scale) * b_int.astype(xp.float32)
        return _requantize(self, real, scale, zero_point, dtype)

    def backward(self, grad):
        g = grad * self.constant(self.mask)
        return g, g


class QuantizedRelu(Op):
    def forward(self, q):
        xp = self.xp
        quantizer = self.quantizers[0]
        if isinstance(quantizer, PerTensorQuantizer):
            zero_point = xp.asarray(quantizer.zero_point, dtype=q.dtype)
        else:
            zero_point = quantizer.zero_points._array.astype(q.dtype).reshape(channel_shape(q.ndim, quantizer.axis))
        self.mask = q > zero_point
        self.out_quantizer = quantizer
        return xp.maximum(q, zero_point)

    def backward(self, grad):
        return grad * self.constant(self.mask)


# functions -----------------------------------------------------------------------------------------


def _check_quantized(fn: str, **tensors) -> None:
    for name, t in tensors.items():
        if not isinstance(t, QTensor):
            raise RuntimeError(f"{fn}: expected '{name}' to be a quantized tensor, got {getattr(t, 'dtype', type(t))}")


def _check_per_tensor(fn: str, **tensors) -> None:
    for name, t in tensors.items():
        if not isinstance(t._quantizer, PerTensorQuantizer):
            raise RuntimeError(f"{fn}: '{name}' must be quantized per tensor, got {t.qscheme()}")


def _check_output(fn: str, scale: float, zero_point: int, dtype) -> tuple[float, int]:
    scale, zero_point = float(scale), int(zero_point)
    check_scale(scale, fn)
    check_zero_point(zero_point, dtype, fn)
    return scale, zero_point


def quantized_linear(input: QTensor, weight: QTensor, bias: Tensor | None, scale: float, zero_point: int) -> QTensor:
    """``input @ weight.T + bias`` on quantized input (quint8/qint8) and weight (qint8, per tensor or per
    channel along dim 0), requantized to ``scale``/``zero_point`` in the input's dtype."""
    fn = "quantized::linear"
    _check_quantized(fn, input=input, weight=weight)
    _check_per_tensor(fn, input=input)
    if weight.dim() != 2 or input.shape[-1] != weight.shape[1]:
        raise RuntimeError(f"{fn}: input of shape {list(input.shape)} and weight of shape {list(weight.shape)} "
                           "do not match (expected weight (out_features, in_features))")
    if isinstance(weight._quantizer, PerChannelQuantizer) and weight._quantizer.axis != 0:
        raise RuntimeError(f"{fn}: a per-channel weight must be quantized along axis 0, got {weight._quantizer.axis}")
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != weight.shape[0]):
        raise RuntimeError(f"{fn}: bias of shape {list(bias.shape)} does not match weight {list(weight.shape)}")
    scale, zero_point = _check_output(fn, scale, zero_point, input.dtype)
    return apply_quantized(QuantizedLinear, input, weight, bias, scale=scale, zero_point=zero_point, dtype=input.dtype)


def quantized_matmul(a: QTensor, b: QTensor, scale: float, zero_point: int) -> QTensor:
    """``a @ b`` of per-tensor quantized tensors, requantized to ``scale``/``zero_point`` (a's dtype)."""
    fn = "quantized::matmul"
    _check_quantized(fn, a=a, b=b)
    _check_per_tensor(fn, a=a, b=b)
    if a.dim() < 2 or b.dim() < 2 or a.shape[-1] != b.shape[-2]:
        raise RuntimeError(f"{fn}: shapes {list(a.shape)} and {list(b.shape)} cannot be multiplied")
    scale, zero_point = _check_output(fn, scale, zero_point, a.dtype)
    return apply_quantized(QuantizedMatmul, a, b, scale=scale, zero_point=zero_point, dtype=a.dtype)


def quantized_add(a: QTensor, b: QTensor, scale: float, zero_point: int) -> QTensor:
    """``dequantize(a) + dequantize(b)`` (broadcasting), requantized to ``scale``/``zero_point``."""
    fn = "quantized::add"
    _check_quantized(fn, a=a, b=b)
    _check_per_tensor(fn, a=a, b=b)
    if a.dtype is not b.dtype:
        raise RuntimeError(f"{fn}: both inputs must have the same dtype, got {a.dtype} and {b.dtype}")
    scale, zero_point = _check_output(fn, scale, zero_point, a.dtype)
    return apply_quantized(QuantizedAdd, a, b, scale=scale, zero_point=zero_point, dtype=a.dtype)


@register_non_dense(pointwise.OPS["relu"], "quantized")
def quantized_relu(input: QTensor) -> QTensor:
    """``relu`` of a quantized tensor: same quantizer, ``max(q, zero_point)`` (torch.relu / nn.ReLU)."""
    return apply_quantized(QuantizedRelu, input)
