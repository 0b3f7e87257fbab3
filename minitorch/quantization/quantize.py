"""quantize_per_tensor, quantize_per_channel and dequantize: PyTorch's x86 arithmetic, bit for bit.

Formulas (docs/quantization.md, SEMANTICS 4.1), all in float32 unless said:
  per tensor:   q = clamp(rint(float32(zero_point) + x * (1f / float32(scale))), qmin, qmax)
  per channel:  q = clamp(rint(float32(zero_point[c]) + x * (1f / float32(scale[c]))), qmin, qmax)
  dequantize:           x = float32(scale) * float32(q - zero_point);  per channel in float64, then float32.
Gradients (a deliberate extension of PyTorch): quantize passes the gradient where the rounded, shifted
value lies in [qmin, qmax] (inclusive, ``fake_quantize``'s mask) and 0 elsewhere; dequantize passes it
unchanged. Inputs of other float dtypes are quantized from their float32 value (PyTorch needs float32).
"""

from __future__ import annotations

from .. import _dtype
from ..creation import tensor as make_tensor
from ..ops.op import Op
from ..tensor import Tensor
from .dispatch import apply_quantized
from .qtensor import (
    PerChannelQuantizer,
    PerTensorQuantizer,
    QTensor,
    check_quantized_dtype,
    check_scale,
    check_zero_point,
)


def channel_shape(ndim: int, axis: int) -> tuple:
    """The shape that broadcasts a per-channel vector along ``axis``."""
    return tuple(-1 if d == axis else 1 for d in range(ndim))


def round_to_grid(xp, scaled, zero_point, *, zero_point_first: bool):
    """``scaled`` (``x * (1/scale)``) rounded half to even onto the integer grid shifted by ``zero_point``.

    PyTorch's x86 kernels add the zero point either before rounding (``rint(zero_point + scaled)``:
    quantize_per_tensor/_per_channel, quantized add and matmul, the learnable fake-quantize backward) or
    after (``rint(scaled) + zero_point``: fake_quantize_* forward, quantized linear's FBGEMM
    requantization). The two differ at ties when the zero point is odd: 1.5 with zero point 1 gives
    ``rint(2.5) = 2`` before and ``rint(1.5) + 1 = 3`` after. Every quantizing op rounds here."""
    if zero_point_first:
        return xp.rint(zero_point + scaled)
    return xp.rint(scaled) + zero_point


def clamp_to_int(op: Op, values, dtype):
    """Clamp float values to the range of the quantized ``dtype`` (in float64, so that 2^31-1 stays exact)
    and cast to its storage type."""
    xp = op.xp
    qmin, qmax = _dtype.QUANTIZED_RANGES[dtype]
    storage = op.backend.array_dtype(_dtype.QUANTIZED_STORAGE_DTYPES[dtype])
    return xp.clip(values.astype(xp.float64), qmin, qmax).astype(storage)


class QuantizePerTensor(Op):
    """Float -> quantized, one scale and zero point; STE backward with the inclusive range mask."""

    def forward(self, x, scale: float, zero_point: int, dtype):
        xp = self.xp
        if x.dtype.kind != "f":
            raise RuntimeError(f"quantize_per_tensor: expected a floating point input, got {self.backend.dtype_of(x)}")
        inv_scale = xp.float32(1.0) / xp.float32(scale)
        shifted = round_to_grid(xp, x.astype(xp.float32) * inv_scale, xp.float32(zero_point), zero_point_first=True)
        qmin, qmax = _dtype.QUANTIZED_RANGES[dtype]
        self.mask = (shifted >= qmin) & (shifted <= qmax)
        self.out_quantizer = PerTensorQuantizer(dtype, scale, zero_point)
        return clamp_to_int(self, shifted, dtype)

    def backward(self, grad):
        return grad * self.constant(self.mask)


class QuantizePerChannel(Op):
    """Float -> quantized with per-channel scales/zero points along ``axis``; STE backward."""

    def forward(self, x, scales: Tensor, zero_points: Tensor, axis: int, dtype):
        xp = self.xp
        if x.dtype.kind != "f":
            raise RuntimeError(f"quantize_per_channel: expected a floating point input, got {self.backend.dtype_of(x)}")
        shape = channel_shape(x.ndim, axis)
        inv_scale = xp.float32(1.0) / scales._array.astype(xp.float32).reshape(shape)
        zero_point = zero_points._array.astype(xp.float32).reshape(shape)
        shifted = round_to_grid(xp, x.astype(xp.float32) * inv_scale, zero_point, zero_point_first=True)
        self.out_quantizer = PerChannelQuantizer(dtype, scales, zero_points, axis)
        qmin, qmax = _dtype.QUANTIZED_RANGES[dtype]
        self.mask = (shifted >= qmin) & (shifted <= qmax)
        return clamp_to_int(self, shifted, dtype)

    def backward(self, grad):
        return grad * self.constant(self.mask)


class Dequantize(Op):
    """Quantized -> float32; the gradient passes unchanged (as float32) to the quantized input."""

    def forward(self, q):
        xp = self.xp
        quantizer = self.quantizers[0]
        if isinstance(quantizer, PerTensorQuantizer):
            centered = (q.astype(xp.int64) - quantizer.zero_point).astype(xp.float32)
            return xp.float32(quantizer.scale) * centered
        shape = channel_shape(q.ndim, quantizer.axis)
        scales = quantizer.scales._array.reshape(shape)
        zero_points = quantizer.zero_points._array.reshape(shape)
        return ((q.astype(xp.int64) - zero_points).astype(xp.float64) * scales).astype(xp.float32)

    def backward(self, grad):
        return grad


# functions ----------------------------------------------------------------------------------------


def _as_number(value, kind):
    return kind(value.item()) if isinstance(value, Tensor) else kind(value)


def quantize_per_tensor(input, scale, zero_point, dtype: _dtype.dtype):
    """``clamp(rint(zero_point + input / scale), qmin, qmax)`` stored as integers (PyTorch's x86 order).

    ``scale``/``zero_point`` may be numbers or one-element tensors; ``input`` may be a list of tensors
    (then ``scale``/``zero_point`` are tensors with one entry per tensor)."""
    if isinstance(input, (list, tuple)):
        return [
            quantize_per_tensor(t, scale[i], zero_point[i], dtype) for i, t in enumerate(input)
        ]
    fn = "quantize_tensor_per_tensor_affine"
    check_quantized_dtype(dtype, "quantize_per_tensor")
    scale, zero_point = _as_number(scale, float), _as_number(zero_point, int)
    check_scale(scale, "quantize_per_tensor")
    check_zero_point(zero_point, dtype, fn)
    if isinstance(input, QTensor):
        raise RuntimeError(f"quantize_per_tensor: the input is already quantized ({input.dtype}); dequantize first")
    return apply_quantized(QuantizePerTensor, input, scale=scale, zero_point=zero_point, dtype=dtype)


def quantize_per_channel(input: Tensor, scales: Tensor, zero_points: Tensor, axis: int, dtype: _dtype.dtype) -> QTensor:
    """Quantize with ``scales[c]``/``zero_points[c]`` for index ``c`` of dim ``axis``."""
    check_quantized_dtype(dtype, "quantize_per_channel")
    if isinstance(input, QTensor):
        raise RuntimeError(f"quantize_per_channel: the input is already quantized ({input.dtype}); dequantize first")
    scales = scales if isinstance(scales, Tensor) else make_tensor(scales, dtype=_dtype.float64)
    zero_points = zero_points if isinstance(zero_points, Tensor) else make_tensor(zero_points, dtype=_dtype.int64)
    if scales.dim() != 1 or zero_points.dim() != 1:
        raise RuntimeError(
            f"quantize_per_channel: scales and zero_points must be 1-D, got shapes {list(scales.shape)} and "
            f"{list(zero_points.shape)}"
        )
    if input.dim() == 0 or not -input.dim() <= axis < input.dim():
        raise RuntimeError(
            f"quantize_per_channel: axis {axis} is out of range for an input of shape {list(input.shape)}"
        )
    axis = axis % input.dim()
    channels = input.shape[axis]
    if scales.numel() != channels or zero_points.numel() != channels:
        raise RuntimeError(
            f"quantize_per_channel: expected {channels} scales and zero_points (size of dim {axis} of the input of "
            f"shape {list(input.shape)}), got {scales.numel()} and {zero_points.numel()}"
        )
    scales = scales.detach().to(device=input.device, dtype=_dtype.float64)
    zero_points = zero_points.detach().to(device=input.device, dtype=_dtype.int64)
    for s in scales.tolist():
        check_scale(s, "quantize_per_channel")
    for z in zero_points.tolist():
        check_zero_point(z, dtype, "quantize_tensor_per_channel_affine")
    return apply_quantized(
        QuantizePerChannel, input, scales=scales.clone(), zero_points=zero_points.clone(), axis=axis, dtype=dtype
    )


def dequantize(input):
    """The float32 values of a quantized tensor (a float tensor is returned as it is; lists map)."""
    if isinstance(input, (list, tuple)):
        return [dequantize(t) for t in input]
    if not isinstance(input, QTensor):
        return input
    return apply_quantized(Dequantize, input)


def int_repr(input: QTensor) -> Tensor:
    return input.int_repr()

