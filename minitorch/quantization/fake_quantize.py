"""Fake quantization: quantize and dequantize in one float op, with straight-through gradients.

PyTorch's CPU kernels (SEMANTICS 4.3), in the input's float dtype with a float32 scale:
  per tensor:   q = rint(x / scale) + zero_point            (division; rounding before the zero point)
  per channel:  q = rint(x * (1 / scale[c])) + zero_point[c]
  y = (clamp(q, quant_min, quant_max) - zero_point) * scale
  dx = dy * (quant_min <= q <= quant_max)                   (inclusive, on the rounded, shifted value)
Learnable (LSQ) variants also differentiate scale and zero point: per element d/dscale is
``quant_min - zp`` / ``quant_max - zp`` where clamped low/high and ``(y - x) / scale`` inside, d/dzero_point
is ``-scale`` where clamped and 0 inside; both are summed (per channel: over all but ``axis``) and
multiplied by ``grad_factor``. As in PyTorch's backward kernels these use ``rint(zp + x * (1/scale))`` (the
zero point added before rounding) with the zero point clamped to the range after ``trunc(zp + 0.5)`` per
tensor, ``rint(zp)`` per channel (as in the forward). All rounding goes through ``round_to_grid``.
"""

from __future__ import annotations

import math

from ..ops.op import Op
from ..tensor import Tensor
from .quantize import channel_shape, round_to_grid


def _check_range(quant_min: int, quant_max: int) -> None:
    if quant_min > quant_max:
        raise RuntimeError("`quant_min` should be less than or equal to `quant_max`.")


def _check_zero_point(zero_point: int, quant_min: int, quant_max: int) -> None:
    if not quant_min <= zero_point <= quant_max:
        raise RuntimeError("`zero_point` must be between `quant_min` and `quant_max`.")


def _check_scale(scale: float, fn: str) -> None:
    if not (scale > 0 and math.isfinite(scale)):
        raise RuntimeError(f"{fn}: scale must be a positive finite number, got {scale}")


def _check_float(input: Tensor, fn: str) -> None:
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"{fn}: expected a floating point input, got {input.dtype} of shape {list(input.shape)}")


class FakeQuantizePerTensor(Op):
    def forward(self, x, scale: float, zero_point: int, quant_min: int, quant_max: int):
        xp = self.xp
        scale = x.dtype.type(xp.float32(scale))
        q = round_to_grid(xp, x / scale, zero_point, zero_point_first=False)
        self.mask = (q >= quant_min) & (q <= quant_max)
        return ((xp.clip(q, quant_min, quant_max) - zero_point) * scale).astype(x.dtype, copy=False)

    def backward(self, grad):
        return grad * self.constant(self.mask)


class FakeQuantizePerChannel(Op):
    def forward(self, x, scale, zero_point, axis: int, quant_min: int, quant_max: int):
        xp = self.xp
        shape = channel_shape(x.ndim, axis)
        scale = scale.astype(xp.float32).reshape(shape)
        zero_point = zero_point.astype(x.dtype).reshape(shape)
        inv_scale = xp.float32(1.0) / scale
        q = round_to_grid(xp, x * inv_scale.astype(x.dtype), zero_point, zero_point_first=False)
        self.mask = (q >= quant_min) & (q <= quant_max)
        return ((xp.clip(q, quant_min, quant_max) - zero_point) * scale.astype(x.dtype)).astype(x.dtype, copy=False)

    def backward(self, grad):
        return grad * self.constant(self.mask)


class FakeQuantizeLearnable(Op):
    """LSQ fake quantization; ``axis`` None means per tensor (scale and zero_point of one element)."""

    def forward(self, x, scale, zero_point, axis, quant_min: int, quant_max: int, grad_factor: float):
        xp = self.xp
        self.scale_shape, self.zero_point_shape = scale.shape, zero_point.shape
        self.axis, self.grad_factor = axis, grad_factor
        shape = channel_shape(x.ndim, axis) if axis is not None else (1,) * x.ndim
        s = scale.astype(xp.float32).reshape(shape)
        zp_float = zero_point.astype(xp.float32).reshape(shape)
        zp_forward = xp.clip(xp.rint(zp_float), quant_min, quant_max)
        if axis is None:  # fake_quantize_per_tensor_affine's arithmetic
            q = round_to_grid(xp, x / s.astype(x.dtype), zp_forward, zero_point_first=False)
        else:
            q = round_to_grid(xp, x * (xp.float32(1.0) / s).astype(x.dtype), zp_forward, zero_point_first=False)
        y = ((xp.clip(q, quant_min, quant_max) - zp_forward) * s).astype(x.dtype)
        # backward coefficients (PyTorch's _fake_quantize_grad_learnable kernels)
        if axis is None:
            zp_backward = xp.clip(xp.trunc(zp_float + xp.float32(0.5)), quant_min, quant_max)
        else:
            zp_backward = zp_forward
        inv_s = xp.float32(1.0) / s
        q_backward = round_to_grid(xp, x * inv_s, zp_backward, zero_point_first=True)
        low, high = q_backward < quant_min, q_backward > quant_max
        inside = ~(low | high)
        x_fq = (q_backward - zp_backward) * s
        self.mask = inside
        inside_dscale = (x_fq - x) * inv_s
        self.dscale = xp.where(low, quant_min - zp_backward, xp.where(high, quant_max - zp_backward, inside_dscale))
        self.dzero_point = xp.where(inside, 0.0, -s).astype(self.dscale.dtype)
        return y

    def backward(self, grad):
        grad_x = grad * self.constant(self.mask)
        grad_scale = self._reduce(grad * self.constant(self.dscale), self.scale_shape)
        grad_zero_point = self._reduce(grad * self.constant(self.dzero_point), self.zero_point_shape)
        return grad_x, grad_scale, grad_zero_point

    def _reduce(self, per_element: Tensor, shape) -> Tensor:
        if self.axis is None:
            total = per_element.sum()
        else:
            dims = [d for d in range(per_element.dim()) if d != self.axis]
            total = per_element.sum(dim=dims) if dims else per_element
        return (total * self.grad_factor).reshape(shape)


def _number(value, kind):
    return kind(value.item()) if isinstance(value, Tensor) else kind(value)


def fake_quantize_per_tensor_affine(input: Tensor, scale, zero_point, quant_min: int, quant_max: int) -> Tensor:
    """``(clamp(rint(input / scale) + zero_point, quant_min, quant_max) - zero_point) * scale`` with the
    straight-through gradient (1 where the rounded, shifted value is in range, else 0)."""
    _check_float(input, "fake_quantize_per_tensor_affine")
    scale, zero_point = _number(scale, float), _number(zero_point, int)
    _check_range(quant_min, quant_max)
    _check_zero_point(zero_point, quant_min, quant_max)
    _check_scale(scale, "fake_quantize_per_tensor_affine")
    return FakeQuantizePerTensor.apply(
        input, scale=scale, zero_point=zero_point, quant_min=quant_min, quant_max=quant_max
    )


def _check_per_channel(input: Tensor, scale: Tensor, zero_point: Tensor, axis: int, fn: str) -> int:
    if scale.dim() != 1 or zero_point.dim() != 1:
        raise RuntimeError(f"{fn}: scale and zero_point should be 1-D tensors, got shapes "
                           f"{list(scale.shape)} and {list(zero_point.shape)}")
    if not 0 <= axis < input.dim():
        raise RuntimeError("`axis` must be between 0 and number of dimensions of input")
    if scale.numel() != input.shape[axis] or zero_point.numel() != input.shape[axis]:
        raise RuntimeError(
            f"dimensions of scale and zero-point are not consistent with input tensor ({fn}: input shape "
            f"{list(input.shape)}, axis {axis}, {scale.numel()} scales, {zero_point.numel()} zero points)"
        )
    if bool((scale.detach() <= 0).any()):
        raise RuntimeError(f"{fn}: every scale must be positive, got {scale.tolist()}")
    return axis


def fake_quantize_per_channel_affine(
    input: Tensor, scale: Tensor, zero_point: Tensor, axis: int, quant_min: int, quant_max: int
) -> Tensor:
    """Per-channel fake quantization along ``axis`` (``scale``: float tensor, ``zero_point``: integer tensor)."""
    fn = "fake_quantize_per_channel_affine"
    _check_float(input, fn)
    _check_range(quant_min, quant_max)
    _check_per_channel(input, scale, zero_point, axis, fn)
    if bool(((zero_point < quant_min) | (zero_point > quant_max)).any()):
        raise RuntimeError("`zero_point` must be between `quant_min` and `quant_max`.")
    return FakeQuantizePerChannel.apply(
        input, scale.detach(), zero_point.detach(), axis=axis, quant_min=quant_min, quant_max=quant_max
    )


def _fake_quantize_learnable_per_tensor_affine(
    input: Tensor, scale: Tensor, zero_point: Tensor, quant_min: int, quant_max: int, grad_factor: float = 1.0
) -> Tensor:
    """LSQ fake quantization: gradients for input, scale and zero_point (see the module docstring)."""
    fn = "_fake_quantize_learnable_per_tensor_affine"
    _check_float(input, fn)
    _check_range(quant_min, quant_max)
    if scale.numel() != 1 or zero_point.numel() != 1:
        raise RuntimeError(f"{fn}: scale and zero_point must have one element, got shapes "
                           f"{list(scale.shape)} and {list(zero_point.shape)}")
    _check_scale(float(scale.item()), fn)
    return FakeQuantizeLearnable.apply(
        input, scale, zero_point, axis=None, quant_min=quant_min, quant_max=quant_max, grad_factor=grad_factor
    )


def _fake_quantize_learnable_per_channel_affine(
    input: Tensor, scale: Tensor, zero_point: Tensor, axis: int, quant_min: int, quant_max: int,
    grad_factor: float = 1.0,
) -> Tensor:
    """Per-channel LSQ fake quantization along ``axis``."""
    fn = "_fake_quantize_learnable_per_channel_affine"
    _check_float(input, fn)
    _check_range(quant_min, quant_max)
    _check_per_channel(input, scale, zero_point, axis, fn)
    return FakeQuantizeLearnable.apply(
        input, scale, zero_point, axis=axis, quant_min=quant_min, quant_max=quant_max, grad_factor=grad_factor
    )


__all__ = [
    "fake_quantize_per_tensor_affine", "fake_quantize_per_channel_affine",
    "_fake_quantize_learnable_per_tensor_affine", "_fake_quantize_learnable_per_channel_affine",
]
